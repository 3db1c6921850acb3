//! Starting a leader directly in its run's cgroup: `clone3` with `CLONE_INTO_CGROUP`
//! (Linux 5.7), then the same steps as the standard library's start ([`super::spawn`]):
//! stdin, stdout and stderr, the working directory, a process group of its own, SIGPIPE
//! back to its default, and the leader's own steps up to `execve`.
//!
//! Joining a cgroup by writing to its `cgroup.procs` after the fork moves a process between
//! cgroups, which takes the kernel's cgroup-wide lock for writing: measured on this
//! project's 2-core machine, 0.3 ms when migrations follow each other closely and 10 to
//! 17 ms otherwise, more than the rest of a probe. A process born in its cgroup is never
//! moved, and costs what a `fork` does. The standard library has no way to pass clone
//! flags, so this file forks by itself. Whether the kernel allows it is tried once, when
//! repromin makes its directory of cgroups ([`probe`]); where it does not (before 5.7, or
//! under a seccomp filter that returns `ENOSYS`), runs get no cgroup. A start it refuses
//! all the same goes through the standard library, in the run's process group alone.
//!
//! The child makes system calls only, on what was prepared before the fork, and allocates
//! nothing, as a child forked from a process with other threads must. A step that fails
//! sends its error number on a close-on-exec pipe and exits with 127; the parent reads
//! that pipe to the end (an `execve` that succeeded closes it empty), reaps the child and
//! returns the error, as the standard library does.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
use nix::unistd::Pid;

use super::spawn::{self, Child, Leader, Steps};

/// `clone3`'s argument (`struct clone_args` of `linux/sched.h`, up to `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Start the child in the cgroup of `cgroup` (`linux/sched.h`).
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// What a start came to.
pub(super) enum Started {
    /// The leader runs, in its cgroup.
    Child(Pid),
    /// The kernel refused the start; the steps, untouched, for another way.
    Refused(Box<Steps>),
}

/// Starts `program` with `args` and the environment `overrides` as `leader` says: born in
/// the leader's cgroup when it has one, else through the standard library.
///
/// # Errors
/// As [`spawn::spawn`].
pub(super) fn start(
    program: &str,
    args: &[String],
    overrides: &[(&OsStr, &OsStr)],
    leader: &Leader<'_>,
) -> io::Result<Child> {
    let steps = spawn::steps(program, args, overrides, leader)?;
    let Some(cgroup) = leader.cgroup else {
        return spawn::spawn(program, leader, steps);
    };
    match spawn_into(cgroup, leader, steps)? {
        Started::Child(pid) => Ok(Child::started(pid)),
        Started::Refused(steps) => spawn::spawn(program, leader, *steps),
    }
}

/// Whether this kernel starts a process in the cgroup of `cgroup`: a child that exits at
/// once, reaped here.
pub(super) fn probe(cgroup: BorrowedFd<'_>) -> bool {
    // SAFETY: the child only calls `_exit`.
    #[expect(unsafe_code, reason = "a child of clone3 that only calls _exit")]
    let ret = unsafe {
        let ret = fork_into(cgroup);
        if ret == 0 {
            libc::_exit(0);
        }
        ret
    };
    if ret <= 0 {
        return false;
    }
    let pid = Pid::from_raw(i32::try_from(ret).unwrap_or(i32::MAX));
    while let Err(Errno::EINTR) = nix::sys::wait::waitpid(pid, None) {}
    true
}

/// `clone3` with `CLONE_INTO_CGROUP` into the cgroup of `cgroup`, as `fork` returns: 0 in
/// the child, its id in the parent, -1 (and `errno`) when refused.
///
/// # Safety
/// Without `CLONE_VM` it is a `fork` of a process with other threads: the child may only
/// make async-signal-safe calls, allocate nothing, and must end with `execve` or `_exit`.
#[expect(
    unsafe_code,
    reason = "clone3 with CLONE_INTO_CGROUP, which neither std nor nix offer"
)]
unsafe fn fork_into(cgroup: BorrowedFd<'_>) -> libc::c_long {
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: u64::try_from(cgroup.as_raw_fd()).unwrap_or(u64::MAX),
        ..CloneArgs::default()
    };
    // SAFETY: `args` is a valid `clone_args` of the size given; what the child may do is
    // the caller's contract.
    unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::from_ref(&args),
            std::mem::size_of::<CloneArgs>(),
        )
    }
}

/// Starts `steps` as the leader `leader` describes, born in the cgroup of `cgroup`.
///
/// # Errors
/// A descriptor could not be prepared, or a step of the leader failed (its error).
fn spawn_into(
    cgroup: BorrowedFd<'_>,
    leader: &Leader<'_>,
    mut steps: Steps,
) -> io::Result<Started> {
    let cwd = std::ffi::CString::new(leader.cwd.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the directory holds a NUL"))?;
    // Copies numbered 3 or above (close-on-exec), so that moving them to 0, 1 and 2 in the
    // child never overwrites another of them.
    let stdin = leader.stdin.try_clone_to_owned()?;
    let output = leader.output.try_clone_to_owned()?;
    let (report_read, report_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    // SAFETY: the child runs only `child`, which makes system calls on what is prepared
    // above and never returns.
    #[expect(unsafe_code, reason = "the child of clone3 runs the leader's steps")]
    let ret = unsafe { fork_into(cgroup) };
    if ret == 0 {
        child(&cwd, &stdin, &output, &report_write, &mut steps);
    }
    if ret < 0 {
        // Refused before any child existed: the cgroup went, or the kernel changed its mind.
        return Ok(Started::Refused(Box::new(steps)));
    }
    let pid = Pid::from_raw(i32::try_from(ret).unwrap_or(i32::MAX));
    drop(report_write);
    drop((stdin, output));
    let mut report = [0u8; 4];
    let mut got = 0;
    while got < report.len() {
        match nix::unistd::read(&report_read, &mut report[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(io::Error::from(errno)),
        }
    }
    if got == 0 {
        return Ok(Started::Child(pid));
    }
    // A step failed: the child exits at once; reap it and return its error.
    while let Err(Errno::EINTR) = nix::sys::wait::waitpid(pid, None) {}
    let errno = if got == report.len() {
        i32::from_ne_bytes(report)
    } else {
        libc::EIO
    };
    Err(io::Error::from_raw_os_error(errno))
}

/// The child: its descriptors, its directory and process group, SIGPIPE's default, then
/// the leader's steps; sends the error that stopped it and exits.
fn child(
    cwd: &std::ffi::CStr,
    stdin: &OwnedFd,
    output: &OwnedFd,
    report: &OwnedFd,
    steps: &mut Steps,
) -> ! {
    let errno = setup(cwd, stdin, output)
        .err()
        .unwrap_or_else(|| steps.run());
    let bytes = (errno as i32).to_ne_bytes();
    let _ = nix::unistd::write(report, &bytes);
    // SAFETY: `_exit` ends the forked child without running anything of the parent's.
    #[expect(unsafe_code, reason = "the forked child must end with _exit")]
    unsafe {
        libc::_exit(127)
    }
}

fn setup(cwd: &std::ffi::CStr, stdin: &OwnedFd, output: &OwnedFd) -> Result<(), Errno> {
    for (from, to) in [(stdin, 0), (output, 1), (output, 2)] {
        // SAFETY: `dup2` onto 0, 1 and 2 of the child, from descriptors it owns (3 or
        // above); what was there is closed, as the standard library's start does.
        #[expect(unsafe_code, reason = "dup2 onto the standard descriptors")]
        let ret = unsafe { libc::dup2(from.as_raw_fd(), to) };
        if ret < 0 {
            return Err(Errno::last());
        }
    }
    // The copies at 0, 1 and 2 are not close-on-exec (`dup2` clears the flag); the
    // originals are, and close at `execve`.
    nix::unistd::chdir(cwd)?;
    nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
    // SAFETY: setting SIGPIPE's disposition back to the default in the child.
    #[expect(
        unsafe_code,
        reason = "the Rust runtime ignores SIGPIPE; the command must not"
    )]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    Ok(())
}

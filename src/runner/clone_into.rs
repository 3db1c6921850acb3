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
//! On x86-64 the child shares repromin's memory until its `execve` (`CLONE_VM |
//! CLONE_VFORK`, as `posix_spawn` starts a process): a `fork` copies the parent's page
//! tables, which grow with the tree repromin holds, and makes every page the parent writes
//! afterwards fault once to be copied. Measured with the `overhead` harness (see
//! docs/benchmarks.md), that copy was most of what a probe's start cost above the floor on
//! 10,000 files. The child runs on a stack of its own, allocated before the start, through
//! a few instructions that call [`child`] there (the standard library's `clone` takes no
//! `clone3` flags, and `CLONE_INTO_CGROUP` needs `clone3`); the parent's thread waits in
//! the kernel until the child has called `execve` or exited, with every signal blocked, and
//! the child sets every caught signal back to its default before it unblocks them, so that
//! no handler of repromin's runs in it. Elsewhere the child is a `fork`.
//!
//! The child makes system calls only, on what was prepared before the start, and allocates
//! nothing, as a child forked from a process with other threads (or sharing its memory)
//! must. A step that fails sends its error number on a close-on-exec pipe and exits with
//! 127; the parent reads that pipe to the end (an `execve` that succeeded closes it empty),
//! reaps the child and returns the error, as the standard library does.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
#[cfg(target_arch = "x86_64")]
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
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

/// The stack the child runs on until its `execve` when it shares repromin's memory: the
/// steps make system calls on prepared data and need a few KiB of it.
#[cfg(target_arch = "x86_64")]
const CHILD_STACK: usize = 64 * 1024;

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
    let ret = start_child(
        cgroup,
        &mut ChildArgs {
            cwd: &cwd,
            stdin: &stdin,
            output: &output,
            report: &report_write,
            steps: &mut steps,
        },
    );
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

/// What the child is given, prepared before the start.
struct ChildArgs<'a> {
    cwd: &'a std::ffi::CStr,
    stdin: &'a OwnedFd,
    output: &'a OwnedFd,
    report: &'a OwnedFd,
    steps: &'a mut Steps,
}

/// Starts the child in the cgroup of `cgroup`, sharing this memory until its `execve`
/// where that is built (x86-64), as a `fork` elsewhere; returns the child's id in the
/// parent, or a negative value when the kernel refused, the child having called `execve`
/// or exited by then when it shares the memory.
#[cfg(target_arch = "x86_64")]
fn start_child(cgroup: BorrowedFd<'_>, args: &mut ChildArgs<'_>) -> libc::c_long {
    let mut stack: Vec<std::mem::MaybeUninit<u8>> = Vec::with_capacity(CHILD_STACK);
    let clone = CloneArgs {
        flags: CLONE_INTO_CGROUP | libc::CLONE_VM as u64 | libc::CLONE_VFORK as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack.as_mut_ptr().expose_provenance() as u64,
        stack_size: CHILD_STACK as u64,
        cgroup: u64::try_from(cgroup.as_raw_fd()).unwrap_or(u64::MAX),
        ..CloneArgs::default()
    };
    // Every signal stays blocked in this thread while the child shares its memory: the
    // child inherits the mask and unblocks only once no handler of repromin's is left.
    let mut old = SigSet::empty();
    let _ = pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old),
    );
    // SAFETY: `clone` is a valid `clone_args` whose stack is `stack`, which outlives the
    // child's use of it (the kernel returns here once the child has called `execve` or
    // exited); the child runs only `child_entry` on it, with `args`, which makes system
    // calls on prepared data and never returns.
    #[expect(
        unsafe_code,
        reason = "clone3 with CLONE_VM and a stack of the child's own, which neither std nor \
                  nix offer"
    )]
    let ret = unsafe { clone3_on_stack(&clone, child_entry, std::ptr::from_mut(args).cast()) };
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    drop(stack);
    ret
}

/// As [`fork_into`], the child running [`child`].
#[cfg(not(target_arch = "x86_64"))]
fn start_child(cgroup: BorrowedFd<'_>, args: &mut ChildArgs<'_>) -> libc::c_long {
    // SAFETY: the child runs only `child`, which makes system calls on what is prepared
    // before and never returns.
    #[expect(unsafe_code, reason = "the child of clone3 runs the leader's steps")]
    let ret = unsafe { fork_into(cgroup) };
    if ret == 0 {
        child(args);
    }
    ret
}

/// `clone3` with `clone`, whose flags hold `CLONE_VM` and whose stack is set: in the child,
/// `entry(arg)` on that stack, which must never return; in the parent, the raw system
/// call's result (the child's id, or the error negated).
///
/// # Safety
/// `clone` must describe a stack the child may use until it calls `execve` or exits, and
/// hold `CLONE_VFORK` so that this thread waits until then; `entry` must make system calls
/// only on data that lives that long.
#[cfg(target_arch = "x86_64")]
#[expect(
    unsafe_code,
    reason = "the system call and the child's first call, in assembly"
)]
unsafe fn clone3_on_stack(
    clone: &CloneArgs,
    entry: extern "C" fn(*mut libc::c_void) -> !,
    arg: *mut libc::c_void,
) -> libc::c_long {
    let ret: libc::c_long;
    // SAFETY: as the function's contract. The child starts on its own stack with every
    // register but rax, rcx and r11 as the parent had them, so `arg` and `entry` are in
    // r12 and r13; it aligns the stack as the ABI wants at a call and calls `entry`.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "and rsp, -16",
            "mov rdi, r12",
            "call r13",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") std::ptr::from_ref(clone),
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") arg,
            in("r13") entry,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// The child sharing repromin's memory, on its own stack: `arg` is the [`ChildArgs`].
#[cfg(target_arch = "x86_64")]
extern "C" fn child_entry(arg: *mut libc::c_void) -> ! {
    // SAFETY: `start_child` passes its `ChildArgs`, which lives until the child has called
    // `execve` or exited (the parent's thread waits until then).
    #[expect(unsafe_code, reason = "the argument the child was started with")]
    let args = unsafe { &mut *arg.cast::<ChildArgs<'_>>() };
    child(args)
}

/// Sets every signal that has a handler back to its default disposition, in a child that
/// shares repromin's memory: a handler of repromin's must never run in it. The child has
/// its own copy of the dispositions (no `CLONE_SIGHAND`).
#[cfg(target_arch = "x86_64")]
fn default_handlers() {
    for signal in 1..=libc::SIGRTMAX() {
        // SAFETY: `sigaction` reads and writes only the two locals it is given.
        #[expect(
            unsafe_code,
            reason = "sigaction on raw structures, which allocates nothing"
        )]
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &raw mut action) != 0 {
                continue;
            }
            if action.sa_sigaction != libc::SIG_DFL && action.sa_sigaction != libc::SIG_IGN {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                let _ = libc::sigaction(signal, &raw const default, std::ptr::null_mut());
            }
        }
    }
}

/// The child: where it runs in repromin's memory (x86-64), every caught signal back to its
/// default; then its descriptors, its directory and process group, SIGPIPE's default, and
/// the leader's steps; sends the error that stopped it and exits.
fn child(args: &mut ChildArgs<'_>) -> ! {
    #[cfg(target_arch = "x86_64")]
    default_handlers();
    let errno = setup(args.cwd, args.stdin, args.output)
        .err()
        .unwrap_or_else(|| args.steps.run());
    let bytes = (errno as i32).to_ne_bytes();
    let _ = nix::unistd::write(args.report, &bytes);
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

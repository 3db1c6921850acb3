//! Starting a command without copying repromin's memory.
//!
//! `fork` copies the page tables of the whole process; the child tears that copy down again
//! at `execve`, and until then the parent faults on every page it writes. For a process of
//! 15 MB that is about 0.4 ms, a third of spawning `/bin/sh`. A command is started here the
//! way `posix_spawn` starts one: `clone` with `CLONE_VM | CLONE_VFORK`, so the child runs in
//! repromin's memory on a stack of its own, and the calling thread waits until the child
//! has called `execve` (or exited).
//!
//! What the leader does before `execve` (see [`Leader`]) makes system calls only, on data
//! prepared before the clone: it allocates nothing, takes no lock, and writes no memory the
//! parent reads but the error it reports (a failed system call also sets the calling
//! thread's `errno`, which nothing reads after a clone that succeeded). Signals are blocked
//! in the calling thread across the clone, so none is handled in the child before it has
//! set every caught signal back to its default; then the child unblocks them all, as the
//! command expects.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::libc;
use nix::sched::CloneFlags;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::guardian;

/// The child's stack: its frames are a few system-call wrappers deep.
const STACK: usize = 128 * 1024;

/// How a started command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// A started command's leader, to wait for.
#[derive(Debug)]
pub(super) struct Child {
    pid: Pid,
    exit: Option<Exit>,
    /// A descriptor that becomes readable when the leader has ended (`pidfd_open`, Linux
    /// 5.3), so that its end wakes a `poll` at once; `None` where the kernel has none.
    ended: Option<OwnedFd>,
}

impl Child {
    /// The leader's process id (its group's id too).
    pub(super) fn id(&self) -> Pid {
        self.pid
    }

    /// A descriptor that polls readable once the leader has ended, where the kernel
    /// gives one.
    pub(super) fn ended(&self) -> Option<BorrowedFd<'_>> {
        self.ended.as_ref().map(AsFd::as_fd)
    }

    /// How it ended, if it has.
    ///
    /// # Errors
    /// `waitpid` failed (the child is not ours to wait for).
    pub(super) fn try_wait(&mut self) -> io::Result<Option<Exit>> {
        self.reap(Some(WaitPidFlag::WNOHANG))
    }

    /// Waits until it has ended.
    ///
    /// # Errors
    /// As [`Child::try_wait`].
    pub(super) fn wait(&mut self) -> io::Result<Option<Exit>> {
        self.reap(None)
    }

    fn reap(&mut self, flags: Option<WaitPidFlag>) -> io::Result<Option<Exit>> {
        if self.exit.is_some() {
            return Ok(self.exit);
        }
        loop {
            match waitpid(self.pid, flags) {
                Ok(WaitStatus::Exited(_, code)) => self.exit = Some(Exit::Code(code)),
                Ok(WaitStatus::Signaled(_, signal, _)) => {
                    self.exit = Some(Exit::Signal(signal as i32));
                }
                Ok(WaitStatus::StillAlive) => return Ok(None),
                // Stopped or continued: not an end; a blocking wait goes on waiting.
                Ok(_) if flags.is_none() => continue,
                Ok(_) => return Ok(None),
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(io::Error::from(errno)),
            }
            return Ok(self.exit);
        }
    }
}

/// What the leader does between the clone and `execve`, in this order.
pub(super) struct Leader<'a> {
    /// Becomes its stdin.
    pub(super) stdin: RawFd,
    /// Becomes its stdout and its stderr.
    pub(super) output: RawFd,
    /// Its working directory.
    pub(super) cwd: &'a Path,
    /// It writes its process id here (a pipe the parent reads when the start failed).
    pub(super) ids: RawFd,
    /// The guardian's stdin, on which it lists its group.
    pub(super) guardian: Option<RawFd>,
    /// The overlay it enters last.
    pub(super) mount: Option<&'a crate::overlay::Mount>,
}

/// The program, its arguments and its environment as `execve` takes them.
struct Exec {
    /// The files to try, in order: the program itself when it names a path, otherwise it
    /// in each directory of the command's `PATH`. Relative ones are relative to the
    /// command's working directory, as the leader sees it when it calls `execve`.
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

fn nul_error(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} holds a NUL byte"),
    )
}

fn c_string(bytes: &[u8], what: &str) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| nul_error(what))
}

/// The environment the command gets: repromin's, then `overrides` in order.
fn environment(overrides: &[(&OsStr, &OsStr)]) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (key, value) in overrides {
        env.insert(key.to_os_string(), value.to_os_string());
    }
    env
}

/// The files `execvp` would try for `program` with the search path `path` (glibc's
/// default when the command has none): the program itself when it holds a `/`, otherwise
/// it in each directory of the path, an empty one meaning the working directory.
fn candidates(program: &str, path: Option<&OsStr>) -> io::Result<Vec<CString>> {
    if program.is_empty() {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    if program.contains('/') {
        return Ok(vec![c_string(program.as_bytes(), "the program")?]);
    }
    let path = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    path.as_bytes()
        .split(|b| *b == b':')
        .map(|dir| {
            let mut file = if dir.is_empty() {
                Vec::new()
            } else {
                let mut dir = dir.to_vec();
                dir.push(b'/');
                dir
            };
            file.extend_from_slice(program.as_bytes());
            c_string(&file, "the search path")
        })
        .collect()
}

fn prepare(program: &str, args: &[String], overrides: &[(&OsStr, &OsStr)]) -> io::Result<Exec> {
    let env = environment(overrides);
    let candidates = candidates(
        program,
        env.get(OsStr::new("PATH")).map(OsString::as_os_str),
    )?;
    let mut argv = vec![c_string(program.as_bytes(), "the program")?];
    for arg in args {
        argv.push(c_string(arg.as_bytes(), "an argument")?);
    }
    let mut envp = Vec::with_capacity(env.len());
    for (key, value) in env {
        let mut pair = key.into_vec();
        pair.push(b'=');
        pair.extend_from_slice(value.as_bytes());
        envp.push(c_string(&pair, "the environment")?);
    }
    Ok(Exec {
        candidates,
        argv,
        envp,
    })
}

/// Null-terminated pointers to `strings`, for `execve`.
fn pointers<'a>(strings: impl IntoIterator<Item = &'a CString>) -> Vec<*const libc::c_char> {
    strings
        .into_iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Starts `program` with `args` and the environment `overrides` as `leader` says.
///
/// # Errors
/// The program cannot be found or run, an argument or the environment holds a NUL byte,
/// or a step of the leader failed (its error).
pub(super) fn spawn(
    program: &str,
    args: &[String],
    overrides: &[(&OsStr, &OsStr)],
    leader: &Leader<'_>,
) -> io::Result<Child> {
    let exec = prepare(program, args, overrides)?;
    let argv = pointers(&exec.argv);
    let envp = pointers(&exec.envp);
    // For each candidate, `/bin/sh CANDIDATE ARGS...`: a file without the magic of an
    // executable runs in the shell, as `execvp` runs it.
    let sh = c"/bin/sh".to_owned();
    let sh_argvs: Vec<Vec<*const libc::c_char>> = exec
        .candidates
        .iter()
        .map(|file| pointers([&sh, file].into_iter().chain(exec.argv.iter().skip(1))))
        .collect();
    let cwd = c_string(leader.cwd.as_os_str().as_bytes(), "the working directory")?;
    let parent = nix::unistd::getpid();
    let error = AtomicI32::new(0);
    let mut stack = vec![0u8; STACK];
    let steps = Steps {
        leader,
        cwd: &cwd,
        candidates: &exec.candidates,
        argv: &argv,
        envp: &envp,
        sh_argvs: &sh_argvs,
        parent,
        error: &error,
    };
    let mut blocked = SigSet::empty();
    nix::sys::signal::pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut blocked),
    )
    .map_err(io::Error::from)?;
    // SAFETY: the child runs `Steps::run` in this process's memory until it calls `execve`
    // or `_exit`, while this thread waits (CLONE_VFORK). It reads what is prepared above,
    // all of which outlives the call, writes only `error`, makes system calls only and
    // allocates nothing; no signal is handled in it before its handlers are reset (all are
    // blocked here until the clone returns).
    #[allow(unsafe_code)]
    let started = unsafe {
        nix::sched::clone(
            Box::new(|| steps.run()),
            &mut stack,
            CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK,
            Some(libc::SIGCHLD),
        )
    };
    let _ = nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&blocked), None);
    let pid = started.map_err(io::Error::from)?;
    let mut child = Child {
        pid,
        exit: None,
        ended: pidfd_open(pid),
    };
    match error.load(Ordering::SeqCst) {
        0 => Ok(child),
        errno => {
            let _ = child.wait();
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// A descriptor for `pid` that polls readable once it has ended; `None` where the kernel
/// has no `pidfd_open` (before Linux 5.3) or refuses it. The child is not reaped yet, so
/// `pid` cannot name another process.
fn pidfd_open(pid: Pid) -> Option<OwnedFd> {
    // SAFETY: `pidfd_open` takes a process id and flags and returns a new descriptor, or
    // -1; a descriptor returned is owned by nothing else.
    #[allow(unsafe_code)]
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0);
        let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// The child's side of [`spawn`].
struct Steps<'a> {
    leader: &'a Leader<'a>,
    cwd: &'a CString,
    candidates: &'a [CString],
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    sh_argvs: &'a [Vec<*const libc::c_char>],
    parent: Pid,
    error: &'a AtomicI32,
}

impl Steps<'_> {
    /// Runs in the child: every step, then `execve`. Returns only by exiting.
    fn run(&self) -> isize {
        let errno = match self.steps() {
            Ok(()) => self.exec(),
            Err(errno) => errno,
        };
        self.error.store(errno as i32, Ordering::SeqCst);
        // SAFETY: ends the child without running anything of the parent's (no atexit
        // handlers, no buffers flushed).
        #[allow(unsafe_code)]
        unsafe {
            libc::_exit(127)
        }
    }

    fn steps(&self) -> Result<(), Errno> {
        // Signal dispositions: a handler of repromin's must not run here, and the Rust
        // runtime ignores SIGPIPE, which the command must not inherit.
        for signal in Signal::iterator() {
            if matches!(signal, Signal::SIGKILL | Signal::SIGSTOP) {
                continue;
            }
            // SAFETY: querying a disposition; setting one to the default.
            #[allow(unsafe_code)]
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal as libc::c_int, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                let caught = old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
                if caught || signal == Signal::SIGPIPE {
                    libc::signal(signal as libc::c_int, libc::SIG_DFL);
                }
            }
        }
        nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
        let leader = self.leader;
        // SAFETY: the descriptors are open in the parent for the whole call.
        #[allow(unsafe_code)]
        let (stdin, output) = unsafe {
            (
                BorrowedFd::borrow_raw(leader.stdin),
                BorrowedFd::borrow_raw(leader.output),
            )
        };
        for (fd, target) in [(stdin, 0), (output, 1), (output, 2)] {
            // SAFETY: `dup2` onto the standard descriptors, which the child owns.
            #[allow(unsafe_code)]
            let done = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&fd), target) };
            Errno::result(done)?;
        }
        nix::unistd::chdir(self.cwd.as_c_str())?;
        nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
        // Tied to repromin before the command's first instruction (see the runner's
        // module documentation): the parent-death signal, then the group on the list.
        // The kernel sends the signal when the thread that started the leader dies, which
        // is when repromin dies (that thread waits for the group in `run`).
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
        // The parent may have died before the signal was armed: then it never comes, and
        // the leader has already been handed to another parent. It does not start.
        if nix::unistd::getppid() != self.parent {
            return Err(Errno::ESRCH);
        }
        let pid = nix::unistd::getpid().as_raw();
        // SAFETY: the descriptors stay open in the parent until the child has exec'd.
        #[allow(unsafe_code)]
        let ids = unsafe { BorrowedFd::borrow_raw(leader.ids) };
        // Its id, so that a start that fails after this can be taken off the guardian's
        // list.
        let _ = nix::unistd::write(ids, &pid.to_ne_bytes());
        if let Some(fd) = leader.guardian {
            let mut line = [0u8; guardian::LINE_MAX];
            let len = guardian::line(b'+', pid, &mut line);
            // SAFETY: as above.
            #[allow(unsafe_code)]
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let _ = nix::unistd::write(fd, &line[..len]);
        }
        if let Some(mount) = leader.mount {
            mount
                .enter()
                .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?;
        }
        Ok(())
    }

    /// `execve` of each candidate in turn, as `execvp` searches: past one that is not there
    /// (or that this user may not run, which is the error when nothing else runs), through
    /// `/bin/sh` for one the kernel does not know how to run; the error when none ran.
    fn exec(&self) -> Errno {
        let mut denied = false;
        let mut last = Errno::ENOENT;
        for (file, sh_argv) in self.candidates.iter().zip(self.sh_argvs) {
            // SAFETY: null-terminated arrays of pointers into `CString`s the parent keeps.
            #[allow(unsafe_code)]
            let errno = unsafe {
                libc::execve(file.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr());
                match Errno::last() {
                    Errno::ENOEXEC => {
                        libc::execve(c"/bin/sh".as_ptr(), sh_argv.as_ptr(), self.envp.as_ptr());
                        Errno::last()
                    }
                    errno => errno,
                }
            };
            match errno {
                Errno::EACCES => denied = true,
                Errno::ENOENT
                | Errno::ENOTDIR
                | Errno::ESTALE
                | Errno::ENODEV
                | Errno::ETIMEDOUT => {}
                errno => return errno,
            }
            last = errno;
        }
        if denied { Errno::EACCES } else { last }
    }
}

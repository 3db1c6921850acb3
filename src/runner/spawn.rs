//! Starting a command's leader: `std::process::Command`, with the steps a run needs taken
//! in the child between `fork` and `execve` (`pre_exec`).
//!
//! The standard library gives the leader its stdin, stdout and stderr, its working
//! directory and a process group of its own, and sets SIGPIPE back to its default (the
//! Rust runtime ignores it); then the leader's own steps run (see [`Steps::run`]): the
//! first clears the signal mask it inherited from the thread that started it, and the last
//! is `execve` (which sets every caught signal back to its default), searching as `execvp`
//! does: the command's own `PATH`, and `/bin/sh` for a file the kernel does not know how
//! to run (which musl's `execvp` does not do). A step's error, `execve`'s included, is the
//! error of the start, reported by the standard library. The steps make system calls only,
//! on data prepared before the fork: they allocate nothing and take no lock, as a child
//! forked from a process with other threads must.
//!
//! A run with a cgroup of its own (every run where repromin can make cgroups) is started by
//! `clone_into` instead, which starts the leader itself so that it is born in the cgroup
//! (`clone3` has no place in the standard library's start), and takes the same [`Steps`].
//! On x86-64 that start shares repromin's memory until `execve` rather than copying its
//! page tables, which cost most of a probe's start above the floor on a tree of 10,000
//! files (docs/benchmarks.md, "Per-probe overhead"). A run without a cgroup goes through
//! the standard library's `fork`: the only `unsafe` here is what `pre_exec` and `execve`
//! need.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::errno::Errno;
use nix::libc;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::wait::{WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::guardian;

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
    /// The most resident memory it, or any of its descendants it waited for, used, in
    /// bytes, once it has ended.
    peak: Option<u64>,
    /// A descriptor that becomes readable when the leader has ended (`pidfd_open`, Linux
    /// 5.3), so that its end wakes a `poll` at once; `None` where the kernel has none.
    ended: Option<OwnedFd>,
}

impl Child {
    /// The leader just started as `pid`, to wait for.
    pub(super) fn started(pid: Pid) -> Child {
        Child {
            pid,
            exit: None,
            peak: None,
            ended: pidfd_open(pid),
        }
    }

    /// The leader's process id (its group's id too).
    pub(super) fn id(&self) -> Pid {
        self.pid
    }

    /// A descriptor that polls readable once the leader has ended, where the kernel
    /// gives one.
    pub(super) fn ended(&self) -> Option<BorrowedFd<'_>> {
        self.ended.as_ref().map(AsFd::as_fd)
    }

    /// The most resident memory it, or a descendant it waited for, used (in bytes), once it
    /// has ended and been reaped.
    pub(super) fn peak_rss(&self) -> Option<u64> {
        self.peak
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
            let (status, peak) = match wait4(self.pid, flags) {
                Ok((status, peak)) => (Ok(status), peak),
                Err(errno) => (Err(errno), None),
            };
            if peak.is_some() && !matches!(status, Ok(WaitStatus::StillAlive)) {
                self.peak = peak;
            }
            match status {
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

/// `waitpid` that also says how much resident memory the child used at most (`wait4`'s
/// `ru_maxrss`, which counts the descendants it waited for too), in bytes.
fn wait4(pid: Pid, flags: Option<WaitPidFlag>) -> Result<(WaitStatus, Option<u64>), Errno> {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain integers, for which all zeroes is a value; `wait4` writes
    // only into the two locals it is given.
    #[expect(unsafe_code, reason = "wait4, which neither std nor nix offer")]
    let (ret, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let ret = libc::wait4(
            pid.as_raw(),
            &raw mut status,
            flags.map_or(0, |f| f.bits()),
            &raw mut usage,
        );
        (ret, usage)
    };
    if ret < 0 {
        return Err(Errno::last());
    }
    if ret == 0 {
        return Ok((WaitStatus::StillAlive, None));
    }
    let peak = u64::try_from(usage.ru_maxrss)
        .ok()
        .map(|kib| kib.saturating_mul(1024));
    Ok((WaitStatus::from_raw(Pid::from_raw(ret), status)?, peak))
}

/// What the leader gets, and does between the fork and `execve`, in this order: its
/// stdin, stdout and stderr, its working directory and a process group of its own (by the
/// standard library), then the steps of [`Steps::run`].
pub(super) struct Leader<'a> {
    /// Becomes its stdin.
    pub(super) stdin: BorrowedFd<'a>,
    /// Becomes its stdout and its stderr.
    pub(super) output: BorrowedFd<'a>,
    /// Its working directory.
    pub(super) cwd: &'a Path,
    /// It writes its process id here (a pipe the parent reads when the start failed).
    pub(super) ids: BorrowedFd<'a>,
    /// The guardian, on whose stdin it lists its group.
    pub(super) guardian: Option<&'a guardian::Guardian>,
    /// Its run's cgroup's directory, which `clone_into` starts it in.
    pub(super) cgroup: Option<BorrowedFd<'a>>,
    /// The overlay it enters last.
    pub(super) mount: Option<&'a crate::overlay::Mount>,
    /// The `RLIMIT_AS` it sets itself (and what it starts inherits), in bytes.
    pub(super) rlimit_as: Option<u64>,
}

/// The program, its arguments and its environment as `execve` takes them.
struct Exec {
    /// The files to try, in order: the program itself when it names a path, otherwise it
    /// in each directory of the command's `PATH`. Relative ones are relative to the
    /// command's working directory, as the leader sees it when it calls `execve`.
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
    /// `/bin/sh`, the first of `sh_argv`.
    sh: CString,
}

/// Null-terminated arrays of pointers into an [`Exec`]'s strings, kept as addresses so
/// that they can move into the leader's steps; the strings they point into move with
/// them, and their bytes stay where they are.
struct Pointers {
    argv: Vec<usize>,
    envp: Vec<usize>,
    /// For each candidate, `/bin/sh CANDIDATE ARGS...`: a file without the magic of an
    /// executable runs in the shell, as `execvp` runs it.
    sh_argvs: Vec<Vec<usize>>,
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
        sh: c"/bin/sh".to_owned(),
    })
}

/// The null-terminated array of the addresses of `strings`, for `execve`.
fn addresses<'a>(strings: impl IntoIterator<Item = &'a CString>) -> Vec<usize> {
    strings
        .into_iter()
        .map(|s| s.as_ptr().expose_provenance())
        .chain(std::iter::once(0))
        .collect()
}

impl Exec {
    fn pointers(&self) -> Pointers {
        Pointers {
            argv: addresses(&self.argv),
            envp: addresses(&self.envp),
            sh_argvs: self
                .candidates
                .iter()
                .map(|file| addresses([&self.sh, file].into_iter().chain(self.argv.iter().skip(1))))
                .collect(),
        }
    }
}

/// The leader's steps for `program` with `args` and the environment `overrides`, as
/// `leader` says, prepared before the fork.
///
/// # Errors
/// An argument or the environment holds a NUL byte, the program is empty, or a descriptor
/// could not be copied.
pub(super) fn steps(
    program: &str,
    args: &[String],
    overrides: &[(&OsStr, &OsStr)],
    leader: &Leader<'_>,
) -> io::Result<Steps> {
    let exec = prepare(program, args, overrides)?;
    let pointers = exec.pointers();
    Ok(Steps {
        parent: nix::unistd::getpid(),
        ids: leader.ids.try_clone_to_owned()?,
        guardian: leader.guardian.and_then(guardian::Guardian::leader_end),
        mount: leader.mount.cloned(),
        rlimit_as: leader.rlimit_as,
        exec,
        pointers,
    })
}

/// Starts `program` with its `steps` as `leader` says, through the standard library's
/// `fork` (the leader's cgroup, if any, is not used: see `clone_into`).
///
/// # Errors
/// The program cannot be found or run, or a step of the leader failed (its error).
pub(super) fn spawn(program: &str, leader: &Leader<'_>, mut steps: Steps) -> io::Result<Child> {
    let mut command = Command::new(program);
    command
        .current_dir(leader.cwd)
        .stdin(Stdio::from(leader.stdin.try_clone_to_owned()?))
        .stdout(Stdio::from(leader.output.try_clone_to_owned()?))
        .stderr(Stdio::from(leader.output.try_clone_to_owned()?))
        .process_group(0);
    // SAFETY: `Steps::run` makes system calls only, on what is prepared above (moved into
    // the closure), and allocates nothing, so it is sound in a child forked from a process
    // with other threads.
    #[expect(
        unsafe_code,
        reason = "the leader's steps between fork and exec (parent-death signal, the \
                  guardian's list, the overlay, execve) run in the forked child"
    )]
    unsafe {
        command.pre_exec(move || Err(io::Error::from(steps.run())));
    }
    let pid = Pid::from_raw(command.spawn()?.id().cast_signed());
    // The `std::process::Child` is dropped: that neither waits nor kills, and the leader
    // is waited for by its id from here on.
    Ok(Child::started(pid))
}

/// A descriptor for `pid` that polls readable once it has ended; `None` where the kernel
/// has no `pidfd_open` (before Linux 5.3) or refuses it. The child is not reaped yet, so
/// `pid` cannot name another process.
fn pidfd_open(pid: Pid) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid.as_raw())?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// The leader's steps after the standard library's.
///
/// The descriptors are the child's own copies, made before the fork (close-on-exec, as
/// every descriptor of the runner's), so that nothing is borrowed across it.
pub(super) struct Steps {
    parent: Pid,
    ids: OwnedFd,
    guardian: Option<OwnedFd>,
    mount: Option<crate::overlay::Mount>,
    rlimit_as: Option<u64>,
    exec: Exec,
    pointers: Pointers,
}

impl Steps {
    /// Runs in the child, after the standard library has given it its descriptors, its
    /// working directory and its process group: every step, then `execve`. Returns only
    /// with the error that kept it from running the command.
    pub(super) fn run(&mut self) -> Errno {
        match self.steps() {
            Ok(()) => self.exec(),
            Err(errno) => errno,
        }
    }

    fn steps(&self) -> Result<(), Errno> {
        // The command starts with no signal blocked, whatever the starting thread blocks.
        sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
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
        // Its id, so that a start that fails after this can be taken off the guardian's
        // list.
        let _ = nix::unistd::write(&self.ids, &pid.to_ne_bytes());
        if let Some(fd) = &self.guardian {
            let mut line = [0u8; guardian::LINE_MAX];
            let len = guardian::line(b'+', pid, &mut line);
            let _ = nix::unistd::write(fd, &line[..len]);
        }
        if let Some(mount) = &self.mount {
            mount
                .enter()
                .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?;
        }
        // Last: the steps above may allocate in the kernel, never in this address space.
        if let Some(bytes) = self.rlimit_as {
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, bytes, bytes)?;
        }
        Ok(())
    }

    /// `execve` of each candidate in turn, as `execvp` searches: past one that is not there
    /// (or that this user may not run, which is the error when nothing else runs), through
    /// `/bin/sh` for one the kernel does not know how to run; the error when none ran.
    fn exec(&self) -> Errno {
        let argv = self.pointers.argv.as_ptr().cast::<*const libc::c_char>();
        let envp = self.pointers.envp.as_ptr().cast::<*const libc::c_char>();
        let mut denied = false;
        let mut last = Errno::ENOENT;
        for (file, sh_argv) in self.exec.candidates.iter().zip(&self.pointers.sh_argvs) {
            let sh_argv = sh_argv.as_ptr().cast::<*const libc::c_char>();
            // SAFETY: null-terminated arrays of the addresses of `CString`s that `self`
            // owns, and that live until the call has replaced this process.
            #[expect(
                unsafe_code,
                reason = "execve of prepared arrays: nix's execve allocates them, which a \
                          forked child must not"
            )]
            let errno = unsafe {
                libc::execve(file.as_ptr(), argv, envp);
                match Errno::last() {
                    Errno::ENOEXEC => {
                        libc::execve(self.exec.sh.as_ptr(), sh_argv, envp);
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

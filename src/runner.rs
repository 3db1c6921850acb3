//! Running one command in a workspace, with the hygiene a reducer needs.
//!
//! Each run gets its own process group and its own empty `TMPDIR`; stdin is closed; stdout
//! and stderr share one pipe, drained continuously into one buffer capped at
//! [`OUTPUT_CAP`] bytes (overflow ends the run as a resource failure). On timeout the group
//! gets SIGTERM, a grace period, then SIGKILL. When the command itself returns, whatever it
//! left running in its group is ended the same way, so nothing outlives a probe. The
//! leader's end wakes the run at once through a `pidfd` (Linux 5.3; see
//! `spawn::Child::ended`), even while what it left behind still holds the output pipe. A
//! process that escapes with `setsid()` leaves the group and cannot be reached this way,
//! unless the run has a cgroup of its own (`cgroup`, where the machine allows one), which
//! is killed as a whole when the run ends; its hold on the output pipe is cut either way.
//!
//! Nothing outlives repromin either, even when it is killed with SIGKILL and cannot end
//! anything itself. The group leader gets the parent-death signal SIGKILL, so it dies with
//! the thread that started it (that thread waits in [`run`] until the group is ended, so
//! it cannot go first). The rest of the group is ended by the guardian: a small `/bin/sh`
//! process in a process group of its own, started with the first run, that reads on its
//! stdin which groups are running and, when that pipe closes because repromin is gone,
//! sends SIGKILL to every group still listed. Both are in place before the command's first
//! instruction runs: the leader arms its signal and lists its group itself, between its
//! start and exec, so that a repromin killed while it is starting a command (before it even
//! knows the command's process id) still leaves nothing of it running (see `spawn`).

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

mod cgroup;
mod clone_into;
mod guardian;
mod memory;
mod spawn;

pub use cgroup::{Containment, KeptCgroups, containment};
pub use memory::{
    ALLOCATION_FAILURES, MIN_LIMIT as MIN_MEMORY, MemoryMechanism, MemoryRecord, MemorySizeError,
    format_size, mechanism as memory_mechanism, parse_size as parse_memory_size,
};

/// The most output one run may produce, stdout and stderr together: 64 MiB.
pub const OUTPUT_CAP: usize = 64 * 1024 * 1024;

/// How long a group gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// The longest a run waits between two looks at the command (output, exit, timeout and
/// interrupt).
const POLL: Duration = Duration::from_millis(20);

/// The first wait for the leader's exit after its output pipe has closed.
const SETTLE_FIRST: Duration = Duration::from_micros(50);

/// An error that prevented a command from running at all.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The program could not be started.
    #[error("cannot run `{program}`")]
    Spawn {
        /// The program name.
        program: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// Setting up the run failed.
    #[error("cannot {action}")]
    Setup {
        /// What was being done.
        action: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The argument vector was empty.
    #[error("no command was given")]
    EmptyCommand,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Termination {
    /// The command exited with this status.
    Exited(i32),
    /// The command was killed by this signal (not by us).
    Signaled(i32),
    /// The command ran past its timeout and was killed.
    TimedOut,
    /// The command wrote more than [`OUTPUT_CAP`] bytes and was killed.
    OutputOverflow,
    /// The run was cut short by an interrupt (Ctrl-C).
    Interrupted,
    /// The container's memory limit ended the run (exit status 137 under a memory limit).
    MemoryLimit,
    /// The tree grew over the container runner's workspace limit and the run was ended.
    WorkspaceLimit,
    /// The run went over its memory limit (`--memory`, see `memory`).
    OverMemory,
}

impl Termination {
    /// A short human description.
    pub fn describe(self) -> String {
        match self {
            Termination::Exited(code) => format!("exit {code}"),
            Termination::Signaled(sig) => {
                let name =
                    Signal::try_from(sig).map_or_else(|_| sig.to_string(), |s| s.to_string());
                format!("killed by {name}")
            }
            Termination::TimedOut => "timed out".to_string(),
            Termination::OutputOverflow => "output over 64 MiB".to_string(),
            Termination::Interrupted => "interrupted".to_string(),
            Termination::MemoryLimit => "over the container's memory limit (exit 137)".to_string(),
            Termination::WorkspaceLimit => "workspace over its size limit".to_string(),
            Termination::OverMemory => "over the --memory limit".to_string(),
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// How it ended.
    pub termination: Termination,
    /// Combined stdout and stderr, in arrival order.
    pub output: Vec<u8>,
    /// Wall time.
    pub duration: Duration,
}

/// What to run and how.
#[derive(Clone, Debug)]
pub struct CommandSpec {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Environment overrides on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// The most memory a run may use, in bytes (see `memory`); `None`: no limit.
    pub memory: Option<u64>,
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

struct Capture {
    reader: std::fs::File,
    output: Vec<u8>,
    overflow: bool,
    eof: bool,
}

impl Capture {
    /// Reads what is available, waiting at most `wait` for the first byte. Returns at once
    /// when the pipe has reached end-of-file or the output is over the cap.
    fn pump(&mut self, wait: Duration) {
        self.pump_until(wait, None);
    }

    /// As [`Capture::pump`], but the wait also ends as soon as `ended` polls readable (the
    /// leader's end, see [`spawn::Child::ended`]); after end-of-file it waits for that
    /// alone.
    fn pump_until(&mut self, wait: Duration, ended: Option<BorrowedFd<'_>>) {
        let millis = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
        if self.eof || self.overflow {
            if let Some(ended) = ended {
                let _ = poll(
                    &mut [PollFd::new(ended, PollFlags::POLLIN)],
                    PollTimeout::from(millis),
                );
            }
            return;
        }
        let output = PollFd::new(self.reader.as_fd(), PollFlags::POLLIN);
        let _ = match ended {
            Some(ended) => poll(
                &mut [output, PollFd::new(ended, PollFlags::POLLIN)],
                PollTimeout::from(millis),
            ),
            None => poll(&mut [output], PollTimeout::from(millis)),
        };
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match self.reader.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    if self.output.len() + n > OUTPUT_CAP {
                        let room = OUTPUT_CAP - self.output.len();
                        self.output.extend_from_slice(&chunk[..room]);
                        self.overflow = true;
                        return;
                    }
                    self.output.extend_from_slice(&chunk[..n]);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.eof = true;
                    return;
                }
            }
        }
    }
}

fn signal_group(pgid: Pid, signal: Signal) {
    // ESRCH means the group is already gone, which is what we want.
    let _ = killpg(pgid, signal);
}

/// Ends the whole group: SIGTERM, up to `grace` for the pipe to close, then SIGKILL.
fn end_group(pgid: Pid, child: &mut spawn::Child, capture: &mut Capture, grace: Duration) {
    signal_group(pgid, Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        let _ = child.try_wait();
        if capture.eof || !group_alive(pgid) {
            break;
        }
        capture.pump(POLL);
    }
    signal_group(pgid, Signal::SIGKILL);
    let _ = child.wait();
    // Give killed orphans a moment to become zombies, and reap them.
    let until = Instant::now() + Duration::from_millis(200);
    while group_alive(pgid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Reaps exited members of the group that were reparented to us, then reports whether any
/// member is left.
fn group_alive(pgid: Pid) -> bool {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    loop {
        match waitpid(Pid::from_raw(-pgid.as_raw()), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => break,
            Ok(_) => {}
        }
    }
    killpg(pgid, None).is_ok()
}

/// Makes this process the subreaper of everything it starts, so that a background child
/// orphaned by its command is reparented here and can be reaped (and so stops counting as
/// alive) instead of lingering as a zombie under an init that does not reap.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = nix::sys::prctl::set_child_subreaper(true);
    });
}

/// Marks every descriptor above 2 that this process holds close-on-exec, so that no
/// command it starts inherits one: a workflow step's open files and sockets never reach the
/// pull request's test code. repromin opens its own close-on-exec already, so this changes
/// only what it inherited. A gate side calls it before it runs anything.
///
/// # Errors
/// The kernel refused. Where `close_range` is missing (Linux before 5.11), each descriptor
/// listed in `/proc/self/fd` is marked instead, and an error there is returned.
pub fn seal_inherited_descriptors() -> io::Result<()> {
    use nix::libc;
    // SAFETY: `close_range` with CLOSE_RANGE_CLOEXEC only sets a flag on descriptors; it
    // touches no memory.
    #[expect(unsafe_code, reason = "close_range has no safe wrapper in nix or std")]
    let sealed =
        unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) };
    if sealed == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) {
        return Err(err);
    }
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|item| item.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: F_SETFD on a descriptor number only sets its flag; a number that is no
        // longer open (the listing's own) fails with EBADF.
        #[expect(
            unsafe_code,
            reason = "F_SETFD on a descriptor number this process does not own"
        )]
        let set = unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        if set != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EBADF) {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// The process id a leader wrote on `ids` before its exec failed, if it got that far.
fn failed_leader(ids: &OwnedFd) -> Option<Pid> {
    let mut bytes = [0u8; 4];
    match nix::unistd::read(ids, &mut bytes) {
        Ok(4) => Some(Pid::from_raw(i32::from_ne_bytes(bytes))),
        _ => None,
    }
}

/// Runs `spec` in `cwd` with `TMPDIR` set to `tmpdir`, under `timeout`.
///
/// `interrupt` is polled; when it becomes true the run is ended and reported as
/// [`Termination::Interrupted`].
///
/// # Errors
/// Only when the command cannot be started; every way a started command ends is a
/// [`RunOutcome`].
pub fn run(
    spec: &CommandSpec,
    cwd: &Path,
    tmpdir: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<RunOutcome, RunnerError> {
    run_mounted(spec, cwd, tmpdir, timeout, interrupt, None)
}

/// [`run`], with the tree shown at `cwd` through `mount` (an overlay in a mount namespace
/// of the command's own, see [`crate::overlay`]) when it is given.
fn run_mounted(
    spec: &CommandSpec,
    cwd: &Path,
    tmpdir: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
    mount: Option<&crate::overlay::Mount>,
) -> Result<RunOutcome, RunnerError> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(RunnerError::EmptyCommand);
    };
    become_subreaper();
    let guardian = guardian::get();
    // Close-on-exec: the command gets the write end as its stdout and stderr, and nothing
    // else of it. Without the flag it also kept both ends at their own numbers, and a
    // command another worker started meanwhile inherited them: it could write into this
    // run's output, and this run saw no end-of-file until that command was done.
    let (reader, writer) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|errno| RunnerError::Setup {
            action: "create an output pipe",
            source: io::Error::from(errno),
        })?;
    set_nonblocking(&reader).map_err(|source| RunnerError::Setup {
        action: "configure the output pipe",
        source,
    })?;
    let stdin = std::fs::File::open("/dev/null").map_err(|source| RunnerError::Setup {
        action: "open /dev/null for the command's stdin",
        source,
    })?;
    // The leader's id, written by the leader itself (non-blocking: read only after spawn).
    let (ids_read, ids_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).map_err(|errno| {
            RunnerError::Setup {
                action: "create a pipe for the command's process id",
                source: io::Error::from(errno),
            }
        })?;
    let overrides: Vec<(&OsStr, &OsStr)> = [
        ("TMPDIR", tmpdir.as_os_str()),
        ("TMP", tmpdir.as_os_str()),
        ("TEMP", tmpdir.as_os_str()),
    ]
    .into_iter()
    .map(|(k, v)| (OsStr::new(k), v))
    .chain(
        spec.env
            .iter()
            .map(|(k, v)| (OsStr::new(k.as_str()), OsStr::new(v.as_str()))),
    )
    .collect();
    // Everything the command starts is born in its cgroup, where one can be made.
    // A cgroup that gets a memory limit is never handed to another run.
    let cgroup = cgroup::RunCgroup::new(spec.memory.is_none());
    let memory = memory::apply(spec.memory, cgroup.as_ref().map(cgroup::RunCgroup::path));
    let leader = spawn::Leader {
        stdin: stdin.as_fd(),
        output: writer.as_fd(),
        cwd,
        ids: ids_write.as_fd(),
        guardian,
        cgroup: cgroup.as_ref().map(cgroup::RunCgroup::dir),
        mount,
        rlimit_as: memory.and_then(memory::Applied::rlimit_as),
    };
    let start = Instant::now();
    let spawned = clone_into::start(program, args, &overrides, &leader);
    // Drop our copies of the write end so EOF means every writer is gone.
    drop(writer);
    drop(stdin);
    drop(ids_write);
    let mut child = match spawned {
        Ok(child) => child,
        Err(source) => {
            // A leader whose exec failed had listed its group: take it off the list.
            if let Some(guardian) = guardian
                && let Some(pid) = failed_leader(&ids_read)
            {
                guardian.forget(pid);
            }
            return Err(RunnerError::Spawn {
                program: program.clone(),
                source,
            });
        }
    };
    drop(ids_read);
    // The group is listed with the guardian already (by the leader).
    crate::failpoint::pause("run:spawned");
    let pgid = child.id();
    let mut capture = Capture {
        reader: std::fs::File::from(reader),
        output: Vec::new(),
        overflow: false,
        eof: false,
    };
    let deadline = start + timeout;
    // The wait ends with output, or the leader's end where the kernel can signal it (then
    // nothing sleeps between the two). Without that, once the pipe is closed, the leader is
    // usually a few microseconds from exiting: look for its exit after a short wait that
    // doubles up to the usual polling period.
    let mut settle = SETTLE_FIRST;
    let termination = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match child.ended() {
            Some(ended) => capture.pump_until(POLL.min(left), Some(ended)),
            None if capture.eof => {
                std::thread::sleep(settle.min(left));
                settle = (settle * 2).min(POLL);
            }
            None => capture.pump(POLL),
        }
        if capture.overflow {
            end_group(pgid, &mut child, &mut capture, Duration::ZERO);
            break Termination::OutputOverflow;
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                // The leader is done: collect what is buffered, then end what it left behind.
                capture.pump(Duration::ZERO);
                let result = match status {
                    spawn::Exit::Code(code) => Termination::Exited(code),
                    spawn::Exit::Signal(sig) => Termination::Signaled(sig),
                };
                end_group(pgid, &mut child, &mut capture, GRACE);
                break result;
            }
            Ok(None) => {}
            Err(_) => {
                end_group(pgid, &mut child, &mut capture, GRACE);
                break Termination::Exited(-1);
            }
        }
        if interrupt.load(Ordering::SeqCst) {
            end_group(pgid, &mut child, &mut capture, GRACE);
            break Termination::Interrupted;
        }
        if Instant::now() >= deadline {
            end_group(pgid, &mut child, &mut capture, GRACE);
            break Termination::TimedOut;
        }
    };
    if let Some(guardian) = guardian {
        guardian.forget(pgid);
    }
    let oom = memory::cgroup_oom(memory, cgroup.as_ref().map(cgroup::RunCgroup::path));
    // What left the group is still in the cgroup: it ends with it.
    drop(cgroup);
    // Read what the group wrote before it ended; a process that left the group may still
    // hold the pipe, so this is bounded, and the read end is closed when `capture` drops.
    let drain_until = Instant::now() + Duration::from_millis(100);
    while !capture.eof && !capture.overflow && Instant::now() < drain_until {
        capture.pump(Duration::from_millis(10));
    }
    let termination = if capture.overflow {
        Termination::OutputOverflow
    } else if memory::over(memory, &capture.output, oom, child.peak_rss())
        && termination != Termination::Interrupted
    {
        Termination::OverMemory
    } else {
        termination
    };
    Ok(RunOutcome {
        termination,
        output: capture.output,
        duration: start.elapsed(),
    })
}

/// Ends this process's guardian (see the module docs) once no run is left, so that it is
/// reaped here rather than left to whatever adopts it; runs started later still die with
/// repromin. The binary calls it before it exits.
pub fn finish() {
    guardian::finish();
}

/// Confines runs to another user (the gate's sandbox): what is handed to that user before
/// a run, the command line that starts the run confined, and what is taken back after it.
pub(crate) trait Confinement: Send + Sync {
    /// Hands the run's working directory `cwd`, its `tmpdir` and whatever else the
    /// confinement shares with its runs to the confined user.
    fn hand_over(&self, cwd: &Path, tmpdir: &Path);
    /// The command that runs `spec` confined, in `cwd` with `tmpdir` as `TMPDIR`.
    fn wrap(&self, spec: &CommandSpec, cwd: &Path, tmpdir: &Path) -> CommandSpec;
    /// Takes back what [`hand_over`](Self::hand_over) handed over, once the run has ended
    /// and nothing it started is left.
    fn take_back(&self, cwd: &Path, tmpdir: &Path);
    /// Whether [`watch`](Self::watch) has anything to watch during a run.
    fn watches(&self) -> bool {
        false
    }
    /// Watches a run until `done` is set, on a thread of its own; a resource failure it
    /// ended the run for (the run's termination then becomes this).
    fn watch(&self, _cwd: &Path, _tmpdir: &Path, _done: &AtomicBool) -> Option<Termination> {
        None
    }
    /// The run's outcome as the confinement sees it, once it is over and taken back: a
    /// resource failure the command's status alone does not say, and whatever the
    /// confinement must clean up after a run that did not end on its own.
    fn settle(&self, _cwd: &Path, _tmpdir: &Path, outcome: RunOutcome) -> RunOutcome {
        outcome
    }
}

/// [`run`], confined when `confinement` is given: the directories are handed over before
/// the run and taken back after it, however it ended. An unconfined run shows its tree
/// through `mount` when it is given; a confined one never has one.
///
/// # Errors
/// As [`run`].
pub(crate) fn run_confined(
    spec: &CommandSpec,
    cwd: &Path,
    tmpdir: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
    confinement: Option<&dyn Confinement>,
    mount: Option<&crate::overlay::Mount>,
) -> Result<RunOutcome, RunnerError> {
    let Some(confinement) = confinement else {
        return run_mounted(spec, cwd, tmpdir, timeout, interrupt, mount);
    };
    confinement.hand_over(cwd, tmpdir);
    let wrapped = confinement.wrap(spec, cwd, tmpdir);
    let (outcome, breach) = if confinement.watches() {
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let watcher = scope.spawn(|| confinement.watch(cwd, tmpdir, &done));
            let outcome = run(&wrapped, cwd, tmpdir, timeout, interrupt);
            done.store(true, Ordering::SeqCst);
            (outcome, watcher.join().unwrap_or(None))
        })
    } else {
        (run(&wrapped, cwd, tmpdir, timeout, interrupt), None)
    };
    confinement.take_back(cwd, tmpdir);
    let mut outcome = outcome?;
    if let Some(breach) = breach
        && outcome.termination != Termination::Interrupted
    {
        outcome.termination = breach;
    }
    Ok(confinement.settle(cwd, tmpdir, outcome))
}

/// A per-run scratch layout: the wrapper directory, the tree inside it under a stable
/// basename (`wrapper/run/<basename>`), and a private temporary directory (`wrapper/tmp`),
/// which can never be the same directory whatever the basename is.
#[derive(Debug, Clone)]
pub struct RunDirs {
    /// The wrapper directory, unique to one worker.
    pub wrapper: PathBuf,
    /// Where the tree is (`wrapper/run/<basename>`); the command's working directory.
    pub tree: PathBuf,
    /// `TMPDIR` for the command (`wrapper/tmp`), emptied before every run.
    pub tmp: PathBuf,
}

impl RunDirs {
    /// The layout for a worker under `scratch`.
    pub fn new(scratch: &Path, name: &str, basename: &str) -> RunDirs {
        let wrapper = scratch.join(name);
        RunDirs {
            tree: wrapper.join("run").join(basename),
            tmp: wrapper.join("tmp"),
            wrapper,
        }
    }

    /// Empties the temporary directory (creating it when it is not a directory) and gives
    /// it mode 0700.
    ///
    /// # Errors
    /// I/O failures.
    pub fn fresh_tmp(&self) -> Result<(), crate::tree::TreeError> {
        use crate::tree::TreeError;
        use std::os::unix::fs::PermissionsExt;
        let io = |action: &'static str| {
            move |source| TreeError::Io {
                action,
                path: self.tmp.clone(),
                source,
            }
        };
        if std::fs::symlink_metadata(&self.tmp).is_ok_and(|m| m.is_dir()) {
            // Emptied in place: a new directory on every run costs an inode allocation.
            std::fs::set_permissions(&self.tmp, std::fs::Permissions::from_mode(0o700))
                .map_err(io("set permissions of"))?;
            for item in std::fs::read_dir(&self.tmp).map_err(io("list"))? {
                let item = item.map_err(io("list"))?;
                crate::workspace::remove_any(&item.path())?;
            }
        } else {
            crate::workspace::remove_any(&self.tmp)?;
            std::fs::create_dir_all(&self.tmp).map_err(io("create directory"))?;
            std::fs::set_permissions(&self.tmp, std::fs::Permissions::from_mode(0o700))
                .map_err(io("set permissions of"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> CommandSpec {
        CommandSpec {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![("REPROMIN_TEST_VAR".into(), "v".into())],
            memory: None,
        }
    }

    fn go(script: &str, timeout: Duration) -> RunOutcome {
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        run(&sh(script), dir.path(), dir.path(), timeout, &never).unwrap()
    }

    /// Runs `argv` with the environment overrides `env` in `dir` (its TMPDIR too).
    fn start(argv: &[&str], env: &[(&str, &str)], dir: &Path) -> Result<RunOutcome, RunnerError> {
        let spec = CommandSpec {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            memory: None,
        };
        let never = AtomicBool::new(false);
        run(&spec, dir, dir, Duration::from_secs(10), &never)
    }

    /// The minor page faults of this thread so far.
    fn minor_faults() -> i64 {
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_THREAD)
            .unwrap()
            .minor_page_faults()
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_start_in_a_cgroup_copies_nothing_of_the_memory_repromin_holds() {
        // After a `fork`, every page the parent writes faults once more, to be copied; a
        // start that shares the memory until `execve` leaves the parent's pages alone.
        if containment() != Containment::Cgroup {
            let why = "runs get no cgroup here (root and a writable cgroup2 are needed)";
            crate::test_skip::require_tool("a cgroup per run", Err(why.into()));
            return;
        }
        let mut held = vec![1u8; 64 << 20];
        let touch = |held: &mut Vec<u8>| {
            for i in (0..held.len()).step_by(4096) {
                held[i] = held[i].wrapping_add(1);
            }
        };
        touch(&mut held);
        let _ = go("exit 0", Duration::from_secs(10));
        touch(&mut held);
        let before = minor_faults();
        let out = go("exit 0", Duration::from_secs(10));
        assert_eq!(out.termination, Termination::Exited(0));
        touch(&mut held);
        let faults = minor_faults() - before;
        // 16,384 pages: a copy of the page tables makes each of them fault once.
        assert!(faults < 2_000, "{faults} page faults after one start");
    }

    #[test]
    fn exit_codes_signals_and_combined_output_are_reported() {
        let out = go("echo out; echo err >&2; exit 3", Duration::from_secs(10));
        assert_eq!(out.termination, Termination::Exited(3));
        assert_eq!(String::from_utf8_lossy(&out.output), "out\nerr\n");
        let out = go("kill -SEGV $$", Duration::from_secs(10));
        assert_eq!(out.termination, Termination::Signaled(11));
        let out = go("printf %s \"$REPROMIN_TEST_VAR\"", Duration::from_secs(10));
        assert_eq!(out.output, b"v");
    }

    #[test]
    fn a_command_holds_no_pipe_but_its_stdout_and_stderr_even_beside_another_run() {
        // Two runs at once, as two workers make them: the second starts while the first
        // is running. Each lists the pipes its shell holds: its output pipe at 1 and 2,
        // nothing more (not the read end, not the other run's pipe). Pipes this test
        // process inherited from whatever started it are not the runner's, and are left
        // out.
        let outside: Vec<String> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .map(|t| t.to_string_lossy().into_owned())
            .filter(|t| t.starts_with("pipe:"))
            .collect();
        let pipes = move |out: &RunOutcome| -> Vec<String> {
            let text = String::from_utf8_lossy(&out.output).into_owned();
            let mut fds: Vec<String> = text
                .lines()
                .filter_map(|l| l.split_once(" -> "))
                .filter(|(_, target)| {
                    target.starts_with("pipe:") && !outside.iter().any(|o| o == target)
                })
                .filter_map(|(fd, _)| fd.split_whitespace().last())
                .map(str::to_string)
                .collect();
            fds.sort();
            fds
        };
        let list = "ls -l /proc/$$/fd";
        let first =
            std::thread::spawn(move || go(&format!("sleep 1; {list}"), Duration::from_secs(20)));
        std::thread::sleep(Duration::from_millis(300));
        let second = go(&format!("{list}; sleep 1"), Duration::from_secs(20));
        let first = first.join().unwrap();
        for (name, out) in [("first", &first), ("second", &second)] {
            assert_eq!(out.termination, Termination::Exited(0), "{name}");
            let listing = String::from_utf8_lossy(&out.output);
            assert_eq!(pipes(out), ["1", "2"], "{name}: {listing}");
        }
    }

    #[test]
    fn a_hanging_command_times_out_and_its_group_is_killed() {
        let out = go("trap '' TERM; sleep 30", Duration::from_millis(300));
        assert_eq!(out.termination, Termination::TimedOut);
        assert!(out.duration < Duration::from_secs(10), "{:?}", out.duration);
    }

    #[test]
    fn background_children_do_not_outlive_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("pid");
        let script = format!("sleep 60 & echo $! > {}; exit 1", marker.display());
        let never = AtomicBool::new(false);
        let out = run(
            &sh(&script),
            dir.path(),
            dir.path(),
            Duration::from_secs(10),
            &never,
        )
        .unwrap();
        assert_eq!(out.termination, Termination::Exited(1));
        let pid: i32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let alive = nix::sys::signal::kill(Pid::from_raw(pid), None).is_ok();
        assert!(!alive, "background sleep {pid} survived the run");
    }

    /// The leader's end wakes the run at once, even while a process it left behind still
    /// holds the output pipe: the child's descriptor polls readable exactly when the leader
    /// has ended, and is not inherited by what runs next.
    #[test]
    fn a_leader_s_end_is_signalled_on_a_descriptor_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let stdin = std::fs::File::open("/dev/null").unwrap();
        let (reader, writer) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let (_ids_read, ids_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let leader = spawn::Leader {
            stdin: stdin.as_fd(),
            output: writer.as_fd(),
            cwd: dir.path(),
            ids: ids_write.as_fd(),
            guardian: None,
            cgroup: None,
            mount: None,
            rlimit_as: None,
        };
        // The leader waits for its marker file, then exits, leaving `sleep` with the output
        // pipe.
        let go = dir.path().join("go");
        let script = format!(
            "(sleep 30 &); while [ ! -e {} ]; do sleep 0.01; done; exit 4",
            go.display()
        );
        let args = ["-c".to_string(), script];
        let steps = spawn::steps("sh", &args, &[], &leader).unwrap();
        let mut child = spawn::spawn("sh", &leader, steps).unwrap();
        drop(writer);
        if child.ended().is_none() {
            signal_group(child.id(), Signal::SIGKILL);
            std::fs::write(&go, b"").unwrap();
            let _ = child.wait();
            let none = Err("this kernel has none (Linux 5.3 added it)".to_string());
            crate::test_skip::require_tool("pidfd_open", none);
            return;
        }
        let readable = |child: &spawn::Child, wait: u16| {
            let ended = child
                .ended()
                .expect("pidfd_open (Linux 5.3) on this kernel");
            let mut fds = [PollFd::new(ended, PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(wait)).unwrap() == 1
        };
        assert!(!readable(&child, 200), "readable while the leader runs");
        std::fs::write(&go, b"").unwrap();
        assert!(
            readable(&child, 10_000),
            "not readable after the leader ended"
        );
        assert_eq!(child.try_wait().unwrap(), Some(spawn::Exit::Code(4)));
        // The pipe is still held by the `sleep` the leader left.
        set_nonblocking(&reader).unwrap();
        let mut pipe = std::fs::File::from(reader);
        let mut byte = [0u8; 1];
        assert_eq!(
            pipe.read(&mut byte).map_err(|e| e.kind()),
            Err(io::ErrorKind::WouldBlock)
        );
        signal_group(child.id(), Signal::SIGKILL);
        // Close-on-exec, as every descriptor of the runner's.
        let flags = fcntl(child.ended().unwrap(), FcntlArg::F_GETFD).unwrap();
        assert!(flags & nix::libc::FD_CLOEXEC != 0);
    }

    #[test]
    fn output_beyond_the_cap_is_a_resource_failure() {
        let out = go(
            "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            Duration::from_secs(60),
        );
        assert_eq!(out.termination, Termination::OutputOverflow);
        assert_eq!(out.output.len(), OUTPUT_CAP);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let spec = CommandSpec {
            argv: vec!["definitely-not-a-command-xyz".into()],
            env: vec![],
            memory: None,
        };
        let never = AtomicBool::new(false);
        let err = run(
            &spec,
            dir.path(),
            dir.path(),
            Duration::from_secs(1),
            &never,
        )
        .unwrap_err();
        assert!(err.to_string().contains("definitely-not-a-command-xyz"));
        // A program that is there but cannot be run, and one in a directory that is gone.
        for (program, kind) in [
            ("/dev/null", io::ErrorKind::PermissionDenied),
            ("/nonexistent/tool", io::ErrorKind::NotFound),
        ] {
            let err = start(&[program], &[], dir.path()).unwrap_err();
            let RunnerError::Spawn { source, .. } = err else {
                panic!("{program}: {err}");
            };
            assert_eq!(source.kind(), kind, "{program}: {source}");
        }
    }

    #[test]
    fn a_program_is_found_on_the_command_s_own_path_and_a_script_without_a_shebang_runs_in_sh() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("repromin-test-tool");
        // No `#!` line: the kernel refuses it, and it runs in /bin/sh as `execvp` does.
        std::fs::write(&tool, "echo \"tool $1 $REPROMIN_TEST_VAR\"\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = format!("/nonexistent:{}", bin.display());
        let env = [("PATH", path.as_str()), ("REPROMIN_TEST_VAR", "v")];
        let out = start(&["repromin-test-tool", "arg"], &env, dir.path()).unwrap();
        assert_eq!(out.termination, Termination::Exited(0));
        assert_eq!(String::from_utf8_lossy(&out.output), "tool arg v\n");
        // A relative directory of the search path is relative to the command's working
        // directory, as for `execvp` run there.
        let env = [("PATH", "/nonexistent:bin")];
        let out = start(&["repromin-test-tool", "rel"], &env, dir.path()).unwrap();
        assert_eq!(String::from_utf8_lossy(&out.output), "tool rel \n");
    }

    #[test]
    fn a_command_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
        // This thread blocks SIGUSR1 and the process ignores SIGPIPE (as the Rust runtime
        // does): the command inherits neither.
        let mut usr1 = nix::sys::signal::SigSet::empty();
        usr1.add(Signal::SIGUSR1);
        nix::sys::signal::pthread_sigmask(
            nix::sys::signal::SigmaskHow::SIG_BLOCK,
            Some(&usr1),
            None,
        )
        .unwrap();
        #[expect(unsafe_code, reason = "setting a signal disposition")]
        // SAFETY: ignoring SIGPIPE, as the Rust runtime already does.
        unsafe {
            nix::sys::signal::signal(Signal::SIGPIPE, nix::sys::signal::SigHandler::SigIgn)
                .unwrap();
        }
        // Read by grep itself (a shell may reset its own mask as it starts).
        let dir = tempfile::tempdir().unwrap();
        let status = ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"];
        let out = start(&status, &[], dir.path()).unwrap();
        let text = String::from_utf8_lossy(&out.output).into_owned();
        let mask = |name: &str| -> u64 {
            let line = text.lines().find(|l| l.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{text}");
        let pipe = 1u64 << (Signal::SIGPIPE as u32 - 1);
        assert_eq!(mask("SigIgn:") & pipe, 0, "{text}");
    }

    /// Real runs: the limit holds for the command and what it starts, a run within it
    /// ends as it would, and one past it ends as [`Termination::OverMemory`].
    #[test]
    fn a_run_past_its_limit_ends_over_memory() {
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let go = |script: &str, memory: Option<u64>| {
            let spec = CommandSpec {
                argv: vec!["sh".into(), "-c".into(), script.into()],
                env: Vec::new(),
                memory,
            };
            let timeout = std::time::Duration::from_secs(60);
            run(&spec, dir.path(), dir.path(), timeout, &never).unwrap()
        };
        let greedy = "python3 -c 'b = b\"x\" * (512 << 20)'; echo done; exit 3";
        let limit = Some(200 << 20);
        let out = go(greedy, limit);
        assert_eq!(out.termination, Termination::OverMemory, "{out:?}");
        let out = go(greedy, None);
        assert_eq!(out.termination, Termination::Exited(3));
        let out = go("python3 -c 'b = b\"x\" * (16 << 20)'; exit 3", limit);
        assert_eq!(out.termination, Termination::Exited(3), "{out:?}");
        // One that swallows its allocation failure and fails some other way: the kernel's
        // count or the peak of what it held says it went over.
        let quiet = "python3 -c '\nchunks = []\ntry:\n    while True:\n        chunks.append(b\"x\" * (1 << 20))\nexcept MemoryError:\n    del chunks\nraise SystemExit(3)'";
        let out = go(quiet, limit);
        assert_eq!(out.termination, Termination::OverMemory, "{out:?}");
        if memory::mechanism() == MemoryMechanism::RlimitAs {
            let out = go("ulimit -v", limit);
            assert_eq!(String::from_utf8_lossy(&out.output).trim(), "204800");
        }
    }
}

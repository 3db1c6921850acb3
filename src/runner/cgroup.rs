//! One cgroup (v2) per run, where the machine lets repromin make one: the leader moves
//! itself into its run's cgroup before the command's first instruction, every process the
//! command starts is born in it, and when the run ends the kernel kills all of it at once
//! (`cgroup.kill`, Linux 5.14), including what left the process group with `setsid()` and
//! what double-forked into a daemon.
//!
//! The cgroups live under `repromin-PID` in repromin's own cgroup (read from
//! `/proc/self/cgroup`, on the cgroup2 mount of `/proc/self/mountinfo`), one `run-N` per
//! run, removed when the run ends, and `repromin-PID` itself whenever no run is left. Making them needs write access there: root, or a
//! delegated subtree (a systemd user service with `Delegate=yes`). Where that fails, runs
//! are contained by their process group alone ([`containment`] says which). The
//! `repromin-PID` directories of repromin processes that no longer run (killed before they
//! could remove theirs) are ended and removed by the next repromin that makes its own.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::libc;

/// How a run's processes are kept together and ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Containment {
    /// A cgroup per run, killed as a whole when the run ends.
    Cgroup,
    /// The run's process group (a process that leaves it is not reached).
    ProcessGroup,
}

/// How this process's runs are contained: in a cgroup each where one can be made, else
/// by their process groups.
#[must_use]
pub fn containment() -> Containment {
    if parent().is_some() {
        Containment::Cgroup
    } else {
        Containment::ProcessGroup
    }
}

/// The cgroup this process's run cgroups are made under (its own), where it can make them.
pub(super) fn base() -> Option<&'static Path> {
    parent()?.parent()
}

/// This process's directory of run cgroups, made once.
fn parent() -> Option<&'static Path> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT.get_or_init(|| make_parent().ok()).as_deref()
}

fn make_parent() -> io::Result<PathBuf> {
    let base = own_cgroup()?;
    sweep(&base);
    let dir = base.join(format!("repromin-{}", std::process::id()));
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // A run's cgroup can be made, and a process started in it, only if this one is
    // writable and the kernel starts processes in a cgroup.
    let probe = dir.join("probe");
    fs::create_dir(&probe)?;
    let joinable = open_dir(&probe).and_then(|fd| {
        if super::clone_into::probe(fd.as_fd()) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "clone3 with CLONE_INTO_CGROUP is refused",
            ))
        }
    });
    let _ = fs::remove_dir(&probe);
    // Made again by the first run, and removed whenever no run is left in it.
    let _ = fs::remove_dir(&dir);
    joinable.map(|()| dir)
}

/// The cgroup directory at `dir`, open.
fn open_dir(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(dir)
}

/// The run cgroups of this process: how many runs have one now, how many holders keep
/// ended ones for reuse ([`KeptCgroups`]), and those kept. Without a holder, the last run to
/// end removes the directory of them.
struct Runs {
    active: usize,
    holders: usize,
    idle: Vec<(PathBuf, File)>,
}

static RUNS: std::sync::Mutex<Runs> = std::sync::Mutex::new(Runs {
    active: 0,
    holders: 0,
    idle: Vec::new(),
});

/// While one of these lives, a run cgroup that ends empty, with no cgroup below it and no
/// memory limit, is kept and handed to the next run instead of being removed and made
/// again: making and removing a cgroup (and the directory of them, when runs follow each
/// other one at a time) cost about a tenth of a millisecond a run, a tenth of a short
/// command's spawn. The last one dropped removes every cgroup kept.
pub struct KeptCgroups(());

impl KeptCgroups {
    /// Starts keeping ended run cgroups for reuse, until the value is dropped.
    #[must_use]
    pub fn new() -> KeptCgroups {
        if let Ok(mut runs) = RUNS.lock() {
            runs.holders += 1;
        }
        KeptCgroups(())
    }
}

impl Default for KeptCgroups {
    fn default() -> KeptCgroups {
        KeptCgroups::new()
    }
}

impl Drop for KeptCgroups {
    fn drop(&mut self) {
        let Ok(mut runs) = RUNS.lock() else {
            return;
        };
        runs.holders = runs.holders.saturating_sub(1);
        if runs.holders > 0 {
            return;
        }
        for (dir, fd) in std::mem::take(&mut runs.idle) {
            drop(fd);
            remove_tree(&dir);
        }
        if runs.active == 0
            && let Some(parent) = parent()
        {
            let _ = fs::remove_dir(parent);
        }
    }
}

/// The directory of this process's cgroup on the cgroup2 mount.
fn own_cgroup() -> io::Result<PathBuf> {
    let not_found = |what: &str| io::Error::new(io::ErrorKind::NotFound, what.to_string());
    let mounts = fs::read_to_string("/proc/self/mountinfo")?;
    // Fields: id parent major:minor root mount-point options ... - fstype source options.
    let mount = mounts
        .lines()
        .find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fstype = right.split_whitespace().next()?;
            let mut fields = left.split_whitespace();
            let root = fields.nth(3)?;
            let point = fields.next()?;
            (fstype == "cgroup2" && root == "/").then(|| PathBuf::from(point))
        })
        .ok_or_else(|| not_found("no cgroup2 mount"))?;
    let own = fs::read_to_string("/proc/self/cgroup")?;
    let path = own
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .ok_or_else(|| not_found("no cgroup2 entry in /proc/self/cgroup"))?;
    let path = path.trim().trim_start_matches('/');
    if path.split('/').any(|part| part == "..") {
        return Err(not_found("a cgroup path with `..`"));
    }
    Ok(mount.join(path))
}

/// Ends and removes the run cgroups of repromin processes that are gone.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("repromin-"))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = pid == std::process::id().cast_signed()
            || nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        if alive {
            continue;
        }
        let dir = entry.path();
        if let Ok(runs) = fs::read_dir(&dir) {
            for run in runs.flatten() {
                if run.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = end(&run.path());
                    remove_tree(&run.path());
                }
            }
        }
        let _ = fs::remove_dir(&dir);
    }
}

/// Kills every process of the cgroup at `dir` and waits (a second at most) until it is
/// empty, reaping those that were reparented here; whether it was empty already, with
/// nothing to kill.
///
/// A cgroup that was killed is never handed to another run: on this project's machine
/// (Linux 6.18) a process started in a cgroup once killed through `cgroup.kill`
/// (`CLONE_INTO_CGROUP`) is killed at birth.
fn end(dir: &Path) -> bool {
    if !populated(dir) {
        // Nothing lives in it: nothing to kill, and no member to reap.
        return true;
    }
    let members = || -> Vec<i32> {
        fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    // Listed before the kill: once killed they are zombies, which the list leaves out, and
    // those reparented to this process (a subreaper) must be reaped here before the
    // cgroup can go. The id of one that is not its child is refused, and names no one else.
    let mut seen = members();
    let killed = OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.kill"))
        .and_then(|mut f| f.write_all(b"1"));
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        let left = members();
        if killed.is_err() {
            // Before Linux 5.14: each member in turn.
            for pid in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        seen.extend(left.iter().copied());
        seen.sort_unstable();
        seen.dedup();
        seen.retain(|pid| {
            let reaped = nix::sys::wait::waitpid(
                nix::unistd::Pid::from_raw(*pid),
                Some(nix::sys::wait::WaitPidFlag::WNOHANG),
            );
            // Still ours and not yet dead: look again.
            matches!(reaped, Ok(nix::sys::wait::WaitStatus::StillAlive))
        });
        if (left.is_empty() && seen.is_empty() && !populated(dir)) || Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Removes the cgroup at `dir` and those below it (a repromin that a run started makes its
/// own there), deepest first. Their processes died with the kill of `dir`.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    let _ = fs::remove_dir(dir);
}

/// Whether the cgroup at `dir` still holds a process (`populated 1` in `cgroup.events`).
fn populated(dir: &Path) -> bool {
    fs::read_to_string(dir.join("cgroup.events"))
        .is_ok_and(|text| text.lines().any(|l| l.trim() == "populated 1"))
}

/// A run's cgroup: its leader is started in it ([`RunCgroup::dir`]), and dropping it kills
/// everything in it and removes it (or keeps it for the next run: [`KeptCgroups`]).
pub(super) struct RunCgroup {
    dir: PathBuf,
    /// The directory, open: a leader is started in it (`CLONE_INTO_CGROUP`).
    dir_fd: Option<File>,
    /// Whether it may be kept for another run: no memory limit was set on it.
    reusable: bool,
}

impl RunCgroup {
    /// A cgroup for one run (a kept one when there is one and the run sets no memory
    /// limit, `reusable`); `None` where none can be made.
    pub(super) fn new(reusable: bool) -> Option<RunCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = parent()?;
        let mut runs = RUNS.lock().ok()?;
        if reusable && let Some((dir, dir_fd)) = runs.idle.pop() {
            runs.active += 1;
            return Some(RunCgroup {
                dir,
                dir_fd: Some(dir_fd),
                reusable,
            });
        }
        let dir = parent.join(format!("run-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        match fs::create_dir(parent) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        let made = fs::create_dir(&dir).and_then(|()| {
            open_dir(&dir).inspect_err(|_| {
                let _ = fs::remove_dir(&dir);
            })
        });
        match made {
            Ok(dir_fd) => {
                runs.active += 1;
                Some(RunCgroup {
                    dir,
                    dir_fd: Some(dir_fd),
                    reusable,
                })
            }
            Err(_) => {
                if runs.active == 0 && runs.idle.is_empty() {
                    let _ = fs::remove_dir(parent);
                }
                None
            }
        }
    }

    /// The cgroup's directory.
    pub(super) fn path(&self) -> &Path {
        &self.dir
    }

    /// The cgroup's directory, open.
    ///
    /// # Panics
    /// Never: the directory is open until the value drops.
    pub(super) fn dir(&self) -> BorrowedFd<'_> {
        self.dir_fd
            .as_ref()
            .map(AsFd::as_fd)
            .expect("open until dropped")
    }
}

/// How many cgroups are below the cgroup at `dir` (`nr_descendants` of `cgroup.stat`);
/// `None` when it cannot be read.
fn descendants(dir: &Path) -> Option<u64> {
    let stat = fs::read_to_string(dir.join("cgroup.stat")).ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("nr_descendants "))
        .and_then(|n| n.trim().parse().ok())
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        let untouched = end(&self.dir);
        let Ok(mut runs) = RUNS.lock() else {
            remove_tree(&self.dir);
            return;
        };
        runs.active = runs.active.saturating_sub(1);
        // Kept only when its run left nothing to kill in it and no cgroup below it (a
        // repromin that the run started makes its own there).
        let keep =
            self.reusable && runs.holders > 0 && untouched && descendants(&self.dir) == Some(0);
        match self.dir_fd.take() {
            Some(fd) if keep => runs.idle.push((self.dir.clone(), fd)),
            _ => {
                remove_tree(&self.dir);
                if runs.active == 0
                    && runs.idle.is_empty()
                    && let Some(parent) = self.dir.parent()
                {
                    let _ = fs::remove_dir(parent);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this process can make run cgroups; a skip (or, under `CI`, a failure)
    /// when not.
    fn cgroups_here() -> bool {
        let available = parent()
            .map(drop)
            .ok_or_else(|| "no writable cgroup2 hierarchy".to_string());
        crate::test_skip::require_tool("a cgroup of repromin's own", available)
    }

    /// A shell joins the cgroup at `dir`, then starts `sleep SECONDS` as a daemon in a
    /// session of its own; returns once the cgroup holds it.
    fn start_daemon(dir: &Path, seconds: &str) {
        let procs = dir.join("cgroup.procs").display().to_string();
        let status = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("echo 0 > {procs} && setsid sleep {seconds} > /dev/null 2>&1 &"),
            ])
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        while !populated(dir) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(populated(dir), "the daemon did not join");
    }

    #[test]
    fn a_run_cgroup_ends_what_left_the_process_group() {
        if !cgroups_here() {
            return;
        }
        let cgroup = RunCgroup::new(true).expect("a run cgroup");
        assert_eq!(containment(), Containment::Cgroup);
        let dir = cgroup.dir.clone();
        start_daemon(&dir, "1009");
        drop(cgroup);
        assert!(!dir.exists(), "the cgroup was not removed");
        assert!(
            !dir.parent().unwrap().exists(),
            "the directory of the runs' cgroups was left"
        );
    }

    #[test]
    fn kept_cgroups_are_ended_and_handed_to_the_next_run() {
        if !cgroups_here() {
            return;
        }
        let kept = KeptCgroups::new();
        let first = RunCgroup::new(true).expect("a run cgroup");
        let dir = first.dir.clone();
        start_daemon(&dir, "1013");
        drop(first);
        // Ended as ever, and not kept: a process started in a cgroup once killed may be
        // killed at birth.
        assert!(!dir.exists(), "a cgroup that was killed was kept");
        let first = RunCgroup::new(true).expect("a run cgroup");
        let dir = first.dir.clone();
        drop(first);
        assert!(dir.exists(), "an empty cgroup was not kept");
        let second = RunCgroup::new(true).expect("a run cgroup");
        assert_eq!(second.dir, dir, "the kept cgroup was not reused");
        // A process started in it runs.
        let procs = dir.join("cgroup.procs").display().to_string();
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("echo 0 > {procs} && echo alive")])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "alive\n");
        // A run with a memory limit gets a cgroup of its own, never kept.
        let limited = RunCgroup::new(false).expect("a run cgroup");
        let limited_dir = limited.dir.clone();
        assert_ne!(limited_dir, dir);
        drop(limited);
        assert!(!limited_dir.exists(), "a limited run's cgroup was kept");
        // One with a cgroup below it (a repromin the run started) is removed.
        fs::create_dir(dir.join("nested")).unwrap();
        drop(second);
        assert!(!dir.exists(), "a cgroup with one below it was kept");
        let third = RunCgroup::new(true).expect("a run cgroup");
        let third_dir = third.dir.clone();
        drop(third);
        assert!(third_dir.exists());
        drop(kept);
        assert!(!third_dir.exists(), "a kept cgroup outlived its holders");
        assert!(
            !third_dir.parent().unwrap().exists(),
            "the directory of the runs' cgroups was left"
        );
    }
}

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

/// How many runs have a cgroup now: the last one to end removes the directory of them.
static ACTIVE: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

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
                    end(&run.path());
                }
            }
        }
        let _ = fs::remove_dir(&dir);
    }
}

/// Kills every process of the cgroup at `dir`, waits (a second at most) until it is
/// empty, reaping those that were reparented here, and removes it.
fn end(dir: &Path) {
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
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    remove_tree(dir);
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
/// everything in it and removes it.
pub(super) struct RunCgroup {
    dir: PathBuf,
    /// The directory, open: a leader is started in it (`CLONE_INTO_CGROUP`).
    dir_fd: File,
}

impl RunCgroup {
    /// A new cgroup for one run; `None` where none can be made.
    pub(super) fn new() -> Option<RunCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = parent()?;
        let dir = parent.join(format!("run-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        let mut active = ACTIVE.lock().ok()?;
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
                *active += 1;
                Some(RunCgroup { dir, dir_fd })
            }
            Err(_) => {
                if *active == 0 {
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
    pub(super) fn dir(&self) -> BorrowedFd<'_> {
        self.dir_fd.as_fd()
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        end(&self.dir);
        if let Ok(mut active) = ACTIVE.lock() {
            *active = active.saturating_sub(1);
            if *active == 0
                && let Some(parent) = self.dir.parent()
            {
                let _ = fs::remove_dir(parent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_cgroup_ends_what_left_the_process_group() {
        let available = parent()
            .map(drop)
            .ok_or_else(|| "no writable cgroup2 hierarchy".to_string());
        if !crate::test_skip::require_tool("a cgroup of repromin's own", available) {
            return;
        }
        let cgroup = RunCgroup::new().expect("a run cgroup");
        assert_eq!(containment(), Containment::Cgroup);
        let dir = cgroup.dir.clone();
        let procs = dir.join("cgroup.procs").display().to_string();
        // A shell joins the cgroup, then starts a daemon in a session of its own.
        let status = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("echo 0 > {procs} && setsid sleep 1009 > /dev/null 2>&1 &"),
            ])
            .status()
            .unwrap();
        assert!(status.success());
        let started = Instant::now();
        while !populated(&dir) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(populated(&dir), "the daemon did not join");
        drop(cgroup);
        assert!(!dir.exists(), "the cgroup was not removed");
        assert!(
            !dir.parent().unwrap().exists(),
            "the directory of the runs' cgroups was left"
        );
    }
}

//! File helpers, and running a process under a wall-time limit through repromin's runner.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use repromin::runner::{CommandSpec, Termination};

use crate::Res;

pub(crate) fn copy_tree(src: &Path, dst: &Path) -> Res<()> {
    let meta = fs::symlink_metadata(src)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(src)?, dst)?;
    } else if meta.is_dir() {
        fs::create_dir_all(dst)?;
        let mut entries: Vec<_> = fs::read_dir(src)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            copy_tree(&entry.path(), &dst.join(entry.file_name()))?;
        }
    } else {
        fs::copy(src, dst)?;
    }
    Ok(())
}

/// (bytes, files) of a file or a tree; symlinks count as files of zero bytes.
pub(crate) fn measure(path: &Path) -> Res<(u64, u64)> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        let mut total = (0, 0);
        for entry in fs::read_dir(path)? {
            let (b, f) = measure(&entry?.path())?;
            total.0 += b;
            total.1 += f;
        }
        Ok(total)
    } else if meta.file_type().is_symlink() {
        Ok((0, 1))
    } else {
        Ok((meta.len(), 1))
    }
}

/// Relative path -> contents of every file of a tree.
pub(crate) fn read_tree(root: &Path) -> Res<BTreeMap<String, Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> Res<()> {
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            let meta = fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else {
                let rel = path.strip_prefix(root)?.to_string_lossy().into_owned();
                let data = if meta.file_type().is_symlink() {
                    fs::read_link(&path)?
                        .to_string_lossy()
                        .into_owned()
                        .into_bytes()
                } else {
                    fs::read(&path)?
                };
                out.insert(rel, data);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

pub(crate) fn counter_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

pub(crate) fn sh_quote(path: &Path) -> Res<String> {
    let s = path.to_str().ok_or("non-UTF-8 path")?;
    if s.contains('\'') {
        return Err(format!("path with a quote: {s}").into());
    }
    Ok(format!("'{s}'"))
}

pub(crate) fn write_executable(path: &Path, text: &str) -> Res<()> {
    fs::write(path, text)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Running a process under a wall-time limit
// ---------------------------------------------------------------------------

pub(crate) struct Finished {
    pub(crate) wall: Duration,
    /// `None` when the run was killed at the limit.
    pub(crate) status: Option<Termination>,
    /// Smallest size seen while polling, with the time and oracle calls when first seen.
    pub(crate) best: Option<(u64, Duration, u64)>,
}

/// Runs `cmd` (its program, arguments, environment and working directory; `TMPDIR` from
/// its environment) through repromin's runner: its own process group, stdin from
/// `/dev/null`, output captured (and written to `log`), whatever it leaves behind ended.
/// At `limit` the group gets SIGTERM, and SIGKILL `grace` later. While it runs, polls
/// `poll` (a file or tree) for its size.
pub(crate) fn run_limited(
    cmd: &Command,
    log: Option<&Path>,
    limit: Duration,
    grace: Duration,
    counter: &Path,
    poll: Option<&Path>,
) -> Res<Finished> {
    let lossy = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
    let env: Vec<(String, String)> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((lossy(k), lossy(v?))))
        .collect();
    let tmpdir = env
        .iter()
        .find(|(k, _)| k == "TMPDIR")
        .map_or_else(std::env::temp_dir, |(_, v)| PathBuf::from(v));
    let cwd = cmd.get_current_dir().unwrap_or(Path::new("."));
    let started = tempfile::NamedTempFile::new()?;
    // The leader writes its id (its group's id) first, so that the group can be sent
    // SIGTERM at the limit; the runner's own timeout is the SIGKILL `grace` later.
    let mut argv = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        "echo $$ > \"$0\" && exec \"$@\"".to_string(),
        started.path().to_string_lossy().into_owned(),
        lossy(cmd.get_program()),
    ];
    argv.extend(cmd.get_args().map(lossy));
    let spec = CommandSpec {
        argv,
        env,
        memory: None,
    };
    let never = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let start = Instant::now();
    let mut best: Option<(u64, Duration, u64)> = None;
    let mut killed_at = None;
    let outcome = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let outcome = repromin::runner::run(&spec, cwd, &tmpdir, limit + grace, &never);
            done.store(true, Ordering::SeqCst);
            outcome
        });
        let mut last_poll = Instant::now() - Duration::from_secs(1);
        while !done.load(Ordering::SeqCst) {
            if let Some(path) = poll
                && last_poll.elapsed() >= Duration::from_millis(100)
            {
                last_poll = Instant::now();
                if let Ok((bytes, _)) = measure(path)
                    && best.is_none_or(|(b, _, _)| bytes < b)
                {
                    best = Some((bytes, start.elapsed(), counter_len(counter)));
                }
            }
            if killed_at.is_none() && start.elapsed() >= limit {
                killed_at = Some(start.elapsed());
                if let Ok(pid) = fs::read_to_string(started.path())
                    && let Ok(pid) = pid.trim().parse::<i32>()
                {
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        run.join()
    })
    .map_err(|_| "the run's thread panicked")?
    .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    if let Some(log) = log {
        fs::write(log, &outcome.output)?;
    }
    let (wall, status) = match killed_at {
        Some(wall) => (wall, None),
        None if outcome.termination == Termination::TimedOut => (outcome.duration, None),
        None => (outcome.duration, Some(outcome.termination)),
    };
    Ok(Finished { wall, status, best })
}

pub(crate) fn describe_status(status: Termination) -> String {
    match status {
        Termination::Exited(0) => "yes".into(),
        Termination::Exited(code) => format!("yes (exit {code})"),
        Termination::Signaled(sig) => format!("yes (signal {sig})"),
        other => format!("yes ({})", other.describe()),
    }
}

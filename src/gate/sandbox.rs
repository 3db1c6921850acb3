//! The sandbox of a side that runs head test code on base (base, mutants and reduce): the
//! user, the handing over of directories, and the command line that starts a run in it.
//!
//! A sandboxed run happens in new PID, mount and network namespaces (with its own `/proc`,
//! a loopback interface of its own and no other, and its own empty `/tmp`, `/var/tmp` and
//! `/dev/shm` in which only the run's own directories are mounted back), as the sandbox
//! user and its groups, with no new privileges, an empty capability bounding set and a
//! cleared environment; everything it starts dies with the namespace. The repository
//! configuration's `sandbox.network` keeps the host's network for projects whose tests
//! need it. Resolving and
//! checking the user, and the `chown` calls made as root, go through `nix`. Three things
//! still go through external programs, because the run is started by
//! [`crate::runner::run`] as one argv in its own process group with output capture and a
//! timeout, and doing them in-process would need a fork-and-exec of our own between that
//! spawn and the command, which would change what runs:
//! - `unshare --pid --fork --kill-child --mount --mount-proc --net` makes the namespaces,
//!   forks the namespace's init and mounts its `/proc`;
//! - `sh -c` (still root, inside the namespaces) brings the loopback interface up with
//!   `ip` (or `ifconfig`), mounts a tmpfs on each temporary directory and binds the run's
//!   directories back at their own paths ([`private_dirs`]);
//! - `setpriv --reuid --regid --init-groups --pdeathsig keep --no-new-privs
//!   --bounding-set=-all` drops to the user (after the namespaces are made, which needs
//!   root), keeping the parent-death signal `--kill-child` set, so that the namespace's
//!   init, and with it the whole namespace, dies when `unshare` does;
//! - without root, `sudo -n` starts both and `sudo -n chown` hands directories over and
//!   back, the password-less sudo a GitHub-hosted runner's user has.

use std::path::{Path, PathBuf};

/// Why a sandbox user cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// The user database could not be read.
    #[error("cannot look up sandbox user `{name}`: {errno}")]
    Lookup {
        /// The user.
        name: String,
        /// Why.
        errno: nix::Error,
    },
    /// No such user.
    #[error("sandbox user `{name}` does not exist")]
    Unknown {
        /// The user.
        name: String,
    },
    /// The user is root.
    #[error("sandbox user `{name}` is root")]
    Root {
        /// The user.
        name: String,
    },
    /// The user is the one repromin runs as.
    #[error("sandbox user `{name}` is the runner's own user")]
    Runner {
        /// The user.
        name: String,
    },
}

/// A resolved sandbox user.
#[derive(Clone, Debug)]
pub(crate) struct Sandbox {
    name: String,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// Whether runs keep the host's network (`sandbox.network`); else loopback only.
    network: bool,
}

impl Sandbox {
    /// The same sandbox, its runs keeping the host's network when `network` is set.
    #[must_use]
    pub(crate) fn with_network(self, network: bool) -> Sandbox {
        Sandbox { network, ..self }
    }
}

/// Resolves and checks a sandbox user.
///
/// # Errors
/// An unknown user, or one that is root or the runner itself.
pub(crate) fn sandbox_user(name: &str) -> Result<Sandbox, SandboxError> {
    let user = nix::unistd::User::from_name(name)
        .map_err(|errno| SandboxError::Lookup {
            name: name.to_string(),
            errno,
        })?
        .ok_or_else(|| SandboxError::Unknown {
            name: name.to_string(),
        })?;
    let uid = user.uid.as_raw();
    if uid == 0 {
        return Err(SandboxError::Root {
            name: name.to_string(),
        });
    }
    if uid == nix::unistd::getuid().as_raw() {
        return Err(SandboxError::Runner {
            name: name.to_string(),
        });
    }
    Ok(Sandbox {
        name: name.to_string(),
        uid,
        gid: user.gid.as_raw(),
        network: false,
    })
}

/// Hands the directories of `root` (not its files) to `uid:gid` for a sandboxed run. As
/// root this is a direct `chown`; otherwise it goes through `sudo -n chown`, the same
/// password-less sudo that starts the sandbox (a GitHub-hosted runner's user has it).
/// Symlinks are never followed. A failure shows up as the run's missing report.
fn chown_dirs(root: &Path, uid: u32, gid: u32) {
    if nix::unistd::getuid().is_root() {
        chown_dirs_as_root(root, uid, gid);
    } else {
        let mut dirs = vec![root.to_path_buf()];
        collect_dirs(root, &mut dirs);
        sudo_chown(&["-h"], uid, gid, &dirs);
    }
}

fn chown_dirs_as_root(root: &Path, uid: u32, gid: u32) {
    let _ = nix::unistd::chown(root, Some(uid.into()), Some(gid.into()));
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                chown_dirs_as_root(&item.path(), uid, gid);
            }
        }
    }
}

fn collect_dirs(root: &Path, dirs: &mut Vec<PathBuf>) {
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            // `file_type` does not follow a symlink.
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(item.path());
                collect_dirs(&item.path(), dirs);
            }
        }
    }
}

/// `sudo -n chown FLAGS uid:gid -- PATHS`, in chunks that fit a command line.
fn sudo_chown(flags: &[&str], uid: u32, gid: u32, paths: &[PathBuf]) {
    for chunk in paths.chunks(256) {
        let _ = std::process::Command::new("sudo")
            .args(["-n", "--", "chown"])
            .args(flags)
            .arg(format!("{uid}:{gid}"))
            .arg("--")
            .args(chunk)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn lchown(path: &Path, uid: u32, gid: u32) {
    let _ = nix::unistd::fchownat(
        nix::fcntl::AT_FDCWD,
        path,
        Some(uid.into()),
        Some(gid.into()),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    );
}

/// Takes back everything under `root` that the sandbox user `from` owns after a sandboxed
/// run (directly as root, else through `sudo -n chown -R -h --from`, which follows no
/// symlink). What the run did not create or was not handed keeps its owner and its change
/// time, so a reducer's workspace still trusts what it wrote.
fn chown_back(root: &Path, from: u32, uid: u32, gid: u32) {
    if nix::unistd::getuid().is_root() {
        chown_back_as_root(root, from, uid, gid);
    } else {
        let from = format!("--from={from}");
        sudo_chown(&["-R", "-h", &from], uid, gid, &[root.to_path_buf()]);
    }
}

fn chown_back_as_root(root: &Path, from: u32, uid: u32, gid: u32) {
    let owned = |path: &Path| {
        std::fs::symlink_metadata(path)
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == from)
    };
    if owned(root) {
        lchown(root, uid, gid);
    }
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            let path = item.path();
            if owned(&path) {
                lchown(&path, uid, gid);
            }
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                chown_back_as_root(&path, from, uid, gid);
            }
        }
    }
}

/// The directories a sandboxed run gets a private, empty copy of.
const PRIVATE_ROOTS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// The shell script, run as root inside the new namespaces before the user changes, that
/// brings the loopback interface up (unless the run keeps the host's network), mounts an
/// empty tmpfs on each of [`PRIVATE_ROOTS`] and binds each of `visible` that lies under one
/// back at its own path (through a descriptor of the root opened before the tmpfs hid it),
/// then starts its arguments. A mount that fails ends the run (`set -e`); a loopback that
/// cannot be brought up (neither `ip` nor `ifconfig`) is said on the run's output.
fn private_dirs(visible: &[PathBuf], network: bool) -> String {
    use crate::text::shell_quote;
    let mut script = String::from("set -e\n");
    if !network {
        script.push_str(
            "ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null || \
             echo 'repromin sandbox: cannot bring the loopback interface up (no ip or ifconfig)' >&2\n",
        );
    }
    let mut visible: Vec<&PathBuf> = visible.iter().collect();
    visible.sort_by_key(|dir| dir.as_os_str().len());
    for root in PRIVATE_ROOTS {
        // By its real path, as the run's directories are given.
        let Ok(root_path) = std::fs::canonicalize(root) else {
            continue;
        };
        // A run whose own directory is the root itself keeps the root.
        if !root_path.is_dir() || visible.iter().any(|dir| dir.as_path() == root_path) {
            continue;
        }
        let Some(root) = root_path.to_str().map(shell_quote) else {
            continue;
        };
        script.push_str(&format!(
            "exec 9<{root}\nmount -t tmpfs -o mode=1777,nosuid,nodev tmpfs {root}\n"
        ));
        for dir in &visible {
            let Ok(inner) = dir.strip_prefix(&root_path) else {
                continue;
            };
            let (Some(dir), Some(inner)) = (dir.to_str(), inner.to_str()) else {
                continue;
            };
            let dir = shell_quote(dir);
            let from = shell_quote(&format!("/proc/self/fd/9/{inner}"));
            script.push_str(&format!(
                "mkdir -p {dir}\nmount --no-canonicalize --bind {from} {dir}\n"
            ));
        }
        script.push_str("exec 9<&-\n");
    }
    script.push_str("exec \"$@\"\n");
    script
}

/// The argv that runs `argv` in the sandbox, in a cleared environment with `home` as
/// `HOME` and `tmp` as `TMPDIR`; of the private temporary directories the run sees only
/// `visible` (its own).
fn sandboxed(
    sandbox: &Sandbox,
    argv: &[String],
    home: &Path,
    tmp: &Path,
    visible: &[PathBuf],
) -> Vec<String> {
    let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let mut line: Vec<String> = Vec::new();
    if !nix::unistd::getuid().is_root() {
        line.extend(["sudo".into(), "-n".into(), "--".into()]);
    }
    line.extend(
        [
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--mount-proc",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    if !sandbox.network {
        line.push("--net".into());
    }
    line.extend(["--".into(), "sh".into(), "-c".into()]);
    line.push(private_dirs(visible, sandbox.network));
    line.extend(
        ["sh", "setpriv", "--reuid"]
            .iter()
            .map(|s| (*s).to_string()),
    );
    line.push(sandbox.uid.to_string());
    line.push("--regid".into());
    line.push(sandbox.gid.to_string());
    line.extend(
        [
            "--init-groups",
            // Changing the user clears the parent-death signal that `--kill-child` gave
            // the namespace's init; keep it, so the namespace dies with `unshare`.
            "--pdeathsig",
            "keep",
            "--no-new-privs",
            "--bounding-set=-all",
            "--",
            "env",
            "-i",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    line.push(format!(
        "PATH={}",
        std::env::var("PATH").unwrap_or_else(|_| path.into())
    ));
    line.push(format!("HOME={}", home.display()));
    line.push(format!("TMPDIR={}", tmp.display()));
    line.push("CI=1".into());
    line.push(format!("USER={}", sandbox.name));
    if argv.first().is_some_and(|program| program.contains('=')) {
        // `env` would take it for a variable: a shell starts it instead.
        line.extend(["sh".into(), "-c".into(), "exec \"$0\" \"$@\"".into()]);
    }
    line.extend(argv.iter().cloned());
    line
}

/// Every run of a side that runs head test code, in the sandbox: the run's directories
/// (its working directory, its `TMPDIR` and `shared`) are handed to the sandbox user before
/// the run and taken back after it. The base and mutants sides confine their test runs and
/// builds with it, and the reduce side every run of its reducer.
pub(crate) struct SandboxRuns {
    sandbox: Sandbox,
    shared: Vec<PathBuf>,
    shown: Vec<PathBuf>,
}

impl SandboxRuns {
    /// Runs in `sandbox`, with `shared` handed over too.
    pub(crate) fn new(sandbox: Sandbox, shared: Vec<PathBuf>) -> SandboxRuns {
        SandboxRuns {
            sandbox,
            shared,
            shown: Vec::new(),
        }
    }

    /// The same runs, with `shown` (directories the runs read, not handed over, such as
    /// the one of the program they start) visible in the private temporary directories.
    #[must_use]
    pub(crate) fn showing(self, shown: Vec<PathBuf>) -> SandboxRuns {
        SandboxRuns { shown, ..self }
    }

    /// Every directory of a run at `cwd` and `tmpdir` that must stay visible in its
    /// private temporary directories, by its real path.
    fn visible(&self, cwd: &Path, tmpdir: &Path) -> Vec<PathBuf> {
        let mut visible: Vec<PathBuf> = self
            .dirs(cwd, tmpdir)
            .into_iter()
            .chain(self.shown.iter().map(PathBuf::as_path))
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .collect();
        visible.sort();
        visible.dedup();
        visible
    }

    fn dirs<'a>(&'a self, cwd: &'a Path, tmpdir: &'a Path) -> Vec<&'a Path> {
        let mut dirs = vec![cwd];
        for dir in std::iter::once(tmpdir).chain(self.shared.iter().map(PathBuf::as_path)) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }
}

impl crate::runner::Confinement for SandboxRuns {
    fn hand_over(&self, cwd: &Path, tmpdir: &Path) {
        for dir in self.dirs(cwd, tmpdir) {
            chown_dirs(dir, self.sandbox.uid, self.sandbox.gid);
        }
    }

    fn wrap(
        &self,
        spec: &crate::runner::CommandSpec,
        cwd: &Path,
        tmpdir: &Path,
    ) -> crate::runner::CommandSpec {
        crate::runner::CommandSpec {
            argv: sandboxed(
                &self.sandbox,
                &spec.argv,
                cwd,
                tmpdir,
                &self.visible(cwd, tmpdir),
            ),
            env: spec.env.clone(),
            memory: spec.memory,
        }
    }

    fn take_back(&self, cwd: &Path, tmpdir: &Path) {
        let me = nix::unistd::getuid().as_raw();
        let group = nix::unistd::getgid().as_raw();
        for dir in self.dirs(cwd, tmpdir) {
            chown_back(dir, self.sandbox.uid, me, group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_the_runner_itself_are_refused_as_sandbox_users() {
        assert!(
            sandbox_user("root")
                .unwrap_err()
                .to_string()
                .contains("root")
        );
        assert!(sandbox_user("no-such-user-xyz").is_err());
    }

    #[test]
    fn the_private_temporary_directories_show_only_the_runs_own() {
        let tmp = std::fs::canonicalize("/tmp").unwrap();
        let mine = tmp.join("repromin-run it's");
        let elsewhere = PathBuf::from("/var/lib/repromin-elsewhere");
        let script = private_dirs(&[mine.clone(), elsewhere], false);
        let tmp = tmp.display().to_string();
        assert!(script.starts_with("set -e\nip link set lo up"), "{script}");
        assert!(
            script.contains(&format!(
                "mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs {tmp}\n"
            )),
            "{script}"
        );
        // Bound back through the descriptor of the root opened before the tmpfs hid it,
        // quoted for the shell.
        assert!(
            script.contains(&format!(
                "mount --no-canonicalize --bind '/proc/self/fd/9/repromin-run it'\\''s' '{tmp}/repromin-run it'\\''s'\n"
            )),
            "{script}"
        );
        assert!(!script.contains("elsewhere"), "{script}");
        assert!(script.ends_with("exec \"$@\"\n"), "{script}");
        // The host's network kept: no loopback of its own to bring up.
        assert!(!private_dirs(&[mine], true).contains("ip link"));
    }

    #[test]
    fn taking_back_changes_only_what_the_sandbox_user_owns() {
        use std::os::unix::fs::MetadataExt;
        if !crate::test_skip::require_root("handing files to another user needs root") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/runner"), "kept").unwrap();
        std::fs::write(root.join("sub/made"), "by the run").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
        let sandbox_uid = 54_321;
        chown_dirs(root, sandbox_uid, sandbox_uid);
        lchown(&root.join("sub/made"), sandbox_uid, sandbox_uid);
        lchown(&root.join("link"), sandbox_uid, sandbox_uid);
        let before = std::fs::symlink_metadata(root.join("sub/runner")).unwrap();
        chown_back(root, sandbox_uid, 0, 0);
        for path in ["", "sub", "sub/made", "link"] {
            let meta = std::fs::symlink_metadata(root.join(path)).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (0, 0), "{path}");
        }
        // The link was not followed, and what the run did not own was not touched: its
        // change time is the same, so a workspace's stamp of it still holds.
        assert_eq!(std::fs::metadata("/etc/passwd").unwrap().uid(), 0);
        let after = std::fs::symlink_metadata(root.join("sub/runner")).unwrap();
        assert_eq!(
            (after.ctime(), after.ctime_nsec()),
            (before.ctime(), before.ctime_nsec())
        );
    }
}

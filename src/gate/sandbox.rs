//! The sandbox of a side that runs head test code on base: the user, the handing over of
//! directories, and the command line that starts a run in it.
//!
//! A sandboxed run happens in new PID and mount namespaces (with its own `/proc`), as the
//! sandbox user and its groups, with no new privileges, an empty capability bounding set
//! and a cleared environment; everything it starts dies with the namespace. Resolving and
//! checking the user, and the `chown` calls made as root, go through `nix`. Three things
//! still go through external programs, because the run is started by
//! [`crate::runner::run`] as one argv in its own process group with output capture and a
//! timeout, and doing them in-process would need a fork-and-exec of our own between that
//! spawn and the command, which would change what runs:
//! - `unshare --pid --fork --kill-child --mount --mount-proc` makes the namespaces, forks the
//!   namespace's init and mounts its `/proc`;
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
    })
}

/// Hands the directories of `root` (not its files) to `uid:gid` for a sandboxed run. As
/// root this is a direct `chown`; otherwise it goes through `sudo -n chown`, the same
/// password-less sudo that starts the sandbox (a GitHub-hosted runner's user has it).
/// Symlinks are never followed. A failure shows up as the run's missing report.
pub(crate) fn chown_dirs(root: &Path, uid: u32, gid: u32) {
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

/// Takes everything under `root` back after a sandboxed run (directly as root, else through
/// `sudo -n chown -R -h`, which follows no symlink).
pub(crate) fn chown_back(root: &Path, uid: u32, gid: u32) {
    if nix::unistd::getuid().is_root() {
        chown_back_as_root(root, uid, gid);
    } else {
        sudo_chown(&["-R", "-h"], uid, gid, &[root.to_path_buf()]);
    }
}

fn chown_back_as_root(root: &Path, uid: u32, gid: u32) {
    lchown(root, uid, gid);
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            let path = item.path();
            lchown(&path, uid, gid);
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                chown_back_as_root(&path, uid, gid);
            }
        }
    }
}

/// The argv that runs `command` in the sandbox.
pub(crate) fn sandboxed(sandbox: &Sandbox, command: &str, home: &Path) -> Vec<String> {
    let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let mut argv: Vec<String> = Vec::new();
    if !nix::unistd::getuid().is_root() {
        argv.extend(["sudo".into(), "-n".into(), "--".into()]);
    }
    argv.extend(
        [
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--mount-proc",
            "--",
            "setpriv",
            "--reuid",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    argv.push(sandbox.uid.to_string());
    argv.push("--regid".into());
    argv.push(sandbox.gid.to_string());
    argv.extend(
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
    argv.push(format!(
        "PATH={}",
        std::env::var("PATH").unwrap_or_else(|_| path.into())
    ));
    argv.push(format!("HOME={}", home.display()));
    argv.push("CI=1".into());
    argv.push(format!("USER={}", sandbox.name));
    argv.extend(["sh".into(), "-c".into(), command.into()]);
    argv
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
}

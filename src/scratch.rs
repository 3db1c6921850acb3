//! Scratch directories: made in the temp dir, marked as repromin's, removed on drop, and
//! swept after a process that was killed before it could remove its own.
//!
//! A scratch directory is `$TMPDIR/repromin-PURPOSE-XXXXXX` holding a marker
//! file, [`MARKER`], that names its owner: process id, the process's start time (field 22
//! of `/proc/PID/stat`, so that a reused process id is not mistaken for the owner), the
//! boot and the PID namespace. Dropping a [`Scratch`] removes the directory, restoring
//! write permission on directories a command made read-only. The marker is removed last,
//! just before the empty directory (by the sweep too): a process killed in the middle of a
//! removal leaves a directory that is still marked, and so still swept.
//!
//! The first scratch directory a process makes sweeps the temp dir once: every entry named
//! `repromin-…` that is a directory (not a symlink) owned by this user, holding a marker
//! that parses exactly, written on this boot in this PID namespace, by a process that no
//! longer runs (no `/proc/PID`, another start time, or a zombie), is removed. Anything
//! else is left alone: a directory without a marker or with one that does not parse,
//! another user's, one whose owner still runs, and any whose owner cannot be told.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::owner::{Owner, OwnerState};

/// The marker file's name inside a scratch directory.
pub(crate) const MARKER: &str = ".repromin-scratch";

/// The name prefix of every scratch directory.
pub(crate) const PREFIX: &str = "repromin-";

/// The most of a marker that is read.
const MARKER_CAP: u64 = crate::owner::MAX_OWNER_LEN;

/// A scratch directory of this process, removed when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Makes `$TMPDIR/repromin-PURPOSE-XXXXXX` with its marker, after sweeping the temp dir
    /// once per process.
    ///
    /// # Errors
    /// The directory or its marker cannot be written.
    pub(crate) fn new(purpose: &str) -> io::Result<Scratch> {
        sweep_once();
        let path = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{purpose}-"))
            .tempdir()?
            .keep();
        let scratch = Scratch { path };
        // Without /proc the marker names no one, and no sweep ever removes the directory.
        let text = Owner::current().map_or_else(|_| "\n".to_string(), |o| o.to_text());
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(scratch.path.join(MARKER))?;
        file.write_all(text.as_bytes())?;
        Ok(scratch)
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the directory `mode` (a sandbox user must be able to enter it).
    ///
    /// # Errors
    /// `chmod` fails.
    pub(crate) fn set_mode(&self, mode: u32) -> io::Result<()> {
        fs::set_permissions(&self.path, fs::Permissions::from_mode(mode))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = remove(&self.path);
    }
}

/// Removes the scratch directory `path`: everything in it but the marker, then the
/// marker, then the directory.
fn remove(path: &Path) -> io::Result<()> {
    remove_with(path, |item| {
        crate::workspace::remove_any(item).map_err(io::Error::other)
    })
}

/// [`remove`], with `remove_item` removing each entry (and at the end the empty
/// directory); the first error stops it.
fn remove_with(
    path: &Path,
    mut remove_item: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<()> {
    // A command may have made the directory read-only: its entries could not go.
    crate::workspace::make_writable(path);
    let marker = path.join(MARKER);
    let mut items: Vec<PathBuf> = fs::read_dir(path)?
        .map(|item| item.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    items.retain(|item| *item != marker);
    items.sort();
    for item in &items {
        remove_item(item)?;
    }
    remove_item(&marker)?;
    remove_item(path)
}

/// Sweeps the temp dir, once per process.
pub(crate) fn sweep_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        sweep(&std::env::temp_dir());
    });
}

/// Removes the scratch directories under `dir` whose owner is certainly gone; returns the
/// paths removed.
pub(crate) fn sweep(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(me) = Owner::current() else {
        return removed;
    };
    let Ok(items) = fs::read_dir(dir) else {
        return removed;
    };
    let uid = nix::unistd::geteuid().as_raw();
    for item in items.flatten() {
        let path = item.path();
        if !item
            .file_name()
            .as_encoded_bytes()
            .starts_with(PREFIX.as_bytes())
        {
            continue;
        }
        if let Some(owner) = owner_of(&path, uid)
            && owner.state(&me) == OwnerState::Dead
            && remove(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed
}

/// The owner named by the marker of `path`, when `path` is a directory of `uid` (not a
/// symlink) whose marker is a regular file of `uid` that parses.
fn owner_of(path: &Path, uid: u32) -> Option<Owner> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() || meta.uid() != uid {
        return None;
    }
    let file = crate::safe_fs::open_regular(&path.join(MARKER)).ok()?;
    if file.metadata().ok()?.uid() != uid {
        return None;
    }
    let mut text = String::new();
    file.take(MARKER_CAP).read_to_string(&mut text).ok()?;
    Owner::parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Owner {
        Owner::current().unwrap()
    }

    /// A directory `name` under `dir` with `marker` as its marker file.
    fn marked(dir: &Path, name: &str, marker: &str) -> PathBuf {
        let path = dir.join(name);
        fs::create_dir(&path).unwrap();
        fs::write(path.join(MARKER), marker).unwrap();
        fs::write(path.join("file"), "x").unwrap();
        path
    }

    /// The id of a process that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_marked_directories_of_gone_owners_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let owner = me();
        let dead = Owner {
            pid: dead_pid(),
            ..owner.clone()
        };
        // The same process id with another start time: the id was reused.
        let reused = Owner {
            start: owner.start + 1,
            ..owner.clone()
        };
        let other_boot = Owner {
            boot: "00000000-0000-0000-0000-000000000000".into(),
            host: "another-host".into(),
            ..dead.clone()
        };
        let other_ns = Owner {
            pidns: 1,
            ..dead.clone()
        };
        let gone = marked(tmp.path(), "repromin-gone", &dead.to_text());
        let reused_dir = marked(tmp.path(), "repromin-reused", &reused.to_text());
        let live = marked(tmp.path(), "repromin-live", &owner.to_text());
        let foreign = marked(tmp.path(), "repromin-foreign", "not a marker\n");
        let unmarked = tmp.path().join("repromin-unmarked");
        fs::create_dir(&unmarked).unwrap();
        let unprefixed = marked(tmp.path(), "other-gone", &dead.to_text());
        let boot = marked(tmp.path(), "repromin-boot", &other_boot.to_text());
        let ns = marked(tmp.path(), "repromin-ns", &other_ns.to_text());
        // A symlink to a marked directory of a gone owner is not followed.
        let target = marked(tmp.path(), "target", &dead.to_text());
        let link = tmp.path().join("repromin-link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut removed = sweep(tmp.path());
        removed.sort();
        let mut expected = vec![gone.clone(), reused_dir.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(!gone.exists() && !reused_dir.exists());
        for kept in [&live, &foreign, &unmarked, &unprefixed, &boot, &ns, &target] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        assert!(fs::symlink_metadata(&link).is_ok());
    }

    #[test]
    fn a_removal_stopped_at_any_step_leaves_a_directory_that_is_still_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let dead = Owner {
            pid: dead_pid(),
            ..me()
        };
        // Entries before and after the marker in every order: files, a nested directory.
        let build = |name: &str| {
            let dir = marked(tmp.path(), name, &dead.to_text());
            for item in ["-first", "a/b/c", "zz"] {
                let path = dir.join(item);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, "x").unwrap();
            }
            dir
        };
        // A kill after `step` removals: whatever is left is marked. (Four entries, then the
        // marker: only a kill between the marker's removal and the directory's, two system
        // calls apart, would leave an empty directory unmarked.)
        for step in 0..5 {
            let dir = build(&format!("repromin-stopped-{step}"));
            let mut done = 0;
            let _ = remove_with(&dir, |item| {
                if done == step {
                    return Err(io::Error::other("killed"));
                }
                done += 1;
                crate::workspace::remove_any(item).map_err(io::Error::other)
            });
            assert!(
                !dir.exists() || dir.join(MARKER).is_file(),
                "stopped after {step} removals: {} is left without its marker",
                dir.display()
            );
        }
        sweep(tmp.path());
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn another_users_directory_is_left_alone() {
        if !crate::test_skip::require_root("giving a directory to another user needs root") {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dead = Owner {
            pid: dead_pid(),
            ..me()
        };
        let dir = marked(tmp.path(), "repromin-theirs", &dead.to_text());
        nix::unistd::chown(&dir, Some(65534.into()), None).unwrap();
        let file = marked(tmp.path(), "repromin-their-marker", &dead.to_text());
        nix::unistd::chown(&file.join(MARKER), Some(65534.into()), None).unwrap();
        assert!(sweep(tmp.path()).is_empty());
        assert!(dir.exists() && file.exists());
    }

    #[test]
    fn a_scratch_directory_is_marked_and_removed_on_drop_even_when_read_only() {
        let scratch = Scratch::new("unit").unwrap();
        let path = scratch.path().to_path_buf();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("repromin-unit-"), "{name}");
        let text = fs::read_to_string(path.join(MARKER)).unwrap();
        assert_eq!(Owner::parse(&text), Some(me()));
        fs::create_dir_all(path.join("a/b")).unwrap();
        fs::write(path.join("a/b/f"), "x").unwrap();
        for dir in ["a/b", "a", ""] {
            fs::set_permissions(path.join(dir), fs::Permissions::from_mode(0o555)).unwrap();
        }
        drop(scratch);
        assert!(!path.exists());
    }
}

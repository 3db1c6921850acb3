//! Directories on disk that hold a [`Tree`]: command workspaces and clean copies.
//!
//! A [`Workspace`] remembers which tree it last wrote and the inode change time of every
//! entry it wrote. Applying the next tree first undoes whatever a command did since (entries
//! it created are removed, entries it touched or deleted are rewritten: any write changes the
//! change time, which no user program can set back), then writes only the entries that differ
//! between the two trees, and finally restores every recorded modification time, so that the
//! directory equals the model exactly. This is the delta application that keeps per-probe
//! cost proportional to what changed rather than to the size of the tree.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::sys::stat::{UtimensatFlags, utimensat};
use nix::sys::time::TimeSpec;

use crate::tree::{Entry, Meta, Node, RelPath, Tree, TreeError, io_err};

/// The change time and inode of an entry as written, to notice later writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

fn stamp_of(meta: &fs::Metadata) -> Stamp {
    Stamp {
        ino: meta.ino(),
        ctime: meta.ctime(),
        ctime_nsec: meta.ctime_nsec(),
    }
}

fn set_times(path: &Path, meta: &Meta) -> Result<(), TreeError> {
    let secs = meta.mtime_ns.div_euclid(1_000_000_000);
    let nanos = meta.mtime_ns.rem_euclid(1_000_000_000);
    let (Ok(secs), Ok(nanos)) = (i64::try_from(secs), i64::try_from(nanos)) else {
        return Ok(());
    };
    let time = TimeSpec::new(secs, nanos);
    utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &time,
        &time,
        UtimensatFlags::NoFollowSymlink,
    )
    .map_err(|errno| TreeError::Io {
        action: "set times of",
        path: path.to_path_buf(),
        source: io::Error::from(errno),
    })
}

/// Removes whatever is at `path`, of any kind; a missing path is fine.
///
/// # Errors
/// An I/O failure other than "not found".
pub fn remove_any(path: &Path) -> Result<(), TreeError> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(());
    };
    let result = if meta.is_dir() {
        // A command may have left a directory without write permission.
        make_writable(path);
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match result {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(TreeError::Io {
            action: "remove",
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn make_writable(dir: &Path) {
    if let Ok(meta) = fs::symlink_metadata(dir)
        && meta.is_dir()
    {
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(items) = fs::read_dir(dir) {
            for item in items.flatten() {
                make_writable(&item.path());
            }
        }
    }
}

fn write_entry(path: &Path, entry: &Entry) -> Result<(), TreeError> {
    match &entry.node {
        Node::Dir => match fs::create_dir(path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(TreeError::Io {
                    action: "create directory",
                    path: path.to_path_buf(),
                    source,
                });
            }
        },
        Node::File { data, .. } => {
            fs::write(path, data).map_err(io_err("write", path))?;
        }
        Node::Symlink { target } => {
            std::os::unix::fs::symlink(target, path).map_err(io_err("create symlink", path))?;
        }
    }
    // Directories get their mode after their children are written (see `sync`).
    if matches!(entry.node, Node::File { .. }) {
        fs::set_permissions(path, fs::Permissions::from_mode(entry.meta.mode))
            .map_err(io_err("set permissions of", path))?;
    }
    Ok(())
}

/// Writes `tree` into `dir`, which must not exist yet, with every recorded time.
///
/// # Errors
/// Any I/O failure, naming the path.
pub fn write_fresh(tree: &Tree, dir: &Path) -> Result<(), TreeError> {
    let mut workspace = Workspace::new(dir.to_path_buf());
    workspace.apply(tree)
}

/// A directory kept equal to a tree across many candidate applications.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    written: Option<Tree>,
    stamps: HashMap<RelPath, Stamp>,
    /// Relative paths outside the model that are never touched (an installed environment
    /// in an adopted directory).
    unmanaged: Vec<String>,
}

impl Workspace {
    /// A workspace rooted at `root` (created on first [`apply`](Self::apply)).
    pub fn new(root: PathBuf) -> Workspace {
        Workspace {
            root,
            written: None,
            stamps: HashMap::new(),
            unmanaged: Vec::new(),
        }
    }

    /// Adopts a directory that already holds `tree` (plus the `unmanaged` paths, which are
    /// never touched): used to reduce in place, where an installed environment lives in the
    /// tree's directory and cannot be copied.
    ///
    /// # Errors
    /// An entry of `tree` cannot be read on disk.
    pub fn adopt(
        root: PathBuf,
        tree: &Tree,
        unmanaged: Vec<String>,
    ) -> Result<Workspace, TreeError> {
        let mut stamps = HashMap::new();
        for (path, entry) in &tree.entries {
            if !matches!(entry.node, Node::Dir) {
                let full = root.join(&**path);
                let meta = fs::symlink_metadata(&full).map_err(io_err("read", &full))?;
                stamps.insert(path.clone(), stamp_of(&meta));
            }
        }
        Ok(Workspace {
            root,
            written: Some(tree.clone()),
            stamps,
            unmanaged,
        })
    }

    fn is_unmanaged(&self, rel: &str) -> bool {
        self.unmanaged.iter().any(|u| {
            u == rel
                || (rel.len() > u.len()
                    && rel.starts_with(u.as_str())
                    && rel.as_bytes()[u.len()] == b'/')
        })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Forgets what was written, so the next apply rebuilds the directory from scratch.
    pub fn reset(&mut self) -> Result<(), TreeError> {
        remove_any(&self.root)?;
        self.written = None;
        self.stamps.clear();
        Ok(())
    }

    /// Makes the directory equal `target`: undoes every change since the last apply, writes
    /// what differs, restores times.
    ///
    /// # Errors
    /// Any I/O failure, naming the path.
    pub fn apply(&mut self, target: &Tree) -> Result<(), TreeError> {
        let Some(mut written) = self.written.take() else {
            remove_any(&self.root)?;
            fs::create_dir_all(&self.root).map_err(io_err("create directory", &self.root))?;
            let mut empty = Tree::empty(target.root);
            self.stamps.clear();
            self.sync(&mut empty, target)?;
            self.written = Some(empty);
            return Ok(());
        };
        // Undo: remove strays, forget entries that were changed behind our back.
        if fs::symlink_metadata(&self.root).map_or(true, |m| !m.is_dir()) {
            remove_any(&self.root)?;
            fs::create_dir_all(&self.root).map_err(io_err("create directory", &self.root))?;
            written.entries.clear();
            self.stamps.clear();
        }
        make_writable(&self.root);
        self.undo(&mut written, "")?;
        self.sync(&mut written, target)?;
        self.written = Some(written);
        Ok(())
    }

    /// Walks the directory, removing entries not in `written` and dropping from `written`
    /// every entry whose stamp changed (so that `sync` rewrites it).
    fn undo(&mut self, written: &mut Tree, rel_dir: &str) -> Result<(), TreeError> {
        let dir = if rel_dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel_dir)
        };
        let items = fs::read_dir(&dir).map_err(io_err("list", &dir))?;
        let mut seen = Vec::new();
        for item in items {
            let item = item.map_err(io_err("list", &dir))?;
            let name = item.file_name();
            let path = dir.join(&name);
            let Some(name) = name.to_str() else {
                remove_any(&path)?;
                continue;
            };
            let rel = if rel_dir.is_empty() {
                name.to_string()
            } else {
                format!("{rel_dir}/{name}")
            };
            if self.is_unmanaged(&rel) {
                continue;
            }
            let Some(expected) = written.entries.get(rel.as_str()) else {
                remove_any(&path)?;
                continue;
            };
            let meta = fs::symlink_metadata(&path).map_err(io_err("read", &path))?;
            let kind_matches = match expected.node {
                Node::Dir => meta.is_dir(),
                Node::File { .. } => meta.is_file(),
                Node::Symlink { .. } => meta.file_type().is_symlink(),
            };
            let stamp_matches = self.stamps.get(rel.as_str()) == Some(&stamp_of(&meta));
            if !kind_matches || (!stamp_matches && !meta.is_dir()) {
                remove_any(&path)?;
                written.remove_subtree(&rel);
                self.stamps.remove(rel.as_str());
                continue;
            }
            if meta.is_dir() {
                seen.push(rel);
            }
        }
        for rel in seen {
            self.undo(written, &rel)?;
        }
        // Entries the command deleted are missing from disk but still in `written`.
        let missing: Vec<RelPath> = written
            .entries
            .keys()
            .filter(|p| crate::tree::parent_of(p) == rel_dir)
            .filter(|p| fs::symlink_metadata(self.root.join(&***p)).is_err())
            .cloned()
            .collect();
        for path in missing {
            written.remove_subtree(&path);
            self.stamps.remove(&path);
        }
        Ok(())
    }

    /// Turns `written` into `target` on disk, writing only differences.
    fn sync(&mut self, written: &mut Tree, target: &Tree) -> Result<(), TreeError> {
        // Remove entries not in the target (deepest first, so files go before their dirs).
        let stale: Vec<RelPath> = written
            .entries
            .iter()
            .filter(|(path, entry)| match target.entries.get(&***path) {
                None => true,
                Some(want) => want.node.kind() != entry.node.kind(),
            })
            .map(|(path, _)| path.clone())
            .collect();
        for path in stale.iter().rev() {
            if written.entries.contains_key(path) {
                remove_any(&self.root.join(&**path))?;
                written.remove_subtree(path);
                self.stamps.remove(path);
            }
        }
        for (path, want) in &target.entries {
            let full = self.root.join(&**path);
            let same = written.entries.get(path).is_some_and(|have| have == want);
            if same {
                continue;
            }
            if written.entries.contains_key(path) && !matches!(want.node, Node::Dir) {
                remove_any(&full)?;
            }
            write_entry(&full, want)?;
            if !matches!(want.node, Node::Dir) {
                set_times(&full, &want.meta)?;
                let meta = fs::symlink_metadata(&full).map_err(io_err("read", &full))?;
                self.stamps.insert(path.clone(), stamp_of(&meta));
            }
            written.entries.insert(path.clone(), want.clone());
        }
        // Directory times change whenever a child is added or removed, by us or by the
        // command, and a command may have changed a directory's mode, so every directory
        // gets its recorded mode and time back, deepest first.
        for (path, entry) in target.entries.iter().rev() {
            if matches!(entry.node, Node::Dir) {
                let full = self.root.join(&**path);
                fs::set_permissions(&full, fs::Permissions::from_mode(entry.meta.mode))
                    .map_err(io_err("set permissions of", &full))?;
                set_times(&full, &entry.meta)?;
            }
        }
        fs::set_permissions(&self.root, fs::Permissions::from_mode(target.root.mode))
            .map_err(io_err("set permissions of", &self.root))?;
        set_times(&self.root, &target.root)?;
        written.root = target.root;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{IgnoreRules, scan, scan_exact};

    fn source() -> (tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        fs::create_dir_all(root.join("pkg/deep")).unwrap();
        fs::write(root.join("pkg/a.py"), "print('a')\n").unwrap();
        fs::write(root.join("pkg/deep/b.py"), "b = 1\n").unwrap();
        fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("pkg/a.py", root.join("link")).unwrap();
        let (tree, _) = scan(&root, &IgnoreRules::default()).unwrap();
        (dir, tree)
    }

    #[test]
    fn a_fresh_copy_has_the_same_full_fingerprint() {
        let (dir, tree) = source();
        let out = dir.path().join("copy");
        write_fresh(&tree, &out).unwrap();
        assert_eq!(scan_exact(&out).unwrap().fingerprint(), tree.fingerprint());
    }

    #[test]
    fn apply_undoes_command_writes_and_deletions() {
        let (dir, tree) = source();
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let root = ws.root().to_path_buf();
        // What a command might do.
        fs::write(root.join("pkg/a.py"), "changed\n").unwrap();
        fs::remove_file(root.join("pkg/deep/b.py")).unwrap();
        fs::create_dir_all(root.join("build/x")).unwrap();
        fs::write(root.join("build/x/out.o"), "obj").unwrap();
        fs::write(root.join("pkg/new.pyc"), "c").unwrap();
        fs::remove_file(root.join("link")).unwrap();
        fs::write(root.join("link"), "now a file").unwrap();
        let mut smaller = tree.clone();
        smaller.remove_subtree("run.sh");
        ws.apply(&smaller).unwrap();
        assert_eq!(
            scan_exact(&root).unwrap().fingerprint(),
            smaller.fingerprint()
        );
        ws.apply(&tree).unwrap();
        assert_eq!(scan_exact(&root).unwrap().fingerprint(), tree.fingerprint());
    }

    #[test]
    fn apply_rewrites_a_file_changed_with_its_size_and_time_preserved() {
        let (dir, tree) = source();
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let path = ws.root().join("pkg/a.py");
        let before = fs::metadata(&path).unwrap();
        fs::write(&path, "PRINT('A')\n").unwrap();
        let meta = tree.entries.get("pkg/a.py").unwrap().meta;
        set_times(&path, &meta).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), before.len());
        ws.apply(&tree).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"print('a')\n");
    }

    #[test]
    fn apply_restores_directory_modes_a_command_changed() {
        let (dir, tree) = source();
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let pkg = ws.root().join("pkg");
        fs::set_permissions(&pkg, fs::Permissions::from_mode(0o000)).unwrap();
        ws.apply(&tree).unwrap();
        assert_eq!(
            scan_exact(ws.root()).unwrap().fingerprint(),
            tree.fingerprint()
        );
    }
}

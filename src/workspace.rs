//! Directories on disk that hold a [`Tree`]: command workspaces and clean copies.
//!
//! A [`Workspace`] remembers which tree it last wrote and a stamp (inode, change time,
//! modification time, size, mode) of every entry it wrote, directories and the root
//! included. Applying the next tree first undoes whatever a command did since, then writes
//! only the entries that differ between the two trees, and finally restores the mode and
//! modification time of every directory it touched, so that the directory equals the model
//! exactly. This is the delta application that keeps per-probe cost proportional to what
//! changed rather than to the size of the tree.
//!
//! The undo rests on change times, which every write, chmod, utime, link, unlink and rename
//! sets and no user program can set back:
//! - every entry of the model is looked up; a missing one is rewritten, and a file, symlink
//!   or directory whose stamp changed is rewritten (a directory is kept, listed and restored);
//! - a directory is listed for entries a command created only when its stamp changed (an
//!   entry created, removed or renamed inside a directory sets the directory's change time);
//!   the root is always listed;
//! - a stamp is trusted only when its change time is older than the root's change time at
//!   the end of the last apply (the *epoch*, the last thing every apply sets). A change made
//!   later gets a change time at or after the epoch, so it cannot repeat an older stamp even
//!   on a filesystem whose clock ticks coarsely; an entry stamped in the same tick as the
//!   epoch is checked by content instead (a file's bytes, mode and time, a link's target, a
//!   directory's listing).
//!
//! A *private* workspace (the clean copy of the accepted state, in which no command ever
//! runs) skips the undo, and [`Workspace::read_back`] reads back exactly what the last apply
//! wrote.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::fcntl::AtFlags;
use nix::sys::stat::{FileStat, SFlag, UtimensatFlags, fstatat, utimensat};
use nix::sys::time::TimeSpec;

use crate::tree::{Entry, Meta, Node, RelPath, Tree, TreeError, io_err, meta_of, parent_of};

/// What an entry looked like on disk right after it was written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
    mtime: i64,
    mtime_nsec: i64,
    size: u64,
    mode: u32,
}

impl Stamp {
    fn changed_at(&self) -> (i64, i64) {
        (self.ctime, self.ctime_nsec)
    }
}

fn stamp_of(meta: &fs::Metadata) -> Stamp {
    Stamp {
        ino: meta.ino(),
        ctime: meta.ctime(),
        ctime_nsec: meta.ctime_nsec(),
        mtime: meta.mtime(),
        mtime_nsec: meta.mtime_nsec(),
        size: meta.size(),
        mode: meta.mode(),
    }
}

/// The stamp of what `fstatat` returned, equal to [`stamp_of`] of the same entry.
fn stamp_of_stat(stat: &FileStat) -> Stamp {
    Stamp {
        ino: stat.st_ino,
        ctime: stat.st_ctime,
        ctime_nsec: stat.st_ctime_nsec,
        mtime: stat.st_mtime,
        mtime_nsec: stat.st_mtime_nsec,
        size: u64::try_from(stat.st_size).unwrap_or(u64::MAX),
        mode: stat.st_mode,
    }
}

fn is_kind(stat: &FileStat, kind: SFlag) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == kind
}

/// Opens a directory for lookups relative to it.
fn open_dir_fd(path: &Path) -> Result<fs::File, TreeError> {
    crate::safe_fs::open_dir(path).map_err(|e| io_err("open", path)(e.into()))
}

fn root_key() -> RelPath {
    Arc::from("")
}

pub(crate) fn set_times(path: &Path, meta: &Meta) -> Result<(), TreeError> {
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
pub(crate) fn remove_any(path: &Path) -> Result<(), TreeError> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(());
    };
    let result = if meta.is_dir() {
        // A command may have left a directory without write permission: then what could
        // not go is made writable and removed again (the common case walks the tree once).
        fs::remove_dir_all(path).or_else(|err| match err.kind() {
            io::ErrorKind::NotFound => Err(err),
            _ => {
                make_writable(path);
                fs::remove_dir_all(path)
            }
        })
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

/// Gives `dir` and every directory under it owner read, write and search permission, so
/// that everything in it can be removed.
pub(crate) fn make_writable(dir: &Path) {
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

pub(crate) fn write_entry(path: &Path, entry: &Entry) -> Result<(), TreeError> {
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

/// Whether the file or symlink at `path`, whose metadata is `meta`, holds exactly `expected`.
fn holds(path: &Path, meta: &fs::Metadata, expected: &Entry) -> bool {
    if meta_of(meta) != expected.meta {
        return false;
    }
    match &expected.node {
        Node::File { data, .. } => {
            meta.is_file()
                && meta.nlink() == 1
                && meta.len() == data.len() as u64
                && fs::read(path).is_ok_and(|bytes| *bytes == **data)
        }
        Node::Symlink { target } => {
            meta.file_type().is_symlink()
                && fs::read_link(path).is_ok_and(|t| t.as_os_str() == target.as_str())
        }
        Node::Dir => false,
    }
}

/// Writes `tree` into `dir`, which must not exist yet, with every recorded time.
///
/// # Errors
/// Any I/O failure, naming the path.
pub(crate) fn write_fresh(tree: &Tree, dir: &Path) -> Result<(), TreeError> {
    let mut workspace = Workspace::new(dir.to_path_buf());
    workspace.apply(tree)
}

/// What the last [`Workspace::apply`] wrote on disk.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Entries written, rewritten or removed (a removed directory stands for its subtree).
    pub paths: BTreeSet<RelPath>,
    /// Directories whose entries, mode or times were set; always holds the root (`""`).
    pub dirs: BTreeSet<RelPath>,
}

/// A directory kept equal to a tree across many candidate applications.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    written: Option<Tree>,
    /// Stamps of written entries, the root under `""`.
    stamps: HashMap<RelPath, Stamp>,
    /// The root's change time at the end of the last apply: stamps older than it are
    /// trusted, the others are checked by content.
    epoch: Option<(i64, i64)>,
    /// Relative paths outside the model that are never touched (an installed environment
    /// in an adopted directory).
    unmanaged: Vec<String>,
    /// No command runs here: the undo is skipped.
    private: bool,
    last: Changes,
}

impl Workspace {
    /// A workspace rooted at `root` (created on first [`apply`](Self::apply)).
    pub fn new(root: PathBuf) -> Workspace {
        Workspace {
            root,
            written: None,
            stamps: HashMap::new(),
            epoch: None,
            unmanaged: Vec::new(),
            private: false,
            last: Changes::default(),
        }
    }

    /// A workspace in which no command ever runs (the clean copy of the accepted state):
    /// applying a tree writes what differs from the last one without looking for changes
    /// made by others, and [`read_back`](Self::read_back) checks what it wrote.
    pub fn private(root: PathBuf) -> Workspace {
        Workspace {
            private: true,
            ..Workspace::new(root)
        }
    }

    /// Adopts a directory that already holds `tree` (plus the `unmanaged` paths, which are
    /// never touched): used to reduce in place, where an installed environment lives in the
    /// tree's directory and cannot be copied. The first apply checks every entry by content.
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
            written: Some(tree.clone()),
            stamps,
            unmanaged,
            ..Workspace::new(root)
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

    fn full(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// What the last apply wrote.
    pub fn last_changes(&self) -> &Changes {
        &self.last
    }

    /// Forgets what was written, so the next apply rebuilds the directory from scratch.
    pub fn reset(&mut self) -> Result<(), TreeError> {
        remove_any(&self.root)?;
        self.written = None;
        self.stamps.clear();
        self.epoch = None;
        Ok(())
    }

    /// Makes the directory equal `target`: undoes every change since the last apply, writes
    /// what differs, restores the directories it touched.
    ///
    /// # Errors
    /// Any I/O failure, naming the path.
    pub fn apply(&mut self, target: &Tree) -> Result<(), TreeError> {
        let mut dirty = BTreeSet::new();
        let mut written = match self.written.take() {
            None => {
                remove_any(&self.root)?;
                fs::create_dir_all(&self.root).map_err(io_err("create directory", &self.root))?;
                self.stamps.clear();
                Tree::empty(target.root)
            }
            Some(mut written) => {
                if fs::symlink_metadata(&self.root).map_or(true, |m| !m.is_dir()) {
                    remove_any(&self.root)?;
                    fs::create_dir_all(&self.root)
                        .map_err(io_err("create directory", &self.root))?;
                    written.entries.clear();
                    self.stamps.clear();
                }
                if !self.private {
                    self.undo(&mut written, &mut dirty)?;
                }
                written
            }
        };
        // The root is marked only where it must be opened up to be walked; an entry added
        // or removed at the top marks it as any parent is marked.
        let root_meta = fs::symlink_metadata(&self.root).map_err(io_err("read", &self.root))?;
        if root_meta.mode() & 0o700 != 0o700 {
            self.open_dir("", root_meta.mode(), &mut dirty)?;
        }
        let mut changed = BTreeSet::new();
        self.sync(&mut written, target, &mut dirty, &mut changed)?;
        self.written = Some(written);
        self.last = Changes {
            paths: changed,
            dirs: dirty,
        };
        Ok(())
    }

    /// Marks the directory `rel`, whose mode on disk is `mode`, as one whose entries or
    /// metadata change in this apply, and gives its owner full access until it is restored.
    fn open_dir(
        &self,
        rel: &str,
        mode: u32,
        dirty: &mut BTreeSet<RelPath>,
    ) -> Result<(), TreeError> {
        if dirty.contains(rel) {
            return Ok(());
        }
        dirty.insert(Arc::from(rel));
        if mode & 0o700 != 0o700 {
            let full = self.full(rel);
            fs::set_permissions(&full, fs::Permissions::from_mode((mode & 0o7777) | 0o700))
                .map_err(io_err("set permissions of", &full))?;
        }
        Ok(())
    }

    /// The mode on disk of the directory `rel` of `written` when it is not dirty yet.
    fn mode_in(written: &Tree, rel: &str) -> u32 {
        if rel.is_empty() {
            return written.root.mode;
        }
        written.entries.get(rel).map_or(0o700, |e| e.meta.mode)
    }

    /// Removes from the directory `rel_dir` every entry that is not in `written`.
    fn remove_strays(&self, written: &Tree, rel_dir: &str) -> Result<(), TreeError> {
        let dir = self.full(rel_dir);
        let items = fs::read_dir(&dir).map_err(io_err("list", &dir))?;
        for item in items {
            let item = item.map_err(io_err("list", &dir))?;
            let name = item.file_name();
            let Some(name) = name.to_str() else {
                remove_any(&dir.join(&name))?;
                continue;
            };
            let rel = if rel_dir.is_empty() {
                name.to_string()
            } else {
                format!("{rel_dir}/{name}")
            };
            if self.is_unmanaged(&rel) || written.entries.contains_key(rel.as_str()) {
                continue;
            }
            remove_any(&dir.join(name))?;
        }
        Ok(())
    }

    /// Finds what a command changed: removes entries it created and every entry whose stamp
    /// changed (dropping them from `written`, so that `sync` writes them again), and marks
    /// the directories it touched in `dirty`.
    fn undo(&mut self, written: &mut Tree, dirty: &mut BTreeSet<RelPath>) -> Result<(), TreeError> {
        let root_meta = fs::symlink_metadata(&self.root).map_err(io_err("read", &self.root))?;
        self.open_dir("", root_meta.mode(), dirty)?;
        self.remove_strays(written, "")?;
        let epoch = self.epoch;
        // Entries come in path order, so a directory comes before everything below it.
        // Each entry is looked up relative to its parent, opened once.
        let mut gone_dirs: HashSet<&str> = HashSet::new();
        let mut gone: Vec<RelPath> = Vec::new();
        let mut fresh: Vec<(RelPath, Stamp)> = Vec::new();
        let mut fds: HashMap<&str, fs::File> = HashMap::new();
        for (path, expected) in &written.entries {
            let is_dir = matches!(expected.node, Node::Dir);
            let parent = parent_of(path);
            if gone_dirs.contains(parent) {
                if is_dir {
                    gone_dirs.insert(path);
                }
                continue;
            }
            let name = path
                .get(parent.len()..)
                .unwrap_or("")
                .trim_start_matches('/');
            if !fds.contains_key(parent) {
                fds.insert(parent, open_dir_fd(&self.full(parent))?);
            }
            let Some(fd) = fds.get(parent) else {
                return Err(TreeError::NotADirectory {
                    path: self.full(parent),
                });
            };
            let full = self.root.join(&**path);
            let stat = match fstatat(fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(nix::errno::Errno::ENOENT) => {
                    // Deleted: the parent's listing changed, so its stamp did too.
                    self.open_dir(parent, Self::mode_in(written, parent), dirty)?;
                    gone.push(path.clone());
                    if is_dir {
                        gone_dirs.insert(path);
                    }
                    continue;
                }
                Err(errno) => {
                    return Err(TreeError::Io {
                        action: "read",
                        path: full,
                        source: io::Error::from(errno),
                    });
                }
            };
            let stamp = self.stamps.get(path);
            let now = stamp_of_stat(&stat);
            let trusted =
                stamp.is_some_and(|s| *s == now && epoch.is_some_and(|e| s.changed_at() < e));
            let keep = if is_dir {
                is_kind(&stat, SFlag::S_IFDIR)
            } else if trusted {
                true
            } else if fs::symlink_metadata(&full).is_ok_and(|meta| holds(&full, &meta, expected)) {
                // Unchanged, or changed back: what is there is what the model says.
                fresh.push((path.clone(), now));
                true
            } else {
                false
            };
            if !keep {
                self.open_dir(parent, Self::mode_in(written, parent), dirty)?;
                remove_any(&full)?;
                gone.push(path.clone());
                if is_dir {
                    gone_dirs.insert(path);
                }
                continue;
            }
            if is_dir && (!trusted || stat.st_mode & 0o700 != 0o700) {
                self.open_dir(path, stat.st_mode, dirty)?;
                self.remove_strays(written, path)?;
            }
        }
        drop(fds);
        for (path, stamp) in fresh {
            self.stamps.insert(path, stamp);
        }
        for path in gone {
            let below: Vec<RelPath> = written.descendants(&path).map(|(p, _)| p.clone()).collect();
            for p in below {
                self.stamps.remove(&p);
            }
            self.stamps.remove(&path);
            written.remove_subtree(&path);
        }
        Ok(())
    }

    /// Turns `written` into `target` on disk, writing only differences, and restores the
    /// mode and times of every directory in `dirty` (which it extends), the root last.
    fn sync(
        &mut self,
        written: &mut Tree,
        target: &Tree,
        dirty: &mut BTreeSet<RelPath>,
        changed: &mut BTreeSet<RelPath>,
    ) -> Result<(), TreeError> {
        // One walk over what differs between the two trees, in path order (the parts the
        // maps share are skipped).
        let mut stale: Vec<RelPath> = Vec::new();
        let mut writes: Vec<RelPath> = Vec::new();
        for item in written.entries.diff(&target.entries) {
            match item {
                imbl::ordmap::DiffItem::Remove(h, _) => stale.push(h.clone()),
                imbl::ordmap::DiffItem::Add(w, _) => writes.push(w.clone()),
                imbl::ordmap::DiffItem::Update {
                    old: (h, he),
                    new: (w, we),
                } => {
                    if he.node.kind() != we.node.kind() {
                        stale.push(h.clone());
                    }
                    writes.push(w.clone());
                }
            }
        }
        // Remove entries not in the target (a directory before what is below it, which goes
        // with it).
        for path in &stale {
            if !written.entries.contains_key(path) {
                continue;
            }
            let parent = parent_of(path);
            self.open_dir(parent, Self::mode_in(written, parent), dirty)?;
            remove_any(&self.root.join(&**path))?;
            let below: Vec<RelPath> = written.descendants(path).map(|(p, _)| p.clone()).collect();
            for p in below {
                self.stamps.remove(&p);
            }
            self.stamps.remove(path);
            written.remove_subtree(path);
            changed.insert(path.clone());
        }
        for path in &writes {
            let Some(want) = target.entries.get(path) else {
                continue;
            };
            let full = self.root.join(&**path);
            let parent = parent_of(path);
            let had = written.entries.get(path).map(|e| e.meta.mode);
            let parent_mode = Self::mode_in(written, parent);
            // A file rewritten in place leaves its directory's listing and times as they
            // were: the directory is opened (and so read back and restored) only when its
            // owner lacks access; every other write adds or replaces a name in it.
            let in_place = had.is_some() && matches!(want.node, Node::File { .. });
            if !in_place || parent_mode & 0o700 != 0o700 {
                self.open_dir(parent, parent_mode, dirty)?;
            }
            match want.node {
                Node::Dir => match had {
                    Some(mode) => self.open_dir(path, mode, dirty)?,
                    None => {
                        write_entry(&full, want)?;
                        dirty.insert(path.clone());
                    }
                },
                Node::File { ref data, .. } if had.is_some() => {
                    // A file of ours (its stamp held, or it was just checked) is rewritten in
                    // place, which is much cheaper than a new inode on some filesystems; one
                    // that cannot be opened for writing is replaced.
                    if crate::safe_fs::rewrite(&full, data).is_err() {
                        self.open_dir(parent, parent_mode, dirty)?;
                        remove_any(&full)?;
                        fs::write(&full, data).map_err(io_err("write", &full))?;
                    }
                    fs::set_permissions(&full, fs::Permissions::from_mode(want.meta.mode))
                        .map_err(io_err("set permissions of", &full))?;
                    set_times(&full, &want.meta)?;
                    let meta = fs::symlink_metadata(&full).map_err(io_err("read", &full))?;
                    self.stamps.insert(path.clone(), stamp_of(&meta));
                }
                _ => {
                    if had.is_some() {
                        remove_any(&full)?;
                    }
                    write_entry(&full, want)?;
                    set_times(&full, &want.meta)?;
                    let meta = fs::symlink_metadata(&full).map_err(io_err("read", &full))?;
                    self.stamps.insert(path.clone(), stamp_of(&meta));
                }
            }
            changed.insert(path.clone());
        }
        // The disk now holds what the target does, and so does the model: it takes the
        // target's own map (not an insert per write, which copies a path of nodes of the
        // persistent map each time), so that the next walk skips all they share (a
        // candidate is the accepted tree plus one change).
        written.entries = target.entries.clone();
        // Directory times change whenever a child is added or removed, and a command may
        // have changed a directory's mode: every directory touched gets its recorded mode
        // and time back, deepest first, and the root last, which sets the epoch.
        for path in dirty.iter().rev() {
            if path.is_empty() {
                continue;
            }
            let Some(entry) = target.entries.get(path) else {
                continue;
            };
            if !matches!(entry.node, Node::Dir) {
                continue;
            }
            let full = self.root.join(&**path);
            fs::set_permissions(&full, fs::Permissions::from_mode(entry.meta.mode))
                .map_err(io_err("set permissions of", &full))?;
            set_times(&full, &entry.meta)?;
            let meta = fs::symlink_metadata(&full).map_err(io_err("read", &full))?;
            self.stamps.insert(path.clone(), stamp_of(&meta));
        }
        fs::set_permissions(&self.root, fs::Permissions::from_mode(target.root.mode))
            .map_err(io_err("set permissions of", &self.root))?;
        set_times(&self.root, &target.root)?;
        let meta = fs::symlink_metadata(&self.root).map_err(io_err("read", &self.root))?;
        let stamp = stamp_of(&meta);
        self.stamps.insert(root_key(), stamp);
        self.epoch = Some(stamp.changed_at());
        written.root = target.root;
        Ok(())
    }

    /// Reads back from disk everything the last apply wrote: each entry it wrote or removed
    /// (kind, mode, modification time, and the bytes or link target, hashed afresh), and the
    /// mode, time and listing of each directory whose names or access it changed, and the
    /// root's mode and time always (its listing when it was touched). Returns `model`
    /// with what was read in place of those entries (an entry found where the model has
    /// none is added, one missing is dropped), so that its fingerprint equals the model's
    /// exactly when the disk holds what the model says for every part the apply changed.
    ///
    /// # Errors
    /// I/O failures, and entries that no tree may hold (special files, hardlinks, escaping
    /// symlinks).
    pub fn read_back(&self, model: &Tree) -> Result<Tree, TreeError> {
        Ok(self.verify(model)?.unwrap_or_else(|| model.clone()))
    }

    /// As [`read_back`](Self::read_back), but `None` when every part read equals the
    /// model's, field by field (so the tree read back is `model` itself).
    ///
    /// # Errors
    /// As [`read_back`](Self::read_back).
    pub fn verify(&self, model: &Tree) -> Result<Option<Tree>, TreeError> {
        let (root, parts) = self.read_parts(model)?;
        let same = root == model.root
            && parts
                .iter()
                .all(|(path, found)| model.entries.get(path) == found.as_ref());
        if same {
            return Ok(None);
        }
        let mut tree = model.clone();
        tree.root = root;
        for (path, found) in parts {
            match found {
                Some(entry) => {
                    if !matches!(entry.node, Node::Dir) {
                        tree.remove_subtree(&path);
                    }
                    tree.entries.insert(path, entry);
                }
                None => tree.remove_subtree(&path),
            }
        }
        Ok(Some(tree))
    }

    /// The root's metadata and every part of the tree the last apply changed, as on disk
    /// (`None`: nothing there).
    #[expect(
        clippy::type_complexity,
        reason = "a list of paths with what was found there"
    )]
    fn read_parts(&self, model: &Tree) -> Result<(Meta, Vec<(RelPath, Option<Entry>)>), TreeError> {
        let mut parts: Vec<(RelPath, Option<Entry>)> = Vec::new();
        for path in &self.last.paths {
            parts.push((path.clone(), crate::tree::read_entry(&self.root, path)?));
        }
        let root_meta = fs::symlink_metadata(&self.root).map_err(io_err("read", &self.root))?;
        for dir in &self.last.dirs {
            let full = self.full(dir);
            if !dir.is_empty() {
                let found = crate::tree::read_entry(&self.root, dir)?;
                let listable = matches!(
                    &found,
                    Some(Entry {
                        node: Node::Dir,
                        ..
                    })
                );
                parts.push((dir.clone(), found));
                if !listable {
                    continue;
                }
            }
            // The names on disk and the model's, both in byte order, merged: a name only
            // the model has is missing, one only the disk has is read.
            let mut on_disk: Vec<String> = Vec::new();
            for item in fs::read_dir(&full).map_err(io_err("list", &full))? {
                let item = item.map_err(io_err("list", &full))?;
                let name = item.file_name();
                let Some(name) = name.to_str() else {
                    return Err(TreeError::NonUtf8Name {
                        path: full.join(&name),
                    });
                };
                let rel = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                if !self.is_unmanaged(&rel) {
                    on_disk.push(rel);
                }
            }
            on_disk.sort_unstable();
            let listed = model.children(dir);
            let (mut listed, mut on_disk) = (listed.iter().peekable(), on_disk.iter().peekable());
            loop {
                let only_listed = match (listed.peek(), on_disk.peek()) {
                    (None, None) => break,
                    (Some(l), Some(d)) if l.as_ref() == d.as_str() => {
                        listed.next();
                        on_disk.next();
                        continue;
                    }
                    (Some(l), Some(d)) => l.as_ref() < d.as_str(),
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                };
                if only_listed {
                    if let Some(l) = listed.next() {
                        parts.push((l.clone(), None));
                    }
                } else if let Some(d) = on_disk.next() {
                    let found = crate::tree::read_entry(&self.root, d)?;
                    parts.push((Arc::from(d.as_str()), found));
                }
            }
        }
        Ok((meta_of(&root_meta), parts))
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
    fn strays_in_deep_directories_and_same_size_rewrites_are_undone() {
        let (dir, tree) = source();
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let root = ws.root().to_path_buf();
        for round in 0..3 {
            // At once (within the same clock tick as the apply) and after a pause.
            if round == 2 {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            fs::write(root.join("pkg/deep/stray.o"), "obj").unwrap();
            fs::create_dir(root.join("pkg/deep/sub")).unwrap();
            fs::write(root.join("pkg/deep/sub/x"), "x").unwrap();
            fs::write(root.join("pkg/deep/b.py"), "B = 2\n").unwrap();
            ws.apply(&tree).unwrap();
            assert!(!root.join("pkg/deep/stray.o").exists(), "round {round}");
            assert!(!root.join("pkg/deep/sub").exists(), "round {round}");
            assert_eq!(fs::read(root.join("pkg/deep/b.py")).unwrap(), b"b = 1\n");
            assert_eq!(scan_exact(&root).unwrap().fingerprint(), tree.fingerprint());
        }
    }

    /// What a filesystem whose clock did not tick between the apply and the command's
    /// change shows: the change leaves every stamp as it was.
    fn forge_stamps(ws: &mut Workspace) {
        let paths: Vec<RelPath> = ws.stamps.keys().cloned().collect();
        for path in paths {
            let meta = fs::symlink_metadata(ws.full(&path)).unwrap();
            ws.stamps.insert(path, stamp_of(&meta));
        }
    }

    #[test]
    fn changes_that_keep_every_stamp_are_still_found() {
        let (dir, tree) = source();
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let root = ws.root().to_path_buf();
        fs::write(root.join("pkg/deep/stray.o"), "obj").unwrap();
        let path = root.join("pkg/a.py");
        fs::write(&path, "PRINT('A')\n").unwrap();
        set_times(&path, &tree.entries.get("pkg/a.py").unwrap().meta).unwrap();
        forge_stamps(&mut ws);
        ws.apply(&tree).unwrap();
        assert!(!root.join("pkg/deep/stray.o").exists());
        assert_eq!(fs::read(&path).unwrap(), b"print('a')\n");
        assert_eq!(scan_exact(&root).unwrap().fingerprint(), tree.fingerprint());
    }

    /// Rewrites `pkg/a.py` of `next` as `print()`, with the metadata it has in `tree`.
    fn rewrite_a(tree: &Tree, next: &mut Tree) {
        next.entries.insert(
            Arc::from("pkg/a.py"),
            Entry {
                node: Node::file(Arc::from(&b"print()\n"[..])),
                meta: tree.entries.get("pkg/a.py").unwrap().meta,
            },
        );
    }

    #[test]
    fn a_file_rewritten_in_place_touches_no_directory() {
        // Its directory's names and times stay as they were, so the commit reads back the
        // file alone (on 10,000 files, listing its directory and the root was most of a
        // commit).
        let (dir, tree) = source();
        let mut ws = Workspace::private(dir.path().join("clean"));
        ws.apply(&tree).unwrap();
        let mut next = tree.clone();
        rewrite_a(&tree, &mut next);
        ws.apply(&next).unwrap();
        let changes = ws.last_changes();
        let paths: Vec<&str> = changes.paths.iter().map(|p| &**p).collect();
        assert_eq!(paths, ["pkg/a.py"]);
        assert!(changes.dirs.is_empty(), "{:?}", changes.dirs);
        assert_eq!(ws.read_back(&next).unwrap(), next);
        assert_eq!(
            scan_exact(ws.root()).unwrap().fingerprint(),
            next.fingerprint()
        );
    }

    #[test]
    fn the_listing_of_a_directory_a_commit_wrote_in_is_read_back_whole() {
        // The commit rewrites `pkg/a.py` and adds a name to the root and to `pkg`: those
        // are the directories it touched. A name it never wrote, first or last in either
        // listing, is found, and so is a name the model lists that is gone from the disk.
        let (dir, tree) = source();
        let mut ws = Workspace::private(dir.path().join("clean"));
        ws.apply(&tree).unwrap();
        let mut next = tree.clone();
        rewrite_a(&tree, &mut next);
        for (path, like) in [("new.txt", "run.sh"), ("pkg/new.py", "pkg/a.py")] {
            let meta = tree.entries.get(like).unwrap().meta;
            let node = Node::file(Arc::from(&b"new\n"[..]));
            next.entries.insert(Arc::from(path), Entry { node, meta });
        }
        ws.apply(&next).unwrap();
        let dirs: Vec<&str> = ws.last_changes().dirs.iter().map(|p| &**p).collect();
        assert_eq!(dirs, ["", "pkg"]);
        assert_eq!(ws.read_back(&next).unwrap(), next);
        let times = |rel: &str| {
            let meta = if rel.is_empty() {
                next.root
            } else {
                next.entries.get(rel).unwrap().meta
            };
            set_times(&ws.root().join(rel), &meta).unwrap();
        };
        for (stray, parent) in [("0", ""), ("zz", ""), ("pkg/0", "pkg"), ("pkg/zz", "pkg")] {
            fs::write(ws.root().join(stray), "x").unwrap();
            times(parent);
            assert_ne!(ws.read_back(&next).unwrap(), next, "{stray} is found");
            fs::remove_file(ws.root().join(stray)).unwrap();
            times(parent);
            assert_eq!(ws.read_back(&next).unwrap(), next);
        }
        let aside = dir.path().join("aside");
        for (gone, parent) in [("link", ""), ("run.sh", ""), ("pkg/deep", "pkg")] {
            fs::rename(ws.root().join(gone), &aside).unwrap();
            times(parent);
            assert_ne!(ws.read_back(&next).unwrap(), next, "{gone} is missed");
            fs::rename(&aside, ws.root().join(gone)).unwrap();
            times(parent);
            assert_eq!(ws.read_back(&next).unwrap(), next);
        }
    }

    #[test]
    fn a_private_copy_reads_back_what_it_wrote() {
        let (dir, tree) = source();
        let mut ws = Workspace::private(dir.path().join("clean"));
        ws.apply(&tree).unwrap();
        assert_eq!(
            ws.read_back(&tree).unwrap().fingerprint(),
            tree.fingerprint()
        );
        let mut next = tree.clone();
        next.remove_subtree("pkg/deep");
        rewrite_a(&tree, &mut next);
        ws.apply(&next).unwrap();
        let changes = ws.last_changes();
        let paths: Vec<&str> = changes.paths.iter().map(|p| &**p).collect();
        assert_eq!(paths, ["pkg/a.py", "pkg/deep"]);
        let dirs: Vec<&str> = changes.dirs.iter().map(|p| &**p).collect();
        assert_eq!(dirs, ["pkg"]);
        assert_eq!(
            ws.read_back(&next).unwrap().fingerprint(),
            next.fingerprint()
        );
        // What did not reach the disk as the model says is found.
        let a = ws.root().join("pkg/a.py");
        fs::write(&a, "print(1)\n").unwrap();
        set_times(&a, &next.entries.get("pkg/a.py").unwrap().meta).unwrap();
        assert_ne!(
            ws.read_back(&next).unwrap().fingerprint(),
            next.fingerprint()
        );
        fs::write(&a, "print()\n").unwrap();
        set_times(&a, &next.entries.get("pkg/a.py").unwrap().meta).unwrap();
        assert_eq!(
            ws.read_back(&next).unwrap().fingerprint(),
            next.fingerprint()
        );
        fs::create_dir(ws.root().join("pkg/deep")).unwrap();
        set_times(
            &ws.root().join("pkg"),
            &next.entries.get("pkg").unwrap().meta,
        )
        .unwrap();
        assert_ne!(
            ws.read_back(&next).unwrap().fingerprint(),
            next.fingerprint()
        );
        fs::remove_dir(ws.root().join("pkg/deep")).unwrap();
        set_times(
            &ws.root().join("pkg"),
            &next.entries.get("pkg").unwrap().meta,
        )
        .unwrap();
        fs::set_permissions(ws.root().join("pkg"), fs::Permissions::from_mode(0o700)).unwrap();
        assert_ne!(
            ws.read_back(&next).unwrap().fingerprint(),
            next.fingerprint()
        );
    }

    #[test]
    fn a_tree_a_command_left_read_only_is_removed() {
        // Directories without write or search permission at every level, as `chmod -R a-w`
        // or `chmod 0` leaves them. Root removes them whatever their modes say, so as root
        // the test runs again as an unprivileged user (`setpriv`), in a directory that user
        // owns.
        const AGAIN: &str = "REPROMIN_TEST_UNPRIVILEGED_DIR";
        let (_tmp, top) = match std::env::var_os(AGAIN) {
            Some(dir) => (None, PathBuf::from(dir).join("layer")),
            None if nix::unistd::geteuid().is_root() => {
                let tmp = tempfile::tempdir().unwrap();
                fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
                let dir = tmp.path().join("user");
                fs::create_dir(&dir).unwrap();
                nix::unistd::chown(&dir, Some(65534.into()), Some(65534.into())).unwrap();
                let status = std::process::Command::new("setpriv")
                    .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                    .arg(std::env::current_exe().unwrap())
                    .args([
                        "--exact",
                        "workspace::tests::a_tree_a_command_left_read_only_is_removed",
                    ])
                    .env(AGAIN, &dir)
                    .status();
                match status {
                    Ok(status) => assert!(status.success(), "unprivileged run: {status}"),
                    Err(err) => {
                        let why = format!("running as root, it cannot run: {err}");
                        crate::test_skip::require_tool("setpriv", Err(why));
                    }
                }
                return;
            }
            None => {
                let tmp = tempfile::tempdir().unwrap();
                let top = tmp.path().join("layer");
                (Some(tmp), top)
            }
        };
        fs::create_dir_all(top.join("a/b/c")).unwrap();
        fs::write(top.join("a/b/c/f"), b"x").unwrap();
        fs::write(top.join("a/g"), b"y").unwrap();
        for (dir, mode) in [("a/b/c", 0o555), ("a/b", 0o000), ("a", 0o500), ("", 0o555)] {
            fs::set_permissions(top.join(dir), fs::Permissions::from_mode(mode)).unwrap();
        }
        remove_any(&top).unwrap();
        assert!(!top.exists());
        remove_any(&top).unwrap();
    }

    #[test]
    fn a_read_only_directory_is_opened_for_writes_and_restored() {
        let (dir, mut tree) = source();
        tree.entries.get_mut("pkg").unwrap().meta.mode = 0o555;
        let mut ws = Workspace::new(dir.path().join("ws"));
        ws.apply(&tree).unwrap();
        let mut next = tree.clone();
        next.remove_subtree("pkg/a.py");
        ws.apply(&next).unwrap();
        assert_eq!(
            scan_exact(ws.root()).unwrap().fingerprint(),
            next.fingerprint()
        );
        ws.apply(&tree).unwrap();
        assert_eq!(
            scan_exact(ws.root()).unwrap().fingerprint(),
            tree.fingerprint()
        );
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

//! The tree model: entries, their kinds and metadata, the [`Tree`] itself, its two
//! fingerprints and its size, and relative paths.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::error::TreeError;

/// The kind of a tree entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
}

impl Kind {
    pub(super) fn tag(self) -> u8 {
        match self {
            Kind::Dir => b'd',
            Kind::File => b'f',
            Kind::Symlink => b'l',
        }
    }
}

/// Metadata that the full fingerprint covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Permission bits (`mode & 0o7777`); zero for symlinks.
    pub mode: u32,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i128,
}

/// What an entry holds. Two files are equal when their lengths and digests are (the bytes
/// themselves are not compared again: `digest` is always the SHA-256 of `data`, as
/// [`Node::file`] makes it).
#[derive(Clone, Debug, Eq)]
pub enum Node {
    /// A directory; its children are the entries below its path.
    Dir,
    /// A regular file with its bytes and their SHA-256 digest.
    File {
        /// The file's bytes.
        data: Arc<[u8]>,
        /// SHA-256 of `data`.
        digest: [u8; 32],
    },
    /// A symlink and its (relative) target.
    Symlink {
        /// The link target as written.
        target: String,
    },
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        match (self, other) {
            (Node::Dir, Node::Dir) => true,
            (
                Node::File {
                    data: da,
                    digest: ga,
                },
                Node::File {
                    data: db,
                    digest: gb,
                },
            ) => da.len() == db.len() && ga == gb,
            (Node::Symlink { target: ta }, Node::Symlink { target: tb }) => ta == tb,
            _ => false,
        }
    }
}

impl Node {
    /// Builds a file node, hashing its bytes.
    pub fn file(data: Arc<[u8]>) -> Node {
        let digest = Sha256::digest(&data).into();
        Node::File { data, digest }
    }

    /// The entry kind.
    pub fn kind(&self) -> Kind {
        match self {
            Node::Dir => Kind::Dir,
            Node::File { .. } => Kind::File,
            Node::Symlink { .. } => Kind::Symlink,
        }
    }

    /// The file's bytes, if this is a file.
    pub fn data(&self) -> Option<&Arc<[u8]>> {
        match self {
            Node::File { data, .. } => Some(data),
            _ => None,
        }
    }
}

/// One entry of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Content.
    pub node: Node,
    /// Metadata.
    pub meta: Meta,
}

/// A relative path inside a tree: `/`-separated, no leading slash, no `.` or `..`.
pub type RelPath = Arc<str>;

/// The entries of a tree by relative path, in path order. A clone shares every node with
/// the original until one of them changes, so a candidate tree costs what its change does.
pub type Entries = imbl::OrdMap<RelPath, Entry>;

/// A closed tree: the root's metadata and every entry by relative path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// Metadata of the root directory.
    pub root: Meta,
    /// Entries in path order.
    pub entries: Entries,
}

/// A SHA-256 fingerprint, printed as lowercase hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub [u8; 32]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::write_hex(f, &self.0)
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// Streams typed, length-prefixed fields into a SHA-256.
struct FieldHasher(Sha256);

impl FieldHasher {
    fn new(domain: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(domain.as_bytes());
        hasher.update([0u8]);
        FieldHasher(hasher)
    }

    fn field(&mut self, tag: u8, bytes: &[u8]) {
        self.0.update([tag]);
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn finish(self) -> Fingerprint {
        Fingerprint(self.0.finalize().into())
    }
}

/// Size figures of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Size {
    /// Regular files.
    pub files: u64,
    /// Directories (the root not counted).
    pub dirs: u64,
    /// Symlinks.
    pub symlinks: u64,
    /// Bytes of regular files.
    pub bytes: u64,
}

impl Tree {
    /// An empty tree with the given root metadata.
    pub fn empty(root: Meta) -> Tree {
        Tree {
            root,
            entries: Entries::new(),
        }
    }

    /// The `tree-sha256-v2` fingerprint: paths, kinds, modes, mtimes, contents, link targets
    /// and the root's metadata.
    pub fn fingerprint(&self) -> Fingerprint {
        let mut h = FieldHasher::new("repromin:tree-sha256-v2");
        h.field(b'M', &self.root.mode.to_le_bytes());
        h.field(b'T', &self.root.mtime_ns.to_le_bytes());
        for (path, entry) in &self.entries {
            h.field(b'P', path.as_bytes());
            h.field(b'K', &[entry.node.kind().tag()]);
            h.field(b'M', &entry.meta.mode.to_le_bytes());
            h.field(b'T', &entry.meta.mtime_ns.to_le_bytes());
            match &entry.node {
                Node::Dir => {}
                Node::File { digest, .. } => h.field(b'C', digest),
                Node::Symlink { target } => h.field(b'L', target.as_bytes()),
            }
        }
        h.field(b'E', &(self.entries.len() as u64).to_le_bytes());
        h.finish()
    }

    /// The `tree-content-sha256-v1` fingerprint: paths, kinds, file bytes and link targets.
    pub fn content_fingerprint(&self) -> Fingerprint {
        let mut h = FieldHasher::new("repromin:tree-content-sha256-v1");
        for (path, entry) in &self.entries {
            h.field(b'P', path.as_bytes());
            h.field(b'K', &[entry.node.kind().tag()]);
            match &entry.node {
                Node::Dir => {}
                Node::File { digest, .. } => h.field(b'C', digest),
                Node::Symlink { target } => h.field(b'L', target.as_bytes()),
            }
        }
        h.field(b'E', &(self.entries.len() as u64).to_le_bytes());
        h.finish()
    }

    /// Counts files, directories, symlinks and bytes.
    pub fn size(&self) -> Size {
        let mut size = Size::default();
        for entry in self.entries.values() {
            match &entry.node {
                Node::Dir => size.dirs += 1,
                Node::File { data, .. } => {
                    size.files += 1;
                    size.bytes += data.len() as u64;
                }
                Node::Symlink { .. } => size.symlinks += 1,
            }
        }
        size
    }

    /// The size of `other`, given `own`, the size of this tree: counted over the entries
    /// where the two differ only (the parts their maps share are skipped), so that the size
    /// of a candidate costs what its change does.
    pub fn size_of(&self, own: Size, other: &Tree) -> Size {
        let mut size = [own.files, own.dirs, own.symlinks, own.bytes].map(i128::from);
        let mut count = |entry: &Entry, sign: i128| match &entry.node {
            Node::Dir => size[1] += sign,
            Node::File { data, .. } => {
                size[0] += sign;
                size[3] += sign * data.len() as i128;
            }
            Node::Symlink { .. } => size[2] += sign,
        };
        for item in self.entries.diff(&other.entries) {
            match item {
                imbl::ordmap::DiffItem::Add(_, entry) => count(entry, 1),
                imbl::ordmap::DiffItem::Remove(_, entry) => count(entry, -1),
                imbl::ordmap::DiffItem::Update {
                    old: (_, old),
                    new: (_, new),
                } => {
                    count(old, -1);
                    count(new, 1);
                }
            }
        }
        let [files, dirs, symlinks, bytes] = size.map(|n| u64::try_from(n).unwrap_or(0));
        Size {
            files,
            dirs,
            symlinks,
            bytes,
        }
    }

    /// The paths strictly below `dir` (all entries when `dir` is `None`).
    pub fn descendants<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = (&'a RelPath, &'a Entry)> + 'a {
        // Every path below `dir` starts with `dir/`, and those sort together; `dir.txt`
        // sorts between `dir` and `dir/`, so the range starts at the prefix itself.
        let prefix = format!("{dir}/");
        let start: RelPath = Arc::from(prefix.as_str());
        self.entries
            .range(start..)
            .take_while(move |(path, _)| path.starts_with(&prefix))
    }

    /// The direct children of `dir` (`""` for the root), in path order.
    ///
    /// It walks the entries from `dir/` on and seeks past each child's own descendants
    /// (every path below `c` lies in `c/` up to `c0`, `0` being the byte after `/`), so it
    /// costs a step per child and a lookup per child directory, not a walk of everything
    /// below `dir`.
    pub fn children(&self, dir: &str) -> Vec<RelPath> {
        use std::ops::Bound;
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut children = Vec::new();
        let mut from: RelPath = Arc::from(prefix.as_str());
        'seek: loop {
            for (path, _) in self
                .entries
                .range((Bound::Included(from), Bound::Unbounded))
            {
                let Some(rest) = path.strip_prefix(prefix.as_str()) else {
                    break 'seek;
                };
                match rest.find('/') {
                    None => children.push(path.clone()),
                    Some(end) => {
                        from = Arc::from(format!("{prefix}{}0", &rest[..end]));
                        continue 'seek;
                    }
                }
            }
            break;
        }
        children
    }

    /// Removes `path` and everything below it.
    pub fn remove_subtree(&mut self, path: &str) {
        let below: Vec<RelPath> = self.descendants(path).map(|(p, _)| p.clone()).collect();
        for p in below {
            self.entries.remove(&p);
        }
        self.entries.remove(path);
    }

    /// Bytes of regular files at or below `path`.
    pub fn weight(&self, path: &str) -> u64 {
        let own = self
            .entries
            .get(path)
            .and_then(|e| e.node.data())
            .map_or(0, |d| d.len() as u64);
        own + self
            .descendants(path)
            .filter_map(|(_, e)| e.node.data())
            .map(|d| d.len() as u64)
            .sum::<u64>()
    }
}

/// The parent directory of a relative path (`""` for top-level entries).
pub fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// Checks and normalises a relative path given by a user (`--keep`, `--ignore-path`).
///
/// # Errors
/// Empty paths, absolute paths, `..` and `.` components are refused.
pub fn parse_rel_path(value: &str) -> Result<String, TreeError> {
    let bad = |reason| TreeError::BadRelPath {
        value: value.to_string(),
        reason,
    };
    let trimmed = value.trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(bad("it is empty"));
    }
    if trimmed.starts_with('/') {
        return Err(bad("it must be relative to the source directory"));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => return Err(bad("it has an empty or `.` component")),
            ".." => return Err(bad("it may not contain `..`")),
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

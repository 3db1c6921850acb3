//! The closed tree model that every reduction works on.
//!
//! A [`Tree`] holds directories, regular files with exactly one link, and relative symlinks
//! that resolve inside the tree. Everything else (FIFOs, sockets, devices, hardlinked files,
//! absolute or escaping symlinks, names that are not UTF-8) is refused while scanning, with an
//! error that names the path, because a reducer that silently copied such an entry could
//! certify a tree whose behaviour it never observed.
//!
//! Scanning applies the ignore rules ([`IgnoreRules`]): built-in generated directory names,
//! exact basenames, exact relative paths, gitignore-style rule files (through the `ignore`
//! crate's matcher) and keep paths, which win over every ignore rule.
//!
//! Two fingerprints identify a tree:
//! - `tree-sha256-v2` covers paths, entry kinds, permission modes, modification times in
//!   nanoseconds, file contents and symlink targets, plus the root directory's own metadata.
//!   It is the identity published, journaled and used to check that an accepted candidate
//!   was reapplied exactly.
//! - A [`TreeKey`], from a [`SetHash`] of the entries, is the identity inside one run (the
//!   cache of answers, the accepted tree, the window): it moves with a change at the cost of
//!   the change, where the fingerprints hash every entry.
//! - `tree-content-sha256-v1` covers paths, entry kinds, file bytes and symlink targets only,
//!   so it survives transports (such as git) that do not keep metadata.
//!
//! Both hash a typed stream: every field is a one-byte tag, a 64-bit little-endian length and
//! the bytes, after a domain-separation header; entries come in byte order of their paths.

use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

mod key;
pub use key::{SetHash, TreeKey};

/// Directory basenames that are generated or downloaded, never source, and so are left out
/// of every scan unless a `--keep` path names them.
pub const BUILTIN_IGNORED: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "target",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".gradle",
    ".next",
    ".turbo",
    ".parcel-cache",
    ".cache",
];

/// An error met while scanning, validating or writing a tree.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// An I/O operation on a path failed.
    #[error("cannot {action} `{path}`")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The source does not exist.
    #[error("`{path}` does not exist")]
    Missing {
        /// The missing path.
        path: PathBuf,
    },
    /// The source is not a directory.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
    },
    /// A FIFO, socket, device or unknown entry type.
    #[error(
        "`{path}` is a {kind}; only directories, regular files and relative symlinks inside the tree are supported"
    )]
    Special {
        /// The offending path.
        path: PathBuf,
        /// A human name for its type.
        kind: &'static str,
    },
    /// A regular file with more than one hard link.
    #[error(
        "`{path}` has {links} hard links; files must have exactly one so that no alias outside the tree can change them"
    )]
    Hardlink {
        /// The offending path.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// A symlink that is absolute or leaves the tree.
    #[error(
        "symlink `{path}` points to `{target}`, outside the tree; only relative links that stay inside it are supported"
    )]
    EscapingSymlink {
        /// The symlink.
        path: PathBuf,
        /// Its target.
        target: String,
    },
    /// A command wrote beneath the overlay mount it ran in (it unmounted its tree, or
    /// left the mount namespace it was given): what it ran on is not the tree it was given.
    #[error(
        "the command wrote `{path}` beneath the overlay mount its tree was shown through (it unmounted the tree or left its mount namespace), so its run cannot answer for that tree; run with --no-overlay to reduce with plain copies"
    )]
    Escaped {
        /// The first entry found there.
        path: PathBuf,
    },
    /// A file name that is not valid UTF-8.
    #[error("`{path}` has a name that is not valid UTF-8")]
    NonUtf8Name {
        /// The offending path (lossy).
        path: PathBuf,
    },
    /// A relative path given on the command line is malformed.
    #[error("invalid relative path `{value}`: {reason}")]
    BadRelPath {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A `--keep` path does not exist in the source.
    #[error("keep path `{path}` does not exist in the source tree")]
    KeepMissing {
        /// The relative path.
        path: String,
    },
    /// A gitignore rule file could not be parsed.
    #[error("cannot read ignore rules from `{path}`: {message}")]
    Gitignore {
        /// The rule file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

pub(crate) fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> TreeError + 'a {
    move |source| TreeError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

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
    fn tag(self) -> u8 {
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

/// The rules that decide which entries of the source take part in a reduction.
#[derive(Clone, Debug, Default)]
pub struct IgnoreRules {
    /// Extra exact basenames to ignore (`--ignore NAME`).
    pub names: Vec<String>,
    /// Exact relative paths to ignore with their descendants (`--ignore-path`).
    pub paths: Vec<String>,
    /// Gitignore-style rule files, applied in order, scoped to the source root.
    pub gitignore_files: Vec<PathBuf>,
    /// Also read nested `.gitignore` files, each scoped to its own directory.
    pub gitignore_recursive: bool,
    /// Paths that are never ignored and never deleted (`--keep`).
    pub keep: Vec<String>,
}

/// A compiled form of [`IgnoreRules`] for one source root.
struct Matcher {
    names: Vec<String>,
    paths: Vec<String>,
    keep: Vec<String>,
    /// (scope relative to the root, matcher), top-level rule files first.
    gitignores: Vec<(String, ignore::gitignore::Gitignore)>,
    recursive: bool,
}

fn build_gitignore(scope: &Path, file: &Path) -> Result<ignore::gitignore::Gitignore, TreeError> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(scope);
    if let Some(err) = builder.add(file) {
        return Err(TreeError::Gitignore {
            path: file.to_path_buf(),
            message: err.to_string(),
        });
    }
    builder.build().map_err(|err| TreeError::Gitignore {
        path: file.to_path_buf(),
        message: err.to_string(),
    })
}

impl Matcher {
    fn new(root: &Path, rules: &IgnoreRules) -> Result<Matcher, TreeError> {
        let mut gitignores = Vec::new();
        for file in &rules.gitignore_files {
            gitignores.push((String::new(), build_gitignore(root, file)?));
        }
        Ok(Matcher {
            names: rules.names.clone(),
            paths: rules.paths.clone(),
            keep: rules.keep.clone(),
            gitignores,
            recursive: rules.gitignore_recursive,
        })
    }

    /// Whether `rel` is a kept path, inside one, or an ancestor of one.
    fn kept(&self, rel: &str) -> bool {
        self.keep.iter().any(|k| {
            k == rel || rel.starts_with(&format!("{k}/")) || k.starts_with(&format!("{rel}/"))
        })
    }

    fn ignored(&self, root: &Path, rel: &str, is_dir: bool) -> bool {
        if self.kept(rel) {
            return false;
        }
        let name = rel.rsplit('/').next().unwrap_or(rel);
        if BUILTIN_IGNORED.contains(&name) || self.names.iter().any(|n| n == name) {
            return true;
        }
        if self
            .paths
            .iter()
            .any(|p| p == rel || rel.starts_with(&format!("{p}/")))
        {
            return true;
        }
        let mut verdict = false;
        for (scope, gitignore) in &self.gitignores {
            let inside = scope.is_empty() || rel.starts_with(&format!("{scope}/"));
            if !inside {
                continue;
            }
            let full = root.join(rel);
            match gitignore.matched(&full, is_dir) {
                ignore::Match::Ignore(_) => verdict = true,
                ignore::Match::Whitelist(_) => verdict = false,
                ignore::Match::None => {}
            }
        }
        verdict
    }
}

fn mtime_ns(meta: &fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// Metadata of a directory entry as the tree model records it.
pub fn meta_of(meta: &fs::Metadata) -> Meta {
    let mode = if meta.file_type().is_symlink() {
        0
    } else {
        meta.permissions().mode() & 0o7777
    };
    Meta {
        mode,
        mtime_ns: mtime_ns(meta),
    }
}

fn special_kind(ft: &fs::FileType) -> &'static str {
    if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else {
        "file of unknown type"
    }
}

/// Whether a relative symlink target, read from the link at `link_rel`, stays in the tree.
fn symlink_stays_inside(link_rel: &str, target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = parent_of(link_rel)
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    for component in Path::new(target).components() {
        match component {
            Component::Normal(part) => depth.push(part.to_str().unwrap_or("")),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// Whether the symlink at `link` resolves inside the tree, following the tree's own
/// symlinks along the way (a link through another link can escape even when each target
/// looks harmless on its own). Loops and chains of more than 40 links count as escaping.
fn resolves_inside(tree: &Tree, link: &str) -> bool {
    let mut resolved: Vec<String> = parent_of(link)
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let Some(Entry {
        node: Node::Symlink { target },
        ..
    }) = tree.entries.get(link)
    else {
        return true;
    };
    let mut pending: std::collections::VecDeque<String> =
        target.split('/').map(str::to_string).collect();
    if target.starts_with('/') {
        return false;
    }
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => {}
            ".." => {
                if resolved.pop().is_none() {
                    return false;
                }
            }
            name => {
                resolved.push(name.to_string());
                let here = resolved.join("/");
                if let Some(Entry {
                    node: Node::Symlink { target },
                    ..
                }) = tree.entries.get(here.as_str())
                {
                    hops += 1;
                    if hops > 40 || target.starts_with('/') {
                        return false;
                    }
                    resolved.pop();
                    for piece in target.split('/').rev() {
                        pending.push_front(piece.to_string());
                    }
                }
            }
        }
    }
    true
}

/// What a scan found and left out.
#[derive(Clone, Debug, Default)]
pub struct ScanReport {
    /// Relative paths of entries left out by ignore rules (top-most only).
    pub ignored: Vec<String>,
    /// Nested `.gitignore` files that contributed rules.
    pub nested_gitignores: Vec<String>,
}

/// Reads `root` into a [`Tree`], applying `rules` and refusing unsupported entries.
///
/// # Errors
/// See [`TreeError`]: special files, hardlinks, escaping symlinks, non-UTF-8 names, I/O.
pub fn scan(root: &Path, rules: &IgnoreRules) -> Result<(Tree, ScanReport), TreeError> {
    let root_meta = fs::symlink_metadata(root).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            TreeError::Missing {
                path: root.to_path_buf(),
            }
        } else {
            TreeError::Io {
                action: "read",
                path: root.to_path_buf(),
                source,
            }
        }
    })?;
    if !root_meta.is_dir() {
        return Err(TreeError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    let mut matcher = Matcher::new(root, rules)?;
    let mut tree = Tree::empty(meta_of(&root_meta));
    let mut report = ScanReport::default();
    scan_dir(root, "", &mut matcher, &mut tree, &mut report)?;
    for keep in &rules.keep {
        if !tree.entries.contains_key(keep.as_str()) {
            return Err(TreeError::KeepMissing { path: keep.clone() });
        }
    }
    for (path, entry) in &tree.entries {
        if let Node::Symlink { target } = &entry.node
            && !resolves_inside(&tree, path)
        {
            return Err(TreeError::EscapingSymlink {
                path: root.join(&**path),
                target: target.clone(),
            });
        }
    }
    Ok((tree, report))
}

/// Reads a tree back from disk with no ignore rules at all: used to check what was written.
///
/// # Errors
/// As [`scan`].
pub fn scan_exact(root: &Path) -> Result<Tree, TreeError> {
    let root_meta = fs::symlink_metadata(root).map_err(io_err("read", root))?;
    let mut matcher = Matcher {
        names: Vec::new(),
        paths: Vec::new(),
        keep: Vec::new(),
        gitignores: Vec::new(),
        recursive: false,
    };
    let mut tree = Tree::empty(meta_of(&root_meta));
    let mut report = ScanReport::default();
    scan_dir_with(root, "", &mut matcher, &mut tree, &mut report, false)?;
    Ok(tree)
}

fn scan_dir(
    root: &Path,
    rel_dir: &str,
    matcher: &mut Matcher,
    tree: &mut Tree,
    report: &mut ScanReport,
) -> Result<(), TreeError> {
    scan_dir_with(root, rel_dir, matcher, tree, report, true)
}

fn scan_dir_with(
    root: &Path,
    rel_dir: &str,
    matcher: &mut Matcher,
    tree: &mut Tree,
    report: &mut ScanReport,
    apply_rules: bool,
) -> Result<(), TreeError> {
    let dir_path = if rel_dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel_dir)
    };
    if apply_rules && matcher.recursive {
        let nested = dir_path.join(".gitignore");
        if fs::symlink_metadata(&nested).is_ok_and(|m| m.is_file()) {
            let scope = rel_dir.to_string();
            matcher
                .gitignores
                .push((scope, build_gitignore(&dir_path, &nested)?));
            report.nested_gitignores.push(if rel_dir.is_empty() {
                ".gitignore".to_string()
            } else {
                format!("{rel_dir}/.gitignore")
            });
        }
    }
    let mut names = Vec::new();
    for item in fs::read_dir(&dir_path).map_err(io_err("list", &dir_path))? {
        let item = item.map_err(io_err("list", &dir_path))?;
        let name = item.file_name();
        let Some(name) = name.to_str() else {
            return Err(TreeError::NonUtf8Name {
                path: dir_path.join(&name),
            });
        };
        names.push(name.to_string());
    }
    names.sort();
    for name in names {
        let rel = if rel_dir.is_empty() {
            name.clone()
        } else {
            format!("{rel_dir}/{name}")
        };
        let path = dir_path.join(&name);
        let meta = fs::symlink_metadata(&path).map_err(io_err("read", &path))?;
        let ft = meta.file_type();
        if apply_rules && matcher.ignored(root, &rel, ft.is_dir()) {
            report.ignored.push(rel);
            continue;
        }
        let rel_arc: RelPath = Arc::from(rel.as_str());
        if ft.is_dir() {
            tree.entries.insert(
                rel_arc,
                Entry {
                    node: Node::Dir,
                    meta: meta_of(&meta),
                },
            );
            scan_dir_with(root, &rel, matcher, tree, report, apply_rules)?;
        } else {
            tree.entries.insert(rel_arc, leaf_entry(path, &rel, &meta)?);
        }
    }
    Ok(())
}

/// Reads a regular file or a symlink whose metadata is `meta`, refusing hardlinked files,
/// escaping links and every other kind of entry.
fn leaf_entry(path: PathBuf, rel: &str, meta: &fs::Metadata) -> Result<Entry, TreeError> {
    let ft = meta.file_type();
    let node = if ft.is_file() {
        if meta.nlink() != 1 {
            return Err(TreeError::Hardlink {
                path,
                links: meta.nlink(),
            });
        }
        let data = fs::read(&path).map_err(io_err("read", &path))?;
        Node::file(Arc::from(data))
    } else if ft.is_symlink() {
        let target = fs::read_link(&path).map_err(io_err("read link", &path))?;
        let Some(target) = target.to_str().map(str::to_string) else {
            return Err(TreeError::NonUtf8Name { path });
        };
        if !symlink_stays_inside(rel, &target) {
            return Err(TreeError::EscapingSymlink { path, target });
        }
        Node::Symlink { target }
    } else {
        return Err(TreeError::Special {
            path,
            kind: special_kind(&ft),
        });
    };
    Ok(Entry {
        node,
        meta: meta_of(meta),
    })
}

/// Reads the one entry at `rel` below `root` as [`scan_exact`] reads it (a directory without
/// its children); `None` when nothing is there.
///
/// # Errors
/// As [`scan`].
pub fn read_entry(root: &Path, rel: &str) -> Result<Option<Entry>, TreeError> {
    let path = root.join(rel);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(TreeError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    if meta.is_dir() {
        return Ok(Some(Entry {
            node: Node::Dir,
            meta: meta_of(&meta),
        }));
    }
    leaf_entry(path, rel, &meta).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(data: &str, mtime: i128) -> Entry {
        Entry {
            node: Node::file(Arc::from(data.as_bytes())),
            meta: Meta {
                mode: 0o644,
                mtime_ns: mtime,
            },
        }
    }

    fn dir(mode: u32, mtime: i128) -> Entry {
        Entry {
            node: Node::Dir,
            meta: Meta {
                mode,
                mtime_ns: mtime,
            },
        }
    }

    fn link(target: &str, mtime: i128) -> Entry {
        Entry {
            node: Node::Symlink {
                target: target.into(),
            },
            meta: Meta {
                mode: 0,
                mtime_ns: mtime,
            },
        }
    }

    #[test]
    fn the_fingerprints_of_a_fixed_tree_do_not_change() {
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 1_700_000_000_123_456_789,
        });
        tree.entries.insert(Arc::from("d"), dir(0o700, -5));
        tree.entries
            .insert(Arc::from("d/a.txt"), file("alpha\n", 42));
        tree.entries.insert(Arc::from("d/empty"), file("", 0));
        tree.entries.insert(Arc::from("link"), link("d/a.txt", 7));
        // The same values as an independent implementation of the two formats (Python's
        // hashlib over the same typed, length-prefixed fields), so the formats of published
        // fingerprints cannot drift.
        assert_eq!(
            tree.fingerprint().to_string(),
            "1b1d1e2bcbdbf2fa2ca9a756f340ffd97fda3a57dd97aefeb982b8756db69ae9"
        );
        assert_eq!(
            tree.content_fingerprint().to_string(),
            "2321c14f6398c1fdc69cb7a40aacfa527b4791e2dbd49c38b8101a089e130e79"
        );
    }

    #[test]
    fn the_size_of_a_changed_tree_is_counted_over_what_changed() {
        let mut base = Tree::empty(dir(0o755, 0).meta);
        for i in 0..500 {
            base.entries.insert(
                Arc::from(format!("d{}/f{i}", i % 7)),
                file(&"x".repeat(i), 0),
            );
        }
        for d in 0..7 {
            base.entries
                .insert(Arc::from(format!("d{d}")), dir(0o755, 0));
        }
        // A clone that shares the map, changed in a few places of every kind.
        let mut changed = base.clone();
        changed.remove_subtree("d3");
        changed
            .entries
            .insert(Arc::from("d1/f8"), file("longer than before", 5));
        changed.entries.insert(Arc::from("d9"), dir(0o755, 0));
        changed.entries.insert(Arc::from("d9/l"), link("a", 0));
        changed.entries.insert(Arc::from("d0/f0"), link("a", 0));
        assert_eq!(base.size_of(base.size(), &changed), changed.size());
        assert_eq!(changed.size_of(changed.size(), &base), base.size());
        // Two maps built apart (nothing shared) count the same.
        let apart = Tree {
            root: base.root,
            entries: changed
                .entries
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        assert_eq!(base.size_of(base.size(), &apart), changed.size());
        assert_eq!(base.size_of(base.size(), &base), base.size());
    }

    #[test]
    fn children_are_listed_past_siblings_that_sort_inside_a_directory_s_range() {
        // `a.txt`, `a-b` and `a+` sort between `a` and `a/`; `a0` right after `a/...`.
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 0,
        });
        let dir = Entry {
            node: Node::Dir,
            meta: Meta {
                mode: 0o755,
                mtime_ns: 0,
            },
        };
        for path in [
            "a", "a+", "a-b", "a.txt", "a/b", "a/b/c", "a/b.txt", "a/b0", "a/c", "a0", "b", "b/a",
            "b/a/x", "b/a/y", "b/a0", "c.txt",
        ] {
            let entry = if ["a", "a/b", "b", "b/a"].contains(&path) {
                dir.clone()
            } else {
                file(path, 0)
            };
            tree.entries.insert(Arc::from(path), entry);
        }
        for dir in ["", "a", "a/b", "b", "b/a", "c.txt", "zz"] {
            let naive: Vec<RelPath> = tree
                .entries
                .keys()
                .filter(|p| parent_of(p) == dir)
                .cloned()
                .collect();
            assert_eq!(tree.children(dir), naive, "children of {dir:?}");
        }
        let root: Vec<String> = tree.children("").iter().map(|p| p.to_string()).collect();
        assert_eq!(root, ["a", "a+", "a-b", "a.txt", "a0", "b", "c.txt"]);
    }

    fn sample() -> Tree {
        let mut tree = Tree::empty(Meta {
            mode: 0o755,
            mtime_ns: 1,
        });
        tree.entries.insert(Arc::from("a"), dir(0o755, 2));
        tree.entries.insert(Arc::from("a/x.txt"), file("x", 3));
        tree.entries.insert(Arc::from("b.txt"), file("b", 4));
        tree
    }

    #[test]
    fn full_fingerprint_covers_metadata_but_content_fingerprint_does_not() {
        let tree = sample();
        let mut touched = tree.clone();
        touched.entries.get_mut("b.txt").unwrap().meta.mtime_ns = 99;
        assert_ne!(tree.fingerprint(), touched.fingerprint());
        assert_eq!(tree.content_fingerprint(), touched.content_fingerprint());
        let mut edited = tree.clone();
        *edited.entries.get_mut("b.txt").unwrap() = file("B", 4);
        assert_ne!(tree.content_fingerprint(), edited.content_fingerprint());
        let mut root_changed = tree.clone();
        root_changed.root.mode = 0o700;
        assert_ne!(tree.fingerprint(), root_changed.fingerprint());
    }

    #[test]
    fn fingerprints_separate_fields_so_paths_and_contents_cannot_be_shifted() {
        let mut one = Tree::empty(Meta {
            mode: 0,
            mtime_ns: 0,
        });
        one.entries.insert(Arc::from("ab"), file("c", 0));
        let mut two = one.clone();
        two.entries.clear();
        two.entries.insert(Arc::from("a"), file("bc", 0));
        assert_ne!(one.content_fingerprint(), two.content_fingerprint());
    }

    #[test]
    fn descendants_and_children_follow_paths_not_prefixes() {
        let mut tree = sample();
        tree.entries.insert(Arc::from("a.txt"), file("n", 0));
        let below: Vec<_> = tree.descendants("a").map(|(p, _)| p.to_string()).collect();
        assert_eq!(below, ["a/x.txt"]);
        let top: Vec<_> = tree.children("").iter().map(|p| p.to_string()).collect();
        assert_eq!(top, ["a", "a.txt", "b.txt"]);
        assert_eq!(tree.weight("a"), 1);
        tree.remove_subtree("a");
        assert!(!tree.entries.contains_key("a/x.txt"));
        assert!(tree.entries.contains_key("a.txt"));
    }

    #[test]
    fn symlink_targets_must_stay_inside() {
        assert!(symlink_stays_inside("a/link", "../b"));
        assert!(symlink_stays_inside("link", "a/./b"));
        assert!(!symlink_stays_inside("link", "../b"));
        assert!(!symlink_stays_inside("a/link", "../../b"));
        assert!(!symlink_stays_inside("link", "/etc/passwd"));
    }

    #[test]
    fn relative_paths_are_checked() {
        assert_eq!(parse_rel_path("a/b/").unwrap(), "a/b");
        assert!(parse_rel_path("/a").is_err());
        assert!(parse_rel_path("a/../b").is_err());
        assert!(parse_rel_path("").is_err());
        assert!(parse_rel_path("a//b").is_err());
    }

    #[test]
    fn scan_refuses_special_files_hardlinks_and_escaping_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("ok.txt"), "ok").unwrap();
        assert_eq!(
            scan(root, &IgnoreRules::default()).unwrap().0.entries.len(),
            1
        );

        fs::hard_link(root.join("ok.txt"), root.join("alias.txt")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(matches!(err, TreeError::Hardlink { links: 2, .. }), "{err}");
        fs::remove_file(root.join("alias.txt")).unwrap();

        std::os::unix::fs::symlink("../outside", root.join("esc")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(err.to_string().contains("esc"), "{err}");
        fs::remove_file(root.join("esc")).unwrap();

        // Each link looks harmless alone, but `esc` goes through `d/up`, which is `..`.
        fs::create_dir(root.join("d")).unwrap();
        std::os::unix::fs::symlink("..", root.join("d/up")).unwrap();
        std::os::unix::fs::symlink("d/up/..", root.join("esc")).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(matches!(err, TreeError::EscapingSymlink { .. }), "{err}");
        fs::remove_file(root.join("esc")).unwrap();
        std::os::unix::fs::symlink("d/up/ok.txt", root.join("fine")).unwrap();
        assert!(scan(root, &IgnoreRules::default()).is_ok());
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert!(scan(root, &IgnoreRules::default()).is_err());
        fs::remove_file(root.join("loop")).unwrap();

        nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = scan(root, &IgnoreRules::default()).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
    }

    #[test]
    fn scan_applies_builtin_names_paths_gitignore_and_keep() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["src", "node_modules/x", "build", "docs/gen"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("src/a.rs"), "a").unwrap();
        fs::write(root.join("src/a.log"), "log").unwrap();
        fs::write(root.join("node_modules/x/i.js"), "i").unwrap();
        fs::write(root.join("build/out"), "o").unwrap();
        fs::write(root.join("docs/gen/page"), "p").unwrap();
        fs::write(root.join("rules"), "*.log\nbuild/\n").unwrap();
        let rules = IgnoreRules {
            paths: vec!["docs/gen".into()],
            gitignore_files: vec![root.join("rules")],
            keep: vec!["src/a.log".into()],
            ..IgnoreRules::default()
        };
        let (tree, report) = scan(root, &rules).unwrap();
        let paths: Vec<_> = tree.entries.keys().map(|p| p.to_string()).collect();
        assert_eq!(paths, ["docs", "rules", "src", "src/a.log", "src/a.rs"]);
        assert_eq!(report.ignored, ["build", "docs/gen", "node_modules"]);
    }

    #[test]
    fn nested_gitignore_rules_apply_only_in_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/.gitignore"), "*.tmp\n").unwrap();
        fs::write(root.join("sub/x.tmp"), "x").unwrap();
        fs::write(root.join("y.tmp"), "y").unwrap();
        let rules = IgnoreRules {
            gitignore_recursive: true,
            ..IgnoreRules::default()
        };
        let (tree, _) = scan(root, &rules).unwrap();
        assert!(tree.entries.contains_key("y.tmp"));
        assert!(!tree.entries.contains_key("sub/x.tmp"));
    }
}

//! SOURCE as the reducer takes it: a directory, scanned into a tree, or a single regular
//! file, taken as a one-file tree that holds the file under its own name (the form C-Vise's
//! and Shrink Ray's interestingness scripts expect: the command runs where the file is).
//!
//! A one-file tree's root has the fixed metadata [`FILE_TREE_ROOT`], so that its fingerprint
//! depends on the file alone (its name, mode, modification time and bytes), never on the
//! directory it was read from or published in.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;

use super::error::TreeError;
use super::ignore::IgnoreRules;
use super::model::{Entry, Meta, Node, RelPath, Tree};
use super::scan::{ScanReport, meta_of, read_entry, scan};

/// What SOURCE is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A directory: the tree below it.
    Directory,
    /// A regular file (or a symlink to one): a tree of that one file.
    File,
}

/// The root metadata of every one-file tree.
pub const FILE_TREE_ROOT: Meta = Meta {
    mode: 0o755,
    mtime_ns: 0,
};

fn read_error(path: &Path) -> impl FnOnce(io::Error) -> TreeError + '_ {
    move |source| {
        if source.kind() == io::ErrorKind::NotFound {
            TreeError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            TreeError::Io {
                action: "read",
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// What `path` is as a SOURCE. A symlink is followed when it points to a regular file (as
/// C-Vise does); a symlink to a directory is refused, as before, since a tree is never read
/// through a link.
///
/// # Errors
/// A missing path, a symlink to a directory, a dangling symlink, or anything that is neither
/// a directory nor a regular file (FIFO, socket, device), each naming the path.
pub fn source_kind(path: &Path) -> Result<SourceKind, TreeError> {
    let meta = fs::symlink_metadata(path).map_err(read_error(path))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Ok(SourceKind::Directory);
    }
    if ft.is_file() {
        return Ok(SourceKind::File);
    }
    if !ft.is_symlink() {
        return Err(TreeError::NotASource {
            path: path.to_path_buf(),
            kind: super::scan::special_kind(&ft),
        });
    }
    let target = match fs::metadata(path) {
        Ok(target) => target,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(TreeError::NotASource {
                path: path.to_path_buf(),
                kind: "symbolic link to nothing",
            });
        }
        Err(source) => {
            return Err(TreeError::Io {
                action: "follow the link",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let ft = target.file_type();
    if ft.is_file() {
        Ok(SourceKind::File)
    } else if ft.is_dir() {
        Err(TreeError::RootSymlink {
            path: path.to_path_buf(),
        })
    } else {
        Err(TreeError::NotASource {
            path: path.to_path_buf(),
            kind: match super::scan::special_kind(&ft) {
                "FIFO" => "symbolic link to a FIFO",
                "socket" => "symbolic link to a socket",
                "block device" => "symbolic link to a block device",
                "character device" => "symbolic link to a character device",
                _ => "symbolic link to a file of unknown type",
            },
        })
    }
}

/// The name a one-file tree holds its file under: the last component of `path` as given
/// (a symlink's own name, not its target's).
///
/// # Errors
/// A path with no last name, or a name that is not UTF-8.
pub fn file_name(path: &Path) -> Result<String, TreeError> {
    match path.file_name() {
        Some(name) => name
            .to_str()
            .map(str::to_string)
            .ok_or_else(|| TreeError::NonUtf8Name {
                path: path.to_path_buf(),
            }),
        None => Err(TreeError::NotASource {
            path: path.to_path_buf(),
            kind: "path without a file name",
        }),
    }
}

/// The tree of one file `name` with `entry`.
pub fn one_file_tree(name: &str, entry: Entry) -> Tree {
    let mut tree = Tree::empty(FILE_TREE_ROOT);
    tree.entries.insert(RelPath::from(name), entry);
    tree
}

/// Reads SOURCE: a directory as [`scan`] does, a regular file (or a symlink to one) as a
/// one-file tree under its own name. The ignore rules have no entries to leave out in a
/// one-file tree: a `--keep` path other than the file's name is missing.
///
/// # Errors
/// As [`source_kind`] and [`scan`].
pub fn scan_source(
    path: &Path,
    rules: &IgnoreRules,
) -> Result<(Tree, ScanReport, SourceKind), TreeError> {
    match source_kind(path)? {
        SourceKind::Directory => {
            let (tree, report) = scan(path, rules)?;
            Ok((tree, report, SourceKind::Directory))
        }
        SourceKind::File => {
            let name = file_name(path)?;
            if let Some(keep) = rules.keep.iter().find(|k| **k != name) {
                return Err(TreeError::KeepMissing { path: keep.clone() });
            }
            let meta = fs::metadata(path).map_err(read_error(path))?;
            let data = fs::read(path).map_err(read_error(path))?;
            let entry = Entry {
                node: Node::file(Arc::from(data)),
                meta: meta_of(&meta),
            };
            Ok((
                one_file_tree(&name, entry),
                ScanReport::default(),
                SourceKind::File,
            ))
        }
    }
}

/// Reads the regular file at `path` back as the one-file tree of `name`, never through a
/// symlink: what a published or staged file payload is checked with.
///
/// # Errors
/// Nothing there, something other than a regular file with one link, or I/O.
pub fn read_file_tree(path: &Path, name: &str) -> Result<Tree, TreeError> {
    let (Some(parent), Some(last)) = (path.parent(), path.file_name()) else {
        return Err(file_name(path).err().unwrap_or(TreeError::Missing {
            path: path.to_path_buf(),
        }));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let Some(last) = last.to_str() else {
        return Err(TreeError::NonUtf8Name {
            path: path.to_path_buf(),
        });
    };
    match read_entry(parent, last)? {
        None => Err(TreeError::Missing {
            path: path.to_path_buf(),
        }),
        Some(entry) if matches!(entry.node, Node::File { .. }) => Ok(one_file_tree(name, entry)),
        Some(_) => Err(TreeError::NotAFile {
            path: path.to_path_buf(),
        }),
    }
}

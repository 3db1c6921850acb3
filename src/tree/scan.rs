//! Scanning a directory into a [`Tree`]: the closed model's checks (special files,
//! hardlinks, escaping symlinks, names that are not UTF-8), the ignore rules, and reading
//! one entry back.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::error::{TreeError, io_err};
use super::ignore::{IgnoreRules, Matcher, build_gitignore};
use super::model::{Entry, Meta, Node, RelPath, Tree, parent_of};

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

/// How an entry that is not a file, directory or symlink is named in errors.
pub(super) fn special_kind(ft: &fs::FileType) -> &'static str {
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
pub(super) fn symlink_stays_inside(link_rel: &str, target: &str) -> bool {
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

/// Whether the symlink at `link` (a path relative to the tree's root) whose target is
/// `target` resolves inside the tree, following the tree's other symlinks along the way,
/// which `target_of` gives by path (a link through another link can escape even when each
/// target looks harmless on its own). An absolute target, a `..` above the root, a loop
/// and a chain of more than 40 links all count as leaving the tree.
///
/// This is the one rule for where a link may point: a scanned tree keeps only links it
/// holds, and the gate refuses a test, carried file or data file that breaks it.
pub fn link_resolves_inside<'a>(
    link: &str,
    target: &str,
    target_of: impl Fn(&str) -> Option<&'a str>,
) -> bool {
    if target.is_empty() || target.starts_with('/') {
        return false;
    }
    let mut resolved: Vec<String> = parent_of(link)
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let mut pending: std::collections::VecDeque<String> =
        target.split('/').map(str::to_string).collect();
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
                if let Some(target) = target_of(&here) {
                    hops += 1;
                    if hops > 40 || target.is_empty() || target.starts_with('/') {
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

/// The target of the symlink at `path` in `tree`, if there is one.
fn link_target<'t>(tree: &'t Tree, path: &str) -> Option<&'t str> {
    match tree.entries.get(path) {
        Some(Entry {
            node: Node::Symlink { target },
            ..
        }) => Some(target.as_str()),
        _ => None,
    }
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
    if root_meta.file_type().is_symlink() {
        return Err(TreeError::RootSymlink {
            path: root.to_path_buf(),
        });
    }
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
            && !link_resolves_inside(path, target, |p| link_target(&tree, p))
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

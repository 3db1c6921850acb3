//! [`TreeError`], what can fail while scanning, validating or writing a tree: a leaf, so that
//! the model, the rules and the scan name it without importing one another.

use std::io;
use std::path::{Path, PathBuf};

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
    /// A path that should hold a regular file holds something else.
    #[error("`{path}` is not a regular file")]
    NotAFile {
        /// The offending path.
        path: PathBuf,
    },
    /// SOURCE is neither a directory nor a regular file (nor a symlink to one).
    #[error("`{path}` is a {kind}; SOURCE must be a directory or a regular file")]
    NotASource {
        /// The offending path.
        path: PathBuf,
        /// A human name for what it is.
        kind: &'static str,
    },
    /// The source is a symbolic link (to a directory or anything else): a tree is read
    /// from a directory itself, never through a link.
    #[error(
        "`{path}` is a symbolic link; give the directory it points to, since a tree is never read through a link"
    )]
    RootSymlink {
        /// The link.
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

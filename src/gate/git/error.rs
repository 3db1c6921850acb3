//! What can fail when the gate reads a repository, and how a path that is not UTF-8 is
//! written in a message.
//!
//! The judge's line carries only an error's top message, so a message from libgit2 is
//! repeated in the text as well as attached as the source.

/// A failed git read or git call.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git")]
    Spawn(#[source] std::io::Error),
    /// git exited with an error.
    #[error("`git {args}` failed: {stderr}")]
    Failed {
        /// The arguments.
        args: String,
        /// What git printed on stderr (trimmed).
        stderr: String,
    },
    /// A value that must be a full commit id is not one.
    #[error("`{0}` is not a full 40-character commit id")]
    BadSha(String),
    /// git printed something unexpected.
    #[error("unexpected output from `git {0}`")]
    Parse(String),
    /// No repository at (or above) the directory.
    #[error("cannot open the git repository at {dir}: {}", .source.message())]
    Open {
        /// The directory, escaped.
        dir: String,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// A revision that names no commit (or tree) in the repository.
    #[error("`{rev}` names no commit in the git repository at {dir}")]
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// The repository directory, escaped.
        dir: String,
    },
    /// An object could not be read.
    #[error("cannot read {what}: {}", .source.message())]
    Read {
        /// Which object (a commit, a tree, a blob and its path).
        what: String,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// A path names a directory or a submodule where a file was expected.
    #[error("`{path}` at `{commit}` is not a file")]
    NotABlob {
        /// The commit.
        commit: String,
        /// The path.
        path: String,
    },
    /// A path the gate must handle as text is not valid UTF-8.
    #[error("the path \"{path}\" is not valid UTF-8")]
    NonUtf8Path {
        /// The path, with each byte that is not UTF-8 written `\xNN`.
        path: String,
    },
    /// Two commits share no history.
    #[error("`{a}` and `{b}` have no merge base")]
    NoMergeBase {
        /// The first commit.
        a: String,
        /// The second commit.
        b: String,
    },
}

/// `bytes` as text for a message: valid UTF-8 as it is except for control characters and
/// backslashes, which are escaped, and every byte that is not UTF-8 as `\xNN`. Distinct
/// inputs stay distinct.
pub(super) fn escape_path(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' || c.is_control() {
                out.extend(c.escape_debug());
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

/// `bytes` as a UTF-8 path, or the error naming it.
pub(super) fn utf8_path(bytes: Vec<u8>) -> Result<String, GitError> {
    String::from_utf8(bytes).map_err(|e| GitError::NonUtf8Path {
        path: escape_path(e.as_bytes()),
    })
}

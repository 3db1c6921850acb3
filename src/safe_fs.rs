//! Bounded file reads and writes that never go through a symbolic link.
//!
//! Every path repromin reads or writes on behalf of a pull request (side reports, test
//! reports, the step's output files, overlay and mutation writes, workspace rewrites) may
//! have been replaced by code the pull request controls. This module owns opening such a
//! path: with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`, so a symlink is refused
//! (`ELOOP`) and a FIFO or device is refused at once instead of waited on, then an `fstat`
//! of what was opened, which must be a regular file (or a directory where one is asked
//! for), and reads that stop at a cap. Each refusal is a [`SafeFsError`] that says which
//! it was; callers that owe the user a particular message build it from the variant.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::Mode;

/// The kind of a file that is not what was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A character or block device.
    Device,
    /// A socket.
    Socket,
    /// A symbolic link.
    Symlink,
    /// Something else.
    Other,
}

impl FileKind {
    fn of(file_type: std::fs::FileType) -> FileKind {
        if file_type.is_file() {
            FileKind::Regular
        } else if file_type.is_dir() {
            FileKind::Directory
        } else if file_type.is_fifo() {
            FileKind::Fifo
        } else if file_type.is_char_device() || file_type.is_block_device() {
            FileKind::Device
        } else if file_type.is_socket() {
            FileKind::Socket
        } else if file_type.is_symlink() {
            FileKind::Symlink
        } else {
            FileKind::Other
        }
    }

    /// The kind in words.
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Regular => "regular file",
            FileKind::Directory => "directory",
            FileKind::Fifo => "FIFO",
            FileKind::Device => "device",
            FileKind::Socket => "socket",
            FileKind::Symlink => "symbolic link",
            FileKind::Other => "special file",
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a path could not be opened, read or written safely.
#[derive(Debug, thiserror::Error)]
pub enum SafeFsError {
    /// Nothing is at the path.
    #[error("`{path}` does not exist")]
    NotFound {
        /// The path.
        path: PathBuf,
        /// The error from `open`.
        #[source]
        source: io::Error,
    },
    /// The path is a symbolic link (`ELOOP` from `O_NOFOLLOW`).
    #[error("`{path}` is a symbolic link")]
    Symlink {
        /// The path.
        path: PathBuf,
        /// The error from `open`.
        #[source]
        source: io::Error,
    },
    /// The path could not be opened for another reason.
    #[error("cannot open `{path}`")]
    Open {
        /// The path.
        path: PathBuf,
        /// The error from `open`.
        #[source]
        source: io::Error,
    },
    /// What was opened is not of the kind asked for.
    #[error("`{path}` is not a {wanted}: it is a {kind}")]
    WrongKind {
        /// The path.
        path: PathBuf,
        /// What was asked for.
        wanted: FileKind,
        /// What is there.
        kind: FileKind,
    },
    /// The file is larger than the cap.
    #[error("`{path}` is {len} bytes, over the {cap}-byte cap")]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// The cap.
        cap: u64,
    },
    /// Reading, writing or `fstat` failed after the open.
    #[error("cannot {action} `{path}`")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl SafeFsError {
    /// The error `open` returned, when the path could not be opened at all.
    pub fn open_error(&self) -> Option<&io::Error> {
        match self {
            SafeFsError::NotFound { source, .. }
            | SafeFsError::Symlink { source, .. }
            | SafeFsError::Open { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<SafeFsError> for io::Error {
    /// The underlying I/O error where there is one (so its text is unchanged), else an
    /// error of a fitting kind that carries the refusal.
    fn from(err: SafeFsError) -> io::Error {
        match err {
            SafeFsError::NotFound { source, .. }
            | SafeFsError::Symlink { source, .. }
            | SafeFsError::Open { source, .. }
            | SafeFsError::Io { source, .. } => source,
            other @ SafeFsError::WrongKind { .. } => {
                io::Error::new(io::ErrorKind::InvalidInput, other)
            }
            other @ SafeFsError::TooLarge { .. } => {
                io::Error::new(io::ErrorKind::InvalidData, other)
            }
        }
    }
}

const SAFE_FLAGS: i32 =
    OFlag::O_NOFOLLOW.bits() | OFlag::O_NONBLOCK.bits() | OFlag::O_CLOEXEC.bits();

fn open_failed(path: &Path, source: io::Error) -> SafeFsError {
    let path = path.to_path_buf();
    match source.raw_os_error() {
        Some(code) if code == nix::libc::ELOOP => SafeFsError::Symlink { path, source },
        _ if source.kind() == io::ErrorKind::NotFound => SafeFsError::NotFound { path, source },
        _ => SafeFsError::Open { path, source },
    }
}

/// Checks with `fstat` that `file` is of the kind `wanted`; returns its size.
fn check_kind(file: &File, path: &Path, wanted: FileKind) -> Result<u64, SafeFsError> {
    let meta = file.metadata().map_err(|source| SafeFsError::Io {
        action: "stat",
        path: path.to_path_buf(),
        source,
    })?;
    let kind = FileKind::of(meta.file_type());
    if kind != wanted {
        return Err(SafeFsError::WrongKind {
            path: path.to_path_buf(),
            wanted,
            kind,
        });
    }
    Ok(meta.len())
}

/// Opens the regular file at `path` for reading, never through a symlink and never
/// waiting on a FIFO or device.
///
/// # Errors
/// Missing, a symlink, not a regular file, or the open fails.
pub(crate) fn open_regular(path: &Path) -> Result<File, SafeFsError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(SAFE_FLAGS)
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    check_kind(&file, path, FileKind::Regular)?;
    Ok(file)
}

/// Opens the directory at `path` (for lookups relative to it), never through a symlink.
///
/// # Errors
/// Missing, a symlink, not a directory, or the open fails.
pub(crate) fn open_dir(path: &Path) -> Result<File, SafeFsError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(SAFE_FLAGS | OFlag::O_DIRECTORY.bits())
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    check_kind(&file, path, FileKind::Directory)?;
    Ok(file)
}

/// Reads at most `limit` bytes of the regular file at `path` as UTF-8 text.
///
/// # Errors
/// See [`open_regular`]; a read failure or text that is not UTF-8 (an I/O error of kind
/// `InvalidData`).
pub(crate) fn read_prefix_to_string(path: &Path, limit: u64) -> Result<String, SafeFsError> {
    let file = open_regular(path)?;
    let mut text = String::new();
    file.take(limit)
        .read_to_string(&mut text)
        .map_err(|source| SafeFsError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
    Ok(text)
}

/// Reads the whole regular file at `path`, refusing one over `cap` bytes.
///
/// # Errors
/// See [`open_regular`]; over the cap; a read failure.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, SafeFsError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(SAFE_FLAGS)
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    let len = check_kind(&file, path, FileKind::Regular)?;
    let too_large = |len| SafeFsError::TooLarge {
        path: path.to_path_buf(),
        len,
        cap,
    };
    if len > cap {
        return Err(too_large(len));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| SafeFsError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
    // The file may have grown since the `fstat`.
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Opens the regular file at `path` for appending, creating it with `mode` if missing.
///
/// # Errors
/// A symlink, not a regular file, or the open fails.
pub(crate) fn open_append(path: &Path, mode: u32) -> Result<File, SafeFsError> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(mode)
        .custom_flags(SAFE_FLAGS)
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    check_kind(&file, path, FileKind::Regular)?;
    Ok(file)
}

/// Replaces the bytes of the existing regular file at `path`, keeping its inode.
///
/// # Errors
/// Missing, a symlink, not a regular file, or the write fails.
pub(crate) fn rewrite(path: &Path, data: &[u8]) -> Result<(), SafeFsError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(SAFE_FLAGS)
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    check_kind(&file, path, FileKind::Regular)?;
    let io = |source| SafeFsError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    };
    file.set_len(0).map_err(io)?;
    file.write_all(data).map_err(io)
}

/// Creates the file `path`, which must not exist, with `data` (never through a symlink).
///
/// # Errors
/// Something is at the path, or the write fails.
pub(crate) fn write_new(path: &Path, data: &[u8]) -> Result<(), SafeFsError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(SAFE_FLAGS)
        .open(path)
        .map_err(|e| open_failed(path, e))?;
    file.write_all(data).map_err(|source| SafeFsError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `data` to `path`: a regular file already there is rewritten in place, a missing
/// one created; never through a symlink, and a directory, FIFO or device is refused.
///
/// # Errors
/// See [`rewrite`] and [`write_new`].
pub(crate) fn write_file(path: &Path, data: &[u8]) -> Result<(), SafeFsError> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => rewrite(path, data),
        Err(_) => write_new(path, data),
    }
}

/// Why [`overwrite_inside`] refused or failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InsideError {
    /// The relative path is empty or not normalised.
    #[error("cannot write `{rel}`: {why}")]
    BadPath {
        /// The relative path.
        rel: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The tree's root could not be opened as a directory.
    #[error("cannot write `{rel}`: cannot open the tree ({errno})")]
    Root {
        /// The relative path.
        rel: String,
        /// Why.
        errno: nix::Error,
    },
    /// A parent is not a real directory of the tree.
    #[error("cannot write `{rel}`: `{part}` is not a directory of the tree ({errno})")]
    Parent {
        /// The relative path.
        rel: String,
        /// The parent component.
        part: String,
        /// Why.
        errno: nix::Error,
    },
    /// The file could not be opened as an existing file of the tree.
    #[error("cannot write `{rel}`: not a regular file of the tree ({errno})")]
    Open {
        /// The relative path.
        rel: String,
        /// Why.
        errno: nix::Error,
    },
    /// What was opened is not a regular file.
    #[error("cannot write `{rel}`: not a regular file")]
    NotRegular {
        /// The relative path.
        rel: String,
    },
    /// `fstat`, truncating or writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes `text` over the regular file `rel` inside `root`, never through a symlink: each
/// parent is opened as a directory with `O_NOFOLLOW`, the file itself with `O_NOFOLLOW`
/// and `O_NONBLOCK` and without creating it, and it must be a regular file.
///
/// # Errors
/// See [`InsideError`].
pub(crate) fn overwrite_inside(root: &Path, rel: &str, text: &[u8]) -> Result<(), InsideError> {
    let bad = |why| InsideError::BadPath {
        rel: rel.to_string(),
        why,
    };
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, parents)) = parts.split_last() else {
        return Err(bad("empty path"));
    };
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(bad("not a normalised path"));
    }
    let dir_flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let mut dir = open(root, dir_flags, Mode::empty()).map_err(|errno| InsideError::Root {
        rel: rel.to_string(),
        errno,
    })?;
    for part in parents {
        dir =
            openat(&dir, *part, dir_flags, Mode::empty()).map_err(|errno| InsideError::Parent {
                rel: rel.to_string(),
                part: (*part).to_string(),
                errno,
            })?;
    }
    // O_NONBLOCK: opening a FIFO for writing must fail rather than wait for a reader.
    let file_flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(&dir, *name, file_flags, Mode::empty()).map_err(|errno| InsideError::Open {
        rel: rel.to_string(),
        errno,
    })?;
    let mut file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(InsideError::NotRegular {
            rel: rel.to_string(),
        });
    }
    file.set_len(0)?;
    file.write_all(text)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `f` on a thread and fails the test if it does not return within five seconds.
    fn without_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(f());
        });
        receive
            .recv_timeout(Duration::from_secs(5))
            .expect("the call blocked")
    }

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(read_capped(&path, 5).unwrap(), b"hello");
        assert_eq!(read_prefix_to_string(&path, 3).unwrap(), "hel");
        assert_eq!(read_prefix_to_string(&path, 10).unwrap(), "hello");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::S_IRWXU).unwrap();
        let path = fifo.clone();
        let err = without_blocking(move || read_capped(&path, 10).unwrap_err());
        assert!(
            matches!(
                err,
                SafeFsError::WrongKind {
                    kind: FileKind::Fifo,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().ends_with("it is a FIFO"), "{err}");
        let err = without_blocking(move || open_append(&fifo, 0o644).unwrap_err());
        assert!(err.open_error().is_some() || matches!(err, SafeFsError::WrongKind { .. }));
    }

    #[test]
    fn a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "secret").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = read_capped(&link, 100).unwrap_err();
        assert!(matches!(err, SafeFsError::Symlink { .. }), "{err}");
        assert!(err.to_string().ends_with("is a symbolic link"), "{err}");
        assert!(matches!(
            open_append(&link, 0o644).unwrap_err(),
            SafeFsError::Symlink { .. }
        ));
        assert!(matches!(
            rewrite(&link, b"x").unwrap_err(),
            SafeFsError::Symlink { .. }
        ));
        assert_eq!(std::fs::read(&target).unwrap(), b"secret");
    }

    #[test]
    fn a_directory_is_refused_as_a_file_and_opened_as_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), 100).unwrap_err();
        assert!(
            matches!(
                err,
                SafeFsError::WrongKind {
                    kind: FileKind::Directory,
                    ..
                }
            ),
            "{err}"
        );
        assert!(open_dir(dir.path()).is_ok());
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(open_dir(&file).is_err());
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, "0123456789").unwrap();
        let err = read_capped(&path, 9).unwrap_err();
        assert!(
            matches!(
                err,
                SafeFsError::TooLarge {
                    len: 10,
                    cap: 9,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(&dir.path().join("gone"), 9).unwrap_err();
        assert!(matches!(err, SafeFsError::NotFound { .. }), "{err}");
    }

    #[test]
    fn mutations_are_written_over_regular_files_only_never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/calc.py"), "old text, longer than the new").unwrap();
        overwrite_inside(&root, "src/calc.py", b"new").unwrap();
        assert_eq!(std::fs::read(root.join("src/calc.py")).unwrap(), b"new");
        // A symlinked file, a symlinked directory, a FIFO and a missing file are refused,
        // and nothing outside the tree changes.
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("calc.py"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.join("calc.py"), root.join("src/link.py")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("lib")).unwrap();
        nix::unistd::mkfifo(&root.join("src/fifo.py"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir_all(root.join("src/dir.py")).unwrap();
        for rel in [
            "src/link.py",
            "lib/calc.py",
            "src/fifo.py",
            "src/dir.py",
            "src/gone.py",
            "../outside/calc.py",
        ] {
            let err = overwrite_inside(&root, rel, b"x").unwrap_err();
            assert!(
                err.to_string().contains(&format!("cannot write `{rel}`")),
                "{err}"
            );
        }
        assert_eq!(std::fs::read(outside.join("calc.py")).unwrap(), b"outside");
        assert!(!root.join("src/gone.py").exists());
    }
}

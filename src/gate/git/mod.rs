//! The git reads and the few git writes the gate needs.
//!
//! Reads (commit checks, merge bases, trees, blobs, the diff between two commits) go
//! through libgit2 and spawn no process, so the judge runs without git on `PATH`. The diff
//! reproduces `git diff -M --name-status` (see the `diff` module). Worktrees are still
//! added and removed with the git command line, which runs with a clean `GIT_*`
//! environment so a caller's `GIT_DIR` or `GIT_WORK_TREE` cannot redirect it; libgit2
//! likewise ignores those variables, so both find the same repository.
//!
//! Paths are bytes until they leave this module; a path handed out as a `String` that is
//! not UTF-8 is an error naming it, never a lossy copy.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

mod diff;
mod error;

pub(crate) use error::GitError;
use error::{escape_path, utf8_path};

/// A repository on disk, opened on first use.
#[derive(Clone)]
pub struct Repo {
    dir: PathBuf,
    handle: Arc<Mutex<Option<git2::Repository>>>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo").field("dir", &self.dir).finish()
    }
}

/// Whether `sha` is a full lowercase hex object id.
pub(crate) fn is_full_sha(sha: &str) -> bool {
    sha.len() == 40
        && sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Repo {
    /// The repository at (or containing) `dir`.
    pub fn new(dir: &Path) -> Repo {
        Repo {
            dir: dir.to_path_buf(),
            handle: Arc::new(Mutex::new(None)),
        }
    }

    /// The directory git runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn escaped_dir(&self) -> String {
        escape_path(self.dir.as_os_str().as_bytes())
    }

    /// Runs `read` on the opened repository (opened here the first time).
    fn with<T>(
        &self,
        read: impl FnOnce(&git2::Repository) -> Result<T, GitError>,
    ) -> Result<T, GitError> {
        let mut slot = self.handle.lock().unwrap_or_else(PoisonError::into_inner);
        let repo = match slot.take() {
            Some(repo) => repo,
            // Like git run in `dir`: the repository there or in a parent directory, with no
            // environment variable consulted.
            None => git2::Repository::open_ext(
                &self.dir,
                git2::RepositoryOpenFlags::empty(),
                std::iter::empty::<&OsStr>(),
            )
            .map_err(|source| GitError::Open {
                dir: self.escaped_dir(),
                source,
            })?,
        };
        let out = read(&repo);
        *slot = Some(repo);
        out
    }

    /// The object `rev` names, peeled to a commit.
    fn find_commit<'r>(
        &self,
        repo: &'r git2::Repository,
        rev: &str,
    ) -> Result<git2::Commit<'r>, GitError> {
        repo.revparse_single(&format!("{rev}^{{commit}}"))
            .and_then(|object| object.peel_to_commit())
            .map_err(|_| GitError::UnknownRevision {
                rev: rev.to_string(),
                dir: self.escaped_dir(),
            })
    }

    /// The tree `rev` names (a commit's tree, or a tree).
    fn find_tree<'r>(
        &self,
        repo: &'r git2::Repository,
        rev: &str,
    ) -> Result<git2::Tree<'r>, GitError> {
        repo.revparse_single(rev)
            .and_then(|object| object.peel_to_tree())
            .map_err(|_| GitError::UnknownRevision {
                rev: rev.to_string(),
                dir: self.escaped_dir(),
            })
    }

    // The git command line stays for worktrees only: `git worktree add` checks files out
    // through the repository's filters and attributes and records the worktree the way
    // `git worktree remove` and `prune` expect, which libgit2's worktree support does not
    // match.
    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new("git");
        command
            .arg("-c")
            .arg("core.quotePath=false")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        for (name, _) in std::env::vars_os() {
            if name.as_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        command
    }

    fn run_os<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Vec<u8>, GitError> {
        let output = self.command(args).output().map_err(GitError::Spawn)?;
        if !output.status.success() {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a.as_ref().to_str() {
                    Some(text) => text.to_string(),
                    None => escape_path(a.as_ref().as_bytes()),
                })
                .collect();
            // git's own message, not a path: shown as text.
            return Err(GitError::Failed {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output.stdout)
    }

    /// Runs git and returns its stdout bytes.
    ///
    /// # Errors
    /// git cannot run or exits non-zero.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        self.run_os(args)
    }

    /// Resolves `rev` to a full commit id.
    ///
    /// # Errors
    /// No repository, or `rev` names no commit.
    pub fn resolve(&self, rev: &str) -> Result<String, GitError> {
        self.with(|repo| Ok(self.find_commit(repo, rev)?.id().to_string()))
    }

    /// Checks that `sha` is a full id naming a commit in this repository.
    ///
    /// # Errors
    /// An abbreviated id, or one that names no commit.
    pub fn commit(&self, sha: &str) -> Result<String, GitError> {
        if !is_full_sha(sha) {
            return Err(GitError::BadSha(sha.to_string()));
        }
        let resolved = self.resolve(sha)?;
        if resolved != sha {
            return Err(GitError::BadSha(sha.to_string()));
        }
        Ok(resolved)
    }

    /// The merge base of two commits.
    ///
    /// # Errors
    /// An unknown commit, or no common ancestor.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<String, GitError> {
        self.with(|repo| {
            let (ca, cb) = (self.find_commit(repo, a)?, self.find_commit(repo, b)?);
            match repo.merge_base(ca.id(), cb.id()) {
                Ok(id) => Ok(id.to_string()),
                Err(e) if e.code() == git2::ErrorCode::NotFound => Err(GitError::NoMergeBase {
                    a: a.to_string(),
                    b: b.to_string(),
                }),
                Err(source) => Err(GitError::Read {
                    what: format!("the merge base of `{a}` and `{b}`"),
                    source,
                }),
            }
        })
    }

    /// The changes from `base` to `head` as `git diff -M --name-status` lists them.
    ///
    /// # Errors
    /// An unknown commit, an unreadable object, or a changed path that is not UTF-8.
    pub fn name_status(&self, base: &str, head: &str) -> Result<Vec<Change>, GitError> {
        self.with(|repo| {
            let (old, new) = (self.find_tree(repo, base)?, self.find_tree(repo, head)?);
            let limit = rename_limit(repo);
            let mut changes = Vec::new();
            for raw in diff::diff_trees(repo, &old, &new, limit)? {
                changes.push(Change {
                    status: raw.status,
                    score: raw.score,
                    old: utf8_path(raw.old)?,
                    new: utf8_path(raw.new)?,
                });
            }
            Ok(changes)
        })
    }

    /// The paths of the files of `commit` and a reader of their text (lossy UTF-8; empty
    /// for a path that cannot be read): what detection and data selection look at.
    ///
    /// # Errors
    /// The commit's tree cannot be listed.
    pub fn files_and_text(
        &self,
        commit: &str,
    ) -> Result<(Vec<String>, impl Fn(&str) -> String + '_), GitError> {
        let files = self.ls_tree(commit)?.into_iter().map(|(p, _)| p).collect();
        let commit = commit.to_string();
        let read = move |path: &str| {
            self.blob(&commit, path)
                .ok()
                .flatten()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        Ok((files, read))
    }

    /// The bytes of `path` at `commit`, or `None` when it does not exist there (or the
    /// commit does not, or the path is a submodule whose commit is not here).
    ///
    /// # Errors
    /// The path is a directory, or an object cannot be read.
    pub fn blob(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        self.with(|repo| {
            let Ok(tree) = self.find_tree(repo, commit) else {
                return Ok(None);
            };
            let read = |source| GitError::Read {
                what: format!("`{path}` at `{commit}`"),
                source,
            };
            let entry = match tree.get_path(Path::new(OsStr::from_bytes(path.as_bytes()))) {
                Ok(entry) => entry,
                Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
                Err(source) => return Err(read(source)),
            };
            let object = match entry.to_object(repo) {
                Ok(object) => object,
                Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
                Err(source) => return Err(read(source)),
            };
            match object.into_blob() {
                Ok(blob) => Ok(Some(blob.content().to_vec())),
                Err(_) => Err(GitError::NotABlob {
                    commit: commit.to_string(),
                    path: path.to_string(),
                }),
            }
        })
    }

    /// Every file path in `commit`'s tree with its mode (`100644`, `100755`, `120000`,
    /// `160000`), in git's tree order.
    ///
    /// # Errors
    /// An unknown commit, an unreadable tree, or a path that is not UTF-8.
    pub fn ls_tree(&self, commit: &str) -> Result<Vec<(String, String)>, GitError> {
        self.with(|repo| {
            let tree = self.find_tree(repo, commit)?;
            let mut files = Vec::new();
            for (path, mode) in list_files(repo, &tree, &[])? {
                files.push((utf8_path(path)?, format!("{mode:06o}")));
            }
            Ok(files)
        })
    }

    /// Adds a detached worktree of `commit` at `dir`.
    ///
    /// # Errors
    /// git fails.
    pub fn add_worktree(&self, dir: &Path, commit: &str) -> Result<(), GitError> {
        let args: [&OsStr; 5] = [
            "worktree".as_ref(),
            "add".as_ref(),
            "--detach".as_ref(),
            "--force".as_ref(),
            dir.as_os_str(),
        ];
        let mut args: Vec<OsString> = args.iter().map(|a| a.to_os_string()).collect();
        args.push(commit.into());
        self.run_os(&args)?;
        Ok(())
    }

    /// Removes a worktree added with [`Repo::add_worktree`], and its directory.
    pub fn remove_worktree(&self, dir: &Path) {
        let remove: [&OsStr; 5] = [
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            "--force".as_ref(),
            dir.as_os_str(),
        ];
        let _ = self.run_os(&remove);
        let _ = crate::workspace::remove_any(dir);
        self.prune_worktrees();
    }

    /// Forgets the worktrees whose directory is gone (`git worktree prune`): those of a
    /// side that was killed, once the sweep of scratch directories has removed its own
    /// (see `crate::scratch`). A worktree whose directory exists, as a running side's does,
    /// and a locked one (`git worktree add` locks it while it populates it) are kept.
    pub fn prune_worktrees(&self) {
        let _ = self.run_os(&["worktree", "prune"]);
    }
}

/// `diff.renameLimit` as git reads it (`None`: no limit), 1000 when unset.
fn rename_limit(repo: &git2::Repository) -> Option<u64> {
    let configured = repo
        .config()
        .and_then(|config| config.get_i64("diff.renameLimit"))
        .ok();
    match configured {
        None => Some(diff::DEFAULT_RENAME_LIMIT),
        Some(n) => u64::try_from(n).ok().filter(|n| *n > 0),
    }
}

/// Every non-directory entry under `tree` with its mode, recursively, in tree order.
fn list_files(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    prefix: &[u8],
) -> Result<Vec<(Vec<u8>, u32)>, GitError> {
    let mut files = Vec::new();
    for entry in tree.iter() {
        let path = [prefix, entry.name_bytes()].concat();
        let mode = u32::try_from(entry.filemode()).unwrap_or(0);
        if entry.kind() == Some(git2::ObjectType::Tree) {
            let sub = repo
                .find_tree(entry.id())
                .map_err(|source| GitError::Read {
                    what: format!("the tree `{}`", escape_path(&path)),
                    source,
                })?;
            files.extend(list_files(repo, &sub, &[&path[..], b"/"].concat())?);
        } else {
            files.push((path, mode));
        }
    }
    Ok(files)
}

/// One entry of `git diff --name-status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The status letter: A, M, D, T, R or C.
    pub status: char,
    /// Similarity for renames and copies (100 for an exact rename).
    pub score: u32,
    /// The old path (renames and copies), else the path.
    pub old: String,
    /// The new path.
    pub new: String,
}

#[cfg(test)]
/// Parses NUL-separated `--name-status -z` output.
pub(crate) fn parse_name_status(out: &[u8]) -> Option<Vec<Change>> {
    let fields: Vec<String> = out
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).to_string())
        .collect();
    let mut changes = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let code = &fields[i];
        if code.is_empty() {
            i += 1;
            continue;
        }
        let status = code.chars().next()?;
        let score = code[1..].parse().unwrap_or(0);
        match status {
            'R' | 'C' => {
                let old = fields.get(i + 1)?.clone();
                let new = fields.get(i + 2)?.clone();
                changes.push(Change {
                    status,
                    score,
                    old,
                    new,
                });
                i += 3;
            }
            'A' | 'M' | 'D' | 'T' => {
                let path = fields.get(i + 1)?.clone();
                changes.push(Change {
                    status,
                    score: 0,
                    old: path.clone(),
                    new: path,
                });
                i += 2;
            }
            _ => return None,
        }
    }
    Some(changes)
}

#[cfg(test)]
mod tests;

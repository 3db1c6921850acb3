//! The few git operations the gate needs, through the git command line.
//!
//! Every call runs `git -c core.quotePath=false` with a clean `GIT_*` environment, so a
//! caller's `GIT_DIR` or `GIT_WORK_TREE` cannot redirect it, and reads paths NUL-separated
//! where git offers it, so no path is ever quoted or split on whitespace.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod error;

pub use error::GitError;

/// A repository on disk.
#[derive(Clone, Debug)]
pub struct Repo {
    dir: PathBuf,
}

/// Whether `sha` is a full lowercase hex object id.
pub fn is_full_sha(sha: &str) -> bool {
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
        }
    }

    /// The directory git runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        command
            .arg("-c")
            .arg("core.quotePath=false")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(name);
            }
        }
        command
    }

    /// Runs git and returns its stdout bytes.
    ///
    /// # Errors
    /// git cannot run or exits non-zero.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let output = self.command(args).output().map_err(GitError::Spawn)?;
        if !output.status.success() {
            return Err(GitError::Failed {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output.stdout)
    }

    /// Resolves `rev` to a full commit id.
    ///
    /// # Errors
    /// An unknown revision.
    pub fn resolve(&self, rev: &str) -> Result<String, GitError> {
        let out = self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])?;
        let sha = String::from_utf8_lossy(&out).trim().to_string();
        if is_full_sha(&sha) {
            Ok(sha)
        } else {
            Err(GitError::BadSha(sha))
        }
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
    /// git fails (no common ancestor).
    pub fn merge_base(&self, a: &str, b: &str) -> Result<String, GitError> {
        let out = self.run(&["merge-base", a, b])?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// `git diff -M --name-status -z base head`, parsed into entries.
    ///
    /// # Errors
    /// git fails or prints something unexpected.
    pub fn name_status(&self, base: &str, head: &str) -> Result<Vec<Change>, GitError> {
        let out = self.run(&[
            "diff",
            "-M",
            "--name-status",
            "-z",
            "--no-ext-diff",
            base,
            head,
            "--",
        ])?;
        parse_name_status(&out).ok_or_else(|| GitError::Parse("diff --name-status".into()))
    }

    /// The bytes of `path` at `commit`, or `None` when it does not exist there.
    ///
    /// # Errors
    /// git fails for another reason.
    pub fn blob(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let spec = format!("{commit}:{path}");
        let check = self
            .command(&["cat-file", "-e", &spec])
            .stderr(Stdio::null())
            .status()
            .map_err(GitError::Spawn)?;
        if !check.success() {
            return Ok(None);
        }
        self.run(&["cat-file", "blob", &spec]).map(Some)
    }

    /// Every file path in `commit`'s tree with its mode (`100644`, `100755`, `120000`).
    ///
    /// # Errors
    /// git fails.
    pub fn ls_tree(&self, commit: &str) -> Result<Vec<(String, String)>, GitError> {
        let out = self.run(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
        let mut files = Vec::new();
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let text = String::from_utf8_lossy(record);
            let (meta, path) = text
                .split_once('\t')
                .ok_or_else(|| GitError::Parse("ls-tree".into()))?;
            let mode = meta.split(' ').next().unwrap_or("").to_string();
            files.push((path.to_string(), mode));
        }
        Ok(files)
    }

    /// Adds a detached worktree of `commit` at `dir`.
    ///
    /// # Errors
    /// git fails.
    pub fn add_worktree(&self, dir: &Path, commit: &str) -> Result<(), GitError> {
        let path = dir.display().to_string();
        self.run(&["worktree", "add", "--detach", "--force", &path, commit])?;
        Ok(())
    }

    /// Removes a worktree added with [`Repo::add_worktree`], and its directory.
    pub fn remove_worktree(&self, dir: &Path) {
        let path = dir.display().to_string();
        let _ = self.run(&["worktree", "remove", "--force", "--force", &path]);
        let _ = crate::workspace::remove_any(dir);
        let _ = self.run(&["worktree", "prune"]);
    }
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

/// Parses NUL-separated `--name-status -z` output.
pub fn parse_name_status(out: &[u8]) -> Option<Vec<Change>> {
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

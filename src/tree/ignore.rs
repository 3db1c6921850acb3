//! The ignore rules of a scan: built-in generated directory names, exact basenames, exact
//! relative paths, gitignore-style rule files (through the `ignore` crate's matcher) and
//! keep paths, which win over every ignore rule.

use std::path::{Path, PathBuf};

use super::error::TreeError;

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
pub(super) struct Matcher {
    pub(super) names: Vec<String>,
    pub(super) paths: Vec<String>,
    pub(super) keep: Vec<String>,
    /// (scope relative to the root, matcher), top-level rule files first.
    pub(super) gitignores: Vec<(String, ignore::gitignore::Gitignore)>,
    pub(super) recursive: bool,
}

pub(super) fn build_gitignore(
    scope: &Path,
    file: &Path,
) -> Result<ignore::gitignore::Gitignore, TreeError> {
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
    pub(super) fn new(root: &Path, rules: &IgnoreRules) -> Result<Matcher, TreeError> {
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

    pub(super) fn ignored(&self, root: &Path, rel: &str, is_dir: bool) -> bool {
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

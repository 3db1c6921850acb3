//! Zero-config defaults: what a repository without `.github/repromin.json` runs, decided
//! from the merge base's files alone (never the head's, so a pull request cannot choose).
//!
//! Each ecosystem is one function that returns a [`Detection`]: the configuration plus
//! notes that say, for the step summary, which runner was chosen and why and what is
//! installed. Go needs nothing more than its manifest, Rust its manifests ([`rust`]),
//! Java its build tool's file ([`java`]); Python reads its project
//! files for the test dependencies ([`python`]) and Node reads the test files' imports and
//! the manifest for the runner ([`node`]). A Node workspace ([`workspace`]) is kept with
//! the detection: the plan chooses its build step once the selected tests are known.
//! Cargo and Go workspaces need no build step: their test commands build what a test
//! depends on.

mod detection;
pub(crate) mod imports;
mod java;
mod node;
pub(crate) mod pnpm_workspace;
mod python;
mod rust;
pub(crate) mod workspace;

pub(crate) use detection::{Detection, Read};

use crate::gate::config::{
    CONFIG_PATH, ConfigError, Origin, RepoConfig, ReportFormat, Unsupported,
};
use crate::gate::git::Repo;
use detection::config;

/// A configuration as [`load`] found it: where it came from and, when detected in a Node
/// workspace, the workspace, from which the plan chooses the build step.
pub(crate) struct Loaded {
    /// The configuration.
    pub config: RepoConfig,
    /// Where it came from.
    pub origin: Origin,
    /// The merge base's Node workspace, when the configuration was detected in one.
    pub workspace: Option<workspace::Workspace>,
}

/// Reads the merge base's configuration, or detects defaults there.
///
/// # Errors
/// A malformed configuration, or nothing to detect.
pub(crate) fn load(repo: &Repo, base: &str) -> Result<Loaded, ConfigError> {
    if let Some(bytes) = repo.blob(base, CONFIG_PATH)? {
        let text = String::from_utf8_lossy(&bytes);
        let origin = format!("{CONFIG_PATH} at the merge base");
        return Ok(Loaded {
            config: RepoConfig::parse(&text, &origin)?,
            origin: Origin::MergeBase,
            workspace: None,
        });
    }
    let (files, read) = repo.files_and_text(base)?;
    let found = detect(&files, &read)?.ok_or(ConfigError::NothingDetected)?;
    let origin = Origin::Detected {
        ecosystem: found.ecosystem.to_string(),
        notes: found.notes,
    };
    Ok(Loaded {
        config: found.config,
        origin,
        workspace: found.workspace,
    })
}

/// Detects the configuration from the file list of a commit: `None` when no ecosystem is
/// recognised.
///
/// # Errors
/// A recognised project whose test runner has no zero-config support.
pub(crate) fn detect(files: &[String], read: Read<'_>) -> Result<Option<Detection>, Unsupported> {
    let has = |name: &str| files.iter().any(|f| f == name);
    if has("Cargo.toml") {
        return Ok(Some(rust::detect(files)));
    }
    if has("package.json") {
        return node::detect(files, read).map(Some);
    }
    if has("go.mod") {
        let config = config(
            &["**/*_test.go"],
            &["**/testdata/**"],
            &["go mod download"],
            "go test -count=1 -json {packages}",
            ReportFormat::GoTestJson,
        );
        return Ok(Some(Detection {
            config,
            ecosystem: "go",
            notes: vec!["go.mod: go test -json (-count=1: never a cached result)".into()],
            workspace: None,
        }));
    }
    if let Some(found) = java::detect(files, read) {
        return Ok(Some(found));
    }
    Ok(python::detect(files, read))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_string()).collect()
    }

    /// A reader of the given (path, contents) pairs; other paths read empty.
    pub(super) fn reader<'a>(contents: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> String + 'a {
        move |path: &str| {
            contents
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, t)| (*t).to_string())
                .unwrap_or_default()
        }
    }

    #[test]
    fn rust_and_go_are_detected_by_their_manifest() {
        let none = |_: &str| String::new();
        let found = detect(&files(&["Cargo.toml", "src/lib.rs"]), &none)
            .unwrap()
            .unwrap();
        assert_eq!(found.ecosystem, "rust");
        assert_eq!(found.config.report, ReportFormat::Cargo);
        let found = detect(&files(&["go.mod"]), &none).unwrap().unwrap();
        assert_eq!(found.config.report, ReportFormat::GoTestJson);
        assert!(detect(&files(&["README.md"]), &none).unwrap().is_none());
    }
}

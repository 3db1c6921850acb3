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

pub(crate) mod imports;
mod java;
mod node;
pub(crate) mod pnpm_workspace;
mod python;
mod rust;
pub(crate) mod workspace;

use crate::gate::config::{DEFAULT_MEMORY_MB, RepoConfig, ReportFormat, Timeouts};

/// A detected configuration and why it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Detection {
    /// The configuration.
    pub config: RepoConfig,
    /// The ecosystem's name: `rust`, `node`, `go`, `java` or `python`.
    pub ecosystem: &'static str,
    /// What was chosen and the evidence for it, one sentence each.
    pub notes: Vec<String>,
    /// A Node workspace: its packages, from which the build step is chosen once the
    /// selected tests are known ([`workspace::Workspace::builds`]).
    pub workspace: Option<workspace::Workspace>,
}

/// Why nothing could be detected for a project that was recognised.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{ecosystem} project: {reason}; give the commands in .github/repromin.json")]
pub struct Unsupported {
    /// The ecosystem.
    pub ecosystem: &'static str,
    /// What is missing.
    pub reason: String,
}

/// Reads a file of the merge base as text (empty when missing).
pub(crate) type Read<'a> = &'a dyn Fn(&str) -> String;

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

/// A configuration with default timeouts and no build step.
fn config(
    tests: &[&str],
    carry: &[&str],
    install: &[&str],
    command: &str,
    report: ReportFormat,
) -> RepoConfig {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect();
    RepoConfig {
        version: 1,
        tests: strings(tests),
        carry: strings(carry),
        runtime: Vec::new(),
        install: strings(install),
        build: None,
        command: command.to_string(),
        report,
        timeouts: Timeouts::default(),
        memory_mb: DEFAULT_MEMORY_MB,
        container: None,
        flaky: crate::gate::config::FlakyConfig::default(),
        regressions: None,
    }
}

/// `text` as one shell word: as it is when it holds only characters the shell reads
/// literally, else in single quotes.
pub(crate) fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,/=:@+%".contains(&b))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
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

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("pytest>=7"), "'pytest>=7'");
        assert_eq!(shell_quote("freezegun"), "freezegun");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("x'y"), "'x'\\''y'");
        assert_eq!(
            shell_quote("pkg; python_version<'3.9'"),
            "'pkg; python_version<'\\''3.9'\\'''"
        );
        assert_eq!(shell_quote(""), "''");
    }
}

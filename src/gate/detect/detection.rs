//! What every ecosystem's detection returns, and the configuration they start from.

use super::workspace;
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

/// Reads a file of the merge base as text (empty when missing).
pub(crate) type Read<'a> = &'a dyn Fn(&str) -> String;

/// A configuration with default timeouts and no build step.
pub(super) fn config(
    tests: &[&str],
    carry: &[&str],
    install: &[&str],
    command: &str,
    report: ReportFormat,
) -> RepoConfig {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect();
    RepoConfig {
        schema: None,
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
        sandbox: crate::gate::config::SandboxConfig::default(),
    }
}

//! The repository's gate configuration: `.github/repromin.json`, or defaults detected from
//! the merge base's files.
//!
//! Schema v1 is strict: an unknown or duplicate key, a wrong type or a missing required key
//! is an error naming it. The file is read from the merge base only; an edit of it at head
//! is reported (`configEdited`) and changes nothing, so a pull request cannot choose what
//! the gate runs.

use globset::{GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::gate::git::GitError;

/// Where the configuration lives in a repository.
pub(crate) const CONFIG_PATH: &str = ".github/repromin.json";

/// An error in a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The JSON is malformed or does not fit the schema.
    #[error("invalid {origin}: {message}")]
    Invalid {
        /// Which file.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// git failed while reading it.
    #[error(transparent)]
    Git(#[from] GitError),
    /// Nothing to detect defaults from.
    #[error(
        "no {CONFIG_PATH} at the merge base, and no Python, Node, Rust, Go or Java project was detected there"
    )]
    NothingDetected,
    /// A project was recognised, but its test runner has no zero-config support.
    #[error("no {CONFIG_PATH} at the merge base, and {0}")]
    Unsupported(#[from] Unsupported),
    /// A test, carried file or data file is a symlink that leaves the tree: what runs
    /// would not come from the commits.
    #[error(
        "`{path}` is a symbolic link to `{target}`, which leaves the repository {place}; every test, carried file and data file must come from the commits"
    )]
    LinkLeavesTree {
        /// The link.
        path: String,
        /// Its target (escaped).
        target: String,
        /// Where it leaves: at head, or on the merge base with the tests laid over it.
        place: &'static str,
    },
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

/// The format of the report a test command writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportFormat {
    /// JUnit XML (pytest, vitest, jest-junit, nextest, Surefire, gotestsum).
    Junit,
    /// vitest's JSON reporter.
    VitestJson,
    /// jest's `--json`.
    JestJson,
    /// libtest's plain text output (stable `cargo test`).
    Libtest,
    /// `go test -json`.
    GoTestJson,
    /// node:test through repromin's reporter (`--test-reporter={node_reporter}`).
    NodeTest,
    /// Cargo's tests: cargo-nextest's JUnit, written through `{nextest_config}`, or, when
    /// the run wrote none (plain `cargo test` ran, or the build failed), the output read as
    /// libtest text.
    Cargo,
}

impl ReportFormat {
    /// Every format with its configuration name (the `report` value).
    const NAMES: [(ReportFormat, &'static str); 7] = [
        (ReportFormat::Junit, "junit"),
        (ReportFormat::VitestJson, "vitest-json"),
        (ReportFormat::JestJson, "jest-json"),
        (ReportFormat::Libtest, "libtest"),
        (ReportFormat::GoTestJson, "go-test-json"),
        (ReportFormat::NodeTest, "node-test"),
        (ReportFormat::Cargo, "cargo"),
    ];

    /// The configuration name: `junit`, `libtest`, ….
    #[must_use]
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(format, _)| *format == self)
            .map_or("", |(_, name)| name)
    }

    /// The format of a configuration name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(format, _)| *format)
    }
}

/// The longest a timeout may be, in seconds: 720 hours, the bound of the command line's
/// durations. Longer ones cannot be added to a clock or written in milliseconds safely.
pub(crate) const MAX_TIMEOUT_SECS: u64 = 720 * 3600;

/// Per-step time limits in seconds, each from 1 to [`MAX_TIMEOUT_SECS`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    /// Each install command.
    #[serde(default = "default_install")]
    pub install: u64,
    /// The build command.
    #[serde(default = "default_build")]
    pub build: u64,
    /// Each test run.
    #[serde(default = "default_test")]
    pub test: u64,
}

fn default_install() -> u64 {
    900
}
fn default_build() -> u64 {
    900
}
fn default_test() -> u64 {
    300
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            install: default_install(),
            build: default_build(),
            test: default_test(),
        }
    }
}

/// Schema v1 of `.github/repromin.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    /// The JSON Schema the file names for editors (`$schema`), e.g.
    /// `schemas/repo-config.schema.json`; repromin itself does not read it.
    #[serde(rename = "$schema", default, skip_serializing)]
    pub schema: Option<String>,
    /// Always 1.
    pub version: u32,
    /// Globs of test files: a changed file matching one is a test to run.
    pub tests: Vec<String>,
    /// Globs of support files carried with the tests onto the base (fixtures, conftest).
    #[serde(default)]
    pub carry: Vec<String>,
    /// Globs of carried files that also count as source (they change runtime behaviour).
    #[serde(default)]
    pub runtime: Vec<String>,
    /// Shell commands run in order before anything of the head lands on the base.
    #[serde(default)]
    pub install: Vec<String>,
    /// A shell command run after install.
    #[serde(default)]
    pub build: Option<String>,
    /// The test command template: `{tests}`, `{report}`, `{test_targets}`, `{packages}`,
    /// `{node_reporter}`, `{nextest_config}`.
    pub command: String,
    /// The format of the report.
    pub report: ReportFormat,
    /// Time limits.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// The most memory (data, in MiB) one test run may allocate: a run stopped by it fails
    /// the tests of its file on that side.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// Run the install, build and test commands in a container of this image (see
    /// docs/containers.md); on the host when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<ContainerConfig>,
    /// How tests that look like they reproduce are rerun to rule out chance.
    #[serde(default)]
    pub flaky: FlakyConfig,
    /// Run the suite (or the part of it these globs name) on both sides too, and list the
    /// tests that pass on the merge base and fail on head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regressions: Option<RegressionsConfig>,
    /// What a run in the sandbox (`--sandbox-user`) may reach beyond its own directories.
    #[serde(default, skip_serializing_if = "SandboxConfig::is_default")]
    pub sandbox: SandboxConfig,
}

/// The `sandbox` key: what the sandbox lets a run reach.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// Keep the host's network: sandboxed runs otherwise have a loopback interface of
    /// their own and nothing else.
    #[serde(default)]
    pub network: bool,
}

impl SandboxConfig {
    fn is_default(&self) -> bool {
        *self == SandboxConfig::default()
    }
}

/// The `regressions` key: which tests to run on both sides, and what a regression does to
/// the verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegressionsConfig {
    /// Globs of the test files to run; empty (the default) is the `tests` globs: every test
    /// file of the head.
    #[serde(default)]
    pub tests: Vec<String>,
    /// Whether a test that passes on the merge base and fails on head makes the verdict
    /// `error` (otherwise the verdict stays what the selected tests call for).
    #[serde(default)]
    pub error: bool,
}

/// The `flaky` key: the error rate of the reruns' test and their caps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlakyConfig {
    /// The largest chance, per pull request, that a test whose outcome does not depend on
    /// the change is called reproducing; from 0.000001 to 0.5.
    #[serde(default = "default_error_rate")]
    pub error_rate: f64,
    /// The most reruns of the candidates on each side, from 1 to 64.
    #[serde(default = "default_max_reruns")]
    pub max_reruns: u64,
    /// The most seconds each side spends on reruns (a rerun under way finishes).
    #[serde(default = "default_max_rerun_seconds")]
    pub max_rerun_seconds: u64,
    /// The time limit of a rerun of a file whose two base runs both timed out, in seconds
    /// (at most `timeouts.test`).
    #[serde(default = "default_hang_rerun_seconds")]
    pub hang_rerun_seconds: u64,
}

/// The default error rate of the reruns' test: 1 % per pull request.
pub(crate) const DEFAULT_ERROR_RATE: f64 = 0.01;

fn default_error_rate() -> f64 {
    DEFAULT_ERROR_RATE
}
fn default_max_reruns() -> u64 {
    10
}
fn default_max_rerun_seconds() -> u64 {
    600
}
fn default_hang_rerun_seconds() -> u64 {
    60
}

impl Default for FlakyConfig {
    fn default() -> Self {
        FlakyConfig {
            error_rate: default_error_rate(),
            max_reruns: default_max_reruns(),
            max_rerun_seconds: default_max_rerun_seconds(),
            hang_rerun_seconds: default_hang_rerun_seconds(),
        }
    }
}

impl Eq for FlakyConfig {}

/// The `container` key: the image the sides run their commands in, and its limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerConfig {
    /// An image reference that the machine running the sides has in its local image store
    /// (it is never pulled).
    pub image: String,
    /// Give the containers a network (an install that downloads needs one).
    #[serde(default)]
    pub network: bool,
    /// The most processes a container may run.
    #[serde(default = "default_pids_limit")]
    pub pids_limit: u32,
    /// The size of the containers' `/tmp` (a tmpfs, also their `HOME`), in MiB.
    #[serde(default = "default_tmpfs_mb")]
    pub tmpfs_mb: u64,
}

fn default_pids_limit() -> u32 {
    crate::container::DEFAULT_PIDS_LIMIT
}

fn default_tmpfs_mb() -> u64 {
    1024
}

impl RepoConfig {
    /// The container runner the configuration asks for, run by `cli`: its memory limit is
    /// `memory_mb`, swap included.
    #[must_use]
    pub fn container_options(
        &self,
        cli: crate::container::ContainerCli,
    ) -> Option<crate::container::ContainerOptions> {
        let c = self.container.as_ref()?;
        Some(crate::container::ContainerOptions {
            network: c.network,
            pids_limit: c.pids_limit,
            tmpfs_bytes: c.tmpfs_mb.saturating_mul(1024 * 1024),
            memory_bytes: Some(self.memory_mb.saturating_mul(1024 * 1024)),
            ..crate::container::ContainerOptions::new(cli, c.image.clone())
        })
    }
}

/// The smallest memory limit of a test run, in MiB (less starts no interpreter).
pub(crate) const MIN_MEMORY_MB: u64 = 64;
/// The largest memory limit of a test run, in MiB (1 TiB).
pub(crate) const MAX_MEMORY_MB: u64 = 1 << 20;

/// The default memory limit of a test run, in MiB.
pub(crate) const DEFAULT_MEMORY_MB: u64 = 4096;

fn default_memory_mb() -> u64 {
    DEFAULT_MEMORY_MB
}

/// Compiled globs of a configuration.
#[derive(Clone, Debug)]
pub struct Globs {
    tests: GlobSet,
    carry: GlobSet,
    runtime: GlobSet,
}

fn globset(origin: &str, key: &str, patterns: &[String]) -> Result<GlobSet, ConfigError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| ConfigError::Invalid {
                origin: origin.to_string(),
                message: format!("bad glob `{pattern}` in `{key}`: {err}"),
            })?;
        builder.add(glob);
    }
    builder.build().map_err(|err| ConfigError::Invalid {
        origin: origin.to_string(),
        message: err.to_string(),
    })
}

impl RepoConfig {
    /// Parses and checks a configuration.
    ///
    /// # Errors
    /// Malformed JSON, unknown or duplicate keys, wrong types, another version, an empty
    /// command or test glob list, bad globs.
    pub fn parse(text: &str, origin: &str) -> Result<RepoConfig, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            origin: origin.to_string(),
            message,
        };
        let config: RepoConfig = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if config.version != 1 {
            return Err(invalid(format!(
                "`version` is {}, and only version 1 is supported",
                config.version
            )));
        }
        if config.tests.is_empty() {
            return Err(invalid("`tests` must list at least one glob".into()));
        }
        if config.command.trim().is_empty() {
            return Err(invalid("`command` is empty".into()));
        }
        let t = &config.timeouts;
        for (key, secs) in [("install", t.install), ("build", t.build), ("test", t.test)] {
            if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
                return Err(invalid(format!(
                    "`timeouts.{key}` is {secs}: a timeout is from 1 to {MAX_TIMEOUT_SECS} seconds (720 hours)"
                )));
            }
        }
        if !(MIN_MEMORY_MB..=MAX_MEMORY_MB).contains(&config.memory_mb) {
            return Err(invalid(format!(
                "`memory_mb` is {}: a memory limit is from {MIN_MEMORY_MB} to {MAX_MEMORY_MB} MiB",
                config.memory_mb
            )));
        }
        if let Some(options) = config.container_options(crate::container::ContainerCli::Docker) {
            options
                .validate()
                .map_err(|e| invalid(format!("`container`: {e}")))?;
            if options.tmpfs_bytes > 1 << 40 {
                return Err(invalid("`container.tmpfs_mb` is over 1 TiB".into()));
            }
        }
        let f = &config.flaky;
        if !(1e-6..=0.5).contains(&f.error_rate) {
            return Err(invalid(format!(
                "`flaky.error_rate` is {}: an error rate is from 0.000001 to 0.5",
                f.error_rate
            )));
        }
        if !(1..=crate::stats::flake::MAX_PLANNED_RERUNS).contains(&f.max_reruns) {
            return Err(invalid(format!(
                "`flaky.max_reruns` is {}: from 1 to {}",
                f.max_reruns,
                crate::stats::flake::MAX_PLANNED_RERUNS
            )));
        }
        for (key, secs) in [
            ("max_rerun_seconds", f.max_rerun_seconds),
            ("hang_rerun_seconds", f.hang_rerun_seconds),
        ] {
            if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
                return Err(invalid(format!(
                    "`flaky.{key}` is {secs}: from 1 to {MAX_TIMEOUT_SECS} seconds (720 hours)"
                )));
            }
        }
        if let Some(r) = &config.regressions {
            globset(origin, "regressions.tests", &r.tests)?;
        }
        config.globs(origin)?;
        Ok(config)
    }

    /// Compiles the globs.
    ///
    /// # Errors
    /// A bad glob.
    pub fn globs(&self, origin: &str) -> Result<Globs, ConfigError> {
        Ok(Globs {
            tests: globset(origin, "tests", &self.tests)?,
            carry: globset(origin, "carry", &self.carry)?,
            runtime: globset(origin, "runtime", &self.runtime)?,
        })
    }
}

impl RepoConfig {
    /// Whether a test file is in the suite that `regressions` runs on both sides.
    ///
    /// # Errors
    /// A bad glob.
    pub fn suite_globs(&self, origin: &str) -> Result<GlobSet, ConfigError> {
        match self.regressions.as_ref().filter(|r| !r.tests.is_empty()) {
            Some(r) => globset(origin, "regressions.tests", &r.tests),
            None => globset(origin, "tests", &self.tests),
        }
    }
}

impl Globs {
    /// A test file.
    pub fn is_test(&self, path: &str) -> bool {
        self.tests.is_match(path)
    }
    /// A carried support file.
    pub fn is_carry(&self, path: &str) -> bool {
        self.carry.is_match(path) || self.runtime.is_match(path)
    }
    /// A carried file that also counts as source.
    pub fn is_runtime(&self, path: &str) -> bool {
        self.runtime.is_match(path)
    }
}

/// Where a configuration came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Origin {
    /// `.github/repromin.json` at the merge base.
    MergeBase,
    /// Detected from the merge base's files.
    Detected {
        /// The ecosystem's name.
        ecosystem: String,
        /// What was chosen and why, one sentence each.
        notes: Vec<String>,
    },
    /// A file given on the command line (local runs only).
    Local(String),
}

impl Origin {
    /// One line for people: where the configuration came from and, when detected, what
    /// was chosen and why.
    pub fn describe(&self) -> String {
        match self {
            Origin::MergeBase => format!("{CONFIG_PATH} at the merge base"),
            Origin::Detected { ecosystem, notes } => {
                format!(
                    "detected {ecosystem} at the merge base: {}",
                    notes.join("; ")
                )
            }
            Origin::Local(path) => format!("{path}, given with --config"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::ContainerCli;

    const GOOD: &str = r#"{"version":1,"tests":["tests/**/*.py"],"command":"pytest --junitxml={report} {tests}","report":"junit"}"#;

    #[test]
    fn format_names_are_the_configuration_values() {
        for (format, name) in ReportFormat::NAMES {
            let json = serde_json::to_value(format).unwrap();
            assert_eq!(json, serde_json::Value::String(name.to_string()));
            assert_eq!(ReportFormat::from_name(name), Some(format));
            assert_eq!(format.name(), name);
        }
        assert_eq!(ReportFormat::from_name("xunit"), None);
    }

    #[test]
    fn a_minimal_config_parses_with_defaults() {
        let c = RepoConfig::parse(GOOD, "test").unwrap();
        assert_eq!(c.timeouts, Timeouts::default());
        let fields = GOOD.strip_suffix('}').unwrap_or(GOOD);
        let longest = format!(r#"{fields},"timeouts":{{"install":2592000,"build":1}}}}"#);
        let t = RepoConfig::parse(&longest, "test").unwrap().timeouts;
        assert_eq!((t.install, t.build, t.test), (MAX_TIMEOUT_SECS, 1, 300));
        let g = c.globs("test").unwrap();
        assert!(g.is_test("tests/a/test_x.py"));
        assert!(!g.is_test("src/tests.py"));
        assert!(c.container_options(ContainerCli::Docker).is_none());
        let boxed = format!(r#"{fields},"memory_mb":512,"container":{{"image":"app:1"}}}}"#);
        let c = RepoConfig::parse(&boxed, "test").unwrap();
        let o = c.container_options(ContainerCli::Podman).unwrap();
        assert_eq!((o.cli, o.image.as_str()), (ContainerCli::Podman, "app:1"));
        assert_eq!((o.network, o.pids_limit), (false, 512));
        assert_eq!(o.tmpfs_bytes, 1024 * 1024 * 1024);
        assert_eq!(o.memory_bytes, Some(512 * 1024 * 1024));
    }

    #[test]
    fn a_schema_key_is_accepted_and_changes_nothing() {
        let fields = GOOD.strip_prefix('{').unwrap_or(GOOD);
        let named = format!(
            r#"{{"$schema":"https://raw.githubusercontent.com/repromin/repromin/main/schemas/repo-config.schema.json",{fields}"#
        );
        let c = RepoConfig::parse(&named, "test").unwrap();
        assert_eq!(
            c.schema.as_deref(),
            Some(
                "https://raw.githubusercontent.com/repromin/repromin/main/schemas/repo-config.schema.json"
            )
        );
        let plain = RepoConfig::parse(GOOD, "test").unwrap();
        assert_eq!(RepoConfig { schema: None, ..c }, plain);
        // Written back, the configuration has no `$schema`: it is the file's, not the gate's.
        let written = serde_json::to_string(&plain).unwrap();
        assert!(!written.contains("$schema"), "{written}");
    }

    #[test]
    fn unknown_duplicate_and_mistyped_keys_are_refused() {
        let cases = [
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","extra":1}"#,
                "unknown field `extra`",
            ),
            (
                r#"{"version":1,"tests":["t"],"tests":["u"],"command":"c","report":"junit"}"#,
                "duplicate field `tests`",
            ),
            (
                r#"{"version":1,"tests":"t","command":"c","report":"junit"}"#,
                "invalid type",
            ),
            (
                r#"{"version":2,"tests":["t"],"command":"c","report":"junit"}"#,
                "only version 1",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"tap"}"#,
                "unknown variant",
            ),
            (
                r#"{"version":1,"tests":[],"command":"c","report":"junit"}"#,
                "at least one glob",
            ),
            (
                r#"{"version":1,"tests":["a/[b"],"command":"c","report":"junit"}"#,
                "bad glob",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","timeouts":{"tset":1}}"#,
                "unknown field `tset`",
            ),
            (
                r#"{"version":1,"tests":["t"],"report":"junit"}"#,
                "missing field `command`",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","timeouts":{"build":0}}"#,
                "`timeouts.build` is 0: a timeout is from 1 to 2592000 seconds",
            ),
            // Longer timeouts overflow a deadline or a count of milliseconds where used.
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","timeouts":{"test":2592001}}"#,
                "`timeouts.test` is 2592001: a timeout is from 1 to 2592000 seconds",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","memory_mb":10}"#,
                "`memory_mb` is 10: a memory limit is from 64 to 1048576 MiB",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","container":{"image":"i","pull":true}}"#,
                "unknown field `pull`",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","container":{}}"#,
                "missing field `image`",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","container":{"image":"--privileged"}}"#,
                "`container`: container options: image `--privileged` is not an image reference",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","container":{"image":"i","pids_limit":2}}"#,
                "`container`: container options: a PID limit of 2 is too small",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","container":{"image":"i","tmpfs_mb":0}}"#,
                "`container`: container options: a /tmp under 1 MiB is too small",
            ),
            (
                r#"{"version":1,"tests":["t"],"command":"c","report":"junit","timeouts":{"install":18446744073709551615}}"#,
                "`timeouts.install` is 18446744073709551615",
            ),
            // `$schema` names the schema for editors; it is a string, and any other key
            // stays unknown.
            (
                r#"{"$schema":1,"version":1,"tests":["t"],"command":"c","report":"junit"}"#,
                "invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"$schema":"s","$comment":"c","version":1,"tests":["t"],"command":"c","report":"junit"}"#,
                "unknown field `$comment`",
            ),
        ];
        for (text, want) in cases {
            let err = RepoConfig::parse(text, "x").unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

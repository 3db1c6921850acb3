//! The schema of `--config`: every section and key, the flag each expands to, and the type
//! of its value.

use clap::ValueEnum;

use crate::cli::args::{ContainerCliArg, LevelArg, MinimiserArg, RunnerArg};

/// The version of the document this repromin reads.
pub(super) const SCHEMA_VERSION: u64 = 1;

/// The type of a field's value, and how it expands.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
    /// A boolean, default `false`; `true` adds the flag.
    Switch,
    /// A boolean, default `true`; `false` adds the flag.
    InverseSwitch,
    /// An integer in `min..=max`; `null` allowed when `nullable`.
    Count { min: u64, max: u64, nullable: bool },
    /// An exit status 0-255 other than 125, or `null`.
    ExitCode,
    /// A number strictly between 0 and 1; `null` allowed when `nullable`.
    Rate { nullable: bool },
    /// A duration string (`30s`, `500ms`, `2m`, `1h`), or `null`.
    Duration,
    /// A regular expression, or `null`.
    Regex,
    /// A string that is not blank, or `null`.
    Text,
    /// One of a clap value enum's names, or `null`.
    Choice(fn() -> Vec<String>),
    /// A non-empty array of pass names, or `null`.
    Passes,
    /// An array of basenames.
    Basenames,
    /// An array of paths relative to SOURCE.
    RelPaths,
    /// An array of file paths.
    Files,
    /// An object of `NAME: VALUE` strings.
    Env,
    /// A size with a unit (`256m`, `2g`), or `null`.
    Size,
    /// A memory size: a string such as `512M` or `1.5GiB`, a number of bytes, or `null`.
    Memory,
    /// A number of CPUs from 0.01 to 1024, or `null`.
    Cpus,
}

/// One key of the schema: where it lives, the flag it expands to, its type.
#[derive(Clone, Copy, Debug)]
pub(super) struct Field {
    pub(super) section: &'static str,
    pub(super) key: &'static str,
    pub(super) flag: &'static str,
    pub(super) kind: Kind,
    /// Whether `doctor` uses it (it validates every field either way).
    pub(super) doctor: bool,
}

pub(super) const fn field(
    section: &'static str,
    key: &'static str,
    flag: &'static str,
    kind: Kind,
) -> Field {
    Field {
        section,
        key,
        flag,
        kind,
        doctor: true,
    }
}

/// The names a clap value enum accepts.
pub(super) fn names<T: ValueEnum>() -> Vec<String> {
    T::value_variants()
        .iter()
        .filter_map(ValueEnum::to_possible_value)
        .map(|p| p.get_name().to_string())
        .collect()
}

pub(super) fn level_names() -> Vec<String> {
    names::<LevelArg>()
}

pub(super) fn minimiser_names() -> Vec<String> {
    names::<MinimiserArg>()
}

pub(super) fn runner_names() -> Vec<String> {
    names::<RunnerArg>()
}

pub(super) fn container_cli_names() -> Vec<String> {
    names::<ContainerCliArg>()
}

/// The sections, in document order.
pub(super) const SECTIONS: &[&str] = &[
    "oracle",
    "sampling",
    "runner",
    "input",
    "reduction",
    "semantic",
    "budgets",
];

/// Every key of every section, in document order.
pub(super) const FIELDS: &[Field] = &[
    field("oracle", "expect", "--expect", Kind::Regex),
    field("oracle", "signature", "--signature", Kind::Text),
    field("oracle", "exit_code", "--exit-code", Kind::ExitCode),
    field(
        "oracle",
        "process_failure",
        "--process-failure",
        Kind::Switch,
    ),
    field("oracle", "any_failure", "--any-failure", Kind::Switch),
    field("oracle", "allow_trivial", "--allow-trivial", Kind::Switch),
    field("oracle", "no_frames", "--no-frames", Kind::Switch),
    field(
        "sampling",
        "baseline_runs",
        "--baseline-runs",
        Kind::Count {
            min: 2,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_baseline_passes",
        "--min-baseline-passes",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: true,
        },
    ),
    field(
        "sampling",
        "min_baseline_rate",
        "--min-baseline-rate",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "candidate_runs",
        "--candidate-runs",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_candidate_passes",
        "--min-candidate-passes",
        Kind::Count {
            min: 1,
            max: u64::MAX,
            nullable: true,
        },
    ),
    field(
        "sampling",
        "min_candidate_rate",
        "--min-candidate-rate",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "confidence",
        "--confidence",
        Kind::Rate { nullable: false },
    ),
    field(
        "sampling",
        "run_confidence",
        "--run-confidence",
        Kind::Rate { nullable: true },
    ),
    field(
        "sampling",
        "holdout_runs",
        "--holdout-runs",
        Kind::Count {
            min: 0,
            max: u64::MAX,
            nullable: false,
        },
    ),
    field(
        "sampling",
        "min_holdout_rate",
        "--min-holdout-rate",
        Kind::Rate { nullable: false },
    ),
    field(
        "sampling",
        "holdout_confidence",
        "--holdout-confidence",
        Kind::Rate { nullable: false },
    ),
    field("runner", "timeout", "--timeout", Kind::Duration),
    field(
        "runner",
        "jobs",
        "--jobs",
        Kind::Count {
            min: 1,
            max: crate::reduce::MAX_JOBS as u64,
            nullable: true,
        },
    ),
    field("runner", "env", "--env", Kind::Env),
    field("runner", "memory", "--memory", Kind::Memory),
    field("runner", "overlay", "--no-overlay", Kind::InverseSwitch),
    field("runner", "runner", "--runner", Kind::Choice(runner_names)),
    field("runner", "image", "--image", Kind::Text),
    field(
        "runner",
        "container_cli",
        "--container-cli",
        Kind::Choice(container_cli_names),
    ),
    field("runner", "docker_network", "--docker-network", Kind::Switch),
    field(
        "runner",
        "docker_pids_limit",
        "--docker-pids-limit",
        Kind::Count {
            min: 8,
            max: 4_194_304,
            nullable: true,
        },
    ),
    field("runner", "docker_tmpfs", "--docker-tmpfs", Kind::Size),
    field("runner", "docker_cpus", "--docker-cpus", Kind::Cpus),
    field("runner", "docker_memory", "--docker-memory", Kind::Size),
    field(
        "runner",
        "docker_workspace_limit",
        "--docker-workspace-limit",
        Kind::Size,
    ),
    field("runner", "remote", "--remote", Kind::Text),
    field("runner", "remote_instance", "--remote-instance", Kind::Text),
    field(
        "runner",
        "remote_jobs",
        "--remote-jobs",
        Kind::Count {
            min: 1,
            max: crate::reduce::MAX_JOBS as u64,
            nullable: true,
        },
    ),
    field("runner", "remote_wait", "--remote-wait", Kind::Duration),
    field("input", "ignore_names", "--ignore", Kind::Basenames),
    field("input", "ignore_paths", "--ignore-path", Kind::RelPaths),
    field("input", "keep_paths", "--keep", Kind::RelPaths),
    field("input", "gitignore", "--gitignore", Kind::Switch),
    field("input", "gitignore_files", "--gitignore-file", Kind::Files),
    field(
        "input",
        "gitignore_recursive",
        "--gitignore-recursive",
        Kind::Switch,
    ),
    field("reduction", "passes", "--passes", Kind::Passes),
    field("reduction", "level", "--level", Kind::Choice(level_names)),
    field(
        "reduction",
        "minimiser",
        "--minimiser",
        Kind::Choice(minimiser_names),
    ),
    field(
        "reduction",
        "syntax_guard",
        "--no-syntax-guard",
        Kind::InverseSwitch,
    ),
    field("reduction", "settle", "--no-settle", Kind::InverseSwitch),
    field("reduction", "stubs", "--no-stubs", Kind::InverseSwitch),
    field("reduction", "trace", "--no-trace", Kind::InverseSwitch),
    field("semantic", "endpoint", "--semantic-endpoint", Kind::Text),
    field("semantic", "model", "--semantic-model", Kind::Text),
    field("semantic", "timeout", "--semantic-timeout", Kind::Duration),
    field(
        "semantic",
        "calls",
        "--semantic-calls",
        Kind::Count {
            min: 1,
            max: 1000,
            nullable: true,
        },
    ),
    Field {
        doctor: false,
        ..field(
            "budgets",
            "max_attempts",
            "--max-attempts",
            Kind::Count {
                min: 0,
                max: u64::MAX,
                nullable: true,
            },
        )
    },
    Field {
        doctor: false,
        ..field("budgets", "max_duration", "--max-duration", Kind::Duration)
    },
];

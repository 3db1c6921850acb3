//! [`InvalidOption`], what is wrong with the options of a reduction before anything runs:
//! one variant per rule, each naming the option and the value it refused (exit 2).

use std::path::PathBuf;

use crate::stats::StatsError;

/// Options that no reduction can start with.
#[derive(Debug, thiserror::Error)]
pub enum InvalidOption {
    /// `--jobs 0`.
    #[error("--jobs must be at least 1")]
    NoJobs,
    /// `--jobs` over the most that run at once.
    #[error("--jobs {jobs} is out of range: it must be between 1 and {max}")]
    TooManyJobs {
        /// The value given.
        jobs: usize,
        /// The most allowed.
        max: usize,
    },
    /// `--baseline-runs` under 2.
    #[error("--baseline-runs must be at least 2: the baseline is always confirmed")]
    BaselineRuns,
    /// `--semantic-endpoint` not http(s).
    #[error("--semantic-endpoint {0:?} is not an http:// or https:// URL")]
    SemanticEndpoint(String),
    /// `--semantic-endpoint` without a model.
    #[error("--semantic-endpoint needs --semantic-model NAME")]
    SemanticModel,
    /// `--semantic-endpoint` with `--session`.
    #[error(
        "--semantic-endpoint cannot be used with --session: a semantic backend's answers cannot be replayed on --resume"
    )]
    SemanticSession,
    /// Nothing after `--`.
    #[error("no command was given after `--`")]
    NoCommand,
    /// Every pass turned off.
    #[error("no pass is enabled")]
    NoPass,
    /// OUTPUT's parent is missing.
    #[error("the output's parent directory `{}` does not exist", .0.display())]
    OutputParent(PathBuf),
    /// An option that selects entries of a directory, with a single file as SOURCE.
    #[error(
        "{option} selects entries of a directory tree, and SOURCE `{}` is a single file",
        .file.display()
    )]
    TreeOnly {
        /// The option.
        option: &'static str,
        /// SOURCE.
        file: PathBuf,
    },
    /// OUTPUT inside SOURCE.
    #[error("the output must be outside the source tree `{}`", .0.display())]
    OutputInsideSource(PathBuf),
    /// OUTPUT with no last name (`/`, `..`).
    #[error("the output `{}` does not end in a directory name", .0.display())]
    OutputName(PathBuf),
    /// A probability outside (0, 1).
    #[error("{name} must be between 0 and 1, exclusive, not {value}")]
    NotInUnit {
        /// The option.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// `--min-baseline-passes` outside 1..=runs.
    #[error("--min-baseline-passes must be between 1 and --baseline-runs ({runs})")]
    MinBaselinePasses {
        /// `--baseline-runs`.
        runs: u64,
    },
    /// A baseline rate that no baseline can clear.
    #[error(
        "--min-baseline-rate {rate} cannot pass with {runs} baseline runs at confidence {confidence}: add runs"
    )]
    BaselineRate {
        /// The rate.
        rate: f64,
        /// `--baseline-runs`.
        runs: u64,
        /// `--confidence`.
        confidence: f64,
    },
    /// A number of runs whose exact plan cannot be computed quickly.
    #[error(
        "{name} {runs} is over the cap of {max}: the exact plan of more runs cannot be computed quickly"
    )]
    TooManyRuns {
        /// The option.
        name: &'static str,
        /// The value given.
        runs: u64,
        /// The cap ([`crate::stats::MAX_PLAN_RUNS`]).
        max: u64,
    },
    /// `--candidate-runs 0`.
    #[error("--candidate-runs must be at least 1")]
    CandidateRuns,
    /// `--min-candidate-passes` outside 1..=runs.
    #[error("--min-candidate-passes must be between 1 and --candidate-runs ({runs})")]
    MinCandidatePasses {
        /// `--candidate-runs`.
        runs: u64,
    },
    /// `--run-confidence` that gives no family its share.
    #[error("--run-confidence")]
    RunConfidence(#[source] StatsError),
    /// A candidate rate that no candidate can clear.
    #[error(
        "--min-candidate-rate {rate} cannot pass with {runs} candidate runs at confidence {confidence}: add runs"
    )]
    CandidateRate {
        /// The rate.
        rate: f64,
        /// `--candidate-runs`.
        runs: u64,
        /// The confidence of one family.
        confidence: f64,
    },
    /// `--run-confidence` alone.
    #[error("--run-confidence needs --min-candidate-rate")]
    RunConfidenceAlone,
    /// A holdout that cannot pass even when every run reproduces.
    #[error("the holdout plan cannot pass")]
    Holdout(#[source] StatsError),
    /// A container flag without the container runner.
    #[error("{0} applies to containers: add --runner docker --image REF")]
    ContainerFlag(&'static str),
    /// `--image` without the container runner.
    #[error("--image is for containers: add --runner docker")]
    ImageWithoutDocker,
    /// The container runner without `--image`.
    #[error("--runner docker needs --image REF, an image in the local image store")]
    DockerWithoutImage,
    /// `--env` not NAME=VALUE.
    #[error("--env `{0}` must have the form NAME=VALUE")]
    EnvForm(String),
    /// `--env` with a name no shell takes.
    #[error("--env name `{0}` must match [A-Za-z_][A-Za-z0-9_]*")]
    EnvName(String),
    /// `--env` naming one variable twice.
    #[error("--env `{0}` is given twice")]
    EnvTwice(String),
    /// `--exit-code` outside 0..=255.
    #[error("--exit-code {0} is out of range: an exit status is between 0 and 255")]
    ExitCode(i32),
    /// `--signature ''`.
    #[error("--signature is blank: give the text the failure's output must contain")]
    BlankSignature,
    /// `--gitignore` with no `.gitignore` in SOURCE.
    #[error("--gitignore was given but `{}` does not exist", .0.display())]
    NoGitignore(PathBuf),
    /// `--gitignore-file` naming no file.
    #[error("gitignore file `{}` does not exist", .0.display())]
    GitignoreFile(PathBuf),
    /// `--ignore` given a path.
    #[error("--ignore takes a basename, not `{0}` (use --ignore-path for paths)")]
    IgnoreName(String),
    /// `--memory` that is not a size.
    #[error("--memory is not a memory limit")]
    Memory(#[source] crate::runner::MemorySizeError),
    /// `--memory` with the container runner, whose limit is `--docker-memory`.
    #[error("--memory is for runs on the host: a container's limit is --docker-memory SIZE")]
    MemoryInContainer,
    /// `--memory` with `--remote`: the cluster's workers set the limits of their runs.
    #[error(
        "--memory is for runs on this machine: with --remote, the cluster's workers limit their runs"
    )]
    MemoryRemote,
    /// `--remote` with `--runner docker`.
    #[error(
        "--remote runs every command on the cluster: it cannot be combined with --runner docker"
    )]
    RemoteWithContainer,
    /// A cluster's credentials with no cluster.
    #[error("{0} is for a remote cluster: give --remote URL (or runner.remote in --config)")]
    RemoteCredentials(&'static str),
    /// `--remote-ca` with a plain endpoint.
    #[error(
        "--remote-ca is for a TLS endpoint: give --remote as grpcs://HOST:PORT or https://HOST:PORT"
    )]
    RemoteCaWithoutTls,
    /// `--remote` that is not a `grpc://`, `http://`, `grpcs://` or `https://` endpoint.
    #[error(
        "--remote `{0}` is not an endpoint: give grpc://HOST:PORT or http://HOST:PORT (plain HTTP/2), or grpcs://HOST:PORT or https://HOST:PORT (TLS)"
    )]
    RemoteUrl(String),
}

//! [`ReduceError`], the error that ends a reduction, and [`SessionError`], why a durable
//! session cannot be started or resumed: a leaf module, so that the reducer, the export and
//! the command line can all name them without importing one another.

use std::path::PathBuf;

use crate::oracle::OracleError;
use crate::runner::RunnerError;
use crate::stats::StatsError;
use crate::tree::TreeError;

/// An error that ends a reduction.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    /// The tree could not be read or written.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// The command could not be started.
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// The oracle could not be set up, or the baseline is unusable.
    #[error(transparent)]
    Oracle(#[from] OracleError),
    /// Invalid options.
    #[error(transparent)]
    Invalid(#[from] crate::reduce::invalid::InvalidOption),
    /// The output already exists.
    #[error("`{0}` already exists; repromin never overwrites an output")]
    OutputExists(PathBuf),
    /// A resumed session finds an output that is not its result.
    #[error(
        "`{}` exists and is not this session's result (its fingerprint is {found}, the result's {expected}); it is left as it is",
        .output.display()
    )]
    OutputNotOurs {
        /// The output.
        output: PathBuf,
        /// Its fingerprint.
        found: String,
        /// The result's.
        expected: String,
    },
    /// A resumed session finds a sidecar that does not describe its output.
    #[error("`{}` does not describe `{}`: it is left as it is", .sidecar.display(), .output.display())]
    SidecarNotOurs {
        /// The sidecar.
        sidecar: PathBuf,
        /// The output.
        output: PathBuf,
    },
    /// Run-wide confidence left a candidate family no share it can use.
    #[error("the run-wide confidence is spent at candidate family {family}")]
    ConfidenceSpent {
        /// The family's index.
        family: u64,
        /// Why no share could be given.
        #[source]
        source: StatsError,
    },
    /// Run-wide confidence left a candidate family a share too small for its samples.
    #[error(
        "the run-wide confidence is spent at candidate family {family}: even {runs} of {runs} passes cannot clear the rate gate at confidence {confidence}; plan more --candidate-runs"
    )]
    ConfidenceTooLow {
        /// The family's index.
        family: u64,
        /// `--candidate-runs`.
        runs: u64,
        /// The family's share.
        confidence: f64,
    },
    /// The report does not serialise.
    #[error("the report does not serialise to JSON")]
    Report(#[source] serde_json::Error),
    /// A baseline run went over `--memory`.
    #[error(
        "the command needs more than --memory {limit}: baseline run {run} went over it (limited by {mechanism})"
    )]
    BaselineOverMemory {
        /// The run (1-based).
        run: usize,
        /// The limit, for people.
        limit: String,
        /// How it was enforced (`cgroup` or `rlimit-as`).
        mechanism: &'static str,
    },
    /// The oracle accepts the empty tree.
    #[error(
        "the oracle accepts the empty tree, so it cannot tell the failure from nothing; pass --allow-trivial to reduce anyway"
    )]
    Trivial,
    /// A committed candidate's clean copy differs from what the oracle saw.
    #[error(
        "the accepted tree could not be reproduced exactly (expected {expected}, found {found})"
    )]
    Unfaithful {
        /// Fingerprint the oracle saw.
        expected: String,
        /// Fingerprint of the clean copy.
        found: String,
    },
    /// The final tree, run once more in a fresh copy after the passes, does not pass the
    /// oracle although every commit on the way did.
    #[error(
        "the final tree no longer reproduces the failure seen during reduction: {reason}; nothing was written"
    )]
    FinalNotReproducing {
        /// Why the final run did not pass the oracle.
        reason: String,
    },
    /// The holdout on the final tree cannot be planned.
    #[error("the holdout plan cannot pass")]
    HoldoutPlan(#[source] StatsError),
    /// The holdout's samples on the final tree cannot be evaluated.
    #[error("the holdout cannot be evaluated")]
    HoldoutEvaluation(#[source] StatsError),
    /// Ctrl-C before there was anything to publish.
    #[error("interrupted before the baseline was confirmed; nothing was written")]
    Interrupted,
    /// Ctrl-C in a durable session: nothing is published, the session is resumed later.
    #[error("interrupted; nothing was published, and the session keeps what was done")]
    SessionInterrupted,
    /// The session directory (`--session`, `--resume`) cannot be used.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The container runner cannot be used.
    #[error(transparent)]
    Container(#[from] crate::container::ContainerError),
    /// The remote cluster could not run a command (never a verdict on the candidate).
    #[error("the remote cluster did not run the command")]
    Remote(#[from] crate::remote::RemoteError),
    /// An internal invariant failed.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// Why a session cannot be started or resumed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `--resume` without `--session`.
    #[error("--resume needs --session DIR: the directory of the session to resume")]
    ResumeWithoutSession,
    /// A new session in a directory that holds one.
    #[error(
        "`{0}` already holds a session: add --resume to continue it, or give another directory"
    )]
    Exists(PathBuf),
    /// A new session in a directory that holds something else.
    #[error("`{0}` is not empty and holds no session; give a new or empty directory")]
    NotEmpty(PathBuf),
    /// `--resume` of a directory without `state.json`.
    #[error("`{0}` holds no session to resume (no state.json)")]
    Missing(PathBuf),
    /// `state.json` of another schema or strategy, or unreadable.
    #[error("the session's state.json cannot be used: {0}")]
    State(String),
    /// An identity field differs.
    #[error(
        "the session was started with other settings: {field} was {was}, now {now}; resume with the same settings, or start a new session"
    )]
    Changed {
        /// The option.
        field: String,
        /// Its recorded value.
        was: String,
        /// Its value now.
        now: String,
    },
    /// The source tree changed.
    #[error(
        "the source tree changed since the session started (fingerprint {was}, now {now}); a session reduces one tree"
    )]
    SourceChanged {
        /// Recorded.
        was: String,
        /// Now.
        now: String,
    },
    /// A journal line that does not parse (not the torn last one).
    #[error("the session's journal is damaged at line {line}: {reason}")]
    Damaged {
        /// 1-based line.
        line: usize,
        /// Why.
        reason: String,
    },
    /// The replay asked for something other than what the journal holds next.
    #[error(
        "the session's journal does not match this reduction at record {record}: expected {expected}, found {found}"
    )]
    Diverged {
        /// 1-based record.
        record: usize,
        /// What the replay needed.
        expected: String,
        /// What the journal holds.
        found: String,
    },
    /// A file or directory of the session that cannot be removed or written.
    #[error(transparent)]
    Tree(#[from] crate::tree::TreeError),
    /// A file of the session that is a symbolic link, or not a regular file: the session
    /// reads and writes only its own files.
    #[error("a file of the session cannot be used")]
    Unsafe(#[source] crate::safe_fs::SafeFsError),
    /// File I/O in the session directory.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

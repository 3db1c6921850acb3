//! [`ReduceError`], the error that ends a reduction: a leaf module, so that the reducer, the
//! export and the command line can all name it without importing one another.

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
    #[error("{0}")]
    Usage(String),
    /// The output already exists.
    #[error("`{0}` already exists; repromin never overwrites an output")]
    OutputExists(PathBuf),
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
    Session(#[from] crate::reduce::durable::SessionError),
    /// The container runner cannot be used.
    #[error(transparent)]
    Container(#[from] crate::container::ContainerError),
    /// An internal invariant failed.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

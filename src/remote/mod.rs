//! Placeholder of the remote client's interface (replaced by the real client).

use std::time::Duration;

/// Why a remote run failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Not built yet.
    #[error("remote execution is not available")]
    Unavailable,
}

/// Where the cluster is.
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    /// The endpoint.
    pub url: String,
    /// The instance name.
    pub instance: String,
}

/// A connection.
#[derive(Clone)]
pub struct Remote {}

/// Whether the action cache may answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// It may.
    Use,
    /// It may not, and the result is not stored.
    Skip,
}

/// A remote run.
pub struct RemoteRun {
    /// The outcome.
    pub outcome: crate::runner::RunOutcome,
    /// Whether the action cache answered.
    pub cached: bool,
}

impl Remote {
    /// Connects.
    ///
    /// # Errors
    /// Always, for now.
    pub fn connect(_config: &RemoteConfig) -> Result<Remote, RemoteError> {
        Err(RemoteError::Unavailable)
    }

    /// Runs.
    ///
    /// # Errors
    /// Always, for now.
    pub fn run(
        &self,
        _tree: &crate::tree::Tree,
        _command: &crate::runner::CommandSpec,
        _timeout: Duration,
        _cache: CachePolicy,
    ) -> Result<RemoteRun, RemoteError> {
        Err(RemoteError::Unavailable)
    }
}

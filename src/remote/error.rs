//! [`RemoteError`]: what goes wrong talking to a cluster, or in the worker (a leaf module).

/// What went wrong talking to the cluster, or in the worker.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not one a channel can be made for.
    #[error("`{url}` is not a remote execution endpoint (expected http://HOST:PORT)")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
    /// The `tls_ca` file could not be read.
    #[error("cannot read the certificate authorities in {}", path.display())]
    Ca {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A header to send is not one gRPC can carry.
    #[error("the header `{name}` cannot be sent: {reason}")]
    BadHeader {
        /// Its name as given.
        name: String,
        /// Why.
        reason: String,
    },
    /// No connection could be made.
    #[error("cannot reach the remote execution service at {url}")]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
    /// The tokio runtime could not be started.
    #[error("cannot start the remote client's runtime")]
    Runtime(#[source] std::io::Error),
    /// A call was refused or failed.
    #[error("the remote call {call} failed")]
    Rpc {
        /// The call.
        call: &'static str,
        /// The gRPC status.
        #[source]
        source: tonic::Status,
    },
    /// The cluster lacks something repromin needs.
    #[error("the remote execution service at {url} cannot be used: {reason}")]
    Unsupported {
        /// The URL.
        url: String,
        /// What is missing.
        reason: String,
    },
    /// A blob could not be stored or read.
    #[error("the blob {hash}/{size} could not be {action}: status {code}: {message}")]
    Blob {
        /// `stored` or `read`.
        action: &'static str,
        /// Its hash.
        hash: String,
        /// Its size.
        size: i64,
        /// The status code.
        code: i32,
        /// The status message.
        message: String,
    },
    /// A message read from the cluster could not be decoded.
    #[error("cannot decode the {what} the remote execution service sent")]
    Decode {
        /// What was decoded.
        what: &'static str,
        /// Why.
        #[source]
        source: prost::DecodeError,
    },
    /// The cluster answered with something that does not fit the protocol.
    #[error("the remote execution service sent {0}")]
    Protocol(String),
    /// The operation's stream ended before it was done, and waiting again did not help.
    #[error("the remote operation `{0}` was lost before it was done")]
    Lost(String),
    /// The operation was not done within the action's timeout plus the wait
    /// ([`RemoteConfig::wait`](super::RemoteConfig::wait)): no worker took it, or the one
    /// that did was lost. It was cancelled.
    #[error(
        "the remote operation `{name}` was not done after {:.0} s (no worker took it, or its worker was lost); it was cancelled",
        waited.as_secs_f64()
    )]
    NotDone {
        /// The operation's name (empty when the cluster never named it).
        name: String,
        /// How long it was waited for.
        waited: std::time::Duration,
    },
    /// The execution ended with a status other than OK or DEADLINE_EXCEEDED.
    #[error("the remote execution failed: status {code}: {message}")]
    Failed {
        /// The status code.
        code: i32,
        /// The status message.
        message: String,
    },
    /// The worker could not lay out an action's input root.
    #[error("cannot lay out the action's inputs")]
    Inputs(#[source] std::io::Error),
    /// An input root names a path outside itself.
    #[error("the input root holds an unsafe entry: {0}")]
    UnsafeInput(String),
    /// The worker could not start an action's command.
    #[error("cannot run the action's command")]
    Runner(#[source] crate::runner::RunnerError),
}

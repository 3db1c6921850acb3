//! Remote execution over the Remote Execution API v2 (REAPI), and a worker for it.
//!
//! [`Remote`] is a client of a REAPI cluster (BuildGrid, Buildbarn, BuildBuddy, ...): it
//! runs one command on one [`Tree`](crate::tree::Tree) there and hands back a
//! [`RunOutcome`](crate::runner::RunOutcome) as [`crate::runner::run`] does locally. The tree becomes a Merkle tree of
//! `Directory` messages (`merkle.rs`); only the blobs the content-addressable storage lacks
//! are uploaded (`cas.rs`); the action is executed and its result read back
//! (`client.rs`). [`bot::serve`] is the other side: a bot of the Remote Workers API that
//! takes leases from the cluster's scheduler and runs their actions with the local runner.
//!
//! The API is blocking: each [`Remote`] owns a current-thread tokio runtime and a gRPC
//! channel, and every call drives the runtime until its answer is in. A [`Remote`] is cheap
//! to clone and can be used from several threads at once.
//!
//! What is cached: an action run with [`CachePolicy::Use`] may be answered from the
//! cluster's action cache, and its result is stored there. With [`CachePolicy::Skip`] the
//! action is marked `do_not_cache` and the cache is not looked up, so every run is a run of
//! its own (samples of a statistical test must be independent).

mod bot_run;
mod cas;
mod client;
mod conn;
mod error;
mod merkle;

pub mod bot;

pub use bot::{BotOptions, serve};
pub use client::{CachePolicy, Remote, RemoteRun};
pub use conn::RemoteConfig;
pub use error::RemoteError;

#[cfg(test)]
mod e2e_tests;

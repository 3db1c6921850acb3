//! repromin answers two questions about a software failure by running the code: does a
//! pull request's test prove its fix, and which parts of a tree are load-bearing for a
//! failure.
//!
//! This crate is the library behind the `repromin` command. Its reducer takes a directory
//! tree and a command that fails, and deletes whatever the *same* failure does not need:
//!
//! ```no_run
//! use std::sync::{Arc, atomic::AtomicBool};
//! use repromin::reduce::{ReduceOptions, reduce};
//!
//! let options = ReduceOptions::new(
//!     "project".into(),
//!     "project.min".into(),
//!     vec!["python3".into(), "main.py".into()],
//! );
//! let interrupt = Arc::new(AtomicBool::new(false));
//! // Complete or remove what a run killed while publishing there left behind.
//! for found in repromin::export::recover(&options.output)? {
//!     eprintln!("{found}");
//! }
//! let reduction = reduce(&options, &interrupt, None)?;
//! let published = repromin::export::publish(&reduction, &options)?;
//! println!("{} files left", published.report.output.files);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Overview
//! - [`tree`]: the closed tree model, ignore rules and fingerprints;
//! - `workspace`: directories kept equal to a tree with delta application (internal);
//! - `safe_fs`: bounded reads and writes that never follow a symlink (internal);
//! - `scratch`: marked scratch directories, and the sweep of those of dead processes
//!   (internal);
//! - [`runner`]: one command in its own process group, with timeout and output cap;
//! - [`signature`] and [`oracle`]: normalisation, failure signatures, the same-failure test;
//! - [`bytes`]: the in-process byte reducer and the deletion search it shares;
//! - [`reduce`]: the session, the passes and the fixed point;
//! - `output_layout`, [`export`] and [`report`]: where a result goes, its crash-safe
//!   publication and `report.json` / `REPROMIN.md`; `owner`: which process owns a directory
//!   and whether it is alive (internal);
//! - [`gate`]: the pull-request gate: plan, sides, reports, classification, the line;
//! - [`cli`] and [`exit_code`]: the command line and its documented exit codes.
//!
//! `docs/architecture.md` maps every module, public or internal.

pub mod bytes;
pub mod cli;
pub(crate) mod console;
pub mod container;
pub(crate) mod demo;
pub mod exit_code;
pub mod export;
pub(crate) mod failpoint;
#[doc(hidden)]
pub mod fuzzing;
pub mod gate;
pub mod oracle;
pub(crate) mod output_layout;
pub mod overlay;
pub(crate) mod owner;
pub(crate) mod reaper;
pub mod reduce;
pub mod remote;
pub mod report;
pub mod runner;
pub(crate) mod safe_fs;
pub(crate) mod scratch;
pub mod signature;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_buildgrid;
#[cfg(test)]
pub(crate) mod test_rng;
#[cfg(test)]
pub(crate) mod test_skip;
pub(crate) mod text;
pub mod tree;
pub(crate) mod workspace;

/// Writes the demo's Python shop (the project `repromin demo` reduces) into `dir`, for
/// tests and benchmarks that want a small real project.
///
/// # Errors
/// I/O failures.
#[doc(hidden)]
pub fn write_demo_project(dir: &std::path::Path) -> Result<(), tree::TreeError> {
    demo::write_project(dir)
}

/// An error followed by its causes, each after `: `: the one way errors are rendered as
/// text, by the command line and by the library's own notes.
pub fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

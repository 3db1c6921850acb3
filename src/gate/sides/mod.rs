//! The worker sides of the gate: plan, check out, install, build, overlay, test, encode.
//!
//! A side adds a detached worktree at its commit and installs and builds there *before* any
//! file of the head lands on it, so nothing the pull request carries runs during install or
//! build, and the base still lacks the fix. The base side then lays the head's tests and
//! carried files over the tree, removes the overlay removals and runs the tests twice
//! (`base`, `base-rerun`); the head side runs them once. Every failure becomes an error
//! marker in place of each report the side owes; the worktree is removed either way.
//!
//! With a sandbox user ([`crate::gate::sandbox`]), every test run of the base side (head
//! test code on base) runs in new PID and mount namespaces as that user, with no new
//! privileges and a cleared environment; everything it starts dies with the namespace, and
//! its report is read as a regular file of bounded size, never through a symlink.
//!
//! The mutants side prepares the tree like the base side, runs the specs' test files once
//! as a baseline, then applies each mutation in turn: it writes the mutated text (never
//! through a symlink), rebuilds, runs the spec's test file, writes the merge base's text
//! back and rebuilds again. With a sandbox user, every build and test run from the
//! baseline on runs in the sandbox, since head test code has run in the tree by then.

//!
//! The reduce side ([`reduce`]) reduces the base-plus-overlay tree for the first test that
//! fails on base and writes `reduce.report` for the certificate.
//!
//! - this module: [`Side`], [`ExecOptions`], [`exec`] and the writing of reports and markers;
//! - [`common`]: the deadline, shell steps, the overlay, the worktree and test runs;
//! - `base_head`: the base and head sides; `reruns`: their reruns of the tests that could
//!   reproduce; `mutants`: the mutants side;
//! - [`reduce`]: the reduce side; [`error`]: what can fail in a side.

mod base_head;
pub(crate) mod common;
pub(crate) mod error;
mod hang;
mod mutants;
mod options;
pub(crate) mod reduce;
mod reruns;
pub(crate) mod template;
mod write;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::gate::encode::{SideReport, TEST_REPORT_CAP, encode};
use crate::gate::mutants::{self as spec, MutantsReport};

pub(crate) use common::read_report;
pub(crate) use common::side_env;
pub(crate) use error::WriteReportError;
pub(crate) use options::{ExecOptions, Side};
pub(crate) use template::RunFiles;
pub(crate) use write::write_report;

/// Runs a side and writes its reports into `options.out`. Every failure of the side
/// becomes an error marker. Returns the test reports written, by name (none for the
/// mutants side, whose one report is `mutants.report`).
///
/// # Errors
/// A report or marker could not be written.
pub(crate) fn exec(
    options: &ExecOptions,
    interrupt: &AtomicBool,
) -> Result<Vec<(String, SideReport)>, WriteReportError> {
    let commit = options
        .side
        .commit(&options.base, &options.head)
        .to_string();
    if options.side == Side::Mutants {
        let report = match mutants::run_mutants(options, interrupt) {
            Ok(report) => report,
            Err(err) => MutantsReport::error(&commit, crate::with_causes(&err)),
        };
        write_report(&options.out, spec::SIDE, spec::encode(&report))?;
        return Ok(Vec::new());
    }
    let reports = match base_head::run_side(options, &commit, interrupt) {
        Ok(reports) => reports,
        Err(err) => {
            let message = crate::with_causes(&err);
            options
                .side
                .reports()
                .iter()
                .map(|name| {
                    (
                        (*name).to_string(),
                        SideReport::error(name, &commit, message.clone()),
                    )
                })
                .collect()
        }
    };
    for (name, report) in &reports {
        write_report(&options.out, name, encode(report, TEST_REPORT_CAP))?;
    }
    Ok(reports)
}

/// Writes an error marker in place of every report `side` owes, into `out`.
///
/// # Errors
/// A marker could not be written.
pub(crate) fn write_error_markers(
    out: &Path,
    side: Side,
    commit: &str,
    message: &str,
) -> Result<(), WriteReportError> {
    if side == Side::Mutants {
        let marker = MutantsReport::error(commit, message);
        return write_report(out, spec::SIDE, spec::encode(&marker));
    }
    if side == Side::Reduce {
        return reduce::write_error_marker(out, commit, message);
    }
    for name in side.reports() {
        let marker = SideReport::error(name, commit, message);
        write_report(out, name, encode(&marker, TEST_REPORT_CAP))?;
    }
    Ok(())
}

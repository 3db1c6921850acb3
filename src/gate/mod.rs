//! The pull-request gate: does the PR's test prove its fix?
//!
//! The gate runs the PR's added or changed tests on the merge base (with the PR's non-test
//! changes left out and its tests laid over the base) and at head. A test that fails on base
//! and passes on head reproduces the bug. Worker `sides` write encoded reports; the
//! `judge` reads only those reports plus git, runs no code of either commit, and prints one
//! strict [`line`](mod@line).
//!
//! - `git`: the git calls; `config`: `.github/repromin.json`; `detect`: the defaults
//!   detected without it;
//! - `plan`: the diff into tests, carried files, removals and source;
//! - `sides`: the base, head, mutants and reduce sides; `sandbox`: where head test code
//!   runs on base;
//! - `readers`: test reports into [`test_report::TestReport`];
//! - [`encode`]: side reports as job outputs; `classify`: classes and the verdict;
//!   `flaky`: the reruns that rule out chance;
//! - `judge`: the judgement; [`certificate`]: the reduce report and its check;
//! - [`mutants`]: mutation specs of pull requests that change tests alone;
//!   `regressions`: the suite on both sides, and the tests it breaks;
//! - `local`: `run`, every side then the judge in one process; `table`: what it shows;
//! - [`line`](mod@line): the `repromin/v1` line, formatter and strict parser;
//! - `github`: job outputs, the step summary and annotations; `feedback`: the check
//!   run and the sticky comment; `check`: `check-test`.

pub(crate) mod build_dir;
pub mod certificate;
pub(crate) mod check;
pub(crate) mod classify;
pub(crate) mod config;
pub(crate) mod detect;
pub mod encode;
pub(crate) mod feedback;
pub(crate) mod flaky;
pub(crate) mod git;
pub(crate) mod github;
pub(crate) mod judge;
pub mod line;
pub(crate) mod local;
pub mod mutants;
pub(crate) mod plan;
pub(crate) mod readers;
pub(crate) mod regressions;
pub(crate) mod sandbox;
pub(crate) mod sides;
pub(crate) mod table;
pub mod test_report;

/// The sides under their former name.
pub(crate) use sides as exec;

pub(crate) use judge::{JUDGE_BUDGET, JudgeInput, Judgement, judge_error, judge_within};
pub(crate) use local::{RunInput, run};
pub(crate) use table::{format, table};

//! The exit codes of every `repromin` command, in one documented enum.
//!
//! `docs/reduce.md` (for `reduce`, `doctor` and `demo`) and `docs/gate.md` (for `exec`,
//! `judge`, `run`, `line` and `check-test`) list the same table. The command line maps each
//! typed error to one of these codes with one exhaustive `match` per error type (see
//! [`crate::cli`]); nothing is decided from an error's message text.

use std::process::ExitCode;

/// How a `repromin` command ended.
///
/// The numbers are stable: scripts and workflows gate on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success: a result was published (for `doctor`: a reduction could start); `judge` and
    /// `run` printed their line (with `--require`, the verdict is the one required); `exec`
    /// wrote its reports or error markers; every line read by `line` is valid; `check-test`: the test passed;
    /// `completions` and `man` printed or wrote what they generate; `worker` was stopped by
    /// SIGINT or SIGTERM.
    Ok = 0,
    /// For `reduce`, `doctor` and `demo`: an internal error, an unsupported entry in SOURCE,
    /// a rule file that cannot be parsed, a command that cannot be started or a commit that
    /// could not be reproduced. For `judge` and `run` with `--require`: another verdict. For
    /// `exec`: a report or error marker could not be written. For
    /// `line`: some line was refused. For `check-test`: the test failed. For `man`: a page
    /// could not be rendered. For `worker`: the cluster cannot be reached, refuses the
    /// session or keeps failing.
    Error = 1,
    /// Invalid options or input (clap's own usage errors also exit 2; for `worker`, a URL
    /// that is not one).
    Usage = 2,
    /// The baseline timed out.
    BaselineTimeout = 3,
    /// The baseline does not fail the way the oracle requires, or no signature could be
    /// learned from it, or it went over `--memory`.
    NotFailing = 4,
    /// The baseline runs disagree, or too few of them show the failure.
    Flaky = 5,
    /// The oracle accepts the empty tree.
    Trivial = 6,
    /// OUTPUT or its sidecar OUTPUT.repromin already exists.
    OutputExists = 7,
    /// The final tree, run once more after the passes, no longer reproduces the failure.
    FinalNotReproducing = 8,
    /// The holdout on the final tree cannot be planned or evaluated.
    HoldoutFailed = 9,
    /// A file or directory could not be read or written (for `man --dir`: DIR or a page in
    /// it; for `demo`, also: git could not be started).
    Io = 10,
    /// Run-wide confidence (`--run-confidence`) is spent: a later family of candidates
    /// cannot be given a share that its planned samples could clear.
    ConfidenceSpent = 11,
    /// `check-test`: the test did not run or its report cannot be read ("cannot tell", the
    /// `git bisect run` convention).
    CannotTell = 125,
    /// Interrupted before anything could be published.
    Interrupted = 130,
}

impl Exit {
    /// The numeric exit status.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

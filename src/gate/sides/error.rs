//! The errors of the worker sides: what failed in a side, with the text its error marker
//! (and then the line's `error` field) carries.
//!
//! A leaf module: it names the error types of the modules a side calls and nothing of the
//! sides themselves, so every side module can use it.

use std::path::PathBuf;

use crate::gate::config::ConfigError;
use crate::gate::encode::DecodeError;
use crate::gate::git::GitError;
use crate::gate::readers::ReadError;
use crate::gate::sandbox::SandboxError;
use crate::gate::test_report::RunDetail;
use crate::reduce::ReduceError;
use crate::runner::RunnerError;
use crate::safe_fs::{InsideError, SafeFsError};
use crate::tree::TreeError;

/// The largest report file read from a test run.
pub(crate) const REPORT_FILE_CAP: u64 = 16 * 1024 * 1024;

/// Why a test run's report could not be read in its format.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReportReadError {
    /// A report reader refused it.
    #[error(transparent)]
    Reader(#[from] ReadError),
}

/// A failed step of a side. Its text is the error marker's message.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SideError {
    /// A git call failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The plan or configuration failed.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A command could not be run.
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A tree operation failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// The sandbox user is unusable.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The container runner is unusable.
    #[error(transparent)]
    Container(#[from] crate::container::ContainerError),
    /// A mutation could not be written.
    #[error(transparent)]
    Inside(#[from] InsideError),
    /// The descriptors repromin inherited could not be kept from the commands it starts.
    #[error("cannot keep the descriptors repromin inherited from the commands it runs: {0}")]
    Descriptors(std::io::Error),
    /// The side's deadline passed.
    #[error("timeout: the side's deadline passed")]
    Deadline,
    /// An install or build step failed.
    #[error(
        "{} failed: {} after {}{} (`{}`)",
        .detail.step,
        .detail.how,
        seconds(.detail.duration_ms),
        said(.detail),
        .detail.command
    )]
    Step {
        /// The command, how it ended and the end of its output.
        detail: RunDetail,
    },
    /// A test run ended without a report that can be read.
    #[error(
        "the {} test run ended with {} after {} and {}{} (`{}`)",
        .detail.step,
        .detail.how,
        seconds(.detail.duration_ms),
        crate::with_causes(.problem.as_ref()),
        said(.detail),
        .detail.command
    )]
    TestRun {
        /// The command, how it ended and the end of its output.
        detail: RunDetail,
        /// What is wrong with its report.
        problem: Box<SideError>,
    },
    /// An overlay path with an empty, `.` or `..` component.
    #[error("bad overlay path `{rel}`")]
    BadOverlayPath {
        /// The path.
        rel: String,
    },
    /// The test run left no report file that can be opened.
    #[error("left no test report")]
    ReportMissing {
        /// The report file.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// The report file is not a regular file.
    #[error("left a test report `{}` that is not a regular file", path.display())]
    ReportNotRegular {
        /// The report file.
        path: PathBuf,
    },
    /// The report file is over [`REPORT_FILE_CAP`].
    #[error("left a test report of {len} bytes, over the {REPORT_FILE_CAP}-byte cap")]
    ReportTooLarge {
        /// Its size.
        len: u64,
    },
    /// The report could not be read in its format.
    #[error("left a {name} test report that cannot be read")]
    ReportUnreadable {
        /// The run.
        name: String,
        /// Why.
        #[source]
        source: ReportReadError,
    },
    /// A test run printed too much.
    #[error("printed more than 64 MiB")]
    TestOverflow,
    /// The run was interrupted.
    #[error("interrupted")]
    Interrupted,
    /// The mutation specs are unusable.
    #[error(transparent)]
    Specs(#[from] crate::gate::mutants::SpecsError),
    /// The rebuild after writing a file's merge-base text back failed.
    #[error("the rebuild after restoring `{file}` failed")]
    Rebuild {
        /// The restored file.
        file: String,
        /// The build's failure.
        #[source]
        source: Box<SideError>,
    },
    /// A report given to the reduce side (`side`: base or head) could not be read.
    #[error("cannot read the {side} report `{}`", path.display())]
    Report {
        /// Which side's report.
        side: String,
        /// The report file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A report given to the reduce side is of another commit than its side's.
    #[error("the {side} report `{}` is of commit {found}, not of the {side} {expected}", path.display())]
    ReportCommit {
        /// Which side's report.
        side: String,
        /// The report file.
        path: PathBuf,
        /// The commit it names.
        found: String,
        /// The side's commit.
        expected: String,
    },
    /// A report did not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The reduction failed.
    #[error(transparent)]
    Reduce(#[from] ReduceError),
}

/// A duration for people: `0.4 s`, `12.3 s`, `15 min 2 s`.
fn seconds(ms: u64) -> String {
    let secs = ms / 1000;
    if secs >= 60 {
        format!("{} min {} s", secs / 60, secs % 60)
    } else {
        format!("{}.{} s", secs, (ms % 1000) / 100)
    }
}

/// `: LINE` with the line of the output that says what went wrong, or nothing.
fn said(detail: &RunDetail) -> String {
    let line = detail.first_error();
    if line.is_empty() {
        "; it printed nothing".to_string()
    } else {
        format!(": {}", crate::oracle::clip(line, 200))
    }
}

impl SideError {
    /// The failed command behind this error, when a command failed.
    pub(crate) fn detail(&self) -> Option<RunDetail> {
        match self {
            SideError::Step { detail } | SideError::TestRun { detail, .. } => Some(detail.clone()),
            SideError::Rebuild { source, .. } => source.detail(),
            _ => None,
        }
    }
}

impl From<SafeFsError> for SideError {
    fn from(err: SafeFsError) -> SideError {
        SideError::Io(err.into())
    }
}

/// A side's own report or marker could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the report `{}`", path.display())]
pub(crate) struct WriteReportError {
    /// The report file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: WriteCause,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteCause {
    /// The file system refused.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The report could not be encoded.
    #[error(transparent)]
    Encode(#[from] crate::gate::encode::EncodeError),
}

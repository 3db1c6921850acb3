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
    /// A mutation could not be written.
    #[error(transparent)]
    Inside(#[from] InsideError),
    /// The side's deadline passed.
    #[error("timeout: the side's deadline passed")]
    Deadline,
    /// An install or build step failed.
    #[error("{what} `{command}` failed ({how}): {tail}")]
    Step {
        /// `install` or `build`.
        what: &'static str,
        /// The command.
        command: String,
        /// How it ended.
        how: String,
        /// The last lines it printed.
        tail: String,
    },
    /// An overlay path with an empty, `.` or `..` component.
    #[error("bad overlay path `{rel}`")]
    BadOverlayPath {
        /// The path.
        rel: String,
    },
    /// The test run left no report file that can be opened.
    #[error("no test report at `{}` ({source})", path.display())]
    ReportMissing {
        /// The report file.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// The report file is not a regular file.
    #[error("the test report `{}` is not a regular file", path.display())]
    ReportNotRegular {
        /// The report file.
        path: PathBuf,
    },
    /// The report file is over [`REPORT_FILE_CAP`].
    #[error("the test report is {len} bytes, over the {REPORT_FILE_CAP}-byte cap")]
    ReportTooLarge {
        /// Its size.
        len: u64,
    },
    /// The report could not be read in its format.
    #[error("cannot read the {name} test report: {source}")]
    ReportUnreadable {
        /// The run.
        name: String,
        /// Why.
        #[source]
        source: ReportReadError,
    },
    /// A test run passed its time limit.
    #[error("timeout: the {name} test run passed its time limit")]
    TestTimeout {
        /// The run.
        name: String,
    },
    /// A test run printed too much.
    #[error("the {name} test run printed more than 64 MiB")]
    TestOverflow {
        /// The run.
        name: String,
    },
    /// The run was interrupted.
    #[error("interrupted")]
    Interrupted,
    /// The mutation specs are unusable.
    #[error(transparent)]
    Specs(#[from] crate::gate::mutants::SpecsError),
    /// The rebuild after writing a file's merge-base text back failed.
    #[error("the rebuild after restoring `{file}` failed: {source}")]
    Rebuild {
        /// The restored file.
        file: String,
        /// The build's failure.
        #[source]
        source: Box<SideError>,
    },
    /// The base report (for the reduce side) could not be read.
    #[error("cannot read the base report `{}`: {source}", path.display())]
    BaseReport {
        /// The report file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A report did not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The reduction failed.
    #[error(transparent)]
    Reduce(#[from] ReduceError),
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
    pub source: std::io::Error,
}

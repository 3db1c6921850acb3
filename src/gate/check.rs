//! `repromin check-test`: the oracle command of the reduce side.
//!
//! It runs the configured test command for one test file, reads the report, and answers for
//! one test: exit 1 with the failure message on stdout when the test failed, exit 0 when it
//! passed, exit 125 ("cannot tell") when the test did not run or the report cannot be read.
//! The reducer's same-failure oracle then learns the message as the failure signature, so a
//! cut is kept only when this test still fails the same way.

use std::path::PathBuf;

use crate::gate::config::ReportFormat;
use crate::gate::readers::ReadContext;
use crate::gate::test_report::Status;
use crate::runner::{self, CommandSpec, Termination};

/// What to check.
#[derive(Clone, Debug)]
pub struct CheckSpec {
    /// The test command template, with `{report}` (and `{node_reporter}`) still unexpanded
    /// when the format needs a file.
    pub command: String,
    /// The report format.
    pub format: ReportFormat,
    /// The test file.
    pub file: String,
    /// The test's full name.
    pub name: String,
    /// Time limit.
    pub timeout: std::time::Duration,
}

/// What the check found, as exit status and output.
pub fn check(spec: &CheckSpec) -> (i32, String) {
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(err) => return (125, format!("repromin-check: cannot tell: {err}\n")),
    };
    let tmp = std::env::var_os("TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let report = tmp.join("repromin-check-report");
    let reporter = tmp.join("repromin-node-reporter.mjs");
    let _ = std::fs::remove_file(&report);
    if spec.command.contains("{node_reporter}") {
        let _ = std::fs::write(&reporter, crate::gate::node_test::REPORTER);
    }
    let command = crate::gate::exec::expand(
        &spec.command,
        std::slice::from_ref(&spec.file),
        &report,
        &reporter,
    );
    let run = CommandSpec {
        argv: vec!["sh".into(), "-c".into(), command],
        env: vec![("CI".into(), "1".into())],
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    let outcome = match runner::run(&run, &cwd, &tmp, spec.timeout, &never) {
        Ok(outcome) => outcome,
        Err(err) => return (125, format!("repromin-check: cannot tell: {err}\n")),
    };
    if !matches!(outcome.termination, Termination::Exited(_)) {
        return (
            125,
            format!(
                "repromin-check: cannot tell: the test run {}\n",
                outcome.termination.describe()
            ),
        );
    }
    let bytes = if spec.command.contains("{report}") {
        match std::fs::read(&report) {
            Ok(bytes) => bytes,
            Err(err) => {
                return (
                    125,
                    format!("repromin-check: cannot tell: no report ({err})\n"),
                );
            }
        }
    } else {
        outcome.output.clone()
    };
    let root = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let root = root.display().to_string();
    let selected = [spec.file.clone()];
    let ctx = ReadContext {
        root: &root,
        selected: &selected,
    };
    let parsed = crate::gate::exec::read_report(spec.format, &bytes, &ctx);
    let report = match parsed {
        Ok(report) => report,
        Err(err) => return (125, format!("repromin-check: cannot tell: {err}\n")),
    };
    let Some(file) = report.files.iter().find(|f| f.path == spec.file) else {
        return (
            125,
            "repromin-check: cannot tell: the test file did not run\n".into(),
        );
    };
    if let Some(message) = &file.load_error {
        return (
            1,
            format!("repromin-check: the test file failed to load\n{message}\n"),
        );
    }
    match file.tests.iter().find(|t| t.name == spec.name) {
        None => (
            125,
            "repromin-check: cannot tell: the test did not run\n".into(),
        ),
        Some(test) => match test.status {
            Status::Passed => (0, "repromin-check: the test passed\n".into()),
            Status::Skipped => (
                125,
                "repromin-check: cannot tell: the test was skipped\n".into(),
            ),
            Status::Failed => {
                let message = test.messages.join("\n");
                (1, format!("repromin-check: the test failed\n{message}\n"))
            }
        },
    }
}

//! `repromin check-test`: the oracle command of the reduce side.
//!
//! It runs the configured test command for one test file, reads the report, and answers for
//! one test: exit 1 with the failure message on stdout when the test failed, exit 0 when it
//! passed, exit 125 ("cannot tell") when the test did not run or the report cannot be read.
//! The reducer's same-failure oracle then learns the message as the failure signature, so a
//! cut is kept only when this test still fails the same way.
//!
//! For a test whose file hung on base, the check is a hang check ([`CheckSpec::hang`]): the
//! test runs alone where the runner selects tests by id (its whole file elsewhere), and
//! the failure is a run still going at the limit; a run that ends, whatever it reports, is
//! not that failure.

use std::path::PathBuf;

use crate::gate::config::ReportFormat;
use crate::gate::readers::ReadContext;
use crate::gate::test_report::Status;
use crate::runner::{self, CommandSpec, Termination};

/// What to check.
#[derive(Clone, Debug)]
pub(crate) struct CheckSpec {
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
    /// A hang check: the failure is a run still going after this long (the run is stopped
    /// there), and a run that ends is not it. `timeout` then plays no part.
    pub hang: Option<std::time::Duration>,
    /// For cargo: a directory that keeps each worker's build directory between runs, so
    /// dependencies are built once. The packages of the tree itself are cleaned before
    /// every run, so nothing of an earlier tree is reused.
    pub cargo_target_root: Option<PathBuf>,
    /// The container the test command runs in (the working directory, `TMPDIR` and the
    /// cargo build directory mounted at their own paths), if any.
    pub container: Option<crate::container::Container>,
}

/// Exit 125 ("cannot tell", the `git bisect run` convention) and why.
fn cannot_tell(why: impl std::fmt::Display) -> (i32, String) {
    (125, format!("repromin-check: cannot tell: {why}\n"))
}

/// What the check found, as exit status and output.
pub(crate) fn check(spec: &CheckSpec) -> (i32, String) {
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(err) => {
            return cannot_tell(crate::with_causes(&err));
        }
    };
    let tmp = std::env::var_os("TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let files = crate::gate::sides::RunFiles::new(&tmp.join("repromin-check"), spec.format);
    let prepared = std::fs::create_dir_all(tmp.join("repromin-check"))
        .and_then(|()| files.prepare(&spec.command));
    if let Err(err) = prepared {
        return cannot_tell(crate::with_causes(&err));
    }
    let tests = std::slice::from_ref(&spec.file);
    let command = match spec.hang {
        Some(_) => files
            .expand_ids(
                &spec.command,
                spec.format,
                tests,
                &[(spec.file.as_str(), spec.name.as_str())],
                &cwd,
            )
            .unwrap_or_else(|| files.expand(&spec.command, tests, &cwd)),
        None => files.expand(&spec.command, tests, &cwd),
    };
    let timeout = spec.hang.unwrap_or(spec.timeout);
    let mut env = crate::gate::sides::side_env();
    let never = std::sync::atomic::AtomicBool::new(false);
    let cargo = crate::gate::build_dir::Cargo {
        cwd: &cwd,
        tmp: &tmp,
        timeout,
        never: &never,
    };
    let mut build_dir = None;
    if let Some(root) = &spec.cargo_target_root {
        match crate::gate::build_dir::prepare(root, &cargo) {
            Ok(dir) => {
                env.push(("CARGO_TARGET_DIR".into(), dir.dir.display().to_string()));
                build_dir = Some(dir);
            }
            Err(err) => {
                return cannot_tell(crate::with_causes(&err));
            }
        }
    }
    let run = CommandSpec {
        argv: vec!["sh".into(), "-c".into(), command],
        env,
        memory: None,
    };
    let mut mounts = vec![cwd.clone(), tmp.clone()];
    mounts.extend(spec.cargo_target_root.iter().cloned());
    let confinement = spec.container.as_ref().map(|container| {
        crate::container::ContainerRuns::new(
            container.clone(),
            crate::container::Mount::SamePaths(mounts),
        )
    });
    let outcome = runner::run_confined(
        &run,
        &cwd,
        &tmp,
        timeout,
        &never,
        confinement.as_ref().map(|c| c as &dyn runner::Confinement),
        None,
    );
    if let Some(dir) = build_dir {
        dir.remember(&cargo);
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(err) => {
            return cannot_tell(crate::with_causes(&err));
        }
    };
    if let Some(limit) = spec.hang {
        return if outcome.termination == Termination::TimedOut {
            (
                1,
                format!(
                    "repromin-check: the test failed to finish within {} ms\n",
                    limit.as_millis()
                ),
            )
        } else {
            (0, "repromin-check: the test run ended\n".into())
        };
    }
    if !matches!(outcome.termination, Termination::Exited(_)) {
        return cannot_tell(format!("the test run {}", outcome.termination.describe()));
    }
    let (format, source) = files.source(spec.format, &spec.command);
    let bytes = if let Some(report) = source {
        match std::fs::read(report) {
            Ok(bytes) => bytes,
            Err(err) => {
                return cannot_tell(format!("no report ({})", crate::with_causes(&err)));
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
    let parsed = crate::gate::sides::read_report(format, &bytes, &ctx);
    let report = match parsed {
        Ok(report) => report,
        Err(err) => {
            return cannot_tell(crate::with_causes(&err));
        }
    };
    let Some(file) = report.files.iter().find(|f| f.path == spec.file) else {
        return cannot_tell("the test file did not run");
    };
    if let Some(message) = &file.load_error {
        return (
            1,
            format!("repromin-check: the test file failed to load\n{message}\n"),
        );
    }
    match file.tests.iter().find(|t| t.name == spec.name) {
        None => cannot_tell("the test did not run"),
        Some(test) => match test.status {
            Status::Passed => (0, "repromin-check: the test passed\n".into()),
            Status::Skipped => cannot_tell("the test was skipped"),
            Status::Failed => {
                let message = test.messages.join("\n");
                (1, format!("repromin-check: the test failed\n{message}\n"))
            }
        },
    }
}

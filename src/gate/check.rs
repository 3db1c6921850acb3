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

/// Why the build directory of a worker cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CargoTargetError {
    /// It could not be made.
    #[error("cannot create the build directory `{}`: {source}", dir.display())]
    Create {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It could not be emptied.
    #[error("cannot empty the build directory `{}`: {source}", dir.display())]
    Empty {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

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
    /// For cargo: a directory that keeps each worker's build directory between runs, so
    /// dependencies are built once. The packages of the tree itself are cleaned before
    /// every run, so nothing of an earlier tree is reused.
    pub cargo_target_root: Option<PathBuf>,
    /// The container the test command runs in (the working directory, `TMPDIR` and the
    /// cargo build directory mounted at their own paths), if any.
    pub container: Option<crate::container::Container>,
}

/// What the check found, as exit status and output.
pub(crate) fn check(spec: &CheckSpec) -> (i32, String) {
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(err) => return (125, format!("repromin-check: cannot tell: {err}\n")),
    };
    let tmp = std::env::var_os("TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let files = crate::gate::sides::RunFiles::new(&tmp.join("repromin-check"), spec.format);
    let prepared = std::fs::create_dir_all(tmp.join("repromin-check"))
        .and_then(|()| files.prepare(&spec.command));
    if let Err(err) = prepared {
        return (125, format!("repromin-check: cannot tell: {err}\n"));
    }
    let command = files.expand(&spec.command, std::slice::from_ref(&spec.file), &cwd);
    let mut env = crate::gate::sides::side_env();
    let never = std::sync::atomic::AtomicBool::new(false);
    if let Some(root) = &spec.cargo_target_root {
        match cargo_target(root, &cwd, &tmp, spec.timeout, &never) {
            Ok(dir) => env.push(("CARGO_TARGET_DIR".into(), dir.display().to_string())),
            Err(err) => return (125, format!("repromin-check: cannot tell: {err}\n")),
        }
    }
    let run = CommandSpec {
        argv: vec!["sh".into(), "-c".into(), command],
        env,
    };
    let mut mounts = vec![cwd.clone(), tmp.clone()];
    mounts.extend(spec.cargo_target_root.iter().cloned());
    let confinement = spec.container.as_ref().map(|container| {
        crate::container::ContainerRuns::new(
            container.clone(),
            crate::container::Mount::SamePaths(mounts),
        )
    });
    let outcome = match runner::run_confined(
        &run,
        &cwd,
        &tmp,
        spec.timeout,
        &never,
        confinement.as_ref().map(|c| c as &dyn runner::Confinement),
        None,
    ) {
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
    let (format, source) = files.source(spec.format, &spec.command);
    let bytes = if let Some(report) = source {
        match std::fs::read(report) {
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
    let parsed = crate::gate::sides::read_report(format, &bytes, &ctx);
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

/// The build directory of the worker running in `cwd`, under `root`, with the freshness
/// records of the tree's own packages removed. Cargo decides freshness by modification
/// times, and the reducer restores the original times of the files it rewrites, so an
/// artifact built from an earlier tree could pass for fresh. Without its record cargo
/// compiles a package again; rustc's incremental cache, which compares file contents, makes
/// that quick. The dependencies (which come from outside the tree) stay built.
fn cargo_target(
    root: &std::path::Path,
    cwd: &std::path::Path,
    tmp: &std::path::Path,
    timeout: std::time::Duration,
    never: &std::sync::atomic::AtomicBool,
) -> Result<PathBuf, CargoTargetError> {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(cwd.as_os_str().as_encoded_bytes());
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).map_err(|source| CargoTargetError::Create {
        dir: dir.clone(),
        source,
    })?;
    let env = vec![("CARGO_TARGET_DIR".to_string(), dir.display().to_string())];
    let metadata = CommandSpec {
        argv: [
            "cargo",
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ]
        .map(String::from)
        .to_vec(),
        env: env.clone(),
    };
    let packages: Option<Vec<String>> = runner::run(&metadata, cwd, tmp, timeout, never)
        .ok()
        .filter(|o| o.termination == Termination::Exited(0))
        .and_then(|o| {
            // Cargo's JSON is the last line; warnings may come before it.
            let text = String::from_utf8_lossy(&o.output).to_string();
            let line = text.lines().rev().find(|l| l.starts_with('{'))?.to_string();
            let value: serde_json::Value = serde_json::from_str(&line).ok()?;
            let names = value
                .get("packages")?
                .as_array()?
                .iter()
                .filter_map(|p| p.get("name")?.as_str().map(str::to_string))
                .collect();
            Some(names)
        });
    let cleaned = packages.is_some_and(|names| forget_packages(&dir, &names).is_ok());
    if !cleaned {
        // Whatever cargo could not clean goes entirely.
        std::fs::remove_dir_all(&dir)
            .and_then(|()| std::fs::create_dir_all(&dir))
            .map_err(|source| CargoTargetError::Empty {
                dir: dir.clone(),
                source,
            })?;
    }
    Ok(dir)
}

/// Removes cargo's freshness records (`<profile>/.fingerprint/<package>-<hash>`) of the
/// packages `names` from the build directory `dir`.
fn forget_packages(dir: &std::path::Path, names: &[String]) -> std::io::Result<()> {
    let is_record = |file: &str| {
        names.iter().any(|name| {
            file.strip_prefix(name.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|hash| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        })
    };
    // Profiles sit at `dir/<profile>`, or `dir/<target triple>/<profile>` when cross-building.
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((at, depth)) = stack.pop() {
        for entry in std::fs::read_dir(&at)? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let path = entry.path();
            if entry.file_name() == ".fingerprint" {
                for record in std::fs::read_dir(&path)? {
                    let record = record?;
                    if is_record(&record.file_name().to_string_lossy()) {
                        std::fs::remove_dir_all(record.path())?;
                    }
                }
            } else if depth < 2 {
                stack.push((path, depth + 1));
            }
        }
    }
    Ok(())
}

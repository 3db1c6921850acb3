//! What every side shares: the deadline, the command template, shell steps, the overlay,
//! the worktree, and test runs (in the sandbox when there is one) with their reports.
//!
//! A test run's report is read as a regular file of bounded size, never through a symlink
//! ([`crate::safe_fs`]); overlay files are written never through a symlink either.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::container::{Container, ContainerRuns, Mount};
use crate::gate::config::{RepoConfig, ReportFormat};
use crate::gate::encode::Outcome;
use crate::gate::git::Repo;
use crate::gate::plan::Plan;
use crate::gate::readers::{self, Format, ReadContext};
use crate::gate::sandbox::{self, Sandbox, SandboxRuns};
use crate::gate::test_report::{FileResult, RunDetail, TestReport};
use crate::runner::{self, CommandSpec, Confinement, Termination};
use crate::safe_fs::SafeFsError;

use super::error::{REPORT_FILE_CAP, ReportReadError, SideError};
use super::options::{ExecOptions, Side};
use super::template::RunFiles;

/// Reads a run's report in the configured format.
///
/// # Errors
/// The reader refuses the report.
pub(crate) fn read_report(
    format: Format,
    bytes: &[u8],
    ctx: &ReadContext,
) -> Result<TestReport, ReportReadError> {
    Ok(readers::read(format, bytes, ctx)?)
}

/// The moment a side must be done by.
pub(crate) struct Deadline(pub(crate) Instant);

impl Deadline {
    /// The time limit of a step: `step`, or what is left if that is less.
    pub(crate) fn limit(&self, step: Duration) -> Result<Duration, SideError> {
        let left = self.0.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(SideError::Deadline);
        }
        Ok(step.min(left))
    }

    /// The time left before the deadline.
    pub(crate) fn left(&self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }

    /// Fails once the deadline has passed.
    pub(crate) fn check(&self) -> Result<(), SideError> {
        self.limit(Duration::ZERO).map(|_| ())
    }
}

/// GitHub Actions' file commands: where one is set, a side's install, build and test
/// commands get `/dev/null` for it, so that nothing they run (a test tool that writes a job
/// summary, a build script that sets outputs) can add to the worker step's outputs,
/// environment or summary. Only repromin writes the step's outputs (`crate::gate::github`).
pub(crate) const GITHUB_FILE_COMMANDS: [&str; 5] = [
    "GITHUB_OUTPUT",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
];

/// The environment overrides of a side's commands.
pub(crate) fn side_env() -> Vec<(String, String)> {
    let mut env = vec![("CI".to_string(), "1".to_string())];
    env.extend(
        GITHUB_FILE_COMMANDS
            .iter()
            .filter(|name| std::env::var_os(name).is_some())
            .map(|name| ((*name).to_string(), "/dev/null".to_string())),
    );
    env
}

/// Runs a shell step (install or build) in the tree; its failure is the side's.
pub(crate) fn shell_step(
    what: &'static str,
    command: &str,
    tree: &Path,
    tmp: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
    container: Option<&Container>,
) -> Result<(), SideError> {
    let isolation = Isolation {
        sandbox: None,
        container,
    };
    let outcome = run_shell(command, tree, &[tmp], tmp, isolation, timeout, interrupt)?;
    match outcome.termination {
        Termination::Exited(0) => Ok(()),
        _ => Err(SideError::Step {
            detail: run_detail(what, command, &outcome),
        }),
    }
}

/// What a finished command did, for an error marker.
pub(crate) fn run_detail(step: &str, command: &str, outcome: &runner::RunOutcome) -> RunDetail {
    RunDetail {
        step: step.to_string(),
        command: command.to_string(),
        how: outcome.termination.describe(),
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        tail: crate::oracle::tail(&outcome.output, 20),
    }
}

/// Writes `bytes` at `rel` inside `root`, never through a symlink: every parent must be a
/// real directory inside the tree, and whatever is at the path is replaced.
fn write_inside(root: &Path, rel: &str, bytes: &[u8], mode: &str) -> Result<(), SideError> {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, parents)) = parts.split_last() else {
        return Err(SideError::BadOverlayPath {
            rel: rel.to_string(),
        });
    };
    for part in parents {
        if part.is_empty() || *part == "." || *part == ".." {
            return Err(SideError::BadOverlayPath {
                rel: rel.to_string(),
            });
        }
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                crate::workspace::remove_any(&dir)?;
                std::fs::create_dir(&dir)?;
            }
            Err(_) => std::fs::create_dir(&dir)?,
        }
    }
    let path = dir.join(name);
    crate::workspace::remove_any(&path)?;
    if mode == "120000" {
        let target = String::from_utf8_lossy(bytes).to_string();
        std::os::unix::fs::symlink(target, &path)?;
        return Ok(());
    }
    crate::safe_fs::write_new(&path, bytes)?;
    let perm = if mode == "100755" { 0o755 } else { 0o644 };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(perm))?;
    Ok(())
}

/// Lays the head's tests and carried files over the base tree and removes the removals.
pub(crate) fn overlay_tree(
    repo: &Repo,
    head: &str,
    plan: &Plan,
    tree: &Path,
) -> Result<(), SideError> {
    let modes: std::collections::HashMap<String, String> =
        repo.ls_tree(head)?.into_iter().collect();
    for path in plan.tests.iter().chain(&plan.carry) {
        let Some(bytes) = repo.blob(head, path)? else {
            continue;
        };
        let mode = modes.get(path).map_or("100644", String::as_str);
        write_inside(tree, path, &bytes, mode)?;
    }
    for path in &plan.overlay_removals {
        if !plan.tests.contains(path) && !plan.carry.contains(path) {
            crate::workspace::remove_any(&tree.join(path))?;
        }
    }
    Ok(())
}

/// Reads a report file: a regular file (not a symlink) of bounded size.
fn read_report_file(path: &Path) -> Result<Vec<u8>, SideError> {
    crate::safe_fs::read_capped(path, REPORT_FILE_CAP).map_err(|err| match err {
        SafeFsError::NotFound { source, .. }
        | SafeFsError::Symlink { source, .. }
        | SafeFsError::Open { source, .. } => SideError::ReportMissing {
            path: path.to_path_buf(),
            source,
        },
        SafeFsError::WrongKind { .. } => SideError::ReportNotRegular {
            path: path.to_path_buf(),
        },
        SafeFsError::TooLarge { len, .. } => SideError::ReportTooLarge { len },
        SafeFsError::Io { source, .. } => SideError::Io(source),
    })
}

/// How a side's command runs: on the host or in a container (the `container` key), and
/// as the sandbox user in namespaces or not (`--sandbox-user`, for head test code on base).
#[derive(Clone, Copy, Default)]
pub(crate) struct Isolation<'a> {
    /// The sandbox, if any.
    pub sandbox: Option<&'a Sandbox>,
    /// The container runner, if any.
    pub container: Option<&'a Container>,
}

impl Isolation<'_> {
    /// The confinement of a run in `tree` whose own directories are `dirs`: the sandbox,
    /// the container (the tree and `dirs` mounted at their own paths), or both (the
    /// container runs as the sandbox user, to whom the directories are handed over).
    pub(crate) fn confinement(&self, tree: &Path, dirs: &[&Path]) -> Option<Box<dyn Confinement>> {
        let shared: Vec<PathBuf> = dirs.iter().map(|dir| dir.to_path_buf()).collect();
        let sandbox = self
            .sandbox
            .map(|sandbox| SandboxRuns::new(sandbox.clone(), shared.clone()));
        let Some(container) = self.container else {
            return sandbox.map(|s| Box::new(s) as Box<dyn Confinement>);
        };
        let mut mounts = shared;
        if !mounts.iter().any(|m| m == tree) {
            mounts.insert(0, tree.to_path_buf());
        }
        let runs = ContainerRuns::new(container.clone(), Mount::SamePaths(mounts));
        Some(match (sandbox, self.sandbox) {
            (Some(handover), Some(user)) => Box::new(SandboxedContainer {
                handover,
                runs: runs.as_user(user.uid, user.gid),
            }),
            _ => Box::new(runs),
        })
    }
}

/// A container run as the sandbox user: the sandbox hands the directories over and takes
/// them back, the container runs the command.
struct SandboxedContainer {
    handover: SandboxRuns,
    runs: ContainerRuns,
}

impl Confinement for SandboxedContainer {
    fn hand_over(&self, cwd: &Path, tmpdir: &Path) {
        self.handover.hand_over(cwd, tmpdir);
    }
    fn wrap(&self, spec: &CommandSpec, cwd: &Path, tmpdir: &Path) -> CommandSpec {
        self.runs.wrap(spec, cwd, tmpdir)
    }
    fn take_back(&self, cwd: &Path, tmpdir: &Path) {
        self.handover.take_back(cwd, tmpdir);
    }
    fn watches(&self) -> bool {
        self.runs.watches()
    }
    fn watch(&self, cwd: &Path, tmpdir: &Path, done: &AtomicBool) -> Option<Termination> {
        self.runs.watch(cwd, tmpdir, done)
    }
    fn settle(&self, cwd: &Path, tmpdir: &Path, outcome: runner::RunOutcome) -> runner::RunOutcome {
        self.runs.settle(cwd, tmpdir, outcome)
    }
}

/// Runs `command` in `tree` under `sh -c`, isolated as `isolation` says: `dirs` (the run's
/// own directories) are handed to the sandbox user with the tree for the run and taken back
/// afterwards, and mounted in the container.
fn run_shell(
    command: &str,
    tree: &Path,
    dirs: &[&Path],
    tmp: &Path,
    isolation: Isolation<'_>,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<runner::RunOutcome, SideError> {
    let spec = CommandSpec {
        argv: vec!["sh".into(), "-c".into(), command.into()],
        env: side_env(),
        memory: None,
    };
    let confinement = isolation.confinement(tree, dirs);
    Ok(runner::run_confined(
        &spec,
        tree,
        tmp,
        timeout,
        interrupt,
        confinement.as_deref(),
        None,
    )?)
}

/// A fresh, empty directory `scratch/PREFIX-NAME`.
pub(crate) fn fresh_dir(scratch: &Path, prefix: &str, name: &str) -> Result<PathBuf, SideError> {
    let dir = scratch.join(format!("{prefix}-{name}"));
    crate::workspace::remove_any(&dir)?;
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A build step after head test code has run in the tree (the mutants side): in the
/// sandbox when there is one.
pub(crate) fn build_step(
    name: &str,
    build: &str,
    tree: &Path,
    scratch: &Path,
    isolation: Isolation<'_>,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<(), SideError> {
    let tmp = fresh_dir(scratch, "tmp", name)?;
    let outcome = run_shell(build, tree, &[&tmp], &tmp, isolation, timeout, interrupt)?;
    match outcome.termination {
        Termination::Exited(0) => Ok(()),
        _ => Err(SideError::Step {
            detail: run_detail("build", build, &outcome),
        }),
    }
}

/// Where a test run happens: the tree, its scratch directory, the sandbox, the time limit
/// of one run.
pub(crate) struct RunPlace<'a> {
    /// The worktree.
    pub tree: &'a Path,
    /// The side's scratch directory.
    pub scratch: &'a Path,
    /// The sandbox and the container, if any.
    pub isolation: Isolation<'a>,
    /// The time limit of one run (`timeouts.test`).
    pub timeout: Duration,
    /// When the side must be done: a run never goes past it.
    pub deadline: &'a Deadline,
    /// Polled to stop early.
    pub interrupt: &'a AtomicBool,
}

/// One run of the test command: how it ended and its report, read or not.
struct FileRun {
    exit_code: Option<i32>,
    /// How the run ended when it gave no report because it was stopped: timed out, killed
    /// by a signal (an out-of-memory abort among them).
    crashed: Option<String>,
    report: Result<TestReport, SideError>,
}

/// Whether a run that ended like this was stopped rather than finished: a timeout, a
/// signal, or a shell reporting its command killed by one (status 128 + N).
fn stopped(termination: Termination) -> bool {
    match termination {
        Termination::TimedOut
        | Termination::Signaled(_)
        | Termination::MemoryLimit
        | Termination::OverMemory
        | Termination::WorkspaceLimit => true,
        Termination::Exited(code) => code > 128 && code < 160,
        _ => false,
    }
}

/// Runs the test command once on `tests` (under the memory limit) and reads its report.
fn run_files(
    name: &str,
    config: &RepoConfig,
    tests: &[String],
    place: &RunPlace<'_>,
) -> Result<FileRun, SideError> {
    run_selected(name, config, tests, None, place).map(|(run, _)| run)
}

/// Like [`run_files`], with only the tests `ids` of those files where the runner selects
/// tests by id; also says whether it did.
fn run_selected(
    name: &str,
    config: &RepoConfig,
    tests: &[String],
    ids: Option<&[(&str, &str)]>,
    place: &RunPlace<'_>,
) -> Result<(FileRun, bool), SideError> {
    let out_dir = fresh_dir(place.scratch, "out", name)?;
    let tmp = fresh_dir(place.scratch, "tmp", name)?;
    let files = RunFiles::new(&out_dir, config.report);
    files.prepare(&config.command)?;
    let by_id = ids
        .and_then(|ids| files.expand_ids(&config.command, config.report, tests, ids, place.tree));
    let selected_by_id = by_id.is_some();
    let command = by_id.unwrap_or_else(|| files.expand(&config.command, tests, place.tree));
    // The data limit bounds what the command can allocate (an unbounded allocation on the
    // base side ends as a failure there, not as a machine out of memory).
    let limited = format!(
        "ulimit -d {} 2>/dev/null; {command}",
        config.memory_mb.saturating_mul(1024)
    );
    let dirs = [out_dir.as_path(), tmp.as_path()];
    let timeout = place.deadline.limit(place.timeout)?;
    let outcome = run_shell(
        &limited,
        place.tree,
        &dirs,
        &tmp,
        place.isolation,
        timeout,
        place.interrupt,
    )?;
    let detail = || run_detail(name, &command, &outcome);
    let exit_code = match outcome.termination {
        Termination::Exited(code) => Some(code),
        Termination::OutputOverflow => {
            return Err(SideError::TestRun {
                detail: detail(),
                problem: Box::new(SideError::TestOverflow),
            });
        }
        Termination::Interrupted => return Err(SideError::Interrupted),
        Termination::TimedOut
        | Termination::Signaled(_)
        | Termination::MemoryLimit
        | Termination::OverMemory
        | Termination::WorkspaceLimit => None,
    };
    let (format, source) = files.source(config.report, &config.command);
    let bytes = match source {
        Some(path) => read_report_file(path),
        None => Ok(outcome.output.clone()),
    };
    let root = std::fs::canonicalize(place.tree).unwrap_or_else(|_| place.tree.to_path_buf());
    let root_text = root.display().to_string();
    let ctx = ReadContext {
        root: &root_text,
        selected: tests,
    };
    let report = bytes.and_then(|bytes| {
        read_report(format, &bytes, &ctx).map_err(|source| SideError::ReportUnreadable {
            name: name.to_string(),
            source,
        })
    });
    let crashed = match (&report, outcome.termination) {
        (_, Termination::TimedOut) => Some(format!("timed out after {} s", timeout.as_secs())),
        (Err(_), termination) if stopped(termination) => Some(format!(
            "ended with {} and no report",
            termination.describe()
        )),
        _ => None,
    };
    let report = report.map_err(|problem| SideError::TestRun {
        detail: detail(),
        problem: Box::new(problem),
    });
    Ok((
        FileRun {
            exit_code,
            crashed,
            report,
        },
        selected_by_id,
    ))
}

/// One rerun of the tests `ids` (in the files `tests`): by id where the runner allows and
/// `by_id` asks for it, else the files, as [`test_run`] runs them. Returns the exit status,
/// the report (a run stopped before it wrote one fails every test of its files) and
/// whether the tests were selected by id.
///
/// # Errors
/// The run could not be started or its report cannot be read.
pub(crate) fn rerun(
    name: &str,
    config: &RepoConfig,
    tests: &[String],
    ids: &[(&str, &str)],
    by_id: bool,
    place: &RunPlace<'_>,
) -> Result<(Option<i32>, TestReport, bool), SideError> {
    if by_id && super::template::selects_by_id(&config.command, config.report) {
        let (run, selected_by_id) = run_selected(name, config, tests, Some(ids), place)?;
        if selected_by_id {
            if let Some(how) = &run.crashed {
                let files = tests.iter().map(|t| crashed_file(t, how)).collect();
                return Ok((None, TestReport { files }, true));
            }
            let mut report = run.report?;
            report.files.retain(|f| tests.contains(&f.path));
            return Ok((run.exit_code, report, true));
        }
    }
    match test_run(name, config, tests, place)? {
        Outcome::Report { exit_code, report } => Ok((exit_code, report, false)),
        // `test_run` gives only reports.
        _ => Ok((None, TestReport::default(), false)),
    }
}

/// Runs the test files `tests` and reads the report.
///
/// A run that is stopped before it writes a report (its timeout, the memory limit, a
/// signal) fails every test of its file; with several files, each is then run on its own
/// to tell which. A report that cannot tie some selected files' tests to them (JUnit
/// without a `file` attribute, nextest's JUnit, `cargo test` targets of the same name in
/// two packages) is completed the same way: each such file is run on its own, and what
/// that run reports is that file's.
pub(crate) fn test_run(
    name: &str,
    config: &RepoConfig,
    tests: &[String],
    place: &RunPlace<'_>,
) -> Result<Outcome, SideError> {
    let run = run_files(name, config, tests, place)?;
    if let Some(how) = &run.crashed {
        if let [only] = tests {
            return Ok(crashed_outcome(only, how));
        }
        return each_on_its_own(name, config, tests, place, TestReport::default());
    }
    let mut report = run.report?;
    // Only what the judge reads: the selected files.
    report.files.retain(|f| tests.contains(&f.path));
    let missing: Vec<String> = tests
        .iter()
        .filter(|t| !report.files.iter().any(|f| &f.path == *t))
        .cloned()
        .collect();
    // Files a report could not tie its tests to: JUnit without `file` attributes
    // (nextest's among them), `cargo test` targets of several packages with the same name.
    let unattributed: Vec<String> = match config.report {
        ReportFormat::Junit => missing,
        ReportFormat::Cargo | ReportFormat::Libtest => missing
            .into_iter()
            .filter(|f| super::template::rust_target(f).is_some())
            .collect(),
        _ => Vec::new(),
    };
    if tests.len() > 1 && !unattributed.is_empty() {
        return each_on_its_own(name, config, &unattributed, place, report);
    }
    Ok(Outcome::Report {
        exit_code: run.exit_code,
        report,
    })
}

/// The outcome of a run of one file that was stopped: the file crashed.
fn crashed_outcome(file: &str, how: &str) -> Outcome {
    Outcome::Report {
        exit_code: None,
        report: TestReport {
            files: vec![crashed_file(file, how)],
        },
    }
}

fn crashed_file(file: &str, how: &str) -> FileResult {
    FileResult {
        path: file.to_string(),
        load_error: None,
        crashed: Some(how.to_string()),
        tests: Vec::new(),
    }
}

/// Runs each of `files` on its own and adds what each run reports of its file to
/// `report`. The exit status is 0 only when every run exited 0.
fn each_on_its_own(
    name: &str,
    config: &RepoConfig,
    files: &[String],
    place: &RunPlace<'_>,
    mut report: TestReport,
) -> Result<Outcome, SideError> {
    let mut exit_code = Some(0);
    for (index, file) in files.iter().enumerate() {
        let one = std::slice::from_ref(file);
        let run = run_files(&format!("{name}-{}", index + 1), config, one, place)?;
        if let Some(how) = &run.crashed {
            report.files.push(crashed_file(file, how));
            exit_code = None;
            continue;
        }
        let mut single = run.report?;
        single.files.retain(|f| &f.path == file);
        report.files.extend(single.files);
        if run.exit_code != Some(0) {
            exit_code = exit_code.and(run.exit_code);
        }
    }
    Ok(Outcome::Report { exit_code, report })
}

/// A fresh scratch directory of a side under `TMPDIR` (`repromin-PURPOSE-…`, marked as
/// this process's); with a sandbox, one the sandbox user can reach (mode 0755), since its
/// trees and run directories are inside.
pub(crate) fn scratch_dir(
    purpose: &str,
    sandboxed: bool,
) -> Result<crate::scratch::Scratch, SideError> {
    let scratch = crate::scratch::Scratch::new(purpose)?;
    if sandboxed {
        scratch.set_mode(0o755)?;
    }
    Ok(scratch)
}

/// Adds a detached worktree of `commit` in a fresh scratch directory, runs `work` in it
/// (tree, scratch), and removes the worktree either way.
pub(crate) fn with_worktree<T>(
    repo: &Repo,
    commit: &str,
    sandboxed: bool,
    work: impl FnOnce(&Path, &Path) -> Result<T, SideError>,
) -> Result<T, SideError> {
    let scratch = scratch_dir("exec", sandboxed)?;
    let tree = scratch.path().join("tree");
    // Making the scratch directory swept those of killed runs; forget their worktrees.
    repo.prune_worktrees();
    repo.add_worktree(&tree, commit)?;
    let result = work(&tree, scratch.path());
    repo.remove_worktree(&tree);
    result
}

/// Installs and builds the tree, before any file of the head lands on it.
pub(crate) fn install_and_build(
    config: &RepoConfig,
    tree: &Path,
    scratch: &Path,
    deadline: &Deadline,
    interrupt: &AtomicBool,
    container: Option<&Container>,
) -> Result<(), SideError> {
    let tmp = fresh_dir(scratch, "tmp", "setup")?;
    for command in &config.install {
        let limit = deadline.limit(Duration::from_secs(config.timeouts.install))?;
        shell_step("install", command, tree, &tmp, limit, interrupt, container)?;
    }
    if let Some(build) = &config.build {
        let limit = deadline.limit(Duration::from_secs(config.timeouts.build))?;
        shell_step("build", build, tree, &tmp, limit, interrupt, container)?;
    }
    Ok(())
}

/// The container runner of a side whose configuration names a `container` image: the
/// engine checked, the image resolved to its id, stale containers removed.
pub(crate) fn side_container(
    config: &RepoConfig,
    options: &ExecOptions,
) -> Result<Option<Container>, SideError> {
    match config.container_options(options.container_cli) {
        None => Ok(None),
        Some(container) => Ok(Some(Container::prepare(&container)?)),
    }
}

/// The sandbox of a side that runs head test code on base.
pub(crate) fn side_sandbox(options: &ExecOptions) -> Result<Option<Sandbox>, SideError> {
    match (&options.sandbox_user, options.side) {
        (Some(name), Side::Base | Side::Mutants | Side::Reduce) => {
            Ok(Some(sandbox::sandbox_user(name)?))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_writes_never_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(&root).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("tests")).unwrap();
        write_inside(&root, "tests/test_x.py", b"x", "100644").unwrap();
        assert!(
            std::fs::symlink_metadata(root.join("tests"))
                .unwrap()
                .is_dir()
        );
        assert!(!outside.join("test_x.py").exists());
        assert!(write_inside(&root, "../escape", b"x", "100644").is_err());
    }
}

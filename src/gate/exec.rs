//! One worker side of the gate: plan, check out, install, build, overlay, test, encode.
//!
//! A side adds a detached worktree at its commit and installs and builds there *before* any
//! file of the head lands on it, so nothing the pull request carries runs during install or
//! build, and the base still lacks the fix. The base side then lays the head's tests and
//! carried files over the tree, removes the overlay removals and runs the tests twice
//! (`base`, `base-rerun`); the head side runs them once. Every failure becomes an error
//! marker in place of each report the side owes; the worktree is removed either way.
//!
//! With a sandbox user, every test run of the base side (head test code on base) runs in
//! new PID and mount namespaces as that user, with no new privileges and a cleared
//! environment; everything it starts dies with the namespace, and its report is read as a
//! regular file of bounded size, never through a symlink.
//!
//! The mutants side prepares the tree like the base side, runs the specs' test files once
//! as a baseline, then applies each mutation in turn: it writes the mutated text (never
//! through a symlink), rebuilds, runs the spec's test file, writes the merge base's text
//! back and rebuilds again. With a sandbox user, every build and test run from the
//! baseline on runs in the sandbox, since head test code has run in the tree by then.

use std::io::Read as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::gate::config::{RepoConfig, ReportFormat};
use crate::gate::encode::{Outcome, SideReport, TEST_REPORT_CAP, encode};
use crate::gate::git::Repo;
use crate::gate::mutants::{self, MutantResult, MutantRun, MutantsOutcome, MutantsReport};
use crate::gate::plan::{Plan, Planned};
use crate::gate::readers::{self, Format, ReadContext};
use crate::gate::test_report::TestReport;
use crate::runner::{self, CommandSpec, Termination};

/// The default deadline of a side.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(18 * 60);
/// The default deadline of the mutants side.
pub const MUTANTS_BUDGET: Duration = Duration::from_secs(13 * 60);
/// The largest report file read from a test run.
pub const REPORT_FILE_CAP: u64 = 16 * 1024 * 1024;

/// Which side to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The merge base with the head's tests laid over it, tested twice.
    Base,
    /// The head, tested once.
    Head,
    /// The merge base with the head's tests laid over it, mutated by the pull request's
    /// specs one mutation at a time.
    Mutants,
}

impl Side {
    /// The report names this side writes.
    pub fn reports(self) -> &'static [&'static str] {
        match self {
            Side::Base => &["base", "base-rerun"],
            Side::Head => &["head"],
            Side::Mutants => &[crate::gate::mutants::SIDE],
        }
    }

    /// The commit the side checks out.
    pub fn commit<'a>(self, base: &'a str, head: &'a str) -> &'a str {
        match self {
            Side::Base | Side::Mutants => base,
            Side::Head => head,
        }
    }

    /// The side's default deadline.
    pub fn default_budget(self) -> Duration {
        match self {
            Side::Base | Side::Head => DEFAULT_BUDGET,
            Side::Mutants => MUTANTS_BUDGET,
        }
    }
}

/// What `exec` needs.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// The repository.
    pub repo: PathBuf,
    /// The merge base (full SHA).
    pub base: String,
    /// The head (full SHA).
    pub head: String,
    /// Where the reports go.
    pub out: PathBuf,
    /// Which side.
    pub side: Side,
    /// Run head test code on base as this user, in namespaces.
    pub sandbox_user: Option<String>,
    /// The side's deadline.
    pub budget: Duration,
    /// A trusted local configuration (never from the pull request).
    pub local_config: Option<(RepoConfig, String)>,
}

/// A failed step, with the message the marker carries.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(err: E) -> Failure {
        Failure(err.to_string())
    }
}

/// Runs a side and writes its reports into `options.out`. Never fails: every failure
/// becomes an error marker. Returns the test reports written, by name (none for the
/// mutants side, whose one report is `mutants.report`).
pub fn exec(options: &ExecOptions, interrupt: &AtomicBool) -> Vec<(String, SideReport)> {
    let commit = options
        .side
        .commit(&options.base, &options.head)
        .to_string();
    if options.side == Side::Mutants {
        let report = match run_mutants(options, interrupt) {
            Ok(report) => report,
            Err(Failure(message)) => MutantsReport::error(&commit, message),
        };
        write_report(&options.out, mutants::SIDE, &mutants::encode(&report));
        return Vec::new();
    }
    let reports = match run_side(options, &commit, interrupt) {
        Ok(reports) => reports,
        Err(Failure(message)) => options
            .side
            .reports()
            .iter()
            .map(|name| {
                (
                    (*name).to_string(),
                    SideReport::error(name, &commit, message.clone()),
                )
            })
            .collect(),
    };
    for (name, report) in &reports {
        write_report(&options.out, name, &encode(report, TEST_REPORT_CAP));
    }
    reports
}

/// Writes an error marker in place of every report `side` owes, into `out`.
pub fn write_error_markers(out: &Path, side: Side, commit: &str, message: &str) {
    if side == Side::Mutants {
        let marker = MutantsReport::error(commit, message);
        write_report(out, mutants::SIDE, &mutants::encode(&marker));
        return;
    }
    for name in side.reports() {
        let marker = SideReport::error(name, commit, message);
        write_report(out, name, &encode(&marker, TEST_REPORT_CAP));
    }
}

/// Writes `out/NAME.report`, replacing whatever is there.
fn write_report(out: &Path, name: &str, text: &str) {
    let _ = std::fs::create_dir_all(out);
    let path = out.join(format!("{name}.report"));
    let _ = crate::workspace::remove_any(&path);
    let _ = std::fs::write(&path, text);
}

/// Shell-quotes one argument.
pub fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// Expands the command template; `node_reporter` is the path of the node:test reporter.
pub fn expand(template: &str, tests: &[String], report: &Path, node_reporter: &Path) -> String {
    let quoted: Vec<String> = tests.iter().map(|t| quote(t)).collect();
    let mut targets: Vec<String> = Vec::new();
    for t in tests {
        let name = t
            .strip_prefix("tests/")
            .and_then(|rest| {
                rest.strip_suffix("/main.rs")
                    .or_else(|| rest.strip_suffix(".rs").filter(|n| !n.contains('/')))
            })
            .map(str::to_string);
        if let Some(name) = name {
            let arg = format!("--test {}", quote(&name));
            if !targets.contains(&arg) {
                targets.push(arg);
            }
        }
    }
    let mut packages: Vec<String> = Vec::new();
    for t in tests {
        let dir = crate::tree::parent_of(t);
        let pkg = if dir.is_empty() {
            "./".to_string()
        } else {
            format!("./{dir}")
        };
        let pkg = quote(&pkg);
        if !packages.contains(&pkg) {
            packages.push(pkg);
        }
    }
    template
        .replace("{tests}", &quoted.join(" "))
        .replace("{report}", &quote(&report.display().to_string()))
        .replace("{test_targets}", &targets.join(" "))
        .replace("{packages}", &packages.join(" "))
        .replace(
            "{node_reporter}",
            &quote(&node_reporter.display().to_string()),
        )
}

/// Reads a run's report in the configured format.
pub(crate) fn read_report(
    format: ReportFormat,
    bytes: &[u8],
    ctx: &ReadContext,
) -> Result<TestReport, String> {
    let reader = match format {
        ReportFormat::Junit => Format::Junit,
        ReportFormat::VitestJson => Format::VitestJson,
        ReportFormat::JestJson => Format::JestJson,
        ReportFormat::Libtest => Format::LibtestPlain,
        ReportFormat::GoTestJson => Format::GoTestJson,
        ReportFormat::NodeTest => Format::NodeTest,
    };
    readers::read(reader, bytes, ctx).map_err(|e| e.to_string())
}

struct Deadline(Instant);

impl Deadline {
    fn limit(&self, step: Duration) -> Result<Duration, Failure> {
        let left = self.0.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure("timeout: the side's deadline passed".into()));
        }
        Ok(step.min(left))
    }

    fn check(&self) -> Result<(), Failure> {
        self.limit(Duration::ZERO).map(|_| ())
    }
}

/// GitHub Actions' file commands: where one is set, a side's install, build and test
/// commands get `/dev/null` for it, so that nothing they run (a test tool that writes a job
/// summary, a build script that sets outputs) can add to the worker step's outputs,
/// environment or summary. Only repromin writes the step's outputs (`crate::gate::github`).
pub const GITHUB_FILE_COMMANDS: [&str; 5] = [
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
    what: &str,
    command: &str,
    tree: &Path,
    tmp: &Path,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<(), Failure> {
    let spec = CommandSpec {
        argv: vec!["sh".into(), "-c".into(), command.into()],
        env: side_env(),
    };
    let outcome = runner::run(&spec, tree, tmp, timeout, interrupt)?;
    match outcome.termination {
        Termination::Exited(0) => Ok(()),
        other => Err(Failure(format!(
            "{what} `{command}` failed ({}): {}",
            other.describe(),
            crate::oracle::tail(&outcome.output, 5)
        ))),
    }
}

/// Writes `bytes` at `rel` inside `root`, never through a symlink: every parent must be a
/// real directory inside the tree, and whatever is at the path is replaced.
fn write_inside(root: &Path, rel: &str, bytes: &[u8], mode: &str) -> Result<(), Failure> {
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, parents)) = parts.split_last() else {
        return Err(Failure(format!("bad overlay path `{rel}`")));
    };
    for part in parents {
        if part.is_empty() || *part == "." || *part == ".." {
            return Err(Failure(format!("bad overlay path `{rel}`")));
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
    std::fs::write(&path, bytes)?;
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
) -> Result<(), Failure> {
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
fn read_report_file(path: &Path) -> Result<Vec<u8>, Failure> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|e| Failure(format!("no test report at `{}` ({e})", path.display())))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Failure(format!(
            "the test report `{}` is not a regular file",
            path.display()
        )));
    }
    if meta.len() > REPORT_FILE_CAP {
        return Err(Failure(format!(
            "the test report is {} bytes, over the {REPORT_FILE_CAP}-byte cap",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(REPORT_FILE_CAP + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A resolved sandbox user.
#[derive(Clone, Debug)]
pub struct Sandbox {
    name: String,
    uid: u32,
    gid: u32,
}

/// Resolves and checks a sandbox user.
///
/// # Errors
/// An unknown user, or one that is root or the runner itself.
pub fn sandbox_user(name: &str) -> Result<Sandbox, String> {
    let user = nix::unistd::User::from_name(name)
        .map_err(|e| format!("cannot look up sandbox user `{name}`: {e}"))?
        .ok_or_else(|| format!("sandbox user `{name}` does not exist"))?;
    let uid = user.uid.as_raw();
    if uid == 0 {
        return Err(format!("sandbox user `{name}` is root"));
    }
    if uid == nix::unistd::getuid().as_raw() {
        return Err(format!("sandbox user `{name}` is the runner's own user"));
    }
    Ok(Sandbox {
        name: name.to_string(),
        uid,
        gid: user.gid.as_raw(),
    })
}

/// Hands the directories of `root` (not its files) to `uid:gid` for a sandboxed run. As
/// root this is a direct `chown`; otherwise it goes through `sudo -n chown`, the same
/// password-less sudo that starts the sandbox (a GitHub-hosted runner's user has it).
/// Symlinks are never followed. A failure shows up as the run's missing report.
fn chown_dirs(root: &Path, uid: u32, gid: u32) {
    if nix::unistd::getuid().is_root() {
        chown_dirs_as_root(root, uid, gid);
    } else {
        let mut dirs = vec![root.to_path_buf()];
        collect_dirs(root, &mut dirs);
        sudo_chown(&["-h"], uid, gid, &dirs);
    }
}

fn chown_dirs_as_root(root: &Path, uid: u32, gid: u32) {
    let _ = nix::unistd::chown(root, Some(uid.into()), Some(gid.into()));
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                chown_dirs_as_root(&item.path(), uid, gid);
            }
        }
    }
}

fn collect_dirs(root: &Path, dirs: &mut Vec<PathBuf>) {
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            // `file_type` does not follow a symlink.
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(item.path());
                collect_dirs(&item.path(), dirs);
            }
        }
    }
}

/// `sudo -n chown FLAGS uid:gid -- PATHS`, in chunks that fit a command line.
fn sudo_chown(flags: &[&str], uid: u32, gid: u32, paths: &[PathBuf]) {
    for chunk in paths.chunks(256) {
        let _ = std::process::Command::new("sudo")
            .args(["-n", "--", "chown"])
            .args(flags)
            .arg(format!("{uid}:{gid}"))
            .arg("--")
            .args(chunk)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn lchown(path: &Path, uid: u32, gid: u32) {
    let _ = nix::unistd::fchownat(
        nix::fcntl::AT_FDCWD,
        path,
        Some(uid.into()),
        Some(gid.into()),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    );
}

/// Takes everything under `root` back after a sandboxed run (directly as root, else through
/// `sudo -n chown -R -h`, which follows no symlink).
fn chown_back(root: &Path, uid: u32, gid: u32) {
    if nix::unistd::getuid().is_root() {
        chown_back_as_root(root, uid, gid);
    } else {
        sudo_chown(&["-R", "-h"], uid, gid, &[root.to_path_buf()]);
    }
}

fn chown_back_as_root(root: &Path, uid: u32, gid: u32) {
    lchown(root, uid, gid);
    if let Ok(items) = std::fs::read_dir(root) {
        for item in items.flatten() {
            let path = item.path();
            lchown(&path, uid, gid);
            if item.file_type().is_ok_and(|t| t.is_dir()) {
                chown_back_as_root(&path, uid, gid);
            }
        }
    }
}

/// The argv that runs `command` in the sandbox.
fn sandboxed(sandbox: &Sandbox, command: &str, home: &Path) -> Vec<String> {
    let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    let mut argv: Vec<String> = Vec::new();
    if !nix::unistd::getuid().is_root() {
        argv.extend(["sudo".into(), "-n".into(), "--".into()]);
    }
    argv.extend(
        [
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--mount-proc",
            "--",
            "setpriv",
            "--reuid",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    argv.push(sandbox.uid.to_string());
    argv.push("--regid".into());
    argv.push(sandbox.gid.to_string());
    argv.extend(
        [
            "--init-groups",
            "--no-new-privs",
            "--bounding-set=-all",
            "--",
            "env",
            "-i",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    argv.push(format!(
        "PATH={}",
        std::env::var("PATH").unwrap_or_else(|_| path.into())
    ));
    argv.push(format!("HOME={}", home.display()));
    argv.push("CI=1".into());
    argv.push(format!("USER={}", sandbox.name));
    argv.extend(["sh".into(), "-c".into(), command.into()]);
    argv
}

/// Runs `command` in `tree` under `sh -c`, in the sandbox when there is one: `dirs` (the
/// tree and the run's own directories) are handed to the sandbox user for the run and
/// taken back afterwards.
fn run_shell(
    command: &str,
    tree: &Path,
    dirs: &[&Path],
    tmp: &Path,
    sandbox: Option<&Sandbox>,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<runner::RunOutcome, Failure> {
    let argv = match sandbox {
        Some(sandbox) => {
            for dir in std::iter::once(&tree).chain(dirs) {
                chown_dirs(dir, sandbox.uid, sandbox.gid);
            }
            sandboxed(sandbox, command, tree)
        }
        None => vec!["sh".into(), "-c".into(), command.into()],
    };
    let spec = CommandSpec {
        argv,
        env: side_env(),
    };
    let outcome = runner::run(&spec, tree, tmp, timeout, interrupt);
    if sandbox.is_some() {
        let me = nix::unistd::getuid().as_raw();
        let group = nix::unistd::getgid().as_raw();
        for dir in std::iter::once(&tree).chain(dirs) {
            chown_back(dir, me, group);
        }
    }
    Ok(outcome?)
}

/// A fresh, empty directory `scratch/PREFIX-NAME`.
fn fresh_dir(scratch: &Path, prefix: &str, name: &str) -> Result<PathBuf, Failure> {
    let dir = scratch.join(format!("{prefix}-{name}"));
    crate::workspace::remove_any(&dir)?;
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A build step after head test code has run in the tree (the mutants side): in the
/// sandbox when there is one.
fn build_step(
    name: &str,
    build: &str,
    tree: &Path,
    scratch: &Path,
    sandbox: Option<&Sandbox>,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<(), Failure> {
    let tmp = fresh_dir(scratch, "tmp", name)?;
    let outcome = run_shell(build, tree, &[&tmp], &tmp, sandbox, timeout, interrupt)?;
    match outcome.termination {
        Termination::Exited(0) => Ok(()),
        other => Err(Failure(format!(
            "build `{build}` failed ({}): {}",
            other.describe(),
            crate::oracle::tail(&outcome.output, 5)
        ))),
    }
}

/// Runs the test files `tests` once and reads the report.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site per side, all inputs distinct"
)]
fn test_run(
    name: &str,
    config: &RepoConfig,
    tests: &[String],
    tree: &Path,
    scratch: &Path,
    sandbox: Option<&Sandbox>,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<Outcome, Failure> {
    let out_dir = fresh_dir(scratch, "out", name)?;
    let tmp = fresh_dir(scratch, "tmp", name)?;
    let report_path = out_dir.join(match config.report {
        ReportFormat::Junit => "report.xml",
        _ => "report.json",
    });
    let node_reporter = out_dir.join("repromin-node-reporter.mjs");
    if config.command.contains("{node_reporter}") {
        std::fs::write(&node_reporter, crate::gate::node_test::REPORTER)?;
    }
    let command = expand(&config.command, tests, &report_path, &node_reporter);
    let dirs = [out_dir.as_path(), tmp.as_path()];
    let outcome = run_shell(&command, tree, &dirs, &tmp, sandbox, timeout, interrupt)?;
    let exit_code = match outcome.termination {
        Termination::Exited(code) => Some(code),
        Termination::TimedOut => {
            return Err(Failure(format!(
                "timeout: the {name} test run passed its time limit"
            )));
        }
        Termination::OutputOverflow => {
            return Err(Failure(format!(
                "the {name} test run printed more than 64 MiB"
            )));
        }
        Termination::Interrupted => return Err(Failure("interrupted".into())),
        Termination::Signaled(_) => None,
    };
    let bytes = if config.command.contains("{report}") {
        read_report_file(&report_path)?
    } else {
        outcome.output.clone()
    };
    let root = std::fs::canonicalize(tree).unwrap_or_else(|_| tree.to_path_buf());
    let root_text = root.display().to_string();
    let ctx = ReadContext {
        root: &root_text,
        selected: tests,
    };
    let mut report = read_report(config.report, &bytes, &ctx)
        .map_err(|e| Failure(format!("cannot read the {name} test report: {e}")))?;
    // Only what the judge reads: the selected files.
    report.files.retain(|f| tests.contains(&f.path));
    Ok(Outcome::Report { exit_code, report })
}

/// Adds a detached worktree of `commit` in a fresh scratch directory, runs `work` in it
/// (tree, scratch), and removes the worktree either way.
fn with_worktree<T>(
    repo: &Repo,
    commit: &str,
    sandboxed: bool,
    work: impl FnOnce(&Path, &Path) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let scratch = tempfile::Builder::new()
        .prefix("repromin-exec-")
        .tempdir()?;
    if sandboxed {
        // The sandbox user must be able to reach the tree.
        std::fs::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755))?;
    }
    let tree = scratch.path().join("tree");
    repo.add_worktree(&tree, commit)?;
    let result = work(&tree, scratch.path());
    repo.remove_worktree(&tree);
    result
}

/// Installs and builds the tree, before any file of the head lands on it.
fn install_and_build(
    config: &RepoConfig,
    tree: &Path,
    scratch: &Path,
    deadline: &Deadline,
    interrupt: &AtomicBool,
) -> Result<(), Failure> {
    let tmp = fresh_dir(scratch, "tmp", "setup")?;
    for command in &config.install {
        let limit = deadline.limit(Duration::from_secs(config.timeouts.install))?;
        shell_step("install", command, tree, &tmp, limit, interrupt)?;
    }
    if let Some(build) = &config.build {
        let limit = deadline.limit(Duration::from_secs(config.timeouts.build))?;
        shell_step("build", build, tree, &tmp, limit, interrupt)?;
    }
    Ok(())
}

/// The sandbox of a side that runs head test code on base.
fn side_sandbox(options: &ExecOptions) -> Result<Option<Sandbox>, Failure> {
    match (&options.sandbox_user, options.side) {
        (Some(name), Side::Base | Side::Mutants) => Ok(Some(sandbox_user(name).map_err(Failure)?)),
        _ => Ok(None),
    }
}

fn run_side(
    options: &ExecOptions,
    commit: &str,
    interrupt: &AtomicBool,
) -> Result<Vec<(String, SideReport)>, Failure> {
    let deadline = Deadline(Instant::now() + options.budget);
    let repo = Repo::new(&options.repo);
    repo.commit(&options.base)?;
    repo.commit(&options.head)?;
    let Planned { plan, config, .. } = crate::gate::plan::plan(
        &repo,
        &options.base,
        &options.head,
        options.local_config.clone(),
    )?;
    if plan.tests.is_empty() {
        return Ok(options
            .side
            .reports()
            .iter()
            .map(|name| {
                let report = SideReport {
                    v: crate::gate::encode::VERSION,
                    side: (*name).to_string(),
                    commit: commit.to_string(),
                    outcome: Outcome::Skipped {
                        reason: "the pull request changes no test".into(),
                    },
                };
                ((*name).to_string(), report)
            })
            .collect());
    }
    let sandbox = side_sandbox(options)?;
    with_worktree(&repo, commit, sandbox.is_some(), |tree, scratch| {
        install_and_build(&config, tree, scratch, &deadline, interrupt)?;
        if options.side == Side::Base {
            overlay_tree(&repo, &options.head, &plan, tree)?;
        }
        let mut reports = Vec::new();
        for name in options.side.reports() {
            let limit = deadline.limit(Duration::from_secs(config.timeouts.test))?;
            let outcome = test_run(
                name,
                &config,
                &plan.tests,
                tree,
                scratch,
                sandbox.as_ref(),
                limit,
                interrupt,
            );
            let report = match outcome {
                Ok(outcome) => SideReport {
                    v: crate::gate::encode::VERSION,
                    side: (*name).to_string(),
                    commit: commit.to_string(),
                    outcome,
                },
                Err(Failure(message)) => SideReport::error(name, commit, message),
            };
            reports.push(((*name).to_string(), report));
        }
        Ok(reports)
    })
}

/// Writes `text` over the regular file `rel` inside `root`, in this process and never
/// through a symlink: each parent is opened as a directory with `O_NOFOLLOW`, the file
/// itself with `O_NOFOLLOW` and without creating it, and it must be a regular file.
pub(crate) fn overwrite_regular(root: &Path, rel: &str, text: &[u8]) -> Result<(), Failure> {
    use nix::fcntl::{OFlag, open, openat};
    use nix::sys::stat::Mode;
    let bad = |why: &str| Failure(format!("cannot write `{rel}`: {why}"));
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, parents)) = parts.split_last() else {
        return Err(bad("empty path"));
    };
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(bad("not a normalised path"));
    }
    let dir_flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let mut dir = open(root, dir_flags, Mode::empty())
        .map_err(|e| bad(&format!("cannot open the tree ({e})")))?;
    for part in parents {
        dir = openat(&dir, *part, dir_flags, Mode::empty())
            .map_err(|e| bad(&format!("`{part}` is not a directory of the tree ({e})")))?;
    }
    // O_NONBLOCK: opening a FIFO for writing must fail rather than wait for a reader.
    let file_flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = openat(&dir, *name, file_flags, Mode::empty())
        .map_err(|e| bad(&format!("not a regular file of the tree ({e})")))?;
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(bad("not a regular file"));
    }
    use std::io::Write as _;
    file.set_len(0)?;
    file.write_all(text)?;
    file.sync_all()?;
    Ok(())
}

/// The mutants side: checks the specs like the judge, prepares the merge base like the base
/// side, runs the baseline, then each mutation in turn.
fn run_mutants(options: &ExecOptions, interrupt: &AtomicBool) -> Result<MutantsReport, Failure> {
    let deadline = Deadline(Instant::now() + options.budget);
    let repo = Repo::new(&options.repo);
    let base = options.base.as_str();
    repo.commit(base)?;
    repo.commit(&options.head)?;
    let planned =
        crate::gate::plan::plan(&repo, base, &options.head, options.local_config.clone())?;
    let skipped = |reason: &str| {
        let reason = reason.to_string();
        Ok(MutantsReport::new(base, MutantsOutcome::Skipped { reason }))
    };
    if !planned.plan.test_only() {
        return skipped("the pull request changes more than tests");
    }
    if planned.plan.mutations.is_empty() {
        return skipped("the pull request adds or changes no mutation spec");
    }
    let specs = mutants::load_specs(&repo, base, &options.head, &planned).map_err(Failure)?;
    let (plan, config) = (&planned.plan, &planned.config);
    let mut tests: Vec<String> = specs.iter().map(|s| s.test.clone()).collect();
    tests.sort();
    tests.dedup();
    let sandbox = side_sandbox(options)?;
    let sandbox = sandbox.as_ref();
    with_worktree(&repo, base, sandbox.is_some(), |tree, scratch| {
        install_and_build(config, tree, scratch, &deadline, interrupt)?;
        overlay_tree(&repo, &options.head, plan, tree)?;
        let test_limit = || deadline.limit(Duration::from_secs(config.timeouts.test));
        let build_limit = || deadline.limit(Duration::from_secs(config.timeouts.build));
        let baseline = test_run(
            "baseline",
            config,
            &tests,
            tree,
            scratch,
            sandbox,
            test_limit()?,
            interrupt,
        )
        .unwrap_or_else(|Failure(message)| Outcome::Error { message });
        let mut runs = Vec::new();
        if matches!(baseline, Outcome::Report { .. }) {
            let mut index = 0;
            for spec in &specs {
                for (m, base_text) in &spec.mutations {
                    index += 1;
                    let name = format!("mutant-{index}");
                    let mutated = base_text.replacen(&m.find, &m.replace, 1);
                    overwrite_regular(tree, &m.file, mutated.as_bytes())?;
                    let built = match &config.build {
                        Some(build) => build_step(
                            &name,
                            build,
                            tree,
                            scratch,
                            sandbox,
                            build_limit()?,
                            interrupt,
                        ),
                        None => Ok(()),
                    };
                    let result = match built {
                        Err(Failure(message)) => MutantResult::Unbuilt { message },
                        Ok(()) => {
                            let one = std::slice::from_ref(&spec.test);
                            let limit = test_limit()?;
                            match test_run(
                                &name, config, one, tree, scratch, sandbox, limit, interrupt,
                            ) {
                                Ok(Outcome::Report { exit_code, report }) => {
                                    MutantResult::Tested { exit_code, report }
                                }
                                Ok(_) => MutantResult::Error {
                                    message: "no report".into(),
                                },
                                Err(Failure(message)) => MutantResult::Error { message },
                            }
                        }
                    };
                    overwrite_regular(tree, &m.file, base_text.as_bytes())?;
                    if let Some(build) = &config.build {
                        build_step(
                            &name,
                            build,
                            tree,
                            scratch,
                            sandbox,
                            build_limit()?,
                            interrupt,
                        )
                        .map_err(|Failure(message)| {
                            Failure(format!(
                                "the rebuild after restoring `{}` failed: {message}",
                                m.file
                            ))
                        })?;
                    }
                    runs.push(MutantRun {
                        spec: spec.path.clone(),
                        name: m.name.clone(),
                        result,
                    });
                }
            }
        }
        // A run cut short by the deadline is not a result: the side overran.
        deadline.check()?;
        Ok(MutantsReport::new(
            base,
            MutantsOutcome::Ran { baseline, runs },
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_with_quoting() {
        let tests = vec![
            "tests/test a.py".to_string(),
            "tests/lib.rs".to_string(),
            "tests/it/main.rs".to_string(),
        ];
        let out = expand(
            "run {tests} --out {report} {test_targets} {packages} {node_reporter}",
            &tests,
            Path::new("/r/x.xml"),
            Path::new("/r/n.mjs"),
        );
        assert_eq!(
            out,
            "run 'tests/test a.py' tests/lib.rs tests/it/main.rs --out /r/x.xml --test lib --test it ./tests ./tests/it /r/n.mjs"
        );
    }

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

    #[test]
    fn mutations_are_written_over_regular_files_only_never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/calc.py"), "old text, longer than the new").unwrap();
        overwrite_regular(&root, "src/calc.py", b"new").unwrap();
        assert_eq!(std::fs::read(root.join("src/calc.py")).unwrap(), b"new");
        // A symlinked file, a symlinked directory, a FIFO and a missing file are refused,
        // and nothing outside the tree changes.
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("calc.py"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.join("calc.py"), root.join("src/link.py")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("lib")).unwrap();
        nix::unistd::mkfifo(&root.join("src/fifo.py"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir_all(root.join("src/dir.py")).unwrap();
        for rel in [
            "src/link.py",
            "lib/calc.py",
            "src/fifo.py",
            "src/dir.py",
            "src/gone.py",
            "../outside/calc.py",
        ] {
            let err = overwrite_regular(&root, rel, b"x").unwrap_err();
            assert!(
                err.0.contains(&format!("cannot write `{rel}`")),
                "{}",
                err.0
            );
        }
        assert_eq!(std::fs::read(outside.join("calc.py")).unwrap(), b"outside");
        assert!(!root.join("src/gone.py").exists());
    }

    #[test]
    fn root_and_the_runner_itself_are_refused_as_sandbox_users() {
        assert!(sandbox_user("root").unwrap_err().contains("root"));
        assert!(sandbox_user("no-such-user-xyz").is_err());
    }
}

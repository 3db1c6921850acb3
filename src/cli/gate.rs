//! Arguments and entry points of `exec`, `judge`, `run` and `line`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Arg, Args, ValueEnum};

use crate::console::Console;
use crate::gate::config::{ConfigError, RepoConfig, ReportFormat};
use crate::gate::encode::TEST_REPORT_CAP;
use crate::gate::{self, exec, github, line};

use super::render::with_causes;
use crate::exit_code::Exit;

/// Options shared by the gate commands.
#[derive(Debug, Args, Clone)]
pub struct Commits {
    /// The merge base, as a full 40-character commit id.
    #[arg(long, value_name = "SHA")]
    pub base: String,

    /// The pull request's head, as a full 40-character commit id.
    #[arg(long, value_name = "SHA")]
    pub head: String,

    /// The repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// Use this configuration instead of the merge base's `.github/repromin.json` or the
    /// detected defaults. Trusted: for local runs only, never from the pull request.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The check run and comment payloads (`judge` and `run`).
#[derive(Debug, Args, Clone)]
pub struct Feedback {
    /// Also write the check run (`check-run.json`) and the sticky pull-request comment
    /// (`comment.json`) into DIR, created if missing, as request bodies of GitHub's REST
    /// API for a workflow to post (docs/ci.md). The line is printed either way.
    #[arg(long, value_name = "DIR")]
    pub feedback_dir: Option<PathBuf>,

    /// The page the check run and the comment link to for details (the workflow run's);
    /// `https://` only.
    #[arg(long, value_name = "URL", requires = "feedback_dir", value_parser = https_url)]
    pub details_url: Option<String>,
}

/// `--holdout-runs` of the gate: at most [`crate::gate::certificate::HOLDOUT_RUNS_MAX`], so
/// that the judge can check the holdout (a larger count is refused before anything runs).
fn holdout_runs(text: &str) -> Result<u64, String> {
    let max = crate::gate::certificate::HOLDOUT_RUNS_MAX;
    let runs: u64 = text.parse().map_err(|e| format!("{e}"))?;
    if runs > max {
        return Err(format!(
            "{runs} is over the cap of {max}: the exact plan of more runs cannot be computed quickly"
        ));
    }
    Ok(runs)
}

/// A `--details-url` that is not one.
#[derive(Debug, thiserror::Error)]
enum BadUrl {
    /// Not `https://` followed by something.
    #[error("`{0}` is not an https:// URL")]
    NotHttps(String),
    /// Whitespace or a control character.
    #[error("a URL cannot hold whitespace or control characters")]
    Whitespace,
}

/// A `https://` URL with no whitespace or control character, for a Markdown link and the
/// check run's `details_url`.
fn https_url(text: &str) -> Result<String, BadUrl> {
    if !text.starts_with("https://") || text.len() <= "https://".len() {
        return Err(BadUrl::NotHttps(text.to_string()));
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(BadUrl::Whitespace);
    }
    Ok(text.to_string())
}

/// A side.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum SideArg {
    /// The merge base with the head's tests laid over it (runs twice).
    Base,
    /// The head.
    Head,
    /// For a pull request that changes tests alone and adds or changes a mutation spec: the
    /// merge base with the head's tests laid over it, mutated by each spec in turn.
    Mutants,
    /// Reduce the base-plus-overlay tree for the first test that fails on base (and passes
    /// on head, given --head-report), then run a holdout on the result (needs
    /// --base-report).
    Reduce,
}

/// How the sides run, shared by `exec` and `run`: the commits and repository, and the user,
/// container CLI and deadline of the sides' commands. Its help speaks of the one side `exec`
/// runs; `run` words `--sandbox-user` and `--budget-ms` for every side (see `RunArgs`).
#[derive(Debug, Args, Clone)]
pub struct Sides {
    #[command(flatten)]
    /// Commits and repository.
    pub commits: Commits,

    /// Run the base side's tests (head code) as this user, in new PID and mount
    /// namespaces, with no new privileges and a cleared environment (on the mutants side,
    /// also every build from the baseline on; on the reduce side, every run of the
    /// reduction and the holdout).
    #[arg(long, value_name = "NAME")]
    pub sandbox_user: Option<String>,

    /// The container CLI (`docker` or `podman`) that runs the commands when the repository
    /// configuration names a `container` image (see docs/containers.md).
    #[arg(long, value_enum, value_name = "CLI", default_value_t = super::args::ContainerCliArg::Docker)]
    pub container_cli: super::args::ContainerCliArg,

    /// The side's deadline in milliseconds [default: 18 minutes; mutants: 13 minutes].
    #[arg(long, value_name = "N")]
    pub budget_ms: Option<u64>,
}

/// `repromin exec`.
#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Which side to run.
    #[arg(long, value_enum)]
    pub side: SideArg,

    /// Where to write the encoded reports (`base.report` and `base-rerun.report`,
    /// `head.report`, or `mutants.report`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    #[command(flatten)]
    /// Commits, repository, and how the side runs.
    pub sides: Sides,

    /// Also run the suite (the `tests` globs at head, or `regressions.tests`) on this side,
    /// so that the judge lists the tests that pass on the merge base and fail on head (base
    /// and head sides; the configuration's `regressions` asks for it too).
    #[arg(long)]
    pub regressions: bool,

    /// The base side's report (the reduce side picks its test from it).
    #[arg(long, value_name = "FILE", required_if_eq("side", "reduce"))]
    pub base_report: Option<PathBuf>,

    /// The head side's report (reduce side, optional): the test reduced for is then the
    /// first that fails on base and passes at head, so that a test failing on both sides
    /// is never the one certified.
    #[arg(long, value_name = "FILE")]
    pub head_report: Option<PathBuf>,

    /// Holdout runs on the reduced tree (reduce side), at most 2000.
    #[arg(long, value_name = "N", default_value_t = crate::gate::certificate::HOLDOUT_RUNS,
          value_parser = holdout_runs)]
    pub holdout_runs: u64,
}

/// `repromin check-test` (the reduce side's oracle; not for direct use).
#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// The report format.
    #[arg(long)]
    pub format: String,
    /// The test file.
    #[arg(long)]
    pub file: String,
    /// The test's full name.
    #[arg(long)]
    pub name: String,
    /// Time limit of the test run in milliseconds.
    #[arg(long, default_value_t = 900_000)]
    pub timeout_ms: u64,
    /// A hang check: the test fails when its run is still going after MS milliseconds
    /// (it runs alone where the runner selects tests by id); a run that ends passes.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub hang_after_ms: Option<u64>,
    /// Keep cargo's build directories under DIR between runs (the tree's own packages are
    /// cleaned before each run).
    #[arg(long, value_name = "DIR")]
    pub cargo_target_root: Option<PathBuf>,
    /// Run the test command in a container: the runner's record as JSON (its CLI, image id
    /// and limits), as the reduce side passes it. The image is not resolved again.
    #[arg(long, value_name = "JSON")]
    pub container: Option<String>,
    /// The test command template.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// `repromin judge`.
#[derive(Debug, Args, Clone)]
pub struct JudgeArgs {
    /// The base side's first report.
    #[arg(long, value_name = "FILE")]
    pub base_report: PathBuf,

    /// The base side's second report.
    #[arg(long, value_name = "FILE")]
    pub base_rerun_report: Option<PathBuf>,

    /// The head side's report.
    #[arg(long, value_name = "FILE")]
    pub head_report: PathBuf,

    /// The reduce side's report: the line gets a certificate field checked against git.
    #[arg(long, value_name = "FILE")]
    pub reduce_report: Option<PathBuf>,

    /// The mutants side's report. Read only when the pull request changes tests alone and
    /// adds or changes a mutation spec; the line then gets a mutants field.
    #[arg(long, value_name = "FILE")]
    pub mutants_report: Option<PathBuf>,

    #[command(flatten)]
    /// Commits and repository.
    pub commits: Commits,

    /// The judge's deadline in milliseconds: past it, or on SIGINT or SIGTERM, the line is
    /// an `error` that says so [default: 5 minutes].
    #[arg(long, value_name = "N")]
    pub budget_ms: Option<u64>,

    /// Exit 1 unless the verdict is this one (for workflows that gate on the exit status).
    #[arg(long, value_name = "VERDICT")]
    pub require: Option<VerdictArg>,

    #[command(flatten)]
    /// The check run and comment payloads.
    pub feedback: Feedback,
}

/// `--sandbox-user` of `run`, which runs every side.
const RUN_SANDBOX_USER_HELP: &str = "Run the head's tests on the merge base (the base, mutants and \
     reduce sides) as this user, in namespaces (see `exec`)";

/// `--budget-ms` of `run`.
const RUN_BUDGET_HELP: &str =
    "Each side's deadline in milliseconds [default: 18 minutes; mutants: 13 minutes]";

/// The options of [`Sides`] in the words of `run`, which runs every side; the rest as they
/// are. In place, so that the arguments keep their order (which completion scripts follow).
fn run_wording(arg: Arg) -> Arg {
    match arg.get_id().as_str() {
        "sandbox_user" => arg.help(RUN_SANDBOX_USER_HELP),
        "budget_ms" => arg.help(RUN_BUDGET_HELP),
        _ => arg,
    }
}

/// `repromin run`.
#[derive(Debug, Args, Clone)]
#[command(mut_args(run_wording))]
pub struct RunArgs {
    #[command(flatten)]
    /// Commits, repository, and how the sides run.
    pub sides: Sides,

    /// Exit 1 unless the verdict is this one.
    #[arg(long, value_name = "VERDICT")]
    pub require: Option<VerdictArg>,

    #[command(flatten)]
    /// The check run and comment payloads.
    pub feedback: Feedback,

    /// Do not run the reduce side (no certificate).
    #[arg(long)]
    pub no_reduce: bool,

    /// Also run the suite (the `tests` globs at head, or `regressions.tests`) on both
    /// sides and list the tests that pass on the merge base and fail on head (the
    /// configuration's `regressions` asks for it too).
    #[arg(long)]
    pub regressions: bool,

    /// Holdout runs on the reduced tree, at most 2000.
    #[arg(long, value_name = "N", default_value_t = crate::gate::certificate::HOLDOUT_RUNS,
          value_parser = holdout_runs)]
    pub holdout_runs: u64,

    /// Keep every side's report in DIR (which must not exist): the encoded reports the judge
    /// read, and the reduce side's `reduce-phases.json` with its per-pass statistics and
    /// `reduce-time.json` with where its runs' time went.
    #[arg(long, value_name = "DIR")]
    pub reports: Option<PathBuf>,
}

/// A verdict for `--require`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum VerdictArg {
    /// Some test reproduces the bug.
    Reproduced,
    /// Nothing reproduces; some test needs an API the base lacks.
    Unproven,
    /// The tests prove nothing.
    Vacuous,
    /// No test was added or changed.
    NoTests,
    /// Something failed.
    Error,
    /// Nothing reproduces; some test fails on base and passes on head only sometimes.
    Flaky,
}

impl VerdictArg {
    fn matches(self, verdict: line::Verdict) -> bool {
        matches!(
            (self, verdict),
            (VerdictArg::Reproduced, line::Verdict::Reproduced)
                | (VerdictArg::Unproven, line::Verdict::Unproven)
                | (VerdictArg::Vacuous, line::Verdict::Vacuous)
                | (VerdictArg::NoTests, line::Verdict::NoTests)
                | (VerdictArg::Error, line::Verdict::Error)
                | (VerdictArg::Flaky, line::Verdict::Flaky)
        )
    }
}

/// Why `--config FILE` cannot be used.
#[derive(Debug, thiserror::Error)]
enum LocalConfigError {
    /// The file cannot be read.
    #[error("cannot read `{}`", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not a valid configuration.
    #[error(transparent)]
    Invalid(#[from] ConfigError),
}

fn local_config(commits: &Commits) -> Result<Option<(RepoConfig, String)>, LocalConfigError> {
    let Some(path) = &commits.config else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|source| LocalConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let origin = path.display().to_string();
    let config = RepoConfig::parse(&text, &origin)?;
    Ok(Some((config, origin)))
}

fn budget(ms: Option<u64>, side: exec::Side) -> Duration {
    ms.map_or(side.default_budget(), Duration::from_millis)
}

/// A GitHub file-command path from the environment; unset and empty are the same.
fn github_file(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// With `$GITHUB_OUTPUT` set, hands the side's reports to the judge job as job outputs.
fn publish_reports(console: &Console, out: &std::path::Path, names: &[&str], cap: usize) {
    let Some(path) = github_file(github::OUTPUT_ENV) else {
        return;
    };
    let written = github::report_outputs(out, names, cap)
        .and_then(|outputs| github::write_outputs(&path, &outputs));
    if let Err(err) = written {
        console.err(&format!(
            "error: cannot write the job outputs: {}",
            with_causes(&err)
        ));
    }
}

/// `exec`: prints nothing on success and exits 0 whatever the side found; exits 1 only when
/// a report cannot be written.
pub(super) fn exec_command(args: &ExecArgs, interrupt: &std::sync::Arc<AtomicBool>) -> Exit {
    let console = Console::new(true);
    let side = match args.side {
        SideArg::Base => exec::Side::Base,
        SideArg::Head => exec::Side::Head,
        SideArg::Mutants => exec::Side::Mutants,
        SideArg::Reduce => exec::Side::Reduce,
    };
    let local = match local_config(&args.sides.commits) {
        Ok(local) => local,
        Err(err) => {
            // The marker carries the problem to the judge.
            let message = crate::with_causes(&err);
            let commit = side.commit(&args.sides.commits.base, &args.sides.commits.head);
            let written = exec::write_error_markers(&args.out, side, commit, &message);
            console.err(&format!("error: {message}"));
            if let Err(err) = written {
                return write_failed(&console, &err);
            }
            publish_reports(&console, &args.out, side.reports(), report_cap(side));
            return Exit::Ok;
        }
    };
    let options = exec::ExecOptions {
        repo: args.sides.commits.repo.clone(),
        base: args.sides.commits.base.clone(),
        head: args.sides.commits.head.clone(),
        out: args.out.clone(),
        side,
        sandbox_user: args.sides.sandbox_user.clone(),
        budget: budget(args.sides.budget_ms, side),
        local_config: local,
        container_cli: args.sides.container_cli.into(),
        base_candidates: None,
        regressions: args.regressions,
    };
    if side == exec::Side::Reduce {
        return reduce_command(&console, args, &options, interrupt);
    }
    if let Err(err) = exec::exec(&options, interrupt) {
        return write_failed(&console, &err);
    }
    publish_reports(&console, &args.out, side.reports(), TEST_REPORT_CAP);
    Exit::Ok
}

/// `exec --side reduce`: reduces for the first selected test that failed on base (and
/// passed on head, given its report) and writes `reduce.report`.
fn reduce_command(
    console: &Console,
    args: &ExecArgs,
    options: &exec::ExecOptions,
    interrupt: &std::sync::Arc<AtomicBool>,
) -> Exit {
    let base_report = args.base_report.clone().unwrap_or_default();
    let written = gate::sides::reduce::reduce_side(
        &gate::sides::reduce::ReduceSide {
            options,
            base_report: &base_report,
            head_report: args.head_report.as_deref(),
            holdout_runs: args.holdout_runs,
            test: None,
        },
        interrupt,
    );
    if let Err(err) = written {
        return write_failed(console, &err);
    }
    publish_reports(console, &args.out, &["reduce"], report_cap(options.side));
    Exit::Ok
}

/// The most bytes of a side's report handed on as a job output.
fn report_cap(side: exec::Side) -> usize {
    match side {
        exec::Side::Reduce => gate::encode::REDUCE_REPORT_CAP,
        exec::Side::Base | exec::Side::Head | exec::Side::Mutants => TEST_REPORT_CAP,
    }
}

/// A side's own report could not be written: said on stderr, and the exit status is 1 (the
/// judge would find no report, or an earlier one).
fn write_failed(console: &Console, err: &exec::WriteReportError) -> Exit {
    console.err(&format!("error: {}", with_causes(err)));
    Exit::Error
}

/// On GitHub Actions: annotations on stderr, the step summary and the `verdict` and `line`
/// outputs. None of it touches stdout, and a failure here never changes the line.
fn report_to_github(console: &Console, judgement: &gate::Judgement, printed: &str) {
    if std::env::var(github::ACTIONS_ENV).is_ok_and(|v| v == "true") {
        for note in github::annotations(&judgement.line) {
            console.err(&note);
        }
    }
    if let Some(path) = github_file(github::SUMMARY_ENV)
        && let Err(err) = github::append(
            &path,
            &github::summary(
                &github::with_every_test(judgement),
                judgement.configuration.as_deref(),
                &judgement.failures,
            ),
        )
    {
        warn_unwritten(console, "step summary", &err);
    }
    if let Some(path) = github_file(github::OUTPUT_ENV)
        && let Err(err) = github::write_outputs(&path, &github::judgement_outputs(printed))
    {
        warn_unwritten(console, "job outputs", &err);
    }
}

/// Says on stderr that `what` could not be written, and why.
fn warn_unwritten(console: &Console, what: &str, err: &dyn std::error::Error) {
    console.err(&format!(
        "warning: cannot write the {what}: {}",
        with_causes(err)
    ));
}

/// Writes the check run and comment payloads when asked; a failure is a warning and leaves
/// no payload behind, and never changes the line.
fn write_feedback(
    console: &Console,
    judgement: &gate::Judgement,
    commits: &Commits,
    feedback: &Feedback,
) {
    let Some(dir) = &feedback.feedback_dir else {
        return;
    };
    let repo = gate::git::Repo::new(&commits.repo);
    if let Err(err) = gate::feedback::write(dir, judgement, &repo, feedback.details_url.as_deref())
    {
        warn_unwritten(console, "check run and comment", &err);
    }
}

fn finish(
    console: &Console,
    judgement: &gate::Judgement,
    require: Option<VerdictArg>,
    commits: &Commits,
    feedback: &Feedback,
) -> Exit {
    let printed = gate::format(judgement);
    write_feedback(console, judgement, commits, feedback);
    report_to_github(console, judgement, &printed);
    console.out(&printed);
    match require {
        Some(want) if !want.matches(judgement.line.verdict) => Exit::Error,
        _ => Exit::Ok,
    }
}

/// `--config`'s configuration, or, when it cannot be read, the error line printed (and the
/// feedback written) and the exit status to return.
fn local_or_finish(
    console: &Console,
    commits: &Commits,
    require: Option<VerdictArg>,
    feedback: &Feedback,
) -> Result<Option<(RepoConfig, String)>, Exit> {
    local_config(commits).map_err(|err| {
        let judgement = gate::judge_error(&commits.head, &commits.base, &crate::with_causes(&err));
        finish(console, &judgement, require, commits, feedback)
    })
}

/// `judge`: prints exactly one line, an `error` one when its budget runs out or SIGINT or
/// SIGTERM comes first.
pub(super) fn judge_command(args: &JudgeArgs, interrupt: &std::sync::Arc<AtomicBool>) -> Exit {
    use std::sync::atomic::Ordering;
    let console = Console::new(true);
    // Which signal came, for the line (`interrupt` is set by either; neither ends the
    // process any more).
    let signal = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for number in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let value = usize::try_from(number).unwrap_or(usize::MAX);
        let _ = signal_hook::flag::register_usize(number, signal.clone(), value);
    }
    let local = match local_or_finish(&console, &args.commits, args.require, &args.feedback) {
        Ok(local) => local,
        Err(exit) => return exit,
    };
    let budget = args
        .budget_ms
        .map_or(gate::JUDGE_BUDGET, Duration::from_millis);
    let input = gate::JudgeInput {
        repo: args.commits.repo.clone(),
        base: args.commits.base.clone(),
        head: args.commits.head.clone(),
        base_report: Some(args.base_report.clone()),
        rerun_report: args.base_rerun_report.clone(),
        head_report: Some(args.head_report.clone()),
        reduce_report: args.reduce_report.clone(),
        mutants_report: args.mutants_report.clone(),
        local_config: local,
    };
    let judgement = gate::judge_within(input, budget, || match signal.load(Ordering::SeqCst) {
        0 if !interrupt.load(Ordering::SeqCst) => None,
        number => Some(gate::judge::signal_name(number)),
    });
    finish(
        &console,
        &judgement,
        args.require,
        &args.commits,
        &args.feedback,
    )
}

/// `run`: both sides and the judge; the line on stdout, a table on stderr.
pub(super) fn run_command(args: &RunArgs, interrupt: &std::sync::Arc<AtomicBool>) -> Exit {
    let console = Console::new(true);
    let local = match local_or_finish(&console, &args.sides.commits, args.require, &args.feedback) {
        Ok(local) => local,
        Err(exit) => return exit,
    };
    if let Some(dir) = &args.reports
        && std::fs::symlink_metadata(dir).is_ok()
    {
        let message = format!("--reports `{}` already exists", dir.display());
        console.err(&format!("error: {message}"));
        return Exit::Usage;
    }
    let judgement = gate::run(
        &gate::RunInput {
            repo: args.sides.commits.repo.clone(),
            base: args.sides.commits.base.clone(),
            head: args.sides.commits.head.clone(),
            local_config: local,
            sandbox_user: args.sides.sandbox_user.clone(),
            container_cli: args.sides.container_cli.into(),
            budget: budget(args.sides.budget_ms, exec::Side::Base),
            mutants_budget: budget(args.sides.budget_ms, exec::Side::Mutants),
            reduce: !args.no_reduce,
            holdout_runs: args.holdout_runs,
            reports: args.reports.clone(),
            regressions: args.regressions,
        },
        interrupt,
    );
    console.err(&gate::table(&judgement));
    finish(
        &console,
        &judgement,
        args.require,
        &args.sides.commits,
        &args.feedback,
    )
}

/// The most `line` reads of one line: the longest line, then its `\r` and `\n`.
const LINE_READ: u64 = line::MAX_LINE_BYTES as u64 + 2;

/// Skips the rest of the line `input` is in, through its `\n`, buffering nothing.
fn skip_line(input: &mut impl std::io::BufRead) -> std::io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(());
            }
            None => {
                let len = available.len();
                input.consume(len);
            }
        }
    }
}

/// Why `bytes`, one line of input without its `\n` (`ended`: it had one), is refused;
/// `None` when it is a valid line, which is printed.
fn line_refusal(console: &Console, bytes: &[u8], ended: bool) -> Option<String> {
    if ended && bytes.ends_with(b"\r") {
        return Some("it ends in \\r\\n; a line ends in \\n alone".to_string());
    }
    if let Some(at) = bytes.iter().position(|&b| b == b'\r') {
        return Some(format!(
            "it holds a bare carriage return (\\r) at byte {at}; a line ends in \\n alone"
        ));
    }
    match std::str::from_utf8(bytes) {
        Err(_) => Some("it is not valid UTF-8".to_string()),
        Ok(text) => match line::parse_line(text) {
            Ok(result) => {
                console.out(&shown(&line::pretty(&result)));
                None
            }
            Err(err) => Some(err.to_string()),
        },
    }
}

/// `line`: validates `repromin/v1` lines from stdin, one at a time: a line over the limit
/// is refused without being read whole.
pub(super) fn line_command() -> Exit {
    use std::io::{BufRead as _, Read as _};
    let console = Console::new(true);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut all_valid = true;
    let mut seen = false;
    let mut number = 0;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = (&mut input).take(LINE_READ).read_until(b'\n', &mut bytes);
        let n = match read {
            Ok(n) => n,
            Err(err) => {
                console.err(&format!("error: cannot read stdin: {err}"));
                return Exit::Io;
            }
        };
        if n == 0 {
            break;
        }
        number += 1;
        let ended = bytes.last() == Some(&b'\n');
        if ended {
            bytes.pop();
        } else if n as u64 == LINE_READ {
            if let Err(err) = skip_line(&mut input) {
                console.err(&format!("error: cannot read stdin: {err}"));
                return Exit::Io;
            }
            seen = true;
            all_valid = false;
            console.out(&format!(
                "line {number} refused: line is more than {max} bytes, over the {max}-byte limit",
                max = line::MAX_LINE_BYTES
            ));
            continue;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) && !bytes.contains(&b'\r') {
            continue;
        }
        seen = true;
        if let Some(reason) = line_refusal(&console, &bytes, ended) {
            all_valid = false;
            console.out(&format!("line {number} refused: {}", escaped(&reason)));
        }
    }
    if !seen {
        console.err("error: no line on stdin");
        return Exit::Usage;
    }
    if all_valid { Exit::Ok } else { Exit::Error }
}

/// Untrusted text as one printable line: control characters, line and paragraph
/// separators are written as escapes, so it can neither break a line nor reach the
/// terminal as a control sequence.
fn escaped(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let unsafe_char = c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
            let shown: Vec<char> = if unsafe_char {
                c.escape_unicode().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect()
}

/// A pretty-printed line: each of its lines escaped, and none that could be taken for a
/// result line.
fn shown(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            let l = escaped(l);
            if l.starts_with(line::PREFIX.trim_end()) {
                format!("  {l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `check-test`: exits with the check's status, its message on stdout.
pub(super) fn check_command(args: &CheckArgs) -> Exit {
    let console = Console::new(true);
    let Some(format) = ReportFormat::from_name(&args.format) else {
        console.err(&format!("error: unknown report format `{}`", args.format));
        return Exit::CannotTell;
    };
    let container = match args
        .container
        .as_deref()
        .map(crate::container::Container::from_json)
    {
        None => None,
        Some(Ok(container)) => Some(container),
        Some(Err(err)) => {
            console.out(&format!("repromin-check: cannot tell: {err}"));
            return Exit::CannotTell;
        }
    };
    let (code, message) = gate::check::check(&gate::check::CheckSpec {
        command: args.command.join(" "),
        format,
        file: args.file.clone(),
        name: args.name.clone(),
        timeout: Duration::from_millis(args.timeout_ms),
        hang: args.hang_after_ms.map(Duration::from_millis),
        cargo_target_root: args.cargo_target_root.clone(),
        container,
    });
    console.out(message.trim_end());
    check_exit(code)
}

/// The exit code for the check's status: 0 passed, 1 failed, anything else cannot tell.
fn check_exit(code: i32) -> Exit {
    match code {
        0 => Exit::Ok,
        1 => Exit::Error,
        _ => Exit::CannotTell,
    }
}

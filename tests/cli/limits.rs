//! Work that cannot be stalled: the judge under hostile reports, written with the library's
//! own encoder (every count a report carries is bounded before anything is computed from
//! it, the judge's work grows with a report's size and no faster, and its budget, SIGINT
//! and SIGTERM end it with an `error` line); run counts whose exact plans cannot be computed
//! quickly refused at once; the reduce side's holdout stopped by its deadline and SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use repromin::gate::certificate::{
    self, HoldoutCounts, ReduceOutcome, ReduceReport, Reduced, Size,
};
use repromin::gate::encode::{self, Outcome, Rerun, SideReport, TEST_REPORT_CAP};
use repromin::gate::test_report::{FileResult, Status, TestCase, TestReport};

use crate::util::{GitRepo, PYTEST_CONFIG, clean_env, output_within, run, stdout};

/// The test file of the pull request.
const FILE: &str = "tests/test_calc.py";
const CALC: &str = "def add(a, b):\n    return a - b\n";
const TEST: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

/// The CPU time every report set in this file is judged within.
///
/// A release build judges the largest of them in about a second (docs/gate.md, "Limits",
/// promises 5 s); the unoptimised build the tests run is ten to twenty times slower at the
/// same linear work, so the bound here has that margin. A quadratic judge takes minutes of
/// CPU on these reports even in a release build, so the margin still tells the two apart.
const JUDGED_WITHIN: Duration = Duration::from_secs(60);

/// A repository whose pull request fixes `calc.py` and adds `FILE`, with a directory for
/// the reports.
struct Case {
    repo: GitRepo,
    base: String,
    head: String,
    reports: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let repo = GitRepo::new();
        let base = repo.commit(
            &[(".github/repromin.json", PYTEST_CONFIG), ("calc.py", CALC)],
            "base",
        );
        let head = repo.commit(
            &[
                ("calc.py", "def add(a, b):\n    return a + b\n"),
                (FILE, TEST),
            ],
            "fix",
        );
        Case {
            repo,
            base,
            head,
            reports: tempfile::tempdir().unwrap(),
        }
    }

    /// The base-plus-overlay tree's size, as a reduce report states it: the merge base's
    /// files with the test laid over them.
    fn tree_size(&self) -> Size {
        let bytes = [PYTEST_CONFIG, CALC, TEST].iter().map(|t| t.len() as u64);
        Size {
            files: 3,
            bytes: bytes.sum(),
        }
    }

    /// Writes `text` as the report `name`.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.reports.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Encodes a side's report as the sides do (`encode::encode`, which writes an error
    /// marker instead of a report over a cap); it must fit the caps.
    fn side(&self, name: &str, report: &SideReport) -> PathBuf {
        let json = encode::to_json(report).unwrap();
        assert!(
            json.len() <= encode::INFLATED_CAP,
            "the {name} report inflates past its cap"
        );
        let text = encode::encode_json(&json).unwrap();
        assert!(
            text.len() <= TEST_REPORT_CAP,
            "the {name} report is over its cap"
        );
        self.write(name, &text)
    }

    /// The judge's command line over the reports in `files` (side, path) and `extra`.
    fn command(&self, files: &[(&str, &Path)], extra: &[&str]) -> Command {
        let mut command = Command::new(crate::util::bin());
        command.arg("judge");
        for (side, path) in files {
            command.arg(format!("--{side}-report")).arg(path);
        }
        command
            .args(["--base", &self.base, "--head", &self.head, "--repo"])
            .arg(self.repo.path())
            .args(extra)
            .current_dir(self.repo.path())
            .stdin(Stdio::null());
        clean_env(&mut command);
        command
    }

    /// Judges and returns the line and the judge's CPU time (user and system), which the
    /// other builds and tests on the machine do not inflate as they do its wall time.
    fn judge(&self, files: &[(&str, &Path)], extra: &[&str]) -> (serde_json::Value, Duration) {
        let (out, cpu) = cpu_time_of(self.command(files, extra));
        (crate::util::line(&out), cpu)
    }
}

/// Runs `command` to its end (killed after 10 minutes) and returns its stdout and the CPU
/// time it used, read from `/proc` while it is a zombie, before it is reaped.
fn cpu_time_of(mut command: Command) -> (String, Duration) {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    use std::io::Read;
    command.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = done.clone();
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(600);
        while Instant::now() < until {
            if watch.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT).unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: field 3 (the state) onwards; utime and
    // stime are fields 14 and 15, in clock ticks.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .unwrap()
        .unwrap();
    let hz = u64::try_from(hz).unwrap();
    child.wait().unwrap();
    (out, Duration::from_millis(ticks * 1000 / hz))
}

/// The largest peak resident memory of the children this test process has reaped, in
/// bytes: after [`Case::judge`], the judge's (the only large one).
fn peak_memory_of_children() -> u64 {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    // Linux gives it in KiB.
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

/// The memory the worst report set under the caps may take.
const JUDGED_IN_BYTES: u64 = 256 << 20;

fn test(name: &str, status: Status) -> TestCase {
    TestCase {
        name: name.to_string(),
        status,
        messages: Vec::new(),
        error_type: None,
    }
}

fn report_of(tests: Vec<TestCase>) -> TestReport {
    TestReport {
        files: vec![FileResult {
            path: FILE.to_string(),
            load_error: None,
            crashed: None,
            tests,
        }],
    }
}

fn side_report(side: &str, commit: &str, tests: Vec<TestCase>, reruns: Vec<Rerun>) -> SideReport {
    let failed = tests.iter().any(|t| t.status == Status::Failed);
    SideReport {
        v: encode::VERSION,
        side: side.to_string(),
        commit: commit.to_string(),
        outcome: Outcome::Report {
            exit_code: Some(i32::from(failed)),
            report: report_of(tests),
        },
        reruns,
        suite: None,
    }
}

fn rerun(tests: Vec<TestCase>) -> Rerun {
    let failed = tests.iter().any(|t| t.status == Status::Failed);
    Rerun {
        exit_code: Some(i32::from(failed)),
        report: report_of(tests),
        limit_ms: None,
        duration_ms: None,
    }
}

/// The three reports of a pull request whose `test_add` reproduces: it fails both base
/// runs and every base rerun, and passes on head and every head rerun.
fn reproducing(case: &Case) -> Vec<(&'static str, PathBuf)> {
    let reruns = |status| {
        (0..16)
            .map(|_| rerun(vec![test("test_add", status)]))
            .collect()
    };
    let base = side_report(
        "base",
        &case.base,
        vec![test("test_add", Status::Failed)],
        vec![],
    );
    let rerun_report = side_report(
        "base-rerun",
        &case.base,
        vec![test("test_add", Status::Failed)],
        reruns(Status::Failed),
    );
    let head = side_report(
        "head",
        &case.head,
        vec![test("test_add", Status::Passed)],
        reruns(Status::Passed),
    );
    vec![
        ("base", case.side("base.report", &base)),
        ("base-rerun", case.side("base-rerun.report", &rerun_report)),
        ("head", case.side("head.report", &head)),
    ]
}

/// A reduce report for `test_add` with no edits, the given content fingerprint and
/// holdout counts.
fn reduce_report(case: &Case, content_sha256: &str, runs: u64, passes: u64) -> String {
    let size = case.tree_size();
    certificate::encode(&ReduceReport {
        v: 1,
        side: "reduce".into(),
        commit: case.base.clone(),
        outcome: ReduceOutcome::Reduced(Box::new(Reduced {
            file: FILE.into(),
            name: "test_add".into(),
            signature: None,
            edits: Vec::new(),
            before: size,
            after: size,
            content_sha256: content_sha256.into(),
            tree_sha256_v2: "0".repeat(64),
            attempts: 1,
            accepted: 0,
            ended_by: "fixed-point".into(),
            holdout: Some(HoldoutCounts {
                runs,
                passes,
                rate: 0.9,
                confidence: 0.95,
            }),
            oracle_samples: 1,
            reduce_ms: 1,
        })),
    })
    .unwrap()
}

fn with<'a>(
    sides: &'a [(&'static str, PathBuf)],
    more: &[(&'static str, &'a Path)],
) -> Vec<(&'static str, &'a Path)> {
    let mut files: Vec<(&str, &Path)> = sides.iter().map(|(s, p)| (*s, p.as_path())).collect();
    files.extend_from_slice(more);
    files
}

/// A certificate that is right in every other way, so that only its holdout counts decide:
/// its content fingerprint is the one the judge names when given a wrong one.
fn valid_fingerprint(case: &Case, sides: &[(&'static str, PathBuf)]) -> String {
    let probe = case.write(
        "probe.report",
        &reduce_report(case, &"f".repeat(64), 30, 30),
    );
    let (line, _) = case.judge(&with(sides, &[("reduce", &probe)]), &[]);
    let message = line["certificate"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let found = message
        .split(|c: char| !c.is_ascii_hexdigit())
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()) && *w != "f".repeat(64))
        .unwrap_or_else(|| panic!("no fingerprint in {line}"));
    found.to_string()
}

#[test]
fn a_holdout_plan_over_the_cap_is_an_error_at_once() {
    let case = Case::new();
    let sides = reproducing(&case);
    let sha = valid_fingerprint(&case, &sides);
    // The same certificate with a usual holdout is certified: nothing else is wrong with it.
    let good = case.write("good.report", &reduce_report(&case, &sha, 30, 30));
    let (line, _) = case.judge(&with(&sides, &[("reduce", &good)]), &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
    // The largest holdout under the cap is judged, quickly.
    let max = certificate::HOLDOUT_RUNS_MAX;
    let largest = case.write("largest.report", &reduce_report(&case, &sha, max, max));
    let (line, took) = case.judge(&with(&sides, &[("reduce", &largest)]), &[]);
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
    eprintln!("{max} holdout runs judged in {took:?} of CPU");
    assert!(took < JUDGED_WITHIN, "{max} holdout runs took {took:?}");
    // A 650-byte report of 100,000 runs is refused before any computation.
    for runs in [max + 1, 100_000, u64::MAX] {
        let text = reduce_report(&case, &sha, runs, runs);
        assert!(text.len() < 1000, "{}", text.len());
        let path = case.write("huge.report", &text);
        let (line, took) = case.judge(&with(&sides, &[("reduce", &path)]), &[]);
        let cert = &line["certificate"];
        assert_eq!(cert["verdict"], "error", "{line}");
        let message = cert["error"].as_str().unwrap();
        assert!(
            message.contains(&format!("holdout `runs` is {runs}, over the cap of {max}")),
            "{message}"
        );
        assert!(took < Duration::from_secs(10), "{runs} runs took {took:?}");
        // The main verdict stands: the certificate never changes it.
        assert_eq!(line["verdict"], "reproduced", "{line}");
    }
}

/// Tests of one name in each report: what fits under the caps (8 MiB once inflated, which
/// is about 260,000 tests of a one-letter name).
const SAME_NAME: usize = 250_000;

/// The worst report set under the caps: every report as full as it can be of tests with one
/// name (each looked up by name and occurrence), all of them candidates, and every rerun
/// the reports may carry (each candidate counted in each of them). A judge that looks tests
/// up by scanning, or candidates up rerun by rerun, does work that grows with the square of
/// the tests, or with their product with the reruns.
#[test]
fn the_largest_report_sets_are_judged_in_linear_time() {
    let case = Case::new();
    let n = SAME_NAME;
    let reruns = |status| {
        (0..encode::MAX_RERUNS)
            .map(|_| rerun(vec![test("t", status)]))
            .collect()
    };
    let base = side_report(
        "base",
        &case.base,
        vec![test("t", Status::Failed); n],
        vec![],
    );
    let rerun_report = side_report(
        "base-rerun",
        &case.base,
        vec![test("t", Status::Failed); n],
        reruns(Status::Failed),
    );
    let head = side_report(
        "head",
        &case.head,
        vec![test("t", Status::Passed); n],
        reruns(Status::Passed),
    );
    let sides = [
        ("base", case.side("base.report", &base)),
        ("base-rerun", case.side("base-rerun.report", &rerun_report)),
        ("head", case.side("head.report", &head)),
    ];
    let feedback = case.reports.path().join("feedback");
    let feedback = feedback.display().to_string();
    let (line, took) = case.judge(&with(&sides, &[]), &["--feedback-dir", &feedback]);
    // The first `t` agreed on every rerun and reproduces; the others had no rerun, which
    // cannot rule out chance: they are flaky.
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["counts"]["reproduces"], 1, "{line}");
    assert_eq!(line["counts"]["flaky"], n - 1, "{line}");
    assert_eq!(line["truncated"], true);
    let peak = peak_memory_of_children();
    eprintln!(
        "{n} tests of one name and their reruns judged in {took:?} of CPU, {} MiB at most",
        peak >> 20
    );
    assert!(took < JUDGED_WITHIN, "{n} tests of one name took {took:?}");
    assert!(
        peak < JUDGED_IN_BYTES,
        "{n} tests of one name took {} MiB",
        peak >> 20
    );
}

#[test]
fn the_judge_answers_an_error_line_past_its_budget() {
    if !crate::util::failpoints() {
        return;
    }
    let case = Case::new();
    let sides = reproducing(&case);
    let files = with(&sides, &[]);
    let mut command = case.command(&files, &["--budget-ms", "1500"]);
    command.env("REPROMIN_FAILPOINT", "judge:started");
    let started = Instant::now();
    let output = output_within(command, Duration::from_secs(120));
    let took = started.elapsed();
    let line = crate::util::line(&stdout(&output));
    assert_eq!(line["verdict"], "error", "{line}");
    assert_eq!(
        line["error"],
        "the judge did not finish within its budget of 1500 ms (--budget-ms)"
    );
    assert!(output.status.success());
    assert!(took < Duration::from_secs(20), "{took:?}");
    // Without the stall, the same reports are judged well within the default budget.
    let o = run(
        &[
            "judge",
            "--base-report",
            &sides[0].1.display().to_string(),
            "--base-rerun-report",
            &sides[1].1.display().to_string(),
            "--head-report",
            &sides[2].1.display().to_string(),
            "--base",
            &case.base,
            "--head",
            &case.head,
        ],
        case.repo.path(),
    );
    assert_eq!(crate::util::line(&stdout(&o))["verdict"], "reproduced");
}

#[test]
fn sigterm_and_sigint_end_the_judge_with_an_error_line() {
    if !crate::util::failpoints() {
        return;
    }
    use std::io::{BufRead, BufReader, Read};
    let case = Case::new();
    let sides = reproducing(&case);
    let files = with(&sides, &[]);
    for (signal, name) in [
        (nix::sys::signal::Signal::SIGTERM, "SIGTERM"),
        (nix::sys::signal::Signal::SIGINT, "SIGINT"),
    ] {
        let mut command = case.command(&files, &[]);
        command
            .env("REPROMIN_FAILPOINT", "judge:started")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        stderr.read_line(&mut said).unwrap();
        assert!(said.contains("paused at judge:started"), "{said}");
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        let sent = Instant::now();
        nix::sys::signal::kill(pid, signal).unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "{:?}",
            sent.elapsed()
        );
        let line = crate::util::line(&out);
        assert_eq!(line["verdict"], "error", "{line}");
        assert_eq!(
            line["error"],
            format!("the judge was stopped by {name} before it had judged")
        );
        assert!(status.success(), "{status:?}");
    }
}

/// Run counts over the cap are usage errors before anything runs: the exact plans of
/// 100,000 runs or more would take minutes to compute.
#[test]
fn run_counts_whose_plans_cannot_be_computed_quickly_are_refused_at_once() {
    let area = crate::util::Area::new();
    let source = area.write("src", &[("a.txt", "a\n")]);
    let source = source.display().to_string();
    let output = area.path("out").display().to_string();
    let max = repromin::stats::MAX_PLAN_RUNS;
    let over = (max + 1).to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--holdout-runs", "100000"], "--holdout-runs 100000"),
        (
            vec!["--holdout-runs", "4294967296"],
            "--holdout-runs 4294967296",
        ),
        (vec!["--holdout-runs", &over], "--holdout-runs"),
        (
            vec!["--candidate-runs", "100000", "--min-candidate-rate", "0.5"],
            "--candidate-runs 100000",
        ),
        (
            vec!["--baseline-runs", "100000", "--min-baseline-rate", "0.5"],
            "--baseline-runs 100000",
        ),
    ];
    for (options, named) in cases {
        let mut args = vec!["reduce", &source, &output];
        args.extend(&options);
        args.extend(["--", "sh", "-c", "exit 1"]);
        let started = Instant::now();
        let mut command = Command::new(crate::util::bin());
        command.args(&args).stdin(Stdio::null());
        clean_env(&mut command);
        let o = output_within(command, Duration::from_secs(60));
        assert!(started.elapsed() < Duration::from_secs(10), "{options:?}");
        assert_eq!(
            o.status.code(),
            Some(2),
            "{options:?}: {}",
            crate::util::stderr(&o)
        );
        let err = crate::util::stderr(&o);
        assert!(err.contains(named), "{err}");
        assert!(err.contains(&format!("over the cap of {max}")), "{err}");
    }
    // The gate's holdout too, which the judge checks.
    let case = Case::new();
    let out = case.reports.path().display().to_string();
    let base = case
        .reports
        .path()
        .join("base.report")
        .display()
        .to_string();
    let repo = case.repo.path().display().to_string();
    let commits = ["--base", &case.base, "--head", &case.head, "--repo", &repo];
    let exec = [
        "exec",
        "--side",
        "reduce",
        "--out",
        &out,
        "--base-report",
        &base,
    ];
    let local = ["run", "--no-reduce"];
    for command in [&exec[..], &local[..]] {
        let mut args = command.to_vec();
        args.extend(commits);
        args.extend(["--holdout-runs", "100000"]);
        let o = run(&args, case.repo.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = crate::util::stderr(&o);
        assert!(
            err.contains(&format!("100000 is over the cap of {max}")),
            "{err}"
        );
    }
}

/// A repository whose every test run takes a second (the configuration's command sleeps,
/// which no reduction can take away), with a test that reproduces.
fn slow_repo() -> (GitRepo, String, String) {
    let config = r#"{"version":1,"tests":["tests/t_*.sh"],"command":"sleep 1 && sh run_tests.sh {report} {tests}","report":"junit"}"#;
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            ("run_tests.sh", crate::util::SH_RUNNER),
            ("calc.sh", "add() { echo $(($1 - $2)); }\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/t_add.sh", ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n"),
        ],
        "fix",
    );
    (repo, base, head)
}

/// The reduce side of `slow_repo` with a holdout of 60 runs (a minute of commands over
/// two workers), started with `budget_ms`; the base side has run.
fn reduce_side(budget_ms: &str) -> (GitRepo, tempfile::TempDir, Command) {
    let (repo, base, head) = slow_repo();
    let (out, command) = crate::util::base_then_reduce_side(
        &crate::util::bin(),
        &repo,
        (&base, &head),
        &["--holdout-runs", "60", "--budget-ms", budget_ms],
    );
    (repo, out, command)
}

/// The reduce report the side wrote.
fn reduced(out: &Path) -> Box<Reduced> {
    let text = std::fs::read_to_string(out.join("reduce.report")).unwrap();
    match certificate::decode(&text).unwrap().outcome {
        ReduceOutcome::Reduced(reduced) => reduced,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_reduce_sides_holdout_stops_at_its_deadline() {
    let (_repo, out, command) = reduce_side("20000");
    let started = Instant::now();
    let o = output_within(command, Duration::from_secs(300));
    let took = started.elapsed();
    assert!(o.status.success(), "{}", crate::util::stderr(&o));
    // A minute of holdout runs did not fit in the 20 s budget: the side stopped in time,
    // and a holdout cut short is no holdout.
    assert!(took < Duration::from_secs(30), "{took:?}");
    let reduced = reduced(out.path());
    assert_eq!(reduced.holdout, None, "{reduced:?}");
}

#[test]
fn sigterm_stops_the_reduce_sides_holdout() {
    let (_repo, out, mut command) = reduce_side("600000");
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    // The side writes its per-pass statistics just before the holdout starts.
    let phases = out.path().join("reduce-phases.json");
    let deadline = Instant::now() + Duration::from_secs(240);
    while !phases.exists() {
        assert!(Instant::now() < deadline, "the holdout never started");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the side ended before its holdout"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the side ran on after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "{:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let reduced = reduced(out.path());
    assert_eq!(reduced.holdout, None, "{reduced:?}");
    assert_eq!(reduced.ended_by, "interrupted");
}

/// `repromin reduce`'s holdout ends its commands on SIGTERM: the tree is published at once,
/// with no holdout, as interrupted.
#[test]
fn sigterm_ends_the_holdout_of_a_reduction() {
    let area = crate::util::Area::new();
    let source = area.write("src", &[("a.txt", "a\n")]);
    let output = area.path("out");
    let counter = area.path("runs");
    // Every run is counted outside the tree, takes a second and fails the same way.
    let script = format!(
        "echo x >> '{}'; sleep 1; echo 'Error: boom' >&2; exit 1",
        counter.display()
    );
    let mut command = Command::new(crate::util::bin());
    command
        .arg("reduce")
        .arg(&source)
        .arg(&output)
        .args([
            "--jobs",
            "1",
            "--max-attempts",
            "1",
            "--allow-trivial",
            "--no-progress",
        ])
        .args(["--holdout-runs", "60", "--min-holdout-rate", "0.5", "--"])
        .args(["sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    clean_env(&mut command);
    let mut child = command.spawn().unwrap();
    // The baseline, the candidate and the final check are a handful of runs: by the
    // twelfth, the holdout is well under way.
    let runs = || {
        std::fs::read_to_string(&counter)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(240);
    while runs() < 12 {
        assert!(Instant::now() < deadline, "the holdout never got under way");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the reduction ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the holdout ran on after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let report = crate::util::report(&output);
    assert_eq!(report["ended_by"], "interrupted", "{report}");
    assert_eq!(report["holdout"], serde_json::Value::Null, "{report}");
    assert!(runs() < 30, "{} runs", runs());
}

//! The reduced-tree certificate: a real reduction on a pytest repository, and the judge's
//! refusal of every tampering.

use repromin::gate::certificate::{ReduceOutcome, decode, encode};
use repromin::reduce::edits::Edit;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::util::{GitRepo, PYTEST_CONFIG, SANDBOX_USER, SH_RUNNER, run, sandbox, stderr, stdout};

/// A repository with a bug, unrelated modules, docs and a fix whose test reproduces.
fn repo_with_fix() -> (GitRepo, String, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("tests/conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"),
            ("shop/__init__.py", ""),
            ("shop/cart.py", "from shop.money import cents\n\n\ndef total(prices):\n    # Bug: the sign is wrong.\n    return cents(-sum(prices))\n\n\ndef count(prices):\n    return len(prices)\n"),
            ("shop/money.py", "def cents(x):\n    if x < 0:\n        raise ValueError(\"negative amount\", 1000)\n    return round(x * 100)\n\n\ndef euros(c):\n    return c / 100\n"),
            ("shop/unused.py", "def helper():\n    return 42\n\n\nclass Thing:\n    pass\n"),
            ("docs/guide.md", "# Guide\n\nSome words.\n"),
            ("README.md", "# shop\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("shop/cart.py", "from shop.money import cents\n\n\ndef total(prices):\n    return cents(sum(prices))\n\n\ndef count(prices):\n    return len(prices)\n"),
            ("tests/test_cart.py", "from shop.cart import total\n\n\ndef test_total():\n    assert total([1.0, 2.5]) == 350\n\n\ndef test_empty():\n    assert total([]) == 0\n"),
        ],
        "fix",
    );
    (repo, base, head)
}

/// The paths an edit set deletes whole, in its order.
pub(crate) fn deleted_paths(edits: &[Edit]) -> Vec<&str> {
    edits
        .iter()
        .filter_map(|e| match e {
            Edit::Delete { path } => Some(path.as_str()),
            Edit::DeleteBytes { .. } | Edit::Replace { .. } => None,
        })
        .collect()
}

pub(crate) fn line_of(output: &std::process::Output) -> serde_json::Value {
    let text = stdout(output);
    let line = serde_json::from_str(
        text.trim()
            .strip_prefix("repromin/v1 ")
            .unwrap_or_else(|| panic!("{text}")),
    )
    .unwrap();
    crate::schemas::check_line(&line);
    line
}

#[test]
fn a_reproducing_fix_gets_a_certified_minimal_tree_and_every_tampering_is_refused() {
    let (repo, base, head) = repo_with_fix();
    let repo_path = repo.path().display().to_string();
    let out = tempfile::tempdir().unwrap();
    for side in ["base", "head"] {
        let o = crate::util::exec_side(&repo, side, out.path(), (&base, &head), &[]);
        assert!(o.status.success());
    }
    let report = |n: &str| out.path().join(format!("{n}.report")).display().to_string();
    let o = crate::util::exec_side(
        &repo,
        "reduce",
        out.path(),
        (&base, &head),
        &["--base-report", &report("base"), "--holdout-runs", "30"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let judge = |reduce: &str| {
        run(
            &[
                "judge",
                "--base-report",
                &report("base"),
                "--base-rerun-report",
                &report("base-rerun"),
                "--head-report",
                &report("head"),
                "--reduce-report",
                reduce,
                "--base",
                &base,
                "--head",
                &head,
                "--repo",
                &repo_path,
            ],
            repo.path(),
        )
    };
    let line = line_of(&judge(&report("reduce")));
    assert_eq!(line["verdict"], "reproduced", "{line}");
    let cert = &line["certificate"];
    assert_eq!(cert["verdict"], "certified", "{line}");
    assert_eq!(cert["test"]["file"], "tests/test_cart.py");
    assert_eq!(cert["test"]["name"], "test_total");
    assert_eq!(cert["holdout"]["runs"], 30);
    assert_eq!(cert["holdout"]["passes"], 30);
    assert_eq!(cert["holdout"]["requiredPasses"], 30);
    assert!(cert["after"]["files"].as_u64().unwrap() < cert["before"]["files"].as_u64().unwrap());

    // The reduction kept what the failure needs and dropped the rest.
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let original = decode(&text).unwrap();
    let ReduceOutcome::Reduced(reduced) = &original.outcome else {
        panic!("{original:?}");
    };
    let deleted = deleted_paths(&reduced.edits);
    for gone in ["README.md", "docs", "shop/unused.py"] {
        assert!(deleted.contains(&gone), "{gone} kept: {deleted:?}");
    }
    // The literals pass replaced `1000` of `raise ValueError("negative amount", 1000)` by
    // `0` (the failure's normalised line is the same), and the certificate lists that
    // replacement with the hash of what it replaced.
    let money = std::fs::read(repo.path().join("shop/money.py")).unwrap();
    let replaced: Vec<&Edit> = reduced
        .edits
        .iter()
        .filter(|e| matches!(e, Edit::Replace { .. }))
        .collect();
    assert!(
        replaced
            .iter()
            .any(|e| matches!(e, Edit::Replace { path, start, end, with, .. }
            if path == "shop/money.py" && &money[*start..*end] == b"1000" && with == "0")),
        "{:?}",
        reduced.edits
    );

    // Each tampering gives a certificate error and leaves the main verdict alone.
    let tampered = |edit: &dyn Fn(&mut repromin::gate::certificate::Reduced)| {
        let mut copy = original.clone();
        if let ReduceOutcome::Reduced(r) = &mut copy.outcome {
            edit(r);
        }
        let path = out.path().join("tampered.report");
        std::fs::write(&path, encode(&copy).unwrap()).unwrap();
        let line = line_of(&judge(&path.display().to_string()));
        assert_eq!(line["verdict"], "reproduced");
        assert_eq!(line["certificate"]["verdict"], "error", "{line}");
        line["certificate"]["error"].as_str().unwrap().to_string()
    };
    let err = tampered(&|r| {
        r.edits
            .retain(|e| !matches!(e, Edit::Delete { path } if path == "README.md"));
    });
    assert!(err.contains("tree-content-sha256-v1"), "{err}");
    let err = tampered(&|r| r.content_sha256 = "0".repeat(64));
    assert!(err.contains("tree-content-sha256-v1"), "{err}");
    let err = tampered(&|r| {
        if let Some(h) = &mut r.holdout {
            h.passes = h.runs + 5;
        }
    });
    assert!(err.contains("more passes than runs"), "{err}");
    let err = tampered(&|r| r.file = "tests/test_other.py".into());
    assert!(err.contains("not in the plan"), "{err}");
    let err = tampered(&|r| r.name = "test_empty".into());
    assert!(err.contains("does not reproduce"), "{err}");
    let err = tampered(&|r| {
        r.edits.push(Edit::DeleteBytes {
            path: "shop/cart.py".into(),
            start: 100_000,
            end: 100_010,
        });
    });
    assert!(err.contains("out of range"), "{err}");
    // A replacement left out, or changed, rebuilds another tree; one whose hash is not that
    // of the bytes it replaces is refused by name.
    let is_replace = |e: &Edit| matches!(e, Edit::Replace { .. });
    let err = tampered(&|r| r.edits.retain(|e| !is_replace(e)));
    assert!(err.contains("tree-content-sha256-v1"), "{err}");
    let err = tampered(&|r| {
        for e in &mut r.edits {
            if let Edit::Replace { with, .. } = e {
                *with = "1".into();
            }
        }
    });
    assert!(err.contains("tree-content-sha256-v1"), "{err}");
    let err = tampered(&|r| {
        for e in &mut r.edits {
            if let Edit::Replace { sha256, .. } = e {
                *sha256 = "0".repeat(64);
            }
        }
    });
    assert!(err.contains("do not have the SHA-256"), "{err}");
    let err = tampered(&|r| {
        r.edits.push(Edit::Replace {
            path: "shop/cart.py".into(),
            start: 0,
            end: 1,
            sha256: "0".repeat(64),
            with: "x".repeat(repromin::reduce::edits::REPLACED_BYTES_MAX + 1),
        });
    });
    assert!(err.contains("a certificate may carry at most"), "{err}");
    // A malformed report is an error too.
    let path = out.path().join("garbage.report");
    std::fs::write(&path, "not a report").unwrap();
    let line = line_of(&judge(&path.display().to_string()));
    assert_eq!(line["certificate"]["verdict"], "error");
    assert_eq!(line["verdict"], "reproduced");
}

#[test]
fn run_certifies_by_default_and_skips_the_reduce_side_on_request() {
    let (repo, base, head) = repo_with_fix();
    let path = repo.path().display().to_string();
    let o = run(
        &["run", "--base", &base, "--head", &head, "--repo", &path],
        repo.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let line = line_of(&o);
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
    let o = run(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
            "--no-reduce",
        ],
        repo.path(),
    );
    assert!(line_of(&o)["certificate"].is_null());
}

/// A shell repository whose fix has a reproducing test. Before each test run, the test
/// command appends to `log` a line `UID REPORT FILE TMP`: the user it runs as, whether it
/// could create `reports/reduce.report` (`wrote` or `refused`), whether it could write the
/// tree's `run_tests.sh` in place (`writable` or `kept`), and whether `TMPDIR` is a
/// directory of its own (`own-tmp` or `no-tmp`). The command comes from the merge base's
/// configuration, so no reduction can cut it.
fn recording_repo(log: &Path, reports: &Path) -> (GitRepo, String, String) {
    let record = format!(
        "printf '%s %s %s %s\\n' \"$(id -u)\" \
         \"$(touch {reports}/reduce.report 2>/dev/null && echo wrote || echo refused)\" \
         \"$([ -w run_tests.sh ] && echo writable || echo kept)\" \
         \"$([ -n \"$TMPDIR\" ] && [ -d \"$TMPDIR\" ] && [ -O \"$TMPDIR\" ] && echo own-tmp || echo no-tmp)\" >> {log}",
        reports = reports.display(),
        log = log.display(),
    );
    let config = serde_json::json!({
        "version": 1,
        "tests": ["tests/t_*.sh"],
        "command": format!("{record}; sh run_tests.sh {{report}} {{tests}}"),
        "report": "junit"
    });
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", &config.to_string()),
            ("run_tests.sh", SH_RUNNER),
            ("calc.sh", "add() { echo $(($1 - $2)); }\n"),
            ("README.md", "# calc\n"),
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

/// A directory anyone may write (for the log), and one only the runner may.
fn log_and_reports() -> (tempfile::TempDir, tempfile::TempDir) {
    let logs = crate::util::tempdir_seen_by_the_sandbox();
    let reports = tempfile::tempdir().unwrap();
    std::fs::set_permissions(reports.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    (logs, reports)
}

/// The log's lines; the log is then emptied.
fn take_log(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_string).collect()
}

fn sandbox_uid() -> u32 {
    nix::unistd::User::from_name(SANDBOX_USER)
        .unwrap()
        .unwrap()
        .uid
        .as_raw()
}

#[test]
fn the_reduce_side_runs_every_test_run_in_the_sandbox_and_writes_its_report_itself() {
    if !sandbox() {
        return;
    }
    let (logs, reports) = log_and_reports();
    let log = logs.path().join("runs");
    let (repo, base, head) = recording_repo(&log, reports.path());
    let repo_path = repo.path().display().to_string();
    let out = reports.path().display().to_string();
    let head_out = tempfile::tempdir().unwrap();
    let head_path = head_out.path().display().to_string();
    let exec = |side: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "exec", "--side", side, "--out", out, "--base", &base, "--head", &head, "--repo",
            &repo_path,
        ];
        args.extend(extra);
        let o = run(&args, repo.path());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    exec("base", &out, &["--sandbox-user", SANDBOX_USER]);
    exec("head", &head_path, &[]);
    take_log(&log);
    let base_report = reports.path().join("base.report").display().to_string();
    let reduce_args = ["--base-report", &base_report, "--holdout-runs", "30"];
    let mut sandboxed = reduce_args.to_vec();
    sandboxed.extend(["--sandbox-user", SANDBOX_USER]);
    exec("reduce", &out, &sandboxed);

    // Every run of the reduction (baseline, candidates, holdout) ran as the sandbox user,
    // which could neither create the report nor write the tree's files, with a TMPDIR of
    // its own.
    let runs = take_log(&log);
    assert!(runs.len() >= 32, "{runs:?}");
    let expected = format!("{} refused kept own-tmp", sandbox_uid());
    assert!(runs.iter().all(|r| *r == expected), "{runs:?}");

    // The reduction is still certified.
    let o = run(
        &[
            "judge",
            "--base-report",
            &base_report,
            "--base-rerun-report",
            &format!("{out}/base-rerun.report"),
            "--head-report",
            &format!("{head_path}/head.report"),
            "--reduce-report",
            &format!("{out}/reduce.report"),
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
        ],
        repo.path(),
    );
    let line = line_of(&o);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
    assert_eq!(line["certificate"]["test"]["file"], "tests/t_add.sh");

    // Root is refused: an error report, and nothing runs.
    let mut refused = reduce_args.to_vec();
    refused.extend(["--sandbox-user", "root"]);
    exec("reduce", &out, &refused);
    let text = std::fs::read_to_string(reports.path().join("reduce.report")).unwrap();
    let report = decode(&text).unwrap();
    assert!(
        matches!(&report.outcome, ReduceOutcome::Error { message } if message.contains("is root")),
        "{report:?}"
    );
    assert_eq!(take_log(&log), Vec::<String>::new());
}

#[test]
fn run_with_a_sandbox_user_reduces_in_the_sandbox() {
    if !sandbox() {
        return;
    }
    let (logs, parent) = log_and_reports();
    let log = logs.path().join("runs");
    let reports = parent.path().join("reports");
    let (repo, base, head) = recording_repo(&log, &reports);
    let o = run(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo.path().display().to_string(),
            "--sandbox-user",
            SANDBOX_USER,
            "--reports",
            &reports.display().to_string(),
        ],
        repo.path(),
    );
    let line = line_of(&o);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
    // The head side, which runs the head's own tests on the head, is the one side outside
    // the sandbox (its run and its four reruns of the one candidate); the base side's runs
    // and reruns and every run of the reduction are inside it.
    let runs = take_log(&log);
    let (unsandboxed, sandboxed): (Vec<&String>, Vec<&String>) = runs
        .iter()
        .partition(|r| !r.starts_with(&format!("{} ", sandbox_uid())));
    assert_eq!(unsandboxed.len(), 1 + 4, "{runs:?}");
    assert!(sandboxed.len() >= 2 + 30, "{runs:?}");
    assert!(
        sandboxed
            .iter()
            .all(|r| r.ends_with(" refused kept own-tmp")),
        "{runs:?}"
    );
}

#[test]
fn the_reduce_side_keeps_its_oracle_when_its_binary_is_removed_while_it_runs() {
    // A rebuild replaces the binary while a reduce side runs: its oracle (repromin
    // check-test, started for every probe) must still be the image that is running.
    let (repo, base, head) = repo_with_fix();
    let copy_dir = tempfile::tempdir().unwrap();
    let copy = copy_dir.path().join("repromin");
    std::fs::copy(crate::util::bin(), &copy).unwrap();
    let (out, mut command) =
        crate::util::base_then_reduce_side(&copy, &repo, (&base, &head), &["--holdout-runs", "3"]);
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = crate::util::spawn_written(&mut command);
    // The exec has happened once spawn returns: the file can go.
    std::fs::remove_file(&copy).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let report = decode(&text).unwrap();
    let ReduceOutcome::Reduced(reduced) = &report.outcome else {
        panic!("{report:?}");
    };
    assert_eq!(reduced.holdout.as_ref().map(|h| h.passes), Some(3));
    assert!(reduced.after.files < reduced.before.files, "{reduced:?}");
    // Where the passes' time went, for people: the commands, and repromin around them.
    let time: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("reduce-time.json")).unwrap(),
    )
    .unwrap();
    assert!(time["jobs"].as_u64().unwrap() >= 1, "{time}");
    assert!(time["commands"].as_u64().unwrap() >= 2, "{time}");
    assert!(time["reduce_ms"].as_u64().unwrap() > 0, "{time}");
    let probe = &time["probe_time"];
    assert!(probe["command_ms"].as_u64().unwrap() > 0, "{time}");
    for key in ["prepare_ms", "clean_up_ms", "commit_ms"] {
        assert!(probe[key].is_u64(), "{time}");
    }
}

#[test]
fn a_bad_local_config_of_the_reduce_side_is_an_error_and_its_marker() {
    let (repo, base, head) = repo_with_fix();
    let repo_path = repo.path().display().to_string();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("bad.json"), "{ not json").unwrap();
    let out = work.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = run(
        &[
            "exec",
            "--side",
            "reduce",
            "--out",
            "out",
            "--base-report",
            "out/base.report",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
            "--config",
            "bad.json",
        ],
        work.path(),
    );
    // As on every side, the side's report is a marker that carries the problem to the
    // judge, and the exit status is 0.
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!(stderr(&o));
    let text = std::fs::read_to_string(out.join("reduce.report")).unwrap();
    let report = decode(&text).unwrap();
    assert_eq!(report.commit, base);
    let ReduceOutcome::Error { message } = report.outcome else {
        panic!("{text}");
    };
    assert!(stderr(&o).contains(&message), "{message}");
}

#[test]
fn a_cut_that_makes_the_test_hang_costs_seconds_not_the_tests_whole_limit() {
    use std::time::{Duration, Instant};
    // The test's limit is ten minutes; a cut that drops the loop's step hangs the test.
    let config = PYTEST_CONFIG.replace(
        "\"report\": \"junit\"",
        "\"report\": \"junit\",\n  \"timeouts\": { \"test\": 600 }",
    );
    let repo = GitRepo::new();
    let looping = |last: &str| {
        format!(
            "def settle(n):\n    i = 0\n    while i < n:\n        i += 1\n        seen = i\n    {last}\n"
        )
    };
    let base = repo.commit(
        &[
            (".github/repromin.json", config.as_str()),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("shop/__init__.py", ""),
            (
                "shop/settle.py",
                &looping("raise ValueError(\"unsettled\", seen)"),
            ),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("shop/settle.py", &looping("return seen")),
            ("tests/test_settle.py", "from shop.settle import settle\n\n\ndef test_settle():\n    assert settle(3) == 3\n"),
        ],
        "fix",
    );
    let (out, mut command) = crate::util::base_then_reduce_side(
        &crate::util::bin(),
        &repo,
        (&base, &head),
        &["--holdout-runs", "3"],
    );
    let trace = out.path().join("trace.tsv");
    command.env("REPROMIN_TRACE", &trace);
    let started = Instant::now();
    // One hang held to the test's limit alone would outlast this.
    let o = crate::util::output_within(command, Duration::from_secs(500));
    let took = started.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    // A cut that stops the loop's step ran and failed (it hung) ...
    let log = std::fs::read_to_string(&trace).unwrap();
    assert!(
        log.lines().any(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            f.len() == 5 && f[1].ends_with("fail") && f[4].contains("i += 1")
        }),
        "{log}"
    );
    // ... and was stopped at the limit the runs taught (ten seconds here), far from the
    // test's ten minutes.
    assert!(took < Duration::from_secs(450), "{took:?}");
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let ReduceOutcome::Reduced(reduced) = decode(&text).unwrap().outcome else {
        panic!("{text}");
    };
    assert_eq!(reduced.holdout.as_ref().map(|h| h.passes), Some(3));
}

#[test]
fn a_file_the_install_writes_inside_the_tree_outlives_every_cut_of_its_directory_and_the_test_file_every_cut()
 {
    // The install writes the package's version file, as hatch-vcs or setuptools-scm do; the
    // package cannot be imported without it, and git does not hold it.
    let config = PYTEST_CONFIG.replace(
        "\"report\": \"junit\"",
        "\"report\": \"junit\",\n  \"install\": [\"printf 'VERSION = 1\\\\n' > shop/_version.py\"]",
    );
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config.as_str()),
            ("tests/conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"),
            ("shop/__init__.py", ""),
            ("shop/cart.py", "from shop._version import VERSION\n\n\ndef total(prices):\n    return -sum(prices) * VERSION\n"),
            ("shop/unused.py", "def helper():\n    return 42\n"),
            ("README.md", "# shop\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("shop/cart.py", "from shop._version import VERSION\n\n\ndef total(prices):\n    return sum(prices) * VERSION\n"),
            ("tests/test_cart.py", "from shop.cart import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"),
        ],
        "fix",
    );
    let (out, mut command) = crate::util::base_then_reduce_side(
        &crate::util::bin(),
        &repo,
        (&base, &head),
        &["--holdout-runs", "3"],
    );
    let trace = out.path().join("trace.tsv");
    command.env("REPROMIN_TRACE", &trace);
    let o = crate::util::output_within(command, crate::util::RUN_TIMEOUT);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let ReduceOutcome::Reduced(reduced) = decode(&text).unwrap().outcome else {
        panic!("{text}");
    };
    // No candidate deleted the test's file, which no run could pass without.
    let log = std::fs::read_to_string(&trace).unwrap();
    assert!(
        !log.lines().any(|l| {
            let label = l.split('\t').nth(2).unwrap_or("");
            label == "delete tests" || label.starts_with("delete tests/test_cart.py")
        }),
        "{log}"
    );
    // Every holdout run still imports the package: its version file was never taken away
    // with the directory the files pass tried to delete ...
    assert_eq!(
        reduced.holdout.as_ref().map(|h| h.passes),
        Some(3),
        "{reduced:?}"
    );
    let deleted = deleted_paths(&reduced.edits);
    // ... so the cuts after that attempt still pass.
    assert!(deleted.contains(&"shop/unused.py"), "{deleted:?}");
    assert!(deleted.contains(&"README.md"), "{deleted:?}");
    assert!(!deleted.contains(&"shop"), "{deleted:?}");
}

#[test]
fn with_the_head_report_the_reduce_side_certifies_a_test_that_reproduces_not_one_failing_on_both_sides()
 {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("shop/__init__.py", ""),
            (
                "shop/cart.py",
                "def total(prices):\n    return -sum(prices)\n",
            ),
        ],
        "base",
    );
    // The first test in name order fails on both sides; the second one reproduces.
    let head = repo.commit(
        &[
            ("shop/cart.py", "def total(prices):\n    return sum(prices)\n"),
            (
                "tests/test_cart.py",
                "from shop.cart import total\n\n\ndef test_a_known_failure():\n    assert total([1]) == 2\n\n\ndef test_b_total():\n    assert total([1, 2]) == 3\n",
            ),
        ],
        "fix",
    );
    let (out, mut command) = crate::util::base_then_reduce_side(
        &crate::util::bin(),
        &repo,
        (&base, &head),
        &["--holdout-runs", "2"],
    );
    let o = crate::util::exec_side(&repo, "head", out.path(), (&base, &head), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    command
        .arg("--head-report")
        .arg(out.path().join("head.report"));
    let o = crate::util::output_within(command, crate::util::RUN_TIMEOUT);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let ReduceOutcome::Reduced(reduced) = decode(&text).unwrap().outcome else {
        panic!("{text}");
    };
    assert_eq!(reduced.name, "test_b_total");
    assert_eq!(
        reduced.holdout.as_ref().map(|h| h.passes),
        Some(2),
        "{reduced:?}"
    );
    // A report of another side in its place is an error that names it.
    let base_report = out.path().join("base.report").display().to_string();
    let o = crate::util::exec_side(
        &repo,
        "reduce",
        out.path(),
        (&base, &head),
        &["--base-report", &base_report, "--head-report", &base_report],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let outcome = format!("{:?}", decode(&text).unwrap().outcome);
    assert!(
        outcome.contains("it is the base report, not the head report"),
        "{outcome}"
    );
    // A base report of another commit is an error that names the file and both commits.
    let cap = repromin::gate::encode::TEST_REPORT_CAP;
    let mut other = repromin::gate::encode::decode(
        &std::fs::read_to_string(out.path().join("base.report")).unwrap(),
        "base",
        cap,
    )
    .unwrap();
    other.commit = head.clone();
    let moved = out.path().join("other-base.report");
    std::fs::write(&moved, repromin::gate::encode::encode(&other, cap).unwrap()).unwrap();
    let o = crate::util::exec_side(
        &repo,
        "reduce",
        out.path(),
        (&base, &head),
        &["--base-report", &moved.display().to_string()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("reduce.report")).unwrap();
    let outcome = format!("{:?}", decode(&text).unwrap().outcome);
    assert!(
        outcome.contains(&format!(
            "the base report `{}` is of commit {head}, not of the base {base}",
            moved.display()
        )),
        "{outcome}"
    );
}

#[test]
fn a_symlink_of_the_base_that_leads_out_of_the_tree_stays_in_place_and_the_judge_certifies() {
    // A test fixture of the base links to an absolute path that does not exist, as
    // fastify-static's `test/static/shallow/no-link` does.
    let (repo, _, _) = repo_with_fix();
    repo.git(&["checkout", "-q", "HEAD~1"]);
    std::fs::create_dir_all(repo.path().join("docs/fixtures")).unwrap();
    std::os::unix::fs::symlink("/none", repo.path().join("docs/fixtures/no-link")).unwrap();
    let base = repo.commit(&[], "a dangling fixture");
    let head = repo.commit(
        &[
            ("shop/cart.py", "from shop.money import cents\n\n\ndef total(prices):\n    return cents(sum(prices))\n"),
            ("tests/test_cart.py", "from shop.cart import total\n\n\ndef test_total():\n    assert total([1.0, 2.5]) == 350\n"),
        ],
        "fix",
    );
    let repo_path = repo.path().display().to_string();
    let o = run(
        &[
            "run", "--base", &base, "--head", &head, "--repo", &repo_path,
        ],
        repo.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let line = line_of(&o);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    assert_eq!(line["certificate"]["verdict"], "certified", "{line}");
}

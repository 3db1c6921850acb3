//! Tests that fail at random: the gate reruns what could reproduce until chance is ruled
//! out, on real pytest runs. Each flaky test counts its runs in a file outside the
//! repository, so the runs it fails are known in advance: `run` makes the two base runs,
//! then the base side's reruns, then the head run and the head side's reruns, in that order.

use std::path::Path;

use crate::gate::{CALC_FIXED, python_base as base_repo};
use crate::util::{PYTEST_CONFIG, gate_run, line_command, no_reduce_args, run, stderr, stdout};

const REPRODUCING: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

/// A test whose `n`-th run (from 0, counted in `counter`) passes exactly when `passes` holds.
fn counted_test(counter: &Path, passes: &str) -> String {
    format!(
        "import os\n\nCOUNTER = {counter:?}\n\n\ndef test_sometimes():\n    \
         n = int(open(COUNTER).read()) if os.path.exists(COUNTER) else 0\n    \
         open(COUNTER, 'w').write(str(n + 1))\n    assert {passes}\n",
        counter = counter.display().to_string()
    )
}

#[test]
fn a_test_that_passes_on_a_base_rerun_is_flaky_and_a_real_fix_still_reproduces() {
    let (repo, base) = base_repo();
    let counts = tempfile::tempdir().unwrap();
    let counter = counts.path().join("runs");
    // Fails the two base runs, passes from the first base rerun on.
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            ("tests/test_calc.py", REPRODUCING),
            ("tests/test_sometimes.py", &counted_test(&counter, "n >= 2")),
        ],
        "fix, and a test that fails at random",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["counts"]["reproduces"], 1, "{line}");
    assert_eq!(line["counts"]["flaky"], 1, "{line}");
    let flaky = &line["tests"][1];
    assert_eq!(flaky["name"], "test_sometimes", "{line}");
    assert_eq!(flaky["class"], "flaky", "{line}");
    // Settled by its first base rerun; the head side did not rerun it.
    assert_eq!(
        flaky["runs"],
        serde_json::json!({"baseFailed": 2, "baseRuns": 3, "headPassed": 1, "headRuns": 1}),
        "{line}"
    );
    assert!(
        table.contains("(failed 2 of 3 on base, passed 1 of 1 on head)"),
        "{table}"
    );
    // The table shows what the reproducing test's runs were too: four reruns a side.
    assert!(
        table.contains("test_add (failed 6 of 6 on base, passed 5 of 5 on head)"),
        "{table}"
    );
    // The reproducing test is not listed with runs: only a flaky one is.
    assert!(line["tests"][0].get("runs").is_none(), "{line}");
    // Four reruns of the counted test on base would have made it fail 6 runs.
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "4");
}

#[test]
fn a_test_that_fails_on_a_head_rerun_is_flaky_and_so_is_the_verdict() {
    let (repo, base) = base_repo();
    let counts = tempfile::tempdir().unwrap();
    let counter = counts.path().join("runs");
    // Fails both base runs and the four base reruns (one candidate: four reruns a side),
    // passes the head run, fails the first head rerun.
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            (
                "tests/test_sometimes.py",
                &counted_test(&counter, "n >= 6 and n != 7"),
            ),
        ],
        "a test that fails at random, no real fix",
    );
    let path = repo.path().display().to_string();
    let o = run(&no_reduce_args(&base, &head, &path), repo.path());
    let printed = stdout(&o);
    let line = crate::util::line(&printed);
    assert_eq!(line["verdict"], "flaky", "{line}\n{}", stderr(&o));
    assert_eq!(
        line["tests"][0]["runs"],
        serde_json::json!({"baseFailed": 6, "baseRuns": 6, "headPassed": 1, "headRuns": 2}),
        "{line}"
    );
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "8");
    // `repromin line` reads it, and says what the runs were.
    let checked = line_command(&printed);
    assert!(checked.status.success(), "{}", stdout(&checked));
    assert!(
        stdout(&checked).contains("(failed 6 of 6 on base, passed 1 of 2 on head)"),
        "{}",
        stdout(&checked)
    );
}

#[test]
fn a_stricter_error_rate_needs_more_reruns_and_the_cap_can_leave_it_undecided() {
    let (repo, _) = base_repo();
    // One candidate needs 4 reruns a side at 1 %; at 0.01 % it needs 7, and with at most 3
    // the gate cannot rule out chance: flaky, though the test never disagreed.
    let strict = PYTEST_CONFIG.replacen(
        "\"version\": 1,",
        "\"version\": 1,\n  \"flaky\": {\"error_rate\": 0.0001, \"max_reruns\": 3},",
        1,
    );
    assert_ne!(
        strict, PYTEST_CONFIG,
        "the config names its version as expected"
    );
    let base = repo.commit(&[(".github/repromin.json", strict.as_str())], "strict");
    let head = repo.commit(
        &[("calc.py", CALC_FIXED), ("tests/test_calc.py", REPRODUCING)],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "flaky", "{line}\n{table}");
    assert_eq!(
        line["tests"][0]["runs"],
        serde_json::json!({"baseFailed": 5, "baseRuns": 5, "headPassed": 4, "headRuns": 4}),
        "{line}"
    );
    // A bad error rate is refused, naming the key.
    let bad = PYTEST_CONFIG.replacen(
        "\"version\": 1,",
        "\"version\": 1,\n  \"flaky\": {\"error_rate\": 0.9},",
        1,
    );
    let base = repo.commit(&[(".github/repromin.json", bad.as_str())], "bad");
    let head = repo.commit(&[("tests/test_calc.py", REPRODUCING)], "test");
    let path = repo.path().display().to_string();
    let o = run(&no_reduce_args(&base, &head, &path), repo.path());
    let line = crate::util::line(&stdout(&o));
    assert_eq!(line["verdict"], "error", "{line}");
    assert!(
        line["error"]
            .as_str()
            .unwrap_or("")
            .contains("`flaky.error_rate` is 0.9"),
        "{line}"
    );
}

#[test]
fn run_reduces_for_the_test_that_reproduces_not_a_flaky_one_that_fails_first() {
    let (repo, base) = base_repo();
    let counts = tempfile::tempdir().unwrap();
    let counter = counts.path().join("runs");
    // `tests/test_a_sometimes.py` sorts before `tests/test_calc.py` and fails both base
    // runs, so it is the first test that failed on base; a base rerun settles it.
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            ("tests/test_calc.py", REPRODUCING),
            (
                "tests/test_a_sometimes.py",
                &counted_test(&counter, "n >= 2"),
            ),
        ],
        "fix, and a test that fails at random",
    );
    let path = repo.path().display().to_string();
    let o = run(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
            // The fewest holdout runs that can certify at 0.9 and 0.95.
            "--holdout-runs",
            "29",
        ],
        repo.path(),
    );
    let line = crate::util::line(&stdout(&o));
    assert_eq!(line["verdict"], "reproduced", "{line}\n{}", stderr(&o));
    let certificate = &line["certificate"];
    assert_eq!(certificate["test"]["name"], "test_add", "{line}");
    assert_eq!(certificate["test"]["file"], "tests/test_calc.py", "{line}");
    assert_ne!(certificate["verdict"], "error", "{line}");
}

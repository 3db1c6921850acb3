//! Regressions elsewhere, when asked: the suite runs on both sides (real pytest), and the
//! tests that pass on the merge base and fail on head are listed, the verdict unchanged
//! unless the configuration makes a regression an error.

use crate::util::{GitRepo, gate_run, line, line_command, no_reduce_args, run, stderr, stdout};

/// A pytest configuration with `extra` keys after `version`.
fn config(extra: &str) -> String {
    format!(
        r#"{{"version":1,{extra}"tests":["tests/**/test_*.py"],"carry":["tests/**/conftest.py"],"command":"python3 -m pytest -p no:cacheprovider -q --junitxml={{report}} {{tests}}","report":"junit"}}"#
    )
}

/// A merge base with a bug in `add` and a passing test of `sub`, and a head that fixes
/// `add` (with a test that reproduces) but breaks `sub`.
fn breaking_fix(config: &str) -> (GitRepo, String, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            (
                "calc.py",
                "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
            ),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            (
                "tests/test_old.py",
                "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n\n\ndef test_fine():\n    assert True\n",
            ),
            ("tests/other/test_more.py", "def test_more():\n    assert True\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            (
                "calc.py",
                "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
            ),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            ),
        ],
        "fix add, break sub",
    );
    (repo, base, head)
}

#[test]
fn a_fix_that_breaks_another_test_lists_it_as_a_regression_when_asked() {
    let (repo, base, head) = breaking_fix(&config(""));
    // Not asked: no key on the line.
    let (plain, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(plain["verdict"], "reproduced", "{plain}");
    assert!(plain.get("regressions").is_none(), "{plain}");
    // Asked with the flag: listed, the verdict unchanged.
    let path = repo.path().display().to_string();
    let mut args = no_reduce_args(&base, &head, &path).to_vec();
    args.push("--regressions");
    let o = run(&args, repo.path());
    let printed = stdout(&o);
    let asked = line(&printed);
    assert_eq!(asked["verdict"], "reproduced", "{asked}\n{}", stderr(&o));
    assert_eq!(
        asked["regressions"],
        serde_json::json!({"count": 1, "tests": [{"file": "tests/test_old.py", "name": "test_sub"}]}),
        "{asked}"
    );
    assert!(
        stderr(&o).contains("regression tests/test_old.py::test_sub"),
        "{}",
        stderr(&o)
    );
    // `repromin line` reads it back and shows it.
    let shown = line_command(&printed);
    assert!(shown.status.success(), "{}", stdout(&shown));
    assert!(
        stdout(&shown).contains("regressions:    1 (1 listed)\n  tests/test_old.py::test_sub"),
        "{}",
        stdout(&shown)
    );
}

#[test]
fn the_configuration_can_make_a_regression_an_error_and_name_a_part_of_the_suite() {
    let (repo, base, head) = breaking_fix(&config(r#""regressions":{"error":true},"#));
    let (failed, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(failed["verdict"], "error", "{failed}\n{table}");
    assert_eq!(
        failed["error"],
        "1 test passes on the merge base and fails on head: tests/test_old.py::test_sub",
        "{failed}"
    );
    assert_eq!(failed["counts"]["reproduces"], 1, "{failed}");
    // Only the part of the suite the globs name runs: test_sub is outside it.
    let part = config(r#""regressions":{"tests":["tests/other/**"],"error":true},"#);
    let (repo, base, head) = breaking_fix(&part);
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(
        line["regressions"],
        serde_json::json!({"count": 0, "tests": []}),
        "{line}"
    );
}

#[test]
fn the_judge_refuses_a_suite_run_on_one_side_only() {
    let (repo, base, head) = breaking_fix(&config(""));
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().display().to_string();
    let path = repo.path().display().to_string();
    let exec = |side: &str, extra: &[&str]| {
        let mut args = vec![
            "exec", "--side", side, "--out", &dir, "--base", &base, "--head", &head, "--repo",
            &path,
        ];
        args.extend_from_slice(extra);
        let o = run(&args, repo.path());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    exec("base", &["--regressions"]);
    exec("head", &[]);
    let report = |name: &str| format!("{dir}/{name}.report");
    let judge = || {
        let args = [
            "judge",
            "--base-report",
            &report("base"),
            "--base-rerun-report",
            &report("base-rerun"),
            "--head-report",
            &report("head"),
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
        ];
        line(&stdout(&run(&args, repo.path())))
    };
    let judged = judge();
    assert_eq!(judged["verdict"], "error", "{judged}");
    assert_eq!(
        judged["error"], "the base report has a run of the suite and the head report has none",
        "{judged}"
    );
    // With the head side's suite too, the split layout lists what `run` lists.
    exec("head", &["--regressions"]);
    let judged = judge();
    assert_eq!(judged["verdict"], "reproduced", "{judged}");
    assert_eq!(judged["regressions"]["count"], 1, "{judged}");
}

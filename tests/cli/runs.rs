//! Test runs that do not end well: a base side that hangs or runs out of memory, a report
//! that names no files, a test command that leaves no report. Each on a real repository
//! with real pytest or node, through `repromin run`.

use crate::util::{GitRepo, PYTEST_CONFIG, gate_run, require_tool, tool_runs};

/// The pytest configuration with `extra` added (JSON members, each ending in a comma).
fn pytest_config(extra: &str) -> String {
    PYTEST_CONFIG.replace("\"carry\"", &format!("{extra}\n  \"carry\""))
}

/// A Python repository whose merge base has `calc.py` and the configuration, and a head
/// that replaces `calc.py` and adds `tests/test_calc.py`.
fn python_pr(
    config: &str,
    base_calc: &str,
    head_calc: &str,
    test: &str,
) -> (GitRepo, String, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            ("calc.py", base_calc),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
        ],
        "base",
    );
    let head = repo.commit(
        &[("calc.py", head_calc), ("tests/test_calc.py", test)],
        "fix",
    );
    (repo, base, head)
}

/// A fix for an infinite loop: the base side's run is stopped by its time limit, which
/// fails the file's tests there, so the test reproduces the bug. The file's reruns on base
/// run under the shorter `flaky.hang_rerun_seconds`. The file's six tests failed on base as
/// one run, so they are one hypothesis: four reruns a side rule out chance for all of them.
#[test]
fn a_base_side_that_hangs_fails_its_tests_there() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let config =
        pytest_config("\"timeouts\": {\"test\": 8},\n  \"flaky\": {\"hang_rerun_seconds\": 4},");
    let (repo, base, head) = python_pr(
        &config,
        "def add(a, b):\n    while True:\n        pass\n",
        "def add(a, b):\n    return a + b\n",
        &format!(
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n{}",
            (1..=5)
                .map(|i| format!("\n\ndef test_other_{i}():\n    assert True\n"))
                .collect::<String>()
        ),
    );
    let reports = tempfile::tempdir().unwrap();
    let kept = reports.path().join("kept");
    let kept_arg = kept.display().to_string();
    let (line, table) = gate_run(&repo, &base, &head, &["--reports", &kept_arg]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["base"], "failed", "{line}");
    assert_eq!(line["tests"][0]["rerun"], "failed", "{line}");
    let tests = line["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 6, "{line}");
    assert!(tests.iter().all(|t| t["class"] == "reproduces"), "{line}");
    // Four reruns of the hanging file on base, each stopped at 4 s, not at 8.
    let text = std::fs::read_to_string(kept.join("base-rerun.report")).unwrap();
    let cap = repromin::gate::encode::TEST_REPORT_CAP;
    let report = repromin::gate::encode::decode(&text, "base-rerun", cap).unwrap();
    let limits: Vec<Option<u64>> = report.reruns.iter().map(|r| r.limit_ms).collect();
    assert_eq!(limits, vec![Some(4000); 4], "{report:?}");
    // The head's passes took less than that, so they count.
    let text = std::fs::read_to_string(kept.join("head.report")).unwrap();
    let report = repromin::gate::encode::decode(&text, "head", cap).unwrap();
    assert_eq!(report.reruns.len(), 4, "{report:?}");
    assert!(
        report
            .reruns
            .iter()
            .all(|r| r.duration_ms.is_some_and(|ms| ms < 4000)),
        "{report:?}"
    );
}

/// An allocation over the memory limit fails on the base side; under no limit the same
/// allocation succeeds, so the verdict shows the limit is applied to test runs.
#[test]
fn a_test_run_is_bounded_by_the_memory_limit() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let config = pytest_config("\"memory_mb\": 300,");
    let (repo, base, head) = python_pr(
        &config,
        "def buffer():\n    return bytearray(2 * 10**9)\n",
        "def buffer():\n    return bytearray(10)\n",
        "from calc import buffer\n\n\ndef test_buffer():\n    assert len(buffer()) > 0\n",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
}

/// node's own JUnit reporter writes no `file` attribute: with two selected files, each is
/// run on its own and what its run reports is its own.
#[test]
fn a_junit_report_without_files_is_attributed_by_running_each_file_alone() {
    if !require_tool("node", tool_runs("node")) {
        return;
    }
    let config = r#"{"version":1,"tests":["test/*.test.mjs"],"command":"node --test --test-reporter=junit --test-reporter-destination={report} {tests}","report":"junit"}"#;
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            (
                "package.json",
                "{\"name\":\"calc\",\"type\":\"module\",\"private\":true}\n",
            ),
            (
                "src/calc.js",
                "export const add = (a, b) => a - b;\nexport const neg = (a) => -a;\n",
            ),
        ],
        "base",
    );
    let test = |name: &str, body: &str| {
        format!(
            "import test from 'node:test';\nimport assert from 'node:assert';\nimport {{ add, neg }} from '../src/calc.js';\n\ntest('{name}', () => {body});\n"
        )
    };
    let head = repo.commit(
        &[
            (
                "src/calc.js",
                "export const add = (a, b) => a + b;\nexport const neg = (a) => -a;\n",
            ),
            (
                "test/add.test.mjs",
                &test("adds", "assert.strictEqual(add(2, 3), 5)"),
            ),
            (
                "test/neg.test.mjs",
                &test("negates", "assert.strictEqual(neg(2), -2)"),
            ),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    let tests = line["tests"].as_array().unwrap();
    let of = |file: &str| {
        tests
            .iter()
            .find(|t| t["file"] == file)
            .unwrap_or_else(|| panic!("{file} not in {line}"))
    };
    assert_eq!(of("test/add.test.mjs")["class"], "reproduces", "{line}");
    assert_eq!(of("test/neg.test.mjs")["class"], "passes-on-base", "{line}");
}

/// A test command that leaves no report: the line's error says which run, how it ended
/// and what it printed, and `run` shows the end of its output.
#[test]
fn a_run_without_a_report_says_what_the_command_did() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    let config = r#"{"version":1,"tests":["tests/**/test_*.py"],"command":"echo 'collecting'; echo 'E   ModuleNotFoundError: No module named freezegun' >&2; exit 4 # {report}","report":"junit"}"#;
    let (repo, base, head) = python_pr(
        config,
        "def add(a, b):\n    return a - b\n",
        "def add(a, b):\n    return a + b\n",
        "def test_add():\n    pass\n",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "error", "{line}");
    let error = line["error"].as_str().unwrap();
    assert!(
        error.starts_with("head: the head test run ended with exit 4 after 0.")
            && error.contains(
                "left no test report: No such file or directory (os error 2): E   \
                 ModuleNotFoundError: No module named freezegun (`echo 'collecting';"
            ),
        "{error}"
    );
    assert!(
        table.contains("  | collecting\n  | E   ModuleNotFoundError: No module named freezegun"),
        "{table}"
    );
}

/// A fix whose only test change is a new data file of a suite parametrised over a
/// directory: the test module that reads the directory is selected and run on both sides,
/// and only the ids that name the new file are judged, so an old case that was already
/// failing on the merge base proves nothing.
#[test]
fn a_data_only_change_selects_the_tests_that_read_it_and_judges_its_ids() {
    if !require_tool("python3", tool_runs("python3")) {
        return;
    }
    const SUITE: &str = "import json, pathlib\n\nimport pytest\n\nfrom calc import add\n\nCASES = sorted((pathlib.Path(__file__).parent / \"cases\").glob(\"*.json\"))\n\n\n@pytest.mark.parametrize(\"path\", CASES, ids=[p.stem for p in CASES])\ndef test_case(path):\n    case = json.loads(path.read_text())\n    assert add(*case[\"args\"]) == case[\"want\"]\n";
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            (
                "calc.py",
                "def add(a, b):\n    return a + b if a >= 0 else b\n",
            ),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("tests/test_cases.py", SUITE),
            ("tests/cases/pos.json", "{\"args\": [1, 2], \"want\": 3}\n"),
            (
                "tests/cases/old.json",
                "{\"args\": [-5, 1], \"want\": -4}\n",
            ),
        ],
        "base",
    );
    let fixed = "def add(a, b):\n    return a + b\n";
    let head = repo.commit(
        &[
            ("calc.py", fixed),
            ("tests/cases/neg.json", "{\"args\": [-1, 2], \"want\": 1}\n"),
        ],
        "fix with a new case",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    let names: Vec<&str> = line["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["test_case[neg]"], "{line}");

    // The same fix with a new case that passes on the merge base too: vacuous, although
    // the old case `old` fails on base and passes on head.
    repo.git(&["checkout", "-q", "-b", "other", &base]);
    let head = repo.commit(
        &[
            ("calc.py", fixed),
            ("tests/cases/zero.json", "{\"args\": [0, 0], \"want\": 0}\n"),
        ],
        "fix with a case that proves nothing",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
}

/// `go test -json` does not say which file of a package holds a test: with two selected
/// test files in one package, the tests go to the first and the second is listed with none
/// of its own, instead of counting as missing from the report.
#[test]
fn two_selected_go_test_files_of_one_package_are_both_in_the_report() {
    if !require_tool("go", crate::zero_config::tool_runs_with("go", "version")) {
        return;
    }
    let config = r#"{"version":1,"tests":["**/*_test.go"],"command":"go test -count=1 -json {packages}","report":"go-test-json"}"#;
    let calc = |add: &str| {
        format!(
            "package calc\n\nfunc Add(a, b int) int {{\n\treturn {add}\n}}\n\nfunc One() int {{\n\treturn 1\n}}\n"
        )
    };
    let test = |name: &str, check: &str| {
        format!(
            "package calc\n\nimport \"testing\"\n\nfunc {name}(t *testing.T) {{\n\tif {check} {{\n\t\tt.Fatal(\"no\")\n\t}}\n}}\n"
        )
    };
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config),
            ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
            ("calc/calc.go", &calc("a - b")),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc/calc.go", &calc("a + b")),
            ("calc/calc_test.go", &test("TestAdd", "Add(2, 3) != 5")),
            ("calc/one_test.go", &test("TestOne", "One() != 1")),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["notCollected"], serde_json::json!([]), "{line}");
    assert_eq!(line["counts"]["passes-on-base"], 1, "{line}");
}

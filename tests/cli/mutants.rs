//! Mutation specs end to end: pull requests of tests alone on a small Python repository,
//! real git and real pytest.

use repromin::gate::mutants::{MutantsOutcome, MutantsReport};

use crate::util::{
    GitRepo, PYTEST_CONFIG, SANDBOX_USER, SH_RUNNER, line, node_repo, run, sandbox, stderr, stdout,
    vitest_modules,
};

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n";

/// Tests of `add` and of `clamp`'s lower bound only.
const TESTS: &str = "from calc import add, clamp\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_clamp_low():\n    assert clamp(-1, 0, 10) == 0\n";

fn repo() -> (GitRepo, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("calc.py", CALC),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
        ],
        "base",
    );
    (repo, base)
}

fn mutation(name: &str, find: &str, replace: &str, kills: &[&str]) -> serde_json::Value {
    serde_json::json!({"name": name, "file": "calc.py", "find": find, "replace": replace, "kills": kills})
}

fn spec(mutations: &[serde_json::Value]) -> String {
    serde_json::json!({"v": 1, "mutations": mutations}).to_string()
}

/// `repromin run` (without the reduce side); the line and the table.
fn gate_run(repo: &GitRepo, base: &str, head: &str) -> (serde_json::Value, String) {
    let path = repo.path().display().to_string();
    let o = run(&crate::util::no_reduce_args(base, head, &path), repo.path());
    assert!(o.status.success(), "{}", stderr(&o));
    (line(&stdout(&o)), stderr(&o))
}

/// `repromin exec --side mutants` alone; its decoded report.
fn exec_mutants(repo: &GitRepo, base: &str, head: &str, extra: &[&str]) -> MutantsReport {
    let out = tempfile::tempdir().unwrap();
    let (out_path, repo_path) = (
        out.path().display().to_string(),
        repo.path().display().to_string(),
    );
    let mut args = vec![
        "exec", "--side", "mutants", "--out", &out_path, "--base", base, "--head", head, "--repo",
        &repo_path,
    ];
    args.extend_from_slice(extra);
    let o = run(&args, repo.path());
    assert!(
        o.status.success() && stdout(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(out.path().join("mutants.report")).unwrap();
    repromin::gate::mutants::decode(&text).unwrap()
}

#[test]
fn a_test_only_pull_request_whose_tests_catch_the_mutant_is_killed() {
    let (repo, base) = repo();
    let head = repo.commit(
        &[
            ("tests/test_calc.py", TESTS),
            (
                "tests/test_calc.mutations.json",
                &spec(&[mutation(
                    "add-minus",
                    "return a + b",
                    "return a - b",
                    &["test_add"],
                )]),
            ),
        ],
        "characterization tests with a spec",
    );
    let (line, table) = gate_run(&repo, &base, &head);
    // Base against head proves nothing for tests alone; the mutants carry the evidence.
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
    let results = serde_json::json!([{"spec": "tests/test_calc.mutations.json", "name": "add-minus", "outcome": "killed"}]);
    assert_eq!(line["mutants"]["verdict"], "killed", "{line}\n{table}");
    assert_eq!(line["mutants"]["results"], results);
    assert!(line["mutants"].get("error").is_none());
    assert!(table.contains("mutant killed"), "{table}");

    // The same evidence from the separate jobs: exec --side mutants, then judge.
    let out = tempfile::tempdir().unwrap();
    let (out_path, repo_path) = (
        out.path().display().to_string(),
        repo.path().display().to_string(),
    );
    for side in ["base", "head", "mutants"] {
        let args = [
            "exec", "--side", side, "--out", &out_path, "--base", &base, "--head", &head, "--repo",
            &repo_path,
        ];
        let o = run(&args, repo.path());
        assert!(
            o.status.success() && stdout(&o).is_empty(),
            "{}",
            stderr(&o)
        );
    }
    let report = |n: &str| out.path().join(format!("{n}.report")).display().to_string();
    let text = std::fs::read_to_string(report("mutants")).unwrap();
    assert!(!text.contains(char::is_whitespace) && !text.contains("repromin/v1"));
    let (b, r, h, m) = (
        report("base"),
        report("base-rerun"),
        report("head"),
        report("mutants"),
    );
    let judge = |mutants: Option<&str>| {
        let mut args = vec![
            "judge",
            "--base-report",
            &b,
            "--base-rerun-report",
            &r,
            "--head-report",
            &h,
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
        ];
        if let Some(m) = mutants {
            args.extend(["--mutants-report", m]);
        }
        crate::util::line(&stdout(&run(&args, repo.path())))
    };
    assert_eq!(judge(Some(&m)), line);
    // Without the report the field stays, as an error; the main verdict does not move.
    let missing = judge(None);
    assert_eq!(missing["verdict"], "vacuous");
    assert_eq!(missing["mutants"]["verdict"], "error");
    assert_eq!(missing["mutants"]["error"], "no mutants report was given");
    // A damaged report is refused.
    std::fs::write(&m, "not a report").unwrap();
    let broken = judge(Some(&m));
    assert_eq!(broken["mutants"]["verdict"], "error");
    assert!(
        broken["mutants"]["error"]
            .as_str()
            .unwrap()
            .contains("mutants report is malformed")
    );
}

#[test]
fn mutants_the_tests_miss_survive_and_other_failures_are_not_kills() {
    let (repo, base) = repo();
    let head = repo.commit(
        &[
            ("tests/test_calc.py", TESTS),
            (
                "tests/test_calc.mutations.json",
                &spec(&[
                    // Only the lower bound is tested: the upper one can change unseen.
                    mutation(
                        "clamp-high",
                        "if x > hi:",
                        "if x > hi + 1:",
                        &["test_clamp_low"],
                    ),
                    // A TypeError is a crash, not a test catching the mutant.
                    mutation("add-none", "return a + b", "return a + None", &["test_add"]),
                    // Breaking the lower bound fails its test, and (through `add`) no other.
                    mutation("clamp-low", "return lo", "return hi", &["test_clamp_low"]),
                    // One edit across both functions, listing one test: the other failing
                    // test makes it overkill.
                    mutation(
                        "both",
                        "a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo",
                        "a - b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return hi",
                        &["test_clamp_low"],
                    ),
                ]),
            ),
        ],
        "tests with a spec the tests only partly satisfy",
    );
    let (line, table) = gate_run(&repo, &base, &head);
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
    let m = &line["mutants"];
    assert_eq!(m["verdict"], "not-killed", "{line}\n{table}");
    let outcome = |i: usize| {
        (
            m["results"][i]["name"].clone(),
            m["results"][i]["outcome"].clone(),
        )
    };
    assert_eq!(
        outcome(0),
        ("clamp-high".into(), "survived".into()),
        "{table}"
    );
    assert_eq!(m["results"][0]["failed"], serde_json::json!([]));
    assert_eq!(outcome(1), ("add-none".into(), "error".into()), "{table}");
    assert_eq!(outcome(2), ("clamp-low".into(), "killed".into()), "{table}");
    assert_eq!(outcome(3), ("both".into(), "overkill".into()), "{table}");
    assert_eq!(
        m["results"][3]["failed"],
        serde_json::json!(["test_add", "test_clamp_low"])
    );
}

#[test]
fn a_bad_spec_is_an_error_and_a_source_change_has_no_mutants_field() {
    let (repo, base) = repo();
    let head = repo.commit(
        &[
            ("tests/test_calc.py", TESTS),
            (
                "tests/test_calc.mutations.json",
                &spec(&[mutation(
                    "absent",
                    "return a * b",
                    "return a",
                    &["test_add"],
                )]),
            ),
        ],
        "a spec whose find is not in the file",
    );
    let (line, table) = gate_run(&repo, &base, &head);
    assert_eq!(line["verdict"], "vacuous", "{line}");
    assert_eq!(line["mutants"]["verdict"], "error", "{line}");
    let error = line["mutants"]["error"].as_str().unwrap();
    assert!(
        error.contains("tests/test_calc.mutations.json") && error.contains("occurs 0 times"),
        "{error}\n{table}"
    );
    assert_eq!(line["mutants"]["results"], serde_json::json!([]));

    // The worker refuses the spec too, with an error marker.
    assert!(matches!(
        exec_mutants(&repo, &base, &head, &[]).outcome,
        MutantsOutcome::Error { message } if message.contains("occurs 0 times")
    ));

    // A fix with its test and a spec is not tests alone: no field at all, and the worker
    // runs nothing.
    let fixed = repo.commit(
        &[("calc.py", &CALC.replace("return x\n", "return int(x)\n"))],
        "source",
    );
    let (line, _) = gate_run(&repo, &base, &fixed);
    assert!(line.get("mutants").is_none(), "{line}");
    assert!(matches!(
        exec_mutants(&repo, &base, &fixed, &[]).outcome,
        MutantsOutcome::Skipped { reason } if reason.contains("more than tests")
    ));
    // Nor has a change of tests alone without a spec.
    let only_tests = repo.commit(&[("tests/test_calc.mutations.json", "")], "drop the spec");
    let (line, _) = gate_run(&repo, &fixed, &only_tests);
    assert!(line.get("mutants").is_none(), "{line}");
}

#[test]
fn a_failed_build_under_a_mutant_is_unbuilt_and_after_the_restore_an_error() {
    // The build compiles calc.py; it also fails once the tree has been mutated to
    // `a * b` and restored, to show that the restore is rebuilt and checked.
    let build = "python3 -m py_compile calc.py && if grep -q 'a [*] b' calc.py; then touch .was-times; elif [ -f .was-times ]; then echo stale >&2; exit 4; fi";
    let config = PYTEST_CONFIG.replace(
        "\"command\"",
        &format!(
            "\"build\": {},\n  \"command\"",
            serde_json::to_string(build).unwrap()
        ),
    );
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", &config),
            ("calc.py", CALC),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
        ],
        "base",
    );
    let unbuilt = repo.commit(
        &[
            ("tests/test_calc.py", TESTS),
            (
                "tests/test_calc.mutations.json",
                &spec(&[
                    mutation("syntax", "return a + b", "return a +", &["test_add"]),
                    mutation("minus", "return a + b", "return a - b", &["test_add"]),
                ]),
            ),
        ],
        "a mutant that does not compile",
    );
    let (line, table) = gate_run(&repo, &base, &unbuilt);
    let m = &line["mutants"];
    assert_eq!(m["verdict"], "not-killed", "{line}\n{table}");
    assert_eq!(m["results"][0]["outcome"], "unbuilt", "{table}");
    // The restore was rebuilt, so the next mutant ran on a sound tree.
    assert_eq!(m["results"][1]["outcome"], "killed", "{table}");

    let stale = repo.commit(
        &[(
            "tests/test_calc.mutations.json",
            &spec(&[mutation(
                "times",
                "return a + b",
                "return a * b",
                &["test_add"],
            )]),
        )],
        "a mutant whose restore does not build",
    );
    let (line, table) = gate_run(&repo, &base, &stale);
    let m = &line["mutants"];
    assert_eq!(m["verdict"], "error", "{line}\n{table}");
    let error = m["error"].as_str().unwrap();
    assert!(
        error.contains("the rebuild after restoring `calc.py` failed") && error.contains("stale"),
        "{error}"
    );
}

#[test]
fn the_mutants_side_runs_its_tests_and_builds_in_the_sandbox() {
    if !sandbox() {
        return;
    }
    // Once the head's tests are in the tree, a build as root fails: after the baseline,
    // every build must run in the sandbox.
    let config = serde_json::json!({
        "version": 1,
        "tests": ["tests/t_*.sh"],
        "build": "if [ \"$(id -u)\" = 0 ] && [ -f tests/t_add.sh ]; then echo built as root >&2; exit 7; fi",
        "command": "sh run_tests.sh {report} {tests}",
        "report": "junit"
    });
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", &config.to_string()),
            ("run_tests.sh", SH_RUNNER),
            ("calc.sh", "add() { echo $(($1 + $2)); }\n"),
        ],
        "base",
    );
    let mutation = serde_json::json!({"name": "minus", "file": "calc.sh", "find": "$1 + $2", "replace": "$1 - $2", "kills": ["check"]});
    let head = repo.commit(
        &[
            // The test passes only when it does not run as root.
            (
                "tests/t_add.sh",
                ". ./calc.sh\n[ \"$(id -u)\" != 0 ] && [ \"$(add 2 3)\" = 5 ]\n",
            ),
            ("tests/t_add.mutations.json", &spec(&[mutation])),
        ],
        "a test with a spec",
    );
    let plain = exec_mutants(&repo, &base, &head, &[]);
    assert!(
        matches!(&plain.outcome, MutantsOutcome::Error { message } if message.contains("the rebuild after restoring `calc.sh` failed") && message.contains("built as root")),
        "{plain:?}"
    );
    let sandboxed = exec_mutants(&repo, &base, &head, &["--sandbox-user", SANDBOX_USER]);
    let MutantsOutcome::Ran { baseline, runs } = &sandboxed.outcome else {
        panic!("{sandboxed:?}");
    };
    let shown = format!("{baseline:?}");
    assert!(
        shown.starts_with("Report") && !shown.contains("Failed"),
        "{shown}"
    );
    assert_eq!(runs.len(), 1);
    let shown = format!("{:?}", runs[0].result);
    assert!(
        shown.starts_with("Tested") && shown.contains("AssertionError"),
        "{shown}"
    );
    // Root is refused as the sandbox user: an error marker, never an unsandboxed run.
    let refused = exec_mutants(&repo, &base, &head, &["--sandbox-user", "root"]);
    assert!(matches!(
        refused.outcome,
        MutantsOutcome::Error { message } if message.contains("is root")
    ));
}

#[test]
fn vitest_matchers_kill_mutants_and_a_thrown_type_error_does_not() {
    let Some(modules) = vitest_modules() else {
        return;
    };
    // Both of vitest's reports: JUnit types the failure, JSON names it in the message.
    for (reporter, format) in [("junit", "junit"), ("json", "vitest-json")] {
        let (repo, base) = node_repo(&modules, reporter, format);
        let tests = "import { describe, it, expect } from 'vitest';\nimport { add } from '../src/calc.js';\n\ndescribe('add', () => {\n  it('subtracts today', () => {\n    expect(add(5, 3)).toBe(2);\n  });\n});\n";
        let mutation = |name: &str, replace: &str| serde_json::json!({"name": name, "file": "src/calc.js", "find": "a - b", "replace": replace, "kills": ["add > subtracts today"]});
        let head = repo.commit(
            &[
                ("test/calc.test.js", tests),
                (
                    "test/calc.test.mutations.json",
                    &spec(&[mutation("plus", "a + b"), mutation("crash", "a.x.y - b")]),
                ),
            ],
            "a characterization test with a spec",
        );
        let (line, table) = gate_run(&repo, &base, &head);
        let m = &line["mutants"];
        assert_eq!(m["verdict"], "not-killed", "{reporter}: {line}\n{table}");
        assert_eq!(m["results"][0]["outcome"], "killed", "{reporter}: {table}");
        assert_eq!(m["results"][1]["outcome"], "error", "{reporter}: {table}");
    }
}

#[test]
fn rust_assertion_panics_kill_mutants_and_other_panics_do_not() {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"dbl\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
            ),
            ("src/lib.rs", "pub fn double(x: i32) -> i32 {\n    x + x\n}\n"),
            (".gitignore", "/target\n"),
        ],
        "base",
    );
    let mutation = |name: &str, replace: &str| serde_json::json!({"name": name, "file": "src/lib.rs", "find": "x + x", "replace": replace, "kills": ["doubles"]});
    let head = repo.commit(
        &[
            (
                "tests/double.rs",
                "#[test]\nfn doubles() {\n    assert_eq!(dbl::double(2), 4);\n}\n",
            ),
            (
                "tests/double.mutations.json",
                &spec(&[
                    mutation("triple", "x + x + x"),
                    mutation("panic", "panic!(\"boom {x}\")"),
                    mutation("syntax", "x +"),
                ]),
            ),
        ],
        "a characterization test with a spec (detected defaults)",
    );
    let (line, table) = gate_run(&repo, &base, &head);
    let m = &line["mutants"];
    assert_eq!(m["verdict"], "not-killed", "{line}\n{table}");
    let outcomes: Vec<&str> = (0..3)
        .map(|i| m["results"][i]["outcome"].as_str().unwrap())
        .collect();
    // A compile error of the test target is a load error, as on the base side.
    assert_eq!(outcomes, ["killed", "error", "load-error"], "{table}");
}

//! The gate end to end: real git repositories built in temp dirs, real pytest and cargo.

use std::path::Path;
use std::process::Command;

use crate::util::{run, stderr, stdout};

/// A git repository in a temp dir, committed to step by step.
pub struct GitRepo {
    pub dir: tempfile::TempDir,
}

impl GitRepo {
    pub fn new() -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("repromin-gate-")
            .tempdir()
            .unwrap();
        let repo = GitRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "t@example.com"]);
        repo.git(&["config", "user.name", "t"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Writes files (an empty content deletes the file) and commits; returns the commit.
    pub fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (path, text) in files {
            let full = self.path().join(path);
            if text.is_empty() {
                let _ = std::fs::remove_file(&full);
            } else {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, text).unwrap();
            }
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn mv(&self, from: &str, to: &str) {
        self.git(&["mv", from, to]);
    }
}

/// A pytest configuration that uses the machine's pytest (no venv, no install).
pub const PYTEST_CONFIG: &str = r#"{
  "version": 1,
  "tests": ["tests/**/test_*.py"],
  "carry": ["tests/**/conftest.py"],
  "command": "python3 -m pytest -p no:cacheprovider -q --junitxml={report} {tests}",
  "report": "junit"
}
"#;

const CALC_BUGGY: &str = "def add(a, b):\n    return a - b\n";
const CALC_FIXED: &str = "def add(a, b):\n    return a + b\n";

/// A Python repo whose merge base has the config and a bug.
fn python_base() -> (GitRepo, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("calc.py", CALC_BUGGY),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("tests/test_old.py", "def test_old():\n    assert True\n"),
        ],
        "base",
    );
    (repo, base)
}

/// Runs `repromin run` and returns (line, stderr).
fn gate_run(repo: &GitRepo, base: &str, head: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["run", "--base", base, "--head", head, "--repo"];
    let path = repo.path().display().to_string();
    args.push(&path);
    args.extend_from_slice(extra);
    let o = run(&args, repo.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {out}");
    let json = lines[0]
        .strip_prefix("repromin/v1 ")
        .unwrap_or_else(|| panic!("{out}"));
    (serde_json::from_str(json).unwrap(), stderr(&o))
}

#[test]
fn python_fix_with_a_reproducing_test_is_reproduced() {
    let (repo, base) = python_base();
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            ("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["counts"]["reproduces"], 1);
    assert_eq!(line["counts"]["passes-on-base"], 1);
    assert_eq!(line["tests"][0]["name"], "test_add");
    assert_eq!(line["tests"][0]["base"], "failed");
    assert_eq!(line["tests"][0]["rerun"], "failed");
    assert_eq!(line["configEdited"], false);
    assert!(table.contains("reproduces"), "{table}");
}

#[test]
fn a_test_that_passes_on_both_sides_is_vacuous() {
    let (repo, base) = python_base();
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_same():\n    assert add(2, 0) == 2\n",
            ),
        ],
        "fix",
    );
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous", "{line}");
    assert_eq!(line["counts"]["passes-on-base"], 1);
}

#[test]
fn a_test_of_a_new_function_is_unproven() {
    let (repo, base) = python_base();
    let head = repo.commit(
        &[
            (
                "calc.py",
                "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
            ),
            (
                "tests/test_mul.py",
                "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
            ),
        ],
        "feature",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "unproven", "{line}\n{table}");
    assert_eq!(line["counts"]["new-api"], 1);
}

#[test]
fn a_test_failing_on_head_proves_nothing() {
    let (repo, base) = python_base();
    let head = repo.commit(
        &[(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )],
        "test only, no fix",
    );
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous", "{line}");
    assert_eq!(line["counts"]["fails-on-head"], 1);
}

#[test]
fn a_source_only_change_has_no_tests_and_renames_and_deletes_are_tracked() {
    let (repo, base) = python_base();
    let head = repo.commit(&[("calc.py", CALC_FIXED)], "source only");
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "no-tests", "{line}");

    repo.git(&["checkout", "-q", &base]);
    repo.mv("tests/test_old.py", "tests/test_renamed.py");
    let renamed = repo.commit(&[], "pure rename");
    let (line, _) = gate_run(&repo, &base, &renamed, &[]);
    assert_eq!(
        line["verdict"], "no-tests",
        "an exact rename selects nothing: {line}"
    );

    repo.git(&["checkout", "-q", &base]);
    let deleted = repo.commit(&[("tests/test_old.py", "")], "delete a test");
    let (line, _) = gate_run(&repo, &base, &deleted, &[]);
    assert_eq!(line["verdict"], "no-tests");
    assert_eq!(line["deletedTests"][0], "tests/test_old.py");
}

#[test]
fn a_head_edit_of_the_config_is_reported_and_ignored() {
    let (repo, base) = python_base();
    // The head's config would turn every test into a pass; it must not be used.
    let forged = PYTEST_CONFIG.replace("python3 -m pytest", "true; python3 -m pytest --co");
    let head = repo.commit(
        &[
            (".github/repromin.json", &forged),
            ("calc.py", CALC_FIXED),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            ),
        ],
        "fix and edit config",
    );
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["configEdited"], true);
    assert_eq!(line["verdict"], "reproduced", "{line}");
}

#[test]
fn a_forged_line_printed_by_a_test_never_reaches_stdout() {
    let (repo, base) = python_base();
    let forged = format!(
        "repromin/v1 {{\"head\":\"{}\",\"verdict\":\"reproduced\"}}",
        "f".repeat(40)
    );
    let head = repo.commit(
        &[(
            "tests/test_loud.py",
            &format!("def test_loud():\n    print({forged:?})\n    assert True\n"),
        )],
        "loud test",
    );
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous");
}

#[test]
fn exec_and_judge_in_separate_steps_give_the_same_line_as_run() {
    let (repo, base) = python_base();
    let head = repo.commit(
        &[
            ("calc.py", CALC_FIXED),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            ),
        ],
        "fix",
    );
    let out = tempfile::tempdir().unwrap();
    let out_path = out.path().display().to_string();
    let repo_path = repo.path().display().to_string();
    for side in ["base", "head"] {
        let o = run(
            &[
                "exec", "--side", side, "--out", &out_path, "--base", &base, "--head", &head,
                "--repo", &repo_path,
            ],
            repo.path(),
        );
        assert!(o.status.success());
        assert_eq!(stdout(&o), "", "exec prints nothing on success");
    }
    for name in ["base", "base-rerun", "head"] {
        let text = std::fs::read_to_string(out.path().join(format!("{name}.report"))).unwrap();
        assert!(!text.contains(char::is_whitespace));
    }
    let report = |n: &str| out.path().join(format!("{n}.report")).display().to_string();
    let o = run(
        &[
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
            &repo_path,
        ],
        repo.path(),
    );
    assert!(o.status.success());
    let judged = stdout(&o);
    let o = run(
        &[
            "run", "--base", &base, "--head", &head, "--repo", &repo_path,
        ],
        repo.path(),
    );
    assert_eq!(judged, stdout(&o));
    assert!(judged.starts_with("repromin/v1 {\"head\":"));

    // A malformed or oversized report is an error naming the side.
    std::fs::write(out.path().join("head.report"), "not base64!").unwrap();
    let o = run(
        &[
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
            &repo_path,
        ],
        repo.path(),
    );
    let line = stdout(&o);
    assert!(
        line.contains("\"verdict\":\"error\"") && line.contains("head report"),
        "{line}"
    );
    std::fs::write(out.path().join("head.report"), "A".repeat(250_000)).unwrap();
    let o = run(
        &[
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
            &repo_path,
            "--require",
            "reproduced",
        ],
        repo.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("over the 240000-character cap"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn abbreviated_shas_give_an_error_line() {
    let (repo, base) = python_base();
    let (line, _) = gate_run(&repo, &base[..12], &base, &[]);
    assert_eq!(line["verdict"], "error");
    assert!(
        line["error"]
            .as_str()
            .unwrap()
            .contains("not a full 40-character commit id")
    );
}

/// A Rust crate whose merge base has a bug; the head fixes it and adds tests.
#[test]
fn rust_fix_is_reproduced_and_a_new_function_is_unproven_with_detected_defaults() {
    let repo = GitRepo::new();
    let lib_buggy = "pub fn double(x: i32) -> i32 {\n    x + x + 1\n}\n";
    let base = repo.commit(
        &[
            ("Cargo.toml", "[package]\nname = \"dbl\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n"),
            ("src/lib.rs", lib_buggy),
            (".gitignore", "/target\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("src/lib.rs", "pub fn double(x: i32) -> i32 {\n    x + x\n}\n\npub fn triple(x: i32) -> i32 {\n    3 * x\n}\n"),
            ("tests/double.rs", "#[test]\nfn doubles() {\n    assert_eq!(dbl::double(2), 4);\n}\n"),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "doubles");

    let newapi = repo.commit(
        &[(
            "tests/triple.rs",
            "#[test]\nfn triples() {\n    assert_eq!(dbl::triple(2), 6);\n}\n",
        )],
        "test a new function",
    );
    let (line, table) = gate_run(&repo, &head, &newapi, &[]);
    // The head's own fix is in `head`, so only the new function's test is selected.
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
    let feature = repo.commit(
        &[
            ("src/lib.rs", "pub fn double(x: i32) -> i32 {\n    x + x\n}\n\npub fn triple(x: i32) -> i32 {\n    3 * x\n}\n\npub fn quad(x: i32) -> i32 {\n    4 * x\n}\n"),
            ("tests/quad.rs", "#[test]\nfn quads() {\n    assert_eq!(dbl::quad(2), 8);\n}\n"),
        ],
        "new function and its test",
    );
    let (line, table) = gate_run(&repo, &newapi, &feature, &[]);
    assert_eq!(line["verdict"], "unproven", "{line}\n{table}");
}

//! The gate end to end: real git repositories built in temp dirs, real pytest and cargo.

use std::path::Path;
use std::process::Command;

use repromin::exit_code::Exit;

use crate::util::{
    GitRepo, PYTEST_CONFIG, SANDBOX_USER, gate_run, gate_run_env, node_repo, require_tool, run,
    run_env, sandbox, stderr, stdout, tool_runs, vitest_modules,
};

const CALC_BUGGY: &str = "def add(a, b):\n    return a - b\n";
pub(crate) const CALC_FIXED: &str = "def add(a, b):\n    return a + b\n";

/// A Python repo whose merge base has the config and a bug.
pub(crate) fn python_base() -> (GitRepo, String) {
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
    let judge_env = |extra: &[&str], env: &[(&str, &str)]| {
        let (b, r, h) = (report("base"), report("base-rerun"), report("head"));
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
        args.extend_from_slice(extra);
        run_env(&args, repo.path(), env)
    };
    let judge = |extra: &[&str]| judge_env(extra, &[]);
    let o = judge(&[]);
    assert!(o.status.success());
    let judged = stdout(&o);
    // The judge reads git through libgit2 and spawns nothing: without git on PATH, the
    // same line.
    let o = judge_env(&[], &[("PATH", "/nonexistent")]);
    assert!(o.status.success());
    assert_eq!(judged, stdout(&o));
    let o = run(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
            "--no-reduce",
        ],
        repo.path(),
    );
    assert_eq!(judged, stdout(&o));
    assert!(judged.starts_with("repromin/v1 {\"head\":"));

    // A malformed or oversized report is an error naming the side.
    std::fs::write(out.path().join("head.report"), "not base64!").unwrap();
    let o = judge(&[]);
    let line = stdout(&o);
    assert!(
        line.contains("\"verdict\":\"error\"") && line.contains("head report"),
        "{line}"
    );
    std::fs::write(out.path().join("head.report"), "A".repeat(250_000)).unwrap();
    let o = judge(&["--require", "reproduced"]);
    assert_eq!(o.status.code(), Some(Exit::Error as i32));
    assert!(
        stdout(&o).contains("over the 240000-character cap"),
        "{}",
        stdout(&o)
    );

    // A report path that is not a regular file is refused at once, saying what it is: a
    // FIFO is never waited on, a link never followed.
    let head_report = out.path().join("head.report");
    type Make<'a> = &'a dyn Fn(&Path);
    let kinds: [(&str, Make); 4] = [
        ("is a FIFO, not a regular file", &|p| {
            nix::unistd::mkfifo(p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }),
        ("is a directory, not a regular file", &|p| {
            std::fs::create_dir(p).unwrap();
        }),
        (
            "is a symbolic link; reports are read only from regular files",
            &|p| {
                std::os::unix::fs::symlink(out.path().join("base.report"), p).unwrap();
            },
        ),
        // Nothing to make: the device is named directly.
        ("is a device, not a regular file", &|_| {}),
    ];
    for (index, (says, make)) in kinds.iter().enumerate() {
        let _ = std::fs::remove_file(&head_report);
        let _ = std::fs::remove_dir(&head_report);
        make(&head_report);
        let started = std::time::Instant::now();
        let o = if index == 3 {
            let (b, r) = (report("base"), report("base-rerun"));
            run(
                &[
                    "judge",
                    "--base-report",
                    &b,
                    "--base-rerun-report",
                    &r,
                    "--head-report",
                    "/dev/null",
                    "--base",
                    &base,
                    "--head",
                    &head,
                    "--repo",
                    &repo_path,
                ],
                repo.path(),
            )
        } else {
            judge(&[])
        };
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let line = stdout(&o);
        assert!(
            line.contains("\"verdict\":\"error\"") && line.contains(says),
            "{says}: {line}"
        );
    }
}

/// A `--base` that is not the merge base (a sibling commit on the base branch) would make
/// that branch's changes look like the pull request's: here the sibling breaks `add` and the
/// pull request only adds a test, so the diff from the sibling would read as a reproduced fix.
#[test]
fn a_base_that_is_not_the_merge_base_is_an_error() {
    let (repo, _) = python_base();
    let merge_base = repo.commit(&[("calc.py", CALC_FIXED)], "fixed on main");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    let head = repo.commit(
        &[(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )],
        "a test only",
    );
    repo.git(&["checkout", "-q", "main"]);
    let sibling = repo.commit(&[("calc.py", CALC_BUGGY)], "broken on main");
    let (line, table) = gate_run(&repo, &sibling, &head, &[]);
    assert_eq!(line["verdict"], "error", "{line}\n{table}");
    let error = line["error"].as_str().unwrap();
    assert!(
        error.contains(&format!(
            "is not the merge base of base and head ({merge_base})"
        )),
        "{error}"
    );
    let (line, table) = gate_run(&repo, &merge_base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
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

/// A `PATH` on which `program` cannot be found: each directory that holds it is replaced
/// by a directory of links to everything else there. The directories live in `scratch`.
fn path_without(program: &str, scratch: &Path) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut dirs = Vec::new();
    for (index, dir) in path.split(':').enumerate() {
        let dir = Path::new(dir);
        if !dir.join(program).exists() {
            dirs.push(dir.display().to_string());
            continue;
        }
        let copy = scratch.join(format!("path-{index}"));
        std::fs::create_dir_all(&copy).unwrap();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.file_name() != program {
                let _ = std::os::unix::fs::symlink(entry.path(), copy.join(entry.file_name()));
            }
        }
        dirs.push(copy.display().to_string());
    }
    dirs.join(":")
}

/// A workspace member's vector test, one test per line of `tests/cases.txt` (`a b sum`).
const VECTORS: &str = r#"#[test]
fn cases() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases.txt")).unwrap();
    for line in text.lines() {
        let n: Vec<i64> = line.split(' ').map(|w| w.parse().unwrap()).collect();
        assert_eq!(PKG::add(n[0], n[1]), n[2], "{line}");
    }
}
"#;

/// A Cargo workspace whose members are tested under their own `tests/`: a pull request
/// that only adds a data line in one member selects that member's test, run with `-p`;
/// and two members' targets of the same name are told apart by running each alone. Both
/// with cargo-nextest and, when it is not installed, plain `cargo test`.
#[test]
fn workspace_members_are_tested_with_nextest_or_cargo_test() {
    if !require_tool("cargo-nextest", tool_runs_with_arg("cargo", "nextest")) {
        return;
    }
    let repo = GitRepo::new();
    let member = |pkg: &str| {
        format!("[package]\nname = \"{pkg}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
    };
    let vectors = |pkg: &str, extra: &str| format!("{}{extra}", VECTORS.replace("PKG", pkg));
    let base = repo.commit(
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"calc\", \"other\"]\nresolver = \"2\"\n",
            ),
            ("calc/Cargo.toml", &member("calc_core")),
            (
                "calc/src/lib.rs",
                "pub fn add(a: i64, b: i64) -> i64 {\n    if b < 0 { a } else { a + b }\n}\n",
            ),
            ("calc/tests/vectors.rs", &vectors("calc_core", "")),
            ("calc/tests/cases.txt", "1 2 3\n"),
            ("other/Cargo.toml", &member("other")),
            (
                "other/src/lib.rs",
                "pub fn add(a: i64, b: i64) -> i64 {\n    a + b + i64::from(a == 7)\n}\n",
            ),
            ("other/tests/vectors.rs", &vectors("other", "")),
            ("other/tests/cases.txt", "1 2 3\n"),
            (".gitignore", "/target\n"),
        ],
        "base",
    );
    // Only data changes: the fix and a vector that shows it.
    let data_only = repo.commit(
        &[
            (
                "calc/src/lib.rs",
                "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
            ),
            ("calc/tests/cases.txt", "1 2 3\n5 -2 3\n"),
        ],
        "negative numbers",
    );
    // Both members' `vectors` targets change; only other's new test shows a fix.
    let namesakes = repo.commit(
        &[
            (
                "other/src/lib.rs",
                "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
            ),
            (
                "calc/tests/vectors.rs",
                &vectors(
                    "calc_core",
                    "\n#[test]\nfn zero() {\n    assert_eq!(calc_core::add(0, 0), 0);\n}\n",
                ),
            ),
            (
                "other/tests/vectors.rs",
                &vectors(
                    "other",
                    "\n#[test]\nfn seven() {\n    assert_eq!(other::add(7, 1), 8);\n}\n",
                ),
            ),
        ],
        "seven",
    );
    let scratch = tempfile::tempdir().unwrap();
    let no_nextest = path_without("cargo-nextest", scratch.path());
    for env in [vec![], vec![("PATH", no_nextest.as_str())]] {
        let (line, table) = gate_run_env(&repo, &base, &data_only, &[], &env);
        assert_eq!(line["verdict"], "reproduced", "{env:?}\n{line}\n{table}");
        assert_eq!(line["tests"][0]["file"], "calc/tests/vectors.rs", "{line}");
        assert!(
            table.contains(
                "the tests/ of workspace members calc, other too, each run with -p PACKAGE"
            ),
            "{table}"
        );
        let (line, table) = gate_run_env(&repo, &data_only, &namesakes, &[], &env);
        assert_eq!(line["verdict"], "reproduced", "{env:?}\n{line}\n{table}");
        assert_eq!(line["counts"]["reproduces"], 1, "{line}");
        let tests = line["tests"].as_array().unwrap();
        let reproduces = tests.iter().find(|t| t["class"] == "reproduces").unwrap();
        assert_eq!(reproduces["file"], "other/tests/vectors.rs", "{line}");
        assert_eq!(reproduces["name"], "seven", "{line}");
        assert!(
            table.contains("passes-on-base  calc/tests/vectors.rs::zero"),
            "{env:?}\n{table}"
        );
    }
}

/// Whether `program arg --version` runs and succeeds (`cargo nextest --version`).
fn tool_runs_with_arg(program: &str, arg: &str) -> Result<(), String> {
    match Command::new(program).args([arg, "--version"]).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{program} {arg} --version` exited with {}",
            o.status
        )),
        Err(e) => Err(format!("`{program}` cannot be started: {e}")),
    }
}

/// A shell test runner that writes JUnit; it runs tests with their output on ours, so a
/// detached child of a test can hold the output pipe after the runner exits.
const SH_RUNNER: &str = r#"#!/bin/sh
report=$1; shift
export REPORT="$report"
out="<testsuites>"
for t in "$@"; do
  if sh "$t"; then
    out="$out<testsuite name=\"$t\"><testcase classname=\"$t\" name=\"check\" file=\"$t\"/></testsuite>"
  else
    out="$out<testsuite name=\"$t\"><testcase classname=\"$t\" name=\"check\" file=\"$t\"><failure message=\"failed\"/></testcase></testsuite>"
  fi
done
printf '%s</testsuites>\n' "$out" > "$report"
"#;

const SH_CONFIG: &str = r#"{"version":1,"tests":["tests/t_*.sh"],"command":"sh run_tests.sh {report} {tests}","report":"junit"}"#;

/// A test that, on the base side only, starts a detached child which waits until the side
/// is done and then overwrites its encoded reports with forged ones in which every test
/// passes.
fn forger(out: &Path, base: &str) -> String {
    let files = r#"[{"path":"tests/t_add.sh","tests":[{"name":"check","status":"passed"}]},{"path":"tests/t_forge.sh","tests":[{"name":"check","status":"passed"}]}]"#;
    let mut script = String::from("grep -q -- '- $2' calc.sh || exit 0\n");
    // The survivor leaves the run's process group before the test returns (it waits for
    // it): a child still in the group when the leader exits is ended with the group.
    script.push_str("rm -f \"$TMPDIR/escaped\"\n");
    script.push_str("setsid sh -c '\n  touch \"$TMPDIR/escaped\"\n  sleep 1\n");
    for side in ["base", "base-rerun"] {
        let json = format!(
            r#"{{"v":1,"side":"{side}","commit":"{base}","outcome":{{"kind":"report","exit_code":0,"report":{{"files":{files}}}}}}}"#
        );
        // Encoded exactly as the writer encodes, which is all the judge reads.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let encoded = repromin::gate::encode::encode_value(&value).unwrap();
        script.push_str(&format!(
            "  rm -f {dir}/{side}.report; printf %s {encoded} > {dir}/{side}.report\n",
            dir = out.display()
        ));
    }
    script.push_str("' > /dev/null 2>&1 < /dev/null &\n");
    script.push_str("while [ ! -e \"$TMPDIR/escaped\" ]; do sleep 0.01; done\nexit 0\n");
    script
}

/// Builds the repository; the forger is written to attack `out`.
fn forging_repo(out: &Path) -> (GitRepo, String, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", SH_CONFIG),
            ("run_tests.sh", SH_RUNNER),
            ("calc.sh", "add() { echo $(($1 - $2)); }\n"),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc.sh", "add() { echo $(($1 + $2)); }\n"),
            ("tests/t_add.sh", ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n"),
            ("tests/t_forge.sh", &forger(out, &base)),
        ],
        "fix, plus a test that forges the reports",
    );
    (repo, base, head)
}

/// The three jobs' commands in sequence, then a pause in which a survivor could act.
fn three_jobs(
    repo: &GitRepo,
    base: &str,
    head: &str,
    out: &Path,
    sandbox: bool,
) -> serde_json::Value {
    let repo_path = repo.path().display().to_string();
    let out_path = out.display().to_string();
    let head_out = tempfile::tempdir().unwrap();
    let head_path = head_out.path().display().to_string();
    let mut args = vec![
        "exec", "--side", "base", "--out", &out_path, "--base", base, "--head", head, "--repo",
        &repo_path,
    ];
    if sandbox {
        args.extend(["--sandbox-user", SANDBOX_USER]);
    }
    assert!(run(&args, repo.path()).status.success());
    let args = [
        "exec", "--side", "head", "--out", &head_path, "--base", base, "--head", head, "--repo",
        &repo_path,
    ];
    assert!(run(&args, repo.path()).status.success());
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let b = format!("{out_path}/base.report");
    let r = format!("{out_path}/base-rerun.report");
    let h = format!("{head_path}/head.report");
    let o = run(
        &[
            "judge",
            "--base-report",
            &b,
            "--base-rerun-report",
            &r,
            "--head-report",
            &h,
            "--base",
            base,
            "--head",
            head,
            "--repo",
            &repo_path,
        ],
        repo.path(),
    );
    let text = stdout(&o);
    let line = serde_json::from_str(text.trim().strip_prefix("repromin/v1 ").unwrap()).unwrap();
    crate::schemas::check_line(&line);
    line
}

#[test]
fn a_detached_child_rewriting_the_reports_changes_nothing_under_the_sandbox() {
    if !sandbox() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    // The out directory is writable by anyone, so only the survivor's death stops it.
    let out = tempfile::tempdir().unwrap();
    std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (repo, base, head) = forging_repo(out.path());
    let line = three_jobs(&repo, &base, &head, out.path(), false);
    if repromin::runner::containment() == repromin::runner::Containment::Cgroup {
        // Without the sandbox, each run's cgroup ends the forger with the run.
        assert_eq!(line["verdict"], "reproduced", "{line}");
    } else {
        // Without the sandbox or a cgroup the forgery works: both base runs seem to pass.
        assert_eq!(
            line["verdict"], "vacuous",
            "the forger did not reach the reports: {line}"
        );
    }
    // In the sandbox the child dies with the namespace, and the real result stands.
    let line = three_jobs(&repo, &base, &head, out.path(), true);
    assert_eq!(line["verdict"], "reproduced", "{line}");
}

#[test]
fn root_is_refused_as_the_sandbox_user() {
    let out = tempfile::tempdir().unwrap();
    let (repo, base, head) = forging_repo(out.path());
    let (line, _) = gate_run(&repo, &base, &head, &["--sandbox-user", "root"]);
    assert_eq!(line["verdict"], "error");
    assert!(
        line["error"].as_str().unwrap().contains("is root"),
        "{line}"
    );
}

#[test]
fn node_vitest_reproduced_vacuous_and_unproven() {
    let Some(modules) = vitest_modules() else {
        return;
    };
    // JUnit reporter: a fix with a reproducing test.
    let (repo, base) = node_repo(&modules, "junit", "junit");
    let head = repo.commit(
        &[
            ("src/calc.js", "export function add(a, b) {\n  return a + b;\n}\n"),
            ("test/calc.test.js", "import { describe, it, expect } from 'vitest';\nimport { add } from '../src/calc.js';\n\ndescribe('add', () => {\n  it('adds', () => {\n    expect(add(2, 3)).toBe(5);\n  });\n  it('keeps zero', () => {\n    expect(add(0, 0)).toBe(0);\n  });\n});\n"),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "add > adds");

    // JSON reporter: a test that passes on both sides, and a test of a new export.
    let (repo, base) = node_repo(&modules, "json", "vitest-json");
    let head = repo.commit(
        &[("test/same.test.js", "import { it, expect } from 'vitest';\nimport { add } from '../src/calc.js';\n\nit('subtracts zero', () => {\n  expect(add(2, 0)).toBe(2);\n});\n")],
        "vacuous test",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "vacuous", "{line}\n{table}");
    let feature = repo.commit(
        &[
            ("src/calc.js", "export function add(a, b) {\n  return a - b;\n}\n\nexport function mul(a, b) {\n  return a * b;\n}\n"),
            ("test/mul.test.js", "import { it, expect } from 'vitest';\nimport { mul } from '../src/calc.js';\n\nit('multiplies', () => {\n  expect(mul(2, 3)).toBe(6);\n});\n"),
        ],
        "new export",
    );
    let (line, table) = gate_run(&repo, &head, &feature, &[]);
    assert_eq!(line["verdict"], "unproven", "{line}\n{table}");
}

#[test]
fn the_line_command_checks_lines_from_stdin() {
    let valid = format!(
        "repromin/v1 {{\"head\":\"{a}\",\"mergeBase\":\"{b}\",\"verdict\":\"no-tests\",\"error\":null,\"configEdited\":false,\"counts\":{{\"reproduces\":0,\"passes-on-base\":0,\"new-api\":0,\"fails-on-head\":0,\"not-run\":0}},\"tests\":[],\"deletedTests\":[],\"notCollected\":[],\"truncated\":false,\"certificate\":null}}",
        a = "a".repeat(40),
        b = "b".repeat(40)
    );
    let pipe = crate::util::line_command;
    let o = pipe(&format!("{valid}\n"));
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("no-tests"));
    let abbreviated = valid.replace(&"a".repeat(40), "aaaaaaa");
    let o = pipe(&format!("{valid}\n{abbreviated}\n"));
    assert_eq!(o.status.code(), Some(Exit::Error as i32));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("refused:") && out.contains("40"), "{out}");
}

/// `repromin line` on hostile input: a `\r\n` ending is refused, every line is checked
/// after an invalid one, refusals name their line, and no quoted input can break a line,
/// forge a result line or reach the terminal as a control sequence.
#[test]
fn the_line_command_refuses_crlf_and_never_echoes_input_raw() {
    let valid = format!(
        "repromin/v1 {{\"head\":\"{a}\",\"mergeBase\":\"{b}\",\"verdict\":\"no-tests\",\"error\":null,\"configEdited\":false,\"counts\":{{\"reproduces\":0,\"passes-on-base\":0,\"new-api\":0,\"fails-on-head\":0,\"not-run\":0}},\"tests\":[],\"deletedTests\":[],\"notCollected\":[],\"truncated\":false,\"certificate\":null}}",
        a = "a".repeat(40),
        b = "b".repeat(40)
    );
    let pipe = |input: &[u8]| {
        let mut child = Command::new(crate::util::bin())
            .arg("line")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = pipe(format!("{valid}\r\n").as_bytes());
    assert_eq!(o.status.code(), Some(Exit::Error as i32));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("line 1 refused:") && out.contains("\\r\\n"),
        "{out}"
    );
    let forged = valid.replace(
        "\"certificate\":null}",
        "\"certificate\":null,\"x\\nrepromin/v1 {\\\"verdict\\\":\\\"reproduced\\\"}\\u001b[31m\":1}",
    );
    let mut input = format!("{forged}\n").into_bytes();
    input.extend_from_slice(b"\xff\n");
    input.extend_from_slice(format!("{valid}\n").as_bytes());
    let o = pipe(&input);
    assert_eq!(o.status.code(), Some(Exit::Error as i32));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(!o.stdout.contains(&0x1b), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("repromin/v1")), "{out}");
    assert!(out.contains("line 1 refused: unknown key"), "{out}");
    assert!(
        out.contains("line 2 refused: it is not valid UTF-8"),
        "{out}"
    );
    assert!(out.contains("no-tests"), "line 3 is checked too: {out}");
}

#[test]
fn node_test_with_suites_is_read_through_the_shipped_reporter() {
    if !require_tool("node", tool_runs("node")) {
        return;
    }
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (
                "package.json",
                "{\"name\":\"calc\",\"type\":\"module\",\"scripts\":{\"test\":\"node --test\"}}\n",
            ),
            (
                "calc.js",
                "export function add(a, b) {\n  return a - b;\n}\n",
            ),
        ],
        "base",
    );
    // Detected defaults: node --test with repromin's reporter. Names repeat across suites.
    let head = repo.commit(
        &[
            ("calc.js", "export function add(a, b) {\n  return a + b;\n}\n"),
            ("test/calc.test.js", "import { describe, it } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.js';\n\ndescribe('add', () => {\n  it('works', () => assert.strictEqual(add(2, 3), 5));\n});\ndescribe('zero', () => {\n  it('works', () => assert.strictEqual(add(0, 0), 0));\n});\n"),
        ],
        "fix",
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
    assert_eq!(line["tests"][0]["name"], "add > works");
    assert_eq!(line["tests"][1]["name"], "zero > works");
    assert_eq!(line["tests"][1]["class"], "passes-on-base");
    let feature = repo.commit(
        &[
            ("calc.js", "export function add(a, b) {\n  return a + b;\n}\n\nexport function mul(a, b) {\n  return a * b;\n}\n"),
            ("test/mul.test.js", "import { it } from 'node:test';\nimport assert from 'node:assert';\nimport { mul } from '../calc.js';\n\nit('multiplies', () => assert.strictEqual(mul(2, 3), 6));\n"),
        ],
        "new export",
    );
    let (line, table) = gate_run(&repo, &head, &feature, &[]);
    assert_eq!(line["verdict"], "unproven", "{line}\n{table}");
}

#[test]
fn a_failed_install_is_an_error_marker_naming_the_step() {
    let repo = GitRepo::new();
    let config = PYTEST_CONFIG.replace(
        "\"carry\"",
        "\"install\": [\"echo cannot install >&2; exit 3\"],\n  \"carry\"",
    );
    let base = repo.commit(
        &[(".github/repromin.json", &config), ("calc.py", CALC_BUGGY)],
        "base",
    );
    let head = repo.commit(
        &[(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )],
        "test",
    );
    let (line, _) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "error");
    let error = line["error"].as_str().unwrap();
    assert!(
        error.contains("install") && error.contains("exit 3") && error.contains("cannot install"),
        "{error}"
    );
}

/// A repository of shell tests run through [`SH_RUNNER`], whose head adds the test
/// `path` with `body`.
fn sh_repo(path: &str, body: &str) -> (GitRepo, String, String) {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", SH_CONFIG),
            ("run_tests.sh", SH_RUNNER),
        ],
        "base",
    );
    let head = repo.commit(&[(path, body)], "a test");
    (repo, base, head)
}

#[test]
fn the_sandbox_clears_the_environment() {
    if !sandbox() {
        return;
    }
    let (repo, base, head) = sh_repo(
        "tests/t_env.sh",
        "[ -z \"$GITHUB_TOKEN\" ] && [ -z \"$GITHUB_OUTPUT\" ]\n",
    );
    let line = |extra: &[&str]| -> serde_json::Value {
        let env = [("GITHUB_TOKEN", "secret"), ("GITHUB_OUTPUT", "/tmp/x")];
        crate::util::gate_run_env(&repo, &base, &head, extra, &env).0
    };
    // Without the sandbox the test sees the token; in it, it does not.
    assert_eq!(line(&[])["tests"][0]["base"], "failed");
    assert_eq!(
        line(&["--sandbox-user", SANDBOX_USER])["tests"][0]["base"],
        "passed"
    );
}

#[test]
fn no_test_inherits_a_descriptor_repromin_inherited() {
    // The test passes only where descriptor 7 is not open; where it is, it writes there.
    let (repo, base, head) = sh_repo(
        "tests/t_fd.sh",
        "if { printf leaked >&7; } 2>/dev/null; then exit 1; fi\n",
    );
    let leak = tempfile::NamedTempFile::new().unwrap();
    let path = repo.path().display().to_string();
    let line = |extra: &[&str]| -> serde_json::Value {
        // A workflow step that opened descriptor 7 without close-on-exec, then ran repromin.
        let mut command = Command::new("sh");
        command
            .args(["-c", "exec 7>>\"$0\"; exec \"$@\""])
            .arg(leak.path())
            .arg(crate::util::bin())
            .args(crate::util::no_reduce_args(&base, &head, &path))
            .args(extra)
            .current_dir(repo.path())
            .stdin(std::process::Stdio::null());
        crate::util::clean_env(&mut command);
        let o = crate::util::output_within(command, crate::util::RUN_TIMEOUT);
        crate::util::line(&stdout(&o))
    };
    let seen = line(&[]);
    assert_eq!(seen["tests"][0]["base"], "passed", "{seen}");
    assert_eq!(seen["tests"][0]["head"], "passed", "{seen}");
    if sandbox() {
        let seen = line(&["--sandbox-user", SANDBOX_USER]);
        assert_eq!(seen["tests"][0]["base"], "passed", "{seen}");
    }
    assert_eq!(std::fs::read_to_string(leak.path()).unwrap(), "");
}

#[test]
fn exec_fails_when_it_cannot_write_its_reports() {
    let (repo, base) = python_base();
    let dir = tempfile::tempdir().unwrap();
    // `--out` is a regular file, so no report can be written under it.
    let out = dir.path().join("out");
    std::fs::write(&out, "not a directory").unwrap();
    let out_path = out.display().to_string();
    let repo_path = repo.path().display().to_string();
    let o = run(
        &[
            "exec", "--side", "head", "--out", &out_path, "--base", &base, "--head", &base,
            "--repo", &repo_path,
        ],
        repo.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("error: cannot write the report") && err.contains("head.report"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "not a directory");
}

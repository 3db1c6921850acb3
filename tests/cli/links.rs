//! Files a verdict depends on come from the commits: a test, carried file or data file that
//! is a symbolic link leaving the tree is an `error` naming it, on every side and in the
//! judge. Real git repositories, real pytest.

use std::path::Path;

use crate::gate::{CALC_FIXED, python_base};
use crate::util::{GitRepo, gate_run, line, run, stderr, stdout};

/// A reproducing test of `calc.add`, as a file outside any repository.
const OUTSIDE_TEST: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

/// Commits the fix at head with `link` pointing at `target` (and `files` written).
fn commit_link(repo: &GitRepo, link: &str, target: &Path, files: &[(&str, &str)]) -> String {
    let full = repo.path().join(link);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&full);
    std::os::unix::fs::symlink(target, &full).unwrap();
    let mut files = files.to_vec();
    files.push(("calc.py", CALC_FIXED));
    repo.commit(&files, "fix, with a linked file")
}

/// A report written by `exec`, decoded, as JSON text.
fn report_text(out: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(out.join(format!("{name}.report"))).unwrap();
    match name {
        "reduce" => {
            serde_json::to_string(&repromin::gate::certificate::decode(&text).unwrap()).unwrap()
        }
        "mutants" => {
            serde_json::to_string(&repromin::gate::mutants::decode(&text).unwrap()).unwrap()
        }
        side => {
            serde_json::to_string(&repromin::gate::encode::decode(&text, side, usize::MAX).unwrap())
                .unwrap()
        }
    }
}

#[test]
fn a_test_linked_to_an_absolute_path_is_an_error_on_every_side_and_in_the_judge() {
    let (repo, base) = python_base();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.py");
    std::fs::write(&target, OUTSIDE_TEST).unwrap();
    let head = commit_link(&repo, "tests/test_x.py", &target, &[]);
    let repo_path = repo.path().display().to_string();
    let out = tempfile::tempdir().unwrap();
    let out_path = out.path().display().to_string();
    let exec = |side: &str, extra: &[&str]| {
        let mut args = vec![
            "exec", "--side", side, "--out", &out_path, "--base", &base, "--head", &head, "--repo",
            &repo_path,
        ];
        args.extend_from_slice(extra);
        let o = run(&args, repo.path());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), "");
    };
    let says_link = |text: &str| {
        text.contains("`tests/test_x.py` is a symbolic link to")
            && text.contains(&target.display().to_string())
    };
    exec("base", &[]);
    exec("head", &[]);
    exec("mutants", &[]);
    let base_report = out.path().join("base.report").display().to_string();
    exec("reduce", &["--base-report", &base_report]);
    for name in ["base", "base-rerun", "head", "mutants", "reduce"] {
        let text = report_text(out.path(), name);
        assert!(says_link(&text), "{name}: {text}");
    }
    let report = |n: &str| out.path().join(format!("{n}.report")).display().to_string();
    let (b, r, h, d) = (
        report("base"),
        report("base-rerun"),
        report("head"),
        report("reduce"),
    );
    let o = run(
        &[
            "judge",
            "--base-report",
            &b,
            "--base-rerun-report",
            &r,
            "--head-report",
            &h,
            "--reduce-report",
            &d,
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &repo_path,
        ],
        repo.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let judged = line(&stdout(&o));
    assert_eq!(judged["verdict"], "error", "{judged}");
    assert!(says_link(judged["error"].as_str().unwrap()), "{judged}");

    // `run`, every side and the judge in one process, reduce side included.
    let o = run(
        &[
            "run", "--base", &base, "--head", &head, "--repo", &repo_path,
        ],
        repo.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ran = line(&stdout(&o));
    assert_eq!(ran["verdict"], "error", "{ran}");
    assert!(says_link(ran["error"].as_str().unwrap()), "{ran}");
}

#[test]
fn a_carried_file_that_leaves_through_a_relative_chain_of_links_is_an_error() {
    let (repo, base) = python_base();
    let outside = tempfile::tempdir_in(repo.path().parent().unwrap()).unwrap();
    std::fs::write(
        outside.path().join("conftest.py"),
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
    )
    .unwrap();
    // `lib` goes up and out by `..`; the carried conftest reaches it through `lib`.
    let out_name = outside.path().file_name().unwrap().to_str().unwrap();
    let lib = Path::new("..").join(out_name);
    let full = repo.path().join("lib");
    std::os::unix::fs::symlink(&lib, &full).unwrap();
    let head = commit_link(
        &repo,
        "tests/conftest.py",
        Path::new("../lib/conftest.py"),
        &[(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )],
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "error", "{line}\n{table}");
    let error = line["error"].as_str().unwrap();
    assert!(
        error.contains("`tests/conftest.py` is a symbolic link to `../lib/conftest.py`"),
        "{error}"
    );
}

#[test]
fn a_test_linked_inside_the_tree_still_reproduces() {
    let (repo, base) = python_base();
    let head = commit_link(
        &repo,
        "tests/test_x.py",
        Path::new("impl/x.py"),
        &[("tests/impl/x.py", OUTSIDE_TEST)],
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "reproduced", "{line}\n{table}");
}

#[test]
fn a_test_that_leaves_the_tree_only_on_the_merge_base_is_an_error() {
    let (repo, _) = python_base();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.py"), OUTSIDE_TEST).unwrap();
    // On the merge base `lib` links out of the tree; the pull request makes it a directory.
    std::os::unix::fs::symlink(outside.path(), repo.path().join("lib")).unwrap();
    let base = repo.commit(&[], "lib links out");
    std::fs::remove_file(repo.path().join("lib")).unwrap();
    let head = commit_link(
        &repo,
        "tests/test_x.py",
        Path::new("../lib/x.py"),
        &[("lib/x.py", OUTSIDE_TEST)],
    );
    let (line, table) = gate_run(&repo, &base, &head, &[]);
    assert_eq!(line["verdict"], "error", "{line}\n{table}");
    let error = line["error"].as_str().unwrap();
    assert!(
        error.contains("`tests/test_x.py` is a symbolic link to `../lib/x.py`")
            && error.contains("on the merge base"),
        "{error}"
    );
}

//! The check run and the sticky comment that `judge --feedback-dir` (and `run`) writes for
//! the fork-safe judge workflow to post: real pytest runs on real git repositories, the
//! payloads snapshot-tested.

use serde_json::Value;

use crate::util::{GitRepo, PYTEST_CONFIG, run, stderr};

const CONFTEST: &str =
    "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n";

/// Runs `repromin ARGS --base B --head H --repo R --feedback-dir DIR [EXTRA]` in the
/// repository; returns the command's output and DIR (kept with the temp directory).
fn with_feedback(
    repo: &GitRepo,
    args: &[&str],
    base: &str,
    head: &str,
    extra: &[&str],
) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("feedback");
    std::fs::create_dir(&out_dir).unwrap();
    let path = repo.path().display().to_string();
    let out_arg = out_dir.display().to_string();
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--base", base, "--head", head, "--repo", &path]);
    argv.extend(["--feedback-dir", &out_arg]);
    argv.extend(extra);
    (run(&argv, repo.path()), dir)
}

/// A payload written into [`with_feedback`]'s directory, parsed and as text.
fn payload(dir: &tempfile::TempDir, name: &str) -> (Value, String) {
    let text = std::fs::read_to_string(dir.path().join("feedback").join(name)).unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

/// Runs the gate (no reduce side) with `--feedback-dir`; returns the two payloads.
fn feedback(repo: &GitRepo, base: &str, head: &str) -> (Value, Value, String) {
    let (o, dir) = with_feedback(
        repo,
        &["run", "--no-reduce"],
        base,
        head,
        &[
            "--details-url",
            "https://github.com/octo/calc/actions/runs/42",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (check, check_text) = payload(&dir, "check-run.json");
    let (comment, comment_text) = payload(&dir, "comment.json");
    insta::with_settings!({filters => vec![(r"[0-9a-f]{40}", "[sha]")]}, {
        insta::assert_snapshot!(format!("{check_text}\n{comment_text}"));
    });
    (check, comment, check_text)
}

#[test]
fn a_reproduced_fix_posts_a_successful_check_with_its_table_and_annotations() {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            ("tests/conftest.py", CONFTEST),
        ],
        "base",
    );
    let head = repo.commit(
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
            ),
        ],
        "fix",
    );
    let (check, comment, _) = feedback(&repo, &base, &head);
    assert_eq!(check["conclusion"], "success");
    assert_eq!(check["head_sha"], head.as_str());
    let annotations = check["output"]["annotations"].as_array().unwrap();
    let at: Vec<(&str, u64, &str)> = annotations
        .iter()
        .map(|a| {
            (
                a["path"].as_str().unwrap(),
                a["start_line"].as_u64().unwrap(),
                a["annotation_level"].as_str().unwrap(),
            )
        })
        .collect();
    // test_add (line 4) reproduces; test_zero (line 8) already passes without the fix.
    assert_eq!(
        at,
        [
            ("tests/test_calc.py", 8, "warning"),
            ("tests/test_calc.py", 4, "notice")
        ]
    );
    let body = comment["body"].as_str().unwrap();
    assert!(
        body.starts_with("<!-- repromin:sticky-comment -->\n"),
        "{body}"
    );
    assert!(body.contains("without the fix (expect fail)"), "{body}");
}

#[test]
fn annotations_are_capped_per_level_and_the_rest_counted_in_the_summary() {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("calc.py", "def add(a, b):\n    return a - b\n"),
            ("tests/conftest.py", CONFTEST),
        ],
        "base",
    );
    // Thirteen tests and no fix: each fails with the change as well as without it.
    let tests: String = (1..=13)
        .map(|i| {
            format!(
                "def test_t{i}():\n    from calc import add\n    assert add({i}, 1) == {}\n\n",
                i + 1
            )
        })
        .collect();
    let head = repo.commit(&[("tests/test_many.py", tests.as_str())], "tests only");
    let (o, dir) = with_feedback(&repo, &["run", "--no-reduce"], &base, &head, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (check, _) = payload(&dir, "check-run.json");
    assert_eq!(check["conclusion"], "failure");
    assert!(check.get("details_url").is_none());
    let annotations = check["output"]["annotations"].as_array().unwrap();
    assert_eq!(annotations.len(), 10);
    assert!(
        annotations
            .iter()
            .all(|a| a["annotation_level"] == "failure")
    );
    // test_t7 is defined on line 1 + 4 * 6.
    assert_eq!(annotations[6]["start_line"], 25);
    let summary = check["output"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("3 more failure annotations are not shown"),
        "{summary}"
    );
    let text = check["output"]["text"].as_str().unwrap();
    assert_eq!(text.matches("`test_t").count(), 13, "{text}");
}

#[test]
fn a_payload_is_never_written_through_a_symlink() {
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", PYTEST_CONFIG),
            ("calc.py", "x = 1\n"),
        ],
        "base",
    );
    let head = repo.commit(&[("calc.py", "x = 2\n")], "source only");
    // A payload's name is a link to a file outside: it must be left alone.
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    let (o, feedback) = with_feedback(
        &repo,
        &[
            "judge",
            "--base-report",
            "missing",
            "--head-report",
            "missing",
        ],
        &base,
        &head,
        &[],
    );
    let out_dir = feedback.path().join("feedback");
    // The first run wrote real payloads; the link replaces one before the second run.
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(out_dir.join("check-run.json")).unwrap();
    std::os::unix::fs::symlink(&victim, out_dir.join("check-run.json")).unwrap();
    let path = repo.path().display().to_string();
    let out_arg = out_dir.display().to_string();
    let o = run(
        &[
            "judge",
            "--base-report",
            "missing",
            "--head-report",
            "missing",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
            "--feedback-dir",
            &out_arg,
        ],
        repo.path(),
    );
    // The line is printed as ever; the warning names the file; the victim is untouched
    // and no payload is left where the link was.
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(crate::util::stdout(&o).starts_with("repromin/v1 "));
    assert!(
        stderr(&o).contains("cannot write the check run and comment"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("check-run.json"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(std::fs::symlink_metadata(out_dir.join("check-run.json")).is_err());
}

/// docs/ci.md ("What a maintainer sees") shows the comment of the snapshot above, rendered:
/// the two cannot drift apart.
#[test]
fn the_documented_example_is_the_snapshots_comment() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let snapshot =
        std::fs::read_to_string(root.join("tests/cli/snapshots/cli__feedback__feedback.snap"))
            .unwrap();
    // The snapshot's header, then the check run and the comment, one blank line apart.
    let payloads = snapshot.splitn(3, "---\n").nth(2).unwrap();
    let (_, comment) = payloads.trim().split_once("\n\n{").unwrap();
    let comment: Value = serde_json::from_str(&format!("{{{comment}")).unwrap();
    let docs = std::fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let shown = docs
        .split_once("<!-- example-comment:start -->\n")
        .and_then(|(_, rest)| rest.split_once("\n<!-- example-comment:end -->"))
        .map(|(shown, _)| shown)
        .unwrap();
    // Quoted in the docs, line by line.
    let unquoted: Vec<&str> = shown
        .lines()
        .map(|line| {
            line.strip_prefix("> ")
                .unwrap_or(line.trim_start_matches('>'))
        })
        .collect();
    assert_eq!(
        unquoted.join("\n"),
        comment["body"].as_str().unwrap().trim_end()
    );
}

/// The link a check run and a comment carry is an https:// URL; anything else is refused
/// before anything runs, not dropped silently.
#[test]
fn a_details_url_that_is_not_https_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "judge",
            "--base-report",
            "b",
            "--head-report",
            "h",
            "--base",
            "x",
            "--head",
            "y",
            "--feedback-dir",
            "fb",
            "--details-url",
            "http://ci.example/run/1",
        ],
        dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(repromin::exit_code::Exit::Usage as i32)
    );
    insta::assert_snapshot!(stderr(&o), @r"
    error: invalid value 'http://ci.example/run/1' for '--details-url <URL>': `http://ci.example/run/1` is not an https:// URL

    For more information, try '--help'.
    ");
    assert!(!dir.path().join("fb").exists());
}

//! The certificate of a bug that makes a test hang: on base the test file's run is stopped
//! at its time limit and reports no test, so the reduce side certifies the hang of the one
//! test that does not end alone.

use repromin::gate::certificate::{ReduceOutcome, decode};

use crate::certificate::{deleted_paths, line_of};
use crate::util::{GitRepo, PYTEST_CONFIG, run, stderr};

#[test]
fn a_test_that_hangs_on_base_is_certified_as_a_hang_of_that_test_alone() {
    // The test's file hangs on base after 6 s; its reruns after 2 s.
    let config = PYTEST_CONFIG.replace(
        "\"report\": \"junit\"",
        "\"report\": \"junit\",\n  \"timeouts\": {\"test\": 6},\n  \"flaky\": {\"hang_rerun_seconds\": 2}",
    );
    let repo = GitRepo::new();
    let base = repo.commit(
        &[
            (".github/repromin.json", config.as_str()),
            (
                "tests/conftest.py",
                "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n",
            ),
            ("words/__init__.py", ""),
            (
                "words/count.py",
                "def count(text):\n    while ' ' in text:\n        pass\n    return 1\n",
            ),
            ("words/unused.py", "def helper():\n    return 42\n"),
        ],
        "base",
    );
    // The first test in name order ends on base too; the second one hangs there.
    let head = repo.commit(
        &[
            (
                "words/count.py",
                "def count(text):\n    return len(text.split())\n",
            ),
            (
                "tests/test_count.py",
                "from words.count import count\n\n\ndef test_a_one_word():\n    assert count('ab') == 1\n\n\ndef test_b_two_words():\n    assert count('a b') == 2\n",
            ),
        ],
        "fix",
    );
    let path = repo.path().display().to_string();
    let scratch = tempfile::tempdir().unwrap();
    let reports = scratch.path().join("reports");
    let reports_path = reports.display().to_string();
    let o = run(
        &[
            "run",
            "--base",
            &base,
            "--head",
            &head,
            "--repo",
            &path,
            "--holdout-runs",
            "2",
            "--reports",
            &reports_path,
        ],
        repo.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let line = line_of(&o);
    assert_eq!(line["verdict"], "reproduced", "{line}");
    // Both tests reproduce (the file's base runs hung as a whole); the certificate is of the
    // one that hangs alone. Two holdout runs keep the test short, and the judge refuses
    // a plan that small (29 would be the least it accepts): every other check passed.
    assert_eq!(line["counts"]["reproduces"], 2, "{line}");
    assert_eq!(
        line["certificate"]["error"],
        "the holdout plan is unusable: 2 runs at rate 0.9 and confidence 0.95 cannot pass even if all pass",
        "{line}"
    );
    let text = std::fs::read_to_string(reports.join("reduce.report")).unwrap();
    let ReduceOutcome::Reduced(reduced) = decode(&text).unwrap().outcome else {
        panic!("{text}");
    };
    assert_eq!(reduced.name, "test_b_two_words", "{reduced:?}");
    // The failure kept is the hang, and the unrelated module went.
    assert!(
        format!("{:?}", reduced.signature).contains("failed to finish within"),
        "{reduced:?}"
    );
    let deleted = deleted_paths(&reduced.edits);
    assert!(deleted.contains(&"words/unused.py"), "{deleted:?}");
    assert_eq!(
        reduced.holdout.as_ref().map(|h| h.passes),
        Some(2),
        "{reduced:?}"
    );
}

//! Regressions elsewhere: with `regressions` in the configuration (or `--regressions`), both
//! sides also run the suite (every test file of the head matching the `tests` globs, or the
//! part of it that `regressions.tests` names), and the judge lists the tests outside the
//! selected files that pass on the merge base and fail on head. The verdict stays what the
//! selected tests call for, unless `regressions.error` makes a regression an `error`.

use std::collections::{HashMap, HashSet};

use globset::GlobSet;

use crate::gate::encode::{Outcome, Rerun, SideReport};
use crate::gate::flaky::{FileIndex, TestId};
use crate::gate::git::{GitError, Repo};
use crate::gate::line::{RegressionTest, Regressions, SideStatus};
use crate::gate::test_report::{Status, TestReport};

/// The test files of the suite at `head`: regular files that `suite` matches, in path order.
///
/// # Errors
/// git fails.
pub(crate) fn suite_files(
    repo: &Repo,
    head: &str,
    suite: &GlobSet,
) -> Result<Vec<String>, GitError> {
    let mut files: Vec<String> = repo
        .ls_tree(head)?
        .into_iter()
        .filter(|(path, mode)| matches!(mode.as_str(), "100644" | "100755") && suite.is_match(path))
        .map(|(path, _)| path)
        .collect();
    files.sort();
    Ok(files)
}

/// A suite run as a report carries it: the statuses of its tests, without messages.
pub(crate) fn suite_run(exit_code: Option<i32>, report: &TestReport) -> Rerun {
    Rerun {
        exit_code,
        report: report.statuses_only(|_| true, |_, _| true),
        limit_ms: None,
        duration_ms: None,
    }
}

/// The tests of files other than `selected` that passed in `base` and failed (or whose
/// file failed to load or crashed) in `head`, in base report order. Duplicate names pair by
/// occurrence.
pub(crate) fn compare(
    base: &TestReport,
    head: &TestReport,
    selected: &[String],
) -> Vec<RegressionTest> {
    let selected: HashSet<&str> = selected.iter().map(String::as_str).collect();
    // Each head file indexed once (a path listed twice: the first, as `status_in` reads).
    let mut head_files: HashMap<&str, FileIndex<'_>> = HashMap::new();
    for file in &head.files {
        head_files
            .entry(file.path.as_str())
            .or_insert_with(|| FileIndex::new(file));
    }
    let mut found = Vec::new();
    for file in base
        .files
        .iter()
        .filter(|f| !selected.contains(f.path.as_str()))
    {
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for test in &file.tests {
            let occurrence = seen.entry(test.name.as_str()).or_insert(0);
            let id = TestId {
                file: file.path.clone(),
                name: test.name.clone(),
                occurrence: *occurrence,
            };
            *occurrence += 1;
            if test.status != Status::Passed || file.crashed.is_some() {
                continue;
            }
            let status = head_files
                .get(id.file.as_str())
                .map_or(SideStatus::Absent, |f| f.status(&id.name, id.occurrence).0);
            if matches!(status, SideStatus::Failed | SideStatus::LoadError) {
                found.push(RegressionTest {
                    file: id.file,
                    name: id.name,
                });
            }
        }
    }
    found
}

/// Why the regressions cannot be judged; the text becomes the line's `error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RegressionsError {
    /// One side ran the suite and the other did not.
    #[error("the {ran} report has a run of the suite and the {missing} report has none")]
    OneSided {
        /// The side with a suite run.
        ran: &'static str,
        /// The side without one.
        missing: &'static str,
    },
    /// The configuration asks for regressions and no report has a suite run.
    #[error("the configuration asks for regressions, and neither report has a run of the suite")]
    NotRun,
}

/// The regressions of the `base` and `head` reports: `None` when neither ran the suite and
/// `asked` (the configuration's `regressions`) is false.
///
/// # Errors
/// Only one side ran the suite, or it was asked for and neither did.
pub(crate) fn judge(
    base: Option<&SideReport>,
    head: Option<&SideReport>,
    selected: &[String],
    asked: bool,
) -> Result<Option<Regressions>, RegressionsError> {
    fn suite(report: Option<&SideReport>) -> Option<&Rerun> {
        report
            .filter(|r| matches!(r.outcome, Outcome::Report { .. }))
            .and_then(|r| r.suite.as_ref())
    }
    match (suite(base), suite(head)) {
        (Some(base), Some(head)) => {
            let tests = compare(&base.report, &head.report, selected);
            Ok(Some(Regressions {
                count: u64::try_from(tests.len()).unwrap_or(u64::MAX),
                tests,
            }))
        }
        (Some(_), None) => Err(RegressionsError::OneSided {
            ran: "base",
            missing: "head",
        }),
        (None, Some(_)) => Err(RegressionsError::OneSided {
            ran: "head",
            missing: "base",
        }),
        (None, None) if asked => Err(RegressionsError::NotRun),
        (None, None) => Ok(None),
    }
}

/// The `error` of a line whose regressions make the verdict an error.
pub(crate) fn as_error(regressions: &Regressions) -> String {
    let names: Vec<String> = regressions
        .tests
        .iter()
        .take(3)
        .map(|t| format!("{}::{}", t.file, t.name))
        .collect();
    let more = if regressions.tests.len() > 3 {
        ", …"
    } else {
        ""
    };
    format!(
        "{} {} on the merge base and {} on head: {}{more}",
        regressions.count,
        if regressions.count == 1 {
            "test passes"
        } else {
            "tests pass"
        },
        if regressions.count == 1 {
            "fails"
        } else {
            "fail"
        },
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(tests: &[(&str, &str, Status)]) -> TestReport {
        let rows: Vec<(&str, &str, Status, &str)> =
            tests.iter().map(|(f, n, s)| (*f, *n, *s, "")).collect();
        crate::gate::test_report::report_of(&rows)
    }

    use Status::{Failed, Passed, Skipped};

    #[test]
    fn a_regression_passes_on_base_and_fails_on_head_outside_the_selected_files() {
        let base = report(&[
            ("tests/test_a.py", "broken", Passed),
            ("tests/test_a.py", "fine", Passed),
            ("tests/test_a.py", "was_failing", Failed),
            ("tests/test_a.py", "skipped_now", Passed),
            ("tests/test_a.py", "gone", Passed),
            ("tests/test_new.py", "selected", Passed),
            ("tests/test_b.py", "t", Passed),
            ("tests/test_b.py", "t", Passed),
        ]);
        let mut head = report(&[
            ("tests/test_a.py", "broken", Failed),
            ("tests/test_a.py", "fine", Passed),
            ("tests/test_a.py", "was_failing", Failed),
            ("tests/test_a.py", "skipped_now", Skipped),
            ("tests/test_new.py", "selected", Failed),
            ("tests/test_b.py", "t", Passed),
            ("tests/test_b.py", "t", Failed),
        ]);
        let found = compare(&base, &head, &["tests/test_new.py".to_string()]);
        let names: Vec<String> = found
            .iter()
            .map(|t| format!("{}::{}", t.file, t.name))
            .collect();
        assert_eq!(names, ["tests/test_a.py::broken", "tests/test_b.py::t"]);
        // A file that no longer loads at head breaks every test of it that passed.
        head.files[0].load_error = Some("ImportError".into());
        assert_eq!(compare(&base, &head, &[]).len(), 6);
        let regressions = Regressions {
            count: 2,
            tests: found,
        };
        assert_eq!(
            as_error(&regressions),
            "2 tests pass on the merge base and fail on head: tests/test_a.py::broken, tests/test_b.py::t"
        );
    }

    fn side(name: &str, suite: Option<Rerun>) -> SideReport {
        SideReport {
            v: crate::gate::encode::VERSION,
            side: name.into(),
            commit: "a".repeat(40),
            outcome: Outcome::Report {
                exit_code: Some(0),
                report: TestReport::default(),
            },
            reruns: Vec::new(),
            suite,
        }
    }

    #[test]
    fn both_sides_must_have_run_the_suite() {
        let run = || Some(suite_run(Some(0), &report(&[("t.py", "x", Passed)])));
        let (with, without) = (side("base", run()), side("head", None));
        assert_eq!(
            judge(Some(&with), Some(&without), &[], false),
            Err(RegressionsError::OneSided {
                ran: "base",
                missing: "head"
            })
        );
        assert_eq!(judge(Some(&without), Some(&without), &[], false), Ok(None));
        assert_eq!(
            judge(Some(&without), Some(&without), &[], true),
            Err(RegressionsError::NotRun)
        );
        let head = side("head", run());
        assert_eq!(
            judge(Some(&with), Some(&head), &[], false),
            Ok(Some(Regressions {
                count: 0,
                tests: vec![]
            }))
        );
    }
}

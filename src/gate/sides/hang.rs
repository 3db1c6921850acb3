//! A hang on base, for the reduce side: a test file whose base run was stopped at its time
//! limit reported no test at all, so no test "failed" there for the side to pick. When
//! the head side ran that file and its tests passed, the reduce side certifies the hang:
//! it finds the test whose run alone does not end (where the runner selects tests by id),
//! and reduces the tree so that this test still runs past a limit taught by the head's
//! runs of the file.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::gate::encode::{Outcome, SideReport};
use crate::gate::plan::Plan;
use crate::gate::test_report::Status;
use crate::runner::{CommandSpec, Confinement};

use super::error::SideError;

/// The shortest hang limit, as a plain reduction's derived timeout: far above the start of
/// a test runner, even on a loaded machine.
const HANG_FLOOR: Duration = Duration::from_secs(10);

/// The test files of `plan` whose run on base was stopped at their time limit, each with
/// the names of its tests that passed on head, in name order; the files in path order.
/// None without a head report, which alone names a hung file's tests.
pub(crate) fn pick_hang(
    plan: &Plan,
    base: &SideReport,
    head: Option<&SideReport>,
) -> Vec<(String, Vec<String>)> {
    let Outcome::Report { report, .. } = &base.outcome else {
        return Vec::new();
    };
    let Some(Outcome::Report { report: head, .. }) = head.map(|h| &h.outcome) else {
        return Vec::new();
    };
    let mut hung: Vec<&str> = report
        .files
        .iter()
        .filter(|f| plan.tests.contains(&f.path))
        .filter(|f| f.crashed.as_deref().is_some_and(is_time_limit))
        .map(|f| f.path.as_str())
        .collect();
    hung.sort_unstable();
    hung.into_iter()
        .filter_map(|path| {
            let mut names: Vec<String> = head
                .files
                .iter()
                .filter(|f| f.path == path && f.crashed.is_none() && f.load_error.is_none())
                .flat_map(|f| &f.tests)
                .filter(|t| t.status == Status::Passed)
                .map(|t| t.name.clone())
                .collect();
            names.sort();
            names.dedup();
            (!names.is_empty()).then(|| (path.to_string(), names))
        })
        .collect()
}

/// Whether a crash is the side's time limit (`timed out after …`), not a signal.
fn is_time_limit(how: &str) -> bool {
    how.starts_with("timed out")
}

/// The limit past which a run of the hung file counts as hanging: three times the longest
/// rerun on head (the head side reruns a file that hung on base; each rerun ran it and
/// passed), at most `ceiling` (the gate's `hang_rerun_seconds`, the limit its own reruns
/// of a hung file ran under) and at least 10 s, which wins: a run that only started slowly
/// on a loaded machine must not pass for a hang, or the reduction would keep a cut that
/// broke the test.
pub(crate) fn hang_limit(head: Option<&SideReport>, ceiling: Duration) -> Duration {
    let longest = head
        .into_iter()
        .flat_map(|h| &h.reruns)
        .filter_map(|r| r.duration_ms)
        .max()
        .map_or(Duration::ZERO, Duration::from_millis);
    (longest * 3).min(ceiling).max(HANG_FLOOR)
}

/// Which of `names` (in order) hangs alone on the prepared tree `dir`: the first whose
/// hang check (`check`, the oracle's command with `--name` still to come) fails. Where
/// the runner cannot select a test by id the check runs the whole file, so the first name
/// stands for it without a probe. `None` when no test hangs alone.
///
/// # Errors
/// A check could not be started.
pub(crate) fn find_hanging(
    check: &[String],
    names: &[String],
    by_id: bool,
    dirs: (&Path, &Path),
    limit: Duration,
    confinement: Option<&dyn Confinement>,
    interrupt: &AtomicBool,
) -> Result<Option<String>, SideError> {
    if !by_id {
        return Ok(names.first().cloned());
    }
    let (dir, tmp) = dirs;
    for name in names {
        std::fs::create_dir_all(tmp)?;
        let spec = CommandSpec {
            argv: naming(check, name),
            env: Vec::new(),
            memory: None,
        };
        // check-test stops the test at the limit; the margin is for its own start and end.
        let outcome =
            crate::runner::run_confined(&spec, dir, tmp, limit * 2, interrupt, confinement, None)?;
        if outcome.termination == crate::runner::Termination::Exited(1) {
            return Ok(Some(name.clone()));
        }
        if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    Ok(None)
}

/// The check-test command `check` for the test `name`: `--name NAME` before the `--` that
/// the command template follows.
pub(crate) fn naming(check: &[String], name: &str) -> Vec<String> {
    let mut argv = check.to_vec();
    let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    argv.splice(at..at, ["--name".to_string(), name.to_string()]);
    argv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::encode::Rerun;
    use crate::gate::test_report::{FileResult, TestCase, TestReport};

    fn file(path: &str, crashed: Option<&str>, tests: &[(&str, Status)]) -> FileResult {
        FileResult {
            path: path.into(),
            load_error: None,
            crashed: crashed.map(Into::into),
            tests: tests
                .iter()
                .map(|(name, status)| TestCase {
                    name: (*name).into(),
                    status: *status,
                    messages: Vec::new(),
                    error_type: None,
                })
                .collect(),
        }
    }

    fn side(side: &str, files: Vec<FileResult>, reruns: &[u64]) -> SideReport {
        SideReport {
            v: 1,
            side: side.into(),
            commit: "c".repeat(40),
            outcome: Outcome::Report {
                exit_code: None,
                report: TestReport { files },
            },
            reruns: reruns
                .iter()
                .map(|ms| Rerun {
                    exit_code: Some(0),
                    report: TestReport::default(),
                    limit_ms: Some(60_000),
                    duration_ms: Some(*ms),
                })
                .collect(),
            suite: None,
        }
    }

    fn plan(tests: &[&str]) -> Plan {
        Plan {
            tests: tests.iter().map(|t| (*t).to_string()).collect(),
            carry: Vec::new(),
            deleted_tests: Vec::new(),
            overlay_removals: Vec::new(),
            mutations: Vec::new(),
            source: Vec::new(),
            config_edited: false,
            data: Vec::new(),
            selected_by_data: false,
        }
    }

    #[test]
    fn a_file_stopped_at_the_time_limit_on_base_gives_its_tests_that_passed_on_head() {
        use Status::{Failed, Passed};
        let base = side(
            "base",
            vec![
                file("z_test.go", Some("timed out after 300 s"), &[]),
                file("p/a_test.go", Some("timed out after 300 s"), &[]),
                file("b_test.go", Some("killed by signal 9"), &[]),
            ],
            &[],
        );
        let head = side(
            "head",
            vec![
                file("z_test.go", None, &[("TestZ", Passed)]),
                file(
                    "p/a_test.go",
                    None,
                    &[("TestC", Passed), ("TestA", Passed), ("TestB", Failed)],
                ),
                file("b_test.go", None, &[("TestS", Passed)]),
            ],
            &[],
        );
        let all = plan(&["z_test.go", "p/a_test.go", "b_test.go"]);
        assert_eq!(
            pick_hang(&all, &base, Some(&head)),
            vec![
                ("p/a_test.go".into(), vec!["TestA".into(), "TestC".into()]),
                ("z_test.go".into(), vec!["TestZ".into()]),
            ]
        );
        // A file outside the plan, a crash that is a signal, no head report: nothing.
        assert_eq!(
            pick_hang(&plan(&["z_test.go"]), &base, Some(&head)),
            vec![("z_test.go".into(), vec!["TestZ".into()])]
        );
        assert_eq!(pick_hang(&plan(&["b_test.go"]), &base, Some(&head)), vec![]);
        assert_eq!(pick_hang(&all, &base, None), vec![]);
        // A file whose tests all failed on head gives nothing.
        let failed = side(
            "head",
            vec![file("p/a_test.go", None, &[("TestA", Failed)])],
            &[],
        );
        assert_eq!(
            pick_hang(&plan(&["p/a_test.go"]), &base, Some(&failed)),
            vec![]
        );
    }

    #[test]
    fn the_test_is_named_before_the_command_template() {
        let check: Vec<String> = [
            "repromin",
            "check-test",
            "--file",
            "f",
            "--",
            "pytest --name x",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            naming(&check, "t"),
            [
                "repromin",
                "check-test",
                "--file",
                "f",
                "--name",
                "t",
                "--",
                "pytest --name x"
            ]
        );
    }

    #[test]
    fn the_hang_limit_is_three_times_the_longest_head_rerun_within_its_bounds() {
        let minute = Duration::from_secs(60);
        let head = |ms: &[u64]| side("head", Vec::new(), ms);
        assert_eq!(
            hang_limit(Some(&head(&[1_000, 7_000, 2_000])), minute),
            Duration::from_secs(21)
        );
        assert_eq!(hang_limit(Some(&head(&[500])), minute), HANG_FLOOR);
        assert_eq!(hang_limit(Some(&head(&[])), minute), HANG_FLOOR);
        assert_eq!(hang_limit(None, minute), HANG_FLOOR);
        assert_eq!(hang_limit(Some(&head(&[40_000])), minute), minute);
        // The floor wins over a shorter limit of the gate's own reruns.
        assert_eq!(
            hang_limit(Some(&head(&[500])), Duration::from_secs(2)),
            HANG_FLOOR
        );
        assert_eq!(
            hang_limit(Some(&head(&[4_000])), Duration::from_secs(11)),
            Duration::from_secs(11)
        );
    }
}

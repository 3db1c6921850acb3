//! Classification: each selected test, its status on base, base-rerun and head, its class,
//! and the verdict.
//!
//! The direction rule governs everything here: every ambiguous, missing or malformed input
//! classifies away from `reproduced`. A test reproduces only when it passed on head and
//! failed on both base runs for a reason other than a missing symbol; a failure on head is
//! never proof; a skipped or absent test proves nothing; a report that does not show the
//! selected tests running is an error, not a pass.

use std::collections::{HashMap, HashSet};

use crate::gate::encode::{DecodeError, Outcome, Rerun, SideReport};
use crate::gate::flaky::{self, Decision, FileIndex, TestId};
use crate::gate::line::{Counts, Runs};
pub(crate) use crate::gate::line::{SideStatus, TestClass, Verdict};
pub(crate) use crate::gate::test_report::names_missing_symbol;
use crate::gate::test_report::{Status, TestReport};

/// One classified test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Test file.
    pub file: String,
    /// Full name.
    pub name: String,
    /// Class.
    pub class: TestClass,
    /// Base status.
    pub base: SideStatus,
    /// Base rerun status.
    pub rerun: SideStatus,
    /// Head status.
    pub head: SideStatus,
    /// The base failure message, if any (for the readable table).
    pub base_message: Option<String>,
    /// The runs of a `flaky` test.
    pub runs: Option<Runs>,
    /// The runs of a test that reproduces, for the tables (the line does not carry them).
    pub evidence: Option<Runs>,
}

impl Row {
    /// The row as the line carries it.
    pub fn to_line(&self) -> crate::gate::line::TestLine {
        crate::gate::line::TestLine {
            file: self.file.clone(),
            name: self.name.clone(),
            class: self.class,
            base: self.base,
            rerun: self.rerun,
            head: self.head,
            runs: self.runs,
        }
    }
}

/// The result of classification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classified {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, for an error verdict.
    pub error: Option<String>,
    /// Every test on head, classified.
    pub rows: Vec<Row>,
    /// Selected files no head report listed.
    pub not_collected: Vec<String>,
}

/// A side as the judge received it: decoded, or unreadable with a reason.
pub(crate) type SideInput = Result<SideReport, SideInputError>;

/// Why the judge has no usable report of a side. Every one classifies as an
/// error verdict, its text the line's `error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SideInputError {
    /// No report file was given for the side.
    #[error("no {side} report was given")]
    Missing {
        /// Which side.
        side: String,
    },
    /// The report file could not be opened or read, or is not a regular file.
    #[error("{message}")]
    Unreadable {
        /// What went wrong, naming the side and the file.
        message: String,
    },
    /// The report is over its cap or does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The report is for another commit than the one it stands for.
    #[error("the {side} report is for commit {commit}, not {expected}")]
    WrongCommit {
        /// The side the report names.
        side: String,
        /// The commit the report names.
        commit: String,
        /// The commit the judge expected.
        expected: String,
    },
}

fn error(message: String, rows: Vec<Row>, not_collected: Vec<String>) -> Classified {
    Classified {
        verdict: Verdict::Error,
        error: Some(message),
        rows,
        not_collected,
    }
}

/// Why a side's report cannot be classified; its text becomes the line's `error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnusableSide {
    /// The report could not be read or decoded.
    #[error(transparent)]
    Input(#[from] SideInputError),
    /// The side wrote an error marker.
    #[error("{side}: {message}")]
    Marker {
        /// Which side.
        side: String,
        /// The marker's message.
        message: String,
    },
    /// The side was skipped.
    #[error("{side} was skipped: {reason}")]
    Skipped {
        /// Which side.
        side: String,
        /// Why.
        reason: String,
    },
    /// The report lists a selected file twice.
    #[error("the {side} report lists `{file}` twice")]
    DuplicateFile {
        /// Which side.
        side: String,
        /// The file listed twice.
        file: String,
    },
    /// The report holds none of the selected files.
    #[error("the {side} report holds none of the selected test files")]
    NoSelectedFile {
        /// Which side.
        side: String,
    },
    /// The report shows no selected test running.
    #[error("the {side} report shows no selected test running")]
    NothingRan {
        /// Which side.
        side: String,
    },
    /// The base report carries reruns (they belong in the base-rerun report).
    #[error("the {side} report carries reruns, which only the base-rerun and head reports may")]
    UnexpectedReruns {
        /// Which side.
        side: String,
    },
    /// The command failed, yet its report shows no failure.
    #[error("the {side} test command {how} but its report shows no failure")]
    FailedWithoutFailure {
        /// Which side.
        side: String,
        /// `exited N` or `was killed`.
        how: String,
    },
}

/// The selected files of a report, each indexed by test name, refusing a file listed twice.
fn selected_files<'a>(
    report: &'a TestReport,
    selected: &HashSet<&str>,
    side: &str,
) -> Result<HashMap<&'a str, FileIndex<'a>>, UnusableSide> {
    let mut files = HashMap::new();
    for file in &report.files {
        if !selected.contains(file.path.as_str()) {
            continue;
        }
        if files
            .insert(file.path.as_str(), FileIndex::new(file))
            .is_some()
        {
            return Err(UnusableSide::DuplicateFile {
                side: side.to_string(),
                file: file.path.clone(),
            });
        }
    }
    Ok(files)
}

/// Checks a side and returns its selected files.
fn usable<'a>(
    input: &'a SideInput,
    name: &str,
    selected: &HashSet<&str>,
) -> Result<HashMap<&'a str, FileIndex<'a>>, UnusableSide> {
    let side = || name.to_string();
    let report = match input {
        Err(reason) => return Err(reason.clone().into()),
        Ok(side) => side,
    };
    let (exit_code, report) = match &report.outcome {
        Outcome::Error { message, .. } => {
            return Err(UnusableSide::Marker {
                side: side(),
                message: message.clone(),
            });
        }
        Outcome::Skipped { reason } => {
            return Err(UnusableSide::Skipped {
                side: side(),
                reason: reason.clone(),
            });
        }
        Outcome::Report { exit_code, report } => (exit_code, report),
    };
    let files = selected_files(report, selected, name)?;
    if files.is_empty() {
        return Err(UnusableSide::NoSelectedFile { side: side() });
    }
    let failed = files.values().map(|f| f.file).any(|f| {
        f.load_error.is_some()
            || f.crashed.is_some()
            || f.tests.iter().any(|t| t.status == Status::Failed)
    });
    let ran = files
        .values()
        .map(|f| f.file)
        .any(|f| f.load_error.is_some() || f.crashed.is_some() || !f.tests.is_empty());
    if !ran {
        return Err(UnusableSide::NothingRan { side: side() });
    }
    if *exit_code != Some(0) && !failed {
        let how = exit_code.map_or_else(|| "was killed".to_string(), |c| format!("exited {c}"));
        return Err(UnusableSide::FailedWithoutFailure { side: side(), how });
    }
    Ok(files)
}

fn status_of(
    files: &HashMap<&str, FileIndex<'_>>,
    file: &str,
    name: &str,
    occurrence: usize,
) -> (SideStatus, Option<String>) {
    match files.get(file) {
        None => (SideStatus::Absent, None),
        Some(index) => {
            let (status, message) = index.status(name, occurrence);
            let message = match (index.file.crashed.as_ref(), message) {
                // The file's run ended without a report: every test of it failed there.
                (Some(how), _) => Some(format!("the run {how}")),
                (None, message) => message.map(str::to_string),
            };
            (status, message)
        }
    }
}

/// The reruns a side's report carries, when it is usable.
fn reruns_of(input: &SideInput) -> &[Rerun] {
    input
        .as_ref()
        .map_or(&[], |report| report.reruns.as_slice())
}

/// For tests selected by changed data files: keeps only the rows whose test id names one
/// of `data` (its file name or its file name without extension, as parametrised ids do),
/// when any does, and judges those alone. An error stays an error.
pub(crate) fn narrow_to_data(classified: &mut Classified, data: &[String]) {
    if classified.verdict == Verdict::Error {
        return;
    }
    let names: Vec<&str> = data
        .iter()
        .flat_map(|d| {
            let name = d.rsplit('/').next().unwrap_or(d);
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            [name, stem]
        })
        .filter(|n| !n.is_empty())
        .collect();
    let named = |row: &Row| names.iter().any(|n| row.name.contains(n));
    if classified.rows.iter().any(named) {
        classified.rows.retain(named);
        classified.verdict =
            Counts::tally(classified.rows.iter().map(|r| r.class)).implied_verdict();
    }
}

/// Classifies the selected tests from the three sides; `error_rate` is the configured
/// error rate of the reruns' test (`flaky.error_rate`).
pub(crate) fn classify(
    selected: &[String],
    base: &SideInput,
    rerun: &SideInput,
    head: &SideInput,
    error_rate: f64,
) -> Classified {
    if selected.is_empty() {
        return Classified {
            verdict: Verdict::NoTests,
            error: None,
            rows: Vec::new(),
            not_collected: Vec::new(),
        };
    }
    let selected_set: HashSet<&str> = selected.iter().map(String::as_str).collect();
    let selected_set = &selected_set;
    let head_files = match usable(head, "head", selected_set) {
        Ok(files) => files,
        Err(reason) => return error(reason.to_string(), Vec::new(), Vec::new()),
    };
    let not_collected: Vec<String> = selected
        .iter()
        .filter(|s| !head_files.contains_key(s.as_str()))
        .cloned()
        .collect();
    let base_files = match base {
        Ok(report) if !report.reruns.is_empty() => Err(UnusableSide::UnexpectedReruns {
            side: "base".into(),
        }),
        _ => usable(base, "base", selected_set),
    };
    let rerun_files = usable(rerun, "base-rerun", selected_set);
    let empty = HashMap::new();
    // Sized once: growing by doubling would hold the old and the new buffer at once.
    let tests: usize = selected
        .iter()
        .filter_map(|file| head_files.get(file.as_str()))
        .map(|f| f.file.tests.len())
        .sum();
    let mut rows = Vec::with_capacity(tests);
    let mut ids = Vec::with_capacity(tests);
    for file in selected {
        let Some(result) = head_files.get(file.as_str()).map(|f| f.file) else {
            continue;
        };
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for test in &result.tests {
            let occurrence = seen.entry(test.name.as_str()).or_insert(0);
            let k = *occurrence;
            *occurrence += 1;
            let (b, b_msg) = status_of(base_files.as_ref().unwrap_or(&empty), file, &test.name, k);
            let (r, r_msg) = status_of(rerun_files.as_ref().unwrap_or(&empty), file, &test.name, k);
            let h = match test.status {
                Status::Passed => SideStatus::Passed,
                Status::Failed => SideStatus::Failed,
                Status::Skipped => SideStatus::Skipped,
            };
            let missing = |s: SideStatus, m: &Option<String>| {
                s == SideStatus::LoadError
                    || (s == SideStatus::Failed && m.as_deref().is_some_and(names_missing_symbol))
            };
            let class = match h {
                SideStatus::Failed => TestClass::FailsOnHead,
                SideStatus::Passed => {
                    if missing(b, &b_msg) || (b == SideStatus::Failed && missing(r, &r_msg)) {
                        TestClass::NewApi
                    } else if b == SideStatus::Failed && r == SideStatus::Failed {
                        // Decided below, from the reruns, once the candidates are counted.
                        TestClass::Reproduces
                    } else if [(b, r), (r, b)].contains(&(SideStatus::Failed, SideStatus::Passed)) {
                        TestClass::Flaky
                    } else if b == SideStatus::Passed || r == SideStatus::Passed {
                        TestClass::PassesOnBase
                    } else {
                        TestClass::NotRun
                    }
                }
                _ => TestClass::NotRun,
            };
            let runs = (class == TestClass::Flaky).then_some(Runs {
                base_failed: 1,
                base_runs: 2,
                head_passed: 1,
                head_runs: 1,
            });
            rows.push(Row {
                file: file.clone(),
                name: test.name.clone(),
                class,
                base: b,
                rerun: r,
                head: h,
                base_message: b_msg,
                runs,
                evidence: None,
            });
            ids.push(TestId {
                file: file.clone(),
                name: test.name.clone(),
                occurrence: k,
            });
        }
    }
    // The candidates reproduce only when their reruns rule out chance.
    let candidates: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].class == TestClass::Reproduces)
        .collect();
    let candidate_ids: Vec<&TestId> = candidates.iter().map(|&i| &ids[i]).collect();
    // A file whose two base runs both ended without a report failed its tests as one.
    let hung = |side: &Result<HashMap<&str, FileIndex<'_>>, UnusableSide>, file: &str| {
        side.as_ref()
            .is_ok_and(|files| files.get(file).is_some_and(|f| f.file.crashed.is_some()))
    };
    let hypotheses = flaky::hypotheses(candidate_ids.iter().copied(), |id| {
        hung(&base_files, &id.file) && hung(&rerun_files, &id.file)
    });
    let runs = flaky::runs_of_all(&candidate_ids, reruns_of(rerun), reruns_of(head));
    let mut ruled_out = HashMap::new();
    for (&i, runs) in candidates.iter().zip(runs) {
        let row = &mut rows[i];
        match flaky::decide_runs(runs, hypotheses, error_rate, &mut ruled_out) {
            Decision::Flaky(runs) => (row.class, row.runs) = (TestClass::Flaky, Some(runs)),
            Decision::Reproduces => row.evidence = Some(runs),
        }
    }
    // Errors that stand whatever the rows say.
    if let Some((file, how)) = selected.iter().find_map(|s| {
        let crashed = head_files.get(s.as_str())?.file.crashed.as_ref()?;
        Some((s, crashed))
    }) {
        return error(format!("`{file}` {how} on head"), rows, not_collected);
    }
    if let Some(file) = selected.iter().find(|s| {
        head_files
            .get(s.as_str())
            .is_some_and(|f| f.file.load_error.is_some())
    }) {
        return error(
            format!("`{file}` fails to load on head"),
            rows,
            not_collected,
        );
    }
    if !not_collected.is_empty() {
        return error(
            format!("`{}` is not in the head report", not_collected[0]),
            rows,
            not_collected,
        );
    }
    if let Err(reason) = &base_files {
        return error(reason.to_string(), rows, not_collected);
    }
    if let Err(reason) = &rerun_files {
        return error(reason.to_string(), rows, not_collected);
    }
    // Rows are never empty here: the head report shows a selected test running.
    let verdict = Counts::tally(rows.iter().map(|r| r.class)).implied_verdict();
    Classified {
        verdict,
        error: None,
        rows,
        not_collected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::encode::VERSION;
    use crate::gate::test_report::{FileResult, TestCase};

    fn missing(side: &str) -> SideInput {
        Err(SideInputError::Missing { side: side.into() })
    }

    fn side(name: &str, exit: i32, files: Vec<FileResult>) -> SideInput {
        Ok(SideReport {
            v: VERSION,
            side: name.into(),
            commit: "a".repeat(40),
            outcome: Outcome::Report {
                exit_code: Some(exit),
                report: TestReport { files },
            },
            reruns: Vec::new(),
            suite: None,
        })
    }

    /// `input` with `n` reruns of `files` added.
    fn with_reruns(input: SideInput, n: usize, files: &[FileResult]) -> SideInput {
        input.map(|mut report| {
            report.reruns = (0..n)
                .map(|_| Rerun {
                    exit_code: Some(1),
                    report: TestReport {
                        files: files.to_vec(),
                    },
                    limit_ms: None,
                    duration_ms: None,
                })
                .collect();
            report
        })
    }

    fn file(path: &str, tests: &[(&str, Status, &str)]) -> FileResult {
        FileResult {
            path: path.into(),
            load_error: None,
            crashed: None,
            tests: tests
                .iter()
                .map(|(n, s, m)| TestCase {
                    name: (*n).into(),
                    status: *s,
                    messages: if m.is_empty() {
                        vec![]
                    } else {
                        vec![(*m).into()]
                    },
                    error_type: None,
                })
                .collect(),
        }
    }

    const F: &str = "tests/test_a.py";
    use Status::{Failed, Passed, Skipped};

    fn selected() -> Vec<String> {
        vec![F.to_string()]
    }

    #[test]
    fn a_test_failing_on_both_base_runs_and_passing_on_head_reproduces() {
        let base = side(
            "base",
            1,
            vec![file(
                F,
                &[("t", Failed, "AssertionError: 1 != 2"), ("u", Passed, "")],
            )],
        );
        let rerun = side(
            "base-rerun",
            1,
            vec![file(
                F,
                &[("t", Failed, "AssertionError"), ("u", Passed, "")],
            )],
        );
        let head = side(
            "head",
            0,
            vec![file(F, &[("t", Passed, ""), ("u", Passed, "")])],
        );
        // Without reruns nothing rules out chance.
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Flaky);
        assert_eq!(c.rows[0].class, TestClass::Flaky);
        assert_eq!(
            c.rows[0].runs.map(|r| r.to_string()).as_deref(),
            Some("failed 2 of 2 on base, passed 1 of 1 on head")
        );
        assert_eq!(c.rows[1].class, TestClass::PassesOnBase);
        // Four reruns on each side that agree: 4^-4 <= 1 %.
        let failing = [file(F, &[("t", Failed, "")])];
        let passing = [file(F, &[("t", Passed, "")])];
        let rerun = with_reruns(rerun, 4, &failing);
        let head = with_reruns(head, 4, &passing);
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Reproduced);
        assert_eq!(c.rows[0].class, TestClass::Reproduces);
        assert_eq!(c.rows[0].runs, None);
        assert_eq!(c.rows[1].class, TestClass::PassesOnBase);
        // At a stricter error rate four are too few.
        let c = classify(&selected(), &base, &rerun, &head, 0.001);
        assert_eq!(c.verdict, Verdict::Flaky);
        // One head rerun that fails makes it flaky, with every run counted.
        let head = head.map(|mut report| {
            report.reruns[2].report.files = vec![file(F, &[("t", Failed, "x")])];
            report
        });
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Flaky);
        assert_eq!(
            c.rows[0].runs.map(|r| r.to_string()).as_deref(),
            Some("failed 6 of 6 on base, passed 4 of 5 on head")
        );
        // Reruns belong in the base-rerun and head reports, never in the base report.
        let base = with_reruns(base, 1, &failing);
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Error);
        assert!(c.error.unwrap().contains("the base report carries reruns"));
    }

    #[test]
    fn a_flake_on_the_rerun_is_flaky() {
        let base = side("base", 1, vec![file(F, &[("t", Failed, "boom")])]);
        let rerun = side("base-rerun", 0, vec![file(F, &[("t", Passed, "")])]);
        let head = side("head", 0, vec![file(F, &[("t", Passed, "")])]);
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Flaky);
        assert_eq!(c.rows[0].class, TestClass::Flaky);
        assert_eq!(
            c.rows[0].runs.map(|r| r.to_string()).as_deref(),
            Some("failed 1 of 2 on base, passed 1 of 1 on head")
        );
    }

    #[test]
    fn missing_symbols_and_load_errors_are_new_api() {
        let base = side(
            "base",
            1,
            vec![file(
                F,
                &[("t", Failed, "ImportError: cannot import name 'X'")],
            )],
        );
        let head = side("head", 0, vec![file(F, &[("t", Passed, "")])]);
        let c = classify(
            &selected(),
            &base,
            &base.clone().map(|mut s| {
                s.side = "base-rerun".into();
                s
            }),
            &head,
            0.01,
        );
        assert_eq!(c.verdict, Verdict::Unproven);
        let mut loading = file(F, &[]);
        loading.load_error = Some("error[E0425]: cannot find function `f`".into());
        let base = side("base", 101, vec![loading.clone()]);
        let rerun = side("base-rerun", 101, vec![loading]);
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Unproven);
        assert_eq!(c.rows[0].base, SideStatus::LoadError);
    }

    #[test]
    fn failing_or_skipped_on_head_is_never_proof() {
        let base = side(
            "base",
            1,
            vec![file(F, &[("t", Failed, "x"), ("u", Failed, "y")])],
        );
        let rerun = side(
            "base-rerun",
            1,
            vec![file(F, &[("t", Failed, "x"), ("u", Failed, "y")])],
        );
        let head = side(
            "head",
            1,
            vec![file(F, &[("t", Failed, "x"), ("u", Skipped, "")])],
        );
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Vacuous);
        assert_eq!(c.rows[0].class, TestClass::FailsOnHead);
        assert_eq!(c.rows[1].class, TestClass::NotRun);
    }

    #[test]
    fn duplicate_names_pair_by_occurrence() {
        let base = side(
            "base",
            1,
            vec![file(F, &[("t", Passed, ""), ("t", Failed, "x")])],
        );
        let rerun = side(
            "base-rerun",
            1,
            vec![file(F, &[("t", Passed, ""), ("t", Failed, "x")])],
        );
        let head = side(
            "head",
            0,
            vec![file(F, &[("t", Passed, ""), ("t", Passed, "")])],
        );
        // The reruns pair by occurrence too: the second `t` fails on base every time.
        let rerun = with_reruns(
            rerun,
            4,
            &[file(F, &[("t", Passed, ""), ("t", Failed, "")])],
        );
        let head = with_reruns(head, 4, &[file(F, &[("t", Failed, ""), ("t", Passed, "")])]);
        let c = classify(&selected(), &base, &rerun, &head, 0.01);
        assert_eq!(c.rows[0].class, TestClass::PassesOnBase);
        assert_eq!(c.rows[1].class, TestClass::Reproduces);
    }

    #[test]
    fn missing_malformed_or_contradictory_evidence_is_an_error() {
        let ok_base = side("base", 1, vec![file(F, &[("t", Failed, "x")])]);
        let ok_rerun = side("base-rerun", 1, vec![file(F, &[("t", Failed, "x")])]);
        let ok_head = side("head", 0, vec![file(F, &[("t", Passed, "")])]);
        let cases: Vec<(SideInput, SideInput, SideInput, &str)> = vec![
            (
                Err(SideInputError::Decode(DecodeError::Malformed {
                    side: "base".into(),
                    reason: "not base64".into(),
                })),
                ok_rerun.clone(),
                ok_head.clone(),
                "malformed",
            ),
            (
                ok_base.clone(),
                ok_rerun.clone(),
                side(
                    "head",
                    0,
                    vec![file("tests/other.py", &[("t", Passed, "")])],
                ),
                "none of the selected",
            ),
            (
                ok_base.clone(),
                ok_rerun.clone(),
                side("head", 3, vec![file(F, &[("t", Passed, "")])]),
                "exited 3 but its report shows no failure",
            ),
            (
                ok_base.clone(),
                ok_rerun.clone(),
                side("head", 0, vec![file(F, &[])]),
                "no selected test running",
            ),
            (
                ok_base.clone(),
                ok_rerun.clone(),
                side(
                    "head",
                    0,
                    vec![file(F, &[("t", Passed, "")]), file(F, &[("t", Passed, "")])],
                ),
                "twice",
            ),
            (
                ok_base.clone(),
                Ok(SideReport::error(
                    "base-rerun",
                    &"a".repeat(40),
                    "install failed",
                )),
                ok_head.clone(),
                "install failed",
            ),
        ];
        for (b, r, h, want) in cases {
            let c = classify(&selected(), &b, &r, &h, 0.01);
            assert_eq!(c.verdict, Verdict::Error, "{want}");
            assert!(
                c.error.as_deref().unwrap_or("").contains(want),
                "{want}: {:?}",
                c.error
            );
        }
    }

    #[test]
    fn a_selected_file_missing_from_head_is_an_error_even_if_another_reproduces() {
        let g = "tests/test_b.py";
        let sel = vec![F.to_string(), g.to_string()];
        let base = side("base", 1, vec![file(F, &[("t", Failed, "x")])]);
        let rerun = side("base-rerun", 1, vec![file(F, &[("t", Failed, "x")])]);
        let head = side("head", 0, vec![file(F, &[("t", Passed, "")])]);
        let c = classify(&sel, &base, &rerun, &head, 0.01);
        assert_eq!(c.verdict, Verdict::Error);
        assert_eq!(c.not_collected, [g]);
    }

    #[test]
    fn nothing_selected_is_no_tests() {
        let c = classify(
            &[],
            &missing("base"),
            &missing("base-rerun"),
            &missing("head"),
            0.01,
        );
        assert_eq!(c.verdict, Verdict::NoTests);
    }
}

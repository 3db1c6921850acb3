//! The judge: reads the sides' reports and git, runs no code of either commit, and makes
//! the [`Judgement`] behind one strict [`line`](crate::gate::line). Every problem is an
//! error verdict, never a failure of the judge.
//!
//! It reads each side's report file (a regular file of bounded size, never through a
//! symlink), checks that it is for the commit it claims, classifies the plan's tests, and
//! adds the certificate ([`certificate::verify`]) and the mutation check when they apply.

use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};

use crate::gate::certificate;
use crate::gate::classify::{self, Classified, Row, SideInput, SideInputError, Verdict};
use crate::gate::config::RepoConfig;
use crate::gate::encode::{self, Outcome, TEST_REPORT_CAP};
use crate::gate::git::{self, Repo};
use crate::gate::line;
use crate::gate::mutants::{self, MutantsReportError};
use crate::gate::plan;
use crate::gate::regressions;
use crate::gate::test_report::RunDetail;

/// What the judge reads.
#[derive(Clone, Debug)]
pub(crate) struct JudgeInput {
    /// The repository (for git only).
    pub repo: PathBuf,
    /// The merge base.
    pub base: String,
    /// The head.
    pub head: String,
    /// `base.report`.
    pub base_report: Option<PathBuf>,
    /// `base-rerun.report`.
    pub rerun_report: Option<PathBuf>,
    /// `head.report`.
    pub head_report: Option<PathBuf>,
    /// `reduce.report`, for the certificate.
    pub reduce_report: Option<PathBuf>,
    /// `mutants.report`, for a pull request of tests alone that adds or changes a spec.
    pub mutants_report: Option<PathBuf>,
    /// A trusted local configuration.
    pub local_config: Option<(RepoConfig, String)>,
}

/// The judge's result: the line and what it was made from.
#[derive(Clone, Debug)]
pub(crate) struct Judgement {
    /// The line's content.
    pub line: line::ResultLine,
    /// The classification behind it.
    pub classified: Classified,
    /// Where the configuration came from and, when detected, what was chosen and why.
    pub configuration: Option<String>,
    /// The failed commands behind the sides' error markers: the side and what it ran.
    pub failures: Vec<(String, RunDetail)>,
}

const ZERO_SHA: &str = "0000000000000000000000000000000000000000";

fn certificate_cap() -> usize {
    encode::REDUCE_REPORT_CAP
}

/// Why a side's report file could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReportFileError {
    /// It could not be opened (missing, unreadable).
    #[error("cannot read the {side} report `{}`", path.display())]
    Open {
        /// The side.
        side: String,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is a symbolic link, which is never followed.
    #[error(
        "the {side} report `{}` is a symbolic link; reports are read only from regular files, never through a link",
        path.display()
    )]
    Symlink {
        /// The side.
        side: String,
        /// The file.
        path: PathBuf,
    },
    /// It is a directory, FIFO, device or socket.
    #[error("the {side} report `{}` is a {kind}, not a regular file", path.display())]
    NotRegular {
        /// The side.
        side: String,
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: crate::safe_fs::FileKind,
    },
    /// It is larger than any report can be (an encoded report is ASCII: a character is
    /// a byte).
    #[error("the {side} report `{}` is {len} bytes, over the {cap}-character cap", path.display())]
    TooLarge {
        /// The side.
        side: String,
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// The cap.
        cap: u64,
    },
    /// Reading it failed or it is not UTF-8.
    #[error("the {side} report is malformed")]
    Malformed {
        /// The side.
        side: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Reads a report file of at most `cap` characters (plus a newline): a regular file, never
/// through a symlink, never waiting on a FIFO.
fn read_bounded(path: &Path, cap: usize, side: &str) -> Result<String, ReportFileError> {
    use crate::safe_fs::SafeFsError;
    // Two bytes over the cap (one trailing newline is allowed) are enough to tell that a
    // file is too large; its size is then read for the message.
    let limit = cap as u64 + 2;
    let (side, path) = (side.to_string(), path.to_path_buf());
    let text = match crate::safe_fs::read_prefix_to_string(&path, limit) {
        Ok(text) => text,
        Err(err) => {
            return Err(match err {
                SafeFsError::NotFound { source, .. } | SafeFsError::Open { source, .. } => {
                    ReportFileError::Open { side, path, source }
                }
                SafeFsError::Symlink { .. } => ReportFileError::Symlink { side, path },
                SafeFsError::WrongKind { kind, .. } => {
                    ReportFileError::NotRegular { side, path, kind }
                }
                SafeFsError::TooLarge { len, cap, .. } => ReportFileError::TooLarge {
                    side,
                    path,
                    len,
                    cap,
                },
                SafeFsError::Io { source, .. } => ReportFileError::Malformed { side, source },
            });
        }
    };
    if text.len() as u64 >= limit {
        let len = std::fs::symlink_metadata(&path).map_or(limit, |meta| meta.len().max(limit));
        return Err(ReportFileError::TooLarge {
            side,
            path,
            len,
            cap: cap as u64,
        });
    }
    Ok(text)
}

/// Reads one report file under the cap: a regular file, never through a symlink.
fn read_side(path: Option<&Path>, side: &str) -> SideInput {
    let Some(path) = path else {
        return Err(SideInputError::Missing { side: side.into() });
    };
    let text =
        read_bounded(path, TEST_REPORT_CAP, side).map_err(|e| SideInputError::Unreadable {
            message: e.to_string(),
        })?;
    Ok(encode::decode(&text, side, TEST_REPORT_CAP)?)
}

fn clip(message: &str) -> String {
    let one_line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    line::clip(&one_line, line::MAX_ERROR_CHARS, "...")
}

pub(crate) fn error_line(
    head: &str,
    base: &str,
    message: &str,
    config_edited: bool,
) -> line::ResultLine {
    let sha = |s: &str| {
        if git::is_full_sha(s) {
            s.to_string()
        } else {
            ZERO_SHA.to_string()
        }
    };
    line::ResultLine {
        head: sha(head),
        merge_base: sha(base),
        verdict: line::Verdict::Error,
        error: Some(clip(message)),
        config_edited,
        counts: line::Counts::default(),
        tests: Vec::new(),
        deleted_tests: Vec::new(),
        not_collected: Vec::new(),
        truncated: false,
        certificate: None,
        mutants: None,
        regressions: None,
    }
}

/// An error judgement for a problem found before judging (a bad option).
pub(crate) fn judge_error(head: &str, base: &str, message: &str) -> Judgement {
    Judgement {
        line: error_line(head, base, message, false),
        classified: Classified {
            verdict: Verdict::Error,
            error: Some(message.to_string()),
            rows: Vec::new(),
            not_collected: Vec::new(),
        },
        configuration: None,
        failures: Vec::new(),
    }
}

/// Judges a pull request from its reports and git. Never fails: every problem is an error
/// verdict.
/// Why `--base` cannot stand for the pull request's merge base.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BaseError {
    /// The merge base cannot be computed.
    #[error(transparent)]
    Git(#[from] crate::gate::git::GitError),
    /// `--base` is another commit than the merge base.
    #[error(
        "--base {base} is not the merge base of base and head ({merge_base}), so another \
         branch's changes would count as the pull request's; pass `git merge-base BASE HEAD`"
    )]
    NotMergeBase {
        /// The `--base` given.
        base: String,
        /// The merge base of `--base` and `--head`.
        merge_base: String,
    },
}

/// Checks that `base` is exactly the merge base of `base` and `head`.
fn check_merge_base(repo: &Repo, base: &str, head: &str) -> Result<(), BaseError> {
    let merge_base = repo.merge_base(base, head)?;
    if merge_base == base {
        Ok(())
    } else {
        Err(BaseError::NotMergeBase {
            base: base.to_string(),
            merge_base,
        })
    }
}

/// The judge's wall-clock budget by default: a judge that reads reports under their caps
/// takes seconds, so this only stops one that something stalls.
pub(crate) const JUDGE_BUDGET: Duration = Duration::from_secs(300);

/// What stopped a judge before it had judged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Stopped {
    /// Its budget ran out.
    #[error("the judge did not finish within its budget of {} ms (--budget-ms)", .0.as_millis())]
    Budget(Duration),
    /// A signal asked it to stop.
    #[error("the judge was stopped by {0} before it had judged")]
    Signal(&'static str),
    /// The judging thread died.
    #[error("the judge failed before it had judged")]
    Died,
}

/// The name of a signal that stops a judge: SIGINT, SIGTERM, or `a signal`.
pub(crate) fn signal_name(signal: usize) -> &'static str {
    if signal == SIGINT as usize {
        "SIGINT"
    } else if signal == SIGTERM as usize {
        "SIGTERM"
    } else {
        "a signal"
    }
}

/// Judges like [`judge`], within `budget` and until `signalled` names a signal that came:
/// the judging runs on its own thread, and when the budget runs out or a signal comes
/// first, the judgement is an error that says so, at once. The thread is left to the end
/// of the process.
pub(crate) fn judge_within(
    input: JudgeInput,
    budget: Duration,
    signalled: impl Fn() -> Option<&'static str>,
) -> Judgement {
    let deadline = Instant::now() + budget;
    let (head, base) = (input.head.clone(), input.base.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("judge".into())
        .spawn(move || {
            let judgement = judge(&input);
            let _ = tx.send(judgement);
        });
    let stopped = match spawned {
        Err(_) => Stopped::Died,
        Ok(_) => loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(Duration::from_millis(20))) {
                Ok(judgement) => return judgement,
                Err(RecvTimeoutError::Disconnected) => break Stopped::Died,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Some(name) = signalled() {
                break Stopped::Signal(name);
            }
            if Instant::now() >= deadline {
                break Stopped::Budget(budget);
            }
        },
    };
    judge_error(&head, &base, &stopped.to_string())
}

pub(crate) fn judge(input: &JudgeInput) -> Judgement {
    crate::failpoint::pause("judge:started");
    let empty = Classified {
        verdict: Verdict::Error,
        error: None,
        rows: Vec::new(),
        not_collected: Vec::new(),
    };
    let repo = Repo::new(&input.repo);
    for sha in [&input.base, &input.head] {
        if let Err(err) = repo.commit(sha) {
            return Judgement {
                line: error_line(&input.head, &input.base, &err.to_string(), false),
                classified: empty,
                configuration: None,
                failures: Vec::new(),
            };
        }
    }
    // The diff must be the pull request's alone: with any other base, the changes of
    // another branch would count as the pull request's.
    if let Err(err) = check_merge_base(&repo, &input.base, &input.head) {
        return Judgement {
            line: error_line(&input.head, &input.base, &err.to_string(), false),
            classified: empty,
            configuration: None,
            failures: Vec::new(),
        };
    }
    let planned = match plan::plan(&repo, &input.base, &input.head, input.local_config.clone()) {
        Ok(planned) => planned,
        Err(err) => {
            return Judgement {
                line: error_line(&input.head, &input.base, &err.to_string(), false),
                classified: empty,
                configuration: None,
                failures: Vec::new(),
            };
        }
    };
    let base = read_side(input.base_report.as_deref(), "base");
    let rerun = read_side(input.rerun_report.as_deref(), "base-rerun");
    let head = read_side(input.head_report.as_deref(), "head");
    // A report must be for the commit it claims to be for.
    let check = |side: SideInput, want: &str| -> SideInput {
        let report = side?;
        if report.commit == want {
            Ok(report)
        } else {
            Err(SideInputError::WrongCommit {
                side: report.side,
                commit: report.commit,
                expected: want.to_string(),
            })
        }
    };
    let base = check(base, &input.base);
    let rerun = check(rerun, &input.base);
    let head = check(head, &input.head);
    let failures = [&base, &rerun, &head]
        .into_iter()
        .filter_map(|side| match side {
            Ok(report) => match &report.outcome {
                Outcome::Error {
                    detail: Some(detail),
                    ..
                } => Some((report.side.clone(), detail.clone())),
                _ => None,
            },
            Err(_) => None,
        })
        .collect();
    let mut classified = classify::classify(
        &planned.plan.tests,
        &base,
        &rerun,
        &head,
        planned.config.flaky.error_rate,
    );
    if planned.plan.selected_by_data {
        classify::narrow_to_data(&mut classified, &planned.plan.data);
    }
    let regressions = judge_regressions(&planned, &base, &head, &mut classified);
    let counts = line::Counts::tally(classified.rows.iter().map(|row| row.class));
    // The rows stay whole in the judgement; the line keeps what it could ever list.
    let tests: Vec<line::TestLine> =
        line::the_tests_that_can_fit(classified.rows.iter().map(Row::to_line));
    let truncated = tests.len() < classified.rows.len();
    let certificate = input.reduce_report.as_deref().map(|path| {
        let text = read_bounded(path, certificate_cap(), "reduce");
        certificate::verify(&repo, &input.base, &input.head, &planned, &classified, text)
    });
    let mutants = planned
        .plan
        .checks_mutants()
        .then(|| judge_mutants(&repo, input, &planned));
    let result = line::ResultLine {
        head: input.head.clone(),
        merge_base: input.base.clone(),
        verdict: classified.verdict,
        error: classified.error.as_deref().map(clip),
        config_edited: planned.plan.config_edited,
        counts,
        tests,
        deleted_tests: planned.plan.deleted_tests.clone(),
        not_collected: classified.not_collected.clone(),
        truncated,
        certificate,
        mutants,
        regressions,
    };
    Judgement {
        line: result,
        classified,
        configuration: Some(planned.origin.describe()),
        failures,
    }
}

/// The regressions, when the sides ran the suite; a regression makes the verdict `error`
/// when the configuration says so, and so does a suite run on one side only.
fn judge_regressions(
    planned: &plan::Planned,
    base: &SideInput,
    head: &SideInput,
    classified: &mut Classified,
) -> Option<line::Regressions> {
    let asked = planned.config.regressions.as_ref();
    let found = regressions::judge(
        base.as_ref().ok(),
        head.as_ref().ok(),
        &planned.plan.tests,
        asked.is_some(),
    );
    let fail = |classified: &mut Classified, message: String| {
        if classified.verdict != Verdict::Error {
            (classified.verdict, classified.error) = (Verdict::Error, Some(message));
        }
    };
    match found {
        Err(err) => {
            fail(classified, err.to_string());
            None
        }
        Ok(Some(found)) => {
            if asked.is_some_and(|r| r.error) && found.count > 0 {
                fail(classified, regressions::as_error(&found));
            }
            Some(found)
        }
        Ok(None) => None,
    }
}

/// The mutation check: the specs read at head and checked against the merge base, and
/// the mutants side's report.
fn judge_mutants(repo: &Repo, input: &JudgeInput, planned: &plan::Planned) -> line::Mutants {
    let specs = match mutants::load_specs(repo, &input.base, &input.head, planned) {
        Ok(specs) => specs,
        Err(err) => return mutants::classify(&[], Err(err.into()), &input.base),
    };
    let report = match input.mutants_report.as_deref() {
        None => Err(MutantsReportError::NotGiven),
        Some(path) => match read_bounded(path, TEST_REPORT_CAP, mutants::SIDE) {
            Ok(text) => mutants::decode(&text).map_err(MutantsReportError::Decode),
            Err(err) => Err(MutantsReportError::Read(Box::new(err))),
        },
    };
    mutants::classify(&specs, report, &input.base)
}

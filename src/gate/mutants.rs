//! Mutation specs: what the gate asks of a pull request that changes tests alone.
//!
//! Base against head cannot prove such a pull request (it has no fix to reproduce), so it
//! carries its own evidence instead: a spec beside a test file,
//! `<test file minus extension>.mutations.json`, that names up to five small edits of
//! source files (`find` replaced by `replace`) and, for each, the tests that must fail
//! under it. The mutants side (`crate::gate::sides`) applies each edit to the merge base
//! with the head's tests laid over it, runs the spec's test file, and reports what failed;
//! the judge ([`classify`]) decides whether each mutant was killed, and by assertions only.
//!
//! Specs are read from git at head, and every edit is checked against the merge base
//! ([`check_mutation`]) by both the worker and the judge, so the judge never trusts the
//! worker's reading of a spec.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::gate::config::{ConfigError, RepoConfig};
use crate::gate::encode::{DecodeError, INFLATED_CAP, Outcome, TEST_REPORT_CAP};
use crate::gate::git::{GitError, Repo};
use crate::gate::line::{MutantLine, MutantOutcome, Mutants, MutantsVerdict};
use crate::gate::plan::{Planned, SPEC_SUFFIX, is_changeset, is_spec};
use crate::gate::test_report::{Status, TestCase, TestReport};

/// The most mutations a spec may list.
pub const MAX_MUTATIONS: usize = 5;
/// The most characters a mutation's name may have.
pub const MAX_NAME_CHARS: usize = 80;
/// The most characters `find` or `replace` may have.
pub const MAX_TEXT_CHARS: usize = 400;
/// The name of the mutants side and of its report.
pub const SIDE: &str = "mutants";
/// The version of the spec format and of the mutants report.
pub const VERSION: u32 = 1;

/// A spec file: `{ "v": 1, "mutations": [...] }`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutationSpec {
    /// Always 1.
    pub v: u32,
    /// One to five mutations.
    pub mutations: Vec<Mutation>,
}

/// One mutation: replace the single occurrence of `find` in `file` by `replace`, and expect
/// exactly the tests `kills` to fail.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mutation {
    /// A name, unique in the spec, at most 80 characters.
    pub name: String,
    /// The source file to mutate: a normalised repository path.
    pub file: String,
    /// The text to replace; it must occur exactly once in `file` at the merge base.
    pub find: String,
    /// What replaces it.
    pub replace: String,
    /// The full names of the tests (in the spec's test file) that must fail.
    pub kills: Vec<String>,
}

/// Why a spec or one of its mutations is refused.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Not JSON, or not of the spec's shape (unknown, duplicate, missing or mistyped keys).
    #[error("not a mutation spec: {0}")]
    Json(String),
    /// Another version.
    #[error("`v` is {0}, and only version 1 is supported")]
    Version(u32),
    /// No mutation.
    #[error("`mutations` is empty: a spec lists 1 to {MAX_MUTATIONS} mutations")]
    NoMutations,
    /// Too many mutations.
    #[error("`mutations` lists {0}, over the limit of {MAX_MUTATIONS}")]
    TooMany(usize),
    /// An empty name.
    #[error("mutation {0}: `name` is empty")]
    EmptyName(usize),
    /// A name over [`MAX_NAME_CHARS`].
    #[error(
        "mutation {index}: `name` is {len} characters, over the {MAX_NAME_CHARS}-character limit"
    )]
    NameTooLong {
        /// Its position (from 1).
        index: usize,
        /// Its length.
        len: usize,
    },
    /// Two mutations with one name.
    #[error("mutation `{0}` is named twice")]
    DuplicateName(String),
    /// An empty `find`.
    #[error("mutation `{0}`: `find` is empty")]
    EmptyFind(String),
    /// `find` or `replace` over [`MAX_TEXT_CHARS`].
    #[error(
        "mutation `{name}`: `{key}` is {len} characters, over the {MAX_TEXT_CHARS}-character limit"
    )]
    TextTooLong {
        /// The mutation.
        name: String,
        /// `find` or `replace`.
        key: &'static str,
        /// Its length.
        len: usize,
    },
    /// An edit that changes nothing.
    #[error("mutation `{0}`: `find` equals `replace`, so it changes nothing")]
    NoChange(String),
    /// A path that is not a normalised repository path.
    #[error("mutation `{name}`: `file` `{file}` is not a normalised repository path ({why})")]
    BadPath {
        /// The mutation.
        name: String,
        /// The path as written.
        file: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// No test to kill it.
    #[error("mutation `{0}`: `kills` is empty")]
    NoKills(String),
    /// An empty test name in `kills`.
    #[error("mutation `{0}`: `kills` holds an empty test name")]
    EmptyKill(String),
    /// A test named twice in `kills`.
    #[error("mutation `{0}`: `kills` names `{1}` twice")]
    DuplicateKill(String, String),
    /// The file is not at the merge base.
    #[error("mutation `{name}`: `{file}` does not exist at the merge base")]
    Missing {
        /// The mutation.
        name: String,
        /// The file.
        file: String,
    },
    /// The file is test material, not source.
    #[error("mutation `{name}`: `{file}` is {what}, not source")]
    NotSource {
        /// The mutation.
        name: String,
        /// The file.
        file: String,
        /// What it is instead.
        what: &'static str,
    },
    /// `find` does not occur exactly once.
    #[error(
        "mutation `{name}`: `find` occurs {count} times in `{file}` at the merge base, and it must occur exactly once"
    )]
    NotOnce {
        /// The mutation.
        name: String,
        /// The file.
        file: String,
        /// 0, or 2 meaning "more than once".
        count: usize,
    },
    /// The configuration's globs do not compile.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Why a path is not normalised, if it is not.
fn path_fault(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        Some("it is empty")
    } else if path.starts_with('/') {
        Some("it is absolute")
    } else if path.contains('\\') {
        Some("it holds a backslash")
    } else if path.ends_with('/') {
        Some("it ends with a slash")
    } else if path.contains("//") {
        Some("it holds an empty segment")
    } else if path.split('/').any(|s| s == "..") {
        Some("it holds `..`")
    } else if path.split('/').any(|s| s == ".") {
        Some("it holds `.`")
    } else if path.chars().any(char::is_control) {
        Some("it holds a control character")
    } else {
        None
    }
}

/// Parses a spec strictly.
///
/// # Errors
/// Unknown, duplicate or missing keys, another version, no or more than five mutations, an
/// empty, duplicate or over-long name, an empty `find`, `find` or `replace` over 400
/// characters, `find` equal to `replace`, a `file` that is not a normalised repository path,
/// an empty `kills` list, or an empty or repeated test in it.
pub fn parse_spec(text: &str) -> Result<MutationSpec, SpecError> {
    let spec: MutationSpec =
        serde_json::from_str(text).map_err(|e| SpecError::Json(e.to_string()))?;
    if spec.v != VERSION {
        return Err(SpecError::Version(spec.v));
    }
    match spec.mutations.len() {
        0 => return Err(SpecError::NoMutations),
        n if n > MAX_MUTATIONS => return Err(SpecError::TooMany(n)),
        _ => {}
    }
    let mut names = HashSet::new();
    for (i, m) in spec.mutations.iter().enumerate() {
        let len = m.name.chars().count();
        if len == 0 {
            return Err(SpecError::EmptyName(i + 1));
        }
        if len > MAX_NAME_CHARS {
            return Err(SpecError::NameTooLong { index: i + 1, len });
        }
        if !names.insert(m.name.as_str()) {
            return Err(SpecError::DuplicateName(m.name.clone()));
        }
        if m.find.is_empty() {
            return Err(SpecError::EmptyFind(m.name.clone()));
        }
        for (key, text) in [("find", &m.find), ("replace", &m.replace)] {
            let len = text.chars().count();
            if len > MAX_TEXT_CHARS {
                let name = m.name.clone();
                return Err(SpecError::TextTooLong { name, key, len });
            }
        }
        if m.find == m.replace {
            return Err(SpecError::NoChange(m.name.clone()));
        }
        if let Some(why) = path_fault(&m.file) {
            let (name, file) = (m.name.clone(), m.file.clone());
            return Err(SpecError::BadPath { name, file, why });
        }
        if m.kills.is_empty() {
            return Err(SpecError::NoKills(m.name.clone()));
        }
        let mut kills = HashSet::new();
        for kill in &m.kills {
            if kill.is_empty() {
                return Err(SpecError::EmptyKill(m.name.clone()));
            }
            if !kills.insert(kill.as_str()) {
                return Err(SpecError::DuplicateKill(m.name.clone(), kill.clone()));
            }
        }
    }
    Ok(spec)
}

/// How often `needle` occurs in `hay`, overlapping matches counted, stopping at 2.
fn occurrences(hay: &str, needle: &str) -> usize {
    let (mut count, mut from) = (0, 0);
    while let Some(at) = hay[from..].find(needle) {
        count += 1;
        if count == 2 {
            break;
        }
        let start = from + at;
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

/// Checks one mutation against the merge base: `base_text` is its `file` there (`None`
/// when it does not exist). The file must be source (not a test, a carried file, a spec or
/// a changeset), and `find` must occur in it exactly once, overlapping matches counted.
///
/// # Errors
/// The first rule the mutation breaks.
pub fn check_mutation(
    mutation: &Mutation,
    base_text: Option<&str>,
    config: &RepoConfig,
) -> Result<(), SpecError> {
    let globs = config.globs("configuration")?;
    let (name, file) = (mutation.name.clone(), mutation.file.clone());
    if let Some(why) = path_fault(&file) {
        return Err(SpecError::BadPath { name, file, why });
    }
    let what = if is_spec(&file) {
        Some("a mutation spec")
    } else if is_changeset(&file) {
        Some("a changeset")
    } else if globs.is_test(&file) {
        Some("a test")
    } else if globs.is_carry(&file) {
        Some("a carried file")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(SpecError::NotSource { name, file, what });
    }
    let Some(text) = base_text else {
        return Err(SpecError::Missing { name, file });
    };
    match occurrences(text, &mutation.find) {
        1 => Ok(()),
        count => Err(SpecError::NotOnce { name, file, count }),
    }
}

/// The single test file beside `spec` among `files`: same directory, its name minus its
/// extension equal to the spec's name minus `.mutations.json`, and a test by the
/// configuration's globs.
///
/// # Errors
/// None or several such files.
pub fn test_file_of_spec(
    spec: &str,
    files: &[String],
    config: &RepoConfig,
) -> Result<String, TestFileError> {
    let globs = config.globs("configuration")?;
    let stem = spec.strip_suffix(SPEC_SUFFIX).unwrap_or(spec);
    let beside: Vec<&String> = files
        .iter()
        .filter(|f| {
            f.rsplit_once('.').is_some_and(|(s, ext)| {
                s == stem && !ext.is_empty() && !ext.contains('/') && !is_spec(f)
            }) && globs.is_test(f)
        })
        .collect();
    match beside.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(TestFileError::None {
            spec: spec.to_string(),
        }),
        many => Err(TestFileError::Several {
            spec: spec.to_string(),
            names: many.iter().map(|s| (*s).clone()).collect(),
        }),
    }
}

/// Why a spec has no single test file beside it.
#[derive(Debug, thiserror::Error)]
pub enum TestFileError {
    /// The configuration's globs do not compile.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No test file is beside the spec.
    #[error("`{spec}` has no test file beside it")]
    None {
        /// The spec.
        spec: String,
    },
    /// Several test files are beside the spec.
    #[error("`{spec}` has {} test files beside it ({})", names.len(), names.join(", "))]
    Several {
        /// The spec.
        spec: String,
        /// The test files.
        names: Vec<String>,
    },
}

/// What is wrong with one spec.
#[derive(Debug, thiserror::Error)]
pub enum SpecProblem {
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The spec is not in the head's tree.
    #[error("not found at head")]
    NotAtHead,
    /// The spec is not UTF-8.
    #[error("not UTF-8")]
    NotUtf8,
    /// A mutated file is not UTF-8 at the merge base.
    #[error("`{file}` is not UTF-8 at the merge base")]
    BaseNotUtf8 {
        /// The file.
        file: String,
    },
    /// The spec does not parse or a mutation does not apply.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// Why the specs of a pull request cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SpecsError {
    /// git failed listing the head's tree.
    #[error(transparent)]
    Git(#[from] GitError),
    /// One spec is unusable.
    #[error("`{path}`: {problem}")]
    Spec {
        /// The spec.
        path: String,
        /// What is wrong.
        problem: SpecProblem,
    },
    /// A spec has no single test file.
    #[error(transparent)]
    TestFile(#[from] TestFileError),
}

/// Why the judge has no mutants report to classify.
#[derive(Debug, thiserror::Error)]
pub enum MutantsReportError {
    /// The specs could not be loaded.
    #[error(transparent)]
    Specs(#[from] SpecsError),
    /// No report was given.
    #[error("no {SIDE} report was given")]
    NotGiven,
    /// The report file could not be read (the reader's message).
    #[error("{0}")]
    Read(Box<dyn std::error::Error + Send + Sync>),
    /// The report did not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// A spec read at head, checked against the merge base, with its test file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedSpec {
    /// The spec's path.
    pub path: String,
    /// The test file beside it.
    pub test: String,
    /// Its mutations, each with its file's text at the merge base.
    pub mutations: Vec<(Mutation, String)>,
}

/// Reads every spec of the plan at head and checks it against the merge base.
///
/// # Errors
/// A message naming the spec: git fails, a spec is missing at head, not UTF-8, does not
/// parse, fails [`check_mutation`] or has no single test file beside it.
pub fn load_specs(
    repo: &Repo,
    base: &str,
    head: &str,
    planned: &Planned,
) -> Result<Vec<LoadedSpec>, SpecsError> {
    let files: Vec<String> = repo.ls_tree(head)?.into_iter().map(|(p, _)| p).collect();
    let mut specs = Vec::new();
    for path in &planned.plan.mutations {
        let named = |problem: SpecProblem| SpecsError::Spec {
            path: path.clone(),
            problem,
        };
        let bytes = repo
            .blob(head, path)
            .map_err(|e| named(e.into()))?
            .ok_or_else(|| named(SpecProblem::NotAtHead))?;
        let text = String::from_utf8(bytes).map_err(|_| named(SpecProblem::NotUtf8))?;
        let spec = parse_spec(&text).map_err(|e| named(e.into()))?;
        let test = test_file_of_spec(path, &files, &planned.config)?;
        let mut mutations = Vec::new();
        for m in spec.mutations {
            let base_bytes = repo.blob(base, &m.file).map_err(|e| named(e.into()))?;
            let base_text = match base_bytes {
                Some(b) => Some(String::from_utf8(b).map_err(|_| {
                    named(SpecProblem::BaseNotUtf8 {
                        file: m.file.clone(),
                    })
                })?),
                None => None,
            };
            check_mutation(&m, base_text.as_deref(), &planned.config)
                .map_err(|e| named(e.into()))?;
            mutations.push((m, base_text.unwrap_or_default()));
        }
        specs.push(LoadedSpec {
            path: path.clone(),
            test,
            mutations,
        });
    }
    Ok(specs)
}

// ---------------------------------------------------------------- the report

/// What one mutant's run produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MutantResult {
    /// The rebuild under the mutation failed.
    Unbuilt {
        /// What the build printed last.
        message: String,
    },
    /// The spec's test file ran.
    Tested {
        /// The command's exit status (`None` when killed by a signal).
        exit_code: Option<i32>,
        /// The normalised report, the spec's test file only.
        report: TestReport,
    },
    /// The run failed (a timeout, a missing or unreadable report).
    Error {
        /// What failed.
        message: String,
    },
}

/// One mutant's run, keyed by its spec and name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutantRun {
    /// The spec's path.
    pub spec: String,
    /// The mutation's name.
    pub name: String,
    /// What happened.
    pub result: MutantResult,
}

/// What the mutants side produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MutantsOutcome {
    /// The baseline ran, then each mutant in turn.
    Ran {
        /// The specs' test files on the unmutated tree.
        baseline: Outcome,
        /// One run per mutation.
        runs: Vec<MutantRun>,
    },
    /// Something failed before or between the runs.
    Error {
        /// What failed.
        message: String,
    },
    /// The check does not apply to this diff.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The mutants side's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutantsReport {
    /// [`VERSION`].
    pub v: u32,
    /// Always `mutants`.
    pub side: String,
    /// The merge base.
    pub commit: String,
    /// What happened.
    pub outcome: MutantsOutcome,
}

impl MutantsReport {
    /// A report of `outcome` at `commit`.
    pub fn new(commit: &str, outcome: MutantsOutcome) -> MutantsReport {
        MutantsReport {
            v: VERSION,
            side: SIDE.into(),
            commit: commit.into(),
            outcome,
        }
    }

    /// An error marker.
    pub fn error(commit: &str, message: impl Into<String>) -> MutantsReport {
        let message = message.into();
        MutantsReport::new(commit, MutantsOutcome::Error { message })
    }
}

/// Encodes a mutants report under the test-report cap; over it (encoded or inflated), an
/// error marker saying so.
///
/// # Errors
/// The report or its marker cannot be encoded.
pub fn encode(report: &MutantsReport) -> Result<String, crate::gate::encode::EncodeError> {
    let json = crate::gate::encode::to_json(report)?;
    let inflated = json.len();
    let text = crate::gate::encode::encode_json(&json)?;
    if text.len() <= TEST_REPORT_CAP && inflated <= INFLATED_CAP {
        return Ok(text);
    }
    crate::gate::encode::encode_value(&MutantsReport::error(
        &report.commit,
        format!(
            "the mutants report is {} characters encoded ({inflated} bytes inflated), over the \
             {TEST_REPORT_CAP}-character or {INFLATED_CAP}-byte cap",
            text.len()
        ),
    ))
}

/// Decodes a mutants report.
///
/// # Errors
/// Over a cap, malformed, another version or side, or a run named twice.
pub fn decode(text: &str) -> Result<MutantsReport, DecodeError> {
    let report: MutantsReport = crate::gate::encode::decode_value(text, SIDE, TEST_REPORT_CAP)?;
    let malformed = |reason: String| DecodeError::Malformed {
        side: SIDE.into(),
        reason,
    };
    if report.v != VERSION || report.side != SIDE {
        return Err(malformed("not a version 1 mutants report".into()));
    }
    if let MutantsOutcome::Ran { runs, .. } = &report.outcome {
        let mut seen = HashSet::new();
        for run in runs {
            if !seen.insert((run.spec.as_str(), run.name.as_str())) {
                return Err(malformed(format!(
                    "it names the run `{}` of `{}` twice",
                    run.name, run.spec
                )));
            }
        }
    }
    Ok(report)
}

// ---------------------------------------------------------------- classification

/// Exception types that are assertion failures.
const ASSERTION_TYPES: &[&str] = &[
    "AssertionError",
    "AssertionFailedError",
    "ComparisonFailure",
    "JestAssertionError",
];

/// Whether a failed test failed on an assertion: pytest's `AssertionError` (the JUnit type
/// or crash line), an `AssertionError` from an expect matcher or `node:assert` (vitest,
/// jest, node:test), a jest matcher error (`Error: expect(...)`), a Rust assertion panic
/// (`assertion failed`, ``assertion `left == right` failed``). A thrown `TypeError`, a
/// timeout, a crash or a plain `Error` is not.
pub fn is_assertion_failure(test: &TestCase) -> bool {
    if let Some(kind) = test.error_type.as_deref().map(str::trim)
        && !kind.is_empty()
        && !kind.starts_with("test failure")
    {
        let short = kind.rsplit('.').next().unwrap_or(kind);
        return ASSERTION_TYPES.contains(&short);
    }
    let Some(message) = test.messages.first() else {
        return false;
    };
    let text = crate::text::strip_ansi(message);
    let first = text.trim_start().lines().next().unwrap_or("");
    if first.starts_with("AssertionError") || first.starts_with("Error: expect(") {
        return true;
    }
    let rust = |l: &str| {
        l.starts_with("assertion failed")
            || l.starts_with("assertion `left == right` failed")
            || l.starts_with("assertion `left != right` failed")
    };
    text.contains("panicked at")
        && (text.contains("panicked at 'assertion failed") || text.lines().map(str::trim).any(rust))
}

/// What the judge concludes from the specs and the mutants side's report.
pub fn classify(
    specs: &[LoadedSpec],
    report: Result<MutantsReport, MutantsReportError>,
    base: &str,
) -> Mutants {
    let error = |message: String| Mutants {
        verdict: MutantsVerdict::Error,
        results: Vec::new(),
        error: Some(crate::gate::line::clip_error(&message)),
    };
    let report = match report {
        Ok(report) => report,
        Err(err) => return error(crate::with_causes(&err)),
    };
    if report.commit != base {
        return error(format!(
            "the mutants report is for commit {}, not {base}",
            report.commit
        ));
    }
    let (baseline, runs) = match report.outcome {
        MutantsOutcome::Ran { baseline, runs } => (baseline, runs),
        MutantsOutcome::Error { message } => return error(format!("mutants: {message}")),
        MutantsOutcome::Skipped { reason } => {
            return error(format!("the mutants side was skipped: {reason}"));
        }
    };
    let runs: HashMap<(&str, &str), &MutantResult> = runs
        .iter()
        .map(|r| ((r.spec.as_str(), r.name.as_str()), &r.result))
        .collect();
    let baseline = match &baseline {
        Outcome::Report { report, .. } => Some(report),
        _ => None,
    };
    let mut results = Vec::new();
    for spec in specs {
        for (m, _) in &spec.mutations {
            let run = runs.get(&(spec.path.as_str(), m.name.as_str())).copied();
            let (outcome, failed) = outcome_of(m, &spec.test, baseline, run);
            results.push(MutantLine {
                spec: spec.path.clone(),
                name: m.name.clone(),
                outcome,
                failed,
            });
        }
    }
    let killed = !results.is_empty() && results.iter().all(|r| r.outcome == MutantOutcome::Killed);
    Mutants {
        verdict: if killed {
            MutantsVerdict::Killed
        } else {
            MutantsVerdict::NotKilled
        },
        results,
        error: None,
    }
}

/// The one file `path` of a report, if it is there exactly once.
fn file_of<'r>(
    report: &'r TestReport,
    path: &str,
) -> Option<&'r crate::gate::test_report::FileResult> {
    let mut files = report.files.iter().filter(|f| f.path == path);
    let file = files.next()?;
    files.next().is_none().then_some(file)
}

/// One mutation's outcome, and the failing tests when it is overkill or survived.
fn outcome_of(
    m: &Mutation,
    test_file: &str,
    baseline: Option<&TestReport>,
    run: Option<&MutantResult>,
) -> (MutantOutcome, Option<Vec<String>>) {
    let plain = |o: MutantOutcome| (o, None);
    // Every kills test passed exactly once, unmutated.
    let base_file = baseline.and_then(|b| file_of(b, test_file));
    let passed_once = |kill: &String| {
        base_file.is_some_and(|f| {
            let mut named = f.tests.iter().filter(|t| &t.name == kill);
            named.next().is_some_and(|t| t.status == Status::Passed) && named.next().is_none()
        })
    };
    if base_file.is_none_or(|f| f.load_error.is_some()) || !m.kills.iter().all(passed_once) {
        return plain(MutantOutcome::Baseline);
    }
    let (exit_code, report) = match run {
        None | Some(MutantResult::Error { .. }) => return plain(MutantOutcome::Error),
        Some(MutantResult::Unbuilt { .. }) => return plain(MutantOutcome::Unbuilt),
        Some(MutantResult::Tested { exit_code, report }) => (exit_code, report),
    };
    let Some(file) = file_of(report, test_file) else {
        return plain(MutantOutcome::Error);
    };
    let failing: Vec<&TestCase> = file
        .tests
        .iter()
        .filter(|t| t.status == Status::Failed)
        .collect();
    let missing_symbol = failing.iter().any(|t| {
        t.messages
            .iter()
            .any(|msg| crate::gate::classify::names_missing_symbol(msg))
    });
    if file.load_error.is_some() || missing_symbol {
        return plain(MutantOutcome::LoadError);
    }
    // A run that died, or exited non-zero while its report shows no failure, shows nothing.
    if exit_code.is_none() || (*exit_code != Some(0) && failing.is_empty()) {
        return plain(MutantOutcome::Error);
    }
    if !failing.iter().all(|t| is_assertion_failure(t)) {
        return plain(MutantOutcome::Error);
    }
    let mut failed: Vec<String> = failing.iter().map(|t| t.name.clone()).collect();
    failed.sort();
    failed.dedup();
    let statuses = |kill: &String| -> Vec<Status> {
        let named = file.tests.iter().filter(|t| &t.name == kill);
        named.map(|t| t.status).collect()
    };
    let kills: Vec<Vec<Status>> = m.kills.iter().map(statuses).collect();
    if kills.iter().any(|s| s.contains(&Status::Passed)) {
        return (MutantOutcome::Survived, Some(failed));
    }
    if !kills.iter().all(|s| s.contains(&Status::Failed)) {
        // A kills test that did not run under the mutant.
        return plain(MutantOutcome::Error);
    }
    if failed.iter().any(|f| !m.kills.contains(f)) {
        return (MutantOutcome::Overkill, Some(failed));
    }
    plain(MutantOutcome::Killed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::test_report::FileResult;

    fn config() -> RepoConfig {
        RepoConfig::parse(
            r#"{"version":1,"tests":["tests/**/test_*.py"],"carry":["tests/**/conftest.py","tests/data/**"],"command":"c","report":"junit"}"#,
            "t",
        )
        .unwrap()
    }

    const GOOD: &str = r#"{"v":1,"mutations":[{"name":"drop-quote","file":"src/parse.py","find":"quote=True","replace":"quote=False","kills":["TestParse::test_quotes"]}]}"#;

    fn with(mutation: &str) -> String {
        format!(r#"{{"v":1,"mutations":[{mutation}]}}"#)
    }

    fn mutation(name: &str, file: &str, find: &str, replace: &str, kills: &str) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap();
        format!(
            r#"{{"name":{},"file":{},"find":{},"replace":{},"kills":{kills}}}"#,
            q(name),
            q(file),
            q(find),
            q(replace)
        )
    }

    fn m(file: &str) -> String {
        mutation("m", file, "a", "b", r#"["t"]"#)
    }

    /// Every refusal of the parser, one per rule, with the message it gives.
    #[test]
    fn the_parser_refuses_each_rule_with_a_clear_message() {
        let five = vec![m("src/a.py"); 5]
            .join(",")
            .replace(r#""name":"m""#, r#""name":"N""#);
        let numbered: Vec<String> = (0..6)
            .map(|i| mutation(&format!("m{i}"), "src/a.py", "a", "b", r#"["t"]"#))
            .collect();
        let cases: Vec<(&str, String)> = vec![
            ("not JSON", "{".into()),
            (
                "unknown top-level key",
                GOOD.replace(r#""v":1"#, r#""v":1,"extra":true"#),
            ),
            (
                "unknown mutation key",
                GOOD.replace(r#""name""#, r#""why":"x","name""#),
            ),
            ("duplicate key", GOOD.replace(r#""v":1"#, r#""v":1,"v":1"#)),
            (
                "missing key",
                GOOD.replace(r#","kills":["TestParse::test_quotes"]"#, ""),
            ),
            (
                "wrong type",
                GOOD.replace(r#""kills":["TestParse::test_quotes"]"#, r#""kills":"t""#),
            ),
            ("version 2", GOOD.replace(r#""v":1"#, r#""v":2"#)),
            ("no mutations", r#"{"v":1,"mutations":[]}"#.into()),
            (
                "six mutations",
                format!(r#"{{"v":1,"mutations":[{}]}}"#, numbered.join(",")),
            ),
            (
                "duplicate name",
                format!(r#"{{"v":1,"mutations":[{five}]}}"#),
            ),
            (
                "empty name",
                with(&mutation("", "src/a.py", "a", "b", r#"["t"]"#)),
            ),
            (
                "81-char name",
                with(&mutation(&"n".repeat(81), "src/a.py", "a", "b", r#"["t"]"#)),
            ),
            (
                "empty find",
                with(&mutation("m", "src/a.py", "", "b", r#"["t"]"#)),
            ),
            (
                "401-char find",
                with(&mutation(
                    "m",
                    "src/a.py",
                    &"é".repeat(401),
                    "b",
                    r#"["t"]"#,
                )),
            ),
            (
                "401-char replace",
                with(&mutation(
                    "m",
                    "src/a.py",
                    "a",
                    &"b".repeat(401),
                    r#"["t"]"#,
                )),
            ),
            (
                "find == replace",
                with(&mutation("m", "src/a.py", "same", "same", r#"["t"]"#)),
            ),
            ("absolute file", with(&m("/etc/passwd"))),
            ("`..` in file", with(&m("src/../secret.py"))),
            ("`.` in file", with(&m("./src/a.py"))),
            ("`//` in file", with(&m("src//a.py"))),
            ("backslash in file", with(&m("src\\a.py"))),
            ("trailing slash", with(&m("src/"))),
            ("empty file", with(&m(""))),
            (
                "empty kills",
                with(&mutation("m", "src/a.py", "a", "b", "[]")),
            ),
            (
                "empty kill name",
                with(&mutation("m", "src/a.py", "a", "b", r#"[""]"#)),
            ),
            (
                "duplicate kills",
                with(&mutation("m", "src/a.py", "a", "b", r#"["t","u","t"]"#)),
            ),
        ];
        let mut out = String::new();
        for (what, text) in &cases {
            let err = parse_spec(text).expect_err(what);
            out.push_str(&format!("{what}: {err}\n"));
        }
        insta::assert_snapshot!(out);
        // The limits themselves are accepted.
        let at_limits = with(&mutation(
            &"n".repeat(80),
            "src/a.py",
            &"é".repeat(400),
            &"b".repeat(400),
            r#"["t","u"]"#,
        ));
        assert!(parse_spec(&at_limits).is_ok());
        let five: Vec<String> = (0..5)
            .map(|i| mutation(&format!("m{i}"), "src/a.py", "a", "b", r#"["t"]"#))
            .collect();
        let spec = parse_spec(&format!(r#"{{"v":1,"mutations":[{}]}}"#, five.join(","))).unwrap();
        assert_eq!(spec.mutations.len(), 5);
        assert_eq!(parse_spec(GOOD).unwrap().mutations[0].name, "drop-quote");
    }

    fn one(file: &str, find: &str) -> Mutation {
        Mutation {
            name: "m".into(),
            file: file.into(),
            find: find.into(),
            replace: "x".into(),
            kills: vec!["t".into()],
        }
    }

    #[test]
    fn check_mutation_wants_source_at_the_merge_base_with_one_match() {
        let c = config();
        let text = "def add(a, b):\n    return a + b\n";
        assert!(check_mutation(&one("src/calc.py", "a + b"), Some(text), &c).is_ok());
        let cases = [
            (one("src/calc.py", "a - b"), Some(text), "occurs 0 times"),
            (one("src/calc.py", "a"), Some(text), "occurs 2 times"),
            // Overlapping matches count: "aa" occurs twice in "aaa".
            (one("src/calc.py", "aa"), Some("aaa"), "occurs 2 times"),
            (
                one("src/gone.py", "a"),
                None,
                "does not exist at the merge base",
            ),
            (
                one("tests/test_calc.py", "a"),
                Some(text),
                "is a test, not source",
            ),
            (
                one("tests/conftest.py", "a"),
                Some(text),
                "is a carried file",
            ),
            (
                one("tests/data/x.txt", "a"),
                Some(text),
                "is a carried file",
            ),
            (
                one("tests/test_calc.mutations.json", "a"),
                Some(text),
                "is a mutation spec",
            ),
            (
                one(".changeset/blue-cats.md", "a"),
                Some(text),
                "is a changeset",
            ),
            (one("src/../calc.py", "a"), Some(text), "holds `..`"),
        ];
        for (mutation, base, want) in cases {
            let err = check_mutation(&mutation, base, &c).unwrap_err().to_string();
            assert!(err.contains(want), "{}: {err}", mutation.file);
        }
        assert_eq!(occurrences("aaa", "aa"), 2);
        assert_eq!(occurrences("ééé", "éé"), 2);
        assert_eq!(occurrences("abc", "c"), 1);
    }

    #[test]
    fn a_spec_pairs_with_the_single_test_beside_it() {
        let c = config();
        let files = |names: &[&str]| names.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let spec = "tests/test_parse.mutations.json";
        let found = test_file_of_spec(spec, &files(&[spec, "tests/test_parse.py"]), &c);
        assert_eq!(found.unwrap(), "tests/test_parse.py");
        let none = test_file_of_spec(spec, &files(&[spec, "tests/test_parser.py"]), &c);
        assert!(
            none.unwrap_err()
                .to_string()
                .contains("no test file beside it")
        );
        let two = files(&["tests/test_parse.py", "tests/test_parse.pyi"]);
        let c2 = RepoConfig::parse(
            r#"{"version":1,"tests":["tests/test_*"],"command":"c","report":"junit"}"#,
            "t",
        )
        .unwrap();
        let err = test_file_of_spec(spec, &two, &c2).unwrap_err().to_string();
        assert!(err.contains("2 test files beside it"), "{err}");
        // A file beside it that is not a test by the globs does not count.
        let err = test_file_of_spec(spec, &files(&["tests/test_parse.txt"]), &c)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no test file"), "{err}");
    }

    fn case(name: &str, status: Status, message: &str, kind: Option<&str>) -> TestCase {
        TestCase {
            name: name.into(),
            status,
            messages: if message.is_empty() {
                vec![]
            } else {
                vec![message.into()]
            },
            error_type: kind.map(str::to_string),
        }
    }

    #[test]
    fn assertion_failures_per_framework() {
        let yes = [
            case("t", Status::Failed, "assert 1 == 2", Some("AssertionError")),
            case(
                "t",
                Status::Failed,
                "x",
                Some("org.opentest4j.AssertionFailedError"),
            ),
            case(
                "t",
                Status::Failed,
                "AssertionError: expected 2 to be 3",
                None,
            ),
            case(
                "t",
                Status::Failed,
                "AssertionError [ERR_ASSERTION]: 1 !== 2",
                None,
            ),
            case(
                "t",
                Status::Failed,
                "\u{1b}[2mError: expect(\u{1b}[22mreceived).toBe(expected)",
                None,
            ),
            case(
                "t",
                Status::Failed,
                "thread 't' panicked at tests/a.rs:3:5:\nassertion `left == right` failed\n  left: 1\n right: 2",
                Some("test failure with exit code 101"),
            ),
            case(
                "t",
                Status::Failed,
                "thread 't' panicked at src/lib.rs:1:1:\nassertion failed: x > 1",
                None,
            ),
        ];
        for t in &yes {
            assert!(is_assertion_failure(t), "{t:?}");
        }
        let no = [
            case(
                "t",
                Status::Failed,
                "TypeError: x is not iterable",
                Some("TypeError"),
            ),
            case(
                "t",
                Status::Failed,
                "AssertionError: looks like one",
                Some("TypeError"),
            ),
            case("t", Status::Failed, "Failed: Timeout >5.0s", Some("Failed")),
            case("t", Status::Failed, "boom", Some("error")),
            case(
                "t",
                Status::Failed,
                "Error: promise resolved \"1\" instead of rejecting",
                None,
            ),
            case(
                "t",
                Status::Failed,
                "TypeError: Cannot read properties of null",
                None,
            ),
            case(
                "t",
                Status::Failed,
                "thread 't' panicked at src/lib.rs:1:1:\nindex out of bounds",
                None,
            ),
            case("t", Status::Failed, "", None),
        ];
        for t in &no {
            assert!(!is_assertion_failure(t), "{t:?}");
        }
    }

    fn spec() -> LoadedSpec {
        let mut a = one("src/calc.py", "a + b");
        a.name = "a".into();
        a.kills = vec!["test_add".into()];
        let mut b = a.clone();
        b.name = "b".into();
        LoadedSpec {
            path: "tests/test_calc.mutations.json".into(),
            test: "tests/test_calc.py".into(),
            mutations: vec![(a, String::new()), (b, String::new())],
        }
    }

    fn tested(exit: i32, tests: Vec<TestCase>) -> MutantResult {
        MutantResult::Tested {
            exit_code: Some(exit),
            report: TestReport {
                files: vec![FileResult {
                    path: "tests/test_calc.py".into(),
                    load_error: None,
                    crashed: None,
                    tests,
                }],
            },
        }
    }

    fn ran(baseline: Vec<TestCase>, a: MutantResult, b: Option<MutantResult>) -> MutantsReport {
        let base = tested(0, baseline);
        let MutantResult::Tested { exit_code, report } = base else {
            unreachable!()
        };
        let mut runs = vec![MutantRun {
            spec: spec().path,
            name: "a".into(),
            result: a,
        }];
        if let Some(b) = b {
            runs.push(MutantRun {
                spec: spec().path,
                name: "b".into(),
                result: b,
            });
        }
        MutantsReport::new(
            &"b".repeat(40),
            MutantsOutcome::Ran {
                baseline: Outcome::Report { exit_code, report },
                runs,
            },
        )
    }

    const AE: Option<&str> = Some("AssertionError");

    fn outcomes(baseline: Vec<TestCase>, a: MutantResult) -> (MutantOutcome, Option<Vec<String>>) {
        let killed = tested(
            1,
            vec![
                case("test_add", Status::Failed, "assert", AE),
                case("test_zero", Status::Passed, "", None),
            ],
        );
        let m = classify(
            &[spec()],
            Ok(ran(baseline, a, Some(killed))),
            &"b".repeat(40),
        );
        let all = m.results.iter().all(|r| r.outcome == MutantOutcome::Killed);
        assert_eq!(m.verdict == MutantsVerdict::Killed, all);
        (m.results[0].outcome, m.results[0].failed.clone())
    }

    #[test]
    fn each_outcome_has_its_evidence() {
        use MutantOutcome as O;
        use Status::{Failed, Passed, Skipped};
        let base = || {
            vec![
                case("test_add", Passed, "", None),
                case("test_zero", Passed, "", None),
            ]
        };
        let add = |s: Status, msg: &str, kind: Option<&str>| case("test_add", s, msg, kind);
        let zero = |s: Status, msg: &str, kind: Option<&str>| case("test_zero", s, msg, kind);
        type Case = (Vec<TestCase>, MutantResult, O, Option<Vec<&'static str>>);
        let cases: Vec<Case> = vec![
            (
                base(),
                tested(
                    1,
                    vec![add(Failed, "assert 3 == 5", AE), zero(Passed, "", None)],
                ),
                O::Killed,
                None,
            ),
            (
                base(),
                tested(1, vec![add(Failed, "a", AE), zero(Failed, "b", AE)]),
                O::Overkill,
                Some(vec!["test_add", "test_zero"]),
            ),
            (
                base(),
                tested(1, vec![add(Passed, "", None), zero(Failed, "b", AE)]),
                O::Survived,
                Some(vec!["test_zero"]),
            ),
            (
                base(),
                tested(0, vec![add(Passed, "", None), zero(Passed, "", None)]),
                O::Survived,
                Some(vec![]),
            ),
            (
                base(),
                MutantResult::Unbuilt {
                    message: "SyntaxError".into(),
                },
                O::Unbuilt,
                None,
            ),
            (
                base(),
                tested(
                    1,
                    vec![add(
                        Failed,
                        "ImportError: cannot import name 'add'",
                        Some("ImportError"),
                    )],
                ),
                O::LoadError,
                None,
            ),
            (
                vec![add(Failed, "a", AE), zero(Passed, "", None)],
                tested(1, vec![add(Failed, "a", AE)]),
                O::Baseline,
                None,
            ),
            (
                vec![add(Passed, "", None), add(Passed, "", None)],
                tested(1, vec![add(Failed, "a", AE)]),
                O::Baseline,
                None,
            ),
            (
                vec![zero(Passed, "", None)],
                tested(1, vec![add(Failed, "a", AE)]),
                O::Baseline,
                None,
            ),
            (
                base(),
                tested(
                    1,
                    vec![add(Failed, "TypeError: bad operand", Some("TypeError"))],
                ),
                O::Error,
                None,
            ),
            (
                base(),
                tested(
                    1,
                    vec![
                        add(Failed, "a", AE),
                        zero(Failed, "Failed: Timeout", Some("Failed")),
                    ],
                ),
                O::Error,
                None,
            ),
            (
                base(),
                tested(1, vec![add(Skipped, "", None), zero(Failed, "b", AE)]),
                O::Error,
                None,
            ),
            (
                base(),
                tested(2, vec![add(Passed, "", None)]),
                O::Error,
                None,
            ),
            (
                base(),
                MutantResult::Error {
                    message: "timeout".into(),
                },
                O::Error,
                None,
            ),
        ];
        for (baseline, run, want, failed) in cases {
            let what = format!("{run:?}");
            let got = outcomes(baseline, run);
            let failed = failed.map(|f| f.into_iter().map(str::to_string).collect());
            assert_eq!(got, (want, failed), "{what}");
        }
        // A killed verdict needs every mutant killed.
        let killed = || tested(1, vec![case("test_add", Failed, "a", AE)]);
        let m = classify(
            &[spec()],
            Ok(ran(base(), killed(), Some(killed()))),
            &"b".repeat(40),
        );
        assert_eq!(m.verdict, MutantsVerdict::Killed);
        // A run missing from the report is an error outcome; the others stand.
        let m = classify(&[spec()], Ok(ran(base(), killed(), None)), &"b".repeat(40));
        assert_eq!(
            (m.verdict, m.results[0].outcome, m.results[1].outcome),
            (MutantsVerdict::NotKilled, O::Killed, O::Error)
        );
    }

    #[test]
    fn unusable_reports_give_an_error_verdict() {
        let sha = "b".repeat(40);
        let m = classify(&[spec()], Err(MutantsReportError::NotGiven), &sha);
        assert_eq!(
            (m.verdict, m.error.as_deref()),
            (MutantsVerdict::Error, Some("no mutants report was given"))
        );
        let other = MutantsReport::error(&"c".repeat(40), "x");
        let m = classify(&[spec()], Ok(other), &sha);
        assert!(m.error.unwrap().contains("is for commit cccc"));
        let marker = MutantsReport::error(&sha, "the build failed");
        let m = classify(&[spec()], Ok(marker), &sha);
        assert_eq!(m.error.as_deref(), Some("mutants: the build failed"));
        let skipped = MutantsReport::new(
            &sha,
            MutantsOutcome::Skipped {
                reason: "source changed".into(),
            },
        );
        let m = classify(&[spec()], Ok(skipped), &sha);
        assert!(m.error.unwrap().contains("skipped"));
    }

    #[test]
    fn reports_round_trip_and_a_run_named_twice_is_unreadable() {
        let base = vec![case("test_add", Status::Passed, "", None)];
        let report = ran(
            base.clone(),
            tested(1, vec![case("test_add", Status::Failed, "a", AE)]),
            None,
        );
        let text = encode(&report).unwrap();
        assert!(!text.contains(char::is_whitespace));
        assert_eq!(decode(&text).unwrap(), report);
        let mut twice = report.clone();
        if let MutantsOutcome::Ran { runs, .. } = &mut twice.outcome {
            runs.push(runs[0].clone());
        }
        let err = decode(&encode(&twice).unwrap()).unwrap_err().to_string();
        assert!(
            err.contains("names the run `a` of `tests/test_calc.mutations.json` twice"),
            "{err}"
        );
        // A side report is not a mutants report.
        let side = crate::gate::encode::SideReport::error("base", &"b".repeat(40), "x");
        let side = crate::gate::encode::encode(&side, TEST_REPORT_CAP).unwrap();
        assert!(decode(&side).is_err());
        // Over the cap, an error marker says so.
        let huge: Vec<TestCase> = (0..40_000_u64)
            .map(|i| {
                let name = format!("test_{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                case(&name, Status::Passed, "", None)
            })
            .collect();
        let big = ran(
            huge,
            MutantResult::Error {
                message: "x".into(),
            },
            None,
        );
        let back = decode(&encode(&big).unwrap()).unwrap();
        match back.outcome {
            MutantsOutcome::Error { message } => assert!(message.contains("over the"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}

//! The normalised test report: what every reader produces and what the classifier reads.
//!
//! Paths are repo-relative with `/` separators, normalised (no `.`, `..`, leading `./` or
//! `/`). Test names are full names: suite path and test name joined with " > " (for pytest:
//! the node id part after the file, e.g. `TestCase::test_x`; for cargo: the libtest path,
//! e.g. `tests::parses`).

use serde::{Deserialize, Serialize};

/// The outcome of one test case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// It passed.
    Passed,
    /// It failed, errored or timed out.
    Failed,
    /// It was skipped, ignored, pending or todo.
    Skipped,
}

/// One test case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCase {
    /// Full name, suite path included.
    pub name: String,
    /// Outcome.
    pub status: Status,
    /// Failure messages (first line or first 2 KB of each), empty when passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// The type of the first failure when the report names it: a JUnit `type` attribute,
    /// or the exception at the end of a pytest traceback (`AssertionError`, `TypeError`).
    /// A JUnit `<error>` without a type is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// One test file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileResult {
    /// Repo-relative path.
    pub path: String,
    /// Set when the file failed to load or compile (collection error, import error, compile
    /// error of a Rust test target): the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_error: Option<String>,
    /// Set when the file's run ended without a report (it timed out, ran out of memory or
    /// was killed): how. Every test of the file counts as failed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crashed: Option<String>,
    /// Test cases in report order.
    pub tests: Vec<TestCase>,
}

/// What a failed command did, for people: carried by an error marker so that an `error`
/// verdict says which step failed and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDetail {
    /// The step: `install`, `build` or the test run's name (`base`, `head`, …).
    pub step: String,
    /// The command as run.
    pub command: String,
    /// How it ended: `exit 1`, `killed by signal 9`, `timed out`.
    pub how: String,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The last lines of its combined output (at most 20 lines and 4 KiB).
    pub tail: String,
}

impl RunDetail {
    /// The tail's lines as they may be shown: control characters (an escape sequence, a
    /// carriage return) replaced by `?`, tabs kept.
    pub fn shown_tail(&self) -> impl Iterator<Item = String> + '_ {
        self.tail.lines().map(|line| {
            line.chars()
                .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
                .collect()
        })
    }

    /// The line of the tail that most likely says what went wrong: the first that names an
    /// error, else the last non-blank one.
    pub fn first_error(&self) -> &str {
        let lines = || self.tail.lines().map(str::trim).filter(|l| !l.is_empty());
        lines()
            .find(|l| {
                let lower = l.to_ascii_lowercase();
                lower.contains("error") || lower.contains("err!") || lower.contains("fatal")
            })
            .or_else(|| lines().next_back())
            .unwrap_or("")
    }
}

/// A whole normalised report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestReport {
    /// Files in report order. A file may appear only once; readers merge repeated
    /// testsuite elements of the same file.
    pub files: Vec<FileResult>,
}

impl TestReport {
    /// The files `keep_file` chooses, with the tests `keep_test` chooses of each, and no
    /// failure messages (a load error keeps its mark, not its text): what a rerun or a run
    /// of the suite carries to the judge, which reads only statuses there.
    pub(crate) fn statuses_only(
        &self,
        keep_file: impl Fn(&FileResult) -> bool,
        keep_test: impl Fn(&FileResult, &TestCase) -> bool,
    ) -> TestReport {
        let files = self
            .files
            .iter()
            .filter(|f| keep_file(f))
            .map(|f| FileResult {
                path: f.path.clone(),
                load_error: f.load_error.as_ref().map(|_| String::new()),
                crashed: f.crashed.clone(),
                tests: f
                    .tests
                    .iter()
                    .filter(|t| keep_test(f, t))
                    .map(|t| TestCase {
                        name: t.name.clone(),
                        status: t.status,
                        messages: Vec::new(),
                        error_type: None,
                    })
                    .collect(),
            })
            .collect();
        TestReport { files }
    }
}

/// Messages that mean "the thing under test does not exist on base", by ecosystem.
const MISSING_SYMBOL: &[&str] = &[
    // Python
    "ImportError",
    "ModuleNotFoundError",
    "cannot import name",
    // JavaScript and TypeScript
    "is not a function",
    "is not a constructor",
    "Cannot find module",
    "does not provide an export",
    "Failed to load url",
    "is not exported",
    "has no exported member",
    // Rust: unresolved name, import, method, path, type
    "E0425",
    "E0432",
    "E0433",
    "E0412",
    "E0599",
    // Go
    "undefined:",
    // Java
    "cannot find symbol",
];

/// Whether a failure message names a missing symbol.
pub(crate) fn names_missing_symbol(message: &str) -> bool {
    if MISSING_SYMBOL.iter().any(|m| message.contains(m)) {
        return true;
    }
    // Python: `AttributeError: module 'x' has no attribute 'y'`.
    message.contains("AttributeError: module '") && message.contains("has no attribute")
}

/// A report of `(file, name, status, first message)` rows, files in order of first
/// appearance: for the tests of the modules that read reports.
#[cfg(test)]
pub(crate) fn report_of(tests: &[(&str, &str, Status, &str)]) -> TestReport {
    let mut files: Vec<FileResult> = Vec::new();
    for (file, name, status, message) in tests {
        let case = TestCase {
            name: (*name).into(),
            status: *status,
            messages: if message.is_empty() {
                vec![]
            } else {
                vec![(*message).into()]
            },
            error_type: None,
        };
        match files.iter_mut().find(|f| f.path == *file) {
            Some(f) => f.tests.push(case),
            None => files.push(FileResult {
                path: (*file).into(),
                load_error: None,
                crashed: None,
                tests: vec![case],
            }),
        }
    }
    TestReport { files }
}

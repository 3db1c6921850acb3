//! What the readers share: the formats, the reading context, the error type, path
//! normalisation, the per-file report builder and the mapping of test names to files.

use std::collections::HashMap;
use std::fmt;

use regex::Regex;
use thiserror::Error;

use crate::gate::test_report::{FileResult, Status, TestCase, TestReport};

/// Longest message kept, in bytes, for a failure or a load error.
pub(super) const MAX_MESSAGE: usize = 2048;

/// A report format the gate can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Format {
    /// JUnit XML as written by pytest, vitest, jest-junit, cargo-nextest, Surefire or gotestsum.
    Junit,
    /// The report of vitest's `--reporter=json`.
    VitestJson,
    /// The report of jest's `--json`.
    JestJson,
    /// The plain text that stable `cargo test` prints, stdout and stderr together.
    LibtestPlain,
    /// The event stream of `go test -json`, one JSON object a line.
    GoTestJson,
    /// The records of repromin's node:test reporter, one JSON object a line.
    NodeTest,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Junit => "JUnit XML",
            Format::VitestJson => "vitest JSON",
            Format::JestJson => "jest JSON",
            Format::LibtestPlain => "libtest output",
            Format::GoTestJson => "go test -json output",
            Format::NodeTest => "node:test report",
        })
    }
}

/// What is wrong with a report that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// The bytes are not UTF-8; the offset of the first bad byte.
    NotUtf8(usize),
    /// The document does not parse: where ("byte 120", "line 3 column 7") and the parser's words.
    Malformed(String),
    /// The XML contains a `<!DOCTYPE` or `<!ENTITY` declaration, which is refused unread.
    Doctype,
    /// The document parses but does not have the shape of this format.
    NotAReport(String),
    /// A text format that is not UTF-8, with the decoder's own words.
    Utf8(std::str::Utf8Error),
    /// A node:test record with a status the reporter never writes, and its line.
    UnknownStatus {
        /// The status as written.
        status: String,
        /// The record's line, from 1.
        line: usize,
    },
}

/// A report that could not be read: the format it was read as, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}", describe(.format, .problem))]
pub(crate) struct ReadError {
    /// The format the bytes were read as.
    pub format: Format,
    /// What is wrong with them.
    pub problem: Problem,
}

pub(super) fn describe(format: &Format, problem: &Problem) -> String {
    match problem {
        Problem::NotUtf8(at) => format!("{format} is not UTF-8 (bad byte at {at})"),
        Problem::Malformed(what) => format!("malformed {format} at {what}"),
        Problem::Doctype => format!("{format}: DOCTYPE/ENTITY declarations are refused"),
        Problem::NotAReport(what) => format!("not a {format} report: {what}"),
        Problem::Utf8(e) => format!("{format} is not UTF-8: {e}"),
        Problem::UnknownStatus { status, line } => {
            format!("unknown node:test status `{status}` at line {line}")
        }
    }
}

pub(super) fn fail(format: Format, problem: Problem) -> ReadError {
    ReadError { format, problem }
}

pub(super) fn malformed(format: Format, what: String) -> ReadError {
    fail(format, Problem::Malformed(what))
}

pub(super) fn refuse(format: Format, what: String) -> ReadError {
    fail(format, Problem::NotAReport(what))
}

pub(super) fn utf8(format: Format, bytes: &[u8]) -> Result<&str, ReadError> {
    let text = std::str::from_utf8(bytes);
    text.map_err(|e| fail(format, Problem::NotUtf8(e.valid_up_to())))
}

/// What a reader needs to know besides the report itself.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadContext<'a> {
    /// Absolute path of the tree the tests ran in (the worktree root), used to make paths
    /// repo-relative.
    pub root: &'a str,
    /// Test files the runner was asked to run (repo-relative); used by formats that do not
    /// carry file paths (libtest plain output: every test result of a target is attributed
    /// to the target's test file; JUnit from cargo-nextest: map `binary_id`/classname to a
    /// file).
    pub selected: &'a [String],
}

/// Resolves `path` against `root` and returns it relative to `root` with `/` separators.
///
/// `.` and `..` are resolved lexically (no symlinks are followed, nothing is read from disk);
/// a relative `path` is taken relative to `root`. Returns `None` when `root` is not absolute
/// or when the resolved path is `root` itself or lies outside it.
pub(crate) fn normalize_path(root: &str, path: &str) -> Option<String> {
    if !root.starts_with('/') {
        return None;
    }
    let base = lexical(root, Vec::new());
    let abs = path.starts_with('/');
    let parts = lexical(path, base.iter().copied().filter(|_| !abs).collect());
    let rest = parts.strip_prefix(base.as_slice())?;
    (!rest.is_empty()).then(|| rest.join("/"))
}

pub(super) fn lexical<'a>(path: &'a str, mut out: Vec<&'a str>) -> Vec<&'a str> {
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => drop(out.pop()),
            p => out.push(p),
        }
    }
    out
}

/// Trims a message and cuts it to [`MAX_MESSAGE`] bytes on a character boundary; what the
/// cut leaves at the end is trimmed too.
pub(super) fn clip(s: &str) -> String {
    crate::text::cut(s.trim(), MAX_MESSAGE)
        .trim_end()
        .to_string()
}

/// `message` without `prefix` (the worktree root and its `/`), also where removing one
/// joins another from the text on its two sides; read from a window a few times the
/// size a message keeps, so the removals stay cheap.
pub(super) fn without_root(message: &str, prefix: &str) -> String {
    let mut text = crate::text::cut(message, MAX_MESSAGE * 4).to_string();
    while !prefix.is_empty() && text.contains(prefix) {
        text = text.replace(prefix, "");
    }
    text
}

/// Collects results file by file, merging repeated files in first-seen order.
#[derive(Default)]
pub(super) struct Builder {
    report: TestReport,
    index: HashMap<String, usize>,
}

impl Builder {
    pub(super) fn file(&mut self, path: &str) -> &mut FileResult {
        let files = &mut self.report.files;
        let i = *self.index.entry(path.to_string()).or_insert_with(|| {
            let (path, tests) = (path.to_string(), Vec::new());
            files.push(FileResult {
                path,
                load_error: None,
                crashed: None,
                tests,
            });
            files.len() - 1
        });
        &mut files[i]
    }

    pub(super) fn test(&mut self, path: &str, name: String, status: Status, messages: Vec<String>) {
        self.typed_test(path, name, status, messages, None);
    }

    pub(super) fn typed_test(
        &mut self,
        path: &str,
        name: String,
        status: Status,
        mut messages: Vec<String>,
        error_type: Option<String>,
    ) {
        messages.retain(|m| !m.trim().is_empty());
        let error_type = error_type.filter(|_| status == Status::Failed);
        self.file(path).tests.push(TestCase {
            name,
            status,
            messages,
            error_type,
        });
    }

    pub(super) fn load_error(&mut self, path: &str, message: &str) {
        let file = self.file(path);
        file.load_error = file.load_error.take().or_else(|| Some(message.to_string()));
    }

    pub(super) fn load_errors(&mut self, paths: &[String], message: &str) {
        for path in paths {
            self.load_error(path, message);
        }
    }

    /// Makes messages relative to `root` and cuts them to size.
    pub(super) fn finish(mut self, root: &str) -> TestReport {
        let prefix = format!("{}/", root.trim_end_matches('/'));
        let tidy = |m: &mut String| *m = clip(&without_root(m, &prefix));
        for file in &mut self.report.files {
            file.load_error.iter_mut().for_each(tidy);
            let messages = file.tests.iter_mut().flat_map(|t| &mut t.messages);
            messages.for_each(tidy);
        }
        self.report
    }
}

/// The root and the selected files, normalised, sorted and without duplicates.
pub(super) struct Files<'a> {
    root: &'a str,
    pub(super) selected: Vec<String>,
}

impl<'a> Files<'a> {
    pub(super) fn new(ctx: &ReadContext<'a>) -> Self {
        let norm = |s: &String| normalize_path(ctx.root, s);
        let mut selected: Vec<_> = ctx.selected.iter().filter_map(norm).collect();
        selected.sort();
        selected.dedup();
        Files {
            root: ctx.root,
            selected,
        }
    }

    pub(super) fn normalize(&self, path: &str) -> Option<String> {
        normalize_path(self.root, path)
    }

    pub(super) fn pick(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.selected.iter().filter(|f| keep(f)).cloned().collect()
    }

    /// The selected files of Rust test target `name`: `tests/NAME.rs` or `tests/NAME/main.rs`.
    pub(super) fn rust_target(&self, name: &str) -> Vec<String> {
        let ends = |f: &str, tail: &str| f == tail || f.ends_with(&format!("/{tail}"));
        self.pick(|f| {
            ends(f, &format!("tests/{name}.rs")) || ends(f, &format!("tests/{name}/main.rs"))
        })
    }

    /// The selected Rust files under a `tests/` directory.
    pub(super) fn rust_tests(&self) -> Vec<String> {
        self.pick(|f| f.ends_with(".rs") && (f.starts_with("tests/") || f.contains("/tests/")))
    }

    /// The Python file among `candidates` whose module path (or a dotted tail of it) starts
    /// `dotted`, with the dotted segments left over. The longest module wins.
    pub(super) fn python<'f>(
        candidates: impl Iterator<Item = &'f String>,
        dotted: &str,
    ) -> Option<(String, Vec<String>)> {
        let segs: Vec<&str> = dotted.split('.').collect();
        let mut best: Option<(usize, &String)> = None;
        for (file, module) in candidates.filter_map(|f| Some((f, f.strip_suffix(".py")?))) {
            let module: Vec<&str> = module.split('/').collect();
            let tail = (0..module.len()).find(|&k| segs.starts_with(&module[k..]));
            let n = tail.map_or(0, |k| module.len() - k);
            if n > best.map_or(0, |(b, _)| b) {
                best = Some((n, file));
            }
        }
        best.map(|(n, f)| (f.clone(), segs[n..].iter().map(|s| s.to_string()).collect()))
    }

    /// The selected JVM source file of the class `class` (`com.x.FooTest`).
    pub(super) fn java(&self, class: &str) -> Option<String> {
        self.selected.iter().find_map(|f| {
            let (stem, ext) = f.rsplit_once('.')?;
            let dotted = stem.replace('/', ".");
            let hit = dotted == class || dotted.ends_with(&format!(".{class}"));
            (hit && ["java", "kt", "groovy", "scala"].contains(&ext)).then(|| f.clone())
        })
    }
}

/// "line L column C: what", without serde's own trailing position.
pub(super) fn json_position(e: &serde_json::Error, line: usize) -> String {
    let text = e.to_string();
    let what = text.rsplit_once(" at line ").map_or(&*text, |(w, _)| w);
    format!("line {line} column {}: {what}", e.column())
}

pub(super) fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the readers' regular expressions are valid")
}

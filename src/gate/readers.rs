//! Readers that turn the reports of test runners into the gate's normalised [`TestReport`]:
//! JUnit XML (pytest, vitest, jest-junit, cargo-nextest, Maven Surefire, gotestsum), the JSON
//! reports of vitest and jest, the plain text of `cargo test`, and `go test -json`. Every path
//! a report names goes through [`normalize_path`]: it is resolved lexically against the
//! worktree root and kept only when it lies under that root, so a report can never make the
//! gate talk about a file outside the tree. Nothing here touches the filesystem. Formats that
//! carry no file paths are mapped onto the test files the runner was asked to run
//! ([`ReadContext::selected`]); results that map to no file are dropped, not reported.
//! Messages are trimmed, cut to 2 KB, and rid of every `ROOT/` prefix so that runs in two
//! worktrees read alike.

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion, escape::resolve_predefined_entity};
use regex::Regex;
use serde::Deserialize;
use thiserror::Error;

use crate::gate::test_report::{FileResult, Status, TestCase, TestReport};

/// Longest message kept, in bytes, for a failure or a load error.
const MAX_MESSAGE: usize = 2048;

/// A report format the gate can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
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
pub enum Problem {
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
pub struct ReadError {
    /// The format the bytes were read as.
    pub format: Format,
    /// What is wrong with them.
    pub problem: Problem,
}

fn describe(format: &Format, problem: &Problem) -> String {
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

fn fail(format: Format, problem: Problem) -> ReadError {
    ReadError { format, problem }
}

fn malformed(format: Format, what: String) -> ReadError {
    fail(format, Problem::Malformed(what))
}

fn refuse(format: Format, what: String) -> ReadError {
    fail(format, Problem::NotAReport(what))
}

fn utf8(format: Format, bytes: &[u8]) -> Result<&str, ReadError> {
    let text = std::str::from_utf8(bytes);
    text.map_err(|e| fail(format, Problem::NotUtf8(e.valid_up_to())))
}

/// What a reader needs to know besides the report itself.
#[derive(Clone, Copy, Debug)]
pub struct ReadContext<'a> {
    /// Absolute path of the tree the tests ran in (the worktree root), used to make paths
    /// repo-relative.
    pub root: &'a str,
    /// Test files the runner was asked to run (repo-relative); used by formats that do not
    /// carry file paths (libtest plain output: every test result of a target is attributed
    /// to the target's test file; JUnit from cargo-nextest: map `binary_id`/classname to a
    /// file).
    pub selected: &'a [String],
}

/// Reads one report of `format` from `bytes`.
///
/// Results that cannot be tied to a file under `ctx.root` are dropped; only a document that
/// does not parse as `format` at all is an error.
pub fn read(format: Format, bytes: &[u8], ctx: &ReadContext) -> Result<TestReport, ReadError> {
    let files = Files::new(ctx);
    let report = match format {
        Format::Junit => read_junit(bytes, &files)?,
        Format::VitestJson | Format::JestJson => read_js_json(format, bytes, &files)?,
        Format::LibtestPlain => read_libtest(&String::from_utf8_lossy(bytes), &files),
        Format::GoTestJson => read_go_json(utf8(format, bytes)?, &files)?,
        Format::NodeTest => return crate::gate::node_test::read(bytes, ctx),
    };
    Ok(report.finish(ctx.root))
}

/// Resolves `path` against `root` and returns it relative to `root` with `/` separators.
///
/// `.` and `..` are resolved lexically (no symlinks are followed, nothing is read from disk);
/// a relative `path` is taken relative to `root`. Returns `None` when `root` is not absolute
/// or when the resolved path is `root` itself or lies outside it.
pub fn normalize_path(root: &str, path: &str) -> Option<String> {
    if !root.starts_with('/') {
        return None;
    }
    let base = lexical(root, Vec::new());
    let abs = path.starts_with('/');
    let parts = lexical(path, base.iter().copied().filter(|_| !abs).collect());
    let rest = parts.strip_prefix(base.as_slice())?;
    (!rest.is_empty()).then(|| rest.join("/"))
}

fn lexical<'a>(path: &'a str, mut out: Vec<&'a str>) -> Vec<&'a str> {
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => drop(out.pop()),
            p => out.push(p),
        }
    }
    out
}

/// Trims a message and cuts it to [`MAX_MESSAGE`] bytes on a character boundary.
fn clip(s: &str) -> String {
    let s = s.trim();
    let mut end = s.len().min(MAX_MESSAGE);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Collects results file by file, merging repeated files in first-seen order.
#[derive(Default)]
struct Builder {
    report: TestReport,
    index: HashMap<String, usize>,
}

impl Builder {
    fn file(&mut self, path: &str) -> &mut FileResult {
        let files = &mut self.report.files;
        let i = *self.index.entry(path.to_string()).or_insert_with(|| {
            let (path, tests) = (path.to_string(), Vec::new());
            files.push(FileResult {
                path,
                load_error: None,
                tests,
            });
            files.len() - 1
        });
        &mut files[i]
    }

    fn test(&mut self, path: &str, name: String, status: Status, messages: Vec<String>) {
        self.typed_test(path, name, status, messages, None);
    }

    fn typed_test(
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

    fn load_error(&mut self, path: &str, message: &str) {
        let file = self.file(path);
        file.load_error = file.load_error.take().or_else(|| Some(message.to_string()));
    }

    fn load_errors(&mut self, paths: &[String], message: &str) {
        for path in paths {
            self.load_error(path, message);
        }
    }

    /// Makes messages relative to `root` and cuts them to size.
    fn finish(mut self, root: &str) -> TestReport {
        let prefix = format!("{}/", root.trim_end_matches('/'));
        let tidy = |m: &mut String| *m = clip(&m.replace(&prefix, ""));
        for file in &mut self.report.files {
            file.load_error.iter_mut().for_each(tidy);
            let messages = file.tests.iter_mut().flat_map(|t| &mut t.messages);
            messages.for_each(tidy);
        }
        self.report
    }
}

/// The root and the selected files, normalised, sorted and without duplicates.
struct Files<'a> {
    root: &'a str,
    selected: Vec<String>,
}

impl<'a> Files<'a> {
    fn new(ctx: &ReadContext<'a>) -> Self {
        let norm = |s: &String| normalize_path(ctx.root, s);
        let mut selected: Vec<_> = ctx.selected.iter().filter_map(norm).collect();
        selected.sort();
        selected.dedup();
        Files {
            root: ctx.root,
            selected,
        }
    }

    fn normalize(&self, path: &str) -> Option<String> {
        normalize_path(self.root, path)
    }

    fn pick(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.selected.iter().filter(|f| keep(f)).cloned().collect()
    }

    /// The selected files of Rust test target `name`: `tests/NAME.rs` or `tests/NAME/main.rs`.
    fn rust_target(&self, name: &str) -> Vec<String> {
        let ends = |f: &str, tail: &str| f == tail || f.ends_with(&format!("/{tail}"));
        self.pick(|f| {
            ends(f, &format!("tests/{name}.rs")) || ends(f, &format!("tests/{name}/main.rs"))
        })
    }

    /// The selected Rust files under a `tests/` directory.
    fn rust_tests(&self) -> Vec<String> {
        self.pick(|f| f.ends_with(".rs") && (f.starts_with("tests/") || f.contains("/tests/")))
    }

    /// The Python file among `candidates` whose module path (or a dotted tail of it) starts
    /// `dotted`, with the dotted segments left over. The longest module wins.
    fn python<'f>(
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
    fn java(&self, class: &str) -> Option<String> {
        self.selected.iter().find_map(|f| {
            let (stem, ext) = f.rsplit_once('.')?;
            let dotted = stem.replace('/', ".");
            let hit = dotted == class || dotted.ends_with(&format!(".{class}"));
            (hit && ["java", "kt", "groovy", "scala"].contains(&ext)).then(|| f.clone())
        })
    }
}

/// Maps Go package import paths to the selected `_test.go` files of their directories.
///
/// The module path is guessed once per report: the package and directory sharing the most
/// trailing path segments fix both the module path and the directory the module lives in.
/// Without such a pair, a selected file at the root makes the shortest package the root one.
struct GoMap {
    /// (directory, file) for every selected `_test.go` file, in path order.
    files: Vec<(String, String)>,
    /// The module path and the module's directory in the tree, once known.
    module: Option<(String, String)>,
}

impl GoMap {
    fn new<'p>(files: &Files, packages: impl Iterator<Item = &'p str>) -> Self {
        let parent = |f: &str| f.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let tests = files.pick(|f| f.ends_with("_test.go"));
        let files: Vec<_> = tests.into_iter().map(|f| (parent(&f), f)).collect();
        // Drops the last `n` segments of a path.
        let head = |s: &str, n: usize| s.rsplitn(n + 1, '/').nth(n).unwrap_or("").to_string();
        let mut best: Option<(usize, String, String)> = None;
        let mut shortest: Option<&str> = None;
        for pkg in packages.filter(|p| !p.is_empty() && !p.contains(char::is_whitespace)) {
            shortest = shortest.filter(|s| s.len() <= pkg.len()).or(Some(pkg));
            let p: Vec<&str> = pkg.rsplit('/').collect();
            for (dir, _) in files.iter().filter(|(d, _)| !d.is_empty()) {
                let d: Vec<&str> = dir.rsplit('/').collect();
                let n = p.iter().zip(&d).take_while(|(a, b)| a == b).count();
                if n > 0 && best.as_ref().is_none_or(|(m, ..)| n > *m) {
                    best = Some((n, head(pkg, n), head(dir, n)));
                }
            }
        }
        let root_file = files.iter().any(|(d, _)| d.is_empty());
        let module = match best {
            Some((_, module, dir)) => Some((module, dir)),
            None if root_file => shortest.map(|s| (s.to_string(), String::new())),
            None => None,
        };
        GoMap { files, module }
    }

    fn package_files(&self, pkg: &str) -> Vec<String> {
        let Some((module, base)) = &self.module else {
            return Vec::new();
        };
        let rel = match pkg.strip_prefix(module.as_str()) {
            Some(r) if module.is_empty() || r.is_empty() || r.starts_with('/') => {
                r.strip_prefix('/').unwrap_or(r)
            }
            _ => return Vec::new(),
        };
        let dir = format!("{base}/{rel}");
        let hit = self
            .files
            .iter()
            .filter(|(d, _)| d == dir.trim_matches('/'));
        hit.map(|(_, f)| f.clone()).collect()
    }
}

// JUnit XML ----------------------------------------------------------------------------------

/// A `<testcase>`, or a failure directly under a `<testsuite>`, as read from the XML.
#[derive(Default)]
struct RawCase {
    suite: Option<usize>,
    classname: String,
    name: String,
    file: Option<String>,
    status: Option<Status>,
    messages: Vec<String>,
    text: String,
    /// The type of the first `<failure>` or `<error>` (see [`TestCase::error_type`]).
    error_type: Option<String>,
    collection: bool,
    suite_level: bool,
}

/// An open `<failure>` or `<error>`: its `message` and `type` attributes, whether it is an
/// `<error>`, its text so far (bounded), and the end of its whole text.
#[derive(Default)]
struct Child {
    message: String,
    kind: Option<String>,
    error: bool,
    text: String,
    tail: String,
}

/// How much of the end of a failure's text is kept to find pytest's crash line.
const TAIL: usize = 512;

static CRASH_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\S.*:\d+: ([A-Za-z_][A-Za-z0-9_.]*)$"));

impl Child {
    fn push(&mut self, text: &str) {
        if self.text.len() < 4 * MAX_MESSAGE {
            self.text.push_str(text);
        }
        self.tail.push_str(text);
        if self.tail.len() > 2 * TAIL {
            let mut cut = self.tail.len() - TAIL;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.drain(..cut);
        }
    }

    /// The `type` attribute; else, for a `<failure>`, the exception that pytest names on the
    /// last line of a traceback (`tests/test_x.py:3: AssertionError`); else `error` for an
    /// `<error>`.
    fn error_type(&self) -> Option<String> {
        if let Some(kind) = self
            .kind
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            return Some(kind.to_string());
        }
        if self.error {
            return Some("error".into());
        }
        let last = self.tail.lines().map(str::trim).rfind(|l| !l.is_empty())?;
        CRASH_LINE.captures(last).map(|c| c[1].to_string())
    }
}

/// A `<testsuite>`: its name and its `file` attribute (inherited from an enclosing suite).
struct RawSuite(String, Option<String>);

/// How a JUnit key (a classname or a suite name) was tied to a file.
enum Mode {
    Path,
    Rust,
    Python(Vec<String>),
    Java(Option<String>),
    Go(String),
}

enum Loc {
    Unknown,
    Drop,
    Found(String, Mode),
}

/// Extensions that mark a key as a file path even without a `/`.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "vue", "svelte",
];
/// Extensions that mark a `/`-separated key as a file path.
const SOURCE_EXTENSIONS: &[&str] = &["py", "rs", "go", "java", "kt", "rb"];

/// JUnit XML. A case's file is, in this order: its own or its suite's `file` attribute; its
/// classname (or, for pytest collection errors, its name) read as a file path (vitest), a
/// nextest binary id, a pytest module path, a JVM class or a Go package; its suite's name read
/// the same way. A failed case that names its file (vitest), or a pytest collection error,
/// becomes the file's load error, as does a failure directly under a `<testsuite>`.
fn read_junit(bytes: &[u8], files: &Files) -> Result<Builder, ReadError> {
    let lower = bytes.to_ascii_lowercase();
    let has = |needle: &[u8]| lower.windows(needle.len()).any(|w| w == needle);
    if has(b"<!doctype") || has(b"<!entity") {
        return Err(fail(Format::Junit, Problem::Doctype));
    }
    let (suites, cases) = parse_junit(utf8(Format::Junit, bytes)?.trim_start_matches('\u{feff}'))?;
    let names = cases.iter().map(|c| c.classname.as_str());
    let go = GoMap::new(files, names.chain(suites.iter().map(|s| s.0.as_str())));
    let mut out = Builder::default();
    for case in &cases {
        let suite = case.suite.map(|i| &suites[i]);
        let suite_name = suite.map_or("", |s| s.0.as_str());
        let (loc, from_name) = match case.file.as_deref().or(suite.and_then(|s| s.1.as_deref())) {
            Some(file) => match files.normalize(file) {
                None => (Loc::Drop, false),
                Some(p) => match Files::python(std::iter::once(&p), &case.classname) {
                    Some((_, rest)) => (Loc::Found(p, Mode::Python(rest)), false),
                    None => (Loc::Found(p, Mode::Path), false),
                },
            },
            None => {
                let mut keys = vec![(case.classname.as_str(), false)];
                if case.classname.is_empty() {
                    keys.push((case.name.as_str(), true));
                }
                if case.suite_level {
                    keys.clear();
                }
                keys.push((suite_name, false));
                let mut found = keys.into_iter().map(|(k, n)| (locate(k, files, &go), n));
                found
                    .find(|(l, _)| !matches!(l, Loc::Unknown))
                    .unwrap_or((Loc::Unknown, false))
            }
        };
        let Loc::Found(path, mode) = loc else {
            continue;
        };
        let status = case.status.unwrap_or(Status::Passed);
        let failed = status == Status::Failed;
        let message = case.messages.first().map_or("failed", String::as_str);
        if let Mode::Go(pkg) = &mode {
            let build = case.text.contains("[build failed]") || case.text.contains("undefined:");
            let main = matches!(case.name.as_str(), "" | "TestMain");
            if failed && (case.suite_level || (build && main)) {
                let undefined = case.text.lines().find(|l| l.contains("undefined:"));
                out.load_errors(&go.package_files(pkg), undefined.unwrap_or(message));
                continue;
            }
        }
        let names_file = from_name || files.normalize(&case.name).as_deref() == Some(path.as_str());
        let import = case.text.contains("ImportError") || case.text.contains("ModuleNotFoundError");
        let py = path.ends_with(".py");
        if case.suite_level || (failed && (case.collection || (names_file && (!py || import)))) {
            // pytest puts the exception on lines starting with "E "; that is the useful part.
            let e_lines = case.text.lines().filter_map(|l| l.strip_prefix("E "));
            let pytest_error = e_lines.map(str::trim).collect::<Vec<_>>().join("\n");
            let useful = py && !pytest_error.is_empty();
            out.load_error(&path, if useful { &pytest_error } else { message });
            continue;
        }
        let name = match mode {
            Mode::Python(rest) => [rest, vec![case.name.clone()]].concat().join("::"),
            Mode::Java(Some(nested)) => format!("{nested} > {}", case.name),
            _ => case.name.clone(),
        };
        let messages = case.messages.clone();
        out.typed_test(&path, name, status, messages, case.error_type.clone());
    }
    Ok(out)
}

/// Ties one JUnit key (a classname or a suite name) to a file, trying each producer's rule.
fn locate(key: &str, files: &Files, go: &GoMap) -> Loc {
    let last = key.rsplit('/').next().unwrap_or(key);
    let ext = last.rsplit_once('.').map_or("", |(_, e)| e);
    let norm = files.normalize(key);
    let selected = norm.as_ref().is_some_and(|p| files.selected.contains(p));
    let source = key.contains('/') && SOURCE_EXTENSIONS.contains(&ext);
    if key.is_empty() {
        return Loc::Unknown;
    } else if SCRIPT_EXTENSIONS.contains(&ext) || source || selected {
        return norm.map_or(Loc::Drop, |p| Loc::Found(p, Mode::Path));
    } else if let Some((_, target)) = key.split_once("::") {
        return match files.rust_target(target).into_iter().next() {
            Some(f) if !target.contains('/') => Loc::Found(f, Mode::Rust),
            _ => Loc::Drop,
        };
    } else if let Some((file, rest)) = Files::python(files.selected.iter(), key) {
        return Loc::Found(file, Mode::Python(rest));
    }
    let (class, nested) = match key.split_once('$') {
        Some((c, n)) => (c, Some(n.replace('$', " > "))),
        None => (key, None),
    };
    if let Some(file) = files.java(class) {
        return Loc::Found(file, Mode::Java(nested));
    }
    match go.package_files(key).into_iter().next() {
        Some(file) => Loc::Found(file, Mode::Go(key.to_string())),
        None => Loc::Unknown,
    }
}

fn attr(e: &BytesStart, key: &str) -> Result<Option<String>, String> {
    for a in e.attributes() {
        let a = a.map_err(|x| x.to_string())?;
        if a.key.local_name().as_ref() == key {
            let value = a
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|x| x.to_string())?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

/// Reads the XML into flat lists of suites and cases, in document order.
fn parse_junit(text: &str) -> Result<(Vec<RawSuite>, Vec<RawCase>), ReadError> {
    let bad = |at: u64, detail: String| malformed(Format::Junit, format!("byte {at}: {detail}"));
    let mut reader = Reader::from_str(text);
    let (mut suites, mut stack, mut cases) =
        (Vec::<RawSuite>::new(), Vec::<usize>::new(), Vec::new());
    let mut case: Option<RawCase> = None;
    // The open <failure>/<error>.
    let mut child: Option<Child> = None;
    let mut rooted = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| bad(reader.error_position(), e.to_string()))?;
        let (at, empty) = (reader.buffer_position(), matches!(event, Event::Empty(_)));
        let text = match event {
            Event::Start(e) | Event::Empty(e) => {
                let get = |k: &str| attr(&e, k).map_err(|d| bad(at, d));
                let tag = e.local_name();
                let tag = tag.as_ref();
                if !rooted && !matches!(tag, "testsuites" | "testsuite") {
                    return Err(refuse(Format::Junit, format!("root element is <{tag}>")));
                }
                rooted = true;
                match tag {
                    "testsuite" => {
                        let inherited = stack.last().and_then(|&i| suites[i].1.clone());
                        let file = get("file")?.or(inherited);
                        suites.push(RawSuite(get("name")?.unwrap_or_default(), file));
                        if !empty {
                            stack.push(suites.len() - 1);
                        }
                    }
                    "testcase" => {
                        let file = get("file")?;
                        let classname = get("classname")?.unwrap_or_default();
                        let name = get("name")?.unwrap_or_default();
                        let c = RawCase {
                            suite: stack.last().copied(),
                            classname,
                            name,
                            file,
                            ..RawCase::default()
                        };
                        if empty { cases.push(c) } else { case = Some(c) }
                    }
                    "failure" | "error" if case.is_some() || !stack.is_empty() => {
                        child = Some(Child {
                            message: get("message")?.unwrap_or_default(),
                            kind: get("type")?,
                            error: tag == "error",
                            ..Child::default()
                        });
                        if empty {
                            finish_child(&mut child, &mut case, &mut cases, &stack);
                        }
                    }
                    "skipped" => case
                        .iter_mut()
                        .for_each(|c| c.status = c.status.or(Some(Status::Skipped))),
                    _ => {}
                }
                None
            }
            Event::Text(t) => Some(t.xml10_content().into_owned()),
            Event::CData(t) => Some(t.xml10_content().into_owned()),
            Event::GeneralRef(r) => Some(match r.resolve_char_ref() {
                Ok(Some(ch)) => ch.to_string(),
                _ => resolve_predefined_entity(&r)
                    .map_or_else(|| format!("&{};", &*r), str::to_string),
            }),
            Event::End(e) => {
                match e.local_name().as_ref() {
                    "testsuite" => drop(stack.pop()),
                    "testcase" => cases.extend(case.take()),
                    "failure" | "error" => finish_child(&mut child, &mut case, &mut cases, &stack),
                    _ => {}
                }
                None
            }
            Event::DocType(_) => return Err(fail(Format::Junit, Problem::Doctype)),
            Event::Eof => break,
            _ => None,
        };
        if let (Some(t), Some(open)) = (text, child.as_mut()) {
            open.push(&t);
        }
    }
    if !rooted {
        return Err(refuse(Format::Junit, "no <testsuite> element".into()));
    }
    Ok((suites, cases))
}

/// Closes a `<failure>`/`<error>`: marks its case failed, or records a suite-level failure.
fn finish_child(
    child: &mut Option<Child>,
    case: &mut Option<RawCase>,
    cases: &mut Vec<RawCase>,
    stack: &[usize],
) {
    let Some(closed) = child.take() else {
        return;
    };
    let error_type = closed.error_type();
    let Child { message, text, .. } = closed;
    let (m, t) = (message.trim(), text.trim());
    let combined = match (m.is_empty() || t.starts_with(m), t.is_empty()) {
        (true, _) => t.to_string(),
        (false, true) => m.to_string(),
        (false, false) => format!("{m}\n{t}"),
    };
    let target = match case {
        Some(c) => c,
        None => {
            cases.push(RawCase {
                suite: stack.last().copied(),
                suite_level: true,
                ..RawCase::default()
            });
            let Some(last) = cases.last_mut() else { return };
            last
        }
    };
    target.status = Some(Status::Failed);
    if target.messages.is_empty() {
        target.error_type = error_type;
    }
    target.collection |= m.contains("collection failure");
    target.text.push_str(&text);
    target.messages.push(combined);
}

// vitest and jest JSON -----------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsFile {
    name: String,
    status: Option<String>,
    message: Option<String>,
    assertion_results: Option<Vec<JsAssertion>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsAssertion {
    ancestor_titles: Option<Vec<String>>,
    title: String,
    status: String,
    failure_messages: Option<Vec<String>>,
}

/// vitest and jest JSON. A test's name is its ancestor titles and title joined with " > "
/// (not `fullName`, which joins with spaces and can make distinct tests collide). A failed
/// file with a message and no assertion results failed to load.
fn read_js_json(format: Format, bytes: &[u8], files: &Files) -> Result<Builder, ReadError> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| malformed(format, json_position(&e, e.line())))?;
    let Some(results) = value.get("testResults") else {
        return Err(refuse(format, "missing testResults".into()));
    };
    let results = Vec::<JsFile>::deserialize(results)
        .map_err(|e| refuse(format, format!("testResults: {e}")))?;
    let mut out = Builder::default();
    for file in results {
        let Some(path) = files.normalize(&file.name) else {
            continue;
        };
        let assertions = file.assertion_results.unwrap_or_default();
        let message = file.message.unwrap_or_default();
        out.file(&path);
        let failed = file.status.as_deref() == Some("failed");
        if failed && assertions.is_empty() && !message.trim().is_empty() {
            out.load_error(&path, &message);
        }
        for a in assertions {
            let mut name = a.ancestor_titles.unwrap_or_default();
            name.push(a.title);
            let status = match a.status.as_str() {
                "passed" | "focused" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped,
            };
            let messages = a.failure_messages.unwrap_or_default();
            out.test(&path, name.join(" > "), status, messages);
        }
    }
    Ok(out)
}

/// "line L column C: what", without serde's own trailing position.
fn json_position(e: &serde_json::Error, line: usize) -> String {
    let text = e.to_string();
    let what = text.rsplit_once(" at line ").map_or(&*text, |(w, _)| w);
    format!("line {line} column {}: {what}", e.column())
}

// libtest plain output -----------------------------------------------------------------------

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the readers' regular expressions are valid")
}

static RUNNING: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*Running (\S.*?)(?: \(.*\))?$"));
static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^test (.+?)(?: - should panic)? \.\.\. (ok|FAILED|ignored)(?:, .*)?$")
});
static SECTION: LazyLock<Regex> = LazyLock::new(|| regex(r"^---- (.+) (?:stdout|stderr) ----$"));
static COMPILE_ERROR: LazyLock<Regex> = LazyLock::new(|| regex(r"^error(?:\[E\d{4}\])?: "));
static COULD_NOT: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"^error: could not compile `[^`]+`(?: \(test "([^"]+)"\))?"#));
static SECTION_END: LazyLock<Regex> = LazyLock::new(|| regex(r"^(---- |failures:$|test result:)"));
static ARROW: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*--> (.+?):\d+:\d+$"));
static GO_MARKER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP))"));

/// The file of a `Running` line such as `tests/x.rs (target/debug/deps/x-hash)`; `unittests`
/// targets give `None`. A path that names the tail of a selected file stands for that file.
fn libtest_target(source: &str, files: &Files) -> Option<String> {
    let path = files
        .normalize(source)
        .filter(|_| !source.starts_with("unittests "))?;
    let hit = files.pick(|f| f == path || f.ends_with(&format!("/{path}")));
    hit.into_iter().next().or(Some(path))
}

/// Adds a `---- NAME stdout ----` section to the failed test NAME of the target's file.
fn attach(out: &mut Builder, target: &Option<Option<String>>, section: Option<(String, String)>) {
    let (Some(Some(path)), Some((name, body))) = (target, section) else {
        return;
    };
    let tests = &mut out.file(path).tests;
    let failed = tests
        .iter_mut()
        .rev()
        .find(|t| t.name == name && t.status == Status::Failed);
    if let Some(t) = failed.filter(|_| !body.trim().is_empty()) {
        t.messages.push(body);
    }
}

/// `cargo test` text. Results belong to the file of the last `Running` line; unit tests and
/// doc tests are dropped. Compile errors, which all come before the first `Running` line,
/// become load errors of the failed target's file, or of every selected `tests/*.rs` file
/// when the target is not named.
fn read_libtest(text: &str, files: &Files) -> Builder {
    let mut out = Builder::default();
    // None before the first `Running` line; then the current target's file, if it maps.
    let mut target: Option<Option<String>> = None;
    let mut section: Option<(String, String)> = None;
    // Compile errors not yet tied to a target: (first line, `-->` location).
    let mut pending: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if let Some((_, body)) = section.as_mut() {
            if !SECTION_END.is_match(line) {
                if body.len() < MAX_MESSAGE {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            attach(&mut out, &target, section.take());
        }
        if let Some(c) = RUNNING.captures(line) {
            target = Some(libtest_target(&c[1], files));
        } else if line.trim_start().starts_with("Doc-tests ") {
            target = Some(None);
        } else if let (Some(Some(path)), Some(c)) = (&target, TEST_LINE.captures(line)) {
            let status = match &c[2] {
                "ok" => Status::Passed,
                "FAILED" => Status::Failed,
                _ => Status::Skipped,
            };
            out.test(path, c[1].to_string(), status, Vec::new());
        } else if let Some(c) = SECTION.captures(line).filter(|_| target.is_some()) {
            section = Some((c[1].to_string(), String::new()));
        } else if target.is_some() {
            continue;
        } else if let Some(c) = COULD_NOT.captures(line) {
            // Everything is compiled before the first test binary runs.
            let message = pending.first().map_or(line, |(m, _)| m.as_str());
            let mut hit = c
                .get(1)
                .map(|n| files.rust_target(n.as_str()))
                .unwrap_or_default();
            if hit.is_empty() {
                let at = pending
                    .iter()
                    .filter_map(|(_, at)| files.normalize(at.as_deref()?));
                hit = at.filter(|p| files.selected.contains(p)).collect();
            }
            if hit.is_empty() {
                hit = files.rust_tests();
            }
            out.load_errors(&hit, message);
            pending.clear();
        } else if COMPILE_ERROR.is_match(line) && !line.starts_with("error: aborting") {
            pending.push((line.to_string(), None));
        } else if let (Some(c), Some((_, at @ None))) = (ARROW.captures(line), pending.last_mut()) {
            *at = Some(c[1].to_string());
        }
    }
    attach(&mut out, &target, section);
    // Compiler diagnostics without a "could not compile" line: the target is unknown.
    if let Some((message, _)) = pending.iter().find(|(_, at)| at.is_some()) {
        out.load_errors(&files.rust_tests(), message);
    }
    out
}

// go test -json ------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoEvent {
    action: String,
    package: Option<String>,
    import_path: Option<String>,
    test: Option<String>,
    output: Option<String>,
    failed_build: Option<String>,
}

#[derive(Default)]
struct GoPackage {
    /// Test name, then its outcome and its output.
    tests: Vec<(String, (Option<Status>, String))>,
    failed: bool,
    build_failed: bool,
    undefined: Option<String>,
}

impl GoPackage {
    fn build_output(&mut self, line: &str) {
        self.build_failed |= line.contains("[build failed]") || line.contains("[setup failed]");
        if line.contains("undefined:") && self.undefined.is_none() {
            self.undefined = Some(line.trim().to_string());
        }
    }
}

/// The value stored under `key`, added in order when new.
fn entry<'v, T: Default>(v: &'v mut Vec<(String, T)>, key: &str) -> &'v mut T {
    let i = match v.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            v.push((key.to_string(), T::default()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

/// `go test -json`. A package's tests all go to the first selected `_test.go` file of its
/// directory (the stream does not say which file holds a test); a failed build becomes the
/// load error of every selected file of the package, with the first `undefined:` line.
fn read_go_json(text: &str, files: &Files) -> Result<Builder, ReadError> {
    let mut packages: Vec<(String, GoPackage)> = Vec::new();
    let mut plain_package = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if !line.starts_with('{') {
            // Older go versions print build errors as plain text on stderr.
            if let Some(header) = line.strip_prefix("# ") {
                plain_package = header.split(' ').next().unwrap_or(header).to_string();
            } else if !plain_package.is_empty() {
                entry(&mut packages, &plain_package).build_output(line);
            }
            continue;
        }
        let event: GoEvent = serde_json::from_str(line)
            .map_err(|e| malformed(Format::GoTestJson, json_position(&e, n + 1)))?;
        let raw = event.package.or(event.import_path).unwrap_or_default();
        let name = raw.split(' ').next().unwrap_or(&raw);
        if name.is_empty() {
            continue;
        }
        let pkg = entry(&mut packages, name);
        let output = event.output.as_deref().unwrap_or("");
        match (event.action.as_str(), event.test) {
            ("build-output", _) | ("output", None) => pkg.build_output(output),
            ("build-fail", _) => pkg.build_failed = true,
            ("fail", None) => {
                pkg.failed = true;
                pkg.build_failed |= event.failed_build.is_some();
            }
            (action, Some(test)) => {
                let (status, log) = entry(&mut pkg.tests, &test);
                match action {
                    "pass" => *status = Some(Status::Passed),
                    "fail" => *status = Some(Status::Failed),
                    "skip" => *status = Some(Status::Skipped),
                    "output" if log.len() < MAX_MESSAGE && !GO_MARKER.is_match(output) => {
                        log.push_str(output)
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let go = GoMap::new(files, packages.iter().map(|(n, _)| n.as_str()));
    let mut out = Builder::default();
    for (name, pkg) in &packages {
        let targets = go.package_files(name);
        let Some(first) = targets.first() else {
            continue;
        };
        if pkg.failed && (pkg.build_failed || pkg.undefined.is_some()) {
            out.load_errors(&targets, pkg.undefined.as_deref().unwrap_or("build failed"));
            continue;
        }
        for (test, (status, log)) in &pkg.tests {
            // A test that started but never finished (a panic, a timeout) counts as failed.
            let status = status.unwrap_or(Status::Failed);
            let log = Some(log.clone()).filter(|_| status == Status::Failed);
            out.test(first, test.clone(), status, log.into_iter().collect());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/root/repo";

    fn run(format: Format, input: &str, selected: &[&str]) -> Result<TestReport, ReadError> {
        let selected: Vec<String> = selected.iter().map(|s| s.to_string()).collect();
        read(
            format,
            input.as_bytes(),
            &ReadContext {
                root: ROOT,
                selected: &selected,
            },
        )
    }

    /// Reads `input` and compares a one-line-per-entry outline of the result with `want`:
    /// `path` (with ` !! ` and the load error's first line), then `  Status name` per test
    /// (with ` | ` and the first line of the first message).
    fn check(format: Format, input: &str, selected: &[&str], want: &str) -> TestReport {
        let report = run(format, input, selected).unwrap();
        let first = |m: &str| m.lines().next().unwrap_or("").to_string();
        let mut out = String::new();
        for f in &report.files {
            let load = f.load_error.as_deref().map(|e| format!(" !! {}", first(e)));
            out += &format!("{}{}\n", f.path, load.unwrap_or_default());
            for t in &f.tests {
                let msg = t.messages.first().map(|m| format!(" | {}", first(m)));
                out += &format!("  {:?} {}{}\n", t.status, t.name, msg.unwrap_or_default());
            }
        }
        assert_eq!(out, want);
        report
    }

    #[test]
    fn normalizes_paths_under_root_only() {
        let n = |path| normalize_path(ROOT, path).unwrap_or_default();
        assert_eq!(n("/root/repo/test/a.test.ts"), "test/a.test.ts");
        assert_eq!(n("./tests/../tests/x.py"), "tests/x.py");
        assert_eq!(
            normalize_path("/root/repo/", "a//b/./c.rs").unwrap(),
            "a/b/c.rs"
        );
        for path in [
            "/root/repo/../evil/x.test.ts",
            "../r/x.rs",
            "/root/repository/x",
        ] {
            assert_eq!(normalize_path(ROOT, path), None, "{path}");
        }
        for path in ["/etc/passwd", "/root/repo", "."] {
            assert_eq!(normalize_path(ROOT, path), None, "{path}");
        }
        assert_eq!(normalize_path("relative", "x.rs"), None);
    }

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.210" timestamp="2025-03-02T10:11:12.000000+00:00" hostname="ci"><testcase classname="tests.test_cachedmethod.AutospecTest" name="test_autospec_no_warnings" time="0.001" /><testcase classname="tests.test_cachedmethod" name="test_module_level" time="0.002"><failure message="assert 1 == 2">def test_module_level():
&gt;       assert 1 == 2
E       assert 1 == 2

tests/test_cachedmethod.py:41: AssertionError</failure></testcase><testcase classname="tests.test_cachedmethod.AutospecTest" name="test_slow" time="0.000"><skipped type="pytest.skip" message="slow">tests/test_cachedmethod.py:50: slow</skipped></testcase><testcase classname="" name="tests.test_tlru" time="0.000"><error message="collection failure">ImportError while importing test module '/root/repo/tests/test_tlru.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package)
tests/test_tlru.py:3: in &lt;module&gt;
    from cachetools import TLRUCache
E   ImportError: cannot import name 'TLRUCache' from 'cachetools' (/root/repo/src/cachetools/__init__.py)</error></testcase></testsuite></testsuites>"#;

    #[test]
    fn pytest_classes_module_functions_and_collection_errors() {
        let want = "tests/test_cachedmethod.py
  Passed AutospecTest::test_autospec_no_warnings
  Failed test_module_level | assert 1 == 2
  Skipped AutospecTest::test_slow
tests/test_tlru.py !! ImportError: cannot import name 'TLRUCache' from 'cachetools' (src/cachetools/__init__.py)
";
        let sel = ["tests/test_cachedmethod.py", "tests/test_tlru.py"];
        let r = check(Format::Junit, PYTEST, &sel, want);
        let m = &r.files[0].tests[1].messages[0];
        assert!(m.starts_with("assert 1 == 2\ndef test_module_level():\n>       assert 1 =="));
        // The crash line names the exception, even past the cut of a long traceback.
        let types: Vec<Option<&str>> = r.files[0]
            .tests
            .iter()
            .map(|t| t.error_type.as_deref())
            .collect();
        assert_eq!(types, [None, Some("AssertionError"), None]);
        let long = PYTEST
            .replace(
                "E       assert 1 == 2\n",
                &format!("{}E       TypeError: no\n", "E   x\n".repeat(3000)),
            )
            .replace(": AssertionError</failure>", ": TypeError</failure>");
        let r = run(Format::Junit, &long, &sel).unwrap();
        assert_eq!(r.files[0].tests[1].error_type.as_deref(), Some("TypeError"));
        assert!(r.files[0].tests[1].messages[0].len() <= MAX_MESSAGE);
        // Without the "collection failure" marker, the module name plus ImportError suffices.
        let bare = PYTEST.replace("collection failure", "");
        let r = run(Format::Junit, &bare, &sel).unwrap();
        assert!(
            r.files[1]
                .load_error
                .as_deref()
                .unwrap()
                .starts_with("ImportError: cannot")
        );
        // xunit1 adds a file attribute; one outside the root is dropped.
        let xml = r#"<testsuites><testsuite name="pytest" tests="2"><testcase classname="tests.test_x.TestA" name="test_b" file="tests/test_x.py" line="4" time="0.1"/><testcase classname="x" name="y" file="/tmp/elsewhere/test_y.py"/></testsuite></testsuites>"#;
        let want = "tests/test_x.py\n  Passed TestA::test_b\n";
        check(Format::Junit, xml, &[], want);
        let xunit1 = PYTEST.replace(
            r#"name="tests.test_tlru""#,
            r#"name="tests.test_tlru" file="tests/test_tlru.py""#,
        );
        let want = "tests/test_tlru.py !! ImportError: cannot import name 'TLRUCache' from 'cachetools' (src/cachetools/__init__.py)\n";
        check(Format::Junit, &xunit1, &[], want);
        assert!(
            r.files[1]
                .load_error
                .as_deref()
                .unwrap()
                .starts_with("ImportError: cannot")
        );
    }

    #[test]
    fn vitest_and_jest_junit() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="2" errors="0" time="0.52">
    <testsuite name="test/base.test.ts" timestamp="2025-03-02T10:11:12.345Z" hostname="ci" tests="2" failures="1" errors="0" skipped="0" time="0.011">
        <testcase classname="test/base.test.ts" name="base &gt; adds" time="0.002"/>
        <testcase classname="test/base.test.ts" name="base &gt; nested &gt; subtracts" time="0.004">
            <failure message="expected 3 to be 4 // Object.is equality" type="AssertionError">
AssertionError: expected 3 to be 4 // Object.is equality
 ❯ test/base.test.ts:9:15
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="test/broken.test.ts" timestamp="2025-03-02T10:11:12.345Z" hostname="ci" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="test/broken.test.ts" name="test/broken.test.ts" time="0">
            <failure message="Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?" type="Error">
Error: Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?
 ❯ loadAndTransform node_modules/vite/dist/node/chunks/dep.js:51969:17
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="test/hooks.test.ts" tests="0" failures="1">
        <error message="beforeAll failed">Error: boom</error>
    </testsuite>
    <testsuite name="test/base.test.ts" tests="1">
        <testcase classname="test/base.test.ts" name="late" time="0"><skipped/></testcase>
    </testsuite>
    <testsuite name="../outside/x.test.ts" tests="1"><testcase classname="../outside/x.test.ts" name="sneaky"/></testsuite>
    <testsuite name="/root/repo/../evil/y.test.ts" tests="1"><testcase classname="/root/repo/../evil/y.test.ts" name="sneaky"/></testsuite>
</testsuites>"#;
        let want = "test/base.test.ts
  Passed base > adds
  Failed base > nested > subtracts | expected 3 to be 4 // Object.is equality
  Skipped late
test/broken.test.ts !! Failed to load url ./missing (resolved id: ./missing) in test/broken.test.ts. Does the file exist?
test/hooks.test.ts !! beforeAll failed
";
        let r = check(Format::Junit, xml, &[], want);
        let m = &r.files[0].tests[1].messages[0];
        assert!(m.ends_with(
            "\nAssertionError: expected 3 to be 4 // Object.is equality\n ❯ test/base.test.ts:9:15"
        ));
        assert_eq!(
            r.files[0].tests[1].error_type.as_deref(),
            Some("AssertionError")
        );
        assert_eq!(
            r.files[0].tests[0].error_type, None,
            "a passed test has no type"
        );
        let xml = r#"<testsuites name="jest tests" tests="3" failures="0"><testsuite name="Calculator" errors="0" failures="0" skipped="0" timestamp="2025-03-02T10:11:12" time="0.4" tests="2" file="/root/repo/src/calc.test.js"><testcase classname="Calculator adds" name="Calculator adds" time="0.001"></testcase><testcase classname="Calculator divides" name="Calculator divides" time="0"><skipped/></testcase></testsuite><testsuite name="No file" tests="1"><testcase classname="No file x" name="No file x"/></testsuite></testsuites>"#;
        let want = "src/calc.test.js\n  Passed Calculator adds\n  Skipped Calculator divides\n";
        check(Format::Junit, xml, &["src/calc.test.js"], want);
    }

    #[test]
    fn nextest_binary_ids_map_to_test_files() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="5" failures="1" errors="0" uuid="4a7e0c29-8b7c-4e0e-9b1f-3d1c1b9a8f77" timestamp="2025-03-02T10:11:12.345+00:00" time="0.031">
    <testsuite name="semver" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="version::tests::parse_basic" classname="semver" timestamp="2025-03-02T10:11:12.350+00:00" time="0.002"></testcase>
    </testsuite>
    <testsuite name="semver::test_version" tests="2" disabled="0" errors="0" failures="1">
        <testcase name="test_parse" classname="semver::test_version" timestamp="2025-03-02T10:11:12.351+00:00" time="0.003"></testcase>
        <testcase name="parse::rejects_empty" classname="semver::test_version" timestamp="2025-03-02T10:11:12.352+00:00" time="0.004">
            <failure type="test failure with exit code 101">thread 'parse::rejects_empty' panicked at tests/test_version.rs:30:5:
assertion failed: Version::parse("").is_err()</failure>
        </testcase>
    </testsuite>
    <testsuite name="semver::serde" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="roundtrip" classname="semver::serde" time="0.001"></testcase>
    </testsuite>
    <testsuite name="semver::bin/semver" tests="1"><testcase name="cli" classname="semver::bin/semver"/></testsuite>
</testsuites>"#;
        let want = "tests/test_version.rs
  Passed test_parse
  Failed parse::rejects_empty | thread 'parse::rejects_empty' panicked at tests/test_version.rs:30:5:
tests/serde/main.rs
  Passed roundtrip
";
        let sel = ["tests/test_version.rs", "tests/serde/main.rs"];
        check(Format::Junit, xml, &sel, want);
    }

    #[test]
    fn surefire_and_gotestsum_junit() {
        let surefire = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="3.0.2" name="com.example.FooTest" time="0.05" tests="2" errors="0" skipped="0" failures="1"><properties><property name="java.version" value="21"/></properties><testcase name="adds" classname="com.example.FooTest" time="0.01"/><testcase name="fails" classname="com.example.FooTest$Nested" time="0"><failure message="expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <1> but was: <2>
	at com.example.FooTest.fails(FooTest.java:12)]]></failure></testcase></testsuite>"#;
        let want = "core/src/test/java/com/example/FooTest.java
  Passed adds
  Failed Nested > fails | expected: <1> but was: <2>
";
        let sel = ["core/src/test/java/com/example/FooTest.java"];
        let r = check(Format::Junit, surefire, &sel, want);
        assert!(r.files[0].tests[1].messages[0].contains("\norg.opentest4j.AssertionFailed"));
        let gotestsum = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" errors="0" time="0.012">
	<testsuite tests="2" failures="1" time="0.004" name="example.com/m/pkg/util" timestamp="2025-03-02T10:11:12Z">
		<properties><property name="go.version" value="go1.22.1 linux/amd64"></property></properties>
		<testcase classname="example.com/m/pkg/util" name="TestJoin" time="0.000"></testcase>
		<testcase classname="example.com/m/pkg/util" name="TestSplit" time="0.000"><failure message="Failed" type="">=== RUN   TestSplit&#xA;    split_test.go:14: got 2 parts&#xA;--- FAIL: TestSplit (0.00s)&#xA;</failure></testcase>
	</testsuite>
	<testsuite tests="1" failures="1" time="0" name="example.com/m/cmd">
		<testcase classname="example.com/m/cmd" name="TestMain" time="0"><failure message="Failed" type=""># example.com/m/cmd [example.com/m/cmd.test]&#xA;cmd/main_test.go:9:2: undefined: run&#xA;FAIL	example.com/m/cmd [build failed]</failure></testcase>
	</testsuite>
</testsuites>"#;
        let want = "pkg/util/join_test.go
  Passed TestJoin
  Failed TestSplit | Failed
cmd/main_test.go !! cmd/main_test.go:9:2: undefined: run
";
        let sel = [
            "pkg/util/split_test.go",
            "pkg/util/join_test.go",
            "cmd/main_test.go",
        ];
        let r = check(Format::Junit, gotestsum, &sel, want);
        assert!(r.files[0].tests[1].messages[0].contains("split_test.go:14: got 2 parts"));
    }

    #[test]
    fn junit_refuses_doctype_and_reports_malformed_xml() {
        let err = |xml: &str| run(Format::Junit, xml, &[]).unwrap_err().to_string();
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><testsuites/>"#;
        assert_eq!(
            err(bomb),
            "JUnit XML: DOCTYPE/ENTITY declarations are refused"
        );
        assert_eq!(err("<testsuites><!entity x 'y'></testsuites>"), err(bomb));
        let e = err("<testsuites><testsuite name=\"a\"></testcase></testsuites>");
        assert!(e.starts_with("malformed JUnit XML at byte 32: "), "{e}");
        assert_eq!(
            err("<html/>"),
            "not a JUnit XML report: root element is <html>"
        );
        assert_eq!(err(""), "not a JUnit XML report: no <testsuite> element");
        let e = run(Format::Junit, "<testsuites name=\"\u{e9}\"/>", &[]).map(|_| ());
        assert_eq!(e, Ok(()));
        let ctx = ReadContext {
            root: ROOT,
            selected: &[],
        };
        let e = read(Format::Junit, b"<testsuites name=\"\xff\"/>", &ctx);
        assert_eq!(e.unwrap_err().problem, Problem::NotUtf8(18));
    }

    const VITEST_JSON: &str = r#"{"numTotalTestSuites":4,"numPassedTestSuites":2,"numFailedTestSuites":2,"numPendingTestSuites":0,"numTotalTests":4,"numPassedTests":2,"numFailedTests":1,"numPendingTests":1,"numTodoTests":0,"startTime":1740910272345,"success":false,"testResults":[
{"assertionResults":[{"ancestorTitles":["base"],"fullName":"base adds","status":"passed","title":"adds","duration":1.2,"failureMessages":[],"location":{"line":4,"column":3},"meta":{}},
{"ancestorTitles":["base","nested"],"fullName":"base nested subtracts","status":"failed","title":"subtracts","duration":2.5,"failureMessages":["AssertionError: expected 3 to be 4 // Object.is equality\n    at /root/repo/test/base.test.ts:9:15"],"meta":{}},
{"ancestorTitles":[],"fullName":"top level","status":"skipped","title":"top level","failureMessages":[],"meta":{}},
{"ancestorTitles":["base"],"fullName":"base later","status":"todo","title":"later","failureMessages":null,"meta":{}}],
"startTime":1740910272400,"endTime":1740910272410,"status":"failed","message":"","name":"/root/repo/test/base.test.ts"},
{"assertionResults":[],"startTime":1740910272400,"endTime":1740910272400,"status":"failed","message":"Failed to load url ./missing (resolved id: ./missing) in /root/repo/test/broken.test.ts. Does the file exist?","name":"/root/repo/test/broken.test.ts"},
{"assertionResults":[{"ancestorTitles":[],"fullName":"x","status":"passed","title":"x","failureMessages":[]}],"status":"passed","message":"","name":"/root/repo/../evil/x.test.ts"},
{"assertionResults":[],"status":"passed","message":"","name":"/tmp/other/y.test.ts"}]}"#;

    #[test]
    fn vitest_and_jest_json() {
        let want = "test/base.test.ts
  Passed base > adds
  Failed base > nested > subtracts | AssertionError: expected 3 to be 4 // Object.is equality
  Skipped top level
  Skipped base > later
test/broken.test.ts !! Failed to load url ./missing (resolved id: ./missing) in test/broken.test.ts. Does the file exist?
";
        let r = check(Format::VitestJson, VITEST_JSON, &[], want);
        assert!(r.files[0].tests[1].messages[0].ends_with("\n    at test/base.test.ts:9:15"));
        let json = r#"{"numFailedTestSuites":1,"numFailedTests":1,"numPassedTestSuites":0,"numPassedTests":1,"numPendingTests":1,"numTotalTests":3,"success":false,"testResults":[
{"assertionResults":[{"ancestorTitles":["Calculator"],"duration":3,"failureDetails":[],"failureMessages":[],"fullName":"Calculator adds","invocations":1,"location":null,"numPassingAsserts":1,"retryReasons":[],"status":"passed","title":"adds"},
{"ancestorTitles":["Calculator"],"duration":1,"failureDetails":[{}],"failureMessages":["Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 3\n    at Object.toBe (/root/repo/src/calc.test.js:9:22)"],"fullName":"Calculator divides","invocations":1,"location":null,"numPassingAsserts":0,"retryReasons":[],"status":"failed","title":"divides"},
{"ancestorTitles":["Calculator"],"failureMessages":[],"fullName":"Calculator later","status":"pending","title":"later"}],
"endTime":1740910272999,"message":"  ● Calculator › divides\n\n    expect(received).toBe(expected)","name":"/root/repo/src/calc.test.js","startTime":1740910272500,"status":"failed","summary":""},
{"assertionResults":[],"coverage":{},"endTime":0,"message":"  ● Test suite failed to run\n\n    Cannot find module './missing' from 'src/bad.test.js'","name":"/root/repo/src/bad.test.js","startTime":0,"status":"failed","summary":""}],"wasInterrupted":false}"#;
        let want = "src/calc.test.js
  Passed Calculator > adds
  Failed Calculator > divides | Error: expect(received).toBe(expected) // Object.is equality
  Skipped Calculator > later
src/bad.test.js !! ● Test suite failed to run
";
        let r = check(Format::JestJson, json, &[], want);
        let load = r.files[1].load_error.as_deref().unwrap();
        assert!(load.ends_with("Cannot find module './missing' from 'src/bad.test.js'"));
    }

    #[test]
    fn json_errors_name_the_format() {
        let err = |f, json| run(f, json, &[]).unwrap_err().to_string();
        let e = err(Format::VitestJson, r#"{"numTotalTests": 3}"#);
        assert_eq!(e, "not a vitest JSON report: missing testResults");
        let e = err(Format::JestJson, r#"{"testResults": [{"name": "a"#);
        assert_eq!(
            e,
            "malformed jest JSON at line 1 column 28: EOF while parsing a string"
        );
        let e = err(Format::JestJson, r#"{"testResults": {"name": 1}}"#);
        assert!(e.starts_with("not a jest JSON report: testResults: invalid type"));
    }

    const CARGO_TEST: &str = "   Compiling semver v1.0.23 (/root/repo)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 2.31s
     Running unittests src/lib.rs (target/debug/deps/semver-6f1d2a3b4c5d6e7f)

running 1 test
test version::tests::parse_basic ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/test_version.rs (target/debug/deps/test_version-0123abcd4567ef89)

running 5 tests
test parse::empty ... ok
test parse::slow ... ignored, needs network
test parse::prerelease ... FAILED
test compare::ordering ... ok
test parse::overflow - should panic ... ok

failures:

---- parse::prerelease stdout ----

thread 'parse::prerelease' panicked at tests/test_version.rs:42:5:
assertion `left == right` failed
  left: \"1.0.0\"
 right: \"1.0.0-alpha\"
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    parse::prerelease

test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/serde.rs (target/debug/deps/serde-89abcdef01234567)

running 1 test
test roundtrip ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running ../elsewhere/tests/x.rs (target/debug/deps/x-0123abcd4567ef89)

running 1 test
test sneaky ... ok

   Doc-tests semver

running 1 test
test src/lib.rs - Version::parse (line 12) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.12s

error: test failed, to rerun pass `--test test_version`
";

    #[test]
    fn libtest_plain_targets_ignored_and_failure_messages() {
        let want = "tests/test_version.rs
  Passed parse::empty
  Skipped parse::slow
  Failed parse::prerelease | thread 'parse::prerelease' panicked at tests/test_version.rs:42:5:
  Passed compare::ordering
  Passed parse::overflow
tests/serde.rs
  Passed roundtrip
";
        let sel = ["tests/test_version.rs", "tests/serde.rs"];
        let r = check(Format::LibtestPlain, CARGO_TEST, &sel, want);
        let m = &r.files[0].tests[2].messages;
        assert_eq!(m.len(), 1);
        assert!(m[0].contains(
            "\nassertion `left == right` failed\n  left: \"1.0.0\"\n right: \"1.0.0-alpha\"\n"
        ));
        assert!(m[0].ends_with("to display a backtrace"));
    }

    #[test]
    fn libtest_compile_errors_become_load_errors() {
        let out = "   Compiling strsim v0.11.1 (/root/repo)
error[E0425]: cannot find function `foo` in crate `strsim`
 --> tests/lib.rs:3:13
  |
3 |     strsim::foo(\"a\", \"b\");
  |             ^^^ not found in `strsim`

For more information about this error, try `rustc --explain E0425`.
error: could not compile `strsim` (test \"lib\") due to 1 previous error
warning: build failed, waiting for other jobs to finish...
";
        let sel = ["tests/lib.rs", "tests/other.rs"];
        let want = "tests/lib.rs !! error[E0425]: cannot find function `foo` in crate `strsim`\n";
        check(Format::LibtestPlain, out, &sel, want);
        let unknown = "error[E0432]: unresolved import `strsim::bar`\n --> src/lib.rs:1:5\n";
        let e = "error[E0432]: unresolved import `strsim::bar`";
        let want = format!("tests/lib.rs !! {e}\ntests/other.rs !! {e}\n");
        check(Format::LibtestPlain, unknown, &sel, &want);
    }

    const GO_JSON: &str = r##"{"Time":"2025-03-02T10:11:12.1Z","Action":"start","Package":"example.com/m/pkg/util"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestJoin"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestJoin","Output":"=== RUN   TestJoin\n"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestJoin","Output":"--- PASS: TestJoin (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.2Z","Action":"pass","Package":"example.com/m/pkg/util","Test":"TestJoin","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestSplit"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit","Output":"=== RUN   TestSplit\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestSplit/empty"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"=== RUN   TestSplit/empty\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"    split_test.go:21: got [\"\"], want []\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Output":"--- FAIL: TestSplit/empty (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"fail","Package":"example.com/m/pkg/util","Test":"TestSplit/empty","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestSplit","Output":"--- FAIL: TestSplit (0.00s)\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"fail","Package":"example.com/m/pkg/util","Test":"TestSplit","Elapsed":0}
{"Time":"2025-03-02T10:11:12.3Z","Action":"run","Package":"example.com/m/pkg/util","Test":"TestWindows"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"output","Package":"example.com/m/pkg/util","Test":"TestWindows","Output":"    util_test.go:30: windows only\n"}
{"Time":"2025-03-02T10:11:12.3Z","Action":"skip","Package":"example.com/m/pkg/util","Test":"TestWindows","Elapsed":0}
{"Time":"2025-03-02T10:11:12.4Z","Action":"output","Package":"example.com/m/pkg/util","Output":"FAIL\n"}
{"Time":"2025-03-02T10:11:12.4Z","Action":"fail","Package":"example.com/m/pkg/util","Elapsed":0.01}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-output","Output":"# example.com/m/cmd [example.com/m/cmd.test]\n"}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-output","Output":"cmd/main_test.go:9:2: undefined: run\n"}
{"ImportPath":"example.com/m/cmd [example.com/m/cmd.test]","Action":"build-fail"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"start","Package":"example.com/m/cmd"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"output","Package":"example.com/m/cmd","Output":"FAIL\texample.com/m/cmd [build failed]\n"}
{"Time":"2025-03-02T10:11:12.5Z","Action":"fail","Package":"example.com/m/cmd","Elapsed":0,"FailedBuild":"example.com/m/cmd [example.com/m/cmd.test]"}
{"Time":"2025-03-02T10:11:12.6Z","Action":"pass","Package":"example.com/m/other","Test":"TestElsewhere"}
"##;

    #[test]
    fn go_test_json_pass_fail_subtests_and_build_failure() {
        let want = "pkg/util/split_test.go
  Passed TestJoin
  Failed TestSplit
  Failed TestSplit/empty | split_test.go:21: got [\"\"], want []
  Skipped TestWindows
cmd/main_test.go !! cmd/main_test.go:9:2: undefined: run
";
        let sel = [
            "pkg/util/split_test.go",
            "pkg/util/util_test.go",
            "cmd/main_test.go",
        ];
        check(Format::GoTestJson, GO_JSON, &sel, want);
    }

    #[test]
    fn go_test_json_old_stderr_build_errors_and_module_in_subdirectory() {
        let out = "# example.com/m [example.com/m.test]
./root_test.go:5:2: undefined: Helper
{\"Action\":\"output\",\"Package\":\"example.com/m\",\"Output\":\"FAIL\\texample.com/m [build failed]\\n\"}
{\"Action\":\"fail\",\"Package\":\"example.com/m\",\"Elapsed\":0}
{\"Action\":\"pass\",\"Package\":\"example.com/m/api\",\"Test\":\"TestAPI\"}
";
        let want = "go/root_test.go !! ./root_test.go:5:2: undefined: Helper\ngo/api/api_test.go\n  Passed TestAPI\n";
        let sel = ["go/root_test.go", "go/api/api_test.go"];
        check(Format::GoTestJson, out, &sel, want);
        let broken = "{\"Action\":\"run\"}\n{\"Action\":";
        let e = run(Format::GoTestJson, broken, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed go test -json output at line 2 column 10: EOF while parsing a value"
        );
    }

    #[test]
    fn damaged_input_never_panics() {
        let inputs = [PYTEST, VITEST_JSON, CARGO_TEST, GO_JSON];
        let formats = [
            Format::Junit,
            Format::VitestJson,
            Format::LibtestPlain,
            Format::GoTestJson,
        ];
        let sel = [
            "tests/test_tlru.py",
            "tests/test_version.rs",
            "pkg/util/split_test.go",
        ];
        for (input, format) in inputs.into_iter().zip(formats) {
            for cut in (0..input.len())
                .step_by(7)
                .filter(|&i| input.is_char_boundary(i))
            {
                let mut damaged = input[..cut].to_string();
                damaged.push_str(&input[cut..].replacen('"', "<", 1));
                let _ = run(format, &input[..cut], &sel);
                let _ = run(format, &damaged, &sel);
            }
        }
    }
}

//! Readers that turn the reports of test runners into the gate's normalised [`TestReport`]:
//! JUnit XML (pytest, vitest, jest-junit, cargo-nextest, Maven Surefire, gotestsum), the JSON
//! reports of vitest and jest, the plain text of `cargo test`, and `go test -json`. Every path
//! a report names goes through [`normalize_path`]: it is resolved lexically against the
//! worktree root and kept only when it lies under that root, so a report can never make the
//! gate talk about a file outside the tree. Nothing here touches the filesystem. Formats that
//! carry no file paths are mapped onto the test files the runner was asked to run
//! ([`ReadContext::selected`]); results that map to no file are dropped, not reported.
//! Messages are trimmed, cut to 2 KB, and have the root path (`ROOT/`) removed so that runs in
//! two worktrees read alike.

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
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Junit => "JUnit XML",
            Format::VitestJson => "vitest JSON",
            Format::JestJson => "jest JSON",
            Format::LibtestPlain => "libtest output",
            Format::GoTestJson => "go test -json output",
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
    }
}

fn fail(format: Format, problem: Problem) -> ReadError {
    ReadError { format, problem }
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
    let utf8 =
        || std::str::from_utf8(bytes).map_err(|e| fail(format, Problem::NotUtf8(e.valid_up_to())));
    let report = match format {
        Format::Junit => read_junit(bytes, utf8, &files)?,
        Format::VitestJson | Format::JestJson => read_js_json(format, bytes, &files)?,
        Format::LibtestPlain => read_libtest(&String::from_utf8_lossy(bytes), &files),
        Format::GoTestJson => read_go_json(utf8()?, &files)?,
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
    let start = if path.starts_with('/') {
        Vec::new()
    } else {
        base.clone()
    };
    let parts = lexical(path, start);
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
        let messages = messages
            .into_iter()
            .filter(|m| !m.trim().is_empty())
            .collect();
        self.file(path).tests.push(TestCase {
            name,
            status,
            messages,
        });
    }

    fn load_error(&mut self, path: &str, message: &str) {
        let file = self.file(path);
        file.load_error = file.load_error.take().or_else(|| Some(message.to_string()));
    }

    /// Makes messages relative to `root` and cuts them to size.
    fn finish(mut self, root: &str) -> TestReport {
        let prefix = format!("{}/", root.trim_end_matches('/'));
        let tidy = |m: &mut String| *m = clip(&m.replace(&prefix, ""));
        for file in &mut self.report.files {
            file.load_error.iter_mut().for_each(tidy);
            file.tests
                .iter_mut()
                .flat_map(|t| &mut t.messages)
                .for_each(tidy);
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
        let mut selected: Vec<_> = ctx
            .selected
            .iter()
            .filter_map(|s| normalize_path(ctx.root, s))
            .collect();
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
        for file in candidates {
            let Some(module) = file.strip_suffix(".py") else {
                continue;
            };
            let module: Vec<&str> = module.split('/').collect();
            let tail = (0..module.len())
                .map(|k| &module[k..])
                .find(|t| segs.starts_with(t));
            if let Some(n) = tail
                .map(<[_]>::len)
                .filter(|n| best.is_none_or(|(b, _)| *n > b))
            {
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
        let files: Vec<_> = files
            .pick(|f| f.ends_with("_test.go"))
            .into_iter()
            .map(|f| (parent(&f), f))
            .collect();
        let (mut best, mut shortest): (Option<(usize, String, String)>, Option<&str>) =
            (None, None);
        for pkg in packages.filter(|p| !p.is_empty() && !p.contains(char::is_whitespace)) {
            shortest = shortest.filter(|s| s.len() <= pkg.len()).or(Some(pkg));
            let p: Vec<&str> = pkg.split('/').collect();
            for (dir, _) in files.iter().filter(|(d, _)| !d.is_empty()) {
                let d: Vec<&str> = dir.split('/').collect();
                let n = p
                    .iter()
                    .rev()
                    .zip(d.iter().rev())
                    .take_while(|(a, b)| a == b)
                    .count();
                if n > 0 && best.as_ref().is_none_or(|(m, ..)| n > *m) {
                    best = Some((n, p[..p.len() - n].join("/"), d[..d.len() - n].join("/")));
                }
            }
        }
        let root_file = files.iter().any(|(d, _)| d.is_empty());
        let module = match best {
            Some((_, module, dir)) => Some((module, dir)),
            None => shortest
                .filter(|_| root_file)
                .map(|s| (s.to_string(), String::new())),
        };
        GoMap { files, module }
    }

    fn package_files(&self, pkg: &str) -> Vec<String> {
        let Some((module, base)) = &self.module else {
            return Vec::new();
        };
        let rel = match pkg.strip_prefix(module.as_str()) {
            Some("") => "",
            Some(r) if r.starts_with('/') => &r[1..],
            _ => return Vec::new(),
        };
        let dir = [base.as_str(), rel]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("/");
        self.files
            .iter()
            .filter(|(d, _)| *d == dir)
            .map(|(_, f)| f.clone())
            .collect()
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
    collection: bool,
    suite_level: bool,
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

fn read_junit<'b>(
    bytes: &'b [u8],
    utf8: impl FnOnce() -> Result<&'b str, ReadError>,
    files: &Files,
) -> Result<Builder, ReadError> {
    let has = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    };
    if has(b"<!DOCTYPE") || has(b"<!ENTITY") {
        return Err(fail(Format::Junit, Problem::Doctype));
    }
    let (suites, cases) = parse_junit(utf8()?.trim_start_matches('\u{feff}'))?;
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
            if failed
                && (case.suite_level || (build && matches!(case.name.as_str(), "" | "TestMain")))
            {
                let line = case
                    .text
                    .lines()
                    .find(|l| l.contains("undefined:"))
                    .unwrap_or(message);
                go.package_files(pkg)
                    .iter()
                    .for_each(|f| out.load_error(f, line));
                continue;
            }
        }
        let names_file = from_name || files.normalize(&case.name).as_deref() == Some(path.as_str());
        let import = case.text.contains("ImportError") || case.text.contains("ModuleNotFoundError");
        let python = matches!(mode, Mode::Python(_));
        if case.suite_level || (failed && (case.collection || (names_file && (!python || import))))
        {
            // pytest puts the exception on lines starting with "E "; that is the useful part.
            let lines: Vec<&str> = case
                .text
                .lines()
                .filter_map(|l| l.strip_prefix("E "))
                .collect();
            let pytest_error = lines
                .iter()
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join("\n");
            let collection = python && !pytest_error.is_empty();
            out.load_error(&path, if collection { &pytest_error } else { message });
            continue;
        }
        let name = match mode {
            Mode::Python(rest) => rest
                .into_iter()
                .chain([case.name.clone()])
                .collect::<Vec<_>>()
                .join("::"),
            Mode::Java(Some(nested)) => format!("{nested} > {}", case.name),
            _ => case.name.clone(),
        };
        out.test(&path, name, status, case.messages.clone());
    }
    Ok(out)
}

/// Ties one JUnit key (a classname or a suite name) to a file, trying each producer's rule.
fn locate(key: &str, files: &Files, go: &GoMap) -> Loc {
    let ext = key
        .rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .map(|(_, e)| e);
    let script = ext.is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e));
    let source = key.contains('/') && ext.is_some_and(|e| SOURCE_EXTENSIONS.contains(&e));
    if key.is_empty() {
        return Loc::Unknown;
    } else if script
        || source
        || files
            .normalize(key)
            .is_some_and(|p| files.selected.contains(&p))
    {
        return files
            .normalize(key)
            .map_or(Loc::Drop, |p| Loc::Found(p, Mode::Path));
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
    let bad = |at: u64, detail: String| {
        fail(
            Format::Junit,
            Problem::Malformed(format!("byte {at}: {detail}")),
        )
    };
    let mut reader = Reader::from_str(text);
    let (mut suites, mut stack, mut cases) =
        (Vec::<RawSuite>::new(), Vec::<usize>::new(), Vec::new());
    let mut case: Option<RawCase> = None;
    // The open <failure>/<error>: its message attribute and its text so far.
    let mut child: Option<(String, String)> = None;
    let mut rooted = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| bad(reader.error_position(), e.to_string()))?;
        let (at, empty) = (reader.buffer_position(), matches!(event, Event::Empty(_)));
        let text = match event {
            Event::Start(e) | Event::Empty(e) => {
                let get = |k: &str| {
                    attr(&e, k)
                        .map(Option::unwrap_or_default)
                        .map_err(|d| bad(at, d))
                };
                let tag = e.local_name();
                let tag = tag.as_ref();
                if !rooted && !matches!(tag, "testsuites" | "testsuite") {
                    return Err(fail(
                        Format::Junit,
                        Problem::NotAReport(format!("root element is <{tag}>")),
                    ));
                }
                rooted = true;
                match tag {
                    "testsuite" => {
                        let inherited = stack.last().and_then(|&i| suites[i].1.clone());
                        let file = attr(&e, "file").map_err(|d| bad(at, d))?.or(inherited);
                        suites.push(RawSuite(get("name")?, file));
                        if !empty {
                            stack.push(suites.len() - 1);
                        }
                    }
                    "testcase" => {
                        let file = attr(&e, "file").map_err(|d| bad(at, d))?;
                        let (classname, name) = (get("classname")?, get("name")?);
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
                        child = Some((get("message")?, String::new()));
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
        if let (Some(t), Some((_, buf))) = (text, child.as_mut()) {
            if buf.len() < 4 * MAX_MESSAGE {
                buf.push_str(&t);
            }
        }
    }
    if !rooted {
        return Err(fail(
            Format::Junit,
            Problem::NotAReport("no <testsuites> or <testsuite> element".into()),
        ));
    }
    Ok((suites, cases))
}

/// Closes a `<failure>`/`<error>`: marks its case failed, or records a suite-level failure.
fn finish_child(
    child: &mut Option<(String, String)>,
    case: &mut Option<RawCase>,
    cases: &mut Vec<RawCase>,
    stack: &[usize],
) {
    let Some((message, text)) = child.take() else {
        return;
    };
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

fn read_js_json(format: Format, bytes: &[u8], files: &Files) -> Result<Builder, ReadError> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let at = format!("line {} column {}: {e}", e.line(), e.column());
        fail(format, Problem::Malformed(at))
    })?;
    let Some(results) = value.get("testResults") else {
        return Err(fail(
            format,
            Problem::NotAReport("missing testResults".into()),
        ));
    };
    let results = Vec::<JsFile>::deserialize(results)
        .map_err(|e| fail(format, Problem::NotAReport(format!("testResults: {e}"))))?;
    let mut out = Builder::default();
    for file in results {
        let Some(path) = files.normalize(&file.name) else {
            continue;
        };
        let assertions = file.assertion_results.unwrap_or_default();
        let message = file.message.unwrap_or_default();
        out.file(&path);
        if file.status.as_deref() == Some("failed")
            && assertions.is_empty()
            && !message.trim().is_empty()
        {
            out.load_error(&path, &message);
        }
        for a in assertions {
            let name = a
                .ancestor_titles
                .unwrap_or_default()
                .into_iter()
                .chain([a.title]);
            let status = match a.status.as_str() {
                "passed" | "focused" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped,
            };
            let name = name.collect::<Vec<_>>().join(" > ");
            out.test(&path, name, status, a.failure_messages.unwrap_or_default());
        }
    }
    Ok(out)
}

// libtest plain output -----------------------------------------------------------------------

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the readers' regular expressions are valid")
}

static RUNNING: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*Running (\S.*?)(?: \((.*)\))?$"));
static TEST_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?$"));
static SECTION: LazyLock<Regex> = LazyLock::new(|| regex(r"^---- (.+) (?:stdout|stderr) ----$"));
static COMPILE_ERROR: LazyLock<Regex> = LazyLock::new(|| regex(r"^error(?:\[E\d{4}\])?: "));
static COULD_NOT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^error: could not compile `[^`]+`(?: \((.*?)\))?"));
static ARROW: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*--> (.+?):\d+:\d+$"));
static HASH_SUFFIX: LazyLock<Regex> = LazyLock::new(|| regex(r"-[0-9a-f]{8,}$"));
static GO_MARKER: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP))"));

/// The file of a `Running` line such as `tests/x.rs (target/debug/deps/x-hash)`; `unittests`
/// targets and doc tests give `None`. Old cargo printed only the binary path.
fn libtest_target(source: &str, binary: Option<&str>, files: &Files) -> Option<String> {
    if source.starts_with("unittests") {
        return None;
    } else if binary.is_none() && source.contains("/deps/") {
        let stem = source.rsplit('/').next().unwrap_or(source);
        return files
            .rust_target(&HASH_SUFFIX.replace(stem, ""))
            .into_iter()
            .next();
    }
    let path = files.normalize(source)?;
    let suffix = format!("/{path}");
    files
        .pick(|f| f == path || f.ends_with(&suffix))
        .into_iter()
        .next()
        .or(Some(path))
}

fn read_libtest(text: &str, files: &Files) -> Builder {
    let mut out = Builder::default();
    // None before the first `Running` line; then the current target's file, if it maps.
    let mut target: Option<Option<String>> = None;
    let mut section: Option<(String, String)> = None;
    // Compile errors not yet tied to a target: (first line, `-->` location).
    let mut pending: Vec<(String, Option<String>)> = Vec::new();
    let flush = |out: &mut Builder,
                 target: &Option<Option<String>>,
                 section: &mut Option<(String, String)>| {
        if let (Some(Some(path)), Some((name, body))) = (target, section.take()) {
            let tests = &mut out.file(path).tests;
            let failed = tests
                .iter_mut()
                .rev()
                .find(|t| t.name == name && t.status == Status::Failed);
            failed
                .into_iter()
                .filter(|_| !body.trim().is_empty())
                .for_each(|t| t.messages.push(body.clone()));
        }
    };
    for line in text.lines().map(str::trim_end) {
        if let Some((_, body)) = section.as_mut() {
            if !(line.starts_with("---- ")
                || line == "failures:"
                || line.starts_with("test result:"))
            {
                if body.len() < MAX_MESSAGE {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            flush(&mut out, &target, &mut section);
        }
        if let Some(c) = RUNNING.captures(line) {
            target = Some(libtest_target(&c[1], c.get(2).map(|m| m.as_str()), files));
        } else if line.trim_start().starts_with("Doc-tests ") {
            target = Some(None);
        } else if let Some(Some(path)) = &target
            && let Some(c) = TEST_LINE.captures(line)
        {
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
            let desc = c.get(1).map_or("", |m| m.as_str());
            let message = pending
                .first()
                .map_or(line, |(m, _)| m.as_str())
                .to_string();
            let name = desc
                .strip_prefix("test \"")
                .and_then(|d| d.strip_suffix('"'));
            let mut hit = name.map(|n| files.rust_target(n)).unwrap_or_default();
            if hit.is_empty() {
                let at = pending
                    .iter()
                    .filter_map(|(_, at)| files.normalize(at.as_deref()?));
                hit = at.filter(|p| files.selected.contains(p)).collect();
            }
            if hit.is_empty() {
                hit = files.rust_tests();
            }
            hit.iter().for_each(|f| out.load_error(f, &message));
            pending.clear();
        } else if COMPILE_ERROR.is_match(line) && !line.starts_with("error: aborting") {
            pending.push((line.to_string(), None));
        } else if let (Some(c), Some((_, at @ None))) = (ARROW.captures(line), pending.last_mut()) {
            *at = Some(c[1].to_string());
        }
    }
    flush(&mut out, &target, &mut section);
    // Compiler diagnostics without a "could not compile" line: the target is unknown.
    if let Some((message, _)) = pending.iter().find(|(_, at)| at.is_some()) {
        files
            .rust_tests()
            .iter()
            .for_each(|f| out.load_error(f, message));
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
    tests: Vec<(String, Option<Status>, String)>,
    failed: bool,
    build_failed: bool,
    undefined: Option<String>,
}

impl GoPackage {
    fn build_output(&mut self, line: &str) {
        self.build_failed |= line.contains("[build failed]");
        if line.contains("undefined:") && self.undefined.is_none() {
            self.undefined = Some(line.trim().to_string());
        }
    }
}

fn slot<'p>(packages: &'p mut Vec<(String, GoPackage)>, name: &str) -> &'p mut GoPackage {
    let i = packages
        .iter()
        .position(|(n, _)| n == name)
        .unwrap_or_else(|| {
            packages.push((name.to_string(), GoPackage::default()));
            packages.len() - 1
        });
    &mut packages[i].1
}

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
                slot(&mut packages, &plain_package).build_output(line);
            }
            continue;
        }
        let event: GoEvent = serde_json::from_str(line).map_err(|e| {
            let at = format!("line {} column {}: {e}", n + 1, e.column());
            fail(Format::GoTestJson, Problem::Malformed(at))
        })?;
        let raw = event
            .package
            .as_deref()
            .or(event.import_path.as_deref())
            .unwrap_or("");
        let name = raw.split(' ').next().unwrap_or(raw);
        if name.is_empty() {
            continue;
        }
        let pkg = slot(&mut packages, name);
        let output = event.output.as_deref().unwrap_or("");
        match (event.action.as_str(), event.test) {
            ("build-output", _) | ("output", None) => pkg.build_output(output),
            ("build-fail", _) => pkg.build_failed = true,
            ("fail", None) => {
                pkg.failed = true;
                pkg.build_failed |= event.failed_build.is_some();
            }
            (action, Some(test)) => {
                let i = pkg
                    .tests
                    .iter()
                    .position(|(t, ..)| *t == test)
                    .unwrap_or_else(|| {
                        pkg.tests.push((test, None, String::new()));
                        pkg.tests.len() - 1
                    });
                let (_, status, log) = &mut pkg.tests[i];
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
            let message = pkg.undefined.as_deref().unwrap_or("build failed");
            targets.iter().for_each(|f| out.load_error(f, message));
            continue;
        }
        for (test, status, log) in &pkg.tests {
            // A test that started but never finished (a panic, a timeout) counts as failed.
            let status = status.unwrap_or(Status::Failed);
            let messages = if status == Status::Failed {
                vec![log.clone()]
            } else {
                Vec::new()
            };
            out.test(first, test.clone(), status, messages);
        }
    }
    Ok(out)
}

//! JUnit XML, as pytest, vitest, jest-junit, cargo-nextest, Maven Surefire and gotestsum
//! write it: cases tied to files by each producer's rule, failures and load errors.

use std::sync::LazyLock;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion, escape::resolve_predefined_entity};
use regex::Regex;

use super::common::{
    Builder, Files, Format, MAX_MESSAGE, Problem, ReadError, fail, malformed, refuse, regex, utf8,
};
use super::go_test::GoMap;
use crate::gate::test_report::Status;

/// A `<testcase>`, or a failure directly under a `<testsuite>`, as read from the XML.
#[derive(Default)]
pub(super) struct RawCase {
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
pub(super) struct Child {
    message: String,
    kind: Option<String>,
    error: bool,
    text: String,
    tail: String,
}

/// How much of the end of a failure's text is kept to find pytest's crash line.
pub(super) const TAIL: usize = 512;

pub(super) static CRASH_LINE: LazyLock<Regex> =
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
pub(super) struct RawSuite(String, Option<String>);

/// How a JUnit key (a classname or a suite name) was tied to a file.
pub(super) enum Mode {
    Path,
    Rust,
    Python(Vec<String>),
    Java(Option<String>),
    Go(String),
}

pub(super) enum Loc {
    Unknown,
    Drop,
    Found(String, Mode),
}

/// Extensions that mark a key as a file path even without a `/`.
pub(super) const SCRIPT_EXTENSIONS: &[&str] = &[
    "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "vue", "svelte",
];
/// Extensions that mark a `/`-separated key as a file path.
pub(super) const SOURCE_EXTENSIONS: &[&str] = &["py", "rs", "go", "java", "kt", "rb"];

/// JUnit XML. A case's file is, in this order: its own or its suite's `file` attribute; its
/// classname (or, for pytest collection errors, its name) read as a file path (vitest), a
/// nextest binary id, a pytest module path, a JVM class or a Go package; its suite's name read
/// the same way; and when one file was run and the report names no file anywhere, that file. A failed case that names its file (vitest), or a pytest collection error,
/// becomes the file's load error, as does a failure directly under a `<testsuite>`.
pub(super) fn read_junit(bytes: &[u8], files: &Files) -> Result<Builder, ReadError> {
    let lower = bytes.to_ascii_lowercase();
    let has = |needle: &[u8]| lower.windows(needle.len()).any(|w| w == needle);
    if has(b"<!doctype") || has(b"<!entity") {
        return Err(fail(Format::Junit, Problem::Doctype));
    }
    let (suites, cases) = parse_junit(utf8(Format::Junit, bytes)?.trim_start_matches('\u{feff}'))?;
    let names = cases.iter().map(|c| c.classname.as_str());
    let go = GoMap::new(files, names.chain(suites.iter().map(|s| s.0.as_str())));
    let names_files =
        cases.iter().any(|c| c.file.is_some()) || suites.iter().any(|s| s.1.is_some());
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
        // A run of one file, in a report that names no file anywhere (jest-junit and node's
        // junit reporter write no file attribute): a case tied to no file by its names is
        // that file's (attribution by run).
        let loc = match (loc, files.selected.as_slice()) {
            (Loc::Unknown, [only]) if !names_files => Loc::Found(only.clone(), Mode::Path),
            (loc, _) => loc,
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
pub(super) fn locate(key: &str, files: &Files, go: &GoMap) -> Loc {
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
        // nextest's binary id, `PACKAGE::TARGET`: the one selected file of that target. Two
        // packages' targets of one name are not told apart here (the package's directory
        // is not in the report); each file is then run alone.
        if target.contains('/') {
            return Loc::Drop;
        }
        return match files.rust_target(target).as_slice() {
            [one] => Loc::Found(one.clone(), Mode::Rust),
            [] => Loc::Drop,
            _ => Loc::Unknown,
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

pub(super) fn attr(e: &BytesStart, key: &str) -> Result<Option<String>, quick_xml::Error> {
    for a in e.attributes() {
        let a = a.map_err(quick_xml::Error::from)?;
        if a.key.local_name().as_ref() == key {
            let value = a.normalized_value(XmlVersion::Implicit1_0)?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

/// Reads the XML into flat lists of suites and cases, in document order.
pub(super) fn parse_junit(text: &str) -> Result<(Vec<RawSuite>, Vec<RawCase>), ReadError> {
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
                let get = |k: &str| attr(&e, k).map_err(|d| bad(at, d.to_string()));
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
pub(super) fn finish_child(
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

//! Failure blocks and their innermost frames: where in the tree a failure was raised.
//!
//! A failure signature is one line (an exception class and its normalised message). The
//! same line raised from another place is another failure, and a reduction that ends
//! there has *slipped*. This module finds the failure blocks of an output and the stack
//! frames each one lists, so that the oracle can also compare up to [`MAX_FRAMES`]
//! innermost frames of the failure it keeps.
//!
//! [`parse`] reads raw output (line by line, terminal escapes removed) into [`Block`]s:
//!
//! - **Python** tracebacks: each `Traceback (most recent call last):` (or `Exception Group
//!   Traceback`) up to its exception line is one block, so the blocks of a chained
//!   exception ("During handling of the above exception…", "The above exception was the
//!   direct cause…") and the leaves of an exception group (their `| ` gutters removed) are
//!   separate; frames are the `File "…", line N, in name` lines, innermost last.
//! - **Java** stack traces: an exception line followed by `at pkg.Class.method(File.java:N)`
//!   lines; each `Caused by:` or `Suppressed:` is a block of its own, and its `... N more`
//!   are the last N frames of the block before it.
//! - **JavaScript/TypeScript** (node): an error line followed by `at name (path:N:N)` or
//!   `at path:N:N` lines.
//! - **Rust** panics: `thread '…' panicked at path:N:N:` and its message; with
//!   `RUST_BACKTRACE`, the `N: crate::module::function` lines and their `at path:N:N`.
//! - **Go** panics: `panic: …` (or `fatal error: …`) and the first goroutine's
//!   `function(…)` and `\tpath:N +0x…` lines.
//!
//! [`Block::frames`] then keeps the innermost frames *in the tree*: a frame's path is
//! normalised with the run's [`Normalizer`] and made relative to the tree (a path under one
//! of the tree's prefixes, or a relative path without `..`); frames elsewhere (the standard
//! library, `site-packages`, `node:internal`, `/rustc/…`, the Go root, the JDK) are skipped.
//! They are stable too, but the frames in the tree are the ones a reduction can move, and
//! a path outside it is absolute. Line and column numbers are never kept. A Rust panic
//! without backtrace frames in the tree keeps the file it panicked in.

use std::fmt;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::signature::Normalizer;

/// The most frames a failure's identity holds.
pub const MAX_FRAMES: usize = 3;

/// The most lines a block's message may span before its stack starts (node).
const MESSAGE_LINES: usize = 10;

/// The most lines between a Go panic and its goroutine dump (`[recovered]` panics, blanks).
const GO_PREAMBLE: usize = 8;

macro_rules! regexes {
    ($($name:ident = $pattern:expr;)*) => {
        $(static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("valid regex"));)*
    };
}

regexes! {
    PY_START = r"^(?:Exception Group )?Traceback \(most recent call last\):$";
    PYTEST_HEAD = r"^_{3,} (?P<name>\S.*?) _{3,}$";
    PYTEST_END = r"^(?:={3,}|-{3,} Captured .* -{3,}$)";
    PYTEST_AT = r"^(?P<path>[^\s:]+\.py):\d+:(?: in (?P<name>\S+)| \S*)?$";
    PY_DEF = r"^\s*(?:async )?def (?P<name>\w+)\(";
    PY_FRAME = r#"^\s+File "(?P<path>[^"]*)", line \d+(?:, in (?P<name>.+))?$"#;
    JAVA_AT = r"^\s+at (?P<name>[^\s()]+)\((?P<loc>[^()]*)\)$";
    JAVA_MORE = r"^\s+\.\.\. (?P<n>\d+) (?:more|common frames omitted)$";
    JAVA_CAUSE = r"^\s*(?:Caused by|Suppressed): \S";
    JS_AT = r"^\s+at (?:(?P<name>.+?) \((?P<loc>.+)\)|(?P<bare>\S+:\d+(?::\d+)?))$";
    ERROR_HEAD = r"^\s*(?:Uncaught |Exception in thread .*? )?(?:[\w$]+\.)*[\w$]*(?:Error|Exception)\b";
    RUST_PANIC = r"^thread '[^']*'(?: \(\d+\))? panicked at (?P<rest>.+)$";
    RUST_NEW_LOC = r"^(?P<path>\S+):\d+:\d+:$";
    RUST_OLD_LOC = r"^'.*', (?P<path>\S+):\d+:\d+$";
    RUST_FRAME = r"^\s*\d+: (?P<name>.+?)(?:::h[0-9a-f]{16})?$";
    RUST_AT = r"^\s+at (?P<path>.+?):\d+(?::\d+)?$";
    GO_PANIC = r"^(?:panic|fatal error): ";
    GO_GOROUTINE = r"^goroutine \d+ \[";
    GO_CALL = r"^(?P<name>\S.*)\(.*\)$";
    GO_AT = r"^\t(?P<path>\S+):\d+(?: \+0x[0-9a-f]+)?$";
    LINE_COLUMN = r"(?::(?:\d+|N))+$";
    GENERATED = r"(lambda\$[\w$]*?\$|\.func|\$\$Lambda[$/]?)(?:0x[0-9a-fA-F]+|\d+)";
    JAVA_FILE = r"^(?P<file>[\w$-]+\.[A-Za-z]\w*)(?::\d+)?$";
    JDK = r"^(?:java|javax|jdk|sun|com\.sun|kotlin|scala|org\.junit|junit|org\.apache\.maven)\.";
}

/// The language whose format a block is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// A Python traceback.
    Python,
    /// A Java (JVM) stack trace.
    Java,
    /// A JavaScript or TypeScript error stack (node).
    JavaScript,
    /// A Rust panic.
    Rust,
    /// A Go panic.
    Go,
}

/// One frame as the output prints it: its function and its location, both raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFrame {
    /// The function or method, when the format names it.
    pub function: Option<String>,
    /// The path (with line and column, as printed), when the format gives one.
    pub location: Option<String>,
}

/// One failure in an output: its lines and its frames, innermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The format.
    pub language: Language,
    /// The block's lines (0-based line indexes into the output).
    pub lines: Range<usize>,
    /// Every frame the block lists, innermost first.
    pub frames: Vec<RawFrame>,
    /// Where a Rust panic happened: its frame when no backtrace frame is in the tree.
    pub location: Option<RawFrame>,
}

/// A frame of a failure's identity: a function name and a path relative to the tree, with
/// run-specific parts normalised and no line numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Frame {
    /// The function or method (`a`, `com.example.App.load`, `crate::module::f`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub function: Option<String>,
    /// The file, relative to the tree (a Java frame's file name as printed).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.function, &self.path) {
            (Some(name), Some(path)) => write!(f, "{name} ({path})"),
            (Some(name), None) => f.write_str(name),
            (None, Some(path)) => f.write_str(path),
            (None, None) => f.write_str("?"),
        }
    }
}

/// Frames shown on one line, innermost first: `a (a.py) < main (main.py)`.
pub fn describe(frames: &[Frame]) -> String {
    frames
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" < ")
}

/// Where the tree is: the run's normaliser and the tree's root as it reads once
/// normalised (each prefix without a trailing slash, such as `<tmp>/run/out` or `<tmp>`).
#[derive(Clone, Copy, Debug)]
pub struct TreeRoots<'a> {
    /// Normalises paths and names the way the run's output is normalised.
    pub normalizer: &'a Normalizer,
    /// The tree's root in normalised output, longest first.
    pub prefixes: &'a [String],
}

impl TreeRoots<'_> {
    /// The path of `location` relative to the tree, or `None` when it is outside.
    fn relative(&self, location: &str) -> Option<String> {
        let location = location.strip_prefix("file://").unwrap_or(location);
        let normalised = self.normalizer.normalize(location);
        let path = LINE_COLUMN.replace(normalised.trim(), "");
        let mut path: &str = &path;
        let mut under = false;
        for prefix in self.prefixes {
            if let Some(rest) = path.strip_prefix(prefix.as_str())
                && let Some(rest) = rest.strip_prefix('/')
            {
                path = rest;
                under = true;
                break;
            }
        }
        // Absolute, a placeholder (`<tmp>`, `<anonymous>`, `<frozen …>`), a URL or a scheme
        // (`node:internal/…`), a drive letter.
        if !under && (path.starts_with(['/', '<', '\\', '[']) || path.contains(':')) {
            return None;
        }
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        let outside = path.split('/').any(|c| {
            matches!(
                c,
                "" | "." | ".." | "site-packages" | "dist-packages" | "node_modules"
            )
        });
        (!outside && !path.contains([' ', ':', '<'])).then(|| path.to_string())
    }
}

impl Block {
    /// Up to [`MAX_FRAMES`] innermost frames in the tree, normalised.
    pub fn frames(&self, roots: TreeRoots<'_>) -> Vec<Frame> {
        let mut kept = Vec::new();
        for raw in &self.frames {
            if kept.len() == MAX_FRAMES {
                break;
            }
            if let Some(frame) = self.resolve(raw, roots) {
                kept.push(frame);
            }
        }
        if kept.is_empty()
            && let Some(raw) = &self.location
            && let Some(frame) = self.resolve(raw, roots)
        {
            kept.push(frame);
        }
        kept
    }

    fn resolve(&self, raw: &RawFrame, roots: TreeRoots<'_>) -> Option<Frame> {
        let function = raw.function.as_deref().map(|name| {
            let name = name.trim();
            let name = name.strip_prefix("async ").unwrap_or(name);
            let name = name.strip_prefix("new ").unwrap_or(name);
            GENERATED.replace_all(name, "${1}N").into_owned()
        });
        let path = if self.language == Language::Java {
            let name = function.as_deref()?;
            let location = raw.location.as_deref()?;
            let file = JAVA_FILE.captures(location.trim())?;
            if JDK.is_match(name) {
                return None;
            }
            Some(file["file"].to_string())
        } else {
            Some(roots.relative(raw.location.as_deref()?)?)
        };
        Some(Frame { function, path })
    }
}

/// The content of a Python line with exception-group gutters (`| `, `+ `) removed, or
/// `None` for a group's separator line (`+-+---- 1 ----`, `+------`).
fn python_content(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("+-") {
        return None;
    }
    if let Some(rest) = trimmed.strip_prefix('|') {
        return Some(rest.strip_prefix(' ').unwrap_or(rest));
    }
    if let Some(rest) = trimmed.strip_prefix("+ ") {
        return Some(rest);
    }
    Some(line)
}

/// The Java or JavaScript frame of an `at` line.
fn at_frame(line: &str) -> Option<(Language, RawFrame)> {
    if let Some(c) = JAVA_AT.captures(line) {
        let name = c.name("name").map(|m| m.as_str()).unwrap_or_default();
        // `java.base/java.lang.Thread.run`, `app//com.example.Main.main`.
        let name = name.rsplit_once('/').map_or(name, |(_, n)| n);
        return Some((
            Language::Java,
            RawFrame {
                function: Some(name.to_string()),
                location: c.name("loc").map(|m| m.as_str().to_string()),
            },
        ));
    }
    let c = JS_AT.captures(line)?;
    let frame = match c.name("bare") {
        Some(bare) => RawFrame {
            function: None,
            location: Some(bare.as_str().to_string()),
        },
        None => {
            let name = c.name("name").map(|m| m.as_str().to_string());
            let loc = c.name("loc").map_or("", |m| m.as_str());
            // `at eval (eval at f (/x.js:1:1), <anonymous>:1:1)`: the outer location.
            let loc = loc.rsplit_once(", ").map_or(loc, |(_, l)| l);
            RawFrame {
                function: name,
                location: Some(loc.to_string()),
            }
        }
    };
    Some((Language::JavaScript, frame))
}

/// Whether `line` starts a failure block.
fn starts_block(line: &str) -> bool {
    python_content(line).is_some_and(|c| PY_START.is_match(c.trim()))
        || PYTEST_HEAD.is_match(line)
        || RUST_PANIC.is_match(line)
        || GO_PANIC.is_match(line)
        || at_frame(line).is_some()
}

/// The failure blocks of `output`, in the order they start.
pub fn parse(output: &str) -> Vec<Block> {
    let lines: Vec<String> = output
        .split('\n')
        .map(|l| crate::text::strip_ansi(l).trim_end().to_string())
        .collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_str();
        let next = if let Some(content) = python_content(line)
            && PY_START.is_match(content.trim())
        {
            python(&lines, i, &mut blocks)
        } else if PYTEST_HEAD.is_match(line) {
            pytest(&lines, i, &mut blocks)
        } else if RUST_PANIC.is_match(line) {
            rust(&lines, i, &mut blocks)
        } else if GO_PANIC.is_match(line) {
            go(&lines, i, &mut blocks)
        } else if at_frame(line).is_some() {
            stack(&lines, i, &mut blocks)
        } else {
            i + 1
        };
        i = next.max(i + 1);
    }
    blocks.sort_by_key(|b| (b.lines.start, b.lines.end));
    blocks
}

fn python(lines: &[String], start: usize, blocks: &mut Vec<Block>) -> usize {
    let mut frames = Vec::new();
    let mut i = start + 1;
    while i < lines.len() {
        let Some(content) = python_content(&lines[i]) else {
            return i;
        };
        if let Some(c) = PY_FRAME.captures(content) {
            frames.push(RawFrame {
                function: c.name("name").map(|m| m.as_str().to_string()),
                location: c.name("path").map(|m| m.as_str().to_string()),
            });
        } else if content.trim().is_empty() || PY_START.is_match(content.trim()) {
            return i;
        } else if !content.starts_with([' ', '\t']) {
            frames.reverse();
            blocks.push(Block {
                language: Language::Python,
                lines: start..i + 1,
                frames,
                location: None,
            });
            return i + 1;
        }
        i += 1;
    }
    i
}

/// A pytest failure section: from its `____ name ____` header to the next header, a
/// banner, captured output or a traceback of Python's own format.
fn pytest(lines: &[String], start: usize, blocks: &mut Vec<Block>) -> usize {
    let mut frames = Vec::new();
    let mut def = None;
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i].as_str();
        if PYTEST_HEAD.is_match(line) || PYTEST_END.is_match(line) || starts_block(line) {
            break;
        }
        if let Some(c) = PY_DEF.captures(line) {
            def = Some(c["name"].to_string());
        } else if let Some(c) = PYTEST_AT.captures(line) {
            let name = c.name("name").map(|m| m.as_str().to_string());
            frames.push(RawFrame {
                function: name.or_else(|| def.take()),
                location: Some(c["path"].to_string()),
            });
            def = None;
        }
        i += 1;
    }
    frames.reverse();
    blocks.push(Block {
        language: Language::Python,
        lines: start..i,
        frames,
        location: None,
    });
    i
}

/// A Java or JavaScript stack: the `at` lines from `first`, the message above them.
fn stack(lines: &[String], first: usize, blocks: &mut Vec<Block>) -> usize {
    let Some((language, _)) = at_frame(&lines[first]) else {
        return first + 1;
    };
    let floor = blocks.last().map_or(0, |b| b.lines.end);
    let mut start = first;
    if first > floor && !lines[first - 1].trim().is_empty() {
        start = first - 1;
        // A message over several lines: back to the line that names the error.
        let lowest = first.saturating_sub(MESSAGE_LINES).max(floor);
        if !ERROR_HEAD.is_match(&lines[start]) && language == Language::JavaScript {
            let mut up = start;
            while up > lowest && !lines[up - 1].trim().is_empty() {
                up -= 1;
                if ERROR_HEAD.is_match(&lines[up]) {
                    start = up;
                    break;
                }
            }
        }
    }
    let mut frames = Vec::new();
    let mut i = first;
    while i < lines.len() {
        let line = lines[i].as_str();
        if let Some((lang, frame)) = at_frame(line)
            && lang == language
        {
            frames.push(frame);
        } else if let Some(c) = JAVA_MORE.captures(line) {
            if language == Language::Java {
                let n: usize = c["n"].parse().unwrap_or(0);
                if let Some(enclosing) = blocks
                    .iter()
                    .rev()
                    .find(|b| b.language == Language::Java && b.lines.end <= start)
                {
                    let from = enclosing.frames.len().saturating_sub(n);
                    frames.extend(enclosing.frames[from..].iter().cloned());
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    blocks.push(Block {
        language,
        lines: start..i,
        frames,
        location: None,
    });
    if language == Language::Java && i < lines.len() && JAVA_CAUSE.is_match(&lines[i]) {
        if i + 1 < lines.len() && at_frame(&lines[i + 1]).is_some() {
            return stack(lines, i + 1, blocks);
        }
        // A cause with no frames of its own.
        blocks.push(Block {
            language,
            lines: i..i + 1,
            frames: Vec::new(),
            location: None,
        });
        return i + 1;
    }
    i
}

fn rust(lines: &[String], start: usize, blocks: &mut Vec<Block>) -> usize {
    let rest = RUST_PANIC
        .captures(&lines[start])
        .and_then(|c| c.name("rest"))
        .map_or("", |m| m.as_str());
    let path = RUST_NEW_LOC
        .captures(rest)
        .or_else(|| RUST_OLD_LOC.captures(rest))
        .and_then(|c| c.name("path"))
        .map(|m| m.as_str().to_string());
    let location = path.map(|p| RawFrame {
        function: None,
        location: Some(p),
    });
    let mut frames = Vec::new();
    let mut i = start + 1;
    let mut in_trace = false;
    while i < lines.len() {
        let line = lines[i].as_str();
        if (!in_trace && starts_block(line)) || (in_trace && line.trim().is_empty()) {
            break;
        }
        if line.trim() == "stack backtrace:" {
            in_trace = true;
        } else if in_trace {
            if let Some(c) = RUST_FRAME.captures(line) {
                frames.push(RawFrame {
                    function: Some(c["name"].to_string()),
                    location: None,
                });
            } else if let Some(c) = RUST_AT.captures(line) {
                if let Some(last) = frames.last_mut()
                    && last.location.is_none()
                {
                    last.location = Some(c["path"].to_string());
                }
            } else {
                break;
            }
        } else if line.starts_with("note: ") || line.trim().is_empty() {
            break;
        }
        i += 1;
    }
    blocks.push(Block {
        language: Language::Rust,
        lines: start..i,
        frames,
        location,
    });
    i
}

fn go(lines: &[String], start: usize, blocks: &mut Vec<Block>) -> usize {
    let mut frames = Vec::new();
    let mut i = start + 1;
    let mut in_goroutine = false;
    while i < lines.len() {
        let line = lines[i].as_str();
        if !in_goroutine {
            if GO_GOROUTINE.is_match(line) {
                in_goroutine = true;
            } else if GO_PANIC.is_match(line) || i > start + GO_PREAMBLE {
                // No goroutine dump follows: the block is the panic line alone.
                i = start + 1;
                break;
            }
        } else if let Some(c) = GO_AT.captures(line) {
            if let Some(last) = frames.last_mut()
                && let RawFrame { location: None, .. } = last
            {
                last.location = Some(c["path"].to_string());
            }
        } else if line.starts_with("created by ") || line.trim().is_empty() {
            break;
        } else if let Some(c) = GO_CALL.captures(line) {
            let call = c["name"].to_string();
            // `main.f(...)`: the name is what comes before the last `(`.
            let name = line
                .rfind('(')
                .map_or(call.clone(), |at| line[..at].to_string());
            frames.push(RawFrame {
                function: Some(name),
                location: None,
            });
        } else {
            break;
        }
        i += 1;
    }
    blocks.push(Block {
        language: Language::Go,
        lines: start..i,
        frames,
        location: None,
    });
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of every block of `raw`, described, with `/work/ws` as the tree.
    fn frames_of(raw: &str) -> Vec<String> {
        let normalizer = Normalizer::new(&["/work/ws".to_string()]);
        let prefixes = ["<tmp>".to_string()];
        let roots = TreeRoots {
            normalizer: &normalizer,
            prefixes: &prefixes,
        };
        parse(raw)
            .iter()
            .map(|b| describe(&b.frames(roots)))
            .collect()
    }

    #[test]
    fn python_tracebacks_skip_the_standard_library() {
        let raw = r#"Traceback (most recent call last):
  File "/work/ws/main.py", line 5, in <module>
    import b; b.b()
              ^^^^^
  File "/work/ws/b.py", line 3, in b
    json.loads("{")
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 353, in raw_decode
    obj, end = self.scan_once(s, idx)
               ^^^^^^^^^^^^^^^^^^^^^^
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)
"#;
        assert_eq!(frames_of(raw), ["b (b.py) < <module> (main.py)"]);
        let blocks = parse(raw);
        assert_eq!(blocks[0].language, Language::Python);
        assert_eq!(blocks[0].lines, 0..13);
        // Relative paths, a venv's site-packages and `<frozen …>` frames.
        let relative = "Traceback (most recent call last):\n  File \"app/run.py\", line 2, in go\n\
            File \"<frozen runpy>\", line 88, in _run_code\n  \
            File \"/work/ws/.venv/lib/python3.11/site-packages/x/y.py\", line 1, in z\n\
            KeyError: 'k'\n";
        assert_eq!(frames_of(relative), ["go (app/run.py)"]);
    }

    #[test]
    fn python_chains_and_group_leaves_are_blocks_of_their_own() {
        let chained = r#"Traceback (most recent call last):
  File "/work/ws/main.py", line 9, in g
    {}["k"]
    ~~^^^^^
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/work/ws/main.py", line 12, in <module>
    g()
  File "/work/ws/main.py", line 11, in g
    a.a()
  File "/work/ws/pkg/a.py", line 3, in a
    raise ValueError("bad")
ValueError: bad
"#;
        assert_eq!(
            frames_of(chained),
            [
                "g (main.py)",
                "a (pkg/a.py) < g (main.py) < <module> (main.py)"
            ]
        );
        let group = r#"  + Exception Group Traceback (most recent call last):
  |   File "/work/ws/main.py", line 20, in <module>
  |     raise ExceptionGroup("many", es)
  | ExceptionGroup: many (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/work/ws/main.py", line 18, in <module>
    |     try: f()
    |          ^^^
    |   File "/work/ws/main.py", line 14, in leaf1
    |     def leaf1(): raise ValueError("bad")
    |                  ^^^^^^^^^^^^^^^^^^^^^^^
    | ValueError: bad
    +---------------- 2 ----------------
    | Traceback (most recent call last):
    |   File "/work/ws/main.py", line 18, in <module>
    |     try: f()
    |          ^^^
    |   File "/work/ws/main.py", line 15, in leaf2
    |     def leaf2(): raise TypeError("t")
    |                  ^^^^^^^^^^^^^^^^^^^^
    | TypeError: t
    +------------------------------------
"#;
        assert_eq!(
            frames_of(group),
            [
                "<module> (main.py)",
                "leaf1 (main.py) < <module> (main.py)",
                "leaf2 (main.py) < <module> (main.py)"
            ]
        );
        let lines: Vec<_> = parse(group).iter().map(|b| b.lines.clone()).collect();
        assert_eq!(lines, [0..4, 5..13, 14..22]);
    }

    #[test]
    fn pytest_sections_are_blocks_in_the_long_and_the_short_format() {
        let long = "=================================== FAILURES ===================================
____________________________________ test_a ____________________________________

    def test_a():
>       a.a(3)

tests/test_a.py:5: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n
x = 3

    def a(x):
        y = helper(x)
        if y > 0:
>           raise ValueError(\"bad\")
E           ValueError: bad

a.py:8: ValueError
____________________________________ test_b ____________________________________

    def test_b():
>       assert a.helper(1) == 3
E       assert 2 == 3
E        +  where 2 = <function helper at 0x7f6fbc96b380>(1)

tests/test_a.py:9: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_a - ValueError: bad
";
        assert_eq!(
            frames_of(long),
            [
                "a (a.py) < test_a (tests/test_a.py)",
                "test_b (tests/test_a.py)"
            ]
        );
        let lines: Vec<_> = parse(long).iter().map(|b| b.lines.clone()).collect();
        assert_eq!(lines, [1..18, 18..26]);
        let short =
            "____________________________________ test_a ____________________________________
tests/test_a.py:5: in test_a
    a.a(3)
a.py:8: in a
    raise ValueError(\"bad\")
E   ValueError: bad
=========================== short test summary info ============================
";
        assert_eq!(frames_of(short), ["a (a.py) < test_a (tests/test_a.py)"]);
    }

    #[test]
    fn java_causes_take_the_frames_their_enclosing_trace_shares() {
        let raw = "Exception in thread \"main\" java.lang.RuntimeException: wrapped
\tat com.ex.App.b(App.java:4)
\tat com.ex.App.lambda$main$0(App.java:5)
\tat java.base/java.lang.Iterable.forEach(Iterable.java:75)
\tat com.ex.App.main(App.java:5)
Caused by: java.lang.IllegalStateException: bad
\tat com.ex.App.a(App.java:3)
\t... 4 more
";
        assert_eq!(
            frames_of(raw),
            [
                "com.ex.App.b (App.java) < com.ex.App.lambda$main$N (App.java) < com.ex.App.main (App.java)",
                "com.ex.App.a (App.java) < com.ex.App.b (App.java) < com.ex.App.lambda$main$N (App.java)"
            ]
        );
        let lines: Vec<_> = parse(raw).iter().map(|b| b.lines.clone()).collect();
        assert_eq!(lines, [0..5, 5..8]);
        let native = "java.lang.UnsatisfiedLinkError: x\n\tat app//com.ex.N.load(Native Method)\n\
                      \tat app//com.ex.N.init(N.java:9)\n";
        assert_eq!(frames_of(native), ["com.ex.N.init (N.java)"]);
    }

    #[test]
    fn node_stacks_skip_node_internals() {
        let raw = "/work/ws/a.js:1
function a() { throw new Error(\"bad\"); }
               ^

Error: bad
    at a (/work/ws/a.js:1:22)
    at /work/ws/main.js:2:37
    at Array.forEach (<anonymous>)
    at main (/work/ws/main.js:2:23)
    at Object.<anonymous> (/work/ws/main.js:3:77)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)

Node.js v20.20.2
";
        assert_eq!(frames_of(raw), ["a (a.js) < main.js < main (main.js)"]);
        assert_eq!(parse(raw)[0].lines, 4..12);
        let esm = "TypeError: x is not a function\n    at async run (file:///work/ws/src/m.mjs:4:3)\n    \
                   at new Box (/work/ws/src/box.ts:9:11)\n";
        assert_eq!(frames_of(esm), ["run (src/m.mjs) < Box (src/box.ts)"]);
        // A message over several lines starts the block.
        let long = "Error: first\nsecond line\n    at f (/work/ws/f.js:1:1)\n";
        assert_eq!(parse(long)[0].lines, 0..3);
    }

    #[test]
    fn rust_panics_keep_the_file_or_the_backtrace_frames() {
        let plain = "thread 'main' (14679) panicked at src/main.rs:1:34:\nbad 3\n\
                     note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(frames_of(plain), ["src/main.rs"]);
        assert_eq!(parse(plain)[0].lines, 0..2);
        let old = "thread 'main' panicked at 'index out of bounds', src/lib.rs:2:5\n";
        assert_eq!(frames_of(old), ["src/lib.rs"]);
        let registry =
            "thread 'main' panicked at /root/.cargo/registry/src/x-1.0/src/lib.rs:2:5:\nboom\n";
        assert_eq!(frames_of(registry), [""]);
        let traced = "thread 'main' (14680) panicked at src/main.rs:1:34:
bad 3
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: rs::f
             at ./src/main.rs:1:34
   3: rs::g::h0123456789abcdef
             at ./src/main.rs:2:17
   4: rs::main
             at ./src/main.rs:3:28
   5: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
";
        assert_eq!(
            frames_of(traced),
            ["rs::f (src/main.rs) < rs::g (src/main.rs) < rs::main (src/main.rs)"]
        );
        assert_eq!(parse(traced)[0].lines, 0..15);
    }

    #[test]
    fn go_panics_skip_the_runtime() {
        let raw = "panic: runtime error: index out of range [5] with length 1

goroutine 1 [running]:
panic({0x45e3a0, 0xc000012018})
\t/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212
example.com/m/pkg.(*T).F(...)
\t/work/ws/pkg/t.go:3
main.main.func1(...)
\t/work/ws/main.go:6
main.main()
\t/work/ws/main.go:7 +0x1e
exit status 2
";
        assert_eq!(
            frames_of(raw),
            [
                "example.com/m/pkg.(*T).F (pkg/t.go) < main.main.funcN (main.go) < main.main (main.go)"
            ]
        );
        assert_eq!(parse(raw)[0].lines, 0..11);
        // A `panic:` line with no goroutine dump after it is a block of one line.
        let bare = "panic: x\nsome\nother\nlines\nhere\nand\nmore\nof\nthem\nstill\n";
        assert_eq!(parse(bare)[0].lines, 0..1);
    }

    #[test]
    fn several_failures_are_several_blocks_in_order() {
        let raw = "thread 'a' panicked at src/a.rs:1:1:\nboom\n\
                   thread 'b' panicked at src/b.rs:1:1:\nboom\n\
                   Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: v\n\
                   Error: js\n    at g (g.js:1:1)\n";
        assert_eq!(
            frames_of(raw),
            ["src/a.rs", "src/b.rs", "f (x.py)", "g (g.js)"]
        );
    }

    /// Random interleavings of real output pieces: parsing never panics, blocks are in
    /// order, never overlap, stay inside the output, and no frame keeps an absolute path,
    /// a line number or `..`.
    #[test]
    fn blocks_are_ordered_and_frames_relative_on_any_output() {
        const PIECES: &str = "Traceback (most recent call last):\n§  File \"/work/ws/a.py\", line 3, in a\n§\
            File \"/usr/lib/x.py\", line 1, in y\n§    raise X\n§ValueError: bad\n§\n§  | §  +-+--- 1 ---\n§\
            \tat com.x.A.b(A.java:4)\n§\t... 2 more\n§Caused by: java.lang.E: x\n§    at f (/work/ws/f.js:1:2)\n§\
            \x20   at /work/ws/../up.js:1:1\n§    at node:internal/x:1:1\n§thread 'main' panicked at src/m.rs:1:2:\n§\
            stack backtrace:\n§   0: c::f\n§             at ./src/m.rs:1:1\n§panic: p\n§goroutine 1 [running]:\n§\
            main.f(...)\n§\t/work/ws/m.go:3 +0x1\n§\x1b[31m§Error: e\n§ at §§x";
        let pieces: Vec<&str> = PIECES.split('§').collect();
        let normalizer = Normalizer::new(&["/work/ws".to_string()]);
        let prefixes = ["<tmp>".to_string()];
        let roots = TreeRoots {
            normalizer: &normalizer,
            prefixes: &prefixes,
        };
        let mut rng = crate::test_rng::XorShift::new(0x2545_F491_4F6C_DD1D);
        let mut next = |bound: usize| rng.below(bound);
        for _ in 0..5_000 {
            let len = next(24);
            let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            let lines = text.split('\n').count();
            let blocks = parse(&text);
            let mut end = 0;
            for block in &blocks {
                assert!(block.lines.start >= end, "{text:?}: {blocks:?}");
                assert!(block.lines.start < block.lines.end && block.lines.end <= lines);
                end = block.lines.end;
                let frames = block.frames(roots);
                assert!(frames.len() <= MAX_FRAMES);
                for frame in frames {
                    let path = frame.path.unwrap_or_default();
                    assert!(
                        !path.starts_with('/') && !path.contains(".."),
                        "{path} in {text:?}"
                    );
                    assert!(!path.ends_with(":N") && !path.bytes().any(|b| b.is_ascii_digit()));
                }
            }
        }
    }
}

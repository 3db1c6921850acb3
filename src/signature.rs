//! Failure signatures: deciding whether two runs fail *in the same way*.
//!
//! A reducer may only keep a cut when the failure it is chasing survives the
//! cut. Comparing whole outputs is far too strict (timings, addresses, temp
//! directories and line numbers change on every run) and comparing exit codes
//! is far too loose. This module sits in between: [`Normalizer`] rewrites the
//! incidental parts of tool output into stable placeholders,
//! [`learn_signature`] picks the one line that best names the failure, and
//! [`matches`] checks whether a later (normalised) output still shows it.
//! [`exception_class`] pulls the class name out of exception-style signatures.

use std::sync::LazyLock;

use regex::{Captures, Regex};

macro_rules! regex {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("valid regex"));
    };
}

/// Placeholder for run-specific directories.
const TMP: &str = "<tmp>";

/// Directories whose contents are treated as scratch space.
const TEMP_ROOTS: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/private/tmp",
    "/private/var/tmp",
    "/var/folders",
    "/private/var/folders",
    "/dev/shm",
];

regex!(
    ANSI,
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
);
regex!(
    PATH_TOKEN,
    r#"(?m)(?P<pre>^|[^\w.~>/\-])(?P<path>/[^\s'"`:,;()\[\]{}<>|=]*)|<tmp>(?P<rest>[^\s'"`:,;()\[\]{}<>|=]*)"#
);
regex!(
    UUID,
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
);
regex!(ADDR, r"\b0[xX][0-9a-fA-F]+");
regex!(LONG_HEX, r"\b[0-9a-fA-F]{12,}\b");
regex!(
    DURATION,
    r"\b[0-9]+(?:\.[0-9]+)? ?(?:ns|us|µs|μs|ms|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours)\b"
);
regex!(DIGITS, r"[0-9]+");

/// Rewrites tool output so that runs differing only in incidental details
/// produce identical text.
///
/// [`Normalizer::normalize`] applies these rules, in this order:
///
/// 1. **Terminal escapes**: CSI sequences (`ESC [ … final-byte`) and OSC
///    sequences (`ESC ] … BEL` or `ESC ] … ESC \`) are deleted, repeatedly,
///    until none remain.
/// 2. **Known run directories**: every `extra_paths` entry, longest first, is
///    replaced by `<tmp>` wherever it stands as a whole path prefix (not
///    preceded by a word character, `.`, `-`, `~` or `>`, and not followed by
///    one of those or `<`), so `/x/w3/proj/src/a.py` becomes
///    `<tmp>/src/a.py`. Digit runs inside an entry (and a literal `N`) match
///    any digit run or `N`, which keeps the rule stable under rule 7.
/// 3. **Other temporary paths**: an absolute path token (running up to
///    whitespace, a quote, backtick, `:`, `,`, `;`, `=`, `|`, or a bracket) is
///    run-specific when it contains a component starting with `tmp` or `.tmp`
///    (the names `mkdtemp`, `mktemp` and the `tempfile` crate generate) or
///    starts at a temp root (`/tmp`, `/var/tmp`, `/var/folders`, `/dev/shm`,
///    and their `/private` forms on macOS). Everything up to and including the
///    last `tmp*` component is replaced by `<tmp>`; for tokens under a temp
///    root, only the final component survives. A `<tmp>` produced by rule 2
///    also absorbs any `tmp*` components that follow it. Examples:
///    `/tmp/pytest-of-root/pytest-3/test_x0/a.py` → `<tmp>/a.py`,
///    `/tmp/tmpk3j2xq.py` → `<tmp>`, `/home/u/.tmpAb12/src/x.rs` →
///    `<tmp>/src/x.rs`. Random directory names therefore never reach the
///    output; a random *file* name survives only if it does not start with
///    `tmp`.
/// 4. **UUIDs** (8-4-4-4-12 hex digits) become `<uuid>`.
/// 5. **Hex**: `0x…` literals become `<addr>`; bare hex words of 12 or more
///    characters containing both a digit and a letter (commit ids, object
///    ids) become `<hex>`.
/// 6. **Durations**: a number directly followed (optionally after one space)
///    by a time unit that ends the word (`ns`, `us`, `µs`, `ms`, `s`, `sec`,
///    `secs`, `seconds`, `m`, `min`, `minutes`, `h`, `hours`, …) becomes
///    `<dur>`; `5 sheep` and `3 settings` are left alone.
/// 7. **Numbers**: every remaining run of ASCII digits becomes `N`.
/// 8. **Whitespace**: trailing whitespace is removed from every line, which
///    also turns `\r\n` line endings into `\n`.
///
/// Normalisation is idempotent: normalising normalised text changes nothing.
#[derive(Debug, Clone)]
pub struct Normalizer {
    known: Vec<Regex>,
}

impl Normalizer {
    /// Creates a normaliser that also hides `extra_paths`, the absolute
    /// directories known to be specific to one run (such as the workspace
    /// copy and the per-run `TMPDIR`). Trailing slashes are ignored; entries
    /// that are not absolute, are the root itself, or contain `<`/`>` are
    /// skipped.
    pub fn new(extra_paths: &[String]) -> Self {
        let mut paths: Vec<&str> = extra_paths
            .iter()
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| p.starts_with('/') && !p.contains(['<', '>']))
            .collect();
        paths.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        paths.dedup();
        let known = paths
            .iter()
            .filter_map(|p| Regex::new(&digit_tolerant_pattern(p)).ok())
            .collect();
        Self { known }
    }

    /// Applies the rules listed on [`Normalizer`] to `text`.
    pub fn normalize(&self, text: &str) -> String {
        let mut s = strip_ansi(text);
        for re in &self.known {
            s = replace_known_path(re, &s);
        }
        let s = PATH_TOKEN.replace_all(&s, rewrite_path_token);
        let s = UUID.replace_all(&s, "<uuid>");
        let s = ADDR.replace_all(&s, "<addr>");
        let s = LONG_HEX.replace_all(&s, |c: &Captures<'_>| {
            let word = c.get(0).map_or("", |m| m.as_str());
            let digit = word.bytes().any(|b| b.is_ascii_digit());
            let letter = word.bytes().any(|b| b.is_ascii_alphabetic());
            if digit && letter {
                "<hex>".to_string()
            } else {
                word.to_string()
            }
        });
        let s = DURATION.replace_all(&s, "<dur>");
        let s = DIGITS.replace_all(&s, "N");
        s.split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn strip_ansi(text: &str) -> String {
    let mut s = text.to_string();
    loop {
        let next = ANSI.replace_all(&s, "");
        if next.len() == s.len() {
            return s;
        }
        s = next.into_owned();
    }
}

/// Builds a pattern for a known path in which each run of digits or `N`
/// matches any such run.
fn digit_tolerant_pattern(path: &str) -> String {
    let mut pattern = String::new();
    let mut in_run = false;
    for ch in path.chars() {
        if ch.is_ascii_digit() || ch == 'N' {
            if !in_run {
                pattern.push_str("[0-9N]+");
            }
            in_run = true;
        } else {
            pattern.push_str(&regex::escape(ch.encode_utf8(&mut [0; 4])));
            in_run = false;
        }
    }
    pattern
}

fn replace_known_path(re: &Regex, text: &str) -> String {
    let glued = |c: char| c.is_alphanumeric() || "_.-".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in re.find_iter(text) {
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        if before.is_none_or(|c| !glued(c) && c != '~' && c != '>')
            && after.is_none_or(|c| !glued(c) && c != '<')
        {
            out.push_str(&text[last..m.start()]);
            out.push_str(TMP);
            last = m.end();
        }
    }
    out.push_str(&text[last..]);
    out
}

fn rewrite_path_token(c: &Captures<'_>) -> String {
    if let Some(rest) = c.name("rest") {
        let rest = rest.as_str();
        return format!("{TMP}{}", run_specific_tail(rest, true).unwrap_or(rest));
    }
    let pre = c.name("pre").map_or("", |m| m.as_str());
    let path = c.name("path").map_or("", |m| m.as_str());
    match run_specific_tail(path, false) {
        Some(tail) => format!("{pre}{TMP}{tail}"),
        None => format!("{pre}{path}"),
    }
}

/// Returns what remains of `path` once its run-specific prefix is cut off,
/// or `None` when nothing in it is run-specific. `known` says the path
/// already follows a `<tmp>` placeholder.
fn run_specific_tail(path: &str, known: bool) -> Option<&str> {
    let mut cut = known.then_some(0);
    let mut offset = 0;
    for component in path.split('/') {
        let end = offset + component.len();
        if component.starts_with("tmp") || component.starts_with(".tmp") {
            cut = Some(end);
        }
        offset = end + 1;
    }
    let under_root = TEMP_ROOTS.iter().any(|root| {
        path.strip_prefix(root)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    if !known && under_root {
        let last_slash = path.rfind('/').unwrap_or(0);
        cut = Some(cut.map_or(last_slash, |c| c.max(last_slash)));
    }
    cut.map(|c| &path[c..])
}

/// What sort of failure a [`Signature`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureKind {
    /// A named exception or error class, usually with a message
    /// (`IndexError: …`, `java.lang.NullPointerException: …`).
    Exception,
    /// A runtime panic: Rust `panicked at` (or its message) and Go `panic:`.
    Panic,
    /// A compiler diagnostic (gcc, clang, rustc, tsc, javac, go build).
    CompilerError,
    /// A failed assertion (`AssertionError`, pytest `assert`, C `assert`,
    /// jest `expect(…)`, Go `t.Errorf` lines).
    Assertion,
    /// Anything else that looks like an error.
    Generic,
}

/// The line that identifies a failure, as chosen by [`learn_signature`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The identifying text: the line with gutters and framing prefixes
    /// removed (pytest's `E`, `Caused by:`, `FAILED … - `), trimmed.
    pub text: String,
    /// What sort of failure the text describes.
    pub kind: SignatureKind,
    /// The score from [`score_line`], adjusted for context.
    pub score: i32,
}

regex!(
    CLASS,
    r#"^(?:(?:Exception in thread "[^"]*"|Caused by:|Uncaught|Unhandled exception\.|Unhandled rejection:?)\s+)?(?P<class>(?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault))(?:\s*\[[^\]]*\])?(?::\s*(?P<msg>.*))?$"#
);
regex!(RUST_PANIC, r"^thread '[^']*' panicked at (?P<rest>.*)$");
regex!(PANIC_LOCATION, r"^\S+:N:N:$");
regex!(GO_PANIC, r"^(?:panic|fatal error): .+$");
regex!(
    COMPILER,
    r"^(?:error\[[A-Z]*N\]: .+|\S+?(?::N){1,3}: (?:fatal )?error: .+|\S+\(N(?:,N)?\): (?:fatal )?error [A-Z]+N: .+|\S+:N:N - error [A-Z]+N: .+|\S+\.go:N:N: .+)$"
);
regex!(
    ASSERTION,
    r"^(?:assert\s.+|assertion\b.*\bfailed\b.*|.*\bAssertion [`'].*' failed\.?|expect\(.*\)\.\w+\(.*|\S+_test\.go:N: .+)$"
);
regex!(SANITIZER, r"Sanitizer: \S|^\S+:N:N: runtime error: .+$");
regex!(PYTEST_SUMMARY, r"^(?:FAILED|ERROR) \S+ - (?P<msg>.+)$");
regex!(LOWER_ERROR, r"^error: .+$");
regex!(
    PREAMBLE,
    r"^(?:Traceback \(most recent call last\):?|During handling of the above exception, another exception occurred:?|The above exception was the direct cause of the following exception:?|error: (?:could not compile|aborting due to|test failed|process didn't exit successfully|Recipe for target|command failed)\b.*|make(?:\[N\])?: \*\*\*.*|(?:##\[error\])?Error: Process completed with exit code.*|npm (?:ERR!|error)(?:\s.*)?|error Command failed.*|.*\bELIFECYCLE\b.*|collect2: error: ld returned.*|N errors? generated\.|compilation terminated\.|For more information about (?:this|an) error.*|Some errors have detailed explanations.*|exit status N|Process finished with exit code.*|Command exited with non-zero status.*|FAILED \((?:failures|errors)=.*|Ran N tests? in.*|test result: .*|Tests?:\s.*|Test Suites:.*|Snapshots:.*|Time:.*|FAIL:?\s.*|stack backtrace:|note: run with `RUST_BACKTRACE.*)$"
);
regex!(
    BARE,
    r"^(?i:errors?|fail|failed|failures?|fatal|panic|exception|ok|pass|passed)\s*[:!.]?$"
);
regex!(BANNER, r"^[=_\-*#~+]{3,}");
regex!(
    TALLY_WORD,
    r"\bN (?:failed|passed|errors?|skipped|ignored|measured|filtered out|pending|todo|total|xfailed|xpassed|warnings?|deselected|rerun|tests?|suites?|snapshots?)\b"
);
regex!(
    SOURCE_ECHO,
    r"^(?:>(?:\s|$)|(?:N\s*)?\|(?:\s|$)|-->\s|::: |= (?:note|help):)"
);
regex!(
    FRAME,
    r#"^(?:at (?:.* \(.*\)|\S+\(.*\)|\S+:N(?::N)?)$|\.\.\. N more\b|File ".*", line N|goroutine N \[|N: \S|\S+:N \+<addr>$)"#
);
regex!(NOTE, r"^(?:note|help|warning):");
regex!(
    KEYWORD,
    r"(?i)error|panic|fatal|fail|assert|abort|segmentation fault|core dumped|undefined reference|not found|cannot|can't|unable to|exception|denied|no such file|timed out"
);

struct Verdict<'a> {
    score: i32,
    kind: SignatureKind,
    text: &'a str,
}

/// Strips surrounding whitespace and pytest's `E` gutter.
fn content(raw: &str) -> &str {
    match raw.strip_prefix('E') {
        Some(rest) if rest.is_empty() || rest.starts_with([' ', '\t']) => rest.trim(),
        _ => raw.trim(),
    }
}

fn classify(raw: &str) -> Verdict<'_> {
    use SignatureKind::*;
    let line = content(raw);
    let verdict = |score, kind, text| Verdict { score, kind, text };
    if line.is_empty() {
        return verdict(0, Generic, line);
    }
    if !line.chars().any(char::is_alphanumeric) {
        return verdict(-10, Generic, line);
    }
    let tallies = TALLY_WORD.find_iter(line).count();
    let tally = tallies >= 2
        || (tallies == 1
            && (line.contains("<dur>")
                || TALLY_WORD.find(line).is_some_and(|m| m.len() == line.len())));
    if tally || PREAMBLE.is_match(line) || BARE.is_match(line) || BANNER.is_match(line) {
        return verdict(-50, Generic, line);
    }
    if SOURCE_ECHO.is_match(line) || FRAME.is_match(line) {
        return verdict(-30, Generic, line);
    }
    if NOTE.is_match(line) {
        return verdict(-5, Generic, line);
    }
    if let Some(c) = RUST_PANIC.captures(line) {
        let located_only = c
            .name("rest")
            .is_some_and(|m| PANIC_LOCATION.is_match(m.as_str()));
        return verdict(if located_only { 40 } else { 100 }, Panic, line);
    }
    if GO_PANIC.is_match(line) {
        return verdict(100, Panic, line);
    }
    if COMPILER.is_match(line) {
        return verdict(95, CompilerError, line);
    }
    if let Some(c) = CLASS.captures(line) {
        if let Some(class) = c.name("class") {
            let name = class.as_str().rsplit('.').next().unwrap_or_default();
            let has_message = c.name("msg").is_some_and(|m| !m.as_str().is_empty());
            let generic = [
                "Error",
                "Exception",
                "Exit",
                "Interrupt",
                "Failure",
                "Fault",
            ]
            .contains(&name);
            let score = match (name.ends_with("Warning"), generic, has_message) {
                (true, _, _) => 30,
                (_, true, true) => 80,
                (_, true, false) => 10,
                (_, false, true) => 100,
                (_, false, false) => 90,
            };
            let kind = if name == "AssertionError" {
                Assertion
            } else {
                Exception
            };
            return verdict(score, kind, &line[class.start()..]);
        }
    }
    if ASSERTION.is_match(line) {
        return verdict(85, Assertion, line);
    }
    if SANITIZER.is_match(line) {
        return verdict(90, Generic, line);
    }
    if let Some(msg) = PYTEST_SUMMARY.captures(line).and_then(|c| c.name("msg")) {
        let inner = classify(msg.as_str());
        return verdict(inner.score.clamp(15, 40), inner.kind, inner.text);
    }
    if LOWER_ERROR.is_match(line) {
        return verdict(75, CompilerError, line);
    }
    let mut found: Vec<String> = KEYWORD
        .find_iter(line)
        .map(|m| m.as_str().to_lowercase())
        .collect();
    found.sort();
    found.dedup();
    match found.len() {
        0 => verdict(0, Generic, line),
        n => verdict((15 + 5 * n as i32).min(35), Generic, line),
    }
}

/// Classifies `raw` knowing the line before it. Two layouts need context:
/// modern rustc prints the panic message on the line after
/// `thread '…' panicked at file:N:N:`, so that line is promoted to a
/// high-scoring [`SignatureKind::Panic`]; and indented lines right after a
/// Python `File "…", line N` frame are echoed source, so they are penalised.
fn classify_after<'a>(raw: &'a str, previous: &str) -> Verdict<'a> {
    let verdict = classify(raw);
    let before = content(previous);
    if let Some(c) = RUST_PANIC.captures(before) {
        let located_only = c
            .name("rest")
            .is_some_and(|m| PANIC_LOCATION.is_match(m.as_str()));
        if located_only && verdict.score >= 0 && !verdict.text.is_empty() {
            return Verdict {
                score: 100,
                kind: SignatureKind::Panic,
                ..verdict
            };
        }
    }
    if before.starts_with("File \"") && FRAME.is_match(before) && raw.starts_with([' ', '\t']) {
        return Verdict {
            score: -30,
            kind: SignatureKind::Generic,
            ..verdict
        };
    }
    verdict
}

/// Scores how well a single normalised line identifies a failure.
///
/// Named exceptions with a message (`IndexError: …`), Go panics and panic
/// messages score 100; bare specific classes 90; compiler diagnostics
/// with a location or code 95; sanitizer reports 90; assertion lines 85;
/// generic `Error: …` 80; plain `error: …` 75; lines that merely mention
/// words such as `error`, `failed`, `cannot` or `not found` 20–35; pytest
/// `FAILED … - msg` summaries 15–40. Tallies, banners, runner preambles
/// (`Traceback (most recent call last):`, `make: ***`, `npm ERR!`, …) and
/// bare keywords score -50; stack frames and echoed source or caret gutters
/// -30; `note:`/`help:`/`warning:` -5; punctuation-only lines -10; everything
/// else 0. Digits are expected to be normalised to `N` already.
pub fn score_line(line: &str) -> i32 {
    classify(line).score
}

/// Picks the line of `normalized_output` that best identifies the failure,
/// or `None` when no line scores above zero.
///
/// Tie rule: among equally scored lines the **last** wins, because runtimes
/// print the final (outermost or root-cause) error last — a chained Python
/// traceback ends with the exception that escaped, Java's last `Caused by:`
/// is the root cause. The one exception is compiler diagnostics: when the
/// best lines are [`SignatureKind::CompilerError`], the **first** wins, since
/// later diagnostics are often consequences of the first.
pub fn learn_signature(normalized_output: &str) -> Option<Signature> {
    let mut best: Option<Verdict<'_>> = None;
    let mut previous = "";
    for raw in normalized_output.lines() {
        let verdict = classify_after(raw, previous);
        previous = raw;
        let better = match &best {
            None => verdict.score > 0,
            Some(b) => {
                verdict.score > b.score
                    || (verdict.score == b.score && b.kind != SignatureKind::CompilerError)
            }
        };
        if better {
            best = Some(verdict);
        }
    }
    best.map(|v| Signature {
        text: v.text.to_string(),
        kind: v.kind,
        score: v.score,
    })
}

/// Reports whether some line of `normalized_output` contains
/// `signature_text`, both trimmed; extra context around it on the line is
/// allowed. An empty signature never matches. A multi-line signature is
/// looked for in the output as a whole.
pub fn matches(signature_text: &str, normalized_output: &str) -> bool {
    let needle = signature_text.trim();
    if needle.is_empty() {
        return false;
    }
    if needle.contains('\n') {
        return normalized_output.contains(needle);
    }
    normalized_output.lines().any(|line| line.contains(needle))
}

/// Returns the class name at the start of an exception-style signature,
/// e.g. `TypeError` for `TypeError: x is not a function` or
/// `java.lang.IllegalStateException` for
/// `Exception in thread "main" java.lang.IllegalStateException: boom`.
/// Returns `None` when the (first line of the) signature does not start with
/// a name ending in `Error`, `Exception`, `Exit`, `Interrupt`, `Warning`,
/// `Failure` or `Fault`.
pub fn exception_class(signature: &str) -> Option<&str> {
    let first = content(signature.lines().next().unwrap_or_default());
    CLASS
        .captures(first)
        .and_then(|c| c.name("class"))
        .map(|m| m.as_str())
}

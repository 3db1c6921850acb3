//! Failure signatures: deciding whether two runs fail *in the same way*.
//!
//! A reducer may only keep a cut when the failure it is chasing survives the
//! cut. Comparing whole outputs is far too strict (timings, addresses, temp
//! directories and line numbers change on every run) and comparing exit codes
//! is far too loose. This module sits in between: [`Normalizer`] rewrites the
//! incidental parts of tool output into stable placeholders,
//! [`learn_signature`] picks the one line that best names the failure, and
//! [`matches()`] checks whether a later (normalised) output still shows it.
//! [`exception_class`] pulls the class name out of exception-style signatures.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Declares lazily compiled regexes: `regexes! { NAME = r"pattern"; … }`.
macro_rules! regexes {
    ($($name:ident = $pattern:expr;)*) => {
        $(static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pattern).expect("valid regex"));)*
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

regexes! {
    PATH_TOKEN = r"(?m)(?P<pre>^|[^\w.~/@+%>-])(?P<path>/[\w.~/@+%-]*)|<tmp>(?P<rest>(?:/[\w.~/@+%-]*)?)";
    UUID = r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b";
    ADDR = r"\b0[xX][0-9a-fA-F]+";
    LONG_HEX = r"\b[0-9a-fA-F]{12,}\b";
    DURATION = r"\b[0-9]+(?:\.[0-9]+)? ?(?:ns|us|µs|μs|ms|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours)\b";
    DIGITS = r"[0-9]+";
}

/// Rewrites tool output so that runs differing only in incidental details
/// produce identical text.
///
/// [`Normalizer::normalize`] applies these rules, in this order:
///
/// 1. **Terminal escapes**: CSI sequences (`ESC [ … final-byte`) and OSC
///    sequences (`ESC ] … BEL` or `ESC ] … ESC \`) are deleted, and so is
///    any stray `ESC` left over (a truncated or unknown sequence).
/// 2. **Known run directories**: every `extra_paths` entry, longest first, is
///    replaced by `<tmp>` wherever it stands as a whole path prefix (not
///    preceded by a word character, `.`, `-`, `~` or `>`, and not followed by
///    one of those or `<`), so `/x/w3/proj/src/a.py` becomes
///    `<tmp>/src/a.py`. Digit runs inside an entry (and a literal `N`) match
///    any digit run or `N` (so `/x/w3` also hides `/x/w30`), which keeps the
///    rule stable under rule 7.
/// 3. **Other temporary paths**: an absolute path token (a `/` not preceded
///    by a path character, followed by letters, digits and `_ . ~ / @ + % -`;
///    it ends at whitespace, quotes, `:`, `,`, brackets and so on) is
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
///    `<dur>`; `5 sheep` and `3 settings` are not durations.
/// 7. **Numbers**: every remaining run of ASCII digits becomes `N`.
/// 8. **Whitespace**: trailing whitespace is removed from every line, which
///    also turns `\r\n` line endings into `\n`.
///
/// Normalisation is idempotent: normalising normalised text changes nothing.
#[derive(Debug, Clone)]
pub struct Normalizer {
    known: Vec<Regex>,
    roots: Vec<String>,
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
        Self {
            known,
            roots: extra_paths.to_vec(),
        }
    }

    /// The directories it was made with (a session records them with a run's output, to
    /// judge that output again on resume).
    pub fn roots(&self) -> &[String] {
        &self.roots
    }

    /// Applies the rules listed on [`Normalizer`] to `text`.
    pub fn normalize(&self, text: &str) -> String {
        let mut s = crate::text::strip_ansi(text).into_owned();
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

regexes! {
    CLASS = r#"^(?:(?:Exception in thread "[^"]*"|Caused by:|Uncaught|Unhandled exception\.|Unhandled rejection:?)\s+)?(?P<class>(?:[A-Za-z_$][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault))(?:\s*\[[^\]]*\])?(?::\s*(?P<msg>.*))?$"#;
    // Newer Rust prints the thread's id after its name: `thread 'main' (N) panicked at`.
    RUST_PANIC = r"^thread '[^']*'(?: \(N\))? panicked at (?P<rest>.*)$";
    PANIC_LOCATION = r"^\S+:N:N:$";
    GO_PANIC = r"^(?:panic|fatal error): .+$";
    COMPILER = r"^(?:error\[[A-Z]*N\]: .+|\S+?(?::N){1,3}: (?:fatal )?error: .+|\S+\(N(?:,N)?\): (?:fatal )?error [A-Z]+N: .+|\S+:N:N - error [A-Z]+N: .+|\S+\.go:N:N: .+)$";
    ASSERTION = r"^(?:assert\s.+|assertion\b.*\bfailed\b.*|.*\bAssertion [`'].*' failed\.?|expect\(.*\)\.\w+\(.*|\S+_test\.go:N: .+)$";
    SANITIZER = r"Sanitizer: \S|^\S+:N:N: runtime error: .+$";
    PYTEST_SUMMARY = r"^(?:FAILED|ERROR) \S+ - (?P<msg>.+)$";
    LOWER_ERROR = r"^error: .+$";
    PREAMBLE = r"^(?:Traceback \(most recent call last\):?|During handling of the above exception, another exception occurred:?|The above exception was the direct cause of the following exception:?|error: (?:could not compile|aborting due to|test failed|process didn't exit successfully|Recipe for target|command failed)\b.*|make(?:\[N\])?: \*\*\*.*|(?:##\[error\])?Error: Process completed with exit code.*|npm (?:ERR!|error)(?:\s.*)?|error Command failed.*|.*\bELIFECYCLE\b.*|collect(?:N|2)?: error: ld returned.*|N errors? generated\.|compilation terminated\.|For more information about (?:this|an) error.*|Some errors have detailed explanations.*|exit status N|Process finished with exit code.*|Command exited with non-zero status.*|FAILED \((?:failures|errors)=.*|Ran N tests? in.*|test result: .*|Tests?:\s.*|Test Suites:.*|Snapshots:.*|Time:.*|FAIL:?\s.*|stack backtrace:|note: run with `RUST_BACKTRACE.*)$";
    BARE = r"^(?i:errors?|fail|failed|failures?|fatal|panic|exception|ok|pass|passed)\s*[:!.]?$";
    BANNER = r"^[=_\-*#~+]{3,}";
    TALLY_WORD = r"\bN (?:failed|passed|errors?|skipped|ignored|measured|filtered out|pending|todo|total|xfailed|xpassed|warnings?|deselected|rerun|tests?|suites?|snapshots?)\b";
    SOURCE_ECHO = r"^(?:>(?:\s|$)|(?:N\s*)?\|(?:\s|$)|-->\s|::: |= (?:note|help):)";
    FRAME = r#"^(?:at (?:.* \(.*\)|\S+\(.*\)|\S+:N(?::N)?)$|\.\.\. N more\b|File ".*", line N|goroutine N \[|N: \S|\S+:N \+<addr>$)"#;
    NOTE = r"^(?:note|help|warning):";
    KEYWORD = r"(?i)error|panic|fatal|fail|assert|abort|segmentation fault|core dumped|undefined reference|not found|cannot|can't|unable to|exception|denied|no such file|timed out";
}

struct Verdict<'a> {
    score: i32,
    kind: SignatureKind,
    text: &'a str,
}

impl Verdict<'_> {
    fn with(self, score: i32, kind: SignatureKind) -> Self {
        Self {
            score,
            kind,
            ..self
        }
    }
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
    if RUST_PANIC.is_match(line) {
        let score = if panic_without_message(line) { 40 } else { 100 };
        return verdict(score, Panic, line);
    }
    if GO_PANIC.is_match(line) {
        return verdict(100, Panic, line);
    }
    if COMPILER.is_match(line) {
        return verdict(95, CompilerError, line);
    }
    if let Some(c) = CLASS.captures(line)
        && let Some(class) = c.name("class")
    {
        let name = class.as_str().rsplit('.').next().unwrap_or_default();
        let has_message = c.name("msg").is_some_and(|m| !m.as_str().is_empty());
        let generic = matches!(
            name,
            "Error" | "Exception" | "Exit" | "Interrupt" | "Failure" | "Fault"
        );
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

/// True for a modern rustc `thread '…' panicked at file:N:N:` line, whose
/// message follows on the next line.
fn panic_without_message(line: &str) -> bool {
    RUST_PANIC
        .captures(line)
        .and_then(|c| c.name("rest"))
        .is_some_and(|m| PANIC_LOCATION.is_match(m.as_str()))
}

/// Classifies `raw` knowing the line before it. Two layouts need context:
/// modern rustc prints the panic message on the line after
/// `thread '…' panicked at file:N:N:`, so that line is promoted to a
/// high-scoring [`SignatureKind::Panic`]; and indented lines right after a
/// Python `File "…", line N` frame are echoed source, so they are penalised.
fn classify_after<'a>(raw: &'a str, previous: &str) -> Verdict<'a> {
    let verdict = classify(raw);
    let before = content(previous);
    if panic_without_message(before) && verdict.score >= 0 && !verdict.text.is_empty() {
        return verdict.with(100, SignatureKind::Panic);
    }
    if before.starts_with("File \"") && FRAME.is_match(before) && raw.starts_with([' ', '\t']) {
        return verdict.with(-30, SignatureKind::Generic);
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
#[cfg(test)]
mod tests {
    use super::SignatureKind::*;
    use super::*;

    fn normalizer(paths: &[&str]) -> Normalizer {
        Normalizer::new(&paths.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    }

    fn norm(raw: &str) -> String {
        normalizer(&["/work/ws", "/work/tmp"]).normalize(raw)
    }

    /// Runs `check` on every `input => expected` line of `table`.
    fn table(table: &str, check: impl Fn(&str, &str)) {
        for row in table.lines() {
            let (input, expected) = row.trim().split_once(" => ").expect("row has =>");
            check(input, expected);
        }
    }

    fn learned(raw: &str) -> Option<(String, SignatureKind)> {
        learn_signature(&norm(raw)).map(|s| (s.text, s.kind))
    }

    #[track_caller]
    fn check(raw: &str, text: &str, kind: SignatureKind) {
        assert_eq!(learned(raw), Some((text.to_string(), kind)));
    }

    #[test]
    fn normalize_rules() {
        table(
            "file.py:214: boom at 0xdeadbeef after 1.5s => file.py:N: boom at <addr> after <dur>
            \x1b[1;31mError\x1b[0m: x\x1b]0;t\x07 \x1b]8;;u\x1b\\y => Error: x y
            \x1b\x1b[0m[0mz \x1b[9,< => [Nmz [N,<
            id 123e4567-e89b-12d3-a456-426614174000 ptr 0x7FFD5e8c => id <uuid> ptr <addr>
            at 9fceb02d0ae598e95dc970b74767f19372d61af8 deadbeefcafe => at <hex> deadbeefcafe
            took 12 ms, 0.02 seconds, in 3.21s (0.00s) 2min 4µs => took <dur>, <dur>, in <dur> (<dur>) <dur> <dur>
            5 sheep, 3 settings, x86_64, 10ms2 => N sheep, N settings, xN_N, NmsN
            /tmp/pytest-of-root/pytest-3/test_x0/a.py:5 => <tmp>/a.py:N
            open('/tmp/tmpk3j2xq.py') => open('<tmp>')
            /var/folders/xy/3bq1/T/tmpq1/out.txt, => <tmp>/out.txt,
            /private/var/folders/ab/T/cache => <tmp>/cache
            at /home/u/.tmpAb12/src/x.rs:4 => at <tmp>/src/x.rs:N
            cd /tmp && ls /tmp/ => cd <tmp> && ls <tmp>/
            /usr/lib/libc.so src/tmp/a.rs => /usr/lib/libc.so src/tmp/a.rs
            /work/tmp/tmpa8x2/config.toml => <tmp>/config.toml
            /work/ws/src/a.py /work/wsx => <tmp>/src/a.py /work/wsx",
            |raw, want| assert_eq!(norm(raw), want, "{raw:?}"),
        );
        assert_eq!(norm("a  \r\n b\t\r\n\r\nc"), "a\n b\n\nc");
    }

    #[test]
    fn known_paths_longest_first() {
        let n = normalizer(&["/x/w3", "/x/w3/proj/", "/"]);
        table(
            "/x/w3/proj/src/a.py => <tmp>/src/a.py
            cd /x/w3/b && ls /x/w3 => cd <tmp>/b && ls <tmp>
            /x/w3p /y/x/w3/a => /x/wNp /y/x/wN/a
            '/x/w3/proj/tmpab12/o.json' => '<tmp>/o.json'",
            |raw, want| assert_eq!(n.normalize(raw), want),
        );
    }

    #[test]
    fn normalize_is_idempotent() {
        const PIECES: &str = " §\t§\n§\r\n§\r§\x1b§\x1b[31m§\x1b[0m§[§]§\x1b]0;t§\x07§\\§/§/tmp§\
            /tmp/§/var/folders/x/§tmpab12§.tmpQ9§tmp§/work/ws§/work/ws3§/work/tmp§/work/wsN§/x/N§\
            src§a.py§:§,§'§\"§(§)§<§>§<tmp>§<dur>§~§-§.§_§=§0x§0xBEEF§deadbeefcafe1234§\
            123e4567-e89b-12d3-a456-426614174000§abcdefabcdef§1.5§12§0§s§ms§ ms§seconds§sheep§\
            min§h§µs§N§E§x§Error§IndexError: boom§in ";
        let pieces: Vec<&str> = PIECES.split('§').collect();
        let extra = [
            "/work/ws".to_string(),
            "/work/tmp".to_string(),
            "/x/N".to_string(),
        ];
        let n = Normalizer::new(&extra);
        let mut rng = crate::test_rng::XorShift::new(0x9E37_79B9_7F4A_7C15);
        let mut next = |bound: usize| rng.below(bound);
        for _ in 0..20_000 {
            let len = next(16);
            let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            let once = n.normalize(&text);
            assert_eq!(n.normalize(&once), once, "input {text:?}");
        }
    }

    #[test]
    fn pytest_failure() {
        let raw = "\
============================= test session starts ==============================
rootdir: /work/ws
collected 2 items

tests/test_calc.py .F                                                    [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(1, 2) == 2
E       AssertionError: assert 0.5 == 2
E        +  where 0.5 = divide(1, 2)

tests/test_calc.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide - AssertionError: assert 0.5 == 2
========================= 1 failed, 1 passed in 0.03s ==========================
";
        check(raw, "AssertionError: assert N.N == N", Assertion);
        let plain = ">       assert add(1, 2) == 4\nE       assert 3 == 4\n\
                     E        +  where 3 = add(1, 2)\n\ntests/t.py:4: AssertionError\n";
        check(plain, "assert N == N", Assertion);
    }

    #[test]
    fn python_tracebacks() {
        let plain = "Traceback (most recent call last):\n  File \"/work/ws/app.py\", line 8, in main\n    \
                     print(items[3])\n          ~~~~~^^^\nIndexError: list index out of range\n";
        check(plain, "IndexError: list index out of range", Exception);
        let chained = "\
Traceback (most recent call last):
  File \"/work/ws/cfg.py\", line 4, in load
    return table[key]
KeyError: 'port'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"/work/ws/cfg.py\", line 6, in load
    raise mypkg.errors.ConfigError(f\"missing {key}\")
mypkg.errors.ConfigError: missing port
";
        check(chained, "mypkg.errors.ConfigError: missing port", Exception);
        let no_source =
            "  File \"<string>\", line 1, in <module>\nZeroDivisionError: division by zero";
        check(no_source, "ZeroDivisionError: division by zero", Exception);
    }

    #[test]
    fn rust_panics() {
        let run = "   Compiling demo v0.1.0 (/work/ws)\n    Finished `dev` profile target(s) in 0.41s\n     \
                   Running `target/debug/demo`\nthread 'main' panicked at src/main.rs:4:13:\n\
                   attempt to subtract with overflow\nnote: run with `RUST_BACKTRACE=1` environment variable\n";
        check(run, "attempt to subtract with overflow", Panic);
        let with_id = "thread 'main' (14679) panicked at src/main.rs:4:13:\n\
                       attempt to subtract with overflow\nnote: run with `RUST_BACKTRACE=1`\n";
        check(with_id, "attempt to subtract with overflow", Panic);
        let old = "thread 'main' panicked at 'index out of bounds', src/main.rs:2:5\n";
        let want = "thread 'main' panicked at 'index out of bounds', src/main.rs:N:N";
        check(old, want, Panic);
        let cargo_test = "\
running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:15:9:
assertion `left == right` failed
  left: 1
 right: 2


failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
";
        check(cargo_test, "assertion `left == right` failed", Panic);
    }

    #[test]
    fn compiler_errors_first_one_wins() {
        let rustc = "\
error[E0425]: cannot find value `totl` in this scope
 --> src/main.rs:3:20
  |
3 |     println!(\"{}\", totl);
  |                    ^^^^ help: a local variable with a similar name exists: `total`

error[E0308]: mismatched types
Some errors have detailed explanations: E0308, E0425.
error: could not compile `demo` (bin \"demo\") due to 2 previous errors
";
        let want = "error[EN]: cannot find value `totl` in this scope";
        check(rustc, want, CompilerError);
        let gcc = "\
main.c: In function 'main':
main.c:5:12: error: 'count' undeclared (first use in this function)
    5 |     return count + 1;
      |            ^~~~~
main.c:5:12: note: each undeclared identifier is reported only once
make: *** [Makefile:3: main] Error 1
";
        let want = "main.c:N:N: error: 'count' undeclared (first use in this function)";
        check(gcc, want, CompilerError);
    }

    #[test]
    fn go_node_and_java() {
        let go = "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\n\
                  main.main()\n\t/work/ws/main.go:13 +0x1d\nexit status 2\n";
        let want = "panic: runtime error: index out of range [N] with length N";
        check(go, want, Panic);
        let node = "/work/ws/app.js:3\n  handler.run();\n          ^\n\n\
                    TypeError: handler.run is not a function\n    at Object.<anonymous> (/work/ws/app.js:3:11)\n    \
                    at node:internal/main/run_main_module:28:49\n\nNode.js v20.11.0\n";
        check(node, "TypeError: handler.run is not a function", Exception);
        let java = "Exception in thread \"main\" java.lang.IllegalStateException: not loaded\n\
                    \tat com.example.App.main(App.java:10)\n\
                    Caused by: java.lang.NullPointerException: \"name\" is null\n\t... 2 more\n";
        let want = "java.lang.NullPointerException: \"name\" is null";
        check(java, want, Exception);
    }

    #[test]
    fn jest_and_vitest() {
        let jest = "\
 FAIL  src/math.test.js
  ● math › adds numbers

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

    > 4 |   expect(add(1, 2)).toBe(4);
        |                     ^
      at Object.toBe (src/math.test.js:4:21)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 total
Time:        0.512 s
";
        let want = "expect(received).toBe(expected) // Object.is equality";
        check(jest, want, Assertion);
        let vitest = " FAIL  src/math.test.ts > math > adds\nAssertionError: expected 3 to be 4\n\n \
                      ❯ src/math.test.ts:5:22\n      5|     expect(add(1, 2)).toBe(4)\n\n \
                      Test Files  1 failed (1)\n      Tests  1 failed (1)\n";
        check(vitest, "AssertionError: expected N to be N", Assertion);
    }

    #[test]
    fn nothing_learned_from_tallies_or_silence() {
        let tally = "===== 3 passed, 1 failed in 0.12s =====\n1 failed, 1 passed in 0.12s\n\
                     FAILED (failures=1)\nTests: 1 failed, 2 total\n";
        assert_eq!(learned(tally), None);
        assert_eq!(learned(""), None);
        assert_eq!(learned("\n   \n----\n"), None);
    }

    #[test]
    fn scores_rank_lines() {
        let specific = score_line("IndexError: list index out of range");
        let generic = score_line("Error: boom");
        let hint = score_line("could not open file: not found");
        assert!(specific > generic && generic > hint && hint > 0);
        assert!(score_line("E   TypeError: No '__dict__' attribute") > generic);
        assert!(
            score_line("FAILED t.py::test_y - KeyError: 'k'") < score_line("E   KeyError: 'k'")
        );
        assert!(score_line("Segmentation fault (core dumped)") > 0);
        assert!(score_line("/usr/bin/ld: a.o: undefined reference to `foo'") > 0);
        let bad = "N failed, N passed in <dur>\n=== N failed ===\nFAILED (failures=N)\n\
            test result: FAILED. N passed; N failed; N ignored\nTests: N failed, N total\n\
            >       assert x == y\n   N |     let x = y;\n  |     ^^^\n\
            Traceback (most recent call last):\n\
            During handling of the above exception, another exception occurred:\n\
            error: could not compile `demo` (lib) due to N previous errors\n\
            make: *** [Makefile:N: all] Error N\nError: Process completed with exit code N.\n\
            npm ERR! code ELIFECYCLE\nError\nerror:\n\n----\n====\n   ^~~~";
        for line in bad.split('\n') {
            let score = score_line(line);
            assert!(score <= 0, "{line:?} scored {score}");
        }
    }

    #[test]
    fn matches_across_line_shifts_and_temp_dirs() {
        let run = |ws: &str, tmp: &str, line: u32| {
            let raw = format!(
                "  File \"{ws}/cfg.py\", line {line}, in load\n    open(path)\nFileNotFoundError: \
                 [Errno 2] No such file or directory: '{tmp}/tmpa{line}x/config.toml'\n"
            );
            Normalizer::new(&[ws.to_string(), tmp.to_string()]).normalize(&raw)
        };
        let first = run("/tmp/run1/ws", "/tmp/run1/tmp", 12);
        let sig = learn_signature(&first).map(|s| s.text).unwrap_or_default();
        let want = "FileNotFoundError: [Errno N] No such file or directory: '<tmp>/config.toml'";
        assert_eq!(sig, want);
        assert!(matches(&sig, &run("/var/tmp/r9/w", "/var/tmp/r9/t", 40)));
        assert!(matches(&sig, &run("/home/ci/job7", "/tmp/job7", 3)));
        let other = norm("FileNotFoundError: [Errno 2] No such file: 'x'");
        assert!(!matches(&sig, &other));
        assert!(matches("  boom  ", "x\nError: boom (extra context)\n"));
        assert!(!matches("   ", "anything"));
    }

    #[test]
    fn extracts_exception_classes() {
        table(
            "TypeError: x is not a function => TypeError
            java.lang.NullPointerException: y => java.lang.NullPointerException
            Exception in thread \"main\" a.Foo$BadException: x => a.Foo$BadException
            Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'x' => Error
            E   mypkg.errors.ConfigError: bad value => mypkg.errors.ConfigError
            KeyboardInterrupt => KeyboardInterrupt
            panic: boom => -
            onError: handler => -
            main.c:N:N: error: x => -",
            |sig, want| assert_eq!(exception_class(sig).unwrap_or("-"), want, "{sig}"),
        );
    }
}

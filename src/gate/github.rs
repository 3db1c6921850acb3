//! GitHub Actions: job outputs, the step summary and annotations.
//!
//! A worker job hands its encoded reports to the judge job as job outputs: `exec` appends
//! one `name=value` line per report to the file named by `$GITHUB_OUTPUT`
//! ([`report_outputs`], [`write_outputs`]). An encoded report is base64 without whitespace,
//! so the plain `name=value` form always fits; a value with a line break is refused rather
//! than written in a form the runner would read differently. The file is opened append-only,
//! never through a symlink, and must be a regular file.
//!
//! `judge` and `run` append a Markdown [`summary`] of the judgement to `$GITHUB_STEP_SUMMARY`
//! and print [`annotations`] (workflow commands such as `::error file=…::…`) on stderr.
//! Stdout carries exactly one `repromin/v1` line, so no workflow command ever goes there.
//! Test names, files and messages come from the reports, which the pull request controls:
//! every annotation is one physical line that starts with `::`, its control characters are
//! replaced, `%`, CR and LF are escaped by the workflow-command rules (so the runner's
//! unescaping cannot make a line break either), and any `repromin/v1` inside it is defanged
//! to `repromin[/]v1`. An annotation can therefore neither be nor contain a result line.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::gate::line::{self, CertificateVerdict, ResultLine, TestClass, Verdict};
use crate::gate::test_report::RunDetail;

/// The variable naming the step's output file.
pub(crate) const OUTPUT_ENV: &str = "GITHUB_OUTPUT";
/// The variable naming the step's summary file.
pub(crate) const SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";
/// The variable that is `true` on a GitHub Actions runner (annotations are printed then).
pub(crate) const ACTIONS_ENV: &str = "GITHUB_ACTIONS";

/// Most tests listed in a summary table (the counts always cover every test).
pub(crate) const SUMMARY_MAX_TESTS: usize = 200;
/// Most `fails-on-head` annotations printed; GitHub shows ten error annotations per step.
pub(crate) const MAX_TEST_ANNOTATIONS: usize = 10;
/// Most bytes of the step summary: GitHub refuses a step's summary over 1 MiB, and then
/// shows none of it.
pub(crate) const SUMMARY_MAX_BYTES: usize = 1_000_000;
/// Most characters of one table cell or annotation message.
const MAX_TEXT_CHARS: usize = 300;

/// A problem writing a GitHub file command.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GithubError {
    /// The file could not be opened (a symlink is refused here too).
    #[error("cannot open `{path}` for appending")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path is a directory, FIFO or device.
    #[error("`{path}` is not a regular file")]
    NotRegular {
        /// The file.
        path: PathBuf,
    },
    /// Writing failed.
    #[error("cannot write to `{path}`")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An output name the runner could misread.
    #[error(
        "`{0}` is not an output name (letters, digits, `-` and `_`, starting with a letter or `_`)"
    )]
    BadName(String),
    /// A value the `name=value` form cannot carry.
    #[error("the value of output `{name}` contains a line break")]
    LineBreak {
        /// The output.
        name: String,
    },
    /// A report file could not be read.
    #[error("cannot read the report `{path}`")]
    ReadReport {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A report file over its cap.
    #[error("the report `{path}` is over the {cap}-character cap")]
    ReportTooLong {
        /// The file.
        path: PathBuf,
        /// The cap.
        cap: usize,
    },
}

/// The job output name of a report file: `base.report` is `base-report`,
/// `base-rerun.report` is `base-rerun-report` (every `.` becomes `-`).
pub(crate) fn output_name(report_file: &str) -> String {
    report_file.replace('.', "-")
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Formats outputs as `name=value` lines, the form the runner reads from `$GITHUB_OUTPUT`.
///
/// # Errors
/// A name that is not letters, digits, `-` and `_`, or a value with a CR or LF.
pub(crate) fn format_outputs(outputs: &[(String, String)]) -> Result<String, GithubError> {
    let mut text = String::new();
    for (name, value) in outputs {
        if !valid_name(name) {
            return Err(GithubError::BadName(name.clone()));
        }
        if value.contains(['\n', '\r']) {
            return Err(GithubError::LineBreak { name: name.clone() });
        }
        let _ = writeln!(text, "{name}={value}");
    }
    Ok(text)
}

/// Appends `text` to `path` in one write: opened append-only (created if missing), never
/// through a symlink, and only if it is a regular file.
///
/// # Errors
/// The path is a symlink, not a regular file, or cannot be opened or written.
pub(crate) fn append(path: &Path, text: &str) -> Result<(), GithubError> {
    use crate::safe_fs::SafeFsError;
    let mut file = crate::safe_fs::open_append(path, 0o644).map_err(|err| match err {
        SafeFsError::NotFound { source, .. }
        | SafeFsError::Symlink { source, .. }
        | SafeFsError::Open { source, .. }
        | SafeFsError::Io { source, .. } => GithubError::Open {
            path: path.to_path_buf(),
            source,
        },
        SafeFsError::WrongKind { .. } | SafeFsError::TooLarge { .. } => GithubError::NotRegular {
            path: path.to_path_buf(),
        },
    })?;
    file.write_all(text.as_bytes())
        .map_err(|source| GithubError::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// Appends `outputs` to the output file `path`; nothing is written if any is refused.
///
/// # Errors
/// See [`format_outputs`] and [`append`].
pub(crate) fn write_outputs(path: &Path, outputs: &[(String, String)]) -> Result<(), GithubError> {
    let text = format_outputs(outputs)?;
    append(path, &text)
}

/// Reads the reports `DIR/NAME.report` that a side wrote, as `(output name, value)` pairs:
/// each a regular file (never through a symlink) of at most `cap` characters.
///
/// # Errors
/// A report that cannot be read, or is over the cap.
pub(crate) fn report_outputs(
    dir: &Path,
    names: &[&str],
    cap: usize,
) -> Result<Vec<(String, String)>, GithubError> {
    let mut outputs = Vec::new();
    for name in names {
        let file_name = format!("{name}.report");
        let path = dir.join(&file_name);
        let value = match crate::safe_fs::read_prefix_to_string(&path, cap as u64 + 1) {
            Ok(value) => value,
            Err(crate::safe_fs::SafeFsError::WrongKind { .. }) => {
                return Err(GithubError::NotRegular { path });
            }
            Err(err) => {
                return Err(GithubError::ReadReport {
                    path,
                    source: err.into(),
                });
            }
        };
        if value.len() > cap {
            return Err(GithubError::ReportTooLong { path, cap });
        }
        outputs.push((output_name(&file_name), value));
    }
    Ok(outputs)
}

/// The judge's outputs: the `verdict` of the line it printed (`error` if that line does not
/// parse) and the `line` itself.
pub(crate) fn judgement_outputs(printed_line: &str) -> Vec<(String, String)> {
    let verdict = line::parse_line(printed_line).map_or(Verdict::Error, |r| r.verdict);
    vec![
        ("verdict".to_string(), verdict.as_str().to_string()),
        ("line".to_string(), printed_line.to_string()),
    ]
}

/// Replaces control characters (and the Unicode line and paragraph separators) by spaces,
/// defangs `repromin/v1` and clips to [`MAX_TEXT_CHARS`].
pub(super) fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect();
    defang(&line::clip(&flat, MAX_TEXT_CHARS, "..."))
}

/// Replaces every `repromin/v1`, in any case, by `repromin[/]v1`.
fn defang(text: &str) -> String {
    const NEEDLE: &[u8] = b"repromin/v1";
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    let mut i = 0;
    while i + NEEDLE.len() <= bytes.len() {
        if bytes[i..i + NEEDLE.len()].eq_ignore_ascii_case(NEEDLE) {
            // The needle is ASCII, so i and i + 8 are character boundaries.
            out.push_str(&text[start..i + 8]);
            out.push_str("[/]");
            out.push_str(&text[i + 9..i + NEEDLE.len()]);
            i += NEEDLE.len();
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[start..]);
    out
}

/// Escapes a workflow command's message: `%`, CR and LF.
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value: `%`, CR, LF, `:` and `,`.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn command(kind: &str, properties: &[(&str, &str)], message: &str) -> String {
    let props: Vec<String> = properties
        .iter()
        .map(|(k, v)| format!("{k}={}", escape_property(&one_line(v))))
        .collect();
    let sep = if props.is_empty() { "" } else { " " };
    format!(
        "::{kind}{sep}{}::{}",
        props.join(","),
        escape_data(&one_line(message))
    )
}

/// The annotations for a judgement: an error for each test that does not pass on head (at
/// most [`MAX_TEST_ANNOTATIONS`], then a warning with the rest's count), and an error with
/// the message of an `error` verdict. Each is one line for stderr.
pub(crate) fn annotations(result: &ResultLine) -> Vec<String> {
    let mut out = Vec::new();
    if result.verdict == Verdict::Error {
        let message = result.error.as_deref().unwrap_or("the gate failed");
        out.push(command("error", &[("title", "repromin: error")], message));
    }
    let failing: Vec<_> = result
        .tests
        .iter()
        .filter(|t| t.class == TestClass::FailsOnHead)
        .collect();
    for test in failing.iter().take(MAX_TEST_ANNOTATIONS) {
        let message = format!(
            "{} does not pass on head ({}; base: {}, rerun: {}). A test that fails on head \
             proves nothing.",
            test.name, test.head, test.base, test.rerun
        );
        out.push(command(
            "error",
            &[
                ("file", test.file.as_str()),
                ("title", "repromin: fails on head"),
            ],
            &message,
        ));
    }
    // The counts cover every test, also when the list holds only some of them.
    let failing_count = usize::try_from(result.counts.fails_on_head)
        .unwrap_or(usize::MAX)
        .max(failing.len());
    if failing_count > MAX_TEST_ANNOTATIONS {
        let message = format!(
            "{} more tests do not pass on head; the step summary lists them.",
            failing_count - MAX_TEST_ANNOTATIONS
        );
        out.push(command(
            "warning",
            &[("title", "repromin: fails on head")],
            &message,
        ));
    }
    out
}

/// Escapes prose for Markdown: one line, HTML special characters as entities, inline
/// Markdown punctuation behind a backslash.
pub(super) fn md(text: &str) -> String {
    let mut out = String::new();
    for c in one_line(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '~' | '|' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A name or path as a Markdown code span (shown literally), safe inside a table cell: one
/// line, `|` escaped for the table, and a fence longer than any run of backticks inside.
pub(super) fn code(text: &str) -> String {
    let flat = one_line(text).replace('|', "\\|");
    if flat.trim().is_empty() {
        return String::new();
    }
    let longest = flat.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

/// Only the hex digits of a commit id or digest, safe inside a code span.
pub(super) fn hex(text: &str) -> String {
    text.chars().filter(char::is_ascii_hexdigit).collect()
}

pub(super) fn explain(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Reproduced => {
            "A test fails on the merge base and passes on head, every time it ran, often \
             enough to rule out chance: it reproduces the bug that the pull request fixes."
        }
        Verdict::Unproven => {
            "No test reproduces, and a test needs what the pull request adds (new API), so \
             the merge base cannot show the bug."
        }
        Verdict::Vacuous => {
            "The tests prove nothing: they pass on the merge base, fail on head, or did not \
             run."
        }
        Verdict::NoTests => "The pull request adds or changes no test.",
        Verdict::Error => "The gate could not judge the pull request.",
        Verdict::Flaky => {
            "A test fails on the merge base and passes on head, but not every time it ran, \
             or too few times to rule out chance: it may fail at random whatever the change."
        }
    }
}

pub(super) fn explain_certificate(verdict: CertificateVerdict) -> &'static str {
    match verdict {
        CertificateVerdict::Certified => {
            "the reduced tree still fails the test often enough in its holdout runs"
        }
        CertificateVerdict::NotCertified => {
            "the holdout runs fell short, or the reduction did not reproduce"
        }
        CertificateVerdict::BudgetExhausted => "the reduce side ran out of time",
        CertificateVerdict::Error => "the certificate could not be checked",
    }
}

/// The judgement's line with the first [`SUMMARY_MAX_TESTS`] classified tests in `tests`,
/// not only those that fit the line's 4 KB: what the summary's table lists (its counts
/// cover the rest).
pub(crate) fn with_every_test(judgement: &crate::gate::judge::Judgement) -> ResultLine {
    let mut full = judgement.line.clone();
    full.tests = judgement
        .classified
        .rows
        .iter()
        .take(SUMMARY_MAX_TESTS)
        .map(|row| row.to_line())
        .collect();
    full.truncated |= full.tests.len() < judgement.classified.rows.len();
    full
}

/// What a side's failed command was and the end of its output, in an indented code block
/// (no fence that the output could close).
pub(super) fn failed_command(out: &mut String, side: &str, failure: &RunDetail) {
    let _ = writeln!(
        out,
        "**{} side, {}:** the command {} ended with {} after {} ms. The end of its output:\n",
        md(side),
        md(&failure.step),
        md(&failure.command),
        md(&failure.how),
        failure.duration_ms
    );
    for line in failure.shown_tail() {
        let _ = writeln!(out, "    {line}");
    }
}

/// A test's class in a table, in bold when it reproduces.
pub(super) fn class_cell(class: TestClass) -> String {
    if class == TestClass::Reproduces {
        format!("**{}**", class.as_str())
    } else {
        class.as_str().to_string()
    }
}

/// The Markdown summary of a judgement, for `$GITHUB_STEP_SUMMARY`: the verdict, the
/// counts, a table of the tests with their class, and the certificate if there is one.
pub(crate) fn summary(
    result: &ResultLine,
    configuration: Option<&str>,
    failures: &[(String, RunDetail)],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## repromin: {}\n", result.verdict.as_str());
    let _ = writeln!(out, "{}\n", explain(result.verdict));
    if let Some(error) = &result.error {
        let _ = writeln!(out, "**Error:** {}\n", md(error));
    }
    let _ = writeln!(out, "- merge base: `{}`", hex(&result.merge_base));
    let _ = writeln!(out, "- head: `{}`", hex(&result.head));
    let counts: Vec<String> = result
        .counts
        .shown()
        .map(|(c, n)| format!("{n} {}", c.as_str()))
        .collect();
    let _ = writeln!(out, "- tests: {}", counts.join(", "));
    if let Some(configuration) = configuration {
        let _ = writeln!(out, "- configuration: {}", md(configuration));
    }
    for (side, failure) in failures {
        out.push('\n');
        failed_command(&mut out, side, failure);
    }
    if result.config_edited {
        let _ = writeln!(
            out,
            "- the pull request edits `.github/repromin.json`; the merge base's \
             configuration was used"
        );
    }
    out.push('\n');
    if !result.tests.is_empty() {
        out.push_str("| class | test | file | base | rerun | head |\n");
        out.push_str("| --- | --- | --- | --- | --- | --- |\n");
        for test in result.tests.iter().take(SUMMARY_MAX_TESTS) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                class_cell(test.class) + &test.runs.map(|r| format!(" ({r})")).unwrap_or_default(),
                code(&test.name),
                code(&test.file),
                test.base.as_str(),
                test.rerun.as_str(),
                test.head.as_str()
            );
        }
        // The counts cover every test, also when the list holds only some of them.
        let total = usize::try_from(result.counts.total())
            .unwrap_or(usize::MAX)
            .max(result.tests.len());
        if total > SUMMARY_MAX_TESTS {
            let _ = writeln!(
                out,
                "\n{} more tests are not listed here; the counts above cover them.",
                total - SUMMARY_MAX_TESTS
            );
        }
        out.push('\n');
    }
    let lists = [
        ("Deleted tests", &result.deleted_tests),
        ("Selected but not collected", &result.not_collected),
    ];
    for (title, paths) in lists {
        if paths.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{title}:\n");
        for path in paths.iter().take(SUMMARY_MAX_TESTS) {
            let _ = writeln!(out, "- {}", code(path));
        }
        out.push('\n');
    }
    if result.truncated {
        out.push_str(
            "The result line dropped list entries to fit 4 KB; the counts cover every test.\n\n",
        );
    }
    if let Some(cert) = &result.certificate {
        certificate(&mut out, cert);
    }
    if let Some(mutants) = &result.mutants {
        mutation_check(&mut out, mutants, result.truncated);
    }
    if let Some(regressions) = &result.regressions {
        regression_list(&mut out, regressions);
    }
    fit_bytes(out, SUMMARY_MAX_BYTES)
}

/// Cuts Markdown to at most `max` bytes at a line boundary, saying how much was dropped.
pub(super) fn fit_bytes(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    // The note is under 200 bytes; the cut leaves room for it.
    let mut cut = max.saturating_sub(200);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = text[..cut].rfind('\n').map_or(cut, |at| at + 1);
    text.truncate(cut);
    let _ = writeln!(
        text,
        "\n({} of {total} bytes were dropped here to keep under GitHub's limit; the line \
         and the counts cover every test.)",
        total - cut
    );
    text
}

pub(super) fn mutation_check(out: &mut String, mutants: &line::Mutants, truncated: bool) {
    let _ = writeln!(
        out,
        "### Mutation check: {}
",
        mutants.verdict.as_str()
    );
    let meaning = match mutants.verdict {
        line::MutantsVerdict::Killed => "every mutant of the spec was caught by exactly its tests",
        line::MutantsVerdict::NotKilled => "some mutant was not caught as its spec says",
        line::MutantsVerdict::Error => "the mutation check could not be made",
    };
    let _ = writeln!(out, "{}.\n", capitalise(meaning));
    if let Some(error) = &mutants.error {
        let _ = writeln!(out, "**Error:** {}\n", md(error));
    }
    if !mutants.results.is_empty() {
        out.push_str("| spec | mutation | outcome | failed |\n| --- | --- | --- | --- |\n");
        for r in mutants.results.iter().take(SUMMARY_MAX_TESTS) {
            let failed = match &r.failed {
                Some(f) if f.is_empty() => "none".to_string(),
                Some(f) => f.iter().map(|t| code(t)).collect::<Vec<_>>().join(", "),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                code(&r.spec),
                code(&r.name),
                r.outcome.as_str(),
                failed
            );
        }
        if mutants.results.len() > SUMMARY_MAX_TESTS {
            let _ = writeln!(
                out,
                "\n{} more mutants are not listed here.",
                mutants.results.len() - SUMMARY_MAX_TESTS
            );
        }
        out.push('\n');
    }
    if truncated {
        out.push_str("Killed mutants may be left out of this list to fit the line.\n\n");
    }
}

/// The tests of the suite that pass on the merge base and fail on head.
pub(super) fn regression_list(out: &mut String, regressions: &line::Regressions) {
    let _ = writeln!(out, "### Regressions: {}\n", regressions.count);
    if regressions.count == 0 {
        out.push_str("No test of the suite passes on the merge base and fails on head.\n\n");
        return;
    }
    out.push_str("Tests of the suite that pass on the merge base and fail on head:\n\n");
    for t in regressions.tests.iter().take(SUMMARY_MAX_TESTS) {
        let _ = writeln!(out, "- {} in {}", code(&t.name), code(&t.file));
    }
    let listed = u64::try_from(regressions.tests.len().min(SUMMARY_MAX_TESTS)).unwrap_or(0);
    if regressions.count > listed {
        let _ = writeln!(
            out,
            "\n{} more are not listed here.",
            regressions.count - listed
        );
    }
    out.push('\n');
}

pub(super) fn certificate(out: &mut String, cert: &line::Certificate) {
    let _ = writeln!(out, "### Certificate: {}\n", cert.verdict.as_str());
    let _ = writeln!(out, "{}.\n", capitalise(explain_certificate(cert.verdict)));
    if let Some(error) = &cert.error {
        let _ = writeln!(out, "- error: {}", md(error));
    }
    if let Some(test) = &cert.test {
        let _ = writeln!(out, "- test: {} in {}", code(&test.name), code(&test.file));
    }
    if let (Some(before), Some(after)) = (cert.before, cert.after) {
        let _ = writeln!(
            out,
            "- tree: {} files, {} bytes reduced to {} files, {} bytes",
            before.files, before.bytes, after.files, after.bytes
        );
    }
    if let Some(sha) = &cert.content_sha256 {
        let _ = writeln!(out, "- tree-content-sha256-v1: `{}`", hex(sha));
    }
    if let Some(h) = &cert.holdout {
        let _ = writeln!(
            out,
            "- holdout: {} of {} runs reproduced ({} needed for a rate above {} at confidence \
             {}; lower bound {})",
            h.passes, h.runs, h.required_passes, h.rate, h.confidence, h.lower_bound
        );
    }
    out.push('\n');
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::line::{CertTest, Certificate, Holdout, SideStatus, TestLine, TreeSize};

    const BASE: &str = "8011b71aa8e4c5f1b5d3c9e0f6a7b8c9d0e1f2a3";
    const HEAD: &str = "57d2e48bb1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6";

    /// A result built from the judge's own error line, so that fields added to the line
    /// later keep their defaults here.
    fn result(verdict: Verdict, tests: Vec<TestLine>) -> ResultLine {
        let mut line = crate::gate::judge_error(HEAD, BASE, "placeholder").line;
        line.verdict = verdict;
        line.error = None;
        line.counts = line::Counts::from_tests(&tests);
        line.tests = tests;
        line
    }

    fn test(file: &str, name: &str, class: TestClass, sides: [SideStatus; 3]) -> TestLine {
        TestLine {
            file: file.into(),
            name: name.into(),
            class,
            base: sides[0],
            rerun: sides[1],
            head: sides[2],
            runs: None,
        }
    }

    fn reproduced() -> ResultLine {
        use SideStatus::{Failed, Passed};
        result(
            Verdict::Reproduced,
            vec![
                test(
                    "tests/test_calc.py",
                    "test_add",
                    TestClass::Reproduces,
                    [Failed, Failed, Passed],
                ),
                test(
                    "tests/test_calc.py",
                    "CalcTest::test_zero",
                    TestClass::PassesOnBase,
                    [Passed, Passed, Passed],
                ),
                test(
                    "tests/test_calc.py",
                    "test_sub",
                    TestClass::FailsOnHead,
                    [Failed, Failed, Failed],
                ),
            ],
        )
    }

    /// Reads outputs back the way the runner does: `name=value` lines, split at the first
    /// `=`; empty lines skipped.
    fn read_back(text: &str) -> Vec<(String, String)> {
        text.lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap();
                (k.to_string(), v.to_string())
            })
            .collect()
    }

    #[test]
    fn report_file_names_map_to_output_names() {
        assert_eq!(output_name("base.report"), "base-report");
        assert_eq!(output_name("base-rerun.report"), "base-rerun-report");
        assert_eq!(output_name("head.report"), "head-report");
        assert_eq!(output_name("reduce.report"), "reduce-report");
    }

    #[test]
    fn outputs_are_name_value_lines_and_line_breaks_are_refused() {
        let outputs = vec![
            ("base-report".to_string(), "H4sIAAAA+/==".to_string()),
            ("verdict".to_string(), "reproduced".to_string()),
        ];
        let text = format_outputs(&outputs).unwrap();
        assert_eq!(text, "base-report=H4sIAAAA+/==\nverdict=reproduced\n");
        assert_eq!(read_back(&text), outputs);
        for value in ["a\nb", "a\rb", "forged\nhead-report=x"] {
            let err = format_outputs(&[("head-report".into(), value.into())]).unwrap_err();
            assert!(matches!(err, GithubError::LineBreak { .. }), "{err}");
        }
        for name in ["", "a=b", "x<<EOF", "1x", "a b", "a.b"] {
            let err = format_outputs(&[(name.into(), "v".into())]).unwrap_err();
            assert!(matches!(err, GithubError::BadName(_)), "{name}: {err}");
        }
    }

    #[test]
    fn outputs_are_appended_and_symlinks_and_fifos_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output");
        std::fs::write(&path, "earlier=1\n").unwrap();
        write_outputs(&path, &[("head-report".into(), "QUJD".into())]).unwrap();
        write_outputs(&path, &[("verdict".into(), "error".into())]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "earlier=1\nhead-report=QUJD\nverdict=error\n"
        );
        // A refused value writes nothing, not even the valid outputs before it.
        let refused = write_outputs(
            &path,
            &[("a".into(), "ok".into()), ("b".into(), "x\ny".into())],
        );
        assert!(refused.is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "earlier=1\nhead-report=QUJD\nverdict=error\n"
        );
        let target = dir.path().join("target");
        std::fs::write(&target, "").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = append(&link, "x=1\n").unwrap_err();
        assert!(matches!(err, GithubError::Open { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(append(&fifo, "x=1\n").is_err());
        assert!(matches!(
            append(dir.path(), "x=1\n").unwrap_err(),
            GithubError::Open { .. } | GithubError::NotRegular { .. }
        ));
    }

    #[test]
    fn reports_become_outputs_under_their_cap() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("base.report"), "QUJD").unwrap();
        std::fs::write(dir.path().join("base-rerun.report"), "REVG").unwrap();
        let outputs = report_outputs(dir.path(), &["base", "base-rerun"], 10).unwrap();
        assert_eq!(
            outputs,
            vec![
                ("base-report".to_string(), "QUJD".to_string()),
                ("base-rerun-report".to_string(), "REVG".to_string())
            ]
        );
        let err = report_outputs(dir.path(), &["base"], 3).unwrap_err();
        assert!(matches!(err, GithubError::ReportTooLong { .. }), "{err}");
        let err = report_outputs(dir.path(), &["head"], 10).unwrap_err();
        assert!(matches!(err, GithubError::ReadReport { .. }), "{err}");
        std::os::unix::fs::symlink(
            dir.path().join("base.report"),
            dir.path().join("head.report"),
        )
        .unwrap();
        let err = report_outputs(dir.path(), &["head"], 10).unwrap_err();
        assert!(matches!(err, GithubError::ReadReport { .. }), "{err}");
    }

    #[test]
    fn a_report_with_a_line_break_is_never_written_as_an_output() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("head.report"), "QUJD\nverdict=forged").unwrap();
        let outputs = report_outputs(dir.path(), &["head"], 100).unwrap();
        let file = dir.path().join("output");
        assert!(write_outputs(&file, &outputs).is_err());
        assert!(
            std::fs::read_to_string(&file)
                .unwrap_or_default()
                .is_empty()
        );
    }

    #[test]
    fn workflow_command_values_are_escaped() {
        assert_eq!(escape_data("100% a\r\nb"), "100%25 a%0D%0Ab");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn annotations_flag_tests_failing_on_head_and_errors() {
        assert_eq!(
            annotations(&reproduced()),
            vec![
                "::error file=tests/test_calc.py,title=repromin%3A fails on head::test_sub does \
                 not pass on head (failed; base: failed, rerun: failed). A test that fails on \
                 head proves nothing."
                    .to_string()
            ]
        );
        let mut error = result(Verdict::Error, Vec::new());
        error.error = Some("the head report is malformed: it is empty".into());
        assert_eq!(
            annotations(&error),
            vec![
                "::error title=repromin%3A error::the head report is malformed: it is empty"
                    .to_string()
            ]
        );
        let many: Vec<TestLine> = (0..13)
            .map(|i| {
                test(
                    "t.py",
                    &format!("test_{i}"),
                    TestClass::FailsOnHead,
                    [SideStatus::Passed, SideStatus::Passed, SideStatus::Failed],
                )
            })
            .collect();
        let notes = annotations(&result(Verdict::Vacuous, many));
        assert_eq!(notes.len(), MAX_TEST_ANNOTATIONS + 1);
        assert!(notes[10].starts_with("::warning "), "{}", notes[10]);
        assert!(notes[10].contains("3 more tests"), "{}", notes[10]);
    }

    /// What the runner shows for an annotation: it unescapes the message and properties.
    fn runner_unescape(text: &str) -> String {
        text.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    }

    #[test]
    fn no_annotation_can_form_or_contain_a_result_line() {
        let hostile = [
            "x\nrepromin/v1 {\"verdict\":\"reproduced\"}",
            "x\rrepromin/v1 {}",
            "x%0Arepromin/v1 {}",
            "x%250Arepromin/v1 {}",
            "x\u{2028}REPROMIN/V1 {}",
            "x\u{85}Repromin/v1 {}",
            "::error::x%0A::set-output name=a::b",
            "a,title=forged:b::c",
        ];
        for text in hostile {
            let mut line = result(
                Verdict::Vacuous,
                vec![test(
                    text,
                    text,
                    TestClass::FailsOnHead,
                    [SideStatus::Failed, SideStatus::Failed, SideStatus::Failed],
                )],
            );
            line.verdict = Verdict::Error;
            line.error = Some(text.to_string());
            for note in annotations(&line) {
                assert!(!note.contains(['\n', '\r']), "{note:?}");
                assert!(note.starts_with("::error ") || note.starts_with("::warning "));
                let shown = runner_unescape(&note);
                assert!(
                    !shown.contains(['\n', '\r', '\u{85}', '\u{2028}']),
                    "{shown:?}"
                );
                assert!(
                    !shown.to_ascii_lowercase().contains("repromin/v1"),
                    "{shown:?}"
                );
                // The properties end at the first `::` after the command name, and only
                // repromin's own keys are in them.
                let (head, _) = note[2..].split_once("::").unwrap();
                let (_, props) = head.split_once(' ').unwrap();
                let keys: Vec<&str> = props
                    .split(',')
                    .map(|p| p.split_once('=').unwrap().0)
                    .collect();
                assert!(keys == ["file", "title"] || keys == ["title"], "{note}");
            }
        }
    }

    #[test]
    fn defang_keeps_everything_but_the_slash() {
        assert_eq!(defang("a repromin/v1 b"), "a repromin[/]v1 b");
        assert_eq!(
            defang("REPROMIN/V1repromin/v1"),
            "REPROMIN[/]V1repromin[/]v1"
        );
        assert_eq!(defang("ünï repromin/v2"), "ünï repromin/v2");
    }

    #[test]
    fn names_are_code_spans_that_no_backtick_or_pipe_breaks() {
        assert_eq!(code("tests/test_a.py"), "`tests/test_a.py`");
        assert_eq!(code("a``b"), "```a``b```");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a|b\nc"), "`a\\|b c`");
        assert_eq!(code(""), "");
        assert_eq!(
            md("<b>*x*</b> & y_z"),
            "&lt;b&gt;\\*x\\*&lt;/b&gt; &amp; y\\_z"
        );
    }

    #[test]
    fn summary_of_a_failed_command_shows_its_tail_as_code() {
        let mut line = reproduced();
        line.verdict = Verdict::Error;
        let failure = RunDetail {
            step: "install".into(),
            command: "npm ci --no-audit".into(),
            how: "exit 1".into(),
            duration_ms: 2345,
            tail:
                "npm ERR! code E404\n```\nrepromin/v1 {\"verdict\":\"reproduced\"}\n\u{1b}[31mred"
                    .into(),
        };
        insta::assert_snapshot!(summary(&line, None, &[("base".into(), failure)]));
    }

    #[test]
    fn summary_of_a_reproduced_verdict() {
        insta::assert_snapshot!(summary(
            &reproduced(),
            Some("detected python at the merge base: pytest in a .venv"),
            &[]
        ));
    }

    #[test]
    fn summary_of_an_error_verdict() {
        let mut line = result(Verdict::Error, Vec::new());
        line.error =
            Some("the base report is malformed: not base64 (Invalid symbol 33, offset 0.)".into());
        line.config_edited = true;
        insta::assert_snapshot!(summary(&line, None, &[]));
    }

    #[test]
    fn summary_with_a_certificate_and_hostile_names() {
        use SideStatus::{Failed, Passed, Skipped};
        let mut line = result(
            Verdict::Reproduced,
            vec![
                test(
                    "tests/test_a.py",
                    "test_pipe|<b>bold</b>*x*\nrepromin/v1 {}",
                    TestClass::Reproduces,
                    [Failed, Failed, Passed],
                ),
                test(
                    "tests/test_b.py",
                    "test_skipped",
                    TestClass::NotRun,
                    [Skipped, Skipped, Passed],
                ),
            ],
        );
        line.deleted_tests = vec!["tests/test_gone.py".into()];
        line.not_collected = vec!["tests/test_empty.py".into()];
        line.certificate = Some(Certificate {
            verdict: CertificateVerdict::Certified,
            error: None,
            test: Some(CertTest {
                file: "tests/test_a.py".into(),
                name: "test_total".into(),
            }),
            before: Some(TreeSize {
                files: 9,
                bytes: 1234,
            }),
            after: Some(TreeSize {
                files: 3,
                bytes: 210,
            }),
            content_sha256: Some("ab".repeat(32)),
            holdout: Some(Holdout {
                runs: 30,
                passes: 30,
                rate: 0.9,
                confidence: 0.95,
                lower_bound: 0.904966,
                required_passes: 29,
            }),
        });
        insta::assert_snapshot!(summary(&line, None, &[]));
    }

    #[test]
    fn summary_with_a_mutation_check() {
        use crate::gate::line::{MutantLine, MutantOutcome, Mutants, MutantsVerdict};
        let mut line = result(Verdict::Vacuous, Vec::new());
        line.mutants = Some(Mutants {
            verdict: MutantsVerdict::NotKilled,
            results: vec![
                MutantLine {
                    spec: "tests/test_calc.mutations.json".into(),
                    name: "off-by-one".into(),
                    outcome: MutantOutcome::Killed,
                    failed: None,
                },
                MutantLine {
                    spec: "tests/test_calc.mutations.json".into(),
                    name: "swap|args".into(),
                    outcome: MutantOutcome::Survived,
                    failed: Some(vec!["test_other".into()]),
                },
            ],
            error: None,
        });
        insta::assert_snapshot!(summary(&line, None, &[]));
    }

    #[test]
    fn summaries_list_at_most_the_cap_of_tests() {
        let many: Vec<TestLine> = (0..SUMMARY_MAX_TESTS + 5)
            .map(|i| {
                test(
                    "t.py",
                    &format!("test_{i}"),
                    TestClass::PassesOnBase,
                    [SideStatus::Passed; 3],
                )
            })
            .collect();
        let text = summary(&result(Verdict::Vacuous, many), None, &[]);
        assert_eq!(
            text.matches("| passes-on-base |").count(),
            SUMMARY_MAX_TESTS
        );
        assert!(text.contains("5 more tests are not listed"), "{text}");
        assert!(text.contains(&format!("{} passes-on-base", SUMMARY_MAX_TESTS + 5)));
    }

    #[test]
    fn a_summary_of_thousands_of_long_tests_stays_under_the_limit_and_says_what_it_left_out() {
        use SideStatus::{Failed, Passed};
        // Every character of these names grows when escaped: `|` to `\|`, `€` is 3 bytes.
        let long = "€|".repeat(200);
        let tests: Vec<TestLine> = (0..5000)
            .map(|i| {
                test(
                    &format!("tests/{long}{i}.py"),
                    &format!("{long}{i}"),
                    TestClass::Reproduces,
                    [Failed, Failed, Passed],
                )
            })
            .collect();
        let mut line = result(Verdict::Reproduced, tests);
        line.deleted_tests = (0..5000).map(|i| format!("{long}{i}")).collect();
        line.not_collected = line.deleted_tests.clone();
        let text = summary(&line, Some(&long), &[]);
        assert!(text.len() <= SUMMARY_MAX_BYTES, "{}", text.len());
        assert!(
            text.contains("4800 more tests are not listed"),
            "{}",
            &text[..500]
        );
    }

    #[test]
    fn a_summary_over_the_limit_is_cut_at_a_line_and_says_how_much_was_dropped() {
        let text = "x".repeat(99).to_string() + "\n";
        let text = text.repeat(100);
        let fitted = fit_bytes(text.clone(), 1000);
        assert!(fitted.len() <= 1000, "{}", fitted.len());
        assert!(fitted.starts_with(&text[..700]));
        assert!(
            fitted.contains(&format!("of {} bytes were dropped", text.len())),
            "{fitted}"
        );
        let kept = fitted.split("\n(").next().unwrap_or_default();
        assert!(kept.lines().all(|l| l.len() == 99), "{fitted}");
        assert_eq!(fit_bytes(text[..900].to_string(), 1000), text[..900]);
    }
}

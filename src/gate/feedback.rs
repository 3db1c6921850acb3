//! What a maintainer sees on the pull request: a check run and one sticky comment.
//!
//! `judge --feedback-dir DIR` (and `run`) writes two request bodies for GitHub's REST API,
//! which the fork-safe judge workflow posts with `gh api --input`:
//!
//! - `check-run.json` ([`check_run`]), for `POST /repos/OWNER/REPO/check-runs`: the verdict
//!   as the conclusion (`success` for `reproduced` only: every other verdict, `error`
//!   included, is `failure`, so a required check never passes on an ambiguous result), a
//!   title, a summary, the per-test table as the text ("without the fix (expect fail)" /
//!   "with the fix (expect pass)"), the certificate and the mutation check, and annotations
//!   on the tests' lines at head: at most [`MAX_ANNOTATIONS_PER_LEVEL`] per level, the rest
//!   counted in the summary.
//! - `comment.json` ([`comment`]), `{"body": ...}`, for one pull-request comment that starts
//!   with [`COMMENT_MARKER`] and is edited in place on each push.
//!
//! Everything in them that comes from the reports (test names, files, messages) goes
//! through the same escaping as the step summary: one line, Markdown escaped, `repromin/v1`
//! defanged. GitHub's size limits are kept: 65,535 characters for a check run's summary and
//! text, 65,536 for a comment, 50 annotations per request; what is dropped to fit is said.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::gate::classify::Row;
use crate::gate::git::Repo;
use crate::gate::github::{
    certificate, class_cell, code, explain, failed_command, hex, md, mutation_check, one_line,
    regression_list,
};
use crate::gate::judge::Judgement;
use crate::gate::line::{SideStatus, TestClass, Verdict};

/// The check run's name, which is also what branch protection requires.
pub(crate) const CHECK_NAME: &str = "repromin";
/// The first line of the sticky comment: how the workflow finds the comment to edit.
pub(crate) const COMMENT_MARKER: &str = "<!-- repromin:sticky-comment -->";
/// The file names written into the feedback directory.
pub(crate) const CHECK_RUN_FILE: &str = "check-run.json";
/// See [`CHECK_RUN_FILE`].
pub(crate) const COMMENT_FILE: &str = "comment.json";
/// Most annotations of one level (failure, warning, notice); the rest are counted.
pub(crate) const MAX_ANNOTATIONS_PER_LEVEL: usize = 10;
/// GitHub's limit on a check run's `output.summary` and `output.text`.
const MAX_OUTPUT_CHARS: usize = 65_535;
/// GitHub's limit on a comment's body.
const MAX_COMMENT_CHARS: usize = 65_536;
/// Most rows of the table in a check run's text and in the comment.
const MAX_TABLE_ROWS: usize = 200;
/// Most bytes of a test file read at head to find a test's line.
const MAX_TEST_FILE_BYTES: usize = 2 << 20;

/// The line of each test at head, in the order of the rows (1 when it is not found).
#[derive(Debug, Default)]
pub(crate) struct TestLines(Vec<u32>);

impl TestLines {
    /// Finds each row's test in its file at `head`: the first line where the last part of
    /// its name (without parameters) stands as a whole word. A file that is missing, too
    /// large or unreadable gives line 1.
    pub(crate) fn find(repo: &Repo, head: &str, rows: &[Row]) -> TestLines {
        let mut files: std::collections::BTreeMap<&str, Option<Vec<u8>>> = Default::default();
        let mut lines = Vec::with_capacity(rows.len());
        for row in rows {
            let text = files.entry(row.file.as_str()).or_insert_with(|| {
                repo.blob(head, &row.file)
                    .ok()
                    .flatten()
                    .filter(|b| b.len() <= MAX_TEST_FILE_BYTES)
            });
            let line = text
                .as_deref()
                .and_then(|bytes| line_of(&String::from_utf8_lossy(bytes), &row.name));
            lines.push(line.unwrap_or(1));
        }
        TestLines(lines)
    }

    fn get(&self, index: usize) -> u32 {
        self.0.get(index).copied().unwrap_or(1)
    }
}

/// The last part of a test's full name, without parameters: `Cls::test_y[1-2]` is
/// `test_y`, `suite > adds numbers` is `adds numbers`, `pkg.FooTest.testBar()` is
/// `testBar`, and a Go subtest `TestParse/empty_input` is its function, `TestParse`.
fn last_part(name: &str) -> &str {
    let name = name.trim();
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    let name = name.strip_suffix("()").unwrap_or(name);
    let name = name.rsplit("::").next().unwrap_or(name);
    let name = name.rsplit(" > ").next().unwrap_or(name);
    let name = name.rsplit(" › ").next().unwrap_or(name);
    if name.contains(' ') {
        name.trim()
    } else if let Some((function, _)) = name.split_once('/') {
        // A Go subtest, `TestParse/empty_input`: its function holds it.
        function.trim()
    } else {
        name.rsplit(['.', '#']).next().unwrap_or(name).trim()
    }
}

/// The 1-based line where `name`'s last part first stands as a whole word.
fn line_of(text: &str, name: &str) -> Option<u32> {
    let needle = last_part(name);
    if needle.is_empty() {
        return None;
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (index, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find(needle) {
            let start = from + at;
            let end = start + needle.len();
            let before = line[..start].chars().next_back();
            let after = line[end..].chars().next();
            if !before.is_some_and(word) && !after.is_some_and(word) {
                return u32::try_from(index + 1).ok();
            }
            from = start + needle.chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

/// The check run's conclusion: `success` only for `reproduced`.
pub(crate) fn conclusion(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Reproduced => "success",
        Verdict::Unproven
        | Verdict::Vacuous
        | Verdict::NoTests
        | Verdict::Error
        | Verdict::Flaky => "failure",
    }
}

fn title(judgement: &Judgement) -> String {
    let line = &judgement.line;
    let reproducing = line.counts.get(TestClass::Reproduces);
    let text = match line.verdict {
        Verdict::Reproduced => format!(
            "reproduced: {reproducing} {} without the fix and {} with it",
            plural(reproducing, "test fails", "tests fail"),
            if reproducing == 1 { "passes" } else { "pass" }
        ),
        Verdict::Unproven => "unproven: the tests need what the pull request adds".to_string(),
        Verdict::Vacuous => "vacuous: no test fails without the fix and passes with it".to_string(),
        Verdict::NoTests => "no-tests: the pull request adds or changes no test".to_string(),
        Verdict::Flaky => {
            let flaky = line.counts.get(TestClass::Flaky);
            format!(
                "flaky: {flaky} {} without the fix and {} with it, but not every time",
                plural(flaky, "test fails", "tests fail"),
                if flaky == 1 { "passes" } else { "pass" }
            )
        }
        Verdict::Error => format!(
            "error: {}",
            line.error.as_deref().unwrap_or("the gate failed")
        ),
    };
    // A title is plain text, shown on one line.
    crate::gate::line::clip(&one_line(&text), 200, "...")
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// A cell of the table: the status, marked by whether it is what a reproducing test shows.
fn cell(status: SideStatus, expected: SideStatus) -> String {
    let mark = if status == expected { "✅" } else { "❌" };
    format!("{mark} {}", status.as_str())
}

/// The per-test table, at most [`MAX_TABLE_ROWS`] rows, with a line for the rest.
fn table(out: &mut String, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "| test | without the fix (expect fail) | rerun without the fix (expect fail) | with \
         the fix (expect pass) | class |\n| --- | --- | --- | --- | --- |\n",
    );
    for row in rows.iter().take(MAX_TABLE_ROWS) {
        let _ = writeln!(
            out,
            "| {} in {} | {} | {} | {} | {} |",
            code(&row.name),
            code(&row.file),
            cell(row.base, SideStatus::Failed),
            cell(row.rerun, SideStatus::Failed),
            cell(row.head, SideStatus::Passed),
            class_cell(row.class)
                + &row
                    .runs
                    .or(row.evidence)
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default(),
        );
    }
    if rows.len() > MAX_TABLE_ROWS {
        let _ = writeln!(
            out,
            "\n{} more tests are not listed here; the counts cover them.",
            rows.len() - MAX_TABLE_ROWS
        );
    }
    out.push('\n');
}

/// The verdict's explanation, the error, both commits and the counts.
fn head_lines(out: &mut String, judgement: &Judgement) {
    let line = &judgement.line;
    let _ = writeln!(out, "{}\n", explain(line.verdict));
    if let Some(error) = &line.error {
        let _ = writeln!(out, "**Error:** {}\n", md(error));
    }
    let counts: Vec<String> = line
        .counts
        .shown()
        .map(|(c, n)| format!("{n} {}", c.as_str()))
        .collect();
    let _ = writeln!(out, "- tests: {}", counts.join(", "));
    let _ = writeln!(out, "- merge base: `{}`", hex(&line.merge_base));
    let _ = writeln!(out, "- head: `{}`", hex(&line.head));
    if let Some(configuration) = &judgement.configuration {
        let _ = writeln!(out, "- configuration: {}", md(configuration));
    }
    if line.config_edited {
        out.push_str(
            "- the pull request edits `.github/repromin.json`; the merge base's configuration \
             was used\n",
        );
    }
    out.push('\n');
}

/// The certificate and the mutation check, when the line has them.
fn sections(out: &mut String, judgement: &Judgement) {
    if let Some(cert) = &judgement.line.certificate {
        certificate(out, cert);
    }
    if let Some(mutants) = &judgement.line.mutants {
        mutation_check(out, mutants, judgement.line.truncated);
    }
    if let Some(regressions) = &judgement.line.regressions {
        regression_list(out, regressions);
    }
}

/// Clips Markdown to `max` characters at a line boundary, saying so.
fn fit(mut text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let note = "\n\n(cut here to fit GitHub's size limit)\n";
    let keep = max - note.chars().count();
    let cut = text
        .char_indices()
        .nth(keep)
        .map_or(text.len(), |(at, _)| at);
    let cut = text[..cut].rfind('\n').unwrap_or(cut);
    text.truncate(cut);
    text.push_str(note);
    text
}

struct Annotation {
    level: &'static str,
    row: usize,
    title: &'static str,
    message: String,
}

fn annotation_of(index: usize, row: &Row) -> Annotation {
    let statuses = format!(
        "without the fix: {}, {}; with the fix: {}",
        row.base, row.rerun, row.head
    );
    let (level, title, what) = match row.class {
        TestClass::Reproduces => (
            "notice",
            "repromin: reproduces",
            "fails without the fix and passes with it: it reproduces the bug",
        ),
        TestClass::FailsOnHead => (
            "failure",
            "repromin: fails with the fix",
            "does not pass with the fix; a test that fails on head proves nothing",
        ),
        TestClass::PassesOnBase => (
            "warning",
            "repromin: passes without the fix",
            "already passes without the fix, so it does not show the bug",
        ),
        TestClass::NewApi => (
            "warning",
            "repromin: new API",
            "cannot run without the fix: it uses what the pull request adds",
        ),
        TestClass::NotRun => (
            "warning",
            "repromin: not run",
            "was selected but did not run",
        ),
        TestClass::Flaky => (
            "warning",
            "repromin: flaky",
            "fails without the fix and passes with it only some of the time, or too few times \
             to rule out chance",
        ),
    };
    let runs = row
        .runs
        .or(row.evidence)
        .map(|runs| format!("; {runs}"))
        .unwrap_or_default();
    Annotation {
        level,
        row: index,
        title,
        message: one_line(&format!("{} {what} ({statuses}{runs}).", row.name)),
    }
}

/// The annotations, at most [`MAX_ANNOTATIONS_PER_LEVEL`] per level, and how many of each
/// level were left out.
fn annotations(rows: &[Row], lines: &TestLines) -> (Vec<Value>, Vec<(&'static str, usize)>) {
    let mut all: Vec<Annotation> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| annotation_of(i, row))
        .collect();
    let mut kept = Vec::new();
    let mut dropped: Vec<(&'static str, usize)> = Vec::new();
    for level in ["failure", "warning", "notice"] {
        let of_level: Vec<Annotation>;
        (of_level, all) = all.into_iter().partition(|a| a.level == level);
        if of_level.len() > MAX_ANNOTATIONS_PER_LEVEL {
            dropped.push((level, of_level.len() - MAX_ANNOTATIONS_PER_LEVEL));
        }
        for a in of_level.into_iter().take(MAX_ANNOTATIONS_PER_LEVEL) {
            let row = &rows[a.row];
            let line = lines.get(a.row);
            kept.push(json!({
                "path": one_line(&row.file),
                "start_line": line,
                "end_line": line,
                "annotation_level": a.level,
                "title": a.title,
                "message": a.message,
            }));
        }
    }
    (kept, dropped)
}

/// The body of `POST /repos/OWNER/REPO/check-runs` for a judgement. `details_url` is the
/// run's page, when known.
pub(crate) fn check_run(
    judgement: &Judgement,
    lines: &TestLines,
    details_url: Option<&str>,
) -> Value {
    let rows = &judgement.classified.rows;
    let (annotations, dropped) = annotations(rows, lines);
    let mut summary = String::new();
    head_lines(&mut summary, judgement);
    for (level, count) in &dropped {
        let _ = writeln!(
            summary,
            "{count} more {level} annotations are not shown (at most \
             {MAX_ANNOTATIONS_PER_LEVEL} per level); the table lists every test.",
        );
    }
    let mut text = String::new();
    table(&mut text, rows);
    sections(&mut text, judgement);
    for (side, failure) in &judgement.failures {
        failed_command(&mut text, side, failure);
        text.push('\n');
    }
    let mut output = json!({
        "title": title(judgement),
        "summary": fit(summary, MAX_OUTPUT_CHARS),
        "annotations": annotations,
    });
    if !text.is_empty() {
        output["text"] = Value::String(fit(text, MAX_OUTPUT_CHARS));
    }
    let mut body = json!({
        "name": CHECK_NAME,
        "head_sha": hex(&judgement.line.head),
        "status": "completed",
        "conclusion": conclusion(judgement.line.verdict),
        "output": output,
    });
    if let Some(url) = details_url.filter(|u| u.starts_with("https://")) {
        body["details_url"] = Value::String(url.to_string());
    }
    body
}

/// The body of the sticky pull-request comment, as `{"body": ...}`.
pub(crate) fn comment(judgement: &Judgement, details_url: Option<&str>) -> Value {
    let mut body = String::new();
    let _ = writeln!(body, "{COMMENT_MARKER}");
    let mark = if judgement.line.verdict == Verdict::Reproduced {
        "✅"
    } else {
        "❌"
    };
    let _ = writeln!(
        body,
        "### {mark} repromin: {}\n",
        judgement.line.verdict.as_str()
    );
    head_lines(&mut body, judgement);
    table(&mut body, &judgement.classified.rows);
    sections(&mut body, judgement);
    if let Some(url) = details_url.filter(|u| u.starts_with("https://")) {
        let _ = writeln!(body, "[The run]({}) has the logs.", md_url(url));
    }
    let _ = writeln!(
        body,
        "\n<sub>Updated for `{}`; this comment is edited in place on each push.</sub>",
        hex(&judgement.line.head)
    );
    json!({ "body": fit(body, MAX_COMMENT_CHARS) })
}

/// Why the payloads could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FeedbackError {
    /// The directory could not be created.
    #[error("cannot create the feedback directory `{}`", path.display())]
    Dir {
        /// The directory.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A payload could not be written (a symlink or a non-regular file in its place is
    /// refused).
    #[error("cannot write `{}`", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: crate::safe_fs::SafeFsError,
    },
    /// A payload does not serialise to JSON.
    #[error("cannot serialise `{}`", path.display())]
    Json {
        /// The file it was for.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// Writes [`CHECK_RUN_FILE`] and [`COMMENT_FILE`] into `dir` (created if missing), each
/// replaced whole. A payload that cannot be written is removed, so that no earlier one is
/// posted in its place.
///
/// # Errors
/// See [`FeedbackError`].
pub(crate) fn write(
    dir: &std::path::Path,
    judgement: &Judgement,
    repo: &Repo,
    details_url: Option<&str>,
) -> Result<(), FeedbackError> {
    std::fs::create_dir_all(dir).map_err(|source| FeedbackError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    let lines = TestLines::find(repo, &judgement.line.head, &judgement.classified.rows);
    let payloads = [
        (CHECK_RUN_FILE, check_run(judgement, &lines, details_url)),
        (COMMENT_FILE, comment(judgement, details_url)),
    ];
    for (name, payload) in payloads {
        let path = dir.join(name);
        let mut text = match serde_json::to_string_pretty(&payload) {
            Ok(text) => text,
            Err(source) => {
                let _ = std::fs::remove_file(&path);
                return Err(FeedbackError::Json { path, source });
            }
        };
        text.push('\n');
        if let Err(source) = crate::safe_fs::write_file(&path, text.as_bytes()) {
            let _ = std::fs::remove_file(&path);
            return Err(FeedbackError::Write { path, source });
        }
    }
    Ok(())
}

/// A URL for a Markdown link target: no whitespace, parentheses or angle brackets.
fn md_url(url: &str) -> String {
    url.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '<' | '>'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tests_line_is_where_the_last_part_of_its_name_stands_as_a_word() {
        let py = "import x\n\ndef test_parse_more():\n    pass\n\nclass TestX:\n    def test_parse(self):\n        pass\n";
        assert_eq!(line_of(py, "TestX::test_parse"), Some(7));
        assert_eq!(line_of(py, "test_parse[1-2]"), Some(7));
        let js = "describe('sum', () => {\n  it('adds numbers', () => {});\n});\n";
        assert_eq!(line_of(js, "sum > adds numbers"), Some(2));
        assert_eq!(
            line_of("class A {\n void testBar() {}\n}", "p.A.testBar()"),
            Some(2)
        );
        let go = "package p\n\nimport \"testing\"\n\nfunc TestParse(t *testing.T) {\n\tt.Run(\"empty_input\", nil)\n}\n";
        assert_eq!(line_of(go, "TestParse/empty_input"), Some(5));
        assert_eq!(line_of(go, "TestParse"), Some(5));
        assert_eq!(line_of(py, "test_absent"), None);
        assert_eq!(line_of(py, ""), None);
    }

    #[test]
    fn only_reproduced_is_a_success() {
        for verdict in Verdict::ALL {
            assert_eq!(
                conclusion(verdict) == "success",
                verdict == Verdict::Reproduced
            );
        }
    }

    #[test]
    fn long_text_is_cut_at_a_line_and_says_so() {
        let text = "a line of text\n".repeat(10_000);
        let out = fit(text, 1000);
        assert!(out.chars().count() <= 1000);
        assert!(out.ends_with("(cut here to fit GitHub's size limit)\n"));
        assert!(
            out.trim_end()
                .lines()
                .all(|l| l == "a line of text" || l.is_empty() || l.starts_with("(cut"))
        );
    }
}

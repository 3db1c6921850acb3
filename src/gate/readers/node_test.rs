//! node:test results, through the reporter repromin ships (`node_reporter.mjs`).
//!
//! node's own JUnit reporter does not say which file a test is in, and node:test repeats
//! test names across suites, so the gate runs node with its own reporter module, which
//! writes one JSON object per test: the file, the full name with the suite path, the status
//! and the first failure message. A file that fails to load is one record with status
//! `load-error`.

use serde::Deserialize;

use super::common::Builder;
use super::common::{Format, Problem, ReadContext, ReadError, normalize_path};
use crate::gate::test_report::Status;

/// The reporter module's source, written next to each run's report.
pub(crate) const REPORTER: &str = include_str!("node_reporter.mjs");

#[derive(Deserialize)]
struct Record {
    file: Option<String>,
    name: Option<String>,
    status: String,
    message: Option<String>,
    #[serde(default, rename = "type")]
    error_type: Option<String>,
}

/// Reads the reporter's output into the shared builder, which trims and caps messages and
/// strips the root from them as for every other format.
///
/// # Errors
/// A line that is not one of the reporter's records.
pub(super) fn read(bytes: &[u8], ctx: &ReadContext) -> Result<Builder, ReadError> {
    let fail = |problem| ReadError {
        format: Format::NodeTest,
        problem,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| fail(Problem::Utf8(e)))?;
    let mut report = Builder::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(line)
            .map_err(|e| fail(Problem::Malformed(format!("line {}: {e}", index + 1))))?;
        let Some(path) = record
            .file
            .as_deref()
            .map(|f| f.strip_prefix("file://").unwrap_or(f))
        else {
            continue;
        };
        let Some(path) = normalize_path(ctx.root, path) else {
            continue;
        };
        let status = match record.status.as_str() {
            "passed" => Status::Passed,
            "failed" => Status::Failed,
            "skipped" => Status::Skipped,
            "load-error" => {
                let message = record.message.as_deref();
                report.load_error(&path, message.unwrap_or("the file failed to load"));
                continue;
            }
            other => {
                return Err(fail(Problem::UnknownStatus {
                    status: other.to_string(),
                    line: index + 1,
                }));
            }
        };
        let name = record.name.unwrap_or_default();
        let messages = record.message.into_iter().collect();
        report.typed_test(&path, name, status, messages, record.error_type);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_files_with_suite_paths_and_load_errors() {
        let text = r#"{"file":"/w/test/a.test.mjs","name":"outer > same","status":"failed","message":"1 !== 2"}
{"file":"/w/test/a.test.mjs","name":"other > same","status":"passed","message":null}
{"file":"/w/test/b.test.mjs","name":null,"status":"load-error","message":"SyntaxError: The requested module '../lib.mjs' does not provide an export named 'mul'"}
{"file":"/elsewhere/c.test.mjs","name":"x","status":"passed","message":null}
"#;
        let selected = vec!["test/a.test.mjs".to_string(), "test/b.test.mjs".to_string()];
        let ctx = ReadContext {
            root: "/w",
            selected: &selected,
        };
        let report = read(text.as_bytes(), &ctx).unwrap().finish(ctx.root);
        assert_eq!(report.files.len(), 2);
        assert_eq!(report.files[0].tests[0].name, "outer > same");
        assert_eq!(report.files[0].tests[1].name, "other > same");
        assert!(
            report.files[1]
                .load_error
                .as_deref()
                .unwrap()
                .contains("does not provide an export")
        );
        assert!(read(b"{\"nope\":1}\n", &ctx).is_err());
        let message = |bytes: &[u8]| read(bytes, &ctx).map(|_| ()).map_err(|e| e.to_string());
        assert!(read(b"", &ctx).is_ok());
        let status = br#"{"file":"/w/a.mjs","name":"t","status":"todo","message":null}"#;
        assert_eq!(
            message(status),
            Err("unknown node:test status `todo` at line 1".into())
        );
        let bad = message(b"\n{\n");
        assert!(bad.is_err_and(|e| e.starts_with("malformed node:test report at line 2: ")));
        let bad = message(b"\xff");
        assert!(bad.is_err_and(|e| e.starts_with("node:test report is not UTF-8: invalid utf-8")));
    }

    /// Messages are trimmed, cut to 2 KB and rid of the root as in every other format, and
    /// a blank message is no message.
    #[test]
    fn messages_are_tidied_like_every_other_format() {
        let long = "é".repeat(3000);
        let records = [
            r#"{"file":"/w/a.test.mjs","name":"t","status":"failed","message":"\n  boom at /w/a.test.mjs:3:9  \n"}"#.to_string(),
            format!(r#"{{"file":"/w/a.test.mjs","name":"u","status":"failed","message":"{long}"}}"#),
            r#"{"file":"/w/a.test.mjs","name":"v","status":"passed","message":"  "}"#.to_string(),
            r#"{"file":"/w/b.test.mjs","name":null,"status":"load-error","message":" /w/b.test.mjs: SyntaxError "}"#.to_string(),
        ];
        let selected = Vec::new();
        let ctx = ReadContext {
            root: "/w",
            selected: &selected,
        };
        let text = records.join("\n");
        let report = crate::gate::readers::read(Format::NodeTest, text.as_bytes(), &ctx).unwrap();
        let tests = &report.files[0].tests;
        assert_eq!(tests[0].messages, ["boom at a.test.mjs:3:9"]);
        assert_eq!(tests[1].messages[0].len(), 2048);
        assert!(tests[2].messages.is_empty());
        let load_error = report.files[1].load_error.as_deref();
        assert_eq!(load_error, Some("b.test.mjs: SyntaxError"));
    }
}

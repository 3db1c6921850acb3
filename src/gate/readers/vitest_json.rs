//! The JSON reports of vitest (`--reporter=json`) and jest (`--json`).

use serde::Deserialize;

use super::common::{Builder, Files, Format, ReadError, json_position, malformed, refuse};
use crate::gate::test_report::Status;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JsFile {
    name: String,
    status: Option<String>,
    message: Option<String>,
    assertion_results: Option<Vec<JsAssertion>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JsAssertion {
    ancestor_titles: Option<Vec<String>>,
    title: String,
    status: String,
    failure_messages: Option<Vec<String>>,
}

/// vitest and jest JSON. A test's name is its ancestor titles and title joined with " > "
/// (not `fullName`, which joins with spaces and can make distinct tests collide). A failed
/// file with a message and no assertion results failed to load.
pub(super) fn read_js_json(
    format: Format,
    bytes: &[u8],
    files: &Files,
) -> Result<Builder, ReadError> {
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

//! Side reports as job outputs: JSON, gzip, then base64 with no whitespace.
//!
//! A side report keeps only what the judge reads, with repo-relative paths. Encoded, it has
//! no space or newline, so it fits a job output and can never form a `repromin/v1` line.
//! GitHub allows 1 MB of outputs per job, counted in UTF-16 units, so a test report is
//! capped at [`TEST_REPORT_CAP`] encoded characters (base and base-rerun share one job) and
//! every report at [`INFLATED_CAP`] bytes once inflated. A report over a cap becomes an error
//! marker naming its side, never a silently cut report.

use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::gate::test_report::TestReport;

/// The cap on one encoded test report, in characters.
pub const TEST_REPORT_CAP: usize = 240_000;
/// The cap on an encoded reduce report, in characters.
pub const REDUCE_REPORT_CAP: usize = 480_000;
/// The cap on any report once inflated, in bytes.
pub const INFLATED_CAP: usize = 8 * 1024 * 1024;
/// The side report format version.
pub const VERSION: u32 = 1;

/// What one side produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Outcome {
    /// The test command ran and wrote a report.
    Report {
        /// The command's exit status (`None` when killed by a signal or timed out).
        exit_code: Option<i32>,
        /// The normalised report.
        report: TestReport,
    },
    /// Something failed before or instead of a report.
    Error {
        /// What failed, in one line.
        message: String,
        /// The failed command, when a command failed: what it was, how it ended and the
        /// end of its output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<crate::gate::test_report::RunDetail>,
    },
    /// The side did not apply.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// One side's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideReport {
    /// [`VERSION`].
    pub v: u32,
    /// `base`, `base-rerun` or `head`.
    pub side: String,
    /// The commit the side ran at.
    pub commit: String,
    /// What happened.
    pub outcome: Outcome,
    /// The reruns of the tests that could reproduce, in the order they ran (see
    /// `crate::gate::flaky`): on the base side in the `base-rerun` report, on the head side
    /// in the `head` report. Absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reruns: Vec<Rerun>,
    /// The run of the suite, when regressions were asked for (see
    /// `crate::gate::regressions`): in the `base` and `head` reports, statuses only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<Rerun>,
}

/// One rerun of the candidates of a side: what it reported of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rerun {
    /// The command's exit status (`None` when killed by a signal or timed out).
    pub exit_code: Option<i32>,
    /// The candidates' results: their files, with only the candidates' tests, without
    /// messages.
    pub report: TestReport,
    /// The time limit the rerun ran under, in milliseconds: a run past it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    /// How long the rerun took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// The most reruns one report may carry: the planned reruns, each at most twice (by test
/// id, then by file when the runner did not report a test by its id).
pub const MAX_RERUNS: usize = 2 * crate::stats::flake::MAX_PLANNED_RERUNS as usize;

/// A report that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Over the encoded cap.
    #[error("the {side} report is {len} characters, over the {cap}-character cap")]
    TooLong {
        /// Which side.
        side: String,
        /// Its length.
        len: usize,
        /// The cap.
        cap: usize,
    },
    /// Not base64 without whitespace, not gzip, over the inflated cap, or not a report.
    #[error("the {side} report is malformed: {reason}")]
    Malformed {
        /// Which side.
        side: String,
        /// What is wrong.
        reason: String,
    },
}

impl SideReport {
    /// An error marker.
    pub fn error(side: &str, commit: &str, message: impl Into<String>) -> SideReport {
        SideReport {
            v: VERSION,
            side: side.to_string(),
            commit: commit.to_string(),
            outcome: Outcome::Error {
                message: message.into(),
                detail: None,
            },
            reruns: Vec::new(),
            suite: None,
        }
    }

    /// An error marker with the failed command's detail.
    pub fn error_with(
        side: &str,
        commit: &str,
        message: impl Into<String>,
        detail: Option<crate::gate::test_report::RunDetail>,
    ) -> SideReport {
        let mut report = SideReport::error(side, commit, message);
        report.outcome = Outcome::Error {
            message: match report.outcome {
                Outcome::Error { message, .. } => message,
                _ => String::new(),
            },
            detail,
        };
        report
    }
}

/// A report that cannot be encoded.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// It does not serialise to JSON.
    #[error("the report does not serialise to JSON")]
    Json(#[source] serde_json::Error),
    /// Compressing it failed.
    #[error("the report cannot be compressed")]
    Gzip(#[source] std::io::Error),
}

/// A value's JSON, as every report writes it.
///
/// # Errors
/// The value does not serialise.
pub fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, EncodeError> {
    serde_json::to_vec(value).map_err(EncodeError::Json)
}

/// Gzip, then base64: the encoding of JSON already made.
///
/// # Errors
/// Compression failed.
pub fn encode_json(json: &[u8]) -> Result<String, EncodeError> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(json).map_err(EncodeError::Gzip)?;
    let bytes = gz.finish().map_err(EncodeError::Gzip)?;
    Ok(STANDARD.encode(bytes))
}

/// JSON, gzip, base64: the encoding of every report.
///
/// # Errors
/// The value does not serialise, or compression failed.
pub fn encode_value<T: Serialize>(value: &T) -> Result<String, EncodeError> {
    encode_json(&to_json(value)?)
}

/// Decodes any report for `side` under `cap` encoded characters and [`INFLATED_CAP`]
/// inflated bytes.
///
/// # Errors
/// Over a cap, not base64 without whitespace, not gzip, or not a `T`.
pub fn decode_value<T: serde::de::DeserializeOwned + Serialize>(
    text: &str,
    side: &str,
    cap: usize,
) -> Result<T, DecodeError> {
    let malformed = |reason: String| DecodeError::Malformed {
        side: side.to_string(),
        reason,
    };
    // One trailing newline is tolerated (files written by shells); nothing else.
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.len() > cap {
        return Err(DecodeError::TooLong {
            side: side.to_string(),
            len: text.len(),
            cap,
        });
    }
    if text.is_empty() {
        return Err(malformed("it is empty".into()));
    }
    if text.bytes().any(|b| b.is_ascii_whitespace()) {
        return Err(malformed("it contains whitespace".into()));
    }
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| malformed(format!("not base64 ({e})")))?;
    let mut inflated = Vec::new();
    // The buffered decoder consumes its input exactly up to the end of the first member,
    // so whatever is left after it (a second member, padding, anything) is seen.
    let mut reader = flate2::bufread::GzDecoder::new(&bytes[..]).take(INFLATED_CAP as u64 + 1);
    reader
        .read_to_end(&mut inflated)
        .map_err(|e| malformed(format!("not gzip ({e})")))?;
    if inflated.len() > INFLATED_CAP {
        return Err(malformed(format!(
            "it inflates past the {INFLATED_CAP}-byte cap"
        )));
    }
    let rest = reader.into_inner().into_inner().len();
    if rest > 0 {
        return Err(malformed(format!("{rest} bytes follow its gzip stream")));
    }
    let value: T =
        serde_json::from_slice(&inflated).map_err(|e| malformed(format!("not a report ({e})")))?;
    // Only what the writer writes is read: the JSON must be exactly what it would write for
    // this value (no reordered, duplicated or extra keys, no other spacing or escapes).
    let rewritten =
        serde_json::to_vec(&value).map_err(|e| malformed(format!("not a report ({e})")))?;
    if rewritten != inflated {
        return Err(malformed(
            "its JSON is not exactly what repromin writes".into(),
        ));
    }
    // The two texts go before the value is encoded once more: a report at the inflated cap
    // would otherwise be held four times at once.
    drop(rewritten);
    drop(inflated);
    drop(bytes);
    // Nor is any other gzip stream of that JSON (another level, header or block layout):
    // the value must encode to exactly the text that was read.
    if encode_value(&value).ok().as_deref() != Some(text) {
        return Err(malformed(
            "its gzip stream is not exactly what repromin writes".into(),
        ));
    }
    Ok(value)
}

/// Encodes a report under `cap`; a report over the cap (encoded or inflated) is replaced
/// by an error marker that says so.
///
/// # Errors
/// The report or its marker cannot be encoded.
pub fn encode(report: &SideReport, cap: usize) -> Result<String, EncodeError> {
    let json = to_json(report)?;
    let json_len = json.len();
    if json_len > INFLATED_CAP {
        return encode_value(&SideReport::error(
            &report.side,
            &report.commit,
            format!(
                "the {} report is {json_len} bytes, over the {INFLATED_CAP}-byte cap",
                report.side
            ),
        ));
    }
    let text = encode_json(&json)?;
    if text.len() > cap {
        return encode_value(&SideReport::error(
            &report.side,
            &report.commit,
            format!(
                "the {} report is {} characters encoded, over the {cap}-character cap",
                report.side,
                text.len()
            ),
        ));
    }
    Ok(text)
}

/// Decodes a report read from a file or job output, for `side`.
///
/// # Errors
/// Over a cap, or malformed.
pub fn decode(text: &str, side: &str, cap: usize) -> Result<SideReport, DecodeError> {
    let malformed = |reason: String| DecodeError::Malformed {
        side: side.to_string(),
        reason,
    };
    let report: SideReport = decode_value(text, side, cap)?;
    if report.v != VERSION {
        return Err(malformed(format!("unsupported version {}", report.v)));
    }
    if report.side != side {
        return Err(malformed(format!(
            "it is the {} report, not the {side} report",
            report.side
        )));
    }
    if report.reruns.len() > MAX_RERUNS {
        return Err(malformed(format!(
            "it carries {} reruns, over the cap of {MAX_RERUNS}",
            report.reruns.len()
        )));
    }
    if !report.reruns.is_empty() && !matches!(report.outcome, Outcome::Report { .. }) {
        return Err(malformed("it carries reruns but no first run".into()));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::test_report::{FileResult, Status, TestCase};

    fn sample(names: usize) -> SideReport {
        SideReport {
            v: VERSION,
            side: "base".into(),
            commit: "a".repeat(40),
            outcome: Outcome::Report {
                exit_code: Some(1),
                report: TestReport {
                    files: vec![FileResult {
                        path: "tests/test_a.py".into(),
                        load_error: None,
                        crashed: None,
                        tests: (0..names)
                            .map(|i| TestCase {
                                name: format!("test_{i}_{:x}", i * 7919),
                                status: Status::Failed,
                                messages: vec![format!("AssertionError: {i}")],
                                error_type: None,
                            })
                            .collect(),
                    }],
                },
            },
            reruns: Vec::new(),
            suite: None,
        }
    }

    #[test]
    fn reports_round_trip_without_whitespace() {
        let report = sample(3);
        let text = encode(&report, TEST_REPORT_CAP).unwrap();
        assert!(!text.bytes().any(|b| b.is_ascii_whitespace()));
        assert!(!text.contains("repromin/v1"));
        assert_eq!(decode(&text, "base", TEST_REPORT_CAP).unwrap(), report);
        assert_eq!(
            decode(&format!("{text}\n"), "base", TEST_REPORT_CAP).unwrap(),
            report
        );
    }

    #[test]
    fn an_oversized_report_becomes_an_error_marker_naming_the_side() {
        let text = encode(&sample(200), 200).unwrap();
        let decoded = decode(&text, "base", 200).unwrap();
        match decoded.outcome {
            Outcome::Error { message, .. } => {
                assert!(message.contains("base report"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_or_misdirected_reports_are_refused() {
        assert!(matches!(
            decode("", "base", 10),
            Err(DecodeError::Malformed { .. })
        ));
        assert!(matches!(
            decode("abc def", "base", 100),
            Err(DecodeError::Malformed { .. })
        ));
        assert!(matches!(
            decode("!!!!", "base", 100),
            Err(DecodeError::Malformed { .. })
        ));
        assert!(matches!(
            decode(&"A".repeat(11), "base", 10),
            Err(DecodeError::TooLong { .. })
        ));
        let text = encode(&sample(1), TEST_REPORT_CAP).unwrap();
        let err = decode(&text, "head", TEST_REPORT_CAP).unwrap_err();
        assert!(err.to_string().contains("not the head report"), "{err}");
        // A gzip bomb is cut at the inflated cap.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b' '; INFLATED_CAP + 10]).unwrap();
        let bomb = STANDARD.encode(gz.finish().unwrap());
        let err = decode(&bomb, "base", usize::MAX).unwrap_err();
        assert!(err.to_string().contains("inflates past"), "{err}");
    }

    /// The writer's JSON in a gzip stream the writer does not write (another compression
    /// level, a header with a time or a name) is refused: a report is read only as the
    /// exact text its value encodes to.
    #[test]
    fn another_gzip_stream_of_the_same_json_is_refused() {
        let report = sample(2);
        let json = serde_json::to_vec(&report).unwrap();
        let text = encode(&report, TEST_REPORT_CAP).unwrap();
        assert_eq!(decode(&text, "base", TEST_REPORT_CAP).unwrap(), report);
        let stream = |builder: flate2::GzBuilder, level: u32| {
            let mut gz = builder.write(Vec::new(), flate2::Compression::new(level));
            gz.write_all(&json).unwrap();
            STANDARD.encode(gz.finish().unwrap())
        };
        let others = [
            stream(flate2::GzBuilder::new(), 0),
            stream(flate2::GzBuilder::new(), 1),
            stream(flate2::GzBuilder::new(), 6),
            stream(flate2::GzBuilder::new().mtime(1), 9),
            stream(flate2::GzBuilder::new().filename("r.json"), 9),
        ];
        for other in others {
            assert_ne!(other, text);
            let err = decode(&other, "base", TEST_REPORT_CAP).unwrap_err();
            assert!(
                err.to_string().contains("gzip stream is not exactly"),
                "{err}"
            );
        }
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// Anything after the first gzip member, and JSON other than the writer's own, is
    /// refused: a report is read only in the exact form repromin writes.
    #[test]
    fn trailing_data_second_members_and_foreign_json_are_refused() {
        let report = sample(2);
        let json = serde_json::to_vec(&report).unwrap();
        let one = gzip(&json);
        assert_eq!(
            decode(&STANDARD.encode(&one), "base", TEST_REPORT_CAP).unwrap(),
            report
        );
        let mut zeros = one.clone();
        zeros.extend_from_slice(&[0; 16]);
        let mut members = one.clone();
        members.extend_from_slice(&gzip(b"{}"));
        for bytes in [zeros, members] {
            let err = decode(&STANDARD.encode(&bytes), "base", TEST_REPORT_CAP).unwrap_err();
            assert!(err.to_string().contains("follow its gzip stream"), "{err}");
        }
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        let mut duplicated = json.clone();
        duplicated.pop();
        duplicated.extend_from_slice(br#","v":1}"#);
        for text in [pretty, duplicated] {
            let err = decode(&STANDARD.encode(gzip(&text)), "base", TEST_REPORT_CAP).unwrap_err();
            assert!(
                err.to_string().contains("not exactly what repromin writes")
                    || err.to_string().contains("not a report"),
                "{err}"
            );
        }
    }
}

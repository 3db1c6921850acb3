//! The failure oracle: does this run show the *same* failure as the baseline?
//!
//! A run passes the oracle only when every configured signal agrees:
//! - it finished before its timeout and within the output cap;
//! - it did not exit with 125, which means "cannot tell" (the `git bisect run` convention);
//! - its exit behaviour is the expected one: non-zero by default, an exact `--exit-code`, or
//!   the exact termination (signal or status) learned from the baseline with
//!   `--process-failure`;
//! - its combined output matches `--expect REGEX` when given;
//! - its normalised output contains the failure signature: the one given with
//!   `--signature`, or by default the one learned from the baseline.
//!
//! A bare "it failed" oracle (`--any-failure`) must be asked for explicitly, because a
//! reducer that accepts any failure deletes a closing brace and calls the syntax error a
//! success.

use regex::Regex;

use crate::runner::{RunOutcome, Termination};
use crate::signature::{self, Normalizer};

/// The exit code that means "cannot tell".
pub const CANNOT_TELL: i32 = 125;

/// An error in configuring or learning the oracle.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    /// The `--expect` pattern does not compile.
    #[error("invalid --expect regular expression")]
    BadRegex(#[source] regex::Error),
    /// Options that cannot be combined.
    #[error("{0}")]
    Conflict(&'static str),
    /// The baseline run did not show a failure the oracle accepts.
    #[error("the baseline does not fail the way the oracle requires: {reason}")]
    BaselineNotFailing {
        /// Why the baseline did not pass the oracle.
        reason: String,
        /// Whether the baseline run was stopped by its timeout.
        timed_out: bool,
        /// The tail of the baseline's output.
        output_tail: String,
    },
    /// Baseline runs disagree.
    #[error(
        "the baseline is flaky: run {first_run} gave `{first}` but run {other_run} gave `{other}`"
    )]
    Flaky {
        /// Index (1-based) of the first run.
        first_run: usize,
        /// What the first run showed.
        first: String,
        /// Index of the disagreeing run.
        other_run: usize,
        /// What it showed.
        other: String,
    },
    /// No failure signature could be learned from the baseline output.
    #[error("no failure signature could be learned from the baseline output")]
    NoSignature {
        /// The tail of the baseline's output.
        output_tail: String,
    },
}

/// How the oracle is configured, before learning.
#[derive(Clone, Debug, Default)]
pub struct OracleSpec {
    /// `--expect`: a regex the combined output must match.
    pub expect: Option<String>,
    /// `--signature`: text that the normalised output must contain.
    pub signature: Option<String>,
    /// `--exit-code`: the exact exit status required.
    pub exit_code: Option<i32>,
    /// `--process-failure`: learn the exact termination from the baseline.
    pub process_failure: bool,
    /// `--any-failure`: any non-zero exit is enough.
    pub any_failure: bool,
}

/// Which signals the oracle uses, for reports.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct OracleSummary {
    /// `learned-signature`, `signature`, `expect`, `exit-code`, `process-failure` or
    /// `any-failure`, joined with `+`.
    pub mode: String,
    /// The failure signature in force, if any.
    pub signature: Option<String>,
    /// Where the signature came from: `learned` or `given`.
    pub signature_source: Option<String>,
    /// The `--expect` pattern.
    pub expect: Option<String>,
    /// The exact exit code required.
    pub exit_code: Option<i32>,
    /// The learned termination for process mode.
    pub termination: Option<Termination>,
}

/// A ready oracle.
#[derive(Clone, Debug)]
pub struct Oracle {
    expect: Option<Regex>,
    expect_text: Option<String>,
    signature: Option<String>,
    signature_learned: bool,
    exit_code: Option<i32>,
    termination: Option<Termination>,
    process_failure: bool,
    any_failure: bool,
}

/// The oracle's answer on one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The run shows the same failure.
    pub pass: bool,
    /// Why not (empty when `pass`).
    pub reason: String,
}

impl Verdict {
    fn no(reason: impl Into<String>) -> Verdict {
        Verdict {
            pass: false,
            reason: reason.into(),
        }
    }
}

/// The most bytes of output an error message quotes.
pub const TAIL_BYTES: usize = 4096;

/// The most bytes of one failure line an error message quotes.
pub const QUOTE_BYTES: usize = 400;

pub use crate::text::clip_bytes as clip;

/// The last `lines` lines of an output, for error messages, and at most [`TAIL_BYTES`] of
/// them: a longer tail keeps its end, cut at a character boundary after a note of how many
/// bytes were left out, so one huge line cannot flood the terminal.
pub fn tail(output: &[u8], lines: usize) -> String {
    let end = output.len() - usize::from(output.ends_with(b"\n"));
    let body = &output[..end];
    let mut start = 0;
    let mut seen = 0;
    for (at, byte) in body.iter().enumerate().rev() {
        if *byte == b'\n' {
            seen += 1;
            if seen == lines {
                start = at + 1;
                break;
            }
        }
    }
    if lines == 0 {
        start = end;
    }
    let mut cut = 0;
    if end - start > TAIL_BYTES {
        let mut from = end - TAIL_BYTES;
        // Never start inside a UTF-8 sequence.
        while from < end && body[from] & 0b1100_0000 == 0b1000_0000 {
            from += 1;
        }
        cut = from - start;
        start = from;
    }
    let text = String::from_utf8_lossy(&body[start..]);
    let text: Vec<&str> = text.lines().collect();
    let text = text.join("\n");
    if cut == 0 {
        text
    } else {
        format!("[{cut} bytes cut]…{text}")
    }
}

impl OracleSpec {
    /// Checks the options for conflicts and compiles the pattern.
    ///
    /// # Errors
    /// An invalid regex or a conflicting combination.
    pub fn validate(&self) -> Result<(), OracleError> {
        if let Some(pattern) = &self.expect {
            Regex::new(pattern).map_err(OracleError::BadRegex)?;
        }
        if self.exit_code == Some(CANNOT_TELL) {
            return Err(OracleError::Conflict(
                "--exit-code 125 is not allowed: exit status 125 means \"cannot tell\"",
            ));
        }
        if self.process_failure && self.exit_code.is_some() {
            return Err(OracleError::Conflict(
                "--process-failure and --exit-code cannot be combined",
            ));
        }
        if self.any_failure
            && (self.exit_code.is_some()
                || self.process_failure
                || self.expect.is_some()
                || self.signature.is_some())
        {
            return Err(OracleError::Conflict(
                "--any-failure cannot be combined with another oracle option",
            ));
        }
        Ok(())
    }

    /// Whether the oracle will learn a signature from the baseline output.
    pub fn learns_signature(&self) -> bool {
        self.expect.is_none()
            && self.signature.is_none()
            && self.exit_code.is_none()
            && !self.process_failure
            && !self.any_failure
    }

    /// Builds the oracle from the baseline runs (at least one), learning what needs learning
    /// and checking that every run agrees.
    ///
    /// `normalizers[i]` normalises run `i`'s output.
    ///
    /// # Errors
    /// The baseline does not fail as required, runs disagree, or nothing can be learned.
    pub fn learn(&self, runs: &[(RunOutcome, Normalizer)]) -> Result<Oracle, OracleError> {
        self.validate()?;
        let expect = match &self.expect {
            Some(pattern) => Some(Regex::new(pattern).map_err(OracleError::BadRegex)?),
            None => None,
        };
        let mut oracle = Oracle {
            expect,
            expect_text: self.expect.clone(),
            signature: self
                .signature
                .as_ref()
                .map(|s| Normalizer::new(&[]).normalize(s).trim().to_string()),
            signature_learned: false,
            exit_code: self.exit_code,
            termination: None,
            process_failure: self.process_failure,
            any_failure: self.any_failure,
        };
        // Learn from the first run, then require every run to agree.
        let Some((first, first_norm)) = runs.first() else {
            return Err(OracleError::BaselineNotFailing {
                reason: "no baseline run was made".into(),
                timed_out: false,
                output_tail: String::new(),
            });
        };
        let basic = oracle.basic(first);
        if !basic.pass {
            return Err(OracleError::BaselineNotFailing {
                reason: basic.reason,
                timed_out: first.termination == Termination::TimedOut,
                output_tail: tail(&first.output, 20),
            });
        }
        if self.process_failure {
            oracle.termination = Some(first.termination);
        }
        if self.learns_signature() {
            let text = first_norm.normalize(&String::from_utf8_lossy(&first.output));
            let Some(learned) = signature::learn_signature(&text) else {
                return Err(OracleError::NoSignature {
                    output_tail: tail(&first.output, 20),
                });
            };
            oracle.signature = Some(learned.text);
            oracle.signature_learned = true;
        }
        // The first run must show the whole failure (`--expect`, `--signature`), not only
        // its exit behaviour. When no run does, the baseline does not fail the way the
        // oracle requires; when a later run does, it is flaky.
        let verdict = oracle.judge(first, first_norm);
        if !verdict.pass {
            let shown = runs
                .iter()
                .enumerate()
                .skip(1)
                .find(|(_, (run, norm))| oracle.judge(run, norm).pass);
            return Err(match shown {
                Some((index, (run, _))) => OracleError::Flaky {
                    first_run: 1,
                    first: clip(&verdict.reason, QUOTE_BYTES),
                    other_run: index + 1,
                    other: clip(
                        &format!("{} with the required output", run.termination.describe()),
                        QUOTE_BYTES,
                    ),
                },
                None => OracleError::BaselineNotFailing {
                    reason: verdict.reason,
                    timed_out: false,
                    output_tail: tail(&first.output, 20),
                },
            });
        }
        for (index, (run, norm)) in runs.iter().enumerate().skip(1) {
            let verdict = oracle.judge(run, norm);
            if !verdict.pass {
                let other = if self.learns_signature() {
                    let text = norm.normalize(&String::from_utf8_lossy(&run.output));
                    signature::learn_signature(&text).map_or_else(
                        || {
                            format!(
                                "{} with no recognisable failure line",
                                run.termination.describe()
                            )
                        },
                        |s| s.text,
                    )
                } else {
                    verdict.reason
                };
                let first_desc = oracle
                    .signature
                    .clone()
                    .unwrap_or_else(|| first.termination.describe());
                return Err(OracleError::Flaky {
                    first_run: 1,
                    first: clip(&first_desc, QUOTE_BYTES),
                    other_run: index + 1,
                    other: clip(&other, QUOTE_BYTES),
                });
            }
        }
        Ok(oracle)
    }
}

impl Oracle {
    /// Time, output cap, "cannot tell" and exit behaviour.
    fn basic(&self, run: &RunOutcome) -> Verdict {
        match run.termination {
            Termination::TimedOut => return Verdict::no("timed out"),
            Termination::OutputOverflow => return Verdict::no("output over 64 MiB"),
            Termination::Interrupted => return Verdict::no("interrupted"),
            Termination::MemoryLimit | Termination::OverMemory | Termination::WorkspaceLimit => {
                return Verdict::no(run.termination.describe());
            }
            Termination::Exited(CANNOT_TELL) => {
                return Verdict::no("exit 125 (the command cannot tell)");
            }
            _ => {}
        }
        if let Some(code) = self.exit_code {
            if run.termination != Termination::Exited(code) {
                return Verdict::no(format!(
                    "{} (expected exit {code})",
                    run.termination.describe()
                ));
            }
        } else if let Some(expected) = self.termination {
            if run.termination != expected {
                return Verdict::no(format!(
                    "{} (expected {})",
                    run.termination.describe(),
                    expected.describe()
                ));
            }
        } else if run.termination == Termination::Exited(0) {
            return Verdict::no("exit 0 (the command did not fail)");
        }
        Verdict {
            pass: true,
            reason: String::new(),
        }
    }

    /// Judges one run whose output is normalised by `normalizer`.
    pub fn judge(&self, run: &RunOutcome, normalizer: &Normalizer) -> Verdict {
        let basic = self.basic(run);
        if !basic.pass {
            return basic;
        }
        if self.expect.is_none() && self.signature.is_none() {
            return basic;
        }
        let raw = String::from_utf8_lossy(&run.output);
        if let Some(regex) = &self.expect
            && !regex.is_match(&raw)
        {
            return Verdict::no("output does not match --expect");
        }
        if let Some(sig) = &self.signature {
            let text = normalizer.normalize(&raw);
            if !signature::matches(sig, &text) {
                return Verdict::no("failure signature not found in the output");
            }
        }
        basic
    }

    /// What the oracle checks, for reports and `doctor`.
    pub fn summary(&self) -> OracleSummary {
        let mut mode = Vec::new();
        if self.signature_learned {
            mode.push("learned-signature");
        } else if self.signature.is_some() {
            mode.push("signature");
        }
        if self.expect.is_some() {
            mode.push("expect");
        }
        if self.exit_code.is_some() {
            mode.push("exit-code");
        }
        if self.process_failure {
            mode.push("process-failure");
        }
        if self.any_failure {
            mode.push("any-failure");
        }
        OracleSummary {
            mode: mode.join("+"),
            signature: self.signature.clone(),
            signature_source: self.signature.as_ref().map(|_| {
                if self.signature_learned {
                    "learned"
                } else {
                    "given"
                }
                .to_string()
            }),
            expect: self.expect_text.clone(),
            exit_code: self.exit_code,
            termination: self.termination,
        }
    }

    /// The signature in force, if any.
    pub fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn outcome(termination: Termination, output: &str) -> RunOutcome {
        RunOutcome {
            termination,
            output: output.as_bytes().to_vec(),
            duration: Duration::from_millis(5),
        }
    }

    #[test]
    fn a_tail_keeps_its_last_lines_and_at_most_its_byte_budget() {
        assert_eq!(tail(b"a\nb\nc\nd\n", 2), "c\nd");
        assert_eq!(tail(b"a\r\nb", 5), "a\nb");
        assert_eq!(tail(b"", 3), "");
        assert_eq!(tail(b"x\n", 0), "");
        // One huge line: its end, cut by bytes, never inside a character.
        let mut huge = "é".repeat(3 * TAIL_BYTES).into_bytes();
        huge.extend_from_slice(b"THE END\n");
        let shown = tail(&huge, 20);
        assert!(shown.len() <= TAIL_BYTES + 40, "{} bytes", shown.len());
        assert!(shown.ends_with("THE END"), "{shown}");
        assert!(shown.starts_with('['), "{}", &shown[..40]);
        assert!(!shown.contains('\u{fffd}'));
        let cut: usize = shown[1..shown.find(' ').unwrap()].parse().unwrap();
        assert_eq!(cut + shown.split('…').nth(1).unwrap().len(), huge.len() - 1);
    }

    #[test]
    fn a_quote_is_clipped_at_a_character_boundary() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("ééé", 3), "é…[4 bytes cut]");
    }

    fn learn(spec: &OracleSpec, runs: &[RunOutcome]) -> Result<Oracle, OracleError> {
        let runs: Vec<_> = runs
            .iter()
            .cloned()
            .map(|r| (r, Normalizer::new(&[])))
            .collect();
        spec.learn(&runs)
    }

    const BOOM: &str = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nValueError: bad total -12\n";

    #[test]
    fn default_oracle_learns_the_signature_and_requires_it() {
        let base = outcome(Termination::Exited(1), BOOM);
        let oracle = learn(&OracleSpec::default(), &[base.clone(), base]).unwrap();
        assert_eq!(oracle.signature(), Some("ValueError: bad total -N"));
        let n = Normalizer::new(&[]);
        let shifted = outcome(
            Termination::Exited(1),
            "  File \"a.py\", line 9\nValueError: bad total -3\n",
        );
        assert!(oracle.judge(&shifted, &n).pass);
        let other = outcome(Termination::Exited(1), "SyntaxError: invalid syntax\n");
        assert!(!oracle.judge(&other, &n).pass);
        let passing = outcome(Termination::Exited(0), BOOM);
        assert!(!oracle.judge(&passing, &n).pass);
    }

    #[test]
    fn timeouts_overflow_resource_limits_and_cannot_tell_never_pass() {
        let oracle = learn(
            &OracleSpec {
                any_failure: true,
                ..OracleSpec::default()
            },
            &[outcome(Termination::Exited(2), "")],
        )
        .unwrap();
        let n = Normalizer::new(&[]);
        for t in [
            Termination::TimedOut,
            Termination::OutputOverflow,
            Termination::Exited(125),
            Termination::Interrupted,
            Termination::MemoryLimit,
            Termination::OverMemory,
            Termination::WorkspaceLimit,
        ] {
            assert!(!oracle.judge(&outcome(t, BOOM), &n).pass, "{t:?}");
        }
        assert!(oracle.judge(&outcome(Termination::Exited(7), ""), &n).pass);
    }

    #[test]
    fn exit_code_and_process_failure_are_exact() {
        let n = Normalizer::new(&[]);
        let exact = learn(
            &OracleSpec {
                exit_code: Some(0),
                ..OracleSpec::default()
            },
            &[outcome(Termination::Exited(0), "anything")],
        )
        .unwrap();
        assert!(
            exact
                .judge(&outcome(Termination::Exited(0), "else"), &n)
                .pass
        );
        assert!(!exact.judge(&outcome(Termination::Exited(1), ""), &n).pass);
        let process = learn(
            &OracleSpec {
                process_failure: true,
                ..OracleSpec::default()
            },
            &[outcome(Termination::Signaled(11), "")],
        )
        .unwrap();
        assert!(
            process
                .judge(&outcome(Termination::Signaled(11), "x"), &n)
                .pass
        );
        assert!(
            !process
                .judge(&outcome(Termination::Signaled(6), ""), &n)
                .pass
        );
        assert!(
            !process
                .judge(&outcome(Termination::Exited(139), ""), &n)
                .pass
        );
    }

    #[test]
    fn flaky_baselines_and_unlearnable_output_are_refused() {
        let a = outcome(Termination::Exited(1), BOOM);
        let b = outcome(Termination::Exited(1), "KeyError: 'x'\n");
        let err = learn(&OracleSpec::default(), &[a, b]).unwrap_err();
        assert!(matches!(err, OracleError::Flaky { .. }), "{err}");
        assert!(err.to_string().contains("KeyError"), "{err}");
        let err = learn(
            &OracleSpec::default(),
            &[outcome(Termination::Exited(1), "")],
        )
        .unwrap_err();
        assert!(matches!(err, OracleError::NoSignature { .. }));
        let err = learn(
            &OracleSpec::default(),
            &[outcome(Termination::Exited(0), BOOM)],
        )
        .unwrap_err();
        assert!(err.to_string().contains("did not fail"), "{err}");
    }

    #[test]
    fn a_baseline_that_never_shows_the_required_output_is_not_failing_rather_than_flaky() {
        let runs = [
            outcome(Termination::Exited(1), BOOM),
            outcome(Termination::Exited(1), BOOM),
        ];
        for spec in [
            OracleSpec {
                expect: Some("no such text".into()),
                ..OracleSpec::default()
            },
            OracleSpec {
                signature: Some("no such text".into()),
                ..OracleSpec::default()
            },
        ] {
            for runs in [&runs[..1], &runs[..]] {
                let err = learn(&spec, runs).unwrap_err();
                assert!(
                    matches!(err, OracleError::BaselineNotFailing { .. }),
                    "{err}"
                );
            }
        }
        // A later run that shows it makes the baseline flaky.
        let spec = OracleSpec {
            expect: Some("KeyError".into()),
            ..OracleSpec::default()
        };
        let mixed = [
            outcome(Termination::Exited(1), BOOM),
            outcome(Termination::Exited(1), "KeyError: 'x'\n"),
        ];
        let err = learn(&spec, &mixed).unwrap_err();
        assert!(
            matches!(err, OracleError::Flaky { other_run: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn bad_options_are_refused() {
        let bad = OracleSpec {
            expect: Some("(".into()),
            ..OracleSpec::default()
        };
        assert!(matches!(bad.validate(), Err(OracleError::BadRegex(_))));
        let bad = OracleSpec {
            exit_code: Some(125),
            ..OracleSpec::default()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn expect_and_given_signature_replace_the_guess() {
        let n = Normalizer::new(&[]);
        let oracle = learn(
            &OracleSpec {
                expect: Some("bad total".into()),
                ..OracleSpec::default()
            },
            &[outcome(Termination::Exited(1), BOOM)],
        )
        .unwrap();
        assert!(
            oracle
                .judge(&outcome(Termination::Exited(1), "bad total!"), &n)
                .pass
        );
        let oracle = learn(
            &OracleSpec {
                signature: Some("line 3, in".into()),
                ..OracleSpec::default()
            },
            &[outcome(Termination::Exited(1), BOOM)],
        )
        .unwrap();
        assert_eq!(oracle.signature(), Some("line N, in"));
        assert!(
            !oracle
                .judge(
                    &outcome(Termination::Exited(1), "ValueError: bad total -1"),
                    &n
                )
                .pass
        );
    }
}

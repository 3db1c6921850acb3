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
//!   `--signature`, or by default the one learned from the baseline;
//! - the failure block that shows it (the one `--expect` matches, or else the signature)
//!   was raised from the same up to three innermost frames in the tree as at the baseline
//!   ([`frames`]), unless `--no-frames` is given.
//!
//! A bare "it failed" oracle (`--any-failure`) must be asked for explicitly, because a
//! reducer that accepts any failure deletes a closing brace and calls the syntax error a
//! success.

pub mod frames;

use regex::Regex;

use crate::runner::{RunOutcome, Termination};
use crate::signature::{self, Normalizer};
use frames::{Frame, TreeRoots};

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
    /// `--expect` matches several failure blocks of the baseline, raised from different
    /// places.
    #[error(
        "--expect matches {} failure blocks raised from different places; make it match one: {}",
        blocks.len(),
        blocks.join("; ")
    )]
    AmbiguousExpect {
        /// Each block it matched: its line, the text there and its frames.
        blocks: Vec<String>,
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
    /// `--no-frames`: identify the failure by its signature or `--expect` alone, not by
    /// where it was raised.
    pub no_frames: bool,
    /// The tree's root as it reads in normalised output (for example `<tmp>/run/out`),
    /// longest first: frames under it are in the tree. Relative paths are too.
    pub tree_prefixes: Vec<String>,
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
    /// The innermost frames in the tree of the failure kept (absent when frames are not
    /// compared: `--no-frames`, no signature or `--expect`, or no frame in the tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Vec<Frame>>,
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
    frames_on: bool,
    tree_prefixes: Vec<String>,
    frames: Option<Vec<Frame>>,
}

/// A failure block of one run that shows the failure: the line that showed it and the
/// block's frames.
struct Shown {
    line: usize,
    text: String,
    frames: Vec<Frame>,
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
            frames_on: !self.no_frames,
            tree_prefixes: self.tree_prefixes.clone(),
            frames: None,
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
        if oracle.frames_on && oracle.shows(first, first_norm) {
            oracle.frames = oracle.learn_frames(first, first_norm)?;
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
                let other = if oracle.frames.is_some() && oracle.shows(run, norm) {
                    oracle.describe_run(run, norm)
                } else if self.learns_signature() {
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
                let first_desc = if oracle.frames.is_some() {
                    oracle.describe_run(first, first_norm)
                } else {
                    oracle
                        .signature
                        .clone()
                        .unwrap_or_else(|| first.termination.describe())
                };
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
        let verdict = self.judge_signals(run, normalizer);
        match &self.frames {
            Some(want) if verdict.pass => {
                self.judge_frames(want, &String::from_utf8_lossy(&run.output), normalizer)
            }
            _ => verdict,
        }
    }

    /// Whether a run shows the failure, its frames left aside.
    fn shows(&self, run: &RunOutcome, normalizer: &Normalizer) -> bool {
        self.judge_signals(run, normalizer).pass
    }

    /// Every signal but the frames.
    fn judge_signals(&self, run: &RunOutcome, normalizer: &Normalizer) -> Verdict {
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
            frames: self.frames.clone(),
        }
    }

    /// The innermost frames the failure is identified by, when they are compared.
    pub fn frames(&self) -> Option<&[Frame]> {
        self.frames.as_deref()
    }

    /// The signature in force, if any.
    pub fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }

    /// The failure blocks of `raw` that show the failure: those holding a match of
    /// `--expect` when it is given, else those holding the signature, in output order.
    fn shown(&self, raw: &str, normalizer: &Normalizer) -> Vec<Shown> {
        let roots = TreeRoots {
            normalizer,
            prefixes: &self.tree_prefixes,
        };
        let blocks = frames::parse(raw);
        if blocks.is_empty() {
            return Vec::new();
        }
        let lines: Vec<&str> = raw.split('\n').collect();
        let mut shown = Vec::new();
        if let Some(regex) = &self.expect {
            let mut starts = Vec::with_capacity(lines.len());
            let mut at = 0;
            for line in &lines {
                starts.push(at);
                at += line.len() + 1;
            }
            let mut next = 0;
            for m in regex.find_iter(raw) {
                let line = starts
                    .partition_point(|&s| s <= m.start())
                    .saturating_sub(1);
                while next < blocks.len() && blocks[next].lines.end <= line {
                    next += 1;
                }
                let Some(block) = blocks.get(next) else {
                    break;
                };
                if block.lines.contains(&line) {
                    shown.push(Shown {
                        line,
                        text: normalizer.normalize(lines[line]),
                        frames: block.frames(roots),
                    });
                    next += 1;
                }
            }
        } else if let Some(sig) = &self.signature {
            for block in &blocks {
                let hit = block.lines.clone().find(|&i| {
                    lines
                        .get(i)
                        .is_some_and(|l| signature::matches(sig, &normalizer.normalize(l)))
                });
                if let Some(line) = hit {
                    shown.push(Shown {
                        line,
                        text: normalizer.normalize(lines[line]),
                        frames: block.frames(roots),
                    });
                }
            }
        }
        shown
    }

    /// The frames of the baseline's failure: `None` when no block shows it or its block
    /// has no frame in the tree.
    ///
    /// # Errors
    /// `--expect` matches blocks raised from different places.
    fn learn_frames(
        &self,
        run: &RunOutcome,
        normalizer: &Normalizer,
    ) -> Result<Option<Vec<Frame>>, OracleError> {
        let shown = self.shown(&String::from_utf8_lossy(&run.output), normalizer);
        if self.expect.is_some() {
            let mut distinct: Vec<&Shown> = Vec::new();
            for s in &shown {
                if !distinct.iter().any(|d| d.frames == s.frames) {
                    distinct.push(s);
                }
            }
            if distinct.len() > 1 {
                return Err(OracleError::AmbiguousExpect {
                    blocks: distinct
                        .iter()
                        .map(|s| {
                            let text = clip(s.text.trim(), 120);
                            let place = if s.frames.is_empty() {
                                "no frame in the tree".to_string()
                            } else {
                                frames::describe(&s.frames)
                            };
                            format!("line {}: `{text}` at {place}", s.line + 1)
                        })
                        .collect(),
                });
            }
        }
        Ok(shown.into_iter().map(|s| s.frames).find(|f| !f.is_empty()))
    }

    /// Whether the block that shows the failure was raised from `want`.
    fn judge_frames(&self, want: &[Frame], raw: &str, normalizer: &Normalizer) -> Verdict {
        let shown = self.shown(raw, normalizer);
        if self.expect.is_some() {
            let mut distinct: Vec<&[Frame]> = Vec::new();
            for s in &shown {
                if !distinct.contains(&s.frames.as_slice()) {
                    distinct.push(&s.frames);
                }
            }
            if distinct.len() > 1 {
                return Verdict::no(format!(
                    "--expect matches {} failure blocks raised from different places",
                    distinct.len()
                ));
            }
        }
        match shown.iter().find(|s| s.frames == want) {
            Some(_) => Verdict {
                pass: true,
                reason: String::new(),
            },
            None => Verdict::no(match shown.first() {
                Some(s) => format!(
                    "the failure was raised elsewhere: at {} rather than {}",
                    frames::describe(&s.frames),
                    frames::describe(want)
                ),
                None => "no failure block shows the failure".to_string(),
            }),
        }
    }

    /// The failure a run shows and where it was raised, for messages.
    fn describe_run(&self, run: &RunOutcome, normalizer: &Normalizer) -> String {
        let shown = self.shown(&String::from_utf8_lossy(&run.output), normalizer);
        let what = self
            .signature
            .clone()
            .or_else(|| self.expect_text.clone())
            .unwrap_or_default();
        match shown.iter().find(|s| !s.frames.is_empty()) {
            Some(s) => format!("{what} at {}", frames::describe(&s.frames)),
            None => format!("{what} at no frame in the tree"),
        }
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
            "Traceback (most recent call last):\n  File \"a.py\", line 9, in <module>\nValueError: bad total -3\n",
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
                no_frames: true,
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

    /// A Python traceback of `ValueError: bad` raised in `function` of `file`, under the
    /// run directory `ws`, at `line`.
    fn raised(ws: &str, file: &str, function: &str, line: u32) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"{ws}/main.py\", line 3, in <module>\n    \
             go()\n  File \"{ws}/{file}\", line {line}, in {function}\n    raise ValueError(\"bad\")\n\
             ValueError: bad\n"
        )
    }

    fn in_tree(spec: OracleSpec) -> OracleSpec {
        OracleSpec {
            tree_prefixes: vec!["<tmp>".into()],
            ..spec
        }
    }

    fn run_in(ws: &str, output: &str) -> (RunOutcome, Normalizer) {
        (
            outcome(Termination::Exited(1), output),
            Normalizer::new(&[ws.to_string()]),
        )
    }

    #[test]
    fn the_same_message_raised_elsewhere_is_another_failure() {
        let base = [
            run_in("/w/r1", &raised("/w/r1", "a.py", "a", 3)),
            run_in("/w/r2", &raised("/w/r2", "a.py", "a", 3)),
        ];
        let oracle = in_tree(OracleSpec::default()).learn(&base).unwrap();
        let want = "a (a.py) < <module> (main.py)";
        assert_eq!(frames::describe(oracle.frames().unwrap()), want);
        assert_eq!(oracle.summary().frames.as_deref(), oracle.frames());
        // Another run directory, another line: the same failure.
        let (run, n) = run_in("/w/r7", &raised("/w/r7", "a.py", "a", 30));
        assert!(oracle.judge(&run, &n).pass);
        // The same message from b in b.py: slipped.
        let (run, n) = run_in("/w/r7", &raised("/w/r7", "b.py", "b", 3));
        let verdict = oracle.judge(&run, &n);
        assert!(!verdict.pass);
        assert!(verdict.reason.contains("b (b.py)"), "{}", verdict.reason);
        // With --no-frames the message alone decides, and the summary shows no frames.
        let bare = in_tree(OracleSpec {
            no_frames: true,
            ..OracleSpec::default()
        })
        .learn(&base)
        .unwrap();
        assert!(bare.judge(&run, &n).pass);
        assert_eq!(bare.summary().frames, None);
        // Output without frames in the tree keeps the signature alone.
        let outside = raised("/usr/lib/python3", "a.py", "a", 3);
        let oracle = in_tree(OracleSpec::default())
            .learn(&[run_in("/w/r1", &outside)])
            .unwrap();
        assert_eq!(oracle.frames(), None);
    }

    #[test]
    fn an_ambiguous_expect_is_refused_naming_the_blocks() {
        let two = format!(
            "{}{}",
            raised("/w/r1", "a.py", "a", 3),
            raised("/w/r1", "b.py", "b", 9)
        );
        let spec = in_tree(OracleSpec {
            expect: Some("ValueError: bad".into()),
            ..OracleSpec::default()
        });
        let err = spec.learn(&[run_in("/w/r1", &two)]).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, OracleError::AmbiguousExpect { .. }), "{text}");
        assert!(
            text.contains("line 6: `ValueError: bad` at a (a.py)"),
            "{text}"
        );
        assert!(
            text.contains("line 12: `ValueError: bad` at b (b.py)"),
            "{text}"
        );
        // An --expect that picks one block learns its frames; a candidate where it matches
        // two blocks raised from different places is not the failure.
        let spec = in_tree(OracleSpec {
            expect: Some(r"(?m)^ValueError: bad$".into()),
            ..OracleSpec::default()
        });
        let oracle = spec
            .learn(&[run_in("/w/r1", &raised("/w/r1", "a.py", "a", 3))])
            .unwrap();
        assert_eq!(
            frames::describe(oracle.frames().unwrap()),
            "a (a.py) < <module> (main.py)"
        );
        let (run, n) = run_in("/w/r2", &two.replace("/w/r1", "/w/r2"));
        let verdict = oracle.judge(&run, &n);
        assert!(verdict.reason.contains("2 failure blocks"), "{verdict:?}");
        // The same block printed twice is one failure.
        let twice = raised("/w/r2", "a.py", "a", 3).repeat(2);
        let (run, n) = run_in("/w/r2", &twice);
        assert!(oracle.judge(&run, &n).pass);
    }

    #[test]
    fn baselines_raised_from_different_places_are_flaky() {
        let base = [
            run_in("/w/r1", &raised("/w/r1", "a.py", "a", 3)),
            run_in("/w/r2", &raised("/w/r2", "b.py", "b", 3)),
        ];
        let err = in_tree(OracleSpec::default()).learn(&base).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, OracleError::Flaky { .. }), "{text}");
        assert!(text.contains("ValueError: bad at a (a.py)"), "{text}");
        assert!(text.contains("ValueError: bad at b (b.py)"), "{text}");
        // With the learned signature, a run keeping the failure among others passes.
        let oracle = in_tree(OracleSpec::default()).learn(&base[..1]).unwrap();
        let both = format!(
            "{}{}",
            raised("/w/r3", "b.py", "b", 3),
            raised("/w/r3", "a.py", "a", 3)
        );
        let (run, n) = run_in("/w/r3", &both);
        assert!(oracle.judge(&run, &n).pass);
    }
}

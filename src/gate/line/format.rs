//! The formatter of the `repromin/v1` line: [`format_line`] checks a result against the
//! line's rules, writes it compactly in schema order, and when it would be over 4 KB drops
//! list entries in the documented order and sets `truncated`.

use std::io;

use serde::Serialize;

use super::rules::{CERT_DID_NOT_FIT, LineError, MAX_LINE_BYTES, PREFIX, decimal};
use super::types::{
    CertificateVerdict, MutantLine, MutantOutcome, Regressions, ResultLine, TestClass, TestLine,
};

/// serde_json's compact output, with every number that is not an integer
/// written as [`decimal`] writes it: the only such numbers on the line are
/// the holdout's fractions, already checked to read back as the same value.
struct LineFormatter;

impl serde_json::ser::Formatter for LineFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(decimal(value).as_bytes())
    }
}

/// `value` as compact JSON in the line's spelling: keys in the order of the
/// type's fields, strings escaped as serde_json escapes them (`"`, `\` and
/// control characters; the rest as UTF-8). Writing the line's types to
/// memory cannot fail (every key is a string), so a failure gives "".
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, LineFormatter);
    match value.serialize(&mut serializer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Writes the line as it stands, without checks or truncation.
pub(super) fn render(r: &ResultLine) -> String {
    format!("{PREFIX}{}", json(r))
}

/// The line `line` (prefix and compact JSON, no newline) respelt as the writer spells it:
/// the same JSON value with strings escaped and numbers written as [`format_line`] writes
/// them, keys in the order they came. The parser reads any valid JSON escape and any
/// spelling of a number; this is what sets those freedoms aside when a line it accepted is
/// compared with the formatter's. `None` when `line` is not the prefix and one JSON value.
pub(crate) fn respelt(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line.strip_prefix(PREFIX)?).ok()?;
    Some(format!("{PREFIX}{}", json(&value)))
}

/// `line` with every JSON string written `""` and every number `0`: what is left is the
/// part of a line with a single spelling (prefix, punctuation, `true`, `false`, `null`, and
/// no whitespace), which an accepted line must share byte for byte with the formatter's.
pub(crate) fn skeleton(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            let mut escaped = false;
            for c in chars.by_ref() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => break,
                    _ => {}
                }
            }
            out.push_str("\"\"");
        } else if c == '-' || c.is_ascii_digit() {
            while chars
                .next_if(|c| matches!(c, '0'..='9' | '.' | 'e' | 'E' | '+' | '-'))
                .is_some()
            {}
            out.push('0');
        } else {
            out.push(c);
        }
    }
    out
}

/// Drops entries of `items` that `pick` chooses, last first, while nothing
/// was dropped yet or the line is still `len` bytes, over the limit; `json`
/// writes one entry. Keeps `len` and `dropped` up to date.
fn drop_last<T>(
    items: &mut Vec<T>,
    pick: impl Fn(&T) -> bool,
    json: impl Fn(&T) -> String,
    len: &mut usize,
    dropped: &mut bool,
) {
    let mut keep = vec![true; items.len()];
    let mut kept = items.len();
    for i in (0..items.len()).rev().filter(|i| pick(&items[*i])) {
        if *dropped && *len <= MAX_LINE_BYTES {
            break;
        }
        *len -= json(&items[i]).len() + usize::from(kept > 1);
        (kept, keep[i], *dropped) = (kept - 1, false, true);
    }
    let mut flags = keep.iter();
    items.retain(|_| flags.next() == Some(&true));
}

/// Checks `result` and drops entries until its line fits; returns the
/// result as written and its line.
fn fit(result: &ResultLine) -> Result<(ResultLine, String), LineError> {
    result.validate()?;
    let (mut out, cut) = capped(result);
    let line = render(&out);
    if !cut && line.len() <= MAX_LINE_BYTES {
        return Ok((out, line));
    }
    // The length once `truncated` is true (`true` is a byte shorter). At
    // least one entry goes, even when that byte alone would make it fit.
    let mut len = line.len() - usize::from(!out.truncated);
    let mut dropped = cut;
    out.truncated = true;
    let killed = |r: &MutantLine| r.outcome == MutantOutcome::Killed;
    if let Some(m) = out.mutants.as_mut() {
        drop_last(&mut m.results, killed, json, &mut len, &mut dropped);
    }
    let repro = |t: &TestLine| t.class == TestClass::Reproduces;
    drop_last(&mut out.tests, |t| !repro(t), json, &mut len, &mut dropped);
    if let Some(r) = out.regressions.as_mut() {
        drop_last(&mut r.tests, |_| true, json, &mut len, &mut dropped);
    }
    drop_last(&mut out.tests, repro, json, &mut len, &mut dropped);
    for list in [&mut out.deleted_tests, &mut out.not_collected] {
        drop_last(list, |_| true, json, &mut len, &mut dropped);
    }
    if let Some(m) = out.mutants.as_mut() {
        drop_last(&mut m.results, |_| true, json, &mut len, &mut dropped);
    }
    let line = render(&out);
    let line = fit_certificate(&mut out, line, dropped)?;
    Ok((out, line))
}

/// A copy of `result` with at most [`MAX_LINE_BYTES`] entries of each kind
/// that [`fit`] drops by (tests that reproduce and the others, regressions,
/// deleted and not collected tests; a mutation check has five at most), and
/// whether any was left out. Every entry takes more than a byte of the line,
/// so [`fit`] would drop those left out before any other of their kind, and
/// the line is over its limit as long as they are there: the result is the
/// same, without copying entries only to drop them (a report of 250,000
/// tests).
fn capped(result: &ResultLine) -> (ResultLine, bool) {
    let tests = the_tests_that_can_fit(result.tests.iter().cloned());
    let mut cut = tests.len() < result.tests.len();
    let mut take = |len: usize| {
        cut |= len > MAX_LINE_BYTES;
        len.min(MAX_LINE_BYTES)
    };
    let regressions = result.regressions.as_ref().map(|r| Regressions {
        count: r.count,
        tests: r.tests[..take(r.tests.len())].to_vec(),
    });
    let deleted_tests = result.deleted_tests[..take(result.deleted_tests.len())].to_vec();
    let not_collected = result.not_collected[..take(result.not_collected.len())].to_vec();
    let out = ResultLine {
        head: result.head.clone(),
        merge_base: result.merge_base.clone(),
        verdict: result.verdict,
        error: result.error.clone(),
        config_edited: result.config_edited,
        counts: result.counts,
        tests,
        deleted_tests,
        not_collected,
        truncated: result.truncated,
        certificate: result.certificate.clone(),
        mutants: result.mutants.clone(),
        regressions,
    };
    (out, cut)
}

/// The first [`MAX_LINE_BYTES`] tests that reproduce and the first as many others, in
/// order: the most the line could ever list ([`fit`] drops the others first), so a result
/// built from them formats exactly as one built from all of them, with `counts` kept.
pub(crate) fn the_tests_that_can_fit(tests: impl Iterator<Item = TestLine>) -> Vec<TestLine> {
    let (mut repro, mut other) = (0, 0);
    tests
        .filter(|t| {
            let seen = if t.class == TestClass::Reproduces {
                &mut repro
            } else {
                &mut other
            };
            *seen += 1;
            *seen <= MAX_LINE_BYTES
        })
        .collect()
}

/// The last resorts of [`fit`], once the lists are empty: cut the end of
/// the certificate's test name, then drop its test (a `certified`
/// certificate then becomes an `error` one), then cut the end of its
/// error message, then the end of the mutation check's message. Like the
/// lists, it cuts something even when `truncated` alone would make the
/// line fit.
fn fit_certificate(
    out: &mut ResultLine,
    mut line: String,
    mut dropped: bool,
) -> Result<String, LineError> {
    while !dropped || line.len() > MAX_LINE_BYTES {
        let over = line.len().saturating_sub(MAX_LINE_BYTES).max(1);
        let Some(c) = out.certificate.as_mut() else {
            match mutants_error(out) {
                Some(msg) => cut_json(msg, over),
                None => break,
            }
            dropped = true;
            line = render(out);
            continue;
        };
        if let Some(t) = c.test.as_mut().filter(|t| !t.name.is_empty()) {
            cut_json(&mut t.name, over);
        } else if c.test.take().is_some() {
            if c.verdict == CertificateVerdict::Certified {
                c.verdict = CertificateVerdict::Error;
                c.error = Some(CERT_DID_NOT_FIT.to_owned());
            }
        } else if let Some(msg) = c.error.as_mut().filter(|m| !m.is_empty()) {
            cut_json(msg, over);
        } else if let Some(msg) = mutants_error(out) {
            cut_json(msg, over);
        } else {
            break;
        }
        dropped = true;
        line = render(out);
    }
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong(line.len()));
    }
    Ok(line)
}

/// The mutation check's message, if it has one left to cut.
fn mutants_error(out: &mut ResultLine) -> Option<&mut String> {
    let m = out.mutants.as_mut()?;
    m.error.as_mut().filter(|e| !e.is_empty())
}

/// Cuts characters from the end of `s` until its JSON string is at least
/// `need` bytes shorter, or `s` is empty.
fn cut_json(s: &mut String, need: usize) {
    let mut saved = 0;
    while saved < need {
        let Some(c) = s.pop() else { break };
        saved += json(c.encode_utf8(&mut [0; 4])).len() - 2;
    }
}

/// The result exactly as [`format_line`] writes it: `result` itself when
/// its line fits, else a copy with entries dropped and `truncated` set.
pub fn truncate_to_fit(result: &ResultLine) -> Result<ResultLine, LineError> {
    fit(result).map(|(r, _)| r)
}

/// Writes the compact line for `result`, without a newline, refusing any
/// result that [`parse_line`](super::parse_line) would refuse. A line that would be over
/// [`MAX_LINE_BYTES`] loses entries one at a time, last first: `killed`
/// entries of `mutants.results`, then `tests` entries of other classes
/// than `reproduces`, then `regressions.tests` entries, then `reproduces` entries, then `deletedTests`, then
/// `notCollected`, then the other `mutants.results` entries, until it
/// fits; `truncated` becomes true and the counts and both verdicts stay as
/// they are. The certificate is never dropped: if the line still does not
/// fit, the end of its test name is cut, then its test is dropped (a
/// `certified` certificate becomes `error` with [`CERT_DID_NOT_FIT`]), then
/// the end of its error message is cut, then the end of `mutants.error`.
pub fn format_line(result: &ResultLine) -> Result<String, LineError> {
    fit(result).map(|(_, line)| line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::line::fixtures::*;
    use crate::gate::line::*;

    /// A change made to a valid line.
    type LineMutation = fn(&mut ResultLine);

    /// Each mutation of `good` is refused by the formatter with a message containing its
    /// text, and the parser refuses the rendered line with the same error.
    fn assert_each_refused(good: &ResultLine, bad: &[(LineMutation, &str)]) {
        for &(mutate, want) in bad {
            let mut r = good.clone();
            mutate(&mut r);
            let e = format_line(&r).expect_err(want);
            assert!(e.to_string().contains(want), "wanted {want}, got {e}");
            assert_eq!(parse_line(&render(&r)).map(|_| ()), Err(e));
        }
    }

    /// A result with more entries of a kind than the line has bytes formats exactly as one
    /// that lists only the first ones of each kind (with the same counts): those are all
    /// the line could ever keep, so the formatter copies no more.
    #[test]
    fn entries_past_what_the_line_could_hold_change_nothing() {
        let n = MAX_LINE_BYTES + 50;
        let tests: Vec<TestLine> = (0..2 * n)
            .map(|i| {
                let class = if i % 2 == 0 {
                    TestClass::Reproduces
                } else {
                    TestClass::PassesOnBase
                };
                test(&format!("t{i}"), class)
            })
            .collect();
        let mut big = result(tests.clone());
        big.deleted_tests = (0..n).map(|i| format!("tests/test_gone_{i}.py")).collect();
        let mut small = big.clone();
        // 200 of each kind are already over 4 KB.
        small.tests = tests[..400].to_vec();
        small.deleted_tests.truncate(200);
        small.truncated = true;
        let line = format_line(&big).expect("formats");
        assert_eq!(format_line(&small).as_deref(), Ok(line.as_str()));
        assert_eq!(truncate_to_fit(&big), truncate_to_fit(&small));
        // Only the first of each kind are copied.
        let (copy, cut) = capped(&big);
        assert!(cut);
        assert_eq!(copy.tests.len(), 2 * MAX_LINE_BYTES);
        assert_eq!(copy.tests[..200], tests[..200]);
        assert_eq!(copy.deleted_tests.len(), MAX_LINE_BYTES);
        assert!(!capped(&small).1);
    }

    #[test]
    fn formatter_refuses_bad_certificates() {
        let mut good = result(vec![test("t", TestClass::Reproduces)]);
        good.certificate = Some(certified("t"));
        // One case per rule; the parser's table has them all.
        type Mutation = fn(&mut Certificate);
        let bad: [(Mutation, &str); 10] = [
            (
                |c| c.verdict = CertificateVerdict::NotCertified,
                "(29) reaches",
            ),
            (
                |c| c.error = Some("x".into()),
                "`certificate.error` must be null",
            ),
            (
                |c| c.verdict = CertificateVerdict::Error,
                "`certificate.error` must be a",
            ),
            (
                |c| (c.verdict, c.error) = (CertificateVerdict::Error, Some("é".repeat(301))),
                "`certificate.error` is 301 characters",
            ),
            (
                |c| c.holdout = None,
                "`certificate.holdout` must not be null",
            ),
            (
                |c| c.content_sha256 = Some("9F".repeat(32)),
                "64 lowercase hex",
            ),
            (
                |c| {
                    c.after = Some(TreeSize {
                        files: 13,
                        bytes: 1,
                    })
                },
                "`certificate.after.files` is 13",
            ),
            (
                |c| hold(c).required_passes = 31,
                "`certificate.holdout.requiredPasses` is 31",
            ),
            (|c| hold(c).passes = 27, "(27) is below"),
            (
                |c| hold(c).rate = 0.0,
                "`certificate.holdout.rate` must be in (0, 1), found `0.0`",
            ),
        ];
        for (mutate, want) in bad {
            let mut r = good.clone();
            mutate(r.certificate.as_mut().expect("a certificate"));
            let e = format_line(&r).expect_err(want);
            assert!(e.to_string().contains(want), "wanted {want}, got {e}");
            assert_eq!(parse_line(&render(&r)).map(|_| ()), Err(e));
        }
        // Fractions that no line can carry as they are. (The parser never
        // sees these values, so it reports their text instead.)
        let decimal = "`certificate.holdout.rate` must be a decimal number with at most \
                       6 fraction digits, no exponent and no sign, found";
        let floats = [
            (
                f64::NAN,
                "`certificate.holdout.rate` must be in (0, 1), found `NaN`",
            ),
            (f64::INFINITY, "must be in (0, 1), found `inf`"),
            (-0.0, "must be in (0, 1), found `-0.0`"),
            (0.1234567, "found `0.1234567`"),
            (0.9999997, "found `0.9999997`"),
            (1e-7, "found `1e-7`"),
            (0.1 + 0.2, "found `0.30000000000000004`"),
        ];
        for (x, want) in floats {
            let mut r = good.clone();
            hold(r.certificate.as_mut().expect("a certificate")).rate = x;
            let e = format_line(&r).expect_err(want).to_string();
            assert!(e.contains(want), "wanted {want}, got {e}");
            assert!(want.contains("must be in") != e.contains(decimal), "{e}");
        }
        let mut r = good.clone();
        hold(r.certificate.as_mut().expect("a certificate")).lower_bound = -0.0;
        let e = format_line(&r).map_err(|e| e.to_string());
        assert_eq!(
            e,
            Err("`certificate.holdout.lowerBound` must be in [0, 1], found `-0.0`".into())
        );
    }

    #[test]
    fn formatter_refuses_what_the_parser_refuses() {
        let good = result(vec![test("t", TestClass::Reproduces)]);
        type Mutation = fn(&mut ResultLine);
        let bad: [(Mutation, &str); 7] = [
            (|r| r.head = "4b825dc".into(), "`head` must"),
            (|r| r.merge_base = BASE.to_uppercase(), "`mergeBase`"),
            (|r| r.tests[0].class = TestClass::NewApi, "`new-api`"),
            (|r| r.error = Some("x".into()), "`error` must be null"),
            (|r| r.verdict = Verdict::Error, "`error` must be a"),
            (|r| r.counts.not_run = 4, "`truncated` is false"),
            (|r| r.counts.reproduces = 0, "verdict `reproduced`"),
        ];
        assert_each_refused(&good, &bad);
        assert!(format_line(&good).is_ok());
    }

    /// The seeded generator of the round-trip tests, with draws of text.
    struct Rng(crate::test_rng::XorShift);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0.next_u64() % n
        }

        fn text(&mut self, max: u64) -> String {
            const BITS: [&str; 20] = [
                "a", "Z", "_", "::", "/", " ", "\"", "\\", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}",
                "é", "✓", "🦀", "\u{2028}", "[", "{", "}",
            ];
            let len = self.below(max + 1);
            (0..len).map(|_| BITS[self.below(20) as usize]).collect()
        }

        fn result(&mut self) -> ResultLine {
            let big = self.below(4) == 0;
            let (n, width) = if big {
                (self.below(400), 120)
            } else {
                (self.below(8), 12)
            };
            let mut tests = vec![];
            for _ in 0..n {
                let class = TestClass::ALL[self.below(TestClass::ALL.len() as u64) as usize];
                let mut t = test(&self.text(width), class);
                t.file = format!("tests/{}.py", self.text(width / 4));
                t.rerun = SideStatus::ALL[self.below(5) as usize];
                tests.push(t);
            }
            let mut r = result(tests);
            r.config_edited = self.below(2) == 0;
            let lists = if big { 60 } else { 3 };
            r.deleted_tests = (0..self.below(lists)).map(|_| self.text(width)).collect();
            r.not_collected = (0..self.below(lists)).map(|_| self.text(width)).collect();
            if self.below(5) == 0 {
                (r.verdict, r.error) = (Verdict::Error, Some(clip_error(&self.text(400))));
            }
            if self.below(4) > 0 {
                r.certificate = Some(self.certificate());
            }
            if self.below(3) == 0 {
                r.mutants = Some(self.mutants(big, width));
            }
            if self.below(3) == 0 {
                let n = self.below(if big { 80 } else { 4 });
                let tests = (0..n)
                    .map(|_| RegressionTest {
                        file: format!("tests/{}.py", self.text(width / 4)),
                        name: self.text(width),
                    })
                    .collect();
                r.regressions = Some(Regressions { count: n, tests });
            }
            r
        }

        fn mutants(&mut self, big: bool, width: u64) -> Mutants {
            if self.below(6) == 0 {
                return Mutants {
                    verdict: MutantsVerdict::Error,
                    results: vec![],
                    error: Some(clip_error(&self.text(400))),
                };
            }
            let n = 1 + self.below(if big { 40 } else { 5 });
            let all_killed = self.below(2) == 0;
            let results: Vec<MutantLine> = (0..n)
                .map(|i| {
                    let outcome = if all_killed {
                        MutantOutcome::Killed
                    } else {
                        MutantOutcome::ALL[self.below(7) as usize]
                    };
                    let failed = outcome
                        .lists_failed()
                        .then(|| (0..self.below(4)).map(|_| self.text(width)).collect());
                    MutantLine {
                        spec: format!("tests/{}.mutations.json", self.text(width / 4)),
                        name: format!("{i}{}", self.text(width)),
                        outcome,
                        failed,
                    }
                })
                .collect();
            Mutants {
                verdict: Mutants::implied_verdict(&results),
                results,
                error: None,
            }
        }

        /// A fraction that is already rounded, in (0, 1) or, if `closed`, [0, 1].
        fn fraction(&mut self, closed: bool) -> f64 {
            let k = if closed {
                self.below(1_000_001)
            } else {
                1 + self.below(999_999)
            };
            k as f64 / 1e6
        }

        fn certificate(&mut self) -> Certificate {
            use CertificateVerdict as V;
            let verdict = V::ALL[self.below(4) as usize];
            let full = verdict == V::Certified;
            let width = if self.below(6) == 0 { 3000 } else { 40 };
            let file_width = width / (1 + 3 * self.below(2));
            let test = (full || self.below(3) > 0).then(|| CertTest {
                file: format!("tests/{}.py", self.text(file_width)),
                name: self.text(width),
            });
            let files = self.below(100);
            let bytes = if self.below(8) == 0 {
                u64::MAX
            } else {
                self.below(1 << 40)
            };
            let before = (full || self.below(3) > 0).then_some(TreeSize { files, bytes });
            let (files, bytes) = (self.below(files + 1), bytes / (1 + self.below(4)));
            let after = (full || self.below(3) > 0).then_some(TreeSize { files, bytes });
            let sha: String = (0..64)
                .map(|_| b"0123456789abcdef"[self.below(16) as usize] as char)
                .collect();
            let content_sha256 = (full || self.below(3) > 0).then_some(sha);
            let (runs, required) = (self.below(60), self.below(61));
            let required = required.min(runs);
            let passes = match verdict {
                V::Certified => required + self.below(runs - required + 1),
                V::NotCertified => self.below(required.max(1)),
                _ => self.below(runs + 1),
            };
            let holdout = Holdout {
                runs,
                passes,
                rate: self.fraction(false),
                confidence: self.fraction(false),
                lower_bound: self.fraction(true),
                required_passes: required,
            };
            let keep =
                full || (self.below(3) > 0 && !(verdict == V::NotCertified && required == 0));
            Certificate {
                verdict,
                error: (verdict == V::Error).then(|| clip_error(&self.text(400))),
                test,
                before,
                after,
                content_sha256,
                holdout: keep.then_some(holdout),
            }
        }
    }

    impl Rng {
        /// `line` with one to three small changes: a character escaped as `\uXXXX`, an
        /// escape written another way, a character replaced, deleted or doubled, a few
        /// characters inserted, a digit
        /// changed, or a number given another spelling. Most results are refused; those
        /// accepted differ from `line` in value, in spelling, or both.
        fn mutate(&mut self, line: &str) -> String {
            let mut chars: Vec<char> = line.chars().collect();
            for _ in 0..=self.below(3) {
                let at = PREFIX.len() + self.below((chars.len() - PREFIX.len()) as u64) as usize;
                let c = chars[at];
                let with = |chars: &mut Vec<char>, len: usize, text: &str| {
                    chars.splice(at..at + len, text.chars());
                };
                match self.below(8) {
                    0 if (c as u32) < 0x10000 => {
                        with(&mut chars, 1, &format!("\\u{:04x}", c as u32));
                    }
                    1 if c == '\\' && at + 1 < chars.len() => {
                        let escaped = chars[at + 1];
                        let decoded = match escaped {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            'b' => '\u{8}',
                            'f' => '\u{c}',
                            _ => escaped,
                        };
                        if escaped != 'u' {
                            with(&mut chars, 2, &format!("\\u{:04X}", decoded as u32));
                        }
                    }
                    2 => {
                        let text = self.text(2);
                        with(&mut chars, self.below(2) as usize, &text);
                    }
                    3 => with(&mut chars, 1, ""),
                    4 => with(&mut chars, 0, &c.to_string()),
                    5 if c.is_ascii_digit() => {
                        with(&mut chars, 1, &self.below(10).to_string());
                    }
                    6 if c.is_ascii_digit() => {
                        let spelling =
                            ["0", ".0", "e0", "E+0", "0e-1", "00"][self.below(6) as usize];
                        with(&mut chars, 1, &format!("{c}{spelling}"));
                    }
                    _ => {
                        let text = ["\\/", "\\\"", "a", "0", "1e-6", "0.5", "null", ","];
                        with(&mut chars, 1, text[self.below(8) as usize]);
                    }
                }
            }
            chars.into_iter().collect()
        }
    }

    /// Every line the parser accepts formats back to the same bytes, once its escapes and
    /// numbers are spelt as the writer spells them ([`respelt`]); everything else (the
    /// [`skeleton`]) is byte for byte the same as written; and the formatted line
    /// reads back to the same result. The lines come from formatted results with one to
    /// three small changes; the accepted ones include changes of value and of spelling.
    #[test]
    fn accepted_lines_format_back_to_themselves() {
        let mut rng = Rng(crate::test_rng::XorShift::new(0x2545_f491_4f6c_dd1d));
        let (mut accepted, mut respelt_only) = (0, 0);
        for _ in 0..300 {
            let line = format_line(&rng.result()).expect("formats");
            for _ in 0..40 {
                let changed = rng.mutate(&line);
                let Ok(read) = parse_line(&changed) else {
                    continue;
                };
                accepted += 1;
                let written = format_line(&read).expect("an accepted line formats");
                assert_eq!(
                    Some(&written),
                    respelt(&changed).as_ref(),
                    "read: {changed}"
                );
                assert_eq!(skeleton(&written), skeleton(&changed), "read: {changed}");
                assert_eq!(parse_line(&written).as_ref(), Ok(&read), "{written}");
                respelt_only += usize::from(written == line && changed != line);
            }
        }
        assert!(
            accepted > 1000 && respelt_only > 200,
            "{accepted} accepted, {respelt_only} in another spelling only"
        );
    }

    /// Whether `part` keeps a prefix of the entries of `whole` that `pred` picks.
    fn keeps_prefix<T: PartialEq>(whole: &[T], part: &[T], pred: impl Fn(&T) -> bool) -> bool {
        let w: Vec<&T> = whole.iter().filter(|t| pred(t)).collect();
        let p: Vec<&T> = part.iter().filter(|t| pred(t)).collect();
        w.starts_with(&p)
    }

    /// Strings that JSON writers escape differently, if at all.
    const AWKWARD: &str = "q\"b\\s/c\u{0}\u{1f}\u{7f}é✓🦀\u{2028}\u{2029}\t\n\r";

    /// A representative set of results: every verdict, every certificate
    /// and mutation verdict, every outcome, a truncated line, and names with
    /// quotes, backslashes, slashes, control characters and non-ASCII.
    fn representative() -> Vec<(&'static str, ResultLine)> {
        let mut out = vec![];
        let classes = TestClass::ALL.map(|c| test(&format!("{c}::{AWKWARD}"), c));
        let mut all = result(classes.to_vec());
        all.tests[3].rerun = SideStatus::Skipped;
        all.deleted_tests = vec![format!("tests/{AWKWARD}.py")];
        all.not_collected = vec!["tests/a b.py".into(), "tests/ü.py".into()];
        all.config_edited = true;
        out.push(("reproduced, every class", all.clone()));
        let mut unproven = result(vec![test("n", TestClass::NewApi)]);
        unproven.certificate = Some(certified("n"));
        out.push(("unproven", unproven));
        out.push(("vacuous", result(vec![test("p", TestClass::PassesOnBase)])));
        let flaky = vec![
            test("f", TestClass::Flaky),
            test("p", TestClass::PassesOnBase),
        ];
        out.push(("flaky", result(flaky)));
        let mut broke = result(vec![test("r", TestClass::Reproduces)]);
        broke.regressions = Some(Regressions {
            count: 2,
            tests: ["test_a", AWKWARD]
                .map(|name| RegressionTest {
                    file: "tests/test_old.py".into(),
                    name: name.into(),
                })
                .to_vec(),
        });
        out.push(("regressions", broke));
        out.push(("no tests", result(vec![])));
        let mut error = result(vec![test("r", TestClass::Reproduces)]);
        (error.verdict, error.error) = (Verdict::Error, Some(AWKWARD.repeat(3)));
        out.push(("error", error));
        for verdict in CertificateVerdict::ALL {
            let mut r = result(vec![test("r", TestClass::Reproduces)]);
            let mut c = certified(AWKWARD);
            c.verdict = verdict;
            match verdict {
                CertificateVerdict::Certified => {}
                CertificateVerdict::NotCertified => hold(&mut c).passes = 3,
                CertificateVerdict::BudgetExhausted => {
                    (c.test, c.before, c.holdout) = (None, None, None);
                }
                CertificateVerdict::Error => {
                    c.error = Some(format!("reducer {AWKWARD}"));
                    (c.after, c.content_sha256) = (None, None);
                }
            }
            let h = c.holdout.as_mut();
            if let Some(h) = h.filter(|_| verdict == CertificateVerdict::Certified) {
                (h.rate, h.confidence, h.lower_bound) = (0.000001, 0.999999, 1.0);
            }
            r.certificate = Some(c);
            out.push(("certificate", r));
        }
        let mutants = |verdict, results: Vec<MutantLine>, error| Mutants {
            verdict,
            results,
            error,
        };
        let results: Vec<MutantLine> = MutantOutcome::ALL
            .iter()
            .enumerate()
            .map(|(i, o)| MutantLine {
                spec: format!("tests/{AWKWARD}.mutations.json"),
                name: format!("m{i}"),
                outcome: *o,
                failed: o.lists_failed().then(|| vec![AWKWARD.into()]),
            })
            .collect();
        let mut r = result(vec![test("p", TestClass::PassesOnBase)]);
        r.mutants = Some(mutants(MutantsVerdict::NotKilled, results.clone(), None));
        out.push(("mutants not killed", r.clone()));
        let killed = results[..1].to_vec();
        r.mutants = Some(mutants(MutantsVerdict::Killed, killed, None));
        out.push(("mutants killed", r.clone()));
        let message = Some(AWKWARD.to_owned());
        r.mutants = Some(mutants(MutantsVerdict::Error, vec![], message));
        out.push(("mutants error", r));
        let long = (0..80).map(|i| test(&format!("{i}{AWKWARD}"), TestClass::ALL[i % 5]));
        let mut long = result(long.collect());
        long.certificate = Some(certified(&"n".repeat(300)));
        out.push(("truncated", long));
        out
    }

    /// The lines of [`representative`] results, byte for byte.
    #[test]
    fn representative_lines() {
        let mut shown = String::new();
        for (what, x) in representative() {
            let line = format_line(&x).expect("formats");
            assert_eq!(parse_line(&line), truncate_to_fit(&x), "{what}");
            shown.push_str(&format!("{what}:\n{line}\n"));
        }
        insta::assert_snapshot!(shown);
    }

    #[test]
    fn generated_results_round_trip() {
        let mut rng = Rng(crate::test_rng::XorShift::new(0x9e37_79b9_7f4a_7c15));
        let (mut cut, mut certs_cut) = (0, 0);
        for _ in 0..400 {
            let x = rng.result();
            let line = format_line(&x).expect("formats");
            assert!(line.len() <= MAX_LINE_BYTES && !line.contains('\n'));
            let back = parse_line(&line).expect("parses");
            assert_eq!(Ok(&back), truncate_to_fit(&x).as_ref());
            assert_eq!(format_line(&back).as_deref(), Ok(line.as_str()));
            assert_eq!(
                (back.counts, back.verdict, &back.error),
                (x.counts, x.verdict, &x.error)
            );
            if render(&x).len() <= MAX_LINE_BYTES {
                assert_eq!(back, x);
                continue;
            }
            cut += 1;
            let repro = |t: &TestLine| t.class == TestClass::Reproduces;
            let lists =
                |r: &ResultLine| r.tests.len() + r.deleted_tests.len() + r.not_collected.len();
            let results = |r: &ResultLine| r.mutants.as_ref().map_or(0, |m| m.results.len());
            let size = |r: &ResultLine| lists(r) + results(r);
            assert!(
                back.truncated
                    && (size(&back) < size(&x)
                        || back.certificate != x.certificate
                        || back.mutants != x.mutants)
            );
            if back.certificate != x.certificate {
                assert_eq!(size(&back), 0, "the certificate is cut after the lists");
                cut_certificate(x.certificate.as_ref(), back.certificate.as_ref());
                certs_cut += 1;
            }
            match (&x.mutants, &back.mutants) {
                (Some(a), Some(b)) => {
                    let killed = |r: &MutantLine| r.outcome == MutantOutcome::Killed;
                    assert_eq!(a.verdict, b.verdict, "the verdict stays");
                    assert!(keeps_prefix(&a.results, &b.results, killed));
                    assert!(keeps_prefix(&a.results, &b.results, |r| !killed(r)));
                    if lists(&back) < lists(&x) {
                        assert!(!b.results.iter().any(killed), "killed results go first");
                    }
                    let others = |m: &Mutants| m.results.iter().filter(|r| !killed(r)).count();
                    if others(b) < others(a) {
                        assert_eq!(lists(&back), 0, "other results go after the lists");
                    }
                    if b.error != a.error {
                        assert_eq!(size(&back), 0);
                        let (a, b) = (a.error.as_deref(), b.error.as_deref());
                        assert!(a.unwrap_or("").starts_with(b.unwrap_or("")));
                    }
                }
                (a, b) => assert_eq!(a, b),
            }
            assert!(keeps_prefix(&x.tests, &back.tests, repro));
            assert!(keeps_prefix(&x.tests, &back.tests, |t| !repro(t)));
            let kept_repro = back.tests.iter().filter(|t| repro(t)).count();
            if kept_repro < x.tests.iter().filter(|t| repro(t)).count() {
                assert!(back.tests.iter().all(repro), "others go before reproduces");
            }
            assert!(x.deleted_tests.starts_with(&back.deleted_tests));
            assert!(x.not_collected.starts_with(&back.not_collected));
            assert!(back.deleted_tests == x.deleted_tests || back.tests.is_empty());
            assert!(back.not_collected == x.not_collected || back.deleted_tests.is_empty());
        }
        assert!(cut > 20, "only {cut} results needed truncating");
        assert!(certs_cut > 5, "only {certs_cut} certificates were cut");
    }

    /// Checks that `back` is `x` cut as the formatter cuts a certificate:
    /// the end of the test name, then the test, then the end of the error.
    fn cut_certificate(x: Option<&Certificate>, back: Option<&Certificate>) {
        use CertificateVerdict as V;
        let (x, back) = (x.expect("a certificate"), back.expect("never dropped"));
        assert_eq!(
            (x.before, x.after, &x.content_sha256, x.holdout),
            (back.before, back.after, &back.content_sha256, back.holdout)
        );
        let (verdict, error) = match (&x.test, &back.test) {
            (Some(a), Some(b)) => {
                assert!(a.file == b.file && a.name.starts_with(&b.name) && a.name != b.name);
                (x.verdict, x.error.as_deref())
            }
            (Some(_), None) if x.verdict == V::Certified => (V::Error, Some(CERT_DID_NOT_FIT)),
            _ => (x.verdict, x.error.as_deref()),
        };
        assert_eq!(back.verdict, verdict);
        match (error, back.error.as_deref()) {
            (Some(e), Some(b)) => assert!(e == b || (back.test.is_none() && e.starts_with(b))),
            (e, b) => assert_eq!(e, b),
        }
    }

    #[test]
    fn five_hundred_long_tests_keep_reproduces_first() {
        let class = |i: usize| match i % 50 {
            7 => TestClass::Reproduces,
            _ => TestClass::ALL[1 + i % 4],
        };
        let tests = (0..500).map(|i| test(&format!("{i:03}{}", "n".repeat(97)), class(i)));
        let x = result(tests.collect());
        let line = format_line(&x).expect("formats");
        assert!(line.len() <= MAX_LINE_BYTES);
        let back = parse_line(&line).expect("parses");
        assert!(back.truncated);
        assert_eq!((back.counts, back.counts.reproduces), (x.counts, 10));
        let (repro, others): (Vec<&TestLine>, Vec<&TestLine>) = back
            .tests
            .iter()
            .partition(|t| t.class == TestClass::Reproduces);
        assert_eq!(repro.len(), 10, "every reproduces entry is kept");
        let first: Vec<&TestLine> = x
            .tests
            .iter()
            .filter(|t| t.class != TestClass::Reproduces)
            .collect();
        assert!(!others.is_empty() && first.starts_with(&others));
    }

    #[test]
    fn path_lists_go_after_tests() {
        let mut x = result(vec![test(&"r".repeat(3000), TestClass::Reproduces)]);
        x.deleted_tests = (0..80)
            .map(|i| format!("tests/deleted_{i:02}_{}.py", "d".repeat(40)))
            .collect();
        x.not_collected = vec!["tests/nc.py".into()];
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated && back.tests.is_empty());
        assert!(!back.deleted_tests.is_empty() && back.deleted_tests.len() < 80);
        assert_eq!(back.not_collected, x.not_collected);
        // A test that no line can hold is dropped, even a `reproduces` one.
        let huge = result(vec![test(&"r".repeat(5000), TestClass::Reproduces)]);
        let back = parse_line(&format_line(&huge).expect("formats")).expect("parses");
        assert!(back.truncated && back.tests.is_empty() && back.counts.reproduces == 1);
    }

    #[test]
    fn certificate_test_name_is_cut_after_the_lists() {
        let mut x = result(vec![
            test("r", TestClass::Reproduces),
            test(&"p".repeat(900), TestClass::PassesOnBase),
        ]);
        x.deleted_tests = vec!["tests/test_old.py".into()];
        x.not_collected = vec!["tests/test_nc.py".into()];
        x.certificate = Some(certified(&"n".repeat(5000)));
        let line = format_line(&x).expect("formats");
        assert_eq!(
            line.len(),
            MAX_LINE_BYTES,
            "one-byte characters cut exactly"
        );
        let back = parse_line(&line).expect("parses");
        assert_eq!(Ok(&back), truncate_to_fit(&x).as_ref());
        let size = back.tests.len() + back.deleted_tests.len() + back.not_collected.len();
        assert!(back.truncated && size == 0 && back.verdict == Verdict::Reproduced);
        let c = back.certificate.as_ref().expect("never dropped");
        assert_eq!(c.verdict, CertificateVerdict::Certified);
        assert!(c.test.as_ref().is_some_and(|t| !t.name.is_empty()));
        cut_certificate(x.certificate.as_ref(), back.certificate.as_ref());
        // Escaped characters are cut whole, so the line may end a little short.
        x.certificate = Some(certified(&"\u{1}".repeat(2000)));
        let line = format_line(&x).expect("formats");
        assert!(line.len() <= MAX_LINE_BYTES && line.len() > MAX_LINE_BYTES - 6);
        let back = parse_line(&line).expect("parses");
        cut_certificate(x.certificate.as_ref(), back.certificate.as_ref());
        // A line one byte over, with nothing in the lists, still loses a
        // character, not just `false` for `true`.
        let mut y = result(vec![]);
        y.certificate = Some(certified(""));
        let room = MAX_LINE_BYTES + 1 - render(&y).len();
        y.certificate = Some(certified(&"n".repeat(room)));
        assert_eq!(render(&y).len(), MAX_LINE_BYTES + 1);
        let line = format_line(&y).expect("formats");
        assert_eq!(line.len(), MAX_LINE_BYTES - 1);
        let back = parse_line(&line).expect("parses");
        assert_eq!(back.certificate, Some(certified(&"n".repeat(room - 1))));
        assert!(back.truncated);
    }

    #[test]
    fn certificate_test_is_dropped_last() {
        let mut x = result(vec![test("r", TestClass::Reproduces)]);
        let mut cert = certified("t");
        cert.test.as_mut().expect("a test").file = "f".repeat(5000);
        x.certificate = Some(cert.clone());
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated && back.tests.is_empty() && back.counts.reproduces == 1);
        assert_eq!(
            back.verdict,
            Verdict::Reproduced,
            "the line's verdict stays"
        );
        let c = back.certificate.as_ref().expect("never dropped");
        assert_eq!(
            (c.verdict, c.error.as_deref(), &c.test),
            (CertificateVerdict::Error, Some(CERT_DID_NOT_FIT), &None)
        );
        cut_certificate(Some(&cert), Some(c));
        // Other verdicts do without the test.
        cert.verdict = CertificateVerdict::NotCertified;
        cert.holdout = None;
        x.certificate = Some(cert.clone());
        let back = truncate_to_fit(&x).expect("fits");
        cut_certificate(Some(&cert), back.certificate.as_ref());
        assert_eq!(
            back.certificate.map(|c| (c.verdict, c.test, c.error)),
            Some((CertificateVerdict::NotCertified, None, None))
        );
    }

    #[test]
    fn the_largest_line_with_a_certificate_fits() {
        let mut x = result(vec![]);
        (x.verdict, x.error) = (Verdict::Error, Some("\u{1}".repeat(MAX_ERROR_CHARS)));
        x.counts = Counts::from_fn(|_| u64::MAX);
        x.truncated = true;
        let mut cert = certified("");
        let most = TreeSize {
            files: u64::MAX,
            bytes: u64::MAX,
        };
        (cert.verdict, cert.test) = (CertificateVerdict::BudgetExhausted, None);
        (cert.before, cert.after) = (Some(most), Some(most));
        let h = hold(&mut cert);
        (h.runs, h.passes, h.required_passes) = (u64::MAX, u64::MAX, u64::MAX);
        (h.rate, h.confidence, h.lower_bound) = (0.999999, 0.999999, 0.999999);
        x.certificate = Some(cert.clone());
        let line = format_line(&x).expect("formats");
        assert_eq!(
            line.len(),
            2701,
            "the longest line without lists, test or message"
        );
        // With the longest message and a test it does not fit: the test
        // goes, then the end of the message.
        cert.verdict = CertificateVerdict::Error;
        cert.error = Some("\u{1}".repeat(MAX_ERROR_CHARS));
        cert.test = Some(CertTest {
            file: "tests/test_x.py".into(),
            name: "n".repeat(100),
        });
        x.certificate = Some(cert.clone());
        assert!(render(&x).len() > MAX_LINE_BYTES);
        let line = format_line(&x).expect("formats");
        assert!(line.len() <= MAX_LINE_BYTES);
        let back = parse_line(&line).expect("parses");
        let c = back.certificate.as_ref().expect("never dropped");
        let kept = c.error.as_deref().map_or(0, |e| e.chars().count());
        assert!(
            c.test.is_none() && (1..MAX_ERROR_CHARS).contains(&kept),
            "{kept}"
        );
        cut_certificate(Some(&cert), Some(c));
        assert_eq!(back.error, x.error, "the line's own message stays whole");
    }

    #[test]
    fn the_limit_is_inclusive() {
        let mut x = result(vec![]);
        let room = MAX_LINE_BYTES - render(&x).len() - 2;
        x.not_collected = vec!["p".repeat(room)];
        let line = format_line(&x).expect("formats");
        assert_eq!(
            (line.len(), parse_line(&line)),
            (MAX_LINE_BYTES, Ok(x.clone()))
        );
        x.not_collected[0].push('p');
        assert_eq!(parse_line(&render(&x)), Err(LineError::TooLong(4097)));
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated && back.not_collected.is_empty());
    }

    #[test]
    fn the_largest_fixed_part_fits() {
        let mut x = result(vec![]);
        (x.verdict, x.error) = (Verdict::Error, Some("\u{1}".repeat(MAX_ERROR_CHARS)));
        x.counts = Counts::from_fn(|_| u64::MAX);
        x.truncated = true;
        x.deleted_tests = vec!["d".repeat(5000)];
        x.not_collected = vec!["n".repeat(5000)];
        let line = format_line(&x).expect("formats");
        assert_eq!(line.len(), 2262, "the longest line with empty lists");
        let back = parse_line(&line).expect("parses");
        assert!(back.deleted_tests.is_empty() && back.not_collected.is_empty());
        assert_eq!(back.counts, x.counts);
        assert_eq!(
            clip_error(&"é".repeat(1000)).chars().count(),
            MAX_ERROR_CHARS
        );
        assert_eq!(clip_error("short"), "short");
    }

    #[test]
    fn formatter_refuses_bad_mutants() {
        let good = parse_line(MUT_VALID).expect("valid");
        type Mutation = fn(&mut ResultLine);
        let bad: [(Mutation, &str); 6] = [
            (
                |r| mutants_of(r).verdict = MutantsVerdict::Killed,
                "is `killed` but `mutants.results[1].outcome` is `survived`",
            ),
            (
                |r| mutants_of(r).results[0].failed = Some(vec![]),
                "`mutants.results[0].failed` must be absent",
            ),
            (
                |r| mutants_of(r).results[1].failed = None,
                "`mutants.results[1].failed` must be present",
            ),
            (
                |r| mutants_of(r).error = Some("x".into()),
                "`mutants.error` must be absent when `mutants.verdict` is `not-killed`",
            ),
            (
                |r| mutants_of(r).verdict = MutantsVerdict::Error,
                "`mutants.error` must be present",
            ),
            (
                |r| mutants_of(r).results[1].name = "drop-quote".into(),
                "lists the mutation `drop-quote` of `tests/test_parse.mutations.json` twice",
            ),
        ];
        assert_each_refused(&good, &bad);
        // A truncated line may list only killed results under `not-killed`,
        // or none under `killed`.
        let mut r = good.clone();
        r.truncated = true;
        mutants_of(&mut r).results.truncate(1);
        assert_eq!(
            parse_line(&format_line(&r).expect("formats")),
            Ok(r.clone())
        );
        r.truncated = false;
        let e = format_line(&r).expect_err("all listed are killed");
        assert!(e.to_string().contains("calls for `killed`"), "{e}");
        mutants_of(&mut r).verdict = MutantsVerdict::Killed;
        assert_eq!(
            parse_line(&format_line(&r).expect("formats")),
            Ok(r.clone())
        );
        mutants_of(&mut r).results.clear();
        assert!(
            format_line(&r).is_err(),
            "killed needs a result unless truncated"
        );
        r.truncated = true;
        assert_eq!(parse_line(&format_line(&r).expect("formats")), Ok(r));
    }

    #[test]
    fn mutants_results_are_dropped_killed_first_and_the_verdict_stays() {
        let mut x = result(vec![test("t", TestClass::PassesOnBase)]);
        let results: Vec<MutantLine> = (0..40)
            .map(|i| MutantLine {
                spec: "tests/test_parse.mutations.json".into(),
                name: format!("{i:02}{}", "n".repeat(70)),
                outcome: if i % 10 == 3 {
                    MutantOutcome::Survived
                } else {
                    MutantOutcome::Killed
                },
                failed: (i % 10 == 3).then(|| vec!["TestParse::test_ascii".into()]),
            })
            .collect();
        x.mutants = Some(Mutants {
            verdict: MutantsVerdict::NotKilled,
            results,
            error: None,
        });
        let back = parse_line(&format_line(&x).expect("formats")).expect("parses");
        assert!(back.truncated);
        assert_eq!(back.tests, x.tests, "killed results go before tests");
        let m = back.mutants.as_ref().expect("kept");
        assert_eq!(m.verdict, MutantsVerdict::NotKilled);
        assert_eq!(
            m.results
                .iter()
                .filter(|r| r.outcome == MutantOutcome::Survived)
                .count(),
            4
        );
        // Other results go after the lists, and a `killed` verdict stays even
        // when no result is left.
        let mut y = result(vec![test(&"t".repeat(3000), TestClass::PassesOnBase)]);
        y.mutants = Some(Mutants {
            verdict: MutantsVerdict::Killed,
            results: (0..5)
                .map(|i| MutantLine {
                    spec: "s".repeat(300),
                    name: format!("{i}"),
                    outcome: MutantOutcome::Killed,
                    failed: None,
                })
                .collect(),
            error: None,
        });
        let back = parse_line(&format_line(&y).expect("formats")).expect("parses");
        let m = back.mutants.as_ref().expect("kept");
        assert!(back.truncated && back.tests.len() == 1 && m.results.len() < 5);
        assert_eq!(m.verdict, MutantsVerdict::Killed);
        // The largest fixed part, both messages at their longest: the
        // certificate's message is cut first, then the check's.
        let mut z = result(vec![]);
        (z.verdict, z.error) = (Verdict::Error, Some("\u{1}".repeat(MAX_ERROR_CHARS)));
        z.counts = Counts::from_fn(|_| u64::MAX);
        z.truncated = true;
        let mut cert = certified("");
        (cert.verdict, cert.test) = (CertificateVerdict::Error, None);
        cert.error = Some("\u{1}".repeat(MAX_ERROR_CHARS));
        z.certificate = Some(cert);
        z.mutants = Some(Mutants {
            verdict: MutantsVerdict::Error,
            results: vec![],
            error: Some("\u{2}".repeat(MAX_ERROR_CHARS)),
        });
        let line = format_line(&z).expect("formats");
        let back = parse_line(&line).expect("parses");
        let c = back.certificate.as_ref().expect("never dropped");
        assert!(c.error.as_deref() == Some(""), "{:?}", c.error);
        let kept = back
            .mutants
            .as_ref()
            .and_then(|m| m.error.as_deref())
            .map_or(0, |e| e.chars().count());
        assert!((1..MAX_ERROR_CHARS).contains(&kept), "{kept}");
        assert_eq!(back.error, z.error, "the line's own message stays whole");
    }
}

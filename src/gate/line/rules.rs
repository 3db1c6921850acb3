//! The rules of the `repromin/v1` line that are not about its JSON text: the limits
//! (4096 bytes, 300-character messages), the key sets in schema order, the checks that
//! make a line agree with itself, and the refusal that names the broken rule
//! ([`LineError`]). The parser and the formatter both apply them.

use std::collections::HashSet;

use super::types::{
    Certificate, CertificateVerdict, Counts, Holdout, MutantLine, MutantOutcome, Mutants,
    MutantsVerdict, ResultLine, Runs, TestClass, Verdict,
};

/// The prefix of every v1 line, its trailing space included.
pub const PREFIX: &str = "repromin/v1 ";
/// The most bytes a line may have, prefix included, trailing newline not.
pub const MAX_LINE_BYTES: usize = 4096;
/// The most characters (Unicode scalar values) that `error` may have.
pub const MAX_ERROR_CHARS: usize = 300;

/// The message of a `certified` certificate that lost its test to fit the
/// line (its verdict becomes `error`, see [`format_line`](super::format_line)).
pub const CERT_DID_NOT_FIT: &str = "certificate did not fit the line";

pub(super) const TOP_KEYS: [&str; 11] = [
    "head",
    "mergeBase",
    "verdict",
    "error",
    "configEdited",
    "counts",
    "tests",
    "deletedTests",
    "notCollected",
    "truncated",
    "certificate",
];
pub(super) const TEST_KEYS: [&str; 6] = ["file", "name", "class", "base", "rerun", "head"];
/// The keys of a `flaky` test's `runs`.
pub(super) const RUNS_KEYS: [&str; 4] = ["baseFailed", "baseRuns", "headPassed", "headRuns"];
pub(super) const CERT_KEYS: [&str; 7] = [
    "verdict",
    "error",
    "test",
    "before",
    "after",
    "contentSha256",
    "holdout",
];
pub(super) const HOLDOUT_KEYS: [&str; 6] = [
    "runs",
    "passes",
    "rate",
    "confidence",
    "lowerBound",
    "requiredPasses",
];

/// Why a line or a result was refused. Object paths are empty for the top
/// level and otherwise like `counts` or `tests[2]`; field paths are like
/// `head`, `counts.new-api` or `tests[2].class`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line does not start with `repromin/v1 `.
    #[error("line does not start with `repromin/v1 `")]
    MissingPrefix,
    /// A `repromin/` line of another version (the version, e.g. `v2`).
    #[error("unsupported version `{0}`: only `repromin/v1` lines can be read")]
    UnsupportedVersion(String),
    /// A line over [`MAX_LINE_BYTES`] (its length without the newline).
    #[error("line is {0} bytes, over the {MAX_LINE_BYTES}-byte limit")]
    TooLong(usize),
    /// Whitespace between JSON tokens (its byte offset in the line).
    #[error("whitespace outside strings at byte {0}: the JSON must be compact")]
    Whitespace(usize),
    /// Not one well-formed JSON object (byte offset, what is wrong there).
    #[error("invalid JSON at byte {0}: {1}")]
    Json(usize, String),
    /// A key that the schema does not have there (key, object path).
    #[error("unknown key `{0}`{at}", at = in_object(.1))]
    UnknownKey(String, String),
    /// A key given twice (key, object path).
    #[error("duplicate key `{0}`{at}", at = in_object(.1))]
    DuplicateKey(String, String),
    /// A required key that is absent (key, object path).
    #[error("missing key `{0}`{at}", at = in_object(.1))]
    MissingKey(&'static str, String),
    /// Keys out of schema order (key found, key expected, object path).
    #[error("key `{0}` out of order{at}: expected `{1}`", at = in_object(.2))]
    OutOfOrder(String, &'static str, String),
    /// A value of the wrong JSON type (field path, wanted, found).
    #[error("`{0}` must be {1}, found {2}")]
    WrongType(String, &'static str, &'static str),
    /// A negative, fractional or too large count (field path, number).
    #[error("`{0}` must be a non-negative integer, found `{1}`")]
    BadCount(String, String),
    /// A SHA that is not 40 lowercase hex digits (`head` or `mergeBase`).
    #[error("`{0}` must be a full 40-character lowercase hex SHA")]
    BadSha(&'static str),
    /// A verdict, class or status outside its set (field path, value, set).
    #[error("unknown value `{v}` for `{0}`: expected one of {2}", v = printable(.1))]
    UnknownValue(String, String, String),
    /// Verdict `error` without a message.
    #[error("`error` must be a string when `verdict` is `error`")]
    ErrorMissing,
    /// A message with another verdict (that verdict).
    #[error("`error` must be null when `verdict` is `{0}`")]
    ErrorUnexpected(Verdict),
    /// A message over [`MAX_ERROR_CHARS`] (its length in characters).
    #[error("`error` is {0} characters, over the {MAX_ERROR_CHARS}-character limit")]
    ErrorTooLong(usize),
    /// A verdict that the counts do not call for (verdict, called for).
    #[error("verdict `{0}` contradicts `counts`, which call for `{1}`")]
    VerdictMismatch(Verdict, Verdict),
    /// More entries of a class than its count (class, entries, count).
    #[error("`tests` lists {1} entries of class `{0}` but `counts.{0}` is {2}")]
    TooManyEntries(TestClass, usize, u64),
    /// Not truncated, yet not every test listed (entries, total count).
    #[error("`truncated` is false but `tests` lists {0} entries while the counts total {1}")]
    NotAllListed(usize, u128),
    /// A `contentSha256` that is not 64 lowercase hex digits.
    #[error("`certificate.contentSha256` must be 64 lowercase hex digits")]
    BadDigest,
    /// A fraction with a sign, an exponent or over six fraction digits
    /// (field path, its spelling, or its value from the formatter).
    #[error(
        "`{0}` must be a decimal number with at most 6 fraction digits, \
         no exponent and no sign, found `{1}`"
    )]
    BadDecimal(String, String),
    /// A fraction outside its range (field path, value, range).
    #[error("`{0}` must be in {2}, found `{1}`")]
    OutOfRange(String, String, &'static str),
    /// Certificate verdict `error` without a message.
    #[error("`certificate.error` must be a string when `certificate.verdict` is `error`")]
    CertErrorMissing,
    /// A certificate message with another verdict (that verdict).
    #[error("`certificate.error` must be null when `certificate.verdict` is `{0}`")]
    CertErrorUnexpected(CertificateVerdict),
    /// A certificate message over [`MAX_ERROR_CHARS`] (its length).
    #[error("`certificate.error` is {0} characters, over the {MAX_ERROR_CHARS}-character limit")]
    CertErrorTooLong(usize),
    /// A field that a `certified` certificate needs is null (its key).
    #[error("`certificate.{0}` must not be null when `certificate.verdict` is `certified`")]
    CertFieldNull(&'static str),
    /// A certified reduction that grew (`files` or `bytes`, after, before).
    #[error("`certificate.after.{0}` is {1}, more than `certificate.before.{0}` ({2})")]
    CertGrew(&'static str, u64, u64),
    /// `passes` or `requiredPasses` over `runs` (key, value, runs).
    #[error("`certificate.holdout.{0}` is {1}, more than `certificate.holdout.runs` ({2})")]
    OverRuns(&'static str, u64, u64),
    /// Certified with too few passes (passes, required).
    #[error(
        "`certificate.verdict` is `certified` but `certificate.holdout.passes` ({0}) \
         is below `certificate.holdout.requiredPasses` ({1})"
    )]
    TooFewPasses(u64, u64),
    /// Not certified although the passes suffice (passes, required).
    #[error(
        "`certificate.verdict` is `not-certified` but `certificate.holdout.passes` ({0}) \
         reaches `certificate.holdout.requiredPasses` ({1})"
    )]
    EnoughPasses(u64, u64),
    /// Mutants verdict `error` without a message.
    #[error("`mutants.error` must be present when `mutants.verdict` is `error`")]
    MutantsErrorMissing,
    /// A mutants message with another verdict (that verdict).
    #[error("`mutants.error` must be absent when `mutants.verdict` is `{0}`")]
    MutantsErrorUnexpected(MutantsVerdict),
    /// A mutants message over [`MAX_ERROR_CHARS`] (its length).
    #[error("`mutants.error` is {0} characters, over the {MAX_ERROR_CHARS}-character limit")]
    MutantsErrorTooLong(usize),
    /// Results listed with verdict `error` (how many).
    #[error("`mutants.results` must be empty when `mutants.verdict` is `error`, found {0} entries")]
    MutantsErrorWithResults(usize),
    /// `failed` on an entry whose outcome does not list it (entry path, outcome).
    #[error("`{0}.failed` must be absent when `{0}.outcome` is `{1}`")]
    FailedUnexpected(String, MutantOutcome),
    /// No `failed` on an `overkill` or `survived` entry (entry path, outcome).
    #[error("`{0}.failed` must be present when `{0}.outcome` is `{1}`")]
    FailedMissing(String, MutantOutcome),
    /// One mutation listed twice (spec, name).
    #[error("`mutants.results` lists the mutation `{1}` of `{0}` twice")]
    DuplicateMutant(String, String),
    /// A `killed` verdict over an entry that was not killed (entry index, outcome).
    #[error("`mutants.verdict` is `killed` but `mutants.results[{0}].outcome` is `{1}`")]
    KilledOverNotKilled(usize, MutantOutcome),
    /// More `regressions.tests` entries than `regressions.count` (entries, count).
    #[error("`regressions.tests` lists {0} entries but `regressions.count` is {1}")]
    TooManyRegressions(usize, u64),
    /// Not truncated, yet not every regression listed (entries, count).
    #[error(
        "`truncated` is false but `regressions.tests` lists {0} entries while `regressions.count` is {1}"
    )]
    NotAllRegressionsListed(usize, u64),
    /// `counts.flaky` written as 0: the key is there only when the count is not.
    #[error("`counts.flaky` must be absent when it is 0")]
    ZeroFlaky,
    /// `runs` on a test that is not `flaky` (entry path, class).
    #[error("`{0}.runs` must be absent when `{0}.class` is `{1}`")]
    RunsUnexpected(String, TestClass),
    /// No `runs` on a `flaky` test (entry path).
    #[error("`{0}.runs` must be present when `{0}.class` is `flaky`")]
    RunsMissing(String),
    /// More failures or passes than runs (field path, count, runs).
    #[error("`{0}` is {1}, more than the {2} runs beside it")]
    RunsExceeded(String, u64, u64),
    /// Untruncated, a verdict that the listed results do not call for
    /// (verdict, called for).
    #[error("`mutants.verdict` is `{0}` but `mutants.results` calls for `{1}`")]
    MutantsVerdictMismatch(MutantsVerdict, MutantsVerdict),
}

fn in_object(object: &str) -> String {
    match object {
        "" => String::new(),
        _ => format!(" in `{object}`"),
    }
}

impl ResultLine {
    /// Checks every rule of the schema that is not about the JSON text;
    /// [`parse_line`](super::parse_line) and [`format_line`](super::format_line) both apply it.
    pub fn validate(&self) -> Result<(), LineError> {
        for (field, sha) in [("head", &self.head), ("mergeBase", &self.merge_base)] {
            if !is_hex(sha, 40) {
                return Err(LineError::BadSha(field));
            }
        }
        match (self.verdict, &self.error) {
            (Verdict::Error, None) => return Err(LineError::ErrorMissing),
            (Verdict::Error, Some(msg)) if msg.chars().count() > MAX_ERROR_CHARS => {
                return Err(LineError::ErrorTooLong(msg.chars().count()));
            }
            (Verdict::Error, Some(_)) => {}
            (verdict, Some(_)) => return Err(LineError::ErrorUnexpected(verdict)),
            (verdict, None) if verdict != self.counts.implied_verdict() => {
                let implied = self.counts.implied_verdict();
                return Err(LineError::VerdictMismatch(verdict, implied));
            }
            (_, None) => {}
        }
        for (i, t) in self.tests.iter().enumerate() {
            let path = format!("tests[{i}]");
            match (t.class, &t.runs) {
                (TestClass::Flaky, None) => return Err(LineError::RunsMissing(path)),
                (TestClass::Flaky, Some(runs)) => runs.validate(&path)?,
                (class, Some(_)) => return Err(LineError::RunsUnexpected(path, class)),
                (_, None) => {}
            }
        }
        let listed = Counts::from_tests(&self.tests);
        for class in TestClass::ALL {
            let (listed, count) = (listed.get(class), self.counts.get(class));
            if listed > count {
                let listed = usize::try_from(listed).unwrap_or(usize::MAX);
                return Err(LineError::TooManyEntries(class, listed, count));
            }
        }
        if !self.truncated && self.tests.len() as u128 != self.counts.total() {
            let (listed, total) = (self.tests.len(), self.counts.total());
            return Err(LineError::NotAllListed(listed, total));
        }
        if let Some(r) = &self.regressions {
            let listed = r.tests.len();
            if listed as u128 > u128::from(r.count) {
                return Err(LineError::TooManyRegressions(listed, r.count));
            }
            if !self.truncated && listed as u128 != u128::from(r.count) {
                return Err(LineError::NotAllRegressionsListed(listed, r.count));
            }
        }
        if let Some(c) = &self.certificate {
            c.validate()?;
        }
        self.mutants
            .as_ref()
            .map_or(Ok(()), |m| m.validate(self.truncated))
    }
}

impl Runs {
    fn validate(&self, path: &str) -> Result<(), LineError> {
        for (key, count, runs) in [
            ("baseFailed", self.base_failed, self.base_runs),
            ("headPassed", self.head_passed, self.head_runs),
        ] {
            if count > runs {
                return Err(LineError::RunsExceeded(
                    format!("{path}.runs.{key}"),
                    count,
                    runs,
                ));
            }
        }
        Ok(())
    }
}

impl Mutants {
    /// The verdict that `results` call for when none was dropped: `killed`
    /// when there is at least one and every one is killed, else `not-killed`.
    pub fn implied_verdict(results: &[MutantLine]) -> MutantsVerdict {
        let killed = |r: &MutantLine| r.outcome == MutantOutcome::Killed;
        if !results.is_empty() && results.iter().all(killed) {
            MutantsVerdict::Killed
        } else {
            MutantsVerdict::NotKilled
        }
    }

    /// Checks the field's own rules; [`ResultLine::validate`] applies it
    /// last. `truncated` is the line's: a truncated line may have dropped
    /// results, so the verdict is then checked only against those listed.
    pub fn validate(&self, truncated: bool) -> Result<(), LineError> {
        use MutantsVerdict as V;
        match (self.verdict, &self.error) {
            (V::Error, None) => return Err(LineError::MutantsErrorMissing),
            (V::Error, Some(msg)) if msg.chars().count() > MAX_ERROR_CHARS => {
                return Err(LineError::MutantsErrorTooLong(msg.chars().count()));
            }
            (V::Error, Some(_)) if !self.results.is_empty() => {
                return Err(LineError::MutantsErrorWithResults(self.results.len()));
            }
            (V::Error, Some(_)) | (_, None) => {}
            (verdict, Some(_)) => return Err(LineError::MutantsErrorUnexpected(verdict)),
        }
        let mut seen = HashSet::new();
        for (i, r) in self.results.iter().enumerate() {
            let path = format!("mutants.results[{i}]");
            match (r.outcome.lists_failed(), r.failed.is_some()) {
                (true, false) => return Err(LineError::FailedMissing(path, r.outcome)),
                (false, true) => return Err(LineError::FailedUnexpected(path, r.outcome)),
                _ => {}
            }
            if !seen.insert((r.spec.as_str(), r.name.as_str())) {
                return Err(LineError::DuplicateMutant(r.spec.clone(), r.name.clone()));
            }
        }
        if self.verdict == V::Killed
            && let Some((i, r)) = self
                .results
                .iter()
                .enumerate()
                .find(|(_, r)| r.outcome != MutantOutcome::Killed)
        {
            return Err(LineError::KilledOverNotKilled(i, r.outcome));
        }
        let implied = Mutants::implied_verdict(&self.results);
        if self.verdict != V::Error && !truncated && self.verdict != implied {
            return Err(LineError::MutantsVerdictMismatch(self.verdict, implied));
        }
        Ok(())
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A fraction as the line writes it: `{:.6}`, then trailing zeros and a
/// trailing dot trimmed (`0.9`, `0.834211`, `0`, `1`).
pub(super) fn decimal(x: f64) -> String {
    let s = format!("{x:.6}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

impl Holdout {
    fn validate(&self) -> Result<(), LineError> {
        let fractions = [
            ("rate", self.rate, true),
            ("confidence", self.confidence, true),
            ("lowerBound", self.lower_bound, false),
        ];
        for (key, x, open) in fractions {
            let (ok, range) = if open {
                (x > 0.0 && x < 1.0, "(0, 1)")
            } else {
                ((0.0..=1.0).contains(&x) && x.is_sign_positive(), "[0, 1]")
            };
            let field = format!("certificate.holdout.{key}");
            if !ok {
                return Err(LineError::OutOfRange(field, format!("{x:?}"), range));
            }
            // The written text must mean the same value, so that it reads back.
            if decimal(x).parse::<f64>() != Ok(x) {
                return Err(LineError::BadDecimal(field, format!("{x:?}")));
            }
        }
        for (key, n) in [
            ("passes", self.passes),
            ("requiredPasses", self.required_passes),
        ] {
            if n > self.runs {
                return Err(LineError::OverRuns(key, n, self.runs));
            }
        }
        Ok(())
    }
}

impl Certificate {
    /// Checks the certificate's own rules; [`ResultLine::validate`] applies
    /// it, after the rules of the rest of the line.
    pub fn validate(&self) -> Result<(), LineError> {
        use CertificateVerdict as V;
        match (self.verdict, &self.error) {
            (V::Error, None) => return Err(LineError::CertErrorMissing),
            (V::Error, Some(msg)) if msg.chars().count() > MAX_ERROR_CHARS => {
                return Err(LineError::CertErrorTooLong(msg.chars().count()));
            }
            (V::Error, Some(_)) | (_, None) => {}
            (verdict, Some(_)) => return Err(LineError::CertErrorUnexpected(verdict)),
        }
        if self
            .content_sha256
            .as_deref()
            .is_some_and(|s| !is_hex(s, 64))
        {
            return Err(LineError::BadDigest);
        }
        if let Some(h) = &self.holdout {
            h.validate()?;
        }
        if self.verdict == V::Certified {
            let nulls = [
                ("test", self.test.is_none()),
                ("before", self.before.is_none()),
                ("after", self.after.is_none()),
                ("contentSha256", self.content_sha256.is_none()),
                ("holdout", self.holdout.is_none()),
            ];
            if let Some((key, _)) = nulls.into_iter().find(|(_, null)| *null) {
                return Err(LineError::CertFieldNull(key));
            }
        }
        if let (V::Certified, Some(b), Some(a)) = (self.verdict, self.before, self.after) {
            for (key, a, b) in [("files", a.files, b.files), ("bytes", a.bytes, b.bytes)] {
                if a > b {
                    return Err(LineError::CertGrew(key, a, b));
                }
            }
        }
        match (self.verdict, self.holdout) {
            (V::Certified, Some(h)) if h.passes < h.required_passes => {
                Err(LineError::TooFewPasses(h.passes, h.required_passes))
            }
            (V::NotCertified, Some(h)) if h.passes >= h.required_passes => {
                Err(LineError::EnoughPasses(h.passes, h.required_passes))
            }
            _ => Ok(()),
        }
    }
}

/// Cuts `message` to at most [`MAX_ERROR_CHARS`] characters, ending a cut
/// message with `…`, so that it can go in `error`.
pub fn clip_error(message: &str) -> String {
    clip(message, MAX_ERROR_CHARS, "…")
}

pub use crate::text::clip;

// ---------------------------------------------------------------- parsing

pub(super) fn printable(s: &str) -> String {
    let shown = |c: char| {
        if c.is_control() {
            c.escape_default().to_string()
        } else {
            c.to_string()
        }
    };
    s.chars().map(shown).collect()
}

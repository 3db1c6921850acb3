//! The `repromin/v1` result line: the one machine-readable line that a gate
//! run prints, `repromin/v1 ` and then a compact JSON object, at most
//! [`MAX_LINE_BYTES`] bytes in all. Every object has a fixed key set in a
//! fixed order, and the line must agree with itself: the verdict with the
//! counts, the listed tests with the counts, `error` with the verdict, the
//! reduce side's [`Certificate`] with itself, and the mutation check's
//! [`Mutants`] verdict with its results.
//! [`parse_line`] refuses any line that breaks a rule, [`format_line`]
//! refuses to write one and drops list entries, in a fixed order, when a
//! result would not fit. `docs/line-schema.md` is the schema.

use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// The prefix of every v1 line, its trailing space included.
pub const PREFIX: &str = "repromin/v1 ";
/// The most bytes a line may have, prefix included, trailing newline not.
pub const MAX_LINE_BYTES: usize = 4096;
/// The most characters (Unicode scalar values) that `error` may have.
pub const MAX_ERROR_CHARS: usize = 300;

/// Values spelled as fixed strings on the line.
trait Named: Copy + 'static {
    const ALL: &'static [Self];
    fn name(&self) -> &'static str;
}

macro_rules! named_enum {
    ($(#[$doc:meta])* $ty:ident[$n:literal] { $($(#[$vdoc:meta])* $var:ident = $s:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty { $($(#[$vdoc])* $var,)+ }

        impl $ty {
            /// Every value, in schema order.
            pub const ALL: [$ty; $n] = [$($ty::$var,)+];
            /// The spelling of every value, in schema order.
            pub const NAMES: [&'static str; $n] = [$($s,)+];

            /// The spelling of this value on the line.
            pub fn as_str(&self) -> &'static str {
                match self { $($ty::$var => $s,)+ }
            }

            /// The value spelled `s` on the line, if there is one.
            pub fn from_name(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl Named for $ty {
            const ALL: &'static [Self] = &$ty::ALL;
            fn name(&self) -> &'static str { self.as_str() }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

named_enum! {
    /// The overall outcome of a gate run.
    Verdict[5] {
        /// Some test fails on the merge base and passes on head.
        Reproduced = "reproduced",
        /// Nothing reproduces, but some test needs API that the base lacks.
        Unproven = "unproven",
        /// Tests ran, but none of them shows what the change does.
        Vacuous = "vacuous",
        /// No test was selected or found.
        NoTests = "no-tests",
        /// The gate itself failed; `error` says why.
        Error = "error",
    }
}

named_enum! {
    /// What one test shows about the change.
    TestClass[5] {
        /// Fails on the merge base (and on the rerun there), passes on head.
        Reproduces = "reproduces",
        /// Already passes on the merge base.
        PassesOnBase = "passes-on-base",
        /// Cannot load or run on the merge base: it uses new API.
        NewApi = "new-api",
        /// Does not pass on head.
        FailsOnHead = "fails-on-head",
        /// Was selected but did not run.
        NotRun = "not-run",
    }
}

named_enum! {
    /// How a test came out in one run: base, base rerun or head.
    SideStatus[5] {
        /// It passed.
        Passed = "passed",
        /// It failed.
        Failed = "failed",
        /// It was skipped.
        Skipped = "skipped",
        /// No report of that run listed it.
        Absent = "absent",
        /// Its file could not be loaded or collected.
        LoadError = "load-error",
    }
}

named_enum! {
    /// What the reduce side concluded about its reduced reproduction.
    CertificateVerdict[4] {
        /// The reduced case passed its holdout runs often enough.
        Certified = "certified",
        /// The holdout runs fell short, or the reduction did not reproduce.
        NotCertified = "not-certified",
        /// The reduce side ran out of budget before it could decide.
        BudgetExhausted = "budget-exhausted",
        /// The reduce side itself failed; `error` says why.
        Error = "error",
    }
}

/// The message of a `certified` certificate that lost its test to fit the
/// line (its verdict becomes `error`, see [`format_line`]).
pub const CERT_DID_NOT_FIT: &str = "certificate did not fit the line";

named_enum! {
    /// What the mutation check concluded about a pull request of tests alone.
    MutantsVerdict[3] {
        /// Every mutant was killed.
        Killed = "killed",
        /// Some mutant was not killed; `results` says how each came out.
        NotKilled = "not-killed",
        /// The check itself could not be made; `error` says why.
        Error = "error",
    }
}

named_enum! {
    /// How one mutant came out.
    MutantOutcome[7] {
        /// It built, and exactly its `kills` tests failed, each on an assertion.
        Killed = "killed",
        /// Every `kills` test failed, and so did another test.
        Overkill = "overkill",
        /// Some `kills` test still passed.
        Survived = "survived",
        /// The rebuild under the mutation failed.
        Unbuilt = "unbuilt",
        /// The test file failed to load, or a test failed naming a missing symbol.
        LoadError = "load-error",
        /// A `kills` test did not pass exactly once on the unmutated tree.
        Baseline = "baseline",
        /// The run is missing, or a test failed on something other than an assertion.
        Error = "error",
    }
}

impl MutantOutcome {
    /// Whether an entry of this outcome lists its failing tests (`failed`).
    pub fn lists_failed(self) -> bool {
        matches!(self, MutantOutcome::Overkill | MutantOutcome::Survived)
    }
}

/// One entry of `mutants.results`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutantLine {
    /// The spec's path, e.g. `tests/test_parse.mutations.json`.
    pub spec: String,
    /// The mutation's name in its spec.
    pub name: String,
    /// How it came out.
    pub outcome: MutantOutcome,
    /// The tests that failed under it; present exactly for `overkill` and `survived`.
    pub failed: Option<Vec<String>>,
}

/// The mutation check of a pull request that changes tests alone and adds or
/// changes a spec. It never changes the line's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutants {
    /// The check's verdict.
    pub verdict: MutantsVerdict,
    /// One entry per mutation; only some of them when the line is `truncated`.
    pub results: Vec<MutantLine>,
    /// Why the check failed; present exactly when its verdict is `error`.
    pub error: Option<String>,
}

/// The test that a certificate is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertTest {
    /// The test's file, e.g. `tests/test_x.py`.
    pub file: String,
    /// The test's full name in its file, e.g. `Cls::test_y`.
    pub name: String,
}

/// The size of a tree of files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeSize {
    /// How many files.
    pub files: u64,
    /// How many bytes, all files together.
    pub bytes: u64,
}

/// The holdout runs of a reduced case. The three fractions must already be
/// rounded to at most six decimals, e.g. with `(x * 1e6).round() / 1e6`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Holdout {
    /// Runs made.
    pub runs: u64,
    /// Runs that passed.
    pub passes: u64,
    /// The pass rate to demonstrate, in (0, 1).
    pub rate: f64,
    /// The confidence level, in (0, 1).
    pub confidence: f64,
    /// The lower confidence bound on the pass rate, in [0, 1].
    pub lower_bound: f64,
    /// The passes out of `runs` needed to certify.
    pub required_passes: u64,
}

/// What the reduce side of a gate run reports. It never changes the
/// line's verdict, and the line's own rules ignore it.
#[derive(Clone, Debug, PartialEq)]
pub struct Certificate {
    /// The outcome of the reduce side.
    pub verdict: CertificateVerdict,
    /// Why the reduce side failed; present exactly when its verdict is `error`.
    pub error: Option<String>,
    /// The test that was reduced.
    pub test: Option<CertTest>,
    /// The size of the tree before the reduction.
    pub before: Option<TreeSize>,
    /// The size of the reduced tree.
    pub after: Option<TreeSize>,
    /// The SHA-256 of the reduced content: 64 lowercase hex digits.
    pub content_sha256: Option<String>,
    /// The holdout runs of the reduced case.
    pub holdout: Option<Holdout>,
}

/// How many tests fall in each class. The counts cover every test, also
/// when the line lists only some of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tests of class `reproduces`.
    pub reproduces: u64,
    /// Tests of class `passes-on-base`.
    pub passes_on_base: u64,
    /// Tests of class `new-api`.
    pub new_api: u64,
    /// Tests of class `fails-on-head`.
    pub fails_on_head: u64,
    /// Tests of class `not-run`.
    pub not_run: u64,
}

impl Counts {
    fn from_fn(mut f: impl FnMut(TestClass) -> u64) -> Self {
        Counts {
            reproduces: f(TestClass::Reproduces),
            passes_on_base: f(TestClass::PassesOnBase),
            new_api: f(TestClass::NewApi),
            fails_on_head: f(TestClass::FailsOnHead),
            not_run: f(TestClass::NotRun),
        }
    }

    /// The counts of the given tests, class by class.
    pub fn from_tests(tests: &[TestLine]) -> Self {
        Counts::from_fn(|c| tests.iter().filter(|t| t.class == c).count() as u64)
    }

    /// The count of one class.
    pub fn get(&self, class: TestClass) -> u64 {
        match class {
            TestClass::Reproduces => self.reproduces,
            TestClass::PassesOnBase => self.passes_on_base,
            TestClass::NewApi => self.new_api,
            TestClass::FailsOnHead => self.fails_on_head,
            TestClass::NotRun => self.not_run,
        }
    }

    /// The sum of the five counts, in a type wide enough never to overflow.
    pub fn total(&self) -> u128 {
        TestClass::ALL.map(|c| u128::from(self.get(c))).iter().sum()
    }

    /// The verdict these counts call for unless the gate failed: `no-tests`
    /// when the total is 0, else `reproduced` when `reproduces > 0`, else
    /// `unproven` when `new-api > 0`, else `vacuous`.
    pub fn implied_verdict(&self) -> Verdict {
        match (self.total(), self.reproduces, self.new_api) {
            (0, _, _) => Verdict::NoTests,
            (_, 1.., _) => Verdict::Reproduced,
            (_, _, 1..) => Verdict::Unproven,
            _ => Verdict::Vacuous,
        }
    }
}

/// One entry of `tests`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestLine {
    /// The test's file as selected, e.g. `tests/test_x.py`.
    pub file: String,
    /// The test's name in its file, e.g. `Cls::test_y`.
    pub name: String,
    /// What the test shows.
    pub class: TestClass,
    /// Its outcome on the merge base.
    pub base: SideStatus,
    /// Its outcome on the rerun on the merge base.
    pub rerun: SideStatus,
    /// Its outcome on head.
    pub head: SideStatus,
}

/// A whole `repromin/v1` result, as one line carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultLine {
    /// The head commit: a full 40-character lowercase hex SHA.
    pub head: String,
    /// The merge base: a full 40-character lowercase hex SHA.
    pub merge_base: String,
    /// The outcome.
    pub verdict: Verdict,
    /// Why the gate failed; present exactly when the verdict is `error`.
    pub error: Option<String>,
    /// Whether the change edits test or CI configuration.
    pub config_edited: bool,
    /// Tests per class, covering every test.
    pub counts: Counts,
    /// The tests; only some of them when `truncated`.
    pub tests: Vec<TestLine>,
    /// Test files that the change deletes.
    pub deleted_tests: Vec<String>,
    /// Selected paths that no test report listed.
    pub not_collected: Vec<String>,
    /// Whether entries were dropped from the lists to fit the size limit.
    pub truncated: bool,
    /// The reduce side's certificate; `None` when no reduce side ran.
    pub certificate: Option<Certificate>,
    /// The mutation check; `None` (no key on the line) unless the change is
    /// test material alone and adds or changes a mutation spec.
    pub mutants: Option<Mutants>,
}

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
    /// [`parse_line`] and [`format_line`] both apply it.
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
        for class in TestClass::ALL {
            let listed = self.tests.iter().filter(|t| t.class == class).count();
            let count = self.counts.get(class);
            if listed as u128 > u128::from(count) {
                return Err(LineError::TooManyEntries(class, listed, count));
            }
        }
        if !self.truncated && self.tests.len() as u128 != self.counts.total() {
            let (listed, total) = (self.tests.len(), self.counts.total());
            return Err(LineError::NotAllListed(listed, total));
        }
        if let Some(c) = &self.certificate {
            c.validate()?;
        }
        self.mutants
            .as_ref()
            .map_or(Ok(()), |m| m.validate(self.truncated))
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
fn decimal(x: f64) -> String {
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
    if message.chars().count() <= MAX_ERROR_CHARS {
        return message.to_owned();
    }
    let mut out: String = message.chars().take(MAX_ERROR_CHARS - 1).collect();
    out.push('…');
    out
}

// ---------------------------------------------------------------- parsing

/// A JSON value that keeps every member of an object, in order and with
/// duplicates, so that the schema check sees the keys as written. Numbers
/// are kept as text twice: their value (integers in decimal, any other
/// number as Rust's `{:?}` of its `f64` value) and their spelling.
enum Json {
    Null,
    Bool(bool),
    Num(String, String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(..) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// Builds a [`Json`] from serde_json's events, which come in text order,
/// repeated keys included.
struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Num(n.to_string(), String::new()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Num(n.to_string(), String::new()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        Ok(Json::Num(format!("{n:?}"), String::new()))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::Str(s.to_owned()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Arr(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Json::Obj(members))
    }
}

/// Refuses JSON whitespace outside strings. Returns the spelling of every
/// number token, in text order, which serde_json does not keep.
fn check_compact(json: &str) -> Result<Vec<&str>, LineError> {
    let (mut in_string, mut escaped) = (false, false);
    let (mut numbers, mut number) = (Vec::new(), None);
    for (i, b) in json.bytes().enumerate() {
        if let Some(start) = number {
            if matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                continue;
            }
            numbers.push(&json[start..i]);
            number = None;
        }
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b' ' | b'\t' | b'\n' | b'\r' if !in_string => {
                return Err(LineError::Whitespace(PREFIX.len() + i));
            }
            b'0'..=b'9' | b'-' if !in_string => number = Some(i),
            _ => {}
        }
    }
    numbers.extend(number.map(|start| &json[start..]));
    Ok(numbers)
}

/// Gives the numbers of `v` their spellings. serde_json reports values in
/// text order, so the tree's numbers, walked in order, are the tokens.
fn spell<'s>(v: &mut Json, spellings: &mut impl Iterator<Item = &'s str>) {
    match v {
        Json::Num(_, s) => *s = spellings.next().unwrap_or_default().to_owned(),
        Json::Arr(items) => items.iter_mut().for_each(|v| spell(v, spellings)),
        Json::Obj(members) => members.iter_mut().for_each(|(_, v)| spell(v, spellings)),
        _ => {}
    }
}

const TOP_KEYS: [&str; 11] = [
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
const TEST_KEYS: [&str; 6] = ["file", "name", "class", "base", "rerun", "head"];
const CERT_KEYS: [&str; 7] = [
    "verdict",
    "error",
    "test",
    "before",
    "after",
    "contentSha256",
    "holdout",
];
const HOLDOUT_KEYS: [&str; 6] = [
    "runs",
    "passes",
    "rate",
    "confidence",
    "lowerBound",
    "requiredPasses",
];

/// The values of an object whose keys must be exactly `keys`, in order.
/// Reports a repeated key first, then an unknown one, then a missing one,
/// then the first key out of place.
fn fields<'j, const N: usize>(
    v: &'j Json,
    path: &str,
    keys: [&'static str; N],
) -> Result<[&'j Json; N], LineError> {
    fields_opt(v, path, keys, []).map(|(values, [])| values)
}

/// Like [`fields`], with optional keys that may follow the required ones,
/// each at most once and in the order given.
fn fields_opt<'j, const N: usize, const M: usize>(
    v: &'j Json,
    path: &str,
    keys: [&'static str; N],
    optional: [&'static str; M],
) -> Result<([&'j Json; N], [Option<&'j Json>; M]), LineError> {
    let Json::Obj(m) = v else {
        return Err(wrong(v, path, "an object"));
    };
    let mut seen = HashSet::new();
    if let Some((k, _)) = m.iter().find(|(k, _)| !seen.insert(k.as_str())) {
        return Err(LineError::DuplicateKey(k.clone(), path.to_owned()));
    }
    let known = |k: &str| keys.contains(&k) || optional.contains(&k);
    if let Some((k, _)) = m.iter().find(|(k, _)| !known(k)) {
        return Err(LineError::UnknownKey(k.clone(), path.to_owned()));
    }
    if let Some(k) = keys.iter().find(|k| !seen.contains(**k)) {
        return Err(LineError::MissingKey(k, path.to_owned()));
    }
    let present = optional.iter().copied().filter(|k| seen.contains(k));
    let expected = keys.iter().copied().chain(present);
    let mut out = [&NULL; N];
    let mut extra = [None; M];
    for ((key, value), expected) in m.iter().zip(expected) {
        if key != expected {
            return Err(LineError::OutOfOrder(
                key.clone(),
                expected,
                path.to_owned(),
            ));
        }
        if let Some(i) = keys.iter().position(|k| *k == key.as_str()) {
            out[i] = value;
        } else if let Some(i) = optional.iter().position(|k| *k == key.as_str()) {
            extra[i] = Some(value);
        }
    }
    Ok((out, extra))
}

fn wrong(v: &Json, field: &str, expected: &'static str) -> LineError {
    LineError::WrongType(field.to_owned(), expected, v.kind())
}

fn string(v: &Json, field: &str) -> Result<String, LineError> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        _ => Err(wrong(v, field, "a string")),
    }
}

fn boolean(v: &Json, field: &str) -> Result<bool, LineError> {
    match v {
        Json::Bool(b) => Ok(*b),
        _ => Err(wrong(v, field, "a boolean")),
    }
}

fn count(v: &Json, field: &str) -> Result<u64, LineError> {
    let Json::Num(raw, _) = v else {
        return Err(wrong(v, field, "a non-negative integer"));
    };
    match raw.parse::<u64>() {
        Ok(n) if raw.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(LineError::BadCount(field.to_owned(), raw.clone())),
    }
}

/// A fraction: digits with at most six after the dot, no sign, no exponent.
/// Its range is checked by [`Holdout::validate`].
fn fraction(v: &Json, field: &str) -> Result<f64, LineError> {
    let Json::Num(_, spelling) = v else {
        return Err(wrong(v, field, "a number"));
    };
    let digits = spelling.split_once('.').map_or(0, |(_, f)| f.len());
    let plain = spelling.bytes().all(|b| b == b'.' || b.is_ascii_digit());
    match spelling.parse::<f64>() {
        Ok(x) if plain && digits <= 6 => Ok(x),
        _ => Err(LineError::BadDecimal(field.to_owned(), spelling.clone())),
    }
}

/// `read(v)`, or `None` when `v` is null; a wrong type of `field` itself
/// is reported as wanting `want`.
fn or_null<T>(
    v: &Json,
    field: &str,
    want: &'static str,
    read: impl FnOnce(&Json) -> Result<T, LineError>,
) -> Result<Option<T>, LineError> {
    if let Json::Null = v {
        return Ok(None);
    }
    read(v).map(Some).map_err(|e| match e {
        LineError::WrongType(f, _, found) if f == field => LineError::WrongType(f, want, found),
        e => e,
    })
}

fn named<T: Named>(v: &Json, field: &str) -> Result<T, LineError> {
    let s = string(v, field)?;
    T::ALL
        .iter()
        .copied()
        .find(|x| x.name() == s)
        .ok_or_else(|| {
            let allowed: Vec<String> = T::ALL.iter().map(|x| format!("`{}`", x.name())).collect();
            LineError::UnknownValue(field.to_owned(), s, allowed.join(", "))
        })
}

fn array<'j>(v: &'j Json, field: &str) -> Result<&'j [Json], LineError> {
    match v {
        Json::Arr(items) => Ok(items),
        _ => Err(wrong(v, field, "an array")),
    }
}

fn strings(v: &Json, field: &str) -> Result<Vec<String>, LineError> {
    let items = array(v, field)?.iter().enumerate();
    items
        .map(|(i, s)| string(s, &format!("{field}[{i}]")))
        .collect()
}

fn test_line(v: &Json, path: &str) -> Result<TestLine, LineError> {
    let [file, name, class, base, rerun, head] = fields(v, path, TEST_KEYS)?;
    Ok(TestLine {
        file: string(file, &format!("{path}.file"))?,
        name: string(name, &format!("{path}.name"))?,
        class: named(class, &format!("{path}.class"))?,
        base: named(base, &format!("{path}.base"))?,
        rerun: named(rerun, &format!("{path}.rerun"))?,
        head: named(head, &format!("{path}.head"))?,
    })
}

fn cert_test(v: &Json) -> Result<Option<CertTest>, LineError> {
    const P: &str = "certificate.test";
    or_null(v, P, "null or an object", |v| {
        let [file, name] = fields(v, P, ["file", "name"])?;
        let file = string(file, &format!("{P}.file"))?;
        let name = string(name, &format!("{P}.name"))?;
        Ok(CertTest { file, name })
    })
}

fn tree_size(v: &Json, path: &str) -> Result<Option<TreeSize>, LineError> {
    or_null(v, path, "null or an object", |v| {
        let [files, bytes] = fields(v, path, ["files", "bytes"])?;
        let files = count(files, &format!("{path}.files"))?;
        let bytes = count(bytes, &format!("{path}.bytes"))?;
        Ok(TreeSize { files, bytes })
    })
}

fn holdout(v: &Json) -> Result<Option<Holdout>, LineError> {
    const P: &str = "certificate.holdout";
    or_null(v, P, "null or an object", |v| {
        let [runs, passes, rate, conf, lower, required] = fields(v, P, HOLDOUT_KEYS)?;
        let n = |v: &Json, key: &str| count(v, &format!("{P}.{key}"));
        let x = |v: &Json, key: &str| fraction(v, &format!("{P}.{key}"));
        Ok(Holdout {
            runs: n(runs, "runs")?,
            passes: n(passes, "passes")?,
            rate: x(rate, "rate")?,
            confidence: x(conf, "confidence")?,
            lower_bound: x(lower, "lowerBound")?,
            required_passes: n(required, "requiredPasses")?,
        })
    })
}

fn certificate(v: &Json) -> Result<Option<Certificate>, LineError> {
    let text = |v: &Json, field: &str| or_null(v, field, "null or a string", |v| string(v, field));
    or_null(v, "certificate", "null or an object", |v| {
        let [verdict, error, test, before, after, sha, hold] = fields(v, "certificate", CERT_KEYS)?;
        Ok(Certificate {
            verdict: named(verdict, "certificate.verdict")?,
            error: text(error, "certificate.error")?,
            test: cert_test(test)?,
            before: tree_size(before, "certificate.before")?,
            after: tree_size(after, "certificate.after")?,
            content_sha256: text(sha, "certificate.contentSha256")?,
            holdout: holdout(hold)?,
        })
    })
}

fn mutant_line(v: &Json, path: &str) -> Result<MutantLine, LineError> {
    let ([spec, name, outcome], [failed]) =
        fields_opt(v, path, ["spec", "name", "outcome"], ["failed"])?;
    let field = |key: &str| format!("{path}.{key}");
    Ok(MutantLine {
        spec: string(spec, &field("spec"))?,
        name: string(name, &field("name"))?,
        outcome: named(outcome, &field("outcome"))?,
        failed: failed.map(|f| strings(f, &field("failed"))).transpose()?,
    })
}

fn mutants(v: &Json) -> Result<Mutants, LineError> {
    const P: &str = "mutants";
    let ([verdict, results], [error]) = fields_opt(v, P, ["verdict", "results"], ["error"])?;
    let results = array(results, "mutants.results")?.iter().enumerate();
    let results = results.map(|(i, r)| mutant_line(r, &format!("mutants.results[{i}]")));
    Ok(Mutants {
        verdict: named(verdict, "mutants.verdict")?,
        results: results.collect::<Result<_, _>>()?,
        error: error.map(|e| string(e, "mutants.error")).transpose()?,
    })
}

fn decode(json: &Json) -> Result<ResultLine, LineError> {
    let (
        [
            head,
            base,
            verdict,
            error,
            edited,
            c,
            t,
            dt,
            nc,
            truncated,
            cert,
        ],
        [muts],
    ) = fields_opt(json, "", TOP_KEYS, ["mutants"])?;
    let error = match error {
        Json::Null => None,
        Json::Str(s) => Some(s.clone()),
        other => return Err(wrong(other, "error", "null or a string")),
    };
    let counts = fields(c, "counts", TestClass::NAMES)?;
    let mut n = [0; 5];
    for (i, key) in TestClass::NAMES.iter().enumerate() {
        n[i] = count(counts[i], &format!("counts.{key}"))?;
    }
    let tests = array(t, "tests")?.iter().enumerate();
    let tests = tests.map(|(i, t)| test_line(t, &format!("tests[{i}]")));
    let result = ResultLine {
        head: string(head, "head")?,
        merge_base: string(base, "mergeBase")?,
        verdict: named(verdict, "verdict")?,
        error,
        config_edited: boolean(edited, "configEdited")?,
        counts: Counts::from_fn(|c| n[c as usize]),
        tests: tests.collect::<Result<_, _>>()?,
        deleted_tests: strings(dt, "deletedTests")?,
        not_collected: strings(nc, "notCollected")?,
        truncated: boolean(truncated, "truncated")?,
        certificate: certificate(cert)?,
        mutants: muts.map(mutants).transpose()?,
    };
    result.validate()?;
    Ok(result)
}

/// Reads one `repromin/v1` line (one trailing `\n` is allowed), refusing
/// any line that breaks the schema in `docs/line-schema.md`.
pub fn parse_line(line: &str) -> Result<ResultLine, LineError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let Some(json) = line.strip_prefix(PREFIX) else {
        let version = line
            .strip_prefix("repromin/v")
            .and_then(|v| v.split_once(' '));
        return Err(match version {
            Some((v, _)) if v.len() < 16 => {
                LineError::UnsupportedVersion(format!("v{}", printable(v)))
            }
            _ => LineError::MissingPrefix,
        });
    };
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong(line.len()));
    }
    let spellings = check_compact(json)?;
    let mut value = serde_json::from_str::<Json>(json).map_err(|e| {
        let msg = e.to_string();
        let msg = msg
            .rsplit_once(" at line ")
            .map_or(msg.as_str(), |(m, _)| m);
        LineError::Json(PREFIX.len() + e.column().saturating_sub(1), msg.to_owned())
    })?;
    if !matches!(value, Json::Obj(_)) {
        return Err(LineError::Json(PREFIX.len(), "expected an object".into()));
    }
    spell(&mut value, &mut spellings.into_iter());
    decode(&value)
}

// ---------------------------------------------------------------- formatting

/// `s` as a JSON string: `"`, `\` and control characters escaped, the
/// rest as UTF-8. (Encoding a `str` cannot fail.)
fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn test_json(t: &TestLine) -> String {
    let (file, name) = (json_str(&t.file), json_str(&t.name));
    let (class, base, rerun, head) = (t.class, t.base, t.rerun, t.head);
    format!(
        "{{\"file\":{file},\"name\":{name},\"class\":\"{class}\",\
         \"base\":\"{base}\",\"rerun\":\"{rerun}\",\"head\":\"{head}\"}}"
    )
}

fn or_null_json(value: Option<String>) -> String {
    value.unwrap_or_else(|| "null".to_owned())
}

fn cert_json(c: &Certificate) -> String {
    let test = c.test.as_ref().map(|t| {
        let (file, name) = (json_str(&t.file), json_str(&t.name));
        format!("{{\"file\":{file},\"name\":{name}}}")
    });
    let size = |s: Option<TreeSize>| {
        let size = s.map(|s| format!("{{\"files\":{},\"bytes\":{}}}", s.files, s.bytes));
        or_null_json(size)
    };
    let holdout = c.holdout.map(|h| {
        let (rate, conf, lower) = (
            decimal(h.rate),
            decimal(h.confidence),
            decimal(h.lower_bound),
        );
        format!(
            "{{\"runs\":{},\"passes\":{},\"rate\":{rate},\"confidence\":{conf},\
             \"lowerBound\":{lower},\"requiredPasses\":{}}}",
            h.runs, h.passes, h.required_passes
        )
    });
    format!(
        "{{\"verdict\":\"{}\",\"error\":{},\"test\":{},\"before\":{},\"after\":{},\
         \"contentSha256\":{},\"holdout\":{}}}",
        c.verdict,
        or_null_json(c.error.as_deref().map(json_str)),
        or_null_json(test),
        size(c.before),
        size(c.after),
        or_null_json(c.content_sha256.as_deref().map(json_str)),
        or_null_json(holdout),
    )
}

fn mutant_json(r: &MutantLine) -> String {
    let failed = r.failed.as_ref().map_or_else(String::new, |f| {
        let names: Vec<String> = f.iter().map(|n| json_str(n)).collect();
        format!(",\"failed\":[{}]", names.join(","))
    });
    format!(
        "{{\"spec\":{},\"name\":{},\"outcome\":\"{}\"{failed}}}",
        json_str(&r.spec),
        json_str(&r.name),
        r.outcome
    )
}

fn mutants_json(m: &Mutants) -> String {
    let results: Vec<String> = m.results.iter().map(mutant_json).collect();
    let error = m
        .error
        .as_ref()
        .map_or_else(String::new, |e| format!(",\"error\":{}", json_str(e)));
    format!(
        "{{\"verdict\":\"{}\",\"results\":[{}]{error}}}",
        m.verdict,
        results.join(",")
    )
}

/// Writes the line as it stands, without checks or truncation.
fn render(r: &ResultLine) -> String {
    let strings = |l: &[String]| l.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(",");
    let tests: Vec<String> = r.tests.iter().map(test_json).collect();
    let counts = TestClass::ALL.map(|c| format!("\"{c}\":{}", r.counts.get(c)));
    format!(
        "{PREFIX}{{\"head\":{},\"mergeBase\":{},\"verdict\":\"{}\",\"error\":{},\
         \"configEdited\":{},\"counts\":{{{}}},\"tests\":[{}],\"deletedTests\":[{}],\
         \"notCollected\":[{}],\"truncated\":{},\"certificate\":{}{}}}",
        json_str(&r.head),
        json_str(&r.merge_base),
        r.verdict,
        or_null_json(r.error.as_deref().map(json_str)),
        r.config_edited,
        counts.join(","),
        tests.join(","),
        strings(&r.deleted_tests),
        strings(&r.not_collected),
        r.truncated,
        or_null_json(r.certificate.as_ref().map(cert_json)),
        r.mutants
            .as_ref()
            .map_or_else(String::new, |m| format!(",\"mutants\":{}", mutants_json(m))),
    )
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
    let line = render(result);
    if line.len() <= MAX_LINE_BYTES {
        return Ok((result.clone(), line));
    }
    // The length once `truncated` is true (`true` is a byte shorter). At
    // least one entry goes, even when that byte alone would make it fit.
    let mut len = line.len() - usize::from(!result.truncated);
    let mut dropped = false;
    let mut out = result.clone();
    out.truncated = true;
    let killed = |r: &MutantLine| r.outcome == MutantOutcome::Killed;
    if let Some(m) = out.mutants.as_mut() {
        drop_last(&mut m.results, killed, mutant_json, &mut len, &mut dropped);
    }
    let repro = |t: &TestLine| t.class == TestClass::Reproduces;
    drop_last(
        &mut out.tests,
        |t| !repro(t),
        test_json,
        &mut len,
        &mut dropped,
    );
    drop_last(&mut out.tests, repro, test_json, &mut len, &mut dropped);
    for list in [&mut out.deleted_tests, &mut out.not_collected] {
        drop_last(list, |_| true, |s| json_str(s), &mut len, &mut dropped);
    }
    if let Some(m) = out.mutants.as_mut() {
        drop_last(
            &mut m.results,
            |_| true,
            mutant_json,
            &mut len,
            &mut dropped,
        );
    }
    let line = render(&out);
    let line = fit_certificate(&mut out, line, dropped)?;
    Ok((out, line))
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
        saved += json_str(c.encode_utf8(&mut [0; 4])).len() - 2;
    }
}

/// The result exactly as [`format_line`] writes it: `result` itself when
/// its line fits, else a copy with entries dropped and `truncated` set.
pub fn truncate_to_fit(result: &ResultLine) -> Result<ResultLine, LineError> {
    fit(result).map(|(r, _)| r)
}

/// Writes the compact line for `result`, without a newline, refusing any
/// result that [`parse_line`] would refuse. A line that would be over
/// [`MAX_LINE_BYTES`] loses entries one at a time, last first: `killed`
/// entries of `mutants.results`, then `tests` entries of other classes
/// than `reproduces`, then `reproduces` entries, then `deletedTests`, then
/// `notCollected`, then the other `mutants.results` entries, until it
/// fits; `truncated` becomes true and the counts and both verdicts stay as
/// they are. The certificate is never dropped: if the line still does not
/// fit, the end of its test name is cut, then its test is dropped (a
/// `certified` certificate becomes `error` with [`CERT_DID_NOT_FIT`]), then
/// the end of its error message is cut, then the end of `mutants.error`.
pub fn format_line(result: &ResultLine) -> Result<String, LineError> {
    fit(result).map(|(_, line)| line)
}

// ---------------------------------------------------------------- pretty

fn printable(s: &str) -> String {
    let shown = |c: char| {
        if c.is_control() {
            c.escape_default().to_string()
        } else {
            c.to_string()
        }
    };
    s.chars().map(shown).collect()
}

/// A rendering of a result for people, over several lines: verdict, SHAs,
/// counts, a table of the listed tests, the two path lists, the
/// certificate and the mutation check. Control characters in names and
/// messages are shown escaped.
pub fn pretty(result: &ResultLine) -> String {
    let r = result;
    let mut out = format!("verdict:        {}\n", r.verdict);
    if let Some(msg) = &r.error {
        out += &format!("error:          {}\n", printable(msg));
    }
    let counts = TestClass::ALL.map(|c| format!("{c} {}", r.counts.get(c)));
    let _ = write!(
        out,
        "head:           {}\nmerge base:     {}\nconfig edited:  {}\n\
         counts:         {} (total {})\ntests:          {} of {} listed{}\n",
        r.head,
        r.merge_base,
        if r.config_edited { "yes" } else { "no" },
        counts.join(", "),
        r.counts.total(),
        r.tests.len(),
        r.counts.total(),
        if r.truncated { " (line truncated)" } else { "" },
    );
    let row = |c: &str, b: &str, rr: &str, h: &str, test: &str| {
        format!("  {c:<14}  {b:<10}  {rr:<10}  {h:<10}  {test}\n")
    };
    if !r.tests.is_empty() {
        out += &row("CLASS", "BASE", "RERUN", "HEAD", "TEST");
    }
    for t in &r.tests {
        let test = printable(&format!("{}::{}", t.file, t.name));
        out += &row(
            t.class.as_str(),
            t.base.as_str(),
            t.rerun.as_str(),
            t.head.as_str(),
            &test,
        );
    }
    for (title, list) in [
        ("deleted tests", &r.deleted_tests),
        ("not collected", &r.not_collected),
    ] {
        if !list.is_empty() {
            out += &format!("{title}:\n");
            list.iter()
                .for_each(|p| out += &format!("  {}\n", printable(p)));
        }
    }
    if let Some(c) = &r.certificate {
        out += &format!("certificate:    {}\n", c.verdict);
        let mut field = |key: &str, value: String| {
            let _ = writeln!(out, "  {:<14}{value}", format!("{key}:"));
        };
        if let Some(msg) = &c.error {
            field("error", printable(msg));
        }
        if let Some(t) = &c.test {
            field("test", printable(&format!("{}::{}", t.file, t.name)));
        }
        for (key, size) in [("before", c.before), ("after", c.after)] {
            if let Some(s) = size {
                field(key, format!("files {}, bytes {}", s.files, s.bytes));
            }
        }
        if let Some(sha) = &c.content_sha256 {
            field("sha256", printable(sha));
        }
        if let Some(h) = &c.holdout {
            let (rate, conf) = (decimal(h.rate), decimal(h.confidence));
            field(
                "holdout",
                format!(
                    "{} of {} runs passed, {} required (rate {rate}, confidence {conf}, \
                     lower bound {})",
                    h.passes,
                    h.runs,
                    h.required_passes,
                    decimal(h.lower_bound)
                ),
            );
        }
    }
    if let Some(m) = &r.mutants {
        out += &format!("mutants:        {}\n", m.verdict);
        if let Some(msg) = &m.error {
            let _ = writeln!(out, "  error:        {}", printable(msg));
        }
        for x in &m.results {
            let failed = x.failed.as_ref().map_or_else(String::new, |f| {
                if f.is_empty() {
                    return " (no test failed)".to_string();
                }
                let names: Vec<String> = f.iter().map(|n| printable(n)).collect();
                format!(" (failed: {})", names.join(", "))
            });
            let mutation = printable(&format!("{}::{}", x.spec, x.name));
            let _ = writeln!(out, "  {:<14}  {mutation}{failed}", x.outcome.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const BASE: &str = "1f0e3d9c8b7a69584736251403f2e1d0c9b8a796";
    /// The first valid example of the schema doc.
    const VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced","error":null,"configEdited":false,"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"},{"file":"tests/test_parse.py","name":"TestParse::test_ascii","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":["tests/test_old.py"],"notCollected":[],"truncated":false,"certificate":null}"#;

    /// One refusal a line: `FROM ⟹ TO ⟹ MESSAGE`. The first FROM in VALID
    /// becomes TO, and the error must contain MESSAGE. In TO, `␍`, `␊`, `␉`
    /// and `␁` stand for a carriage return, newline, tab and U+0001.
    const REFUSALS: &str = r#"
repromin/v1  ⟹  ⟹ line does not start with `repromin/v1 `
repromin/v1  ⟹ repromin v1  ⟹ line does not start with
repromin/v1  ⟹ repromin/v1 ⟹ line does not start with
repromin/v1  ⟹ repromin/v2  ⟹ unsupported version `v2`: only `repromin/v1` lines
repromin/v1  ⟹ repromin/v1.1  ⟹ unsupported version `v1.1`
repromin/v1 { ⟹ repromin/v1  { ⟹ whitespace outside strings at byte 12
{"head": ⟹ { "head": ⟹ whitespace outside strings at byte 13
,"verdict" ⟹ , "verdict" ⟹ whitespace outside strings at byte
"verdict": ⟹ "verdict":  ⟹ whitespace outside strings
"certificate":null} ⟹ "certificate":null}  ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␍␊ ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␊␊ ⟹ whitespace outside strings at byte 638
"certificate":null} ⟹ "certificate":null}␉ ⟹ whitespace outside strings at byte 638
:[{ ⟹ :[␉{ ⟹ whitespace outside strings at byte 271
TestParse:: ⟹ Test␁Parse:: ⟹ invalid JSON at byte 313: control character (\u0000-\u001F) found while parsing a string
{"file":"tests/test_parse.py","name":"TestParse::test_empty_input" ⟹ ["tests/test_parse.py" ⟹ invalid JSON
"certificate":null} ⟹ "certificate":null}} ⟹ invalid JSON at byte 638: trailing characters
"certificate":null} ⟹ "certificate":null ⟹ invalid JSON at byte 636: EOF while parsing an object
repromin/v1 { ⟹ repromin/v1 [{ ⟹ invalid JSON at byte 638: EOF while parsing a list
"notCollected":[] ⟹ "notCollected":[,] ⟹ invalid JSON at byte 599: expected value
"notCollected":[] ⟹ "notCollected":["a",] ⟹ invalid JSON at byte 603: trailing comma
"notCollected":[] ⟹ "notCollected":['a'] ⟹ invalid JSON at byte 599: expected value
"notCollected":[] ⟹ "notCollected":[[]] ⟹ `notCollected[0]` must be a string, found an array
"tests/test_old.py"] ⟹ "tests/test_old.py] ⟹ invalid JSON
"tests/test_old.py" ⟹ "tests/\ud800.py" ⟹ invalid JSON at byte 575: unexpected end of hex escape
TestParse::test_empty_input ⟹ TestParse::test\qinput ⟹ invalid JSON at byte 325: invalid escape
"not-run":0 ⟹ "not-run":01 ⟹ invalid JSON at byte 260: invalid number
"not-run":0 ⟹ "not-run":1e400 ⟹ invalid JSON at byte 263: number out of range
"truncated":false ⟹ "truncated":fals ⟹ invalid JSON at byte 617: expected ident
"configEdited" ⟹ "configEdit" ⟹ unknown key `configEdit`
{"reproduces" ⟹ {"foo":0,"reproduces" ⟹ unknown key `foo` in `counts`
{"file" ⟹ {"path" ⟹ unknown key `path` in `tests[0]`
"error":null, ⟹  ⟹ missing key `error`
,"certificate":null ⟹  ⟹ missing key `certificate`
,"not-run":0 ⟹  ⟹ missing key `not-run` in `counts`
,"rerun":"failed" ⟹  ⟹ missing key `rerun` in `tests[0]`
{"head": ⟹ {"head":"x","head": ⟹ duplicate key `head`
"not-run":0 ⟹ "not-run":0,"not-run":0 ⟹ duplicate key `not-run` in `counts`
"class":"reproduces" ⟹ "class":"reproduces","class":"reproduces" ⟹ duplicate key `class` in `tests[0]`
"notCollected":[] ⟹ "notCollected":[],"notCollected":[] ⟹ duplicate key `notCollected`
"mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced" ⟹ "verdict":"reproduced","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796" ⟹ key `verdict` out of order: expected `mergeBase`
"new-api":0,"fails-on-head":0 ⟹ "fails-on-head":0,"new-api":0 ⟹ key `fails-on-head` out of order in `counts`: expected `new-api`
"file":"tests/test_parse.py","name":"TestParse::test_empty_input" ⟹ "name":"TestParse::test_empty_input","file":"tests/test_parse.py" ⟹ key `name` out of order in `tests[0]`: expected `file`
"truncated":false,"certificate":null ⟹ "certificate":null,"truncated":false ⟹ key `certificate` out of order: expected `truncated`
"configEdited":false ⟹ "configEdited":"false" ⟹ `configEdited` must be a boolean, found a string
"verdict":"reproduced" ⟹ "verdict":1 ⟹ `verdict` must be a string, found a number
"error":null ⟹ "error":false ⟹ `error` must be null or a string, found a boolean
"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904" ⟹ "head":null ⟹ `head` must be a string, found null
"deletedTests":["tests/test_old.py"] ⟹ "deletedTests":{"a":1} ⟹ `deletedTests` must be an array, found an object
"notCollected":[] ⟹ "notCollected":[1] ⟹ `notCollected[0]` must be a string, found a number
"truncated":false ⟹ "truncated":0 ⟹ `truncated` must be a boolean, found a number
"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0} ⟹ "counts":[1,1,0,0,0] ⟹ `counts` must be an object, found an array
{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"} ⟹ "x" ⟹ `tests[0]` must be an object, found a string
"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904" ⟹ "head":"4b825dc" ⟹ `head` must be a full 40-character lowercase hex SHA
4b825dc642cb6eb9a060e54bf8d69288fbee4904 ⟹ 4B825DC642CB6EB9A060E54BF8D69288FBEE4904 ⟹ `head` must be a full 40-character lowercase hex SHA
1f0e3d9c8b7a69584736251403f2e1d0c9b8a796 ⟹ 1f0e3d9c8b7a69584736251403f2e1d0c9b8a7961 ⟹ `mergeBase` must be a full 40-character
1f0e3d9c8b7a69584736251403f2e1d0c9b8a796 ⟹ 1f0e3d9c8b7a69584736251403f2e1d0c9b8a79g ⟹ `mergeBase` must be a full 40-character
"passes-on-base":1 ⟹ "passes-on-base":-1 ⟹ `counts.passes-on-base` must be a non-negative integer, found `-1`
"passes-on-base":1 ⟹ "passes-on-base":1.0 ⟹ must be a non-negative integer, found `1.0`
"passes-on-base":1 ⟹ "passes-on-base":1e0 ⟹ must be a non-negative integer, found `1.0`
"not-run":0 ⟹ "not-run":-0 ⟹ `counts.not-run` must be a non-negative integer, found `-0.0`
"not-run":0 ⟹ "not-run":18446744073709551616 ⟹ found `1.8446744073709552e19`
"passes-on-base":1 ⟹ "passes-on-base":"1" ⟹ `counts.passes-on-base` must be a non-negative integer, found a string
"verdict":"reproduced" ⟹ "verdict":"passed" ⟹ unknown value `passed` for `verdict`: expected one of `reproduced`, `unproven`, `vacuous`, `no-tests`, `error`
"class":"reproduces" ⟹ "class":"Reproduces" ⟹ unknown value `Reproduces` for `tests[0].class`
"rerun":"failed" ⟹ "rerun":"flaky" ⟹ unknown value `flaky` for `tests[0].rerun`
"head":"passed" ⟹ "head":"error" ⟹ unknown value `error` for `tests[0].head`
"error":null ⟹ "error":"boom" ⟹ `error` must be null when `verdict` is `reproduced`
"verdict":"reproduced" ⟹ "verdict":"error" ⟹ `error` must be a string when `verdict` is `error`
"verdict":"reproduced" ⟹ "verdict":"vacuous" ⟹ verdict `vacuous` contradicts `counts`, which call for `reproduced`
"verdict":"reproduced" ⟹ "verdict":"no-tests" ⟹ verdict `no-tests` contradicts `counts`
"verdict":"reproduced" ⟹ "verdict":"unproven" ⟹ verdict `unproven` contradicts `counts`
"reproduces":1 ⟹ "reproduces":0 ⟹ verdict `reproduced` contradicts `counts`, which call for `vacuous`
"reproduces":1,"passes-on-base":1 ⟹ "reproduces":2,"passes-on-base":0 ⟹ `tests` lists 1 entries of class `passes-on-base` but `counts.passes-on-base` is 0
"not-run":0 ⟹ "not-run":1 ⟹ `truncated` is false but `tests` lists 2 entries while the counts total 3
"certificate":null ⟹ "certificate":{} ⟹ missing key `verdict` in `certificate`
"certificate":null ⟹ "certificate":false ⟹ `certificate` must be null or an object, found a boolean
"certificate":null ⟹ "certificate":[] ⟹ `certificate` must be null or an object, found an array
"#;

    /// The first certificate example of the schema doc: [`VALID`] with a
    /// `certified` certificate.
    const CERT_VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"reproduced","error":null,"configEdited":false,"counts":{"reproduces":1,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_empty_input","class":"reproduces","base":"failed","rerun":"failed","head":"passed"},{"file":"tests/test_parse.py","name":"TestParse::test_ascii","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":["tests/test_old.py"],"notCollected":[],"truncated":false,"certificate":{"verdict":"certified","error":null,"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"},"before":{"files":12,"bytes":48213},"after":{"files":1,"bytes":412},"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28}}}"#;

    /// Refusals like [`REFUSALS`], made from [`CERT_VALID`].
    const CERT_REFUSALS: &str = r#"
"certificate":{"verdict" ⟹ "certificate":{"kind":"x","verdict" ⟹ unknown key `kind` in `certificate`
,"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹  ⟹ missing key `holdout` in `certificate`
"verdict":"certified" ⟹ "verdict":"certified","verdict":"certified" ⟹ duplicate key `verdict` in `certificate`
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"},"before":{"files":12,"bytes":48213} ⟹ "before":{"files":12,"bytes":48213},"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ key `before` out of order in `certificate`: expected `test`
"name":"TestParse::test_empty_input"} ⟹ "name":"TestParse::test_empty_input","x":1} ⟹ unknown key `x` in `certificate.test`
"test":{"file":"tests/test_parse.py", ⟹ "test":{ ⟹ missing key `file` in `certificate.test`
"before":{"files":12,"bytes":48213} ⟹ "before":{"bytes":48213,"files":12} ⟹ key `bytes` out of order in `certificate.before`: expected `files`
"after":{"files":1,"bytes":412} ⟹ "after":{"files":1} ⟹ missing key `bytes` in `certificate.after`
"after":{"files":1,"bytes":412} ⟹ "after":{"files":1,"bytes":412,"dirs":0} ⟹ unknown key `dirs` in `certificate.after`
"rate":0.8,"confidence":0.95 ⟹ "confidence":0.95,"rate":0.8 ⟹ key `confidence` out of order in `certificate.holdout`: expected `rate`
"requiredPasses":28 ⟹ "requiredPasses":28,"requiredPasses":28 ⟹ duplicate key `requiredPasses` in `certificate.holdout`
,"lowerBound":0.851404 ⟹  ⟹ missing key `lowerBound` in `certificate.holdout`
"verdict":"certified" ⟹ "verdict":"Certified" ⟹ unknown value `Certified` for `certificate.verdict`: expected one of `certified`, `not-certified`, `budget-exhausted`, `error`
"verdict":"certified" ⟹ "verdict":null ⟹ `certificate.verdict` must be a string, found null
"certified","error":null ⟹ "certified","error":7 ⟹ `certificate.error` must be null or a string, found a number
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ "test":["tests/test_parse.py"] ⟹ `certificate.test` must be null or an object, found an array
"test":{"file":"tests/test_parse.py" ⟹ "test":{"file":null ⟹ `certificate.test.file` must be a string, found null
"name":"TestParse::test_empty_input"} ⟹ "name":1} ⟹ `certificate.test.name` must be a string, found a number
"before":{"files":12,"bytes":48213} ⟹ "before":"12 files" ⟹ `certificate.before` must be null or an object, found a string
"files":12 ⟹ "files":-1 ⟹ `certificate.before.files` must be a non-negative integer, found `-1`
"bytes":48213 ⟹ "bytes":4.8213e4 ⟹ `certificate.before.bytes` must be a non-negative integer, found `48213.0`
"bytes":412 ⟹ "bytes":"412" ⟹ `certificate.after.bytes` must be a non-negative integer, found a string
"runs":30 ⟹ "runs":30.5 ⟹ `certificate.holdout.runs` must be a non-negative integer, found `30.5`
"runs":30 ⟹ "runs":18446744073709551616 ⟹ `certificate.holdout.runs` must be a non-negative integer, found `1.8446744073709552e19`
"contentSha256":"9f86 ⟹ "contentSha256":"9F86 ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
f00a08" ⟹ f00a0" ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
f00a08" ⟹ f00a08a" ⟹ `certificate.contentSha256` must be 64 lowercase hex digits
"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ⟹ "contentSha256":true ⟹ `certificate.contentSha256` must be null or a string, found a boolean
"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹ "holdout":0 ⟹ `certificate.holdout` must be null or an object, found a number
"rate":0.8 ⟹ "rate":"0.8" ⟹ `certificate.holdout.rate` must be a number, found a string
"lowerBound":0.851404 ⟹ "lowerBound":null ⟹ `certificate.holdout.lowerBound` must be a number, found null
"rate":0.8 ⟹ "rate":8e-1 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `8e-1`
"rate":0.8 ⟹ "rate":0.8E0 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `0.8E0`
"rate":0.8 ⟹ "rate":0.8e+0 ⟹ found `0.8e+0`
"rate":0.8 ⟹ "rate":0.8000001 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `0.8000001`
"rate":0.8 ⟹ "rate":0.8000000 ⟹ found `0.8000000`
"rate":0.8 ⟹ "rate":-0.8 ⟹ `certificate.holdout.rate` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `-0.8`
"lowerBound":0.851404 ⟹ "lowerBound":-0 ⟹ `certificate.holdout.lowerBound` must be a decimal number with at most 6 fraction digits, no exponent and no sign, found `-0`
"rate":0.8 ⟹ "rate":0 ⟹ `certificate.holdout.rate` must be in (0, 1), found `0.0`
"rate":0.8 ⟹ "rate":1 ⟹ `certificate.holdout.rate` must be in (0, 1), found `1.0`
"confidence":0.95 ⟹ "confidence":1.000000 ⟹ `certificate.holdout.confidence` must be in (0, 1), found `1.0`
"confidence":0.95 ⟹ "confidence":0.000000 ⟹ `certificate.holdout.confidence` must be in (0, 1), found `0.0`
"lowerBound":0.851404 ⟹ "lowerBound":1.5 ⟹ `certificate.holdout.lowerBound` must be in [0, 1], found `1.5`
"lowerBound":0.851404 ⟹ "lowerBound":10 ⟹ `certificate.holdout.lowerBound` must be in [0, 1], found `10.0`
"lowerBound":0.851404 ⟹ "lowerBound":1.000001 ⟹ must be in [0, 1], found `1.000001`
"passes":29 ⟹ "passes":31 ⟹ `certificate.holdout.passes` is 31, more than `certificate.holdout.runs` (30)
"requiredPasses":28 ⟹ "requiredPasses":31 ⟹ `certificate.holdout.requiredPasses` is 31, more than `certificate.holdout.runs` (30)
"passes":29 ⟹ "passes":27 ⟹ `certificate.verdict` is `certified` but `certificate.holdout.passes` (27) is below `certificate.holdout.requiredPasses` (28)
"verdict":"certified" ⟹ "verdict":"not-certified" ⟹ `certificate.verdict` is `not-certified` but `certificate.holdout.passes` (29) reaches `certificate.holdout.requiredPasses` (28)
"verdict":"certified","error":null ⟹ "verdict":"not-certified","error":null ⟹ reaches
"certified","error":null ⟹ "certified","error":"boom" ⟹ `certificate.error` must be null when `certificate.verdict` is `certified`
"verdict":"certified","error":null ⟹ "verdict":"budget-exhausted","error":"" ⟹ `certificate.error` must be null when `certificate.verdict` is `budget-exhausted`
"verdict":"certified" ⟹ "verdict":"error" ⟹ `certificate.error` must be a string when `certificate.verdict` is `error`
"test":{"file":"tests/test_parse.py","name":"TestParse::test_empty_input"} ⟹ "test":null ⟹ `certificate.test` must not be null when `certificate.verdict` is `certified`
"before":{"files":12,"bytes":48213} ⟹ "before":null ⟹ `certificate.before` must not be null when
"after":{"files":1,"bytes":412} ⟹ "after":null ⟹ `certificate.after` must not be null when
"contentSha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ⟹ "contentSha256":null ⟹ `certificate.contentSha256` must not be null when
"holdout":{"runs":30,"passes":29,"rate":0.8,"confidence":0.95,"lowerBound":0.851404,"requiredPasses":28} ⟹ "holdout":null ⟹ `certificate.holdout` must not be null when `certificate.verdict` is `certified`
"after":{"files":1 ⟹ "after":{"files":13 ⟹ `certificate.after.files` is 13, more than `certificate.before.files` (12)
"bytes":412 ⟹ "bytes":48214 ⟹ `certificate.after.bytes` is 48214, more than `certificate.before.bytes` (48213)
"#;

    fn sub(from: &str, to: &str) -> String {
        sub_in(VALID, from, to)
    }

    fn sub_in(line: &str, from: &str, to: &str) -> String {
        assert!(line.contains(from), "`{from}` is not in the valid line");
        line.replacen(from, to, 1)
    }

    fn refused(line: &str, want: &str) {
        match parse_line(line) {
            Ok(_) => panic!("accepted: {line:?}"),
            Err(e) => assert!(
                e.to_string().contains(want),
                "{line}\n want {want}\n got  {e}"
            ),
        }
    }

    #[test]
    fn every_refusal_has_its_message() {
        for (line, table) in [(VALID, REFUSALS), (CERT_VALID, CERT_REFUSALS)] {
            for case in table.lines().filter(|l| !l.is_empty()) {
                let parts: Vec<&str> = case.splitn(3, " ⟹ ").collect();
                assert_eq!(parts.len(), 3, "bad case: {case}");
                let to = parts[1]
                    .replace('␍', "\r")
                    .replace('␊', "\n")
                    .replace('␉', "\t");
                refused(&sub_in(line, parts[0], &to.replace('␁', "\u{1}")), parts[2]);
            }
        }
        let error = format!("\"verdict\":\"error\",\"error\":\"{}\"", "é".repeat(301));
        refused(
            &sub_in(
                CERT_VALID,
                "\"verdict\":\"certified\",\"error\":null",
                &error,
            ),
            "`certificate.error` is 301 characters, over the 300-character limit",
        );
        let long = sub("TestParse::test_ascii", &"x".repeat(4000));
        refused(
            &long,
            &format!("line is {} bytes, over the 4096-byte limit", long.len()),
        );
        let error = format!("\"verdict\":\"error\",\"error\":\"{}\"", "é".repeat(301));
        let line = sub("\"verdict\":\"reproduced\",\"error\":null", &error);
        refused(
            &line,
            "`error` is 301 characters, over the 300-character limit",
        );
        let deep = format!("\"notCollected\":{}{}", "[".repeat(1000), "]".repeat(1000));
        refused(
            &sub("\"notCollected\":[]", &deep),
            "recursion limit exceeded",
        );
    }

    #[test]
    fn valid_lines_parse() {
        let r = parse_line(VALID).expect("valid");
        assert_eq!(
            (r.verdict, r.tests.len(), r.counts.total()),
            (Verdict::Reproduced, 2, 2)
        );
        assert_eq!(r.deleted_tests, ["tests/test_old.py"]);
        assert_eq!(format_line(&r).as_deref(), Ok(VALID));
        assert_eq!(parse_line(&format!("{VALID}\n")), Ok(r.clone()));
        // A truncated `reproduced` line may list no test at all.
        let mut none = r.clone();
        (none.tests, none.truncated) = (vec![], true);
        assert_eq!(parse_line(&render(&none)), Ok(none));
        // An error line may carry any counts.
        let error = "\"verdict\":\"error\",\"error\":\"head run timed out\"";
        let line = sub("\"verdict\":\"reproduced\",\"error\":null", error);
        assert_eq!(parse_line(&line).map(|r| r.counts.reproduces), Ok(1));
        // Escapes decode to the same names the formatter writes plainly.
        let line = sub("TestParse::test_empty_input", r#"A::t\u00e9st\/\"q\"\n"#);
        assert_eq!(
            parse_line(&line).map(|r| r.tests[0].name.clone()),
            Ok("A::tést/\"q\"\n".into())
        );
        assert_eq!(TestClass::NAMES, TestClass::ALL.map(|c| c.as_str()));
    }

    fn test(name: &str, class: TestClass) -> TestLine {
        let (base, head) = match class {
            TestClass::Reproduces => (SideStatus::Failed, SideStatus::Passed),
            TestClass::PassesOnBase => (SideStatus::Passed, SideStatus::Passed),
            TestClass::NewApi => (SideStatus::LoadError, SideStatus::Passed),
            TestClass::FailsOnHead => (SideStatus::Failed, SideStatus::Failed),
            TestClass::NotRun => (SideStatus::Skipped, SideStatus::Absent),
        };
        let file = "tests/test_x.py".to_owned();
        TestLine {
            file,
            name: name.into(),
            class,
            base,
            rerun: base,
            head,
        }
    }

    fn result(tests: Vec<TestLine>) -> ResultLine {
        let counts = Counts::from_tests(&tests);
        ResultLine {
            head: HEAD.into(),
            merge_base: BASE.into(),
            verdict: counts.implied_verdict(),
            error: None,
            config_edited: false,
            counts,
            tests,
            deleted_tests: vec![],
            not_collected: vec![],
            truncated: false,
            certificate: None,
            mutants: None,
        }
    }

    /// The certificate of [`CERT_VALID`], about a test `name`.
    fn certified(name: &str) -> Certificate {
        Certificate {
            verdict: CertificateVerdict::Certified,
            error: None,
            test: Some(CertTest {
                file: "tests/test_parse.py".into(),
                name: name.into(),
            }),
            before: Some(TreeSize {
                files: 12,
                bytes: 48213,
            }),
            after: Some(TreeSize {
                files: 1,
                bytes: 412,
            }),
            content_sha256: Some(
                "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
            ),
            holdout: Some(Holdout {
                runs: 30,
                passes: 29,
                rate: 0.8,
                confidence: 0.95,
                lower_bound: 0.851404,
                required_passes: 28,
            }),
        }
    }

    fn hold(c: &mut Certificate) -> &mut Holdout {
        c.holdout.as_mut().expect("a holdout")
    }

    #[test]
    fn certificate_lines_parse() {
        use CertificateVerdict as V;
        let r = parse_line(CERT_VALID).expect("valid");
        assert_eq!(
            r.certificate,
            Some(certified("TestParse::test_empty_input"))
        );
        assert_eq!(format_line(&r).as_deref(), Ok(CERT_VALID));
        // Other spellings of the same values; the writer writes them shortest.
        for (from, to, written) in [
            ("\"rate\":0.8", "\"rate\":0.800000", "\"rate\":0.8,"),
            (
                "\"lowerBound\":0.851404",
                "\"lowerBound\":1.0",
                "\"lowerBound\":1,",
            ),
            (
                "\"lowerBound\":0.851404",
                "\"lowerBound\":0.000",
                "\"lowerBound\":0,",
            ),
            (
                "\"contentSha256\"",
                "\"content\\u0053ha256\"",
                "\"contentSha256\"",
            ),
        ] {
            let back = parse_line(&sub_in(CERT_VALID, from, to)).expect(to);
            assert!(
                format_line(&back).is_ok_and(|l| l.contains(written)),
                "{to}"
            );
        }
        // What the rules allow round-trips, the line's own rules ignoring
        // the certificate.
        let mut good = result(vec![test("t", TestClass::Reproduces)]);
        good.certificate = Some(certified("t"));
        type Mutation = fn(&mut ResultLine);
        fn cert(r: &mut ResultLine) -> &mut Certificate {
            r.certificate.as_mut().expect("a certificate")
        }
        let fine: [Mutation; 12] = [
            |r| (r.verdict, r.error) = (Verdict::Error, Some("boom".into())),
            |r| hold(cert(r)).rate = 0.000001,
            |r| hold(cert(r)).confidence = 0.999999,
            |r| hold(cert(r)).lower_bound = 0.0,
            |r| hold(cert(r)).lower_bound = 1.0,
            |r| (cert(r).verdict, cert(r).error) = (V::Error, Some(String::new())),
            |r| (cert(r).verdict, cert(r).holdout) = (V::NotCertified, None),
            |r| (cert(r).verdict, hold(cert(r)).passes) = (V::NotCertified, 27),
            |r| (cert(r).verdict, cert(r).test) = (V::BudgetExhausted, None),
            |r| (cert(r).verdict, hold(cert(r)).passes) = (V::BudgetExhausted, 0),
            |r| {
                (cert(r).verdict, cert(r).after) = (
                    V::BudgetExhausted,
                    Some(TreeSize {
                        files: 99,
                        bytes: 1 << 40,
                    }),
                )
            },
            |r| {
                let c = cert(r);
                (c.verdict, c.test, c.before, c.after) = (V::BudgetExhausted, None, None, None);
                (c.content_sha256, c.holdout) = (None, None);
            },
        ];
        for mutate in fine {
            let mut r = good.clone();
            mutate(&mut r);
            let line = format_line(&r).expect("formats");
            assert_eq!(parse_line(&line), Ok(r));
        }
        assert_eq!(V::NAMES, V::ALL.map(|v| v.as_str()));
        assert_eq!(V::from_name("budget-exhausted"), Some(V::BudgetExhausted));
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
        for (mutate, want) in bad {
            let mut r = good.clone();
            mutate(&mut r);
            let e = format_line(&r).expect_err(want);
            assert!(e.to_string().contains(want), "wanted {want}, got {e}");
            assert_eq!(parse_line(&render(&r)).map(|_| ()), Err(e));
        }
        assert!(format_line(&good).is_ok());
    }

    /// A small deterministic generator (xorshift) for round-trip tests.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
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
                let mut t = test(&self.text(width), TestClass::ALL[self.below(5) as usize]);
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

    /// Whether `part` keeps a prefix of the entries of `whole` that `pred` picks.
    fn keeps_prefix<T: PartialEq>(whole: &[T], part: &[T], pred: impl Fn(&T) -> bool) -> bool {
        let w: Vec<&T> = whole.iter().filter(|t| pred(t)).collect();
        let p: Vec<&T> = part.iter().filter(|t| pred(t)).collect();
        w.starts_with(&p)
    }

    #[test]
    fn generated_results_round_trip() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
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
            2672,
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
        assert_eq!(line.len(), 2233, "the longest line with empty lists");
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
    fn pretty_shows_the_result() {
        let mut r = parse_line(VALID).expect("valid");
        r.tests[1].name = "B::\u{1b}[31mred".into();
        let text = pretty(&r);
        let wants = [
            "verdict:        reproduced\n",
            &format!("head:           {HEAD}\n"),
            &format!("merge base:     {BASE}\n"),
            "counts:         reproduces 1, passes-on-base 1, new-api 0, fails-on-head 0, not-run 0 (total 2)",
            "tests:          2 of 2 listed\n",
            "  reproduces      failed      failed      passed      tests/test_parse.py::TestParse::test_empty_input\n",
            "tests/test_parse.py::B::\\u{1b}[31mred",
            "deleted tests:\n  tests/test_old.py\n",
        ];
        for want in wants {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(!text.contains('\u{1b}') && !text.contains("certificate"));
        let text = pretty(&parse_line(CERT_VALID).expect("valid"));
        let wants = [
            "certificate:    certified\n",
            "  test:         tests/test_parse.py::TestParse::test_empty_input\n",
            "  before:       files 12, bytes 48213\n",
            "  after:        files 1, bytes 412\n",
            "  sha256:       9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
            "  holdout:      29 of 30 runs passed, 28 required \
             (rate 0.8, confidence 0.95, lower bound 0.851404)\n",
        ];
        for want in wants {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(!text.contains("  error:"));
        let mut r = parse_line(CERT_VALID).expect("valid");
        r.certificate = Some(Certificate {
            verdict: CertificateVerdict::Error,
            error: Some("reducer \u{7}crashed".into()),
            test: None,
            before: None,
            after: None,
            content_sha256: None,
            holdout: None,
        });
        let text = pretty(&r);
        assert!(
            text.ends_with("certificate:    error\n  error:        reducer \\u{7}crashed\n"),
            "{text}"
        );
    }

    /// The first mutants example of the schema doc: a pull request of tests
    /// alone whose spec's second mutant survived.
    const MUT_VALID: &str = r#"repromin/v1 {"head":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mergeBase":"1f0e3d9c8b7a69584736251403f2e1d0c9b8a796","verdict":"vacuous","error":null,"configEdited":false,"counts":{"reproduces":0,"passes-on-base":1,"new-api":0,"fails-on-head":0,"not-run":0},"tests":[{"file":"tests/test_parse.py","name":"TestParse::test_quotes","class":"passes-on-base","base":"passed","rerun":"passed","head":"passed"}],"deletedTests":[],"notCollected":[],"truncated":false,"certificate":null,"mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]}}"#;

    /// Refusals made from [`MUT_VALID`]: what is changed, then `FROM ⟹ TO`.
    const MUT_REFUSALS: &str = r#"
unknown key beside it ⟹ ,"mutants":{"verdict":"not-killed" ⟹ ,"mutants":null,"x":{"verdict":"not-killed"
null value ⟹ "mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":null
before the certificate ⟹ "certificate":null,"mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":{"verdict":"not-killed","results":[]},"certificate":null
twice ⟹ "certificate":null, ⟹ "certificate":null,"mutants":{"verdict":"error","results":[],"error":"x"},
unknown key ⟹ {"verdict":"not-killed" ⟹ {"kind":"x","verdict":"not-killed"
missing results ⟹ "not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "not-killed"
reordered ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "results":[],"verdict":"not-killed"
error before results ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","error":"x","results":[]
unknown verdict ⟹ "verdict":"not-killed" ⟹ "verdict":"survived"
unknown outcome ⟹ "outcome":"killed" ⟹ "outcome":"dead"
entry key unknown ⟹ "outcome":"killed"} ⟹ "outcome":"killed","line":3}
entry key reordered ⟹ {"spec":"tests/test_parse.mutations.json","name":"drop-quote" ⟹ {"name":"drop-quote","spec":"tests/test_parse.mutations.json"
failed not an array ⟹ "failed":["TestParse::test_ascii"] ⟹ "failed":"TestParse::test_ascii"
failed on killed ⟹ "outcome":"killed"} ⟹ "outcome":"killed","failed":[]}
no failed on survived ⟹ ,"failed":["TestParse::test_ascii"] ⟹ 
killed over survived ⟹ "verdict":"not-killed" ⟹ "verdict":"killed"
not-killed over all killed ⟹ "outcome":"survived","failed":["TestParse::test_ascii"] ⟹ "outcome":"killed"
twice the same mutant ⟹ "name":"off-by-one" ⟹ "name":"drop-quote"
error without message ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","results":[]
error with results ⟹ "mutants":{"verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}]} ⟹ "mutants":{"verdict":"error","results":[{"spec":"a","name":"b","outcome":"killed"}],"error":"boom"}
message without error ⟹ "failed":["TestParse::test_ascii"]}]} ⟹ "failed":["TestParse::test_ascii"]}],"error":"boom"}
message not a string ⟹ "verdict":"not-killed","results":[{"spec":"tests/test_parse.mutations.json","name":"drop-quote","outcome":"killed"},{"spec":"tests/test_parse.mutations.json","name":"off-by-one","outcome":"survived","failed":["TestParse::test_ascii"]}] ⟹ "verdict":"error","results":[],"error":null
"#;

    fn mutants_of(r: &mut ResultLine) -> &mut Mutants {
        r.mutants.as_mut().expect("a mutants field")
    }

    #[test]
    fn mutants_refusals_name_their_rule() {
        let mut out = String::new();
        for case in MUT_REFUSALS.lines().filter(|l| !l.is_empty()) {
            let parts: Vec<&str> = case.splitn(3, " ⟹ ").collect();
            assert_eq!(parts.len(), 3, "bad case: {case}");
            let line = sub_in(MUT_VALID, parts[1], parts[2]);
            let err = parse_line(&line).expect_err(parts[0]);
            out.push_str(&format!("{}: {err}\n", parts[0]));
        }
        let long = format!(
            "\"verdict\":\"error\",\"results\":[],\"error\":\"{}\"",
            "é".repeat(301)
        );
        let from = &MUT_VALID[MUT_VALID
            .find("\"verdict\":\"not-killed\"")
            .expect("verdict")..];
        let from = &from[..from.len() - 2];
        let err = parse_line(&sub_in(MUT_VALID, from, &long)).expect_err("too long");
        out.push_str(&format!("301-character message: {err}\n"));
        insta::assert_snapshot!(out);
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
        for (mutate, want) in bad {
            let mut r = good.clone();
            mutate(&mut r);
            let e = format_line(&r).expect_err(want);
            assert!(e.to_string().contains(want), "wanted {want}, got {e}");
            assert_eq!(parse_line(&render(&r)).map(|_| ()), Err(e));
        }
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
    fn mutants_lines_round_trip() {
        let r = parse_line(MUT_VALID).expect("valid");
        assert_eq!(format_line(&r).as_deref(), Ok(MUT_VALID));
        let m = r.mutants.as_ref().expect("a mutants field");
        assert_eq!(m.verdict, MutantsVerdict::NotKilled);
        assert_eq!(
            m.results[1].failed.as_deref(),
            Some(&["TestParse::test_ascii".to_string()][..])
        );
        // Every outcome and verdict round-trips, `failed` only where it belongs.
        let mut all = r.clone();
        mutants_of(&mut all).results = MutantOutcome::ALL
            .iter()
            .enumerate()
            .map(|(i, o)| MutantLine {
                spec: "tests/test_parse.mutations.json".into(),
                name: format!("m{i}"),
                outcome: *o,
                failed: o
                    .lists_failed()
                    .then(|| vec!["A::\"b\"".into(), "c\u{1}".into()]),
            })
            .collect();
        let error = Mutants {
            verdict: MutantsVerdict::Error,
            results: vec![],
            error: Some("`tests/test_parse.mutations.json` has no test file beside it".into()),
        };
        let mut errored = r.clone();
        errored.mutants = Some(error);
        let mut killed = r.clone();
        mutants_of(&mut killed).results.truncate(1);
        mutants_of(&mut killed).verdict = MutantsVerdict::Killed;
        // A mutant that no test caught lists no failed test, and says so.
        let mut uncaught = r.clone();
        mutants_of(&mut uncaught).results[1].failed = Some(Vec::new());
        let mut shown = String::new();
        for x in [&r, &all, &errored, &killed, &uncaught] {
            let line = format_line(x).expect("formats");
            assert_eq!(parse_line(&line).as_ref(), Ok(x));
            shown.push_str(&line);
            shown.push('\n');
            shown.push_str(&pretty(x));
            shown.push('\n');
        }
        // No field at all is a line without the check.
        let mut none = r.clone();
        none.mutants = None;
        let line = format_line(&none).expect("formats");
        assert!(line.ends_with("\"certificate\":null}") && !line.contains("mutants"));
        insta::assert_snapshot!(shown);
        assert_eq!(MutantOutcome::NAMES, MutantOutcome::ALL.map(|o| o.as_str()));
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

    /// Blocks of `docs/line-schema.md` tagged `text valid` must parse and
    /// format back unchanged; blocks tagged `text invalid: MSG` must be
    /// refused with an error that contains MSG once backquotes are removed.
    #[test]
    fn schema_doc_examples() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/line-schema.md");
        let doc = std::fs::read_to_string(path).expect("read the schema doc");
        let (mut valid, mut invalid) = (0, 0);
        let mut lines = doc.lines();
        while let Some(fence) = lines.next() {
            let Some(tag) = fence.strip_prefix("```text ") else {
                continue;
            };
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            assert_eq!(body.len(), 1, "an example block holds one line: {fence}");
            if tag == "valid" {
                let r = parse_line(body[0]).unwrap_or_else(|e| panic!("{e}: {}", body[0]));
                assert_eq!(format_line(&r).as_deref(), Ok(body[0]));
                valid += 1;
            } else if let Some(want) = tag.strip_prefix("invalid: ") {
                let e = parse_line(body[0])
                    .expect_err(body[0])
                    .to_string()
                    .replace('`', "");
                assert!(e.contains(want), "wanted {want}, got {e}: {}", body[0]);
                invalid += 1;
            } else {
                panic!("unknown example tag: {fence}");
            }
        }
        assert!(
            valid >= 5 && invalid >= 20,
            "{valid} valid, {invalid} invalid examples"
        );
        assert!(doc.contains(VALID), "VALID is the doc's first example");
        assert!(doc.contains(CERT_VALID), "CERT_VALID is a doc example");
        assert!(doc.contains(MUT_VALID), "MUT_VALID is a doc example");
    }
}

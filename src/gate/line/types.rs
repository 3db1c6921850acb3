//! The values a `repromin/v1` line carries: the [`ResultLine`] and its parts, and the
//! fixed spellings of its verdicts, classes, statuses and outcomes.

use std::fmt;

use serde::Serialize;

/// Values spelled as fixed strings on the line.
pub(super) trait Named: Copy + 'static {
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

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

named_enum! {
    /// The overall outcome of a gate run.
    Verdict[6] {
        /// Some test fails on the merge base and passes on head, every time it was run,
        /// often enough to rule out chance.
        Reproduced = "reproduced",
        /// Nothing reproduces, but some test needs API that the base lacks.
        Unproven = "unproven",
        /// Tests ran, but none of them shows what the change does.
        Vacuous = "vacuous",
        /// No test was selected or found.
        NoTests = "no-tests",
        /// The gate itself failed; `error` says why.
        Error = "error",
        /// Nothing reproduces, but some test failed on the merge base and passed on head
        /// only some of the times it ran there, or too few times to rule out chance.
        Flaky = "flaky",
    }
}

named_enum! {
    /// What one test shows about the change.
    TestClass[6] {
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
        /// Failed on the merge base and passed on head, but not every time it ran there,
        /// or too few times to rule out chance; `runs` says how often.
        Flaky = "flaky",
    }
}

impl TestClass {
    /// The classes every `counts` object names; `flaky` follows them only when its count
    /// is not zero.
    pub const ALWAYS_COUNTED: [TestClass; 5] = [
        TestClass::Reproduces,
        TestClass::PassesOnBase,
        TestClass::NewApi,
        TestClass::FailsOnHead,
        TestClass::NotRun,
    ];
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MutantLine {
    /// The spec's path, e.g. `tests/test_parse.mutations.json`.
    pub spec: String,
    /// The mutation's name in its spec.
    pub name: String,
    /// How it came out.
    pub outcome: MutantOutcome,
    /// The tests that failed under it; present exactly for `overkill` and `survived`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<String>>,
}

/// The mutation check of a pull request that changes tests alone and adds or
/// changes a spec. It never changes the line's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mutants {
    /// The check's verdict.
    pub verdict: MutantsVerdict,
    /// One entry per mutation; only some of them when the line is `truncated`.
    pub results: Vec<MutantLine>,
    /// Why the check failed; present exactly when its verdict is `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The test that a certificate is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CertTest {
    /// The test's file, e.g. `tests/test_x.py`.
    pub file: String,
    /// The test's full name in its file, e.g. `Cls::test_y`.
    pub name: String,
}

/// The size of a tree of files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TreeSize {
    /// How many files.
    pub files: u64,
    /// How many bytes, all files together.
    pub bytes: u64,
}

/// The holdout runs of a reduced case. The three fractions must already be
/// rounded to at most six decimals, e.g. with `(x * 1e6).round() / 1e6`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
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
    /// Tests of class `flaky`; the key is on the line only when this is not zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub flaky: u64,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Counts {
    pub(super) fn from_fn(mut f: impl FnMut(TestClass) -> u64) -> Self {
        Counts {
            reproduces: f(TestClass::Reproduces),
            passes_on_base: f(TestClass::PassesOnBase),
            new_api: f(TestClass::NewApi),
            fails_on_head: f(TestClass::FailsOnHead),
            not_run: f(TestClass::NotRun),
            flaky: f(TestClass::Flaky),
        }
    }

    /// How many of `classes` fall in each class: the one count of tests by
    /// class, for the line, the judge's table and the summary alike.
    pub fn tally(classes: impl IntoIterator<Item = TestClass>) -> Self {
        let mut counts = Counts::default();
        for class in classes {
            *counts.get_mut(class) += 1;
        }
        counts
    }

    /// The classes to show with their counts: the five always counted, then `flaky` when
    /// its count is not zero (as on the line).
    pub fn shown(&self) -> impl Iterator<Item = (TestClass, u64)> + '_ {
        TestClass::ALL
            .into_iter()
            .filter(|c| *c != TestClass::Flaky || self.flaky > 0)
            .map(|c| (c, self.get(c)))
    }

    /// The counts of the given tests, class by class.
    pub fn from_tests(tests: &[TestLine]) -> Self {
        Counts::tally(tests.iter().map(|t| t.class))
    }

    fn get_mut(&mut self, class: TestClass) -> &mut u64 {
        match class {
            TestClass::Reproduces => &mut self.reproduces,
            TestClass::PassesOnBase => &mut self.passes_on_base,
            TestClass::NewApi => &mut self.new_api,
            TestClass::FailsOnHead => &mut self.fails_on_head,
            TestClass::NotRun => &mut self.not_run,
            TestClass::Flaky => &mut self.flaky,
        }
    }

    /// The count of one class.
    pub fn get(&self, class: TestClass) -> u64 {
        match class {
            TestClass::Reproduces => self.reproduces,
            TestClass::PassesOnBase => self.passes_on_base,
            TestClass::NewApi => self.new_api,
            TestClass::FailsOnHead => self.fails_on_head,
            TestClass::NotRun => self.not_run,
            TestClass::Flaky => self.flaky,
        }
    }

    /// The sum of the counts, in a type wide enough never to overflow.
    pub fn total(&self) -> u128 {
        TestClass::ALL.map(|c| u128::from(self.get(c))).iter().sum()
    }

    /// The verdict these counts call for unless the gate failed: `no-tests`
    /// when the total is 0, else `reproduced` when `reproduces > 0`, else
    /// `flaky` when `flaky > 0`, else `unproven` when `new-api > 0`, else
    /// `vacuous`.
    pub fn implied_verdict(&self) -> Verdict {
        match (self.total(), self.reproduces, self.flaky, self.new_api) {
            (0, _, _, _) => Verdict::NoTests,
            (_, 1.., _, _) => Verdict::Reproduced,
            (_, _, 1.., _) => Verdict::Flaky,
            (_, _, _, 1..) => Verdict::Unproven,
            _ => Verdict::Vacuous,
        }
    }
}

/// One entry of `tests`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    /// How often it failed on the merge base and passed on head, over every run; present
    /// exactly when the class is `flaky`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Runs>,
}

/// The runs of a `flaky` test: `failed k of n on base, passed m of n on head`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Runs {
    /// Runs on the merge base (with the head's tests) in which it failed.
    pub base_failed: u64,
    /// Runs on the merge base that reported it.
    pub base_runs: u64,
    /// Runs on head in which it passed.
    pub head_passed: u64,
    /// Runs on head that reported it.
    pub head_runs: u64,
}

impl fmt::Display for Runs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "failed {} of {} on base, passed {} of {} on head",
            self.base_failed, self.base_runs, self.head_passed, self.head_runs
        )
    }
}

/// A whole `repromin/v1` result, as one line carries it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutants: Option<Mutants>,
    /// The tests that pass on the merge base and fail on head, outside the selected
    /// files; `None` (no key on the line) unless the whole suite, or a listed part of it,
    /// was asked to run on both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regressions: Option<Regressions>,
}

/// The `regressions` key: the tests of the suite that pass on the merge base and fail on
/// head.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Regressions {
    /// How many, also when the line lists only some of them.
    pub count: u64,
    /// The tests; only some of them when the line is `truncated`.
    pub tests: Vec<RegressionTest>,
}

/// One entry of `regressions.tests`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegressionTest {
    /// The test's file, e.g. `tests/test_x.py`.
    pub file: String,
    /// The test's full name in its file.
    pub name: String,
}

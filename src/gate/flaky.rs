//! The reruns that tell a test that reproduces from one that fails at random.
//!
//! The first runs (two on the merge base, one at head) pick the *candidates*: the tests
//! that failed both base runs, for another reason than a missing symbol, and passed at head.
//! Each side then reruns its own candidates, by test id where the runner allows it: the
//! base side the tests that failed both its runs, the head side the tests that passed its
//! run (or, when `run` already knows the base side's candidates, those of them). A test is
//! rerun until it contradicts its side (a pass on base, any other outcome on head) or has
//! had the reruns planned for the number of candidates ([`planned`]). The judge counts
//! each candidate's reruns and calls it reproducing only when every one agrees and
//! [`crate::stats::flake::reproduces`] rules out chance at the configured error rate,
//! spread over the candidates; any other candidate, and any test that failed one base run
//! and passed the other, is `flaky`, with its run counts.

use std::collections::HashMap;

use crate::gate::config::FlakyConfig;
use crate::gate::encode::Rerun;
use crate::gate::line::{Runs, SideStatus};
use crate::gate::test_report::{FileResult, Status, TestCase, TestReport, names_missing_symbol};

/// One test of a report: its file, its full name, and which of the tests of that name in
/// its file it is (duplicate names pair by occurrence).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TestId {
    /// The test file.
    pub file: String,
    /// The full name.
    pub name: String,
    /// Which of the tests of that name in the file, from 0.
    pub occurrence: usize,
}

impl TestId {
    /// Every test of `file`, for a file whose runs ended without a report (timed out,
    /// killed): its tests are not known by name, and all of them failed.
    pub(crate) fn whole_file(file: &str) -> TestId {
        TestId {
            file: file.to_string(),
            name: String::new(),
            occurrence: usize::MAX,
        }
    }

    /// Whether this stands for every test of its file.
    pub(crate) fn is_whole_file(&self) -> bool {
        self.occurrence == usize::MAX
    }

    /// Whether `list` holds this test, itself or through its whole file.
    pub(crate) fn in_list(&self, list: &[TestId]) -> bool {
        list.iter()
            .any(|id| id == self || (id.is_whole_file() && id.file == self.file))
    }
}

/// Every test of `report` with its identity, in report order.
fn tests_of(report: &TestReport) -> impl Iterator<Item = (TestId, &TestCase)> {
    report.files.iter().flat_map(|file| {
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        file.tests.iter().map(move |test| {
            let occurrence = seen.entry(test.name.as_str()).or_insert(0);
            let id = TestId {
                file: file.path.clone(),
                name: test.name.clone(),
                occurrence: *occurrence,
            };
            *occurrence += 1;
            (id, test)
        })
    })
}

/// How `id` came out in `report`, with its first failure message.
pub(crate) fn status_in<'r>(report: &'r TestReport, id: &TestId) -> (SideStatus, Option<&'r str>) {
    let Some(file) = report.files.iter().find(|f| f.path == id.file) else {
        return (SideStatus::Absent, None);
    };
    if id.is_whole_file() && file.crashed.is_none() && file.load_error.is_none() {
        return (ran_as_a_whole(file), None);
    }
    status_in_file(file, &id.name, id.occurrence)
}

/// How a file that ran (no load error, no crash) came out as a whole: failed when any of
/// its tests failed, absent when it reported none.
fn ran_as_a_whole(file: &FileResult) -> SideStatus {
    let failed = file.tests.iter().any(|t| t.status == Status::Failed);
    match (file.tests.is_empty(), failed) {
        (true, _) => SideStatus::Absent,
        (false, true) => SideStatus::Failed,
        (false, false) => SideStatus::Passed,
    }
}

/// How the `occurrence`-th test called `name` came out in `file`, with its first failure
/// message: a file that did not load is a load error, a file whose run crashed failed.
pub(crate) fn status_in_file<'r>(
    file: &'r FileResult,
    name: &str,
    occurrence: usize,
) -> (SideStatus, Option<&'r str>) {
    if let Some(message) = &file.load_error {
        return (SideStatus::LoadError, Some(message));
    }
    if let Some(how) = &file.crashed {
        return (SideStatus::Failed, Some(how));
    }
    let Some(test) = file.tests.iter().filter(|t| t.name == name).nth(occurrence) else {
        return (SideStatus::Absent, None);
    };
    status_of_test(test)
}

/// A file of a report indexed by test name, so that looking up the `occurrence`-th test of
/// a name costs the same whatever the number of tests (a file of many tests with one name
/// would otherwise make every lookup a scan of the file).
pub(crate) struct FileIndex<'r> {
    /// The file.
    pub file: &'r FileResult,
    names: HashMap<&'r str, Vec<&'r TestCase>>,
}

impl<'r> FileIndex<'r> {
    /// Indexes `file`'s tests by name, in report order.
    pub(crate) fn new(file: &'r FileResult) -> Self {
        let mut names: HashMap<&str, Vec<&TestCase>> = HashMap::new();
        for test in &file.tests {
            names.entry(test.name.as_str()).or_default().push(test);
        }
        FileIndex { file, names }
    }

    /// What [`status_in_file`] says of the `occurrence`-th test called `name`.
    pub(crate) fn status(&self, name: &str, occurrence: usize) -> (SideStatus, Option<&'r str>) {
        let file = self.file;
        if let Some(message) = &file.load_error {
            return (SideStatus::LoadError, Some(message));
        }
        if let Some(how) = &file.crashed {
            return (SideStatus::Failed, Some(how));
        }
        let Some(test) = self.names.get(name).and_then(|t| t.get(occurrence)) else {
            return (SideStatus::Absent, None);
        };
        status_of_test(test)
    }
}

/// A test's status, with its first failure message when it failed.
fn status_of_test(test: &TestCase) -> (SideStatus, Option<&str>) {
    let message = test.messages.first().map(String::as_str);
    match test.status {
        Status::Passed => (SideStatus::Passed, None),
        Status::Failed => (SideStatus::Failed, message),
        Status::Skipped => (SideStatus::Skipped, None),
    }
}

/// Whether a base run's outcome is a plain failure: failed, for another reason than a
/// missing symbol (which makes the test `new-api`).
fn plain_failure(status: SideStatus, message: Option<&str>) -> bool {
    status == SideStatus::Failed && !message.is_some_and(names_missing_symbol)
}

/// The base side's candidates: the tests that failed plainly on both base runs, and the
/// files whose two runs both ended without a report (every test of them failed).
pub(crate) fn base_candidates(base: &TestReport, rerun: &TestReport) -> Vec<TestId> {
    let crashed = |report: &TestReport, path: &str| {
        report
            .files
            .iter()
            .any(|f| f.path == path && f.crashed.is_some())
    };
    let whole_files = base
        .files
        .iter()
        .filter(|f| f.crashed.is_some() && crashed(rerun, &f.path))
        .map(|f| TestId::whole_file(&f.path));
    tests_of(base)
        .filter(|(id, test)| {
            let first = test.status == Status::Failed
                && !test
                    .messages
                    .first()
                    .is_some_and(|m| names_missing_symbol(m));
            let (status, message) = status_in(rerun, id);
            first && plain_failure(status, message)
        })
        .map(|(id, _)| id)
        .chain(whole_files)
        .collect()
}

/// The base side's candidates as `run` hands them to the head side: those the first runs
/// chose, which the judge counts, and those of them that no base rerun contradicted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BaseCandidates {
    /// Chosen by the two base runs.
    pub chosen: Vec<TestId>,
    /// Of those, the ones that failed every base rerun that reported them.
    pub still_failing: Vec<TestId>,
}

impl BaseCandidates {
    /// The candidates of the base side's runs and reruns.
    pub(crate) fn new(base: &TestReport, rerun: &TestReport, reruns: &[Rerun]) -> Self {
        let chosen = base_candidates(base, rerun);
        let still_failing = chosen
            .iter()
            .filter(|id| {
                reruns.iter().all(|r| {
                    matches!(
                        status_in(&r.report, id).0,
                        SideStatus::Failed | SideStatus::Absent
                    )
                })
            })
            .cloned()
            .collect();
        BaseCandidates {
            chosen,
            still_failing,
        }
    }
}

/// The head side's candidates, and how many the reruns are planned for: the tests that
/// passed on head, and, when the base side's candidates are known (`run`), only those of
/// them that it chose, of which only those it did not settle are rerun.
pub(crate) fn head_candidates(
    head: &TestReport,
    base: Option<&BaseCandidates>,
) -> (Vec<TestId>, usize) {
    let passed = tests_of(head).filter(|(_, test)| test.status == Status::Passed);
    let Some(base) = base else {
        let all: Vec<TestId> = passed.map(|(id, _)| id).collect();
        let n = all.len();
        return (all, n);
    };
    let chosen: Vec<TestId> = passed
        .map(|(id, _)| id)
        .filter(|id| id.in_list(&base.chosen))
        .collect();
    let n = hypotheses(&chosen, |id| {
        base.chosen
            .iter()
            .any(|c| c.is_whole_file() && c.file == id.file)
    });
    let open = chosen
        .into_iter()
        .filter(|id| id.in_list(&base.still_failing))
        .collect();
    (open, n)
}

/// How many hypotheses `candidates` make, the count the error rate is spread over: one per
/// candidate, except that the candidates of one file whose base runs all ended without a
/// report (`by_whole_file`) make one together.
///
/// Their base runs are one event, the file's run, which failed them all at once. Under the
/// null hypothesis the change does nothing to that file, so its run ends without a report
/// with one probability on both sides, and a head run in which any of its tests passed is
/// one that did not: all the file's candidates together are called reproducing with at
/// most the probability that bounds one (see docs/statistics.md).
pub(crate) fn hypotheses<'a>(
    candidates: impl IntoIterator<Item = &'a TestId>,
    by_whole_file: impl Fn(&TestId) -> bool,
) -> usize {
    let mut files = std::collections::HashSet::new();
    candidates
        .into_iter()
        .filter(|id| !by_whole_file(id) || files.insert(id.file.as_str()))
        .count()
}

/// The reruns a side plans for `candidates` tests: the fewest that can rule out chance,
/// capped by `max_reruns`; 0 without candidates.
pub(crate) fn planned(candidates: usize, config: &FlakyConfig) -> u64 {
    if candidates == 0 {
        return 0;
    }
    let n = u64::try_from(candidates).unwrap_or(u64::MAX);
    crate::stats::flake::planned_reruns(n, config.error_rate)
        .ok()
        .flatten()
        .unwrap_or(config.max_reruns)
        .min(config.max_reruns)
}

/// `report` with only the tests of `ids` (every test of their names, so that occurrences
/// keep their order), without messages: what a rerun keeps.
pub(crate) fn keep_only(report: &TestReport, ids: &[TestId]) -> TestReport {
    let files: std::collections::HashSet<&str> = ids.iter().map(|id| id.file.as_str()).collect();
    let whole: std::collections::HashSet<&str> = ids
        .iter()
        .filter(|id| id.is_whole_file())
        .map(|id| id.file.as_str())
        .collect();
    let tests: std::collections::HashSet<(&str, &str)> = ids
        .iter()
        .map(|id| (id.file.as_str(), id.name.as_str()))
        .collect();
    report.statuses_only(
        |f| files.contains(f.path.as_str()),
        |f, t| {
            whole.contains(f.path.as_str()) || tests.contains(&(f.path.as_str(), t.name.as_str()))
        },
    )
}

/// What the reruns of one candidate show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Every rerun agreed, often enough to rule out chance.
    Reproduces,
    /// A rerun disagreed, or too few agreed: the runs, first runs included.
    Flaky(Runs),
}

/// A rerun's report indexed by file and test name, so that the judge looks each candidate
/// up in constant time whatever the size of the report.
pub(crate) struct RerunIndex<'r> {
    files: HashMap<&'r str, (&'r FileResult, HashMap<&'r str, Vec<Status>>)>,
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the tests' reference count")
    )]
    limit_ms: Option<u64>,
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the tests' reference count")
    )]
    duration_ms: Option<u64>,
}

impl<'r> RerunIndex<'r> {
    /// Indexes `rerun`'s report (a file listed twice: the first).
    pub(crate) fn new(rerun: &'r Rerun) -> Self {
        let report = &rerun.report;
        let mut files = HashMap::new();
        for file in &report.files {
            files.entry(file.path.as_str()).or_insert_with(|| {
                let mut names: HashMap<&str, Vec<Status>> = HashMap::new();
                for test in &file.tests {
                    names
                        .entry(test.name.as_str())
                        .or_default()
                        .push(test.status);
                }
                (file, names)
            });
        }
        RerunIndex {
            files,
            limit_ms: rerun.limit_ms,
            duration_ms: rerun.duration_ms,
        }
    }

    /// How `id` came out, as [`status_in`] says.
    pub(crate) fn status(&self, id: &TestId) -> SideStatus {
        let Some((file, names)) = self.files.get(id.file.as_str()) else {
            return SideStatus::Absent;
        };
        if file.load_error.is_some() {
            return SideStatus::LoadError;
        }
        if file.crashed.is_some() {
            return SideStatus::Failed;
        }
        if id.is_whole_file() {
            return ran_as_a_whole(file);
        }
        match names
            .get(id.name.as_str())
            .and_then(|s| s.get(id.occurrence))
        {
            None => SideStatus::Absent,
            Some(Status::Passed) => SideStatus::Passed,
            Some(Status::Failed) => SideStatus::Failed,
            Some(Status::Skipped) => SideStatus::Skipped,
        }
    }
}

/// Counts one candidate's reruns on each side and decides (the reference, one candidate at
/// a time, that the tests hold [`runs_of_all`] to). `candidates` is how many tests the first
/// runs made candidates (the judge's count, from the rows).
#[cfg(test)]
pub(crate) fn decide(
    id: &TestId,
    base_reruns: &[RerunIndex<'_>],
    head_reruns: &[RerunIndex<'_>],
    candidates: usize,
    error_rate: f64,
) -> Decision {
    decide_runs(
        runs_of(id, base_reruns, head_reruns),
        candidates,
        error_rate,
        &mut HashMap::new(),
    )
}

/// Decides from a candidate's runs: it reproduces when every rerun agreed, often enough to
/// rule out chance. `ruled_out` remembers the answers for the counts already decided.
pub(crate) fn decide_runs(
    runs: Runs,
    candidates: usize,
    error_rate: f64,
    ruled_out: &mut HashMap<(u64, u64), bool>,
) -> Decision {
    let (failed, passed) = (runs.base_failed - 2, runs.head_passed - 1);
    let agreed = runs.base_runs == runs.base_failed && runs.head_runs == runs.head_passed;
    let n = u64::try_from(candidates).unwrap_or(u64::MAX);
    let chance_ruled_out = agreed
        && *ruled_out.entry((failed, passed)).or_insert_with(|| {
            crate::stats::flake::reproduces(failed, passed, n, error_rate).unwrap_or(false)
        });
    if chance_ruled_out {
        Decision::Reproduces
    } else {
        Decision::Flaky(runs)
    }
}

/// The reruns of one side as the judge counts them for every candidate at once.
#[derive(Clone, Copy, Debug, Default)]
struct SideTally {
    /// Reruns whose outcome is the one the side expects (failed on base; passed on head,
    /// within the base's limit).
    agreed: u64,
    /// Reruns with any other outcome (absent ones are not counted).
    disagreed: u64,
    /// Base side: the shortest time limit of the reruns that failed.
    limit: Option<u64>,
}

impl SideTally {
    fn failed_within(&mut self, limit: Option<u64>) {
        self.agreed += 1;
        self.limit = shortest(self.limit, limit);
    }
}

/// The shorter of two limits, where `None` is no limit.
fn shortest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a head pass that `took` counts under the base's `limit`: a base rerun failed
/// within its limit, so a head rerun passes only within the shortest such limit, and both
/// sides measure the same event.
fn in_time(limit: Option<u64>, took: Option<u64>) -> bool {
    match (limit, took) {
        (None, _) => true,
        (Some(limit), Some(took)) => took <= limit,
        (Some(_), None) => false,
    }
}

/// Counts the reruns of one side into `files` (per file: outcomes every test of it shares,
/// a crash or a load error) and `tests` (per candidate), reading each rerun once: the
/// candidates are found by `(file, name, occurrence)`, never looked up rerun by rerun.
fn tally_side<'r>(
    reruns: &'r [Rerun],
    base: bool,
    by_id: &IdIndex<'_>,
    files: &mut HashMap<&'r str, SideTally>,
    tests: &mut [SideTally],
    limit_of: impl Fn(usize) -> Option<u64>,
) {
    for rerun in reruns {
        let mut seen = std::collections::HashSet::new();
        for file in &rerun.report.files {
            // A file listed twice: the first, as `RerunIndex` reads it.
            if !seen.insert(file.path.as_str()) {
                continue;
            }
            let Some(tally) = files.get_mut(file.path.as_str()) else {
                continue;
            };
            if file.load_error.is_some() {
                tally.disagreed += 1;
                continue;
            }
            if file.crashed.is_some() {
                if base {
                    tally.failed_within(rerun.limit_ms);
                } else {
                    tally.disagreed += 1;
                }
                continue;
            }
            let mut occurrences: HashMap<&str, usize> = HashMap::new();
            for test in &file.tests {
                let k = occurrences.entry(test.name.as_str()).or_insert(0);
                let key = (file.path.as_str(), test.name.as_str(), *k);
                *k += 1;
                let Some(i) = by_id.get(key) else {
                    continue;
                };
                let tally = &mut tests[i];
                match (base, test.status) {
                    (true, Status::Failed) => tally.failed_within(rerun.limit_ms),
                    (false, Status::Passed) if in_time(limit_of(i), rerun.duration_ms) => {
                        tally.agreed += 1;
                    }
                    _ => tally.disagreed += 1,
                }
            }
        }
    }
}

/// The candidates in `(file, name, occurrence)` order, found by binary search: four bytes a
/// candidate, where a hash map of their ids would take ten times that.
struct IdIndex<'a> {
    ids: &'a [&'a TestId],
    sorted: Vec<u32>,
}

impl<'a> IdIndex<'a> {
    fn new(ids: &'a [&'a TestId]) -> Self {
        // A report holds far fewer than 2^32 tests (its inflated cap is 8 MiB).
        let count = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        let mut sorted: Vec<u32> = (0..count).collect();
        sorted.sort_unstable_by(|&a, &b| key_of(ids[a as usize]).cmp(&key_of(ids[b as usize])));
        Self { ids, sorted }
    }

    /// The position in `ids` of the candidate `key`.
    fn get(&self, key: (&str, &str, usize)) -> Option<usize> {
        let of = |i: u32| key_of(self.ids[i as usize]);
        let at = self.sorted.partition_point(|&i| of(i) < key);
        let &i = self.sorted.get(at)?;
        (of(i) == key).then_some(i as usize)
    }
}

/// What [`IdIndex`] sorts and finds a candidate by.
fn key_of(id: &TestId) -> (&str, &str, usize) {
    (id.file.as_str(), id.name.as_str(), id.occurrence)
}

/// Every candidate's runs, as [`runs_of`] counts them one at a time, in time that grows
/// with the size of the reruns plus the number of candidates (not their product).
pub(crate) fn runs_of_all(
    ids: &[&TestId],
    base_reruns: &[Rerun],
    head_reruns: &[Rerun],
) -> Vec<Runs> {
    let by_id = IdIndex::new(ids);
    // One entry a file, inserted one by one: collecting would reserve room for every
    // candidate, and the candidates of a large report share a few files.
    let files = || -> HashMap<&str, SideTally> {
        let mut files = HashMap::new();
        for id in ids {
            files.entry(id.file.as_str()).or_default();
        }
        files
    };
    let (mut base_files, mut head_files) = (files(), files());
    let mut base_tests = vec![SideTally::default(); ids.len()];
    let mut head_tests = vec![SideTally::default(); ids.len()];
    tally_side(
        base_reruns,
        true,
        &by_id,
        &mut base_files,
        &mut base_tests,
        |_| None,
    );
    let limit_of = |i: usize| {
        let file: &SideTally = &base_files[ids[i].file.as_str()];
        shortest(file.limit, base_tests[i].limit)
    };
    tally_side(
        head_reruns,
        false,
        &by_id,
        &mut head_files,
        &mut head_tests,
        limit_of,
    );
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let (base_file, head_file) =
                (&base_files[id.file.as_str()], &head_files[id.file.as_str()]);
            let (base, head) = (&base_tests[i], &head_tests[i]);
            let failed = base_file.agreed + base.agreed;
            let passed_on_base = base_file.disagreed + base.disagreed;
            // A pass past the limit counted as a failure on head.
            let passed = head.agreed;
            let failed_on_head = head_file.disagreed + head.disagreed;
            Runs {
                base_failed: 2 + failed,
                base_runs: 2 + failed + passed_on_base,
                head_passed: 1 + passed,
                head_runs: 1 + passed + failed_on_head,
            }
        })
        .collect()
}

/// A candidate's runs on each side, the first ones (two failures on base, a pass on head)
/// included: what a `flaky` test shows on the line, and a reproducing one in the tables.
#[cfg(test)]
pub(crate) fn runs_of(
    id: &TestId,
    base_reruns: &[RerunIndex<'_>],
    head_reruns: &[RerunIndex<'_>],
) -> Runs {
    // A base rerun failed within its limit: a head rerun passes only within the shortest
    // such limit, so that both sides measure the same event.
    let limit = base_reruns
        .iter()
        .filter(|r| r.status(id) == SideStatus::Failed)
        .filter_map(|r| r.limit_ms)
        .min();
    let in_time = |rerun: &RerunIndex<'_>| match (limit, rerun.duration_ms) {
        (None, _) => true,
        (Some(limit), Some(took)) => took <= limit,
        (Some(_), None) => false,
    };
    let count = |reruns: &[RerunIndex<'_>], want: SideStatus| {
        let mut agreed = 0_u64;
        let mut disagreed = 0_u64;
        for rerun in reruns {
            match rerun.status(id) {
                SideStatus::Absent => {}
                SideStatus::Passed if want == SideStatus::Passed && !in_time(rerun) => {
                    disagreed += 1;
                }
                status if status == want => agreed += 1,
                _ => disagreed += 1,
            }
        }
        (agreed, disagreed)
    };
    let (failed, passed_on_base) = count(base_reruns, SideStatus::Failed);
    let (passed, failed_on_head) = count(head_reruns, SideStatus::Passed);
    Runs {
        base_failed: 2 + failed,
        base_runs: 2 + failed + passed_on_base,
        head_passed: 1 + passed,
        head_runs: 1 + passed + failed_on_head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::gate::test_report::report_of as report;

    fn id(file: &str, name: &str, occurrence: usize) -> TestId {
        TestId {
            file: file.into(),
            name: name.into(),
            occurrence,
        }
    }

    use Status::{Failed, Passed, Skipped};
    const F: &str = "tests/test_a.py";

    #[test]
    fn candidates_fail_both_base_runs_plainly_and_pass_on_head() {
        let base = report(&[
            (F, "t", Failed, "assert 1 == 2"),
            (F, "u", Failed, "x"),
            (F, "v", Failed, "ImportError: cannot import name 'f'"),
            (F, "w", Passed, ""),
            (F, "t", Failed, "second t"),
        ]);
        let rerun = report(&[
            (F, "t", Failed, "assert 1 == 2"),
            (F, "u", Passed, ""),
            (F, "v", Failed, "ImportError"),
            (F, "w", Failed, "x"),
            (F, "t", Failed, ""),
        ]);
        let found = base_candidates(&base, &rerun);
        assert_eq!(found, [id(F, "t", 0), id(F, "t", 1)]);
        let head = report(&[
            (F, "t", Passed, ""),
            (F, "u", Passed, ""),
            (F, "t", Failed, ""),
        ]);
        assert_eq!(
            head_candidates(&head, None),
            (vec![id(F, "t", 0), id(F, "u", 0)], 2)
        );
        let known = BaseCandidates::new(&base, &rerun, &[]);
        assert_eq!(known.chosen, found);
        assert_eq!(
            head_candidates(&head, Some(&known)),
            (vec![id(F, "t", 0)], 1)
        );
        // A candidate a base rerun settled still counts, but is not rerun on head.
        let settled = BaseCandidates::new(
            &base,
            &rerun,
            &[Rerun {
                exit_code: Some(0),
                report: report(&[(F, "t", Passed, ""), (F, "t", Failed, "")]),
                limit_ms: None,
                duration_ms: None,
            }],
        );
        assert_eq!(settled.still_failing, [id(F, "t", 1)]);
        assert_eq!(head_candidates(&head, Some(&settled)), (vec![], 1));
    }

    fn ix(reruns: &[Rerun]) -> Vec<RerunIndex<'_>> {
        reruns.iter().map(RerunIndex::new).collect()
    }

    fn rerun(tests: &[(&str, &str, Status, &str)]) -> Rerun {
        Rerun {
            exit_code: Some(1),
            report: report(tests),
            limit_ms: None,
            duration_ms: None,
        }
    }

    #[test]
    fn a_candidate_reproduces_only_when_every_rerun_agrees_often_enough() {
        let t = id(F, "t", 0);
        let fail = || rerun(&[(F, "t", Failed, "")]);
        let pass = || rerun(&[(F, "t", Passed, "")]);
        let base: Vec<Rerun> = (0..4).map(|_| fail()).collect();
        let head: Vec<Rerun> = (0..4).map(|_| pass()).collect();
        assert_eq!(
            decide(&t, &ix(&base), &ix(&head), 1, 0.01),
            Decision::Reproduces
        );
        // Too few for two candidates at 4 each? 4^-4 = 0.0039 <= 0.005: still enough.
        assert_eq!(
            decide(&t, &ix(&base), &ix(&head), 2, 0.01),
            Decision::Reproduces
        );
        // Not for three.
        assert!(matches!(
            decide(&t, &ix(&base), &ix(&head), 3, 0.01),
            Decision::Flaky(_)
        ));
        // No reruns at all: nothing rules out chance.
        assert_eq!(
            decide(&t, &[], &[], 1, 0.01),
            Decision::Flaky(Runs {
                base_failed: 2,
                base_runs: 2,
                head_passed: 1,
                head_runs: 1
            })
        );
        // One pass on base among the reruns.
        let mut mixed = base.clone();
        mixed[2] = pass();
        assert_eq!(
            decide(&t, &ix(&mixed), &ix(&head), 1, 0.01),
            Decision::Flaky(Runs {
                base_failed: 5,
                base_runs: 6,
                head_passed: 5,
                head_runs: 5
            })
        );
        // A skip on head is no pass.
        let mut skipped = head.clone();
        skipped[0] = rerun(&[(F, "t", Skipped, "")]);
        assert!(matches!(
            decide(&t, &ix(&base), &ix(&skipped), 1, 0.01),
            Decision::Flaky(_)
        ));
        // A rerun that does not list the test does not count either way.
        let mut absent = head.clone();
        absent.push(rerun(&[(F, "other", Failed, "")]));
        assert_eq!(
            decide(&t, &ix(&base), &ix(&absent), 1, 0.01),
            Decision::Reproduces
        );
        absent[0] = rerun(&[(F, "other", Passed, "")]);
        absent[1] = rerun(&[(F, "other", Passed, "")]);
        assert!(matches!(
            decide(&t, &ix(&base), &ix(&absent), 1, 0.01),
            Decision::Flaky(_)
        ));
    }

    #[test]
    fn a_file_whose_base_runs_both_crashed_is_a_candidate_as_a_whole() {
        let crashed = |file: &str| FileResult {
            path: file.into(),
            load_error: None,
            crashed: Some("timed out after 5 s".into()),
            tests: vec![],
        };
        let hung = TestReport {
            files: vec![crashed(F), crashed("tests/test_b.py")],
        };
        let mut once = hung.clone();
        once.files[1] = report(&[("tests/test_b.py", "x", Passed, "")])
            .files
            .remove(0);
        let found = base_candidates(&hung, &once);
        assert_eq!(found, [TestId::whole_file(F)]);
        // At head its tests have names: each is a candidate through its file, and together
        // they are one hypothesis, so the reruns are planned for one.
        let head = report(&[
            (F, "t", Passed, ""),
            (F, "u", Passed, ""),
            ("tests/test_b.py", "x", Passed, ""),
        ]);
        let known = BaseCandidates::new(&hung, &once, &[]);
        assert_eq!(
            head_candidates(&head, Some(&known)),
            (vec![id(F, "t", 0), id(F, "u", 0)], 1)
        );
        // A rerun where the file crashed again agrees for every test of it; one where it
        // ran and a test passed does not, for that test.
        let again = Rerun {
            exit_code: None,
            report: TestReport {
                files: vec![crashed(F)],
            },
            limit_ms: None,
            duration_ms: None,
        };
        assert_eq!(
            status_in(&again.report, &id(F, "t", 0)).0,
            SideStatus::Failed
        );
        assert_eq!(
            status_in(&again.report, &TestId::whole_file(F)).0,
            SideStatus::Failed
        );
        let ran = report(&[(F, "t", Passed, ""), (F, "u", Failed, "")]);
        assert_eq!(
            status_in(&ran, &TestId::whole_file(F)).0,
            SideStatus::Failed
        );
        // The index the reruns are read through says the same.
        let whole = TestId::whole_file(F);
        assert_eq!(RerunIndex::new(&again).status(&whole), SideStatus::Failed);
        let ran_rerun = Rerun {
            exit_code: Some(1),
            report: ran.clone(),
            limit_ms: None,
            duration_ms: None,
        };
        assert_eq!(
            RerunIndex::new(&ran_rerun).status(&whole),
            SideStatus::Failed
        );
        let passing = Rerun {
            report: report(&[(F, "t", Passed, "")]),
            ..ran_rerun
        };
        assert_eq!(RerunIndex::new(&passing).status(&whole), SideStatus::Passed);
        assert_eq!(keep_only(&ran, &[TestId::whole_file(F)]), ran);
    }

    #[test]
    fn the_candidates_of_a_file_that_failed_as_a_whole_are_one_hypothesis() {
        let ids = [
            id(F, "t", 0),
            id(F, "u", 0),
            id("tests/test_b.py", "x", 0),
            id("tests/test_b.py", "y", 0),
            id("tests/test_c.py", "z", 0),
        ];
        assert_eq!(hypotheses(&ids, |_| false), 5);
        assert_eq!(hypotheses(&ids, |id| id.file == F), 4);
        assert_eq!(hypotheses(&ids, |_| true), 3);
        assert_eq!(hypotheses(&[] as &[TestId], |_| true), 0);
    }

    #[test]
    fn a_pass_on_head_counts_only_within_the_limit_base_failed_under() {
        let t = id(F, "t", 0);
        let timed = |status: Status, limit: Option<u64>, took: Option<u64>| Rerun {
            exit_code: None,
            report: report(&[(F, "t", status, "")]),
            limit_ms: limit,
            duration_ms: took,
        };
        let base: Vec<Rerun> = (0..4)
            .map(|_| timed(Failed, Some(60_000), Some(60_000)))
            .collect();
        let quick: Vec<Rerun> = (0..4).map(|_| timed(Passed, None, Some(900))).collect();
        assert_eq!(
            decide(&t, &ix(&base), &ix(&quick), 1, 0.01),
            Decision::Reproduces
        );
        // A pass that took longer than the base's limit is no pass within it.
        let mut slow = quick.clone();
        slow[1].duration_ms = Some(61_000);
        assert!(matches!(
            decide(&t, &ix(&base), &ix(&slow), 1, 0.01),
            Decision::Flaky(_)
        ));
        // Nor is one whose time is not known.
        slow[1].duration_ms = None;
        assert!(matches!(
            decide(&t, &ix(&base), &ix(&slow), 1, 0.01),
            Decision::Flaky(_)
        ));
    }

    #[test]
    fn reruns_keep_only_the_candidates_without_messages() {
        let r = report(&[
            (F, "t", Failed, "boom"),
            (F, "u", Passed, ""),
            ("tests/test_b.py", "x", Failed, "y"),
        ]);
        let kept = keep_only(&r, &[id(F, "t", 0)]);
        assert_eq!(kept, report(&[(F, "t", Failed, "")]));
    }

    #[test]
    fn the_plan_is_capped() {
        let config = FlakyConfig::default();
        assert_eq!(planned(0, &config), 0);
        assert_eq!(planned(1, &config), 4);
        assert_eq!(planned(46, &config), 7);
        let capped = FlakyConfig {
            max_reruns: 3,
            ..FlakyConfig::default()
        };
        assert_eq!(planned(1, &capped), 3);
    }

    /// Counting every candidate at once gives what counting each one alone gives, on
    /// generated reruns with duplicate names, files listed twice, crashed and unloadable
    /// files, time limits and durations.
    #[test]
    fn counting_every_candidate_at_once_agrees_with_counting_each_alone() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let files = ["a.py", "b.py", "c.py"];
        let names = ["t", "u", "v"];
        let statuses = [Passed, Failed, Skipped];
        for _ in 0..200 {
            let mut side = |base: bool| -> Vec<Rerun> {
                (0..next(6))
                    .map(|_| {
                        let mut report = TestReport { files: Vec::new() };
                        for _ in 0..next(5) {
                            let tests = (0..next(6))
                                .map(|_| TestCase {
                                    name: names[next(3) as usize].into(),
                                    status: statuses[next(3) as usize],
                                    messages: Vec::new(),
                                    error_type: None,
                                })
                                .collect();
                            report.files.push(FileResult {
                                path: files[next(3) as usize].into(),
                                load_error: (next(8) == 0).then(|| "e".into()),
                                crashed: (next(8) == 0).then(|| "timed out".into()),
                                tests,
                            });
                        }
                        let time = |x: u64| (x > 0).then_some(x * 10);
                        Rerun {
                            exit_code: Some(1),
                            report,
                            limit_ms: if base { time(next(4)) } else { None },
                            duration_ms: time(next(4)),
                        }
                    })
                    .collect()
            };
            let (base, head) = (side(true), side(false));
            let ids: Vec<TestId> = files
                .iter()
                .flat_map(|f| names.iter().map(move |n| (f, n)))
                .flat_map(|(f, n)| (0..3).map(move |k| id(f, n, k)))
                .collect();
            let refs: Vec<&TestId> = ids.iter().collect();
            let all = runs_of_all(&refs, &base, &head);
            for (id, runs) in ids.iter().zip(all) {
                assert_eq!(runs, runs_of(id, &ix(&base), &ix(&head)), "{id:?}");
            }
        }
    }
}

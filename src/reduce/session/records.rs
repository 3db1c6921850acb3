//! What a session records and shows: the candidates it is given, the per-phase counters
//! and commits of the report, and the view a progress display observes.

use crate::reduce::edits::Mutation;

/// Counters of one phase (one reducer pass).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PhaseStats {
    /// The phase name.
    pub phase: String,
    /// How many times the pass ran.
    pub passes: u64,
    /// Candidates tried.
    pub attempts: u64,
    /// Candidates equal to the accepted state (or stale).
    pub no_op: u64,
    /// Cuts not run because they would leave a file that parses cleanly unparsable (the
    /// syntax guard of the blocks and lines passes); not counted in `attempts`.
    pub unparsable: u64,
    /// Cuts not run because the same cut failed before and nothing since may have let it
    /// through (the memory of failed cuts); not counted in `attempts`.
    pub recalled: u64,
    /// Candidates the oracle rejected.
    pub rejected: u64,
    /// Candidates committed.
    pub accepted: u64,
    /// Candidates that passed but were not committed (a union or a lower index won).
    pub superseded: u64,
    /// Candidates cut short by an interrupt.
    pub aborted: u64,
    /// Commands actually run.
    pub oracle_samples: u64,
    /// Answers taken from the cache.
    pub cache_hits: u64,
    /// Commands run ahead, in a worker a window left idle, on a candidate the pass would
    /// try next if the window committed nothing (counted in `oracle_samples` too): their
    /// answers only wait in the cache.
    pub ran_ahead: u64,
    /// `oracle_samples + cache_hits`.
    pub oracle_sample_uses: u64,
    /// Regular-file bytes removed by this phase's commits.
    pub bytes_removed: u64,
    /// Entries removed by this phase's commits.
    pub entries_removed: u64,
    /// Wall time spent in the pass, in milliseconds.
    pub wall_ms: u64,
    /// Sum of command durations, in milliseconds (may exceed wall time with several jobs).
    pub oracle_ms: u64,
    /// Planned candidate samples left unexecuted because the decision came early.
    pub samples_saved: u64,
    /// Candidates accepted before their planned sample count.
    pub early_acceptances: u64,
    /// Candidates rejected before their planned sample count.
    pub early_rejections: u64,
}

/// One committed change.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Event {
    /// 1-based commit number.
    pub index: u64,
    /// The phase that made it.
    pub phase: String,
    /// What it did, in words.
    pub change: String,
    /// Whether it was the union of several passing candidates.
    pub union: bool,
    /// Entries left afterwards.
    pub entries_after: u64,
    /// Regular-file bytes left afterwards.
    pub bytes_after: u64,
    /// With run-wide confidence: the candidate family index of the committed candidate.
    pub family: Option<u64>,
    /// With run-wide confidence: the confidence that candidate was tested at.
    pub candidate_confidence: Option<f64>,
    /// When it was made, in milliseconds since the first pass began (for progress.svg; not
    /// in report.json).
    #[serde(skip)]
    pub elapsed_ms: u64,
    /// Commands run before it was made, since the first pass began (likewise).
    #[serde(skip)]
    pub commands: u64,
}

/// One run of a pass: when it began and ended, in milliseconds since the first pass began,
/// and how many commands had run by then (for progress.svg).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassSpan {
    /// The pass.
    pub pass: String,
    /// When it began.
    pub start_ms: u64,
    /// When it ended.
    pub end_ms: u64,
    /// Commands run before it began.
    pub start_commands: u64,
    /// Commands run when it ended.
    pub end_commands: u64,
}

/// A candidate: a mutation and a label for reports.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The change.
    pub mutation: Mutation,
    /// A short description ("delete src/a.py", "lines 3-9 of x.c").
    pub label: String,
}

//! How fine a reduction goes when it is not told (`--level` and `--passes` absent).
//!
//! The passes down to whole lines always run. Once they reach their fixed point, the next
//! level (tokens, then characters) runs when what it is expected to cost fits. A finer
//! level costs about six runs per unit of what is left (a token is taken as four bytes, a
//! character as one), each run taking the mean time of the runs so far, `--jobs` of them
//! at a time. With `--max-duration`, the level must fit the time left. Otherwise a level of
//! at most 3,000 runs (characters for up to 500 bytes, tokens for up to 2,000) always goes
//! on unless it would take over half an hour, so a small input's result does not depend on
//! the machine's load; a larger one goes on when it fits a minute, or a quarter of the time
//! the run has taken so far if that is more. So a single file or a small tree goes on to
//! characters, and a large tree, or one whose command is slow, stops at lines unless the
//! budget allows more. The report says what was chosen and why.

use std::time::Duration;

use crate::reduce::options::{Level, LevelChoice, PassName, millis};

/// Bytes taken as one token when estimating the cost of the tokens level.
pub const BYTES_PER_TOKEN: u64 = 4;

/// Runs a finer level takes per unit (token or byte) left, about: the deletion search, its
/// sliding sweeps and the other passes' runs after each commit (measured: 5 a token and 8 a
/// byte on a C tree whose lines left 333 bytes).
pub const RUNS_PER_UNIT: u64 = 6;

/// The allowance for a finer level when no `--max-duration` is given, at least.
pub const ALLOWANCE_FLOOR: Duration = Duration::from_secs(60);

/// A finer level expected to take at most this many runs goes on without `--max-duration`
/// whatever the runs so far took (characters for up to 500 bytes left, tokens for up to
/// 2,000), so that a small input's result does not depend on the machine's load or on
/// `--jobs`; only [`SMALL_ALLOWANCE`] holds it back.
pub const SMALL_RUNS: u64 = 3_000;

/// What a small level may take at most, or the time taken so far if that is more: it stops
/// only a command so slow that even a few thousand runs would take hours.
pub const SMALL_ALLOWANCE: Duration = Duration::from_secs(30 * 60);

/// How the level was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LevelHow {
    /// Chosen by the run itself (no `--level`, no `--passes`).
    Auto,
    /// `--level`.
    Given,
    /// `--passes`: the passes named, whatever their level.
    Passes,
}

/// One decision to go on to a finer level, or not.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LevelStep {
    /// The level considered.
    pub level: Level,
    /// Whether it ran.
    pub ran: bool,
    /// Bytes of the tree when it was considered.
    pub bytes: u64,
    /// The runs it was expected to take.
    pub estimated_runs: u64,
    /// The mean time of one run so far, in milliseconds.
    pub mean_run_ms: u64,
    /// The wall time it was expected to take, in milliseconds.
    pub estimated_ms: u64,
    /// The time it was allowed, in milliseconds.
    pub allowance_ms: u64,
    /// Why, in words (the times are the fields above).
    pub reason: String,
}

/// What level the reduction went to, and how it was decided.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LevelRecord {
    /// The finest level whose passes ran (with `--passes`: the finest pass named).
    pub level: Level,
    /// How it was set.
    pub how: LevelHow,
    /// With `auto`, each decision to go finer, in order.
    pub steps: Vec<LevelStep>,
}

impl LevelRecord {
    /// The record of a run that starts with `passes`.
    pub fn start(choice: LevelChoice, passes: &[PassName]) -> LevelRecord {
        let how = match choice {
            LevelChoice::Auto => LevelHow::Auto,
            LevelChoice::Given(_) => LevelHow::Given,
            LevelChoice::Passes => LevelHow::Passes,
        };
        LevelRecord {
            level: level_of(passes),
            how,
            steps: Vec::new(),
        }
    }
}

impl LevelRecord {
    /// The passes that ran: `first`, and those of each finer level that ran.
    pub fn passes_run(&self, first: &[PassName]) -> Vec<PassName> {
        let mut passes = first.to_vec();
        for step in self.steps.iter().filter(|s| s.ran) {
            passes.extend(added_by(step.level));
        }
        passes.sort();
        passes.dedup();
        passes
    }
}

/// The finest level among `passes`.
pub fn level_of(passes: &[PassName]) -> Level {
    if passes
        .iter()
        .any(|p| matches!(p, PassName::Chars | PassName::Rewrite))
    {
        Level::Chars
    } else if passes
        .iter()
        .any(|p| matches!(p, PassName::Tokens | PassName::Rename))
    {
        Level::Tokens
    } else {
        Level::Lines
    }
}

/// The level after `level`, if any.
pub fn finer(level: Level) -> Option<Level> {
    match level {
        Level::Lines => Some(Level::Tokens),
        Level::Tokens => Some(Level::Chars),
        Level::Chars => None,
    }
}

/// The passes a level adds to the one before it.
pub fn added_by(level: Level) -> Vec<PassName> {
    match level {
        Level::Lines => Vec::new(),
        Level::Tokens => vec![PassName::Rename, PassName::Tokens],
        Level::Chars => vec![PassName::Chars, PassName::Rewrite],
    }
}

/// What the run looked like when a finer level is considered.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Bytes of the current tree.
    pub bytes: u64,
    /// Runs of the command so far (baseline included).
    pub runs: u64,
    /// Their summed time.
    pub run_time: Duration,
    /// Runs at a time.
    pub jobs: usize,
    /// Wall time of the reduction so far.
    pub elapsed: Duration,
    /// Time left of `--max-duration`, when given.
    pub remaining: Option<Duration>,
}

/// Whether `level` should run, and why.
pub fn decide(level: Level, p: &Progress) -> LevelStep {
    let estimated_runs = match level {
        Level::Lines => 0,
        Level::Tokens => RUNS_PER_UNIT * p.bytes.div_ceil(BYTES_PER_TOKEN),
        Level::Chars => RUNS_PER_UNIT * p.bytes,
    };
    let mean = if p.runs == 0 {
        Duration::ZERO
    } else {
        p.run_time / u32::try_from(p.runs).unwrap_or(u32::MAX)
    };
    let jobs = u32::try_from(p.jobs.max(1)).unwrap_or(u32::MAX);
    let estimated = mean
        .saturating_mul(u32::try_from(estimated_runs).unwrap_or(u32::MAX))
        .checked_div(jobs)
        .unwrap_or(Duration::MAX);
    let small_allowance = SMALL_ALLOWANCE.max(p.elapsed);
    let small =
        p.remaining.is_none() && estimated_runs <= SMALL_RUNS && estimated <= small_allowance;
    let quarter = p.elapsed / 4;
    let (allowance, basis) = match p.remaining {
        Some(left) => (left, "the time left of --max-duration"),
        None if small => (small_allowance, "the runs a small input is always given"),
        None if quarter > ALLOWANCE_FLOOR => (quarter, "a quarter of the time taken so far"),
        None => (ALLOWANCE_FLOOR, "the default allowance"),
    };
    let ran = estimated <= allowance;
    // Without times, so that the same decision reads the same in every run; the times are
    // the `*_ms` fields.
    let within = if ran { "within" } else { "over" };
    let reason = if small {
        // Neither the load nor --jobs changes this decision, nor its words.
        format!(
            "{} bytes left: about {estimated_runs} runs, {within} {basis}",
            p.bytes
        )
    } else {
        format!(
            "{} bytes left: about {estimated_runs} runs, {jobs} at a time, {within} {basis}",
            p.bytes
        )
    };
    LevelStep {
        level,
        ran,
        bytes: p.bytes,
        estimated_runs,
        mean_run_ms: millis(mean),
        estimated_ms: millis(estimated),
        allowance_ms: millis(allowance),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(bytes: u64, mean_ms: u64, elapsed_s: u64, remaining: Option<u64>) -> Progress {
        Progress {
            bytes,
            runs: 10,
            run_time: Duration::from_millis(mean_ms * 10),
            jobs: 2,
            elapsed: Duration::from_secs(elapsed_s),
            remaining: remaining.map(Duration::from_secs),
        }
    }

    #[test]
    fn a_small_file_goes_on_to_characters_whatever_its_runs_took() {
        let step = decide(Level::Chars, &progress(46, 10, 2, None));
        assert!(step.ran, "{}", step.reason);
        assert_eq!(step.estimated_runs, 276);
        assert_eq!(step.estimated_ms, 1_380);
        assert!(step.reason.contains("within the runs a small input"));
        // 500 bytes of a command of 300 ms, one at a time: 900 s, over the default minute
        // yet small; the same decision, with the same reason, at any load and any --jobs.
        let mut slow = progress(500, 300, 2, None);
        slow.jobs = 1;
        let step = decide(Level::Chars, &slow);
        assert!(step.ran, "{}", step.reason);
        assert_eq!(
            step.reason,
            decide(Level::Chars, &progress(500, 10, 2, None)).reason
        );
        // A byte more, and the time decides.
        assert!(!decide(Level::Chars, &progress(501, 300, 2, None)).ran);
        // Only a command that would take hours holds a small input back.
        assert!(!decide(Level::Chars, &progress(500, 20_000, 2, None)).ran);
    }

    #[test]
    fn a_large_tree_with_a_slow_command_stops_at_lines_unless_the_budget_allows() {
        // 20 kB left, 350 ms a run: tokens alone would take 30,000 runs, 5,250 s at two a time.
        let slow = progress(20_000, 350, 200, None);
        let step = decide(Level::Tokens, &slow);
        assert!(!step.ran, "{}", step.reason);
        assert_eq!(step.estimated_runs, 30_000);
        assert!(step.reason.contains("over the default allowance"));
        let budget = progress(20_000, 350, 200, Some(6_000));
        let step = decide(Level::Tokens, &budget);
        assert!(step.ran, "{}", step.reason);
        assert!(step.reason.contains("--max-duration"));
    }

    #[test]
    fn a_long_run_allows_a_quarter_of_its_time() {
        // 1,000 bytes: 6,000 runs of 1 s at two a time, 3,000 s; allowed after 12,000 s,
        // not after 4,000 s.
        assert!(decide(Level::Chars, &progress(1_000, 1_000, 12_000, None)).ran);
        assert!(!decide(Level::Chars, &progress(1_000, 1_000, 4_000, None)).ran);
    }

    #[test]
    fn the_level_of_a_pass_list_is_its_finest_pass() {
        assert_eq!(level_of(&PassName::up_to(Level::Lines)), Level::Lines);
        assert_eq!(level_of(&PassName::up_to(Level::Tokens)), Level::Tokens);
        assert_eq!(level_of(&PassName::up_to(Level::Chars)), Level::Chars);
        assert_eq!(level_of(&[PassName::Lines, PassName::Chars]), Level::Chars);
        let mut all = PassName::up_to(Level::Lines);
        all.extend(added_by(Level::Tokens));
        all.extend(added_by(Level::Chars));
        all.sort();
        assert_eq!(all, PassName::up_to(Level::Chars));
        assert_eq!(finer(Level::Lines), Some(Level::Tokens));
        assert_eq!(finer(Level::Chars), None);
    }
}

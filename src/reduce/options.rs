//! What a reduction is asked to do: its options, the passes and levels it may run, the
//! budgets and timeouts it derives, and why it may stop early.
//!
//! These are plain values shared by the driver in [`crate::reduce`], the session and the
//! passes; this module imports nothing else from the reducer.

use std::path::PathBuf;
use std::time::Duration;

use crate::oracle::OracleSpec;
use crate::runner::{CommandSpec, Termination};
use crate::tree::IgnoreRules;

/// The floor of the derived per-candidate timeout.
pub const TIMEOUT_FLOOR: Duration = Duration::from_secs(10);
/// The derived timeout is this many times the slowest baseline run.
pub const TIMEOUT_FACTOR: u32 = 3;
/// The timeout of baseline runs when `--timeout` is not given.
pub const BASELINE_TIMEOUT: Duration = Duration::from_secs(600);

/// Why a reduction stopped before its fixed point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// `--max-attempts` was reached.
    MaxAttempts,
    /// `--max-duration` was reached.
    MaxDuration,
    /// Ctrl-C.
    Interrupted,
}

/// Which passes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PassName {
    /// Delete files and directories.
    Files,
    /// Empty each file; strip blank and comment lines.
    Prelude,
    /// Delete entries of package manifests.
    Manifests,
    /// Delete syntax nodes (tree-sitter grammars).
    Syntax,
    /// Delete a declaration (top-level or member) with the uses of its name.
    Declarations,
    /// Delete blocks by indentation and brackets.
    Blocks,
    /// Delete lines.
    Lines,
    /// Unwrap blocks (drop a header and its closing lines, dedent the body).
    Unwrap,
    /// Replace a syntax node by one of its children (an `if` by its body, a call by an
    /// argument).
    Hoist,
    /// Replace numbers by `0` and strings by `""` (replacement edits the certificate lists).
    Literals,
    /// Rename an identifier, in every file at once, to a short free name (`--level tokens`).
    Rename,
    /// Delete tokens inside lines (`--level tokens`).
    Tokens,
    /// Delete single characters (`--level chars`).
    Chars,
    /// Around a file of a few tokens, one deleted run of tokens and one inserted token
    /// (`--level chars`).
    Rewrite,
}

impl PassName {
    /// All passes, coarse to fine.
    pub const ALL: [PassName; 14] = [
        PassName::Files,
        PassName::Prelude,
        PassName::Manifests,
        PassName::Syntax,
        PassName::Declarations,
        PassName::Blocks,
        PassName::Lines,
        PassName::Unwrap,
        PassName::Hoist,
        PassName::Literals,
        PassName::Rename,
        PassName::Tokens,
        PassName::Chars,
        PassName::Rewrite,
    ];

    /// The passes of `level`, coarse to fine: everything down to whole lines, then tokens,
    /// then characters.
    pub fn up_to(level: Level) -> Vec<PassName> {
        PassName::ALL
            .into_iter()
            .filter(|p| match p {
                PassName::Rename | PassName::Tokens => level >= Level::Tokens,
                PassName::Chars | PassName::Rewrite => level >= Level::Chars,
                _ => true,
            })
            .collect()
    }
}

/// How fine the cuts of a reduction go: the default pass list ends at whole lines, tokens
/// or characters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Files, manifest entries, syntax nodes, blocks and lines, hoisted nodes and emptied
    /// literals.
    #[default]
    Lines,
    /// Those, then renamed identifiers and tokens inside lines.
    Tokens,
    /// Those, then single characters.
    Chars,
}

/// How the level of a reduction was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelChoice {
    /// Decided by the run from what it is given (see [`crate::reduce::level`]): the passes
    /// start at `lines` and go finer while the cost fits.
    Auto,
    /// `--level`.
    Given(Level),
    /// `--passes`.
    Passes,
}

/// How chunk sizes shrink from round to round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Minimiser {
    /// Counter-based probabilistic delta debugging.
    #[default]
    Cdd,
    /// Chunks that halve from the whole list.
    Halving,
}

/// How a candidate is sampled (seed semantics: fresh copy per sample, timeouts and
/// resource failures are hard non-passes, no cache while sampling).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Planned samples per candidate.
    pub runs: u64,
    /// Passes needed.
    pub min_passes: u64,
    /// Exact rate gate, when set.
    pub rate: Option<f64>,
    /// Confidence of the rate gate and of the confidence sequence.
    pub confidence: f64,
    /// Run-wide confidence: each changed candidate family `j` gets
    /// `alpha_j = min(1 - confidence, (1 - C) / (j (j + 1)))`.
    pub run_confidence: Option<f64>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            runs: 1,
            min_passes: 1,
            rate: None,
            confidence: 0.95,
            run_confidence: None,
        }
    }
}

impl Sampling {
    /// Whether candidates are sampled more than once (the cache is then off).
    pub fn repeated(&self) -> bool {
        self.runs > 1
    }
}

/// Everything a reduction needs to know.
#[derive(Clone, Debug)]
pub struct ReduceOptions {
    /// The tree to reduce (never modified).
    pub source: PathBuf,
    /// Where the result goes (must not exist).
    pub output: PathBuf,
    /// The failing command.
    pub command: CommandSpec,
    /// The oracle configuration.
    pub oracle: OracleSpec,
    /// Which entries take part.
    pub rules: IgnoreRules,
    /// Paths left out of the model that the run's directory holds in place, below the
    /// tree's own directories (what an install wrote there, in an adopted directory such as
    /// the gate's worktrees): no cut deletes or renames a directory that holds one, which
    /// would take it away for good.
    pub pinned: Vec<String>,
    /// Per-candidate timeout; derived from the baseline when `None`.
    pub timeout: Option<Duration>,
    /// Parallel jobs (at least 1).
    pub jobs: usize,
    /// Baseline runs (at least 2).
    pub baseline_runs: usize,
    /// Proceed even when the empty tree reproduces.
    pub allow_trivial: bool,
    /// Candidate budget.
    pub max_attempts: Option<u64>,
    /// Time budget for the reduction passes.
    pub max_duration: Option<Duration>,
    /// Passes to run (with [`LevelChoice::Auto`], the first of them: finer levels add
    /// theirs).
    pub passes: Vec<PassName>,
    /// How the level was set.
    pub level: LevelChoice,
    /// How the deletion passes shrink their chunks.
    pub minimiser: Minimiser,
    /// Whether the blocks and lines passes skip cuts that would leave a file that parses
    /// (with a known grammar) unparsable.
    pub syntax_guard: bool,
    /// Whether the per-file passes skip a file an earlier run settled (unchanged, and no
    /// occurrence of its identifiers removed since); a confirming round still searches
    /// everything before the run ends.
    pub settle: bool,
    /// Whether the syntax pass replaces function bodies by stubs before it searches a
    /// file's nodes (`--no-stubs` turns it off).
    pub stubs: bool,
    /// Whether unconfined runs see their tree through an overlay mount where the machine
    /// allows one (see [`crate::overlay`]; `--no-overlay` turns it off).
    pub overlay: bool,
    /// Whether the files pass first runs the failure under `strace` and tries deleting
    /// what it never touched (see [`crate::reduce::access`]).
    pub trace: bool,
    /// Content-addressed cache capacity in entries.
    pub cache_capacity: usize,
    /// Baseline runs that must reproduce (`None`: all of them).
    pub min_baseline_passes: Option<u64>,
    /// Exact rate gate on the baseline.
    pub min_baseline_rate: Option<f64>,
    /// How candidates are sampled.
    pub sampling: Sampling,
    /// Holdout runs on the final tree (0: none).
    pub holdout_runs: u64,
    /// Holdout target rate.
    pub min_holdout_rate: f64,
    /// Holdout confidence.
    pub holdout_confidence: f64,
    /// Runs of the command that must still fit in `max_duration` after the passes stop (a
    /// later holdout, spread over the jobs): the passes' deadline moves earlier by twice
    /// the last baseline run's duration for each round of them (this many runs over the
    /// jobs, rounded up).
    pub reserve_runs: u64,
    /// The durable session directory (`--session`), if any.
    pub session: Option<PathBuf>,
    /// Continue the session in `session` (`--resume`).
    pub resume: bool,
    /// Run every command in a container (`--runner docker`) instead of on the host.
    pub container: Option<crate::container::ContainerOptions>,
    /// The semantic backend (`--semantic-endpoint`); `None`: no backend, and the reduction
    /// is what it is without the seam.
    pub semantic: Option<SemanticOptions>,
    /// Run every command on a Remote Execution API cluster (`--remote`) instead of here.
    pub remote: Option<RemoteOptions>,
}

/// Where a reduction's commands ran when a cluster ran them, and how the session's runs
/// were answered (report.json's `execution.remote`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RemoteRecord {
    /// The endpoint.
    pub url: String,
    /// The instance name.
    pub instance: String,
    /// The session's runs (probes, the final check, holdout samples) the cluster executed.
    pub executed: u64,
    /// Its probes the cluster's action cache answered without a run.
    pub cache_hits: u64,
}

/// A Remote Execution API v2 cluster that runs the commands (`--remote`): where it is
/// (`--remote`, `--remote-instance`), how long a run may wait there (`--remote-wait`) and
/// the credentials (`--remote-ca`, `--remote-header`; headers never reach a report).
pub type RemoteOptions = crate::remote::RemoteConfig;

impl ReduceOptions {
    /// Defaults for everything but the source, output and command.
    pub fn new(source: PathBuf, output: PathBuf, argv: Vec<String>) -> ReduceOptions {
        ReduceOptions {
            source,
            output,
            command: CommandSpec {
                argv,
                env: Vec::new(),
                memory: None,
            },
            oracle: OracleSpec::default(),
            rules: IgnoreRules::default(),
            pinned: Vec::new(),
            timeout: None,
            jobs: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            baseline_runs: 2,
            allow_trivial: false,
            max_attempts: None,
            max_duration: None,
            passes: PassName::up_to(Level::default()),
            level: LevelChoice::Given(Level::default()),
            minimiser: Minimiser::default(),
            syntax_guard: true,
            settle: true,
            stubs: true,
            overlay: true,
            trace: true,
            cache_capacity: 200_000,
            min_baseline_passes: None,
            min_baseline_rate: None,
            sampling: Sampling::default(),
            holdout_runs: 0,
            min_holdout_rate: 0.9,
            holdout_confidence: 0.95,
            reserve_runs: 0,
            session: None,
            resume: false,
            container: None,
            remote: None,
            semantic: None,
        }
    }
}

/// One baseline run, for reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BaselineRun {
    /// How it ended.
    pub termination: Termination,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// What the semantic seam needs to be set up (`--semantic-endpoint`, `--semantic-model`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanticOptions {
    /// The chat completions URL (`http://` or `https://`).
    pub endpoint: String,
    /// The model name sent with each request.
    pub model: String,
    /// How long one call may take.
    pub timeout: Duration,
    /// The most calls in one reduction.
    pub max_calls: u64,
}

/// `d` in whole milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

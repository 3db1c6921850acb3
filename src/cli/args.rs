//! Arguments of `reduce`, and the options `reduce` and `doctor` share, and their translation
//! into [`ReduceOptions`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use crate::oracle::OracleSpec;
use crate::reduce::{self, InvalidOption, Level, PassName, ReduceError, ReduceOptions};
use crate::tree::{IgnoreRules, parse_rel_path};

pub(super) use super::runner_args::{
    ContainerArgs, ContainerCliArg, RemoteArgs, RunnerArg, parse_duration,
};

/// Options that decide whether a run shows the same failure.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Oracle")]
pub struct OracleArgs {
    /// Require the combined output to match this regular expression (replaces the learned
    /// signature).
    #[arg(long, value_name = "REGEX")]
    pub expect: Option<String>,

    /// Require the normalised output to contain this text (replaces the learned signature).
    #[arg(long, value_name = "TEXT")]
    pub signature: Option<String>,

    /// Require exactly this exit status (the output may change freely unless --expect or
    /// --signature is given). Use 0 for tests that succeed when the input is interesting.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub exit_code: Option<i32>,

    /// Require exactly the termination the baseline shows: the same signal or exit status.
    #[arg(long)]
    pub process_failure: bool,

    /// Accept any non-zero exit, whatever the output: a bare oracle that may keep a
    /// different failure than the one you meant.
    #[arg(long)]
    pub any_failure: bool,

    /// Accept an oracle that also passes when everything deletable is gone (otherwise such a
    /// reduction is refused).
    #[arg(long)]
    pub allow_trivial: bool,

    /// Identify the failure by its signature or --expect alone, not also by the innermost
    /// frames in the tree it was raised from.
    #[arg(long)]
    pub no_frames: bool,
}

/// Options that decide which entries of SOURCE take part.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Tree")]
pub struct TreeArgs {
    /// Leave out every entry with this basename (repeatable; built-in: .git, target,
    /// node_modules, __pycache__, .pytest_cache and other generated directories).
    #[arg(long, value_name = "NAME")]
    pub ignore: Vec<String>,

    /// Leave out this relative path and everything below it (repeatable).
    #[arg(long, value_name = "PATH")]
    pub ignore_path: Vec<String>,

    /// Never delete this relative path (file or directory); wins over every ignore rule. Its
    /// files may still be cut down (repeatable).
    #[arg(long, value_name = "PATH")]
    pub keep: Vec<String>,

    /// Apply SOURCE/.gitignore.
    #[arg(long)]
    pub gitignore: bool,

    /// Apply this gitignore-style rule file, scoped to SOURCE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub gitignore_file: Vec<PathBuf>,

    /// Apply every .gitignore in the tree (SOURCE/.gitignore included), each within its own
    /// directory.
    #[arg(long)]
    pub gitignore_recursive: bool,
}

/// Options of how the command runs.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Running")]
pub struct RunArgs {
    /// Kill a run after this long, e.g. 30s, 500ms, 2m [default: 3 x the slowest baseline
    /// run, at least 10s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Run this many candidates at once [default: the number of cores]; a worker a window
    /// leaves idle runs ahead the candidate tried next. The result does not depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Set an environment variable for the command (repeatable). Only the names and a digest
    /// are recorded, never the values.
    #[arg(long, value_name = "NAME=VALUE")]
    pub env: Vec<String>,

    /// Limit each run of the command to this much memory, e.g. 512M, 2G, 1.5GiB or a number
    /// of bytes: its cgroup's memory.max where repromin can make one with the memory
    /// controller, else RLIMIT_AS of each of its processes (the report says which). A
    /// candidate that goes over it is a resource failure, never the failure.
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,

    /// Show each run its tree through plain copies only. By default, where repromin may
    /// mount an overlay (Linux, as root), each run sees the accepted tree through an
    /// overlay mount in a mount namespace of its own, with only the candidate's changes on
    /// top, and its writes are undone by dropping that layer: a probe's cost grows with the
    /// change, not with the tree.
    #[arg(long)]
    pub no_overlay: bool,

    /// Baseline runs before reduction; all must agree unless --min-baseline-passes or
    /// --min-baseline-rate say otherwise. With --min-baseline-rate, at most 2000.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub baseline_runs: usize,

    /// How deletion passes shrink their chunks: `cdd` (counter-based probabilistic delta
    /// debugging: chunk sizes from an estimate of how likely an element is needed) or
    /// `halving` (all, then halves, quarters, ...). Both end 1-minimal.
    #[arg(long, value_enum, value_name = "NAME", default_value_t = MinimiserArg::Cdd, help_heading = "Passes")]
    pub minimiser: MinimiserArg,

    /// Also run block and line cuts that would leave a file that parses cleanly (Python,
    /// Rust, JavaScript, TypeScript, Java, Go, C, C++) unparsable. By default they are
    /// skipped; use this when the failure is about parsing itself.
    #[arg(long, help_heading = "Passes")]
    pub no_syntax_guard: bool,

    /// Search every file in every run of a pass, and run every cut. By default a pass skips
    /// a file an earlier run of it searched without a cut, while the file is unchanged and
    /// no identifier it holds lost a use elsewhere, and a cut that failed before is not run
    /// again while no name it holds lost a use; a last round over everything confirms the
    /// end.
    #[arg(long, help_heading = "Passes")]
    pub no_settle: bool,

    /// Do not replace function bodies by stubs. By default the syntax pass, before it
    /// searches a file's nodes, tries replacing each function's body by the smallest one
    /// that compiles for any signature (`{ todo!() }`, `...`, `{}`), so a function the
    /// failure never calls loses its body in one edit.
    #[arg(long, help_heading = "Passes")]
    pub no_stubs: bool,

    /// Do not run the failure under strace first. By default the files pass runs it once
    /// under `strace -f` and first tries deleting every entry the run never opened, listed
    /// or looked up (the oracle still decides).
    #[arg(long, help_heading = "Passes")]
    pub no_trace: bool,

    #[command(flatten)]
    /// Container options.
    pub container: ContainerArgs,

    #[command(flatten)]
    /// Remote execution options.
    pub remote: RemoteArgs,

    #[command(flatten)]
    /// Semantic backend options.
    pub semantic: SemanticArgs,
}

/// The semantic backend (see docs/reduce.md, "The semantic seam").
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Semantic")]
pub struct SemanticArgs {
    /// Also ask this OpenAI-compatible chat completions URL (http:// or https://, e.g.
    /// http://localhost:8080/v1/chat/completions) for edits, once the other passes are
    /// done; the oracle decides each. The bearer token is read from the
    /// REPROMIN_SEMANTIC_TOKEN environment variable only, and never written.
    #[arg(long, value_name = "URL", requires = "semantic_model")]
    pub semantic_endpoint: Option<String>,

    /// The model to ask (sent with each request).
    #[arg(long, value_name = "NAME", requires = "semantic_endpoint")]
    pub semantic_model: Option<String>,

    /// How long one call may take.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub semantic_timeout: Duration,

    /// The most calls in one reduction.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub semantic_calls: u64,
}

impl SemanticArgs {
    /// The reducer's semantic options, when an endpoint is given.
    pub fn to_options(&self) -> Option<crate::reduce::semantic::SemanticOptions> {
        Some(crate::reduce::semantic::SemanticOptions {
            endpoint: self.semantic_endpoint.clone()?,
            model: self.semantic_model.clone()?,
            timeout: self.semantic_timeout,
            max_calls: self.semantic_calls,
        })
    }
}

/// `--minimiser` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MinimiserArg {
    /// Counter-based probabilistic delta debugging.
    Cdd,
    /// Chunks that halve.
    Halving,
}

/// Sampling options (see docs/statistics.md).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Sampling")]
pub struct SamplingArgs {
    /// Baseline runs that must show the failure [default: all of them].
    #[arg(long, value_name = "K")]
    pub min_baseline_passes: Option<u64>,

    /// Require the baseline's reproduction rate to be above R (exact binomial test; the run
    /// that fixes the signature is left out of it).
    #[arg(long, value_name = "R")]
    pub min_baseline_rate: Option<f64>,

    /// Run each candidate this many times, each in a fresh copy (the cache is then off).
    /// With --min-candidate-rate, at most 2000.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub candidate_runs: u64,

    /// Passes a candidate needs [default: all runs, or 1 with --min-candidate-rate].
    #[arg(long, value_name = "K")]
    pub min_candidate_passes: Option<u64>,

    /// Require a candidate's reproduction rate to be above R (exact test at the planned
    /// size; early acceptance by a Jeffreys confidence sequence; early rejection).
    #[arg(long, value_name = "R")]
    pub min_candidate_rate: Option<f64>,

    /// Confidence of the rate gates.
    #[arg(long, value_name = "C", default_value_t = 0.95)]
    pub confidence: f64,

    /// Bound the chance of any false acceptance in the whole run by 1 - C (candidate
    /// family j is tested at alpha_j = min(1 - confidence, (1 - C) / (j (j + 1)))).
    #[arg(long, value_name = "C")]
    pub run_confidence: Option<f64>,

    /// Run the published tree this many more times, after reduction, and report whether its
    /// reproduction rate clears --min-holdout-rate. At most 2000.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub holdout_runs: u64,

    /// The holdout's target rate.
    #[arg(long, value_name = "R", default_value_t = 0.9)]
    pub min_holdout_rate: f64,

    /// The holdout's confidence.
    #[arg(long, value_name = "C", default_value_t = 0.95)]
    pub holdout_confidence: f64,
}

/// `--passes` values: the reducer's own pass names, with the help the command line shows for
/// each. The match is exhaustive, so a new pass cannot be left without its value.
impl ValueEnum for PassName {
    fn value_variants<'a>() -> &'a [Self] {
        &PassName::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            PassName::Files => (
                "files",
                "Delete files and directories, each with the lines and import names that name it \
                 and the defaults that name what those imported",
            ),
            PassName::Prelude => ("prelude", "Empty each file; strip blank and comment lines"),
            PassName::Manifests => (
                "manifests",
                "Delete entries of package manifests (Cargo.toml, pyproject.toml, package.json, ...)",
            ),
            PassName::Syntax => (
                "syntax",
                "Delete syntax nodes level by level (Python, Rust, JavaScript, TypeScript, Java, \
                 Go, C, C++)",
            ),
            PassName::Declarations => (
                "declarations",
                "Delete each declaration (top-level, or a member: variant, field, method) together \
                 with the uses of its name, and each parameter its function never uses together \
                 with the arguments its calls pass for it",
            ),
            PassName::Blocks => (
                "blocks",
                "Delete blocks by indentation and brackets, level by level",
            ),
            PassName::Lines => ("lines", "Delete lines, to 1-minimality"),
            PassName::Unwrap => (
                "unwrap",
                "Unwrap blocks: drop a header and its closing lines, dedent the body",
            ),
            PassName::Hoist => (
                "hoist",
                "Replace a syntax node by one of its children: an `if` by its body, a call by an \
                 argument",
            ),
            PassName::Literals => (
                "literals",
                "Replace numbers by `0` and strings by `\"\"`, where the failure stays (the \
                 certificate lists each replacement)",
            ),
            PassName::Rename => (
                "rename",
                "Rename an identifier and its whole-word uses, in every file at once, to a short \
                 name the tree does not use (with `--level tokens` and `chars`)",
            ),
            PassName::Tokens => (
                "tokens",
                "Delete tokens inside lines (words, literals, single punctuation), to 1-minimality",
            ),
            PassName::Chars => ("chars", "Delete single characters, to 1-minimality"),
            PassName::Rewrite => (
                "rewrite",
                "Around a file of a few tokens, try each content made of one deleted run of \
                 tokens and one token put in (from the file's most frequent short tokens), \
                 smallest first (with `--level chars`)",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// `--level` values.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LevelArg {
    /// Files, manifest entries, syntax nodes, blocks, whole lines, unwrapped blocks, hoisted
    /// nodes and emptied literals.
    Lines,
    /// Also renamed identifiers and tokens inside lines.
    Tokens,
    /// Also renamed identifiers and tokens, then single characters.
    Chars,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Level {
        match l {
            LevelArg::Lines => Level::Lines,
            LevelArg::Tokens => Level::Tokens,
            LevelArg::Chars => Level::Chars,
        }
    }
}

/// The options `reduce` and `doctor` share, but for the passes (see [`PassesArgs`]): the
/// oracle, the input, how the command runs, and sampling.
#[derive(Debug, Args, Clone)]
pub struct ReductionArgs {
    #[command(flatten)]
    /// Oracle options.
    pub oracle: OracleArgs,

    #[command(flatten)]
    /// Tree options.
    pub tree: TreeArgs,

    #[command(flatten)]
    /// Running options.
    pub run: RunArgs,

    #[command(flatten)]
    /// Sampling options.
    pub sampling: SamplingArgs,
}

/// Which passes run: `--passes` or `--level`, shared by `reduce` and `doctor` (whose help
/// speaks of a reduction that would run, see `DoctorArgs`). Kept apart from
/// [`ReductionArgs`] so that `reduce` keeps the order of its arguments, which its completion
/// scripts follow: its budgets come between the two.
#[derive(Debug, Args, Clone)]
pub struct PassesArgs {
    /// The passes to run, comma-separated; they run in the order of the list below, whatever
    /// the order given [default: the passes of --level, or those the run chooses].
    #[arg(
        long,
        value_name = "PASS",
        value_delimiter = ',',
        help_heading = "Passes"
    )]
    pub passes: Vec<PassName>,

    /// How fine the cuts go: `lines` (files, manifest entries, syntax nodes, blocks, whole
    /// lines), `tokens` (then tokens inside lines) or `chars` (then single characters).
    /// Without it, the run decides: once the passes down to lines reach their fixed point,
    /// tokens and then characters follow while their estimated cost fits (always for up to
    /// 3,000 runs unless they take hours; else a minute, a quarter of the run so far, or
    /// what is left of --max-duration); the report says why. Cannot be combined with --passes.
    #[arg(
        long,
        value_enum,
        value_name = "LEVEL",
        conflicts_with = "passes",
        help_heading = "Passes"
    )]
    pub level: Option<LevelArg>,
}

/// `repromin reduce`.
#[derive(Debug, Args, Clone)]
pub struct ReduceArgs {
    /// The directory tree or the single file to reduce (a symlink to a file is followed).
    /// It is only read.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// Where to publish the reduced tree, or the reduced file when SOURCE is a file; must not
    /// exist. The report goes to OUTPUT.repromin/.
    #[arg(value_name = "OUTPUT")]
    pub output: PathBuf,

    /// The failing command, run with a copy of the tree as its working directory (for a
    /// single file, a directory that holds only the file under its own name; a program
    /// given as a relative path such as ./test.sh that exists here is run from here). Exit
    /// status 125 means "cannot tell" and never counts as the failure. With --config, the
    /// command is in the file.
    #[arg(last = true, required_unless_present = "config", value_name = "CMD")]
    pub command: Vec<String>,

    /// Read the command and every semantic option (oracle, sampling, runner, input
    /// selection, passes, budgets) from this schema_version 1 JSON file (see
    /// docs/config-schema.md). Beside it, the command line gives only SOURCE, OUTPUT, session
    /// placement and --no-progress: any other option, and `-- CMD`, is refused.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    /// The oracle, the input, how the command runs, and sampling.
    pub reduction: ReductionArgs,

    /// Stop after trying this many candidates and publish the last reproducing state.
    #[arg(long, value_name = "N", help_heading = "Budget")]
    pub max_attempts: Option<u64>,

    /// Stop reducing after this long and publish the last reproducing state.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Budget")]
    pub max_duration: Option<Duration>,

    #[command(flatten)]
    /// Which passes run.
    pub passes: PassesArgs,

    /// Never draw progress on stderr.
    #[arg(long)]
    pub no_progress: bool,

    /// Keep the reduction's evidence in DIR (state.json, journal.jsonl, the accepted tree
    /// in workspace/current), so that it can be resumed after a crash, a kill or Ctrl-C.
    /// DIR must be new or empty.
    #[arg(long, value_name = "DIR")]
    pub session: Option<PathBuf>,

    /// Continue the session in --session DIR: refused when the source or any setting
    /// differs from the session's; what it recorded is replayed, not run again.
    #[arg(long, requires = "session")]
    pub resume: bool,
}

fn parse_env(items: &[String]) -> Result<Vec<(String, String)>, ReduceError> {
    let name_ok = |n: &str| {
        let mut chars = n.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for item in items {
        let Some((name, value)) = item.split_once('=') else {
            return Err(InvalidOption::EnvForm(item.clone()).into());
        };
        if !name_ok(name) {
            return Err(InvalidOption::EnvName(name.to_string()).into());
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(InvalidOption::EnvTwice(name.to_string()).into());
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// With a single file as SOURCE, the command runs in a directory that holds only that file:
/// a program given by a relative path (`./test.sh`) that names an existing file from here,
/// other than SOURCE itself, is made absolute so that it is found from there.
fn resolve_program(argv: &mut [String], source: &Path) {
    let Some(program) = argv.first_mut() else {
        return;
    };
    let path = Path::new(program.as_str());
    if path.is_absolute() || !program.contains('/') || !path.is_file() {
        return;
    }
    let same = std::fs::canonicalize(path).ok() == std::fs::canonicalize(source).ok();
    if !same
        && let Ok(absolute) = std::path::absolute(path)
        && let Some(absolute) = absolute.to_str()
    {
        *program = absolute.to_string();
    }
}

/// The options of `reduce` and `doctor` but for the budgets, the session and its placement.
pub(super) fn build_options(
    source: PathBuf,
    output: PathBuf,
    command: &[String],
    reduction: &ReductionArgs,
    passes: &PassesArgs,
) -> Result<ReduceOptions, ReduceError> {
    let ReductionArgs {
        oracle,
        tree,
        run,
        sampling,
    } = reduction;
    let mut options = ReduceOptions::new(source.clone(), output, command.to_vec());
    options.command.env = parse_env(&run.env)?;
    options.container = run.container.to_options()?;
    options.remote = run.remote.to_options()?;
    if options.remote.is_some() && options.container.is_some() {
        return Err(InvalidOption::RemoteWithContainer.into());
    }
    if let Some(text) = &run.memory {
        if options.container.is_some() {
            return Err(InvalidOption::MemoryInContainer.into());
        }
        if options.remote.is_some() {
            return Err(InvalidOption::MemoryRemote.into());
        }
        let bytes = crate::runner::parse_memory_size(text).map_err(InvalidOption::Memory)?;
        options.command.memory = Some(bytes);
    }
    options.semantic = run.semantic.to_options();
    if let Some(code) = oracle.exit_code
        && !(0..=255).contains(&code)
    {
        return Err(InvalidOption::ExitCode(code).into());
    }
    if oracle
        .signature
        .as_deref()
        .is_some_and(|s| s.trim().is_empty())
    {
        return Err(InvalidOption::BlankSignature.into());
    }
    options.oracle = OracleSpec {
        expect: oracle.expect.clone(),
        signature: oracle.signature.clone(),
        exit_code: oracle.exit_code,
        process_failure: oracle.process_failure,
        any_failure: oracle.any_failure,
        no_frames: oracle.no_frames,
        tree_prefixes: Vec::new(),
    };
    options.allow_trivial = oracle.allow_trivial;
    let mut gitignore_files = Vec::new();
    let single_file = crate::tree::source_kind(&source).ok() == Some(crate::tree::SourceKind::File);
    if tree.gitignore && single_file {
        return Err(InvalidOption::TreeOnly {
            option: "--gitignore",
            file: source,
        }
        .into());
    }
    if single_file {
        resolve_program(&mut options.command.argv, &source);
    }
    if tree.gitignore {
        let path = source.join(".gitignore");
        if !path.is_file() {
            return Err(InvalidOption::NoGitignore(path).into());
        }
        gitignore_files.push(path);
    }
    for file in &tree.gitignore_file {
        if !file.is_file() {
            return Err(InvalidOption::GitignoreFile(file.clone()).into());
        }
        gitignore_files.push(file.clone());
    }
    for name in &tree.ignore {
        if name.is_empty() || name.contains('/') {
            return Err(InvalidOption::IgnoreName(name.clone()).into());
        }
    }
    options.rules = IgnoreRules {
        names: tree.ignore.clone(),
        paths: tree
            .ignore_path
            .iter()
            .map(|p| parse_rel_path(p))
            .collect::<Result<_, _>>()?,
        gitignore_files,
        gitignore_recursive: tree.gitignore_recursive,
        keep: tree
            .keep
            .iter()
            .map(|p| parse_rel_path(p))
            .collect::<Result<_, _>>()?,
    };
    options.timeout = run.timeout;
    if let Some(jobs) = run.jobs {
        options.jobs = jobs;
    }
    // With --remote, the jobs are the commands kept running on the cluster.
    if let (Some(_), Some(jobs)) = (&options.remote, run.remote.remote_jobs) {
        options.jobs = jobs;
    }
    options.baseline_runs = run.baseline_runs;
    options.minimiser = match run.minimiser {
        MinimiserArg::Cdd => reduce::minimise::Minimiser::Cdd,
        MinimiserArg::Halving => reduce::minimise::Minimiser::Halving,
    };
    options.syntax_guard = !run.no_syntax_guard;
    options.settle = !run.no_settle;
    options.stubs = !run.no_stubs;
    options.overlay = !run.no_overlay;
    options.trace = !run.no_trace;
    if !passes.passes.is_empty() {
        let mut list: Vec<PassName> = passes.passes.clone();
        list.sort();
        list.dedup();
        options.passes = list;
    }
    // `--level` picks the pass list (clap keeps it apart from `--passes`); with neither, the
    // run goes as fine as pays (see [`reduce::level`]).
    options.level = if let Some(level) = passes.level {
        options.passes = PassName::up_to(level.into());
        reduce::LevelChoice::Given(level.into())
    } else if passes.passes.is_empty() {
        reduce::LevelChoice::Auto
    } else {
        reduce::LevelChoice::Passes
    };
    apply_sampling(&mut options, sampling);
    Ok(options)
}

fn apply_sampling(options: &mut ReduceOptions, s: &SamplingArgs) {
    options.min_baseline_passes = s.min_baseline_passes;
    options.min_baseline_rate = s.min_baseline_rate;
    options.sampling = crate::reduce::session::Sampling {
        runs: s.candidate_runs,
        min_passes: s
            .min_candidate_passes
            .unwrap_or(if s.min_candidate_rate.is_some() {
                1
            } else {
                s.candidate_runs
            }),
        rate: s.min_candidate_rate,
        confidence: s.confidence,
        run_confidence: s.run_confidence,
    };
    options.holdout_runs = s.holdout_runs;
    options.min_holdout_rate = s.min_holdout_rate;
    options.holdout_confidence = s.holdout_confidence;
}

impl ReduceArgs {
    /// The library options these arguments stand for.
    ///
    /// # Errors
    /// A usage error naming the bad value.
    pub fn to_options(&self) -> Result<ReduceOptions, ReduceError> {
        let mut options = build_options(
            self.source.clone(),
            self.output.clone(),
            &self.command,
            &self.reduction,
            &self.passes,
        )?;
        options.max_attempts = self.max_attempts;
        options.max_duration = self.max_duration;
        options.session.clone_from(&self.session);
        options.resume = self.resume;
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("3 weeks").is_err());
        assert!(parse_duration("fast").is_err());
        for huge in ["18446744073709551615s", "721h", "0.0001", "0.5ms"] {
            assert!(
                matches!(
                    parse_duration(huge),
                    Err(super::super::runner_args::DurationError::OutOfRange(_))
                ),
                "{huge}"
            );
        }
        assert_eq!(parse_duration("1ms").unwrap(), Duration::from_millis(1));
        assert_eq!(
            parse_duration("720h").unwrap(),
            Duration::from_secs(720 * 3600)
        );
    }

    #[test]
    fn every_pass_is_a_value_spelled_as_the_report_spells_it() {
        assert_eq!(PassName::value_variants(), PassName::ALL);
        for &pass in PassName::value_variants() {
            let value = pass.to_possible_value().expect("every pass is shown");
            assert_eq!(
                serde_json::to_value(pass).expect("a pass name serialises"),
                serde_json::Value::from(value.get_name()),
            );
            assert_eq!(PassName::from_str(value.get_name(), false), Ok(pass));
        }
    }

    #[test]
    fn environment_overrides_are_checked() {
        assert_eq!(
            parse_env(&["A_1=x=y".into()]).unwrap(),
            vec![("A_1".to_string(), "x=y".to_string())]
        );
        assert!(parse_env(&["1A=x".into()]).is_err());
        assert!(parse_env(&["NOVALUE".into()]).is_err());
        assert!(parse_env(&["A=1".into(), "A=2".into()]).is_err());
    }
}

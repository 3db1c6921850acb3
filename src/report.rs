//! `report.json` and `REPROMIN.md`: what a reduction did, for machines and for people.
//!
//! The schema is documented in `docs/report-schema.md`. The accounting identities hold for
//! every phase of a complete run:
//! `attempts = no_op + rejected + accepted + superseded + aborted` and
//! `oracle_sample_uses = oracle_samples + cache_hits`.
//! Environment overrides appear only as sorted names plus a SHA-256 digest; their values are
//! never written.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::oracle::OracleSummary;
use crate::reduce::edits::Edit;
use crate::reduce::session::{Event, PhaseStats};
use crate::reduce::{BaselineRun, PassName, ReduceOptions, Reduction, StopReason};
use crate::text::{hex, shell_quote};
use crate::tree::{Size, SourceKind};

pub mod progress;

/// The report format version.
pub const SCHEMA_VERSION: u32 = 1;

/// Size and identity of a tree.
#[derive(Clone, Debug, Serialize)]
pub struct TreeFacts {
    /// Regular files.
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Symlinks.
    pub symlinks: u64,
    /// Regular-file bytes.
    pub bytes: u64,
    /// `tree-sha256-v2`.
    pub tree_sha256_v2: String,
    /// `tree-content-sha256-v1`.
    pub tree_content_sha256_v1: String,
}

/// One sentence of REPROMIN.md on how fine the passes went, and why.
fn level_sentence(level: &crate::reduce::level::LevelRecord) -> String {
    use crate::reduce::level::LevelHow;
    let name = |l: crate::reduce::Level| {
        serde_json::to_value(l)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    match level.how {
        LevelHow::Given => format!("Level: {} (`--level`).", name(level.level)),
        LevelHow::Passes => format!("Level: {} (the passes of `--passes`).", name(level.level)),
        LevelHow::Auto => {
            let mut text = format!("Level: {}, chosen by the run.", name(level.level));
            for step in &level.steps {
                let _ = write!(
                    text,
                    " {} {}: {} (about {:.1} s of runs, {:.1} s allowed).",
                    if step.ran {
                        "Went on to"
                    } else {
                        "Stopped before"
                    },
                    name(step.level),
                    step.reason,
                    step.estimated_ms as f64 / 1000.0,
                    step.allowance_ms as f64 / 1000.0
                );
            }
            text
        }
    }
}

/// How the run was configured.
#[derive(Clone, Debug, Serialize)]
pub struct Execution {
    /// Parallel jobs.
    pub jobs: usize,
    /// Per-candidate timeout in milliseconds.
    pub timeout_ms: u64,
    /// Whether the timeout was given (`false`: derived from the baseline).
    pub timeout_given: bool,
    /// The per-candidate timeout in force when the passes ended, in milliseconds: a
    /// derived timeout follows the accepted candidates' run times, never above `timeout_ms`.
    pub final_timeout_ms: u64,
    /// Baseline runs.
    pub baseline_runs: usize,
    /// Passes that ran.
    pub passes: Vec<PassName>,
    /// How fine the passes went, and why.
    pub level: crate::reduce::level::LevelRecord,
    /// How the deletion passes shrink their chunks.
    pub minimiser: crate::reduce::minimise::Minimiser,
    /// Extra ignored basenames.
    pub ignored_names: Vec<String>,
    /// Ignored relative paths.
    pub ignored_paths: Vec<String>,
    /// Gitignore rule files given.
    pub gitignore_files: Vec<String>,
    /// `.gitignore` files found in the tree with `--gitignore-recursive`, relative to SOURCE.
    pub gitignore_nested: Vec<String>,
    /// SHA-256 over the contents of the rule files, given ones first, then nested ones.
    pub gitignore_sha256: Option<String>,
    /// Nested `.gitignore` files were read.
    pub gitignore_recursive: bool,
    /// Kept paths.
    pub keep_paths: Vec<String>,
    /// Names of environment overrides, sorted.
    pub env_names: Vec<String>,
    /// SHA-256 over the sorted `NAME=VALUE` overrides.
    pub env_sha256: Option<String>,
    /// `--max-attempts`.
    pub max_attempts: Option<u64>,
    /// `--max-duration` in seconds.
    pub max_duration_seconds: Option<f64>,
    /// Whether a budget ended the run.
    pub budget_exhausted: bool,
    /// `--allow-trivial`.
    pub allow_trivial: bool,
    /// How baseline and candidates were sampled.
    pub sampling: SamplingFacts,
    /// Where the commands ran: `host`, `docker` (a container CLI, see `container`) or
    /// `remote` (a Remote Execution API cluster, see `remote`).
    pub runner: &'static str,
    /// The container runner: its CLI, the image reference and the id every container ran,
    /// and the limits; `null` on the host.
    pub container: Option<crate::container::ContainerRecord>,
    /// The cluster the commands ran on (`--remote`): the endpoint, the instance, the
    /// session's runs it executed and the probes its action cache answered; absent when
    /// they ran here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::reduce::RemoteRecord>,
    /// The semantic backend (`--semantic-endpoint`): its name, model and endpoint, calls,
    /// proposed and accepted edits, and why answers were refused (never the token); `null`
    /// without one.
    pub semantic: Option<crate::reduce::semantic::SemanticRecord>,
    /// Whether the settle state of the per-file passes was on (`--no-settle` turns it off).
    pub settle: bool,
    /// Whether the syntax pass replaced function bodies by stubs (`--no-stubs` turns it
    /// off).
    pub stubs: bool,
    /// The file-access tracer: the tool, its outcome, and how many entries the traced run
    /// touched and left untouched; `null` when the files pass did not run.
    pub trace: Option<crate::reduce::access::TraceRecord>,
    /// Whether the runs saw their tree through an overlay mount (`used`), or why not
    /// (`reason`: `--no-overlay`, runs confined, or the mount the machine refused).
    pub overlay: crate::overlay::OverlayRecord,
    /// How each run's processes were kept together and ended: `cgroup` (a cgroup per run,
    /// killed as a whole, so nothing a run started outlives it) or `process-group` (where
    /// no cgroup could be made: a process that leaves the group is not reached).
    pub containment: crate::runner::Containment,
    /// `--memory`: the limit in bytes and how it was enforced (`cgroup` or `rlimit-as`);
    /// absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::runner::MemoryRecord>,
}

/// The sampling configuration.
#[derive(Clone, Debug, Serialize)]
pub struct SamplingFacts {
    /// Baseline runs that had to reproduce (`null`: all).
    pub min_baseline_passes: Option<u64>,
    /// Baseline exact rate gate.
    pub min_baseline_rate: Option<f64>,
    /// Planned samples per candidate.
    pub candidate_runs: u64,
    /// Passes a candidate needs.
    pub min_candidate_passes: u64,
    /// Candidate exact rate gate.
    pub min_candidate_rate: Option<f64>,
    /// Confidence of the rate gates and the confidence sequence.
    pub confidence: f64,
    /// Run-wide confidence.
    pub run_confidence: Option<f64>,
    /// The statistical statements assume independent, identically distributed samples.
    pub iid_assumption: String,
}

/// The holdout on the published tree.
#[derive(Clone, Debug, Serialize)]
pub struct HoldoutFacts {
    /// Runs.
    pub runs: u64,
    /// Runs that reproduced.
    pub passes: u64,
    /// Target rate.
    pub rate: f64,
    /// Confidence.
    pub confidence: f64,
    /// The smallest passing count.
    pub required_passes: u64,
    /// Conservative Clopper-Pearson lower bound on the reproduction rate.
    pub lower_bound: f64,
    /// Wilson lower bound (descriptive only).
    pub wilson_lower: f64,
    /// Whether the exact gate passed.
    pub certified: bool,
    /// Planned once on the frozen tree and oracle; never used to change the tree.
    pub iid_assumption: String,
}

/// Where the time of the passes' commands went, in milliseconds summed over every run of
/// every worker (so with `--jobs` above 1 they can add up to more than `reduce_ms`). What
/// `reduce_ms` holds beyond them (with one worker) is the search itself: making, keying and
/// choosing the candidates.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeTimeRecord {
    /// Showing each run its candidate tree (the overlay's upper layer written, or the plain
    /// copy brought to the candidate, what the last run wrote undone first).
    pub prepare_ms: u64,
    /// The commands themselves, from each start (its overlay mount included) until its
    /// process group has ended and its output is read.
    pub command_ms: u64,
    /// Around each command: its `TMPDIR` emptied before it, its overlay layer removed after.
    pub clean_up_ms: u64,
    /// Each accepted cut written to the clean copy of the accepted tree and read back.
    pub commit_ms: u64,
}

impl ProbeTimeRecord {
    /// The record of `time`, in whole milliseconds.
    pub fn of(time: crate::reduce::session::ProbeTime) -> ProbeTimeRecord {
        use crate::reduce::millis;
        ProbeTimeRecord {
            prepare_ms: millis(time.prepare),
            command_ms: millis(time.command),
            clean_up_ms: millis(time.clean_up),
            commit_ms: millis(time.commit),
        }
    }
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `repromin` and its version.
    pub tool: String,
    /// The command, as given.
    pub command: Vec<String>,
    /// The source directory, as given.
    pub source_path: String,
    /// The output directory, as given.
    pub output_path: String,
    /// `file` when SOURCE was a single file, published as a file at OUTPUT; absent for a
    /// directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_kind: Option<SourceKind>,
    /// With a single file as SOURCE: the name the command finds it under in its working
    /// directory (SOURCE's own name); absent for a directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// The oracle.
    pub oracle: OracleSummary,
    /// Baseline runs.
    pub baseline: Vec<BaselineRun>,
    /// Whether the empty tree reproduced (`null` when it was not tried).
    pub empty_tree_reproduces: Option<bool>,
    /// Final validation of the published tree (`null` when interrupted).
    pub final_validation: Option<BaselineRun>,
    /// The source tree.
    pub source: TreeFacts,
    /// The published tree.
    pub output: TreeFacts,
    /// `fixed-point`, `max-attempts`, `max-duration` or `interrupted`.
    pub ended_by: String,
    /// Candidates tried.
    pub attempts: u64,
    /// Commits.
    pub accepted_mutations: u64,
    /// Cache hits.
    pub cache_hits: u64,
    /// Commands run by the passes.
    pub oracle_samples: u64,
    /// Wall time of the passes in milliseconds.
    pub reduce_ms: u64,
    /// Where the time of the passes' commands went, summed over the workers.
    pub probe_time: ProbeTimeRecord,
    /// Files the baseline output names.
    pub named_files: Vec<String>,
    /// Entries of SOURCE left out by ignore rules (top-most only), relative to SOURCE.
    pub left_out: Vec<String>,
    /// Configuration.
    pub execution: Execution,
    /// Per-phase counters.
    pub phase_statistics: Vec<PhaseStats>,
    /// One record per commit.
    pub events: Vec<Event>,
    /// The published tree as edits against the source.
    pub edits: Vec<Edit>,
    /// The baseline as a sample set, when baseline sampling options were given.
    pub baseline_evidence: Option<crate::reduce::BaselineEvidence>,
    /// The holdout, when one was planned.
    pub holdout: Option<HoldoutFacts>,
}

fn facts(size: Size, full: String, content: String) -> TreeFacts {
    TreeFacts {
        files: size.files,
        dirs: size.dirs,
        symlinks: size.symlinks,
        bytes: size.bytes,
        tree_sha256_v2: full,
        tree_content_sha256_v1: content,
    }
}

/// SHA-256 of the sorted `NAME=VALUE` pairs, NUL-separated; `None` when there are none.
pub fn env_digest(env: &[(String, String)]) -> (Vec<String>, Option<String>) {
    if env.is_empty() {
        return (Vec::new(), None);
    }
    let mut pairs: Vec<_> = env.iter().collect();
    pairs.sort();
    let mut hasher = Sha256::new();
    for (name, value) in &pairs {
        hasher.update(name.as_bytes());
        hasher.update(b"=");
        hasher.update(value.as_bytes());
        hasher.update([0]);
    }
    (
        pairs.iter().map(|(n, _)| n.clone()).collect(),
        Some(hex(&hasher.finalize())),
    )
}

/// The rule files whose contents the report digests, in order: the `--gitignore-file`s,
/// then the nested `.gitignore` files the scan read. [`crate::export`] reads them and hands
/// their contents to [`build`].
pub fn gitignore_sources(reduction: &Reduction, options: &ReduceOptions) -> Vec<PathBuf> {
    options
        .rules
        .gitignore_files
        .iter()
        .cloned()
        .chain(
            reduction
                .preflight
                .scan
                .nested_gitignores
                .iter()
                .map(|p| options.source.join(p)),
        )
        .collect()
}

fn gitignore_digest(contents: &[Vec<u8>]) -> Option<String> {
    if contents.is_empty() {
        return None;
    }
    let mut hasher = Sha256::new();
    for data in contents {
        hasher.update((data.len() as u64).to_le_bytes());
        hasher.update(data);
    }
    Some(hex(&hasher.finalize()))
}

/// Builds the report of a finished reduction.
///
/// `gitignore_contents` holds the contents of [`gitignore_sources`], in that order (an
/// unreadable file counts as empty); the report digests them and reads no file itself.
pub fn build(
    reduction: &Reduction,
    options: &ReduceOptions,
    gitignore_contents: &[Vec<u8>],
) -> Report {
    let source_tree = &reduction.preflight.tree;
    let (env_names, env_sha256) = env_digest(&options.command.env);
    let ended_by = match reduction.stopped {
        None => "fixed-point",
        Some(StopReason::MaxAttempts) => "max-attempts",
        Some(StopReason::MaxDuration) => "max-duration",
        Some(StopReason::Interrupted) => "interrupted",
    };
    Report {
        schema_version: SCHEMA_VERSION,
        tool: format!("repromin {}", env!("CARGO_PKG_VERSION")),
        command: options.command.argv.clone(),
        source_path: options.source.display().to_string(),
        output_path: options.output.display().to_string(),
        source_kind: (reduction.preflight.source_kind == SourceKind::File)
            .then_some(SourceKind::File),
        file_name: (reduction.preflight.source_kind == SourceKind::File)
            .then(|| source_tree.entries.keys().next().map(ToString::to_string))
            .flatten(),
        oracle: reduction.oracle.clone(),
        baseline: reduction.preflight.baseline.clone(),
        empty_tree_reproduces: reduction.preflight.trivial,
        final_validation: reduction.final_run.clone(),
        source: facts(
            source_tree.size(),
            source_tree.fingerprint().to_string(),
            source_tree.content_fingerprint().to_string(),
        ),
        output: facts(
            reduction.tree.size(),
            reduction.fingerprint.to_string(),
            reduction.tree.content_fingerprint().to_string(),
        ),
        ended_by: ended_by.to_string(),
        attempts: reduction.attempts,
        accepted_mutations: reduction.events.len() as u64,
        cache_hits: reduction.phases.iter().map(|p| p.cache_hits).sum(),
        oracle_samples: reduction.phases.iter().map(|p| p.oracle_samples).sum(),
        reduce_ms: reduction.reduce_ms,
        probe_time: ProbeTimeRecord::of(reduction.probe_time),
        named_files: reduction.preflight.named.clone(),
        left_out: reduction.preflight.scan.ignored.clone(),
        execution: Execution {
            jobs: options.jobs,
            timeout_ms: crate::reduce::millis(reduction.preflight.timeout),
            timeout_given: options.timeout.is_some(),
            final_timeout_ms: u64::try_from(reduction.final_timeout.as_millis())
                .unwrap_or(u64::MAX),
            baseline_runs: options.baseline_runs,
            passes: reduction.passes.clone(),
            level: reduction.level.clone(),
            minimiser: options.minimiser,
            ignored_names: sorted(&options.rules.names),
            ignored_paths: sorted(&options.rules.paths),
            gitignore_files: options
                .rules
                .gitignore_files
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            gitignore_nested: reduction.preflight.scan.nested_gitignores.clone(),
            gitignore_sha256: gitignore_digest(gitignore_contents),
            gitignore_recursive: options.rules.gitignore_recursive,
            keep_paths: sorted(&options.rules.keep),
            env_names,
            env_sha256,
            max_attempts: options.max_attempts,
            max_duration_seconds: options.max_duration.map(|d| d.as_secs_f64()),
            budget_exhausted: matches!(
                reduction.stopped,
                Some(StopReason::MaxAttempts | StopReason::MaxDuration)
            ),
            allow_trivial: options.allow_trivial,
            sampling: SamplingFacts {
                min_baseline_passes: options.min_baseline_passes,
                min_baseline_rate: options.min_baseline_rate,
                candidate_runs: options.sampling.runs,
                min_candidate_passes: options.sampling.min_passes,
                min_candidate_rate: options.sampling.rate,
                confidence: options.sampling.confidence,
                run_confidence: options.sampling.run_confidence,
                iid_assumption: IID.to_string(),
            },
            runner: match (&reduction.container, &reduction.remote) {
                (Some(_), _) => "docker",
                (None, Some(_)) => "remote",
                (None, None) => "host",
            },
            container: reduction.container.clone(),
            remote: reduction.remote.clone(),
            semantic: reduction.semantic.clone(),
            settle: options.settle,
            stubs: options.stubs,
            trace: reduction.trace.clone(),
            overlay: reduction.overlay.clone(),
            containment: crate::runner::containment(),
            memory: options.command.memory.map(crate::runner::MemoryRecord::of),
        },
        phase_statistics: reduction.phases.clone(),
        events: reduction.events.clone(),
        edits: reduction.edits.clone(),
        baseline_evidence: reduction.preflight.baseline_evidence.clone(),
        holdout: reduction.holdout.as_ref().map(|h| HoldoutFacts {
            runs: h.runs,
            passes: h.passes,
            rate: h.rate,
            confidence: h.confidence,
            required_passes: h.required_passes,
            lower_bound: h.lower_bound,
            wilson_lower: h.wilson_lower,
            certified: h.certified,
            iid_assumption: IID.to_string(),
        }),
    }
}

/// How the reports state the statistical assumption.
const IID: &str = "required, not verified";

fn sorted(items: &[String]) -> Vec<String> {
    let mut out = items.to_vec();
    out.sort();
    out.dedup();
    out
}

/// The report as pretty JSON with a trailing newline.
///
/// # Errors
/// The report does not serialise.
pub fn to_json(report: &Report) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0%".to_string();
    }
    #[expect(clippy::cast_precision_loss, reason = "a display percentage")]
    let pct = 100.0 * part as f64 / whole as f64;
    format!("{pct:.1}%")
}

/// `progress.svg`: the course of `reduction` (see [`progress`]).
pub fn progress_svg(reduction: &Reduction) -> String {
    let size = reduction.preflight.tree.size();
    progress::svg(&progress::Course {
        source_bytes: size.bytes,
        source_entries: size.files + size.dirs + size.symlinks,
        events: &reduction.events,
        spans: &reduction.spans,
    })
}

/// `REPROMIN.md`: how to reproduce, what was removed, the figures.
pub fn to_markdown(report: &Report) -> String {
    let mut md = String::new();
    let command: Vec<String> = report.command.iter().map(|a| shell_quote(a)).collect();
    let s = &report.source;
    let o = &report.output;
    let _ = writeln!(md, "# Reduced reproduction\n");
    let what = if report.file_name.is_some() {
        "file"
    } else {
        "tree"
    };
    let _ = writeln!(
        md,
        "This {what} is what remained of `{}` after repromin removed everything the failure \
         did not need. It was checked to fail the same way before it was published.\n",
        report.source_path
    );
    let _ = writeln!(md, "## Reproduce\n");
    if let Some(name) = &report.file_name {
        // The command finds the file under its source name, alone in its directory.
        let _ = writeln!(
            md,
            "```console\n$ mkdir repro && cp {} repro/{} && cd repro\n$ {}\n```\n",
            shell_quote(&report.output_path),
            shell_quote(name),
            command.join(" ")
        );
    } else {
        let _ = writeln!(
            md,
            "```console\n$ cd {}\n$ {}\n```\n",
            shell_quote(&report.output_path),
            command.join(" ")
        );
    }
    let _ = writeln!(md, "Expected failure ({}):\n", report.oracle.mode);
    if let Some(sig) = &report.oracle.signature {
        let _ = writeln!(md, "```text\n{sig}\n```\n");
    }
    if let Some(frames) = &report.oracle.frames {
        let frames: Vec<String> = frames.iter().map(|f| format!("`{f}`")).collect();
        let _ = writeln!(md, "- raised from {} (innermost first)", frames.join(" < "));
    }
    if let Some(expect) = &report.oracle.expect {
        let _ = writeln!(md, "- output matches `{expect}`");
    }
    if let Some(code) = report.oracle.exit_code {
        let _ = writeln!(md, "- exit status {code}");
    }
    if let Some(t) = report.oracle.termination {
        let _ = writeln!(md, "- ends with {}", t.describe());
    }
    if let Some(m) = &report.execution.memory {
        let _ = writeln!(
            md,
            "- within {} of memory: every run was limited by {} (`--memory`), and a run over \
             the limit never counted as the failure\n",
            crate::runner::format_size(m.limit_bytes),
            m.mechanism.name()
        );
    }
    let _ = writeln!(md, "## Figures\n");
    let _ = writeln!(md, "| | source | reduced | removed |");
    let _ = writeln!(md, "| --- | ---: | ---: | ---: |");
    let _ = writeln!(
        md,
        "| files | {} | {} | {} |",
        s.files,
        o.files,
        percent(s.files.saturating_sub(o.files), s.files)
    );
    let _ = writeln!(
        md,
        "| bytes | {} | {} | {} |",
        s.bytes,
        o.bytes,
        percent(s.bytes.saturating_sub(o.bytes), s.bytes)
    );
    let _ = writeln!(
        md,
        "\nEnded by: {}. Candidates tried: {}, commands run: {}, cache hits: {}, commits: {}, \
         time in passes: {:.1} s. The commands took {:.1} s, repromin's own work around them \
         {:.1} s (summed over the workers; `probe_time` in report.json).\n",
        report.ended_by,
        report.attempts,
        report.oracle_samples,
        report.cache_hits,
        report.accepted_mutations,
        report.reduce_ms as f64 / 1000.0,
        report.probe_time.command_ms as f64 / 1000.0,
        (report.probe_time.prepare_ms + report.probe_time.clean_up_ms + report.probe_time.commit_ms)
            as f64
            / 1000.0
    );
    let _ = writeln!(md, "{}\n", level_sentence(&report.execution.level));
    let _ = writeln!(
        md,
        "The course of the reduction, bytes and entries left over time and over commands, \
         each run of a pass a band of its own: [progress.svg](progress.svg).\n"
    );
    let _ = writeln!(
        md,
        "| phase | attempts | accepted | rejected | no-op | superseded | aborted | commands | cache hits | bytes removed |"
    );
    let _ = writeln!(
        md,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for p in &report.phase_statistics {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.phase,
            p.attempts,
            p.accepted,
            p.rejected,
            p.no_op,
            p.superseded,
            p.aborted,
            p.oracle_samples,
            p.cache_hits,
            p.bytes_removed
        );
    }
    if let Some(h) = &report.holdout {
        let _ = writeln!(
            md,
            "\nHoldout on the published tree: {} of {} runs reproduced (at least {} needed for a rate above {} at confidence {}); lower bound {:.4}: {}. The runs are assumed independent and identically distributed (required, not verified).",
            h.passes,
            h.runs,
            h.required_passes,
            h.rate,
            h.confidence,
            h.lower_bound,
            if h.certified {
                "certified"
            } else {
                "not certified"
            }
        );
    }
    let _ = writeln!(md, "\n## What was removed\n");
    let deleted: Vec<&str> = report
        .edits
        .iter()
        .filter_map(|e| match e {
            Edit::Delete { path } => Some(path.as_str()),
            Edit::DeleteBytes { .. } | Edit::Replace { .. } => None,
        })
        .collect();
    if deleted.is_empty() {
        let _ = writeln!(md, "No file or directory was deleted.");
    } else {
        let _ = writeln!(md, "Deleted entries ({}):\n", deleted.len());
        for path in deleted.iter().take(200) {
            let _ = writeln!(md, "- `{path}`");
        }
        if deleted.len() > 200 {
            let _ = writeln!(md, "- … and {} more (see report.json)", deleted.len() - 200);
        }
    }
    let mut cut: Vec<(&str, usize)> = Vec::new();
    for e in &report.edits {
        if let Edit::DeleteBytes { path, start, end } = e {
            match cut.last_mut() {
                Some((p, n)) if *p == path.as_str() => *n += end - start,
                _ => cut.push((path.as_str(), end - start)),
            }
        }
    }
    if !cut.is_empty() {
        let _ = writeln!(md, "\nFiles cut down (bytes removed):\n");
        for (path, n) in cut.iter().take(200) {
            let _ = writeln!(md, "- `{path}`: {n}");
        }
    }
    let replaced: Vec<String> = report
        .edits
        .iter()
        .filter_map(|e| match e {
            Edit::Replace {
                path,
                start,
                end,
                with,
                ..
            } => Some(format!(
                "- `{path}` bytes {start}..{end} by `{}`",
                clipped(with, 60)
            )),
            _ => None,
        })
        .collect();
    if !replaced.is_empty() {
        let _ = writeln!(
            md,
            "\nReplaced ranges ({}), each listed in report.json with the SHA-256 of what it replaced:\n",
            replaced.len()
        );
        for line in replaced.iter().take(200) {
            let _ = writeln!(md, "{line}");
        }
        if replaced.len() > 200 {
            let _ = writeln!(
                md,
                "- … and {} more (see report.json)",
                replaced.len() - 200
            );
        }
    }
    let _ = writeln!(
        md,
        "\n## Identity\n\n- source `tree-sha256-v2`: `{}`\n- reduced `tree-sha256-v2`: `{}`\n- reduced `tree-content-sha256-v1`: `{}`",
        s.tree_sha256_v2, o.tree_sha256_v2, o.tree_content_sha256_v1
    );
    md
}

/// `text` escaped (no newline, control character, backslash or backtick survives) and cut
/// to at most `max` characters.
fn clipped(text: &str, max: usize) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '`' => escaped.push_str("\\u{60}"),
            '\\' => escaped.push_str("\\\\"),
            c if c.is_control() => escaped.extend(c.escape_default()),
            c => escaped.push(c),
        }
    }
    crate::text::clip(&escaped, max, "…")
}

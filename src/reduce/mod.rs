//! The reducer: from a source tree and a failing command to a minimal tree that fails the
//! same way.
//!
//! [`reduce`] validates the request, scans the source, confirms the baseline at least twice,
//! learns the oracle, refuses an oracle that accepts the empty tree, then runs the passes to
//! a global fixed point through a dirty worklist (a pass that commits something makes every
//! other pass dirty again; the run ends when no pass is dirty), validates the final tree once
//! more and hands it to [`crate::export`].

pub mod access;
pub(crate) mod blocks;
pub mod durable;
pub mod edits;
mod error;
mod fixed_point;
mod fresh;
pub(crate) mod identifiers;
mod invalid;
pub mod level;
pub(crate) mod manifest;
pub(crate) mod minimise;
pub mod options;
pub(crate) mod pass;
pub(crate) mod passes;
pub(crate) mod ranges;
pub mod semantic;
pub mod session;
pub mod syntax;
mod validation;

use crate::container::{Container, ContainerRecord, ContainerRuns, Mount};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::oracle::{Oracle, OracleError, OracleSummary};
use crate::runner::{RunOutcome, Termination};
use crate::signature::Normalizer;
use crate::tree::{Fingerprint, ScanReport, SourceKind, Tree, TreeError};

use durable::{Durable, Record};
use edits::{Edit, EditSet, Mutation};
use fresh::{basename, run_fresh};
use pass::{Pass, PassContext};
use session::{Event, Observer, PhaseStats, Session, Setup, Worker};

pub use options::{
    BASELINE_TIMEOUT, BaselineRun, Level, LevelChoice, PassName, ReduceOptions, RemoteOptions,
    RemoteRecord, StopReason, TIMEOUT_FACTOR, TIMEOUT_FLOOR,
};

pub use error::ReduceError;
pub use invalid::InvalidOption;
pub(crate) use options::millis;
pub use validation::{MAX_JOBS, validate};

/// What the preflight found: enough for `doctor`, and the start of every reduction.
pub struct Preflight {
    /// The scanned source.
    pub tree: Arc<Tree>,
    /// Whether SOURCE was a directory or a single file (a one-file tree).
    pub source_kind: SourceKind,
    /// What the scan left out.
    pub scan: ScanReport,
    /// The learned oracle.
    pub oracle: Oracle,
    /// Baseline runs.
    pub baseline: Vec<BaselineRun>,
    /// The first baseline run's output.
    pub baseline_output: Vec<u8>,
    /// The per-candidate timeout in force.
    pub timeout: Duration,
    /// Files the failure output names.
    pub named: Vec<String>,
    /// Whether the empty tree reproduced (only with `--allow-trivial`).
    pub trivial: Option<bool>,
    /// The baseline as a sample set, when baseline sampling options were given.
    pub baseline_evidence: Option<BaselineEvidence>,
    /// The container runner the runs were made in, if any.
    pub container: Option<ContainerRecord>,
}

/// The baseline as a sample set.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BaselineEvidence {
    /// Baseline runs.
    pub runs: u64,
    /// Runs that showed the learned failure.
    pub passes: u64,
    /// The run (1-based) whose output fixed the signature; it is left out of the rate test.
    pub discovery_run: u64,
    /// Runs after the discovery run: the rate test's samples.
    pub rate_samples: u64,
    /// How many of those showed the failure.
    pub rate_passes: u64,
    /// The rate gate, if any.
    pub min_rate: Option<f64>,
    /// Its confidence.
    pub confidence: f64,
    /// Whether the exact rate gate passed (`None` without a rate).
    pub exact_gate: Option<bool>,
}

/// Evaluates the baseline as a sample set: the first run the oracle can learn from fixes
/// the signature; the count gate uses every run; the rate gate only the runs after it.
fn sample_baseline(
    options: &ReduceOptions,
    runs: &[(RunOutcome, Normalizer)],
) -> Result<(Oracle, BaselineEvidence), ReduceError> {
    let mut first_error = None;
    let mut found = None;
    let spec = oracle_spec(options);
    for i in 0..runs.len() {
        match spec.learn(&runs[i..=i]) {
            Ok(oracle) => {
                found = Some((i, oracle));
                break;
            }
            Err(err) => {
                if first_error.is_none() {
                    first_error = Some(err);
                }
            }
        }
    }
    let Some((discovery, oracle)) = found else {
        return Err(first_error.map_or(
            ReduceError::Internal("no baseline run"),
            ReduceError::Oracle,
        ));
    };
    let passes = runs.iter().filter(|(r, n)| oracle.judge(r, n).pass).count() as u64;
    let after = &runs[discovery + 1..];
    let rate_passes = after
        .iter()
        .filter(|(r, n)| oracle.judge(r, n).pass)
        .count() as u64;
    let confidence = options.sampling.confidence;
    let exact_gate = options.min_baseline_rate.map(|rate| {
        crate::stats::exact_rate_gate(rate_passes, after.len() as u64, rate, confidence)
            .unwrap_or(false)
    });
    let evidence = BaselineEvidence {
        runs: runs.len() as u64,
        passes,
        discovery_run: discovery as u64 + 1,
        rate_samples: after.len() as u64,
        rate_passes,
        min_rate: options.min_baseline_rate,
        confidence,
        exact_gate,
    };
    let needed = options.min_baseline_passes.unwrap_or(1);
    if passes < needed || exact_gate == Some(false) {
        return Err(ReduceError::Oracle(OracleError::Flaky {
            first_run: evidence.discovery_run as usize,
            first: oracle
                .signature()
                .map_or_else(|| "the failure".to_string(), str::to_string),
            other_run: runs.len(),
            other: format!(
                "only {passes} of {} baseline runs showed it ({rate_passes} of the {} after the first), below the sampling options",
                runs.len(),
                after.len()
            ),
        }));
    }
    Ok((oracle, evidence))
}

/// A finished reduction, ready to export.
pub struct Reduction {
    /// The preflight.
    pub preflight: Preflight,
    /// The final state as edits against the source.
    pub edits: Vec<Edit>,
    /// The final tree.
    pub tree: Tree,
    /// Its full fingerprint.
    pub fingerprint: Fingerprint,
    /// Per-phase statistics.
    pub phases: Vec<PhaseStats>,
    /// Commits.
    pub events: Vec<Event>,
    /// The runs of the passes, in order.
    pub spans: Vec<session::PassSpan>,
    /// Candidates tried.
    pub attempts: u64,
    /// Why it stopped early, if it did.
    pub stopped: Option<StopReason>,
    /// The final validation run, if one was made.
    pub final_run: Option<BaselineRun>,
    /// Wall time of the reduction passes.
    pub reduce_ms: u64,
    /// Where the time of the passes' runs went.
    pub probe_time: session::ProbeTime,
    /// The per-candidate timeout in force at the end (see [`Session::timeout`]).
    pub final_timeout: Duration,
    /// The oracle summary.
    pub oracle: OracleSummary,
    /// The holdout on the final tree, when one was planned.
    pub holdout: Option<crate::stats::HoldoutResult>,
    /// The container runner every command ran in, if any.
    pub container: Option<ContainerRecord>,
    /// The cluster every command ran on (`--remote`), and how its runs were answered.
    pub remote: Option<RemoteRecord>,
    /// What the semantic seam did, when a backend was set up.
    pub semantic: Option<semantic::SemanticRecord>,
    /// What the file-access tracer did, when the files pass ran.
    pub trace: Option<access::TraceRecord>,
    /// Whether the runs saw their tree through an overlay mount, or why not.
    pub overlay: crate::overlay::OverlayRecord,
    /// How fine the passes went, and why.
    pub level: level::LevelRecord,
    /// The passes that ran, coarse to fine.
    pub passes: Vec<PassName>,
}

/// What the run looked like so far, for the choice of a finer level.
fn progress(
    session: &Session,
    preflight: &Preflight,
    started: Instant,
    deadline: Option<Instant>,
    jobs: usize,
) -> level::Progress {
    let samples: u64 = session.phases().iter().map(|p| p.oracle_samples).sum();
    let baseline: u64 = preflight.baseline.iter().map(|r| r.duration_ms).sum();
    level::Progress {
        bytes: session.current.size().bytes,
        runs: samples + preflight.baseline.len() as u64,
        run_time: session.probe_time().command + Duration::from_millis(baseline),
        jobs,
        elapsed: started.elapsed(),
        remaining: deadline.map(|d| d.saturating_duration_since(Instant::now())),
    }
}

/// The oracle's options with where the tree shows in normalised output: the copy's path
/// (`<tmp>/run/BASENAME`), the container's `/workspace`, or the adopted directory (`<tmp>`).
fn oracle_spec(options: &ReduceOptions) -> crate::oracle::OracleSpec {
    let mut spec = options.oracle.clone();
    let copy = Normalizer::new(&[]).normalize(&format!("<tmp>/run/{}", basename(options)));
    spec.tree_prefixes = vec![
        copy,
        crate::container::WORKSPACE.to_string(),
        "<tmp>".to_string(),
    ];
    spec.tree_prefixes
        .sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    spec.tree_prefixes.dedup();
    spec
}

/// Whether `needle` occurs in `text` as a whole path: not glued to a longer name on
/// either side.
fn mentions(text: &str, needle: &str) -> bool {
    let name_char = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        before.is_none_or(|c| !name_char(c))
            && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// Relative paths of files that the output names, by relative path or by a basename with
/// an extension.
fn named_files(tree: &Tree, output: &str) -> Vec<String> {
    tree.entries
        .iter()
        .filter(|(_, e)| e.node.data().is_some())
        .map(|(p, _)| p.to_string())
        .filter(|p| {
            let base = p.rsplit('/').next().unwrap_or(p);
            (p.contains('/') && mentions(output, p))
                || (base.contains('.') && mentions(output, base))
        })
        .collect()
}

/// The tree with everything deleted that may be deleted: every entry that is neither kept
/// nor an ancestor of a kept or pinned path, taken at its top-most point.
fn empty_candidate(tree: &Tree, keep: &[String], pinned: &[String]) -> Mutation {
    let ctx = PassContext {
        keep: keep.to_vec(),
        pinned: pinned.to_vec(),
        named: Vec::new(),
        minimiser: minimise::Minimiser::default(),
        syntax_guard: false,
        within_lines: false,
        settle: false,
        stubs: false,
        confirming: false,
        strace: None,
    };
    Mutation::Remove(
        tree.entries
            .keys()
            .filter(|p| !ctx.protected(p))
            .filter(|p| {
                let parent = crate::tree::parent_of(p);
                parent.is_empty() || ctx.protected(parent)
            })
            .cloned()
            .collect(),
    )
}

/// Scans, runs the baseline, learns the oracle and checks the empty tree.
///
/// # Errors
/// Every way the request or the baseline is unusable.
pub fn preflight(
    options: &ReduceOptions,
    scratch: &Path,
    interrupt: &AtomicBool,
) -> Result<Preflight, ReduceError> {
    let mut place = Place::fresh(options)?;
    preflight_in(options, scratch, &mut place, interrupt, None)
}

/// Where the command runs: fresh copies in the scratch directory (on the host or in
/// containers), or one adopted directory that holds an installed environment (see
/// `crate::workspace::Workspace::adopt`).
pub enum Place {
    /// Fresh copies, on the host.
    Fresh,
    /// Fresh copies, each run in a container with the copy at `/workspace`.
    Container(Arc<ContainerRuns>),
    /// The adopted directories' workers (one per job).
    Adopted(Vec<Worker>),
    /// A Remote Execution API cluster (`--remote`): each run's tree is uploaded and run
    /// there.
    Remote(crate::remote::Remote),
}

impl Place {
    /// Fresh copies where `options` say: on the host, or in containers of the prepared
    /// container runner (the engine checked, the image resolved, stale containers removed).
    ///
    /// # Errors
    /// A container runner that cannot be used.
    pub fn fresh(options: &ReduceOptions) -> Result<Place, ReduceError> {
        if let Some(remote) = &options.remote {
            return Ok(Place::Remote(crate::remote::Remote::connect(remote)?));
        }
        Ok(match &options.container {
            None => Place::Fresh,
            Some(container) => Place::Container(Arc::new(ContainerRuns::new(
                Container::prepare(container)?,
                Mount::Workspace,
            ))),
        })
    }

    /// What the report and the session identity record of the container runner.
    pub fn container(&self) -> Option<ContainerRecord> {
        match self {
            Place::Container(runs) => Some(runs.container().record()),
            Place::Fresh | Place::Adopted(_) | Place::Remote(_) => None,
        }
    }
}

fn run_on(
    place: &mut Place,
    tree: &Tree,
    options: &ReduceOptions,
    scratch: &Path,
    name: &str,
    timeout: Duration,
    interrupt: &AtomicBool,
) -> Result<(RunOutcome, Normalizer), ReduceError> {
    match place {
        Place::Fresh => run_fresh(tree, options, scratch, name, timeout, interrupt, None),
        Place::Container(runs) => {
            run_fresh(tree, options, scratch, name, timeout, interrupt, Some(runs))
        }
        Place::Adopted(workers) => match workers.first_mut() {
            Some(worker) => worker.run(tree, None, &options.command, timeout, interrupt),
            None => Err(ReduceError::Internal("no adopted directory")),
        },
        // The baseline and the empty-tree check must be runs of their own, never answers
        // from the action cache.
        Place::Remote(remote) => {
            let run = remote.run(
                tree,
                &options.command,
                timeout,
                crate::remote::CachePolicy::Skip,
                interrupt,
            )?;
            Ok((run.outcome, Normalizer::new(&[])))
        }
    }
}

fn preflight_in(
    options: &ReduceOptions,
    scratch: &Path,
    place: &mut Place,
    interrupt: &AtomicBool,
    mut durable: Option<&mut Durable>,
) -> Result<Preflight, ReduceError> {
    let (tree, scan, source_kind) = crate::tree::scan_source(&options.source, &options.rules)?;
    let tree = Arc::new(tree);
    let baseline_timeout = options.timeout.unwrap_or(BASELINE_TIMEOUT);
    // Without a journal to keep in order, fresh copies and a cluster run the baseline
    // `--jobs` at a time.
    let at_once = durable.is_none() && options.jobs > 1;
    let mut runs = match place {
        Place::Fresh if at_once => {
            fresh::baselines_at_once(&tree, options, scratch, baseline_timeout, interrupt, None)?
        }
        Place::Remote(remote) if at_once => fresh::baselines_at_once(
            &tree,
            options,
            scratch,
            baseline_timeout,
            interrupt,
            Some(remote),
        )?,
        _ => Vec::new(),
    };
    for i in runs.len()..options.baseline_runs {
        let recorded = match durable.as_deref_mut() {
            Some(d) => d
                .journal
                .next("a baseline run", |r| matches!(r, Record::Baseline { .. }))?,
            None => None,
        };
        let run = if let Some(Record::Baseline {
            termination,
            duration_ms,
            output,
            roots,
        }) = recorded
        {
            let outcome = RunOutcome {
                termination,
                output: durable::decode_output(&output)?,
                duration: Duration::from_millis(duration_ms),
            };
            (outcome, Normalizer::new(&roots))
        } else {
            let run = run_on(
                place,
                &tree,
                options,
                scratch,
                &format!("baseline{}", i + 1),
                baseline_timeout,
                interrupt,
            )?;
            if run.0.termination == Termination::Interrupted {
                return Err(ReduceError::Interrupted);
            }
            if let Some(d) = durable.as_deref_mut() {
                d.journal.append(&Record::Baseline {
                    termination: run.0.termination,
                    duration_ms: millis(run.0.duration),
                    output: durable::encode_output(&run.0.output),
                    roots: run.1.roots().to_vec(),
                })?;
            }
            run
        };
        runs.push(run);
    }
    if let Some(limit) = options.command.memory
        && let Some(at) = runs
            .iter()
            .position(|(r, _)| r.termination == Termination::OverMemory)
    {
        return Err(ReduceError::BaselineOverMemory {
            run: at + 1,
            limit: crate::runner::format_size(limit),
            mechanism: crate::runner::memory_mechanism().name(),
        });
    }
    let (oracle, baseline_evidence) =
        if options.min_baseline_passes.is_none() && options.min_baseline_rate.is_none() {
            (oracle_spec(options).learn(&runs)?, None)
        } else {
            let (oracle, evidence) = sample_baseline(options, &runs)?;
            (oracle, Some(evidence))
        };
    let slowest = runs
        .iter()
        .map(|(r, _)| r.duration)
        .max()
        .unwrap_or_default();
    let timeout = options
        .timeout
        .unwrap_or_else(|| TIMEOUT_FLOOR.max(slowest * TIMEOUT_FACTOR));
    let baseline = runs
        .iter()
        .map(|(r, _)| BaselineRun {
            termination: r.termination,
            duration_ms: millis(r.duration),
        })
        .collect();
    let baseline_output = runs
        .first()
        .map(|(r, _)| r.output.clone())
        .unwrap_or_default();
    let named = named_files(&tree, &String::from_utf8_lossy(&baseline_output));

    // The empty tree must not reproduce.
    let empty = empty_candidate(&tree, &options.rules.keep, &options.pinned);
    let (_, empty_tree) = EditSet::default()
        .apply(&tree, &tree, &empty)
        .map_err(|_| ReduceError::Internal("the empty candidate does not apply"))?;
    let trivial = if empty_tree == *tree {
        None
    } else {
        let recorded = match durable.as_deref_mut() {
            Some(d) => d.journal.next("the empty-tree check", |r| {
                matches!(r, Record::Empty { .. })
            })?,
            None => None,
        };
        let pass = if let Some(Record::Empty { pass }) = recorded {
            pass
        } else {
            let (outcome, normalizer) = run_on(
                place,
                &empty_tree,
                options,
                scratch,
                "empty",
                timeout,
                interrupt,
            )?;
            if outcome.termination == Termination::Interrupted {
                return Err(ReduceError::Interrupted);
            }
            let pass = oracle.judge(&outcome, &normalizer).pass;
            if let Some(d) = durable {
                d.journal.append(&Record::Empty { pass })?;
            }
            pass
        };
        if pass && !options.allow_trivial {
            return Err(ReduceError::Trivial);
        }
        Some(pass)
    };
    Ok(Preflight {
        tree,
        source_kind,
        scan,
        baseline_evidence,
        oracle,
        baseline,
        baseline_output,
        timeout,
        named,
        trivial,
        container: place.container(),
    })
}

/// Runs a whole reduction (not the export).
///
/// # Errors
/// A bad request, an unusable baseline, or an I/O failure.
pub fn reduce(
    options: &ReduceOptions,
    interrupt: &Arc<AtomicBool>,
    observer: Option<Box<dyn Observer>>,
) -> Result<Reduction, ReduceError> {
    if options.resume && options.session.is_none() {
        return Err(durable::SessionError::ResumeWithoutSession.into());
    }
    validate(options, true)?;
    let scratch = crate::scratch::Scratch::new("reduce").map_err(|source| TreeError::Io {
        action: "create a scratch directory in",
        path: std::env::temp_dir(),
        source,
    })?;
    let place = Place::fresh(options)?;
    let record = place.container();
    let durable = match &options.session {
        None => None,
        Some(dir) => {
            let (tree, _, _) = crate::tree::scan_source(&options.source, &options.rules)?;
            Some(if options.resume {
                Durable::resume(dir, options, &tree, record.as_ref())?
            } else {
                Durable::create(dir, options, &tree, record.as_ref())?
            })
        }
    };
    let (reduction, _) =
        run_reduction(options, scratch.path(), place, interrupt, observer, durable)?;
    Ok(reduction)
}

/// Runs the baseline, the passes to their fixed point (or a budget) and the final
/// validation, with scratch space in `scratch`; returns the reduction and the session, whose
/// accepted tree stays available for more runs (a holdout).
///
/// # Errors
/// An unusable baseline, or an I/O failure.
pub fn run_reduction(
    options: &ReduceOptions,
    scratch: &Path,
    mut place: Place,
    interrupt: &Arc<AtomicBool>,
    observer: Option<Box<dyn Observer>>,
    mut durable: Option<Durable>,
) -> Result<(Reduction, Session), ReduceError> {
    // The baseline's runs reuse their cgroups too; the session keeps them from its start.
    let _cgroups = crate::runner::KeptCgroups::new();
    let preflight = preflight_in(options, scratch, &mut place, interrupt, durable.as_mut())?;
    // A resumed session's budget counts from its original start.
    let started = match (&durable, options.max_duration) {
        (Some(d), Some(max)) => {
            let spent = max.saturating_sub(d.remaining(max));
            Instant::now()
                .checked_sub(spent)
                .unwrap_or_else(Instant::now)
        }
        _ => Instant::now(),
    };
    if let Some(d) = durable.as_mut() {
        d.baseline_learned(
            preflight.oracle.signature(),
            preflight
                .oracle
                .frames()
                .map(|f| f.iter().map(ToString::to_string).collect()),
            preflight
                .baseline
                .iter()
                .map(|r| r.termination.describe())
                .collect(),
        )?;
        d.checkpoint("reducing", &preflight.tree.fingerprint(), 0, 0)?;
    }
    let container = place.container();
    let (adopted, container_runs, remote) = match place {
        Place::Fresh => (None, None, None),
        Place::Container(runs) => (None, Some(runs), None),
        Place::Adopted(workers) => (Some(workers), None, None),
        Place::Remote(remote) => (None, None, Some(remote)),
    };
    let jobs = adopted.as_ref().map_or(options.jobs, Vec::len).max(1);
    let deadline = options.max_duration.map(|d| {
        // Runs that come after the passes (a holdout) stay inside the budget.
        let per_run = preflight
            .baseline
            .last()
            .map_or(Duration::ZERO, |run| Duration::from_millis(run.duration_ms));
        started + d.saturating_sub(reserve(per_run, options.reserve_runs, jobs))
    });
    let setup = Setup {
        command: options.command.clone(),
        oracle: preflight.oracle.clone(),
        timeout: preflight.timeout,
        adaptive_timeout: options.timeout.is_none(),
        jobs,
        max_attempts: options.max_attempts,
        deadline,
        interrupt: interrupt.clone(),
        cache_capacity: options.cache_capacity.max(1),
        sampling: options.sampling,
        container: container_runs,
        overlay: options.overlay,
        remote,
    };
    let mut session = Session::new(
        preflight.tree.clone(),
        setup,
        scratch,
        &basename(options),
        observer,
        adopted,
    )?;
    session.set_durable(durable);
    let mut ctx = PassContext {
        keep: options.rules.keep.clone(),
        pinned: options.pinned.clone(),
        named: preflight.named.clone(),
        minimiser: options.minimiser,
        syntax_guard: options.syntax_guard,
        within_lines: options
            .passes
            .iter()
            .any(|p| matches!(p, PassName::Tokens | PassName::Chars)),
        settle: options.settle,
        stubs: options.stubs,
        confirming: false,
        strace: None,
    };
    // A one-file tree has no file to delete but the one it is: no files pass.
    let enabled: Vec<PassName> = options
        .passes
        .iter()
        .copied()
        .filter(|p| *p != PassName::Files || preflight.source_kind == SourceKind::Directory)
        .collect();
    // The tracer: off when asked, with a durable session (a resumed run must propose the
    // same candidates), in a container (it would trace the engine's client) and with
    // --remote (the runs happen on the cluster).
    if enabled.contains(&PassName::Files) {
        if !options.trace || session.is_durable() {
            session.set_access_record(access::TraceRecord::untraced("off"));
        } else if container.is_some() || options.remote.is_some() {
            session.set_access_record(access::TraceRecord::untraced("unavailable"));
        } else {
            ctx.strace = access::strace();
            if ctx.strace.is_none() {
                session.set_access_record(access::TraceRecord::untraced("unavailable"));
            }
        }
    }
    let mut passes: Vec<Box<dyn Pass>> = passes::list(&enabled);
    // The semantic seam, when a backend is set up, runs once the deterministic passes are
    // clean; its commits send the reduction back through them.
    let semantic = options.semantic.as_ref().map(|s| {
        let backend = semantic::HttpBackend::new(s.clone());
        let record = Arc::new(Mutex::new(semantic::SemanticRecord {
            backend: semantic::Backend::name(&backend).to_string(),
            model: s.model.clone(),
            endpoint: s.endpoint.clone(),
            ..semantic::SemanticRecord::default()
        }));
        passes.push(Box::new(semantic::Semantic::new(
            Box::new(backend),
            s.max_calls,
            record.clone(),
            preflight.oracle.signature().unwrap_or_default().to_string(),
        )));
        record
    });
    // The passes run to their fixed point; with the level left to the run, a finer
    // level's passes join while their cost fits (see [`level`]), and all run to the fixed
    // point again.
    let mut level = level::LevelRecord::start(options.level, &options.passes);
    let mut dirty = vec![true; passes.len()];
    loop {
        fixed_point::run(&mut session, &mut passes, &mut dirty, &mut ctx)?;
        if options.level != LevelChoice::Auto || session.stop_reason().is_some() {
            break;
        }
        let Some(next) = level::finer(level.level) else {
            break;
        };
        let step = level::decide(
            next,
            &progress(&session, &preflight, started, deadline, options.jobs),
        );
        let ran = step.ran;
        level.steps.push(step);
        if !ran {
            break;
        }
        level.level = next;
        // Before the semantic seam, which stays last.
        let at = passes.len() - usize::from(semantic.is_some());
        let added = passes::list(&level::added_by(next));
        let count = added.len();
        passes.splice(at..at, added);
        dirty = vec![false; passes.len()];
        dirty[at..at + count].fill(true);
        ctx.within_lines = true;
        ctx.confirming = false;
    }
    let reduce_ms = millis(started.elapsed());
    let mut stopped = session.stop_reason();
    let tree = session.current.clone();
    if stopped == Some(StopReason::Interrupted) && session.is_durable() {
        // Nothing is published: the session is resumed instead.
        session.checkpoint_now("interrupted")?;
        return Err(ReduceError::SessionInterrupted);
    }
    let final_run = if stopped == Some(StopReason::Interrupted) {
        None
    } else {
        let (termination, duration_ms, verdict) = session.final_check()?;
        if !verdict.pass {
            session.checkpoint_now("aborted")?;
            return Err(ReduceError::FinalNotReproducing {
                reason: verdict.reason,
            });
        }
        Some(BaselineRun {
            termination,
            duration_ms,
        })
    };
    let holdout = if options.holdout_runs > 0 && stopped != Some(StopReason::Interrupted) {
        let plan = crate::stats::HoldoutPlan::new(
            options.holdout_runs,
            options.min_holdout_rate,
            options.holdout_confidence,
        )
        .map_err(ReduceError::HoldoutPlan)?;
        // An interrupt ends the holdout: a session keeps its slots for --resume; without
        // one, the reduction ends as interrupted, with no holdout.
        let passes = if session.is_durable() {
            session.checkpoint_now("holdout")?;
            let Some(passes) = session.sample_slots(plan.runs, interrupt)? else {
                session.checkpoint_now("interrupted")?;
                return Err(ReduceError::SessionInterrupted);
            };
            Some(passes)
        } else {
            let sampled = session.sample_current(plan.runs, interrupt, None)?;
            if sampled.cut {
                stopped = Some(StopReason::Interrupted);
            }
            (!sampled.cut).then_some(sampled.passes)
        };
        match passes {
            Some(passes) => Some(
                crate::stats::holdout_result(&plan, passes)
                    .map_err(ReduceError::HoldoutEvaluation)?,
            ),
            None => None,
        }
    } else {
        None
    };
    if session.is_durable() {
        let status = match &holdout {
            Some(h) if h.certified => "certified",
            Some(_) => "not_certified",
            None => "reduced",
        };
        session.promote_current()?;
        session.checkpoint_now(status)?;
    }
    let reduction = Reduction {
        holdout,
        edits: session.edits.edits(&session.original),
        fingerprint: tree.fingerprint(),
        tree,
        phases: session.phases().to_vec(),
        events: session.events().to_vec(),
        spans: session.spans().to_vec(),
        attempts: session.attempts(),
        stopped,
        final_run,
        reduce_ms,
        probe_time: session.probe_time(),
        final_timeout: session.timeout(),
        oracle: preflight.oracle.summary(),
        preflight,
        container,
        remote: options.remote.as_ref().map(|r| {
            let counts = session.remote_counts();
            RemoteRecord {
                url: r.url.clone(),
                instance: r.instance.clone(),
                executed: counts.executed,
                cache_hits: counts.cached,
            }
        }),
        semantic: semantic.and_then(|r| r.lock().ok().map(|r| r.clone())),
        trace: session.access_record().cloned(),
        overlay: session.overlay_record(),
        passes: level.passes_run(&enabled),
        level,
    };
    Ok((reduction, session))
}

/// The time kept after the passes for `runs` later runs spread over `jobs` workers (a
/// holdout): twice `per_run` for each round of them.
fn reserve(per_run: Duration, runs: u64, jobs: usize) -> Duration {
    let rounds = runs.div_ceil(jobs.max(1) as u64);
    per_run
        .saturating_mul(u32::try_from(rounds).unwrap_or(u32::MAX))
        .saturating_mul(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Entry, Meta, Node};

    #[test]
    fn the_holdout_reserve_counts_rounds_of_the_workers_not_runs() {
        let second = Duration::from_secs(1);
        assert_eq!(reserve(second, 30, 2), Duration::from_secs(30));
        assert_eq!(reserve(second, 30, 4), Duration::from_secs(16));
        assert_eq!(reserve(second, 30, 1), Duration::from_secs(60));
        assert_eq!(reserve(second, 0, 2), Duration::ZERO);
        assert_eq!(reserve(second, 3, 0), Duration::from_secs(6));
    }

    #[test]
    fn the_empty_candidate_keeps_only_kept_paths_and_the_ancestors_of_kept_and_pinned_ones() {
        let meta = Meta {
            mode: 0o644,
            mtime_ns: 0,
        };
        let mut tree = Tree::empty(meta);
        for (path, dir) in [
            ("docs", true),
            ("docs/keep.md", false),
            ("docs/other.md", false),
            ("docs/sub", true),
            ("docs/sub/x", false),
            ("src", true),
            ("src/a.py", false),
            ("top.txt", false),
        ] {
            let node = if dir {
                Node::Dir
            } else {
                Node::file(Arc::from(&b"x"[..]))
            };
            tree.entries.insert(Arc::from(path), Entry { node, meta });
        }
        let Mutation::Remove(paths) = empty_candidate(&tree, &["docs/keep.md".to_string()], &[])
        else {
            panic!("not a removal");
        };
        let paths: Vec<&str> = paths.iter().map(|p| &**p).collect();
        assert_eq!(paths, ["docs/other.md", "docs/sub", "src", "top.txt"]);
        // A file outside the model pins its directories (`srcx/` pins no `src`), not their
        // other entries.
        let pinned = ["src/_version.py".to_string(), "srcx/y".to_string()];
        let Mutation::Remove(paths) = empty_candidate(&tree, &[], &pinned) else {
            panic!("not a removal");
        };
        let paths: Vec<&str> = paths.iter().map(|p| &**p).collect();
        assert_eq!(paths, ["docs", "src/a.py", "top.txt"]);
    }

    #[test]
    fn files_named_in_the_output_are_found_by_path_or_basename() {
        let meta = Meta {
            mode: 0o644,
            mtime_ns: 0,
        };
        let mut tree = Tree::empty(meta);
        for path in ["pkg/mod.py", "pkg/other.py", "README"] {
            tree.entries.insert(
                Arc::from(path),
                Entry {
                    node: Node::file(Arc::from(&b"x"[..])),
                    meta,
                },
            );
        }
        let out = "File \"/tmp/w0/run/x/pkg/mod.py\", line 3\nREADME missing\nother.pyc\n";
        assert_eq!(named_files(&tree, out), ["pkg/mod.py"]);
    }
}

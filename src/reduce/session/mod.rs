//! The transaction engine: tries windows of candidates and commits what the oracle accepts.
//!
//! The session owns the accepted state (an [`EditSet`] and its tree), one workspace per job,
//! and a clean copy of the accepted state in which no command ever runs. For a window of
//! candidates it:
//! 1. applies each mutation to the accepted state and fingerprints the result; a candidate
//!    equal to the accepted state is a no-op, one seen before is answered from the cache;
//! 2. runs the rest in parallel, each in a workspace equal to the accepted state plus that
//!    one mutation (delta application undoes whatever the previous probe did);
//! 3. resolves the window by candidate index, never by completion order: when several
//!    candidates pass, their union is tried as one more candidate and committed if it
//!    passes; a failed union is bisected (the first half of the passing candidates, then
//!    the first quarter, down to two), and when nothing merges the lowest passing index is
//!    committed;
//! 4. commits by reapplying the mutation to the clean copy and reading back from disk
//!    everything that wrote (see `Workspace::read_back`): the `tree-sha256-v2`
//!    fingerprint of the candidate tree with those parts as read must equal the one the
//!    oracle saw (when every part read equals the candidate's, field by field, it is the
//!    candidate's own fingerprint and is not hashed again).
//!    The clean copy is never a command's working directory, so the entries a commit did
//!    not write are the ones an earlier commit wrote and read back; the whole copy is
//!    scanned and checked once, when the session starts.
//!
//! Every candidate is counted exactly once as no-op, rejected, accepted, superseded or
//! aborted, per phase.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::oracle::Oracle;
use crate::reduce::edits::{EditSet, Mutation};
use crate::reduce::error::ReduceError;
use crate::reduce::identifiers::{count_identifiers, dropped_identifiers, identifiers};
pub use crate::reduce::options::Sampling;
use crate::reduce::options::{StopReason, TIMEOUT_FACTOR, TIMEOUT_FLOOR};
use crate::runner::{self, RunDirs, Termination};
use crate::signature::Normalizer;
use crate::tree::{Fingerprint, RelPath, SetHash, Tree, TreeKey, scan_exact};
use crate::workspace::Workspace;

mod journaled;
mod recall;
mod records;
mod worker;

pub use records::{Candidate, Event, Observer, PhaseStats, SessionView};
use worker::{Answer, Lower, probe};
pub use worker::{ProbeTime, Setup, Worker};

/// Candidates evaluated together in a union window. Fixed, so that results never depend on
/// `--jobs`.
pub const UNION_WINDOW: usize = 8;

/// What became of a union of passing candidates.
enum UnionOutcome {
    /// It passed and was committed.
    Committed,
    /// It failed (or no longer applied).
    Failed,
    /// The run was interrupted.
    Interrupted,
}

/// The reduction session.
pub struct Session {
    /// The original tree.
    pub original: Arc<Tree>,
    /// The accepted state.
    pub edits: EditSet,
    /// The accepted tree. Only a commit changes it: the session's key and fingerprint of it
    /// follow.
    pub current: Tree,
    /// The set hash of `current` and its key: the accepted tree's identity in this run
    /// (see [`SetHash`]).
    current_set: SetHash,
    current_key: TreeKey,
    /// The `tree-sha256-v2` fingerprint of `current`, once something needed it (a durable
    /// session's checkpoint).
    current_fp: Option<Fingerprint>,
    /// The size of `current`.
    current_size: crate::tree::Size,
    setup: Setup,
    workers: Vec<Worker>,
    /// Time spent writing accepted cuts to the clean copy and reading them back.
    commit_time: Duration,
    clean: Workspace,
    cache: HashMap<TreeKey, bool>,
    phases: Vec<PhaseStats>,
    events: Vec<Event>,
    attempts: u64,
    stop: Option<StopReason>,
    observer: Option<Box<dyn Observer>>,
    /// Candidate families allocated so far (run-wide confidence).
    families: u64,
    /// For each identifier, the number of the last commit that lowered how often it occurs
    /// in the tree (see [`Session::touched_since`]).
    name_drops: HashMap<String, u64>,
    /// How often each identifier occurs in the accepted tree.
    name_counts: HashMap<String, u64>,
    /// Where `REPROMIN_TRACE` asks every attempt to be logged.
    trace: Option<std::fs::File>,
    /// The pass running now (set by [`Session::begin_pass`]).
    pass: String,
    /// What each pass's search of a file settled (see [`Session::settled`]).
    settled: HashMap<(String, RelPath), Settled>,
    /// Searches skipped because their file was settled (see [`Session::settled`]), and
    /// cuts answered from the memory of failed cuts (see [`Session::set_recalling`]).
    settled_skips: u64,
    /// Failed cuts (see [`recall`]).
    recall: recall::Recall,
    /// Whether a remembered failed cut is answered without a run.
    recalling: bool,
    /// What the file-access tracer did (see [`Session::trace_access`]).
    access_record: Option<crate::reduce::access::TraceRecord>,
    /// The per-candidate timeout in force (see [`Session::timeout`]).
    timeout: Duration,
    /// How long the last accepted candidates ran, one run each, newest last.
    recent_passes: std::collections::VecDeque<Duration>,
    /// The durable session (`--session`): its journal answers what it recorded, then
    /// records what runs (see [`crate::reduce::durable`]).
    durable: Option<crate::reduce::durable::Durable>,
}

/// Where a search of a file left it: its digest then, and the commit count.
#[derive(Clone, Copy, Debug)]
struct Settled {
    digest: [u8; 32],
    at: u64,
    /// Whether the search answered a cut from the memory of failed cuts.
    from_memory: bool,
}

/// Accepted runs the adaptive timeout looks back on.
const ADAPT_WINDOW: usize = 16;
/// Accepted runs seen before the timeout adapts at all.
const ADAPT_AFTER: usize = 4;

impl Session {
    /// A session starting at `original`, with one worker per job under `scratch`.
    ///
    /// # Errors
    /// I/O failures preparing the clean copy.
    pub fn new(
        original: Arc<Tree>,
        setup: Setup,
        scratch: &std::path::Path,
        basename: &str,
        observer: Option<Box<dyn Observer>>,
        adopted: Option<Vec<Worker>>,
    ) -> Result<Session, ReduceError> {
        let mut workers = if let Some(workers) = adopted {
            workers
        } else {
            (0..setup.jobs)
                .map(|i| {
                    let worker = Worker::fresh(RunDirs::new(scratch, &format!("w{i}"), basename));
                    let worker = match &setup.container {
                        Some(runs) => worker.confined(runs.clone()),
                        None => worker,
                    };
                    if setup.overlay {
                        worker
                    } else {
                        worker.without_overlay()
                    }
                })
                .collect()
        };
        let mut clean = Workspace::private(scratch.join("accepted").join(basename));
        clean.apply(&original)?;
        let current = (*original).clone();
        let name_counts = count_identifiers(&current);
        let current_fp = current.fingerprint();
        let on_disk = scan_exact(clean.root())?.fingerprint();
        if on_disk != current_fp {
            return Err(ReduceError::Unfaithful {
                expected: current_fp.to_string(),
                found: on_disk.to_string(),
            });
        }
        let current_set = SetHash::of(&current);
        let current_key = current_set.key();
        // Whether the runs go through an overlay is settled before any of them, so that the
        // report says the same whether they ran or a resumed session replayed them.
        for worker in &mut workers {
            // An adopted worker's count starts with this session.
            worker.reset_time();
            worker.try_overlay(Lower {
                dir: clean.root(),
                tree: &current,
            });
        }
        Ok(Session {
            original,
            edits: EditSet::default(),
            current_size: current.size(),
            current,
            current_set,
            current_key,
            current_fp: Some(current_fp),
            timeout: setup.timeout,
            recent_passes: std::collections::VecDeque::new(),
            setup,
            workers,
            commit_time: Duration::ZERO,
            clean,
            cache: HashMap::new(),
            phases: Vec::new(),
            events: Vec::new(),
            attempts: 0,
            stop: None,
            observer,
            families: 0,
            name_drops: HashMap::new(),
            name_counts,
            durable: None,
            pass: String::new(),
            settled: HashMap::new(),
            settled_skips: 0,
            recall: recall::Recall::default(),
            recalling: false,
            access_record: None,
            trace: std::env::var_os("REPROMIN_TRACE").and_then(|path| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .ok()
            }),
        })
    }

    /// The per-candidate timeout in force. When it was derived rather than given, it
    /// follows the accepted candidates: [`TIMEOUT_FACTOR`] times the slowest
    /// of the last accepted runs, never below [`TIMEOUT_FLOOR`] and never above
    /// the timeout derived from the baseline. A tree that got faster to run then stops
    /// waiting as long for a candidate that hangs.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Learns from a window's answers (see [`Session::timeout`]).
    fn adapt_timeout(&mut self, answers: &[Answer]) {
        if !self.setup.adaptive_timeout {
            return;
        }
        for a in answers.iter().filter(|a| a.pass && a.samples > 0) {
            let per_run = a.duration / u32::try_from(a.samples).unwrap_or(u32::MAX);
            self.recent_passes.push_back(per_run);
            if self.recent_passes.len() > ADAPT_WINDOW {
                self.recent_passes.pop_front();
            }
        }
        if self.recent_passes.len() < ADAPT_AFTER {
            return;
        }
        let slowest = self.recent_passes.iter().max().copied().unwrap_or_default();
        self.timeout = (slowest * TIMEOUT_FACTOR)
            .max(TIMEOUT_FLOOR)
            .min(self.setup.timeout);
    }

    /// Runs the command on the accepted tree with the first worker (final validation and
    /// holdout samples), outside every phase's accounting.
    ///
    /// # Errors
    /// Workspace I/O or a command that cannot start.
    pub fn run_current(
        &mut self,
        interrupt: &AtomicBool,
    ) -> Result<(runner::RunOutcome, Normalizer), ReduceError> {
        let lower = Lower {
            dir: self.clean.root(),
            tree: &self.current,
        };
        let worker = self
            .workers
            .first_mut()
            .ok_or(ReduceError::Internal("a session has no worker"))?;
        worker.run(
            lower.tree,
            Some(lower),
            &self.setup.command,
            self.setup.timeout,
            interrupt,
        )
    }

    /// Runs the command `runs` times on the accepted tree, spread over every worker, and
    /// returns how many runs the oracle accepted (holdout samples: outside every phase's
    /// accounting, and never steering anything). Each run starts from exactly the accepted
    /// tree.
    ///
    /// # Errors
    /// Workspace I/O or a command that cannot start.
    pub fn sample_current(&mut self, runs: u64) -> Result<u64, ReduceError> {
        let tree = &self.current;
        let lower = Lower {
            dir: self.clean.root(),
            tree,
        };
        let setup = &self.setup;
        let never = AtomicBool::new(false);
        let next = std::sync::atomic::AtomicU64::new(0);
        let passes = std::sync::atomic::AtomicU64::new(0);
        let failure: Mutex<Option<ReduceError>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for worker in &mut self.workers {
                let (never, next, passes, failure) = (&never, &next, &passes, &failure);
                scope.spawn(move || {
                    while next.fetch_add(1, Ordering::SeqCst) < runs {
                        match worker.run(tree, Some(lower), &setup.command, setup.timeout, never) {
                            Ok((outcome, normalizer)) => {
                                if setup.oracle.judge(&outcome, &normalizer).pass {
                                    passes.fetch_add(1, Ordering::SeqCst);
                                }
                            }
                            Err(err) => {
                                if let Ok(mut slot) = failure.lock() {
                                    slot.get_or_insert(err);
                                }
                                next.store(runs, Ordering::SeqCst);
                            }
                        }
                    }
                });
            }
        });
        if let Some(err) = failure.into_inner().ok().flatten() {
            return Err(err);
        }
        Ok(passes.into_inner())
    }

    /// Runs the command once on the accepted tree under `strace` and learns what it
    /// touched (see [`crate::reduce::access`]); the outcome goes into
    /// [`Session::access_record`]. The run counts in the phase `phase`; what it touched is
    /// used only when it failed the same way.
    ///
    /// # Errors
    /// Workspace I/O, or a command that cannot be started.
    pub(crate) fn trace_access(
        &mut self,
        phase: &str,
        strace: &std::path::Path,
    ) -> Result<Option<crate::reduce::access::Access>, ReduceError> {
        let Some(worker) = self.workers.first_mut() else {
            return Ok(None);
        };
        // The log goes beside the run's TMPDIR, not in it (the command must find its
        // TMPDIR empty), in a directory made for it that the run's user may write to.
        let dir = worker.dirs().wrapper.join("access");
        crate::reduce::access::fresh_dir(&dir)?;
        let log = dir.join("strace.log");
        let root = worker.dirs().tree.clone();
        let command = runner::CommandSpec {
            argv: crate::reduce::access::wrap(strace, &log, &self.setup.command.argv),
            env: self.setup.command.env.clone(),
        };
        let (outcome, normalizer) = worker.run(
            &self.current,
            Some(Lower {
                dir: self.clean.root(),
                tree: &self.current,
            }),
            &command,
            self.setup.timeout,
            &self.setup.interrupt,
        )?;
        let stats = self.phase(phase);
        stats.oracle_samples += 1;
        stats.oracle_sample_uses += 1;
        let (access, outcome) = if !self.setup.oracle.judge(&outcome, &normalizer).pass {
            (None, "not-reproducing")
        } else {
            match crate::reduce::access::read(&log, &root) {
                Ok(access) => (Some(access), "used"),
                Err(_) => (None, "unreadable"),
            }
        };
        let touched = access
            .as_ref()
            .map_or(0, |a| a.count_touched(&self.current));
        let untouched = access.as_ref().map_or(0, |a| {
            a.untouched_roots(&self.current, |_| false).len() as u64
        });
        self.access_record = Some(crate::reduce::access::TraceRecord {
            tool: "strace".into(),
            outcome: outcome.into(),
            touched,
            untouched,
        });
        Ok(access)
    }

    /// Where the time of the passes' runs went: each worker's, summed, and the commits'.
    pub fn probe_time(&self) -> ProbeTime {
        let workers = self
            .workers
            .iter()
            .map(Worker::time)
            .fold(ProbeTime::default(), ProbeTime::plus);
        workers.plus(ProbeTime {
            commit: self.commit_time,
            ..ProbeTime::default()
        })
    }

    /// Whether the runs saw their tree through an overlay mount, or why not (the first
    /// worker's state: every worker is made alike).
    pub fn overlay_record(&self) -> crate::overlay::OverlayRecord {
        self.workers.first().map_or(
            crate::overlay::OverlayRecord {
                used: false,
                reason: Some("a session has no worker".to_string()),
            },
            Worker::overlay,
        )
    }

    /// What the tracer did, once the files pass ran it (see `Session::trace_access`).
    pub fn access_record(&self) -> Option<&crate::reduce::access::TraceRecord> {
        self.access_record.as_ref()
    }

    /// Records why the tracer did not run.
    pub(crate) fn set_access_record(&mut self, record: crate::reduce::access::TraceRecord) {
        self.access_record = Some(record);
    }

    /// The oracle in force.
    pub fn oracle(&self) -> &Oracle {
        &self.setup.oracle
    }

    /// Why the session stopped early, if it did.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Per-phase counters.
    pub fn phases(&self) -> &[PhaseStats] {
        &self.phases
    }

    /// Committed changes.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Parallel jobs.
    pub fn jobs(&self) -> usize {
        self.setup.jobs
    }

    /// Candidates tried so far.
    pub fn attempts(&self) -> u64 {
        self.attempts
    }

    /// Commits made so far.
    pub fn commits(&self) -> u64 {
        self.events.len() as u64
    }

    /// Whether a commit after commit number `since` removed an occurrence of an identifier
    /// that `path` still holds: the cheap test by which a pass decides that a file it left
    /// stable may have become reducible again (a deletion elsewhere can let a deletion here
    /// through by taking away a use of something defined here). A file that is gone is not
    /// touched.
    pub fn touched_since(&self, path: &str, since: u64) -> bool {
        let Some(crate::tree::Entry {
            node: crate::tree::Node::File { data, .. },
            ..
        }) = self.current.entries.get(path)
        else {
            return false;
        };
        identifiers(data)
            .into_keys()
            .any(|name| self.name_drops.get(name).is_some_and(|&at| at > since))
    }

    /// How the running pass last left `path`: the commit count when a search of it ended
    /// committing nothing more (or ran it to its own fixed point), and whether that search
    /// answered a cut from memory. `None` when the pass never settled it, or the file has
    /// changed since.
    pub(crate) fn settled(&self, path: &RelPath) -> Option<(u64, bool)> {
        let (_, digest) = crate::reduce::pass::file_state(self, path)?;
        let settled = self.settled.get(&(self.pass.clone(), path.clone()))?;
        (settled.digest == digest).then_some((settled.at, settled.from_memory))
    }

    /// Records that the running pass's search of `path` settled it on the current tree;
    /// `from_memory`: the search answered a cut from the memory of failed cuts.
    pub(crate) fn settle(&mut self, path: &RelPath, from_memory: bool) {
        if let Some((_, digest)) = crate::reduce::pass::file_state(self, path) {
            let at = self.commits();
            self.settled.insert(
                (self.pass.clone(), path.clone()),
                Settled {
                    digest,
                    at,
                    from_memory,
                },
            );
        }
    }

    /// Cuts answered from the memory of failed cuts so far.
    pub(crate) fn recalled_cuts(&self) -> u64 {
        self.phases.iter().map(|p| p.recalled).sum()
    }

    /// Counts a search skipped because its file was settled in an earlier run of the pass.
    pub(crate) fn skipped_settled(&mut self) {
        self.settled_skips += 1;
    }

    /// Whether a cut that failed before is answered "rejected" without a run while nothing
    /// since may have let it through (see [`recall::Recall::recalls`]). Off in
    /// the confirming round, with `--no-settle`, and while candidates are sampled
    /// repeatedly (old results must not stand in for new trials).
    pub(crate) fn set_recalling(&mut self, on: bool) {
        self.recalling = on && !self.setup.sampling.repeated();
    }

    /// Searches skipped so far because their file was settled in an earlier run of the
    /// pass, and cuts answered from the memory of failed cuts.
    pub fn settled_skips(&self) -> u64 {
        self.settled_skips
    }

    fn phase(&mut self, name: &str) -> &mut PhaseStats {
        if let Some(i) = self.phases.iter().position(|p| p.phase == name) {
            &mut self.phases[i]
        } else {
            self.phases.push(PhaseStats {
                phase: name.to_string(),
                ..PhaseStats::default()
            });
            let last = self.phases.len() - 1;
            &mut self.phases[last]
        }
    }

    /// Records that a pass starts, and returns a timer to hand to [`Session::end_pass`].
    pub fn begin_pass(&mut self, name: &str) -> Instant {
        name.clone_into(&mut self.pass);
        self.phase(name).passes += 1;
        Instant::now()
    }

    /// Records the wall time of a pass, and the `unparsable` cuts its syntax guard skipped.
    pub fn end_pass(&mut self, name: &str, started: Instant, unparsable: u64) {
        let ms = crate::reduce::millis(started.elapsed());
        let stats = self.phase(name);
        stats.wall_ms += ms;
        stats.unparsable += unparsable;
    }

    fn check_budget(&mut self) -> bool {
        if self.stop.is_some() {
            return false;
        }
        if self.setup.interrupt.load(Ordering::SeqCst) {
            self.stop = Some(StopReason::Interrupted);
        } else if self
            .setup
            .max_attempts
            .is_some_and(|max| self.attempts >= max)
        {
            self.stop = Some(StopReason::MaxAttempts);
        } else if self.setup.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop = Some(StopReason::MaxDuration);
        }
        self.stop.is_none()
    }

    fn remaining_attempts(&self) -> usize {
        self.setup.max_attempts.map_or(usize::MAX, |max| {
            usize::try_from(max.saturating_sub(self.attempts)).unwrap_or(usize::MAX)
        })
    }

    /// Runs the commands for `trees` (with their keys) in parallel and returns their
    /// answers, by index; in a durable session, answers the journal holds are replayed, and
    /// new ones are recorded before they are used (the journal names each tree by its
    /// `tree-sha256-v2` fingerprint, computed for it only then).
    fn run_all(&mut self, trees: &[(&Tree, TreeKey, f64)]) -> Result<Vec<Answer>, ReduceError> {
        if trees.is_empty() {
            return Ok(Vec::new());
        }
        let fingerprints: Vec<Fingerprint> = if self.durable.is_some() {
            trees
                .iter()
                .map(|(tree, _, _)| tree.fingerprint())
                .collect()
        } else {
            Vec::new()
        };
        if let Some(answers) = self.replay_window(&fingerprints)? {
            self.adapt_timeout(&answers);
            return Ok(answers);
        }
        let trees: Vec<(&Tree, f64)> = trees.iter().map(|(t, _, c)| (*t, *c)).collect();
        let trees = trees.as_slice();
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<Answer, ReduceError>>>> =
            trees.iter().map(|_| Mutex::new(None)).collect();
        let setup = &self.setup;
        let timeout = self.timeout;
        let lower = Lower {
            dir: self.clean.root(),
            tree: &self.current,
        };
        let active = self.workers.len().min(trees.len());
        if active == 1 {
            // One worker runs them all: on this thread, without spawning one per window.
            let mut answers = Vec::with_capacity(trees.len());
            if let Some(worker) = self.workers.first_mut() {
                for (tree, confidence) in trees {
                    answers.push(probe(worker, setup, timeout, tree, lower, *confidence)?);
                }
            }
            self.record_window(&fingerprints, &answers)?;
            self.adapt_timeout(&answers);
            return Ok(answers);
        }
        std::thread::scope(|scope| {
            for worker in self.workers.iter_mut().take(active) {
                let next = &next;
                let slots = &slots;
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= trees.len() {
                            break;
                        }
                        let result = probe(worker, setup, timeout, trees[i].0, lower, trees[i].1);
                        if let Ok(mut slot) = slots[i].lock() {
                            *slot = Some(result);
                        }
                    }
                });
            }
        });
        let mut answers = Vec::with_capacity(trees.len());
        for slot in slots {
            let value = slot.into_inner().ok().flatten();
            match value {
                Some(result) => answers.push(result?),
                None => return Err(ReduceError::Internal("a worker produced no answer")),
            }
        }
        self.record_window(&fingerprints, &answers)?;
        self.adapt_timeout(&answers);
        Ok(answers)
    }

    /// Tries a window of candidates. Returns, per candidate, whether it was committed (as
    /// itself or as part of a committed union), or `None` when the session must stop
    /// (budget or interrupt).
    ///
    /// # Errors
    /// Workspace I/O failures, a command that cannot be started, or a commit whose clean
    /// copy does not match what the oracle saw.
    pub fn try_window(
        &mut self,
        phase: &str,
        candidates: Vec<Candidate>,
    ) -> Result<Option<Vec<bool>>, ReduceError> {
        self.try_window_ahead(phase, candidates, Vec::new())
    }

    /// Whether [`Session::try_window_ahead`] runs candidates ahead: with more than one
    /// worker, answers that may be cached (no repeated sampling, no run-wide confidence,
    /// whose families follow the order of runs) and no journal (whose windows must replay
    /// whatever `--jobs` the resumed run has).
    pub(crate) fn runs_ahead(&self) -> bool {
        self.setup.jobs > 1
            && self.durable.is_none()
            && !self.setup.sampling.repeated()
            && self.setup.sampling.run_confidence.is_none()
    }

    /// [`Session::try_window`], with `ahead`: the candidates the caller would try next if
    /// this window committed nothing, against the same state. When the window leaves a
    /// worker idle (it runs fewer commands than a multiple of the workers), the first of
    /// them that no answer covers yet run in the idle workers, and their answers go to the
    /// cache only: nothing is committed, rejected or remembered as a failed cut from them,
    /// so what the reduction does stays what one worker would do; the later window that
    /// proposes the same tree is answered from the cache. Their commands count in the
    /// phase's `oracle_samples` and `ran_ahead`.
    ///
    /// # Errors
    /// As [`Session::try_window`].
    pub fn try_window_ahead(
        &mut self,
        phase: &str,
        candidates: Vec<Candidate>,
        ahead: Vec<Candidate>,
    ) -> Result<Option<Vec<bool>>, ReduceError> {
        // Cuts that failed before, while nothing since may have let them through, are not
        // candidates: like the syntax guard's cuts, they are counted apart.
        let recalled: Vec<bool> = candidates.iter().map(|c| self.recalled(c)).collect();
        if !recalled.contains(&true) {
            return self.run_window(phase, candidates, ahead);
        }
        let n = recalled.iter().filter(|r| **r).count() as u64;
        self.phase(phase).recalled += n;
        self.settled_skips += n;
        if let Some(file) = self.trace.as_mut() {
            use std::io::Write;
            for (candidate, _) in candidates.iter().zip(&recalled).filter(|(_, r)| **r) {
                let what = traced_cut(&self.current, candidate);
                let _ = writeln!(file, "{phase}\trecalled-fail\t{}\t{what}", candidate.label);
            }
        }
        let rest: Vec<Candidate> = candidates
            .into_iter()
            .zip(&recalled)
            .filter(|(_, r)| !**r)
            .map(|(c, _)| c)
            .collect();
        let done = if rest.is_empty() {
            Vec::new()
        } else {
            let Some(done) = self.run_window(phase, rest, ahead)? else {
                return Ok(None);
            };
            done
        };
        let mut done = done.into_iter();
        Ok(Some(
            recalled
                .iter()
                .map(|r| !r && done.next().unwrap_or(false))
                .collect(),
        ))
    }

    /// The candidates of `ahead` that run in the workers a window of `to_run` commands
    /// leaves idle: those whose tree no answer covers (not the accepted state, not cached,
    /// not in the window `in_window`, not a cut the memory recalls), in order, each with
    /// its tree and fingerprint.
    fn early(
        &self,
        to_run: &[usize],
        in_window: &[TreeKey],
        ahead: Vec<Candidate>,
    ) -> Vec<(Candidate, Tree, TreeKey)> {
        let jobs = self.setup.jobs.max(1);
        let idle = (jobs - to_run.len() % jobs) % jobs;
        if to_run.is_empty() || idle == 0 || !self.runs_ahead() {
            return Vec::new();
        }
        let mut early: Vec<(Candidate, Tree, TreeKey)> = Vec::with_capacity(idle);
        for candidate in ahead {
            if early.len() == idle {
                break;
            }
            let Ok((_, tree)) =
                self.edits
                    .apply(&self.current, &self.original, &candidate.mutation)
            else {
                continue;
            };
            let key = self.key_of(&tree);
            let covered = key == self.current_key
                || self.cached(&key).is_some()
                || in_window.contains(&key)
                || early.iter().any(|e| e.2 == key)
                || self.recalled(&candidate);
            if !covered {
                early.push((candidate, tree, key));
            }
        }
        early
    }

    /// Counts the commands run ahead and caches their answers (an interrupted one has
    /// none).
    fn keep_early(&mut self, phase: &str, early: &[(Candidate, Tree, TreeKey)], ran: &[Answer]) {
        for ((_, _, key), answer) in early.iter().zip(ran) {
            self.record(phase, answer);
            self.phase(phase).ran_ahead += 1;
            if answer.termination == Termination::Interrupted {
                continue;
            }
            self.remember(*key, answer.pass);
        }
    }

    /// The key of `tree`, a candidate: the accepted tree's set hash moved over what the
    /// two trees do not share, so it costs what the candidate's change does.
    fn key_of(&self, tree: &Tree) -> TreeKey {
        self.current_set.moved(&self.current, tree).key()
    }

    /// Whether `candidate` is a cut that failed before and is answered from the memory.
    fn recalled(&self, candidate: &Candidate) -> bool {
        if !self.recalling {
            return false;
        }
        recall::cut_of(&self.current, &candidate.mutation).is_some_and(|cut| {
            self.recall.recalls(&cut, |name| {
                self.name_counts.get(name).copied().unwrap_or(0)
            })
        })
    }

    /// [`Session::try_window`] for the candidates that are not recalled.
    fn run_window(
        &mut self,
        phase: &str,
        mut candidates: Vec<Candidate>,
        ahead: Vec<Candidate>,
    ) -> Result<Option<Vec<bool>>, ReduceError> {
        if !self.check_budget() {
            return Ok(None);
        }
        let room = self.remaining_attempts();
        candidates.truncate(room.max(1));
        let count = candidates.len();
        self.attempts += count as u64;
        self.phase(phase).attempts += count as u64;

        // Prepare: apply, key, look up.
        let mut prepared: Vec<Option<(EditSet, Tree, TreeKey)>> = Vec::with_capacity(count);
        let mut answers: Vec<Option<bool>> = vec![None; count];
        for (i, candidate) in candidates.iter().enumerate() {
            match self
                .edits
                .apply(&self.current, &self.original, &candidate.mutation)
            {
                Ok((edits, tree)) => {
                    let key = self.key_of(&tree);
                    if key == self.current_key {
                        prepared.push(None);
                        self.phase(phase).no_op += 1;
                        answers[i] = Some(false);
                    } else {
                        if let Some(pass) = self.cached(&key) {
                            answers[i] = Some(pass);
                            let stats = self.phase(phase);
                            stats.cache_hits += 1;
                            stats.oracle_sample_uses += 1;
                        }
                        prepared.push(Some((edits, tree, key)));
                    }
                }
                Err(_) => {
                    prepared.push(None);
                    self.phase(phase).no_op += 1;
                    answers[i] = Some(false);
                }
            }
        }
        let to_run: Vec<usize> = (0..count).filter(|&i| answers[i].is_none()).collect();
        let mut families = vec![(None, self.setup.sampling.confidence); count];
        for &i in &to_run {
            families[i] = self.allocate()?;
        }
        if self.families_spent(to_run.len())? {
            // The window's families were exposed before a crash: it runs under new ones.
            for &i in &to_run {
                families[i] = self.allocate()?;
            }
            self.record_allocation()?;
        }
        let in_window: Vec<TreeKey> = prepared.iter().flatten().map(|p| p.2).collect();
        let early = self.early(&to_run, &in_window, ahead);
        let mut trees: Vec<(&Tree, TreeKey, f64)> = to_run
            .iter()
            .filter_map(|&i| {
                prepared[i]
                    .as_ref()
                    .map(|(_, t, key)| (t, *key, families[i].1))
            })
            .collect();
        let confidence = self.setup.sampling.confidence;
        trees.extend(early.iter().map(|(_, t, key)| (t, *key, confidence)));
        let mut ran = self.run_all(&trees)?;
        let ran_early = ran.split_off(to_run.len().min(ran.len()));
        self.keep_early(phase, &early, &ran_early);
        let mut interrupted = false;
        for (&i, answer) in to_run.iter().zip(&ran) {
            self.record(phase, answer);
            if answer.termination == Termination::Interrupted {
                interrupted = true;
                continue;
            }
            answers[i] = Some(answer.pass);
            if let Some((_, _, key)) = &prepared[i] {
                self.remember(*key, answer.pass);
            }
        }
        if interrupted || self.setup.interrupt.load(Ordering::SeqCst) {
            // Nothing from a cut-short window is committed.
            let ran_or_cached = answers.iter().filter(|a| a.is_some()).count();
            let stats = self.phase(phase);
            stats.aborted += (count - ran_or_cached.min(count)) as u64;
            for (i, answer) in answers.iter().enumerate() {
                if prepared[i].is_some() && answer.is_some() {
                    if answer == &Some(true) {
                        stats.superseded += 1;
                    } else {
                        stats.rejected += 1;
                    }
                }
            }
            self.stop = Some(StopReason::Interrupted);
            return Ok(None);
        }
        if let Some(file) = self.trace.as_mut() {
            use std::io::Write;
            let _ = writeln!(file, "{phase}\twindow\t{count} {}", to_run.len());
            for (i, candidate) in candidates.iter().enumerate() {
                let how = match (&prepared[i], answers[i], to_run.contains(&i)) {
                    (None, _, _) => "no-op",
                    (_, Some(true), true) => "pass",
                    (_, Some(false), true) => "fail",
                    (_, Some(true), false) => "cached-pass",
                    _ => "cached-fail",
                };
                let what = traced_cut(&self.current, candidate);
                let _ = writeln!(file, "{phase}\t{how}\t{}\t{what}", candidate.label);
            }
            for ((candidate, _, _), answer) in early.iter().zip(&ran_early) {
                let how = if answer.pass {
                    "ahead-pass"
                } else {
                    "ahead-fail"
                };
                let what = traced_cut(&self.current, candidate);
                let _ = writeln!(file, "{phase}\t{how}\t{}\t{what}", candidate.label);
            }
        }
        let passing: Vec<usize> = (0..count)
            .filter(|&i| prepared[i].is_some() && answers[i] == Some(true))
            .collect();
        let rejected: Vec<usize> = (0..count)
            .filter(|&i| prepared[i].is_some() && answers[i] == Some(false))
            .collect();
        self.phase(phase).rejected += rejected.len() as u64;
        for &i in &rejected {
            if let Some(cut) = recall::cut_of(&self.current, &candidates[i].mutation) {
                let counts = &self.name_counts;
                self.recall
                    .failed(&cut, |name| counts.get(name).copied().unwrap_or(0));
            }
        }
        let mut committed = vec![false; count];
        let Some(&lowest) = passing.first() else {
            self.notify(phase);
            return Ok(Some(committed));
        };
        let mut union_done = false;
        if passing.len() > 1 {
            // Try the union of every passing candidate; when it fails, the union of the
            // first half of them, and so on down to two (by candidate index, so the outcome
            // never depends on completion order).
            let mut take = passing.len();
            while take > 1 && self.remaining_attempts() > 0 {
                let members = &passing[..take];
                let union = Mutation::union(
                    &members
                        .iter()
                        .map(|&i| candidates[i].mutation.clone())
                        .collect::<Vec<_>>(),
                );
                match self.try_union(phase, &union, members.len())? {
                    UnionOutcome::Interrupted => {
                        let stats = self.phase(phase);
                        stats.superseded += passing.len() as u64;
                        return Ok(None);
                    }
                    UnionOutcome::Committed => {
                        self.phase(phase).superseded += passing.len() as u64;
                        for &i in members {
                            committed[i] = true;
                        }
                        union_done = true;
                        break;
                    }
                    UnionOutcome::Failed => take /= 2,
                }
            }
        }
        if !union_done && let Some((edits, tree, key)) = prepared[lowest].take() {
            let family = families[lowest];
            let mutation = candidates[lowest].mutation.clone();
            self.commit(
                phase,
                &mutation,
                edits,
                tree,
                key,
                &candidates[lowest].label,
                false,
                family,
            )?;
            committed[lowest] = true;
            self.phase(phase).superseded += (passing.len() - 1) as u64;
        }
        self.notify(phase);
        Ok(Some(committed))
    }

    /// Runs the union of `members` passing candidates as one more candidate and commits it
    /// when it passes.
    fn try_union(
        &mut self,
        phase: &str,
        union: &Mutation,
        members: usize,
    ) -> Result<UnionOutcome, ReduceError> {
        self.attempts += 1;
        self.phase(phase).attempts += 1;
        let Ok((edits, tree)) = self.edits.apply(&self.current, &self.original, union) else {
            self.phase(phase).no_op += 1;
            return Ok(UnionOutcome::Failed);
        };
        let key = self.key_of(&tree);
        let mut family = (None, self.setup.sampling.confidence);
        let pass = if let Some(pass) = self.cached(&key) {
            let stats = self.phase(phase);
            stats.cache_hits += 1;
            stats.oracle_sample_uses += 1;
            pass
        } else {
            family = self.allocate()?;
            if self.families_spent(1)? {
                family = self.allocate()?;
                self.record_allocation()?;
            }
            let answer = self.run_all(&[(&tree, key, family.1)])?[0];
            self.record(phase, &answer);
            if answer.termination == Termination::Interrupted {
                // Nothing from a cut-short window is committed.
                self.phase(phase).aborted += 1;
                self.stop = Some(StopReason::Interrupted);
                return Ok(UnionOutcome::Interrupted);
            }
            self.remember(key, answer.pass);
            answer.pass
        };
        if !pass {
            self.phase(phase).rejected += 1;
            return Ok(UnionOutcome::Failed);
        }
        let label = format!("union of {members} changes");
        self.commit(phase, union, edits, tree, key, &label, true, family)?;
        Ok(UnionOutcome::Committed)
    }

    /// The confidence for the next changed candidate: a new family index under run-wide
    /// confidence, allocated in candidate order before anything runs.
    fn allocate(&mut self) -> Result<(Option<u64>, f64), ReduceError> {
        let sampling = self.setup.sampling;
        let Some(run_confidence) = sampling.run_confidence else {
            return Ok((None, sampling.confidence));
        };
        self.families += 1;
        let j = self.families;
        let confidence = crate::stats::family_confidence(j, sampling.confidence, run_confidence)
            .map_err(|e| {
                ReduceError::Usage(format!(
                    "the run-wide confidence is spent at candidate family {j}: {e}"
                ))
            })?;
        if let Some(rate) = sampling.rate {
            let feasible = crate::stats::required_passes(sampling.runs, rate, confidence)
                .ok()
                .flatten()
                .is_some();
            if !feasible {
                // Not a fixed point: the remaining alpha is too small for the planned samples.
                return Err(ReduceError::Usage(format!(
                    "the run-wide confidence is spent at candidate family {j}: even {n} of {n} passes cannot clear the rate gate at confidence {confidence}; plan more --candidate-runs",
                    n = sampling.runs
                )));
            }
        }
        Ok((Some(j), confidence))
    }

    fn record(&mut self, phase: &str, answer: &Answer) {
        let stats = self.phase(phase);
        stats.oracle_samples += answer.samples;
        stats.oracle_sample_uses += answer.samples;
        stats.oracle_ms += crate::reduce::millis(answer.duration);
        stats.samples_saved += answer.saved;
        stats.early_acceptances += u64::from(answer.early_accept);
        stats.early_rejections += u64::from(answer.early_reject);
    }

    fn cached(&self, key: &TreeKey) -> Option<bool> {
        if self.setup.sampling.repeated() {
            // Old results must not stand in for new trials.
            return None;
        }
        self.cache.get(key).copied()
    }

    fn remember(&mut self, key: TreeKey, pass: bool) {
        if self.setup.sampling.repeated() {
            return;
        }
        if self.cache.len() >= self.setup.cache_capacity {
            // A simple bound: forget everything rather than grow without limit.
            self.cache.clear();
        }
        self.cache.insert(key, pass);
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "a commit needs every part of the candidate"
    )]
    fn commit(
        &mut self,
        phase: &str,
        mutation: &Mutation,
        edits: EditSet,
        tree: Tree,
        key: TreeKey,
        label: &str,
        union: bool,
        family: (Option<u64>, f64),
    ) -> Result<(), ReduceError> {
        let start = std::time::Instant::now();
        self.clean.apply(&tree)?;
        // `tree` is what the oracle saw: the disk must hold the same in every part this
        // commit wrote. Only when some part differs are the two fingerprinted in full.
        let differs = self.clean.verify(&tree)?;
        self.commit_time += start.elapsed();
        if let Some(found) = differs {
            let (expected, on_disk) = (tree.fingerprint(), found.fingerprint());
            if on_disk != expected {
                return Err(ReduceError::Unfaithful {
                    expected: expected.to_string(),
                    found: on_disk.to_string(),
                });
            }
        }
        let index = self.events.len() as u64 + 1;
        let mut paths = Vec::new();
        mutation_paths(mutation, &mut paths);
        for name in dropped_identifiers(&self.current, &tree, &paths, &mut self.name_counts) {
            self.name_drops.insert(name, index);
        }
        let before = self.current_size;
        let after = self.current.size_of(before, &tree);
        debug_assert_eq!(after, tree.size());
        let stats = self.phase(phase);
        stats.accepted += 1;
        stats.bytes_removed += before.bytes.saturating_sub(after.bytes);
        stats.entries_removed += (before.files + before.dirs + before.symlinks)
            .saturating_sub(after.files + after.dirs + after.symlinks);
        self.current_set = self.current_set.moved(&self.current, &tree);
        debug_assert_eq!(self.current_set.key(), key);
        self.edits = edits;
        self.current = tree;
        self.current_key = key;
        self.current_fp = None;
        self.current_size = after;
        self.events.push(Event {
            index,
            phase: phase.to_string(),
            change: label.to_string(),
            union,
            entries_after: after.files + after.dirs + after.symlinks,
            bytes_after: after.bytes,
            family: family.0,
            candidate_confidence: family.0.map(|_| family.1),
        });
        self.checkpoint_now("reducing")?;
        Ok(())
    }

    fn notify(&mut self, phase: &str) {
        if let Some(mut observer) = self.observer.take() {
            let size = self.current.size();
            let view = SessionView {
                entries: size.files + size.dirs + size.symlinks,
                bytes: size.bytes,
                oracle_samples: self.phases.iter().map(|p| p.oracle_samples).sum(),
                cache_hits: self.phases.iter().map(|p| p.cache_hits).sum(),
                accepted: self.events.len() as u64,
            };
            observer.update(phase, &view);
            self.observer = Some(observer);
        }
    }
}

/// What `candidate` cuts from `tree`, as the trace's last column: the start of the cut
/// text, or nothing for a candidate that is no cut (a replacement, a stale one).
fn traced_cut(tree: &Tree, candidate: &Candidate) -> String {
    recall::cut_of(tree, &candidate.mutation).map_or_else(String::new, |cut| cut.excerpt(120))
}

/// The paths a mutation names.
fn mutation_paths(mutation: &Mutation, out: &mut Vec<crate::tree::RelPath>) {
    match mutation {
        Mutation::Remove(paths) => out.extend(paths.iter().cloned()),
        Mutation::Keep { path, .. } | Mutation::Replace { path, .. } | Mutation::Conflict(path) => {
            out.push(path.clone())
        }
        Mutation::Union(parts) => {
            for part in parts {
                mutation_paths(part, out);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::reduce::edits::tests::tree;
    use crate::runner::CommandSpec;

    /// A session on `files` whose command is `sh -c script` and whose oracle wants exit 0.
    pub(crate) fn session_on(
        files: &[(&str, &str)],
        script: &str,
        jobs: usize,
        scratch: &std::path::Path,
    ) -> Session {
        let command = CommandSpec {
            argv: ["sh", "-c", script].map(String::from).to_vec(),
            env: Vec::new(),
        };
        // Learn the oracle from a real run of the command on the tree.
        let learn = scratch.join("learn");
        let tmp = scratch.join("learn-tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        for (path, data) in files {
            let at = learn.join(path);
            // A directory, as `tree` reads the list: no content and no `.` in its path.
            if data.is_empty() && !path.contains('.') {
                std::fs::create_dir_all(at).unwrap();
                continue;
            }
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, data).unwrap();
        }
        let never = AtomicBool::new(false);
        let outcome = runner::run(&command, &learn, &tmp, Duration::from_secs(30), &never).unwrap();
        let oracle = crate::oracle::OracleSpec {
            exit_code: Some(0),
            ..Default::default()
        }
        .learn(&[(outcome, Normalizer::new(&[]))])
        .unwrap();
        let setup = Setup {
            command,
            oracle,
            timeout: Duration::from_secs(30),
            adaptive_timeout: false,
            jobs,
            max_attempts: None,
            deadline: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            cache_capacity: 1000,
            sampling: Sampling::default(),
            container: None,
            overlay: true,
        };
        Session::new(
            Arc::new(tree(files)),
            setup,
            &scratch.join("s"),
            "t",
            None,
            None,
        )
        .unwrap()
    }

    #[test]
    fn a_failed_union_is_bisected_by_candidate_index_whatever_the_jobs() {
        let names: Vec<String> = (0..8).map(|i| format!("f{i}.txt")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x\n")).collect();
        // The failure needs four files of the eight: each deletion alone passes, the union
        // of all eight does not, the union of the first four does.
        let script = "[ \"$(ls | wc -l)\" -ge 4 ]";
        for jobs in [1, 2] {
            let scratch = tempfile::tempdir().unwrap();
            let mut session = session_on(&files, script, jobs, scratch.path());
            let candidates = names
                .iter()
                .map(|n| Candidate {
                    mutation: Mutation::Remove(vec![Arc::from(n.as_str())]),
                    label: format!("delete {n}"),
                })
                .collect();
            let done = session.try_window("test", candidates).unwrap().unwrap();
            assert_eq!(
                done,
                [true, true, true, true, false, false, false, false],
                "-j{jobs}"
            );
            let left: Vec<&str> = session.current.entries.keys().map(|k| &**k).collect();
            assert_eq!(left, ["f4.txt", "f5.txt", "f6.txt", "f7.txt"], "-j{jobs}");
            let events = session.events();
            assert_eq!(events.len(), 1);
            assert!(events[0].union, "{:?}", events[0].change);
            assert_eq!(events[0].change, "union of 4 changes");
            // Eight single runs, the failed union of eight, the union of four.
            assert_eq!(session.attempts(), 10, "-j{jobs}");
        }
    }

    #[test]
    fn a_worker_a_window_leaves_idle_runs_the_next_candidate_ahead_and_commits_nothing_of_it() {
        let files = [("a.txt", "x\n"), ("b.txt", "x\n"), ("c.txt", "x\n")];
        // The failure needs c.txt only.
        let script = "[ -e c.txt ]";
        let delete = |n: &str| Candidate {
            mutation: Mutation::Remove(vec![Arc::from(n)]),
            label: format!("delete {n}"),
        };
        let stats = |s: &Session| {
            let p = s.phases().iter().find(|p| p.phase == "test").unwrap();
            (p.oracle_samples, p.ran_ahead, p.cache_hits)
        };
        let left = |s: &Session| {
            s.current
                .entries
                .keys()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
        };
        for jobs in [1, 2] {
            let scratch = tempfile::tempdir().unwrap();
            let mut session = session_on(&files, script, jobs, scratch.path());
            // A window of one: with two workers, the next candidate runs beside it. It
            // passes, but only the window's own candidate is committed.
            let done = session
                .try_window_ahead("test", vec![delete("a.txt")], vec![delete("b.txt")])
                .unwrap()
                .unwrap();
            assert_eq!(done, [true]);
            assert_eq!(left(&session), ["b.txt", "c.txt"], "-j{jobs}");
            let ahead = u64::from(jobs == 2);
            assert_eq!(stats(&session), (1 + ahead, ahead, 0), "-j{jobs}");
            // Ahead of a failing window: the next window proposes the tree that ran ahead
            // and is answered from the cache, without a command.
            let done = session
                .try_window_ahead("test", vec![delete("c.txt")], vec![delete("b.txt")])
                .unwrap()
                .unwrap();
            assert_eq!(done, [false]);
            assert_eq!(left(&session), ["b.txt", "c.txt"], "-j{jobs}");
            assert_eq!(stats(&session), (2 + 2 * ahead, 2 * ahead, 0), "-j{jobs}");
            let done = session
                .try_window("test", vec![delete("b.txt")])
                .unwrap()
                .unwrap();
            assert_eq!(done, [true]);
            assert_eq!(left(&session), ["c.txt"], "-j{jobs}");
            // One worker ran it now; two ran it ahead and answer from the cache.
            assert_eq!(stats(&session), (3 + ahead, 2 * ahead, ahead), "-j{jobs}");
            assert_eq!(session.events().len(), 2, "-j{jobs}");
        }
    }

    #[test]
    fn when_no_union_passes_the_lowest_passing_index_commits() {
        let files = [("a.txt", "x\n"), ("b.txt", "x\n"), ("c.txt", "x\n")];
        // Any two files reproduce; so each single deletion passes, but no union of two does.
        let script = "[ \"$(ls | wc -l)\" -ge 2 ]";
        let scratch = tempfile::tempdir().unwrap();
        let mut session = session_on(&files, script, 2, scratch.path());
        let candidates = ["c.txt", "b.txt"]
            .into_iter()
            .map(|n| Candidate {
                mutation: Mutation::Remove(vec![Arc::from(n)]),
                label: format!("delete {n}"),
            })
            .collect();
        let done = session.try_window("test", candidates).unwrap().unwrap();
        assert_eq!(done, [true, false]);
        let left: Vec<&str> = session.current.entries.keys().map(|k| &**k).collect();
        assert_eq!(left, ["a.txt", "b.txt"]);
        assert!(!session.events()[0].union);
    }

    #[test]
    fn the_adaptive_timeout_follows_accepted_runs_between_floor_and_ceiling() {
        let files = [("a.txt", "x\n")];
        let scratch = tempfile::tempdir().unwrap();
        let mut session = session_on(&files, "true", 1, scratch.path());
        session.setup.timeout = Duration::from_secs(100);
        session.timeout = session.setup.timeout;
        let pass = |ms: u64| Answer {
            pass: true,
            termination: Termination::Exited(0),
            duration: Duration::from_millis(ms),
            samples: 1,
            saved: 0,
            early_accept: false,
            early_reject: false,
        };
        // Not adaptive: the given timeout stays.
        session.adapt_timeout(&[pass(1000); 8]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        session.setup.adaptive_timeout = true;
        // Too few accepted runs to go by.
        session.adapt_timeout(&[pass(1000); 3]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        // Factor times the slowest recent run, but never under the floor.
        session.adapt_timeout(&[pass(1000)]);
        assert_eq!(session.timeout(), TIMEOUT_FLOOR);
        session.adapt_timeout(&[pass(20_000)]);
        assert_eq!(session.timeout(), Duration::from_secs(60));
        // Rejected runs teach nothing; a slow accepted run cannot lift it past the ceiling.
        let mut slow = pass(90_000);
        slow.pass = false;
        session.adapt_timeout(&[slow]);
        assert_eq!(session.timeout(), Duration::from_secs(60));
        session.adapt_timeout(&[pass(90_000)]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        // The slow run leaves the window after enough faster ones.
        session.adapt_timeout(&[pass(5_000); ADAPT_WINDOW]);
        assert_eq!(session.timeout(), Duration::from_secs(15));
    }

    #[test]
    fn probes_run_under_the_adapted_timeout() {
        // Deleting `a.txt` makes the command wait 60 s and then pass: under the given
        // 100 s it would be committed, under the adapted 10 s floor it times out.
        let files = [("a.txt", "x\n")];
        let scratch = tempfile::tempdir().unwrap();
        let mut session = session_on(&files, "[ -e a.txt ] || sleep 60", 1, scratch.path());
        session.setup.timeout = Duration::from_secs(100);
        session.setup.adaptive_timeout = true;
        session.timeout = session.setup.timeout;
        let fast = Answer {
            pass: true,
            termination: Termination::Exited(0),
            duration: Duration::from_millis(10),
            samples: 1,
            saved: 0,
            early_accept: false,
            early_reject: false,
        };
        session.adapt_timeout(&[fast; ADAPT_AFTER]);
        assert_eq!(session.timeout(), TIMEOUT_FLOOR);
        let started = Instant::now();
        let done = session
            .try_window(
                "test",
                vec![Candidate {
                    mutation: Mutation::Remove(vec![Arc::from("a.txt")]),
                    label: "delete a.txt".into(),
                }],
            )
            .unwrap()
            .unwrap();
        assert_eq!(done, [false]);
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{:?}",
            started.elapsed()
        );
    }

    /// A cut of `m.txt` keeping the lines that do not equal `line`.
    fn cut_line(session: &Session, line: &str) -> Candidate {
        let (data, expect) = crate::reduce::pass::file_state(session, "m.txt").unwrap();
        let keep = crate::reduce::pass::line_ranges(&data)
            .into_iter()
            .filter(|r| data[r.clone()] != *format!("{line}\n").as_bytes())
            .collect();
        Candidate {
            mutation: Mutation::Keep {
                path: Arc::from("m.txt"),
                expect,
                keep,
            },
            label: format!("line {line}"),
        }
    }

    /// A session on `files` with `script` as the oracle, one job, recalling failed cuts.
    fn recalling(files: &[(&str, &str)], script: &str, scratch: &std::path::Path) -> Session {
        let mut session = session_on(files, script, 1, scratch);
        session.set_recalling(true);
        session
    }

    /// The oracle's runs so far.
    fn samples(s: &Session) -> u64 {
        s.phases().iter().map(|p| p.oracle_samples).sum::<u64>()
    }

    /// Runs one candidate alone; which it committed.
    fn window(s: &mut Session, c: Candidate) -> Vec<bool> {
        s.try_window("test", vec![c]).unwrap().unwrap()
    }

    #[test]
    fn a_failed_cut_is_recalled_until_a_name_it_holds_loses_an_occurrence() {
        // The failure needs `keep` in m.txt while `lock` is in n.txt.
        let files = [("m.txt", "keep\nx\ny\n"), ("n.txt", "lock\n")];
        let script = "! grep -q lock n.txt || grep -q keep m.txt";
        let scratch = tempfile::tempdir().unwrap();
        let mut session = recalling(&files, script, scratch.path());
        let recalled = |s: &Session| s.phases().iter().map(|p| p.recalled).sum::<u64>();
        let keep = cut_line(&session, "keep");
        assert_eq!(window(&mut session, keep), [false]);
        assert_eq!(samples(&session), 1);
        // The file changes elsewhere: the whole-tree cache cannot answer the same cut, the
        // memory does, without a run.
        let x = cut_line(&session, "x");
        assert_eq!(window(&mut session, x), [true]);
        assert_eq!(samples(&session), 2);
        let keep = cut_line(&session, "keep");
        assert_eq!(window(&mut session, keep.clone()), [false]);
        assert_eq!((samples(&session), recalled(&session)), (2, 1));
        assert_eq!(session.attempts(), 2, "a recalled cut is no attempt");
        // Off (the confirming round): it runs.
        session.set_recalling(false);
        assert_eq!(window(&mut session, keep.clone()), [false]);
        assert_eq!((samples(&session), recalled(&session)), (3, 1));
        session.set_recalling(true);
        // A commit that removes an occurrence of a name the cut holds... `lock` is not one.
        let lock = Candidate {
            mutation: Mutation::Remove(vec![Arc::from("n.txt")]),
            label: "delete n.txt".into(),
        };
        assert_eq!(window(&mut session, lock), [true]);
        // The memory still answers the same cut (the name test cannot see this link) and
        // only the confirming round finds that it goes now.
        let keep = cut_line(&session, "keep");
        assert_eq!(window(&mut session, keep.clone()), [false]);
        assert_eq!((samples(&session), recalled(&session)), (4, 2));
        session.set_recalling(false);
        assert_eq!(window(&mut session, keep), [true]);
        assert_eq!(samples(&session), 5);
    }

    #[test]
    fn a_failed_file_deletion_is_recalled_until_a_name_its_file_holds_loses_an_occurrence() {
        // lib.txt can go only once `call helper` is gone from m.txt.
        let files = [
            ("lib.txt", "def helper\n"),
            ("m.txt", "call helper\nx\n"),
            ("blank.txt", "\n"),
        ];
        let script =
            "! grep -q 'call helper' m.txt || [ -f lib.txt ]; [ $? = 0 ] && [ -f blank.txt ]";
        let scratch = tempfile::tempdir().unwrap();
        let mut session = recalling(&files, script, scratch.path());
        let delete = |path: &str| Candidate {
            mutation: Mutation::Remove(vec![Arc::from(path)]),
            label: format!("delete {path}"),
        };
        assert_eq!(window(&mut session, delete("lib.txt")), [false]);
        assert_eq!(window(&mut session, delete("blank.txt")), [false]);
        assert_eq!(samples(&session), 2);
        // A commit elsewhere: the deletion of lib.txt is answered from memory; that of a
        // file without identifiers runs again.
        let x = cut_line(&session, "x");
        assert_eq!(window(&mut session, x), [true]);
        assert_eq!(window(&mut session, delete("lib.txt")), [false]);
        assert_eq!(window(&mut session, delete("blank.txt")), [false]);
        assert_eq!(samples(&session), 4);
        assert_eq!(session.phases()[0].recalled, 1);
        // The last use of `helper` goes: the deletion runs again, and passes.
        let call = cut_line(&session, "call helper");
        assert_eq!(window(&mut session, call), [true]);
        assert_eq!(window(&mut session, delete("lib.txt")), [true]);
        assert_eq!(samples(&session), 6);
    }

    #[test]
    fn a_cut_runs_again_once_a_name_it_holds_lost_an_occurrence() {
        // `def y` is needed while `call y` is there.
        let files = [("m.txt", "def y\ncall y\n")];
        let script = "! grep -q 'call y' m.txt || grep -q 'def y' m.txt";
        let scratch = tempfile::tempdir().unwrap();
        let mut session = recalling(&files, script, scratch.path());
        let def = cut_line(&session, "def y");
        assert_eq!(window(&mut session, def), [false]);
        let call = cut_line(&session, "call y");
        assert_eq!(window(&mut session, call), [true]);
        // The commit took an occurrence of `y`, which the cut holds: it runs, and goes.
        let def = cut_line(&session, "def y");
        assert_eq!(window(&mut session, def), [true]);
        assert_eq!(samples(&session), 3);
        assert_eq!(session.phases()[0].recalled, 0);
    }
}

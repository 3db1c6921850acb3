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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::oracle::Oracle;
use crate::reduce::edits::{EditSet, Mutation};
use crate::reduce::error::ReduceError;
use crate::reduce::identifiers::{count_identifiers, dropped_identifiers, identifiers};
pub use crate::reduce::options::Sampling;
use crate::reduce::options::StopReason;
use crate::runner::{self, RunDirs};
use crate::signature::Normalizer;
use crate::tree::{Fingerprint, Node, RelPath, SetHash, Tree, TreeKey, scan_exact};
use crate::workspace::Workspace;

mod accounting;
mod confidence;
mod journaled;
mod recall;
mod records;
mod run;
mod settle;
mod timeout;
mod window;
mod worker;

use accounting::Accounting;
use confidence::Families;
use settle::SettleState;
use timeout::TimeoutPolicy;

pub use crate::console::{Observer, SessionView};
pub use records::{Candidate, Event, PassSpan, PhaseStats};
use worker::{Answer, Lower};
pub use worker::{ProbeTime, Setup, Worker};

/// Candidates evaluated together in a union window. Fixed, so that results never depend on
/// `--jobs`.
pub const UNION_WINDOW: usize = 8;

/// The content and digest of the file at `path` of the current tree; `None` when there is
/// no file there.
pub(crate) fn file_state(session: &Session, path: &str) -> Option<(Arc<[u8]>, [u8; 32])> {
    match &session.current.entries.get(path)?.node {
        Node::File { data, digest } => Some((data.clone(), *digest)),
        _ => None,
    }
}

/// What [`Session::sample_current`] ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampled {
    /// Runs that ran to their end.
    pub runs: u64,
    /// Of those, the runs the oracle accepted.
    pub passes: u64,
    /// Whether an interrupt or the deadline stopped the runs before all had run.
    pub cut: bool,
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
    /// Candidates tried, per-phase counters and commits.
    accounting: Accounting,
    stop: Option<StopReason>,
    observer: Option<Box<dyn Observer>>,
    /// Candidate families allocated so far (run-wide confidence).
    families: Families,
    /// For each identifier, the number of the last commit that lowered how often it occurs
    /// in the tree (see [`Session::touched_since`]).
    name_drops: HashMap<String, u64>,
    /// How often each identifier occurs in the accepted tree.
    name_counts: HashMap<String, u64>,
    /// Where `REPROMIN_TRACE` asks every attempt to be logged.
    trace: Option<std::fs::File>,
    /// The running pass, and what each pass's search of a file settled (see
    /// [`Session::settled`]).
    settle: SettleState,
    /// Failed cuts (see [`recall`]).
    recall: recall::Recall,
    /// Whether a remembered failed cut is answered without a run.
    recalling: bool,
    /// What the file-access tracer did (see [`Session::trace_access`]).
    access_record: Option<crate::reduce::access::TraceRecord>,
    /// The per-candidate timeout in force (see [`Session::timeout`]).
    timeout: TimeoutPolicy,
    /// The durable session (`--session`): its journal answers what it recorded, then
    /// records what runs (see [`crate::reduce::durable`]).
    durable: Option<crate::reduce::durable::Durable>,
    /// The runs' cgroups are kept for the next run while the session lives.
    _cgroups: crate::runner::KeptCgroups,
}

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
                    let worker = match (&setup.container, &setup.remote) {
                        (Some(runs), _) => worker.confined(runs.clone()),
                        (None, Some(remote)) => worker.remote(remote.clone()),
                        (None, None) => worker,
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
            timeout: TimeoutPolicy::new(setup.timeout),
            setup,
            workers,
            commit_time: Duration::ZERO,
            clean,
            cache: HashMap::new(),
            accounting: Accounting::default(),
            stop: None,
            observer,
            families: Families::default(),
            name_drops: HashMap::new(),
            name_counts,
            durable: None,
            settle: SettleState::default(),
            recall: recall::Recall::default(),
            recalling: false,
            access_record: None,
            _cgroups: crate::runner::KeptCgroups::new(),
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
    /// follows the accepted candidates: [`crate::reduce::TIMEOUT_FACTOR`] times the slowest
    /// of the last accepted runs, never below [`crate::reduce::TIMEOUT_FLOOR`] and never above
    /// the timeout derived from the baseline. A tree that got faster to run then stops
    /// waiting as long for a candidate that hangs.
    pub fn timeout(&self) -> Duration {
        self.timeout.current()
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

    /// Sets the time limit of the runs from now on, the adaptive limit's ceiling
    /// included: the gate's holdout runs to the test's configured limit, not to the one
    /// the reduction's runs learned.
    pub fn limit_runs_to(&mut self, timeout: Duration) {
        self.setup.timeout = timeout;
        self.timeout = TimeoutPolicy::new(timeout);
    }

    /// Runs the command `runs` times on the accepted tree, spread over every worker, and
    /// counts the runs the oracle accepted (holdout samples: outside every phase's
    /// accounting, and never steering anything). Each run starts from exactly the accepted
    /// tree. Once `interrupt` is set or `deadline` passes, no run starts and the running
    /// ones are ended (and not counted): the holdout is then cut short.
    ///
    /// # Errors
    /// Workspace I/O or a command that cannot start.
    pub fn sample_current(
        &mut self,
        runs: u64,
        interrupt: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Result<Sampled, ReduceError> {
        let tree = &self.current;
        let lower = Lower {
            dir: self.clean.root(),
            tree,
        };
        let setup = &self.setup;
        // Set once the holdout must stop: every run watches it.
        let stop = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let next = std::sync::atomic::AtomicU64::new(0);
        let made = std::sync::atomic::AtomicU64::new(0);
        let passes = std::sync::atomic::AtomicU64::new(0);
        let failure: Mutex<Option<ReduceError>> = Mutex::new(None);
        let should_stop =
            || interrupt.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d);
        std::thread::scope(|scope| {
            let (stop, done) = (&stop, &done);
            scope.spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    if should_stop() {
                        stop.store(true, Ordering::SeqCst);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            let mut handles = Vec::new();
            for worker in &mut self.workers {
                let (next, made, passes, failure) = (&next, &made, &passes, &failure);
                handles.push(scope.spawn(move || {
                    while !stop.load(Ordering::SeqCst) && next.fetch_add(1, Ordering::SeqCst) < runs
                    {
                        match worker.run(tree, Some(lower), &setup.command, setup.timeout, stop) {
                            Ok((outcome, _))
                                if outcome.termination == runner::Termination::Interrupted => {}
                            Ok((outcome, normalizer)) => {
                                made.fetch_add(1, Ordering::SeqCst);
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
                }));
            }
            for handle in handles {
                let _ = handle.join();
            }
            done.store(true, Ordering::SeqCst);
        });
        if let Some(err) = failure.into_inner().ok().flatten() {
            return Err(err);
        }
        let made = made.into_inner();
        Ok(Sampled {
            runs: made,
            passes: passes.into_inner(),
            cut: made < runs,
        })
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
            memory: self.setup.command.memory,
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

    /// How the workers' remote runs were answered, summed (zero when runs are local).
    pub fn remote_counts(&self) -> worker::RemoteCounts {
        self.workers
            .iter()
            .map(Worker::remote_counts)
            .fold(worker::RemoteCounts::default(), worker::RemoteCounts::plus)
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
        &self.accounting.phases
    }

    /// Committed changes.
    pub fn events(&self) -> &[Event] {
        &self.accounting.events
    }

    /// The runs of the passes so far, in order.
    pub fn spans(&self) -> &[PassSpan] {
        &self.accounting.spans
    }

    /// Parallel jobs.
    pub fn jobs(&self) -> usize {
        self.setup.jobs
    }

    /// Candidates tried so far.
    pub fn attempts(&self) -> u64 {
        self.accounting.attempts
    }

    /// Commits made so far.
    pub fn commits(&self) -> u64 {
        self.accounting.commits()
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
        let (_, digest) = file_state(self, path)?;
        self.settle.get(path, digest)
    }

    /// Records that the running pass's search of `path` settled it on the current tree;
    /// `from_memory`: the search answered a cut from the memory of failed cuts.
    pub(crate) fn settle(&mut self, path: &RelPath, from_memory: bool) {
        if let Some((_, digest)) = file_state(self, path) {
            let at = self.commits();
            self.settle.insert(path, digest, at, from_memory);
        }
    }

    /// Cuts answered from the memory of failed cuts so far.
    pub(crate) fn recalled_cuts(&self) -> u64 {
        self.accounting.recalled_cuts()
    }

    /// Counts a search skipped because its file was settled in an earlier run of the pass.
    pub(crate) fn skipped_settled(&mut self) {
        self.settle.skips += 1;
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
        self.settle.skips
    }

    fn phase(&mut self, name: &str) -> &mut PhaseStats {
        self.accounting.phase(name)
    }

    /// Records that a pass starts, and returns a timer to hand to [`Session::end_pass`].
    pub fn begin_pass(&mut self, name: &str) -> Instant {
        name.clone_into(&mut self.settle.pass);
        self.phase(name).passes += 1;
        self.accounting.open_span(name);
        Instant::now()
    }

    /// Records the wall time of a pass, and the `unparsable` cuts its syntax guard skipped.
    pub fn end_pass(&mut self, name: &str, started: Instant, unparsable: u64) {
        let ms = crate::reduce::options::millis(started.elapsed());
        let stats = self.phase(name);
        stats.wall_ms += ms;
        stats.unparsable += unparsable;
        self.accounting.close_span(name);
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
            .is_some_and(|max| self.accounting.attempts >= max)
        {
            self.stop = Some(StopReason::MaxAttempts);
        } else if self.setup.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop = Some(StopReason::MaxDuration);
        }
        self.stop.is_none()
    }

    fn remaining_attempts(&self) -> usize {
        self.setup.max_attempts.map_or(usize::MAX, |max| {
            usize::try_from(max.saturating_sub(self.accounting.attempts)).unwrap_or(usize::MAX)
        })
    }

    fn record(&mut self, phase: &str, answer: &Answer) {
        self.accounting.record(phase, answer);
    }

    /// The confidence for the next changed candidate (see [`Families::allocate`]).
    fn allocate(&mut self) -> Result<(Option<u64>, f64), ReduceError> {
        self.families.allocate(self.setup.sampling)
    }

    /// Learns from a window's answers (see [`Session::timeout`]).
    fn learn_timeout(&mut self, answers: &[Answer]) {
        let (adaptive, ceiling) = (self.setup.adaptive_timeout, self.setup.timeout);
        self.timeout.learn(adaptive, ceiling, answers);
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
        let index = self.accounting.events.len() as u64 + 1;
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
        self.accounting.events.push(Event {
            index,
            phase: phase.to_string(),
            change: label.to_string(),
            union,
            entries_after: after.files + after.dirs + after.symlinks,
            bytes_after: after.bytes,
            family: family.0,
            candidate_confidence: family.0.map(|_| family.1),
            elapsed_ms: self.accounting.elapsed_ms(),
            commands: self.accounting.commands(),
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
                oracle_samples: self
                    .accounting
                    .phases
                    .iter()
                    .map(|p| p.oracle_samples)
                    .sum(),
                cache_hits: self.accounting.phases.iter().map(|p| p.cache_hits).sum(),
                accepted: self.accounting.events.len() as u64,
            };
            observer.update(phase, &view);
            self.observer = Some(observer);
        }
    }
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
    use super::timeout::{ADAPT_AFTER, ADAPT_WINDOW};
    use super::*;
    use crate::reduce::edits::tests::tree;
    use crate::reduce::options::TIMEOUT_FLOOR;
    use crate::runner::CommandSpec;
    use crate::runner::Termination;

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
            memory: None,
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
            remote: None,
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
        session.timeout = TimeoutPolicy::new(session.setup.timeout);
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
        session.learn_timeout(&[pass(1000); 8]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        session.setup.adaptive_timeout = true;
        // Too few accepted runs to go by.
        session.learn_timeout(&[pass(1000); 3]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        // Factor times the slowest recent run, but never under the floor.
        session.learn_timeout(&[pass(1000)]);
        assert_eq!(session.timeout(), TIMEOUT_FLOOR);
        session.learn_timeout(&[pass(20_000)]);
        assert_eq!(session.timeout(), Duration::from_secs(60));
        // Rejected runs teach nothing; a slow accepted run cannot lift it past the ceiling.
        let mut slow = pass(90_000);
        slow.pass = false;
        session.learn_timeout(&[slow]);
        assert_eq!(session.timeout(), Duration::from_secs(60));
        session.learn_timeout(&[pass(90_000)]);
        assert_eq!(session.timeout(), Duration::from_secs(100));
        // The slow run leaves the window after enough faster ones.
        session.learn_timeout(&[pass(5_000); ADAPT_WINDOW]);
        assert_eq!(session.timeout(), Duration::from_secs(15));
    }

    #[test]
    fn the_holdout_runs_to_the_limit_it_is_given() {
        // Each run takes 1.5 s: past a 1 s limit, inside a 10 s one.
        let files = [("a.txt", "x\n")];
        let scratch = tempfile::tempdir().unwrap();
        let mut session = session_on(&files, "sleep 1.5", 1, scratch.path());
        session.setup.timeout = Duration::from_secs(1);
        session.setup.adaptive_timeout = true;
        session.timeout = TimeoutPolicy::new(session.setup.timeout);
        let interrupt = AtomicBool::new(false);
        let short = session.sample_current(1, &interrupt, None).unwrap();
        assert_eq!(short.passes, 0);
        session.limit_runs_to(Duration::from_secs(10));
        assert_eq!(session.timeout(), Duration::from_secs(10));
        let long = session.sample_current(1, &interrupt, None).unwrap();
        assert_eq!(long.passes, 1);
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
        session.timeout = TimeoutPolicy::new(session.setup.timeout);
        let fast = Answer {
            pass: true,
            termination: Termination::Exited(0),
            duration: Duration::from_millis(10),
            samples: 1,
            saved: 0,
            early_accept: false,
            early_reject: false,
        };
        session.learn_timeout(&[fast; ADAPT_AFTER]);
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
        let (data, expect) = file_state(session, "m.txt").unwrap();
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

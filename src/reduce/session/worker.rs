//! Where candidates run: the session's fixed [`Setup`], its [`Worker`]s (a workspace, its
//! run layout and its normaliser each), and [`probe`], which samples one candidate tree on
//! one worker and asks the oracle.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::oracle::Oracle;
use crate::overlay::{Layers, Mount};
use crate::reduce::error::ReduceError;
use crate::reduce::options::Sampling;
use crate::runner::{self, CommandSpec, Confinement, RunDirs, Termination};
use crate::signature::Normalizer;
use crate::tree::Tree;
use crate::workspace::Workspace;

/// Everything fixed for the session: command, oracle, timeout, limits.
pub struct Setup {
    /// The command.
    pub command: CommandSpec,
    /// The oracle.
    pub oracle: Oracle,
    /// Per-candidate timeout (the ceiling, when it adapts).
    pub timeout: Duration,
    /// Whether the timeout follows the observed run times: it was derived, not given.
    pub adaptive_timeout: bool,
    /// Parallel jobs.
    pub jobs: usize,
    /// Candidate budget.
    pub max_attempts: Option<u64>,
    /// Time budget, from the start of reduction.
    pub deadline: Option<Instant>,
    /// Set by Ctrl-C.
    pub interrupt: Arc<AtomicBool>,
    /// Cache capacity in entries.
    pub cache_capacity: usize,
    /// How each candidate is sampled.
    pub sampling: Sampling,
    /// The containers every fresh worker runs its commands in, if any.
    pub container: Option<Arc<crate::container::ContainerRuns>>,
    /// Whether unconfined workers show each run its tree through an overlay mount (see
    /// [`crate::overlay`]) where the machine allows it.
    pub overlay: bool,
    /// The Remote Execution API cluster every fresh worker runs its commands on, if any.
    pub remote: Option<crate::remote::Remote>,
}

/// The directory that holds the accepted tree (the session's clean copy, in which no
/// command runs) and that tree: the lower layer of an overlay run.
#[derive(Clone, Copy)]
pub(crate) struct Lower<'a> {
    /// The directory.
    pub(crate) dir: &'a std::path::Path,
    /// What it holds.
    pub(crate) tree: &'a Tree,
}

/// Where the time of the passes' runs went, summed over their commands (and over the
/// workers, which run side by side): what repromin does around each command, beside the
/// command itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeTime {
    /// Showing each run its candidate tree: the overlay's upper layer written, or the
    /// plain copy brought to the candidate (what the last run wrote undone first).
    pub prepare: Duration,
    /// The commands, from the start of each (its mount included) until its process group
    /// has ended and its output is read.
    pub command: Duration,
    /// Around each command: its `TMPDIR` emptied before it, its layer removed after it.
    pub clean_up: Duration,
    /// Each accepted cut written to the clean copy and read back from it.
    pub commit: Duration,
}

impl ProbeTime {
    /// The two summed.
    #[must_use]
    pub fn plus(self, other: ProbeTime) -> ProbeTime {
        ProbeTime {
            prepare: self.prepare + other.prepare,
            command: self.command + other.command,
            clean_up: self.clean_up + other.clean_up,
            commit: self.commit + other.commit,
        }
    }
}

/// One place where candidates run: a workspace, its run layout and its normaliser, and
/// the confinement of its runs when they are confined.
pub struct Worker {
    dirs: RunDirs,
    workspace: Workspace,
    normalizer: Normalizer,
    confinement: Option<Arc<dyn Confinement>>,
    layers: Layers,
    /// Where the time of the passes' runs here went.
    time: ProbeTime,
    /// The cluster this worker's runs go to, with what it answered, when they are remote.
    remote: Option<RemoteSlot>,
}

/// A worker's slot on a Remote Execution API cluster: the connection, and how many of its
/// runs executed and how many the action cache answered.
struct RemoteSlot {
    remote: crate::remote::Remote,
    counts: RemoteCounts,
}

/// How a worker's remote runs were answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteCounts {
    /// Runs the cluster executed.
    pub executed: u64,
    /// Runs its action cache answered (deterministic probes only).
    pub cached: u64,
}

impl RemoteCounts {
    /// The two summed.
    #[must_use]
    pub fn plus(self, other: RemoteCounts) -> RemoteCounts {
        RemoteCounts {
            executed: self.executed + other.executed,
            cached: self.cached + other.cached,
        }
    }
}

impl Worker {
    /// A worker on a fresh workspace at `dirs.tree`.
    pub(crate) fn fresh(dirs: RunDirs) -> Worker {
        let normalizer = Normalizer::new(&[
            dirs.wrapper.display().to_string(),
            dirs.tmp.display().to_string(),
        ]);
        Worker {
            workspace: Workspace::new(dirs.tree.clone()),
            layers: Layers::new(dirs.wrapper.join("layers")),
            dirs,
            normalizer,
            confinement: None,
            time: ProbeTime::default(),
            remote: None,
        }
    }

    /// A worker on an adopted directory (see `Workspace::adopt`).
    pub fn adopted(dirs: RunDirs, workspace: Workspace) -> Worker {
        let normalizer = Normalizer::new(&[
            dirs.tree.display().to_string(),
            dirs.wrapper.display().to_string(),
            dirs.tmp.display().to_string(),
        ]);
        Worker {
            layers: Layers::off("the tree is reduced in place, beside an installed environment"),
            dirs,
            workspace,
            normalizer,
            confinement: None,
            time: ProbeTime::default(),
            remote: None,
        }
    }

    /// The same worker, with every run confined by `confinement` (the gate's sandbox).
    #[must_use]
    pub(crate) fn confined(self, confinement: Arc<dyn Confinement>) -> Worker {
        Worker {
            confinement: Some(confinement),
            layers: Layers::off("runs are confined"),
            ..self
        }
    }

    /// The same worker, running every command on `remote` (`--remote`): the tree of each
    /// run is uploaded there, nothing is written here.
    #[must_use]
    pub(crate) fn remote(self, remote: crate::remote::Remote) -> Worker {
        Worker {
            layers: Layers::off("runs are remote"),
            remote: Some(RemoteSlot {
                remote,
                counts: RemoteCounts::default(),
            }),
            ..self
        }
    }

    /// How this worker's remote runs were answered (zero when its runs are local).
    pub(crate) fn remote_counts(&self) -> RemoteCounts {
        self.remote.as_ref().map(|r| r.counts).unwrap_or_default()
    }

    /// Runs `command` on `tree` on the cluster, when this worker's runs are remote: the
    /// action cache may answer only when `cache` says so.
    fn run_remote(
        &mut self,
        tree: &Tree,
        command: &CommandSpec,
        timeout: Duration,
        cache: crate::remote::CachePolicy,
        interrupt: &AtomicBool,
    ) -> Option<Result<runner::RunOutcome, ReduceError>> {
        let slot = self.remote.as_mut()?;
        Some(
            match slot.remote.run(tree, command, timeout, cache, interrupt) {
                Ok(run) if run.outcome.termination == runner::Termination::Interrupted => {
                    Ok(run.outcome)
                }
                Ok(run) => {
                    if run.cached {
                        slot.counts.cached += 1;
                    } else {
                        slot.counts.executed += 1;
                    }
                    Ok(run.outcome)
                }
                Err(err) => Err(err.into()),
            },
        )
    }

    /// The same worker, showing its runs plain copies only (`--no-overlay`).
    #[must_use]
    pub(crate) fn without_overlay(self) -> Worker {
        Worker {
            layers: Layers::off("--no-overlay"),
            ..self
        }
    }

    /// Decides, by mounting one once, whether this worker's runs go through an overlay
    /// over `lower`.
    pub(crate) fn try_overlay(&mut self, lower: Lower<'_>) {
        self.layers.usable(lower.dir, lower.tree, &self.dirs.tree);
    }

    /// Where the time of the passes' runs here went, since the session began.
    pub(crate) fn time(&self) -> ProbeTime {
        self.time
    }

    /// Starts that count again (a session adopting this worker starts its own).
    pub(crate) fn reset_time(&mut self) {
        self.time = ProbeTime::default();
    }

    /// Whether this worker's runs go through an overlay, or why not.
    pub(crate) fn overlay(&self) -> crate::overlay::OverlayRecord {
        self.layers.record()
    }

    /// Makes the tree directory show `tree` to the next run: through an overlay over
    /// `lower` where the worker can mount one (the mount is returned), or as a plain copy
    /// by delta application.
    fn place(
        &mut self,
        tree: &Tree,
        lower: Option<Lower<'_>>,
    ) -> Result<Option<Mount>, ReduceError> {
        if let Some(lower) = lower
            && self.layers.usable(lower.dir, lower.tree, &self.dirs.tree)
        {
            return Ok(Some(self.layers.stage(
                lower.dir,
                lower.tree,
                tree,
                &self.dirs.tree,
            )?));
        }
        self.workspace.apply(tree)?;
        Ok(None)
    }

    /// Where this worker runs: its tree, its `TMPDIR` and its wrapper directory.
    pub(crate) fn dirs(&self) -> &RunDirs {
        &self.dirs
    }

    /// Empties the temporary directory and runs `command` in the tree, confined when the
    /// worker is, through `mount` when it is given (then the run's layer is removed after
    /// it, and the tree directory checked to be still empty).
    fn exec(
        &mut self,
        command: &CommandSpec,
        timeout: Duration,
        interrupt: &AtomicBool,
        mount: Option<&Mount>,
    ) -> Result<runner::RunOutcome, ReduceError> {
        self.dirs.fresh_tmp()?;
        let outcome = runner::run_confined(
            command,
            &self.dirs.tree,
            &self.dirs.tmp,
            timeout,
            interrupt,
            self.confinement.as_deref(),
            mount,
        );
        if mount.is_some() {
            self.layers.clear(&self.dirs.tree)?;
        }
        Ok(outcome?)
    }

    /// Runs `command` on `tree` here and returns the outcome and this worker's normaliser.
    /// `lower` is the accepted tree on disk, which an overlay run shows `tree` over.
    ///
    /// # Errors
    /// Workspace I/O or a command that cannot start.
    pub(crate) fn run(
        &mut self,
        tree: &Tree,
        lower: Option<Lower<'_>>,
        command: &CommandSpec,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<(runner::RunOutcome, Normalizer), ReduceError> {
        // A run of the accepted tree (the final check, a holdout sample) is an independent
        // trial: never an answer from the action cache.
        let skip = crate::remote::CachePolicy::Skip;
        if let Some(outcome) = self.run_remote(tree, command, timeout, skip, interrupt) {
            return Ok((outcome?, self.normalizer.clone()));
        }
        let mount = self.place(tree, lower)?;
        let outcome = self.exec(command, timeout, interrupt, mount.as_ref())?;
        Ok((outcome, self.normalizer.clone()))
    }
}

/// The answer for one candidate run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answer {
    /// Whether the oracle accepted the candidate.
    pub(crate) pass: bool,
    /// How the last sample ended.
    pub(crate) termination: Termination,
    /// The samples' summed duration.
    pub(crate) duration: Duration,
    /// Samples executed.
    pub(crate) samples: u64,
    /// Planned samples not executed (early stop).
    pub(crate) saved: u64,
    /// Accepted before the planned count.
    pub(crate) early_accept: bool,
    /// Rejected before the planned count.
    pub(crate) early_reject: bool,
}

/// Applies `tree` to the worker's workspace, runs the command and asks the oracle.
pub(crate) fn probe(
    worker: &mut Worker,
    setup: &Setup,
    timeout: Duration,
    tree: &Tree,
    lower: Lower<'_>,
    confidence: f64,
) -> Result<Answer, ReduceError> {
    let plan = setup.sampling;
    let mut passes = 0;
    let mut duration = Duration::ZERO;
    for t in 1..=plan.runs {
        // Each sample starts from exactly the candidate tree: whatever the last one did is
        // undone first.
        let start = Instant::now();
        // A probe sampled once may be answered by a cluster's action cache: the same tree
        // and command gave that answer before. Repeated samples must be independent runs.
        let cache = if plan.runs == 1 {
            crate::remote::CachePolicy::Use
        } else {
            crate::remote::CachePolicy::Skip
        };
        let outcome =
            match worker.run_remote(tree, &setup.command, timeout, cache, &setup.interrupt) {
                Some(outcome) => {
                    let outcome = outcome?;
                    worker.time.command += start.elapsed();
                    outcome
                }
                None => {
                    let mount = worker.place(tree, Some(lower))?;
                    let placed = Instant::now();
                    let outcome =
                        worker.exec(&setup.command, timeout, &setup.interrupt, mount.as_ref())?;
                    worker.time.prepare += placed - start;
                    worker.time.command += outcome.duration;
                    worker.time.clean_up += placed.elapsed().saturating_sub(outcome.duration);
                    outcome
                }
            };
        duration += outcome.duration;
        let answer = |pass: bool, early: bool| Answer {
            pass,
            termination: outcome.termination,
            duration,
            samples: t,
            saved: plan.runs - t,
            early_accept: pass && early,
            early_reject: !pass && early,
        };
        match outcome.termination {
            Termination::Interrupted => return Ok(answer(false, false)),
            // Timeouts and resource failures reject the whole sample set.
            Termination::TimedOut
            | Termination::OutputOverflow
            | Termination::MemoryLimit
            | Termination::OverMemory
            | Termination::WorkspaceLimit => {
                return Ok(answer(false, t < plan.runs));
            }
            _ => {}
        }
        if setup.oracle.judge(&outcome, &worker.normalizer).pass {
            passes += 1;
        }
        if plan.runs == 1 {
            return Ok(answer(passes == 1, false));
        }
        let early = t < plan.runs;
        match plan.rate {
            Some(rate) => {
                if crate::stats::early_reject(
                    passes,
                    t,
                    plan.runs,
                    plan.min_passes,
                    Some(rate),
                    confidence,
                )
                .unwrap_or(true)
                {
                    return Ok(answer(false, early));
                }
                if crate::stats::early_accept(
                    passes,
                    t,
                    plan.runs,
                    plan.min_passes,
                    rate,
                    confidence,
                )
                .unwrap_or(false)
                {
                    return Ok(answer(true, early));
                }
            }
            None => {
                if passes >= plan.min_passes {
                    return Ok(answer(true, early));
                }
                if passes + (plan.runs - t) < plan.min_passes {
                    return Ok(answer(false, early));
                }
            }
        }
    }
    Ok(Answer {
        pass: false,
        termination: Termination::Exited(0),
        duration,
        samples: plan.runs,
        saved: 0,
        early_accept: false,
        early_reject: false,
    })
}

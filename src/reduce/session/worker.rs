//! Where candidates run: the session's fixed [`Setup`], its [`Worker`]s (a workspace, its
//! run layout and its normaliser each), and [`probe`], which samples one candidate tree on
//! one worker and asks the oracle.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::oracle::Oracle;
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
}

/// One place where candidates run: a workspace, its run layout and its normaliser, and
/// the confinement of its runs when they are confined.
pub struct Worker {
    dirs: RunDirs,
    workspace: Workspace,
    normalizer: Normalizer,
    confinement: Option<Arc<dyn Confinement>>,
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
            dirs,
            normalizer,
            confinement: None,
        }
    }

    /// A worker on an adopted directory (see [`Workspace::adopt`]).
    pub fn adopted(dirs: RunDirs, workspace: Workspace) -> Worker {
        let normalizer = Normalizer::new(&[
            dirs.tree.display().to_string(),
            dirs.wrapper.display().to_string(),
            dirs.tmp.display().to_string(),
        ]);
        Worker {
            dirs,
            workspace,
            normalizer,
            confinement: None,
        }
    }

    /// The same worker, with every run confined by `confinement` (the gate's sandbox).
    #[must_use]
    pub(crate) fn confined(self, confinement: Arc<dyn Confinement>) -> Worker {
        Worker {
            confinement: Some(confinement),
            ..self
        }
    }

    /// Where this worker runs: its tree, its `TMPDIR` and its wrapper directory.
    pub(crate) fn dirs(&self) -> &RunDirs {
        &self.dirs
    }

    /// Empties the temporary directory and runs `command` in the tree, confined when the
    /// worker is.
    fn exec(
        &self,
        command: &CommandSpec,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<runner::RunOutcome, ReduceError> {
        self.dirs.fresh_tmp()?;
        Ok(runner::run_confined(
            command,
            &self.dirs.tree,
            &self.dirs.tmp,
            timeout,
            interrupt,
            self.confinement.as_deref(),
        )?)
    }

    /// Runs `command` on `tree` here and returns the outcome and this worker's normaliser.
    ///
    /// # Errors
    /// Workspace I/O or a command that cannot start.
    pub fn run(
        &mut self,
        tree: &Tree,
        command: &CommandSpec,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<(runner::RunOutcome, Normalizer), ReduceError> {
        self.workspace.apply(tree)?;
        let outcome = self.exec(command, timeout, interrupt)?;
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
    confidence: f64,
) -> Result<Answer, ReduceError> {
    let plan = setup.sampling;
    let mut passes = 0;
    let mut duration = Duration::ZERO;
    for t in 1..=plan.runs {
        // Each sample starts from exactly the candidate tree: whatever the last one did is
        // undone first.
        worker.workspace.apply(tree)?;
        let outcome = worker.exec(&setup.command, timeout, &setup.interrupt)?;
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

//! The session's side of a durable session (`--session`): replaying and recording the
//! journal at each place a command runs, and the checkpoints (see
//! [`crate::reduce::durable`]).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::Session;
use super::worker::Answer;
use crate::oracle::Verdict;
use crate::reduce::durable::{Durable, Record, SavedAnswer, SessionError};
use crate::reduce::error::ReduceError;
use crate::runner::Termination;
use crate::tree::Fingerprint;

use crate::reduce::options::millis;

impl Session {
    /// Makes the session durable (or not).
    pub fn set_durable(&mut self, durable: Option<Durable>) {
        self.durable = durable;
    }

    /// Whether the session is durable.
    pub fn is_durable(&self) -> bool {
        self.durable.is_some()
    }

    /// The recorded answers of the next window, when the journal holds them; they must be
    /// for these candidate trees.
    pub(super) fn replay_window(
        &mut self,
        fingerprints: &[Fingerprint],
    ) -> Result<Option<Vec<Answer>>, ReduceError> {
        let Some(durable) = self.durable.as_mut() else {
            return Ok(None);
        };
        let at = durable.journal.position();
        let Some(Record::Window { answers }) =
            durable.journal.next("a window of candidates", |r| {
                matches!(r, Record::Window { .. })
            })?
        else {
            return Ok(None);
        };
        let found: Vec<&str> = answers.iter().map(|a| a.fingerprint.as_str()).collect();
        let expected: Vec<String> = fingerprints.iter().map(ToString::to_string).collect();
        if found != expected {
            return Err(SessionError::Diverged {
                record: at,
                expected: format!("candidates {}", expected.join(", ")),
                found: format!("candidates {}", found.join(", ")),
            }
            .into());
        }
        Ok(Some(
            answers
                .into_iter()
                .map(|a| Answer {
                    pass: a.pass,
                    termination: a.termination,
                    duration: Duration::from_millis(a.duration_ms),
                    samples: a.samples,
                    saved: a.saved,
                    early_accept: a.early_accept,
                    early_reject: a.early_reject,
                })
                .collect(),
        ))
    }

    /// Records a window's answers, unless the window was cut short (nothing of it is used).
    pub(super) fn record_window(
        &mut self,
        fingerprints: &[Fingerprint],
        answers: &[Answer],
    ) -> Result<(), ReduceError> {
        let Some(durable) = self.durable.as_mut() else {
            return Ok(());
        };
        if answers
            .iter()
            .any(|a| a.termination == Termination::Interrupted)
        {
            return Ok(());
        }
        let answers = fingerprints
            .iter()
            .zip(answers)
            .map(|(fp, a)| SavedAnswer {
                fingerprint: fp.to_string(),
                pass: a.pass,
                termination: a.termination,
                duration_ms: millis(a.duration),
                samples: a.samples,
                saved: a.saved,
                early_accept: a.early_accept,
                early_reject: a.early_reject,
            })
            .collect();
        durable.journal.append(&Record::Window { answers })?;
        Ok(())
    }

    /// After allocating the families of a window of `count` candidates to run (run-wide
    /// confidence): replays or records the allocation. True when the journal shows that
    /// this allocation was exposed to commands whose results were never written: those
    /// families are spent, and the window must allocate new ones.
    pub(super) fn families_spent(&mut self, count: usize) -> Result<bool, ReduceError> {
        if count == 0 || self.setup.sampling.run_confidence.is_none() {
            return Ok(false);
        }
        let families = self.families.allocated;
        let Some(durable) = self.durable.as_mut() else {
            return Ok(false);
        };
        match durable.journal.next("a family allocation", |r| {
            matches!(r, Record::Allocate { .. })
        })? {
            Some(_) => Ok(durable.journal.replayed_all()),
            None => {
                durable.journal.append(&Record::Allocate { families })?;
                crate::failpoint::pause("session:allocated");
                Ok(false)
            }
        }
    }

    /// Records an allocation made after spent families.
    pub(super) fn record_allocation(&mut self) -> Result<(), ReduceError> {
        let families = self.families.allocated;
        if let Some(durable) = self.durable.as_mut() {
            durable.journal.append(&Record::Allocate { families })?;
        }
        Ok(())
    }

    /// Writes `state.json` with `status` and the accepted state.
    ///
    /// # Errors
    /// I/O.
    pub fn checkpoint_now(&mut self, status: &str) -> Result<(), ReduceError> {
        if self.durable.is_none() {
            return Ok(());
        }
        let fp = *self
            .current_fp
            .get_or_insert_with(|| self.current.fingerprint());
        let (commits, attempts) = (self.accounting.commits(), self.accounting.attempts);
        if let Some(durable) = self.durable.as_mut() {
            durable.checkpoint(status, &fp, commits, attempts)?;
        }
        Ok(())
    }

    /// Records a completed pass; when it changed the tree, promotes the accepted tree.
    ///
    /// # Errors
    /// I/O.
    pub fn pass_completed(&mut self, name: &str, changed: bool) -> Result<(), ReduceError> {
        if self.durable.is_none() {
            return Ok(());
        }
        if changed {
            self.promote_current()?;
        }
        if let Some(durable) = self.durable.as_mut() {
            durable.state.completed_passes.push(name.to_string());
        }
        self.checkpoint_now("reducing")
    }

    /// Promotes the accepted tree to the session's `workspace/current`.
    ///
    /// # Errors
    /// I/O.
    pub fn promote_current(&mut self) -> Result<(), ReduceError> {
        if let Some(durable) = self.durable.as_ref() {
            durable.promote(&self.current)?;
        }
        Ok(())
    }

    /// The final validation of the accepted tree: its termination, wall time and verdict,
    /// replayed or run (and recorded).
    ///
    /// # Errors
    /// Workspace I/O, a command that cannot start, or the journal.
    pub fn final_check(&mut self) -> Result<(Termination, u64, Verdict), ReduceError> {
        if let Some(durable) = self.durable.as_mut()
            && let Some(Record::Final {
                termination,
                duration_ms,
                pass,
                reason,
            }) = durable.journal.next("the final validation", |r| {
                matches!(r, Record::Final { .. })
            })?
        {
            return Ok((termination, duration_ms, Verdict { pass, reason }));
        }
        let never = AtomicBool::new(false);
        let (outcome, normalizer) = self.run_current(&never)?;
        let verdict = self.setup.oracle.judge(&outcome, &normalizer);
        let duration_ms = millis(outcome.duration);
        if let Some(durable) = self.durable.as_mut() {
            durable.journal.append(&Record::Final {
                termination: outcome.termination,
                duration_ms,
                pass: verdict.pass,
                reason: verdict.reason.clone(),
            })?;
        }
        Ok((outcome.termination, duration_ms, verdict))
    }

    /// The holdout of a durable session, one slot at a time: each slot is recorded in
    /// flight before its command starts and with its result after; a slot found in flight
    /// (the process died inside it) is a non-pass, and the next slot follows. Returns the
    /// passes, or `None` when `interrupt` stopped it: before a slot starts (the next run
    /// resumes there), or inside one, whose command is ended and which stays in flight.
    ///
    /// # Errors
    /// Workspace I/O, a command that cannot start, or the journal.
    pub fn sample_slots(
        &mut self,
        runs: u64,
        interrupt: &AtomicBool,
    ) -> Result<Option<u64>, ReduceError> {
        let mut passes = 0;
        for slot in 0..runs {
            let started = match self.durable.as_mut() {
                Some(d) => d.journal.next(
                    "a holdout slot's start",
                    |r| matches!(r, Record::HoldoutStart { slot: s } if *s == slot),
                )?,
                None => None,
            };
            let pass = if started.is_some() {
                let durable = self
                    .durable
                    .as_mut()
                    .ok_or(ReduceError::Internal("a replayed slot without a session"))?;
                let end = durable.journal.next(
                    "a holdout slot's result",
                    |r| matches!(r, Record::HoldoutEnd { slot: s, .. } if *s == slot),
                )?;
                match end {
                    Some(Record::HoldoutEnd { pass, .. }) => pass,
                    _ => {
                        durable.journal.append(&Record::HoldoutEnd {
                            slot,
                            pass: false,
                            interrupted: true,
                        })?;
                        false
                    }
                }
            } else {
                if interrupt.load(std::sync::atomic::Ordering::SeqCst) {
                    return Ok(None);
                }
                if let Some(d) = self.durable.as_mut() {
                    d.journal.append(&Record::HoldoutStart { slot })?;
                }
                crate::failpoint::pause("session:holdout-slot");
                let (outcome, normalizer) = self.run_current(interrupt)?;
                if outcome.termination == crate::runner::Termination::Interrupted {
                    return Ok(None);
                }
                let pass = self.setup.oracle.judge(&outcome, &normalizer).pass;
                if let Some(d) = self.durable.as_mut() {
                    d.journal.append(&Record::HoldoutEnd {
                        slot,
                        pass,
                        interrupted: false,
                    })?;
                }
                pass
            };
            passes += u64::from(pass);
        }
        Ok(Some(passes))
    }
}

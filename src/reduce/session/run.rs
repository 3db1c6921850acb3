//! The runs of a window: the commands of its trees in parallel, one worker each, answers
//! by index; in a durable session, replayed from the journal or recorded in it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Session;
use super::worker::{Answer, Lower, probe};
use crate::reduce::error::ReduceError;
use crate::tree::{Fingerprint, Tree, TreeKey};

impl Session {
    /// Runs the commands for `trees` (with their keys) in parallel and returns their
    /// answers, by index; in a durable session, answers the journal holds are replayed, and
    /// new ones are recorded before they are used (the journal names each tree by its
    /// `tree-sha256-v2` fingerprint, computed for it only then).
    pub(super) fn run_all(
        &mut self,
        trees: &[(&Tree, TreeKey, f64)],
    ) -> Result<Vec<Answer>, ReduceError> {
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
            self.learn_timeout(&answers);
            return Ok(answers);
        }
        let trees: Vec<(&Tree, f64)> = trees.iter().map(|(t, _, c)| (*t, *c)).collect();
        let trees = trees.as_slice();
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<Answer, ReduceError>>>> =
            trees.iter().map(|_| Mutex::new(None)).collect();
        let setup = &self.setup;
        let timeout = self.timeout.current();
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
            self.learn_timeout(&answers);
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
        self.learn_timeout(&answers);
        Ok(answers)
    }
}

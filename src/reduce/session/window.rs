//! Windows of candidates: each applied to the accepted state and keyed, answered from the
//! cache or run in parallel (with the candidates a window leaves a worker idle for run
//! ahead into the cache), resolved by candidate index through unions and bisection, and
//! the passing one committed.

use std::sync::atomic::Ordering;

use super::recall;
use super::worker::Answer;
use super::{Candidate, Session};
use crate::reduce::edits::{EditSet, Mutation};
use crate::reduce::error::ReduceError;
use crate::reduce::options::StopReason;
use crate::runner::Termination;
use crate::tree::{Tree, TreeKey};

/// What became of a union of passing candidates.
enum UnionOutcome {
    /// It passed and was committed.
    Committed,
    /// It failed (or no longer applied).
    Failed,
    /// The run was interrupted.
    Interrupted,
}

/// A candidate applied to the accepted state: its edit set, tree and key (`None`: a no-op).
type Prepared = Option<(EditSet, Tree, TreeKey)>;

impl Session {
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
        self.settle.skips += n;
        if let Some(file) = self.trace.as_mut() {
            use std::io::Write;
            for (candidate, _) in candidates.iter().zip(&recalled).filter(|(_, r)| **r) {
                let what = traced_cut(&self.current, &self.recall, candidate);
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

    /// [`Session::try_window`] for the candidates that are not recalled: prepares the
    /// window, allocates its families, runs what no answer covers (and what runs ahead in
    /// idle workers), and commits what passed.
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
        self.accounting.attempts += count as u64;
        self.phase(phase).attempts += count as u64;

        let (mut prepared, mut answers) = self.prepare_window(phase, &candidates);
        let to_run: Vec<usize> = (0..count).filter(|&i| answers[i].is_none()).collect();
        let families = self.allocate_window(count, &to_run)?;
        let in_window: Vec<TreeKey> = prepared.iter().flatten().map(|p| p.2).collect();
        let early = self.early(&to_run, &in_window, ahead);
        let (ran, ran_early) = self.run_prepared(&prepared, &families, &to_run, &early)?;
        self.keep_early(phase, &early, &ran_early);
        let interrupted = self.take_answers(phase, &prepared, &to_run, &ran, &mut answers);
        if interrupted || self.setup.interrupt.load(Ordering::SeqCst) {
            self.abort_window(phase, &prepared, &answers);
            return Ok(None);
        }
        let ahead = (early.as_slice(), ran_early.as_slice());
        self.trace_window(phase, &candidates, &prepared, &answers, &to_run, ahead);
        let passing: Vec<usize> = (0..count)
            .filter(|&i| prepared[i].is_some() && answers[i] == Some(true))
            .collect();
        self.reject_window(phase, &candidates, &prepared, &answers);
        self.commit_passing(phase, &candidates, &mut prepared, &families, &passing)
    }

    /// Applies each candidate to the accepted state and keys it: a no-op is answered
    /// `false`, a cached tree by the cache; the rest are left to run.
    fn prepare_window(
        &mut self,
        phase: &str,
        candidates: &[Candidate],
    ) -> (Vec<Prepared>, Vec<Option<bool>>) {
        let count = candidates.len();
        let mut prepared: Vec<Prepared> = Vec::with_capacity(count);
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
        (prepared, answers)
    }

    /// The family of each of the `count` candidates: a new one for each of `to_run`, the
    /// plain confidence for the rest; new ones again when the journal shows the first
    /// were spent.
    fn allocate_window(
        &mut self,
        count: usize,
        to_run: &[usize],
    ) -> Result<Vec<(Option<u64>, f64)>, ReduceError> {
        let mut families = vec![(None, self.setup.sampling.confidence); count];
        for &i in to_run {
            families[i] = self.allocate()?;
        }
        if self.families_spent(to_run.len())? {
            // The window's families were exposed before a crash: it runs under new ones.
            for &i in to_run {
                families[i] = self.allocate()?;
            }
            self.record_allocation()?;
        }
        Ok(families)
    }

    /// Runs the candidates `to_run` of `prepared`, then those of `early`; returns their
    /// answers apart.
    fn run_prepared(
        &mut self,
        prepared: &[Prepared],
        families: &[(Option<u64>, f64)],
        to_run: &[usize],
        early: &[(Candidate, Tree, TreeKey)],
    ) -> Result<(Vec<Answer>, Vec<Answer>), ReduceError> {
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
        Ok((ran, ran_early))
    }

    /// Counts the answers `ran` of the candidates `to_run`, takes them into `answers` and
    /// the cache; true when a run was interrupted.
    fn take_answers(
        &mut self,
        phase: &str,
        prepared: &[Prepared],
        to_run: &[usize],
        ran: &[Answer],
        answers: &mut [Option<bool>],
    ) -> bool {
        let mut interrupted = false;
        for (&i, answer) in to_run.iter().zip(ran) {
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
        interrupted
    }

    /// Ends a cut-short window: nothing from it is committed, every candidate is counted,
    /// and the session stops.
    fn abort_window(&mut self, phase: &str, prepared: &[Prepared], answers: &[Option<bool>]) {
        let count = answers.len();
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
    }

    /// Logs the window to `REPROMIN_TRACE`, when set: each candidate with how it was
    /// answered, then each run ahead (`ahead`: the candidates and their answers).
    fn trace_window(
        &mut self,
        phase: &str,
        candidates: &[Candidate],
        prepared: &[Prepared],
        answers: &[Option<bool>],
        to_run: &[usize],
        ahead: (&[(Candidate, Tree, TreeKey)], &[Answer]),
    ) {
        let Some(file) = self.trace.as_mut() else {
            return;
        };
        use std::io::Write;
        let count = candidates.len();
        let _ = writeln!(file, "{phase}\twindow\t{count} {}", to_run.len());
        for (i, candidate) in candidates.iter().enumerate() {
            let how = match (&prepared[i], answers[i], to_run.contains(&i)) {
                (None, _, _) => "no-op",
                (_, Some(true), true) => "pass",
                (_, Some(false), true) => "fail",
                (_, Some(true), false) => "cached-pass",
                _ => "cached-fail",
            };
            let what = traced_cut(&self.current, &self.recall, candidate);
            let _ = writeln!(file, "{phase}\t{how}\t{}\t{what}", candidate.label);
        }
        let (early, ran_early) = ahead;
        for ((candidate, _, _), answer) in early.iter().zip(ran_early) {
            let how = if answer.pass {
                "ahead-pass"
            } else {
                "ahead-fail"
            };
            let what = traced_cut(&self.current, &self.recall, candidate);
            let _ = writeln!(file, "{phase}\t{how}\t{}\t{what}", candidate.label);
        }
    }

    /// Counts the window's rejected candidates and remembers their cuts as failed.
    fn reject_window(
        &mut self,
        phase: &str,
        candidates: &[Candidate],
        prepared: &[Prepared],
        answers: &[Option<bool>],
    ) {
        let rejected: Vec<usize> = (0..candidates.len())
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
    }

    /// Commits what passed: the union of every passing candidate, or of the first half of
    /// them, and so on down to two; when no union passes, the lowest passing index.
    /// Returns, per candidate, whether it was committed, or `None` when interrupted.
    fn commit_passing(
        &mut self,
        phase: &str,
        candidates: &[Candidate],
        prepared: &mut [Prepared],
        families: &[(Option<u64>, f64)],
        passing: &[usize],
    ) -> Result<Option<Vec<bool>>, ReduceError> {
        let mut committed = vec![false; candidates.len()];
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
        self.accounting.attempts += 1;
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
}

/// A candidate's cut for the trace: how often it failed before, a tab, and the start of
/// what it takes (`0` and nothing for a candidate that is no cut of `tree`: a stale one).
fn traced_cut(tree: &Tree, recall: &recall::Recall, candidate: &Candidate) -> String {
    recall::cut_of(tree, &candidate.mutation).map_or_else(
        || "0\t".to_string(),
        |cut| format!("{}\t{}", recall.times_failed(&cut), cut.excerpt(120)),
    )
}

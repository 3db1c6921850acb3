//! What a session counts: candidates tried, per-phase counters and the commits made.

use std::time::Instant;

use super::records::{Event, PassSpan, PhaseStats};
use super::worker::Answer;

/// The session's counters.
#[derive(Default)]
pub(super) struct Accounting {
    /// Per-phase counters, in the order the phases first ran.
    pub(super) phases: Vec<PhaseStats>,
    /// Committed changes.
    pub(super) events: Vec<Event>,
    /// Candidates tried.
    pub(super) attempts: u64,
    /// When the first pass began.
    pub(super) started: Option<Instant>,
    /// The runs of the passes, in order; the last one is open until its pass ends.
    pub(super) spans: Vec<PassSpan>,
}

impl Accounting {
    /// The counters of phase `name`, new ones when it has none yet.
    pub(super) fn phase(&mut self, name: &str) -> &mut PhaseStats {
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

    /// Counts what the commands of `answer` did in phase `phase`.
    pub(super) fn record(&mut self, phase: &str, answer: &Answer) {
        let stats = self.phase(phase);
        stats.oracle_samples += answer.samples;
        stats.oracle_sample_uses += answer.samples;
        stats.oracle_ms += crate::reduce::options::millis(answer.duration);
        stats.samples_saved += answer.saved;
        stats.early_acceptances += u64::from(answer.early_accept);
        stats.early_rejections += u64::from(answer.early_reject);
    }

    /// Commands run so far.
    pub(super) fn commands(&self) -> u64 {
        self.phases.iter().map(|p| p.oracle_samples).sum()
    }

    /// Milliseconds since the first pass began (0 before).
    pub(super) fn elapsed_ms(&self) -> u64 {
        self.started
            .map_or(0, |s| crate::reduce::options::millis(s.elapsed()))
    }

    /// Opens the span of a run of `pass`.
    pub(super) fn open_span(&mut self, pass: &str) {
        self.started.get_or_insert_with(Instant::now);
        let (start_ms, start_commands) = (self.elapsed_ms(), self.commands());
        self.spans.push(PassSpan {
            pass: pass.to_string(),
            start_ms,
            end_ms: start_ms,
            start_commands,
            end_commands: start_commands,
        });
    }

    /// Closes the last span of `pass`.
    pub(super) fn close_span(&mut self, pass: &str) {
        let (end_ms, end_commands) = (self.elapsed_ms(), self.commands());
        if let Some(span) = self.spans.iter_mut().rev().find(|s| s.pass == pass) {
            span.end_ms = end_ms;
            span.end_commands = end_commands;
        }
    }

    /// Commits made so far.
    pub(super) fn commits(&self) -> u64 {
        self.events.len() as u64
    }

    /// Cuts answered from the memory of failed cuts so far.
    pub(super) fn recalled_cuts(&self) -> u64 {
        self.phases.iter().map(|p| p.recalled).sum()
    }
}

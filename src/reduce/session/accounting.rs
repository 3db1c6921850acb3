//! What a session counts: candidates tried, per-phase counters and the commits made.

use super::records::{Event, PhaseStats};
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

    /// Commits made so far.
    pub(super) fn commits(&self) -> u64 {
        self.events.len() as u64
    }

    /// Cuts answered from the memory of failed cuts so far.
    pub(super) fn recalled_cuts(&self) -> u64 {
        self.phases.iter().map(|p| p.recalled).sum()
    }
}

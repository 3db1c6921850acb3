//! The per-candidate timeout in force: given, or derived from the baseline and then, when
//! adaptive, following the accepted candidates.

use std::collections::VecDeque;
use std::time::Duration;

use super::worker::Answer;
use crate::reduce::options::{TIMEOUT_FACTOR, TIMEOUT_FLOOR};

/// Accepted runs the adaptive timeout looks back on.
pub(super) const ADAPT_WINDOW: usize = 16;
/// Accepted runs seen before the timeout adapts at all.
pub(super) const ADAPT_AFTER: usize = 4;

/// The timeout in force and the accepted runs it learns from.
pub(super) struct TimeoutPolicy {
    /// The per-candidate timeout in force.
    current: Duration,
    /// How long the last accepted candidates ran, one run each, newest last.
    recent_passes: VecDeque<Duration>,
}

impl TimeoutPolicy {
    /// A policy starting at `timeout`, with nothing learnt.
    pub(super) fn new(timeout: Duration) -> TimeoutPolicy {
        TimeoutPolicy {
            current: timeout,
            recent_passes: VecDeque::new(),
        }
    }

    /// The timeout in force.
    pub(super) fn current(&self) -> Duration {
        self.current
    }

    /// Learns from a window's answers when `adaptive`: [`TIMEOUT_FACTOR`] times the slowest
    /// of the last accepted runs, never below [`TIMEOUT_FLOOR`] and never above `ceiling`.
    pub(super) fn learn(&mut self, adaptive: bool, ceiling: Duration, answers: &[Answer]) {
        if !adaptive {
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
        self.current = (slowest * TIMEOUT_FACTOR).max(TIMEOUT_FLOOR).min(ceiling);
    }
}

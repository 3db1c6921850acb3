//! Run-wide confidence: each changed candidate gets a family index and the confidence
//! that index is allotted, in candidate order before anything runs.

use crate::reduce::error::ReduceError;
use crate::reduce::options::Sampling;

/// The candidate families allocated so far.
#[derive(Default)]
pub(super) struct Families {
    /// Families allocated so far.
    pub(super) allocated: u64,
}

impl Families {
    /// The confidence for the next changed candidate: a new family index under run-wide
    /// confidence, allocated in candidate order before anything runs.
    pub(super) fn allocate(
        &mut self,
        sampling: Sampling,
    ) -> Result<(Option<u64>, f64), ReduceError> {
        let Some(run_confidence) = sampling.run_confidence else {
            return Ok((None, sampling.confidence));
        };
        self.allocated += 1;
        let j = self.allocated;
        let confidence = crate::stats::family_confidence(j, sampling.confidence, run_confidence)
            .map_err(|source| ReduceError::ConfidenceSpent { family: j, source })?;
        if let Some(rate) = sampling.rate {
            let feasible = crate::stats::required_passes(sampling.runs, rate, confidence)
                .ok()
                .flatten()
                .is_some();
            if !feasible {
                // Not a fixed point: the remaining alpha is too small for the planned samples.
                return Err(ReduceError::ConfidenceTooLow {
                    family: j,
                    runs: sampling.runs,
                    confidence,
                });
            }
        }
        Ok((Some(j), confidence))
    }
}

//! In-process byte-sequence reduction by deletion sweeps. This module owns the
//! deletion search state machine ([`DeletionSearch`], also usable for lists of
//! lines or any other sequence of units), the fixed two-lane workspace that
//! byte reduction runs in ([`Storage`]), and the [`reduce`] entry point, which
//! deletes runs of bytes while a caller's oracle keeps saying the bytes are
//! interesting, until the result is 1-minimal or the attempt budget runs out.
//! Once a [`Storage`] is active, reduction performs no heap allocation.

use std::fmt;
use std::ops::Range;

/// How a [`DeletionSearch`] proceeds after a candidate deletion is accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Restart at position 0 with the chunk reset to the whole new length.
    Greedy,
    /// Keep the chunk (clamped to the new length) and continue the sweep at the
    /// same position; a chunk-1 sweep that accepted anything is repeated.
    Continue,
}

/// Search state for deleting runs of units from a sequence until it is 1-minimal.
///
/// The search proposes half-open ranges over the *current* sequence via
/// [`DeletionSearch::next`] and is told the verdict via
/// [`DeletionSearch::accept`] or [`DeletionSearch::reject`]. When `next`
/// returns `None`, every single-unit deletion of the current sequence has been
/// tried against that exact sequence and rejected.
///
/// The chunk starts at the whole length, so the first candidate is the empty
/// sequence. A sweep tries `pos..min(pos + chunk, len)` at positions 0, chunk,
/// 2 * chunk, and so on; when a sweep ends the chunk is halved (rounding up),
/// and a chunk-1 sweep without any acceptance ends the search.
///
/// The state is `Copy`, so a caller can speculate: `let mut s = search;
/// s.reject(); s.next()` is the candidate that follows if the pending one is
/// rejected, and the original `search` is left untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeletionSearch {
    len: usize,
    /// Current chunk size; 0 means the search is done.
    chunk: usize,
    pos: usize,
    accepted_in_sweep: bool,
    policy: RestartPolicy,
}

impl DeletionSearch {
    /// Starts a search over `len` units. The first candidate deletes everything;
    /// an empty sequence is already done.
    pub fn new(len: usize, policy: RestartPolicy) -> Self {
        Self {
            len,
            chunk: len,
            pos: 0,
            accepted_in_sweep: false,
            policy,
        }
    }

    /// Resumes a search over a sequence that changed outside it: `len` units now, a sweep of
    /// deletions of `chunk` units (clamped to `1..=len`) continuing at unit `pos`. With
    /// `accepted`, the current sweep counts as one that accepted something, so a chunk-1
    /// sweep is repeated before the search ends. Past the end, the sweep ends as usual.
    pub fn resume(
        len: usize,
        chunk: usize,
        pos: usize,
        accepted: bool,
        policy: RestartPolicy,
    ) -> Self {
        let mut search = Self {
            len,
            chunk: chunk.clamp(1, len.max(1)),
            pos,
            accepted_in_sweep: accepted,
            policy,
        };
        search.settle();
        search
    }

    /// The next deletion to try over the current sequence, or `None` once the
    /// sequence is 1-minimal. The range is never empty.
    pub fn next(&self) -> Option<Range<usize>> {
        if self.chunk == 0 {
            return None;
        }
        Some(self.pos..self.pos.saturating_add(self.chunk).min(self.len))
    }

    /// Records that the pending candidate was uninteresting. Does nothing once
    /// the search is done.
    pub fn reject(&mut self) {
        if self.chunk == 0 {
            return;
        }
        self.pos = self.pos.saturating_add(self.chunk);
        self.settle();
    }

    /// Records that the pending candidate was interesting: the current length
    /// shrinks by the length of that range. Does nothing once the search is done.
    pub fn accept(&mut self) {
        let Some(range) = self.next() else {
            return;
        };
        self.len -= range.len();
        match self.policy {
            RestartPolicy::Greedy => {
                self.chunk = self.len;
                self.pos = 0;
                self.accepted_in_sweep = false;
            }
            RestartPolicy::Continue => {
                self.chunk = self.chunk.min(self.len);
                self.accepted_in_sweep = true;
            }
        }
        self.settle();
    }

    /// Restores the invariant that a live search has `chunk >= 1` and
    /// `pos < len`, ending sweeps (and possibly the search) as needed.
    fn settle(&mut self) {
        if self.len == 0 {
            self.chunk = 0;
            self.pos = 0;
            return;
        }
        if self.pos < self.len {
            return;
        }
        self.pos = 0;
        if self.chunk > 1 {
            self.chunk = self.chunk.div_ceil(2);
            self.accepted_in_sweep = false;
        } else if self.accepted_in_sweep {
            self.accepted_in_sweep = false;
        } else {
            self.chunk = 0;
        }
    }

    /// Length of the current sequence, in units.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the current sequence is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Current chunk size (length of the deletions being tried); 0 once done.
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// The restart policy this search was created with.
    pub fn policy(&self) -> RestartPolicy {
        self.policy
    }

    /// Whether the search is complete (the current sequence is 1-minimal).
    pub fn is_done(&self) -> bool {
        self.chunk == 0
    }
}

/// An oracle's verdict on a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interesting {
    /// The candidate still shows the behaviour of interest.
    Interesting,
    /// The candidate lost the behaviour of interest.
    Uninteresting,
}

impl From<bool> for Interesting {
    /// `true` is [`Interesting::Interesting`], `false` is [`Interesting::Uninteresting`].
    fn from(interesting: bool) -> Self {
        if interesting {
            Self::Interesting
        } else {
            Self::Uninteresting
        }
    }
}

/// Why a successful reduction stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// The search finished: every single-byte deletion of the result is uninteresting.
    OneMinimal,
    /// The attempt budget ran out before the search finished.
    BudgetExhausted,
}

/// Size limits a [`Storage`] is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input, in bytes, that the storage can reduce.
    pub max_input_bytes: usize,
}

/// Workspace sizing derived from [`Limits`]: one lane of `N` bytes for the
/// current sequence plus one scratch lane of `N - 1` bytes for a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    max_input_bytes: usize,
    workspace_bytes: usize,
}

impl Capacity {
    /// Computes the workspace size `N + max(N - 1, 0)` without allocating.
    pub fn derive(limits: Limits) -> Result<Self, BytesError> {
        let n = limits.max_input_bytes;
        let workspace_bytes = n
            .checked_add(n.saturating_sub(1))
            .ok_or(BytesError::CapacityOverflow)?;
        Ok(Self {
            max_input_bytes: n,
            workspace_bytes,
        })
    }

    /// Largest input, in bytes, that fits.
    pub fn max_input_bytes(&self) -> usize {
        self.max_input_bytes
    }

    /// Total size of the backing buffer, in bytes.
    pub fn workspace_bytes(&self) -> usize {
        self.workspace_bytes
    }
}

/// Lifecycle phase of a [`Storage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Buffer allocated; not yet usable for reduction.
    Initialization,
    /// Usable for reduction; nothing is allocated any more.
    Steady,
    /// Retired; the buffer has been freed.
    Teardown,
}

/// Snapshot of a [`Storage`]'s state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Current lifecycle phase.
    pub phase: Phase,
    /// Whether a reduction holds the workspace lease.
    pub in_use: bool,
    /// Sizing of the workspace.
    pub capacity: Capacity,
}

/// Preallocated workspace for [`reduce`]; the buffer is allocated exactly once.
pub struct Storage {
    buffer: Vec<u8>,
    capacity: Capacity,
    phase: Phase,
    in_use: bool,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// Allocates the whole workspace up front, in the initialization phase.
    pub fn new(limits: Limits) -> Result<Self, BytesError> {
        let capacity = Capacity::derive(limits)?;
        let mut buffer = Vec::new();
        buffer
            .try_reserve_exact(capacity.workspace_bytes)
            .map_err(|_| BytesError::AllocationFailed)?;
        buffer.resize(capacity.workspace_bytes, 0);
        Ok(Self {
            buffer,
            capacity,
            phase: Phase::Initialization,
            in_use: false,
        })
    }

    /// Moves from initialization to the steady phase, where [`reduce`] may use it.
    pub fn activate(&mut self) -> Result<(), BytesError> {
        if self.phase != Phase::Initialization {
            return Err(BytesError::WrongPhase(self.phase));
        }
        self.phase = Phase::Steady;
        Ok(())
    }

    /// Retires the storage and frees its buffer. This also clears a lease left
    /// behind by a leaked (`mem::forget`) [`Outcome`], which is otherwise never
    /// released.
    pub fn teardown(&mut self) {
        self.phase = Phase::Teardown;
        self.in_use = false;
        self.buffer = Vec::new();
    }

    /// Current phase, lease flag and capacity.
    pub fn status(&self) -> Status {
        Status {
            phase: self.phase,
            in_use: self.in_use,
            capacity: self.capacity,
        }
    }
}

/// Errors about limits, storage or budget, independent of the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesError {
    /// The workspace size does not fit in `usize`.
    CapacityOverflow,
    /// The workspace buffer could not be allocated.
    AllocationFailed,
    /// The storage's phase (carried here) does not allow the operation:
    /// [`Storage::activate`] needs initialization, [`reduce`] needs steady.
    WrongPhase(Phase),
    /// Another reduction holds the workspace lease.
    StorageInUse,
    /// The input is longer than the storage can hold.
    InputCapacityExceeded {
        /// Length of the input.
        len: usize,
        /// Largest accepted length.
        max: usize,
    },
    /// The attempt budget allows no attempt at all.
    AttemptBudgetExhausted,
}

impl fmt::Display for BytesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CapacityOverflow => write!(f, "workspace size overflows usize"),
            Self::AllocationFailed => write!(f, "could not allocate the workspace"),
            Self::WrongPhase(phase) => write!(f, "storage phase {phase:?} forbids this"),
            Self::StorageInUse => write!(f, "storage is already in use"),
            Self::InputCapacityExceeded { len, max } => {
                write!(f, "input of {len} bytes exceeds capacity of {max} bytes")
            }
            Self::AttemptBudgetExhausted => write!(f, "attempt budget allows no attempts"),
        }
    }
}

impl std::error::Error for BytesError {}

/// Failure of a [`reduce`] run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReduceError<E> {
    /// A limit, storage or budget problem; the storage is left as it was.
    Bytes(BytesError),
    /// The oracle failed; the run stopped at once and the lease was released.
    Oracle(E),
    /// The caller's input was judged uninteresting on attempt 1.
    NotInteresting,
}

impl<E> From<BytesError> for ReduceError<E> {
    fn from(error: BytesError) -> Self {
        Self::Bytes(error)
    }
}

impl<E: fmt::Display> fmt::Display for ReduceError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes(error) => error.fmt(f),
            Self::Oracle(error) => write!(f, "oracle failed: {error}"),
            Self::NotInteresting => write!(f, "the initial input is not interesting"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for ReduceError<E> {}

/// Options for a [`reduce`] run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Most oracle calls allowed, counting attempt 1; `None` means unbounded.
    pub max_attempts: Option<u64>,
}

impl Settings {
    /// Returns these settings with the attempt budget set to `max_attempts`.
    pub fn with_max_attempts(self, max_attempts: u64) -> Self {
        Self {
            max_attempts: Some(max_attempts),
        }
    }
}

/// Holds the workspace lease and clears it when dropped (also on unwinding).
#[derive(Debug)]
struct Lease<'s> {
    in_use: &'s mut bool,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        *self.in_use = false;
    }
}

/// Result of a successful [`reduce`] run. The lease on the storage is released
/// when this value is dropped; `bytes` may be copied out and outlive it.
#[derive(Debug)]
pub struct Outcome<'s> {
    /// The reduced bytes, borrowed from the storage's current lane.
    pub bytes: &'s [u8],
    /// Oracle calls made, including attempt 1.
    pub attempts: u64,
    /// Candidates accepted.
    pub reductions: u64,
    /// Why the run stopped.
    pub completion: Completion,
    _lease: Lease<'s>,
}

/// Reduces `input` by greedy deletion sweeps while `oracle` says interesting.
///
/// Attempt 1 passes `input` itself to the oracle; later attempts pass a slice
/// of the scratch lane, which the next attempt overwrites. Accepting a
/// candidate swaps the current and scratch lanes. Nothing is allocated.
pub fn reduce<'s, F, E>(
    storage: &'s mut Storage,
    input: &[u8],
    settings: &Settings,
    mut oracle: F,
) -> Result<Outcome<'s>, ReduceError<E>>
where
    F: FnMut(&[u8]) -> Result<Interesting, E>,
{
    if settings.max_attempts == Some(0) {
        return Err(BytesError::AttemptBudgetExhausted.into());
    }
    if storage.phase != Phase::Steady {
        return Err(BytesError::WrongPhase(storage.phase).into());
    }
    if storage.in_use {
        return Err(BytesError::StorageInUse.into());
    }
    let max = storage.capacity.max_input_bytes;
    if input.len() > max {
        return Err(BytesError::InputCapacityExceeded {
            len: input.len(),
            max,
        }
        .into());
    }

    let Storage { buffer, in_use, .. } = storage;
    *in_use = true;
    let lease = Lease { in_use };
    // In the steady phase the buffer holds N + max(N - 1, 0) bytes.
    let (mut current, mut scratch) = buffer.split_at_mut(max);

    match oracle(input) {
        Ok(Interesting::Interesting) => {}
        Ok(Interesting::Uninteresting) => return Err(ReduceError::NotInteresting),
        Err(error) => return Err(ReduceError::Oracle(error)),
    }
    let mut attempts: u64 = 1;
    let mut reductions: u64 = 0;
    current[..input.len()].copy_from_slice(input);

    let mut search = DeletionSearch::new(input.len(), RestartPolicy::Greedy);
    let completion = loop {
        let Some(range) = search.next() else {
            break Completion::OneMinimal;
        };
        if settings.max_attempts.is_some_and(|cap| attempts >= cap) {
            break Completion::BudgetExhausted;
        }
        let len = search.len();
        let candidate_len = range.start + (len - range.end);
        scratch[..range.start].copy_from_slice(&current[..range.start]);
        scratch[range.start..candidate_len].copy_from_slice(&current[range.end..len]);
        attempts += 1;
        match oracle(&scratch[..candidate_len]) {
            Ok(Interesting::Interesting) => {
                std::mem::swap(&mut current, &mut scratch);
                search.accept();
                reductions += 1;
            }
            Ok(Interesting::Uninteresting) => search.reject(),
            Err(error) => return Err(ReduceError::Oracle(error)),
        }
    };

    Ok(Outcome {
        bytes: &current[..search.len()],
        attempts,
        reductions,
        completion,
        _lease: lease,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(max_input_bytes: usize) -> Storage {
        let mut storage = Storage::new(Limits { max_input_bytes }).unwrap();
        storage.activate().unwrap();
        storage
    }

    fn verdict(yes: bool) -> Result<Interesting, ()> {
        Ok(yes.into())
    }

    fn contains(hay: &[u8], needle: &[u8]) -> bool {
        needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
    }

    fn is_subsequence<T: PartialEq>(needle: &[T], hay: &[T]) -> bool {
        let mut rest = hay.iter();
        needle.iter().all(|x| rest.any(|y| y == x))
    }

    fn without<T: Clone>(items: &[T], range: Range<usize>) -> Vec<T> {
        [&items[..range.start], &items[range.end..]].concat()
    }

    fn one_minimal<T: Clone>(items: &[T], oracle: impl Fn(&[T]) -> bool) -> bool {
        (0..items.len()).all(|i| !oracle(&without(items, i..i + 1)))
    }

    /// Reduces `input` to the bytes containing `needle`; returns the summary.
    fn run(input: &[u8], needle: &[u8], max: Option<u64>) -> (Vec<u8>, u64, u64, Completion) {
        let mut storage = active(16);
        let settings = Settings { max_attempts: max };
        let o = reduce(&mut storage, input, &settings, |c| {
            verdict(contains(c, needle))
        })
        .unwrap();
        (o.bytes.to_vec(), o.attempts, o.reductions, o.completion)
    }

    fn refused(storage: &mut Storage, input: &[u8]) -> ReduceError<()> {
        reduce(storage, input, &Settings::default(), |_| verdict(true)).unwrap_err()
    }

    /// Small deterministic generator (splitmix64) for randomized checks.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }

        fn sample<T: Copy>(&mut self, items: &[T], one_in: usize) -> Vec<T> {
            items
                .iter()
                .copied()
                .filter(|_| self.below(one_in) == 0)
                .collect()
        }
    }

    #[test]
    fn empty_search_is_done() {
        for policy in [RestartPolicy::Greedy, RestartPolicy::Continue] {
            let mut search = DeletionSearch::new(0, policy);
            assert!(search.is_done() && search.is_empty() && search.next().is_none());
            search.reject();
            search.accept();
            assert_eq!(search, DeletionSearch::new(0, policy));
        }
    }

    #[test]
    fn continue_policy_trace() {
        let mut items = vec![0u32, 1, 2, 3];
        let mut search = DeletionSearch::new(items.len(), RestartPolicy::Continue);
        let mut trace = String::new();
        while let Some(range) = search.next() {
            let candidate = without(&items, range.clone());
            let keep = candidate.contains(&2);
            trace += &format!("{range:?}{} ", if keep { '+' } else { '-' });
            if keep {
                items = candidate;
                search.accept();
            } else {
                search.reject();
            }
        }
        assert_eq!(trace, "0..4- 0..2+ 0..2- 0..1- 1..2+ 0..1- ");
        assert_eq!(items, [2]);
    }

    #[test]
    fn lookahead_by_copy_assumes_rejection() {
        let search = DeletionSearch::new(9, RestartPolicy::Greedy);
        let mut ahead = search;
        ahead.reject();
        assert_eq!(ahead.next(), Some(0..5));
        ahead.reject();
        assert_eq!(ahead.next(), Some(5..9));
        assert_eq!(search.next(), Some(0..9));
    }

    #[test]
    fn abc_xyz_def_trace() {
        let mut storage = active(16);
        let mut trace = Vec::new();
        let outcome = reduce(&mut storage, b"abcXYZdef", &Settings::default(), |c| {
            trace.push(String::from_utf8_lossy(c).into_owned());
            verdict(contains(c, b"XYZ"))
        })
        .unwrap();
        let summary = (outcome.bytes, outcome.attempts, outcome.reductions);
        assert_eq!(summary, (&b"XYZ"[..], 14, 2));
        assert_eq!(outcome.completion, Completion::OneMinimal);
        drop(outcome);
        let expected = "abcXYZdef,,Zdef,abcXY,XYZdef,,def,XYZ,,Z,XY,YZ,XZ,XY";
        assert_eq!(trace, expected.split(',').collect::<Vec<_>>());
        assert!(!storage.status().in_use);
    }

    #[test]
    fn one_minimal_is_not_globally_shortest() {
        let mut storage = active(4);
        let outcome = reduce(&mut storage, b"ABCD", &Settings::default(), |c| {
            verdict(c.contains(&b'A') || contains(c, b"CD"))
        })
        .unwrap();
        assert_eq!(outcome.bytes, b"CD");
        assert_eq!(outcome.completion, Completion::OneMinimal);
    }

    #[test]
    fn attempt_budgets_are_exact() {
        let mut storage = active(4);
        let before = storage.status();
        let zero = Settings::default().with_max_attempts(0);
        let err = reduce(&mut storage, b"ab", &zero, |_| verdict(true)).unwrap_err();
        assert_eq!(err, ReduceError::Bytes(BytesError::AttemptBudgetExhausted));
        assert_eq!(storage.status(), before);

        let empty = (vec![], 1, 0, Completion::OneMinimal);
        assert_eq!(run(b"", b"", Some(1)), empty);
        let abc = (b"abc".to_vec(), 1, 0, Completion::BudgetExhausted);
        assert_eq!(run(b"abc", b"b", Some(1)), abc);
        let full = (b"XYZ".to_vec(), 14, 2, Completion::OneMinimal);
        assert_eq!(run(b"abcXYZdef", b"XYZ", Some(14)), full);
        let short = (b"XYZ".to_vec(), 13, 2, Completion::BudgetExhausted);
        assert_eq!(run(b"abcXYZdef", b"XYZ", Some(13)), short);
    }

    #[test]
    fn oracle_failures_release_and_storage_is_reusable() {
        let mut storage = active(32);
        let mut calls = 0;
        let err = reduce(&mut storage, b"abcd", &Settings::default(), |_| {
            calls += 1;
            verdict(false)
        });
        assert_eq!((err.unwrap_err(), calls), (ReduceError::NotInteresting, 1));

        let mut seen = Vec::new();
        let err = reduce(&mut storage, b"abcd", &Settings::default(), |c| {
            seen.push(c.to_vec());
            match c.len() {
                2 => Err("boom"),
                _ => Ok(c.contains(&b'c').into()),
            }
        });
        assert_eq!(err.unwrap_err(), ReduceError::Oracle("boom"));
        assert_eq!(seen, [&b"abcd"[..], b"", b"cd"]);
        assert!(!storage.status().in_use);

        let runs: [(&[u8], &[u8]); 3] =
            [(b"hello world", b"lo w"), (&[b'x'; 32], b"xx"), (b"", b"")];
        for (input, needle) in runs {
            let unbounded = Settings::default();
            let o = reduce(&mut storage, input, &unbounded, |c| {
                verdict(contains(c, needle))
            });
            let done = Ok((needle, Completion::OneMinimal));
            assert_eq!(o.map(|o| (o.bytes, o.completion)), done);
        }
    }

    #[test]
    fn storage_errors_leave_storage_unchanged() {
        let mut fresh = Storage::new(Limits { max_input_bytes: 4 }).unwrap();
        let before = fresh.status();
        let inactive = BytesError::WrongPhase(Phase::Initialization);
        assert_eq!(refused(&mut fresh, b"ab"), ReduceError::Bytes(inactive));
        assert_eq!(fresh.status(), before);
        fresh.activate().unwrap();
        assert!(fresh.activate().is_err());

        let before = fresh.status();
        let exceeded = BytesError::InputCapacityExceeded { len: 5, max: 4 };
        assert_eq!(refused(&mut fresh, b"abcde"), ReduceError::Bytes(exceeded));
        assert_eq!(fresh.status(), before);

        // A leaked outcome keeps the lease; later runs are refused.
        std::mem::forget(reduce(&mut fresh, b"ab", &Settings::default(), |_| {
            verdict(true)
        }));
        assert!(fresh.status().in_use);
        let in_use = ReduceError::Bytes(BytesError::StorageInUse);
        assert_eq!(refused(&mut fresh, b"ab"), in_use);
        fresh.teardown();
        assert_eq!(fresh.status().phase, Phase::Teardown);
        assert!(!fresh.status().in_use);
        assert!(matches!(refused(&mut fresh, b""), ReduceError::Bytes(_)));
    }

    #[test]
    fn capacity_sizes_and_overflow() {
        let size = |n| Capacity::derive(Limits { max_input_bytes: n }).map(|c| c.workspace_bytes());
        assert_eq!((size(0), size(1), size(10)), (Ok(0), Ok(1), Ok(19)));
        assert_eq!(size(usize::MAX), Err(BytesError::CapacityOverflow));
    }

    #[test]
    fn random_byte_reductions_are_sound() {
        let mut rng = Rng(7);
        let mut storage = active(40);
        for _ in 0..400 {
            let input: Vec<u8> = (0..rng.below(41))
                .map(|_| b'a' + rng.below(4) as u8)
                .collect();
            let mut pattern = rng.sample(&input, 6);
            if rng.below(5) == 0 {
                pattern.push(b'a' + rng.below(4) as u8);
            }
            let substring = rng.below(2) == 0;
            pattern.truncate(if substring { 3 } else { usize::MAX });
            let oracle = |c: &[u8]| match substring {
                true => contains(c, &pattern),
                false => is_subsequence(&pattern, c),
            };
            let max_attempts = (rng.below(3) == 0).then(|| rng.below(60) as u64);
            let settings = Settings { max_attempts };
            match reduce(&mut storage, &input, &settings, |c| verdict(oracle(c))) {
                Ok(outcome) => {
                    let out = outcome.bytes;
                    assert!(oracle(out) && is_subsequence(out, &input));
                    assert!(outcome.attempts <= max_attempts.unwrap_or(u64::MAX));
                    let finished = outcome.completion == Completion::OneMinimal;
                    assert!(!finished || one_minimal(out, oracle));
                }
                Err(ReduceError::NotInteresting) => assert!(!oracle(&input)),
                Err(e) => assert_eq!(
                    (e, max_attempts),
                    (BytesError::AttemptBudgetExhausted.into(), Some(0))
                ),
            }
        }
    }

    #[test]
    fn random_list_searches_end_one_minimal() {
        let mut rng = Rng(11);
        for case in 0..600 {
            let policy = [RestartPolicy::Greedy, RestartPolicy::Continue][case % 2];
            let initial: Vec<u32> = (0..rng.below(31)).map(|_| rng.below(8) as u32).collect();
            let wanted = rng.sample(&initial, 5);
            let monotone = rng.below(2) == 0;
            let oracle = |items: &[u32]| {
                // The non-monotone branch gives deterministic, erratic verdicts.
                let h = items
                    .iter()
                    .fold(17u64, |h, &x| h.wrapping_mul(31) ^ u64::from(x));
                match monotone {
                    true => is_subsequence(&wanted, items),
                    false => items == initial.as_slice() || h % 3 == 0,
                }
            };
            let mut items = initial.clone();
            let mut search = DeletionSearch::new(items.len(), policy);
            while let Some(range) = search.next() {
                assert!(range.start < range.end && range.end <= items.len());
                let candidate = without(&items, range);
                if oracle(&candidate) {
                    items = candidate;
                    search.accept();
                } else {
                    search.reject();
                }
                assert_eq!(search.len(), items.len());
            }
            assert!(search.is_done() && oracle(&items) && is_subsequence(&items, &initial));
            assert!(one_minimal(&items, oracle));
        }
    }
}

//! The list minimiser every deletion pass uses.
//!
//! A pass hands over a list of elements (the children of a directory, the blocks of one
//! level, the lines of a file). Each round splits what is left into chunks of one size,
//! tries deleting each chunk (heaviest first, in union windows against one state), and keeps
//! what passes. The chunk size of the next round comes from the [`Minimiser`]:
//!
//! - [`Minimiser::Cdd`], counter-based probabilistic delta debugging: every element is
//!   taken to be needed with probability `p`, starting at 0.1; the chunk size is the one
//!   that maximises the expected number of elements a test removes, `k (1 - p)^k`; after a
//!   round each surviving element has failed one test of that size, so `p` becomes
//!   `p / (1 - (1 - p)^k)`, and the next size follows from it.
//! - [`Minimiser::Halving`]: all elements first, then halves, quarters and so on.
//!
//! Either way the last round is at size one. Every pass repeats its rounds until one commits
//! nothing, so what a pass leaves is 1-minimal: no single element can go.
//!
//! CDD does not start from 0.1 blindly: each pass keeps a decayed count of the elements its
//! earlier lists kept and lost ([`NeededShare`]), and the first `p` is that pass's observed share of
//! needed elements (0.1 before anything is known). Statements of a compiled language that
//! are mostly needed go straight to single deletions; the files of a tree that are mostly
//! not needed go in large chunks. The counts come from committed results in candidate
//! order, so they do not depend on `--jobs`.

use crate::reduce::error::ReduceError;
pub(crate) use crate::reduce::options::Minimiser;
use crate::reduce::session::{Candidate, Session, UNION_WINDOW};

/// The initial probability that an element is needed, for [`Minimiser::Cdd`].
pub(crate) const CDD_P0: f64 = 0.1;

/// The chunk size that maximises `k (1 - p)^k`, the expected number of elements a test of
/// `k` elements removes when each is needed with probability `p`.
pub(crate) fn best_size(p: f64) -> usize {
    if p.is_nan() || p <= 0.0 {
        return usize::MAX;
    }
    if p >= 1.0 {
        return 1;
    }
    // The real maximum is at -1 / ln(1 - p); the best integer is one of its neighbours.
    let x = -1.0 / (1.0 - p).ln();
    let lo = x.floor().max(1.0);
    let gain = |k: f64| k * (1.0 - p).powf(k);
    let best = if gain(lo + 1.0) > gain(lo) {
        lo + 1.0
    } else {
        lo
    };
    if best >= usize::MAX as f64 {
        usize::MAX
    } else {
        best as usize
    }
}

/// What a pass's lists kept and lost so far, as decayed counts: the estimate of how likely
/// the pass's next element is needed, which starts its CDD schedule.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NeededShare {
    kept: f64,
    removed: f64,
}

impl NeededShare {
    /// How much of the earlier counts each new list keeps.
    pub(crate) const DECAY: f64 = 0.9;

    /// The estimate: one needed element in ten pseudo-observations, plus the counts, so
    /// [`CDD_P0`] before anything is known.
    pub(crate) fn estimate(&self) -> f64 {
        (self.kept + 1.0) / (self.kept + self.removed + 10.0)
    }

    /// Records a list that ended with `kept` elements after `removed` went.
    pub(crate) fn learn(&mut self, kept: usize, removed: usize) {
        self.kept = self.kept * Self::DECAY + kept as f64;
        self.removed = self.removed * Self::DECAY + removed as f64;
    }
}

/// The chunk sizes of successive rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schedule {
    minimiser: Minimiser,
    p: f64,
}

impl Schedule {
    #[cfg(test)]
    /// A schedule for `minimiser`.
    pub(crate) fn new(minimiser: Minimiser) -> Schedule {
        Schedule::starting_at(minimiser, CDD_P0)
    }

    /// A schedule for `minimiser` whose CDD probability starts at `p0` (clamped to
    /// `0.01..=0.95`).
    pub(crate) fn starting_at(minimiser: Minimiser, p0: f64) -> Schedule {
        let p = if p0.is_nan() {
            CDD_P0
        } else {
            p0.clamp(0.01, 0.95)
        };
        Schedule { minimiser, p }
    }

    /// The first round's chunk size for `len` elements.
    pub(crate) fn first(&self, len: usize) -> usize {
        match self.minimiser {
            Minimiser::Halving => len.max(1),
            Minimiser::Cdd => best_size(self.p).clamp(1, len.max(1)),
        }
    }

    /// The next round's chunk size after a round at `size`, with `len` elements left.
    /// Always smaller than `size` while `size > 1`.
    pub(crate) fn next(&mut self, size: usize, len: usize) -> usize {
        let next = match self.minimiser {
            Minimiser::Halving => size.div_ceil(2),
            Minimiser::Cdd => {
                let k = i32::try_from(size).unwrap_or(i32::MAX);
                let survive = 1.0 - (1.0 - self.p).powi(k);
                self.p = if survive > 0.0 {
                    (self.p / survive).min(1.0)
                } else {
                    1.0
                };
                best_size(self.p)
            }
        };
        next.min(size.saturating_sub(1)).min(len).max(1)
    }
}

/// A list a pass minimises.
pub(crate) trait Elements {
    /// How many elements are left.
    fn len(&self) -> usize;
    /// The weight of element `i` (bytes it stands for); heavier chunks are tried first.
    fn weight(&self, session: &Session, i: usize) -> u64;
    /// Whether element `i` is tried on its own at chunk size one.
    fn alone(&self, _session: &Session, _i: usize) -> bool {
        true
    }
    /// The candidate that deletes the elements `chunk`, against the current state, in which
    /// the elements `gone` were already cut this round; `None` when it no longer applies.
    fn candidate(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate>;
    /// [`Elements::candidate`] for a chunk that only runs ahead (see
    /// [`Session::try_window_ahead`]): the same candidate, without counting anything the
    /// list counts about the candidates it offers.
    fn ahead(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        self.candidate(session, chunk, gone)
    }
    /// Drops the elements `gone` (cut this round) and renumbers the rest.
    fn remove(&mut self, session: &Session, gone: &[usize]);
}

/// Deletes what it can of `elements`, ending with one round of single deletions (the
/// caller repeats until a round commits nothing). The CDD schedule starts from `needed`,
/// the share of needed elements the calling pass has seen so far, and a list that runs to
/// its end adds what it kept and lost to it. Returns the commits made, or `None` when the
/// session stopped.
///
/// # Errors
/// Whatever the session reports.
pub(crate) fn minimise(
    session: &mut Session,
    phase: &str,
    minimiser: Minimiser,
    needed: &mut NeededShare,
    elements: &mut dyn Elements,
) -> Result<Option<u64>, ReduceError> {
    minimise_then(session, phase, minimiser, needed, elements, None)
}

/// [`minimise`], with `then`: what the caller would try first after this list if nothing
/// more were committed (see [`minimise_groups`]).
///
/// # Errors
/// Whatever the session reports.
pub(crate) fn minimise_then(
    session: &mut Session,
    phase: &str,
    minimiser: Minimiser,
    needed: &mut NeededShare,
    elements: &mut dyn Elements,
    then: Option<&Then<'_>>,
) -> Result<Option<u64>, ReduceError> {
    let whole = [elements.len()];
    minimise_groups(session, phase, minimiser, needed, elements, &whole, then)
}

/// One list of [`minimise_groups`]: its elements (indices into the shared list), its
/// schedule and the chunk size of its next round.
#[derive(Clone)]
struct Group {
    members: Vec<usize>,
    listed: usize,
    schedule: Schedule,
    size: usize,
    done: bool,
}

impl Group {
    /// Ends a round, with `members` already without what it cut: a round of single
    /// elements (or nothing left) ends the list, which adds what it kept and lost to
    /// `needed`; any other round sets the next size.
    fn end_round(&mut self, needed: &mut NeededShare) {
        if self.size == 1 || self.members.is_empty() {
            self.done = true;
            let kept = self.members.len();
            needed.learn(kept, self.listed.saturating_sub(kept));
        } else {
            self.size = self.schedule.next(self.size, self.members.len());
        }
    }
}

/// [`minimise`] for several lists at once: `sizes` splits `elements` into consecutive
/// lists (the groups of one syntax level), each searched on its own schedule as if it were
/// alone (a chunk never spans two lists, and each list ends with a round of single
/// deletions), but the chunks of every list's current round go through the same
/// windows, the last list first, so that every worker has a candidate while small lists
/// are searched (the single nodes of many small groups go through windows together).
/// `then` gives the candidates the caller would try first after these lists, if nothing
/// more were committed, from the share of needed elements they would leave: what runs
/// ahead of the last window (see [`Session::try_window_ahead`]).
/// Returns the commits made, or `None` when the session stopped.
///
/// # Errors
/// Whatever the session reports.
pub(crate) fn minimise_groups(
    session: &mut Session,
    phase: &str,
    minimiser: Minimiser,
    needed: &mut NeededShare,
    elements: &mut dyn Elements,
    sizes: &[usize],
    then: Option<&Then<'_>>,
) -> Result<Option<u64>, ReduceError> {
    let mut groups = new_groups(minimiser, needed, elements.len(), sizes);
    let mut accepted = 0;
    let ahead = session.runs_ahead();
    while groups.iter().any(|g| !g.done) {
        let chunks = round_chunks(session, elements, &mut groups);
        let windows: Vec<&[Vec<usize>]> = chunks.chunks(UNION_WINDOW).collect();
        let mut gone: Vec<usize> = Vec::new();
        for (w, window) in windows.iter().enumerate() {
            // What the next window would try if this one committed nothing: the rest of
            // this round, or the start of the next one.
            let next: Vec<Candidate> = if !ahead {
                Vec::new()
            } else if let Some(next) = windows.get(w + 1) {
                next.iter()
                    .filter_map(|chunk| elements.ahead(session, chunk, &gone))
                    .collect()
            } else {
                let (chunks, share) = next_round(session, elements, &groups, &gone, *needed);
                if chunks.is_empty() {
                    then.map_or_else(Vec::new, |then| then(session, share))
                } else {
                    chunks
                        .iter()
                        .take(UNION_WINDOW)
                        .filter_map(|chunk| elements.ahead(session, chunk, &gone))
                        .collect()
                }
            };
            let refs: Vec<&[usize]> = window.iter().map(Vec::as_slice).collect();
            let Some(committed) = try_chunks(session, phase, elements, &refs, next, &gone)? else {
                return Ok(None);
            };
            for chunk in committed {
                accepted += 1;
                gone.extend_from_slice(chunk);
            }
        }
        gone.sort_unstable();
        elements.remove(session, &gone);
        for group in groups.iter_mut().filter(|g| !g.done) {
            group.members = group
                .members
                .iter()
                .filter(|i| gone.binary_search(i).is_err())
                .map(|&i| i - gone.partition_point(|&g| g < i))
                .collect();
            group.end_round(needed);
        }
    }
    Ok(Some(accepted))
}

/// The chunks of this round of every list not done: the last list first, each list's
/// heaviest chunks first.
fn round_chunks(
    session: &Session,
    elements: &dyn Elements,
    groups: &mut [Group],
) -> Vec<Vec<usize>> {
    let mut chunks: Vec<Vec<usize>> = Vec::new();
    for group in groups.iter_mut().rev().filter(|g| !g.done) {
        group.size = group.size.clamp(1, group.members.len());
        let size = group.size;
        let own: Vec<&[usize]> = group
            .members
            .chunks(size)
            .filter(|c| size > 1 || elements.alone(session, c[0]))
            .collect();
        let weights: Vec<u64> = own
            .iter()
            .map(|c| c.iter().map(|&i| elements.weight(session, i)).sum())
            .collect();
        let mut order: Vec<usize> = (0..own.len()).collect();
        // Largest removals first; ties keep list order.
        order.sort_by(|&a, &b| weights[b].cmp(&weights[a]).then(a.cmp(&b)));
        chunks.extend(order.into_iter().map(|i| own[i].to_vec()));
    }
    chunks
}

/// The chunks the next round would try if nothing more of this round were committed
/// (the elements `gone` were), in this round's numbering: what runs ahead of the round's
/// last window.
fn next_round(
    session: &Session,
    elements: &dyn Elements,
    groups: &[Group],
    gone: &[usize],
    mut needed: NeededShare,
) -> (Vec<Vec<usize>>, NeededShare) {
    let mut gone = gone.to_vec();
    gone.sort_unstable();
    let mut next = groups.to_vec();
    for group in next.iter_mut().filter(|g| !g.done) {
        group.members.retain(|i| gone.binary_search(i).is_err());
        group.end_round(&mut needed);
    }
    (round_chunks(session, elements, &mut next), needed)
}

/// The lists of [`minimise_groups`] for `len` elements split as `sizes`, each starting its
/// schedule from the share `needed` (an empty list counts as one that ran to its end).
fn new_groups(
    minimiser: Minimiser,
    needed: &mut NeededShare,
    len: usize,
    sizes: &[usize],
) -> Vec<Group> {
    let mut start = 0;
    let mut groups: Vec<Group> = Vec::with_capacity(sizes.len());
    for &n in sizes {
        let end = (start + n).min(len);
        if end == start {
            // An empty list ran to its end at once.
            needed.learn(0, 0);
        }
        let schedule = Schedule::starting_at(minimiser, needed.estimate());
        groups.push(Group {
            members: (start..end).collect(),
            listed: end - start,
            size: schedule.first(end - start),
            schedule,
            done: end == start,
        });
        start = end;
    }
    groups
}

/// The candidates of the first window [`minimise_groups`] would try on `elements` split
/// as `sizes`, from the share `needed`: what runs ahead of the window before them.
pub(crate) fn first_window(
    session: &Session,
    minimiser: Minimiser,
    mut needed: NeededShare,
    elements: &dyn Elements,
    sizes: &[usize],
) -> Vec<Candidate> {
    let mut groups = new_groups(minimiser, &mut needed, elements.len(), sizes);
    round_chunks(session, elements, &mut groups)
        .iter()
        .take(UNION_WINDOW)
        .filter_map(|chunk| elements.ahead(session, chunk, &[]))
        .collect()
}

/// What comes after a list, for [`minimise_groups`]: the candidates its caller would try
/// next if nothing more were committed, given the share of needed elements then.
pub(crate) type Then<'a> = dyn Fn(&Session, NeededShare) -> Vec<Candidate> + 'a;

/// Tries deleting each chunk of `window` (against the current state, in which the elements
/// `gone` were already cut) as one window of the session, with the candidates `ahead` that
/// the following window would try if this one committed nothing run ahead in idle
/// workers; returns the chunks committed, or `None` when the session stopped.
fn try_chunks<'c>(
    session: &mut Session,
    phase: &str,
    elements: &dyn Elements,
    window: &[&'c [usize]],
    ahead: Vec<Candidate>,
    gone: &[usize],
) -> Result<Option<Vec<&'c [usize]>>, ReduceError> {
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    for &chunk in window {
        if let Some(candidate) = elements.candidate(session, chunk, gone) {
            tried.push(chunk);
            candidates.push(candidate);
        }
    }
    if candidates.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let Some(done) = session.try_window_ahead(phase, candidates, ahead)? else {
        return Ok(None);
    };
    Ok(Some(
        tried
            .into_iter()
            .zip(done)
            .filter_map(|(chunk, committed)| committed.then_some(chunk))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_size_maximises_the_expected_gain() {
        for p in [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9] {
            let k = best_size(p);
            let gain = |k: usize| k as f64 * (1.0 - p).powi(k as i32);
            for other in 1..400 {
                assert!(gain(k) >= gain(other) - 1e-12, "p={p} k={k} other={other}");
            }
        }
        assert_eq!(best_size(0.1), 9);
        assert_eq!(best_size(1.0), 1);
        assert_eq!(best_size(0.0), usize::MAX);
    }

    #[test]
    fn the_starting_probability_follows_what_the_pass_kept() {
        let mut share = NeededShare::default();
        assert!((share.estimate() - CDD_P0).abs() < 1e-12);
        // Lists whose elements were all needed: the next list starts at single deletions.
        for _ in 0..3 {
            share.learn(20, 0);
        }
        let p = share.estimate();
        assert!(p > 0.8, "{p}");
        assert_eq!(Schedule::starting_at(Minimiser::Cdd, p).first(50), 1);
        // Lists that mostly went: large chunks again.
        for _ in 0..20 {
            share.learn(1, 50);
        }
        let p = share.estimate();
        assert!(p < 0.05, "{p}");
        assert!(Schedule::starting_at(Minimiser::Cdd, p).first(100) > 9);
        // Halving ignores it.
        assert_eq!(Schedule::starting_at(Minimiser::Halving, 0.9).first(10), 10);
        // Out-of-range starts are clamped, never a division by zero or a NaN size.
        assert_eq!(
            Schedule::starting_at(Minimiser::Cdd, f64::NAN).first(100),
            9
        );
        assert_eq!(Schedule::starting_at(Minimiser::Cdd, 2.0).first(100), 1);
    }

    #[test]
    fn sizes_shrink_to_one() {
        for minimiser in [Minimiser::Cdd, Minimiser::Halving] {
            let mut schedule = Schedule::new(minimiser);
            let mut size = schedule.first(1000);
            let mut seen = vec![size];
            while size > 1 {
                let next = schedule.next(size, 1000);
                assert!(next < size, "{minimiser:?}: {seen:?} then {next}");
                size = next;
                seen.push(size);
            }
            assert!(seen.len() < 20, "{seen:?}");
        }
        // CDD: 9, then sizes from the updated probability.
        let mut cdd = Schedule::new(Minimiser::Cdd);
        let mut sizes = vec![cdd.first(1000)];
        while sizes[sizes.len() - 1] > 1 {
            let last = sizes[sizes.len() - 1];
            sizes.push(cdd.next(last, 1000));
        }
        assert_eq!(sizes, [9, 6, 4, 2, 1]);
        let mut halving = Schedule::new(Minimiser::Halving);
        assert_eq!(halving.first(10), 10);
        assert_eq!(halving.next(10, 10), 5);
        // Never larger than what is left.
        assert_eq!(Schedule::new(Minimiser::Cdd).first(3), 3);
    }
}

//! The pass framework: what a reducer pass is and the machinery the passes share.
//!
//! A pass proposes candidates to the [`Session`] and updates its own view from what was
//! committed. Each pass is locally stable when it returns: it repeats its rounds until one
//! commits nothing. The driver in [`crate::reduce`] runs the passes to a global fixed point.
//!
//! This module holds the [`Pass`] trait and its [`PassContext`], [`PassResult`] and the
//! [`PassState`] a pass keeps across its runs; the per-file walk ([`per_file`]) and the
//! level walk ([`by_levels`]); and [`Ranges`], the byte ranges of one file as a list for the
//! list minimiser of [`crate::reduce::minimise`], whose entry points it re-exports.

use std::ops::Range;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
pub(crate) use crate::reduce::minimise::NeededShare;
use crate::reduce::minimise::first_window;
pub(crate) use crate::reduce::minimise::{
    Elements, Then, minimise, minimise_groups, minimise_then,
};
use crate::reduce::options::Minimiser;
pub(crate) use crate::reduce::ranges::{complement, line_ranges};
pub(crate) use crate::reduce::session::UNION_WINDOW;
pub(crate) use crate::reduce::session::file_state;
use crate::reduce::session::{Candidate, Session};
use crate::tree::{Node, RelPath};

/// What a pass run did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PassResult {
    /// Commits made.
    pub accepted: u64,
    /// Cuts the syntax guard skipped (see [`Ranges::guarded`]), for the report's
    /// per-phase counters.
    pub unparsable: u64,
}

/// What a pass learns as it runs, kept in the pass across its runs (a pass lives for the
/// whole reduction, through every round of the fixed point).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PassState {
    /// What the pass's lists kept and lost: where its CDD schedule starts (see
    /// [`NeededShare`]).
    pub needed: NeededShare,
    /// Cuts the syntax guard skipped since the pass last reported them.
    pub unparsable: u64,
}

impl PassState {
    /// The result of a run that made `accepted` commits: it reports, and forgets, the cuts
    /// the guard skipped.
    pub(crate) fn result(&mut self, accepted: u64) -> PassResult {
        PassResult {
            accepted,
            unparsable: std::mem::take(&mut self.unparsable),
        }
    }
}

/// Context a pass may use beyond the session.
pub(crate) struct PassContext {
    /// Relative paths that may never be deleted (kept paths and their ancestors and
    /// descendants are checked through [`PassContext::protected`]).
    pub keep: Vec<String>,
    /// Paths outside the model whose directories may never be deleted (see
    /// [`crate::reduce::ReduceOptions::pinned`]); what else those directories hold may go.
    pub pinned: Vec<String>,
    /// Files the baseline output names, reduced first.
    pub named: Vec<String>,
    /// How deletion passes shrink their chunks.
    pub minimiser: Minimiser,
    /// Whether line and block cuts that would leave a cleanly parsing file unparsable are
    /// skipped.
    pub syntax_guard: bool,
    /// Whether cuts inside one line are searched one at a time (the `tokens` or `chars`
    /// pass is on); at the line level they are only tried in groups.
    pub within_lines: bool,
    /// Whether a file that an earlier run of the pass settled, unchanged since and holding
    /// no identifier of which a commit removed an occurrence since, is skipped (see
    /// [`per_file`]).
    pub settle: bool,
    /// Whether the syntax pass replaces function bodies by stubs (see
    /// [`crate::reduce::passes::stubs`]).
    pub stubs: bool,
    /// Whether this is the round that confirms the fixed point: every file is searched
    /// again unless it was searched on this very tree.
    pub confirming: bool,
    /// The tracer the files pass runs the failure under first (see
    /// [`crate::reduce::access`]), when it is on and can run.
    pub strace: Option<std::path::PathBuf>,
}

impl PassContext {
    /// Whether deleting `path` would delete a kept path, or a pinned one.
    pub(crate) fn protected(&self, path: &str) -> bool {
        let below = |k: &String| {
            k.len() > path.len() + 1 && k.starts_with(path) && k.as_bytes()[path.len()] == b'/'
        };
        self.keep
            .iter()
            .any(|k| k == path || below(k) || path.starts_with(&format!("{k}/")))
            || self.pinned.iter().any(below)
    }

    /// Current regular files, the ones named in the failure output first, then the largest.
    pub(crate) fn file_order(&self, session: &Session) -> Vec<RelPath> {
        let mut files: Vec<(bool, u64, RelPath)> = session
            .current
            .entries
            .iter()
            .filter_map(|(path, entry)| match &entry.node {
                Node::File { data, .. } if !data.is_empty() => Some((
                    self.named.iter().any(|n| **n == **path),
                    data.len() as u64,
                    path.clone(),
                )),
                _ => None,
            })
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        files.into_iter().map(|(_, _, p)| p).collect()
    }
}

/// A reducer pass.
pub(crate) trait Pass {
    /// Its name in reports and progress.
    fn name(&self) -> &'static str;
    /// Runs the pass to local stability, or until the session stops.
    ///
    /// # Errors
    /// Whatever the session reports.
    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError>;
}

/// Runs `file` on every current file, named files and then the largest first, in rounds,
/// or until the session stops.
///
/// The first round takes every file. After a round that committed something, the next
/// round takes only the files that may have become reducible: those holding an identifier
/// of which a later commit removed an occurrence (see [`Session::touched_since`]). When such
/// a narrowed round commits nothing, one more round takes every file again; the pass ends
/// only after a round over every file that commits nothing (local stability).
///
/// A search that committed nothing settles its file for the pass; with `settles`, so does
/// every search (`file` runs each file to its own fixed point). The settle state outlives
/// the run (it is kept in the session): a settled file is skipped when nothing at all was
/// committed since (the same search on the same tree finds nothing new) and, with
/// [`PassContext::settle`] outside the confirming round, when its bytes are unchanged and
/// no commit since removed an occurrence of an identifier it holds. The driver confirms
/// the fixed point with a round that skips only the first kind, and of it only the searches
/// that answered no cut from the memory of failed cuts (which is off in that round).
pub(crate) fn per_file(
    session: &mut Session,
    ctx: &PassContext,
    settles: bool,
    mut file: impl FnMut(&mut Session, &RelPath) -> Result<Option<u64>, ReduceError>,
) -> Result<PassResult, ReduceError> {
    per_file_ahead(
        session,
        ctx,
        settles,
        &|_, _, _| Vec::new(),
        |session, path, _| file(session, path),
    )
}

/// What a pass's search of a file would try first, from the share of needed elements
/// then (see [`per_file_ahead`]).
pub(crate) type FirstOf<'a> = dyn Fn(&Session, &RelPath, NeededShare) -> Vec<Candidate> + 'a;

/// [`per_file`], where the search of each file gets what the search of the next file
/// would try first (`first` of the next file the walk would not skip, asked for when it is
/// needed): what runs ahead of the last window of a file, so that the worker a file's last
/// window leaves idle starts on the next file (see [`Session::try_window_ahead`]).
pub(crate) fn per_file_ahead(
    session: &mut Session,
    ctx: &PassContext,
    settles: bool,
    first: &FirstOf<'_>,
    mut file: impl FnMut(&mut Session, &RelPath, &Then<'_>) -> Result<Option<u64>, ReduceError>,
) -> Result<PassResult, ReduceError> {
    let mut result = PassResult::default();
    let mut full = true;
    // The commit count when `file` last took each file.
    let mut left_at: LeftAt = std::collections::HashMap::new();
    loop {
        let mut round = 0;
        let order = ctx.file_order(session);
        for (i, path) in order.iter().enumerate() {
            if skip_settled(session, ctx, path) || unchanged(session, &left_at, full, path) {
                continue;
            }
            // Counted from before the file's own commits, which may let more of it go.
            left_at.insert(path.clone(), session.commits());
            let recalled = session.recalled_cuts();
            let searched = {
                let left_at = &left_at;
                let rest = &order[i + 1..];
                let next = |session: &Session, share: NeededShare| {
                    rest.iter()
                        .find(|p| {
                            file_state(session, p).is_some()
                                && settled_skip(session, ctx, p).is_none()
                                && !unchanged(session, left_at, full, p)
                        })
                        .map(|p| first(session, p, share))
                        .unwrap_or_default()
                };
                file(session, path, &next)?
            };
            let Some(n) = searched else {
                result.accepted += round;
                return Ok(result);
            };
            if settles || n == 0 {
                session.settle(path, session.recalled_cuts() > recalled);
            }
            round += n;
        }
        result.accepted += round;
        if round > 0 {
            full = false;
        } else if full {
            return Ok(result);
        } else {
            full = true;
        }
    }
}

/// The commit count when a pass's walk last took each file.
type LeftAt = std::collections::HashMap<RelPath, u64>;

/// Whether a narrowed round of [`per_file_ahead`] (not `full`) leaves `path` out: the walk
/// took it before (at the commit count in `left_at`) and no commit since removed an
/// occurrence of an identifier it holds.
fn unchanged(session: &Session, left_at: &LeftAt, full: bool, path: &RelPath) -> bool {
    !full
        && left_at
            .get(path)
            .is_some_and(|&at| !session.touched_since(path, at))
}

/// Whether the running pass may skip `path`: it settled the file on this very tree (in the
/// confirming round, without answering a cut from memory), or
/// (with [`PassContext::settle`], outside the confirming round) the file's bytes are
/// unchanged since it settled and no commit since removed an occurrence of an identifier
/// it holds. A skip of the second kind is counted (see [`Session::settled_skips`]).
pub(crate) fn skip_settled(session: &mut Session, ctx: &PassContext, path: &RelPath) -> bool {
    match settled_skip(session, ctx, path) {
        None => false,
        Some(counted) => {
            if counted {
                session.skipped_settled();
            }
            true
        }
    }
}

/// Whether [`skip_settled`] skips `path`, and if so whether the skip is counted.
fn settled_skip(session: &Session, ctx: &PassContext, path: &RelPath) -> Option<bool> {
    let (at, from_memory) = session.settled(path)?;
    // On this very tree: the same search would find nothing new, unless it answered cuts
    // from memory and this is the confirming round, in which every cut runs.
    if at == session.commits() && !(from_memory && ctx.confirming) {
        return Some(false);
    }
    (ctx.settle && !ctx.confirming && !session.touched_since(path, at)).then_some(true)
}

/// Disjoint byte ranges of one file's content, as a list to minimise: blocks, lines, or
/// cuts of several ranges each (an unwrapped block: its header, closing lines and the
/// indentation of its body).
pub(crate) struct Ranges {
    path: RelPath,
    /// The elements, each a sorted set of ranges, in the content of length `len`; the
    /// ranges of different elements are disjoint, except where neighbours share a
    /// separator (both may cover the comma between them; see [`Removed`]).
    sets: Vec<Vec<Range<usize>>>,
    len: usize,
    /// What one element is called in labels.
    noun: &'static str,
    /// Whether an element of one line is tried on its own.
    single_lines: bool,
    /// The grammar of a file whose content parses cleanly: cuts that break its parse are
    /// skipped (the syntax guard).
    guard: Option<crate::reduce::syntax::Lang>,
    /// Cuts the guard skipped.
    unparsable: std::cell::Cell<u64>,
}

/// What one element of a [`Ranges`] list cuts: one range, or a set of ranges.
pub(crate) trait Cut {
    /// The ranges, sorted.
    fn into_set(self) -> Vec<Range<usize>>;
}

impl Cut for Range<usize> {
    fn into_set(self) -> Vec<Range<usize>> {
        vec![self]
    }
}

impl Cut for Vec<Range<usize>> {
    fn into_set(mut self) -> Vec<Range<usize>> {
        self.sort_by_key(|r| r.start);
        self
    }
}

impl Ranges {
    /// The elements `cuts` of `path`'s current content.
    pub(crate) fn new<C: Cut>(
        session: &Session,
        path: &RelPath,
        cuts: Vec<C>,
        noun: &'static str,
        single_lines: bool,
    ) -> Option<Ranges> {
        let (data, _) = file_state(session, path)?;
        let sets: Vec<Vec<Range<usize>>> = cuts
            .into_iter()
            .map(Cut::into_set)
            .filter(|s| !s.is_empty())
            .collect();
        Some(Ranges {
            path: path.clone(),
            sets,
            len: data.len(),
            noun,
            single_lines,
            guard: None,
            unparsable: std::cell::Cell::new(0),
        })
    }

    /// Turns on the syntax guard when `path` has a grammar and its current content parses
    /// cleanly (a file that already has errors is left unguarded).
    pub(crate) fn guarded(mut self, session: &Session, on: bool) -> Ranges {
        if !on {
            return self;
        }
        let Some((data, _)) = file_state(session, &self.path) else {
            return self;
        };
        let Some(lang) = crate::reduce::syntax::lang_for_file(&self.path, &data) else {
            return self;
        };
        if crate::reduce::syntax::parses_cleanly(lang, &data).unwrap_or(false) {
            self.guard = Some(lang);
        }
        self
    }

    /// Cuts the guard skipped so far.
    pub(crate) fn unparsable(&self) -> u64 {
        self.unparsable.get()
    }

    /// The bytes element `i` cuts.
    fn size(&self, i: usize) -> usize {
        self.sets[i].iter().map(Range::len).sum()
    }

    /// What the elements `gone` cut, as one measure (ranges that share a separator
    /// counted once).
    fn cut_by(&self, gone: &[usize]) -> Removed {
        Removed::new(gone.iter().flat_map(|&i| self.sets[i].iter().cloned()))
    }
}

/// Ranges cut from a content, merged (a separator two cut elements share is counted once):
/// how many bytes went before any position.
pub(crate) struct Removed {
    /// Sorted, disjoint, non-adjacent ranges.
    merged: Vec<Range<usize>>,
    /// `before[i]`: the bytes of `merged[..i]`.
    before: Vec<usize>,
}

impl Removed {
    pub(crate) fn new(ranges: impl Iterator<Item = Range<usize>>) -> Removed {
        let merged = crate::reduce::edits::normalise(ranges.collect());
        let mut before = Vec::with_capacity(merged.len() + 1);
        let mut total = 0;
        before.push(0);
        for r in &merged {
            total += r.len();
            before.push(total);
        }
        Removed { merged, before }
    }

    /// All the bytes cut.
    pub(crate) fn len(&self) -> usize {
        self.before.last().copied().unwrap_or(0)
    }

    /// The bytes cut before `pos`.
    fn before(&self, pos: usize) -> usize {
        // The ranges that start before `pos`; the last of them may reach past it.
        let n = self.merged.partition_point(|r| r.start < pos);
        match n.checked_sub(1) {
            None => 0,
            Some(last) => {
                self.before[last] + self.merged[last].end.min(pos) - self.merged[last].start
            }
        }
    }

    /// Range `r` of the content before the cut, in the content after it (what of `r` was
    /// cut is gone from it).
    pub(crate) fn shift(&self, r: &Range<usize>) -> Range<usize> {
        r.start - self.before(r.start)..r.end - self.before(r.end)
    }
}

impl Elements for Ranges {
    fn len(&self) -> usize {
        self.sets.len()
    }

    fn weight(&self, _: &Session, i: usize) -> u64 {
        self.size(i) as u64
    }

    fn alone(&self, session: &Session, i: usize) -> bool {
        if self.single_lines {
            return true;
        }
        let Some((data, _)) = file_state(session, &self.path) else {
            return false;
        };
        let (Some(first), Some(last)) = (self.sets[i].first(), self.sets[i].last()) else {
            return false;
        };
        data.len() == self.len
            && data[first.start..last.end.saturating_sub(1).max(first.start)].contains(&b'\n')
    }

    fn candidate(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        let (now, digest) = file_state(session, &self.path)?;
        let removed = self.cut_by(gone);
        if now.len() + removed.len() != self.len {
            // Something else changed the file: these ranges are stale.
            return None;
        }
        let mut cut: Vec<Range<usize>> = chunk
            .iter()
            .flat_map(|&i| &self.sets[i])
            .map(|r| removed.shift(r))
            .collect();
        cut.sort_by_key(|r| r.start);
        let (first_cut, last_cut) = (cut.first()?, cut.last()?);
        let line_of = |at: usize| {
            now[..at.min(now.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        };
        let first = line_of(first_cut.start);
        let last = line_of(last_cut.end.saturating_sub(1).max(last_cut.start));
        let keep = complement(now.len(), &cut);
        if let Some(lang) = self.guard {
            let mut text = Vec::with_capacity(now.len());
            for r in &keep {
                text.extend_from_slice(&now[r.clone()]);
            }
            if !crate::reduce::syntax::parses_cleanly(lang, &text).unwrap_or(true) {
                self.unparsable.set(self.unparsable.get() + 1);
                return None;
            }
        }
        let path = &self.path;
        let label = match (chunk.len(), self.noun) {
            (1, noun) if first == last => format!("{noun} at line {first} of {path}"),
            (1, noun) => format!("{noun} at lines {first}-{last} of {path}"),
            (n, noun) => format!("{n} {noun}s at lines {first}-{last} of {path}"),
        };
        Some(Candidate {
            mutation: Mutation::Keep {
                path: path.clone(),
                expect: digest,
                keep,
            },
            label,
        })
    }

    fn ahead(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        // A cut the guard refuses is counted when it is offered, not when it might be.
        let counted = self.unparsable.get();
        let candidate = self.candidate(session, chunk, gone);
        self.unparsable.set(counted);
        candidate
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let removed = self.cut_by(gone);
        let survivors: Vec<Vec<Range<usize>>> = (0..self.sets.len())
            .filter(|i| gone.binary_search(i).is_err())
            .map(|i| {
                self.sets[i]
                    .iter()
                    .map(|r| removed.shift(r))
                    .filter(|r| !r.is_empty())
                    .collect()
            })
            .collect();
        self.sets = survivors;
        self.len = self.len.saturating_sub(removed.len());
    }
}

/// Minimises `path` level by level: `level(content, depth)` gives the groups of sibling
/// ranges at `depth` of the current content (`None`: no such level). Each group is a list of
/// its own, and the groups of a level are searched together ([`minimise_groups`]: their
/// rounds share windows, the last group first); groups of one level never overlap, so they
/// form one list of cuts of the file. Returns the commits made, or `None` when
/// the session stopped. With `guard`, cuts that would leave the file unparsable are skipped
/// (see [`Ranges::guarded`]) and counted in `state`, whose needed share starts and learns
/// from each list. `after` gives what the caller would try after the last level (the next
/// file's first window), which runs ahead of the last level's last window.
#[expect(
    clippy::too_many_arguments,
    reason = "a level walk needs the pass's name, settings and the level function"
)]
pub(crate) fn by_levels<C: Cut>(
    session: &mut Session,
    name: &str,
    state: &mut PassState,
    minimiser: Minimiser,
    guard: bool,
    path: &RelPath,
    noun: &'static str,
    single_lines: bool,
    level: impl Fn(&[u8], usize) -> Option<Vec<Vec<C>>>,
    after: &Then<'_>,
) -> Result<Option<u64>, ReduceError> {
    let mut accepted = 0;
    let mut depth = 0;
    loop {
        let Some((mut list, sizes)) =
            level_list(session, path, noun, single_lines, guard, &level, depth)
        else {
            return Ok(Some(accepted));
        };
        // What the next level would try first, if this one committed nothing more; after
        // the last level, what the caller tries next.
        let then = |session: &Session, share: NeededShare| {
            let next = level_list(session, path, noun, single_lines, guard, &level, depth + 1)
                .map(|(next, sizes)| first_window(session, minimiser, share, &next, &sizes))
                .unwrap_or_default();
            if next.is_empty() {
                after(session, share)
            } else {
                next
            }
        };
        let outcome = minimise_groups(
            session,
            name,
            minimiser,
            &mut state.needed,
            &mut list,
            &sizes,
            Some(&then),
        )?;
        state.unparsable += list.unparsable();
        let Some(n) = outcome else {
            return Ok(None);
        };
        accepted += n;
        depth += 1;
    }
}

/// Runs a pass that searches every file level by level ([`by_levels`] in
/// [`per_file_ahead`], each file's first window running ahead of the file before it):
/// `level_of(path)` gives a file's level function, `None` for a file the pass leaves alone.
/// The guard is [`PassContext::syntax_guard`].
///
/// # Errors
/// Whatever the session reports.
pub(crate) fn levels_per_file<C: Cut, L: Fn(&[u8], usize) -> Option<Vec<Vec<C>>>>(
    session: &mut Session,
    ctx: &PassContext,
    name: &str,
    state: &mut PassState,
    (noun, single_lines): (&'static str, bool),
    level_of: impl Fn(&RelPath) -> Option<L>,
) -> Result<PassResult, ReduceError> {
    let share = state.needed;
    let guard = ctx.syntax_guard;
    let first = |session: &Session, path: &RelPath, _| {
        level_of(path)
            .map(|level| {
                levels_first(
                    session,
                    ctx.minimiser,
                    share,
                    guard,
                    path,
                    noun,
                    single_lines,
                    &level,
                )
            })
            .unwrap_or_default()
    };
    per_file_ahead(session, ctx, false, &first, |session, path, after| {
        let Some(level) = level_of(path) else {
            return Ok(Some(0));
        };
        by_levels(
            session,
            name,
            state,
            ctx.minimiser,
            guard,
            path,
            noun,
            single_lines,
            level,
            after,
        )
    })
}

/// The first window [`by_levels`] would try on `path`, from the share `share`: what runs
/// ahead of the last window before the file's search (see [`per_file_ahead`]).
#[expect(
    clippy::too_many_arguments,
    reason = "it stands for the level walk and takes its settings"
)]
pub(crate) fn levels_first<C: Cut>(
    session: &Session,
    minimiser: Minimiser,
    share: NeededShare,
    guard: bool,
    path: &RelPath,
    noun: &'static str,
    single_lines: bool,
    level: &impl Fn(&[u8], usize) -> Option<Vec<Vec<C>>>,
) -> Vec<Candidate> {
    level_list(session, path, noun, single_lines, guard, level, 0)
        .map(|(list, sizes)| first_window(session, minimiser, share, &list, &sizes))
        .unwrap_or_default()
}

/// The list [`by_levels`] searches at `depth` of `path`'s current content, with the sizes
/// of its groups (each group one list of its own); `None` when the file is gone or has no
/// such level.
fn level_list<C: Cut>(
    session: &Session,
    path: &RelPath,
    noun: &'static str,
    single_lines: bool,
    guard: bool,
    level: &impl Fn(&[u8], usize) -> Option<Vec<Vec<C>>>,
    depth: usize,
) -> Option<(Ranges, Vec<usize>)> {
    let (data, _) = file_state(session, path)?;
    let mut groups = level(&data, depth)?;
    let mut groups: Vec<Vec<Vec<Range<usize>>>> = groups
        .drain(..)
        .map(|g| {
            g.into_iter()
                .map(Cut::into_set)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect();
    groups.sort_by_key(|g| g[0][0].start);
    // Every group of the level is one list of its own, searched together: the chunks of
    // each list's current round share windows, so that every worker has a candidate.
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let cuts: Vec<Vec<Range<usize>>> = groups.into_iter().flatten().collect();
    let list = Ranges::new(session, path, cuts, noun, single_lines)?;
    Some((list.guarded(session, guard), sizes))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn lines_keep_their_newlines_and_a_final_partial_line() {
        assert_eq!(line_ranges(b"a\nbb\nc"), vec![0..2, 2..5, 5..6]);
        assert_eq!(line_ranges(b""), Vec::<Range<usize>>::new());
        assert_eq!(line_ranges(b"\n"), vec![0..1]);
    }

    /// A list that remembers, for every chunk it is asked to cut, which groups the chunk's
    /// elements belong to.
    struct Recording {
        list: Ranges,
        group_of: Vec<usize>,
        chunks: std::cell::RefCell<Vec<Vec<usize>>>,
    }

    impl Elements for Recording {
        fn len(&self) -> usize {
            self.list.len()
        }
        fn weight(&self, session: &Session, i: usize) -> u64 {
            self.list.weight(session, i)
        }
        fn candidate(
            &self,
            session: &Session,
            chunk: &[usize],
            gone: &[usize],
        ) -> Option<Candidate> {
            let groups = chunk.iter().map(|&i| self.group_of[i]).collect();
            self.chunks.borrow_mut().push(groups);
            self.list.candidate(session, chunk, gone)
        }
        fn ahead(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
            // Only what is offered is recorded, not what runs ahead.
            self.list.ahead(session, chunk, gone)
        }
        fn remove(&mut self, session: &Session, gone: &[usize]) {
            self.list.remove(session, gone);
            let mut i = 0;
            self.group_of.retain(|_| {
                i += 1;
                gone.binary_search(&(i - 1)).is_err()
            });
        }
    }

    #[test]
    fn the_groups_of_a_level_share_windows_but_never_a_chunk() {
        let text = "a\nb\nK1\nc\nd\nK2\ne\nK3\nf\ng\n";
        let lines = line_ranges(text.as_bytes());
        // Four lists: [a b K1] [c] [d K2 e] [K3 f g].
        let sizes = [3, 1, 3, 3];
        let group_of: Vec<usize> = sizes
            .iter()
            .enumerate()
            .flat_map(|(g, &n)| std::iter::repeat_n(g, n))
            .collect();
        let script = "grep -q K1 m.txt && grep -q K2 m.txt && grep -q K3 m.txt";
        let mut runs = Vec::new();
        for jobs in [1, 2] {
            let scratch = tempfile::tempdir().unwrap();
            let mut session = crate::reduce::session::tests::session_on(
                &[("m.txt", text)],
                script,
                jobs,
                scratch.path(),
            );
            let path: RelPath = Arc::from("m.txt");
            let list = Ranges::new(&session, &path, lines.clone(), "line", true).unwrap();
            let mut list = Recording {
                list,
                group_of: group_of.clone(),
                chunks: std::cell::RefCell::new(Vec::new()),
            };
            let mut needed = NeededShare::default();
            let done = minimise_groups(
                &mut session,
                "lines",
                Minimiser::Cdd,
                &mut needed,
                &mut list,
                &sizes,
                None,
            )
            .unwrap()
            .unwrap();
            assert!(done > 0);
            let (now, _) = file_state(&session, "m.txt").unwrap();
            assert_eq!(&*now, b"K1\nK2\nK3\n", "-j{jobs}");
            let chunks = list.chunks.into_inner();
            for chunk in &chunks {
                assert!(
                    chunk.windows(2).all(|w| w[0] == w[1]),
                    "{chunk:?} spans lists"
                );
            }
            // The first round of every list goes in one window, the last list first: one
            // chunk each (the CDD's first size covers every list here).
            let firsts: Vec<usize> = chunks[..4].iter().map(|c| c[0]).collect();
            assert_eq!(firsts, [3, 2, 1, 0], "{chunks:?}");
            // Every list was searched, the one-element list too.
            for g in 0..sizes.len() {
                assert!(chunks.iter().any(|c| c[0] == g), "list {g} never tried");
            }
            runs.push((chunks, session.attempts()));
        }
        // The same chunks in the same order, whatever the jobs.
        assert_eq!(runs[0], runs[1]);
    }

    #[test]
    fn the_first_window_of_the_next_level_runs_ahead_of_a_level_s_last_window() {
        // Two levels of one element each: `a` at level 0, `b` at level 1. Neither can go,
        // so each level's search is one window of one command. With two workers, level
        // 1's candidate runs beside level 0's, and level 1 then answers from the cache.
        let text = "a\nb\n";
        let level = |data: &[u8], depth: usize| -> Option<Vec<Vec<Range<usize>>>> {
            let lines = line_ranges(data);
            Some(vec![vec![lines.get(depth)?.clone()]])
        };
        let mut results = Vec::new();
        for jobs in [1, 2] {
            let scratch = tempfile::tempdir().unwrap();
            let mut session = crate::reduce::session::tests::session_on(
                &[("m.txt", text)],
                "grep -q a m.txt && grep -q b m.txt",
                jobs,
                scratch.path(),
            );
            let path: RelPath = Arc::from("m.txt");
            let mut state = PassState::default();
            let done = by_levels(
                &mut session,
                "blocks",
                &mut state,
                Minimiser::Cdd,
                false,
                &path,
                "line",
                true,
                |data, depth| level(data, depth),
                &|_, _| Vec::new(),
            )
            .unwrap();
            assert_eq!(done, Some(0));
            let p = session
                .phases()
                .iter()
                .find(|p| p.phase == "blocks")
                .unwrap();
            let ahead = u64::from(jobs == 2);
            assert_eq!(
                (p.oracle_samples, p.ran_ahead, p.cache_hits, p.rejected),
                (2, ahead, ahead, 2),
                "-j{jobs}"
            );
            results.push(file_state(&session, "m.txt").unwrap().0.to_vec());
        }
        assert_eq!(results[0], b"a\nb\n");
        assert_eq!(results[0], results[1]);
    }

    /// A context with every option off, `stubs` as given.
    pub(crate) fn context(stubs: bool) -> PassContext {
        PassContext {
            keep: Vec::new(),
            pinned: Vec::new(),
            named: Vec::new(),
            minimiser: Minimiser::Cdd,
            syntax_guard: false,
            within_lines: false,
            settle: false,
            stubs,
            confirming: false,
            strace: None,
        }
    }

    /// Runs `pass` once with one worker and once with two, each on a session over `files`
    /// with `script` as the command, and returns for each its phase's oracle samples, runs
    /// ahead, cache hits and rejected candidates. Both runs must commit nothing and leave
    /// the same tree.
    pub(crate) fn counts_by_jobs(
        files: &[(&str, &str)],
        script: &str,
        ctx: &PassContext,
        make: impl Fn() -> Box<dyn Pass>,
    ) -> [(u64, u64, u64, u64); 2] {
        let mut trees = Vec::new();
        let counts = [1, 2].map(|jobs| {
            let scratch = tempfile::tempdir().unwrap();
            let mut session =
                crate::reduce::session::tests::session_on(files, script, jobs, scratch.path());
            let mut pass = make();
            let done = pass.run(&mut session, ctx).unwrap();
            assert_eq!(done.accepted, 0, "-j{jobs}");
            trees.push(session.current.fingerprint());
            let p = session
                .phases()
                .iter()
                .find(|p| p.phase == pass.name())
                .unwrap();
            (p.oracle_samples, p.ran_ahead, p.cache_hits, p.rejected)
        });
        assert_eq!(trees[0], trees[1]);
        counts
    }

    #[test]
    fn the_first_window_of_the_next_file_runs_ahead_of_a_file_s_last_window() {
        // Two files of one needed line each. Each file's search is one window of one
        // command; with two workers, the second file's runs beside the first file's and
        // then answers from the cache. Nothing else changes: the same commands decide.
        let counts = counts_by_jobs(
            &[("a.txt", "x\n"), ("b.txt", "y\n")],
            "grep -q x a.txt && grep -q y b.txt",
            &context(false),
            || Box::new(crate::reduce::passes::lines::Lines::default()),
        );
        assert_eq!(counts, [(2, 0, 0, 2), (2, 1, 1, 2)]);
    }

    #[test]
    fn a_list_whose_last_two_elements_went_together_still_offers_the_rest() {
        // `f(a, b, c)`: `a, ` and `b, `, then the last element `, c`, which starts at the
        // comma `b, ` also covers. Once `b` and `c` went in one cut, `a` is still offered,
        // at its place in what is left.
        let scratch = tempfile::tempdir().unwrap();
        let mut session = crate::reduce::session::tests::session_on(
            &[("m.py", "f(a, b, c)\n")],
            "true",
            1,
            scratch.path(),
        );
        let path: RelPath = Arc::from("m.py");
        let list = Ranges::new(&session, &path, vec![2..5, 5..8, 6..9], "node", true).unwrap();
        let both = list.candidate(&session, &[1, 2], &[]).unwrap();
        let done = session.try_window("syntax", vec![both]).unwrap().unwrap();
        assert_eq!(done, [true]);
        let (now, _) = file_state(&session, "m.py").unwrap();
        assert_eq!(&*now, b"f(a, )\n");
        let Some(Candidate {
            mutation: Mutation::Keep { keep, .. },
            ..
        }) = list.candidate(&session, &[0], &[1, 2])
        else {
            panic!("the list was taken for stale");
        };
        let left: Vec<u8> = keep.iter().flat_map(|r| now[r.clone()].to_vec()).collect();
        assert_eq!(left, b"f()\n");
    }

    #[test]
    fn a_shared_separator_is_cut_once() {
        // "f(a, b)": `a, ` is 2..5 and the last element `, b` is 3..6 (it starts at the
        // comma its predecessor covers).
        let both = Removed::new([2..5, 3..6].into_iter());
        assert_eq!(both.len(), 4);
        assert_eq!(both.shift(&(6..7)), 2..3);
        // Only `a, ` went: what is left of `, b` is `b`, at 2..3 of "f(b)".
        let first = Removed::new([2..5].into_iter());
        assert_eq!(first.shift(&(3..6)), 2..3);
        assert_eq!(first.shift(&(0..2)), 0..2);
        assert_eq!(first.shift(&(6..7)), 3..4);
        // Adjacent and unsorted ranges merge; empty ones count nothing.
        let cut = Removed::new([8..10, 0..1, 1..3, 5..5].into_iter());
        assert_eq!(cut.len(), 5);
        assert_eq!(cut.shift(&(4..9)), 1..5);
    }
}

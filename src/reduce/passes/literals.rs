//! The literals pass: numbers replaced by `0` and strings by `""`, from
//! [`crate::reduce::syntax::literals`], as replacement edits under the oracle.
//!
//! Each literal of a file is one element of the list minimiser: all of a file's literals are
//! tried at once, then in smaller chunks, and every replacement that keeps the failure
//! stays. The certificate lists each replacement with the SHA-256 of what it replaced.

use std::ops::Range;
use std::sync::Arc;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::minimise::first_window;
use crate::reduce::options::Minimiser;
use crate::reduce::pass::{
    Elements, NeededShare, Pass, PassContext, PassResult, PassState, Then, file_state,
    minimise_then, per_file,
};
use crate::reduce::session::{Candidate, Session};
use crate::tree::RelPath;

/// Replaces literals by the smallest literal of their kind.
#[derive(Debug, Default)]
pub(crate) struct Literals {
    state: PassState,
}

/// One file's replacements by fixed text (literals, stub bodies) as a list to minimise.
struct Replacements {
    path: RelPath,
    /// Ranges of the content of length `len`, sorted and disjoint, each with its
    /// replacement.
    items: Vec<(Range<usize>, &'static str)>,
    len: usize,
    /// What one element and several are called in labels.
    nouns: (&'static str, &'static str),
}

impl Replacements {
    /// How much shorter element `i` makes the file.
    fn saves(&self, i: usize) -> usize {
        let (r, with) = &self.items[i];
        r.len().saturating_sub(with.len())
    }

    /// Range `r` in the content left after the elements `gone` were replaced.
    fn shifted(&self, gone: &[usize], r: &Range<usize>) -> Range<usize> {
        let before: usize = gone
            .iter()
            .filter(|&&i| self.items[i].0.end <= r.start)
            .map(|&i| self.saves(i))
            .sum();
        r.start - before..r.end - before
    }
}

impl Elements for Replacements {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn weight(&self, _: &Session, i: usize) -> u64 {
        self.saves(i) as u64
    }

    fn candidate(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        let (now, digest) = file_state(session, &self.path)?;
        let saved: usize = gone.iter().map(|&i| self.saves(i)).sum();
        if now.len() + saved != self.len {
            // Something else changed the file: these ranges are stale.
            return None;
        }
        let mut replace: Vec<(Range<usize>, Arc<[u8]>)> = chunk
            .iter()
            .map(|&i| {
                let (r, with) = &self.items[i];
                (self.shifted(gone, r), Arc::from(with.as_bytes()))
            })
            .collect();
        replace.sort_by_key(|(r, _)| r.start);
        let line = |at: usize| {
            now[..at.min(now.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        };
        let (first, last) = (replace.first()?.0.start, replace.last()?.0.start);
        let path = &self.path;
        let (one, many) = self.nouns;
        let label = match chunk.len() {
            1 => format!("{one} at line {} of {path}", line(first)),
            n => format!(
                "{n} {many} at lines {}-{} of {path}",
                line(first),
                line(last)
            ),
        };
        Some(Candidate {
            mutation: Mutation::Replace {
                path: path.clone(),
                expect: digest,
                keep: None,
                replace,
            },
            label,
        })
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let saved: usize = gone.iter().map(|&i| self.saves(i)).sum();
        let survivors = (0..self.items.len())
            .filter(|i| gone.binary_search(i).is_err())
            .map(|i| {
                let (r, with) = &self.items[i];
                (self.shifted(gone, r), *with)
            })
            .collect();
        self.items = survivors;
        self.len = self.len.saturating_sub(saved);
    }
}

/// The list of `path`'s `items(content)` (each a range and its replacement), `None` when
/// the file is gone or has none.
fn replacements(
    session: &Session,
    path: &RelPath,
    nouns: (&'static str, &'static str),
    items: &impl Fn(&[u8]) -> Vec<(Range<usize>, &'static str)>,
) -> Option<Replacements> {
    let (data, _) = file_state(session, path)?;
    let items = items(&data);
    (!items.is_empty()).then(|| Replacements {
        path: path.clone(),
        items,
        len: data.len(),
        nouns,
    })
}

/// The first window [`replace_until_stable`] would try on `path`, from the share `share`.
pub(crate) fn replacements_first(
    session: &Session,
    minimiser: Minimiser,
    share: NeededShare,
    path: &RelPath,
    nouns: (&'static str, &'static str),
    items: &impl Fn(&[u8]) -> Vec<(Range<usize>, &'static str)>,
) -> Vec<Candidate> {
    replacements(session, path, nouns, items)
        .map(|list| first_window(session, minimiser, share, &list, &[list.items.len()]))
        .unwrap_or_default()
}

/// Replaces what it can of `path`'s `items(content)` (each a range and its replacement),
/// searching again after every search that committed something, until one commits nothing.
/// `then` gives what the caller tries after it (see [`minimise_then`]). Returns the
/// commits made, or `None` when the session stopped.
///
/// # Errors
/// Whatever the session reports.
#[expect(
    clippy::too_many_arguments,
    reason = "a replacement search needs the pass's name, settings and the item function"
)]
pub(crate) fn replace_until_stable(
    session: &mut Session,
    phase: &str,
    minimiser: Minimiser,
    needed: &mut NeededShare,
    path: &RelPath,
    nouns: (&'static str, &'static str),
    items: impl Fn(&[u8]) -> Vec<(Range<usize>, &'static str)>,
    then: Option<&Then<'_>>,
) -> Result<Option<u64>, ReduceError> {
    let mut accepted = 0;
    loop {
        let Some(mut list) = replacements(session, path, nouns, &items) else {
            return Ok(Some(accepted));
        };
        match minimise_then(session, phase, minimiser, needed, &mut list, then)? {
            None => return Ok(None),
            Some(0) => return Ok(Some(accepted)),
            Some(n) => accepted += n,
        }
    }
}

impl Pass for Literals {
    fn name(&self) -> &'static str {
        "literals"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result = per_file(session, ctx, true, |session, path| {
            if crate::reduce::syntax::lang_for_path(path).is_none() {
                return Ok(Some(0));
            }
            replace_until_stable(
                session,
                name,
                ctx.minimiser,
                &mut state.needed,
                path,
                ("literal", "literals"),
                |data| {
                    crate::reduce::syntax::lang_for_file(path, data)
                        .and_then(|lang| crate::reduce::syntax::literals(lang, data).ok())
                        .unwrap_or_default()
                },
                None,
            )
        })?;
        Ok(self.state.result(result.accepted))
    }
}

//! The manifests pass: deletes entries of package manifests, found by parsing them with
//! [`crate::reduce::manifest`], level by level, each level's entries as one list of the
//! list minimiser (so that the entries a failure does not need go in chunks, not one
//! command each).

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::manifest::{ManifestEdit, ManifestKind, check, merged_deletion};
use crate::reduce::pass::{
    Elements, Pass, PassContext, PassResult, PassState, Removed, complement, file_state,
    minimise_then, per_file,
};
use crate::reduce::session::{Candidate, Session};
use crate::tree::RelPath;

/// Entries of package manifests, found by parsing them.
#[derive(Debug, Default)]
pub(crate) struct Manifests {
    state: PassState,
}

impl Manifests {
    /// One manifest, level by level; `None` when the session stopped.
    fn file(
        session: &mut Session,
        ctx: &PassContext,
        (name, state): (&str, &mut PassState),
        path: &RelPath,
        kind: ManifestKind,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        let mut depth = 0;
        loop {
            let Some(mut entries) = Entries::read(session, path, kind, depth) else {
                return Ok(Some(accepted));
            };
            let outcome = minimise_then(
                session,
                name,
                ctx.minimiser,
                &mut state.needed,
                &mut entries,
                None,
            );
            state.unparsable += entries.unparsable.get();
            let Some(n) = outcome? else {
                return Ok(None);
            };
            accepted += n;
            depth += 1;
        }
    }
}

impl Pass for Manifests {
    fn name(&self) -> &'static str {
        "manifests"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result = per_file(session, ctx, false, |session, path| {
            match crate::reduce::manifest::manifest_kind(path) {
                Some(kind) => Manifests::file(session, ctx, (name, state), path, kind),
                None => Ok(Some(0)),
            }
        })?;
        Ok(self.state.result(result.accepted))
    }
}

/// The entries of one level of a manifest, as the list minimiser's elements. Every
/// candidate is computed from the content the level was read from (`base`): the entries
/// cut so far and the chunk, deleted together by [`merged_deletion`] (which takes the
/// comma a list's last items leave), then expressed as what to keep of the current
/// content. A candidate that would not parse as the manifest's kind is not offered.
struct Entries {
    path: RelPath,
    kind: ManifestKind,
    /// The content the level was read from.
    base: Arc<[u8]>,
    /// The level's entries, as read from `base`.
    edits: Vec<ManifestEdit>,
    /// The entries still in the list (indices into `edits`), in order.
    alive: Vec<usize>,
    /// The entries cut in earlier rounds.
    cut: Vec<usize>,
    /// Candidates not offered because they would not parse.
    unparsable: Cell<u64>,
}

impl Entries {
    /// The entries at `depth` of `path`'s current content; `None` when the file is gone,
    /// does not parse (any more; the other passes take it) or has no such level.
    fn read(session: &Session, path: &RelPath, kind: ManifestKind, depth: usize) -> Option<Self> {
        let (base, _) = file_state(session, path)?;
        let mut levels = crate::reduce::manifest::candidates(kind, &base).ok()?;
        if depth >= levels.len() {
            return None;
        }
        let edits = levels.swap_remove(depth);
        Some(Entries {
            path: path.clone(),
            kind,
            alive: (0..edits.len()).collect(),
            edits,
            base,
            cut: Vec::new(),
            unparsable: Cell::new(0),
        })
    }

    /// What deleting the entries `which` (indices into `edits`) deletes from `base`.
    fn deletion(&self, which: impl Iterator<Item = usize>) -> Vec<Range<usize>> {
        merged_deletion(which.map(|i| &self.edits[i]))
    }

    /// The candidate that deletes the entries `chunk` (positions in the list) from the
    /// current content, in which the entries cut before and `gone` are gone.
    fn propose(
        &self,
        session: &Session,
        chunk: &[usize],
        gone: &[usize],
        count: bool,
    ) -> Option<Candidate> {
        let (now, digest) = file_state(session, &self.path)?;
        let before_set = self
            .cut
            .iter()
            .copied()
            .chain(gone.iter().map(|&i| self.alive[i]));
        let before = self.deletion(before_set.clone());
        let after = self.deletion(before_set.chain(chunk.iter().map(|&i| self.alive[i])));
        let removed = Removed::new(before.iter().cloned());
        if now.len() + removed.len() != self.base.len() {
            // Something else changed the file: these entries are stale.
            return None;
        }
        // What the chunk adds to the deletion, in the current content.
        let added = difference(&after, &before)?;
        let cut: Vec<Range<usize>> = added.iter().map(|r| removed.shift(r)).collect();
        if cut.is_empty() {
            return None;
        }
        let keep = complement(now.len(), &cut);
        let mut text = Vec::with_capacity(now.len());
        for r in &keep {
            text.extend_from_slice(&now[r.clone()]);
        }
        let parses = std::str::from_utf8(&self.base).ok().is_some_and(|base| {
            std::str::from_utf8(&text)
                .ok()
                .is_some_and(|text| check::reparses(self.kind, base, text).is_ok())
        });
        if !parses {
            if count {
                self.unparsable.set(self.unparsable.get() + 1);
            }
            return None;
        }
        let path = &self.path;
        let labels: Vec<&str> = chunk
            .iter()
            .map(|&i| self.edits[self.alive[i]].label.as_str())
            .collect();
        let label = candidate_label(self.kind, path, &labels)?;
        Some(Candidate {
            mutation: Mutation::Keep {
                path: path.clone(),
                expect: digest,
                keep,
            },
            label,
        })
    }
}

/// The ranges of `after` that `before` does not cover, both sorted and disjoint; `None`
/// when `before` deletes something `after` keeps.
fn difference(after: &[Range<usize>], before: &[Range<usize>]) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut b = before.iter().peekable();
    for range in after {
        let mut at = range.start;
        while let Some(next) = b.peek() {
            if next.end <= range.start {
                // A range of `before` outside every range of `after`.
                return None;
            }
            if next.start >= range.end {
                break;
            }
            if next.start < range.start || next.end > range.end {
                return None;
            }
            if next.start > at {
                out.push(at..next.start);
            }
            at = next.end;
            b.next();
        }
        if at < range.end {
            out.push(at..range.end);
        }
    }
    if b.next().is_some() {
        return None;
    }
    Some(out)
}

impl Elements for Entries {
    fn len(&self) -> usize {
        self.alive.len()
    }

    fn weight(&self, _: &Session, i: usize) -> u64 {
        self.edits[self.alive[i]]
            .delete
            .iter()
            .map(|r| r.len() as u64)
            .sum()
    }

    fn candidate(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        self.propose(session, chunk, gone, true)
    }

    fn ahead(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        // A cut that would not parse is counted when it is offered, not when it might be.
        self.propose(session, chunk, gone, false)
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        self.cut.extend(gone.iter().map(|&i| self.alive[i]));
        let mut at = 0;
        self.alive.retain(|_| {
            let keep = gone.binary_search(&at).is_err();
            at += 1;
            keep
        });
    }
}

/// The label of the candidate that deletes the entries labelled `labels` (in order) from
/// the manifest of `kind` at `path`, which names the file once, by its path; `None` for
/// no entry.
fn candidate_label(kind: ManifestKind, path: &str, labels: &[&str]) -> Option<String> {
    match labels {
        [one] => {
            let (what, word) = entry_label(one, kind);
            Some(format!("{what} {word} {path}"))
        }
        [first, .., last] => Some(format!(
            "{} entries of {path}, {} to {}",
            labels.len(),
            entry_label(first, kind).0,
            entry_label(last, kind).0
        )),
        [] => None,
    }
}

/// An entry's label without the manifest's kind it ends with ("member `x` of
/// package.json" is "member `x`", with "of"), so that a candidate names the file by its
/// path alone: "member `x` of packages/a/package.json".
fn entry_label(label: &str, kind: ManifestKind) -> (&str, &'static str) {
    let name = kind.display_name();
    for word in ["of", "in"] {
        if let Some(what) = label
            .strip_suffix(name)
            .and_then(|rest| rest.strip_suffix(' '))
            .and_then(|rest| rest.strip_suffix(word))
            .and_then(|rest| rest.strip_suffix(' '))
        {
            return (what, word);
        }
    }
    (label, "of")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_names_its_manifest_once_by_its_path() {
        let json = ManifestKind::PackageJson;
        let path = "packages/res/package.json";
        let label = |labels: &[&str]| candidate_label(json, path, labels);
        assert_eq!(
            label(&["member `exports` of package.json"]).as_deref(),
            Some("member `exports` of packages/res/package.json")
        );
        assert_eq!(
            label(&["item 2 of `files` in package.json"]).as_deref(),
            Some("item 2 of `files` in packages/res/package.json")
        );
        assert_eq!(
            label(&[
                "member `a` of package.json",
                "member `b` of package.json",
                "member `c` of package.json"
            ])
            .as_deref(),
            Some("3 entries of packages/res/package.json, member `a` to member `c`")
        );
        // A label that does not end with the kind's name is kept whole.
        assert_eq!(
            label(&["member `x`"]).as_deref(),
            Some("member `x` of packages/res/package.json")
        );
        assert_eq!(label(&[]), None);
    }

    #[test]
    fn the_difference_of_two_deletions_is_what_only_the_larger_takes() {
        assert_eq!(
            difference(&[0..10], &[2..4, 6..7]),
            Some(vec![0..2, 4..6, 7..10])
        );
        assert_eq!(difference(&[0..3, 5..9], &[5..9]), Some(vec![0..3]));
        assert_eq!(difference(&[0..3], &[]), Some(vec![0..3]));
        // `before` takes what `after` keeps.
        assert_eq!(difference(&[0..3], &[4..5]), None);
        assert_eq!(difference(&[2..6], &[1..3]), None);
    }
}

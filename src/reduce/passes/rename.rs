//! The rename pass: an identifier and every whole-word use of it, in every file at once,
//! renamed to a short name the tree does not use (a coupled replacement).
//!
//! The names are those that a grammar's parse of some file calls identifiers (never a
//! keyword), at least two bytes long. The longest savings get the shortest free names
//! (`a`, `b`, …, `aa`, …); each rename is one element of the list minimiser, all of them
//! tried at once first. A rename's candidate replaces, in every file, each identifier run
//! (`[A-Za-z_][A-Za-z0-9_]*`) equal to the name, in code, strings and comments alike: the
//! oracle decides. Files the reduction must keep unchanged (`--keep`) are never edited, so
//! a name that occurs in one is left alone.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::identifiers::{UseIndex, identifiers};
use crate::reduce::pass::{Elements, Pass, PassContext, PassResult, PassState, minimise};
use crate::reduce::session::{Candidate, Session};
use crate::tree::{Node, RelPath};

/// A range of a file's current content and the bytes that replace it.
type Replacement = (Range<usize>, Arc<[u8]>);

/// Renames identifiers to short free names.
#[derive(Debug, Default)]
pub(crate) struct Rename {
    state: PassState,
}

/// Renames as a list to minimise: each `(old, new)`.
struct Renames {
    items: Vec<(String, String)>,
    /// Bytes each rename saves when it is listed.
    saves: Vec<u64>,
}

/// The `n`-th short name: `a` … `z`, `aa`, `ab`, …
fn short_name(mut n: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The renames worth trying in the current tree.
fn renames(session: &Session, ctx: &PassContext) -> Vec<(String, String, u64)> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut kept: BTreeSet<String> = BTreeSet::new();
    for (path, entry) in &session.current.entries {
        let Node::File { data, .. } = &entry.node else {
            continue;
        };
        let protected = ctx.protected(path);
        for (word, n) in identifiers(data) {
            if protected {
                kept.insert(word.to_string());
            } else {
                *counts.entry(word.to_string()).or_default() += n as u64;
            }
        }
        if !protected
            && let Some(lang) = crate::reduce::syntax::lang_for_file(path, data)
            && let Ok(found) = crate::reduce::syntax::identifier_names(lang, data)
        {
            names.extend(found);
        }
    }
    let mut wanted: Vec<(String, u64)> = names
        .into_iter()
        .filter(|n| n.len() >= 2 && !kept.contains(n))
        .filter_map(|n| counts.get(&n).map(|c| (n, *c)))
        .collect();
    wanted.sort_by(|a, b| {
        let (sa, sb) = (a.1 * a.0.len() as u64, b.1 * b.0.len() as u64);
        sb.cmp(&sa).then(a.0.cmp(&b.0))
    });
    let mut out = Vec::new();
    let mut next = 0;
    for (old, count) in wanted {
        let new = loop {
            let candidate = short_name(next);
            next += 1;
            if !counts.contains_key(&candidate) && !kept.contains(&candidate) {
                break candidate;
            }
        };
        if new.len() < old.len() {
            let saves = count * (old.len() - new.len()) as u64;
            out.push((old, new, saves));
        }
    }
    out
}

impl Elements for Renames {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn weight(&self, _: &Session, i: usize) -> u64 {
        self.saves[i]
    }

    fn candidate(&self, session: &Session, chunk: &[usize], _gone: &[usize]) -> Option<Candidate> {
        let index = UseIndex::new(&session.current);
        let mut by_file: BTreeMap<&RelPath, Vec<Replacement>> = BTreeMap::new();
        for &i in chunk {
            let (old, new) = &self.items[i];
            for (path, r) in index.get(old).unwrap_or_default() {
                by_file
                    .entry(*path)
                    .or_default()
                    .push((r.clone(), Arc::from(new.as_bytes())));
            }
        }
        let mut parts = Vec::new();
        for (path, mut replace) in by_file {
            let Some(Node::File { digest, .. }) =
                session.current.entries.get(path).map(|e| &e.node)
            else {
                continue;
            };
            replace.sort_by_key(|(r, _)| r.start);
            parts.push(Mutation::Replace {
                path: path.clone(),
                expect: *digest,
                keep: None,
                replace,
            });
        }
        if parts.is_empty() {
            return None;
        }
        let label = match chunk {
            [i] => format!("rename {} to {}", self.items[*i].0, self.items[*i].1),
            _ => format!("rename {} identifiers", chunk.len()),
        };
        Some(Candidate {
            mutation: Mutation::Union(parts),
            label,
        })
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let keep = |i: &usize| gone.binary_search(i).is_err();
        self.items = (0..self.items.len())
            .filter(keep)
            .map(|i| self.items[i].clone())
            .collect();
        self.saves = (0..self.saves.len())
            .filter(keep)
            .map(|i| self.saves[i])
            .collect();
    }
}

impl Pass for Rename {
    fn name(&self) -> &'static str {
        "rename"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let mut accepted = 0;
        loop {
            let found = renames(session, ctx);
            if found.is_empty() {
                break;
            }
            let mut list = Renames {
                saves: found.iter().map(|f| f.2).collect(),
                items: found.into_iter().map(|(o, n, _)| (o, n)).collect(),
            };
            match minimise(
                session,
                name,
                ctx.minimiser,
                &mut self.state.needed,
                &mut list,
            )? {
                None | Some(0) => break,
                Some(n) => accepted += n,
            }
        }
        Ok(self.state.result(accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_count_like_spreadsheet_columns() {
        let names: Vec<String> = [0, 1, 25, 26, 27, 51, 52, 701, 702]
            .into_iter()
            .map(short_name)
            .collect();
        assert_eq!(names, ["a", "b", "z", "aa", "ab", "az", "ba", "zz", "aaa"]);
    }
}

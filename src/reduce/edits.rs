//! Edit sets: every state of a reduction as a set of edits against the original tree.
//!
//! An [`EditSet`] says which entries of the original tree are deleted (a file, a symlink or
//! a directory with everything below it) and, for each file that was cut, which byte ranges
//! of the *original* file survive. Because edits always refer to the original, an edit set is
//! a canonical description of a state: it can be printed in a report, replayed, and rebuilt
//! by anyone who holds the original tree.
//!
//! Reducer passes propose [`Mutation`]s relative to the *current* state (delete these paths;
//! keep these byte ranges of this file as it is now). A mutation names the digest of the file
//! content it was computed from, so a mutation that has gone stale is refused, never guessed.
//! Several mutations proposed against one state merge into their union.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

use crate::tree::{Entry, Node, RelPath, Tree};

/// A change proposed against the current state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Delete these entries (directories with everything below them).
    Remove(Vec<RelPath>),
    /// Keep only these byte ranges (sorted, disjoint) of a file's current content.
    Keep {
        /// The file.
        path: RelPath,
        /// SHA-256 of the content the ranges refer to.
        expect: [u8; 32],
        /// Ranges of the current content to keep.
        keep: Vec<Range<usize>>,
    },
    /// Several mutations applied together.
    Union(Vec<Mutation>),
}

/// Why a mutation could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stale {
    /// A path to delete no longer exists.
    Missing(RelPath),
    /// A file's content is no longer what the mutation was computed from.
    Changed(RelPath),
}

/// One edit of an [`EditSet`], as reports print it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Edit {
    /// The entry and everything below it are deleted.
    Delete {
        /// Relative path.
        path: String,
    },
    /// Bytes `start..end` of the original file are deleted.
    DeleteBytes {
        /// Relative path.
        path: String,
        /// First deleted byte.
        start: usize,
        /// One past the last deleted byte.
        end: usize,
    },
}

/// A state of the reduction, relative to the original tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditSet {
    /// Deleted entries (top-most only: nothing below a deleted directory is listed).
    removed: BTreeSet<RelPath>,
    /// For each cut file, the original byte ranges that survive.
    kept: BTreeMap<RelPath, Vec<Range<usize>>>,
}

fn under(path: &str, dir: &str) -> bool {
    path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// Merges sorted ranges, joining adjacent ones.
fn normalise(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The intersection of two normalised range lists.
fn intersect(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let start = a[i].start.max(b[j].start);
        let end = a[i].end.min(b[j].end);
        if start < end {
            out.push(start..end);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Maps ranges of the current content, which is the concatenation of `segments` of the
/// original, to ranges of the original.
fn to_original(segments: &[Range<usize>], current: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for want in current {
        let mut offset = 0;
        for seg in segments {
            let len = seg.end - seg.start;
            let lo = want.start.max(offset);
            let hi = want.end.min(offset + len);
            if lo < hi {
                out.push(seg.start + (lo - offset)..seg.start + (hi - offset));
            }
            offset += len;
        }
    }
    normalise(out)
}

impl Mutation {
    /// The union of mutations proposed against one state: deletions are joined, cuts of one
    /// file keep only what every cut keeps, and cuts below a deleted path are dropped.
    pub fn union(mutations: &[Mutation]) -> Mutation {
        let mut removed: BTreeSet<RelPath> = BTreeSet::new();
        let mut keeps: BTreeMap<RelPath, ([u8; 32], Vec<Range<usize>>)> = BTreeMap::new();
        let mut stack: Vec<&Mutation> = mutations.iter().collect();
        while let Some(m) = stack.pop() {
            match m {
                Mutation::Remove(paths) => removed.extend(paths.iter().cloned()),
                Mutation::Keep { path, expect, keep } => {
                    let keep = normalise(keep.clone());
                    keeps
                        .entry(path.clone())
                        .and_modify(|(_, have)| *have = intersect(have, &keep))
                        .or_insert((*expect, keep));
                }
                Mutation::Union(inner) => stack.extend(inner.iter()),
            }
        }
        let mut parts = Vec::new();
        if !removed.is_empty() {
            parts.push(Mutation::Remove(removed.iter().cloned().collect()));
        }
        for (path, (expect, keep)) in keeps {
            let gone = removed.iter().any(|r| **r == *path || under(&path, r));
            if !gone {
                parts.push(Mutation::Keep { path, expect, keep });
            }
        }
        if parts.len() == 1 {
            parts.pop().unwrap_or(Mutation::Union(Vec::new()))
        } else {
            Mutation::Union(parts)
        }
    }
}

impl EditSet {
    /// Applies `mutation` to this state, whose tree is `current`, giving the next state and
    /// its tree.
    ///
    /// # Errors
    /// [`Stale`] when the mutation no longer fits the state.
    pub fn apply(
        &self,
        current: &Tree,
        original: &Tree,
        mutation: &Mutation,
    ) -> Result<(EditSet, Tree), Stale> {
        let mut edits = self.clone();
        let mut tree = current.clone();
        let flat = match mutation {
            Mutation::Union(_) => mutation.clone(),
            other => Mutation::Union(vec![other.clone()]),
        };
        let Mutation::Union(parts) = flat else {
            return Ok((edits, tree));
        };
        for part in &parts {
            edits.apply_one(&mut tree, original, part)?;
        }
        Ok((edits, tree))
    }

    fn apply_one(&mut self, tree: &mut Tree, original: &Tree, m: &Mutation) -> Result<(), Stale> {
        match m {
            Mutation::Remove(paths) => {
                for path in paths {
                    if !tree.entries.contains_key(path) {
                        return Err(Stale::Missing(path.clone()));
                    }
                    tree.remove_subtree(path);
                    self.removed.retain(|r| !under(r, path));
                    self.kept.retain(|k, _| **k != **path && !under(k, path));
                    self.removed.insert(path.clone());
                }
            }
            Mutation::Keep { path, expect, keep } => {
                let Some(entry) = tree.entries.get(path) else {
                    return Err(Stale::Missing(path.clone()));
                };
                let Node::File { data, digest } = &entry.node else {
                    return Err(Stale::Changed(path.clone()));
                };
                if digest != expect {
                    return Err(Stale::Changed(path.clone()));
                }
                let keep = normalise(keep.clone());
                if keep.iter().any(|r| r.end > data.len()) {
                    return Err(Stale::Changed(path.clone()));
                }
                let mut bytes = Vec::with_capacity(keep.iter().map(|r| r.end - r.start).sum());
                for r in &keep {
                    bytes.extend_from_slice(&data[r.clone()]);
                }
                let original_len = original
                    .entries
                    .get(path)
                    .and_then(|e| e.node.data())
                    .map_or(data.len(), |d| d.len());
                let segments = self
                    .kept
                    .get(path)
                    .cloned()
                    .unwrap_or_else(|| vec![0..original_len]);
                let mapped = to_original(&segments, &keep);
                self.kept.insert(path.clone(), mapped);
                let meta = entry.meta;
                tree.entries.insert(
                    path.clone(),
                    Entry {
                        node: Node::file(Arc::from(bytes)),
                        meta,
                    },
                );
            }
            Mutation::Union(inner) => {
                for part in inner {
                    self.apply_one(tree, original, part)?;
                }
            }
        }
        Ok(())
    }

    /// The edits, deletions first, in path order.
    pub fn edits(&self, original: &Tree) -> Vec<Edit> {
        let mut out: Vec<Edit> = self
            .removed
            .iter()
            .map(|p| Edit::Delete {
                path: p.to_string(),
            })
            .collect();
        for (path, kept) in &self.kept {
            let len = original
                .entries
                .get(path)
                .and_then(|e| e.node.data())
                .map_or(0, |d| d.len());
            let mut at = 0;
            for r in kept.iter().chain(std::iter::once(&(len..len))) {
                if r.start > at {
                    out.push(Edit::DeleteBytes {
                        path: path.to_string(),
                        start: at,
                        end: r.start,
                    });
                }
                at = r.end;
            }
        }
        out
    }

    /// Rebuilds the tree this edit set describes from the original.
    pub fn materialise(&self, original: &Tree) -> Tree {
        let mut tree = original.clone();
        for path in &self.removed {
            tree.remove_subtree(path);
        }
        for (path, kept) in &self.kept {
            if let Some(entry) = tree.entries.get_mut(path)
                && let Some(data) = entry.node.data()
            {
                let mut bytes = Vec::new();
                for r in kept {
                    bytes.extend_from_slice(&data[r.clone()]);
                }
                entry.node = Node::file(Arc::from(bytes));
            }
        }
        tree
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tree::Meta;

    /// A tree of `(path, content)` pairs; an empty content without a dot in the path makes
    /// a directory.
    pub(crate) fn tree(files: &[(&str, &str)]) -> Tree {
        let meta = Meta {
            mode: 0o644,
            mtime_ns: 0,
        };
        let mut t = Tree::empty(meta);
        for (path, data) in files {
            let node = if data.is_empty() && !path.contains('.') {
                Node::Dir
            } else {
                Node::file(Arc::from(data.as_bytes()))
            };
            t.entries.insert(Arc::from(*path), Entry { node, meta });
        }
        t
    }

    fn digest(t: &Tree, path: &str) -> [u8; 32] {
        match &t.entries[path].node {
            Node::File { digest, .. } => *digest,
            _ => panic!(),
        }
    }

    fn text(t: &Tree, path: &str) -> String {
        String::from_utf8(t.entries[path].node.data().unwrap().to_vec()).unwrap()
    }

    #[test]
    fn successive_cuts_are_recorded_against_the_original() {
        let original = tree(&[("a.txt", "0123456789")]);
        let edits = EditSet::default();
        let keep = Mutation::Keep {
            path: Arc::from("a.txt"),
            expect: digest(&original, "a.txt"),
            keep: vec![0..3, 6..10],
        };
        let (edits, t1) = edits.apply(&original, &original, &keep).unwrap();
        assert_eq!(text(&t1, "a.txt"), "0126789");
        let keep = Mutation::Keep {
            path: Arc::from("a.txt"),
            expect: digest(&t1, "a.txt"),
            keep: vec![1..4],
        };
        let (edits, t2) = edits.apply(&t1, &original, &keep).unwrap();
        assert_eq!(text(&t2, "a.txt"), "126");
        assert_eq!(
            edits.edits(&original),
            vec![
                Edit::DeleteBytes {
                    path: "a.txt".into(),
                    start: 0,
                    end: 1
                },
                Edit::DeleteBytes {
                    path: "a.txt".into(),
                    start: 3,
                    end: 6
                },
                Edit::DeleteBytes {
                    path: "a.txt".into(),
                    start: 7,
                    end: 10
                },
            ]
        );
        assert_eq!(edits.materialise(&original), t2);
    }

    #[test]
    fn stale_mutations_are_refused() {
        let original = tree(&[("a.txt", "abc"), ("b.txt", "x")]);
        let wrong = Mutation::Keep {
            path: Arc::from("a.txt"),
            expect: digest(&original, "b.txt"),
            keep: vec![0..1],
        };
        let edits = EditSet::default();
        assert!(matches!(
            edits.apply(&original, &original, &wrong),
            Err(Stale::Changed(_))
        ));
        let gone = Mutation::Remove(vec![Arc::from("c.txt")]);
        assert!(matches!(
            edits.apply(&original, &original, &gone),
            Err(Stale::Missing(_))
        ));
    }

    #[test]
    fn union_joins_deletions_and_intersects_cuts() {
        let original = tree(&[("d", ""), ("d/x.txt", "xx"), ("a.txt", "abcdef")]);
        let d = digest(&original, "a.txt");
        let u = Mutation::union(&[
            Mutation::Keep {
                path: Arc::from("a.txt"),
                expect: d,
                keep: vec![0..4],
            },
            Mutation::Keep {
                path: Arc::from("a.txt"),
                expect: d,
                keep: vec![2..6],
            },
            Mutation::Keep {
                path: Arc::from("d/x.txt"),
                expect: digest(&original, "d/x.txt"),
                keep: vec![],
            },
            Mutation::Remove(vec![Arc::from("d")]),
        ]);
        let (edits, t) = EditSet::default().apply(&original, &original, &u).unwrap();
        assert_eq!(text(&t, "a.txt"), "cd");
        assert!(!t.entries.contains_key("d/x.txt"));
        assert_eq!(edits.materialise(&original), t);
        assert_eq!(edits.edits(&original)[0], Edit::Delete { path: "d".into() });
    }

    #[test]
    fn deleting_a_directory_forgets_edits_below_it() {
        let original = tree(&[("d", ""), ("d/x.txt", "xyz")]);
        let cut = Mutation::Keep {
            path: Arc::from("d/x.txt"),
            expect: digest(&original, "d/x.txt"),
            keep: vec![0..1],
        };
        let (edits, t) = EditSet::default()
            .apply(&original, &original, &cut)
            .unwrap();
        let (edits, _) = edits
            .apply(&t, &original, &Mutation::Remove(vec![Arc::from("d")]))
            .unwrap();
        assert_eq!(
            edits.edits(&original),
            vec![Edit::Delete { path: "d".into() }]
        );
    }

    /// A small deterministic generator for the property test.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % (n as u64).max(1)).unwrap()
        }
    }

    #[test]
    fn any_sequence_of_cuts_replays_from_its_edit_set() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let len = rng.below(60);
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let original = tree(&[("f.txt", &text), ("g.txt", "gg")]);
            let mut edits = EditSet::default();
            let mut current = original.clone();
            let mut expected = text.clone().into_bytes();
            for _ in 0..rng.below(5) + 1 {
                let data = current.entries["f.txt"].node.data().unwrap().clone();
                // Keep a random set of ranges of the current content.
                let mut keep = Vec::new();
                let mut at = 0;
                while at < data.len() {
                    let step = rng.below(6) + 1;
                    let end = (at + step).min(data.len());
                    if rng.below(3) > 0 {
                        keep.push(at..end);
                    }
                    at = end;
                }
                expected = keep
                    .iter()
                    .flat_map(|r| expected[r.clone()].to_vec())
                    .collect();
                let m = Mutation::Keep {
                    path: Arc::from("f.txt"),
                    expect: digest(&current, "f.txt"),
                    keep,
                };
                (edits, current) = edits.apply(&current, &original, &m).unwrap();
                assert_eq!(
                    &**current.entries["f.txt"].node.data().unwrap(),
                    &expected[..]
                );
            }
            assert_eq!(edits.materialise(&original), current);
            // The edit set's deleted ranges are exactly the complement of what survived.
            let deleted: usize = edits
                .edits(&original)
                .iter()
                .map(|e| match e {
                    Edit::DeleteBytes { start, end, .. } => end - start,
                    Edit::Delete { .. } => 0,
                })
                .sum();
            assert_eq!(deleted + expected.len(), text.len());
        }
    }
}

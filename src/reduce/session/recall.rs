//! The session's memory of failed cuts: part of the settle state.
//!
//! A cut of one file (a [`Mutation::Keep`]) that the oracle rejected is remembered by what
//! it cuts: the file's path and, for each cut range, its bytes and how often those bytes
//! occur before it in the file; a union of such cuts (a declaration with its uses) by all of
//! them. A deletion of whole entries (a [`Mutation::Remove`], alone or with the lines that
//! reference them) is remembered by its paths, and holds every identifier of the files it
//! deletes; the deletion of one file that holds no identifier is not remembered.
//!
//! The same cut proposed again later, on a tree that changed elsewhere, is answered
//! "rejected" without a run unless a commit since removed an occurrence of an identifier the
//! cut holds and that identifier is now rare outside the cut: a deletion elsewhere can let
//! this one through by taking away the last uses of something it declares, and that is
//! what the identifier test sees. What it cannot see is caught by the confirming round of
//! the fixed point, in which nothing is recalled and every search that answered a cut from
//! memory runs again (see [`crate::reduce`]).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::reduce::edits::Mutation;
use crate::reduce::identifiers::identifiers;
use crate::tree::{Node, Tree};

/// The most failed cuts remembered; past it the memory starts again (a simple bound).
const CAPACITY: usize = 1 << 20;

/// Failed cuts, each with the commit count when it last failed.
#[derive(Debug, Default)]
pub(super) struct Recall {
    failed: HashMap<[u8; 32], u64>,
}

/// A file's content with the ranges a cut takes from it.
pub(super) type Piece = (Arc<[u8]>, Vec<Range<usize>>);

/// A cut, as the memory knows it: of one file's content, of whole entries, or several of
/// these at once.
pub(super) struct Cut {
    /// What identifies it across states of the tree.
    pub(super) key: [u8; 32],
    /// What it cuts: each file's content with the ranges cut from it.
    pub(super) pieces: Vec<Piece>,
}

/// The cut `mutation` makes in `tree`: a [`Mutation::Keep`], a [`Mutation::Remove`] of
/// entries, or a union of these; `None` for anything else, or for a cut that does not apply
/// to `tree`.
///
/// A cut of a file's content is known by the bytes it cuts (and where they recur); a
/// deletion of entries by their paths alone, so that a file that shrank elsewhere is still
/// the same deletion.
pub(super) fn cut_of(tree: &Tree, mutation: &Mutation) -> Option<Cut> {
    let mut hasher = Sha256::new();
    let mut pieces = Vec::new();
    add(tree, mutation, &mut hasher, &mut pieces)?;
    Some(Cut {
        key: hasher.finalize().into(),
        pieces,
    })
}

fn add(
    tree: &Tree,
    mutation: &Mutation,
    hasher: &mut Sha256,
    pieces: &mut Vec<Piece>,
) -> Option<()> {
    match mutation {
        Mutation::Keep { path, expect, keep } => {
            let Node::File { data, digest } = &tree.entries.get(path)?.node else {
                return None;
            };
            // A cut that does not apply (stale, or ranges past the end) is no cut: applying
            // it is refused before anything runs.
            if digest != expect
                || keep.iter().any(|r| r.start > r.end || r.end > data.len())
                || keep.windows(2).any(|w| w[1].start < w[0].end)
            {
                return None;
            }
            let cut = crate::reduce::pass::complement(data.len(), keep);
            hasher.update(b"k");
            hasher.update(path.len().to_le_bytes());
            hasher.update(path.as_bytes());
            hasher.update(cut.len().to_le_bytes());
            for r in &cut {
                let bytes = data.get(r.clone())?;
                hasher.update(bytes.len().to_le_bytes());
                hasher.update(bytes);
                hasher.update(occurrences_before(data, bytes, r.start).to_le_bytes());
            }
            pieces.push((data.clone(), cut));
        }
        Mutation::Remove(paths) => {
            // The deletion of a file that holds no identifier is never answered from
            // memory: what makes it possible later (an empty `__init__.py` and the module
            // path it sets) is nothing the identifier test can see, and a file that goes
            // early is one that no later pass searches.
            if let [path] = &paths[..]
                && let Node::File { data, .. } = &tree.entries.get(path)?.node
                && identifiers(data).is_empty()
            {
                return None;
            }
            hasher.update(b"r");
            hasher.update(paths.len().to_le_bytes());
            for path in paths {
                let entry = tree.entries.get(path)?;
                hasher.update(path.len().to_le_bytes());
                hasher.update(path.as_bytes());
                let below = tree.descendants(path).map(|(_, e)| e);
                for entry in std::iter::once(entry).chain(below) {
                    if let Node::File { data, .. } = &entry.node {
                        pieces.push((data.clone(), vec![0..data.len()]));
                    }
                }
            }
        }
        Mutation::Union(parts) => {
            hasher.update(b"u");
            hasher.update(parts.len().to_le_bytes());
            for part in parts {
                add(tree, part, hasher, pieces)?;
            }
        }
        Mutation::Replace { .. } | Mutation::Conflict(_) => return None,
    }
    Some(())
}

/// How many times `needle` occurs in `data` ending at or before `end`.
fn occurrences_before(data: &[u8], needle: &[u8], end: usize) -> usize {
    let Some(&first) = needle.first() else {
        return 0;
    };
    let end = end.min(data.len());
    if needle.len() > end {
        return 0;
    }
    (0..=end - needle.len())
        .filter(|&p| data[p] == first && data[p..p + needle.len()] == *needle)
        .count()
}

impl Recall {
    /// Remembers that the cut `key` failed with `at` commits made.
    pub(super) fn failed(&mut self, key: [u8; 32], at: u64) {
        if self.failed.len() >= CAPACITY {
            self.failed.clear();
        }
        self.failed.insert(key, at);
    }

    /// Whether `cut` failed before and nothing since may have let it through: no commit
    /// since removed an occurrence of an identifier the cut holds that is now left, outside
    /// the cut, at most [`FEW_OUTSIDE`] times in the tree. `dropped_at` gives the number of
    /// the last commit that removed an occurrence of a name, `in_tree` how often the name
    /// occurs in the tree now.
    pub(super) fn recalls(
        &self,
        cut: &Cut,
        dropped_at: impl Fn(&str) -> Option<u64>,
        in_tree: impl Fn(&str) -> u64,
    ) -> bool {
        let Some(&at) = self.failed.get(&cut.key) else {
            return false;
        };
        let mut held: HashMap<&str, u64> = HashMap::new();
        for (data, ranges) in &cut.pieces {
            for r in ranges {
                for (name, n) in identifiers(data.get(r.clone()).unwrap_or_default()) {
                    *held.entry(name).or_insert(0) += n as u64;
                }
            }
        }
        !held.into_iter().any(|(name, n)| {
            dropped_at(name).is_some_and(|d| d > at)
                && in_tree(name).saturating_sub(n) <= FEW_OUTSIDE
        })
    }
}

/// How many occurrences of a name may be left outside a cut for a drop of it to count: the
/// last uses of what the cut declares (a use and its import).
const FEW_OUTSIDE: u64 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_that_does_not_apply_is_no_cut() {
        let tree = crate::reduce::edits::tests::tree(&[("m.txt", "abc\n")]);
        let Node::File { digest, .. } = &tree.entries["m.txt"].node else {
            panic!("no file");
        };
        let keep = |keep: Vec<Range<usize>>, expect: [u8; 32]| Mutation::Keep {
            path: Arc::from("m.txt"),
            expect,
            keep,
        };
        assert!(cut_of(&tree, &keep(vec![0..1], *digest)).is_some());
        // Past the end, backwards, overlapping, another content: refused, never a panic.
        assert!(cut_of(&tree, &keep(vec![0..1, 9..12], *digest)).is_none());
        #[expect(clippy::reversed_empty_ranges, reason = "the bad input under test")]
        let backwards = vec![3..1];
        assert!(cut_of(&tree, &keep(backwards, *digest)).is_none());
        assert!(cut_of(&tree, &keep(vec![0..3, 1..2], *digest)).is_none());
        assert!(cut_of(&tree, &keep(vec![0..1], [0; 32])).is_none());
    }

    #[test]
    fn a_deletion_of_entries_is_known_by_its_paths_and_holds_every_file_below_them() {
        let before = crate::reduce::edits::tests::tree(&[
            ("d", ""),
            ("d/a.py", "def used(): pass\n"),
            ("d/b.py", "X = 1\n"),
            ("m.py", "from d.a import used\n"),
        ]);
        let remove =
            |paths: &[&str]| Mutation::Remove(paths.iter().map(|p| Arc::from(*p)).collect());
        let cut = cut_of(&before, &remove(&["d"])).expect("a cut");
        let mut held: Vec<&[u8]> = cut
            .pieces
            .iter()
            .map(|(data, ranges)| {
                assert_eq!(ranges, &vec![0..data.len()]);
                &data[..]
            })
            .collect();
        held.sort();
        assert_eq!(held, [&b"X = 1\n"[..], b"def used(): pass\n"]);
        // The same paths after their files shrank: the same cut; other paths: another.
        let after = crate::reduce::edits::tests::tree(&[
            ("d", ""),
            ("d/a.py", "def used(): 0\n"),
            ("m.py", "from d.a import used\n"),
        ]);
        assert_eq!(cut_of(&after, &remove(&["d"])).expect("a cut").key, cut.key);
        assert_ne!(
            cut_of(&before, &remove(&["d/a.py", "m.py"]))
                .expect("a cut")
                .key,
            cut.key
        );
        // The deletion of a single file is remembered, unless it holds no identifier.
        assert!(cut_of(&before, &remove(&["d/a.py"])).is_some());
        let blank = crate::reduce::edits::tests::tree(&[("d", ""), ("d/__init__.py", "\n")]);
        assert!(cut_of(&blank, &remove(&["d/__init__.py"])).is_none());
        assert!(cut_of(&blank, &remove(&["d"])).is_some());
        // A missing path is no cut.
        assert!(cut_of(&before, &remove(&["gone"])).is_none());
        // With the line that imports it: a union, another cut again.
        let Node::File { digest, .. } = &before.entries["m.py"].node else {
            panic!("no file");
        };
        let with_import = Mutation::Union(vec![
            remove(&["d"]),
            Mutation::Keep {
                path: Arc::from("m.py"),
                expect: *digest,
                keep: vec![],
            },
        ]);
        let union = cut_of(&before, &with_import).expect("a cut");
        assert_ne!(union.key, cut.key);
        assert_eq!(union.pieces.len(), 3);
    }

    #[test]
    fn the_same_bytes_at_another_place_are_another_cut() {
        assert_eq!(occurrences_before(b"x; x; x;", b"x;", 0), 0);
        assert_eq!(occurrences_before(b"x; x; x;", b"x;", 3), 1);
        assert_eq!(occurrences_before(b"x; x; x;", b"x;", 6), 2);
        assert_eq!(occurrences_before(b"x;", b"", 2), 0);
        assert_eq!(occurrences_before(b"x;", b"long needle", 2), 0);
    }

    #[test]
    fn a_failure_is_recalled_until_a_name_it_holds_loses_an_occurrence() {
        let mut recall = Recall::default();
        let cut = Cut {
            key: [7; 32],
            pieces: vec![(Arc::from(&b"use a;\nfn f() { b(); }\n"[..]), vec![0..7])],
        };
        let few = |_: &str| 2;
        assert!(!recall.recalls(&cut, |_| None, few));
        recall.failed(cut.key, 3);
        assert!(recall.recalls(&cut, |_| None, few));
        // A drop of `b`, which the cut does not hold, changes nothing; one of `a` does.
        assert!(recall.recalls(&cut, |n| (n == "b").then_some(9), few));
        assert!(!recall.recalls(&cut, |n| (n == "a").then_some(4), few));
        // A drop at or before the failure was already there when it failed.
        assert!(recall.recalls(&cut, |n| (n == "a").then_some(3), few));
        // A name still used often outside the cut: its drop cannot have freed the cut.
        let many = |_: &str| 1 + FEW_OUTSIDE + 1;
        assert!(recall.recalls(&cut, |n| (n == "a").then_some(4), many));
        let enough = |_: &str| 1 + FEW_OUTSIDE;
        assert!(!recall.recalls(&cut, |n| (n == "a").then_some(4), enough));
    }
}

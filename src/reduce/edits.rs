//! Edit sets: every state of a reduction as a set of edits against the original tree.
//!
//! An [`EditSet`] says which entries of the original tree are deleted (a file, a symlink or
//! a directory with everything below it) and, for each file that was changed, which byte
//! ranges of the *original* file survive and which bytes replace the ranges between them.
//! Because edits always refer to the original, an edit set is a canonical description of a
//! state: it can be printed in a report, replayed, and rebuilt by anyone who holds the
//! original tree.
//!
//! Reducer passes propose [`Mutation`]s relative to the *current* state (delete these paths;
//! keep these byte ranges of this file as it is now; replace these ranges by these bytes). A
//! mutation names the digest of the file content it was computed from, so a mutation that has
//! gone stale is refused, never guessed. Several mutations proposed against one state merge
//! into their union; replacements that overlap each other, or overlap a deletion without lying
//! wholly inside it, cannot be merged and the union is refused when applied.
//!
//! Replacements are bounded: an edit set carries at most [`REPLACEMENTS_MAX`] replacements
//! of at most [`REPLACED_BYTES_MAX`] bytes in all, and their bytes are UTF-8 text, because a
//! certificate lists each of them.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::tree::{Entry, Fingerprint, Node, RelPath, Tree};

/// The most replacements one edit set (and so one certificate) may carry.
pub const REPLACEMENTS_MAX: usize = 4096;

/// The most replacement bytes, in all, one edit set (and so one certificate) may carry.
pub const REPLACED_BYTES_MAX: usize = 64 * 1024;

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
    /// Replace non-empty byte ranges of a file's current content by other bytes (UTF-8
    /// text), and, when `keep` is given, keep only those ranges of the rest (the union of a
    /// cut and replacements inside what it keeps).
    Replace {
        /// The file.
        path: RelPath,
        /// SHA-256 of the content the ranges refer to.
        expect: [u8; 32],
        /// Ranges of the current content to keep (`None`: all of it).
        keep: Option<Vec<Range<usize>>>,
        /// Sorted, disjoint, non-empty ranges of the current content, each with its
        /// replacement.
        replace: Vec<(Range<usize>, Arc<[u8]>)>,
    },
    /// Mutations of one file that a union could not merge (overlapping replacements): applying
    /// it is refused.
    Conflict(RelPath),
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
    /// Replacements of a file overlap each other or a cut, or a range is empty or out of
    /// bounds.
    Overlap(RelPath),
    /// A replacement is not UTF-8 text.
    NotText(RelPath),
    /// The edit set would carry more replacements, or replacement bytes, than a certificate
    /// may.
    Bound,
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
    /// Bytes `start..end` of the original file, whose SHA-256 is `sha256`, are replaced by
    /// `with`.
    Replace {
        /// Relative path.
        path: String,
        /// First replaced byte.
        start: usize,
        /// One past the last replaced byte.
        end: usize,
        /// Lowercase hex SHA-256 of the replaced original bytes.
        sha256: String,
        /// The replacement text.
        with: String,
    },
}

/// A piece of a changed file: original bytes, or bytes a replacement put there.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Original(Range<usize>),
    Bytes(Arc<[u8]>),
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Original(r) => r.end - r.start,
            Piece::Bytes(b) => b.len(),
        }
    }
}

/// A state of the reduction, relative to the original tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditSet {
    /// Deleted entries (top-most only: nothing below a deleted directory is listed).
    ///
    /// Both maps are persistent: every candidate starts from a copy of the accepted state's
    /// edit set, which then costs what the candidate changes, not what was accepted before.
    removed: imbl::OrdSet<RelPath>,
    /// For each changed file, its content as pieces: original ranges in increasing order,
    /// and, between two of them, at most one piece of replacement bytes.
    kept: imbl::OrdMap<RelPath, Vec<Piece>>,
}

/// The keys strictly below the directory `dir`, from `keys` in order from `dir/` on (every
/// path below `dir` starts with `dir/`, so they come first and together).
fn keys_below<'a>(keys: impl Iterator<Item = &'a RelPath>, dir: &str) -> Vec<RelPath> {
    keys.take_while(|k| under(k, dir)).cloned().collect()
}

fn under(path: &str, dir: &str) -> bool {
    path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// Sorts ranges and merges those that overlap or touch; empty ones are dropped.
pub(crate) fn normalise(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
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

/// Range `want` of the content that `pieces` make, as pieces.
fn slice(pieces: &[Piece], want: &Range<usize>, out: &mut Vec<Piece>) {
    let mut offset = 0;
    for piece in pieces {
        let len = piece.len();
        let lo = want.start.max(offset);
        let hi = want.end.min(offset + len);
        if lo < hi {
            out.push(match piece {
                Piece::Original(r) => {
                    Piece::Original(r.start + (lo - offset)..r.start + (hi - offset))
                }
                Piece::Bytes(b) => Piece::Bytes(Arc::from(&b[lo - offset..hi - offset])),
            });
        }
        offset += len;
        if offset >= want.end {
            break;
        }
    }
}

/// The bytes that `pieces` make, their original ranges taken from `data`.
fn content(pieces: &[Piece], data: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(pieces.iter().map(Piece::len).sum());
    for piece in pieces {
        match piece {
            Piece::Original(r) => bytes.extend_from_slice(&data[r.clone()]),
            Piece::Bytes(b) => bytes.extend_from_slice(b),
        }
    }
    bytes
}

/// Joins contiguous original ranges and neighbouring replacement bytes, dropping empty
/// pieces: the canonical form.
fn join(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        if piece.len() == 0 {
            continue;
        }
        match (out.last_mut(), piece) {
            (Some(Piece::Original(last)), Piece::Original(r)) if last.end == r.start => {
                last.end = r.end;
            }
            (Some(Piece::Bytes(last)), Piece::Bytes(b)) => {
                let mut joined = last.to_vec();
                joined.extend_from_slice(&b);
                *last = Arc::from(joined);
            }
            (_, piece) => out.push(piece),
        }
    }
    out
}

/// A file's change: the kept ranges of its current content (`None`: all) and replacements
/// inside them.
struct Splice {
    expect: [u8; 32],
    keep: Option<Vec<Range<usize>>>,
    replace: Vec<(Range<usize>, Arc<[u8]>)>,
    conflict: bool,
}

impl Splice {
    /// The merged mutation of `path`.
    fn finish(self, path: RelPath) -> Option<Mutation> {
        let Splice {
            expect,
            keep,
            mut replace,
            conflict,
        } = self;
        if conflict {
            return Some(Mutation::Conflict(path));
        }
        if replace.is_empty() {
            return keep.map(|keep| Mutation::Keep { path, expect, keep });
        }
        replace.sort_by_key(|(r, _)| (r.start, r.end));
        replace.dedup();
        for pair in replace.windows(2) {
            if pair[1].0.start < pair[0].0.end {
                return Some(Mutation::Conflict(path));
            }
        }
        if let Some(keep) = &keep {
            let mut merged = Vec::with_capacity(replace.len());
            for (range, with) in replace {
                let inside = keep
                    .iter()
                    .any(|k| k.start <= range.start && range.end <= k.end);
                let outside = keep
                    .iter()
                    .all(|k| k.end <= range.start || range.end <= k.start);
                if inside {
                    merged.push((range, with));
                } else if !outside {
                    return Some(Mutation::Conflict(path));
                }
            }
            replace = merged;
            if replace.is_empty() {
                return Some(Mutation::Keep {
                    path,
                    expect,
                    keep: keep.clone(),
                });
            }
        }
        Some(Mutation::Replace {
            path,
            expect,
            keep,
            replace,
        })
    }
}

impl Mutation {
    /// Whether the mutation replaces bytes anywhere.
    fn replaces(&self) -> bool {
        match self {
            Mutation::Replace { .. } => true,
            Mutation::Union(parts) => parts.iter().any(Mutation::replaces),
            Mutation::Remove(_) | Mutation::Keep { .. } | Mutation::Conflict(_) => false,
        }
    }

    /// The union of mutations proposed against one state: deletions are joined, cuts of one
    /// file keep only what every cut keeps, replacements inside what is kept are joined,
    /// and cuts below a deleted path are dropped. Replacements that overlap each other or
    /// straddle a cut give a [`Mutation::Conflict`], which is refused when applied.
    pub fn union(mutations: &[Mutation]) -> Mutation {
        let mut removed: BTreeSet<RelPath> = BTreeSet::new();
        let mut files: BTreeMap<RelPath, Splice> = BTreeMap::new();
        let mut stack: Vec<&Mutation> = mutations.iter().collect();
        let mut conflicts: Vec<RelPath> = Vec::new();
        while let Some(m) = stack.pop() {
            let (path, expect, keep, replace) = match m {
                Mutation::Remove(paths) => {
                    removed.extend(paths.iter().cloned());
                    continue;
                }
                Mutation::Keep { path, expect, keep } => (path, expect, Some(keep), &[][..]),
                Mutation::Replace {
                    path,
                    expect,
                    keep,
                    replace,
                } => (path, expect, keep.as_ref(), &replace[..]),
                Mutation::Conflict(path) => {
                    conflicts.push(path.clone());
                    continue;
                }
                Mutation::Union(inner) => {
                    stack.extend(inner.iter());
                    continue;
                }
            };
            let keep = keep.map(|k| normalise(k.clone()));
            let entry = files.entry(path.clone()).or_insert(Splice {
                expect: *expect,
                keep: None,
                replace: Vec::new(),
                conflict: false,
            });
            if entry.expect != *expect {
                entry.conflict = true;
            }
            if let Some(keep) = keep {
                entry.keep = Some(match entry.keep.take() {
                    Some(have) => intersect(&have, &keep),
                    None => keep,
                });
            }
            entry.replace.extend(replace.iter().cloned());
        }
        let mut parts = Vec::new();
        if !removed.is_empty() {
            parts.push(Mutation::Remove(removed.iter().cloned().collect()));
        }
        let gone = |path: &str| removed.iter().any(|r| **r == *path || under(path, r));
        for (path, splice) in files {
            if !gone(&path)
                && let Some(m) = splice.finish(path)
            {
                parts.push(m);
            }
        }
        for path in conflicts {
            if !gone(&path) {
                parts.push(Mutation::Conflict(path));
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
    /// [`Stale`] when the mutation no longer fits the state, its replacements overlap, or
    /// the next state would carry more replacements than a certificate may.
    pub fn apply(
        &self,
        current: &Tree,
        original: &Tree,
        mutation: &Mutation,
    ) -> Result<(EditSet, Tree), Stale> {
        let mut edits = self.clone();
        let mut tree = current.clone();
        edits.apply_one(&mut tree, original, mutation)?;
        // Only a replacement adds replaced bytes: a cut or a deletion never does.
        if mutation.replaces() {
            let (count, bytes) = edits.replaced();
            if count > REPLACEMENTS_MAX || bytes > REPLACED_BYTES_MAX {
                return Err(Stale::Bound);
            }
        }
        Ok((edits, tree))
    }

    /// How many replacements this edit set carries, and their bytes in all.
    pub fn replaced(&self) -> (usize, usize) {
        self.kept
            .values()
            .flatten()
            .filter_map(|p| match p {
                Piece::Bytes(b) => Some(b.len()),
                Piece::Original(_) => None,
            })
            .fold((0, 0), |(n, sum), len| (n + 1, sum + len))
    }

    fn apply_one(&mut self, tree: &mut Tree, original: &Tree, m: &Mutation) -> Result<(), Stale> {
        match m {
            Mutation::Remove(paths) => {
                for path in paths {
                    if !tree.entries.contains_key(path) {
                        return Err(Stale::Missing(path.clone()));
                    }
                    tree.remove_subtree(path);
                    let from: RelPath = Arc::from(format!("{path}/"));
                    let below = keys_below(self.removed.range(from.clone()..), path);
                    for r in below {
                        self.removed.remove(&r);
                    }
                    let below = keys_below(self.kept.range(from..).map(|(k, _)| k), path);
                    for k in below {
                        self.kept.remove(&k);
                    }
                    self.kept.remove(path);
                    self.removed.insert(path.clone());
                }
            }
            Mutation::Keep { path, expect, keep } => {
                self.splice(tree, original, path, expect, Some(keep), &[])?;
            }
            Mutation::Replace {
                path,
                expect,
                keep,
                replace,
            } => {
                self.splice(tree, original, path, expect, keep.as_ref(), replace)?;
            }
            Mutation::Conflict(path) => return Err(Stale::Overlap(path.clone())),
            Mutation::Union(inner) => {
                for part in inner {
                    self.apply_one(tree, original, part)?;
                }
            }
        }
        Ok(())
    }

    /// Keeps `keep` of a file's current content (all of it when `None`) with `replace`d
    /// ranges inside it.
    fn splice(
        &mut self,
        tree: &mut Tree,
        original: &Tree,
        path: &RelPath,
        expect: &[u8; 32],
        keep: Option<&Vec<Range<usize>>>,
        replace: &[(Range<usize>, Arc<[u8]>)],
    ) -> Result<(), Stale> {
        let Some(entry) = tree.entries.get(path) else {
            return Err(Stale::Missing(path.clone()));
        };
        let Node::File { data, digest } = &entry.node else {
            return Err(Stale::Changed(path.clone()));
        };
        if digest != expect {
            return Err(Stale::Changed(path.clone()));
        }
        let keep = match keep {
            Some(keep) => normalise(keep.clone()),
            None => normalise(vec![0..data.len()]),
        };
        if keep.iter().any(|r| r.end > data.len()) {
            return Err(Stale::Changed(path.clone()));
        }
        let mut at = 0;
        for (range, with) in replace {
            let inside = keep
                .iter()
                .any(|k| k.start <= range.start && range.end <= k.end);
            if range.start < at || range.start >= range.end || !inside {
                return Err(Stale::Overlap(path.clone()));
            }
            if std::str::from_utf8(with).is_err() {
                return Err(Stale::NotText(path.clone()));
            }
            at = range.end;
        }
        // The new content, as ranges of the current content and inserted bytes.
        let mut current: Vec<Piece> = Vec::new();
        let mut next = replace.iter().peekable();
        for k in &keep {
            let mut at = k.start;
            while let Some((range, with)) = next.next_if(|(r, _)| r.end <= k.end) {
                current.push(Piece::Original(at..range.start));
                current.push(Piece::Bytes(with.clone()));
                at = range.end;
            }
            current.push(Piece::Original(at..k.end));
        }
        let bytes = content(&current, data);
        let original_len = original
            .entries
            .get(path)
            .and_then(|e| e.node.data())
            .map_or(data.len(), |d| d.len());
        let segments = self
            .kept
            .get(path)
            .cloned()
            .unwrap_or_else(|| vec![Piece::Original(0..original_len)]);
        let mut mapped = Vec::with_capacity(current.len());
        for piece in current {
            match piece {
                Piece::Original(r) => slice(&segments, &r, &mut mapped),
                bytes => mapped.push(bytes),
            }
        }
        self.kept.insert(path.clone(), join(mapped));
        let meta = entry.meta;
        tree.entries.insert(
            path.clone(),
            Entry {
                node: Node::file(Arc::from(bytes)),
                meta,
            },
        );
        Ok(())
    }

    /// The edits, deletions first, in path order; then each changed file's deleted and
    /// replaced ranges of the original, in order.
    pub fn edits(&self, original: &Tree) -> Vec<Edit> {
        let mut out: Vec<Edit> = self
            .removed
            .iter()
            .map(|p| Edit::Delete {
                path: p.to_string(),
            })
            .collect();
        for (path, pieces) in &self.kept {
            let data = original.entries.get(path).and_then(|e| e.node.data());
            let len = data.map_or(0, |d| d.len());
            let mut at = 0;
            let mut with: Option<&Arc<[u8]>> = None;
            let end = Piece::Original(len..len);
            for piece in pieces.iter().chain(std::iter::once(&end)) {
                match piece {
                    Piece::Bytes(b) => with = Some(b),
                    Piece::Original(r) => {
                        let path = path.to_string();
                        match with.take() {
                            Some(b) => out.push(Edit::Replace {
                                sha256: data
                                    .and_then(|d| d.get(at..r.start))
                                    .map(|d| Fingerprint(Sha256::digest(d).into()).to_string())
                                    .unwrap_or_default(),
                                with: String::from_utf8_lossy(b).into_owned(),
                                path,
                                start: at,
                                end: r.start,
                            }),
                            None if r.start > at => out.push(Edit::DeleteBytes {
                                path,
                                start: at,
                                end: r.start,
                            }),
                            None => {}
                        }
                        at = r.end;
                    }
                }
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
        for (path, pieces) in &self.kept {
            if let Some(entry) = tree.entries.get_mut(path)
                && let Some(data) = entry.node.data()
            {
                entry.node = Node::file(Arc::from(content(pieces, data)));
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
        // A cut file and a deleted file below `d`, and a deleted file beside it whose name
        // sorts right after `d/`'s entries.
        let original = tree(&[
            ("d", ""),
            ("d/x.txt", "xyz"),
            ("d/y.txt", "y"),
            ("d0.txt", "z"),
        ]);
        let cut = Mutation::Keep {
            path: Arc::from("d/x.txt"),
            expect: digest(&original, "d/x.txt"),
            keep: vec![0..1],
        };
        let (edits, t) = EditSet::default()
            .apply(&original, &original, &cut)
            .unwrap();
        let gone = Mutation::Remove(vec![Arc::from("d/y.txt"), Arc::from("d0.txt")]);
        let (edits, t) = edits.apply(&t, &original, &gone).unwrap();
        let (edits, _) = edits
            .apply(&t, &original, &Mutation::Remove(vec![Arc::from("d")]))
            .unwrap();
        assert_eq!(
            edits.edits(&original),
            vec![
                Edit::Delete { path: "d".into() },
                Edit::Delete {
                    path: "d0.txt".into()
                }
            ]
        );
    }

    use crate::test_rng::XorShift as Rng;

    #[test]
    fn any_sequence_of_cuts_replays_from_its_edit_set() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
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
                    Edit::Delete { .. } | Edit::Replace { .. } => 0,
                })
                .sum();
            assert_eq!(deleted + expected.len(), text.len());
        }
    }

    fn replace(t: &Tree, path: &str, parts: &[(Range<usize>, &str)]) -> Mutation {
        Mutation::Replace {
            path: Arc::from(path),
            expect: digest(t, path),
            keep: None,
            replace: parts
                .iter()
                .map(|(r, w)| (r.clone(), Arc::from(w.as_bytes())))
                .collect(),
        }
    }

    #[test]
    fn a_replacement_is_listed_with_the_hash_of_what_it_replaced_and_survives_later_cuts() {
        let original = tree(&[("a.c", "let x = 12345;")]);
        let m = replace(&original, "a.c", &[(8..13, "0")]);
        let (edits, t1) = EditSet::default().apply(&original, &original, &m).unwrap();
        assert_eq!(text(&t1, "a.c"), "let x = 0;");
        let keep = Mutation::Keep {
            path: Arc::from("a.c"),
            expect: digest(&t1, "a.c"),
            keep: vec![4..10],
        };
        let (edits, t2) = edits.apply(&t1, &original, &keep).unwrap();
        assert_eq!(text(&t2, "a.c"), "x = 0;");
        assert_eq!(
            edits.edits(&original),
            vec![
                Edit::DeleteBytes {
                    path: "a.c".into(),
                    start: 0,
                    end: 4
                },
                Edit::Replace {
                    path: "a.c".into(),
                    start: 8,
                    end: 13,
                    sha256: Fingerprint(Sha256::digest(b"12345").into()).to_string(),
                    with: "0".into()
                },
            ]
        );
        assert_eq!(edits.materialise(&original), t2);
        assert_eq!(edits.replaced(), (1, 1));
        // A cut through the replacement's own bytes keeps what is left of them.
        let m = replace(&t2, "a.c", &[(4..5, "long")]);
        let (edits, t3) = edits.apply(&t2, &original, &m).unwrap();
        assert_eq!(text(&t3, "a.c"), "x = long;");
        let keep = Mutation::Keep {
            path: Arc::from("a.c"),
            expect: digest(&t3, "a.c"),
            keep: vec![0..5, 7..9],
        };
        let (edits, t4) = edits.apply(&t3, &original, &keep).unwrap();
        assert_eq!(text(&t4, "a.c"), "x = lg;");
        assert_eq!(edits.materialise(&original), t4);
        let rebuilt =
            crate::gate::certificate::apply_edits(&original, &edits.edits(&original)).unwrap();
        assert_eq!(rebuilt, t4);
    }

    #[test]
    fn unions_merge_disjoint_replacements_and_refuse_overlapping_ones() {
        let original = tree(&[("a.c", "f(10, 20, 30);")]);
        let d = digest(&original, "a.c");
        let apply = |parts: &[Mutation]| {
            EditSet::default()
                .apply(&original, &original, &Mutation::union(parts))
                .map(|(_, t)| text(&t, "a.c"))
        };
        let ten = replace(&original, "a.c", &[(2..4, "0")]);
        let twenty = replace(&original, "a.c", &[(6..8, "1")]);
        assert_eq!(
            apply(&[ten.clone(), twenty.clone()]).unwrap(),
            "f(0, 1, 30);"
        );
        // The same replacement twice is one.
        assert_eq!(apply(&[ten.clone(), ten.clone()]).unwrap(), "f(0, 20, 30);");
        // Two replacements of overlapping ranges cannot both hold.
        let wide = replace(&original, "a.c", &[(2..8, "x")]);
        assert_eq!(
            apply(&[ten.clone(), wide]),
            Err(Stale::Overlap(Arc::from("a.c")))
        );
        // A replacement inside what a cut deletes goes with it; one inside what it keeps
        // stays; one straddling its edge is refused.
        let cut = Mutation::Keep {
            path: Arc::from("a.c"),
            expect: d,
            keep: vec![0..2, 10..14],
        };
        assert_eq!(apply(&[ten.clone(), cut.clone()]).unwrap(), "f(30);");
        let thirty = replace(&original, "a.c", &[(10..12, "0")]);
        assert_eq!(apply(&[thirty, cut.clone()]).unwrap(), "f(0);");
        let edge = replace(&original, "a.c", &[(8..12, "0")]);
        assert_eq!(apply(&[edge, cut]), Err(Stale::Overlap(Arc::from("a.c"))));
        // Ranges a replacement cannot name.
        for bad in [
            replace(&original, "a.c", &[(3..3, "0")]),
            replace(&original, "a.c", &[(4..6, "0"), (2..5, "1")]),
            replace(&original, "a.c", &[(12..15, "0")]),
        ] {
            assert_eq!(apply(&[bad]), Err(Stale::Overlap(Arc::from("a.c"))));
        }
    }

    #[test]
    fn replacements_are_text_and_bounded() {
        let original = tree(&[("a.c", "0123456789")]);
        let binary = Mutation::Replace {
            path: Arc::from("a.c"),
            expect: digest(&original, "a.c"),
            keep: None,
            replace: vec![(0..1, Arc::from(&b"\xff"[..]))],
        };
        assert_eq!(
            EditSet::default().apply(&original, &original, &binary),
            Err(Stale::NotText(Arc::from("a.c")))
        );
        let huge = "x".repeat(REPLACED_BYTES_MAX + 1);
        let m = replace(&original, "a.c", &[(0..1, &huge)]);
        assert_eq!(
            EditSet::default().apply(&original, &original, &m),
            Err(Stale::Bound)
        );
        let just = "x".repeat(REPLACED_BYTES_MAX);
        let m = replace(&original, "a.c", &[(0..1, &just)]);
        assert!(EditSet::default().apply(&original, &original, &m).is_ok());
    }

    #[test]
    fn any_sequence_of_cuts_and_replacements_rebuilds_from_its_listed_edits() {
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        for _ in 0..400 {
            let len = rng.below(50);
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let original = tree(&[("f.txt", &text), ("g.txt", "gg")]);
            let mut edits = EditSet::default();
            let mut current = original.clone();
            for _ in 0..rng.below(6) + 1 {
                let data = current.entries["f.txt"].node.data().unwrap().clone();
                // Walk the content in random steps, keeping, dropping or replacing each.
                let mut keep = Vec::new();
                let mut parts: Vec<(Range<usize>, Arc<[u8]>)> = Vec::new();
                let mut at = 0;
                while at < data.len() {
                    let end = (at + rng.below(6) + 1).min(data.len());
                    match rng.below(4) {
                        0 => {}
                        1 => {
                            let with = &b"XYZ"[..rng.below(3) + 1];
                            parts.push((at..end, Arc::from(with)));
                            keep.push(at..end);
                        }
                        _ => keep.push(at..end),
                    }
                    at = end;
                }
                let m = if parts.is_empty() || rng.below(2) == 0 {
                    Mutation::Keep {
                        path: Arc::from("f.txt"),
                        expect: digest(&current, "f.txt"),
                        keep,
                    }
                } else {
                    // A cut and replacements proposed apart, merged by the union.
                    let expect = digest(&current, "f.txt");
                    Mutation::union(&[
                        Mutation::Keep {
                            path: Arc::from("f.txt"),
                            expect,
                            keep,
                        },
                        Mutation::Replace {
                            path: Arc::from("f.txt"),
                            expect,
                            keep: None,
                            replace: parts.clone(),
                        },
                    ])
                };
                let mut expected = Vec::new();
                let Ok((next, tree)) = edits.apply(&current, &original, &m) else {
                    panic!("{m:?} on {:?}", String::from_utf8_lossy(&data));
                };
                if let Mutation::Keep { keep, .. } = &m {
                    for r in keep {
                        expected.extend_from_slice(&data[r.clone()]);
                    }
                } else {
                    let Mutation::Replace { keep, replace, .. } = &m else {
                        panic!("{m:?}");
                    };
                    for r in keep.as_ref().unwrap() {
                        let mut at = r.start;
                        for (range, with) in replace
                            .iter()
                            .filter(|(x, _)| x.start >= r.start && x.end <= r.end)
                        {
                            expected.extend_from_slice(&data[at..range.start]);
                            expected.extend_from_slice(with);
                            at = range.end;
                        }
                        expected.extend_from_slice(&data[at..r.end]);
                    }
                }
                (edits, current) = (next, tree);
                assert_eq!(
                    &**current.entries["f.txt"].node.data().unwrap(),
                    &expected[..]
                );
            }
            assert_eq!(edits.materialise(&original), current);
            let listed = edits.edits(&original);
            let rebuilt = crate::gate::certificate::apply_edits(&original, &listed).unwrap();
            assert_eq!(rebuilt, current, "{listed:?}");
            // The listed form is canonical: replaying it gives the same list.
            let replayed = listed
                .iter()
                .all(|e| !matches!(e, Edit::Replace { start, end, .. } if start >= end));
            assert!(replayed, "{listed:?}");
        }
    }
}

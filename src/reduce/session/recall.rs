//! The session's memory of failed cuts: part of the settle state.
//!
//! A cut of one file (a [`Mutation::Keep`]) that the oracle rejected is remembered by what
//! identifies it across states of the file: for each cut range within one line, its bytes
//! and how often they occur before it; for a range over several lines, its first line and
//! the line after it (see [`hash_range`]); a union of such cuts (a declaration with its
//! uses) by all of them. A replacement (a [`Mutation::Replace`]: a function's body by a
//! stub, a literal by a smaller one, names by shorter ones) is remembered the same way,
//! each replaced range by the lines it is written on, from the line that holds what comes
//! before it (see [`written_on`]), with what replaces it; it holds the names from that
//! line's start to its end, so a body's stub holds its function's name and is freed when a
//! caller goes. A deletion of whole entries (a [`Mutation::Remove`], alone or with the
//! lines that reference them) is remembered by its paths, and holds every identifier of
//! the files it deletes; the deletion of one file that holds no identifier is not
//! remembered.
//!
//! The same cut proposed again later, on a tree that changed elsewhere, is answered
//! "rejected" without a run unless an identifier the cut holds now occurs outside the cut
//! less often than when it failed, and rarely: a deletion elsewhere can let this one
//! through by taking away the last uses of something it declares, and that is what the
//! identifier test sees. It frees a cut twice: a cut that failed three times is answered
//! from memory whatever its names do. What it cannot see is caught by the confirming round
//! of the fixed point, in which nothing is recalled and every search that answered a cut
//! from memory runs again (see [`crate::reduce`]).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::reduce::edits::Mutation;
use crate::reduce::identifiers::{binds_nothing, identifiers};
use crate::tree::{Node, Tree};

/// The most failed cuts remembered; past it the memory starts again (a simple bound).
const CAPACITY: usize = 1 << 20;

/// Failed cuts, each with how often every name it holds occurred outside it when it last
/// failed, and how often it failed.
#[derive(Debug, Default)]
pub(super) struct Recall {
    failed: HashMap<[u8; 32], Failed>,
}

/// What the memory keeps of one failed cut.
#[derive(Debug)]
struct Failed {
    /// How often each name the cut holds occurred outside it when it last failed.
    outside: HashMap<Box<str>, u64>,
    /// How often it was answered as failing (by a run, or by the cache of whole trees).
    times: u32,
}

/// How often a cut may fail before the identifier test no longer frees it: a cut that
/// the test freed twice and that failed each time is recalled whatever its names do, until
/// the confirming round runs it once more.
const FREED_AT_MOST: u32 = 3;

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

/// The cut `mutation` makes in `tree`: a [`Mutation::Keep`], a [`Mutation::Replace`], a
/// [`Mutation::Remove`] of entries, or a union of these; `None` for a conflict, or for a
/// cut that does not apply to `tree`.
///
/// A cut of a file's content is known by the bytes it cuts (and where they recur), a
/// replacement by the line it is written on and what replaces it; a deletion of entries
/// by their paths alone, so that a file that shrank elsewhere is still the same deletion.
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
            if digest != expect || !kept_in_order(keep, data.len()) {
                return None;
            }
            let cut = crate::reduce::ranges::complement(data.len(), keep);
            hasher.update(b"k");
            hasher.update(path.len().to_le_bytes());
            hasher.update(path.as_bytes());
            hasher.update(cut.len().to_le_bytes());
            for r in &cut {
                hash_range(hasher, data, r)?;
            }
            pieces.push((data.clone(), cut));
        }
        Mutation::Replace {
            path,
            expect,
            keep,
            replace,
        } => {
            let Node::File { data, digest } = &tree.entries.get(path)?.node else {
                return None;
            };
            if digest != expect
                || replace
                    .iter()
                    .any(|(r, _)| r.start >= r.end || r.end > data.len())
                || replace.windows(2).any(|w| w[1].0.start < w[0].0.end)
                || keep
                    .as_ref()
                    .is_some_and(|keep| !kept_in_order(keep, data.len()))
            {
                return None;
            }
            hasher.update(b"p");
            hasher.update(path.len().to_le_bytes());
            hasher.update(path.as_bytes());
            hasher.update(replace.len().to_le_bytes());
            let mut taken = Vec::with_capacity(replace.len());
            for (r, with) in replace {
                // Known from the lines it is written on, whole: a function's body by its
                // signature, a literal by its line (see `written_on`), with where in
                // them it starts and ends and what replaces it.
                let from = written_on(data, r.start);
                let to = data[r.end..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(data.len(), |i| r.end + i + 1);
                hasher.update((r.start - from).to_le_bytes());
                hasher.update((to - r.end).to_le_bytes());
                hash_range(hasher, data, &(from..to))?;
                hasher.update(with.len().to_le_bytes());
                hasher.update(with);
                taken.push(from..r.end);
            }
            if let Some(keep) = keep {
                let cut = crate::reduce::ranges::complement(data.len(), keep);
                hasher.update(b"k");
                hasher.update(cut.len().to_le_bytes());
                for r in &cut {
                    hash_range(hasher, data, r)?;
                }
                taken.extend(cut);
            }
            pieces.push((data.clone(), crate::reduce::edits::normalise(taken)));
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
        Mutation::Conflict(_) => return None,
    }
    Some(())
}

/// Hashes what identifies the cut range `r` of `data` across states of the file.
///
/// A range within one line is known by its bytes and how often they occur before it. A
/// range over several lines is known by its first line and the line that follows it (each
/// with how often it recurs before), not by what lies between: the tree the cut leaves does
/// not depend on what it takes, so a node whose inside shrank since its deletion failed is
/// still the same cut (a change elsewhere is the identifier test's business), while two
/// nodes cut together end at another line than the first alone.
fn hash_range(hasher: &mut Sha256, data: &[u8], r: &Range<usize>) -> Option<()> {
    let bytes = data.get(r.clone())?;
    let mut part = |tag: &[u8], bytes: &[u8], at: usize| {
        hasher.update(tag);
        hasher.update(bytes.len().to_le_bytes());
        hasher.update(bytes);
        hasher.update(occurrences_before(data, bytes, at).to_le_bytes());
    };
    let inner = &bytes[..bytes.len().saturating_sub(1)];
    let Some(nl) = inner.iter().position(|b| *b == b'\n') else {
        part(b"w", bytes, r.start);
        return Some(());
    };
    part(b"f", &bytes[..=nl], r.start);
    let rest = &data[r.end..];
    let after = &rest[..rest
        .iter()
        .position(|b| *b == b'\n')
        .map_or(rest.len(), |i| i + 1)];
    part(b"a", after, r.end);
    Some(())
}

/// Whether `keep` lists ranges of a content of `len` bytes in order: none backwards, past
/// the end, or overlapping the one before.
fn kept_in_order(keep: &[Range<usize>], len: usize) -> bool {
    keep.iter().all(|r| r.start <= r.end && r.end <= len)
        && keep.windows(2).all(|w| w[1].start >= w[0].end)
}

/// Where the text that a replacement at `at` belongs to starts: the start of the line that
/// holds the last byte before `at` that is not white space (or of the file). A function's
/// body is known by its signature (`fn name(..) {` in Rust, the `def` line above a Python
/// body), so the cut holds the function's name, and a caller that goes frees it; a literal
/// is known by what precedes it on its line.
fn written_on(data: &[u8], at: usize) -> usize {
    let before = &data[..at.min(data.len())];
    let anchor = before
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    before[..anchor]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
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

impl Cut {
    /// The start of what the cut takes, for the trace: at most `max` characters, the
    /// ranges joined by ` | `, each line break shown as `⏎`.
    pub(super) fn excerpt(&self, max: usize) -> String {
        let mut text = String::new();
        for (data, ranges) in &self.pieces {
            for r in ranges {
                if !text.is_empty() {
                    text.push_str(" | ");
                }
                // No character takes more than four bytes: a whole file cut is not copied.
                let bytes = data.get(r.clone()).unwrap_or_default();
                text.push_str(&String::from_utf8_lossy(&bytes[..bytes.len().min(4 * max)]));
                if text.chars().count() > max {
                    break;
                }
            }
        }
        text.replace('\n', "\u{23ce}")
            .replace('\t', " ")
            .chars()
            .take(max)
            .collect()
    }

    /// How often each identifier occurs in what the cut takes.
    fn held(&self) -> HashMap<&str, u64> {
        let mut held: HashMap<&str, u64> = HashMap::new();
        for (data, ranges) in &self.pieces {
            for r in ranges {
                for (name, n) in identifiers(data.get(r.clone()).unwrap_or_default()) {
                    *held.entry(name).or_insert(0) += n as u64;
                }
            }
        }
        held
    }
}

impl Recall {
    /// Remembers that `cut` failed, with how often each name it holds occurs outside it
    /// (`in_tree` gives how often a name occurs in the tree now).
    pub(super) fn failed(&mut self, cut: &Cut, in_tree: impl Fn(&str) -> u64) {
        if self.failed.len() >= CAPACITY {
            self.failed.clear();
        }
        let outside = cut
            .held()
            .into_iter()
            .map(|(name, n)| (Box::from(name), in_tree(name).saturating_sub(n)))
            .collect();
        let times = self.failed.get(&cut.key).map_or(0, |f| f.times) + 1;
        self.failed.insert(cut.key, Failed { outside, times });
    }

    /// How often `cut` failed before (0: never), for the trace.
    pub(super) fn times_failed(&self, cut: &Cut) -> u32 {
        self.failed.get(&cut.key).map_or(0, |f| f.times)
    }

    /// Whether `cut` failed before and nothing since may have let it through: every name it
    /// holds still occurs outside it as often as when it failed, or more than
    /// [`FEW_OUTSIDE`] times; a reserved word that binds nothing (`self`, `return`, see
    /// [`binds_nothing`]) is no such name. A name it holds now that it did not hold then
    /// (a rename) also counts as a change. A cut that failed [`FREED_AT_MOST`] times is
    /// recalled whatever its names do. `in_tree` gives how often a name occurs in the tree
    /// now.
    pub(super) fn recalls(&self, cut: &Cut, in_tree: impl Fn(&str) -> u64) -> bool {
        let Some(then) = self.failed.get(&cut.key) else {
            return false;
        };
        if then.times >= FREED_AT_MOST {
            return true;
        }
        // A reserved word binds nothing: its lost uses free nothing.
        cut.held()
            .into_iter()
            .filter(|(name, _)| !binds_nothing(name))
            .all(|(name, n)| {
                let now = in_tree(name).saturating_sub(n);
                then.outside
                    .get(name)
                    .is_some_and(|&was| now >= was || now > FEW_OUTSIDE)
            })
    }
}

/// How many occurrences of a name may be left outside a cut for a drop of it to count: the
/// last uses of what the cut declares (a use and its import).
const FEW_OUTSIDE: u64 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest of the file `path` of `tree`.
    fn digest_of(tree: &Tree, path: &str) -> [u8; 32] {
        let Node::File { digest, .. } = &tree.entries[path].node else {
            panic!("{path} is no file");
        };
        *digest
    }

    #[test]
    fn a_cut_that_does_not_apply_is_no_cut() {
        let tree = crate::reduce::edits::tests::tree(&[("m.txt", "abc\n")]);
        let digest = digest_of(&tree, "m.txt");
        let keep = |keep: Vec<Range<usize>>, expect: [u8; 32]| Mutation::Keep {
            path: Arc::from("m.txt"),
            expect,
            keep,
        };
        assert!(cut_of(&tree, &keep(vec![0..1], digest)).is_some());
        // Past the end, backwards, overlapping, another content: refused, never a panic.
        assert!(cut_of(&tree, &keep(vec![0..1, 9..12], digest)).is_none());
        #[expect(clippy::reversed_empty_ranges, reason = "the bad input under test")]
        let backwards = vec![3..1];
        assert!(cut_of(&tree, &keep(backwards, digest)).is_none());
        assert!(cut_of(&tree, &keep(vec![0..3, 1..2], digest)).is_none());
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
        let digest = digest_of(&before, "m.py");
        let with_import = Mutation::Union(vec![
            remove(&["d"]),
            Mutation::Keep {
                path: Arc::from("m.py"),
                expect: digest,
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
    fn a_failure_is_recalled_until_a_name_it_holds_loses_a_use_outside_it() {
        let mut recall = Recall::default();
        let cut = Cut {
            key: [7; 32],
            pieces: vec![(Arc::from(&b"use a;\nfn f() { b(); }\n"[..]), vec![0..7])],
        };
        // `a` occurs once in the cut; the tree holds it `outside + 1` times.
        let with_outside = |a: u64| move |n: &str| if n == "a" { a + 1 } else { 5 };
        assert!(!recall.recalls(&cut, with_outside(2)));
        recall.failed(&cut, with_outside(2));
        assert!(recall.recalls(&cut, with_outside(2)));
        // A use of `a` outside the cut went: the cut may pass now.
        assert!(!recall.recalls(&cut, with_outside(1)));
        // More uses than before, or still many: nothing was freed.
        assert!(recall.recalls(&cut, with_outside(3)));
        let mut many = Recall::default();
        many.failed(&cut, with_outside(FEW_OUTSIDE + 5));
        assert!(many.recalls(&cut, with_outside(FEW_OUTSIDE + 1)));
        assert!(!many.recalls(&cut, with_outside(FEW_OUTSIDE)));
        // A name the cut holds now and did not hold when it failed is a change too.
        let renamed = Cut {
            key: [7; 32],
            pieces: vec![(Arc::from(&b"use z;\n"[..]), vec![0..7])],
        };
        assert!(!recall.recalls(&renamed, with_outside(FEW_OUTSIDE + 5)));
    }

    #[test]
    fn a_reserved_word_that_loses_a_use_frees_nothing() {
        let mut recall = Recall::default();
        let cut = Cut {
            key: [8; 32],
            pieces: vec![(Arc::from(&b"def f(self):\n    return g\n"[..]), vec![0..26])],
        };
        // `self`, `def` and `return` occur twice outside the cut, `g` three times.
        let counts = |reserved: u64, g: u64| {
            move |n: &str| match n {
                "self" | "def" | "return" => reserved + 1,
                "g" => g + 1,
                _ => 5,
            }
        };
        recall.failed(&cut, counts(2, 3));
        // A method that used `self` and returned went: still recalled.
        assert!(recall.recalls(&cut, counts(1, 3)));
        assert!(recall.recalls(&cut, counts(0, 3)));
        // A use of `g` went: freed.
        assert!(!recall.recalls(&cut, counts(2, 2)));
    }

    /// A cut known by `key` that takes the whole of `text`.
    fn whole(key: u8, text: &[u8]) -> Cut {
        Cut {
            key: [key; 32],
            pieces: vec![(Arc::from(text), vec![0..text.len()])],
        }
    }

    #[test]
    fn a_cut_freed_and_failed_again_is_recalled_whatever_its_names_do() {
        let mut recall = Recall::default();
        let cut = whole(9, b"use a;\n");
        let with_outside = |a: u64| move |n: &str| if n == "a" { a + 1 } else { 5 };
        recall.failed(&cut, with_outside(FEW_OUTSIDE + 1));
        // Freed by each lost use of `a`, run, and failed again, until it failed
        // FREED_AT_MOST times.
        for outside in (FEW_OUTSIDE + 1 - u64::from(FREED_AT_MOST - 1)..=FEW_OUTSIDE).rev() {
            assert!(!recall.recalls(&cut, with_outside(outside)));
            recall.failed(&cut, with_outside(outside));
        }
        // Not freed again by the next lost use, nor by a rename.
        assert!(recall.recalls(&cut, with_outside(0)));
        assert!(recall.recalls(&whole(9, b"use z;\n"), with_outside(0)));
        // Another cut is not concerned.
        assert!(!recall.recalls(&whole(8, b"use a;\n"), with_outside(0)));
    }

    /// The key of the cut that deletes `range` (a substring, its first occurrence) of `text`.
    fn key_of(text: &str, range: &str) -> [u8; 32] {
        let tree = crate::reduce::edits::tests::tree(&[("m.py", text)]);
        let digest = digest_of(&tree, "m.py");
        let start = text.find(range).expect("in the text");
        let mutation = Mutation::Keep {
            path: Arc::from("m.py"),
            expect: digest,
            keep: vec![0..start, start + range.len()..text.len()],
        };
        cut_of(&tree, &mutation).expect("a cut").key
    }

    #[test]
    fn a_node_over_several_lines_is_the_same_cut_after_its_inside_shrank() {
        let before = "class A:\n    def f(self):\n        g()\n    x = 1\nclass B:\n    pass\n";
        let after = "class A:\n    x = 1\nclass B:\n    pass\n";
        let a_before = "class A:\n    def f(self):\n        g()\n    x = 1\n";
        let a_after = "class A:\n    x = 1\n";
        assert_eq!(key_of(before, a_before), key_of(after, a_after));
        // With the next node too it is another cut, and so is the next node alone.
        let both = "class A:\n    x = 1\nclass B:\n    pass\n";
        assert_ne!(key_of(after, both), key_of(after, a_after));
        assert_ne!(
            key_of(after, "class B:\n    pass\n"),
            key_of(after, a_after)
        );
        // Within one line, the bytes themselves.
        assert_ne!(key_of("f(a, b)\n", "a, "), key_of("f(c, b)\n", "c, "));
        // The same first line at another place (after a copy of it) is another cut.
        let twice = "class A:\n    x = 1\nclass A:\n    x = 1\n";
        let second = |t: &str| {
            let tree = crate::reduce::edits::tests::tree(&[("m.py", t)]);
            let digest = digest_of(&tree, "m.py");
            let mutation = Mutation::Keep {
                path: Arc::from("m.py"),
                expect: digest,
                keep: vec![0..19],
            };
            cut_of(&tree, &mutation).expect("a cut").key
        };
        assert_ne!(second(twice), key_of(twice, "class A:\n    x = 1\n"));
    }

    /// The cut of replacing `what` (the first occurrence in `text`, the file `m.py`, as in
    /// [`key_of`]: the memory does not read the language) by `with`.
    fn replaced(text: &str, what: &str, with: &str) -> Cut {
        let tree = crate::reduce::edits::tests::tree(&[("m.py", text)]);
        let digest = digest_of(&tree, "m.py");
        let start = text.find(what).expect("in the text");
        let mutation = Mutation::Replace {
            path: Arc::from("m.py"),
            expect: digest,
            keep: None,
            replace: vec![(start..start + what.len(), Arc::from(with.as_bytes()))],
        };
        cut_of(&tree, &mutation).expect("a cut")
    }

    #[test]
    fn a_replaced_body_is_known_by_its_signature_and_holds_its_function_s_name() {
        let body = "{\n    let x = 2;\n    x + 1\n}";
        let shrunk = "{\n    3\n}";
        let text = format!("fn top() {{}}\nfn used() -> u8 {body}\nfn main() {{ used(); }}\n");
        let stub = replaced(&text, body, "{ todo!() }");
        // Its name is what the cut holds: a caller that goes frees the stub.
        let held = stub.held();
        assert_eq!(held.get("used"), Some(&1), "{held:?}");
        assert_eq!(held.get("top"), None, "{held:?}");
        // The same stub after the body shrank, and after a function above it went.
        let later = format!("fn used() -> u8 {shrunk}\nfn main() {{ used(); }}\n");
        assert_eq!(replaced(&later, shrunk, "{ todo!() }").key, stub.key);
        // Another replacement of the same body, or the same stub of another function's
        // body, is another cut; so is the deletion of the body.
        assert_ne!(replaced(&text, body, "{ 0 }").key, stub.key);
        let other = format!("fn other() -> u8 {body}\nfn main() {{ other(); }}\n");
        assert_ne!(replaced(&other, body, "{ todo!() }").key, stub.key);
        assert_ne!(key_of(&text, body), stub.key);
        // A Python body starts on the line after its `def`, which still names it.
        let py = "def f(a):\n    return a + 1\n";
        let cut = replaced(py, "return a + 1", "...");
        let held = cut.held();
        assert_eq!(held.get("f"), Some(&1), "{held:?}");
    }

    #[test]
    fn a_replaced_literal_is_known_by_its_line_and_a_stale_replacement_is_no_cut() {
        let text = "let a = f(12345);\nlet b = f(12345);\n";
        let first = replaced(text, "12345", "0");
        // The second literal, the same bytes after the same text on another line, is
        // another cut (the first line occurs once before it).
        let tree = crate::reduce::edits::tests::tree(&[("m.py", text)]);
        let digest = digest_of(&tree, "m.py");
        let second = text.rfind("12345").expect("in the text");
        let replace = |range: Range<usize>, expect: [u8; 32]| Mutation::Replace {
            path: Arc::from("m.py"),
            expect,
            keep: None,
            replace: vec![(range, Arc::from(&b"0"[..]))],
        };
        let at = text.find("12345").expect("in the text");
        let again = cut_of(&tree, &replace(at..at + 5, digest)).expect("a cut");
        assert_eq!(again.key, first.key);
        let other = cut_of(&tree, &replace(second..second + 5, digest)).expect("a cut");
        assert_ne!(other.key, first.key);
        // Stale, empty or past the end: no cut, never a panic.
        assert!(cut_of(&tree, &replace(second..second + 5, [0; 32])).is_none());
        assert!(cut_of(&tree, &replace(3..3, digest)).is_none());
        assert!(cut_of(&tree, &replace(30..99, digest)).is_none());
        // So is one whose kept ranges run past the end.
        let Mutation::Replace { replace: parts, .. } = replace(at..at + 5, digest) else {
            unreachable!("a replacement");
        };
        let past = Mutation::Replace {
            path: Arc::from("m.py"),
            expect: digest,
            keep: Some(vec![0..at + 5, at + 6..99]),
            replace: parts,
        };
        assert!(cut_of(&tree, &past).is_none());
    }
}

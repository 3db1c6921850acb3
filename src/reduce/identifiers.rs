//! Identifiers in file contents: where they occur, how often, and which ones a change
//! took away.
//!
//! An identifier is a run of `[A-Za-z_][A-Za-z0-9_]*` that does not start inside a number.
//! The session counts them over the accepted tree to tell which files a commit may have made
//! reducible again; the declarations pass indexes their occurrences per state to find the
//! uses of a declared name. This module works on trees and bytes only.

use std::collections::HashMap;
use std::ops::Range;

use crate::tree::{Node, RelPath, Tree};

/// The byte ranges of the identifiers (`[A-Za-z_][A-Za-z0-9_]*` runs) of `data`, in order.
pub(crate) fn identifier_spans(data: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < data.len() && (data[i].is_ascii_alphanumeric() || data[i] == b'_') {
                i += 1;
            }
            out.push(start..i);
        } else if b.is_ascii_digit() {
            // A number's letters (`0x1f`, `10u8`) are no identifier.
            while i < data.len() && (data[i].is_ascii_alphanumeric() || data[i] == b'_') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The identifiers of `data` (see [`identifier_spans`]), with their counts.
pub(crate) fn identifiers(data: &[u8]) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    for r in identifier_spans(data) {
        if let Ok(name) = std::str::from_utf8(&data[r]) {
            *out.entry(name).or_insert(0) += 1;
        }
    }
    out
}

/// Reserved words of the languages the syntax pass reads (Python, Rust, JavaScript and
/// TypeScript, Java, Go, C and C++) that name no declaration there, nor commonly
/// anywhere else: a word that a program cannot bind, so a use of it that goes frees
/// nothing that declares it. Words that are keywords in one language but common names in
/// another (`match`, `new`, `default`, `from`, `type`, `loop`, `func`, `var`, `do`, `map`)
/// are not in it. Sorted, for the binary search of [`binds_nothing`].
const UNBINDABLE: &[&str] = &[
    "False",
    "None",
    "Self",
    "True",
    "async",
    "await",
    "break",
    "catch",
    "class",
    "const",
    "continue",
    "def",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "finally",
    "fn",
    "for",
    "function",
    "if",
    "impl",
    "import",
    "in",
    "instanceof",
    "interface",
    "lambda",
    "let",
    "mut",
    "nil",
    "null",
    "package",
    "private",
    "protected",
    "pub",
    "public",
    "raise",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "this",
    "throw",
    "trait",
    "true",
    "try",
    "typeof",
    "undefined",
    "void",
    "while",
    "with",
    "yield",
];

/// Whether `name` is a reserved word no program binds (see [`UNBINDABLE`]).
pub(crate) fn binds_nothing(name: &str) -> bool {
    UNBINDABLE.binary_search(&name).is_ok()
}

/// How often each identifier occurs in the regular files of `tree`.
pub(crate) fn count_identifiers(tree: &Tree) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for entry in tree.entries.values() {
        if let Node::File { data, .. } = &entry.node {
            for (name, n) in identifiers(data) {
                *counts.entry(name.to_string()).or_insert(0) += n as u64;
            }
        }
    }
    counts
}

/// How many identifiers may be left in the whole tree for a drop to count anywhere: a
/// definition and a use or two.
const FEW_LEFT: u64 = 3;

/// The identifiers whose removal may let a deletion elsewhere through, for a commit from
/// `before` to `after` that changed the files at or below `paths`; updates `counts`, the
/// tree-wide occurrence counts, to `after`. A name counts when it occurs less often than
/// before and either at most [`FEW_LEFT`] times are left in the tree (a definition whose
/// uses are going) or it left a file that is still there (an import that lost its use).
pub(crate) fn dropped_identifiers(
    before: &Tree,
    after: &Tree,
    paths: &[RelPath],
    counts: &mut HashMap<String, u64>,
) -> Vec<String> {
    let mut files = std::collections::BTreeSet::new();
    for path in paths {
        files.insert(path.clone());
        files.extend(before.descendants(path).map(|(p, _)| p.clone()));
    }
    fn file_names<'t>(tree: &'t Tree, path: &str) -> Option<(HashMap<&'t str, usize>, [u8; 32])> {
        match tree.entries.get(path).map(|e| &e.node) {
            Some(Node::File { data, digest }) => Some((identifiers(data), *digest)),
            _ => None,
        }
    }
    let mut lost: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut left_a_file = std::collections::BTreeSet::new();
    for path in &files {
        let old = file_names(before, path);
        let new = file_names(after, path);
        if let (Some((_, a)), Some((_, b))) = (&old, &new)
            && a == b
        {
            continue;
        }
        let (old, new) = (
            old.map(|o| o.0).unwrap_or_default(),
            new.map(|n| (n.0, true)),
        );
        for (name, count) in &old {
            let now = new
                .as_ref()
                .and_then(|n| n.0.get(name))
                .copied()
                .unwrap_or(0);
            if now < *count {
                lost.insert((*name).to_string());
                if now == 0 && new.is_some() {
                    left_a_file.insert((*name).to_string());
                }
            }
            if let Some(total) = counts.get_mut(*name) {
                *total = total.saturating_sub(*count as u64);
            }
        }
        if let Some((names, _)) = &new {
            for (name, count) in names {
                *counts.entry((*name).to_string()).or_insert(0) += *count as u64;
            }
        }
    }
    lost.into_iter()
        .filter(|name| {
            left_a_file.contains(name) || counts.get(name).copied().unwrap_or(0) <= FEW_LEFT
        })
        .collect()
}

/// Where each identifier occurs in one state of a tree: per name, the files and byte
/// ranges of its occurrences, in path order and then in file order.
pub(crate) struct UseIndex<'t> {
    at: HashMap<&'t [u8], Vec<(&'t RelPath, Range<usize>)>>,
}

impl<'t> UseIndex<'t> {
    /// Indexes every regular file of `tree`.
    pub(crate) fn new(tree: &'t Tree) -> UseIndex<'t> {
        let mut at: HashMap<&[u8], Vec<(&RelPath, Range<usize>)>> = HashMap::new();
        for (file, entry) in &tree.entries {
            if let Node::File { data, .. } = &entry.node {
                for r in identifier_spans(data) {
                    at.entry(&data[r.clone()]).or_default().push((file, r));
                }
            }
        }
        UseIndex { at }
    }

    /// The occurrences of `name`, if it occurs at all.
    pub(crate) fn get(&self, name: &str) -> Option<&[(&'t RelPath, Range<usize>)]> {
        self.at.get(name.as_bytes()).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::reduce::edits::tests::tree;

    #[test]
    fn the_unbindable_words_are_sorted_and_leave_common_names_alone() {
        assert!(UNBINDABLE.windows(2).all(|w| w[0] < w[1]));
        for word in ["self", "return", "def", "fn", "this", "None", "function"] {
            assert!(binds_nothing(word), "{word}");
        }
        for name in [
            "match", "new", "default", "from", "type", "func", "var", "helper",
        ] {
            assert!(!binds_nothing(name), "{name}");
        }
    }

    #[test]
    fn identifiers_are_words_not_numbers() {
        let found = identifiers(b"let x_1 = foo(0x1f, 10u8) + foo(x_1);");
        let mut names: Vec<(&str, usize)> = found.into_iter().collect();
        names.sort_unstable();
        assert_eq!(names, [("foo", 2), ("let", 1), ("x_1", 2)]);
    }

    #[test]
    fn dropped_identifiers_are_those_nearly_gone_or_gone_from_a_file() {
        let before = tree(&[
            (
                "lib.rs",
                "fn helper() {}\nfn used() { helper(); }\nfn other() {}\n",
            ),
            (
                "main.rs",
                "use lib::other;\nfn main() { used(); used(); other(); }\n",
            ),
            ("gone.rs", "fn only_here() {}\n"),
        ]);
        let after = tree(&[
            ("lib.rs", "fn helper() {}\nfn used() {}\nfn other() {}\n"),
            (
                "main.rs",
                "use lib::other;\nfn main() { used(); used(); }\n",
            ),
        ]);
        let mut counts = count_identifiers(&before);
        let paths: Vec<RelPath> = ["lib.rs", "main.rs", "gone.rs"].map(Arc::from).to_vec();
        // `helper` and `only_here` have a definition left at most, `other` one use; `fn`
        // is still everywhere, `used` did not change.
        assert_eq!(
            dropped_identifiers(&before, &after, &paths, &mut counts),
            ["helper", "only_here", "other"]
        );
        assert_eq!(counts["fn"], 4);
        assert_eq!(counts.get("only_here"), Some(&0));
    }

    #[test]
    fn a_deleted_directory_drops_the_names_of_every_file_below_it() {
        // `d.txt` and `d-x` sort between `d` and `d/`: the files below `d` are still found.
        let before = tree(&[
            ("d", ""),
            ("d-x", "fn dash() {}\n"),
            ("d.txt", "fn dot() {}\n"),
            ("d/a.rs", "fn inside() {}\n"),
        ]);
        let after = tree(&[("d-x", "fn dash() {}\n"), ("d.txt", "fn dot() {}\n")]);
        let mut counts = count_identifiers(&before);
        let dropped = dropped_identifiers(&before, &after, &[Arc::from("d")], &mut counts);
        assert!(dropped.iter().any(|name| name == "inside"), "{dropped:?}");
        assert_eq!(counts.get("inside"), Some(&0));
    }
}

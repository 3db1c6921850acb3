//! Syntax-aware deletion and replacement candidates built on tree-sitter.
//!
//! A reducer asks this module where a source file can be cut along its syntax:
//!
//! * [`deletion_levels`] lists deletable elements (statements, items, members,
//!   fields, variants, parameters, arguments, literal elements, imports,
//!   attributes, comments), grouped by parent node and arranged in levels from
//!   the root down.
//! * [`replacements`] lists nodes that can be replaced by one of their
//!   descendants (an expression by a sub-expression, a compound statement by
//!   its body, a block by one of its statements).
//! * [`parses_cleanly`] tells whether a candidate still parses without errors.
//!
//! # Separators and whitespace
//!
//! Tree-sitter node ranges exclude separators, so every deletion range is
//! widened to cover what must go with the node:
//!
//! * In a comma-separated list an element takes the comma after it. The last
//!   element, when no comma follows it, takes the comma before it instead, so
//!   that deleting it from `f(a, b, c)` gives `f(a, b)`. That comma is also
//!   covered by the previous element's range: this is the only way two ranges
//!   of one group can overlap. [`apply_deletions`] removes any subset of a
//!   group correctly, including that case.
//! * A statement or member takes an optional terminator that tree-sitter keeps
//!   outside the node (`;` in Python, Go and C, `;`/`,` in TypeScript types,
//!   `:` after a C++ access specifier).
//! * An element alone on its line(s) takes the line's indentation and its
//!   trailing newline, so that deleting it removes whole lines. An element
//!   followed by more code on the same line takes the blanks after it, unless
//!   that code is a comment; a comment that ends a line of code takes the
//!   blanks before it.
//! * A Rust attribute is deleted with the item, field or statement it
//!   precedes; the attribute alone is offered one level deeper.
//! * No element is offered whose removal must break the syntax: the only
//!   statement of a Python block, the only declarator of a declaration, the
//!   only name of an import, Go's `package` clause, the type argument of Go's
//!   `make`/`new`, or a comment between two words (`int/**/x`).
//!
//! Ranges always fall on node boundaries or next to ASCII bytes, so for UTF-8
//! input they are char boundaries.

mod languages;
mod names;
mod replace;
mod select;

#[cfg(test)]
mod tests;

pub use names::declarations;
pub use replace::replacements;

use select::*;

use std::collections::HashMap;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tree_sitter::{
    Language, LanguageError, Node, ParseOptions, ParseState, Parser, Tree, TreeCursor,
};

/// Largest input, in bytes, that the functions of this module accept.
pub const MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;

/// Time a single parse may take before it is cancelled.
pub const PARSE_TIMEOUT: Duration = Duration::from_secs(10);

/// A language with a tree-sitter grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Python 3.
    Python,
    /// Rust.
    Rust,
    /// JavaScript, including JSX.
    JavaScript,
    /// TypeScript without JSX.
    TypeScript,
    /// TypeScript with JSX.
    Tsx,
    /// Java.
    Java,
    /// Go.
    Go,
    /// C.
    C,
    /// C++.
    Cpp,
}

impl Lang {
    /// Every supported language.
    pub const ALL: [Lang; 9] = [
        Lang::Python,
        Lang::Rust,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Java,
        Lang::Go,
        Lang::C,
        Lang::Cpp,
    ];

    /// A short lowercase name for the language.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Java => "java",
            Lang::Go => "go",
            Lang::C => "c",
            Lang::Cpp => "cpp",
        }
    }

    /// The tree-sitter grammar of the language.
    pub fn grammar(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    fn index(self) -> usize {
        match self {
            Lang::Python => 0,
            Lang::Rust => 1,
            Lang::JavaScript => 2,
            Lang::TypeScript => 3,
            Lang::Tsx => 4,
            Lang::Java => 5,
            Lang::Go => 6,
            Lang::C => 7,
            Lang::Cpp => 8,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The language of a file, from the extension of its name (case-insensitive).
pub fn lang_for_path(path: &str) -> Option<Lang> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(match ext.to_ascii_lowercase().as_str() {
        "py" | "pyi" => Lang::Python,
        "rs" => Lang::Rust,
        "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
        "ts" | "mts" | "cts" => Lang::TypeScript,
        "tsx" => Lang::Tsx,
        "java" => Lang::Java,
        "go" => Lang::Go,
        "c" | "h" => Lang::C,
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
        _ => return None,
    })
}

/// Why a file could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum SyntaxError {
    /// The input is larger than [`MAX_INPUT_BYTES`].
    #[error("input of {size} bytes is over the {limit}-byte limit")]
    TooLarge {
        /// Size of the input in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The grammar is incompatible with the linked tree-sitter runtime.
    #[error("could not load the {lang} grammar: {source}")]
    Grammar {
        /// The language whose grammar failed to load.
        lang: Lang,
        /// The error reported by tree-sitter.
        #[source]
        source: LanguageError,
    },
    /// The parser produced no tree: it was cancelled after the timeout.
    #[error("parsing the {lang} input did not finish within {timeout:?}")]
    Timeout {
        /// The language being parsed.
        lang: Lang,
        /// The time allowed.
        timeout: Duration,
    },
}

/// A candidate replacement: the bytes in `range` are replaced by the bytes in
/// `with`, which lies inside `range`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Replacement {
    /// Bytes to replace.
    pub range: Range<usize>,
    /// Bytes to put in their place, a sub-range of `range`.
    pub with: Range<usize>,
}

impl Replacement {
    /// Applies the replacement to `src`. Out-of-bounds ranges are clamped.
    pub fn apply(&self, src: &[u8]) -> Vec<u8> {
        let range = clamp(&self.range, src.len());
        let with = clamp(&self.with, src.len());
        let mut out = Vec::with_capacity(src.len());
        out.extend_from_slice(&src[..range.start]);
        out.extend_from_slice(&src[with]);
        out.extend_from_slice(&src[range.end..]);
        out
    }
}

/// Deletion candidates: `levels[d]` holds sibling groups, each the ranges of
/// the deletable elements under one parent node.
pub type Levels = Vec<Vec<Vec<Range<usize>>>>;

/// Deletion candidates, level by level from the root down.
///
/// `levels[0]` holds the group of the root's children. A group is at level
/// `d` when its parent node lies inside `d` elements of other groups, so each
/// group of `levels[d + 1]` lies inside one element of `levels[d]`. Within a
/// level, groups come in document order; within a group, ranges are sorted
/// and disjoint, except that the last element of a comma list may start at
/// the comma that its predecessor also covers (see the module docs).
pub fn deletion_levels(lang: Lang, src: &[u8]) -> Result<Levels, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let table = table(lang);
    let mut levels: Levels = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![(tree.root_node(), 0usize)];
    while let Some((node, level)) = stack.pop() {
        let kids = children(node, &mut cursor);
        if kids.is_empty() {
            continue;
        }
        let elems = group_elements(table, src, node, &kids);
        let mut inside = vec![false; kids.len()];
        if !elems.is_empty() {
            let mut attrs = Vec::new();
            for (elem, _) in &elems {
                inside[elem.first..=elem.last].fill(true);
                for kid in &kids[elem.first..elem.first + elem.glued] {
                    if let Some(r) = finish_range(
                        src,
                        kid.node.start_byte(),
                        kid.node.end_byte(),
                        Blanks::After,
                    ) {
                        attrs.push(r);
                    }
                }
            }
            add_group(
                &mut levels,
                level,
                elems.into_iter().map(|(_, r)| r).collect(),
            );
            add_group(&mut levels, level + 1, attrs);
        }
        for (kid, &within) in kids.iter().zip(&inside).rev() {
            if kid.node.child_count() > 0 {
                stack.push((kid.node, level + usize::from(within)));
            }
        }
    }
    Ok(levels)
}

/// The smallest deletion range of `levels` that holds all of `r`.
pub fn smallest_enclosing(levels: &Levels, r: &Range<usize>) -> Option<Range<usize>> {
    levels
        .iter()
        .flatten()
        .flatten()
        .filter(|e| e.start <= r.start && r.end <= e.end)
        .min_by_key(|e| e.len())
        .cloned()
}
/// Whether `src` parses without ERROR or MISSING nodes.
pub fn parses_cleanly(lang: Lang, src: &[u8]) -> Result<bool, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    Ok(!tree.root_node().has_error())
}

/// Removes one range from `src`. An out-of-bounds range is clamped.
pub fn apply_deletion(src: &[u8], range: &Range<usize>) -> Vec<u8> {
    let range = clamp(range, src.len());
    let mut out = Vec::with_capacity(src.len() - range.len());
    out.extend_from_slice(&src[..range.start]);
    out.extend_from_slice(&src[range.end..]);
    out
}

/// Removes the elements `selected` (indices into `group`) of one group
/// returned by [`deletion_levels`] from `src`.
///
/// Overlapping ranges are merged, and a merged cut that starts a line and
/// leaves only blanks on it takes the rest of the line. When a run of
/// selected elements ends with the group's last element and that element took
/// the comma before it, the comma of the element before the run is removed
/// too, so that deleting `b` and `c` from `f(a, b, c)` gives `f(a)`. Invalid
/// indices are ignored and out-of-bounds ranges are clamped.
pub fn apply_deletions(src: &[u8], group: &[Range<usize>], selected: &[usize]) -> Vec<u8> {
    let n = group.len();
    let mut chosen = vec![false; n];
    for &i in selected {
        if let Some(c) = chosen.get_mut(i) {
            *c = true;
        }
    }
    let mut cuts: Vec<Range<usize>> = group
        .iter()
        .zip(&chosen)
        .filter(|(_, c)| **c)
        .map(|(r, _)| clamp(r, src.len()))
        .collect();
    if n >= 2 && chosen[n - 1] && group[n - 1].start < group[n - 2].end {
        let run_start = chosen.iter().rposition(|c| !c).map_or(0, |i| i + 1);
        if run_start >= 1 && run_start < n - 1 {
            let sep = src.get(group[n - 1].start).copied();
            let floor = group[run_start - 1].start;
            let mut p = group[run_start].start.min(src.len());
            while p > floor && src[p - 1].is_ascii_whitespace() {
                p -= 1;
            }
            if p > floor && Some(src[p - 1]) == sep {
                cuts.push(p - 1..group[run_start].start.min(src.len()));
            }
        }
    }
    cuts.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(cuts.len());
    for cut in cuts {
        match merged.last_mut() {
            Some(last) if cut.start <= last.end => last.end = last.end.max(cut.end),
            _ => merged.push(cut),
        }
    }
    let mut out = Vec::with_capacity(src.len());
    let mut pos = 0;
    for mut cut in merged {
        if line_start(src, cut.start) == Some(cut.start)
            && let Some(end) = line_end(src, cut.end)
        {
            cut.end = end;
        }
        if cut.start > pos {
            out.extend_from_slice(&src[pos..cut.start]);
        }
        pos = pos.max(cut.end);
    }
    out.extend_from_slice(&src[pos.min(src.len())..]);
    out
}

fn clamp(r: &Range<usize>, len: usize) -> Range<usize> {
    let end = r.end.min(len);
    r.start.min(end)..end
}

fn parse(lang: Lang, src: &[u8], timeout: Duration) -> Result<Tree, SyntaxError> {
    if src.len() > MAX_INPUT_BYTES {
        return Err(SyntaxError::TooLarge {
            size: src.len(),
            limit: MAX_INPUT_BYTES,
        });
    }
    let mut parser = Parser::new();
    parser
        .set_language(&lang.grammar())
        .map_err(|source| SyntaxError::Grammar { lang, source })?;
    let start = Instant::now();
    let mut progress = |_: &ParseState| start.elapsed() >= timeout;
    let options = ParseOptions::new().progress_callback(&mut progress);
    let mut read = |offset: usize, _| src.get(offset..).unwrap_or_default();
    parser
        .parse_with_options(&mut read, None, Some(options))
        .ok_or(SyntaxError::Timeout { lang, timeout })
}

fn add_group(levels: &mut Levels, level: usize, group: Vec<Range<usize>>) {
    if group.is_empty() {
        return;
    }
    if levels.len() <= level {
        levels.resize_with(level + 1, Vec::new);
    }
    levels[level].push(group);
}

//! The languages with a grammar and what every part of the syntax module shares: the
//! language table, the error type, the replacement type, the levels of deletable ranges,
//! and parsing under a size and time limit.

use std::fmt;
use std::ops::Range;
use std::time::{Duration, Instant};

use tree_sitter::{Language, LanguageError, ParseOptions, ParseState, Parser, Tree};

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

    pub(super) fn index(self) -> usize {
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

/// The language of a file from its name and its content: as [`lang_for_path`], except
/// that a `.h` header is C++ when its content reads as C++ and not as C (it parses cleanly
/// as C++ only, or with fewer errors). A header of C++ templates read as C falls apart into
/// fragments that no single deletion can take whole.
pub fn lang_for_file(path: &str, data: &[u8]) -> Option<Lang> {
    let lang = lang_for_path(path)?;
    let header = path
        .rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("h"));
    if lang == Lang::C && header && reads_as_cpp(data) {
        return Some(Lang::Cpp);
    }
    Some(lang)
}

/// Whether `data` parses as C++ with fewer ERROR and MISSING nodes than as C.
fn reads_as_cpp(data: &[u8]) -> bool {
    let Ok(c) = parse(Lang::C, data, PARSE_TIMEOUT) else {
        return false;
    };
    if !c.root_node().has_error() {
        return false;
    }
    let Ok(cpp) = parse(Lang::Cpp, data, PARSE_TIMEOUT) else {
        return false;
    };
    !cpp.root_node().has_error() || errors(&cpp) < errors(&c)
}

/// How many ERROR and MISSING nodes `tree` holds.
fn errors(tree: &Tree) -> usize {
    let mut cursor = tree.walk();
    let mut count = 0;
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
        }
        // Below an ERROR or a clean node there is nothing more to count.
        if node.has_error() && !node.is_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return count;
            }
        }
    }
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
    #[error("could not load the {lang} grammar")]
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

pub(super) fn clamp(r: &Range<usize>, len: usize) -> Range<usize> {
    let end = r.end.min(len);
    r.start.min(end)..end
}

pub(super) fn parse(lang: Lang, src: &[u8], timeout: Duration) -> Result<Tree, SyntaxError> {
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

pub(super) fn add_group(levels: &mut Levels, level: usize, group: Vec<Range<usize>>) {
    if group.is_empty() {
        return;
    }
    if levels.len() <= level {
        levels.resize_with(level + 1, Vec::new);
    }
    levels[level].push(group);
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
/// returned by [`deletion_levels`](super::deletion_levels) from `src`.
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

/// The start of the line of `pos` when only blanks precede `pos` on it.
pub(super) fn line_start(src: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos;
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    (i == 0 || src[i - 1] == b'\n').then_some(i)
}

/// The position just past the line's newline when only blanks follow `pos`
/// on its line (or `pos` is already just past a newline).
pub(super) fn line_end(src: &[u8], pos: usize) -> Option<usize> {
    if pos > 0 && src[pos - 1] == b'\n' {
        return Some(pos);
    }
    let mut i = pos;
    while i < src.len() && matches!(src[i], b' ' | b'\t' | b'\r') {
        i += 1;
    }
    if i == src.len() {
        Some(i)
    } else if src[i] == b'\n' {
        Some(i + 1)
    } else {
        None
    }
}
/// `src` with each range of `found` (sorted, disjoint) replaced by its text.
#[cfg(test)]
pub(crate) fn replaced(src: &str, found: Vec<(Range<usize>, &str)>) -> String {
    let mut out = String::new();
    let mut at = 0;
    for (r, with) in found {
        out.push_str(&src[at..r.start]);
        out.push_str(with);
        at = r.end;
    }
    out.push_str(&src[at..]);
    out
}

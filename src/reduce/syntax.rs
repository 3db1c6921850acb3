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

/// The top-level declarations of `src` that name something: the deletion range of each
/// (as in `deletion_levels(..)[0]`) with the name it declares (a function, class, type,
/// constant, variable, ...). Elements that declare no single name (`impl` blocks, imports,
/// plain statements) are left out.
pub fn declarations(lang: Lang, src: &[u8]) -> Result<Vec<(Range<usize>, String)>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let levels = deletion_levels(lang, src)?;
    let top: Vec<&Range<usize>> = levels.first().into_iter().flatten().flatten().collect();
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut out = Vec::new();
    for node in root.named_children(&mut cursor) {
        let Some(name) = declared_name(node, src) else {
            continue;
        };
        if let Some(r) = top
            .iter()
            .find(|r| r.start <= node.start_byte() && node.end_byte() <= r.end)
        {
            out.push(((*r).clone(), name));
        }
    }
    Ok(out)
}

/// The name `node` declares, following the grammar's `name`, `declarator`, `definition`
/// and `declaration` fields (and the first declarator or spec of a declaration list).
fn declared_name(node: Node, src: &[u8]) -> Option<String> {
    let leaf = |n: Node| {
        (n.kind().ends_with("identifier") && n.named_child_count() == 0)
            .then(|| n.utf8_text(src).ok().map(str::to_string))
            .flatten()
    };
    let mut n = node;
    for _ in 0..8 {
        if let Some(name) = leaf(n) {
            return Some(name);
        }
        let next = ["definition", "declaration", "name", "declarator", "left"]
            .iter()
            .find_map(|f| n.child_by_field_name(f))
            .or_else(|| {
                let mut cursor = n.walk();
                n.named_children(&mut cursor).find(|c| {
                    let k = c.kind();
                    k.ends_with("declarator")
                        || k.ends_with("_spec")
                        || k == "assignment"
                        || k == "variable_declaration"
                })
            })?;
        n = next;
    }
    None
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

/// Replacement candidates: a node replaced by a compatible descendant.
///
/// Offered are: an expression by each nearest sub-expression (a call by its
/// callee or one of its arguments, a binary expression by an operand, ...);
/// a compound statement (`if`, loops, `try`, ...) by the contents of each of
/// its bodies; the contents of a block with several statements by one of
/// them. `with` is the raw bytes of the descendant, not re-indented; for
/// Python, statement bodies are offered only when they fit on one line.
///
/// Candidates are sorted by the depth of the replaced node (parents before
/// children), then larger `range` first, then position, then smaller `with`.
pub fn replacements(lang: Lang, src: &[u8]) -> Result<Vec<Replacement>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let table = table(lang);
    let mut found: Vec<(usize, Replacement)> = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![(tree.root_node(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let range = node.byte_range();
        if table.expr.has(node) && !table.stop.has(node) && !is_required_parens(node) {
            for sub in nearest_expressions(table, node, &mut cursor) {
                if expression_fits(table, src, node, sub) {
                    found.push((
                        depth,
                        Replacement {
                            range: range.clone(),
                            with: sub.byte_range(),
                        },
                    ));
                }
            }
        }
        let kids = children(node, &mut cursor);
        if table.holder.has(node) && !in_else_position(table, node) {
            for kid in &kids {
                let is_body = matches!(kid.field, Some("body" | "consequence" | "alternative"))
                    || (kid.field.is_none() && table.block.has(kid.node));
                if !is_body {
                    continue;
                }
                if let Some(with) = body_span(table, kid.node, &mut cursor) {
                    let text = src.get(with.clone()).unwrap_or_default();
                    if table.lang == Lang::Python && text.contains(&b'\n') {
                        continue;
                    }
                    if rust_block_statement(table, node)
                        && !matches!(text.last(), Some(b';' | b'}'))
                    {
                        continue;
                    }
                    found.push((
                        depth,
                        Replacement {
                            range: range.clone(),
                            with,
                        },
                    ));
                }
            }
        }
        if table.block.has(node) {
            let named: Vec<Node> = kids.iter().map(|k| k.node).filter(|n| usable(n)).collect();
            let stmts: Vec<Node> = named
                .iter()
                .copied()
                .filter(|n| !table.comment.has(*n))
                .collect();
            if let (true, Some(first), Some(last)) = (stmts.len() >= 2, named.first(), named.last())
            {
                let inner = first.start_byte()..last.end_byte();
                for stmt in stmts {
                    found.push((
                        depth,
                        Replacement {
                            range: inner.clone(),
                            with: stmt.byte_range(),
                        },
                    ));
                }
            }
        }
        for kid in kids.iter().rev() {
            if kid.node.child_count() > 0 {
                stack.push((kid.node, depth + 1));
            }
        }
    }
    found.retain(|(_, r)| {
        r.with != r.range
            && r.with.start < r.with.end
            && r.range.start <= r.with.start
            && r.with.end <= r.range.end
            && r.range.end <= src.len()
    });
    found.sort_by(|(da, a), (db, b)| {
        da.cmp(db)
            .then(b.range.len().cmp(&a.range.len()))
            .then(a.range.start.cmp(&b.range.start))
            .then(a.with.len().cmp(&b.with.len()))
            .then(a.with.start.cmp(&b.with.start))
    });
    let mut seen = HashSet::new();
    Ok(found
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| seen.insert(r.clone()))
        .collect())
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

// ---------------------------------------------------------------------------
// Grammar tables

/// How a container's deletable children are chosen.
#[derive(Clone, Copy)]
enum Pick {
    /// Every named child, except those under the given fields or of the
    /// given kinds.
    Named {
        except_fields: &'static [&'static str],
        except_kinds: &'static [&'static str],
    },
    /// Named children of the given kinds.
    Kinds(&'static [&'static str]),
    /// Named children under the given field.
    Field(&'static str),
    /// The runs of children between separators, inside the brackets.
    Segments,
}

/// A kind of container and how its elements are deleted.
struct Spec {
    parents: &'static [&'static str],
    pick: Pick,
    /// Anonymous tokens that separate or terminate elements.
    seps: &'static [&'static str],
    /// Whether the last element takes the separator before it when no
    /// separator follows it.
    borrow: bool,
    /// Elements (comments aside) that must remain: with this many or fewer,
    /// none is offered.
    min: usize,
    /// Kinds that are deleted together with the element they precede.
    glue: &'static [&'static str],
    /// Kinds never offered (a segment starting with one is kept).
    keep: &'static [&'static str],
    /// Leading elements (comments aside) never offered, so they remain whatever else goes.
    spare: usize,
}

const ALL_NAMED: Pick = Pick::Named {
    except_fields: &[],
    except_kinds: &[],
};

const fn stmts(parents: &'static [&'static str], seps: &'static [&'static str]) -> Spec {
    Spec {
        parents,
        pick: ALL_NAMED,
        seps,
        borrow: false,
        min: 0,
        glue: &[],
        keep: &[],
        spare: 0,
    }
}

const fn list(parents: &'static [&'static str], min: usize) -> Spec {
    Spec {
        parents,
        pick: Pick::Segments,
        seps: &[","],
        borrow: true,
        min,
        glue: &[],
        keep: &[],
        spare: 0,
    }
}

const fn kinds(
    parents: &'static [&'static str],
    kinds: &'static [&'static str],
    min: usize,
) -> Spec {
    Spec {
        parents,
        pick: Pick::Kinds(kinds),
        seps: &[],
        borrow: false,
        min,
        glue: &[],
        keep: &[],
        spare: 0,
    }
}

const fn comma_field(parents: &'static [&'static str], field: &'static str) -> Spec {
    Spec {
        parents,
        pick: Pick::Field(field),
        seps: &[","],
        borrow: true,
        min: 1,
        glue: &[],
        keep: &[],
        spare: 0,
    }
}

const PYTHON_SPECS: &[Spec] = &[
    stmts(&["module"], &[";"]),
    Spec {
        min: 1,
        ..stmts(&["block"], &[";"])
    },
    list(
        &[
            "parameters",
            "lambda_parameters",
            "argument_list",
            "list",
            "tuple",
            "set",
            "dictionary",
        ],
        0,
    ),
    list(&["expression_list", "pattern_list", "with_clause"], 1),
    comma_field(&["import_statement", "import_from_statement"], "name"),
    kinds(&["decorated_definition"], &["decorator"], 0),
    kinds(&["if_statement"], &["elif_clause", "else_clause"], 0),
    kinds(
        &["for_statement", "while_statement", "try_statement"],
        &["else_clause"],
        0,
    ),
];

const RUST_SPECS: &[Spec] = &[
    Spec {
        glue: &["attribute_item"],
        ..stmts(&["source_file", "declaration_list"], &[])
    },
    Spec {
        pick: Pick::Named {
            except_fields: &[],
            except_kinds: &["label"],
        },
        glue: &["attribute_item"],
        ..stmts(&["block"], &[])
    },
    stmts(&["match_block"], &[]),
    // Not offered: the items of lists whose length the compiler checks against another
    // place (call arguments, parameters, tuples and their patterns, struct literals, type
    // arguments). One such deletion alone never compiles; only a coordinated edit of
    // every site could.
    list(
        &[
            "array_expression",
            "field_declaration_list",
            "ordered_field_declaration_list",
            "enum_variant_list",
            "use_list",
            "slice_pattern",
            "struct_pattern",
        ],
        0,
    ),
    list(&["where_clause"], 1),
    kinds(&["if_expression"], &["else_clause"], 0),
];

const JS_SPECS: &[Spec] = &[
    stmts(
        &["program", "statement_block", "switch_body", "class_body"],
        &[";"],
    ),
    Spec {
        pick: Pick::Field("body"),
        ..stmts(&["switch_case", "switch_default"], &[])
    },
    list(
        &[
            "arguments",
            "formal_parameters",
            "array",
            "object",
            "array_pattern",
            "object_pattern",
            "named_imports",
            "export_clause",
        ],
        0,
    ),
    Spec {
        pick: Pick::Kinds(&["variable_declarator"]),
        seps: &[","],
        borrow: true,
        min: 1,
        glue: &[],
        keep: &[],
        spare: 0,
        parents: &["lexical_declaration", "variable_declaration"],
    },
    kinds(&["if_statement"], &["else_clause"], 0),
    kinds(
        &[
            "class_declaration",
            "class",
            "export_statement",
            "field_definition",
            "method_definition",
            "abstract_class_declaration",
            "public_field_definition",
            "required_parameter",
            "optional_parameter",
        ],
        &["decorator"],
        0,
    ),
    Spec {
        pick: Pick::Named {
            except_fields: &["open_tag", "close_tag"],
            except_kinds: &[],
        },
        ..stmts(&["jsx_element"], &[])
    },
    kinds(
        &["jsx_opening_element", "jsx_self_closing_element"],
        &["jsx_attribute", "jsx_expression"],
        0,
    ),
];

const TS_EXTRA_SPECS: &[Spec] = &[
    stmts(&["object_type", "interface_body"], &[",", ";"]),
    list(&["enum_body", "tuple_type"], 0),
    list(
        &[
            "type_arguments",
            "type_parameters",
            "implements_clause",
            "extends_type_clause",
        ],
        1,
    ),
];

const JAVA_SPECS: &[Spec] = &[
    stmts(
        &[
            "program",
            "block",
            "constructor_body",
            "class_body",
            "interface_body",
            "enum_body_declarations",
            "annotation_type_body",
            "switch_block",
        ],
        &[";"],
    ),
    Spec {
        pick: Pick::Named {
            except_fields: &[],
            except_kinds: &["switch_label"],
        },
        ..stmts(&["switch_block_statement_group"], &[])
    },
    kinds(&["modifiers"], &["annotation", "marker_annotation"], 0),
    list(
        &[
            "argument_list",
            "formal_parameters",
            "array_initializer",
            "annotation_argument_list",
            "element_value_array_initializer",
            "inferred_parameters",
        ],
        0,
    ),
    list(
        &["type_arguments", "type_parameters", "type_list", "throws"],
        1,
    ),
    Spec {
        pick: Pick::Kinds(&["enum_constant"]),
        ..list(&["enum_body"], 0)
    },
    comma_field(
        &[
            "field_declaration",
            "local_variable_declaration",
            "constant_declaration",
        ],
        "declarator",
    ),
];

const GO_SPECS: &[Spec] = &[
    Spec {
        pick: Pick::Named {
            except_fields: &[],
            except_kinds: &["package_clause"],
        },
        ..stmts(&["source_file"], &[";"])
    },
    stmts(
        &[
            "statement_list",
            "field_declaration_list",
            "interface_type",
            "import_spec_list",
            "var_spec_list",
        ],
        &[";"],
    ),
    Spec {
        seps: &[";"],
        ..kinds(&["const_declaration"], &["const_spec"], 1)
    },
    Spec {
        seps: &[";"],
        ..kinds(&["type_declaration"], &["type_spec", "type_alias"], 1)
    },
    kinds(
        &["expression_switch_statement"],
        &["expression_case", "default_case"],
        0,
    ),
    kinds(
        &["type_switch_statement"],
        &["type_case", "default_case"],
        0,
    ),
    kinds(
        &["select_statement"],
        &["communication_case", "default_case"],
        0,
    ),
    // The type argument of `make` and `new` is required.
    Spec {
        keep: GO_TYPES,
        spare: 0,
        ..list(&["argument_list"], 0)
    },
    list(&["parameter_list", "literal_value"], 0),
    list(
        &["expression_list", "type_arguments", "type_parameter_list"],
        1,
    ),
];

const GO_TYPES: &[&str] = &[
    "array_type",
    "channel_type",
    "function_type",
    "generic_type",
    "interface_type",
    "map_type",
    "negated_type",
    "parenthesized_type",
    "pointer_type",
    "qualified_type",
    "slice_type",
    "struct_type",
    "type_identifier",
];

const C_COMMON_SPECS: &[Spec] = &[
    stmts(
        &["translation_unit", "compound_statement", "declaration_list"],
        &[";"],
    ),
    Spec {
        pick: Pick::Named {
            except_fields: &["name", "condition"],
            except_kinds: &[],
        },
        ..stmts(
            &[
                "preproc_if",
                "preproc_ifdef",
                "preproc_else",
                "preproc_elif",
                "preproc_elifdef",
            ],
            &[],
        )
    },
    Spec {
        pick: Pick::Named {
            except_fields: &["value"],
            except_kinds: &[],
        },
        ..stmts(&["case_statement"], &[])
    },
    kinds(&["if_statement"], &["else_clause"], 0),
    list(
        &[
            "argument_list",
            "initializer_list",
            "enumerator_list",
            "preproc_params",
        ],
        0,
    ),
    // An empty C parameter list declares a function without a prototype, and a call that
    // no longer matches its definition compiles into undefined behaviour: one stays.
    Spec {
        spare: 1,
        ..list(&["parameter_list"], 1)
    },
    comma_field(
        &["declaration", "field_declaration", "type_definition"],
        "declarator",
    ),
];

const C_ONLY_SPECS: &[Spec] = &[stmts(&["field_declaration_list"], &[";"])];

const CPP_EXTRA_SPECS: &[Spec] = &[
    stmts(&["field_declaration_list"], &[";", ":"]),
    list(&["template_parameter_list", "lambda_capture_specifier"], 0),
    list(
        &[
            "template_argument_list",
            "field_initializer_list",
            "base_class_clause",
        ],
        1,
    ),
    kinds(
        &[
            "function_definition",
            "declaration",
            "field_declaration",
            "class_specifier",
            "struct_specifier",
        ],
        &["attribute_declaration"],
        0,
    ),
];

const PYTHON_EXPR: &[&str] = &[
    "as_pattern",
    "attribute",
    "await",
    "binary_operator",
    "boolean_operator",
    "call",
    "comparison_operator",
    "concatenated_string",
    "conditional_expression",
    "dictionary",
    "dictionary_comprehension",
    "ellipsis",
    "false",
    "float",
    "generator_expression",
    "identifier",
    "integer",
    "lambda",
    "list",
    "list_comprehension",
    "list_splat",
    "named_expression",
    "none",
    "not_operator",
    "parenthesized_expression",
    "set",
    "set_comprehension",
    "string",
    "subscript",
    "true",
    "tuple",
    "unary_operator",
];

const RUST_EXPR: &[&str] = &[
    "array_expression",
    "assignment_expression",
    "async_block",
    "await_expression",
    "binary_expression",
    "block",
    "boolean_literal",
    "break_expression",
    "call_expression",
    "char_literal",
    "closure_expression",
    "compound_assignment_expr",
    "const_block",
    "continue_expression",
    "field_expression",
    "float_literal",
    "for_expression",
    "gen_block",
    "generic_function",
    "identifier",
    "if_expression",
    "index_expression",
    "integer_literal",
    "loop_expression",
    "macro_invocation",
    "match_expression",
    "parenthesized_expression",
    "range_expression",
    "raw_string_literal",
    "reference_expression",
    "return_expression",
    "scoped_identifier",
    "self",
    "string_literal",
    "struct_expression",
    "try_block",
    "try_expression",
    "tuple_expression",
    "type_cast_expression",
    "unary_expression",
    "unit_expression",
    "unsafe_block",
    "while_expression",
    "yield_expression",
];

const JS_TS_EXPR: &[&str] = &[
    "array",
    "arrow_function",
    "as_expression",
    "assignment_expression",
    "augmented_assignment_expression",
    "await_expression",
    "binary_expression",
    "call_expression",
    "class",
    "false",
    "function_expression",
    "generator_function",
    "identifier",
    "instantiation_expression",
    "jsx_element",
    "jsx_self_closing_element",
    "member_expression",
    "meta_property",
    "new_expression",
    "non_null_expression",
    "null",
    "number",
    "object",
    "parenthesized_expression",
    "regex",
    "satisfies_expression",
    "string",
    "subscript_expression",
    "super",
    "template_string",
    "ternary_expression",
    "this",
    "true",
    "type_assertion",
    "unary_expression",
    "undefined",
    "update_expression",
    "yield_expression",
];

const JAVA_EXPR: &[&str] = &[
    "array_access",
    "array_creation_expression",
    "assignment_expression",
    "binary_expression",
    "binary_integer_literal",
    "cast_expression",
    "character_literal",
    "class_literal",
    "decimal_floating_point_literal",
    "decimal_integer_literal",
    "false",
    "field_access",
    "hex_floating_point_literal",
    "hex_integer_literal",
    "identifier",
    "instanceof_expression",
    "lambda_expression",
    "method_invocation",
    "method_reference",
    "null_literal",
    "object_creation_expression",
    "octal_integer_literal",
    "parenthesized_expression",
    "string_literal",
    "switch_expression",
    "template_expression",
    "ternary_expression",
    "this",
    "true",
    "unary_expression",
    "update_expression",
];

const GO_EXPR: &[&str] = &[
    "binary_expression",
    "call_expression",
    "composite_literal",
    "false",
    "float_literal",
    "func_literal",
    "identifier",
    "imaginary_literal",
    "index_expression",
    "int_literal",
    "interpreted_string_literal",
    "iota",
    "nil",
    "parenthesized_expression",
    "raw_string_literal",
    "rune_literal",
    "selector_expression",
    "slice_expression",
    "true",
    "type_assertion_expression",
    "type_conversion_expression",
    "type_instantiation_expression",
    "unary_expression",
];

const C_CPP_EXPR: &[&str] = &[
    "alignof_expression",
    "assignment_expression",
    "binary_expression",
    "call_expression",
    "cast_expression",
    "char_literal",
    "co_await_expression",
    "compound_literal_expression",
    "concatenated_string",
    "conditional_expression",
    "delete_expression",
    "extension_expression",
    "false",
    "field_expression",
    "fold_expression",
    "generic_expression",
    "identifier",
    "lambda_expression",
    "new_expression",
    "null",
    "number_literal",
    "offsetof_expression",
    "parameter_pack_expansion",
    "parenthesized_expression",
    "pointer_expression",
    "qualified_identifier",
    "raw_string_literal",
    "sizeof_expression",
    "string_literal",
    "subscript_expression",
    "template_function",
    "this",
    "true",
    "unary_expression",
    "update_expression",
    "user_defined_literal",
];

/// What is known about one language's node kinds.
struct LangDef {
    specs: &'static [&'static [Spec]],
    comments: &'static [&'static str],
    exprs: &'static [&'static str],
    /// Compound statements whose bodies may replace them.
    holders: &'static [&'static str],
    /// Statement blocks.
    blocks: &'static [&'static str],
}

fn lang_def(lang: Lang) -> LangDef {
    const JS_HOLDERS: &[&str] = &[
        "if_statement",
        "for_statement",
        "for_in_statement",
        "while_statement",
        "do_statement",
        "try_statement",
        "with_statement",
    ];
    const C_HOLDERS: &[&str] = &[
        "if_statement",
        "for_statement",
        "while_statement",
        "do_statement",
        "for_range_loop",
        "try_statement",
    ];
    match lang {
        Lang::Python => LangDef {
            specs: &[PYTHON_SPECS],
            comments: &["comment"],
            exprs: PYTHON_EXPR,
            holders: &[
                "if_statement",
                "for_statement",
                "while_statement",
                "try_statement",
                "with_statement",
            ],
            blocks: &["block"],
        },
        Lang::Rust => LangDef {
            specs: &[RUST_SPECS],
            comments: &["line_comment", "block_comment"],
            exprs: RUST_EXPR,
            holders: &[
                "if_expression",
                "while_expression",
                "loop_expression",
                "for_expression",
                "unsafe_block",
                "async_block",
            ],
            blocks: &["block"],
        },
        Lang::JavaScript => LangDef {
            specs: &[JS_SPECS],
            comments: &["comment", "html_comment"],
            exprs: JS_TS_EXPR,
            holders: JS_HOLDERS,
            blocks: &["statement_block"],
        },
        Lang::TypeScript | Lang::Tsx => LangDef {
            specs: &[JS_SPECS, TS_EXTRA_SPECS],
            comments: &["comment", "html_comment"],
            exprs: JS_TS_EXPR,
            holders: JS_HOLDERS,
            blocks: &["statement_block"],
        },
        Lang::Java => LangDef {
            specs: &[JAVA_SPECS],
            comments: &["line_comment", "block_comment"],
            exprs: JAVA_EXPR,
            holders: &[
                "if_statement",
                "for_statement",
                "enhanced_for_statement",
                "while_statement",
                "do_statement",
                "try_statement",
                "synchronized_statement",
            ],
            blocks: &["block", "constructor_body"],
        },
        Lang::Go => LangDef {
            specs: &[GO_SPECS],
            comments: &["comment"],
            exprs: GO_EXPR,
            holders: &["if_statement", "for_statement"],
            blocks: &["block", "statement_list"],
        },
        Lang::C => LangDef {
            specs: &[C_COMMON_SPECS, C_ONLY_SPECS],
            comments: &["comment"],
            exprs: C_CPP_EXPR,
            holders: C_HOLDERS,
            blocks: &["compound_statement"],
        },
        Lang::Cpp => LangDef {
            specs: &[C_COMMON_SPECS, CPP_EXTRA_SPECS],
            comments: &["comment"],
            exprs: C_CPP_EXPR,
            holders: C_HOLDERS,
            blocks: &["compound_statement"],
        },
    }
}

/// Per-language lookup tables indexed by node kind id.
struct Table {
    specs: Vec<&'static Spec>,
    /// Indices into `specs` of the specs whose parents include the kind.
    by_kind: Vec<Vec<usize>>,
    comment: Flags,
    expr: Flags,
    holder: Flags,
    block: Flags,
    /// Containers at which the search for sub-expressions stops.
    stop: Flags,
    lang: Lang,
}

/// A set of node kinds, indexed by kind id.
struct Flags(Vec<bool>);

impl Flags {
    fn has(&self, node: Node) -> bool {
        self.0
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(false)
    }
}

fn table(lang: Lang) -> &'static Table {
    static TABLES: [OnceLock<Table>; 9] = [const { OnceLock::new() }; 9];
    TABLES[lang.index()].get_or_init(|| build_table(lang))
}

fn build_table(lang: Lang) -> Table {
    let def = lang_def(lang);
    let grammar = lang.grammar();
    let count = grammar.node_kind_count();
    let specs: Vec<&'static Spec> = def.specs.iter().flat_map(|s| s.iter()).collect();
    let mut parents: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut stop_names: HashSet<&str> = def.blocks.iter().copied().collect();
    for (i, spec) in specs.iter().enumerate() {
        for &p in spec.parents {
            parents.entry(p).or_default().push(i);
            if matches!(spec.pick, Pick::Named { .. }) {
                stop_names.insert(p);
            }
        }
    }
    let mut table = Table {
        specs,
        by_kind: vec![Vec::new(); count],
        comment: Flags(vec![false; count]),
        expr: Flags(vec![false; count]),
        holder: Flags(vec![false; count]),
        block: Flags(vec![false; count]),
        stop: Flags(vec![false; count]),
        lang,
    };
    for (i, id) in (0..count).filter_map(|i| Some((i, u16::try_from(i).ok()?))) {
        if !grammar.node_kind_is_named(id) {
            continue;
        }
        let Some(name) = grammar.node_kind_for_id(id) else {
            continue;
        };
        if let Some(p) = parents.get(name) {
            table.by_kind[i].clone_from(p);
        }
        table.comment.0[i] = def.comments.contains(&name);
        table.expr.0[i] = def.exprs.contains(&name);
        table.holder.0[i] = def.holders.contains(&name);
        table.block.0[i] = def.blocks.contains(&name);
        table.stop.0[i] = stop_names.contains(name);
    }
    table
}

// ---------------------------------------------------------------------------
// Deletion elements

#[derive(Clone, Copy)]
struct Kid<'t> {
    node: Node<'t>,
    field: Option<&'static str>,
}

fn children<'t>(node: Node<'t>, cursor: &mut TreeCursor<'t>) -> Vec<Kid<'t>> {
    cursor.reset(node);
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            out.push(Kid {
                node: cursor.node(),
                field: cursor.field_name(),
            });
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// A named node that has text of its own.
fn usable(node: &Node) -> bool {
    node.is_named() && !node.is_missing() && node.start_byte() < node.end_byte()
}

/// A deletable element: children `first..=last` of the parent, plus an
/// optional separator child before or after them.
#[derive(Clone, Copy)]
struct Elem {
    first: usize,
    last: usize,
    comment: bool,
    /// Number of leading children glued to the element (attributes).
    glued: usize,
    sep_before: Option<usize>,
    sep_after: Option<usize>,
}

impl Elem {
    fn new(first: usize, last: usize, comment: bool) -> Self {
        Elem {
            first,
            last,
            comment,
            glued: 0,
            sep_before: None,
            sep_after: None,
        }
    }
}

const OPENERS: &[&str] = &["(", "[", "{", "<", "|", "[["];
const CLOSERS: &[&str] = &[")", "]", "}", ">", "|", "]]"];

fn pick_elements(table: &Table, spec: &Spec, kids: &[Kid]) -> Vec<Elem> {
    let is_comment = |k: &Kid| table.comment.has(k.node);
    let mut out = Vec::new();
    match spec.pick {
        Pick::Named {
            except_fields,
            except_kinds,
        } => {
            let ok = |k: &Kid| {
                usable(&k.node)
                    && !k.field.is_some_and(|f| except_fields.contains(&f))
                    && !except_kinds.contains(&k.node.kind())
            };
            let glue = |k: &Kid| spec.glue.contains(&k.node.kind());
            let mut i = 0;
            while i < kids.len() {
                if !ok(&kids[i]) {
                    i += 1;
                    continue;
                }
                if glue(&kids[i]) {
                    let mut j = i;
                    while j < kids.len() && ok(&kids[j]) && glue(&kids[j]) {
                        j += 1;
                    }
                    if j < kids.len() && ok(&kids[j]) && !is_comment(&kids[j]) {
                        out.push(Elem {
                            glued: j - i,
                            ..Elem::new(i, j, false)
                        });
                        i = j + 1;
                    } else {
                        out.extend((i..j).map(|g| Elem::new(g, g, false)));
                        i = j;
                    }
                    continue;
                }
                out.push(Elem::new(i, i, is_comment(&kids[i])));
                i += 1;
            }
        }
        Pick::Kinds(wanted) => {
            for (i, k) in kids.iter().enumerate() {
                if usable(&k.node) && wanted.contains(&k.node.kind()) {
                    out.push(Elem::new(i, i, false));
                }
            }
        }
        Pick::Field(field) => {
            for (i, k) in kids.iter().enumerate() {
                if usable(&k.node) && k.field == Some(field) {
                    out.push(Elem::new(i, i, false));
                }
            }
        }
        Pick::Segments => {
            let anon = |k: &Kid, set: &[&str]| !k.node.is_named() && set.contains(&k.node.kind());
            let is_sep = |k: &Kid| anon(k, spec.seps);
            let (lo, hi) = match kids.iter().position(|k| anon(k, OPENERS)) {
                Some(open) => {
                    let close = kids
                        .iter()
                        .rposition(|k| anon(k, CLOSERS))
                        .filter(|&c| c > open);
                    (open + 1, close.unwrap_or(kids.len()))
                }
                None => {
                    let keep = |k: &Kid| k.node.is_named() || is_sep(k);
                    let lo = kids.iter().position(keep).unwrap_or(kids.len());
                    let hi = kids.iter().rposition(keep).map_or(lo, |i| i + 1);
                    (lo, hi.max(lo))
                }
            };
            let mut start = lo;
            for i in lo..=hi {
                if i < hi && !is_sep(&kids[i]) {
                    continue;
                }
                let seg = &kids[start..i];
                if seg.iter().any(|k| usable(&k.node)) {
                    let comment = seg.iter().all(|k| !k.node.is_named() || is_comment(k));
                    out.push(Elem::new(start, i - 1, comment));
                }
                start = i + 1;
            }
        }
    }
    out
}

fn group_elements(
    table: &Table,
    src: &[u8],
    node: Node,
    kids: &[Kid],
) -> Vec<(Elem, Range<usize>)> {
    let mut elems: Vec<Elem> = Vec::new();
    for &si in table
        .by_kind
        .get(usize::from(node.kind_id()))
        .into_iter()
        .flatten()
    {
        let spec = table.specs[si];
        let mut picked = pick_elements(table, spec, kids);
        picked.retain(|e| {
            let first_named = kids[e.first..=e.last].iter().find(|k| k.node.is_named());
            !first_named.is_some_and(|k| spec.keep.contains(&k.node.kind()))
        });
        if picked.iter().filter(|e| !e.comment).count() <= spec.min {
            picked.retain(|e| e.comment);
        }
        // Candidates are also deleted together: the first `spare` elements are never
        // offered, so that many always remain.
        let mut spared = 0;
        picked.retain(|e| {
            if e.comment || spared >= spec.spare {
                return true;
            }
            spared += 1;
            false
        });
        let is_sep = |i: usize| {
            kids.get(i)
                .is_some_and(|k| !k.node.is_named() && spec.seps.contains(&k.node.kind()))
        };
        let last_real = picked.iter().rposition(|e| !e.comment);
        for (k, e) in picked.iter_mut().enumerate() {
            if is_sep(e.last + 1) {
                e.sep_after = Some(e.last + 1);
            } else if spec.borrow && Some(k) == last_real && e.first > 0 && is_sep(e.first - 1) {
                e.sep_before = Some(e.first - 1);
            }
        }
        elems.extend(picked);
    }
    let mut covered = vec![false; kids.len()];
    for e in &elems {
        covered[e.first..=e.last].fill(true);
    }
    for (i, k) in kids.iter().enumerate() {
        if !covered[i] && usable(&k.node) && table.comment.has(k.node) {
            elems.push(Elem::new(i, i, true));
        }
    }
    elems.sort_by_key(|e| e.first);

    let mut out: Vec<(Elem, Range<usize>)> = Vec::with_capacity(elems.len());
    let mut last_child: Option<usize> = None;
    for e in elems {
        if last_child.is_some_and(|l| e.first <= l) {
            continue;
        }
        let start = e.sep_before.map_or(kids[e.first].node.start_byte(), |i| {
            kids[i].node.start_byte()
        });
        let end = e
            .sep_after
            .map_or(kids[e.last].node.end_byte(), |i| kids[i].node.end_byte());
        let next = e.sep_after.unwrap_or(e.last) + 1;
        let blanks = if e.comment {
            Blanks::Before
        } else if e.sep_before.is_some()
            || kids.get(next).is_some_and(|k| table.comment.has(k.node))
        {
            Blanks::Neither
        } else {
            Blanks::After
        };
        let Some(range) = finish_range(src, start, end, blanks) else {
            continue;
        };
        if let Some((_, prev)) = out.last() {
            let overlaps = range.start < prev.end;
            if overlaps && (e.sep_before.is_none() || range.end <= prev.end) {
                continue;
            }
        }
        last_child = Some(e.last);
        out.push((e, range));
    }
    out
}

/// Which blanks next to an element that shares its line with other code go
/// with it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blanks {
    /// The blanks after it, when more code follows on the line.
    After,
    /// The blanks before it, when it ends the line (a trailing comment).
    Before,
    /// None.
    Neither,
}

/// Widens `start..end` over the surrounding whitespace (see the module docs)
/// and rejects a deletion that would glue two words together.
fn finish_range(src: &[u8], start: usize, end: usize, blanks: Blanks) -> Option<Range<usize>> {
    let end = end.min(src.len());
    let start = start.min(end);
    if start == end {
        return None;
    }
    let (start, end) = match (line_start(src, start), line_end(src, end)) {
        (Some(ls), Some(le)) => (ls, le),
        (_, None) if blanks == Blanks::After => (start, skip_blanks(src, end)),
        (None, Some(_)) if blanks == Blanks::Before => (skip_blanks_back(src, start), end),
        _ => (start, end),
    };
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    if start > 0 && end < src.len() && is_word(src[start - 1]) && is_word(src[end]) {
        return None;
    }
    Some(start..end)
}

/// The start of the line of `pos` when only blanks precede `pos` on it.
fn line_start(src: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos;
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    (i == 0 || src[i - 1] == b'\n').then_some(i)
}

/// The position just past the line's newline when only blanks follow `pos`
/// on its line (or `pos` is already just past a newline).
fn line_end(src: &[u8], pos: usize) -> Option<usize> {
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

fn skip_blanks_back(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i
}

fn skip_blanks(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while i < src.len() && matches!(src[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

// ---------------------------------------------------------------------------
// Replacements

/// The nearest expression descendants of `node`, looking through wrappers
/// such as argument lists but not into statement blocks.
fn nearest_expressions<'t>(
    table: &Table,
    node: Node<'t>,
    cursor: &mut TreeCursor<'t>,
) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack: Vec<Node<'t>> = children(node, cursor)
        .into_iter()
        .rev()
        .map(|k| k.node)
        .collect();
    while let Some(n) = stack.pop() {
        if !usable(&n) {
            continue;
        }
        if table.comment.has(n) || table.stop.has(n) || matches!(n.kind(), "label" | "lifetime") {
            continue;
        }
        if table.expr.has(n) {
            out.push(n);
        } else {
            stack.extend(children(n, cursor).into_iter().rev().map(|k| k.node));
        }
    }
    out
}

/// Whether the expression `sub` may stand where `node` is. This weeds out
/// replacements that can never parse:
///
/// * an assignment target replaced by something that is not assignable;
/// * a number placed before `.` (it would read as a decimal point);
/// * a multi-line Python expression moved out of its brackets;
/// * a part of a concatenated string literal replaced by a non-string;
/// * a Rust block-like expression statement (no `;`) followed by more
///   statements replaced by an expression that is not block-like;
/// * the `else` branch of a Go or Rust `if` replaced by a non-block;
/// * an expression inside a TypeScript type;
/// * a JavaScript or TypeScript decorator replaced by a non-call, or an
///   expression statement that would start with `{`, `function` or `class`;
/// * a Java expression statement replaced by an expression that is not a
///   call, an assignment, an increment or an object creation.
fn expression_fits(table: &Table, src: &[u8], node: Node, sub: Node) -> bool {
    let sub_text = src.get(sub.byte_range()).unwrap_or_default();
    if src.get(node.end_byte()) == Some(&b'.') && sub_text.last().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    if is_assignment_target(table, node) && !ASSIGNABLE.contains(&sub.kind()) {
        return false;
    }
    if table.lang == Lang::Python && sub_text.contains(&b'\n') && !inside_brackets(node) {
        return false;
    }
    if in_else_position(table, node)
        && !matches!(sub.kind(), "block" | "if_expression" | "if_statement")
    {
        return false;
    }
    if rust_block_statement(table, node) && !RUST_BLOCK_LIKE.contains(&sub.kind()) {
        return false;
    }
    let Some(parent) = node.parent() else {
        return true;
    };
    if parent.kind() == "concatenated_string" {
        return false;
    }
    match table.lang {
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            !in_type_position(node)
                && parent.kind() != "decorator"
                && !(parent.kind() == "expression_statement"
                    && matches!(sub.kind(), "object" | "function_expression" | "class"))
        }
        Lang::Java if parent.kind() == "expression_statement" || table.stop.has(parent) => {
            matches!(
                sub.kind(),
                "method_invocation"
                    | "object_creation_expression"
                    | "assignment_expression"
                    | "update_expression"
            )
        }
        _ => true,
    }
}

/// Whether `node` sits inside a TypeScript type (`typeof import("m")`),
/// where only a few expression forms are allowed.
fn in_type_position(node: Node) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        let kind = n.kind();
        if kind.ends_with("_type")
            || matches!(
                kind,
                "type_annotation" | "type_query" | "type_arguments" | "type_alias_declaration"
            )
        {
            return true;
        }
        if kind.ends_with("_statement")
            || kind.ends_with("_declaration")
            || matches!(kind, "statement_block" | "program")
        {
            return false;
        }
        cur = n.parent();
    }
    false
}

/// Rust expressions that may stand as a statement without a `;`.
const RUST_BLOCK_LIKE: &[&str] = &[
    "block",
    "if_expression",
    "match_expression",
    "while_expression",
    "loop_expression",
    "for_expression",
    "unsafe_block",
    "async_block",
    "const_block",
    "try_block",
    "gen_block",
];

/// Whether `node` is a Rust expression statement without `;` that other
/// statements follow, so that only a block-like expression may replace it.
fn rust_block_statement(table: &Table, node: Node) -> bool {
    if table.lang != Lang::Rust {
        return false;
    }
    let Some(parent) = node.parent() else {
        return false;
    };
    if parent.kind() != "expression_statement" || parent.end_byte() != node.end_byte() {
        return false;
    }
    let mut next = parent.next_named_sibling();
    while let Some(n) = next {
        if !table.comment.has(n) {
            return true;
        }
        next = n.next_named_sibling();
    }
    false
}

/// Expression kinds that may be assigned to in Python, JavaScript,
/// TypeScript and Java.
const ASSIGNABLE: &[&str] = &[
    "identifier",
    "attribute",
    "subscript",
    "member_expression",
    "subscript_expression",
    "non_null_expression",
    "field_access",
    "array_access",
    "parenthesized_expression",
];

/// Whether `node` is the target of an assignment or an increment in a
/// grammar that restricts targets (the other grammars accept any expression).
fn is_assignment_target(table: &Table, node: Node) -> bool {
    if !matches!(
        table.lang,
        Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java
    ) {
        return false;
    }
    let mut target = node;
    while let Some(parent) = target.parent() {
        let field = match parent.kind() {
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                target = parent;
                continue;
            }
            "delete_statement" => return true,
            "assignment"
            | "augmented_assignment"
            | "assignment_expression"
            | "augmented_assignment_expression"
            | "for_statement"
            | "for_in_statement" => "left",
            "update_expression" => "argument",
            _ => return false,
        };
        return parent
            .child_by_field_name(field)
            .is_some_and(|c| c.id() == target.id());
    }
    false
}

/// Whether `node`, a Python expression, lies inside brackets, where line
/// breaks are free.
fn inside_brackets(node: Node) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind() {
            "argument_list"
            | "parenthesized_expression"
            | "list"
            | "tuple"
            | "set"
            | "dictionary"
            | "subscript"
            | "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression"
            | "parameters" => return true,
            "block" | "module" => return false,
            kind if kind.ends_with("_statement") => return false,
            _ => cur = n.parent(),
        }
    }
    false
}

/// Whether `node` follows `else` in a Go or Rust `if`, where only a block or
/// another `if` may stand.
fn in_else_position(table: &Table, node: Node) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    match table.lang {
        Lang::Rust => parent.kind() == "else_clause",
        Lang::Go => {
            parent.kind() == "if_statement"
                && parent
                    .child_by_field_name("alternative")
                    .is_some_and(|c| c.id() == node.id())
        }
        _ => false,
    }
}

/// Whether `node` is the parenthesized condition of a statement, whose
/// parentheses the statement's syntax requires (`if (c)`, `switch (x)`).
fn is_required_parens(node: Node) -> bool {
    if node.kind() != "parenthesized_expression" {
        return false;
    }
    let Some(parent) = node.parent() else {
        return false;
    };
    let kind = parent.kind();
    let is_field = |f: &str| {
        parent
            .child_by_field_name(f)
            .is_some_and(|c| c.id() == node.id())
    };
    (kind.ends_with("_statement") || kind.ends_with("_expression"))
        && (is_field("condition") || is_field("value"))
}

/// What can stand in for a compound statement's body `node`: the contents of
/// a block, the statement inside an `else`/`elif` clause, or the statement
/// itself.
fn body_span<'t>(
    table: &Table,
    node: Node<'t>,
    cursor: &mut TreeCursor<'t>,
) -> Option<Range<usize>> {
    let mut node = node;
    for _ in 0..4 {
        if !usable(&node) || table.comment.has(node) {
            return None;
        }
        let kids = children(node, cursor);
        if table.block.has(node) {
            let named: Vec<Node> = kids.iter().map(|k| k.node).filter(usable).collect();
            if let [only] = named[..]
                && table.block.has(only)
            {
                node = only;
                continue;
            }
            return Some(named.first()?.start_byte()..named.last()?.end_byte());
        }
        if !matches!(node.kind(), "else_clause" | "elif_clause") {
            return Some(node.byte_range());
        }
        let body = kids
            .iter()
            .find(|k| matches!(k.field, Some("body" | "consequence")))
            .or_else(|| {
                kids.iter().find(|k| {
                    usable(&k.node) && k.field != Some("condition") && !table.comment.has(k.node)
                })
            })?;
        node = body.node;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON: &str = r#"import os
from collections import OrderedDict, defaultdict

@dataclass
class Point:
    x: int = 0
    y: int = 0

    def norm(self, scale):
        return (self.x ** 2 + self.y ** 2) * scale


def combine(alpha, beta, gamma=3):
    values = [1, 2, 3]
    total = sum(values)  # running total
    result = compute(alpha, beta, gamma)
    if total > 2:
        print(total)
    return result


x = foo(bar(1))
"#;

    const RUST: &str = r#"use std::collections::HashMap;
use std::fmt::{self, Display};

#[derive(Debug, Clone)]
pub struct Point {
    x: i32,
    y: i32,
}

impl Point {
    /// Squared length.
    pub fn norm(&self, scale: i32) -> i32 {
        (self.x * self.x + self.y * self.y) * scale
    }
}

fn combine(alpha: i32, beta: i32, gamma: i32) -> i32 {
    let values = vec![1, 2, 3];
    let arr = [4, 5, 6];
    let total: i32 = arr.iter().sum();
    let result = compute(alpha, beta, gamma);
    if total > 2 {
        println!("{}", total);
    }
    result
}
"#;

    const JAVASCRIPT: &str = r#"import fs from "fs";
import { join, resolve } from "path";

class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }
  norm(scale) {
    return (this.x * this.x + this.y * this.y) * scale;
  }
}

function combine(alpha, beta, gamma) {
  const values = [1, 2, 3];
  const total = values.reduce((a, b) => a + b, 0); // sum
  const result = compute(alpha, beta, gamma);
  if (total > 2) {
    console.log(total);
  }
  return result;
}

export { combine, Point };
"#;

    const TYPESCRIPT: &str = r#"import { readFileSync } from "fs";
import type { Config } from "./config";

interface Shape {
  area(): number;
  name: string;
}

export class Point implements Shape {
  private x: number;
  private y: number;
  name = "point";
  constructor(x: number, y: number) {
    this.x = x;
    this.y = y;
  }
  area(): number {
    return 0;
  }
}

function combine(alpha: number, beta: string, gamma: boolean): number {
  const values: number[] = [1, 2, 3];
  const result = compute(alpha, beta, gamma);
  if (values.length > 2) {
    console.log(result);
  }
  return result;
}
"#;

    const TSX: &str = r#"import React from "react";
import { useState, useEffect } from "react";

type Props = { title: string; count: number };

export function Panel({ title, count }: Props) {
  const [open, setOpen] = useState(false);
  const items = [1, 2, 3];
  const label = format(title, count, open);
  return (
    <div className="panel" id="main">
      <h1>{label}</h1>
      <ul>{items.map((i) => <li key={i}>{i}</li>)}</ul>
    </div>
  );
}

class Store {
  value = 0;
  bump(by: number) {
    this.value += by;
  }
}
"#;

    const JAVA: &str = r#"package demo;

import java.util.List;
import java.util.ArrayList;

public class Point {
    private int x;
    private int y;

    public Point(int x, int y) {
        this.x = x;
        this.y = y;
    }

    @Override
    public int combine(int alpha, int beta, int gamma) {
        int[] values = {1, 2, 3};
        List<Integer> list = new ArrayList<>();
        int result = compute(alpha, beta, gamma);
        if (result > 2) {
            System.out.println(result);
        }
        return result;
    }

    static int compute(int a, int b, int c) { return a + b + c; }
}
"#;

    const GO: &str = r#"package main

import (
	"fmt"
	"strings"
)

type Point struct {
	X int
	Y int
}

func (p Point) Norm(scale int) int {
	return (p.X*p.X + p.Y*p.Y) * scale
}

func combine(alpha int, beta string, gamma bool) int {
	values := []int{1, 2, 3}
	result := compute(alpha, beta, gamma)
	if result > 2 {
		fmt.Println(strings.ToUpper("x"), values)
	}
	return result
}
"#;

    const C: &str = r#"#include <stdio.h>
#include <stdlib.h>

struct point {
    int x;
    int y;
};

/* Adds three numbers. */
static int compute(int a, int b, int c) { return a + b + c; }

int combine(int alpha, int beta, int gamma) {
    int values[] = {1, 2, 3};
    int result = compute(alpha, beta, gamma);
    if (result > 2) {
        printf("%d\n", result);
    }
    return result;
}
"#;

    const CPP: &str = r#"#include <vector>
#include <string>

namespace geo {
class Point {
public:
    Point(int x, int y) : x_(x), y_(y) {}
    int norm(int scale) const { return (x_ * x_ + y_ * y_) * scale; }
private:
    int x_;
    int y_;
};
}

int combine(int alpha, int beta, int gamma) {
    std::vector<int> values = {1, 2, 3};
    int result = compute(alpha, beta, gamma);
    if (result > 2) {
        std::printf("%d\n", result);
    }
    return result;
}
"#;

    fn samples() -> Vec<(Lang, &'static str)> {
        vec![
            (Lang::Python, PYTHON),
            (Lang::Rust, RUST),
            (Lang::JavaScript, JAVASCRIPT),
            (Lang::TypeScript, TYPESCRIPT),
            (Lang::Tsx, TSX),
            (Lang::Java, JAVA),
            (Lang::Go, GO),
            (Lang::C, C),
            (Lang::Cpp, CPP),
        ]
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).expect("utf-8 output")
    }

    /// Every single deletion, as (level, group, index, text after deleting).
    fn single_deletions(lang: Lang, src: &str) -> Vec<(usize, usize, usize, String)> {
        let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
        let mut out = Vec::new();
        for (d, groups) in levels.iter().enumerate() {
            for (g, group) in groups.iter().enumerate() {
                for (i, r) in group.iter().enumerate() {
                    out.push((d, g, i, text(apply_deletion(src.as_bytes(), r))));
                }
            }
        }
        out
    }

    fn assert_deletion(lang: Lang, src: &str, from: &str, to: &str) {
        assert_eq!(
            src.matches(from).count(),
            1,
            "{lang}: {from:?} must occur once"
        );
        let expected = src.replacen(from, to, 1);
        let found = single_deletions(lang, src)
            .into_iter()
            .any(|(_, _, _, out)| out == expected);
        assert!(found, "{lang}: no deletion turns {from:?} into {to:?}");
    }

    fn assert_no_deletion(lang: Lang, src: &str, from: &str, to: &str) {
        let expected = src.replacen(from, to, 1);
        let found = single_deletions(lang, src)
            .into_iter()
            .any(|(_, _, _, out)| out == expected);
        assert!(!found, "{lang}: a deletion turns {from:?} into {to:?}");
    }

    fn assert_replacement(lang: Lang, src: &str, range: &str, with: &str) {
        let reps = replacements(lang, src.as_bytes()).expect("replacements");
        let found = reps
            .iter()
            .any(|r| &src[r.range.clone()] == range && &src[r.with.clone()] == with);
        assert!(found, "{lang}: no replacement of {range:?} by {with:?}");
        let out = src.replacen(range, with, 1);
        assert!(
            parses_cleanly(lang, out.as_bytes()).expect("parse"),
            "{lang}: {out}"
        );
    }

    fn is_separator_overlap(src: &[u8], overlap: Range<usize>) -> bool {
        let bytes = &src[overlap];
        matches!(bytes.first(), Some(b',' | b';')) && bytes[1..].iter().all(u8::is_ascii_whitespace)
    }

    /// Bounds, order, disjointness, char boundaries and nesting of levels.
    fn check_structure(lang: Lang, src: &[u8]) {
        let levels = deletion_levels(lang, src).expect("levels");
        let utf8 = std::str::from_utf8(src).ok();
        for (d, groups) in levels.iter().enumerate() {
            assert!(!groups.is_empty(), "{lang}: level {d} is empty");
            for group in groups {
                assert!(!group.is_empty(), "{lang}: empty group at level {d}");
                for (i, r) in group.iter().enumerate() {
                    assert!(
                        r.start < r.end && r.end <= src.len(),
                        "{lang}: bad range {r:?}"
                    );
                    if let Some(s) = utf8 {
                        assert!(
                            s.is_char_boundary(r.start) && s.is_char_boundary(r.end),
                            "{lang}: {r:?}"
                        );
                    }
                    if i == 0 {
                        continue;
                    }
                    let prev = &group[i - 1];
                    assert!(
                        prev.start < r.start && prev.end < r.end,
                        "{lang}: unsorted {prev:?} {r:?}"
                    );
                    if r.start < prev.end {
                        assert_eq!(
                            i,
                            group.len() - 1,
                            "{lang}: only the last element may overlap"
                        );
                        assert!(
                            is_separator_overlap(src, r.start..prev.end),
                            "{lang}: overlap {:?} is not a separator",
                            String::from_utf8_lossy(&src[r.start..prev.end])
                        );
                    }
                }
                if d > 0 {
                    let lo = group.iter().map(|r| r.start).min().unwrap_or(0);
                    let hi = group.iter().map(|r| r.end).max().unwrap_or(0);
                    let inside = levels[d - 1]
                        .iter()
                        .flatten()
                        .any(|e| e.start <= lo && hi <= e.end);
                    assert!(
                        inside,
                        "{lang}: group {group:?} at level {d} is not inside a level {} element",
                        d - 1
                    );
                }
            }
        }
    }

    #[test]
    fn lang_for_path_maps_extensions() {
        let cases = [
            ("a.py", Some(Lang::Python)),
            ("stubs/a.pyi", Some(Lang::Python)),
            ("src/main.rs", Some(Lang::Rust)),
            ("x.js", Some(Lang::JavaScript)),
            ("x.mjs", Some(Lang::JavaScript)),
            ("x.cjs", Some(Lang::JavaScript)),
            ("x.jsx", Some(Lang::JavaScript)),
            ("x.ts", Some(Lang::TypeScript)),
            ("x.mts", Some(Lang::TypeScript)),
            ("x.cts", Some(Lang::TypeScript)),
            ("x.tsx", Some(Lang::Tsx)),
            ("A.java", Some(Lang::Java)),
            ("main.go", Some(Lang::Go)),
            ("x.c", Some(Lang::C)),
            ("x.h", Some(Lang::C)),
            ("x.cc", Some(Lang::Cpp)),
            ("x.cpp", Some(Lang::Cpp)),
            ("x.cxx", Some(Lang::Cpp)),
            ("x.hpp", Some(Lang::Cpp)),
            ("x.hh", Some(Lang::Cpp)),
            ("x.hxx", Some(Lang::Cpp)),
            ("dir.d\\X.PY", Some(Lang::Python)),
            ("Makefile", None),
            ("x.txt", None),
            (".py", None),
            ("archive.py/readme", None),
            ("", None),
        ];
        for (path, want) in cases {
            assert_eq!(lang_for_path(path), want, "{path}");
        }
    }

    #[test]
    fn every_grammar_loads_and_samples_parse() {
        for (lang, src) in samples() {
            assert!(
                parses_cleanly(lang, src.as_bytes()).expect("parse"),
                "{lang} sample has errors"
            );
        }
    }

    #[test]
    fn structure_holds_for_all_samples() {
        for (lang, src) in samples() {
            check_structure(lang, src.as_bytes());
        }
    }

    #[test]
    fn every_single_deletion_keeps_samples_parsing() {
        for (lang, src) in samples() {
            for (d, g, i, out) in single_deletions(lang, src) {
                assert!(
                    parses_cleanly(lang, out.as_bytes()).expect("parse"),
                    "{lang}: deletion {i} of group {g} at level {d} breaks the parse:\n{out}"
                );
            }
        }
    }

    #[test]
    fn level_zero_is_the_root_children() {
        for (lang, src) in samples() {
            let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
            assert_eq!(levels[0].len(), 1, "{lang}: one group under the root");
        }
        let levels = deletion_levels(Lang::Python, PYTHON.as_bytes()).expect("levels");
        let firsts: Vec<&str> = levels[0][0].iter().map(|r| &PYTHON[r.clone()]).collect();
        assert_eq!(firsts[0], "import os\n");
        assert!(firsts[2].starts_with("@dataclass\nclass Point:"));
        assert_eq!(*firsts.last().expect("last"), "x = foo(bar(1))\n");
    }

    #[test]
    fn python_candidates() {
        let (l, s) = (Lang::Python, PYTHON);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(beta, gamma)");
        assert_deletion(
            l,
            s,
            "def combine(alpha, beta, gamma=3)",
            "def combine(alpha, beta)",
        );
        assert_deletion(l, s, "[1, 2, 3]", "[1, 3]");
        assert_deletion(l, s, "    values = [1, 2, 3]\n", "");
        assert_deletion(
            l,
            s,
            "from collections import OrderedDict, defaultdict",
            "from collections import defaultdict",
        );
        assert_deletion(l, s, "import os\n", "");
        assert_deletion(l, s, "    y: int = 0\n", "");
        assert_deletion(l, s, "@dataclass\n", "");
        assert_deletion(l, s, "  # running total", "");
        assert_deletion(l, s, "    total = sum(values)", "    ");
        // The only statement of a block cannot go: the block would be empty.
        assert_no_deletion(l, s, "        print(total)\n", "");
        assert_replacement(l, s, "foo(bar(1))", "bar(1)");
        assert_replacement(l, s, "if total > 2:\n        print(total)", "print(total)");
    }

    #[test]
    fn python_details() {
        let l = Lang::Python;
        assert_deletion(l, "a(); b()\n", "a(); ", "");
        assert_deletion(l, "a(); b()\n", "b()", "");
        assert_deletion(
            l,
            "if c:\n    a()\nelse:\n    b()\n",
            "else:\n    b()\n",
            "",
        );
        assert_deletion(l, "x = {1: 2, 3: 4}\n", "1: 2, ", "");
        assert_deletion(l, "f = lambda a, b: a\n", ", b", "");
        assert_no_deletion(l, "def f():\n    return 1\n", "    return 1\n", "");
        assert_replacement(l, "y = a + (b * c)\n", "a + (b * c)", "(b * c)");
        assert_replacement(l, "y = a if c else b\n", "a if c else b", "b");
        let src = "def f():\n    a()\n    b()\n";
        assert_replacement(l, src, "a()\n    b()", "b()");
    }

    #[test]
    fn rust_candidates() {
        let (l, s) = (Lang::Rust, RUST);
        // Arity-checked lists: a lone deletion never compiles, so none is offered.
        assert_no_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_no_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_no_deletion(
            l,
            s,
            "fn combine(alpha: i32, beta: i32, gamma: i32)",
            "fn combine(alpha: i32, gamma: i32)",
        );
        assert_deletion(l, s, "[4, 5, 6]", "[4, 6]");
        assert_deletion(l, s, "    let total: i32 = arr.iter().sum();\n", "");
        assert_deletion(l, s, "    y: i32,\n", "");
        assert_deletion(l, s, "use std::collections::HashMap;\n", "");
        assert_deletion(l, s, "{self, Display}", "{self}");
        assert_deletion(l, s, "#[derive(Debug, Clone)]\n", "");
        assert_deletion(l, s, "    /// Squared length.\n", "");
        // Deleting the struct takes its attribute along.
        assert_deletion(
            l,
            s,
            "#[derive(Debug, Clone)]\npub struct Point {\n    x: i32,\n    y: i32,\n}\n",
            "",
        );
        assert_replacement(l, s, "compute(alpha, beta, gamma)", "beta");
        assert_replacement(
            l,
            s,
            "if total > 2 {\n        println!(\"{}\", total);\n    }",
            "println!(\"{}\", total);",
        );
    }

    #[test]
    fn rust_details() {
        let l = Lang::Rust;
        assert_deletion(
            l,
            "fn f() { match x { 1 => a(), _ => b() } }\n",
            "1 => a(), ",
            "",
        );
        assert_deletion(l, "enum E { A, B(u8), C }\n", ", C", "");
        assert_deletion(
            l,
            "fn f() { if c { a() } else { b() } }\n",
            "else { b() } ",
            "",
        );
        assert_no_deletion(l, "fn f() { let c = |a, b| a; }\n", ", b", "");
        assert_deletion(l, "struct S(u8, i32);\n", "u8, ", "");
        assert_no_deletion(l, "fn f() { S { a: 1, b: 2 }; }\n", "a: 1, ", "");
        assert_deletion(
            l,
            "struct S { #[serde(skip)] a: u8, b: u8 }\n",
            "#[serde(skip)] a: u8, ",
            "",
        );
        assert_deletion(
            l,
            "fn f() {\n    #[allow(unused)]\n    let x = 1;\n    g();\n}\n",
            "    #[allow(unused)]\n    let x = 1;\n",
            "",
        );
    }

    #[test]
    fn javascript_candidates() {
        let (l, s) = (Lang::JavaScript, JAVASCRIPT);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(
            l,
            s,
            "function combine(alpha, beta, gamma)",
            "function combine(beta, gamma)",
        );
        assert_deletion(l, s, "[1, 2, 3]", "[1, 2]");
        assert_deletion(l, s, "  const values = [1, 2, 3];\n", "");
        assert_deletion(l, s, "import { join, resolve }", "import { resolve }");
        assert_deletion(l, s, "import fs from \"fs\";\n", "");
        assert_deletion(
            l,
            s,
            "  norm(scale) {\n    return (this.x * this.x + this.y * this.y) * scale;\n  }\n",
            "",
        );
        assert_deletion(l, s, "    this.y = y;\n", "");
        assert_deletion(l, s, " // sum", "");
        assert_deletion(l, s, "export { combine, Point }", "export { combine }");
        assert_replacement(
            l,
            s,
            "if (total > 2) {\n    console.log(total);\n  }",
            "console.log(total);",
        );
        assert_replacement(l, s, "values.reduce((a, b) => a + b, 0)", "0");
    }

    #[test]
    fn javascript_details() {
        let l = Lang::JavaScript;
        assert_deletion(l, "const o = { a: 1, b: 2, ...c };\n", ", ...c", "");
        assert_deletion(l, "let a = 1, b = 2;\n", "a = 1, ", "");
        assert_no_deletion(l, "let a = 1;\n", "a = 1", "");
        assert_deletion(
            l,
            "switch (x) { case 1: a(); break; default: b(); }\n",
            "a(); ",
            "",
        );
        assert_deletion(
            l,
            "switch (x) { case 1: a(); break; default: b(); }\n",
            "default: b(); ",
            "",
        );
        assert_deletion(l, "if (a) { b(); } else { c(); }\n", "else { c(); }", "");
        assert_deletion(l, "class A { @dec m() {} }\n", "@dec ", "");
        assert_replacement(l, "x = c ? a : b;\n", "c ? a : b", "a");
        assert_no_deletion(l, "if (x) y();\n", "y();", "");
    }

    #[test]
    fn typescript_candidates() {
        let (l, s) = (Lang::TypeScript, TYPESCRIPT);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(
            l,
            s,
            "(alpha: number, beta: string, gamma: boolean)",
            "(alpha: number, gamma: boolean)",
        );
        assert_deletion(l, s, "[1, 2, 3]", "[2, 3]");
        assert_deletion(l, s, "  private y: number;\n", "");
        assert_deletion(l, s, "  name: string;\n", "");
        assert_deletion(l, s, "import type { Config } from \"./config\";\n", "");
        assert_deletion(l, s, "    return 0;\n", "");
        assert_replacement(
            l,
            s,
            "if (values.length > 2) {\n    console.log(result);\n  }",
            "console.log(result);",
        );
        assert_replacement(l, s, "compute(alpha, beta, gamma)", "alpha");
    }

    #[test]
    fn typescript_details() {
        let l = Lang::TypeScript;
        assert_deletion(l, "enum E { A = 1, B, C }\n", ", C", "");
        assert_deletion(l, "type T = { a: string; b: number };\n", "a: string; ", "");
        assert_deletion(l, "type T = [string, number];\n", ", number", "");
        assert_deletion(
            l,
            "@Component({ s: 1 })\nclass K {}\n",
            "@Component({ s: 1 })\n",
            "",
        );
        assert_deletion(
            l,
            "class K { constructor(@Inject() a: A) {} }\n",
            "@Inject() ",
            "",
        );
        assert_deletion(l, "class K implements A, B {}\n", ", B", "");
        assert_no_deletion(l, "class K implements A {}\n", "A", "");
        assert_deletion(
            l,
            "function f<T, U>(a: T): U { return g<T, U>(a); }\n",
            "<T, U>(a: T)",
            "<T>(a: T)",
        );
    }

    #[test]
    fn tsx_candidates() {
        let (l, s) = (Lang::Tsx, TSX);
        assert_deletion(l, s, "format(title, count, open)", "format(title, open)");
        assert_deletion(l, s, "format(title, count, open)", "format(title, count)");
        assert_deletion(l, s, "[1, 2, 3]", "[1, 3]");
        assert_deletion(l, s, "      <h1>{label}</h1>\n", "");
        assert_deletion(l, s, " id=\"main\"", " ");
        assert_deletion(l, s, "  value = 0;\n", "");
        assert_deletion(
            l,
            s,
            "import { useState, useEffect }",
            "import { useState }",
        );
        assert_deletion(l, s, "{ title, count }: Props", "{ count }: Props");
        assert_deletion(l, s, "type Props = { title: string; count: number };\n", "");
        assert_replacement(l, s, "format(title, count, open)", "count");
    }

    #[test]
    fn java_candidates() {
        let (l, s) = (Lang::Java, JAVA);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(
            l,
            s,
            "combine(int alpha, int beta, int gamma)",
            "combine(int alpha, int beta)",
        );
        assert_deletion(l, s, "{1, 2, 3}", "{1, 3}");
        assert_deletion(l, s, "    private int y;\n", "");
        assert_deletion(l, s, "import java.util.List;\n", "");
        assert_deletion(l, s, "        this.y = y;\n", "");
        assert_deletion(l, s, "    @Override\n", "");
        assert_deletion(
            l,
            s,
            "    static int compute(int a, int b, int c) { return a + b + c; }\n",
            "",
        );
        assert_replacement(
            l,
            s,
            "if (result > 2) {\n            System.out.println(result);\n        }",
            "System.out.println(result);",
        );
        assert_replacement(l, s, "a + b + c", "a + b");
    }

    #[test]
    fn java_details() {
        let l = Lang::Java;
        assert_deletion(l, "class A { int x = 1, y; }\n", "x = 1, ", "");
        assert_no_deletion(l, "class A { int x = 1; }\n", "x = 1", "");
        assert_deletion(l, "enum E { P, Q(1); void m() {} }\n", ", Q(1)", "");
        assert_deletion(l, "class A { void f() throws X, Y {} }\n", ", Y", "");
        assert_deletion(
            l,
            "class A { void f() { switch (x) { case 1: a(); break; default: b(); } } }\n",
            "a(); ",
            "",
        );
        assert_deletion(l, "class A implements B, C {}\n", "B, ", "");
    }

    #[test]
    fn go_candidates() {
        let (l, s) = (Lang::Go, GO);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(
            l,
            s,
            "combine(alpha int, beta string, gamma bool)",
            "combine(beta string, gamma bool)",
        );
        assert_deletion(l, s, "{1, 2, 3}", "{1, 2}");
        assert_deletion(l, s, "\t\"strings\"\n", "");
        assert_deletion(l, s, "\tY int\n", "");
        assert_deletion(l, s, "\tvalues := []int{1, 2, 3}\n", "");
        assert_no_deletion(l, s, "package main\n", "");
        assert_replacement(
            l,
            s,
            "if result > 2 {\n\t\tfmt.Println(strings.ToUpper(\"x\"), values)\n\t}",
            "fmt.Println(strings.ToUpper(\"x\"), values)",
        );
        assert_replacement(l, s, "compute(alpha, beta, gamma)", "gamma");
    }

    #[test]
    fn go_details() {
        let l = Lang::Go;
        let src = "package main\n\nfunc f() {\n\tx := []int{\n\t\t1,\n\t\t2,\n\t}\n\ta(); b()\n}\n";
        assert_deletion(l, src, "\t\t2,\n", "");
        assert_deletion(l, src, "a(); ", "");
        let src = "package main\n\nfunc f() {\n\tswitch x {\n\tcase 1:\n\t\ta()\n\tdefault:\n\t\tb()\n\t}\n}\n";
        assert_deletion(l, src, "\tdefault:\n\t\tb()\n", "");
        assert_deletion(
            l,
            "package main\n\nconst (\n\tA = 1\n\tB = 2\n)\n",
            "\tB = 2\n",
            "",
        );
        assert_no_deletion(l, "package main\n\nvar x = 1\n", "x = 1", "");
        // `make` needs its type argument; its other arguments may go.
        let src = "package main\n\nfunc f() {\n\tb := make([]byte, 10)\n}\n";
        assert_no_deletion(l, src, "[]byte, ", "");
        assert_deletion(l, src, ", 10", "");
    }

    #[test]
    fn c_candidates() {
        let (l, s) = (Lang::C, C);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        assert_deletion(
            l,
            s,
            "combine(int alpha, int beta, int gamma)",
            "combine(int alpha, int beta)",
        );
        assert_deletion(l, s, "{1, 2, 3}", "{2, 3}");
        assert_deletion(l, s, "    int y;\n", "");
        assert_deletion(l, s, "#include <stdlib.h>\n", "");
        assert_deletion(l, s, "struct point {\n    int x;\n    int y;\n};\n", "");
        assert_deletion(l, s, "/* Adds three numbers. */\n", "");
        assert_deletion(l, s, "    int values[] = {1, 2, 3};\n", "");
        assert_replacement(
            l,
            s,
            "if (result > 2) {\n        printf(\"%d\\n\", result);\n    }",
            "printf(\"%d\\n\", result);",
        );
        assert_replacement(l, s, "a + b + c", "c");
    }

    #[test]
    fn c_details() {
        let l = Lang::C;
        assert_deletion(l, "enum E { A, B = 2, C };\n", "B = 2, ", "");
        assert_deletion(l, "int a = 1, b;\n", ", b", "");
        assert_no_deletion(l, "int a = 1;\n", "a = 1", "");
        assert_deletion(
            l,
            "void f(void) { if (a) b(); else c(); }\n",
            "else c(); ",
            "",
        );
        assert_deletion(
            l,
            "#ifdef X\nint q;\n#else\nint r;\n#endif\n",
            "#else\nint r;\n",
            "",
        );
        assert_deletion(l, "#define F(a, b) a\n", ", b", "");
        assert_deletion(
            l,
            "void f(void) { switch (x) { case 1: a(); break; } }\n",
            "a(); ",
            "",
        );
        // A trailing comment takes the blanks before it, which matters on a
        // preprocessor line.
        let src = "#ifdef X\n#define N 3 /* three */\n#endif\n";
        assert_deletion(l, src, " /* three */", "");
        for (_, _, _, out) in single_deletions(l, src) {
            assert!(parses_cleanly(l, out.as_bytes()).expect("parse"), "{out}");
        }
        // Removing a comment between two words would glue them together.
        assert_no_deletion(l, "int/**/x;\n", "/**/", "");
    }

    #[test]
    fn cpp_candidates() {
        let (l, s) = (Lang::Cpp, CPP);
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, gamma)");
        assert_deletion(l, s, "compute(alpha, beta, gamma)", "compute(alpha, beta)");
        // The first parameter always stays (an empty list would be unprototyped in C).
        assert_no_deletion(
            l,
            s,
            "combine(int alpha, int beta, int gamma)",
            "combine(int beta, int gamma)",
        );
        assert_deletion(
            l,
            s,
            "combine(int alpha, int beta, int gamma)",
            "combine(int alpha, int gamma)",
        );
        assert_deletion(l, s, "{1, 2, 3}", "{1, 3}");
        assert_deletion(l, s, "    int y_;\n", "");
        assert_deletion(l, s, "private:\n", "");
        assert_deletion(l, s, " : x_(x), y_(y)", " : x_(x)");
        assert_deletion(l, s, "#include <string>\n", "");
        assert_replacement(
            l,
            s,
            "if (result > 2) {\n        std::printf(\"%d\\n\", result);\n    }",
            "std::printf(\"%d\\n\", result);",
        );
    }

    #[test]
    fn cpp_details() {
        let l = Lang::Cpp;
        assert_deletion(
            l,
            "template <typename T, int N> struct A {};\n",
            ", int N",
            "",
        );
        assert_deletion(l, "A<int, char> a;\n", ", char", "");
        assert_deletion(l, "class A : public B, private C {};\n", ", private C", "");
        assert_deletion(l, "auto f = [a, &b](int z) { return z; };\n", ", &b", "");
        assert_deletion(l, "[[nodiscard]] int f();\n", "[[nodiscard]] ", "");
        assert_deletion(l, "enum class K { P, Q };\n", ", Q", "");
    }

    fn assert_no_replacement(lang: Lang, src: &str, range: &str, with: &str) {
        let reps = replacements(lang, src.as_bytes()).expect("replacements");
        let found = reps
            .iter()
            .any(|r| &src[r.range.clone()] == range && &src[r.with.clone()] == with);
        assert!(
            !found,
            "{lang}: replacement of {range:?} by {with:?} is offered"
        );
    }

    #[test]
    fn replacements_that_cannot_parse_are_not_offered() {
        // Assignment targets must stay assignable.
        assert_no_replacement(Lang::Python, "a[i + 1] = 2\n", "a[i + 1]", "i + 1");
        assert_replacement(Lang::Python, "a[i + 1] = 2\n", "a[i + 1]", "a");
        assert_no_replacement(Lang::JavaScript, "this.x = 1;\n", "this.x", "this");
        assert_no_replacement(Lang::Python, "del a[0]\n", "a[0]", "0");
        // A number before `.` would read as a decimal point.
        assert_no_replacement(Lang::JavaScript, "f(1, 2).g();\n", "f(1, 2)", "1");
        // A piece of a concatenated string must stay a string.
        assert_no_replacement(Lang::Python, "s = f\"{a}\" \"b\"\n", "f\"{a}\"", "a");
        // Multi-line Python expressions cannot leave their brackets.
        assert_no_replacement(
            Lang::Python,
            "raise E(\n    a +\n    b)\n",
            "E(\n    a +\n    b)",
            "a +\n    b",
        );
        // `else` in Go and Rust must be followed by a block or an `if`.
        let go = "package main\n\nfunc f() {\n\tif a {\n\t} else if b {\n\t\tg()\n\t}\n}\n";
        assert_no_replacement(Lang::Go, go, "if b {\n\t\tg()\n\t}", "g()");
        let rust = "fn f() {\n    if a {\n    } else if b {\n        g();\n    }\n}\n";
        assert_no_replacement(Lang::Rust, rust, "if b {\n        g();\n    }", "b");
        // A Rust block-like statement followed by others stays block-like.
        let rust = "fn f() {\n    match x {\n        _ => {}\n    }\n    g();\n}\n";
        assert_no_replacement(Lang::Rust, rust, "match x {\n        _ => {}\n    }", "x");
        // Java expression statements must be calls, assignments, ...
        let java = "class A { void f() { a = g(1); } }\n";
        assert_no_replacement(Lang::Java, java, "a = g(1)", "a");
        assert_replacement(Lang::Java, java, "a = g(1)", "g(1)");
        // Conditions keep their parentheses; TypeScript types stay types.
        assert_no_replacement(Lang::C, "void f(void) { if (x) g(); }\n", "(x)", "x");
        assert_no_replacement(
            Lang::TypeScript,
            "type A = import(\"m\").B;\n",
            "import(\"m\")",
            "\"m\"",
        );
        assert_no_replacement(Lang::JavaScript, "m.e = { a };\n", "m.e = { a }", "{ a }");
    }

    #[test]
    fn multi_line_lists_lose_whole_lines() {
        let src = "int x[] = {\n    1,\n    2,\n    3\n};\n";
        assert_deletion(Lang::C, src, "    2,\n", "");
        assert_deletion(Lang::C, src, ",\n    3", "");
        let src = "f(\n    a,\n    b,\n)\n";
        assert_deletion(Lang::Python, src, "    b,\n", "");
        assert_deletion(Lang::Python, src, "    a,\n", "");
    }

    #[test]
    fn crlf_lines_are_removed_whole() {
        let src = "a()\r\nb()\r\nc()\r\n";
        assert_deletion(Lang::Python, src, "b()\r\n", "");
    }

    #[test]
    fn subsets_of_a_comma_list_are_applied_cleanly() {
        for (lang, src) in [(Lang::C, C), (Lang::Java, JAVA), (Lang::Cpp, CPP)] {
            let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
            let call = src.find("compute(alpha").expect("call") + "compute(".len();
            let group = levels
                .iter()
                .flatten()
                .find(|g| g.len() == 3 && g[0].start == call)
                .expect("argument group");
            for mask in 0u32..8 {
                let selected: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
                let out = text(apply_deletions(src.as_bytes(), group, &selected));
                let names = ["alpha", "beta", "gamma"];
                let kept: Vec<&str> = (0..3)
                    .filter(|i| mask & (1 << i) == 0)
                    .map(|i| names[i])
                    .collect();
                let expected = format!("compute({})", kept.join(", "));
                assert!(out.contains(&expected), "{lang} {selected:?}: {out}");
                assert!(
                    parses_cleanly(lang, out.as_bytes()).expect("parse"),
                    "{lang} {selected:?}: {out}"
                );
            }
        }
        let src = "int x[] = {\n    1,\n    2,\n    3\n};\n";
        let levels = deletion_levels(Lang::C, src.as_bytes()).expect("levels");
        let group = &levels[1][0];
        assert_eq!(
            text(apply_deletions(src.as_bytes(), group, &[1, 2])),
            "int x[] = {\n    1\n};\n"
        );
        assert_eq!(
            text(apply_deletions(src.as_bytes(), group, &[0, 2])),
            "int x[] = {\n    2\n};\n"
        );
        assert_eq!(
            text(apply_deletions(src.as_bytes(), group, &[0, 1, 2])),
            "int x[] = {\n};\n"
        );
        assert_eq!(text(apply_deletions(src.as_bytes(), group, &[7])), src);
    }

    #[test]
    fn replacements_are_ordered_and_inside_their_node() {
        for (lang, src) in samples() {
            let reps = replacements(lang, src.as_bytes()).expect("replacements");
            assert!(!reps.is_empty(), "{lang}: no replacements");
            for r in &reps {
                assert!(
                    r.range.start <= r.with.start && r.with.end <= r.range.end,
                    "{lang}: {r:?}"
                );
                assert!(
                    r.with != r.range && r.with.start < r.with.end && r.range.end <= src.len(),
                    "{lang}: {r:?}"
                );
                assert!(src.is_char_boundary(r.with.start) && src.is_char_boundary(r.with.end));
            }
            for (i, a) in reps.iter().enumerate() {
                for b in &reps[i + 1..] {
                    let strictly_contains = b.range.start <= a.range.start
                        && a.range.end <= b.range.end
                        && b.range.len() > a.range.len();
                    assert!(
                        !strictly_contains,
                        "{lang}: parent {b:?} listed after child {a:?}"
                    );
                }
            }
            let unique: HashSet<&Replacement> = reps.iter().collect();
            assert_eq!(unique.len(), reps.len(), "{lang}: duplicates");
        }
    }

    #[test]
    fn most_replacements_parse() {
        for (lang, src) in samples() {
            let reps = replacements(lang, src.as_bytes()).expect("replacements");
            let ok = reps
                .iter()
                .filter(|r| parses_cleanly(lang, &r.apply(src.as_bytes())).expect("parse"))
                .count();
            assert!(
                ok * 10 >= reps.len() * 8,
                "{lang}: only {ok} of {} replacements parse",
                reps.len()
            );
        }
    }

    #[test]
    fn broken_input_still_yields_candidates() {
        let broken = [
            (
                Lang::Python,
                "def f(x:\n    return [1, 2\nclass A:\n    pass\n",
            ),
            (Lang::Rust, "fn f( { let x = ; }\nstruct S { a: u8, }\n"),
            (
                Lang::JavaScript,
                "function f( { return [1, 2; }\nconst a = 1;\n",
            ),
            (
                Lang::TypeScript,
                "interface I { a: ; }\nlet x: number = ;\nf(1, 2);\n",
            ),
            (Lang::Tsx, "const e = <div><span></div>;\nf(1, 2);\n"),
            (Lang::Java, "class A { void f( { g(1, 2); }\n"),
            (Lang::Go, "package main\nfunc f( {\n\tg(1, 2)\n}\n"),
            (
                Lang::C,
                "int f(int a, { return a +; }\nint g(int b) { return b; }\n",
            ),
            (Lang::Cpp, "class A { int x; void f( }; int y = {1, 2};\n"),
        ];
        for (lang, src) in broken {
            assert!(
                !parses_cleanly(lang, src.as_bytes()).expect("parse"),
                "{lang}: should have errors"
            );
            let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
            assert!(!levels.is_empty(), "{lang}: no candidates for broken input");
            check_structure(lang, src.as_bytes());
            let reps = replacements(lang, src.as_bytes()).expect("replacements");
            for r in reps {
                let _ = r.apply(src.as_bytes());
            }
        }
    }

    #[test]
    fn missing_nodes_count_as_errors() {
        assert!(!parses_cleanly(Lang::C, b"int main(void) { return 0 }\n").expect("parse"));
        assert!(!parses_cleanly(Lang::Java, b"class A { void f() { g() } }\n").expect("parse"));
        assert!(parses_cleanly(Lang::C, b"int main(void) { return 0; }\n").expect("parse"));
    }

    #[test]
    fn empty_input_gives_nothing() {
        for lang in Lang::ALL {
            assert!(
                deletion_levels(lang, b"").expect("levels").is_empty(),
                "{lang}"
            );
            assert!(
                replacements(lang, b"").expect("replacements").is_empty(),
                "{lang}"
            );
            assert!(parses_cleanly(lang, b"").expect("parse"), "{lang}");
        }
    }

    #[test]
    fn odd_bytes_do_not_panic() {
        let inputs: [&[u8]; 6] = [
            b"\xff\xfe\x00garbage(1, 2)\n",
            b"x = \"\xc3\x28\"\nf(a, b)\n",
            b"\n\n\n",
            b"((((((((",
            b"}}}}]]]))",
            "f(é, ü, 名)\n// ünïcödé 🎉\n".as_bytes(),
        ];
        for lang in Lang::ALL {
            for src in inputs {
                let levels = deletion_levels(lang, src).expect("levels");
                for r in levels.iter().flatten().flatten() {
                    assert!(r.end <= src.len());
                    let _ = apply_deletion(src, r);
                }
                for r in replacements(lang, src).expect("replacements") {
                    let _ = r.apply(src);
                }
                let _ = parses_cleanly(lang, src).expect("parse");
            }
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 5000;
        let src = format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth));
        let levels = deletion_levels(Lang::Python, src.as_bytes()).expect("levels");
        assert!(levels.len() > 100);
        let reps = replacements(Lang::Python, src.as_bytes()).expect("replacements");
        assert!(!reps.is_empty());
    }

    #[test]
    fn oversized_input_is_refused() {
        let src = vec![b' '; MAX_INPUT_BYTES + 1];
        for result in [
            deletion_levels(Lang::C, &src).map(|_| ()),
            replacements(Lang::C, &src).map(|_| ()),
            parses_cleanly(Lang::C, &src).map(|_| ()),
        ] {
            match result {
                Err(SyntaxError::TooLarge { size, limit }) => {
                    assert_eq!((size, limit), (MAX_INPUT_BYTES + 1, MAX_INPUT_BYTES));
                }
                other => panic!("expected TooLarge, got {other:?}"),
            }
        }
    }

    #[test]
    fn parse_is_cancelled_after_the_timeout() {
        let src = "f(1, 2, 3);\n".repeat(2000);
        match parse(Lang::C, src.as_bytes(), Duration::ZERO) {
            Err(e @ SyntaxError::Timeout { .. }) => {
                assert!(e.to_string().contains("did not finish"))
            }
            other => panic!(
                "expected a timeout, got {:?}",
                other.map(|t| t.root_node().kind())
            ),
        }
        assert!(parse(Lang::C, src.as_bytes(), PARSE_TIMEOUT).is_ok());
    }

    /// A small fixed-seed xorshift generator.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    #[test]
    fn random_subsets_keep_utf8() {
        let unicode = "# café ☕\ndef grüß(α, β, γ):\n    s = ['é', 'ü', '名前']\n    return f(α, β, γ)  # 🎉\n";
        let mut inputs = samples();
        inputs.push((Lang::Python, unicode));
        inputs.push((
            Lang::JavaScript,
            "const ñ = ['é', 'ü', \"名\"]; // ✓\nf(ñ, 'ß', `ü`);\n",
        ));
        inputs.push((
            Lang::Rust,
            "fn é() { let v = ['é', 'ü', '名']; g(\"ß\", v, 1); } // ✓\n",
        ));
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for (lang, src) in inputs {
            let levels = deletion_levels(lang, src.as_bytes()).expect("levels");
            for group in levels.iter().flatten() {
                for _ in 0..20 {
                    let selected: Vec<usize> =
                        (0..group.len()).filter(|_| rng.next() & 1 == 0).collect();
                    let out = apply_deletions(src.as_bytes(), group, &selected);
                    assert!(out.len() <= src.len());
                    assert!(
                        String::from_utf8(out).is_ok(),
                        "{lang}: {selected:?} of {group:?}"
                    );
                }
            }
            for r in replacements(lang, src.as_bytes()).expect("replacements") {
                assert!(
                    String::from_utf8(r.apply(src.as_bytes())).is_ok(),
                    "{lang}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn random_ranges_never_panic() {
        let mut rng = XorShift(42);
        let src = PYTHON.as_bytes();
        for _ in 0..500 {
            let len = usize::try_from(rng.next() % 2000).unwrap_or(0);
            let a = usize::try_from(rng.next() % 2000).unwrap_or(0);
            let b = usize::try_from(rng.next() % 2000).unwrap_or(0);
            let group: Vec<Range<usize>> = vec![a..b, b..a, len..len + 3];
            let _ = apply_deletions(src, &group, &[0, 1, 2]);
            let _ = Replacement {
                range: a..b,
                with: b..a,
            }
            .apply(src);
        }
    }

    fn declared(lang: Lang, src: &str) -> Vec<String> {
        declarations(lang, src.as_bytes())
            .expect("declarations")
            .into_iter()
            .map(|(r, name)| {
                // Each range is a top-level deletion range that holds its declaration.
                assert!(
                    src[r.clone()].contains(name.as_str()),
                    "{name} not in {r:?}"
                );
                name
            })
            .collect()
    }

    #[test]
    fn declarations_name_what_each_language_declares_at_top_level() {
        assert_eq!(
            declared(
                Lang::Python,
                "import os\nLIMIT = 3\n@cache\ndef f(x):\n    return x\nclass C:\n    pass\nf(1)\n"
            ),
            ["LIMIT", "f", "C"]
        );
        assert_eq!(
            declared(
                Lang::Rust,
                "use std::fmt;\nconst N: usize = 1;\nstruct S;\nimpl S {}\nfn go() {}\nmacro_rules! m { () => {} }\n"
            ),
            ["N", "S", "go", "m"]
        );
        assert_eq!(
            declared(
                Lang::JavaScript,
                "import x from './x';\nconst a = 1, b = 2;\nfunction g() {}\nexport class K {}\ng();\n"
            ),
            ["a", "g", "K"]
        );
        assert_eq!(
            declared(
                Lang::Go,
                "package p\nimport \"fmt\"\ntype T struct{}\nvar v = 1\nfunc (t T) M() {}\nfunc F() {}\n"
            ),
            ["T", "v", "M", "F"]
        );
        assert_eq!(
            declared(
                Lang::C,
                "#include <stdio.h>\n#define MAX 3\nstatic int *helper(int x) { return 0; }\nint counter = 0;\ntypedef int Int32;\nstruct point { int x; };\n"
            ),
            ["MAX", "helper", "counter", "Int32", "point"]
        );
        assert_eq!(
            declared(Lang::Java, "import a.B;\nclass Main { void m() {} }\n"),
            ["Main"]
        );
    }

    #[test]
    fn the_smallest_enclosing_range_is_the_innermost_deletable_node() {
        let src = "def f():\n    a = helper(1)\n    return a\n";
        let levels = deletion_levels(Lang::Python, src.as_bytes()).expect("levels");
        let at = src.find("helper").expect("helper");
        let r = smallest_enclosing(&levels, &(at..at + 6)).expect("a range");
        assert_eq!(&src[r], "    a = helper(1)\n");
    }
}

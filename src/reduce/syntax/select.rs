//! Element selection: which children of a node are deletable list elements, how they group and
//! nest into levels, and the separator- and line-aware byte range each deletion takes.

use super::languages::*;
use std::collections::HashMap;
use std::collections::HashSet;
use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::{Node, TreeCursor};

use super::lang::*;

/// Per-language lookup tables indexed by node kind id.
pub(super) struct Table {
    pub(super) specs: Vec<&'static Spec>,
    /// Indices into `specs` of the specs whose parents include the kind.
    pub(super) by_kind: Vec<Vec<usize>>,
    pub(super) comment: Flags,
    pub(super) expr: Flags,
    pub(super) holder: Flags,
    pub(super) block: Flags,
    /// Containers at which the search for sub-expressions stops.
    pub(super) stop: Flags,
    pub(super) lang: Lang,
}

/// A set of node kinds, indexed by kind id.
pub(super) struct Flags(Vec<bool>);

impl Flags {
    pub(super) fn has(&self, node: Node) -> bool {
        self.0
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(false)
    }
}

pub(super) fn table(lang: Lang) -> &'static Table {
    static TABLES: [OnceLock<Table>; 9] = [const { OnceLock::new() }; 9];
    TABLES[lang.index()].get_or_init(|| build_table(lang))
}

pub(super) fn build_table(lang: Lang) -> Table {
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

#[derive(Clone, Copy)]
pub(super) struct Kid<'t> {
    pub(super) node: Node<'t>,
    pub(super) field: Option<&'static str>,
}

pub(super) fn children<'t>(node: Node<'t>, cursor: &mut TreeCursor<'t>) -> Vec<Kid<'t>> {
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
pub(super) fn usable(node: &Node) -> bool {
    node.is_named() && !node.is_missing() && node.start_byte() < node.end_byte()
}

/// A deletable element: children `first..=last` of the parent, plus an
/// optional separator child before or after them.
#[derive(Clone, Copy)]
pub(super) struct Elem {
    pub(super) first: usize,
    pub(super) last: usize,
    pub(super) comment: bool,
    /// Number of leading children glued to the element (attributes).
    pub(super) glued: usize,
    pub(super) sep_before: Option<usize>,
    pub(super) sep_after: Option<usize>,
}

impl Elem {
    pub(super) fn new(first: usize, last: usize, comment: bool) -> Self {
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

pub(super) const OPENERS: &[&str] = &["(", "[", "{", "<", "|", "[["];
pub(super) const CLOSERS: &[&str] = &[")", "]", "}", ">", "|", "]]"];

pub(super) fn pick_elements(table: &Table, spec: &Spec, kids: &[Kid]) -> Vec<Elem> {
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

pub(super) fn group_elements(
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
pub(super) enum Blanks {
    /// The blanks after it, when more code follows on the line.
    After,
    /// The blanks before it, when it ends the line (a trailing comment).
    Before,
    /// None.
    Neither,
}

/// Widens `start..end` over the surrounding whitespace (see the module docs)
/// and rejects a deletion that would glue two words together.
pub(super) fn finish_range(
    src: &[u8],
    start: usize,
    end: usize,
    blanks: Blanks,
) -> Option<Range<usize>> {
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

pub(super) fn skip_blanks_back(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i
}

pub(super) fn skip_blanks(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    while i < src.len() && matches!(src[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// Deletion candidates, level by level from the root down.
///
/// `levels[0]` holds the group of the root's children. A group is at level
/// `d` when its parent node lies inside `d` elements of other groups, so each
/// group of `levels[d + 1]` lies inside one element of `levels[d]`. Within a
/// level, groups come in document order; within a group, ranges are sorted
/// and disjoint, except that the last element of a comma list may start at
/// the comma that its predecessor also covers (see the module docs).
pub fn deletion_levels(lang: Lang, src: &[u8]) -> Result<Levels, SyntaxError> {
    levels_of(lang, src, false)
}

/// [`deletion_levels`] without the parameters that are still used: a parameter whose name
/// (or any word of it before a default value) occurs in its function's body. Deleting one
/// alone cannot keep the failure: the body's use is left unbound (a compile error, or a
/// `NameError` as soon as it runs), and every call still passes the argument. A chunk of
/// the list never holds both (the uses lie in the body, another group), so no joint cut is
/// lost. These are the levels the syntax pass searches; a parameter is offered again once
/// the body lost its uses.
///
/// In Rust it also leaves out the tail expression of the body of a function that returns a
/// value (its `-> T` other than `()`): without it the body is a block of type `()`, which
/// never compiles, whatever else goes with it (the body's stub, `{ todo!() }`, included).
pub fn search_levels(lang: Lang, src: &[u8]) -> Result<Levels, SyntaxError> {
    levels_of(lang, src, true)
}

/// The index in `kids` of the tail expression of `node`, when `node` is the body of a Rust
/// function that returns a value: the last child that is neither a comment, a statement
/// nor an item.
fn returned_tail(lang: Lang, node: Node, kids: &[Kid], src: &[u8]) -> Option<usize> {
    if lang != Lang::Rust || node.kind() != "block" {
        return None;
    }
    let function = node.parent().filter(|f| f.kind() == "function_item")?;
    if function.child_by_field_name("body") != Some(node) {
        return None;
    }
    let returns = function.child_by_field_name("return_type")?;
    let unit: Vec<u8> = src
        .get(returns.byte_range())?
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if unit == b"()" {
        return None;
    }
    let (i, tail) = kids
        .iter()
        .enumerate()
        .rev()
        .find(|(_, k)| k.node.is_named() && !k.node.kind().ends_with("comment"))?;
    let kind = tail.node.kind();
    let statement = kind.ends_with("_statement")
        || kind.ends_with("_declaration")
        || kind.ends_with("_item")
        || kind == "attribute_item";
    (!statement).then_some(i)
}

/// Kinds of parameter lists, in every grammar.
const PARAMETER_LISTS: &[&str] = &[
    "parameters",
    "lambda_parameters",
    "formal_parameters",
    "parameter_list",
];

/// The identifiers of the body of the function whose parameter list is `params` (the
/// `body` field of its parent or, for a C declarator, its grandparent); `None` when there
/// is no body.
pub(super) fn body_words<'s>(
    params: Node,
    src: &'s [u8],
) -> Option<std::collections::HashMap<&'s str, usize>> {
    let owner = params.parent()?;
    let body = owner
        .child_by_field_name("body")
        .or_else(|| owner.parent()?.child_by_field_name("body"))?;
    Some(crate::reduce::identifiers::identifiers(
        src.get(body.start_byte()..body.end_byte())?,
    ))
}

/// Whether the parameter at `range` binds a word the body uses: any identifier of its text
/// before a default value (`=`) counts, which covers names before their type (`x: int`,
/// `x int`) and after it (`int x`).
pub(super) fn still_used(
    src: &[u8],
    range: &Range<usize>,
    body: &std::collections::HashMap<&str, usize>,
) -> bool {
    let text = src.get(range.clone()).unwrap_or_default();
    let head = &text[..text.iter().position(|b| *b == b'=').unwrap_or(text.len())];
    crate::reduce::identifiers::identifiers(head)
        .keys()
        .any(|w| body.contains_key(w))
}

fn levels_of(lang: Lang, src: &[u8], search: bool) -> Result<Levels, SyntaxError> {
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
            let body = (search && PARAMETER_LISTS.contains(&node.kind()))
                .then(|| body_words(node, src))
                .flatten();
            let tail = search
                .then(|| returned_tail(lang, node, &kids, src))
                .flatten();
            add_group(
                &mut levels,
                level,
                elems
                    .into_iter()
                    .filter(|(e, _)| !tail.is_some_and(|t| e.first <= t && t <= e.last))
                    .map(|(_, r)| r)
                    .filter(|r| !body.as_ref().is_some_and(|b| still_used(src, r, b)))
                    .collect(),
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

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
}

//! Node-to-descendant replacements: an expression by a sub-expression, a compound statement by
//! one of its bodies, a block by one of its statements, offered only where the result can parse.

use super::select::*;
use std::collections::HashSet;
use std::ops::Range;

use tree_sitter::{Node, TreeCursor};

use super::lang::*;

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
        let offered = found.len();
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
        if let Some(name) = parameter_without_default(table.lang, node) {
            found.push((
                depth,
                Replacement {
                    range: range.clone(),
                    with: name.byte_range(),
                },
            ));
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
        if depth == 1 && found.len() == offered {
            // A top-level item the failure needs only for a comment it holds (a comment a
            // cut across items left inside a struct, a class or a function): the item by
            // each of its comments, where nothing else can stand in for it.
            for comment in comments_inside(table, node, &mut cursor) {
                found.push((
                    depth,
                    Replacement {
                        range: range.clone(),
                        with: comment,
                    },
                ));
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

/// The byte ranges of the comments strictly inside `node` (not `node` itself), in source
/// order.
fn comments_inside<'t>(
    table: &Table,
    node: Node<'t>,
    cursor: &mut TreeCursor<'t>,
) -> Vec<Range<usize>> {
    if table.comment.has(node) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        for kid in children(n, cursor).into_iter().rev() {
            if table.comment.has(kid.node) {
                if usable(&kid.node) {
                    out.push(kid.node.byte_range());
                }
            } else if kid.node.child_count() > 0 {
                stack.push(kid.node);
            }
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

/// For a parameter with a default value (Python `key=f`, `key: T = f`; JavaScript and
/// TypeScript `key = f`), its name: the parameter without its default, which takes a
/// module out of use when the default is the module's last use.
fn parameter_without_default(lang: Lang, node: Node) -> Option<Node> {
    match (lang, node.kind()) {
        (Lang::Python, "default_parameter" | "typed_default_parameter") => {
            node.child_by_field_name("name")
        }
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "assignment_pattern")
            if node
                .parent()
                .is_some_and(|p| p.kind() == "formal_parameters") =>
        {
            node.child_by_field_name("left")
        }
        _ => None,
    }
}

/// The nearest expression descendants of `node`, looking through wrappers
/// such as argument lists but not into statement blocks.
pub(super) fn nearest_expressions<'t>(
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
pub(super) fn expression_fits(table: &Table, src: &[u8], node: Node, sub: Node) -> bool {
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
pub(super) fn in_type_position(node: Node) -> bool {
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
pub(super) const RUST_BLOCK_LIKE: &[&str] = &[
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
pub(super) fn rust_block_statement(table: &Table, node: Node) -> bool {
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
pub(super) const ASSIGNABLE: &[&str] = &[
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
pub(super) fn is_assignment_target(table: &Table, node: Node) -> bool {
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
pub(super) fn inside_brackets(node: Node) -> bool {
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
pub(super) fn in_else_position(table: &Table, node: Node) -> bool {
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
pub(super) fn is_required_parens(node: Node) -> bool {
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
pub(super) fn body_span<'t>(
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
    use super::super::tests::*;
    use super::*;

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
    fn a_parameter_loses_its_default_and_keeps_its_name() {
        let py = "def f(key=keys.methodkey, lock: int = 0):\n    pass\n";
        assert_replacement(Lang::Python, py, "key=keys.methodkey", "key");
        assert_replacement(Lang::Python, py, "lock: int = 0", "lock");
        let js = "function f(a = g(1)) {}\n";
        assert_replacement(Lang::JavaScript, js, "a = g(1)", "a");
        // An assignment that is not a parameter keeps its value.
        assert_no_replacement(Lang::JavaScript, "const [a = 1] = x;\n", "a = 1", "a");
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
}

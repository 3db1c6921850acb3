//! The names that top-level declarations declare, and where each declaration can be deleted.

use std::ops::Range;

use tree_sitter::Node;

use super::lang::*;
use super::select::deletion_levels;

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

/// Kinds of nested nodes that declare a member of their parent: an enum's variant, a
/// struct's or class's field, a method, an associated constant, a nested function.
const MEMBER_KINDS: &[&str] = &[
    "enum_variant",
    "enumerator",
    "enum_constant",
    "field_declaration",
    "field_definition",
    "public_field_definition",
    "function_item",
    "function_signature_item",
    "const_item",
    "function_definition",
    "decorated_definition",
    "method_definition",
    "method_declaration",
    "method_spec",
];

/// The nested declarations of `src` that name a member (see `MEMBER_KINDS`): the
/// deletion range of each (the smallest deletion element below the top level that holds
/// the declaration and none of its siblings) with the name it declares. Top-level
/// declarations are [`declarations`]'.
pub fn member_declarations(
    lang: Lang,
    src: &[u8],
) -> Result<Vec<(Range<usize>, String)>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let levels = deletion_levels(lang, src)?;
    let nested: Vec<&Range<usize>> = levels.iter().skip(1).flatten().flatten().collect();
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut stack: Vec<Node> = root.named_children(&mut cursor).collect();
    let mut out = Vec::new();
    while let Some(node) = stack.pop() {
        stack.extend(node.named_children(&mut cursor));
        let Some(parent) = node.parent() else {
            continue;
        };
        if parent == root
            || parent.kind() == "decorated_definition"
            || !MEMBER_KINDS.contains(&node.kind())
        {
            continue;
        }
        let Some(name) = declared_name(node, src) else {
            continue;
        };
        let (start, end) = (node.start_byte(), node.end_byte());
        let Some(range) = nested
            .iter()
            .filter(|r| r.start <= start && end <= r.end)
            .min_by_key(|r| r.len())
        else {
            continue;
        };
        // The element must be this declaration's own: beyond the node, it may hold only
        // separators, blanks and the attributes, comments or decorators before it, never
        // a word of a sibling or of an enclosing statement (the element of a method that
        // is its class's only statement is the class's own).
        let mut siblings = parent.walk();
        let glued: Vec<Range<usize>> = parent
            .named_children(&mut siblings)
            .filter(|s| {
                ["attribute", "comment", "decorator"]
                    .iter()
                    .any(|k| s.kind().contains(k))
            })
            .map(|s| s.byte_range())
            .collect();
        let alone = (range.start..range.end).all(|i| {
            (start..end).contains(&i)
                || glued.iter().any(|g| g.contains(&i))
                || src
                    .get(i)
                    .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'_')
        });
        if alone {
            out.push(((*range).clone(), name));
        }
    }
    out.sort_by_key(|(r, _)| r.start);
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

/// The names that `src` uses as identifiers (nodes whose kind is an identifier of the
/// grammar: variables, functions, types, fields, properties), never keywords or literals.
pub fn identifier_names(
    lang: Lang,
    src: &[u8],
) -> Result<std::collections::BTreeSet<String>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let mut out = std::collections::BTreeSet::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_named() && !node.is_error() && node.kind().ends_with("identifier") {
            if let Some(text) = src
                .get(node.byte_range())
                .and_then(|t| std::str::from_utf8(t).ok())
            {
                out.insert(text.to_string());
            }
            continue;
        }
        stack.extend(node.children(&mut cursor));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn members(lang: Lang, src: &str) -> Vec<(String, String)> {
        member_declarations(lang, src.as_bytes())
            .expect("member declarations")
            .into_iter()
            .map(|(r, name)| (name, src[r].trim().to_string()))
            .collect()
    }

    #[test]
    fn member_declarations_name_variants_fields_and_methods_with_their_own_range() {
        let rust = "enum E {\n    A(u8),\n    #[allow(dead_code)]\n    B,\n}\nstruct S {\n    x: u8,\n}\nimpl S {\n    const K: u8 = 1;\n    fn get(&self) -> u8 { self.x }\n}\nfn top() {}\n";
        assert_eq!(
            members(Lang::Rust, rust),
            [
                ("A", "A(u8),"),
                ("B", "#[allow(dead_code)]\n    B,"),
                ("x", "x: u8,"),
                ("K", "const K: u8 = 1;"),
                ("get", "fn get(&self) -> u8 { self.x }"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let python = "class C:\n    n = 1\n    @property\n    def p(self):\n        return 1\n    def q(self):\n        return 2\ndef f():\n    pass\n";
        assert_eq!(
            members(Lang::Python, python),
            [
                ("p", "@property\n    def p(self):\n        return 1"),
                ("q", "def q(self):\n        return 2"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        // A method that is its class's only statement has no element of its own.
        assert_eq!(
            members(
                Lang::Python,
                "def f():\n    class C:\n        def only(self):\n            pass\n    return C\n"
            ),
            []
        );
        assert_eq!(
            members(
                Lang::C,
                "enum color { RED, GREEN };\nstruct point { int x; int y; };\n"
            ),
            [
                ("RED", "RED,"),
                ("GREEN", ", GREEN"),
                ("x", "int x;"),
                ("y", "int y;")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }
}

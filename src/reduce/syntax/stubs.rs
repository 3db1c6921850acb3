//! Function bodies replaced by the smallest body that still compiles for any signature: a
//! function the failure never calls keeps its signature (its callers still compile) and
//! loses everything inside in one edit, instead of one failing deletion per statement.

use std::ops::Range;

use tree_sitter::Node;

use super::lang::{Lang, PARSE_TIMEOUT, SyntaxError, parse};

/// The stub body of `function` in `lang`, or `None` when it is no function with a body this
/// module replaces. Each stub type-checks whatever the function returns: it diverges (Rust,
/// Java, Go; a Rust function without `-> T` gets `{}`), or the language does not check
/// (Python, JavaScript, TypeScript's `{}` only for functions whose type allows it, C and
/// C++, where a missing return compiles).
fn stub(lang: Lang, function: Node) -> Option<&'static str> {
    let kind = function.kind();
    match lang {
        // A function that returns nothing needs no `todo!()`, which the syntax pass would
        // only try to delete next.
        Lang::Rust if kind == "function_item" => {
            if function.child_by_field_name("return_type").is_some() {
                Some("{ todo!() }")
            } else {
                Some("{}")
            }
        }
        Lang::Rust => None,
        Lang::Python => matches!(kind, "function_definition").then_some("..."),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => matches!(
            kind,
            "function_declaration"
                | "generator_function_declaration"
                | "method_definition"
                | "function_expression"
                | "function"
        )
        .then_some("{}"),
        Lang::Java => matches!(kind, "method_declaration" | "constructor_declaration")
            .then_some("{ throw null; }"),
        Lang::Go => {
            matches!(kind, "function_declaration" | "method_declaration").then_some("{ panic(0) }")
        }
        Lang::C | Lang::Cpp => matches!(kind, "function_definition").then_some("{}"),
    }
}

/// The bodies of `src`'s outermost functions that are longer than their stub, in source
/// order, each with its stub. A function inside another function's body is left to a
/// later search, once the outer body stayed.
pub fn stubs(lang: Lang, src: &[u8]) -> Result<Vec<(Range<usize>, &'static str)>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let mut out: Vec<(Range<usize>, &'static str)> = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            continue;
        }
        if let Some(with) = stub(lang, node)
            && let Some(body) = node.child_by_field_name("body")
            && !body.has_error()
        {
            let range = body.byte_range();
            let text = src.get(range.clone()).unwrap_or_default();
            // Only a body whose replacement makes the file smaller, and not already a
            // stub (with different blanks).
            let squeezed: Vec<u8> = text
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            let stub_squeezed: Vec<u8> =
                with.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            if text.len() > with.len() && squeezed != stub_squeezed {
                out.push((range, with));
            }
            continue;
        }
        let kids: Vec<_> = node.children(&mut cursor).collect();
        stack.extend(kids.into_iter().rev());
    }
    out.sort_by_key(|(r, _)| r.start);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stubbed(lang: Lang, src: &str) -> String {
        super::super::lang::replaced(src, stubs(lang, src.as_bytes()).unwrap())
    }

    #[test]
    fn outermost_bodies_become_stubs_that_still_parse_in_every_language() {
        let cases = [
            (
                Lang::Rust,
                "fn f() -> u8 {\n    let x = 1;\n    x\n}\nimpl A {\n    fn g(&self) { h(1, 2); }\n}\nfn s() { todo!() }\n",
                "fn f() -> u8 { todo!() }\nimpl A {\n    fn g(&self) {}\n}\nfn s() {}\n",
            ),
            (
                Lang::Python,
                "def f(x):\n    y = x + 1\n    return y\n\nclass A:\n    def g(self):\n        def inner():\n            pass\n        return 2\n",
                "def f(x):\n    ...\n\nclass A:\n    def g(self):\n        ...\n",
            ),
            (
                Lang::JavaScript,
                "function f(a) { return a + 1; }\nclass A { m() { g(); } }\nconst h = function () { return 3; };\n",
                "function f(a) {}\nclass A { m() {} }\nconst h = function () {};\n",
            ),
            (
                Lang::TypeScript,
                "function f(a: number): void { console.log(a); }\n",
                "function f(a: number): void {}\n",
            ),
            (
                Lang::Java,
                "class A {\n    A() { super(); x = 1; }\n    int f() { return 42 + n; }\n}\n",
                "class A {\n    A() { throw null; }\n    int f() { throw null; }\n}\n",
            ),
            (
                Lang::Go,
                "package p\nfunc f() int {\n\treturn 42\n}\nfunc (a A) m() { g(1, 2, 3) }\n",
                "package p\nfunc f() int { panic(0) }\nfunc (a A) m() { panic(0) }\n",
            ),
            (
                Lang::C,
                "int f(int a) {\n    return a * 2;\n}\nint g(void);\n",
                "int f(int a) {}\nint g(void);\n",
            ),
            (
                Lang::Cpp,
                "struct A { int m() { return 1; } };\nint f() { return A().m(); }\n",
                "struct A { int m() {} };\nint f() {}\n",
            ),
        ];
        for (lang, src, want) in cases {
            let got = stubbed(lang, src);
            assert_eq!(got, want, "{lang:?}");
            assert!(
                crate::reduce::syntax::parses_cleanly(lang, got.as_bytes()).unwrap(),
                "{got}"
            );
            // A stubbed file has nothing left to stub.
            assert_eq!(stubbed(lang, &got), got, "{lang:?}");
        }
    }

    #[test]
    fn a_broken_body_is_left_alone() {
        assert!(
            stubs(Lang::Rust, b"fn f() { let = ; }\n")
                .unwrap()
                .is_empty()
        );
    }
}

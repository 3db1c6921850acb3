//! Parameters that only their callers need: a parameter of a function whose body never
//! names it, and the argument each call of the function passes for it.
//!
//! Deleting such a parameter alone fails wherever a call still passes the argument (a
//! `TypeError`, a compile error), and deleting the argument alone fails for the opposite
//! reason, so neither the syntax pass nor the lines pass can take them. Together they often
//! go. Free functions only (no methods, whose calls pass the receiver differently), in
//! Python, JavaScript, TypeScript and Rust, called by their plain name.

use std::ops::Range;

use tree_sitter::Node;

use super::lang::{Lang, PARSE_TIMEOUT, SyntaxError, parse};
use super::select::{body_words, still_used};

/// A parameter its function's body never names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unused {
    /// The function's name.
    pub function: String,
    /// The parameter's name.
    pub name: String,
    /// Its position among the positional parameters; `None` for a keyword-only one.
    pub index: Option<usize>,
    /// Its deletion range (with its separator).
    pub range: Range<usize>,
}

/// The function definitions of `lang` this module knows: kinds of free functions.
fn is_function(lang: Lang, node: Node) -> bool {
    let free = |method_parents: &[&str]| {
        let mut p = node.parent();
        while let Some(n) = p {
            if method_parents.contains(&n.kind()) {
                return false;
            }
            if is_function_kind(lang, n.kind()) {
                // A function nested in a function is free too.
                return true;
            }
            p = n.parent();
        }
        true
    };
    match lang {
        Lang::Python => node.kind() == "function_definition" && free(&["class_definition"]),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            matches!(
                node.kind(),
                "function_declaration" | "generator_function_declaration"
            ) && free(&["class_body"])
        }
        Lang::Rust => node.kind() == "function_item" && free(&["impl_item", "trait_item"]),
        _ => false,
    }
}

fn is_function_kind(lang: Lang, kind: &str) -> bool {
    match lang {
        Lang::Python => kind == "function_definition",
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            matches!(
                kind,
                "function_declaration" | "generator_function_declaration"
            )
        }
        Lang::Rust => kind == "function_item",
        _ => false,
    }
}

/// The range that deletes `node` from its comma-separated list: with the comma after it
/// and the blanks after that, or, for the last element, with the comma before it
/// (`f(a, b)` loses `b` as `, b`).
fn list_element(node: Node, src: &[u8]) -> Range<usize> {
    if let Some(comma) = node.next_sibling().filter(|n| n.kind() == ",") {
        let mut end = comma.end_byte();
        while src.get(end).is_some_and(|b| matches!(b, b' ' | b'\t')) {
            end += 1;
        }
        return node.start_byte()..end;
    }
    match node.prev_sibling().filter(|n| n.kind() == ",") {
        Some(comma) => comma.start_byte()..node.end_byte(),
        None => node.byte_range(),
    }
}

/// For a Python keyword-only parameter that is the only one after a bare `*` (`def f(a, *,
/// d)`, `def f(*, d, **kw)`), the range that deletes it together with that `*`: Python
/// rejects a bare `*` that no named parameter follows (`def f(a, *)`). `None` otherwise.
fn lone_keyword_only(lang: Lang, node: Node, src: &[u8]) -> Option<Range<usize>> {
    if lang != Lang::Python {
        return None;
    }
    // Back over the list to the `*`, through no other parameter.
    let mut star = node.prev_named_sibling();
    while let Some(n) = star.filter(|n| n.kind() == "comment") {
        star = n.prev_named_sibling();
    }
    let star = star.filter(|n| n.kind() == "keyword_separator")?;
    // Ahead, nothing but the end of the list or `**kwargs`.
    let mut next = node.next_named_sibling();
    while let Some(n) = next.filter(|n| n.kind() == "comment") {
        next = n.next_named_sibling();
    }
    if next.is_some_and(|n| n.kind() != "dictionary_splat_pattern") {
        return None;
    }
    let (first, last) = (list_element(star, src), list_element(node, src));
    Some(if last.start < node.start_byte() {
        // `node` is last and takes the comma before it: the `*` takes the one before it.
        let before = star.prev_sibling().filter(|n| n.kind() == ",");
        before.map_or(star.start_byte(), |c| c.start_byte())..node.end_byte()
    } else {
        first.start..last.end
    })
}

/// What one parameter node is: its name when it is a plain one, and whether it ends the
/// positional ones (`*`, `*args`, `...rest`).
enum Param {
    Named(String),
    Other,
    EndsPositional,
}

fn param(lang: Lang, node: Node, src: &[u8]) -> Param {
    let name = |n: Option<Node>| match n {
        Some(n) if n.kind() == "identifier" => {
            Param::Named(n.utf8_text(src).unwrap_or("").to_string())
        }
        _ => Param::Other,
    };
    match (lang, node.kind()) {
        (Lang::Python, "identifier") => name(Some(node)),
        (Lang::Python, "typed_parameter") => name(node.named_child(0)),
        (Lang::Python, "default_parameter" | "typed_default_parameter") => {
            name(node.child_by_field_name("name"))
        }
        (Lang::Python, "list_splat_pattern" | "keyword_separator") => Param::EndsPositional,
        (Lang::Python, "dictionary_splat_pattern") => Param::EndsPositional,
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "identifier") => name(Some(node)),
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "assignment_pattern") => {
            name(node.child_by_field_name("left"))
        }
        (Lang::TypeScript | Lang::Tsx, "required_parameter" | "optional_parameter") => {
            name(node.child_by_field_name("pattern"))
        }
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "rest_pattern") => Param::EndsPositional,
        (Lang::Rust, "parameter") => name(node.child_by_field_name("pattern")),
        (Lang::Rust, "variadic_parameter") => Param::EndsPositional,
        _ => Param::Other,
    }
}

/// The parameters of the free functions of `src` that their body never names, in source
/// order, each with its deletion range.
///
/// # Errors
/// The file cannot be parsed.
pub fn unused_parameters(lang: Lang, src: &[u8]) -> Result<Vec<Unused>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        stack.extend(node.named_children(&mut cursor));
        if !is_function(lang, node) || node.has_error() {
            continue;
        }
        let (Some(fname), Some(params)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("parameters"),
        ) else {
            continue;
        };
        let Some(body) = body_words(params, src) else {
            continue;
        };
        let mut index = Some(0);
        let mut walk = params.walk();
        for p in params.named_children(&mut walk) {
            if matches!(p.kind(), "comment" | "positional_separator") {
                continue;
            }
            let at = index;
            index = index.map(|i| i + 1);
            let name = match param(lang, p, src) {
                Param::Named(name) => name,
                Param::Other => continue,
                Param::EndsPositional => {
                    index = None;
                    continue;
                }
            };
            if still_used(src, &p.byte_range(), &body) {
                continue;
            }
            out.push(Unused {
                function: fname.utf8_text(src).unwrap_or("").to_string(),
                name,
                index: at,
                range: lone_keyword_only(lang, p, src).unwrap_or_else(|| list_element(p, src)),
            });
        }
    }
    out.sort_by_key(|u| u.range.start);
    Ok(out)
}

/// The call nodes of `lang` whose callee is the plain name `function`, with their argument
/// lists.
fn calls<'t>(lang: Lang, root: Node<'t>, src: &[u8], function: &str) -> Vec<Node<'t>> {
    let kind = match lang {
        Lang::Python => "call",
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Rust => "call_expression",
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        stack.extend(node.named_children(&mut cursor));
        if node.kind() != kind {
            continue;
        }
        let callee = node.child_by_field_name("function");
        if callee
            .is_some_and(|c| c.kind() == "identifier" && c.utf8_text(src).unwrap_or("") == function)
            && let Some(args) = node.child_by_field_name("arguments")
        {
            out.push(args);
        }
    }
    out
}

/// The calls of one file, parsed once for every parameter asked about.
pub struct CallSites {
    lang: Lang,
    src: std::sync::Arc<[u8]>,
    tree: tree_sitter::Tree,
}

impl CallSites {
    /// Parses `src`.
    ///
    /// # Errors
    /// The file cannot be parsed.
    pub fn new(lang: Lang, src: std::sync::Arc<[u8]>) -> Result<CallSites, SyntaxError> {
        let tree = parse(lang, &src, PARSE_TIMEOUT)?;
        Ok(CallSites { lang, src, tree })
    }

    /// The deletion ranges of the arguments that the calls of `function` pass for its
    /// parameter `name` at position `index` (`None`: keyword-only): the argument at that
    /// position, or a keyword argument of that name. `None` when a call cannot be read that
    /// way (a spread `*args` or `...xs` at or before the position).
    pub fn cuts(
        &self,
        function: &str,
        index: Option<usize>,
        name: &str,
    ) -> Option<Vec<Range<usize>>> {
        let src = &self.src[..];
        let mut out = Vec::new();
        for args in calls(self.lang, self.tree.root_node(), src, function) {
            let mut positional = 0;
            let mut cut = None;
            let mut walk = args.walk();
            for arg in args.named_children(&mut walk) {
                match arg.kind() {
                    "comment" | "dictionary_splat" => {}
                    "keyword_argument" => {
                        let key = arg
                            .child_by_field_name("name")
                            .map(|n| n.utf8_text(src).unwrap_or(""));
                        if key == Some(name) {
                            cut = Some(list_element(arg, src));
                        }
                    }
                    "list_splat" | "spread_element" => {
                        if index.is_some_and(|i| positional <= i) && cut.is_none() {
                            return None;
                        }
                    }
                    _ => {
                        if Some(positional) == index {
                            cut = Some(list_element(arg, src));
                        }
                        positional += 1;
                    }
                }
            }
            out.extend(cut);
        }
        out.sort_by_key(|r| r.start);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument_cuts(
        lang: Lang,
        src: &[u8],
        function: &str,
        index: Option<usize>,
        name: &str,
    ) -> Result<Option<Vec<Range<usize>>>, SyntaxError> {
        Ok(CallSites::new(lang, std::sync::Arc::from(src))?.cuts(function, index, name))
    }

    fn cut(src: &str, ranges: &[Range<usize>]) -> String {
        let mut ranges = ranges.to_vec();
        ranges.sort_by_key(|r| r.start);
        let mut out = String::new();
        let mut at = 0;
        for r in ranges {
            out.push_str(&src[at..r.start.max(at)]);
            at = at.max(r.end);
        }
        out.push_str(&src[at..]);
        out
    }

    #[test]
    fn a_parameter_the_body_never_names_goes_with_each_argument_passed_for_it() {
        let src = "def f(a, key, *args, info=None):\n    return a\n\nclass C:\n    def m(self, unused):\n        pass\n\nf(1, 2)\nf(3, key=4, info=5)\nf(*xs)\n";
        let unused = unused_parameters(Lang::Python, src.as_bytes()).unwrap();
        let names: Vec<(&str, &str, Option<usize>)> = unused
            .iter()
            .map(|u| (u.function.as_str(), u.name.as_str(), u.index))
            .collect();
        // `a` is used, `*args` is no name, and a method's parameters are left alone.
        assert_eq!(names, [("f", "key", Some(1)), ("f", "info", None)]);
        // The spread could pass `key`: the calls cannot be read.
        assert_eq!(
            argument_cuts(Lang::Python, src.as_bytes(), "f", Some(1), "key").unwrap(),
            None
        );
        let src = src.replace("f(*xs)\n", "");
        let key = &unused[0];
        let args = argument_cuts(Lang::Python, src.as_bytes(), "f", key.index, &key.name)
            .unwrap()
            .unwrap();
        let mut all = args.clone();
        all.push(key.range.clone());
        assert_eq!(
            cut(&src, &all),
            "def f(a, *args, info=None):\n    return a\n\nclass C:\n    def m(self, unused):\n        pass\n\nf(1)\nf(3, info=5)\n"
        );
        let info = &unused[1];
        let args = argument_cuts(Lang::Python, src.as_bytes(), "f", None, &info.name)
            .unwrap()
            .unwrap();
        assert_eq!(args.len(), 1);
    }

    /// Python rejects a bare `*` that no named parameter follows: the last keyword-only
    /// parameter goes with it. Each result is compiled by Python where it runs.
    #[test]
    fn the_last_keyword_only_parameter_goes_with_its_bare_star() {
        let cases = [
            (
                "def f(a, *, d):\n    return a\nf(1, d=2)\n",
                "def f(a):\n    return a\nf(1)\n",
            ),
            (
                "def f(*, d):\n    pass\nf(d=2)\n",
                "def f():\n    pass\nf()\n",
            ),
            (
                "def f(a, *, d, **kw):\n    return a, kw\nf(1, d=2, e=3)\n",
                "def f(a, **kw):\n    return a, kw\nf(1, e=3)\n",
            ),
            // Another keyword-only parameter keeps the `*`.
            (
                "def f(a, *, d, e):\n    return a, e\nf(1, d=2, e=3)\n",
                "def f(a, *, e):\n    return a, e\nf(1, e=3)\n",
            ),
            // A named `*args` is no bare `*`.
            (
                "def f(a, *r, d):\n    return a, r\nf(1, d=2)\n",
                "def f(a, *r):\n    return a, r\nf(1)\n",
            ),
        ];
        for (src, want) in cases {
            let unused = unused_parameters(Lang::Python, src.as_bytes()).unwrap();
            let d = unused.iter().find(|u| u.name == "d").unwrap();
            let mut all = argument_cuts(Lang::Python, src.as_bytes(), "f", d.index, &d.name)
                .unwrap()
                .unwrap();
            all.push(d.range.clone());
            all.sort_by_key(|r| r.start);
            let out = cut(src, &all);
            assert_eq!(out, want, "from\n{src}");
            match std::process::Command::new("python3")
                .args([
                    "-c",
                    "import sys; compile(sys.argv[1], 'f.py', 'exec')",
                    &out,
                ])
                .status()
            {
                Ok(status) => assert!(status.success(), "Python rejects\n{out}"),
                Err(err) => {
                    let why = format!("the cut is not compiled: {err}");
                    crate::test_skip::require_tool("python3", Err(why));
                }
            }
        }
    }

    #[test]
    fn javascript_and_rust_free_functions() {
        let src = "function g(x, y) { return x; }\ng(1, 2);\n";
        let unused = unused_parameters(Lang::JavaScript, src.as_bytes()).unwrap();
        assert_eq!(unused.len(), 1);
        let args = argument_cuts(Lang::JavaScript, src.as_bytes(), "g", Some(1), "y")
            .unwrap()
            .unwrap();
        let mut all = args;
        all.push(unused[0].range.clone());
        assert_eq!(cut(src, &all), "function g(x) { return x; }\ng(1);\n");

        let src = "fn h(a: u8, b: u8) -> u8 { a }\nimpl S { fn m(&self, z: u8) {} }\nfn main() { h(1, 2); }\n";
        let unused = unused_parameters(Lang::Rust, src.as_bytes()).unwrap();
        assert_eq!(
            unused.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        let args = argument_cuts(Lang::Rust, src.as_bytes(), "h", Some(1), "b")
            .unwrap()
            .unwrap();
        let mut all = args;
        all.push(unused[0].range.clone());
        assert_eq!(
            cut(src, &all),
            "fn h(a: u8) -> u8 { a }\nimpl S { fn m(&self, z: u8) {} }\nfn main() { h(1); }\n"
        );
    }

    /// Over every sample and some odd inputs: each unused parameter cut with the
    /// arguments its calls pass for it leaves UTF-8 that still parses where the source did,
    /// and never cuts the same byte twice.
    #[test]
    fn every_parameter_cut_with_its_arguments_still_parses() {
        let mut inputs = crate::reduce::syntax::tests::samples();
        inputs.extend([
            (Lang::Python, "def f(a, b, /, c, *, d):\n    return a\nf(1, 2, 3, d=4)\nf(*x)\n"),
            (Lang::Python, "def é(α, β=None):\n    pass\né('ü', β='名')\né(α=1)\n"),
            (Lang::Python, "def f(a,\n      b,\n      ):\n    pass\nf(\n  1,\n  2,\n)\n"),
            (Lang::JavaScript, "function f(a, {b}, c = 1, ...r) {}\nf(1, {b: 2}, 3, 4);\nf(...xs);\n"),
            (Lang::TypeScript, "function f(a: number, b?: string): void {}\nf(1, 'x');\n"),
            (Lang::Rust, "fn f(a: u8, (b, c): (u8, u8)) {}\nfn g() { f(1, (2, 3)); f(f(1, (2, 3)), (4, 5)); }\n"),
            (Lang::Python, "def f(a, b):\n    pass\nf(f(1, 2), 3)\n"),
        ]);
        let mut checked = 0;
        for (lang, src) in inputs {
            if !matches!(
                lang,
                Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Rust
            ) {
                continue;
            }
            let clean = crate::reduce::syntax::parses_cleanly(lang, src.as_bytes()).unwrap();
            let sites = CallSites::new(lang, std::sync::Arc::from(src.as_bytes())).unwrap();
            for u in unused_parameters(lang, src.as_bytes()).unwrap() {
                let Some(mut ranges) = sites.cuts(&u.function, u.index, &u.name) else {
                    continue;
                };
                ranges.push(u.range.clone());
                ranges.sort_by_key(|r| r.start);
                if ranges.windows(2).any(|w| w[0].end > w[1].start) {
                    // Nested calls: the pass offers no candidate for these.
                    continue;
                }
                assert!(ranges.iter().all(|r| r.end <= src.len()), "{lang}: {u:?}");
                let out = cut(src, &ranges);
                checked += 1;
                if clean {
                    assert!(
                        crate::reduce::syntax::parses_cleanly(lang, out.as_bytes()).unwrap(),
                        "{lang}: {u:?} of\n{src}\ngives\n{out}"
                    );
                }
            }
        }
        // The samples hold parameters of each kind: the property is not checked vacuously.
        assert!(checked >= 8, "only {checked} parameters were cut");
    }
}

//! Literal simplification: numbers to `0` and strings to `""`, where that is shorter.

use std::ops::Range;

use super::lang::{Lang, PARSE_TIMEOUT, SyntaxError, parse};

/// The smallest literal of each literal kind of `lang`: `None` for a kind left alone.
fn smallest(lang: Lang, kind: &str) -> Option<&'static str> {
    let number = "0";
    let string = "\"\"";
    match lang {
        Lang::Python => match kind {
            "integer" | "float" => Some(number),
            "string" => Some(string),
            _ => None,
        },
        Lang::Rust => match kind {
            "integer_literal" => Some(number),
            "string_literal" | "raw_string_literal" => Some(string),
            _ => None,
        },
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match kind {
            "number" => Some(number),
            "string" | "template_string" => Some(string),
            _ => None,
        },
        Lang::Java => match kind {
            "decimal_integer_literal"
            | "hex_integer_literal"
            | "octal_integer_literal"
            | "binary_integer_literal"
            | "decimal_floating_point_literal" => Some(number),
            "string_literal" => Some(string),
            _ => None,
        },
        Lang::Go => match kind {
            "int_literal" | "float_literal" => Some(number),
            "interpreted_string_literal" | "raw_string_literal" => Some(string),
            _ => None,
        },
        Lang::C | Lang::Cpp => match kind {
            "number_literal" => Some(number),
            "string_literal" | "raw_string_literal" => Some(string),
            _ => None,
        },
    }
}

/// Parents whose string names something outside the file (an include, an import): emptying
/// it cannot keep the program whole.
fn names_a_module(kind: &str) -> bool {
    matches!(
        kind,
        "preproc_include"
            | "import_statement"
            | "import_declaration"
            | "import_spec"
            | "export_statement"
            | "use_declaration"
            | "extern_crate_declaration"
            | "module_declaration"
    )
}

/// The default value of a parameter, when `node` is a parameter that has one, with the
/// value that names nothing: Python `None`, JavaScript and TypeScript `null`.
fn default_value<'t>(
    lang: Lang,
    node: tree_sitter::Node<'t>,
) -> Option<(tree_sitter::Node<'t>, &'static str)> {
    match (lang, node.kind()) {
        (Lang::Python, "default_parameter" | "typed_default_parameter") => {
            node.child_by_field_name("value").map(|v| (v, "None"))
        }
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "assignment_pattern")
            if node
                .parent()
                .is_some_and(|p| p.kind() == "formal_parameters") =>
        {
            node.child_by_field_name("right").map(|v| (v, "null"))
        }
        (Lang::TypeScript | Lang::Tsx, "required_parameter" | "optional_parameter") => {
            node.child_by_field_name("value").map(|v| (v, "null"))
        }
        _ => None,
    }
}

/// Literal replacements in `src`, in source order: each literal that is longer than the
/// smallest literal of its kind, with that literal; and each parameter default that is not
/// a literal (a name, an attribute, a call), with the value that names nothing (`None`,
/// `null`), so that a module or a function that only a default names can go. Literals
/// inside another literal (a template's substitution) or inside a default replaced whole
/// are left to a later run.
pub fn literals(lang: Lang, src: &[u8]) -> Result<Vec<(Range<usize>, &'static str)>, SyntaxError> {
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let mut out: Vec<(Range<usize>, &'static str)> = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            continue;
        }
        let range = node.byte_range();
        if let Some(with) = smallest(lang, node.kind()).filter(|_| node.is_named()) {
            let named_module = node.parent().is_some_and(|p| names_a_module(p.kind()));
            let text = src.get(range.clone()).unwrap_or_default();
            if !named_module && !node.has_error() && text.len() > with.len() {
                out.push((range, with));
            }
            continue;
        }
        let default = default_value(lang, node).filter(|(value, with)| {
            smallest(lang, value.kind()).is_none()
                && !value.has_error()
                && src.get(value.byte_range()) != Some(with.as_bytes())
        });
        if let Some((value, with)) = default {
            out.push((value.byte_range(), with));
        }
        let kids: Vec<_> = node
            .children(&mut cursor)
            .filter(|kid| default.is_none_or(|(value, _)| *kid != value))
            .collect();
        stack.extend(kids.into_iter().rev());
    }
    out.sort_by_key(|(r, _)| r.start);
    Ok(out)
}

/// Whether the expression `value` names one of `names`: an identifier of the list anywhere
/// in it, other than an attribute's member (`x.keys`) or a keyword argument's name.
fn names_any(value: tree_sitter::Node<'_>, src: &[u8], names: &[String]) -> bool {
    let mut cursor = value.walk();
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        if node.kind() == "identifier" {
            let member = node.parent().is_some_and(|p| {
                let field = match p.kind() {
                    "attribute" => "attribute",
                    "keyword_argument" => "name",
                    _ => return false,
                };
                p.child_by_field_name(field) == Some(node)
            });
            let text = src.get(node.byte_range()).unwrap_or_default();
            if !member && names.iter().any(|n| n.as_bytes() == text) {
                return true;
            }
        }
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// The parameter defaults and Python keyword arguments of `src` whose value names one of
/// `names` (`key=keys.hashkey` names `keys`), in source order, each with the value that
/// names nothing (`None`, `null`): what must change with a removed import of those names
/// for the file to still load (a default and a decorator's argument are evaluated when it
/// does).
pub fn defaults_naming(
    lang: Lang,
    src: &[u8],
    names: &[String],
) -> Result<Vec<(Range<usize>, &'static str)>, SyntaxError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let tree = parse(lang, src, PARSE_TIMEOUT)?;
    let mut out: Vec<(Range<usize>, &'static str)> = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let argument = (lang == Lang::Python && node.kind() == "keyword_argument")
            .then(|| node.child_by_field_name("value").map(|v| (v, "None")))
            .flatten();
        if let Some((value, with)) = default_value(lang, node).or(argument)
            && !value.has_error()
            && names_any(value, src, names)
        {
            out.push((value.byte_range(), with));
            continue;
        }
        stack.extend(node.children(&mut cursor));
    }
    out.sort_by_key(|(r, _)| r.start);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simplified(lang: Lang, src: &str) -> String {
        super::super::lang::replaced(src, literals(lang, src.as_bytes()).unwrap())
    }

    /// Each source simplifies to what it says, which parses; with `stable`, the result
    /// simplifies to itself.
    fn assert_simplified(cases: &[(Lang, &str, &str)], stable: bool) {
        for &(lang, src, want) in cases {
            let got = simplified(lang, src);
            assert_eq!(got, want, "{lang:?}");
            assert!(
                crate::reduce::syntax::parses_cleanly(lang, got.as_bytes()).unwrap(),
                "{got}"
            );
            if stable {
                assert_eq!(simplified(lang, &got), got, "{lang:?}");
            }
        }
    }

    #[test]
    fn a_default_that_names_something_becomes_the_value_that_names_nothing() {
        let cases = [
            (
                Lang::Python,
                "from . import keys\ndef f(key=keys.hashkey, n=12, m=None, *, t: int = g()):\n    pass\n",
                "from . import keys\ndef f(key=None, n=0, m=None, *, t: int = None):\n    pass\n",
            ),
            (
                Lang::JavaScript,
                "function f(a = defaults.a, b = 'xy', c) { return a; }\n",
                "function f(a = null, b = \"\", c) { return a; }\n",
            ),
            (
                Lang::TypeScript,
                "function f(a: Opts = make(1), b?: number) { return a; }\n",
                "function f(a: Opts = null, b?: number) { return a; }\n",
            ),
        ];
        // Nothing is proposed again once every default names nothing.
        assert_simplified(&cases, true);
    }

    #[test]
    fn numbers_and_strings_become_the_smallest_of_their_kind_in_every_language() {
        let cases = [
            (
                Lang::C,
                "#include \"a.h\"\nint x = 1234; char *s = \"abc\"; int z = 0;\n",
                "#include \"a.h\"\nint x = 0; char *s = \"\"; int z = 0;\n",
            ),
            (
                Lang::Cpp,
                "auto s = std::string(\"ab\") + R\"(x)\"; int n = 0x10;\n",
                "auto s = std::string(\"\") + \"\"; int n = 0;\n",
            ),
            (
                Lang::Python,
                "import os\nx = f'{a}b' + \"\"\"doc\"\"\"\ny = 3.25\n",
                "import os\nx = \"\" + \"\"\ny = 0\n",
            ),
            (
                Lang::Rust,
                "use a::b;\nfn f() -> u8 { g(\"xy\", r#\"z\"#, 255) }\n",
                "use a::b;\nfn f() -> u8 { g(\"\", \"\", 0) }\n",
            ),
            (
                Lang::JavaScript,
                "import x from \"mod\";\nconst y = `a${b}` + 'cd' + 42;\n",
                "import x from \"mod\";\nconst y = \"\" + \"\" + 0;\n",
            ),
            (
                Lang::TypeScript,
                "let n: number = 17; let s: string = 'ok';\n",
                "let n: number = 0; let s: string = \"\";\n",
            ),
            (
                Lang::Java,
                "class A { int n = 99; String s = \"hi\"; }\n",
                "class A { int n = 0; String s = \"\"; }\n",
            ),
            (
                Lang::Go,
                "package p\nimport \"fmt\"\nvar n = 12\nvar s = `raw`\n",
                "package p\nimport \"fmt\"\nvar n = 0\nvar s = \"\"\n",
            ),
        ];
        assert_simplified(&cases, false);
    }
}

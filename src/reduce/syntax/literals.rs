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

/// Literal replacements in `src`, in source order: each literal that is longer than the
/// smallest literal of its kind, with that literal. Literals inside another literal (a
/// template's substitution) are left to a later run.
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
        let kids: Vec<_> = node.children(&mut cursor).collect();
        stack.extend(kids.into_iter().rev());
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
        for (lang, src, want) in cases {
            let got = simplified(lang, src);
            assert_eq!(got, want, "{lang:?}");
            assert!(
                crate::reduce::syntax::parses_cleanly(lang, got.as_bytes()).unwrap(),
                "{got}"
            );
        }
    }
}

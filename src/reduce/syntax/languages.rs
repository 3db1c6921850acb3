//! The language tables: which nodes of each grammar hold deletable elements, how those
//! elements are separated and terminated, which node kinds are expressions, statement holders
//! and blocks, and which kinds are comments.

use super::lang::*;

/// How a container's deletable children are chosen.
#[derive(Clone, Copy)]
pub(super) enum Pick {
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
pub(super) struct Spec {
    pub(super) parents: &'static [&'static str],
    pub(super) pick: Pick,
    /// Anonymous tokens that separate or terminate elements.
    pub(super) seps: &'static [&'static str],
    /// Whether the last element takes the separator before it when no
    /// separator follows it.
    pub(super) borrow: bool,
    /// Elements (comments aside) that must remain: with this many or fewer,
    /// none is offered.
    pub(super) min: usize,
    /// Kinds that are deleted together with the element they precede.
    pub(super) glue: &'static [&'static str],
    /// Kinds never offered (a segment starting with one is kept).
    pub(super) keep: &'static [&'static str],
    /// Leading elements (comments aside) never offered, so they remain whatever else goes.
    pub(super) spare: usize,
}

pub(super) const ALL_NAMED: Pick = Pick::Named {
    except_fields: &[],
    except_kinds: &[],
};

pub(super) const fn stmts(parents: &'static [&'static str], seps: &'static [&'static str]) -> Spec {
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

pub(super) const fn list(parents: &'static [&'static str], min: usize) -> Spec {
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

pub(super) const fn kinds(
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

pub(super) const fn comma_field(parents: &'static [&'static str], field: &'static str) -> Spec {
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

pub(super) const PYTHON_SPECS: &[Spec] = &[
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

pub(super) const RUST_SPECS: &[Spec] = &[
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

pub(super) const JS_SPECS: &[Spec] = &[
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

pub(super) const TS_EXTRA_SPECS: &[Spec] = &[
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

pub(super) const JAVA_SPECS: &[Spec] = &[
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

pub(super) const GO_SPECS: &[Spec] = &[
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

pub(super) const GO_TYPES: &[&str] = &[
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

pub(super) const C_COMMON_SPECS: &[Spec] = &[
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

pub(super) const C_ONLY_SPECS: &[Spec] = &[stmts(&["field_declaration_list"], &[";"])];

pub(super) const CPP_EXTRA_SPECS: &[Spec] = &[
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

pub(super) const PYTHON_EXPR: &[&str] = &[
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

pub(super) const RUST_EXPR: &[&str] = &[
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

pub(super) const JS_TS_EXPR: &[&str] = &[
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

pub(super) const JAVA_EXPR: &[&str] = &[
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

pub(super) const GO_EXPR: &[&str] = &[
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

pub(super) const C_CPP_EXPR: &[&str] = &[
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
pub(super) struct LangDef {
    pub(super) specs: &'static [&'static [Spec]],
    pub(super) comments: &'static [&'static str],
    pub(super) exprs: &'static [&'static str],
    /// Compound statements whose bodies may replace them.
    pub(super) holders: &'static [&'static str],
    /// Statement blocks.
    pub(super) blocks: &'static [&'static str],
}

pub(super) fn lang_def(lang: Lang) -> LangDef {
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
        // A function by the statements of its body: its locals become globals (C-Reduce's
        // local-to-global, for a failure that needs a declaration and not its function).
        "function_definition",
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

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
    fn a_header_is_cpp_only_when_its_content_reads_as_cpp() {
        let templates = b"template <typename T>\nT twice(T x) { return x + x; }\n";
        assert_eq!(lang_for_file("core.h", templates), Some(Lang::Cpp));
        assert_eq!(lang_for_file("inc/CORE.H", templates), Some(Lang::Cpp));
        // C that C++ would misread (a variable named `class`) stays C.
        let c = b"int class = 1;\nstatic int f(void) { return class; }\n";
        assert_eq!(lang_for_file("a.h", c), Some(Lang::C));
        assert_eq!(lang_for_file("a.h", b"int x;\n"), Some(Lang::C));
        // Only headers are judged by content; a `.c` file is C whatever it holds.
        assert_eq!(lang_for_file("a.c", templates), Some(Lang::C));
        assert_eq!(lang_for_file("a.hpp", c), Some(Lang::Cpp));
        assert_eq!(lang_for_file("notes.txt", templates), None);
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
}

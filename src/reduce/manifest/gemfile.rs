//! Bundler's Gemfile, read with the tree-sitter Ruby grammar: single-line `gem` calls and
//! `group ... do` blocks as deletion candidates.
//!
//! A `gem` call is offered when it starts a statement, sits alone on one line (a trailing comment
//! is fine) and opens no block; a `group ... do` block when its head line ends with `do` (or its
//! block parameters) and its `end` stands alone on its line. Each candidate takes the comment lines
//! directly above it. Groups come first, outer before inner; the gems follow one level below the
//! deepest group. Everything else (`source`, `ruby`, `gemspec`, `platforms` blocks, conditionals)
//! stays, though the gems inside such blocks are offered.

use std::ops::Range;

use tree_sitter::{Node, Parser, Tree};

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, extend_over_comments, line_end, line_number,
    line_start, only_blanks_before, parse_error, rest_is_trivia,
};

/// Node kinds whose named children are statements.
const STATEMENT_LISTS: &[&str] = &[
    "program",
    "body_statement",
    "begin",
    "begin_block",
    "block_body",
    "do",
    "else",
    "end_block",
    "ensure",
    "then",
    "parenthesized_statements",
];

/// Node kinds that open a block closed by `end` or `}` (statement modifiers such as `x if y` do
/// not): a `gem` statement holding one of them is not offered.
const BLOCK_KINDS: &[&str] = &[
    "do_block",
    "begin",
    "case",
    "case_match",
    "method",
    "singleton_method",
    "class",
    "singleton_class",
    "module",
    "for",
    "while",
    "until",
    "if",
    "unless",
];

/// Literal kinds a gem's name is read from: the first of them in the statement, less its first
/// and last byte (the quotes).
const STRING_KINDS: &[&str] = &[
    "string",
    "string_array",
    "symbol_array",
    "regex",
    "character",
    "heredoc_beginning",
    "subshell",
];

/// Ruby's reserved words that the grammar can read as names; Ruby allows them only as method
/// names after a receiver or in a definition.
const KEYWORDS: &[&str] = &[
    "alias", "and", "begin", "break", "case", "class", "def", "do", "else", "elsif", "end",
    "ensure", "for", "if", "in", "module", "next", "not", "or", "redo", "rescue", "retry",
    "return", "then", "undef", "unless", "until", "when", "while", "yield",
];

fn parse(src: &str) -> Result<Tree, ManifestError> {
    let kind = ManifestKind::Gemfile;
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_ruby::LANGUAGE.into())
        .map_err(|source| ManifestError::Grammar {
            kind: kind.display_name(),
            source,
        })?;
    parser
        .parse(src, None)
        .ok_or_else(|| parse_error(kind, None, "the parser gave up".to_string()))
}

/// The first syntax error among `nodes`: a node the grammar could not place, a missing token, a
/// heredoc whose terminator never comes, or a keyword used as a name (a stray `end` or `do`).
fn first_error(nodes: &[Node], b: &[u8]) -> Option<(usize, String)> {
    nodes
        .iter()
        .filter_map(|node| {
            let message = if node.is_missing() {
                format!("missing `{}`", node.kind())
            } else if node.is_error() {
                "syntax error".to_string()
            } else if node.kind() == "heredoc_body"
                && node
                    .child(node.child_count().saturating_sub(1))
                    .is_none_or(|last| last.kind() != "heredoc_end" || last.byte_range().is_empty())
            {
                "unterminated heredoc".to_string()
            } else if node.kind() == "identifier"
                && b.get(node.byte_range())
                    .is_some_and(|word| KEYWORDS.iter().any(|k| k.as_bytes() == word))
                && node.parent().is_none_or(|parent| {
                    let is = |field| {
                        parent.child_by_field_name(field).map(|n| n.id()) == Some(node.id())
                    };
                    let method_after_receiver =
                        is("method") && parent.child_by_field_name("receiver").is_some();
                    !method_after_receiver && !is("name")
                })
            {
                // The grammar reads a stray keyword such as `end` as a name; Ruby does not.
                "keyword out of place".to_string()
            } else {
                return None;
            };
            Some((node.start_byte(), message))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(at, message)| (at, format!("{message} (line {})", line_number(b, at))))
}

/// Every node of the tree, in document order of their starts.
fn all_nodes(root: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// The statement holding `node`: its ancestor (or itself) that is a child of a statement list.
fn statement_of(node: Node) -> Option<Node> {
    let mut current = node;
    loop {
        let parent = current.parent()?;
        if STATEMENT_LISTS.contains(&parent.kind()) {
            return Some(current);
        }
        current = parent;
    }
}

/// Whether the rest of the line from `pos` holds only blanks, semicolons and a comment.
fn rest_is_empty(b: &[u8], pos: usize) -> bool {
    let mut p = pos.min(b.len());
    while p < b.len() && matches!(b[p], b' ' | b'\t' | b';') {
        p += 1;
    }
    rest_is_trivia(b, p, Some(b"#"))
}

/// Whether `node` is a call to `name` with no receiver that starts a statement at the start of its
/// line: `name ARGS`, `name(ARGS)`, or `name` alone followed by a blank.
fn command_call(node: Node, name: &str, src: &str) -> bool {
    let b = src.as_bytes();
    let method = match node.kind() {
        "call" if node.child_by_field_name("receiver").is_none() => {
            match node.child_by_field_name("method") {
                Some(method) => method,
                None => return false,
            }
        }
        // A call without arguments, such as `gem # note`, is a bare name.
        "identifier"
            if node.parent().is_none_or(|p| {
                p.kind() != "call"
                    || p.child_by_field_name("method").map(|m| m.id()) != Some(node.id())
            }) =>
        {
            node
        }
        _ => return false,
    };
    method.kind() == "identifier"
        && src.get(method.byte_range()) == Some(name)
        && only_blanks_before(b, method.start_byte())
        && matches!(b.get(method.end_byte()), Some(b' ' | b'\t' | b'('))
        && statement_of(node).is_some_and(|st| st.start_byte() == node.start_byte())
}

/// For a `group ... do` block whose head line ends with `do` (or its block parameters): the
/// position of `do`.
fn group_do(node: Node, src: &str) -> Option<usize> {
    if !command_call(node, "group", src) {
        return None;
    }
    let block = node.child_by_field_name("block")?;
    if block.kind() != "do_block" {
        return None;
    }
    let do_keyword = block.child(0)?;
    let head_end = block
        .child_by_field_name("parameters")
        .map_or(do_keyword.end_byte(), |p| p.end_byte());
    rest_is_empty(src.as_bytes(), head_end).then_some(do_keyword.start_byte())
}

/// How many `group ... do` blocks enclose `node`.
fn group_depth(node: Node, src: &str) -> usize {
    let mut depth = 0;
    let mut current = node;
    while let Some(parent) = current.parent() {
        if parent.kind() == "do_block"
            && parent
                .parent()
                .is_some_and(|call| group_do(call, src).is_some())
        {
            depth += 1;
        }
        current = parent;
    }
    depth
}

pub(super) fn gemfile_candidates(src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let kind = ManifestKind::Gemfile;
    let file = kind.display_name();
    let b = src.as_bytes();
    let tree = parse(src)?;
    let root = tree.root_node();
    let nodes = all_nodes(root);
    if let Some((at, message)) = first_error(&nodes, b) {
        return Err(parse_error(kind, Some(at), message));
    }
    // Ends of code (and of `=begin` comment blocks) that comment lines above a candidate must not
    // climb past.
    let floors: Vec<usize> = nodes
        .iter()
        .filter(|n| {
            if n.kind() == "comment" {
                src.get(n.byte_range())
                    .is_some_and(|t| t.starts_with("=begin"))
            } else {
                n.child_count() == 0
            }
        })
        .map(Node::end_byte)
        .collect();
    let floor = |start: usize| {
        floors
            .iter()
            .copied()
            .filter(|&end| end <= start)
            .max()
            .unwrap_or(0)
    };
    let top = |start: usize| extend_over_comments(b, line_start(b, start), floor(start), b"#");

    let mut groups: Vec<(usize, Range<usize>, String)> = Vec::new();
    let mut gems: Vec<(usize, Range<usize>, String)> = Vec::new();
    for &node in &nodes {
        if let Some(do_start) = group_do(node, src) {
            let Some(end) = node
                .child_by_field_name("block")
                .and_then(|block| block.child(block.child_count().saturating_sub(1)))
                .filter(|end| end.kind() == "end")
            else {
                continue;
            };
            let alone = statement_of(node).is_some_and(|st| st.id() == node.id())
                && only_blanks_before(b, end.start_byte())
                && rest_is_empty(b, end.end_byte());
            if alone {
                let head = src
                    .get(node.start_byte()..do_start)
                    .unwrap_or("group")
                    .trim();
                groups.push((
                    group_depth(node, src),
                    top(node.start_byte())..line_end(b, end.end_byte().saturating_sub(1)),
                    format!("`{head}` block of {file}"),
                ));
            }
        } else if command_call(node, "gem", src) {
            let Some(statement) = statement_of(node) else {
                continue;
            };
            let span = statement.byte_range();
            let inner = all_nodes(statement);
            let single = !src.get(span.clone()).unwrap_or("\n").contains('\n')
                && !inner
                    .iter()
                    .any(|n| n.is_named() && BLOCK_KINDS.contains(&n.kind()))
                && !inner.iter().any(|n| n.kind() == "heredoc_beginning")
                && rest_is_empty(b, span.end);
            if single {
                let name = inner
                    .iter()
                    .find(|n| n.is_named() && STRING_KINDS.contains(&n.kind()))
                    .and_then(|n| src.get(n.start_byte() + 1..n.end_byte().saturating_sub(1)))
                    .unwrap_or("?");
                gems.push((
                    group_depth(node, src),
                    top(span.start)..line_end(b, span.start),
                    format!("gem `{name}` of {file}"),
                ));
            }
        }
    }
    let gem_level = groups.iter().map(|g| g.0 + 1).max().unwrap_or(0);
    let mut levels = Levels::new(src);
    for (depth, range, label) in groups {
        levels.push(depth, label, vec![range]);
    }
    for (_, range, label) in gems {
        levels.push(gem_level, label, vec![range]);
    }
    // Ruby's layout rules reach across lines (a line that ends in a vertical tab, say, runs
    // on into the next): a deletion that leaves a file Ruby cannot parse is no candidate.
    let mut levels = levels.finish();
    for level in &mut levels {
        level.retain(|edit| {
            let text = String::from_utf8_lossy(&edit.apply(b)).into_owned();
            parse(&text).is_ok_and(|tree| {
                first_error(&all_nodes(tree.root_node()), text.as_bytes()).is_none()
            })
        });
    }
    levels.retain(|level| !level.is_empty());
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::super::candidates;
    use super::super::tests::*;
    use super::*;

    /// A deletion after which Ruby would read two lines as one is not offered (a fuzz
    /// finding: a line ending in a vertical tab ran on into the line after the deleted gem).
    #[test]
    fn a_deletion_that_breaks_the_file_is_not_offered() {
        let src =
            "ruby \"3.2.2\"\u{b}\n# Rails itself\ngem \"rails\", \"~> 7.1\"\ne \"x\"\ngem \"pg\"\n";
        let levels = levels_of(ManifestKind::Gemfile, src);
        for edit in levels.iter().flatten() {
            let out = applied(src, edit);
            assert!(
                reparses(ManifestKind::Gemfile, src, &out).is_ok(),
                "{}: {out}",
                edit.label
            );
        }
        assert!(!labels(&levels).concat().is_empty());
    }

    #[test]
    fn gemfile_gems_and_groups() {
        let levels = levels_of(ManifestKind::Gemfile, GEMFILE);
        assert_eq!(
            labels(&levels),
            [
                vec![
                    "`group :development, :test` block of Gemfile",
                    "`group :development` block of Gemfile",
                ],
                vec![
                    "gem `rails` of Gemfile",
                    "gem `pg` of Gemfile",
                    "gem `puma` of Gemfile",
                    "gem `rspec-rails` of Gemfile",
                    "gem `debug` of Gemfile",
                    "gem `web-console` of Gemfile",
                    "gem `rubocop` of Gemfile",
                ],
            ]
        );
        let rails = find(&levels, "gem `rails` of Gemfile");
        assert_eq!(
            applied(GEMFILE, rails),
            GEMFILE.replace("# Rails itself\ngem \"rails\", \"~> 7.1\"\n", "")
        );
        let test_group = find(&levels, "`group :development, :test` block of Gemfile");
        assert_eq!(
            applied(GEMFILE, test_group),
            GEMFILE.replace(
                "group :development, :test do\n  gem \"rspec-rails\"\n  gem \"debug\", platforms: %i[mri windows]\nend\n",
                ""
            )
        );
    }

    #[test]
    fn gemfile_tricky_ruby() {
        let src = r#"source "https://rubygems.org"
=begin
gem "commented-out"
=end
DESC = <<~TEXT
  gem "inside-heredoc"
  end
TEXT
gem "a"; gem "b"
gem "c",
    "~> 1.0"
gem("d")
gem "e", git: "https://x/#{"e"}.git" # } do
gem "f" if x =~ /do|end/
platforms :jruby do
  gem "g"
end
group :x do |g|
  gem "h"
end
Foo.end
__END__
gem "after-end"
"#;
        let levels = levels_of(ManifestKind::Gemfile, src);
        assert_eq!(
            labels(&levels),
            [
                vec!["`group :x` block of Gemfile"],
                vec![
                    "gem `d` of Gemfile",
                    "gem `e` of Gemfile",
                    "gem `f` of Gemfile",
                    "gem `g` of Gemfile",
                    "gem `h` of Gemfile",
                ],
            ]
        );
        check_all(ManifestKind::Gemfile, src);
        for bad in [
            "group :x do\n  gem \"a\"\n",
            "gem \"a\nend\n",
            "end\n",
            "gem(\"a\"\n",
            "x = <<~EOS\nnever closed\n",
        ] {
            assert!(
                candidates(ManifestKind::Gemfile, bad.as_bytes()).is_err(),
                "accepted {bad:?}"
            );
        }
    }

    #[test]
    fn gemfile_read_as_ruby_reads_it() {
        // A heredoc with a lower-case terminator holds text, not code; and an endless method
        // definition needs no `end`.
        let src = "NOTE = <<eos\ngem \"inside-heredoc\"\neos\ndef version = \"1.0\"\ngem \"a\"\n";
        let levels = levels_of(ManifestKind::Gemfile, src);
        assert_eq!(labels(&levels), [vec!["gem `a` of Gemfile"]]);
        assert_eq!(applied(src, &levels[0][0]), src.replace("gem \"a\"\n", ""));
        check_all(ManifestKind::Gemfile, src);
        for bad in ["do\ngem \"a\"\n", "gem \"a\",\n"] {
            assert!(
                candidates(ManifestKind::Gemfile, bad.as_bytes()).is_err(),
                "accepted {bad:?}"
            );
        }
    }
}

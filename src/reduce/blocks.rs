//! Blocks by indentation and brackets, for any text file.
//!
//! A block is a header line, the lines indented deeper than it (its body), and the lines
//! that close it at its own indentation (`}`, `)`, `]`, `end`, also `} else {` chains with
//! their bodies). Decorator and attribute lines (`@name`, `#[...]`) belong to the block they
//! precede. Blank lines inside a body belong to it; elsewhere each blank line is a block of
//! its own. The body's blocks are the block's children, so a file is a forest, which the
//! blocks and unwrap passes of [`crate::reduce::passes`] walk level by level.

use std::ops::Range;

use crate::reduce::ranges::line_ranges;

/// One block: a contiguous run of lines and the blocks of its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// Line indices `start..end` (closing lines included).
    pub lines: Range<usize>,
    /// The blocks of the body, in order.
    pub children: Vec<Block>,
}

pub(crate) struct Line<'a> {
    text: &'a [u8],
    indent: usize,
    blank: bool,
}

pub(crate) fn classify<'a>(data: &'a [u8], ranges: &[Range<usize>]) -> Vec<Line<'a>> {
    ranges
        .iter()
        .map(|r| {
            let text = &data[r.clone()];
            let indent = text
                .iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .count();
            let blank = text[indent..].iter().all(u8::is_ascii_whitespace);
            Line {
                text: trim(&text[indent..]),
                indent,
                blank,
            }
        })
        .collect()
}

fn trim(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &text[..end]
}

fn opens(text: &[u8]) -> bool {
    matches!(text.last(), Some(b'{' | b'(' | b'['))
}

fn closes(text: &[u8]) -> bool {
    matches!(text.first(), Some(b'}' | b')' | b']')) || text == b"end" || text.starts_with(b"end ")
}

fn decorates(text: &[u8]) -> bool {
    (text.starts_with(b"@") && !text.starts_with(b"@@")) || text.starts_with(b"#[")
}

/// The block forest of `data`, by line.
pub(crate) fn blocks(data: &[u8]) -> Vec<Block> {
    let ranges = line_ranges(data);
    let lines = classify(data, &ranges);
    parse(&lines, 0, lines.len())
}

fn parse(lines: &[Line<'_>], start: usize, end: usize) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = start;
    while i < end {
        if lines[i].blank {
            out.push(Block {
                lines: i..i + 1,
                children: Vec::new(),
            });
            i += 1;
            continue;
        }
        let (block, next) = one(lines, i, end);
        out.push(block);
        i = next;
    }
    out
}

/// The block whose header is line `i`; returns it and the line after it.
fn one(lines: &[Line<'_>], i: usize, end: usize) -> (Block, usize) {
    let indent = lines[i].indent;
    // The body: deeper lines, with blank lines between them, but not trailing blanks.
    let body = |from: usize| {
        let mut last = from;
        let mut j = from;
        while j < end && (lines[j].blank || lines[j].indent > indent) {
            j += 1;
            if !lines[j - 1].blank {
                last = j;
            }
        }
        last
    };
    let mut children = Vec::new();
    let mut header_opens = opens(lines[i].text);
    let mut body_end = body(i + 1);
    children.extend(parse(lines, i + 1, body_end));
    // Closing lines at the header's indentation, and `} else {` chains.
    while header_opens
        && body_end < end
        && !lines[body_end].blank
        && lines[body_end].indent == indent
        && closes(lines[body_end].text)
    {
        header_opens = opens(lines[body_end].text);
        let next = body(body_end + 1);
        children.extend(parse(lines, body_end + 1, next));
        body_end = next;
        if !header_opens {
            break;
        }
    }
    // A decorator belongs to what follows it at its indentation.
    if decorates(lines[i].text)
        && children.is_empty()
        && body_end < end
        && !lines[body_end].blank
        && lines[body_end].indent == indent
    {
        let (rest, next) = one(lines, body_end, end);
        return (
            Block {
                lines: i..rest.lines.end,
                children: rest.children,
            },
            next,
        );
    }
    (
        Block {
            lines: i..body_end,
            children,
        },
        body_end,
    )
}

/// The sibling lists at `depth`: the top-level blocks at depth 0, otherwise the children
/// of each block at `depth - 1`, in file order.
pub(crate) fn siblings_at(forest: &[Block], depth: usize) -> Vec<&[Block]> {
    let mut level: Vec<&[Block]> = vec![forest];
    for _ in 0..depth {
        level = level
            .iter()
            .flat_map(|siblings| siblings.iter().map(|b| b.children.as_slice()))
            .collect();
    }
    level.retain(|s| !s.is_empty());
    level
}

/// The sibling groups at `depth`, as line ranges.
pub(crate) fn groups(forest: &[Block], depth: usize) -> Vec<Vec<Range<usize>>> {
    siblings_at(forest, depth)
        .into_iter()
        .map(|s| s.iter().map(|b| b.lines.clone()).collect())
        .collect()
}

/// Byte range of line range `lines` in content whose lines are `ranges`.
pub(crate) fn bytes_of(ranges: &[Range<usize>], lines: &Range<usize>) -> Range<usize> {
    ranges[lines.start].start..ranges[lines.end - 1].end
}

/// The cuts that unwrap block `b` of content whose lines are `ranges` (classified as
/// `lines`): its header lines (decorators included) and closing lines go, and its body loses
/// the indentation it has beyond the header's. `None` for a block without a body.
pub(crate) fn unwrap_cuts(
    lines: &[Line<'_>],
    ranges: &[Range<usize>],
    b: &Block,
) -> Option<Vec<Range<usize>>> {
    let first_child = b.children.first()?;
    let in_body = |i: usize| b.children.iter().any(|c| c.lines.contains(&i));
    let body: Vec<usize> = b
        .lines
        .clone()
        .filter(|&i| in_body(i) && !lines[i].blank)
        .collect();
    let header_indent = lines[b.lines.start].indent;
    let extra = body
        .iter()
        .map(|&i| lines[i].indent)
        .min()?
        .saturating_sub(header_indent);
    let mut cut = Vec::new();
    for i in b.lines.clone() {
        if i < first_child.lines.start || !in_body(i) {
            cut.push(ranges[i].clone());
        } else if extra > 0 && !lines[i].blank {
            cut.push(ranges[i].start..ranges[i].start + extra);
        }
    }
    Some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(data: &str) -> Vec<String> {
        fn walk(b: &Block, depth: usize, out: &mut Vec<String>) {
            out.push(format!("{depth}:{}..{}", b.lines.start, b.lines.end));
            for c in &b.children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = Vec::new();
        for b in blocks(data.as_bytes()) {
            walk(&b, 0, &mut out);
        }
        out
    }

    #[test]
    fn python_blocks_nest_by_indentation_and_take_their_decorators() {
        let py = "import os\n\n@decorator\ndef f(x):\n    if x:\n        return 1\n\n    return 2\nclass C:\n    def m(self):\n        pass\n";
        assert_eq!(
            shape(py),
            [
                "0:0..1", "0:1..2", "0:2..8", "1:4..6", "2:5..6", "1:6..7", "1:7..8", "0:8..11",
                "1:9..11", "2:10..11"
            ]
        );
    }

    #[test]
    fn brace_blocks_take_their_closing_lines_and_else_chains() {
        let c = "int f(int x) {\n    if (x) {\n        return 1;\n    } else {\n        return 2;\n    }\n}\nint y;\n";
        assert_eq!(shape(c), ["0:0..7", "1:1..6", "2:2..3", "2:4..5", "0:7..8"]);
        // An empty body still takes its closer; a closer after a non-opening line does not.
        assert_eq!(shape("fn a() {\n}\n"), ["0:0..2"]);
        assert_eq!(shape("x = 1\n)\n"), ["0:0..1", "0:1..2"]);
        // Rust attributes belong to the item.
        assert_eq!(
            shape("#[test]\nfn t() {\n    x();\n}\n"),
            ["0:0..4", "1:2..3"]
        );
    }

    #[test]
    fn every_line_is_in_exactly_one_top_level_block() {
        for text in [
            "a\n  b\n\n  c\nd\n",
            "\n\n",
            "x",
            "  indented\nnot\n",
            "}\n{\n",
            "@a\n@b\ndef f(): pass\n",
        ] {
            let forest = blocks(text.as_bytes());
            let mut next = 0;
            for b in &forest {
                assert_eq!(b.lines.start, next, "{text:?}");
                assert!(b.lines.end > b.lines.start);
                next = b.lines.end;
            }
            assert_eq!(next, line_ranges(text.as_bytes()).len(), "{text:?}");
        }
    }

    /// The text left after unwrapping the top-level block that starts at line `line`.
    fn unwrapped(text: &str, line: usize) -> Option<String> {
        let data = text.as_bytes();
        let ranges = line_ranges(data);
        let lines = classify(data, &ranges);
        let forest = blocks(data);
        let b = forest.iter().find(|b| b.lines.start == line)?;
        let cut = unwrap_cuts(&lines, &ranges, b)?;
        let kept: Vec<u8> = crate::reduce::ranges::complement(data.len(), &cut)
            .into_iter()
            .flat_map(|r| data[r].to_vec())
            .collect();
        Some(String::from_utf8(kept).expect("utf-8"))
    }

    #[test]
    fn unwrap_drops_the_header_and_dedents_the_body() {
        let py = "x = 1\nif x:\n    y = 2\n    if y:\n        z = 3\n\n    print(y)\nw = 4\n";
        assert_eq!(
            unwrapped(py, 1).as_deref(),
            Some("x = 1\ny = 2\nif y:\n    z = 3\n\nprint(y)\nw = 4\n")
        );
        // Decorators go with the header.
        let deco = "@cache\ndef f():\n    return 1\n";
        assert_eq!(unwrapped(deco, 0).as_deref(), Some("return 1\n"));
        // A line without a body has nothing to unwrap.
        assert_eq!(unwrapped(py, 0), None);
    }

    #[test]
    fn unwrap_takes_closing_lines_and_else_chains() {
        let c = "int f(int x) {\n    if (x) {\n        return 1;\n    } else {\n        return 2;\n    }\n}\n";
        assert_eq!(
            unwrapped(c, 0).as_deref(),
            Some("if (x) {\n    return 1;\n} else {\n    return 2;\n}\n")
        );
        assert_eq!(
            unwrapped("if (x) {\n    return 1;\n} else {\n    return 2;\n}\n", 0).as_deref(),
            Some("return 1;\nreturn 2;\n")
        );
        // A body not indented deeper than its header makes no block: nothing unwraps.
        assert_eq!(unwrapped("void g() {\nint a;\n}\n", 0), None);
        assert_eq!(
            unwrapped("fn t() {\n\tx();\n}\n", 0).as_deref(),
            Some("x();\n")
        );
    }
}

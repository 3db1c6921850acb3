//! The hoist pass: a syntax node replaced by one of its children, from the node-to-descendant
//! replacements of [`crate::reduce::syntax::replacements`] (an `if` by its body, a call by
//! an argument, a binary expression by an operand, a block by one of its statements).
//!
//! A replacement keeps the child's bytes and deletes what surrounds them inside the node, so
//! each candidate is a cut of two ranges and goes through the same list minimiser, syntax
//! guard and certificate as every deletion. Nodes are taken outermost first: level `d` holds
//! the nodes inside `d` other candidate nodes, each with its `k`-th alternative (the
//! smallest child first), for up to [`ALTERNATIVES`] alternatives a node.

use std::ops::Range;

use crate::reduce::error::ReduceError;
use crate::reduce::pass::{Pass, PassContext, PassResult, PassState, levels_per_file};
use crate::reduce::session::Session;
use crate::reduce::syntax::{Lang, Replacement};

/// How many children of one node are tried in its place.
pub(crate) const ALTERNATIVES: usize = 3;

/// Replaces syntax nodes by their children, outermost first.
#[derive(Debug, Default)]
pub(crate) struct Hoist {
    state: PassState,
}

/// The cuts of level `index` of `data`: `None` past the deepest node.
pub(crate) fn level(lang: Lang, data: &[u8], index: usize) -> Option<Vec<Vec<Vec<Range<usize>>>>> {
    let found = crate::reduce::syntax::replacements(lang, data).ok()?;
    let (depth, alternative) = (index / ALTERNATIVES, index % ALTERNATIVES);
    let by_node = nesting(&found);
    if by_node.iter().all(|(d, _, _)| *d < depth) {
        return None;
    }
    let cuts: Vec<Vec<Range<usize>>> = by_node
        .iter()
        .filter(|(d, _, _)| *d == depth)
        .filter_map(|(_, range, withs)| {
            let with = withs.get(alternative)?;
            let cut: Vec<Range<usize>> = [range.start..with.start, with.end..range.end]
                .into_iter()
                .filter(|r| r.start < r.end)
                .collect();
            (!cut.is_empty()).then_some(cut)
        })
        .collect();
    Some(if cuts.is_empty() {
        Vec::new()
    } else {
        vec![cuts]
    })
}

/// Each replaced node once, with its nesting depth among the replaced nodes and its
/// children in the order offered (smallest first for one node).
fn nesting(found: &[Replacement]) -> Vec<(usize, Range<usize>, Vec<Range<usize>>)> {
    let mut nodes: Vec<(Range<usize>, Vec<Range<usize>>)> = Vec::new();
    let mut sorted: Vec<&Replacement> = found.iter().collect();
    sorted.sort_by(|a, b| {
        (a.range.start, std::cmp::Reverse(a.range.end))
            .cmp(&(b.range.start, std::cmp::Reverse(b.range.end)))
            .then((a.with.end - a.with.start).cmp(&(b.with.end - b.with.start)))
            .then(a.with.start.cmp(&b.with.start))
    });
    for r in sorted {
        match nodes.last_mut() {
            Some((range, withs)) if *range == r.range => withs.push(r.with.clone()),
            _ => nodes.push((r.range.clone(), vec![r.with.clone()])),
        }
    }
    let mut open: Vec<Range<usize>> = Vec::new();
    let mut out = Vec::with_capacity(nodes.len());
    for (range, withs) in nodes {
        while open.last().is_some_and(|o| o.end <= range.start) {
            open.pop();
        }
        out.push((open.len(), range.clone(), withs));
        open.push(range);
    }
    out
}

impl Pass for Hoist {
    fn name(&self) -> &'static str {
        "hoist"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result = levels_per_file(
            session,
            ctx,
            name,
            state,
            ("node", ctx.within_lines),
            |path| {
                crate::reduce::syntax::lang_for_path(path)?;
                let path = path.clone();
                Some(move |data: &[u8], index| {
                    level(
                        crate::reduce::syntax::lang_for_file(&path, data)?,
                        data,
                        index,
                    )
                })
            },
        )?;
        Ok(self.state.result(result.accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(data: &[u8], cut: &[Range<usize>]) -> String {
        let mut out = Vec::new();
        let mut at = 0;
        for r in cut {
            out.extend_from_slice(&data[at..r.start]);
            at = r.end;
        }
        out.extend_from_slice(&data[at..]);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn an_if_is_replaced_by_its_body_and_a_call_by_an_argument_outermost_first() {
        let src = b"int f(int a) {\n  if (a > 1) {\n    return g(a + 1);\n  }\n  return 0;\n}\n";
        let mut seen = Vec::new();
        let mut index = 0;
        while let Some(groups) = level(Lang::C, src, index) {
            for group in groups {
                for cut in group {
                    // Every cut deletes inside one node and leaves a file that still parses.
                    let text = apply(src, &cut);
                    assert!(
                        crate::reduce::syntax::parses_cleanly(Lang::C, text.as_bytes()).unwrap(),
                        "{text}"
                    );
                    seen.push((index / ALTERNATIVES, text));
                }
            }
            index += 1;
            assert!(index < 200, "levels never end");
        }
        let at = |needle: &str| {
            seen.iter()
                .find(|(_, t)| t.contains(needle))
                .map(|(d, _)| *d)
                .unwrap_or_else(|| panic!("no candidate gives {needle:?}: {seen:#?}"))
        };
        // The `if` by its body, then, deeper, the call by its argument.
        let body = at("{\n  return g(a + 1);\n  return 0;");
        let argument = at("return a + 1;");
        assert!(body < argument, "{seen:#?}");
    }

    #[test]
    fn nodes_get_their_depth_among_the_replaced_nodes() {
        let r = |range: Range<usize>, with: Range<usize>| Replacement { range, with };
        let found = vec![
            r(0..10, 2..8),
            r(0..10, 3..4),
            r(2..8, 3..4),
            r(12..20, 13..14),
        ];
        let nodes = nesting(&found);
        assert_eq!(
            nodes,
            vec![
                (0, 0..10, vec![3..4, 2..8]),
                (1, 2..8, vec![3..4]),
                (0, 12..20, vec![13..14]),
            ]
        );
    }
}

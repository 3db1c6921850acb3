//! Reducer passes, coarse to fine.
//!
//! A pass proposes candidates to the [`Session`] and updates its own view from what was
//! committed. Each pass is locally stable when it returns: it repeats its rounds until one
//! commits nothing. The driver in [`crate::reduce`] runs them to a global fixed point.
//!
//! - [`Prelude`]: per file, one probe that empties it and one that strips its blank and
//!   comment lines;
//! - [`Files`]: hierarchical deletion over files and directories, level by level, chunks
//!   halving, largest chunks first, independent successes merged into unions;
//! - [`Lines`]: line deletion to 1-minimality with the [`crate::bytes::DeletionSearch`],
//!   speculating ahead in parallel.

use std::ops::Range;
use std::sync::Arc;

use crate::bytes::{DeletionSearch, RestartPolicy};
use crate::reduce::ReduceError;
use crate::reduce::edits::Mutation;
use crate::reduce::session::{Candidate, Resolve, Session};
use crate::tree::{Node, RelPath};

/// Candidates evaluated together in a union window. Fixed, so that results never depend on
/// `--jobs`.
pub const UNION_WINDOW: usize = 8;

/// What a pass run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassResult {
    /// Commits made.
    pub accepted: u64,
}

/// Context a pass may use beyond the session.
pub struct PassContext {
    /// Relative paths that may never be deleted (kept paths and their ancestors and
    /// descendants are checked through [`PassContext::protected`]).
    pub keep: Vec<String>,
    /// Files the baseline output names, reduced first.
    pub named: Vec<String>,
}

impl PassContext {
    /// Whether deleting `path` would delete a kept path.
    pub fn protected(&self, path: &str) -> bool {
        self.keep.iter().any(|k| {
            k == path || k.starts_with(&format!("{path}/")) || path.starts_with(&format!("{k}/"))
        })
    }

    /// Current regular files, the ones named in the failure output first, then the largest.
    pub fn file_order(&self, session: &Session) -> Vec<RelPath> {
        let mut files: Vec<(bool, u64, RelPath)> = session
            .current
            .entries
            .iter()
            .filter_map(|(path, entry)| match &entry.node {
                Node::File { data, .. } if !data.is_empty() => Some((
                    self.named.iter().any(|n| **n == **path),
                    data.len() as u64,
                    path.clone(),
                )),
                _ => None,
            })
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        files.into_iter().map(|(_, _, p)| p).collect()
    }
}

/// A reducer pass.
pub trait Pass {
    /// Its name in reports and progress.
    fn name(&self) -> &'static str;
    /// Runs the pass to local stability, or until the session stops.
    ///
    /// # Errors
    /// Whatever the session reports.
    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError>;
}

pub(crate) fn file_state(session: &Session, path: &str) -> Option<(Arc<[u8]>, [u8; 32])> {
    match &session.current.entries.get(path)?.node {
        Node::File { data, digest } => Some((data.clone(), *digest)),
        _ => None,
    }
}

/// The byte ranges of each line, newline included.
pub fn line_ranges(data: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, byte) in data.iter().enumerate() {
        if *byte == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push(start..data.len());
    }
    out
}

/// The comment leaders for a file, by extension.
fn comment_leaders(path: &str) -> &'static [&'static str] {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "py" | "pyi" | "sh" | "bash" | "toml" | "yaml" | "yml" | "rb" | "pl" | "r" | "cfg"
        | "conf" | "mk" | "cmake" | "txt" | "ini" => &["#"],
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "rs" | "js" | "mjs" | "cjs" | "ts"
        | "tsx" | "jsx" | "go" | "java" | "kt" | "scala" | "swift" | "cs" | "dart" | "php" => {
            &["//"]
        }
        "sql" | "lua" | "hs" => &["--"],
        "el" | "lisp" | "clj" | "asm" | "s" => &[";"],
        _ if name == "Makefile" || name == "Dockerfile" || name.ends_with("file") => &["#"],
        _ => &[],
    }
}

/// The lines of `data` that are neither blank nor whole-line comments.
fn strip_ranges(path: &str, data: &[u8]) -> Vec<Range<usize>> {
    let leaders = comment_leaders(path);
    line_ranges(data)
        .into_iter()
        .filter(|r| {
            let line = String::from_utf8_lossy(&data[r.clone()]);
            let t = line.trim();
            !(t.is_empty()
                || leaders
                    .iter()
                    .any(|l| t.starts_with(l) && !t.starts_with("#!")))
        })
        .collect()
}

/// Per file: empty it; strip its blank and comment lines.
#[derive(Debug, Default)]
pub struct Prelude;

impl Pass for Prelude {
    fn name(&self) -> &'static str {
        "prelude"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut result = PassResult::default();
        loop {
            let mut round = 0;
            let files = ctx.file_order(session);
            for group in files.chunks(UNION_WINDOW / 2) {
                let mut candidates = Vec::new();
                for path in group {
                    let Some((data, digest)) = file_state(session, path) else {
                        continue;
                    };
                    candidates.push(Candidate {
                        mutation: Mutation::Keep {
                            path: path.clone(),
                            expect: digest,
                            keep: Vec::new(),
                        },
                        label: format!("empty {path}"),
                    });
                    let stripped = strip_ranges(path, &data);
                    let kept: usize = stripped.iter().map(|r| r.end - r.start).sum();
                    if kept > 0 && kept < data.len() {
                        candidates.push(Candidate {
                            mutation: Mutation::Keep {
                                path: path.clone(),
                                expect: digest,
                                keep: stripped,
                            },
                            label: format!("strip blank and comment lines of {path}"),
                        });
                    }
                }
                if candidates.is_empty() {
                    continue;
                }
                let Some(done) = session.try_window(self.name(), Resolve::Union, candidates)?
                else {
                    result.accepted += round;
                    return Ok(result);
                };
                round += done.iter().filter(|c| **c).count().min(1) as u64;
            }
            result.accepted += round;
            if round == 0 {
                return Ok(result);
            }
        }
    }
}

/// Hierarchical deletion of files and directories.
#[derive(Debug, Default)]
pub struct Files;

impl Files {
    /// Deletes what it can of `elements` (siblings), chunk size halving from all of them.
    /// Returns the commits made, or `None` when the session stopped.
    fn sweep(
        session: &mut Session,
        name: &str,
        mut elements: Vec<RelPath>,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        let mut chunk = elements.len();
        while !elements.is_empty() && chunk > 0 {
            chunk = chunk.min(elements.len());
            let mut chunks: Vec<Vec<RelPath>> =
                elements.chunks(chunk).map(<[RelPath]>::to_vec).collect();
            // Largest removals first; ties keep path order.
            let weights: Vec<u64> = chunks
                .iter()
                .map(|c| c.iter().map(|p| session.current.weight(p) + 1).sum())
                .collect();
            let mut order: Vec<usize> = (0..chunks.len()).collect();
            order.sort_by(|&a, &b| weights[b].cmp(&weights[a]).then(a.cmp(&b)));
            let ordered: Vec<Vec<RelPath>> = order
                .iter()
                .map(|&i| std::mem::take(&mut chunks[i]))
                .collect();
            let mut sweep_accepted = 0;
            for window in ordered.chunks(UNION_WINDOW) {
                let candidates = window
                    .iter()
                    .map(|paths| Candidate {
                        mutation: Mutation::Remove(paths.clone()),
                        label: describe_removal(paths),
                    })
                    .collect();
                let Some(done) = session.try_window(name, Resolve::Union, candidates)? else {
                    return Ok(None);
                };
                for (paths, committed) in window.iter().zip(done) {
                    if committed {
                        sweep_accepted += 1;
                        elements.retain(|e| !paths.contains(e));
                    }
                }
            }
            accepted += sweep_accepted;
            if chunk == 1 {
                if sweep_accepted == 0 {
                    break;
                }
            } else {
                chunk = chunk.div_ceil(2);
            }
        }
        Ok(Some(accepted))
    }
}

fn describe_removal(paths: &[RelPath]) -> String {
    match paths {
        [one] => format!("delete {one}"),
        [first, .., last] => format!("delete {} entries, {first} to {last}", paths.len()),
        [] => "delete nothing".to_string(),
    }
}

impl Pass for Files {
    fn name(&self) -> &'static str {
        "files"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut result = PassResult::default();
        loop {
            let mut round = 0;
            let mut queue: std::collections::VecDeque<String> = std::collections::VecDeque::new();
            queue.push_back(String::new());
            while let Some(dir) = queue.pop_front() {
                if !dir.is_empty() && !session.current.entries.contains_key(dir.as_str()) {
                    continue;
                }
                let elements: Vec<RelPath> = session
                    .current
                    .children(&dir)
                    .into_iter()
                    .filter(|p| !ctx.protected(p))
                    .collect();
                let Some(n) = Files::sweep(session, self.name(), elements)? else {
                    result.accepted += round;
                    return Ok(result);
                };
                round += n;
                for child in session.current.children(&dir) {
                    if matches!(
                        session.current.entries.get(&child).map(|e| &e.node),
                        Some(Node::Dir)
                    ) {
                        queue.push_back(child.to_string());
                    }
                }
            }
            result.accepted += round;
            if round == 0 {
                return Ok(result);
            }
        }
    }
}

/// Line deletion to 1-minimality.
#[derive(Debug, Default)]
pub struct Lines;

impl Lines {
    /// Reduces one file's lines; `None` when the session stopped.
    fn file(session: &mut Session, name: &str, path: &RelPath) -> Result<Option<u64>, ReduceError> {
        let Some((data, _)) = file_state(session, path) else {
            return Ok(Some(0));
        };
        let mut lines = line_ranges(&data);
        let mut search = DeletionSearch::new(lines.len(), RestartPolicy::Continue);
        let mut accepted = 0;
        loop {
            let Some((_, digest)) = file_state(session, path) else {
                return Ok(Some(accepted));
            };
            // Look ahead as if each candidate were rejected: the first that passes is
            // exactly what a sequential search would have committed.
            let mut ahead = search;
            let mut ranges = Vec::new();
            while ranges.len() < session.jobs() {
                let Some(next) = ahead.next() else { break };
                ranges.push(next);
                ahead.reject();
            }
            if ranges.is_empty() {
                return Ok(Some(accepted));
            }
            let candidates = ranges
                .iter()
                .map(|r| {
                    let keep: Vec<Range<usize>> = lines[..r.start]
                        .iter()
                        .chain(&lines[r.end..])
                        .cloned()
                        .collect();
                    let label = if r.len() == 1 {
                        format!("line {} of {path}", r.start + 1)
                    } else {
                        format!("lines {}-{} of {path}", r.start + 1, r.end)
                    };
                    Candidate {
                        mutation: Mutation::Keep {
                            path: path.clone(),
                            expect: digest,
                            keep,
                        },
                        label,
                    }
                })
                .collect();
            let Some(done) = session.try_window(name, Resolve::First, candidates)? else {
                return Ok(None);
            };
            match done.iter().position(|c| *c) {
                None => {
                    for _ in &ranges {
                        search.reject();
                    }
                }
                Some(i) => {
                    for _ in 0..i {
                        search.reject();
                    }
                    search.accept();
                    accepted += 1;
                    // Whole lines went, so the line count drops by the range's length;
                    // byte offsets moved, so the lines are found again in the new content.
                    if let Some((now, _)) = file_state(session, path) {
                        lines = line_ranges(&now);
                    }
                    debug_assert_eq!(lines.len(), search.len());
                }
            }
        }
    }
}

impl Pass for Lines {
    fn name(&self) -> &'static str {
        "lines"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut result = PassResult::default();
        loop {
            let mut round = 0;
            for path in ctx.file_order(session) {
                let Some(n) = Lines::file(session, self.name(), &path)? else {
                    result.accepted += round;
                    return Ok(result);
                };
                round += n;
            }
            result.accepted += round;
            if round == 0 {
                return Ok(result);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_newlines_and_a_final_partial_line() {
        assert_eq!(line_ranges(b"a\nbb\nc"), vec![0..2, 2..5, 5..6]);
        assert_eq!(line_ranges(b""), Vec::<Range<usize>>::new());
        assert_eq!(line_ranges(b"\n"), vec![0..1]);
    }

    #[test]
    fn strip_keeps_code_and_shebangs_but_drops_blank_and_comment_lines() {
        let py = b"#!/usr/bin/env python3\n# comment\n\nx = 1  # trailing\n    # indented\n";
        let kept: Vec<_> = strip_ranges("a.py", py)
            .into_iter()
            .map(|r| String::from_utf8_lossy(&py[r]).to_string())
            .collect();
        assert_eq!(kept, ["#!/usr/bin/env python3\n", "x = 1  # trailing\n"]);
        // `#include` is code in C, not a comment.
        let c = b"#include <stdio.h>\n// note\nint x;\n";
        assert_eq!(strip_ranges("a.c", c).len(), 2);
        // Unknown types: only blank lines go.
        assert_eq!(strip_ranges("notes", b"# a\n\nb\n").len(), 2);
    }
}

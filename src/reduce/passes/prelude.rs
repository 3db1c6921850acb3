//! The prelude pass: per file, one probe that empties it and one that strips its blank and
//! whole-line comment lines.

use std::ops::Range;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, UNION_WINDOW, file_state, line_ranges, skip_settled,
};
use crate::reduce::session::{Candidate, Session};

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
pub(crate) struct Prelude;

impl Pass for Prelude {
    fn name(&self) -> &'static str {
        "prelude"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let mut result = PassResult::default();
        loop {
            let mut round = 0;
            let files: Vec<_> = ctx
                .file_order(session)
                .into_iter()
                .filter(|path| !skip_settled(session, ctx, path))
                .collect();
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
                let recalled = session.recalled_cuts();
                let Some(done) = session.try_window(self.name(), candidates)? else {
                    result.accepted += round;
                    return Ok(result);
                };
                let committed = done.iter().any(|c| *c);
                if !committed {
                    // Neither cut of any file of the window passed: each is settled.
                    let from_memory = session.recalled_cuts() > recalled;
                    for path in group {
                        session.settle(path, from_memory);
                    }
                }
                round += u64::from(committed);
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

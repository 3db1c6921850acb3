//! Reducer passes, coarse to fine.
//!
//! A pass proposes candidates to the [`Session`] and updates its own view from what was
//! committed. Each pass is locally stable when it returns: it repeats its rounds until one
//! commits nothing. The driver in [`crate::reduce`] runs them to a global fixed point.
//!
//! - [`Prelude`]: per file, one probe that empties it and one that strips its blank and
//!   comment lines;
//! - [`Files`]: hierarchical deletion over files and directories, level by level;
//! - [`crate::reduce::blocks::Blocks`]: blocks by indentation and brackets, level by level;
//! - [`Lines`]: line deletion to 1-minimality.
//!
//! The deletion passes share the list minimiser of [`crate::reduce::minimise`].

use std::ops::Range;
use std::sync::Arc;

use crate::reduce::ReduceError;
use crate::reduce::edits::Mutation;
use crate::reduce::minimise::{Elements, Minimiser, minimise};
use crate::reduce::session::{Candidate, Session};
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
    /// How deletion passes shrink their chunks.
    pub minimiser: Minimiser,
    /// Whether line and block cuts that would leave a cleanly parsing file unparsable are
    /// skipped.
    pub syntax_guard: bool,
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

/// Runs `file` on every current file, named files and then the largest first, in rounds,
/// or until the session stops.
///
/// The first round takes every file. After a round that committed something, the next
/// round takes only the files that may have become reducible: those holding an identifier
/// of which a later commit removed an occurrence (see [`Session::touched_since`]). When such
/// a narrowed round commits nothing, one more round takes every file again; the pass ends
/// only after a round over every file that commits nothing (local stability). In any round,
/// a file is skipped when it is settled and nothing at all was committed since: the same
/// search on the same tree finds nothing new. A search that committed nothing settles its
/// file; with `settles`, so does every search (`file` runs each file to its own fixed
/// point).
pub(crate) fn per_file(
    session: &mut Session,
    ctx: &PassContext,
    settles: bool,
    mut file: impl FnMut(&mut Session, &RelPath) -> Result<Option<u64>, ReduceError>,
) -> Result<PassResult, ReduceError> {
    let mut result = PassResult::default();
    let mut full = true;
    // The commit count when `file` last took each file, and when it was last settled.
    let mut left_at: std::collections::HashMap<RelPath, u64> = std::collections::HashMap::new();
    let mut settled_at: std::collections::HashMap<RelPath, u64> = std::collections::HashMap::new();
    loop {
        let mut round = 0;
        for path in ctx.file_order(session) {
            if settled_at.get(&path) == Some(&session.commits()) {
                continue;
            }
            if !full
                && let Some(&at) = left_at.get(&path)
                && !session.touched_since(&path, at)
            {
                continue;
            }
            // Counted from before the file's own commits, which may let more of it go.
            left_at.insert(path.clone(), session.commits());
            let Some(n) = file(session, &path)? else {
                result.accepted += round;
                return Ok(result);
            };
            if settles || n == 0 {
                settled_at.insert(path, session.commits());
            }
            round += n;
        }
        result.accepted += round;
        if round > 0 {
            full = false;
        } else if full {
            return Ok(result);
        } else {
            full = true;
        }
    }
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
                let Some(done) = session.try_window(self.name(), candidates)? else {
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

/// The children of one directory, as a list to minimise.
struct Paths(Vec<RelPath>);

impl Elements for Paths {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn weight(&self, session: &Session, i: usize) -> u64 {
        session.current.weight(&self.0[i]) + 1
    }

    fn candidate(&self, session: &Session, chunk: &[usize], _: &[usize]) -> Option<Candidate> {
        let paths: Vec<RelPath> = chunk.iter().map(|&i| self.0[i].clone()).collect();
        let mut label = describe_removal(&paths);
        // The lines that name what goes (`mod x;`, `#include "x.h"`, `import x`) go too.
        let references = crate::reduce::coupled::references_to(&session.current, &paths);
        let mut parts = vec![Mutation::Remove(paths)];
        let lines: usize = references.iter().map(|(_, _, cut)| cut.len()).sum();
        if lines > 0 {
            label.push_str(&format!(
                " with {lines} line{} that reference{} it",
                if lines == 1 { "" } else { "s" },
                if lines == 1 { "s" } else { "" }
            ));
        }
        for (path, digest, cut) in references {
            let Some((data, _)) = file_state(session, &path) else {
                continue;
            };
            parts.push(Mutation::Keep {
                path,
                expect: digest,
                keep: complement(data.len(), &cut),
            });
        }
        let mutation = if parts.len() == 1 {
            parts.pop()?
        } else {
            Mutation::Union(parts)
        };
        Some(Candidate { label, mutation })
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let mut i = 0;
        self.0.retain(|_| {
            i += 1;
            gone.binary_search(&(i - 1)).is_err()
        });
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
                let Some(n) = minimise(session, self.name(), ctx.minimiser, &mut Paths(elements))?
                else {
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

/// Disjoint byte ranges of one file's content, as a list to minimise: blocks, lines, or
/// cuts of several ranges each (an unwrapped block: its header, closing lines and the
/// indentation of its body).
pub(crate) struct Ranges {
    path: RelPath,
    /// The elements, each a sorted set of ranges, in the content of length `len`; the
    /// ranges of different elements are disjoint.
    sets: Vec<Vec<Range<usize>>>,
    len: usize,
    /// What one element is called in labels.
    noun: &'static str,
    /// Whether an element of one line is tried on its own.
    single_lines: bool,
    /// The grammar of a file whose content parses cleanly: cuts that break its parse are
    /// skipped (the syntax guard).
    guard: Option<crate::reduce::syntax::Lang>,
    /// Cuts the guard skipped.
    unparsable: std::cell::Cell<u64>,
}

/// What one element of a [`Ranges`] list cuts: one range, or a set of ranges.
pub(crate) trait Cut {
    /// The ranges, sorted.
    fn into_set(self) -> Vec<Range<usize>>;
}

impl Cut for Range<usize> {
    fn into_set(self) -> Vec<Range<usize>> {
        vec![self]
    }
}

impl Cut for Vec<Range<usize>> {
    fn into_set(mut self) -> Vec<Range<usize>> {
        self.sort_by_key(|r| r.start);
        self
    }
}

impl Ranges {
    /// The elements `cuts` of `path`'s current content.
    pub(crate) fn new<C: Cut>(
        session: &Session,
        path: &RelPath,
        cuts: Vec<C>,
        noun: &'static str,
        single_lines: bool,
    ) -> Option<Ranges> {
        let (data, _) = file_state(session, path)?;
        let sets: Vec<Vec<Range<usize>>> = cuts
            .into_iter()
            .map(Cut::into_set)
            .filter(|s| !s.is_empty())
            .collect();
        Some(Ranges {
            path: path.clone(),
            sets,
            len: data.len(),
            noun,
            single_lines,
            guard: None,
            unparsable: std::cell::Cell::new(0),
        })
    }

    /// Turns on the syntax guard when `path` has a grammar and its current content parses
    /// cleanly (a file that already has errors is left unguarded).
    pub(crate) fn guarded(mut self, session: &Session, on: bool) -> Ranges {
        if !on {
            return self;
        }
        let Some(lang) = crate::reduce::syntax::lang_for_path(&self.path) else {
            return self;
        };
        let Some((data, _)) = file_state(session, &self.path) else {
            return self;
        };
        if crate::reduce::syntax::parses_cleanly(lang, &data).unwrap_or(false) {
            self.guard = Some(lang);
        }
        self
    }

    /// Cuts the guard skipped so far.
    pub(crate) fn unparsable(&self) -> u64 {
        self.unparsable.get()
    }

    /// The bytes element `i` cuts.
    fn size(&self, i: usize) -> usize {
        self.sets[i].iter().map(Range::len).sum()
    }

    /// Range `r` in the content left after the elements `gone` were cut.
    fn shifted(&self, gone: &[usize], r: &Range<usize>) -> Range<usize> {
        let before: usize = gone
            .iter()
            .flat_map(|&i| &self.sets[i])
            .filter(|g| g.end <= r.start)
            .map(Range::len)
            .sum();
        // Ranges that share a separator can make `before` overcount; the length check of
        // `candidate` then finds the list stale.
        r.start.saturating_sub(before)..r.end.saturating_sub(before)
    }
}

/// The ranges of `0..len` outside `cut` (sorted, disjoint).
pub(crate) fn complement(len: usize, cut: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut sorted = cut.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut out = Vec::new();
    let mut at = 0;
    for r in sorted {
        if r.start > at {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < len {
        out.push(at..len);
    }
    out
}

impl Elements for Ranges {
    fn len(&self) -> usize {
        self.sets.len()
    }

    fn weight(&self, _: &Session, i: usize) -> u64 {
        self.size(i) as u64
    }

    fn alone(&self, session: &Session, i: usize) -> bool {
        if self.single_lines {
            return true;
        }
        let Some((data, _)) = file_state(session, &self.path) else {
            return false;
        };
        let (Some(first), Some(last)) = (self.sets[i].first(), self.sets[i].last()) else {
            return false;
        };
        data.len() == self.len
            && data[first.start..last.end.saturating_sub(1).max(first.start)].contains(&b'\n')
    }

    fn candidate(&self, session: &Session, chunk: &[usize], gone: &[usize]) -> Option<Candidate> {
        let (now, digest) = file_state(session, &self.path)?;
        let cut_before: usize = gone.iter().map(|&i| self.size(i)).sum();
        if now.len() + cut_before != self.len {
            // Something else changed the file: these ranges are stale.
            return None;
        }
        let mut cut: Vec<Range<usize>> = chunk
            .iter()
            .flat_map(|&i| &self.sets[i])
            .map(|r| self.shifted(gone, r))
            .collect();
        cut.sort_by_key(|r| r.start);
        let (first_cut, last_cut) = (cut.first()?, cut.last()?);
        let line_of = |at: usize| {
            now[..at.min(now.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        };
        let first = line_of(first_cut.start);
        let last = line_of(last_cut.end.saturating_sub(1).max(last_cut.start));
        let keep = complement(now.len(), &cut);
        if let Some(lang) = self.guard {
            let mut text = Vec::with_capacity(now.len());
            for r in &keep {
                text.extend_from_slice(&now[r.clone()]);
            }
            if !crate::reduce::syntax::parses_cleanly(lang, &text).unwrap_or(true) {
                self.unparsable.set(self.unparsable.get() + 1);
                return None;
            }
        }
        let path = &self.path;
        let label = match (chunk.len(), self.noun) {
            (1, noun) if first == last => format!("{noun} at line {first} of {path}"),
            (1, noun) => format!("{noun} at lines {first}-{last} of {path}"),
            (n, noun) => format!("{n} {noun}s at lines {first}-{last} of {path}"),
        };
        Some(Candidate {
            mutation: Mutation::Keep {
                path: path.clone(),
                expect: digest,
                keep,
            },
            label,
        })
    }

    fn remove(&mut self, _: &Session, gone: &[usize]) {
        let cut: usize = gone.iter().map(|&i| self.size(i)).sum();
        let survivors: Vec<Vec<Range<usize>>> = (0..self.sets.len())
            .filter(|i| gone.binary_search(i).is_err())
            .map(|i| self.sets[i].iter().map(|r| self.shifted(gone, r)).collect())
            .collect();
        self.sets = survivors;
        self.len = self.len.saturating_sub(cut);
    }
}

/// Entries of package manifests, found by parsing them.
#[derive(Debug, Default)]
pub struct Manifests;

impl Manifests {
    /// One manifest to local stability; `None` when the session stopped.
    fn file(
        session: &mut Session,
        name: &str,
        path: &RelPath,
        kind: crate::reduce::manifest::ManifestKind,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        let mut level = 0;
        loop {
            let Some((data, digest)) = file_state(session, path) else {
                return Ok(Some(accepted));
            };
            // A manifest that does not parse (any more) is left to the other passes.
            let Ok(levels) = crate::reduce::manifest::candidates(kind, &data) else {
                return Ok(Some(accepted));
            };
            let Some(edits) = levels.get(level) else {
                return Ok(Some(accepted));
            };
            let mut committed = false;
            for window in edits.chunks(UNION_WINDOW) {
                let candidates = window
                    .iter()
                    .map(|edit| Candidate {
                        mutation: Mutation::Keep {
                            path: path.clone(),
                            expect: digest,
                            keep: complement(data.len(), &edit.delete),
                        },
                        label: format!("{} of {path}", edit.label),
                    })
                    .collect();
                let Some(done) = session.try_window(name, candidates)? else {
                    return Ok(None);
                };
                if done.iter().any(|c| *c) {
                    accepted += 1;
                    committed = true;
                    break;
                }
            }
            // After a commit the file is parsed again and this level starts over; a level
            // that commits nothing hands over to the next, finer one.
            if !committed {
                level += 1;
            }
        }
    }
}

impl Pass for Manifests {
    fn name(&self) -> &'static str {
        "manifests"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(
            session,
            ctx,
            false,
            |session, path| match crate::reduce::manifest::manifest_kind(path) {
                Some(kind) => Manifests::file(session, name, path, kind),
                None => Ok(Some(0)),
            },
        )
    }
}

/// Syntax nodes, level by level, from tree-sitter grammars.
#[derive(Debug, Default)]
pub struct Syntax;

impl Syntax {
    /// One file, every level; `None` when the session stopped.
    fn file(
        session: &mut Session,
        name: &str,
        minimiser: Minimiser,
        path: &RelPath,
        lang: crate::reduce::syntax::Lang,
    ) -> Result<Option<u64>, ReduceError> {
        // A file the grammar cannot take (too large, too slow) is left to other passes.
        by_levels(
            session,
            name,
            minimiser,
            false,
            path,
            "node",
            true,
            |data, depth| {
                let levels = crate::reduce::syntax::deletion_levels(lang, data).ok()?;
                levels.get(depth).cloned()
            },
        )
    }
}

/// Minimises `path` level by level: `level(content, depth)` gives the groups of sibling
/// ranges at `depth` of the current content (`None`: no such level). Each group goes through
/// the list minimiser, the last group first: groups of one level never nest, so cuts in one
/// never move the bytes of the groups before it. Returns the commits made, or `None` when
/// the session stopped. With `guard`, cuts that would leave the file unparsable are skipped
/// (see [`Ranges::guarded`]).
#[expect(
    clippy::too_many_arguments,
    reason = "a level walk needs the pass's name, settings and the level function"
)]
pub(crate) fn by_levels<C: Cut>(
    session: &mut Session,
    name: &str,
    minimiser: Minimiser,
    guard: bool,
    path: &RelPath,
    noun: &'static str,
    single_lines: bool,
    level: impl Fn(&[u8], usize) -> Option<Vec<Vec<C>>>,
) -> Result<Option<u64>, ReduceError> {
    let mut accepted = 0;
    let mut depth = 0;
    loop {
        let Some((data, _)) = file_state(session, path) else {
            return Ok(Some(accepted));
        };
        let Some(mut groups) = level(&data, depth) else {
            return Ok(Some(accepted));
        };
        let mut groups: Vec<Vec<Vec<Range<usize>>>> = groups
            .drain(..)
            .map(|g| {
                g.into_iter()
                    .map(Cut::into_set)
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|g| !g.is_empty())
            .collect();
        groups.sort_by_key(|g| g[0][0].start);
        for group in groups.into_iter().rev() {
            let Some(list) = Ranges::new(session, path, group, noun, single_lines) else {
                return Ok(Some(accepted));
            };
            let mut list = list.guarded(session, guard);
            let outcome = minimise(session, name, minimiser, &mut list)?;
            session.note_unparsable(name, list.unparsable());
            let Some(n) = outcome else {
                return Ok(None);
            };
            accepted += n;
        }
        depth += 1;
    }
}

impl Pass for Syntax {
    fn name(&self) -> &'static str {
        "syntax"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(
            session,
            ctx,
            false,
            |session, path| match crate::reduce::syntax::lang_for_path(path) {
                Some(lang) => Syntax::file(session, name, ctx.minimiser, path, lang),
                None => Ok(Some(0)),
            },
        )
    }
}

/// Line deletion to 1-minimality.
#[derive(Debug, Default)]
pub struct Lines;

impl Pass for Lines {
    fn name(&self) -> &'static str {
        "lines"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(session, ctx, false, |session, path| {
            let Some((data, _)) = file_state(session, path) else {
                return Ok(Some(0));
            };
            let Some(lines) = Ranges::new(session, path, line_ranges(&data), "line", true) else {
                return Ok(Some(0));
            };
            let mut lines = lines.guarded(session, ctx.syntax_guard);
            let outcome = minimise(session, name, ctx.minimiser, &mut lines);
            session.note_unparsable(name, lines.unparsable());
            outcome
        })
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

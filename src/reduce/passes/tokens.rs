//! Cuts inside a line: the token and character passes (`--level tokens`, `--level chars`).
//!
//! Both run the deletion search of the [`crate::bytes`] engine ([`DeletionSearch`]: chunks
//! that halve from the whole file, sweeps that continue after an acceptance, a chunk-1 sweep
//! repeated until it accepts nothing) over the units of one file: the tokens of a simple
//! language-agnostic lexer ([`token_ranges`]), or single bytes. The search is speculative in
//! the engine's way: a window holds the next [`UNION_WINDOW`] deletions it would try if each
//! were rejected, all against one state, and goes through [`Session::try_window`], so
//! `--jobs` changes only how many of them run at once, never the result. Every candidate
//! is a deletion of byte ranges of the current content ([`Mutation::Keep`]).

use std::ops::Range;

use crate::bytes::{DeletionSearch, RestartPolicy};
use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, UNION_WINDOW, complement, file_state, per_file,
};
use crate::reduce::session::{Candidate, Session};
use crate::tree::RelPath;

/// The tokens of `data`, each with the spaces and tabs that follow it, in order.
///
/// A token is a run of identifier bytes (ASCII letters, digits, `_`, and every byte of 128
/// or more, so UTF-8 text stays whole), a string or character literal closed on its own
/// line (`"…"` or `'…'`, backslash escapes honoured), or any other single byte that is not
/// whitespace. Whitespace that starts a line and line ends belong to no token: they are
/// left to the character pass.
pub(crate) fn token_ranges(data: &[u8]) -> Vec<Range<usize>> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let blank = |b: u8| b == b' ' || b == b'\t';
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if word(b) {
            while i < data.len() && word(data[i]) {
                i += 1;
            }
        } else if b == b'"' || b == b'\'' {
            i = literal_end(data, i).unwrap_or(i + 1);
        } else {
            i += 1;
        }
        while i < data.len() && blank(data[i]) {
            i += 1;
        }
        out.push(start..i);
    }
    out
}

/// The end of the quoted literal opening at `open`, when it closes on the same line.
fn literal_end(data: &[u8], open: usize) -> Option<usize> {
    let quote = data[open];
    let mut i = open + 1;
    while i < data.len() {
        match data[i] {
            b'\\' => i += 2,
            b'\n' => return None,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Every byte of `data`, as a unit of its own.
pub(crate) fn char_ranges(data: &[u8]) -> Vec<Range<usize>> {
    (0..data.len()).map(|i| i..i + 1).collect()
}

/// Unit boundaries of a file's content.
type Lexer = fn(&[u8]) -> Vec<Range<usize>>;

/// How many bytes of `0..at` the (possibly overlapping) ranges `cut` cover.
fn covered_before(cut: &[Range<usize>], at: usize) -> usize {
    let mut spans: Vec<Range<usize>> = cut
        .iter()
        .map(|r| r.start.min(at)..r.end.min(at))
        .filter(|r| !r.is_empty())
        .collect();
    spans.sort_by_key(|r| r.start);
    let mut total = 0;
    let mut reach = 0;
    for r in spans {
        let start = r.start.max(reach);
        if r.end > start {
            total += r.end - start;
        }
        reach = reach.max(r.end);
    }
    total
}

/// The 1-based line of byte `at` of `data`.
fn line_of(data: &[u8], at: usize) -> usize {
    data[..at.min(data.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The longest run of units the sliding sweep deletes at once.
pub(crate) const MAX_RUN: usize = 4;

/// One file's content and units, kept in step with the session.
struct File<'a> {
    path: &'a RelPath,
    lex: Lexer,
    noun: &'a str,
    data: std::sync::Arc<[u8]>,
    digest: [u8; 32],
    units: Vec<Range<usize>>,
}

/// What one window did.
enum Window {
    /// The session stopped.
    Stopped,
    /// Nothing was committed.
    Rejected,
    /// Something was committed: the unit of the new content where the window's last
    /// deletion ended.
    Committed(usize),
}

impl File<'_> {
    /// Tries the deletions `runs` (ranges of units, against the current content) as one
    /// window; on a commit, reads the content back and lexes it again.
    fn window(
        &mut self,
        session: &mut Session,
        name: &str,
        runs: &[Range<usize>],
    ) -> Result<Window, ReduceError> {
        let path = self.path;
        let mut tried: Vec<Vec<Range<usize>>> = Vec::new();
        let mut candidates = Vec::new();
        for run in runs {
            let cut: Vec<Range<usize>> = self.units[run.clone()].to_vec();
            let (Some(first), Some(last)) = (cut.first(), cut.last()) else {
                continue;
            };
            let from = line_of(&self.data, first.start);
            let to = line_of(&self.data, last.end.saturating_sub(1));
            let count = run.len();
            let plural = if count == 1 { "" } else { "s" };
            let lines = if from == to {
                format!("line {from}")
            } else {
                format!("lines {from}-{to}")
            };
            candidates.push(Candidate {
                mutation: Mutation::Keep {
                    path: path.clone(),
                    expect: self.digest,
                    keep: complement(self.data.len(), &cut),
                },
                label: format!("{count} {}{plural} at {lines} of {path}", self.noun),
            });
            tried.push(cut);
        }
        if candidates.is_empty() {
            return Ok(Window::Rejected);
        }
        let Some(done) = session.try_window(name, candidates)? else {
            return Ok(Window::Stopped);
        };
        if !done.iter().any(|c| *c) {
            return Ok(Window::Rejected);
        }
        let committed: Vec<Range<usize>> = tried
            .iter()
            .zip(&done)
            .filter(|(_, c)| **c)
            .flat_map(|(cut, _)| cut.iter().cloned())
            .collect();
        let end = tried.last().and_then(|cut| cut.last()).map_or(0, |r| r.end);
        let resume_at = end - covered_before(&committed, end);
        let Some((data, digest)) = file_state(session, path) else {
            self.units.clear();
            return Ok(Window::Committed(0));
        };
        self.units = (self.lex)(&data);
        self.data = data;
        self.digest = digest;
        Ok(Window::Committed(
            self.units.partition_point(|r| r.start < resume_at),
        ))
    }
}

/// Deletes units of `path` until no single unit and no run of up to [`MAX_RUN`] adjacent
/// units can go. First the engine's search (aligned chunks that halve, down to 1-minimal),
/// then a sliding sweep of runs of [`MAX_RUN`] down to 2 units at every position (the
/// aligned chunks never cut `= {}` out of `x[] = {};`); after a sliding sweep that cut
/// something, a chunk-1 search and another sliding sweep. Returns the commits made, or
/// `None` when the session stopped.
fn sweep(
    session: &mut Session,
    name: &str,
    path: &RelPath,
    lex: Lexer,
    noun: &str,
) -> Result<Option<u64>, ReduceError> {
    let Some((data, digest)) = file_state(session, path) else {
        return Ok(Some(0));
    };
    let units = lex(&data);
    let mut file = File {
        path,
        lex,
        noun,
        data,
        digest,
        units,
    };
    let mut search = DeletionSearch::new(file.units.len(), RestartPolicy::Continue);
    let mut accepted = 0;
    loop {
        while !search.is_done() {
            // The next deletions, each as if every one before it were rejected.
            let mut ahead = search;
            let mut runs = Vec::new();
            while runs.len() < UNION_WINDOW {
                let Some(next) = ahead.next() else {
                    break;
                };
                ahead.reject();
                runs.push(next);
            }
            match file.window(session, name, &runs)? {
                Window::Stopped => return Ok(None),
                Window::Rejected => search = ahead,
                Window::Committed(pos) => {
                    accepted += 1;
                    // Continue where the window ended, in the content after the commit.
                    let chunk = if ahead.is_done() { 1 } else { ahead.chunk() };
                    let len = file.units.len();
                    search = DeletionSearch::resume(len, chunk, pos, true, RestartPolicy::Continue);
                }
            }
        }
        let mut slid = false;
        let mut size = MAX_RUN;
        let mut pos = 0;
        while size >= 2 {
            let len = file.units.len();
            if pos + size > len {
                size -= 1;
                pos = 0;
                continue;
            }
            let runs: Vec<Range<usize>> = (pos..=len - size)
                .take(UNION_WINDOW)
                .map(|p| p..p + size)
                .collect();
            let after = pos + runs.len();
            match file.window(session, name, &runs)? {
                Window::Stopped => return Ok(None),
                Window::Rejected => pos = after,
                Window::Committed(at) => {
                    accepted += 1;
                    slid = true;
                    pos = at;
                }
            }
        }
        if !slid {
            return Ok(Some(accepted));
        }
        search = DeletionSearch::resume(file.units.len(), 1, 0, false, RestartPolicy::Continue);
    }
}

/// Token deletion inside lines, to 1-minimality over the tokens of each file.
#[derive(Debug, Default)]
pub(crate) struct Tokens;

impl Pass for Tokens {
    fn name(&self) -> &'static str {
        "tokens"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(session, ctx, true, |session, path| {
            sweep(session, name, path, token_ranges, "token")
        })
    }
}

/// Character deletion, to 1-minimality over the bytes of each file.
#[derive(Debug, Default)]
pub(crate) struct Chars;

impl Pass for Chars {
    fn name(&self) -> &'static str {
        "chars"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(session, ctx, true, |session, path| {
            sweep(session, name, path, char_ranges, "character")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(data: &str) -> Vec<&str> {
        token_ranges(data.as_bytes())
            .into_iter()
            .map(|r| &data[r])
            .collect()
    }

    #[test]
    fn tokens_are_words_literals_and_single_punctuation_with_trailing_blanks() {
        assert_eq!(
            texts("   Int32 nextHi[3];\n"),
            ["Int32 ", "nextHi", "[", "3", "]", ";"]
        );
        assert_eq!(
            texts("#define m(a,b) (a->b)\n"),
            [
                "#", "define ", "m", "(", "a", ",", "b", ") ", "(", "a", "-", ">", "b", ")"
            ]
        );
    }

    #[test]
    fn literals_stay_whole_and_escapes_do_not_close_them() {
        assert_eq!(
            texts(r#"puts("a \" b", 'x');"#),
            ["puts", "(", r#""a \" b""#, ", ", "'x'", ")", ";"]
        );
        // An apostrophe in prose, or a quote left open at the line end, is one byte.
        assert_eq!(texts("don't\nx"), ["don", "'", "t", "x"]);
        assert_eq!(texts("\"open\nx\""), ["\"", "open", "x", "\""]);
    }

    #[test]
    fn tokens_cover_every_non_blank_byte_exactly_once() {
        let data = "fn main() {\n\tlet s = \"é ü\"; // ok\n  x += 1;\r\n}\n";
        let ranges = token_ranges(data.as_bytes());
        let mut at = 0;
        for r in &ranges {
            assert!(r.start >= at && r.end > r.start, "{ranges:?}");
            assert!(
                data.as_bytes()[at..r.start]
                    .iter()
                    .all(u8::is_ascii_whitespace)
            );
            at = r.end;
        }
        assert!(data.as_bytes()[at..].iter().all(u8::is_ascii_whitespace));
        assert_eq!(texts("é ü"), ["é ", "ü"]);
        assert_eq!(texts(""), Vec::<&str>::new());
        assert_eq!(texts(" \n\t\n"), Vec::<&str>::new());
    }

    #[test]
    fn chars_are_single_bytes() {
        assert_eq!(char_ranges(b"ab\n"), vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn covered_bytes_count_overlaps_once() {
        assert_eq!(covered_before(&[2..5, 4..8, 10..12], 11), 7);
        assert_eq!(covered_before(&[], 11), 0);
        assert_eq!(covered_before(&[0..3], 2), 2);
    }

    #[test]
    fn lines_are_one_based() {
        assert_eq!(line_of(b"a\nb\nc", 0), 1);
        assert_eq!(line_of(b"a\nb\nc", 2), 2);
        assert_eq!(line_of(b"a\nb\nc", 99), 3);
    }
}

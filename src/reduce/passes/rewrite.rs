//! The rewrite pass: a local exhaustive search around a tiny file, where deletions alone
//! are stuck (the last pass of `--level chars`).
//!
//! A file reduced to 1-minimality by deletions can still hold a smaller form that no single
//! deletion reaches: `#define nextHi` is 1-minimal for "compiles and names nextHi", yet
//! `nextHi;` also is, and is half its size. It takes two edits to get there: one run of
//! tokens deleted (`#define `) and one token put in (`;`). So, for a file of at most
//! [`MAX_TOKENS`] tokens and [`MAX_BYTES`] bytes, in a tree of at most [`MAX_TREE_BYTES`]
//! bytes, this pass tries every content made of one
//! deleted run of tokens and at most one inserted token, the inserted token taken from the
//! [`VOCABULARY`] most frequent short tokens of the file in the source tree, smallest content
//! first (at most [`MAX_CANDIDATES`] of them, and in a run of the pass at most as many as
//! the reduction ran commands before it). The first that the oracle accepts is committed,
//! and the other passes go on from there.
//!
//! Each candidate is a cut of the current content with, for an insertion, the byte beside
//! the insertion replaced by itself and the token ([`Mutation::Replace`]), so it carries as
//! few replacement bytes as an edit of the certificate can.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, UNION_WINDOW, complement, file_state, per_file,
};
use crate::reduce::passes::tokens::token_ranges;
use crate::reduce::session::{Candidate, Session};
use crate::tree::RelPath;

/// Files of more tokens are left alone.
pub(crate) const MAX_TOKENS: usize = 12;
/// Files of more bytes are left alone.
pub(crate) const MAX_BYTES: usize = 96;
/// How many of the source file's most frequent short tokens may be put in.
pub(crate) const VOCABULARY: usize = 8;
/// The longest token put in, in bytes.
pub(crate) const TOKEN_MAX: usize = 4;
/// The most candidates tried on one content.
pub(crate) const MAX_CANDIDATES: usize = 256;
/// A run of the pass tries at most as many candidates as the reduction ran commands before
/// it (so it at most doubles a run), and at least this many.
pub(crate) const MIN_BUDGET: u64 = 64;
/// Trees of more bytes in all are left alone: many tiny files of a larger tree would each
/// cost hundreds of runs.
pub(crate) const MAX_TREE_BYTES: u64 = 384;

/// The most frequent tokens of `source` of at most [`TOKEN_MAX`] bytes (trailing blanks
/// dropped), most frequent first, ties in byte order; at most [`VOCABULARY`] of them.
pub(crate) fn vocabulary(source: &[u8]) -> Vec<Vec<u8>> {
    let mut counts: BTreeMap<&[u8], usize> = BTreeMap::new();
    for r in token_ranges(source) {
        let token = source[r].trim_ascii_end();
        if !token.is_empty() && token.len() <= TOKEN_MAX {
            *counts.entry(token).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&[u8], usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(VOCABULARY)
        .map(|(t, _)| t.to_vec())
        .collect()
}

/// One candidate: the bytes `cut` deleted from the content and, when given, `token` put in
/// at byte `at` (a boundary outside the cut), with the spaces it needs to stay a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rewrite {
    pub(crate) cut: Range<usize>,
    pub(crate) insert: Option<(usize, Vec<u8>)>,
    pub(crate) content: Vec<u8>,
}

fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// `token` as put between bytes `before` and `after`: with a space on a side where it would
/// otherwise join a word.
fn spaced(token: &[u8], before: Option<u8>, after: Option<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len() + 2);
    if before.is_some_and(word) && token.first().is_some_and(|b| word(*b)) {
        out.push(b' ');
    }
    out.extend_from_slice(token);
    if after.is_some_and(word) && token.last().is_some_and(|b| word(*b)) {
        out.push(b' ');
    }
    out
}

/// Every content of one deleted run of tokens and at most one inserted token of `vocab`
/// smaller than `data`, smallest first (ties in byte order), each content once, at most
/// [`MAX_CANDIDATES`]; empty when `data` is over the pass's limits.
pub(crate) fn rewrites(data: &[u8], vocab: &[Vec<u8>]) -> Vec<Rewrite> {
    let tokens = token_ranges(data);
    if data.len() > MAX_BYTES || tokens.len() > MAX_TOKENS || tokens.is_empty() {
        return Vec::new();
    }
    let mut seen: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut out: Vec<Rewrite> = Vec::new();
    for i in 0..tokens.len() {
        for j in i + 1..=tokens.len() {
            let cut = tokens[i].start..tokens[j - 1].end;
            let rest: Vec<u8> = [&data[..cut.start], &data[cut.end..]].concat();
            let mut push = |content: Vec<u8>, insert: Option<(usize, Vec<u8>)>| {
                if content.len() < data.len() && seen.insert(content.clone()) {
                    out.push(Rewrite {
                        cut: cut.clone(),
                        insert,
                        content,
                    });
                }
            };
            push(rest.clone(), None);
            // Token boundaries of the content after the cut, as offsets into `data`.
            let mut places: Vec<usize> = tokens
                .iter()
                .map(|t| t.start)
                .chain(std::iter::once(data.len()))
                .filter(|&b| b <= cut.start || b >= cut.end)
                .collect();
            places.dedup();
            for &at in &places {
                let before = data[..at].last().copied();
                let after = data.get(at).copied();
                for token in vocab {
                    let piece = spaced(token, before, after);
                    // `at` is at or before the cut, or at or after its end.
                    let content: Vec<u8> = if at <= cut.start {
                        [
                            &data[..at],
                            &piece[..],
                            &data[at..cut.start],
                            &data[cut.end..],
                        ]
                        .concat()
                    } else {
                        [
                            &data[..cut.start],
                            &data[cut.end..at],
                            &piece[..],
                            &data[at..],
                        ]
                        .concat()
                    };
                    push(content, Some((at, piece)));
                }
            }
        }
    }
    out.sort_by(|a, b| {
        a.content
            .len()
            .cmp(&b.content.len())
            .then(a.content.cmp(&b.content))
    });
    out.truncate(MAX_CANDIDATES);
    out
}

/// The mutation that makes `rewrite` of a file whose current content is `data`.
fn mutation(path: &RelPath, digest: [u8; 32], data: &[u8], rewrite: &Rewrite) -> Mutation {
    let keep = complement(data.len(), std::slice::from_ref(&rewrite.cut));
    let Some((at, piece)) = &rewrite.insert else {
        return Mutation::Keep {
            path: path.clone(),
            expect: digest,
            keep,
        };
    };
    let kept = |i: usize| i < data.len() && !rewrite.cut.contains(&i);
    let cut = &rewrite.cut;
    // Beside the cut, a place is the same on either side of it: the kept byte before the
    // insertion, or the kept byte after it.
    let before = if *at > 0 && kept(at - 1) {
        Some(at - 1)
    } else if *at == cut.end && cut.start > 0 {
        Some(cut.start - 1)
    } else {
        None
    };
    let after = if kept(*at) {
        Some(*at)
    } else if *at == cut.start && cut.end < data.len() {
        Some(cut.end)
    } else {
        None
    };
    // The byte beside the insertion that stays, replaced by itself and the token.
    let replace: (Range<usize>, Arc<[u8]>) = if let Some(b) = before {
        let mut with = vec![data[b]];
        with.extend_from_slice(piece);
        (b..b + 1, Arc::from(with))
    } else if let Some(a) = after {
        let mut with = piece.clone();
        with.push(data[a]);
        (a..a + 1, Arc::from(with))
    } else {
        // Nothing stays: the whole content becomes the token.
        return Mutation::Replace {
            path: path.clone(),
            expect: digest,
            keep: None,
            replace: vec![(0..data.len(), Arc::from(piece.clone()))],
        };
    };
    Mutation::Replace {
        path: path.clone(),
        expect: digest,
        keep: Some(keep),
        replace: vec![replace],
    }
}

/// Rewrites of one file, window by window, until one commits. Returns the commits made
/// (0 or 1), or `None` when the session stopped.
fn search(
    session: &mut Session,
    name: &str,
    path: &RelPath,
    budget: &mut u64,
) -> Result<Option<u64>, ReduceError> {
    let Some((data, digest)) = file_state(session, path) else {
        return Ok(Some(0));
    };
    if data.len() > MAX_BYTES {
        return Ok(Some(0));
    }
    let source = session
        .original
        .entries
        .get(path)
        .and_then(|e| e.node.data())
        .map(|d| d.to_vec())
        .unwrap_or_default();
    let vocab = vocabulary(&source);
    let mut all = rewrites(&data, &vocab);
    all.truncate(usize::try_from(*budget).unwrap_or(usize::MAX));
    for window in all.chunks(UNION_WINDOW) {
        *budget = budget.saturating_sub(window.len() as u64);
        let candidates: Vec<Candidate> = window
            .iter()
            .map(|r| Candidate {
                mutation: mutation(path, digest, &data, r),
                label: format!(
                    "rewrite {path} as {:?}",
                    String::from_utf8_lossy(&r.content)
                ),
            })
            .collect();
        let Some(done) = session.try_window(name, candidates)? else {
            return Ok(None);
        };
        if done.contains(&true) {
            return Ok(Some(1));
        }
    }
    Ok(Some(0))
}

/// One deleted run of tokens and one inserted token, around files of a few tokens.
#[derive(Debug, Default)]
pub(crate) struct Rewrites;

impl Pass for Rewrites {
    fn name(&self) -> &'static str {
        "rewrite"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        if session.current.size().bytes > MAX_TREE_BYTES {
            return Ok(PassResult::default());
        }
        let name = self.name();
        let ran: u64 = session.phases().iter().map(|p| p.oracle_samples).sum();
        let mut budget = ran.max(MIN_BUDGET);
        per_file(session, ctx, false, |session, path| {
            search(session, name, path, &mut budget)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &Rewrite) -> &str {
        std::str::from_utf8(&r.content).unwrap_or("")
    }

    #[test]
    fn the_vocabulary_is_the_most_frequent_short_tokens() {
        let src = b"int a; int b; a = b; return a;";
        let v = vocabulary(src);
        assert_eq!(v[0], b";".to_vec());
        assert_eq!(v[1], b"a".to_vec());
        assert!(v.contains(&b"int".to_vec()));
        assert!(!v.iter().any(|t| t == b"return"), "over TOKEN_MAX bytes");
    }

    #[test]
    fn one_deleted_run_and_one_inserted_token_reach_what_deletions_cannot() {
        let all = rewrites(b"#define nextHi", &[b";".to_vec()]);
        let texts: Vec<&str> = all.iter().map(text).collect();
        assert!(texts.contains(&"nextHi;"), "{texts:?}");
        // Smallest first, each content once, each smaller than the file.
        assert!(
            all.windows(2)
                .all(|w| w[0].content.len() <= w[1].content.len())
        );
        let unique: BTreeSet<&str> = texts.iter().copied().collect();
        assert_eq!(unique.len(), texts.len());
        assert!(all.iter().all(|r| r.content.len() < 14));
    }

    #[test]
    fn an_inserted_word_is_spaced_from_the_words_beside_it() {
        let all = rewrites(b"long x = y;", &[b"int".to_vec()]);
        let texts: Vec<&str> = all.iter().map(text).collect();
        assert!(texts.contains(&"int x = y;"), "{texts:?}");
        assert!(texts.contains(&"int= y;"), "{texts:?}");
        assert!(!texts.iter().any(|t| t.contains("intx")), "{texts:?}");
    }

    #[test]
    fn large_files_are_left_alone() {
        let big = "a ".repeat(MAX_TOKENS + 1);
        assert!(rewrites(big.as_bytes(), &[b";".to_vec()]).is_empty());
    }

    #[test]
    fn each_mutation_gives_the_content_it_promises() {
        use crate::reduce::edits::EditSet;
        use crate::reduce::edits::tests::tree;
        let data = "#define nextHi";
        let original = tree(&[("a.c", data)]);
        let path: RelPath = Arc::from("a.c");
        let crate::tree::Node::File { digest, .. } =
            crate::tree::Node::file(Arc::from(data.as_bytes()))
        else {
            unreachable!("a file node");
        };
        for r in rewrites(data.as_bytes(), &[b";".to_vec(), b"int".to_vec()]) {
            let m = mutation(&path, digest, data.as_bytes(), &r);
            let (_, after) = EditSet::default()
                .apply(&original, &original, &m)
                .unwrap_or_else(|e| panic!("{r:?}: {e:?}"));
            let got = after.entries.get(&path).and_then(|e| e.node.data());
            assert_eq!(got.map(|d| d.to_vec()), Some(r.content.clone()), "{r:?}");
        }
    }
}

//! The changes between two trees as `git diff -M --name-status` reports them, computed
//! from the object database: the recursive tree walk in git's tree order, then git's rename
//! detection (exact renames, unique-basename pairs, then the similarity matrix) with its
//! scores, limits and tie-breaks, so the plan sees exactly the pairs git would show.
//!
//! Copies are not detected (`-M` alone), an empty file can be renamed like any other, a
//! symlink or submodule is renamed only when it is unchanged, and a change of type (file,
//! symlink, submodule) is one `T` entry. Paths stay bytes here.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use git2::{Oid, Repository, Tree};

use super::error::{GitError, escape_path};

/// git's full similarity score (100%).
const MAX_SCORE: u64 = 60000;
/// `-M` without a number: 50%.
const MIN_SCORE: u64 = 30000;
/// A pair found by basename must be this similar: halfway between the minimum and 100%.
const MIN_BASENAME_SCORE: u64 = MIN_SCORE + (MAX_SCORE - MIN_SCORE) / 2;
/// How many candidate sources the similarity matrix keeps per destination.
const CANDIDATES: usize = 4;
/// How many identical sources are looked at for one destination.
const EXACT_ALTERNATIVES: usize = 100;
/// The modulus of the span hashes (a prime between 2^16 and 2^17).
const HASHBASE: u32 = 107_927;
/// How much of a blob is looked at for a NUL byte to call it binary.
const FIRST_FEW_BYTES: usize = 8000;
/// Blobs larger than this are binary (`core.bigFileThreshold`'s default).
const BIG_FILE_THRESHOLD: usize = 512 * 1024 * 1024;
/// `diff.renameLimit`'s default.
pub(super) const DEFAULT_RENAME_LIMIT: u64 = 1000;

const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;

/// One side of a change.
#[derive(Clone, Debug)]
struct Spec {
    path: Vec<u8>,
    mode: u32,
    id: Oid,
}

impl Spec {
    fn is_regular(&self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }
}

/// One entry of the tree diff, before rename detection joins deletions and additions.
enum Pair {
    Add(Spec),
    Delete(Spec),
    Modify(Spec, Spec),
}

/// One change, with byte paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RawChange {
    /// A, M, D, T or R.
    pub status: char,
    /// The similarity of a rename in percent, else 0.
    pub score: u32,
    /// The old path (the path itself unless renamed).
    pub old: Vec<u8>,
    /// The new path.
    pub new: Vec<u8>,
}

impl RawChange {
    fn at(status: char, path: &[u8]) -> RawChange {
        RawChange {
            status,
            score: 0,
            old: path.to_vec(),
            new: path.to_vec(),
        }
    }
}

/// The changes from `old` to `new` in git's order (a rename where its new path is), with
/// inexact renames looked for only while `sources × destinations ≤ limit²` (no limit when
/// `rename_limit` is `None`).
///
/// # Errors
/// A tree or blob cannot be read.
pub(super) fn diff_trees(
    repo: &Repository,
    old: &Tree<'_>,
    new: &Tree<'_>,
    rename_limit: Option<u64>,
) -> Result<Vec<RawChange>, GitError> {
    let mut pairs = Vec::new();
    walk(repo, Some(old), Some(new), &[], &mut pairs)?;
    let renamed = Renames::new(repo).detect(&pairs, rename_limit)?;
    let used: HashSet<usize> = renamed.values().map(|&(src, _)| src).collect();
    let mut changes = Vec::new();
    for (index, pair) in pairs.iter().enumerate() {
        changes.push(match pair {
            Pair::Add(spec) => match renamed.get(&index) {
                Some(&(src, score)) => RawChange {
                    status: 'R',
                    score: u32::try_from(score * 100 / MAX_SCORE).unwrap_or(100),
                    old: spec_of(&pairs[src]).path.clone(),
                    new: spec.path.clone(),
                },
                None => RawChange::at('A', &spec.path),
            },
            Pair::Delete(_) if used.contains(&index) => continue,
            Pair::Delete(spec) => RawChange::at('D', &spec.path),
            Pair::Modify(a, b) if a.mode & S_IFMT != b.mode & S_IFMT => RawChange::at('T', &b.path),
            Pair::Modify(_, b) => RawChange::at('M', &b.path),
        });
    }
    Ok(changes)
}

/// The side of a pair that takes part in rename detection.
fn spec_of(pair: &Pair) -> &Spec {
    match pair {
        Pair::Add(spec) | Pair::Delete(spec) | Pair::Modify(_, spec) => spec,
    }
}

/// A tree entry with its sort key: its name, plus `/` for a directory (git's tree order).
struct Entry {
    key: Vec<u8>,
    spec: Spec,
}

impl Entry {
    fn is_tree(&self) -> bool {
        self.spec.mode & S_IFMT == S_IFDIR
    }

    fn subtree<'r>(&self, repo: &'r Repository) -> Result<Tree<'r>, GitError> {
        repo.find_tree(self.spec.id)
            .map_err(|source| GitError::Read {
                what: format!("the tree `{}`", escape_path(&self.spec.path)),
                source,
            })
    }

    /// The prefix of the entries inside this directory.
    fn prefix(&self) -> Vec<u8> {
        [&self.spec.path[..], b"/"].concat()
    }
}

fn entries(tree: Option<&Tree<'_>>, prefix: &[u8]) -> Vec<Entry> {
    let Some(tree) = tree else {
        return Vec::new();
    };
    let mut entries: Vec<Entry> = tree
        .iter()
        .map(|entry| {
            let name = entry.name_bytes();
            let mode = u32::try_from(entry.filemode()).unwrap_or(0);
            let mut key = name.to_vec();
            if mode & S_IFMT == S_IFDIR {
                key.push(b'/');
            }
            Entry {
                key,
                spec: Spec {
                    path: [prefix, name].concat(),
                    mode,
                    id: entry.id(),
                },
            }
        })
        .collect();
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    entries
}

/// Appends the changes from `old` to `new` (either may be absent) under `prefix`.
fn walk(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &[u8],
    out: &mut Vec<Pair>,
) -> Result<(), GitError> {
    let a = entries(old, prefix);
    let b = entries(new, prefix);
    let (mut i, mut j) = (0, 0);
    loop {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.key.cmp(&y.key),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return Ok(()),
        };
        match order {
            Ordering::Less => {
                let x = &a[i];
                if x.is_tree() {
                    walk(repo, Some(&x.subtree(repo)?), None, &x.prefix(), out)?;
                } else {
                    out.push(Pair::Delete(x.spec.clone()));
                }
                i += 1;
            }
            Ordering::Greater => {
                let y = &b[j];
                if y.is_tree() {
                    walk(repo, None, Some(&y.subtree(repo)?), &y.prefix(), out)?;
                } else {
                    out.push(Pair::Add(y.spec.clone()));
                }
                j += 1;
            }
            Ordering::Equal => {
                let (x, y) = (&a[i], &b[j]);
                if x.is_tree() {
                    if x.spec.id != y.spec.id {
                        let (tx, ty) = (x.subtree(repo)?, y.subtree(repo)?);
                        walk(repo, Some(&tx), Some(&ty), &x.prefix(), out)?;
                    }
                } else if x.spec.id != y.spec.id || x.spec.mode != y.spec.mode {
                    out.push(Pair::Modify(x.spec.clone(), y.spec.clone()));
                }
                i += 1;
                j += 1;
            }
        }
    }
}

/// A blob's size and its span counts: the bytes of each line (or 64-byte run) counted
/// under the line's hash, sorted by hash.
struct Spans {
    size: u64,
    counts: Vec<(u32, u64)>,
}

impl Spans {
    fn of(data: &[u8]) -> Spans {
        let head = &data[..data.len().min(FIRST_FEW_BYTES)];
        let is_text = data.len() <= BIG_FILE_THRESHOLD && !head.contains(&0);
        let mut counts: HashMap<u32, u64> = HashMap::new();
        let (mut accum1, mut accum2, mut n) = (0u32, 0u32, 0u64);
        for (i, &byte) in data.iter().enumerate() {
            // A CR before an LF does not count in text.
            if is_text && byte == b'\r' && data.get(i + 1) == Some(&b'\n') {
                continue;
            }
            let c = u32::from(byte);
            let old1 = accum1;
            accum1 = (accum1 << 7) ^ (accum2 >> 25);
            accum2 = (accum2 << 7) ^ (old1 >> 25);
            accum1 = accum1.wrapping_add(c);
            n += 1;
            if n < 64 && byte != b'\n' {
                continue;
            }
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
            *counts.entry(hash).or_default() += n;
            n = 0;
            accum1 = 0;
            accum2 = 0;
        }
        if n > 0 {
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
            *counts.entry(hash).or_default() += n;
        }
        let mut counts: Vec<(u32, u64)> = counts.into_iter().collect();
        counts.sort_unstable();
        Spans {
            size: data.len() as u64,
            counts,
        }
    }

    /// How many bytes of `self` reappear in `other`.
    fn copied_into(&self, other: &Spans) -> u64 {
        let (mut i, mut j, mut copied) = (0, 0, 0);
        while let (Some(&(hs, cs)), Some(&(hd, cd))) = (self.counts.get(i), other.counts.get(j)) {
            match hs.cmp(&hd) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    copied += cs.min(cd);
                    i += 1;
                    j += 1;
                }
            }
        }
        copied
    }
}

/// Whether two paths end in the same file name.
fn basename_same(src: &[u8], dst: &[u8]) -> bool {
    let (mut i, mut j) = (src.len(), dst.len());
    while i > 0 && j > 0 {
        i -= 1;
        j -= 1;
        if src[i] != dst[j] {
            return false;
        }
        if src[i] == b'/' {
            return true;
        }
    }
    (i == 0 || src[i - 1] == b'/') && (j == 0 || dst[j - 1] == b'/')
}

fn basename(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(slash) => &path[slash + 1..],
        None => path,
    }
}

/// A candidate rename in the similarity matrix.
#[derive(Clone, Copy)]
struct Candidate {
    src: usize,
    dst: usize,
    score: u64,
    name_score: bool,
}

/// Better candidates first, empty slots last.
fn by_score(a: &Option<Candidate>, b: &Option<Candidate>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) if a.score == b.score => b.name_score.cmp(&a.name_score),
        (Some(a), Some(b)) => b.score.cmp(&a.score),
    }
}

/// Keeps `candidate` in `slots` when it beats the worst one there.
fn record_if_better(slots: &mut [Option<Candidate>; CANDIDATES], candidate: Candidate) {
    let mut worst = 0;
    for i in 1..CANDIDATES {
        if by_score(&slots[i], &slots[worst]) == Ordering::Greater {
            worst = i;
        }
    }
    if by_score(&slots[worst], &Some(candidate)) == Ordering::Greater {
        slots[worst] = Some(candidate);
    }
}

/// Rename detection over one diff, with the span counts of the blobs it read.
struct Renames<'r> {
    repo: &'r Repository,
    spans: HashMap<Oid, Rc<Spans>>,
}

impl<'r> Renames<'r> {
    fn new(repo: &'r Repository) -> Renames<'r> {
        Renames {
            repo,
            spans: HashMap::new(),
        }
    }

    fn spans(&mut self, spec: &Spec) -> Result<Rc<Spans>, GitError> {
        if let Some(spans) = self.spans.get(&spec.id) {
            return Ok(Rc::clone(spans));
        }
        let blob = self
            .repo
            .find_blob(spec.id)
            .map_err(|source| GitError::Read {
                what: format!("the blob of `{}`", escape_path(&spec.path)),
                source,
            })?;
        let spans = Rc::new(Spans::of(blob.content()));
        self.spans.insert(spec.id, Rc::clone(&spans));
        Ok(spans)
    }

    /// How much of `dst` comes from `src`, from 0 to [`MAX_SCORE`]; 0 when the sizes
    /// alone rule out `minimum`.
    fn similarity(&mut self, src: &Spec, dst: &Spec, minimum: u64) -> Result<u64, GitError> {
        if !src.is_regular() || !dst.is_regular() {
            return Ok(0);
        }
        let (a, b) = (self.spans(src)?, self.spans(dst)?);
        let max = a.size.max(b.size);
        let delta = max - a.size.min(b.size);
        if max * (MAX_SCORE - minimum) < delta * MAX_SCORE || b.size == 0 {
            return Ok(0);
        }
        Ok(a.copied_into(&b) * MAX_SCORE / max)
    }

    /// The renames among `pairs`: destination index to source index and score.
    fn detect(
        &mut self,
        pairs: &[Pair],
        limit: Option<u64>,
    ) -> Result<HashMap<usize, (usize, u64)>, GitError> {
        let mut renamed: HashMap<usize, (usize, u64)> = HashMap::new();
        let dsts: Vec<usize> = (0..pairs.len())
            .filter(|&i| matches!(pairs[i], Pair::Add(_)))
            .collect();
        let mut srcs: Vec<usize> = (0..pairs.len())
            .filter(|&i| matches!(pairs[i], Pair::Delete(_)))
            .collect();
        if dsts.is_empty() || srcs.is_empty() {
            return Ok(renamed);
        }
        let spec = |i: usize| spec_of(&pairs[i]);
        let mut used: HashSet<usize> = HashSet::new();

        // Exact renames: the same blob, preferring an unused source with the same name.
        for &d in &dsts {
            let target = spec(d);
            let (mut best, mut best_score, mut left) = (None, 0, EXACT_ALTERNATIVES);
            for &s in &srcs {
                let source = spec(s);
                if source.id != target.id
                    || ((!source.is_regular() || !target.is_regular())
                        && source.mode != target.mode)
                    || used.contains(&s)
                {
                    continue;
                }
                let score = 1 + usize::from(basename_same(&source.path, &target.path));
                if score > best_score {
                    best = Some(s);
                    best_score = score;
                    if score == 2 {
                        break;
                    }
                }
                left -= 1;
                if left == 0 {
                    break;
                }
            }
            if let Some(s) = best {
                renamed.insert(d, (s, MAX_SCORE));
                used.insert(s);
            }
        }
        srcs.retain(|s| !used.contains(s));

        // A source and a destination alone with their file name pair up when similar.
        let unique = |paths: &mut dyn Iterator<Item = usize>| {
            let mut map: HashMap<&[u8], Option<usize>> = HashMap::new();
            for i in paths {
                map.entry(basename(&spec(i).path))
                    .and_modify(|v| *v = None)
                    .or_insert(Some(i));
            }
            map
        };
        let src_names = unique(&mut srcs.iter().copied());
        let dst_names = unique(&mut dsts.iter().copied().filter(|d| !renamed.contains_key(d)));
        for &s in &srcs {
            let name = basename(&spec(s).path);
            let (Some(Some(_)), Some(&Some(d))) = (src_names.get(name), dst_names.get(name)) else {
                continue;
            };
            if renamed.contains_key(&d) {
                continue;
            }
            let score = self.similarity(spec(s), spec(d), MIN_BASENAME_SCORE)?;
            if score >= MIN_BASENAME_SCORE {
                renamed.insert(d, (s, score));
                used.insert(s);
            }
        }
        srcs.retain(|s| !used.contains(s));

        // The rest: each destination's best candidates, best pairs first.
        let left: Vec<usize> = dsts
            .iter()
            .copied()
            .filter(|d| !renamed.contains_key(d))
            .collect();
        if left.is_empty() || srcs.is_empty() {
            return Ok(renamed);
        }
        if let Some(limit) = limit
            && (left.len() as u64).saturating_mul(srcs.len() as u64) > limit.saturating_mul(limit)
        {
            return Ok(renamed);
        }
        let mut matrix: Vec<Option<Candidate>> = Vec::with_capacity(left.len() * CANDIDATES);
        for &d in &left {
            let mut slots = [None; CANDIDATES];
            for &s in &srcs {
                let score = self.similarity(spec(s), spec(d), MIN_SCORE)?;
                let name_score = basename_same(&spec(s).path, &spec(d).path);
                record_if_better(
                    &mut slots,
                    Candidate {
                        src: s,
                        dst: d,
                        score,
                        name_score,
                    },
                );
            }
            matrix.extend(slots);
        }
        matrix.sort_by(by_score);
        for candidate in matrix {
            let Some(c) = candidate else { break };
            if c.score < MIN_SCORE {
                break;
            }
            if renamed.contains_key(&c.dst) || used.contains(&c.src) {
                continue;
            }
            renamed.insert(c.dst, (c.src, c.score));
            used.insert(c.src);
        }
        Ok(renamed)
    }
}

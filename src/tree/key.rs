//! A tree's identity inside one run: a set hash whose cost follows the change.
//!
//! Every candidate of a reduction is the accepted tree plus one change, and the session
//! asks of each whether it is the accepted tree, a tree answered before, or one already in
//! its window. [`Tree::fingerprint`] answers that, but it hashes every entry: on a tree of
//! 10,000 files that cost more than spawning the command the probe runs.
//!
//! A [`SetHash`] is a sum of one vector per entry (and one for the root's metadata): 1,024
//! lanes of 16 bits added modulo 2^16, each entry's vector the SHA-256 counter-mode
//! expansion of a digest of that entry's fields (the fields `tree-sha256-v2` hashes). The
//! set hash of a candidate is the accepted tree's, minus the vectors of the entries the
//! change removed or replaced, plus those of the entries it added ([`SetHash::moved`]);
//! `OrdMap::diff` skips the nodes the two trees share, so it costs what the change does.
//! Two different trees with the same sum would be a short vector in a random lattice,
//! the problem additive set hashes of this shape (Bellare and Micciancio's, LtHash with
//! these parameters) rest on. [`SetHash::key`] compresses the sum to 32 bytes for maps.
//!
//! The key never leaves the process: what is published, journaled or reported as a tree's
//! identity stays `tree-sha256-v2` or `tree-content-sha256-v1`.

use std::fmt;

use sha2::{Digest, Sha256};

use super::model::{Entry, Meta, Node, Tree};

/// Lanes of a [`SetHash`].
const LANES: usize = 1024;
/// Lanes filled by one SHA-256 output.
const LANES_PER_BLOCK: usize = 16;

/// The sum of the vectors of a tree's entries and root; see the module documentation.
#[derive(Clone, PartialEq, Eq)]
pub struct SetHash {
    lanes: Box<[u16]>,
    /// Elements summed (entries plus the root), modulo 2^64.
    count: u64,
}

/// A tree's 32-byte key: [`SetHash::key`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TreeKey([u8; 32]);

impl fmt::Debug for TreeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TreeKey(")?;
        crate::text::write_hex(f, &self.0[..8])?;
        write!(f, "…)")
    }
}

impl fmt::Debug for SetHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SetHash({} elements, {:?})", self.count, self.key())
    }
}

/// Whether a vector is added to or taken from the sum.
#[derive(Clone, Copy)]
enum Sign {
    Add,
    Take,
}

impl SetHash {
    /// The set hash of `tree`, from every entry.
    pub fn of(tree: &Tree) -> SetHash {
        let mut sum = SetHash {
            lanes: vec![0u16; LANES].into_boxed_slice(),
            count: 0,
        };
        sum.root(&tree.root, Sign::Add);
        for (path, entry) in &tree.entries {
            sum.entry(path, entry, Sign::Add);
        }
        sum
    }

    /// The set hash of `to`, given that this is the set hash of `from`: counted over what
    /// differs between the two (the entries their maps share are skipped).
    pub fn moved(&self, from: &Tree, to: &Tree) -> SetHash {
        let mut sum = self.clone();
        if from.root != to.root {
            sum.root(&from.root, Sign::Take);
            sum.root(&to.root, Sign::Add);
        }
        for item in from.entries.diff(&to.entries) {
            match item {
                imbl::ordmap::DiffItem::Add(path, entry) => sum.entry(path, entry, Sign::Add),
                imbl::ordmap::DiffItem::Remove(path, entry) => {
                    sum.entry(path, entry, Sign::Take);
                }
                imbl::ordmap::DiffItem::Update {
                    old: (path, old),
                    new: (_, new),
                } => {
                    sum.entry(path, old, Sign::Take);
                    sum.entry(path, new, Sign::Add);
                }
            }
        }
        sum
    }

    /// The sum compressed to 32 bytes: equal for equal sums, and for different sums as
    /// unlikely to be equal as two SHA-256 digests.
    pub fn key(&self) -> TreeKey {
        let mut h = Sha256::new();
        h.update(b"repromin:tree-key-v1\0");
        h.update(self.count.to_le_bytes());
        let mut bytes = [0u8; 2 * LANES];
        for (pair, lane) in bytes.chunks_exact_mut(2).zip(self.lanes.iter()) {
            pair.copy_from_slice(&lane.to_le_bytes());
        }
        h.update(bytes);
        TreeKey(h.finalize().into())
    }

    fn root(&mut self, meta: &Meta, sign: Sign) {
        let mut h = element_hasher();
        h.update([b'R']);
        field(&mut h, b'M', &meta.mode.to_le_bytes());
        field(&mut h, b'T', &meta.mtime_ns.to_le_bytes());
        self.element(h.finalize().into(), sign);
    }

    fn entry(&mut self, path: &str, entry: &Entry, sign: Sign) {
        let mut h = element_hasher();
        h.update([b'E']);
        field(&mut h, b'P', path.as_bytes());
        field(&mut h, b'K', &[entry.node.kind().tag()]);
        field(&mut h, b'M', &entry.meta.mode.to_le_bytes());
        field(&mut h, b'T', &entry.meta.mtime_ns.to_le_bytes());
        match &entry.node {
            Node::Dir => {}
            Node::File { digest, .. } => field(&mut h, b'C', digest),
            Node::Symlink { target } => field(&mut h, b'L', target.as_bytes()),
        }
        self.element(h.finalize().into(), sign);
    }

    /// Adds or takes the expansion of `digest`: block `i` of it is SHA-256 of the digest
    /// and `i`, read as 16 little-endian lanes.
    fn element(&mut self, digest: [u8; 32], sign: Sign) {
        let mut prefix = Sha256::new();
        prefix.update(digest);
        for (i, lanes) in self.lanes.chunks_exact_mut(LANES_PER_BLOCK).enumerate() {
            let block: [u8; 32] = prefix
                .clone()
                .chain_update((i as u32).to_le_bytes())
                .finalize()
                .into();
            for (lane, pair) in lanes.iter_mut().zip(block.chunks_exact(2)) {
                let v = u16::from_le_bytes([pair[0], pair[1]]);
                *lane = match sign {
                    Sign::Add => lane.wrapping_add(v),
                    Sign::Take => lane.wrapping_sub(v),
                };
            }
        }
        self.count = match sign {
            Sign::Add => self.count.wrapping_add(1),
            Sign::Take => self.count.wrapping_sub(1),
        };
    }
}

fn element_hasher() -> Sha256 {
    let mut h = Sha256::new();
    h.update(b"repromin:tree-set-v1\0");
    h
}

/// A typed, length-prefixed field, as `tree-sha256-v2` streams them.
fn field(h: &mut Sha256, tag: u8, bytes: &[u8]) {
    h.update([tag]);
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tree::RelPath;

    fn meta(mode: u32, mtime_ns: i128) -> Meta {
        Meta { mode, mtime_ns }
    }

    fn file(bytes: &[u8]) -> Entry {
        Entry {
            node: Node::file(Arc::from(bytes)),
            meta: meta(0o644, 1_000),
        }
    }

    fn dir() -> Entry {
        Entry {
            node: Node::Dir,
            meta: meta(0o755, 2_000),
        }
    }

    fn tree(entries: &[(&str, Entry)]) -> Tree {
        let mut tree = Tree::empty(meta(0o755, 3_000));
        for (path, entry) in entries {
            tree.entries.insert(RelPath::from(*path), entry.clone());
        }
        tree
    }

    /// Deterministic choices: the `i`-th is read from SHA-256 of `i`.
    struct Choices(u64);

    impl Choices {
        fn below(&mut self, n: u64) -> u64 {
            self.0 += 1;
            let digest = Sha256::digest(self.0.to_le_bytes());
            let mut word = [0u8; 8];
            word.copy_from_slice(&digest[..8]);
            u64::from_le_bytes(word) % n
        }
    }

    #[test]
    fn a_moved_set_hash_equals_the_one_counted_from_every_entry() {
        // Random chains of changes (additions, removals, rewrites, metadata and kind
        // changes, the root's metadata) on a tree of some fifty entries: the set hash
        // moved over each change must equal the one counted from scratch.
        let mut rng = Choices(0);
        let mut current = tree(&[]);
        for d in 0..6 {
            current
                .entries
                .insert(RelPath::from(format!("d{d}")), dir());
            for f in 0..8 {
                let name = format!("d{d}/f{f}");
                current
                    .entries
                    .insert(RelPath::from(name.as_str()), file(name.as_bytes()));
            }
        }
        let mut sum = SetHash::of(&current);
        for step in 0..200u64 {
            let mut next = current.clone();
            for _ in 0..=rng.below(4) {
                let path = RelPath::from(format!("d{}/f{}", rng.below(7), rng.below(10)));
                match rng.below(6) {
                    0 => {
                        next.entries.remove(&path);
                    }
                    1 => {
                        next.entries.insert(path, file(&step.to_le_bytes()));
                    }
                    2 => {
                        let mut entry = file(b"x");
                        entry.meta.mode = 0o755;
                        next.entries.insert(path, entry);
                    }
                    3 => {
                        let mut entry = file(b"x");
                        entry.meta.mtime_ns = i128::from(step);
                        next.entries.insert(path, entry);
                    }
                    4 => {
                        next.entries.insert(path, dir());
                    }
                    _ => next.root.mtime_ns = i128::from(rng.below(3)),
                }
            }
            let moved = sum.moved(&current, &next);
            assert_eq!(moved, SetHash::of(&next), "step {step}");
            assert_eq!(
                moved.key() == sum.key(),
                next == current,
                "step {step}: the key changes exactly when the tree does"
            );
            sum = moved;
            current = next;
        }
    }

    #[test]
    fn every_field_of_an_entry_and_of_the_root_is_in_the_key() {
        let base = tree(&[("a", dir()), ("a/x", file(b"one"))]);
        let key = SetHash::of(&base).key();
        let mut variants: Vec<Tree> = Vec::new();
        let mut t = base.clone();
        t.entries.insert(RelPath::from("a/y"), file(b"one"));
        t.entries.remove("a/x");
        variants.push(t); // path
        let mut t = base.clone();
        t.entries.insert(RelPath::from("a/x"), file(b"two"));
        variants.push(t); // content
        let mut t = base.clone();
        let mut e = file(b"one");
        e.meta.mode = 0o600;
        t.entries.insert(RelPath::from("a/x"), e);
        variants.push(t); // mode
        let mut t = base.clone();
        let mut e = file(b"one");
        e.meta.mtime_ns = -1;
        t.entries.insert(RelPath::from("a/x"), e);
        variants.push(t); // mtime
        let mut t = base.clone();
        t.entries.insert(
            RelPath::from("a/x"),
            Entry {
                node: Node::Symlink {
                    target: "one".to_string(),
                },
                meta: meta(0o644, 1_000),
            },
        );
        variants.push(t); // kind
        let mut t = base.clone();
        t.root.mode = 0o700;
        variants.push(t); // the root's metadata
        let mut t = base.clone();
        t.entries.insert(RelPath::from("b"), dir());
        variants.push(t); // one more entry
        let mut keys = vec![key];
        for (i, variant) in variants.iter().enumerate() {
            let k = SetHash::of(variant).key();
            assert!(!keys.contains(&k), "variant {i} has a key seen before");
            keys.push(k);
        }
        // Equal trees built in another order have the same key.
        let other = tree(&[("a/x", file(b"one")), ("a", dir())]);
        assert_eq!(SetHash::of(&other).key(), key);
    }
}

//! Settle state: where each pass's search of a file left it, so that a later run of the
//! pass skips a file nothing has changed since.

use std::collections::HashMap;

use crate::tree::RelPath;

/// Where a search of a file left it: its digest then, and the commit count.
#[derive(Clone, Copy, Debug)]
struct Settled {
    digest: [u8; 32],
    at: u64,
    /// Whether the search answered a cut from the memory of failed cuts.
    from_memory: bool,
}

/// What each pass's searches settled.
#[derive(Default)]
pub(super) struct SettleState {
    /// The pass running now (set by [`super::Session::begin_pass`]).
    pub(super) pass: String,
    /// What each pass's search of a file settled.
    settled: HashMap<(String, RelPath), Settled>,
    /// Searches skipped because their file was settled, and cuts answered from the memory
    /// of failed cuts (see [`super::Session::set_recalling`]).
    pub(super) skips: u64,
}

impl SettleState {
    /// How the running pass last left `path`, whose content now has `digest`: the commit
    /// count and whether the search answered a cut from memory. `None` when the pass never
    /// settled it, or the file has changed since.
    pub(super) fn get(&self, path: &RelPath, digest: [u8; 32]) -> Option<(u64, bool)> {
        let settled = self.settled.get(&(self.pass.clone(), path.clone()))?;
        (settled.digest == digest).then_some((settled.at, settled.from_memory))
    }

    /// Records that the running pass's search of `path` (content `digest`) settled it at
    /// commit `at`.
    pub(super) fn insert(&mut self, path: &RelPath, digest: [u8; 32], at: u64, from_memory: bool) {
        self.settled.insert(
            (self.pass.clone(), path.clone()),
            Settled {
                digest,
                at,
                from_memory,
            },
        );
    }
}

//! The blocks pass: deletes the blocks of [`crate::reduce::blocks`] level by level:
//! siblings in chunks that shrink, largest first, then each block with more than one line
//! on its own (single lines are the lines pass's work), with the list minimiser.

use crate::reduce::blocks::{blocks, bytes_of, groups};
use crate::reduce::error::ReduceError;
use crate::reduce::options::Minimiser;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, PassState, by_levels, line_ranges, per_file,
};
use crate::reduce::session::Session;
use crate::tree::RelPath;

/// Deletes blocks level by level.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    state: PassState,
}

impl Blocks {
    /// One file, every level; `None` when the session stopped.
    fn file(
        session: &mut Session,
        name: &str,
        state: &mut PassState,
        minimiser: Minimiser,
        guard: bool,
        path: &RelPath,
    ) -> Result<Option<u64>, ReduceError> {
        by_levels(
            session,
            name,
            state,
            minimiser,
            guard,
            path,
            "block",
            false,
            |data, depth| {
                let ranges = line_ranges(data);
                let level = groups(&blocks(data), depth);
                (!level.is_empty()).then(|| {
                    level
                        .iter()
                        .map(|group| group.iter().map(|l| bytes_of(&ranges, l)).collect())
                        .collect()
                })
            },
        )
    }
}

impl Pass for Blocks {
    fn name(&self) -> &'static str {
        "blocks"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result = per_file(session, ctx, false, |session, path| {
            Blocks::file(session, name, state, ctx.minimiser, ctx.syntax_guard, path)
        })?;
        Ok(self.state.result(result.accepted))
    }
}

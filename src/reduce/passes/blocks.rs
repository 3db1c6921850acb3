//! The blocks pass: deletes the blocks of [`crate::reduce::blocks`] level by level:
//! siblings in chunks that shrink, largest first, then each block with more than one line
//! on its own (single lines are the lines pass's work), with the list minimiser.

use crate::reduce::blocks::{blocks, bytes_of, groups};
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, PassState, by_levels, levels_first, line_ranges, per_file_ahead,
};
use crate::reduce::session::Session;
use crate::tree::RelPath;
use std::ops::Range;

/// Deletes blocks level by level.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    state: PassState,
}

/// The groups of blocks at `depth` of `data`, each block as its byte ranges.
fn level(data: &[u8], depth: usize) -> Option<Vec<Vec<Range<usize>>>> {
    let ranges = line_ranges(data);
    let level = groups(&blocks(data), depth);
    (!level.is_empty()).then(|| {
        level
            .iter()
            .map(|group| group.iter().map(|l| bytes_of(&ranges, l)).collect())
            .collect()
    })
}

impl Pass for Blocks {
    fn name(&self) -> &'static str {
        "blocks"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let share = state.needed;
        let first = |session: &Session, path: &RelPath, _| {
            levels_first(
                session,
                ctx.minimiser,
                share,
                ctx.syntax_guard,
                path,
                "block",
                false,
                &level,
            )
        };
        let result = per_file_ahead(session, ctx, false, &first, |session, path, after| {
            by_levels(
                session,
                name,
                state,
                ctx.minimiser,
                ctx.syntax_guard,
                path,
                "block",
                false,
                level,
                after,
            )
        })?;
        Ok(self.state.result(result.accepted))
    }
}

//! The blocks pass: deletes the blocks of [`crate::reduce::blocks`] level by level:
//! siblings in chunks that shrink, largest first, then each block with more than one line
//! on its own (single lines are the lines pass's work), with the list minimiser.

use std::ops::Range;

use crate::reduce::blocks::{blocks, bytes_of, groups};
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{Pass, PassContext, PassResult, PassState, levels_per_file, line_ranges};
use crate::reduce::session::Session;

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
        let result = levels_per_file(session, ctx, name, state, ("block", false), |_| Some(level))?;
        Ok(self.state.result(result.accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::pass::tests::{context, counts_by_jobs};

    #[test]
    fn the_next_file_s_first_level_runs_ahead_of_a_file_s_last_window() {
        // Two files of one needed block each: each file's search is one window of one
        // command; with two workers, the second file's runs beside the first's.
        let counts = counts_by_jobs(
            &[("a.c", "a {\n  x;\n}\n"), ("b.c", "b {\n  y;\n}\n")],
            "grep -q x a.c && grep -q y b.c",
            &context(false),
            || Box::new(Blocks::default()),
        );
        assert_eq!(counts, [(2, 0, 0, 2), (2, 1, 1, 2)]);
    }
}

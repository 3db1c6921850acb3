//! The unwrap pass: drops a block's header and closing lines and dedents its body, level by
//! level (see [`crate::reduce::blocks::unwrap_cuts`]).

use std::ops::Range;

use crate::reduce::blocks::{blocks, classify, siblings_at, unwrap_cuts};
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{Pass, PassContext, PassResult, PassState, levels_per_file, line_ranges};
use crate::reduce::session::Session;

/// The unwrap cuts of the blocks at `depth` of `data`, one list per group of siblings.
fn level(data: &[u8], depth: usize) -> Option<Vec<Vec<Vec<Range<usize>>>>> {
    let ranges = line_ranges(data);
    let lines = classify(data, &ranges);
    let forest = blocks(data);
    let level = siblings_at(&forest, depth);
    (!level.is_empty()).then(|| {
        level
            .iter()
            .map(|siblings| {
                siblings
                    .iter()
                    .filter_map(|b| unwrap_cuts(&lines, &ranges, b))
                    .collect()
            })
            .collect()
    })
}

/// Unwraps blocks level by level: drops a block's header and closing lines and dedents its
/// body, so that what the body holds survives without what wraps it (`if`, a loop, a
/// function or class around the code the failure needs).
#[derive(Debug, Default)]
pub(crate) struct Unwrap {
    state: PassState,
}

impl Pass for Unwrap {
    fn name(&self) -> &'static str {
        "unwrap"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result = levels_per_file(session, ctx, name, state, ("unwrap", true), |_| Some(level))?;
        Ok(self.state.result(result.accepted))
    }
}

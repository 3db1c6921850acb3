//! The dirty worklist that runs the passes to their global fixed point: a pass that commits
//! something makes every other pass dirty again, and the run of the worklist ends when no
//! pass is dirty (see [`crate::reduce`]).

use crate::reduce::error::ReduceError;
use crate::reduce::pass::{Pass, PassContext};
use crate::reduce::session::Session;

/// Runs the dirty passes until none is dirty, the global fixed point of `passes`.
pub(super) fn run(
    session: &mut Session,
    passes: &mut [Box<dyn Pass>],
    dirty: &mut Vec<bool>,
    ctx: &mut PassContext,
) -> Result<(), ReduceError> {
    // The dirty worklist: run the first dirty pass; a commit dirties every other pass.
    // When the worklist empties after passes skipped settled files, every pass runs once
    // more with nothing skipped but what was searched on this very tree: the confirming
    // round. Its first commit ends it, and the worklist goes on as before.
    let mut skips = session.settled_skips();
    loop {
        while let Some(i) = dirty.iter().position(|d| *d) {
            dirty[i] = false;
            let name = passes[i].name();
            let timer = session.begin_pass(name);
            session.set_recalling(ctx.settle && !ctx.confirming);
            let result = passes[i].run(session, ctx)?;
            session.end_pass(name, timer, result.unparsable);
            if session.stop_reason().is_some() {
                break;
            }
            session.pass_completed(name, result.accepted > 0)?;
            if result.accepted > 0 {
                ctx.confirming = false;
                for (j, flag) in dirty.iter_mut().enumerate() {
                    if j != i {
                        *flag = true;
                    }
                }
            }
        }
        if session.stop_reason().is_some() || session.settled_skips() == skips {
            break;
        }
        skips = session.settled_skips();
        ctx.confirming = true;
        *dirty = vec![true; passes.len()];
    }
    Ok(())
}

//! The lines pass: line deletion to 1-minimality, file by file.

use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Elements, Pass, PassContext, PassResult, PassState, Ranges, file_state, line_ranges,
    minimise_then, per_file_ahead,
};
use crate::reduce::session::Session;
use crate::tree::RelPath;

/// The lines of `path` as a list, with the syntax guard as `ctx` sets it; `None` when the
/// file is gone or empty.
fn lines_of(session: &Session, ctx: &PassContext, path: &RelPath) -> Option<Ranges> {
    let (data, _) = file_state(session, path)?;
    let lines = Ranges::new(session, path, line_ranges(&data), "line", true)?;
    Some(lines.guarded(session, ctx.syntax_guard))
}

/// Line deletion to 1-minimality.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    state: PassState,
}

impl Pass for Lines {
    fn name(&self) -> &'static str {
        "lines"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let share = state.needed;
        let first = |session: &Session, path: &RelPath, _| {
            lines_of(session, ctx, path)
                .map(|lines| {
                    crate::reduce::minimise::first_window(
                        session,
                        ctx.minimiser,
                        share,
                        &lines,
                        &[lines.len()],
                    )
                })
                .unwrap_or_default()
        };
        let result = per_file_ahead(session, ctx, false, &first, |session, path, after| {
            let Some(mut lines) = lines_of(session, ctx, path) else {
                return Ok(Some(0));
            };
            let outcome = minimise_then(
                session,
                name,
                ctx.minimiser,
                &mut state.needed,
                &mut lines,
                Some(after),
            );
            state.unparsable += lines.unparsable();
            outcome
        })?;
        Ok(self.state.result(result.accepted))
    }
}

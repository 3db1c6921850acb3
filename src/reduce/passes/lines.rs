//! The lines pass: line deletion to 1-minimality, file by file.

use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, PassState, Ranges, file_state, line_ranges, minimise, per_file,
};
use crate::reduce::session::Session;

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
        let result = per_file(session, ctx, false, |session, path| {
            let Some((data, _)) = file_state(session, path) else {
                return Ok(Some(0));
            };
            let Some(lines) = Ranges::new(session, path, line_ranges(&data), "line", true) else {
                return Ok(Some(0));
            };
            let mut lines = lines.guarded(session, ctx.syntax_guard);
            let outcome = minimise(session, name, ctx.minimiser, &mut state.needed, &mut lines);
            state.unparsable += lines.unparsable();
            outcome
        })?;
        Ok(self.state.result(result.accepted))
    }
}

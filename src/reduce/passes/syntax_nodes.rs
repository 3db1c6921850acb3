//! The syntax pass: deletes syntax nodes level by level, from the tree-sitter grammars of
//! [`crate::reduce::syntax`].

use crate::reduce::error::ReduceError;
use crate::reduce::options::Minimiser;
use crate::reduce::pass::{Pass, PassContext, PassResult, PassState, by_levels, per_file};
use crate::reduce::session::Session;
use crate::tree::RelPath;

/// Syntax nodes, level by level, from tree-sitter grammars.
#[derive(Debug, Default)]
pub(crate) struct Syntax {
    state: PassState,
}

impl Syntax {
    /// One file, every level; `None` when the session stopped.
    fn file(
        session: &mut Session,
        name: &str,
        state: &mut PassState,
        minimiser: Minimiser,
        path: &RelPath,
        lang: crate::reduce::syntax::Lang,
    ) -> Result<Option<u64>, ReduceError> {
        // A file the grammar cannot take (too large, too slow) is left to other passes.
        by_levels(
            session,
            name,
            state,
            minimiser,
            false,
            path,
            "node",
            true,
            |data, depth| {
                let levels = crate::reduce::syntax::deletion_levels(lang, data).ok()?;
                levels.get(depth).cloned()
            },
        )
    }
}

impl Pass for Syntax {
    fn name(&self) -> &'static str {
        "syntax"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let result =
            per_file(
                session,
                ctx,
                false,
                |session, path| match crate::reduce::syntax::lang_for_path(path) {
                    Some(lang) => Syntax::file(session, name, state, ctx.minimiser, path, lang),
                    None => Ok(Some(0)),
                },
            )?;
        Ok(self.state.result(result.accepted))
    }
}

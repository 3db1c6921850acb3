//! The syntax pass: deletes syntax nodes level by level, from the tree-sitter grammars of
//! [`crate::reduce::syntax`], after replacing the bodies of a file's functions by stubs
//! (see [`crate::reduce::passes::stubs`]).

use crate::reduce::error::ReduceError;
use crate::reduce::options::Minimiser;
use crate::reduce::pass::{
    NeededShare, Pass, PassContext, PassResult, PassState, by_levels, per_file,
};
use crate::reduce::passes::stubs::stub_bodies;
use crate::reduce::session::Session;
use crate::reduce::syntax::Lang;
use crate::tree::RelPath;

/// Syntax nodes, level by level, from tree-sitter grammars.
#[derive(Debug, Default)]
pub(crate) struct Syntax {
    state: PassState,
    /// What the stub searches kept and lost (a list of bodies is not a list of nodes).
    stubs: NeededShare,
}

impl Syntax {
    /// One file: with `stubs`, its function bodies first (a body the failure does not need
    /// goes in one edit), then every level, on what is left; `None` when the session
    /// stopped.
    #[expect(
        clippy::too_many_arguments,
        reason = "a file's search needs the pass's name, both learned shares and settings"
    )]
    fn file(
        session: &mut Session,
        name: &str,
        state: &mut PassState,
        stub_share: &mut NeededShare,
        minimiser: Minimiser,
        stubs: bool,
        path: &RelPath,
        lang: Lang,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        if stubs {
            let Some(n) = stub_bodies(session, name, minimiser, stub_share, path, lang)? else {
                return Ok(None);
            };
            accepted += n;
        }
        // A file the grammar cannot take (too large, too slow) is left to other passes.
        let searched = by_levels(
            session,
            name,
            state,
            minimiser,
            false,
            path,
            "node",
            true,
            |data, depth| {
                let levels = crate::reduce::syntax::search_levels(lang, data).ok()?;
                levels.get(depth).cloned()
            },
        )?;
        Ok(searched.map(|n| accepted + n))
    }
}

impl Pass for Syntax {
    fn name(&self) -> &'static str {
        "syntax"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let state = &mut self.state;
        let stub_share = &mut self.stubs;
        let result =
            per_file(
                session,
                ctx,
                false,
                |session, path| match crate::reduce::syntax::lang_for_path(path) {
                    Some(lang) => Syntax::file(
                        session,
                        name,
                        state,
                        stub_share,
                        ctx.minimiser,
                        ctx.stubs,
                        path,
                        lang,
                    ),
                    None => Ok(Some(0)),
                },
            )?;
        Ok(self.state.result(result.accepted))
    }
}

//! The syntax pass: deletes syntax nodes level by level, from the tree-sitter grammars of
//! [`crate::reduce::syntax`], after replacing the bodies of a file's functions by stubs
//! (see [`crate::reduce::passes::stubs`]).

use crate::reduce::error::ReduceError;
use crate::reduce::options::Minimiser;
use std::ops::Range;

use crate::reduce::pass::{
    NeededShare, Pass, PassContext, PassResult, PassState, Then, by_levels, file_state,
    levels_first, per_file_ahead,
};
use crate::reduce::passes::stubs::{stub_bodies, stubs_first};
use crate::reduce::session::{Candidate, Session};
use crate::reduce::syntax::Lang;
use crate::tree::RelPath;

/// Syntax nodes, level by level, from tree-sitter grammars.
#[derive(Debug, Default)]
pub(crate) struct Syntax {
    state: PassState,
    /// What the stub searches kept and lost (a list of bodies is not a list of nodes).
    stubs: NeededShare,
}

/// The syntax levels of `data` in `lang`: level `depth`'s groups of sibling nodes.
fn levels(lang: Lang, data: &[u8], depth: usize) -> Option<Vec<Vec<Range<usize>>>> {
    let levels = crate::reduce::syntax::search_levels(lang, data).ok()?;
    levels.get(depth).cloned()
}

impl Syntax {
    /// One file: with `stubs`, its function bodies first (a body the failure does not need
    /// goes in one edit), then every level, on what is left; `None` when the session
    /// stopped. `after` gives what the pass tries after this file.
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
        after: &Then<'_>,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        let level = |data: &[u8], depth| levels(lang, data, depth);
        if stubs {
            // After the bodies, the first level of what is left.
            let share = state.needed;
            let then = |session: &Session, stub: NeededShare| {
                let next =
                    levels_first(session, minimiser, share, false, path, "node", true, &level);
                if next.is_empty() {
                    after(session, stub)
                } else {
                    next
                }
            };
            let Some(n) = stub_bodies(session, name, minimiser, stub_share, path, lang, &then)?
            else {
                return Ok(None);
            };
            accepted += n;
        }
        // A file the grammar cannot take (too large, too slow) is left to other passes.
        let searched = by_levels(
            session, name, state, minimiser, false, path, "node", true, level, after,
        )?;
        Ok(searched.map(|n| accepted + n))
    }

    /// What [`Syntax::file`] tries first on `path`: its first window of bodies, or of its
    /// first level when no body can become a stub.
    fn first(
        session: &Session,
        minimiser: Minimiser,
        shares: (NeededShare, NeededShare),
        stubs: bool,
        path: &RelPath,
    ) -> Vec<Candidate> {
        let Some(lang) = file_state(session, path)
            .and_then(|(data, _)| crate::reduce::syntax::lang_for_file(path, &data))
        else {
            return Vec::new();
        };
        let (level_share, stub_share) = shares;
        if stubs {
            let bodies = stubs_first(session, minimiser, stub_share, path, lang);
            if !bodies.is_empty() {
                return bodies;
            }
        }
        levels_first(
            session,
            minimiser,
            level_share,
            false,
            path,
            "node",
            true,
            &|data: &[u8], depth| levels(lang, data, depth),
        )
    }
}

impl Pass for Syntax {
    fn name(&self) -> &'static str {
        "syntax"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        let shares = (self.state.needed, self.stubs);
        let first = |session: &Session, path: &RelPath, _| {
            Syntax::first(session, ctx.minimiser, shares, ctx.stubs, path)
        };
        let state = &mut self.state;
        let stub_share = &mut self.stubs;
        let result = per_file_ahead(session, ctx, false, &first, |session, path, after| {
            let lang = file_state(session, path)
                .and_then(|(data, _)| crate::reduce::syntax::lang_for_file(path, &data));
            match lang {
                Some(lang) => Syntax::file(
                    session,
                    name,
                    state,
                    stub_share,
                    ctx.minimiser,
                    ctx.stubs,
                    path,
                    lang,
                    after,
                ),
                None => Ok(Some(0)),
            }
        })?;
        Ok(self.state.result(result.accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::pass::tests::{context, counts_by_jobs};

    #[test]
    fn the_first_level_runs_ahead_of_the_last_window_of_bodies() {
        // One function the failure needs whole: its body cannot become a stub, and no
        // node can go. Each step is one window of one command; with two workers, the
        // first level's candidate runs beside the body's and then answers from the cache.
        let counts = counts_by_jobs(
            &[("m.py", "def f():\n    return 1\n")],
            "grep -q 'def f' m.py && grep -q 'return 1' m.py",
            &context(true),
            || Box::new(Syntax::default()),
        );
        let (samples, ahead, hits, rejected) = counts[0];
        assert_eq!((ahead, hits, rejected), (0, 0, samples));
        // Every step after the first ran ahead of the one before it.
        let ran = (samples, samples - 1, samples - 1, rejected);
        assert_eq!(counts[1], ran, "{counts:?}");
    }

    #[test]
    fn a_header_of_cpp_templates_loses_whole_templates() {
        // Read as C, a template falls apart into fragments (its head, its declarator, its
        // body) that no single deletion can take and no compiler accepts alone; read as
        // C++, each template is one node and the unused ones go.
        let gxx = std::process::Command::new("g++").arg("--version").output();
        let found = gxx.map_err(|e| e.to_string()).and_then(|out| {
            out.status
                .success()
                .then_some(())
                .ok_or("g++ --version failed".to_string())
        });
        if !crate::test_skip::require_tool("g++", found) {
            return;
        }
        let header = "template <typename T>\nT keep(T x) { return x; }\n\
                      template <typename T>\nT twice(T x) { return x + x; }\n\
                      template <typename T, typename U>\nU convert(T x) { return U(x); }\n";
        let scratch = tempfile::tempdir().unwrap();
        let mut session = crate::reduce::session::tests::session_on(
            &[("core.h", header)],
            "g++ -std=c++17 -fsyntax-only -x c++ core.h && grep -q keep core.h",
            1,
            scratch.path(),
        );
        let mut ctx = context(false);
        ctx.minimiser = Minimiser::Halving;
        let done = Syntax::default().run(&mut session, &ctx).unwrap();
        assert!(done.accepted > 0);
        let (left, _) = file_state(&session, "core.h").unwrap();
        let left = String::from_utf8_lossy(&left);
        assert!(
            !left.contains("twice") && !left.contains("convert"),
            "{left}"
        );
        assert!(left.contains("T keep(T x)"), "{left}");
    }
}

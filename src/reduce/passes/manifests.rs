//! The manifests pass: deletes entries of package manifests, found by parsing them with
//! [`crate::reduce::manifest`], level by level.

use crate::reduce::edits::Mutation;
use crate::reduce::error::ReduceError;
use crate::reduce::pass::{
    Pass, PassContext, PassResult, UNION_WINDOW, complement, file_state, per_file,
};
use crate::reduce::session::{Candidate, Session};
use crate::tree::RelPath;

/// Entries of package manifests, found by parsing them.
#[derive(Debug, Default)]
pub(crate) struct Manifests;

impl Manifests {
    /// One manifest to local stability; `None` when the session stopped.
    fn file(
        session: &mut Session,
        name: &str,
        path: &RelPath,
        kind: crate::reduce::manifest::ManifestKind,
    ) -> Result<Option<u64>, ReduceError> {
        let mut accepted = 0;
        let mut level = 0;
        loop {
            let Some((data, digest)) = file_state(session, path) else {
                return Ok(Some(accepted));
            };
            // A manifest that does not parse (any more) is left to the other passes.
            let Ok(levels) = crate::reduce::manifest::candidates(kind, &data) else {
                return Ok(Some(accepted));
            };
            let Some(edits) = levels.get(level) else {
                return Ok(Some(accepted));
            };
            let mut committed = false;
            for window in edits.chunks(UNION_WINDOW) {
                let candidates = window
                    .iter()
                    .map(|edit| Candidate {
                        mutation: Mutation::Keep {
                            path: path.clone(),
                            expect: digest,
                            keep: complement(data.len(), &edit.delete),
                        },
                        label: format!("{} of {path}", edit.label),
                    })
                    .collect();
                let Some(done) = session.try_window(name, candidates)? else {
                    return Ok(None);
                };
                if done.iter().any(|c| *c) {
                    accepted += 1;
                    committed = true;
                    break;
                }
            }
            // After a commit the file is parsed again and this level starts over; a level
            // that commits nothing hands over to the next, finer one.
            if !committed {
                level += 1;
            }
        }
    }
}

impl Pass for Manifests {
    fn name(&self) -> &'static str {
        "manifests"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(
            session,
            ctx,
            false,
            |session, path| match crate::reduce::manifest::manifest_kind(path) {
                Some(kind) => Manifests::file(session, name, path, kind),
                None => Ok(Some(0)),
            },
        )
    }
}

//! Function bodies replaced by the smallest body that compiles for any signature, from
//! [`crate::reduce::syntax::stubs`], as replacement edits under the oracle: a step of the
//! syntax pass (see [`crate::reduce::passes::syntax_nodes`]).
//!
//! A function the failure never calls then loses its whole body in one edit, where the
//! syntax pass would try (and, in a compiled language, mostly fail) one deletion per
//! statement. Each body of a file is one element of the list minimiser, as for the
//! literals pass; the certificate lists each replacement with the SHA-256 of what it
//! replaced.

use crate::reduce::error::ReduceError;
use crate::reduce::options::Minimiser;
use crate::reduce::pass::{NeededShare, Then};
use crate::reduce::passes::literals::{replace_until_stable, replacements_first};
use crate::reduce::session::{Candidate, Session};
use crate::reduce::syntax::Lang;
use crate::tree::RelPath;

/// What one body and several are called in labels.
const BODIES: (&str, &str) = ("body", "bodies");

/// Replaces what it can of `path`'s function bodies by stubs, until a search commits
/// nothing; `then` gives what the caller tries next. Returns the commits made, or `None`
/// when the session stopped.
///
/// # Errors
/// Whatever the session reports.
pub(crate) fn stub_bodies(
    session: &mut Session,
    phase: &str,
    minimiser: Minimiser,
    needed: &mut NeededShare,
    path: &RelPath,
    lang: Lang,
    then: &Then<'_>,
) -> Result<Option<u64>, ReduceError> {
    replace_until_stable(
        session,
        phase,
        minimiser,
        needed,
        path,
        BODIES,
        |data| crate::reduce::syntax::stubs(lang, data).unwrap_or_default(),
        Some(then),
    )
}

/// The first window [`stub_bodies`] would try on `path`, from the share `share`.
pub(crate) fn stubs_first(
    session: &Session,
    minimiser: Minimiser,
    share: NeededShare,
    path: &RelPath,
    lang: Lang,
) -> Vec<Candidate> {
    replacements_first(session, minimiser, share, path, BODIES, &|data| {
        crate::reduce::syntax::stubs(lang, data).unwrap_or_default()
    })
}

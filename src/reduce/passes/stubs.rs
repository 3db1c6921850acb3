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
use crate::reduce::pass::NeededShare;
use crate::reduce::passes::literals::replace_until_stable;
use crate::reduce::session::Session;
use crate::reduce::syntax::Lang;
use crate::tree::RelPath;

/// Replaces what it can of `path`'s function bodies by stubs, until a search commits
/// nothing. Returns the commits made, or `None` when the session stopped.
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
) -> Result<Option<u64>, ReduceError> {
    replace_until_stable(
        session,
        phase,
        minimiser,
        needed,
        path,
        ("body", "bodies"),
        |data| crate::reduce::syntax::stubs(lang, data).unwrap_or_default(),
    )
}

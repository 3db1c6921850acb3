//! The reducer's passes, coarse to fine, one module each, and the list the driver runs.
//!
//! - [`Files`]: hierarchical deletion over files and directories, level by level, with the
//!   lines that reference what goes ([`references`]);
//! - [`Prelude`]: per file, one probe that empties it and one that strips its blank and
//!   comment lines;
//! - [`Manifests`]: entries of package manifests;
//! - [`Syntax`]: syntax nodes, level by level;
//! - [`Declarations`]: a declaration (top-level or member) with the uses of its name;
//! - [`Blocks`]: blocks by indentation and brackets, level by level;
//! - [`Lines`]: line deletion to 1-minimality;
//! - [`Unwrap`]: a block's header and closing lines, its body dedented;
//! - [`Hoist`]: a syntax node replaced by one of its children;
//! - [`Literals`]: numbers replaced by `0` and strings by `""` (replacement edits);
//! - [`Rename`]: an identifier renamed in every file at once (a coupled replacement);
//! - [`Tokens`] and [`Chars`]: tokens inside lines, and single characters;
//! - [`Rewrites`]: one deleted run of tokens and one inserted token, around tiny files.
//!
//! Every pass is built on [`crate::reduce::pass`]; the deletion passes share the list
//! minimiser of [`crate::reduce::minimise`].

pub(crate) mod blocks;
pub(crate) mod declarations;
pub(crate) mod files;
pub(crate) mod hoist;
pub(crate) mod lines;
pub(crate) mod literals;
pub(crate) mod manifests;
pub(crate) mod prelude;
pub(crate) mod references;
pub(crate) mod rename;
pub(crate) mod rewrite;
pub(crate) mod stubs;
pub(crate) mod syntax_nodes;
pub(crate) mod tokens;
pub(crate) mod unwrap;

pub(crate) use blocks::Blocks;
pub(crate) use declarations::Declarations;
pub(crate) use files::Files;
pub(crate) use hoist::Hoist;
pub(crate) use lines::Lines;
pub(crate) use literals::Literals;
pub(crate) use manifests::Manifests;
pub(crate) use prelude::Prelude;
pub(crate) use rename::Rename;
pub(crate) use rewrite::Rewrites;
pub(crate) use syntax_nodes::Syntax;
pub(crate) use tokens::{Chars, Tokens};
pub(crate) use unwrap::Unwrap;

use crate::reduce::options::PassName;
use crate::reduce::pass::Pass;

/// The pass that `name` stands for, with nothing learned yet.
pub(crate) fn build(name: PassName) -> Box<dyn Pass> {
    match name {
        PassName::Prelude => Box::new(Prelude),
        PassName::Files => Box::<Files>::default(),
        PassName::Manifests => Box::new(Manifests::default()),
        PassName::Syntax => Box::<Syntax>::default(),
        PassName::Declarations => Box::new(Declarations),
        PassName::Blocks => Box::<Blocks>::default(),
        PassName::Lines => Box::<Lines>::default(),
        PassName::Unwrap => Box::<Unwrap>::default(),
        PassName::Hoist => Box::<Hoist>::default(),
        PassName::Literals => Box::<Literals>::default(),
        PassName::Rename => Box::<Rename>::default(),
        PassName::Tokens => Box::new(Tokens),
        PassName::Chars => Box::new(Chars),
        PassName::Rewrite => Box::new(Rewrites),
    }
}

/// The passes of `enabled`, in the order they run: coarse to fine, as in [`PassName::ALL`].
pub(crate) fn list(enabled: &[PassName]) -> Vec<Box<dyn Pass>> {
    PassName::ALL
        .iter()
        .filter(|p| enabled.contains(p))
        .map(|p| build(*p))
        .collect()
}

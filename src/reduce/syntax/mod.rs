//! Syntax-aware deletion and replacement candidates built on tree-sitter.
//!
//! A reducer asks this module where a source file can be cut along its syntax:
//!
//! * [`deletion_levels`] lists deletable elements (statements, items, members,
//!   fields, variants, parameters, arguments, literal elements, imports,
//!   attributes, comments), grouped by parent node and arranged in levels from
//!   the root down; [`search_levels`] leaves out the parameters that their
//!   function's body still uses and, in Rust, the value a function returns.
//! * [`replacements`] lists nodes that can be replaced by one of their
//!   descendants (an expression by a sub-expression, a compound statement by
//!   its body, a block by one of its statements).
//! * [`literals`] lists numbers and strings with the smallest literal of their kind (`0`,
//!   `""`), for the literal replacements.
//! * [`stubs`] lists function bodies with the smallest body that compiles for any
//!   signature (`{ todo!() }`, `...`, `{}`), for the stubs pass.
//! * [`parses_cleanly`] tells whether a candidate still parses without errors.
//!
//! # Separators and whitespace
//!
//! Tree-sitter node ranges exclude separators, so every deletion range is
//! widened to cover what must go with the node:
//!
//! * In a comma-separated list an element takes the comma after it. The last
//!   element, when no comma follows it, takes the comma before it instead, so
//!   that deleting it from `f(a, b, c)` gives `f(a, b)`. That comma is also
//!   covered by the previous element's range: this is the only way two ranges
//!   of one group can overlap. [`apply_deletions`] removes any subset of a
//!   group correctly, including that case.
//! * A statement or member takes an optional terminator that tree-sitter keeps
//!   outside the node (`;` in Python, Go and C, `;`/`,` in TypeScript types,
//!   `:` after a C++ access specifier).
//! * An element alone on its line(s) takes the line's indentation and its
//!   trailing newline, so that deleting it removes whole lines. An element
//!   followed by more code on the same line takes the blanks after it, unless
//!   that code is a comment; a comment that ends a line of code takes the
//!   blanks before it.
//! * A Rust attribute is deleted with the item, field or statement it
//!   precedes; the attribute alone is offered one level deeper.
//! * No element is offered whose removal must break the syntax: the only
//!   statement of a Python block, the only declarator of a declaration, the
//!   only name of an import, Go's `package` clause, the type argument of Go's
//!   `make`/`new`, or a comment between two words (`int/**/x`).
//!
//! Ranges always fall on node boundaries or next to ASCII bytes, so for UTF-8
//! input they are char boundaries.

mod lang;
mod languages;
mod literals;
mod names;
mod params;
mod replace;
mod select;
mod stubs;

#[cfg(test)]
mod tests;

pub use literals::{defaults_naming, literals};
pub use names::{declarations, identifier_names, member_declarations};
pub use params::{CallSites, Unused, unused_parameters};
pub use replace::replacements;
pub use stubs::stubs;

pub use lang::{
    Lang, Levels, MAX_INPUT_BYTES, PARSE_TIMEOUT, Replacement, SyntaxError, apply_deletion,
    apply_deletions, lang_for_file, lang_for_path, parses_cleanly,
};
pub use select::{deletion_levels, search_levels, smallest_enclosing};

//! Coupled deletions: the lines that reference a file go with it.
//!
//! Deleting a module usually fails only because something still names it: Rust's `mod x;`,
//! C's `#include "x.h"`, Python's `import pkg.x`, JavaScript's `import ... from './x'`. The
//! files pass therefore deletes a file or directory together with the single-line
//! statements of the remaining files that reference it.
//!
//! Deleting a declaration fails for the same reason when its name is still used. The
//! [`Declarations`] pass deletes each top-level declaration together with the references
//! it would leave dangling: in every file, the smallest syntax element (or, in a file
//! without a grammar, the line) around each whole-word use of its name.

use std::collections::HashSet;
use std::ops::Range;

use crate::reduce::ReduceError;
use crate::reduce::edits::Mutation;
use crate::reduce::passes::{
    Pass, PassContext, PassResult, UNION_WINDOW, complement, file_state, line_ranges, per_file,
};
use crate::reduce::session::{Candidate, Session, identifier_spans};
use crate::reduce::syntax;
use crate::tree::{Node, RelPath, Tree};

/// Cuts in several files: per file, the digest of the content they were computed from and
/// the byte ranges to cut.
pub type FileCuts = Vec<(RelPath, [u8; 32], Vec<Range<usize>>)>;

/// Extensions of the files whose lines can reference another file.
const SOURCE_EXTS: &[&str] = &[
    "rs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "inc", "py", "pyi", "js", "mjs", "cjs",
    "jsx", "ts", "mts", "cts", "tsx",
];

fn is_source(path: &str) -> bool {
    SOURCE_EXTS.contains(&ext(path))
}

fn ext(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn stem(path: &str) -> &str {
    let name = base(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// Joins `rel` (with `.` and `..` parts) onto directory `dir`; `None` when it leaves the tree.
fn resolve(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Whether `path` is `gone` or lies below it.
fn covers(gone: &str, path: &str) -> bool {
    path == gone || (path.starts_with(gone) && path.as_bytes().get(gone.len()) == Some(&b'/'))
}

/// Whether line `text` of file `from` references one of the deleted paths.
fn references(from: &str, text: &str, gone: &[RelPath], tree: &Tree) -> bool {
    let t = text.trim();
    match ext(from) {
        "rs" => rust_mod(t).is_some_and(|name| {
            gone.iter().any(|g| {
                let module = if ext(g) == "rs" { stem(g) } else { base(g) };
                let module = if module == "mod" {
                    base(parent(g))
                } else {
                    module
                };
                // The declaring file: `dir/lib.rs`, `main.rs`, `mod.rs`, or `dir.rs`.
                let owner_dir = if stem(g) == "mod" {
                    parent(parent(g))
                } else {
                    parent(g)
                };
                let declares = match stem(from) {
                    "lib" | "main" | "mod" => parent(from) == owner_dir,
                    s => resolve(parent(from), s).as_deref() == Some(owner_dir),
                };
                module == name && declares
            })
        }),
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "inc" => c_include(t)
            .is_some_and(|inc| {
                gone.iter().any(|g| {
                    resolve(parent(from), inc).is_some_and(|p| covers(g, &p))
                        || (tree
                            .entries
                            .get(&**g)
                            .is_some_and(|e| !matches!(e.node, Node::Dir))
                            && base(inc) == base(g))
                })
            }),
        "py" | "pyi" => python_import(from, t).is_some_and(|modules| {
            // Every module the statement names must be gone, or the line still does work.
            !modules.is_empty()
                && modules
                    .iter()
                    .all(|m| gone.iter().any(|g| python_names(g, m)))
        }),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => {
            js_specifier(t).is_some_and(|spec| {
                spec.starts_with('.')
                    && resolve(parent(from), spec).is_some_and(|p| {
                        gone.iter().any(|g| {
                            covers(g, &p)
                                || ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"]
                                    .iter()
                                    .any(|e| {
                                        covers(g, &format!("{p}.{e}"))
                                            || covers(g, &format!("{p}/index.{e}"))
                                    })
                        })
                    })
            })
        }
        _ => false,
    }
}

/// `mod name;` (with any visibility) gives `name`.
fn rust_mod(t: &str) -> Option<&str> {
    let mut rest = t;
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let name = rest.strip_prefix("mod ")?.trim().strip_suffix(';')?.trim();
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        .then_some(name)
}

/// `#include "path"` gives `path`.
fn c_include(t: &str) -> Option<&str> {
    let rest = t
        .strip_prefix('#')?
        .trim_start()
        .strip_prefix("include")?
        .trim();
    let inner = rest.strip_prefix('"')?;
    Some(&inner[..inner.find('"')?])
}

/// The modules a one-line Python import statement names, absolute (relative imports are
/// resolved against the file's own package).
fn python_import(from: &str, t: &str) -> Option<Vec<String>> {
    let t = t.split('#').next().unwrap_or("").trim();
    if t.contains('(') || t.ends_with('\\') {
        return None;
    }
    let package = || parent(from).replace('/', ".");
    let absolute = |m: &str| -> Option<String> {
        let dots = m.bytes().take_while(|b| *b == b'.').count();
        if dots == 0 {
            return Some(m.to_string());
        }
        let mut parts: Vec<String> = package()
            .split('.')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        for _ in 1..dots {
            parts.pop()?;
        }
        let tail = &m[dots..];
        if !tail.is_empty() {
            parts.push(tail.to_string());
        }
        Some(parts.join("."))
    };
    if let Some(rest) = t.strip_prefix("import ") {
        return rest
            .split(',')
            .map(|m| absolute(m.split(" as ").next().unwrap_or("").trim()))
            .collect();
    }
    let rest = t.strip_prefix("from ")?;
    let (module, names) = rest.split_once(" import ")?;
    let module = absolute(module.trim())?;
    // `from pkg import a, b` names the modules `pkg.a` and `pkg.b` when they are modules;
    // either way the statement depends on `pkg`.
    let names: Vec<String> = names
        .split(',')
        .map(|n| n.split(" as ").next().unwrap_or("").trim().to_string())
        .collect();
    if names.iter().any(|n| n == "*") {
        return Some(vec![module]);
    }
    Some(
        names
            .iter()
            .map(|n| {
                if module.is_empty() {
                    n.clone()
                } else {
                    format!("{module}.{n}")
                }
            })
            .collect(),
    )
}

/// Whether the dotted name `m` is the module at `path` or inside it. A package root such as
/// `src/` is not part of a module's name, so any dotted suffix of the path counts.
fn python_names(path: &str, m: &str) -> bool {
    if stem(path) == "__init__" {
        // Without its `__init__.py` a package still imports, as a namespace package.
        return false;
    }
    let dotted = path
        .trim_end_matches(".pyi")
        .trim_end_matches(".py")
        .replace('/', ".");
    let dotted = dotted.trim_end_matches(".__init__");
    let parts: Vec<&str> = dotted.split('.').collect();
    (0..parts.len()).any(|i| {
        let suffix = parts[i..].join(".");
        m == suffix || m.starts_with(&format!("{suffix}."))
    })
}

/// The module specifier of a one-line `import`, `export ... from` or `require(...)`.
fn js_specifier(t: &str) -> Option<&str> {
    let quoted = |s: &str| -> Option<usize> { s.find(['\'', '"']) };
    let from = if t.starts_with("import ") || t.starts_with("export ") {
        if let Some(i) = t.find(" from ") {
            &t[i + 6..]
        } else {
            t.strip_prefix("import ")?
        }
    } else if let Some(i) = t.find("require(") {
        &t[i + 8..]
    } else {
        return None;
    };
    let start = quoted(from)?;
    let q = from.as_bytes()[start] as char;
    let rest = &from[start + 1..];
    Some(&rest[..rest.find(q)?])
}

/// For each remaining file that references one of `gone`, the byte ranges of its lines that
/// do (with the attribute lines right above a Rust `mod`).
pub fn references_to(tree: &Tree, gone: &[RelPath]) -> FileCuts {
    let relevant = gone.iter().any(|g| {
        matches!(tree.entries.get(&**g).map(|e| &e.node), Some(Node::Dir)) || is_source(g)
    });
    if !relevant {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (path, entry) in &tree.entries {
        if gone.iter().any(|g| covers(g, path)) {
            continue;
        }
        let Node::File { data, digest } = &entry.node else {
            continue;
        };
        if !is_source(path) {
            continue;
        }
        let lines = line_ranges(data);
        let mut cut: Vec<Range<usize>> = Vec::new();
        for (i, r) in lines.iter().enumerate() {
            let Ok(text) = std::str::from_utf8(&data[r.clone()]) else {
                continue;
            };
            if references(path, text, gone, tree) {
                let mut start = i;
                if ext(path) == "rs" {
                    while start > 0
                        && std::str::from_utf8(&data[lines[start - 1].clone()])
                            .is_ok_and(|l| l.trim().starts_with("#[") && l.trim().ends_with(']'))
                    {
                        start -= 1;
                    }
                }
                cut.push(lines[start].start..r.end);
            }
        }
        if !cut.is_empty() {
            out.push((path.clone(), *digest, cut));
        }
    }
    out
}

/// Uses of one name beyond which a declaration is not offered with them: a name used that
/// often is rarely removable, and the cut would be most of the tree.
const MAX_USES: usize = 64;

/// Where each identifier occurs in one state of the tree, and the syntax levels of the files
/// that hold a use, parsed once per state.
struct Uses<'t> {
    tree: &'t Tree,
    at: std::collections::HashMap<&'t [u8], Vec<(&'t RelPath, Range<usize>)>>,
    levels: std::collections::HashMap<&'t RelPath, Option<syntax::Levels>>,
}

impl<'t> Uses<'t> {
    fn new(tree: &'t Tree) -> Uses<'t> {
        let mut at: std::collections::HashMap<&[u8], Vec<(&RelPath, Range<usize>)>> =
            std::collections::HashMap::new();
        for (file, entry) in &tree.entries {
            if let Node::File { data, .. } = &entry.node {
                for r in identifier_spans(data) {
                    at.entry(&data[r.clone()]).or_default().push((file, r));
                }
            }
        }
        Uses {
            tree,
            at,
            levels: std::collections::HashMap::new(),
        }
    }

    /// The cuts that delete the declaration at `range` of `path`, named `name`, with every
    /// use of the name: per file, its digest and the ranges to cut (the smallest syntax node
    /// around each use, or its line). `None` when the name is used nowhere else (the syntax
    /// pass already tries the declaration alone) or more than [`MAX_USES`] times.
    fn cuts(&mut self, path: &RelPath, range: &Range<usize>, name: &str) -> Option<FileCuts> {
        let uses: Vec<(&RelPath, Range<usize>)> = self
            .at
            .get(name.as_bytes())?
            .iter()
            .filter(|(file, r)| !(*file == path && range.start <= r.start && r.end <= range.end))
            .cloned()
            .collect();
        if uses.is_empty() || uses.len() > MAX_USES {
            return None;
        }
        let mut by_file: std::collections::BTreeMap<&RelPath, Vec<Range<usize>>> =
            std::collections::BTreeMap::new();
        by_file.entry(path).or_default().push(range.clone());
        for (file, r) in uses {
            let Some(Node::File { data, .. }) = self.tree.entries.get(file).map(|e| &e.node) else {
                continue;
            };
            let levels = self.levels.entry(file).or_insert_with(|| {
                syntax::lang_for_path(file).and_then(|l| syntax::deletion_levels(l, data).ok())
            });
            let cut = levels
                .as_ref()
                .and_then(|levels| syntax::smallest_enclosing(levels, &r))
                .or_else(|| {
                    line_ranges(data)
                        .into_iter()
                        .find(|l| l.start <= r.start && r.end <= l.end)
                })?;
            by_file.entry(file).or_default().push(cut);
        }
        let mut out = Vec::new();
        for (file, cut) in by_file {
            if let Some(Node::File { digest, .. }) = self.tree.entries.get(file).map(|e| &e.node) {
                out.push((file.clone(), *digest, cut));
            }
        }
        Some(out)
    }
}

/// Deletes each top-level declaration together with the uses of its name.
#[derive(Debug, Default)]
pub struct Declarations;

impl Declarations {
    /// The declarations of one file, in windows, until each name was tried once; `None`
    /// when the session stopped.
    fn file(
        session: &mut Session,
        phase: &str,
        path: &RelPath,
    ) -> Result<Option<u64>, ReduceError> {
        let Some(lang) = syntax::lang_for_path(path) else {
            return Ok(Some(0));
        };
        let mut tried: HashSet<String> = HashSet::new();
        let mut accepted = 0;
        loop {
            let Some((data, _)) = file_state(session, path) else {
                return Ok(Some(accepted));
            };
            let Ok(declared) = syntax::declarations(lang, &data) else {
                return Ok(Some(accepted));
            };
            let mut candidates = Vec::new();
            let mut uses_of = Uses::new(&session.current);
            for (range, name) in declared {
                if candidates.len() == UNION_WINDOW || !tried.insert(name.clone()) {
                    continue;
                }
                let Some(cuts) = uses_of.cuts(path, &range, &name) else {
                    continue;
                };
                let uses: usize = cuts.iter().map(|(_, _, c)| c.len()).sum::<usize>() - 1;
                let mut parts = Vec::new();
                for (file, digest, cut) in cuts {
                    let Some((now, _)) = file_state(session, &file) else {
                        continue;
                    };
                    parts.push(Mutation::Keep {
                        path: file,
                        expect: digest,
                        keep: complement(now.len(), &cut),
                    });
                }
                candidates.push(Candidate {
                    mutation: Mutation::Union(parts),
                    label: format!(
                        "declaration {name} of {path} with {uses} use{}",
                        if uses == 1 { "" } else { "s" }
                    ),
                });
            }
            if candidates.is_empty() {
                return Ok(Some(accepted));
            }
            let Some(done) = session.try_window(phase, candidates)? else {
                return Ok(None);
            };
            accepted += done.iter().filter(|c| **c).count() as u64;
        }
    }
}

impl Pass for Declarations {
    fn name(&self) -> &'static str {
        "declarations"
    }

    fn run(&mut self, session: &mut Session, ctx: &PassContext) -> Result<PassResult, ReduceError> {
        let name = self.name();
        per_file(session, ctx, false, |session, path| {
            Declarations::file(session, name, path)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_that_name_a_module() {
        assert_eq!(rust_mod("pub(crate) mod parse;"), Some("parse"));
        assert_eq!(rust_mod("mod tests {"), None);
        assert_eq!(c_include("#include \"a/b.h\""), Some("a/b.h"));
        assert_eq!(c_include("#include <stdio.h>"), None);
        assert_eq!(
            js_specifier("import { x } from './util.js';"),
            Some("./util.js")
        );
        assert_eq!(js_specifier("const u = require(\"../u\");"), Some("../u"));
        assert_eq!(
            python_import("src/pkg/a.py", "from . import keys"),
            Some(vec!["src.pkg.keys".to_string()])
        );
        assert_eq!(
            python_import("x.py", "import os, pkg.mod as m"),
            Some(vec!["os".to_string(), "pkg.mod".to_string()])
        );
        assert_eq!(python_import("x.py", "from a import (b,"), None);
    }

    #[test]
    fn resolution_stays_in_the_tree() {
        assert_eq!(resolve("src/a", "../b/c.h").as_deref(), Some("src/b/c.h"));
        assert_eq!(resolve("", "../x"), None);
    }
}

//! Coupled deletions: the lines that reference a file go with it.
//!
//! Deleting a module usually fails only because something still names it: Rust's `mod x;`,
//! C's `#include "x.h"`, Python's `import pkg.x`, JavaScript's `import ... from './x'`. The
//! files pass therefore deletes a file or directory together with the single-line
//! statements of the remaining files that reference it ([`references_to`]), the name a
//! longer Python import takes of it, and what in those files still names what the removed
//! imports bound where the file loads (a parameter's default, a decorator's keyword
//! argument), set to `None` or `null`.

use std::ops::Range;
use std::sync::Arc;

use crate::reduce::edits::Mutation;
use crate::reduce::pass::{complement, line_ranges};
use crate::reduce::syntax;
use crate::tree::{Node, RelPath, Tree};

/// Cuts in several files: per file, the digest of the content they were computed from and
/// the byte ranges to cut.
pub(crate) type FileCuts = Vec<(RelPath, [u8; 32], Vec<Range<usize>>)>;

/// What one remaining file loses with a deletion: the lines that reference what goes, the
/// names an import takes of it, and the values that name what those imports bound.
#[derive(Debug)]
pub(crate) struct FileEdit {
    pub path: RelPath,
    /// SHA-256 of the content the ranges refer to.
    pub digest: [u8; 32],
    /// The lines to cut, sorted.
    pub cut: Vec<Range<usize>>,
    /// How many lines are cut or have names taken out of them.
    pub lines: usize,
    /// How many of the replacements are values (defaults, keyword arguments).
    pub defaults: usize,
    /// The replacements outside the cut lines, sorted: the list of names of a Python import
    /// that also names what goes, without it (`from pkg import Cache, keys` becomes `from
    /// pkg import Cache`), and each parameter default or Python keyword argument that names
    /// what a cut or shortened import bound, with the value that names nothing
    /// (`key=keys.hashkey` becomes `key=None` when `from . import keys` goes): without them
    /// the file no longer loads.
    pub replace: Vec<(Range<usize>, Arc<[u8]>)>,
}

impl FileEdit {
    /// The edit as a mutation of the file, whose current content is `len` bytes long: a
    /// cut, or a cut with the replacements inside what it keeps.
    pub(crate) fn mutation(self, len: usize) -> Mutation {
        let keep = complement(len, &self.cut);
        if self.replace.is_empty() {
            Mutation::Keep {
                path: self.path,
                expect: self.digest,
                keep,
            }
        } else {
            Mutation::Replace {
                path: self.path,
                expect: self.digest,
                keep: Some(keep),
                replace: self.replace,
            }
        }
    }
}

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
                    .all(|m| gone.iter().any(|g| python_names(g, m, tree)))
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
///
/// A package's `__init__.py` is named only by what it defines: `from . import Helper`
/// names `pkg.Helper`, which is no module file of the tree, so it comes from
/// `pkg/__init__.py`. A bare `import pkg` does not name it: without its `__init__.py` a
/// package still imports, as a namespace package.
fn python_names(path: &str, m: &str, tree: &Tree) -> bool {
    if stem(path) == "__init__" {
        let package = parent(path);
        let Some((owner, name)) = m.rsplit_once('.') else {
            return false;
        };
        let is_module = |dir: &str| {
            let below = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            ["py", "pyi"]
                .iter()
                .any(|e| tree.entries.contains_key(format!("{below}.{e}").as_str()))
                || tree.entries.contains_key(below.as_str())
        };
        return dotted_suffix(package, owner) && !is_module(package);
    }
    let dotted = path.trim_end_matches(".pyi").trim_end_matches(".py");
    dotted_suffix(dotted, m)
        || (0..m.len())
            .filter(|&i| m.as_bytes()[i] == b'.')
            .any(|i| dotted_suffix(dotted, &m[..i]))
}

/// Whether the dotted name `m` equals some dotted suffix of the slash-separated `path`.
fn dotted_suffix(path: &str, m: &str) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    (0..parts.len()).any(|i| parts[i..].join(".") == m)
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

/// The names a one-line Python import binds (`import a.b` binds `a`, `from m import x as
/// y` binds `y`); `None` for `from m import *`, whose names are not known.
fn python_bound(t: &str) -> Option<Vec<String>> {
    let t = t.split('#').next().unwrap_or("").trim();
    let alias = |part: &str, whole: fn(&str) -> &str| -> String {
        let part = part.trim();
        match part.split_once(" as ") {
            Some((_, a)) => a.trim().to_string(),
            None => whole(part).to_string(),
        }
    };
    if let Some(rest) = t.strip_prefix("import ") {
        return Some(
            rest.split(',')
                .map(|m| alias(m, |m| m.split('.').next().unwrap_or(m)))
                .collect(),
        );
    }
    let (_, names) = t.strip_prefix("from ")?.split_once(" import ")?;
    let names: Vec<String> = names.split(',').map(|n| alias(n, |n| n)).collect();
    (!names.iter().any(|n| n == "*")).then_some(names)
}

/// The names a one-line JavaScript or TypeScript import binds: `import x, { a, b as c }
/// from "m"`, `import * as ns from "m"`, `const { a, b: c } = require("m")`.
fn js_bound(t: &str) -> Vec<String> {
    let clause = if let Some(rest) = t.strip_prefix("import ") {
        match rest.find(" from ") {
            Some(i) => rest[..i].trim_start_matches("type ").to_string(),
            None => return Vec::new(),
        }
    } else if let Some(i) = t.find("require(") {
        let head = t[..i].trim_end().trim_end_matches('=').trim();
        let head = ["const ", "let ", "var "]
            .iter()
            .find_map(|k| head.strip_prefix(k))
            .unwrap_or("");
        // `{ a, b: c }` binds `c`: the part after the colon is the name.
        head.split(',')
            .map(|p| p.rsplit(':').next().unwrap_or(p))
            .collect::<Vec<_>>()
            .join(",")
    } else {
        return Vec::new();
    };
    clause
        .split(',')
        .map(|p| p.trim().trim_matches(['{', '}']).trim())
        .map(|p| p.strip_prefix("type ").unwrap_or(p))
        .map(|p| p.rsplit(" as ").next().unwrap_or(p).trim())
        .filter(|p| {
            !p.is_empty()
                && *p != "*"
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        })
        .map(str::to_string)
        .collect()
}

/// A one-line Python import that names some modules of `gone` and something else too
/// (`from pkg import Cache, keys` with `pkg/keys.py` gone): the byte range of its list of
/// names within `text`, the list without the gone ones, and the names those bound.
fn python_partial(
    from: &str,
    text: &str,
    gone: &[RelPath],
    tree: &Tree,
) -> Option<(Range<usize>, String, Vec<String>)> {
    let code = text.split('#').next().unwrap_or("");
    let end = code.trim_end().len();
    let start = code.len() - code.trim_start().len();
    let t = code.get(start..end)?;
    if t.contains(['(', ';']) || t.ends_with('\\') {
        return None;
    }
    let list_start = if let Some(rest) = t.strip_prefix("from ") {
        start + "from ".len() + rest.find(" import ")? + " import ".len()
    } else if t.starts_with("import ") {
        start + "import ".len()
    } else {
        return None;
    };
    let parts: Vec<&str> = code
        .get(list_start..end)?
        .split(',')
        .map(str::trim)
        .collect();
    let modules = python_import(from, t)?;
    if modules.len() != parts.len() {
        return None; // `from m import *`
    }
    let dropped: Vec<bool> = modules
        .iter()
        .map(|m| gone.iter().any(|g| python_names(g, m, tree)))
        .collect();
    if !dropped.contains(&true) || !dropped.contains(&false) {
        return None;
    }
    let kept: Vec<&str> = parts
        .iter()
        .zip(&dropped)
        .filter(|(_, d)| !**d)
        .map(|(p, _)| *p)
        .collect();
    let statement = t.split_once(" import ").map_or("import", |(head, _)| head);
    let unbound = parts
        .iter()
        .zip(&dropped)
        .filter(|(_, d)| **d)
        .filter_map(|(p, _)| python_bound(&format!("{statement} import {p}")))
        .flatten()
        .collect();
    Some((list_start..end, kept.join(", "), unbound))
}

/// The names line `text` of file `from` binds, for the defaults that name them.
fn bound_names(from: &str, text: &str) -> Vec<String> {
    let t = text.trim();
    match ext(from) {
        "py" | "pyi" => python_bound(t).unwrap_or_default(),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => js_bound(t),
        _ => Vec::new(),
    }
}

/// For each remaining file that references one of `gone`, the byte ranges of its lines that
/// do (with the attribute lines right above a Rust `mod`), and the parameter defaults that
/// name what those lines imported (see [`FileEdit::replace`]).
pub(crate) fn references_to(tree: &Tree, gone: &[RelPath]) -> Vec<FileEdit> {
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
        let mut bound: Vec<String> = Vec::new();
        let mut names: Vec<(Range<usize>, Arc<[u8]>)> = Vec::new();
        for (i, r) in lines.iter().enumerate() {
            let Ok(text) = std::str::from_utf8(&data[r.clone()]) else {
                continue;
            };
            if !references(path, text, gone, tree) {
                if let Some((within, kept, unbound)) = matches!(ext(path), "py" | "pyi")
                    .then(|| python_partial(path, text, gone, tree))
                    .flatten()
                {
                    let at = r.start + within.start..r.start + within.end;
                    names.push((at, Arc::from(kept.as_bytes())));
                    bound.extend(unbound);
                }
            } else {
                bound.extend(bound_names(path, text));
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
        if cut.is_empty() && names.is_empty() {
            continue;
        }
        // A file that does not parse gets no replacements of defaults: the cut alone is
        // still offered.
        let edited = names.len();
        let mut replace = names;
        replace.extend(
            syntax::lang_for_file(path, data)
                .and_then(|lang| syntax::defaults_naming(lang, data, &bound).ok())
                .unwrap_or_default()
                .into_iter()
                .filter(|(r, _)| !cut.iter().any(|c| c.start < r.end && r.start < c.end))
                .map(|(r, with)| (r, Arc::from(with.as_bytes()))),
        );
        replace.sort_by_key(|(r, _)| r.start);
        out.push(FileEdit {
            path: path.clone(),
            digest: *digest,
            lines: cut.len() + edited,
            defaults: replace.len() - edited,
            cut,
            replace,
        });
    }
    out
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

    /// The lines `references_to` cuts, as text, per file.
    fn cut_lines(tree: &Tree, gone: &[&str]) -> Vec<(String, String)> {
        let gone: Vec<RelPath> = gone.iter().map(|g| RelPath::from(*g)).collect();
        let mut out = Vec::new();
        for edit in references_to(tree, &gone) {
            let Some(Node::File { data, .. }) = tree.entries.get(&edit.path).map(|e| &e.node)
            else {
                continue;
            };
            let path = edit.path;
            for r in edit.cut {
                let text = String::from_utf8_lossy(&data[r]).trim().to_string();
                out.push((path.to_string(), text));
            }
        }
        out
    }

    /// Each file `references_to` edits, as the text it becomes through the mutation the
    /// files pass applies.
    fn edited(tree: &Tree, gone: &[&str]) -> Vec<(String, String)> {
        let gone: Vec<RelPath> = gone.iter().map(|g| RelPath::from(*g)).collect();
        let mut out = Vec::new();
        for edit in references_to(tree, &gone) {
            let path = edit.path.clone();
            let len = tree
                .entries
                .get(&path)
                .and_then(|e| e.node.data())
                .map_or(0, |d| d.len());
            let mutation = edit.mutation(len);
            let (_, after) = crate::reduce::edits::EditSet::default()
                .apply(tree, tree, &mutation)
                .expect("the edit applies");
            let Some(Node::File { data, .. }) = after.entries.get(&path).map(|e| &e.node) else {
                panic!("{path} is gone");
            };
            out.push((
                path.to_string(),
                String::from_utf8(data.to_vec()).expect("UTF-8"),
            ));
        }
        out
    }

    #[test]
    fn what_a_removed_import_bound_is_no_longer_named_where_the_module_loads() {
        let tree = crate::reduce::edits::tests::tree(&[
            ("pkg", ""),
            (
                "pkg/__init__.py",
                "import os\nfrom . import keys\n\ndef cached(cache, key=keys.hashkey, lock=None):\n    return keys.hashkey\n",
            ),
            ("pkg/keys.py", "def hashkey(): pass\n"),
            (
                "test_a.py",
                "from pkg import cached, keys as k  # the API\n\n@cached(None, key=k.typedkey, lock=cached)\ndef f(x=k, y=os.sep):\n    return k.hashkey\n",
            ),
            (
                "web.js",
                "import { hash, keys as k } from './pkg/keys.js';\nfunction f(a = k.hash, b = other) { return hash(a); }\n",
            ),
            ("pkg/keys.js", "export const hash = 1;\n"),
        ]);
        assert_eq!(
            edited(&tree, &["pkg/keys.py", "pkg/keys.js"]),
            vec![
                (
                    "pkg/__init__.py".to_string(),
                    "import os\n\ndef cached(cache, key=None, lock=None):\n    return keys.hashkey\n"
                        .to_string()
                ),
                (
                    "test_a.py".to_string(),
                    "from pkg import cached  # the API\n\n@cached(None, key=None, lock=cached)\ndef f(x=None, y=os.sep):\n    return k.hashkey\n"
                        .to_string()
                ),
                (
                    "web.js".to_string(),
                    "function f(a = null, b = other) { return hash(a); }\n".to_string()
                ),
            ]
        );
        // An import of which nothing goes is left alone, and so are the defaults.
        assert!(edited(&tree, &["pkg/other.py"]).is_empty());
    }

    #[test]
    fn the_names_an_import_binds() {
        assert_eq!(
            python_bound("import a.b, c as d"),
            Some(vec!["a".into(), "d".into()])
        );
        assert_eq!(
            python_bound("from .m import x, y as z  # note"),
            Some(vec!["x".into(), "z".into()])
        );
        assert_eq!(python_bound("from m import *"), None);
        assert_eq!(
            js_bound("import def, { a, b as c, type T } from './m';"),
            vec!["def", "a", "c", "T"]
        );
        assert_eq!(js_bound("import * as ns from \"./m\";"), vec!["ns"]);
        assert_eq!(js_bound("import './side-effect.js';"), Vec::<String>::new());
        assert_eq!(
            js_bound("const { a, b: c } = require('./m');"),
            vec!["a", "c"]
        );
        assert_eq!(js_bound("const m = require('./m');"), vec!["m"]);
    }

    #[test]
    fn a_package_init_is_named_by_what_it_defines_not_by_its_submodules() {
        let tree = crate::reduce::edits::tests::tree(&[
            ("tests", ""),
            ("tests/__init__.py", "class Helper:\n    pass\n"),
            ("tests/util.py", "X = 1\n"),
            (
                "tests/test_a.py",
                "import unittest\nfrom . import Helper\nfrom . import util\nfrom . import Helper, util\nimport tests\n",
            ),
        ]);
        assert_eq!(
            cut_lines(&tree, &["tests/__init__.py"]),
            vec![(
                "tests/test_a.py".to_string(),
                "from . import Helper".to_string()
            )]
        );
        // Its submodule's own deletion still takes the lines naming the submodule.
        assert_eq!(
            cut_lines(&tree, &["tests/util.py"]),
            vec![(
                "tests/test_a.py".to_string(),
                "from . import util".to_string()
            )]
        );
        assert_eq!(
            cut_lines(&tree, &["tests/__init__.py", "tests/util.py"]).len(),
            3
        );
    }

    #[test]
    fn resolution_stays_in_the_tree() {
        assert_eq!(resolve("src/a", "../b/c.h").as_deref(), Some("src/b/c.h"));
        assert_eq!(resolve("", "../x"), None);
    }
}

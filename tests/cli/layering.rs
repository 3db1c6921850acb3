//! The crate's layering, checked from its source: no module cycle at any directory level,
//! and no top-level module importing a module of a higher layer (docs/architecture.md,
//! "Dependency rules").
//!
//! Every `src/**/*.rs` is read as tokens (comments, strings and characters dropped; test
//! code left out: `#[cfg(test)]` items, the modules they declare and `tests.rs` files). A
//! module's references are the paths it names through `crate::`, `super::`, `self::` or
//! the name of one of its own child modules, in `use` trees (groups included) and in code;
//! a re-export of one of its own children (`pub use child::Item`) is no use of it. Each
//! reference counts at every directory level where it joins two different children of the
//! same directory, or a directory's `mod.rs` and one of its children: the top level,
//! inside each directory module, and so on down.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The layers, bottom to top, and the top-level modules of each. A module imports only
/// modules of its own layer or of layers below; every top-level module has a layer.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "engine",
        &[
            "bytes",
            "console",
            "container",
            "exit_code",
            "failpoint",
            "output_layout",
            "overlay",
            "owner",
            "reaper",
            "remote",
            "runner",
            "safe_fs",
            "scratch",
            "signature",
            "stats",
            "text",
            "tree",
            "workspace",
        ],
    ),
    ("reducer", &["oracle", "reduce", "export", "report"]),
    ("gate", &["gate"]),
    ("command line", &["cli", "demo", "fuzzing"]),
];

/// A module's path below the crate root (`["reduce", "session"]`); the root is empty.
type Module = Vec<String>;

/// Where a reference was written: file, line, and the path as it reads.
#[derive(Clone, Debug)]
struct Site {
    file: String,
    line: usize,
    path: String,
}

/// One module's references: the module each path resolves to, and where it was written.
#[derive(Debug, Default)]
struct Source {
    references: Vec<(Module, Site)>,
}

/// Tokens with their lines.
type Tokens = Vec<(Tok, usize)>;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(&'static str),
}

/// The tokens of Rust source with their lines; comments, string, byte-string, raw-string and
/// character literals are dropped (lifetimes are kept as nothing at all).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let count_lines = |from: usize, to: usize| b[from..to].iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let (start, mut depth) = (i, 0usize);
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count_lines(start, i);
        } else if let Some(end) = raw_string_end(b, i) {
            line += count_lines(i, end);
            i = end;
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            let start = i;
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            line += count_lines(start, i.min(b.len()));
        } else if c == b'\'' || (c == b'b' && b.get(i + 1) == Some(&b'\'')) {
            let q = if c == b'b' { i + 1 } else { i };
            if b.get(q + 1) == Some(&b'\\') {
                i = q + 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                // One character (maybe several bytes) then a quote, or a lifetime.
                let ch_len = text[q + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(q + 1 + ch_len) == Some(&b'\'') {
                    i = q + 2 + ch_len;
                } else {
                    i = q + 1;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            let word = word.strip_prefix("r#").unwrap_or(word);
            out.push((Tok::Ident(word.to_string()), line));
        } else if b[i..].starts_with(b"::") {
            out.push((Tok::Punct("::"), line));
            i += 2;
        } else {
            let p = match c {
                b'{' => "{",
                b'}' => "}",
                b'(' => "(",
                b')' => ")",
                b'[' => "[",
                b']' => "]",
                b';' => ";",
                b',' => ",",
                b'#' => "#",
                b'*' => "*",
                _ => ".",
            };
            out.push((Tok::Punct(p), line));
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one starts there.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    while j < b.len() {
        if b[j..].starts_with(&close) {
            return Some(j + close.len());
        }
        j += 1;
    }
    Some(b.len())
}

fn is(tok: Option<&(Tok, usize)>, p: &str) -> bool {
    matches!(tok, Some((Tok::Punct(q), _)) if *q == p)
}

fn ident(tok: Option<&(Tok, usize)>) -> Option<&str> {
    match tok {
        Some((Tok::Ident(w), _)) => Some(w),
        _ => None,
    }
}

/// The index after the bracketed group that opens at `i` (`(`, `[` or `{`).
fn skip_group(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The tokens without `#[cfg(test)]` items, and the names of the modules such items
/// declare (`#[cfg(test)] mod fixtures;`).
fn without_test_items(toks: Vec<(Tok, usize)>) -> (Vec<(Tok, usize)>, Vec<String>) {
    let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"];
    let at_cfg_test = |i: usize| {
        cfg_test
            .iter()
            .enumerate()
            .all(|(k, want)| match toks.get(i + k) {
                Some((Tok::Punct(p), _)) => p == want,
                Some((Tok::Ident(w), _)) => w == want,
                None => false,
            })
    };
    let (mut out, mut test_mods) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < toks.len() {
        if !at_cfg_test(i) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += cfg_test.len();
        while is(toks.get(i), "#") {
            i = skip_group(&toks, i + 1);
        }
        let start = i;
        while i < toks.len() {
            match &toks[i].0 {
                Tok::Punct(";") => {
                    i += 1;
                    break;
                }
                Tok::Punct("{") => {
                    i = skip_group(&toks, i);
                    break;
                }
                Tok::Punct("(" | "[") => i = skip_group(&toks, i),
                _ => i += 1,
            }
        }
        let item: Vec<&Tok> = toks[start..i].iter().map(|(t, _)| t).collect();
        if let Some(k) = item.iter().position(|t| **t == Tok::Ident("mod".into()))
            && let Some(Tok::Ident(name)) = item.get(k + 1)
            && item.get(k + 2) == Some(&&Tok::Punct(";"))
        {
            test_mods.push(name.clone());
        }
    }
    (out, test_mods)
}

/// The paths of a `use` tree starting at `i` (after `use`), each with its line; returns
/// them and the index after the tree.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, usize)>,
) -> usize {
    let mut path = prefix.to_vec();
    let line = toks.get(i).map_or(0, |t| t.1);
    if is(toks.get(i), "::") {
        i += 1;
    }
    loop {
        match toks.get(i) {
            Some((Tok::Ident(w), _)) if w == "as" => {
                i += 2;
                out.push((path, line));
                return i;
            }
            Some((Tok::Ident(w), _)) => {
                if w != "self" || path.is_empty() {
                    path.push(w.clone());
                }
                i += 1;
                if is(toks.get(i), "::") {
                    i += 1;
                } else {
                    out.push((path, line));
                    return i;
                }
            }
            Some((Tok::Punct("*"), _)) => {
                out.push((path, line));
                return i + 1;
            }
            Some((Tok::Punct("{"), _)) => {
                i += 1;
                // The group's own prefix is a reference too (`use crate::a::{}`).
                out.push((path.clone(), line));
                while i < toks.len() && !is(toks.get(i), "}") {
                    i = use_tree(toks, i, &path, out);
                    if is(toks.get(i), ",") {
                        i += 1;
                    }
                }
                return i + 1;
            }
            _ => {
                out.push((path, line));
                return i;
            }
        }
    }
}

/// The module a written path resolves to, from inside `here` (the file's module and the
/// inline modules around the path): the longest known module the path names, if any.
/// A path that starts at anything but `crate`, `super`, `self` or a child module of `here`
/// (a crate, a type, a local name) resolves to nothing.
fn resolve(path: &[String], here: &[String], known: &BTreeSet<Module>) -> Option<Module> {
    let mut abs: Module = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => here.to_vec(),
        Some("super") => here.to_vec(),
        Some(_) => {
            // A relative `use` path: only one that starts at a child module counts.
            let mut child = here.to_vec();
            child.push(path[0].clone());
            if !known.contains(&child) {
                return None;
            }
            here.to_vec()
        }
        None => return None,
    };
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate" | "self") => rest = &path[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                abs.pop()?;
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    abs.extend(rest.iter().cloned());
    (1..=abs.len())
        .rev()
        .map(|k| abs[..k].to_vec())
        .find(|m| known.contains(m))
}

/// A path as written in a file.
struct Reference {
    /// Its segments.
    path: Vec<String>,
    /// Its line.
    line: usize,
    /// The module it is written in (the file's, or an inline module in it).
    here: Module,
    /// Whether it is in a `pub use` (of any visibility): a re-export.
    export: bool,
}

/// Whether the `use` at `i` is a re-export: `pub use`, `pub(crate) use`, `pub(super) use`.
fn is_public(toks: &[(Tok, usize)], i: usize) -> bool {
    let mut k = i;
    if k >= 1 && is(toks.get(k - 1), ")") {
        while k > 0 && !is(toks.get(k), "(") {
            k -= 1;
        }
    }
    k >= 1 && ident(toks.get(k - 1)) == Some("pub")
}

/// The references of one file of module `module`.
fn references(toks: &[(Tok, usize)], module: &[String]) -> Vec<Reference> {
    let mut out = Vec::new();
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let here = |inline: &[(String, usize)]| {
        let mut m = module.to_vec();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct("{") => depth += 1,
            Tok::Punct("}") => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(name) = ident(toks.get(i + 1))
                    && is(toks.get(i + 2), "{")
                {
                    inline.push((name.to_string(), depth + 1));
                }
            }
            Tok::Ident(w) if w == "use" => {
                let mut paths = Vec::new();
                let next = use_tree(toks, i + 1, &[], &mut paths);
                let m = here(&inline);
                let export = is_public(toks, i);
                out.extend(paths.into_iter().map(|(p, l)| Reference {
                    path: p,
                    line: l,
                    here: m.clone(),
                    export,
                }));
                i = next;
                continue;
            }
            // `crate::`, `super::`, `self::` or a child module's name (`resolve` drops the
            // paths that start at anything else).
            Tok::Ident(w)
                if is(toks.get(i + 1), "::") && !is(toks.get(i.wrapping_sub(1)), "::") =>
            {
                let line = toks[i].1;
                let mut path = vec![w.clone()];
                let mut j = i + 1;
                while is(toks.get(j), "::")
                    && let Some(next) = ident(toks.get(j + 1))
                {
                    path.push(next.to_string());
                    j += 2;
                }
                out.push(Reference {
                    path,
                    line,
                    here: here(&inline),
                    export: false,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The crate's modules (test modules left out) and their references, read from `src`.
fn read_crate(src: &Path) -> BTreeMap<Module, Source> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut parsed: Vec<(Module, PathBuf, Tokens)> = Vec::new();
    let mut test_only: BTreeSet<Module> = BTreeSet::new();
    for path in files {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let module = module_of(src, &path);
        let (toks, test_mods) = without_test_items(tokens(&text));
        for name in test_mods {
            let mut m = module.clone();
            m.push(name);
            test_only.insert(m);
        }
        parsed.push((module, path, toks));
    }
    parsed.retain(|(m, _, _)| !(1..=m.len()).any(|k| test_only.contains(&m[..k])));
    let known: BTreeSet<Module> = parsed.iter().map(|(m, _, _)| m.clone()).collect();
    let mut crate_ = BTreeMap::new();
    for (module, path, toks) in parsed {
        let file = path
            .strip_prefix(src.parent().unwrap_or(src))
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut source = Source::default();
        for r in references(&toks, &module) {
            let Some(target) = resolve(&r.path, &r.here, &known) else {
                continue;
            };
            // A module that re-exports one of its own children does not use it: the
            // facade of a directory module may name what lies below it.
            if r.export && target.len() > module.len() && target.starts_with(&module) {
                continue;
            }
            let site = Site {
                file: file.clone(),
                line: r.line,
                path: r.path.join("::"),
            };
            source.references.push((target, site));
        }
        crate_.insert(module, source);
    }
    crate_
}

/// The module of a file under `src`: `reduce/session/mod.rs` is `reduce::session`.
fn module_of(src: &Path, path: &Path) -> Module {
    let rel = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut module: Module = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if module
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        module.pop();
    }
    module
}

/// The edges between the nodes of each directory level: for a directory module `dir`, its
/// nodes are `dir` itself (its `mod.rs`) and its children, each standing for everything
/// below it. Keyed by `dir`; each edge keeps the first place that makes it and a count.
type Levels = BTreeMap<Module, BTreeMap<(Module, Module), (Site, usize)>>;

fn levels(crate_: &BTreeMap<Module, Source>) -> Levels {
    let mut dirs: BTreeSet<Module> = BTreeSet::new();
    for m in crate_.keys() {
        for k in 0..m.len() {
            dirs.insert(m[..k].to_vec());
        }
    }
    let mut out: Levels = dirs.iter().map(|d| (d.clone(), BTreeMap::new())).collect();
    // The node of `m` at the level of `dir`: `dir` itself or the child of `dir` above `m`.
    let node = |dir: &Module, m: &Module| -> Option<Module> {
        if !m.starts_with(dir) {
            return None;
        }
        Some(m[..(dir.len() + 1).min(m.len())].to_vec())
    };
    for (from, source) in crate_ {
        for (to, site) in &source.references {
            for dir in &dirs {
                let (Some(a), Some(b)) = (node(dir, from), node(dir, to)) else {
                    continue;
                };
                // The crate root (lib.rs) declares the top level; it is no node of it.
                if a == b || a.is_empty() || b.is_empty() {
                    continue;
                }
                let edges = out.get_mut(dir).expect("every level is listed");
                edges
                    .entry((a, b))
                    .and_modify(|(_, n)| *n += 1)
                    .or_insert_with(|| (site.clone(), 1));
            }
        }
    }
    out
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(edges: &BTreeMap<(Module, Module), (Site, usize)>) -> Vec<Vec<Module>> {
    let mut adj: BTreeMap<&Module, Vec<&Module>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(v: &'a Module, adj: &BTreeMap<&'a Module, Vec<&'a Module>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for &w in &adj[v] {
            if !s.index.contains_key(w) {
                visit(w, adj, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in adj.keys() {
        if !s.index.contains_key(v) {
            visit(v, &adj, &mut s);
        }
    }
    s.out
}

/// A module as the report names it.
fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// Every cycle at every level, each with the edges inside it and where each is written.
fn cycle_report(levels: &Levels) -> Vec<String> {
    let mut out = Vec::new();
    for (dir, edges) in levels {
        for comp in cycles(edges) {
            let level = if dir.is_empty() {
                "top level".to_string()
            } else {
                format!("inside {}", name(dir))
            };
            let names: Vec<String> = comp.iter().map(name).collect();
            let mut text = format!("cycle {level}: {}", names.join(", "));
            for ((a, b), (site, n)) in edges {
                if comp.contains(a) && comp.contains(b) {
                    let more = if *n > 1 {
                        format!(" (and {} more)", n - 1)
                    } else {
                        String::new()
                    };
                    let _ = write!(
                        text,
                        "\n    {} -> {}: {}:{} `{}`{more}",
                        name(a),
                        name(b),
                        site.file,
                        site.line,
                        site.path
                    );
                }
            }
            out.push(text);
        }
    }
    out
}

/// Every top-level import that goes up the layer table, and every top-level module the
/// table does not place.
fn layer_report(levels: &Levels, layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of = |m: &Module| {
        layers
            .iter()
            .position(|(_, mods)| m.len() == 1 && mods.contains(&m[0].as_str()))
    };
    let mut out = Vec::new();
    let Some(top) = levels.get(&Vec::new()) else {
        return out;
    };
    let mut unplaced = BTreeSet::new();
    for ((a, b), (site, n)) in top {
        match (layer_of(a), layer_of(b)) {
            (Some(la), Some(lb)) if lb > la => out.push(format!(
                "upward import: {} ({}) -> {} ({}): {}:{} `{}`{}",
                name(a),
                layers[la].0,
                name(b),
                layers[lb].0,
                site.file,
                site.line,
                site.path,
                if *n > 1 {
                    format!(" (and {} more)", n - 1)
                } else {
                    String::new()
                }
            )),
            (la, lb) => {
                if la.is_none() {
                    unplaced.insert(name(a));
                }
                if lb.is_none() {
                    unplaced.insert(name(b));
                }
            }
        }
    }
    out.extend(
        unplaced
            .into_iter()
            .map(|m| format!("top-level module {m} has no layer in LAYERS")),
    );
    out
}

#[test]
fn no_module_cycle_and_no_upward_import() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let crate_ = read_crate(&src);
    let levels = levels(&crate_);
    let mut problems = cycle_report(&levels);
    problems.extend(layer_report(&levels, LAYERS));
    assert!(
        problems.is_empty(),
        "the module layering is broken (docs/architecture.md, \"Dependency rules\"):\n{}",
        problems.join("\n")
    );
}

/// A synthetic crate: (file under src, text).
fn synthetic(files: &[(&str, &str)]) -> Levels {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    for (path, text) in files {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    levels(&read_crate(&src))
}

#[test]
fn the_check_finds_a_cycle_inside_a_directory_through_super_and_groups() {
    let levels = synthetic(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "pub fn f() {}"),
        ("b/mod.rs", "mod x; mod y; mod z;"),
        ("b/x.rs", "use super::{y::{self, Y}, z};"),
        ("b/y.rs", "pub struct Y; fn g() { crate::b::z::h() }"),
        // The string, the comment and the test module name `x` without using it.
        (
            "b/z.rs",
            "pub fn h() { let _ = \"super::x\"; /* super::x */ }\n#[cfg(test)]\nmod t { use super::super::x; }\nfn k() { super::x::q(); }",
        ),
    ]);
    let report = cycle_report(&levels);
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].starts_with("cycle inside b: b::x, b::y, b::z"),
        "{}",
        report[0]
    );
    assert!(
        report[0].contains("b::z -> b::x: src/b/z.rs:4 `super::x::q`"),
        "{}",
        report[0]
    );
    assert!(layer_report(&levels, &[("all", &["a", "b"])]).is_empty());
}

#[test]
fn the_check_finds_a_cycle_through_a_parent_and_an_upward_import() {
    let levels = synthetic(&[
        ("low.rs", "fn f() { let s = '\"'; crate::high::g(s) }"),
        (
            "high/mod.rs",
            "mod part; mod face; pub use part::P; pub fn g(_: char) { part::r() }",
        ),
        (
            "high/part.rs",
            "pub struct P; pub fn r() {} fn u() { super::g('x') }",
        ),
        // A child that uses its parent, which only re-exports it: no cycle.
        ("high/face.rs", "pub struct F; fn v() { super::g('y') }"),
        ("lib.rs", "mod low; mod high; pub(crate) use high::face::F;"),
    ]);
    let cycles = cycle_report(&levels);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(
        cycles[0].starts_with("cycle inside high: high, high::part"),
        "{}",
        cycles[0]
    );
    let layers: &[(&str, &[&str])] = &[("bottom", &["low"]), ("top", &["high"])];
    let upward = layer_report(&levels, layers);
    assert_eq!(
        upward,
        ["upward import: low (bottom) -> high (top): src/low.rs:1 `crate::high::g`"]
    );
    let unplaced = layer_report(&levels, &[("bottom", &["low"])]);
    assert_eq!(unplaced, ["top-level module high has no layer in LAYERS"]);
}

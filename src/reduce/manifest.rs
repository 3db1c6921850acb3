//! Deletion candidates inside package manifests.
//!
//! The reducer deletes parts of a source tree and keeps a cut only when the same failure
//! survives. This module proposes such cuts inside package manifests (Cargo.toml,
//! pyproject.toml, Pipfile, requirements files, package.json, composer.json, go.mod, go.work,
//! pom.xml, MSBuild projects and Gemfiles). Every candidate comes from a real parse of the file:
//! `toml_edit` for TOML, `serde_json` plus `jsonc-parser` (strict mode) for JSON, `quick-xml` for
//! XML, and small purpose-built line/token scanners for requirements files, go.mod/go.work and
//! Gemfiles. Candidates are grouped in levels, coarse first. Applying any single candidate leaves
//! a file that still parses as its kind.

use std::ops::Range;

/// One proposed deletion: the byte ranges of the manifest to delete (sorted, disjoint), and a label for reports
/// such as "dependency `serde` of Cargo.toml" or "item 3 of `files` in package.json".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEdit {
    /// Human-readable description of what the deletion removes. Item numbers in labels count from 1.
    pub label: String,
    /// Byte ranges to delete: sorted, disjoint, non-empty, within the source and on UTF-8 character boundaries.
    pub delete: Vec<Range<usize>>,
}

impl ManifestEdit {
    /// Returns a copy of `src` with this edit's ranges removed (ranges past the end are clamped).
    pub fn apply(&self, src: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(src.len());
        let mut pos = 0;
        for range in &self.delete {
            let start = range.start.clamp(pos, src.len());
            let end = range.end.clamp(start, src.len());
            out.extend_from_slice(&src[pos..start]);
            pos = end;
        }
        out.extend_from_slice(&src[pos..]);
        out
    }
}

/// The kinds of manifest this module understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManifestKind {
    /// Cargo's `Cargo.toml`.
    CargoToml,
    /// Python's `pyproject.toml`.
    PyprojectToml,
    /// Pipenv's `Pipfile` (TOML).
    Pipfile,
    /// A pip requirements or constraints file (`requirements.txt`, `requirements-dev.in`, ...).
    Requirements,
    /// npm's `package.json`.
    PackageJson,
    /// PHP Composer's `composer.json`.
    ComposerJson,
    /// Go's `go.mod`.
    GoMod,
    /// Go's `go.work`.
    GoWork,
    /// Maven's `pom.xml`.
    PomXml,
    /// An MSBuild project or import (`*.csproj`, `*.fsproj`, `*.vbproj`, `*.props`, `*.targets`).
    MsBuild,
    /// Bundler's `Gemfile` (Ruby).
    Gemfile,
}

impl ManifestKind {
    /// The name used for this kind in labels and errors, such as "Cargo.toml" or "MSBuild project".
    pub fn display_name(self) -> &'static str {
        match self {
            ManifestKind::CargoToml => "Cargo.toml",
            ManifestKind::PyprojectToml => "pyproject.toml",
            ManifestKind::Pipfile => "Pipfile",
            ManifestKind::Requirements => "requirements file",
            ManifestKind::PackageJson => "package.json",
            ManifestKind::ComposerJson => "composer.json",
            ManifestKind::GoMod => "go.mod",
            ManifestKind::GoWork => "go.work",
            ManifestKind::PomXml => "pom.xml",
            ManifestKind::MsBuild => "MSBuild project",
            ManifestKind::Gemfile => "Gemfile",
        }
    }
}

/// Why [`candidates`] produced no candidates for a file.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file is not UTF-8.
    #[error("{kind} is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file does not parse as its kind.
    #[error("{kind} does not parse: {message}")]
    Parse {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Byte offset of the problem, when the parser reports one.
        offset: Option<usize>,
        /// The parser's description of the problem.
        message: String,
    },
    /// The file parses but lacks the structure its kind requires (for example a package.json whose
    /// top-level value is not an object, or a pom.xml whose root element is not `project`).
    #[error("{kind} is not a valid manifest: {message}")]
    Shape {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// What is missing or unexpected.
        message: String,
    },
    /// The file is refused for safety: XML with a DOCTYPE or ENTITY declaration.
    #[error("{kind} refused: {reason}")]
    Refused {
        /// Display name of the manifest kind.
        kind: &'static str,
        /// Why the file is refused.
        reason: &'static str,
    },
}

/// By file name: Cargo.toml, pyproject.toml, Pipfile, requirements*.txt / *.in (requirements files), package.json, composer.json,
/// go.mod, go.work, pom.xml, *.csproj *.fsproj *.vbproj *.props *.targets, Gemfile.
///
/// Requirements files are recognised by a `.txt` or `.in` extension together with a
/// requirements-like name: a stem starting or ending with `requirements` or `constraints`
/// (`requirements-dev.txt`, `dev-requirements.in`, `constraints.txt`), or any file directly inside a
/// `requirements/` directory. Other `.in` files (`Makefile.in`, `MANIFEST.in`) are not manifests.
/// Names are matched exactly, except the MSBuild extensions, which are matched case-insensitively.
pub fn manifest_kind(path: &str) -> Option<ManifestKind> {
    let mut components = path.rsplit(['/', '\\']);
    let name = components.next()?;
    let parent = components.next();
    let kind = match name {
        "Cargo.toml" => ManifestKind::CargoToml,
        "pyproject.toml" => ManifestKind::PyprojectToml,
        "Pipfile" => ManifestKind::Pipfile,
        "package.json" => ManifestKind::PackageJson,
        "composer.json" => ManifestKind::ComposerJson,
        "go.mod" => ManifestKind::GoMod,
        "go.work" => ManifestKind::GoWork,
        "pom.xml" => ManifestKind::PomXml,
        "Gemfile" => ManifestKind::Gemfile,
        _ => {
            let (stem, ext) = name.rsplit_once('.')?;
            let ext = ext.to_ascii_lowercase();
            if matches!(
                ext.as_str(),
                "csproj" | "fsproj" | "vbproj" | "props" | "targets"
            ) && !stem.is_empty()
            {
                ManifestKind::MsBuild
            } else if (ext == "txt" || ext == "in") && !stem.is_empty() {
                let stem_lower = stem.to_ascii_lowercase();
                let named = ["requirements", "constraints"]
                    .iter()
                    .any(|w| stem_lower.starts_with(w) || stem_lower.ends_with(w));
                if named || parent == Some("requirements") {
                    ManifestKind::Requirements
                } else {
                    return None;
                }
            } else {
                return None;
            }
        }
    };
    Some(kind)
}

/// Deletion candidates, coarse first: whole tables/sections first, then their entries, then array items.
/// Err when the file does not parse as its kind (the caller then skips it) or is refused (XML with DOCTYPE or ENTITY).
///
/// The outer `Vec` holds levels from coarse to fine (empty levels are left out). The candidates of one
/// level are independent alternatives, each valid on its own, and disjoint with one exception: in a
/// comma-separated list (JSON array or object, TOML array or inline table) the last item's deletion
/// takes the comma before it, which the previous item's deletion also takes (n items have only n-1
/// commas). Merging several candidates of one level is therefore not always valid JSON (for example
/// it can leave a trailing comma), and the reducer's own check has to catch that.
///
/// Required keys are never offered: `[package]` `name` and
/// `version` of Cargo.toml, `[project]` `name` of pyproject.toml, top-level `name` and `version` of
/// package.json/composer.json, and the `module` and `go` directives of go.mod/go.work (nor any
/// enclosing table or block that would remove them).
pub fn candidates(kind: ManifestKind, src: &[u8]) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let text = std::str::from_utf8(src).map_err(|e| ManifestError::NotUtf8 {
        kind: kind.display_name(),
        offset: e.valid_up_to(),
    })?;
    // A leading byte-order mark is kept in place: the file is read after it, and ranges are shifted.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    let mut levels = match kind {
        ManifestKind::CargoToml | ManifestKind::PyprojectToml | ManifestKind::Pipfile => {
            toml_candidates(kind, body)
        }
        ManifestKind::Requirements => Ok(requirements_candidates(body)),
        ManifestKind::PackageJson | ManifestKind::ComposerJson => json_candidates(kind, body),
        ManifestKind::GoMod | ManifestKind::GoWork => go_candidates(kind, body),
        ManifestKind::PomXml | ManifestKind::MsBuild => xml_candidates(kind, body),
        ManifestKind::Gemfile => gemfile_candidates(body),
    }
    .map_err(|e| match e {
        ManifestError::Parse {
            kind,
            offset,
            message,
        } => ManifestError::Parse {
            kind,
            offset: offset.map(|o| o + bom),
            message,
        },
        other => other,
    })?;
    if bom > 0 {
        for edit in levels.iter_mut().flatten() {
            for range in &mut edit.delete {
                *range = range.start + bom..range.end + bom;
            }
        }
    }
    Ok(levels)
}

/// Requirements files name others with `-r FILE`, `--requirement FILE`, `-c FILE`, `--constraint FILE`: return those relative paths, so the reducer can keep includes consistent.
///
/// Lines are read with pip's rules (backslash continuations, `#` comments, shell-like quoting of
/// option values). The `=` form (`--requirement=FILE`), the attached short form (`-rFILE`) and
/// unambiguous abbreviations of the long options (`--requirem FILE`) are understood. Paths are returned
/// as written, in file order, so they may also be URLs or contain `${VAR}` references. Invalid UTF-8 is
/// read lossily.
pub fn requirement_includes(src: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(src);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut out = Vec::new();
    for line in req_logical_lines(text) {
        if line.text.starts_with('-') {
            for (option, value) in req_options(&line.text) {
                if option == "--requirement" || option == "--constraint" {
                    out.push(value);
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// Candidate levels being built for one file.
struct Levels<'a> {
    src: &'a str,
    levels: Vec<Vec<ManifestEdit>>,
    protected: Vec<Range<usize>>,
}

impl<'a> Levels<'a> {
    fn new(src: &'a str) -> Self {
        Levels {
            src,
            levels: Vec::new(),
            protected: Vec::new(),
        }
    }

    /// Adds a candidate unless it is empty, out of bounds, off a character boundary, or touches a
    /// protected range.
    fn push(&mut self, level: usize, label: String, mut delete: Vec<Range<usize>>) {
        delete.retain(|r| r.start < r.end);
        delete.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(delete.len());
        for range in delete {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        if merged.is_empty()
            || merged.iter().any(|r| {
                r.end > self.src.len()
                    || !self.src.is_char_boundary(r.start)
                    || !self.src.is_char_boundary(r.end)
            })
            || merged
                .iter()
                .any(|r| self.protected.iter().any(|p| overlaps(r, p)))
        {
            return;
        }
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, Vec::new);
        }
        self.levels[level].push(ManifestEdit {
            label,
            delete: merged,
        });
    }

    fn finish(self) -> Vec<Vec<ManifestEdit>> {
        self.levels
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|mut l| {
                l.sort_by_key(|e| e.delete.first().map_or(0, |r| r.start));
                l
            })
            .collect()
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Start of the line containing `pos`.
fn line_start(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[..pos]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// Position just after the newline ending the line containing `pos` (or the end of input).
fn line_end(b: &[u8], pos: usize) -> usize {
    let pos = pos.min(b.len());
    b[pos..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |i| pos + i + 1)
}

/// Whether only spaces and tabs precede `pos` on its line.
fn only_blanks_before(b: &[u8], pos: usize) -> bool {
    let pos = pos.min(b.len());
    b[line_start(b, pos)..pos]
        .iter()
        .all(|&c| c == b' ' || c == b'\t')
}

/// Whether the rest of the line from `pos` holds only blanks and, if `comment` is given, a comment
/// starting with that marker.
fn rest_is_trivia(b: &[u8], pos: usize, comment: Option<&[u8]>) -> bool {
    let mut p = pos.min(b.len());
    while p < b.len() {
        match b[p] {
            b' ' | b'\t' | b'\r' => p += 1,
            b'\n' => return true,
            _ => return comment.is_some_and(|m| b[p..].starts_with(m)),
        }
    }
    true
}

/// Skips whitespace, newlines and (when `comment` is given) comments running to the end of line.
fn skip_trivia(b: &[u8], pos: usize, comment: Option<u8>) -> usize {
    let mut p = pos.min(b.len());
    while p < b.len() {
        match b[p] {
            b' ' | b'\t' | b'\r' | b'\n' => p += 1,
            c if Some(c) == comment => p = line_end(b, p),
            _ => break,
        }
    }
    p
}

/// Moves a line start `start` up over the comment lines (starting with `marker` after indentation)
/// directly above it, never above `floor`. Everything between `floor` and `start` must be
/// whitespace or comments.
fn extend_over_comments(b: &[u8], start: usize, floor: usize, marker: &[u8]) -> usize {
    let mut start = start;
    while start > 0 && start > floor {
        let prev = line_start(b, start - 1);
        if prev < floor {
            break;
        }
        if b[prev..start].trim_ascii_start().starts_with(marker) {
            start = prev;
        } else {
            break;
        }
    }
    start
}

/// Deletion ranges for each item of a comma-separated list (`[a, b]`, `{ k = v, ... }`, JSON
/// arrays and objects). `items` are the items' own spans in order; `comment` is the comment marker
/// allowed between items. Each deletion takes the item's comma: the following one, or the preceding
/// one for the last item. An item alone on its line(s) is deleted with its whole lines.
fn list_deletions(b: &[u8], items: &[Range<usize>], comment: Option<u8>) -> Vec<Vec<Range<usize>>> {
    let marker = comment.map(|c| [c]);
    let marker = marker.as_ref().map(|m| &m[..]);
    let commas: Vec<Option<usize>> = items
        .iter()
        .map(|r| {
            let p = skip_trivia(b, r.end, comment);
            (b.get(p) == Some(&b',')).then_some(p)
        })
        .collect();
    let n = items.len();
    let mut out = Vec::with_capacity(n);
    for (i, item) in items.iter().enumerate() {
        let tail = commas[i].map_or(item.end, |c| c + 1);
        let own_line = only_blanks_before(b, item.start) && rest_is_trivia(b, tail, marker);
        let whole = line_start(b, item.start)..line_end(b, tail);
        let ranges = if i + 1 < n {
            match commas[i] {
                Some(_) if own_line => vec![whole],
                _ => vec![item.start..items[i + 1].start],
            }
        } else if let Some(c) = commas[i] {
            if own_line {
                vec![whole]
            } else {
                vec![item.start..c + 1]
            }
        } else if i == 0 {
            if own_line {
                vec![whole]
            } else {
                vec![item.start..item.end]
            }
        } else if let Some(prev_comma) = commas[i - 1] {
            if own_line {
                vec![prev_comma..prev_comma + 1, whole]
            } else {
                vec![prev_comma..item.end]
            }
        } else {
            Vec::new()
        };
        out.push(ranges);
    }
    out
}

fn parse_error(kind: ManifestKind, offset: Option<usize>, message: String) -> ManifestError {
    ManifestError::Parse {
        kind: kind.display_name(),
        offset,
        message,
    }
}

fn line_number(b: &[u8], pos: usize) -> usize {
    b[..pos.min(b.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

// ---------------------------------------------------------------------------------------------
// TOML: Cargo.toml, pyproject.toml, Pipfile
// ---------------------------------------------------------------------------------------------

struct TomlHeader {
    display: String,
    span: Range<usize>,
}

/// "`[name]`" for a table, "`[[name]]` #n" for an entry of an array of tables.
fn toml_table_display(name: &str, aot_index: Option<usize>) -> String {
    match aot_index {
        Some(i) => format!("`[[{name}]]` #{}", i + 1),
        None => format!("`[{name}]`"),
    }
}

struct TomlEntry<'a> {
    /// Dotted path of the table holding the entry.
    table: String,
    /// How the table is shown in labels.
    display: String,
    is_root: bool,
    key: String,
    key_start: usize,
    value: &'a toml_edit::Value,
}

fn toml_candidates(kind: ManifestKind, src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let doc = toml_edit::Document::parse(src).map_err(|e| {
        let offset = e.span().map(|s| s.start);
        let at = offset.map_or(String::new(), |o| {
            format!(" (line {})", line_number(src.as_bytes(), o))
        });
        parse_error(kind, offset, format!("{}{at}", e.message().trim_end()))
    })?;
    let b = src.as_bytes();
    let file = kind.display_name();
    let mut headers = Vec::new();
    let mut entries = Vec::new();
    toml_collect(
        doc.as_table(),
        &mut Vec::new(),
        true,
        None,
        &mut headers,
        &mut entries,
    );
    headers.sort_by_key(|h| h.span.start);
    entries.sort_by_key(|e| e.key_start);

    let mut anchors: Vec<usize> = headers
        .iter()
        .map(|h| h.span.end)
        .chain(entries.iter().filter_map(|e| e.value.span()).map(|s| s.end))
        .collect();
    anchors.sort_unstable();
    let floor = |pos: usize| {
        let n = anchors.partition_point(|&a| a <= pos);
        if n == 0 { 0 } else { anchors[n - 1] }
    };

    let mut levels = Levels::new(src);
    let protected: &[&[&str]] = match kind {
        ManifestKind::CargoToml => &[&["package", "name"], &["package", "version"]],
        ManifestKind::PyprojectToml => &[&["project", "name"]],
        _ => &[],
    };
    levels.protected = protected
        .iter()
        .filter_map(|path| toml_key_span(doc.as_table(), path))
        .collect();

    let starts: Vec<usize> = headers
        .iter()
        .map(|h| extend_over_comments(b, line_start(b, h.span.start), floor(h.span.start), b"#"))
        .collect();
    for (i, header) in headers.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(b.len());
        levels.push(
            0,
            format!("table {} of {file}", header.display),
            vec![starts[i]..end],
        );
    }

    for entry in &entries {
        let Some(value_span) = entry.value.span() else {
            continue;
        };
        let start = extend_over_comments(
            b,
            line_start(b, entry.key_start),
            floor(entry.key_start),
            b"#",
        );
        let end = line_end(b, value_span.end);
        levels.push(1, toml_entry_label(kind, entry), vec![start..end]);
        let path = if entry.is_root {
            entry.key.clone()
        } else {
            format!("{}.{}", entry.table, entry.key)
        };
        toml_value_children(b, entry.value, &path, 2, file, &mut levels);
    }
    Ok(levels.finish())
}

fn toml_collect<'a>(
    table: &'a toml_edit::Table,
    path: &mut Vec<String>,
    is_root: bool,
    aot_index: Option<usize>,
    headers: &mut Vec<TomlHeader>,
    entries: &mut Vec<TomlEntry<'a>>,
) {
    let standard = is_root || (!table.is_implicit() && !table.is_dotted());
    if standard {
        let name = path.join(".");
        let display = toml_table_display(&name, aot_index);
        if !is_root && let Some(span) = table.span() {
            headers.push(TomlHeader {
                display: display.clone(),
                span,
            });
        }
        for (keys, value) in table.get_values() {
            let Some(leaf) = keys.last() else { continue };
            let Some(key_span) = leaf.span() else {
                continue;
            };
            let key = keys
                .iter()
                .map(|k| k.display_repr().into_owned())
                .collect::<Vec<_>>()
                .join(".");
            entries.push(TomlEntry {
                table: name.clone(),
                display: display.clone(),
                is_root,
                key,
                key_start: key_span.start,
                value,
            });
        }
    }
    for (name, item) in table.iter() {
        let key = table
            .key(name)
            .map_or_else(|| name.to_string(), |k| k.display_repr().into_owned());
        match item {
            toml_edit::Item::Table(t) => {
                path.push(key);
                toml_collect(t, path, false, None, headers, entries);
                path.pop();
            }
            toml_edit::Item::ArrayOfTables(array) => {
                path.push(key);
                for (i, t) in array.iter().enumerate() {
                    toml_collect(t, path, false, Some(i), headers, entries);
                }
                path.pop();
            }
            _ => {}
        }
    }
}

fn toml_key_span(table: &dyn toml_edit::TableLike, path: &[&str]) -> Option<Range<usize>> {
    match path {
        [] => None,
        [leaf] => table.key(leaf)?.span(),
        [first, rest @ ..] => toml_key_span(table.get(first)?.as_table_like()?, rest),
    }
}

fn toml_entry_label(kind: ManifestKind, entry: &TomlEntry<'_>) -> String {
    let file = kind.display_name();
    if entry.is_root {
        return format!("key `{}` of {file}", entry.key);
    }
    let table = entry.table.as_str();
    let display = entry.display.as_str();
    let last = table.rsplit('.').next().unwrap_or("");
    let dependency_table = match kind {
        ManifestKind::Pipfile => matches!(last, "packages" | "dev-packages"),
        _ => matches!(
            last,
            "dependencies"
                | "dev-dependencies"
                | "build-dependencies"
                | "dev_dependencies"
                | "build_dependencies"
        ),
    };
    if dependency_table {
        if display == "`[dependencies]`" || display == "`[packages]`" {
            format!("dependency `{}` of {file}", entry.key)
        } else {
            format!("dependency `{}` in {display} of {file}", entry.key)
        }
    } else if kind == ManifestKind::CargoToml && display == "`[features]`" {
        format!("feature `{}` of {file}", entry.key)
    } else {
        format!("key `{}` in {display} of {file}", entry.key)
    }
}

fn toml_value_children(
    b: &[u8],
    value: &toml_edit::Value,
    path: &str,
    level: usize,
    file: &str,
    levels: &mut Levels<'_>,
) {
    match value {
        toml_edit::Value::Array(array) => {
            let items: Option<Vec<Range<usize>>> = array.iter().map(|v| v.span()).collect();
            let Some(items) = items else { return };
            let deletions = list_deletions(b, &items, Some(b'#'));
            for (i, ranges) in deletions.into_iter().enumerate() {
                levels.push(
                    level,
                    format!("item {} of `{path}` in {file}", i + 1),
                    ranges,
                );
            }
            for (i, item) in array.iter().enumerate() {
                toml_value_children(
                    b,
                    item,
                    &format!("{path}[{}]", i + 1),
                    level + 1,
                    file,
                    levels,
                );
            }
        }
        toml_edit::Value::InlineTable(table) => {
            let Some(span) = table.span() else { return };
            let mut members: Vec<(String, Range<usize>, &toml_edit::Value)> = Vec::new();
            for (keys, v) in table.get_values() {
                let Some(v_span) = v.span() else { return };
                let key = keys
                    .iter()
                    .map(|k| k.display_repr().into_owned())
                    .collect::<Vec<_>>()
                    .join(".");
                members.push((key, v_span, v));
            }
            members.sort_by_key(|m| m.1.end);
            let mut items = Vec::with_capacity(members.len());
            let mut cursor = span.start + 1;
            for (_, v_span, _) in &members {
                let start = skip_trivia(b, cursor, Some(b'#'));
                if start >= v_span.end {
                    return;
                }
                items.push(start..v_span.end);
                let p = skip_trivia(b, v_span.end, Some(b'#'));
                cursor = if b.get(p) == Some(&b',') { p + 1 } else { p };
            }
            let deletions = list_deletions(b, &items, Some(b'#'));
            for ((key, _, _), ranges) in members.iter().zip(deletions) {
                levels.push(level, format!("key `{key}` of `{path}` in {file}"), ranges);
            }
            for (key, _, v) in &members {
                toml_value_children(b, v, &format!("{path}.{key}"), level + 1, file, levels);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// JSON: package.json, composer.json
// ---------------------------------------------------------------------------------------------

fn strict_json_options() -> jsonc_parser::ParseOptions {
    jsonc_parser::ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn json_candidates(kind: ManifestKind, src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    // serde_json enforces RFC 8259 exactly; jsonc-parser (in strict mode) supplies the spans.
    if let Err(e) = serde_json::from_str::<serde_json::Value>(src) {
        return Err(parse_error(kind, None, e.to_string()));
    }
    let parsed = jsonc_parser::parse_to_ast(
        src,
        &jsonc_parser::CollectOptions::default(),
        &strict_json_options(),
    )
    .map_err(|e| parse_error(kind, Some(e.range().start), e.to_string()))?;
    let Some(jsonc_parser::ast::Value::Object(root)) = parsed.value else {
        return Err(ManifestError::Shape {
            kind: kind.display_name(),
            message: "the top-level value is not an object".to_string(),
        });
    };
    let file = kind.display_name();
    let b = src.as_bytes();
    let mut levels = Levels::new(src);
    let items: Vec<Range<usize>> = root
        .properties
        .iter()
        .map(|p| p.range.start..p.range.end)
        .collect();
    let deletions = list_deletions(b, &items, None);
    for (prop, ranges) in root.properties.iter().zip(deletions) {
        let name = prop.name.as_str();
        if name != "name" && name != "version" {
            levels.push(0, format!("member `{name}` of {file}"), ranges);
        }
    }
    for prop in &root.properties {
        json_children(b, &prop.value, prop.name.as_str(), 1, file, &mut levels);
    }
    Ok(levels.finish())
}

fn json_children(
    b: &[u8],
    value: &jsonc_parser::ast::Value<'_>,
    path: &str,
    level: usize,
    file: &str,
    levels: &mut Levels<'_>,
) {
    use jsonc_parser::ast::Value;
    use jsonc_parser::common::Ranged;
    match value {
        Value::Object(object) => {
            let items: Vec<Range<usize>> = object
                .properties
                .iter()
                .map(|p| p.range.start..p.range.end)
                .collect();
            let deletions = list_deletions(b, &items, None);
            for (prop, ranges) in object.properties.iter().zip(deletions) {
                let name = prop.name.as_str();
                let label = match (level, path) {
                    (1, "dependencies" | "require") => format!("dependency `{name}` of {file}"),
                    (
                        1,
                        "devDependencies"
                        | "peerDependencies"
                        | "optionalDependencies"
                        | "require-dev",
                    ) => format!("dependency `{name}` in `{path}` of {file}"),
                    (1, "scripts") => format!("script `{name}` of {file}"),
                    _ => format!("member `{name}` of `{path}` in {file}"),
                };
                levels.push(level, label, ranges);
            }
            for prop in &object.properties {
                let child = format!("{path}.{}", prop.name.as_str());
                json_children(b, &prop.value, &child, level + 1, file, levels);
            }
        }
        Value::Array(array) => {
            let items: Vec<Range<usize>> = array
                .elements
                .iter()
                .map(|e| {
                    let r = e.range();
                    r.start..r.end
                })
                .collect();
            let deletions = list_deletions(b, &items, None);
            for (i, ranges) in deletions.into_iter().enumerate() {
                levels.push(
                    level,
                    format!("item {} of `{path}` in {file}", i + 1),
                    ranges,
                );
            }
            for (i, element) in array.elements.iter().enumerate() {
                let child = format!("{path}[{}]", i + 1);
                json_children(b, element, &child, level + 1, file, levels);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// XML: pom.xml, MSBuild
// ---------------------------------------------------------------------------------------------

struct XmlOpen {
    name: String,
    candidate: Option<usize>,
}

struct XmlCandidate {
    level: usize,
    /// Where the deletion starts if the element is alone on its lines (comments above included).
    line_start: usize,
    elem_start: usize,
    name: String,
    detail: Option<String>,
    group_id: Option<String>,
    artifact_id: Option<String>,
    text: String,
    ordinal: usize,
    range: Option<Range<usize>>,
}

fn xml_is_candidate(kind: ManifestKind, name: &str, parent: Option<&str>) -> bool {
    match kind {
        ManifestKind::PomXml => matches!(
            (name, parent),
            ("dependency", Some("dependencies"))
                | ("plugin", Some("plugins"))
                | ("module", Some("modules"))
                | ("profile", Some("profiles"))
        ),
        _ => name == "ItemGroup" || name == "PropertyGroup" || parent == Some("ItemGroup"),
    }
}

/// Line start of the comments directly above the element starting at `elem_start` (each comment
/// alone on its lines, no blank line in between), or the element's own line start.
fn xml_comments_above(b: &[u8], elem_start: usize, comments: &[Range<usize>]) -> usize {
    let mut top = line_start(b, elem_start);
    for c in comments.iter().rev() {
        if !(only_blanks_before(b, c.start) && rest_is_trivia(b, c.end, None))
            || line_end(b, c.end) != top
        {
            break;
        }
        top = line_start(b, c.start);
    }
    top
}

fn xml_candidates(kind: ManifestKind, src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    use quick_xml::events::Event;
    let name_of_kind = kind.display_name();
    let refuse = |reason| ManifestError::Refused {
        kind: name_of_kind,
        reason,
    };
    if src.contains("<!ENTITY") {
        return Err(refuse("the document contains an ENTITY declaration"));
    }
    let b = src.as_bytes();
    let mut reader = quick_xml::Reader::from_str(src);
    {
        let config = reader.config_mut();
        config.check_comments = true;
        config.check_end_names = true;
        config.allow_unmatched_ends = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
    }
    let position = |p: u64| usize::try_from(p).unwrap_or(usize::MAX).min(b.len());
    let mut stack: Vec<XmlOpen> = Vec::new();
    let mut cands: Vec<XmlCandidate> = Vec::new();
    let mut comments: Vec<Range<usize>> = Vec::new();
    let mut ordinals: std::collections::HashMap<String, usize> = Default::default();
    let mut root: Option<String> = None;
    let mut root_closed = false;
    loop {
        let before = position(reader.buffer_position());
        let event = reader.read_event().map_err(|e| {
            let at = position(reader.error_position());
            parse_error(kind, Some(at), format!("{e} (line {})", line_number(b, at)))
        })?;
        let after = position(reader.buffer_position());
        let fail = |message: &str| {
            parse_error(
                kind,
                Some(before),
                format!("{message} (line {})", line_number(b, before)),
            )
        };
        match event {
            Event::DocType(content) => {
                return Err(refuse(if content.contains("ENTITY") {
                    "the document contains an ENTITY declaration"
                } else {
                    "the document contains a DOCTYPE declaration"
                }));
            }
            Event::Start(ref e) | Event::Empty(ref e) => {
                for attribute in e.attributes() {
                    attribute.map_err(|err| fail(&format!("bad attribute: {err}")))?;
                }
                let name = e.local_name().as_ref().to_string();
                if stack.is_empty() {
                    if root.is_some() {
                        return Err(fail("more than one root element"));
                    }
                    root = Some(name.clone());
                }
                let parent = stack.last().map(|o| o.name.as_str());
                let candidate = if xml_is_candidate(kind, &name, parent) {
                    let level = stack.iter().filter(|o| o.candidate.is_some()).count();
                    let attr = |key: &str| {
                        e.attributes()
                            .flatten()
                            .find(|a| a.key.local_name().as_ref() == key)
                            .map(|a| a.value.into_owned())
                    };
                    let detail = if name == "ItemGroup" || name == "PropertyGroup" {
                        attr("Condition").map(|c| format!("Condition `{c}`"))
                    } else {
                        attr("Include")
                            .or_else(|| attr("Update"))
                            .or_else(|| attr("Remove"))
                    };
                    let ordinal = ordinals.entry(name.clone()).or_insert(0);
                    *ordinal += 1;
                    cands.push(XmlCandidate {
                        level,
                        line_start: xml_comments_above(b, before, &comments),
                        elem_start: before,
                        name: name.clone(),
                        detail,
                        group_id: None,
                        artifact_id: None,
                        text: String::new(),
                        ordinal: *ordinal,
                        range: None,
                    });
                    Some(cands.len() - 1)
                } else {
                    None
                };
                comments.clear();
                if matches!(event, Event::Start(_)) {
                    stack.push(XmlOpen { name, candidate });
                } else {
                    if let Some(ci) = candidate {
                        cands[ci].range = Some(before..after);
                    }
                    if stack.is_empty() {
                        root_closed = true;
                    }
                }
            }
            Event::End(_) => {
                comments.clear();
                let Some(open) = stack.pop() else {
                    return Err(fail("unmatched end tag"));
                };
                if let Some(ci) = open.candidate {
                    cands[ci].range = Some(cands[ci].elem_start..after);
                }
                if stack.is_empty() {
                    root_closed = true;
                }
            }
            Event::Text(text) => {
                let content: &str = &text;
                if content.trim().is_empty() {
                    continue;
                }
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("text outside the root element"));
                }
                let n = stack.len();
                if let Some(ci) = stack[n - 1].candidate {
                    cands[ci].text.push_str(content.trim());
                } else if n >= 2
                    && let Some(ci) = stack[n - 2].candidate
                {
                    let slot = match stack[n - 1].name.as_str() {
                        "groupId" => &mut cands[ci].group_id,
                        "artifactId" => &mut cands[ci].artifact_id,
                        "id" => &mut cands[ci].detail,
                        _ => continue,
                    };
                    slot.get_or_insert_with(|| content.trim().to_string());
                }
            }
            Event::GeneralRef(reference) => {
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("reference outside the root element"));
                }
                if reference.is_char_ref() {
                    match reference.resolve_char_ref() {
                        Ok(Some(_)) => {}
                        _ => return Err(fail("invalid character reference")),
                    }
                } else if !matches!(&*reference, "lt" | "gt" | "amp" | "apos" | "quot") {
                    return Err(fail("reference to an undeclared entity"));
                }
            }
            Event::CData(_) => {
                comments.clear();
                if stack.is_empty() {
                    return Err(fail("CDATA outside the root element"));
                }
            }
            Event::Comment(_) => comments.push(before..after),
            Event::Decl(_) | Event::PI(_) => comments.clear(),
            Event::Eof => break,
        }
        if root_closed && !stack.is_empty() {
            return Err(fail("content after the root element"));
        }
    }
    if !stack.is_empty() {
        return Err(parse_error(
            kind,
            Some(b.len()),
            format!(
                "unclosed element `{}`",
                stack.last().map_or("", |o| &o.name)
            ),
        ));
    }
    let expected = if kind == ManifestKind::PomXml {
        "project"
    } else {
        "Project"
    };
    match root {
        Some(ref r) if r == expected => {}
        Some(r) => {
            return Err(ManifestError::Shape {
                kind: name_of_kind,
                message: format!("the root element is `{r}`, not `{expected}`"),
            });
        }
        None => {
            return Err(ManifestError::Shape {
                kind: name_of_kind,
                message: "there is no root element".to_string(),
            });
        }
    }
    let mut levels = Levels::new(src);
    for c in cands {
        let Some(range) = c.range.clone() else {
            continue;
        };
        let delete = if only_blanks_before(b, range.start) && rest_is_trivia(b, range.end, None) {
            c.line_start..line_end(b, range.end)
        } else {
            range
        };
        levels.push(c.level, xml_label(kind, &c), vec![delete]);
    }
    Ok(levels.finish())
}

fn xml_label(kind: ManifestKind, c: &XmlCandidate) -> String {
    let file = kind.display_name();
    let coordinates = match (&c.group_id, &c.artifact_id) {
        (Some(g), Some(a)) => Some(format!("{g}:{a}")),
        (None, Some(a)) => Some(a.clone()),
        _ => None,
    };
    match (kind, c.name.as_str()) {
        (ManifestKind::PomXml, "dependency" | "plugin") => match coordinates {
            Some(co) => format!("{} `{co}` of {file}", c.name),
            None => format!("{} #{} of {file}", c.name, c.ordinal),
        },
        (ManifestKind::PomXml, "module") if !c.text.is_empty() => {
            format!("module `{}` of {file}", c.text)
        }
        (ManifestKind::PomXml, _) => match &c.detail {
            Some(id) => format!("{} `{id}` of {file}", c.name),
            None => format!("{} #{} of {file}", c.name, c.ordinal),
        },
        (_, "ItemGroup" | "PropertyGroup") => match &c.detail {
            Some(condition) => format!("`{}` #{} ({condition}) of {file}", c.name, c.ordinal),
            None => format!("`{}` #{} of {file}", c.name, c.ordinal),
        },
        _ => match &c.detail {
            Some(include) => format!("`{}` `{include}` of {file}", c.name),
            None => format!("`{}` #{} of {file}", c.name, c.ordinal),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// go.mod, go.work
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum GoToken {
    Word(String),
    Str(String),
    Open,
    Close,
}

struct GoLine {
    start: usize,
    end: usize,
    tokens: Vec<GoToken>,
}

fn go_lex(kind: ManifestKind, src: &str) -> Result<Vec<GoLine>, ManifestError> {
    let b = src.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    while start < b.len() {
        let end = line_end(b, start);
        let err = |message: &str| {
            parse_error(
                kind,
                Some(start),
                format!("{message} (line {})", line_number(b, start)),
            )
        };
        let mut tokens = Vec::new();
        let mut p = start;
        while p < end {
            match b[p] {
                b' ' | b'\t' | b'\r' | b'\n' => p += 1,
                b'/' if b.get(p + 1) == Some(&b'/') => break,
                b'/' if b.get(p + 1) == Some(&b'*') => {
                    return Err(err("go.mod files use // comments, not /* */"));
                }
                b'(' => {
                    tokens.push(GoToken::Open);
                    p += 1;
                }
                b')' => {
                    tokens.push(GoToken::Close);
                    p += 1;
                }
                q @ (b'"' | b'`') => {
                    let s = p;
                    p += 1;
                    loop {
                        match b.get(p) {
                            None | Some(b'\n') => return Err(err("unterminated string")),
                            Some(b'\\') if q == b'"' => {
                                if matches!(b.get(p + 1), None | Some(b'\n')) {
                                    return Err(err("unterminated string"));
                                }
                                p += 2;
                            }
                            Some(&c) if c == q => {
                                p += 1;
                                break;
                            }
                            Some(_) => p += 1,
                        }
                    }
                    let p = p.min(end);
                    tokens.push(GoToken::Str(src[s + 1..p - 1].to_string()));
                }
                _ => {
                    let s = p;
                    while p < end
                        && !matches!(
                            b[p],
                            b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b'"' | b'`'
                        )
                        && !b[p..].starts_with(b"//")
                    {
                        p += 1;
                    }
                    tokens.push(GoToken::Word(src[s..p].to_string()));
                }
            }
        }
        lines.push(GoLine { start, end, tokens });
        start = end;
    }
    Ok(lines)
}

fn go_token_text(t: Option<&GoToken>) -> &str {
    match t {
        Some(GoToken::Word(w)) | Some(GoToken::Str(w)) => w,
        _ => "",
    }
}

fn go_candidates(kind: ManifestKind, src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let b = src.as_bytes();
    let file = kind.display_name();
    let lines = go_lex(kind, src)?;
    let err = |line: &GoLine, message: &str| {
        parse_error(
            kind,
            Some(line.start),
            format!("{message} (line {})", line_number(b, line.start)),
        )
    };
    let mut levels = Levels::new(src);
    // End of the last line holding tokens: comment lines above a directive never reach past it.
    let mut floor = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if line.tokens.is_empty() {
            i += 1;
            continue;
        }
        let verb = match line.tokens.first() {
            Some(GoToken::Word(w)) => w.clone(),
            _ => return Err(err(line, "expected a directive")),
        };
        let protected = verb == "module" || verb == "go";
        let opens_block = line.tokens.last() == Some(&GoToken::Open);
        let parens = line
            .tokens
            .iter()
            .filter(|t| matches!(t, GoToken::Open | GoToken::Close))
            .count();
        if parens > usize::from(opens_block) {
            return Err(err(line, "unexpected parenthesis"));
        }
        let top = extend_over_comments(b, line.start, floor, b"//");
        if !opens_block {
            if !protected {
                let arg = go_token_text(line.tokens.get(1));
                let label = if arg.is_empty() {
                    format!("`{verb}` directive of {file}")
                } else {
                    format!("`{verb} {arg}` directive of {file}")
                };
                levels.push(0, label, vec![top..line.end]);
            }
            floor = line.end;
            i += 1;
            continue;
        }
        let mut entry_floor = line.end;
        let mut j = i + 1;
        let close = loop {
            let Some(inner) = lines.get(j) else {
                return Err(err(line, "unterminated block"));
            };
            match inner.tokens.first() {
                None => {}
                Some(GoToken::Close) => {
                    if inner.tokens.len() != 1 {
                        return Err(err(inner, "unexpected input after `)`"));
                    }
                    break j;
                }
                Some(_) => {
                    if inner
                        .tokens
                        .iter()
                        .any(|t| matches!(t, GoToken::Open | GoToken::Close))
                    {
                        return Err(err(inner, "unexpected parenthesis"));
                    }
                    if !protected {
                        let entry_top = extend_over_comments(b, inner.start, entry_floor, b"//");
                        let arg = go_token_text(inner.tokens.first());
                        levels.push(
                            1,
                            format!("`{verb}` entry `{arg}` of {file}"),
                            vec![entry_top..inner.end],
                        );
                    }
                    entry_floor = inner.end;
                }
            }
            j += 1;
        };
        if !protected {
            levels.push(
                0,
                format!("`{verb}` block of {file}"),
                vec![top..lines[close].end],
            );
        }
        floor = lines[close].end;
        i = close + 1;
    }
    Ok(levels.finish())
}

// ---------------------------------------------------------------------------------------------
// Requirements files
// ---------------------------------------------------------------------------------------------

/// One logical line of a requirements file: physical lines joined by backslash continuations.
struct ReqLine {
    start: usize,
    end: usize,
    /// The joined text with its comment removed and blanks trimmed (empty for comments and blanks).
    text: String,
}

/// Splits a requirements file into logical lines the way pip does: a line ending in a backslash
/// continues onto the next unless it is a comment line; a comment line ends a continuation;
/// a comment starts at a `#` that begins the line or follows whitespace.
fn req_logical_lines(src: &str) -> Vec<ReqLine> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut start = 0;
    while start < b.len() {
        let end = line_end(b, start);
        let mut content = &src[start..end];
        content = content.strip_suffix('\n').unwrap_or(content);
        content = content.strip_suffix('\r').unwrap_or(content);
        let is_comment = content.trim_start().starts_with('#');
        if !content.ends_with('\\') || is_comment {
            let (first, mut joined) = pending.take().unwrap_or((start, String::new()));
            if is_comment {
                joined.push(' ');
            }
            joined.push_str(content);
            out.push(ReqLine {
                start: first,
                end,
                text: req_strip_comment(&joined),
            });
        } else {
            let entry = pending.get_or_insert_with(|| (start, String::new()));
            entry.1.push_str(content.trim_matches('\\'));
        }
        start = end;
    }
    if let Some((first, joined)) = pending {
        out.push(ReqLine {
            start: first,
            end: b.len(),
            text: req_strip_comment(&joined),
        });
    }
    out
}

fn req_strip_comment(line: &str) -> String {
    let mut cut = line.len();
    let mut after_space = true;
    for (i, c) in line.char_indices() {
        if c == '#' && after_space {
            cut = i;
            break;
        }
        after_space = c.is_whitespace();
    }
    line[..cut].trim().to_string()
}

/// pip's requirements-file options: long name, short letter, whether it takes a value.
const REQ_OPTIONS: &[(&str, Option<char>, bool)] = &[
    ("--requirement", Some('r'), true),
    ("--constraint", Some('c'), true),
    ("--editable", Some('e'), true),
    ("--index-url", Some('i'), true),
    ("--extra-index-url", None, true),
    ("--no-index", None, false),
    ("--find-links", Some('f'), true),
    ("--no-binary", None, true),
    ("--only-binary", None, true),
    ("--prefer-binary", None, false),
    ("--require-hashes", None, false),
    ("--pre", None, false),
    ("--trusted-host", None, true),
    ("--use-feature", None, true),
    ("--hash", None, true),
    ("--config-settings", None, true),
    ("--global-option", None, true),
];

/// Splits like Python's `shlex.split` (POSIX mode, no comments), which pip uses for option lines.
fn shell_split(line: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            '\'' => {
                in_token = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    current.push(q);
                }
            }
            '"' => {
                in_token = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => current.push(e),
                            Some(e) => {
                                current.push('\\');
                                current.push(e);
                            }
                            None => current.push('\\'),
                        },
                        q => current.push(q),
                    }
                }
            }
            '\\' => {
                in_token = true;
                if let Some(e) = chars.next() {
                    current.push(e);
                }
            }
            c => {
                in_token = true;
                current.push(c);
            }
        }
    }
    if in_token {
        tokens.push(current);
    }
    tokens
}

/// The options of an option line, as (canonical long name, value) pairs; flags get an empty value.
fn req_options(line: &str) -> Vec<(&'static str, String)> {
    let tokens = shell_split(line);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        i += 1;
        let (option, inline) = if let Some(long) = token.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            if name.is_empty() {
                continue;
            }
            let exact = REQ_OPTIONS.iter().find(|o| &o.0[2..] == name);
            let option = exact.or_else(|| {
                let mut matching = REQ_OPTIONS.iter().filter(|o| o.0[2..].starts_with(name));
                match (matching.next(), matching.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            });
            (option, inline)
        } else if let Some(short) = token.strip_prefix('-') {
            let mut chars = short.chars();
            let Some(letter) = chars.next() else { continue };
            let rest = chars.as_str();
            let option = REQ_OPTIONS.iter().find(|o| o.1 == Some(letter));
            (option, (!rest.is_empty()).then(|| rest.to_string()))
        } else {
            continue;
        };
        let Some(&(name, _, takes_value)) = option else {
            continue;
        };
        if !takes_value {
            out.push((name, String::new()));
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None => {
                let v = tokens.get(i).cloned();
                i += 1;
                v
            }
        };
        if let Some(value) = value {
            out.push((name, value));
        }
    }
    out
}

fn req_label(text: &str) -> String {
    let file = ManifestKind::Requirements.display_name();
    if text.starts_with('-') {
        let options = req_options(text);
        return match options.first() {
            Some(("--requirement", v)) => format!("include `-r {v}` of {file}"),
            Some(("--constraint", v)) => format!("constraints include `-c {v}` of {file}"),
            Some(("--editable", v)) => format!("editable requirement `{v}` of {file}"),
            Some((name, _)) => format!("option `{name}` of {file}"),
            None => {
                let first = text.split_whitespace().next().unwrap_or(text);
                format!("option `{first}` of {file}")
            }
        };
    }
    let first = text.split_whitespace().next().unwrap_or(text);
    let name_end = first
        .find([';', '[', '<', '>', '=', '!', '~', '@', ',', '('])
        .unwrap_or(first.len());
    let name = if name_end == 0 {
        first
    } else {
        &first[..name_end]
    };
    format!("requirement `{name}` of {file}")
}

fn requirements_candidates(src: &str) -> Vec<Vec<ManifestEdit>> {
    let b = src.as_bytes();
    let mut levels = Levels::new(src);
    let mut floor = 0;
    for line in req_logical_lines(src) {
        if line.text.is_empty() {
            continue;
        }
        let top = extend_over_comments(b, line.start, floor, b"#");
        levels.push(0, req_label(&line.text), vec![top..line.end]);
        floor = line.end;
    }
    levels.finish()
}

// ---------------------------------------------------------------------------------------------
// Gemfile
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RbKind {
    Ident,
    Label,
    Symbol,
    Str,
    Num,
    Op,
    Open,
    Close,
    Semi,
    Newline,
    BlockParams,
}

#[derive(Debug, Clone)]
struct RbToken {
    kind: RbKind,
    text: String,
    start: usize,
    end: usize,
    after_dot: bool,
}

impl RbToken {
    /// The keyword or identifier this token spells, unless it is a method name after `.`.
    fn word(&self) -> Option<&str> {
        (self.kind == RbKind::Ident && !self.after_dot).then_some(self.text.as_str())
    }
}

/// Keywords after which an expression (not an operator) follows.
const RB_EXPRESSION_KEYWORDS: &[&str] = &[
    "if", "unless", "while", "until", "and", "or", "not", "return", "when", "case", "do", "then",
    "else", "elsif", "begin", "in", "yield", "break", "next",
];

/// Operators that, at the end of a line, continue the expression onto the next line.
const RB_CONTINUING_OPS: &[&str] = &[
    ",", ".", "&.", "::", "&&", "||", "+", "-", "*", "/", "%", "**", "=", "==", "===", "!=", "=~",
    "!~", "<", ">", "<=", ">=", "<=>", "<<", ">>", "&", "|", "^", "=>", "->", "?", ":", "!", "~",
    "+=", "-=", "*=", "/=", "||=", "&&=", "|=", "&=", "%=", "**=", "<<=", ">>=", "^=",
];

const RB_OPS: &[&str] = &[
    "**=", "<=>", "===", "...", "<<=", ">>=", "&&=", "||=", "**", "==", "!=", ">=", "<=", "&&",
    "||", "<<", ">>", "=~", "!~", "::", "..", "=>", "->", "+=", "-=", "*=", "/=", "%=", "|=", "&=",
    "^=", "&.", "+", "-", "*", "/", "%", "=", "<", ">", "!", "&", "|", "^", "~", "?", ":", ",",
    ".",
];

/// A lexer for the subset of Ruby found in Gemfiles: enough to know where statements, strings,
/// heredocs, brackets and `do`/`end` blocks begin and end.
struct RbLexer<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    tokens: Vec<RbToken>,
    brackets: Vec<u8>,
    heredocs: Vec<(String, bool, usize)>,
    /// Ends of `=begin`/`=end` comment blocks.
    barriers: Vec<usize>,
    space: bool,
}

type RbResult<T> = Result<T, (usize, String)>;

fn rb_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

impl<'a> RbLexer<'a> {
    fn new(src: &'a str) -> Self {
        RbLexer {
            src,
            b: src.as_bytes(),
            pos: 0,
            tokens: Vec::new(),
            brackets: Vec::new(),
            heredocs: Vec::new(),
            barriers: Vec::new(),
            space: true,
        }
    }

    fn fail<T>(&self, message: &str) -> RbResult<T> {
        Err((self.pos.min(self.b.len()), message.to_string()))
    }

    fn peek(&self, offset: usize) -> Option<u8> {
        self.b.get(self.pos + offset).copied()
    }

    fn push(&mut self, kind: RbKind, start: usize) {
        let end = self.pos.min(self.b.len());
        let after_dot = self
            .tokens
            .last()
            .is_some_and(|t| t.kind == RbKind::Op && matches!(t.text.as_str(), "." | "&." | "::"));
        let text = if matches!(kind, RbKind::Ident | RbKind::Op) {
            self.src.get(start..end).unwrap_or("").to_string()
        } else {
            String::new()
        };
        self.tokens.push(RbToken {
            kind,
            text,
            start,
            end,
            after_dot,
        });
        self.space = false;
    }

    /// Whether the previous token ends a value, so that `/`, `%`, `<<` and `?` are operators.
    fn after_value(&self) -> bool {
        match self.tokens.last() {
            None => false,
            Some(t) => match t.kind {
                RbKind::Ident => t.after_dot || !RB_EXPRESSION_KEYWORDS.contains(&t.text.as_str()),
                RbKind::Symbol | RbKind::Str | RbKind::Num | RbKind::Close => true,
                _ => false,
            },
        }
    }

    /// Whether a literal may start here: not after a value, or in command-argument position
    /// (`method %w[a b]`: an identifier, a space, then no space).
    fn literal_allowed(&self) -> bool {
        if !self.after_value() {
            return true;
        }
        let command = self
            .tokens
            .last()
            .is_some_and(|t| t.kind == RbKind::Ident && !t.after_dot);
        command
            && self.space
            && self
                .peek(1)
                .is_some_and(|c| !c.is_ascii_whitespace() && c != b'=')
    }

    fn run(&mut self) -> RbResult<()> {
        while self.pos < self.b.len() {
            let c = self.b[self.pos];
            let at_line_start = self.pos == 0 || self.b[self.pos - 1] == b'\n';
            match c {
                b' ' | b'\t' | b'\r' | 0x0c => {
                    self.pos += 1;
                    self.space = true;
                }
                b'\\'
                    if self.peek(1) == Some(b'\n')
                        || (self.peek(1) == Some(b'\r') && self.peek(2) == Some(b'\n')) =>
                {
                    self.pos = line_end(self.b, self.pos);
                    self.skip_heredoc_bodies()?;
                    self.space = true;
                }
                b'\n' => self.newline()?,
                b'#' => self.pos = line_end(self.b, self.pos).min(self.next_newline()),
                b'=' if at_line_start && self.line_word_is("=begin") => {
                    self.skip_block_comment()?
                }
                b'_' if at_line_start && self.line_word_is("__END__") => self.pos = self.b.len(),
                b'"' | b'`' => {
                    let s = self.pos;
                    self.pos += 1;
                    self.scan_string(c, None, true, 0)?;
                    self.push(RbKind::Str, s);
                }
                b'\'' => {
                    let s = self.pos;
                    self.pos += 1;
                    self.scan_string(c, None, false, 0)?;
                    self.push(RbKind::Str, s);
                }
                b':' => self.colon()?,
                b'%' if self.literal_allowed() && self.percent_literal()? => {}
                b'/' if self.literal_allowed() => {
                    let s = self.pos;
                    self.pos += 1;
                    self.scan_string(b'/', None, true, 0)?;
                    while self.peek(0).is_some_and(|c| c.is_ascii_alphabetic()) {
                        self.pos += 1;
                    }
                    self.push(RbKind::Str, s);
                }
                b'<' if self.peek(1) == Some(b'<') && self.literal_allowed() && self.heredoc() => {}
                b'?' if !self.after_value() && self.char_literal() => {}
                b'0'..=b'9' => {
                    let s = self.pos;
                    while let Some(d) = self.peek(0) {
                        if rb_ident_byte(d)
                            || (d == b'.' && self.peek(1).is_some_and(|n| n.is_ascii_digit()))
                        {
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                    self.push(RbKind::Num, s);
                }
                c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.identifier(),
                b'$' | b'@' => {
                    let s = self.pos;
                    self.pos += 1;
                    while self.peek(0) == Some(b'@') {
                        self.pos += 1;
                    }
                    if self.peek(0).is_some_and(rb_ident_byte) {
                        while self.peek(0).is_some_and(rb_ident_byte) {
                            self.pos += 1;
                        }
                    } else if c == b'$' && self.peek(0).is_some_and(|p| p.is_ascii_punctuation()) {
                        self.pos += 1;
                    }
                    self.push(RbKind::Ident, s);
                }
                b'(' | b'[' | b'{' => {
                    let s = self.pos;
                    self.brackets.push(c);
                    self.pos += 1;
                    self.push(RbKind::Open, s);
                    if c == b'{' {
                        self.block_params();
                    }
                }
                b')' | b']' | b'}' => {
                    let open = match c {
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    if self.brackets.pop() != Some(open) {
                        return self.fail("mismatched bracket");
                    }
                    let s = self.pos;
                    self.pos += 1;
                    self.push(RbKind::Close, s);
                }
                b';' => {
                    let s = self.pos;
                    self.pos += 1;
                    if self.brackets.is_empty() {
                        self.push(RbKind::Semi, s);
                    }
                }
                _ => {
                    let rest = &self.b[self.pos..];
                    let Some(op) = RB_OPS.iter().find(|op| rest.starts_with(op.as_bytes())) else {
                        return self.fail("unexpected character");
                    };
                    let s = self.pos;
                    self.pos += op.len();
                    self.push(RbKind::Op, s);
                }
            }
        }
        if !self.brackets.is_empty() {
            return self.fail("unclosed bracket");
        }
        if !self.heredocs.is_empty() {
            return self.fail("unterminated heredoc");
        }
        Ok(())
    }

    fn next_newline(&self) -> usize {
        self.b[self.pos..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |i| self.pos + i)
    }

    /// Whether the current line starts with `word` followed by a blank or the end of the line.
    fn line_word_is(&self, word: &str) -> bool {
        let rest = &self.b[self.pos..];
        rest.starts_with(word.as_bytes())
            && rest.get(word.len()).is_none_or(|c| c.is_ascii_whitespace())
    }

    fn skip_block_comment(&mut self) -> RbResult<()> {
        loop {
            self.pos = line_end(self.b, self.pos);
            if self.pos >= self.b.len() {
                return self.fail("unterminated =begin comment");
            }
            if self.line_word_is("=end") {
                self.pos = line_end(self.b, self.pos);
                self.barriers.push(self.pos);
                self.space = true;
                return Ok(());
            }
        }
    }

    fn newline(&mut self) -> RbResult<()> {
        let at = self.pos;
        self.pos += 1;
        self.space = true;
        let continues = self.tokens.last().is_some_and(|t| match t.kind {
            RbKind::Op => RB_CONTINUING_OPS.contains(&t.text.as_str()),
            RbKind::Label => true,
            RbKind::Ident => !t.after_dot && matches!(t.text.as_str(), "and" | "or" | "not"),
            _ => false,
        });
        self.skip_heredoc_bodies()?;
        if self.brackets.is_empty() && !continues && !self.next_line_starts_with_dot() {
            self.tokens.push(RbToken {
                kind: RbKind::Newline,
                text: String::new(),
                start: at,
                end: at + 1,
                after_dot: false,
            });
        }
        Ok(())
    }

    /// Whether the next line holding code starts with `.` or `&.` (a method chain continuing).
    fn next_line_starts_with_dot(&self) -> bool {
        let mut p = self.pos;
        loop {
            while p < self.b.len() && matches!(self.b[p], b' ' | b'\t' | b'\r') {
                p += 1;
            }
            match self.b.get(p) {
                Some(b'\n') => p += 1,
                Some(b'#') => p = line_end(self.b, p),
                _ => break,
            }
        }
        let rest = &self.b[p.min(self.b.len())..];
        (rest.first() == Some(&b'.') && rest.get(1) != Some(&b'.')) || rest.starts_with(b"&.")
    }

    fn skip_heredoc_bodies(&mut self) -> RbResult<()> {
        for (id, indented, token) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.b.len() {
                    return self.fail("unterminated heredoc");
                }
                let end = line_end(self.b, self.pos);
                let line = self.src.get(self.pos..end).unwrap_or("");
                let line = line.trim_end_matches(['\n', '\r']);
                let done = if indented {
                    line.trim() == id
                } else {
                    line == id
                };
                self.pos = end;
                if done {
                    if let Some(t) = self.tokens.get_mut(token) {
                        t.end = end;
                    }
                    break;
                }
            }
        }
        Ok(())
    }

    fn scan_string(
        &mut self,
        close: u8,
        open: Option<u8>,
        interpolate: bool,
        depth: usize,
    ) -> RbResult<()> {
        let mut nest = 0usize;
        loop {
            let Some(c) = self.peek(0) else {
                return self.fail("unterminated string");
            };
            if c == b'\\' {
                self.pos += 2;
            } else if interpolate && c == b'#' && self.peek(1) == Some(b'{') {
                self.pos += 2;
                self.scan_interpolation(depth + 1)?;
            } else if Some(c) == open {
                nest += 1;
                self.pos += 1;
            } else if c == close {
                self.pos += 1;
                if nest == 0 {
                    return Ok(());
                }
                nest -= 1;
            } else {
                self.pos += 1;
            }
        }
    }

    fn scan_interpolation(&mut self, depth: usize) -> RbResult<()> {
        if depth > 32 {
            return self.fail("string interpolation nested too deeply");
        }
        let mut braces = 0usize;
        loop {
            let Some(c) = self.peek(0) else {
                return self.fail("unterminated string interpolation");
            };
            match c {
                b'"' | b'`' => {
                    self.pos += 1;
                    self.scan_string(c, None, true, depth)?;
                }
                b'\'' => {
                    self.pos += 1;
                    self.scan_string(c, None, false, depth)?;
                }
                b'{' => {
                    braces += 1;
                    self.pos += 1;
                }
                b'}' => {
                    self.pos += 1;
                    if braces == 0 {
                        return Ok(());
                    }
                    braces -= 1;
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
    }

    fn colon(&mut self) -> RbResult<()> {
        let s = self.pos;
        match self.peek(1) {
            Some(q @ (b'"' | b'\'')) => {
                self.pos += 2;
                self.scan_string(q, None, q == b'"', 0)?;
                self.push(RbKind::Symbol, s);
            }
            Some(b':') => {
                self.pos += 2;
                self.push(RbKind::Op, s);
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                self.pos += 1;
                while self.peek(0).is_some_and(rb_ident_byte) {
                    self.pos += 1;
                }
                if matches!(self.peek(0), Some(b'?' | b'!' | b'=')) && self.peek(1) != Some(b'=') {
                    self.pos += 1;
                }
                self.push(RbKind::Symbol, s);
            }
            _ => {
                self.pos += 1;
                self.push(RbKind::Op, s);
            }
        }
        Ok(())
    }

    /// Lexes `%w[...]`, `%i(...)`, `%q{...}`, `%(...)` and friends; false when `%` is an operator.
    fn percent_literal(&mut self) -> RbResult<bool> {
        let delimiter = |c: Option<u8>| {
            c.filter(|c| !c.is_ascii_alphanumeric() && !c.is_ascii_whitespace() && *c != b'=')
        };
        let (letter, open) = match self.peek(1) {
            Some(l @ (b'q' | b'Q' | b'w' | b'W' | b'i' | b'I' | b's' | b'r' | b'x')) => {
                match delimiter(self.peek(2)) {
                    Some(d) => (l, d),
                    None => return Ok(false),
                }
            }
            other => match delimiter(other) {
                Some(d) => (b'Q', d),
                None => return Ok(false),
            },
        };
        let close = match open {
            b'(' => b')',
            b'[' => b']',
            b'{' => b'}',
            b'<' => b'>',
            d => d,
        };
        let s = self.pos;
        self.pos += if letter == b'Q' && self.peek(1) == Some(open) {
            2
        } else {
            3
        };
        let interpolate = matches!(letter, b'Q' | b'W' | b'I' | b'r' | b'x');
        self.scan_string(close, (open != close).then_some(open), interpolate, 0)?;
        if letter == b'r' {
            while self.peek(0).is_some_and(|c| c.is_ascii_alphabetic()) {
                self.pos += 1;
            }
        }
        self.push(RbKind::Str, s);
        Ok(true)
    }

    /// Lexes a heredoc opener (`<<~EOS`, `<<-'EOS'`, `<<EOS`); false when `<<` is an operator.
    fn heredoc(&mut self) -> bool {
        let mut p = self.pos + 2;
        let indented = matches!(self.b.get(p), Some(b'~' | b'-'));
        if indented {
            p += 1;
        }
        let (id, end) = match self.b.get(p) {
            Some(&q @ (b'\'' | b'"' | b'`')) => {
                let body = p + 1;
                let Some(len) = self.b[body..].iter().position(|&c| c == q || c == b'\n') else {
                    return false;
                };
                if self.b[body + len] != q {
                    return false;
                }
                (self.src.get(body..body + len).unwrap_or(""), body + len + 1)
            }
            Some(&c)
                if c.is_ascii_uppercase() || c == b'_' || (indented && c.is_ascii_alphabetic()) =>
            {
                let len = self.b[p..]
                    .iter()
                    .position(|&c| !rb_ident_byte(c))
                    .unwrap_or(self.b.len() - p);
                (self.src.get(p..p + len).unwrap_or(""), p + len)
            }
            _ => return false,
        };
        if id.is_empty() {
            return false;
        }
        let id = id.to_string();
        let s = self.pos;
        self.pos = end;
        self.push(RbKind::Str, s);
        self.heredocs.push((id, indented, self.tokens.len() - 1));
        true
    }

    /// Lexes a character literal such as `?a`; false when `?` is an operator.
    fn char_literal(&mut self) -> bool {
        let Some(next) = self.peek(1) else {
            return false;
        };
        if next.is_ascii_whitespace() {
            return false;
        }
        let s = self.pos;
        if next == b'\\' {
            self.pos += 3;
        } else {
            let len = self.src[self.pos + 1..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
            if self.peek(1 + len).is_some_and(rb_ident_byte) {
                return false;
            }
            self.pos += 1 + len;
        }
        self.pos = self.pos.min(self.b.len());
        self.push(RbKind::Str, s);
        true
    }

    fn identifier(&mut self) {
        let s = self.pos;
        while self.peek(0).is_some_and(rb_ident_byte) {
            self.pos += 1;
        }
        if matches!(self.peek(0), Some(b'?' | b'!')) && self.peek(1) != Some(b'=') {
            self.pos += 1;
        }
        if self.peek(0) == Some(b':') && self.peek(1) != Some(b':') {
            self.pos += 1;
            self.push(RbKind::Label, s);
            return;
        }
        self.push(RbKind::Ident, s);
        if self.tokens.last().and_then(RbToken::word) == Some("do") {
            self.block_params();
        }
    }

    /// Lexes `|a, b|` right after `do` or `{` as one token.
    fn block_params(&mut self) {
        let mut p = self.pos;
        while p < self.b.len() && matches!(self.b[p], b' ' | b'\t') {
            p += 1;
        }
        if self.b.get(p) != Some(&b'|') || self.b.get(p + 1) == Some(&b'|') {
            return;
        }
        let Some(len) = self.b[p + 1..]
            .iter()
            .position(|&c| c == b'|' || c == b'\n')
        else {
            return;
        };
        if self.b[p + 1 + len] != b'|' {
            return;
        }
        self.pos = p + 2 + len;
        self.push(RbKind::BlockParams, p);
    }
}

struct RbStatement {
    first: usize,
    last: usize,
    start: usize,
    end: usize,
}

fn gemfile_candidates(src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let kind = ManifestKind::Gemfile;
    let file = kind.display_name();
    let b = src.as_bytes();
    let mut lexer = RbLexer::new(src);
    lexer.run().map_err(|(at, message)| {
        parse_error(
            kind,
            Some(at),
            format!("{message} (line {})", line_number(b, at)),
        )
    })?;
    let tokens = lexer.tokens;
    let barriers = lexer.barriers;

    let mut statements: Vec<RbStatement> = Vec::new();
    let mut first: Option<usize> = None;
    for i in 0..=tokens.len() {
        let boundary = tokens
            .get(i)
            .is_none_or(|t| matches!(t.kind, RbKind::Newline | RbKind::Semi));
        if boundary {
            if let Some(f) = first.take() {
                let span = &tokens[f..i];
                statements.push(RbStatement {
                    first: f,
                    last: i - 1,
                    start: span.first().map_or(0, |t| t.start),
                    end: span.iter().map(|t| t.end).max().unwrap_or(0),
                });
            }
        } else if first.is_none() {
            first = Some(i);
        }
    }

    let floor = |si: usize| {
        let start = statements[si].start;
        let previous = if si == 0 { 0 } else { statements[si - 1].end };
        let barrier = barriers
            .iter()
            .copied()
            .filter(|&p| p <= start)
            .max()
            .unwrap_or(0);
        previous.max(barrier)
    };
    // Whether statement `si` is the only statement on its first and last lines.
    let alone = |si: usize| {
        let st = &statements[si];
        let before_ok = si == 0 || statements[si - 1].end <= line_start(b, st.start);
        let after_ok = statements
            .get(si + 1)
            .is_none_or(|next| next.start >= line_end(b, st.end.saturating_sub(1)));
        before_ok && after_ok
    };
    let starts_call = |t: &RbToken, name: &str| {
        t.word() == Some(name)
            && only_blanks_before(b, t.start)
            && matches!(b.get(t.end), Some(b' ' | b'\t' | b'('))
    };

    // Open blocks: the statement opening each, and for a `group ... do` candidate the `do` position.
    let mut stack: Vec<(usize, Option<usize>)> = Vec::new();
    let mut groups: Vec<(usize, Range<usize>, String)> = Vec::new();
    let mut gems: Vec<(usize, Range<usize>, String)> = Vec::new();
    for (si, st) in statements.iter().enumerate() {
        let ts = &tokens[st.first..=st.last];
        let final_do = match ts {
            [.., t] if t.word() == Some("do") => Some(ts.len() - 1),
            [.., t, p] if t.word() == Some("do") && p.kind == RbKind::BlockParams => {
                Some(ts.len() - 2)
            }
            _ => None,
        };
        let group_statement = ts.first().is_some_and(|t| starts_call(t, "group"));
        let mut loop_do_pending = false;
        let mut blocks = 0usize;
        for (k, t) in ts.iter().enumerate() {
            let Some(word) = t.word() else { continue };
            let expression_start = k == 0
                || ts.get(k - 1).is_some_and(|p| match p.kind {
                    RbKind::Op => !matches!(p.text.as_str(), "." | "&." | "::"),
                    RbKind::Open | RbKind::Label => true,
                    RbKind::Ident => matches!(p.text.as_str(), "and" | "or" | "not" | "return"),
                    _ => false,
                });
            match word {
                "do" => {
                    blocks += 1;
                    if loop_do_pending {
                        loop_do_pending = false;
                    } else {
                        let group_do = group_statement && final_do == Some(k);
                        stack.push((si, group_do.then_some(t.start)));
                    }
                }
                "begin" | "case" | "def" | "class" | "module" => {
                    blocks += 1;
                    stack.push((si, None));
                }
                "for" => {
                    blocks += 1;
                    stack.push((si, None));
                    loop_do_pending = true;
                }
                "while" | "until" if expression_start => {
                    blocks += 1;
                    stack.push((si, None));
                    loop_do_pending = true;
                }
                "if" | "unless" if expression_start => {
                    blocks += 1;
                    stack.push((si, None));
                }
                "end" => {
                    blocks += 1;
                    let Some((opener, group_do)) = stack.pop() else {
                        return Err(parse_error(
                            kind,
                            Some(t.start),
                            format!("`end` without a block (line {})", line_number(b, t.start)),
                        ));
                    };
                    if let Some(do_start) = group_do
                        && ts.len() == 1
                        && alone(si)
                        && alone(opener)
                    {
                        let g = &statements[opener];
                        let top =
                            extend_over_comments(b, line_start(b, g.start), floor(opener), b"#");
                        let depth = stack.iter().filter(|e| e.1.is_some()).count();
                        let head = src.get(g.start..do_start).unwrap_or("group").trim();
                        groups.push((
                            depth,
                            top..line_end(b, st.end.saturating_sub(1)),
                            format!("`{head}` block of {file}"),
                        ));
                    }
                }
                _ => {}
            }
        }
        let gem_statement = ts.first().is_some_and(|t| starts_call(t, "gem"))
            && blocks == 0
            && !src.get(st.start..st.end).unwrap_or("\n").contains('\n')
            && alone(si);
        if gem_statement {
            let name = ts
                .iter()
                .find(|t| t.kind == RbKind::Str)
                .and_then(|t| src.get(t.start + 1..t.end.saturating_sub(1)))
                .unwrap_or("?");
            let top = extend_over_comments(b, line_start(b, st.start), floor(si), b"#");
            let depth = stack.iter().filter(|e| e.1.is_some()).count();
            gems.push((
                depth,
                top..line_end(b, st.start),
                format!("gem `{name}` of {file}"),
            ));
        }
    }
    if let Some(&(opener, _)) = stack.last() {
        let at = statements[opener].start;
        return Err(parse_error(
            kind,
            Some(at),
            format!("block without `end` (line {})", line_number(b, at)),
        ));
    }
    let gem_level = groups.iter().map(|g| g.0 + 1).max().unwrap_or(0);
    let mut levels = Levels::new(src);
    for (depth, range, label) in groups {
        levels.push(depth, label, vec![range]);
    }
    for (_, range, label) in gems {
        levels.push(gem_level, label, vec![range]);
    }
    Ok(levels.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARGO: &str = r#"# Demo crate
[package]
name = "demo"
version = "0.1.0"
edition = "2021"
description = "A demo" # shown on crates.io

[dependencies]
# Serialization
serde = { version = "1", features = ["derive", "rc"] }
anyhow = "1"
tokio = { version = "1.0", default-features = false, features = [
    "rt",
    "macros",
] }

[dev-dependencies]
proptest = "1"

[features]
default = ["std"]
std = []

[[bin]]
name = "demo"
path = "src/main.rs"
"#;

    const PYPROJECT: &str = r#"[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "demo"
version = "0.1.0"
dependencies = [
    "requests>=2.28",  # HTTP
    "click",
    "rich; python_version >= '3.8'",
]

[project.optional-dependencies]
test = ["pytest", "pytest-cov"]

[tool.pytest.ini_options]
addopts = "-ra"
testpaths = ["tests"]
"#;

    const PIPFILE: &str = r#"[[source]]
url = "https://pypi.org/simple"
verify_ssl = true
name = "pypi"

[packages]
requests = "*"
flask = {version = ">=2.0", extras = ["async"]}

[dev-packages]
pytest = "*"

[requires]
python_version = "3.11"
"#;

    const PACKAGE_JSON: &str = r#"{
  "name": "demo",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "build": "tsc",
    "test": "jest"
  },
  "files": [
    "dist",
    "lib",
    "README.md"
  ],
  "dependencies": {
    "lodash": "^4.17.21",
    "react": "^18.2.0"
  },
  "devDependencies": {
    "jest": "^29.0.0"
  },
  "workspaces": ["packages/*", "apps/*"]
}
"#;

    const COMPOSER_JSON: &str = r#"{
    "name": "acme/demo",
    "type": "library",
    "require": {
        "php": ">=8.1",
        "monolog/monolog": "^3.0"
    },
    "require-dev": {
        "phpunit/phpunit": "^10.0"
    },
    "autoload": {
        "psr-4": {
            "Acme\\Demo\\": "src/"
        },
        "files": ["src/helpers.php"]
    }
}
"#;

    const GO_MOD: &str = "module example.com/demo

go 1.21

toolchain go1.21.5

require (
\tgithub.com/pkg/errors v0.9.1
\t// logging
\tgolang.org/x/text v0.14.0 // indirect
)

require github.com/stretchr/testify v1.8.4

// Use the local fork.
replace example.com/old => ../old

exclude (
\texample.com/bad v1.0.0
)
";

    const GO_WORK: &str = "go 1.22

use (
\t./api
\t./cmd/tool
)

use ./lib

replace example.com/x v1.0.0 => ./x
";

    const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>demo</artifactId>
  <version>1.0</version>
  <modules>
    <module>core</module>
  </modules>
  <dependencies>
    <!-- JSON support -->
    <dependency>
      <groupId>com.google.code.gson</groupId>
      <artifactId>gson</artifactId>
      <version>2.10.1</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>2.0.9</version>
    </dependency>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.11.0</version>
        <configuration><release>17</release></configuration>
      </plugin>
    </plugins>
  </build>
  <profiles>
    <profile>
      <id>ci</id>
      <dependencies>
        <dependency><groupId>a</groupId><artifactId>b</artifactId></dependency>
      </dependencies>
    </profile>
  </profiles>
</project>
"#;

    const CSPROJ: &str = r#"<Project Sdk="Microsoft.NET.Sdk">

  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net8.0</TargetFramework>
  </PropertyGroup>

  <ItemGroup>
    <PackageReference Include="Newtonsoft.Json" Version="13.0.3" />
    <PackageReference Include="Serilog" Version="3.1.1" />
    <PackageReference Include="xunit">
      <Version>2.6.2</Version>
    </PackageReference>
  </ItemGroup>

  <ItemGroup Condition="'$(Configuration)' == 'Debug'">
    <ProjectReference Include="..\Lib\Lib.csproj" />
    <Compile Remove="Legacy\**" />
    <None Include="appsettings.json" CopyToOutputDirectory="Always" />
    <Content Include="wwwroot\**" />
  </ItemGroup>

</Project>
"#;

    const REQUIREMENTS: &str = r#"# Core
requests>=2.28 \
    --hash=sha256:abc \
    --hash=sha256:def
-r other.txt
--requirement=base.txt
-c constraints.txt
--index-url https://pypi.org/simple

flask==2.3.0  # web
numpy; python_version >= "3.9"
"#;

    const GEMFILE: &str = r#"source "https://rubygems.org"
git_source(:github) { |repo| "https://github.com/#{repo}.git" }

ruby "3.2.2"

# Rails itself
gem "rails", "~> 7.1"
gem "pg", ">= 1.1"
gem "puma", require: false if ENV["PUMA"]
gem 'bootsnap',
  require: false

group :development, :test do
  gem "rspec-rails"
  gem "debug", platforms: %i[mri windows]
end

group :development do
  gem "web-console"
  if RUBY_VERSION >= "3.0"
    gem "rubocop", require: false
  end
end

gemspec
"#;

    fn fixtures() -> Vec<(ManifestKind, &'static str)> {
        vec![
            (ManifestKind::CargoToml, CARGO),
            (ManifestKind::PyprojectToml, PYPROJECT),
            (ManifestKind::Pipfile, PIPFILE),
            (ManifestKind::Requirements, REQUIREMENTS),
            (ManifestKind::PackageJson, PACKAGE_JSON),
            (ManifestKind::ComposerJson, COMPOSER_JSON),
            (ManifestKind::GoMod, GO_MOD),
            (ManifestKind::GoWork, GO_WORK),
            (ManifestKind::PomXml, POM),
            (ManifestKind::MsBuild, CSPROJ),
            (ManifestKind::Gemfile, GEMFILE),
        ]
    }

    fn levels_of(kind: ManifestKind, src: &str) -> Vec<Vec<ManifestEdit>> {
        candidates(kind, src.as_bytes()).expect("fixture parses")
    }

    fn find<'a>(levels: &'a [Vec<ManifestEdit>], label: &str) -> &'a ManifestEdit {
        levels
            .iter()
            .flatten()
            .find(|e| e.label == label)
            .unwrap_or_else(|| panic!("no candidate `{label}` in {:#?}", labels(levels)))
    }

    fn labels(levels: &[Vec<ManifestEdit>]) -> Vec<Vec<String>> {
        levels
            .iter()
            .map(|l| l.iter().map(|e| e.label.clone()).collect())
            .collect()
    }

    fn applied(src: &str, edit: &ManifestEdit) -> String {
        String::from_utf8(edit.apply(src.as_bytes())).expect("still UTF-8")
    }

    /// Parses `text` with the kind's own parser (the real one where there is one).
    fn reparses(kind: ManifestKind, original: &str, text: &str) -> Result<(), String> {
        match kind {
            ManifestKind::CargoToml | ManifestKind::PyprojectToml | ManifestKind::Pipfile => {
                let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
                let required: &[&[&str]] = match kind {
                    ManifestKind::CargoToml => &[&["package", "name"], &["package", "version"]],
                    ManifestKind::PyprojectToml => &[&["project", "name"]],
                    _ => &[],
                };
                let before: toml_edit::DocumentMut =
                    original.parse().map_err(|e| format!("{e}"))?;
                let lookup = |doc: &toml_edit::DocumentMut, path: &[&str]| {
                    let mut item = Some(doc.as_item());
                    for key in path {
                        item = item.and_then(|i| i.get(key));
                    }
                    item.is_some()
                };
                for path in required {
                    if lookup(&before, path) && !lookup(&doc, path) {
                        return Err(format!("required key {path:?} lost"));
                    }
                }
            }
            ManifestKind::PackageJson | ManifestKind::ComposerJson => {
                let value: serde_json::Value =
                    serde_json::from_str(text.trim_start_matches('\u{feff}'))
                        .map_err(|e| format!("{e}"))?;
                let object = value.as_object().ok_or("not an object")?;
                let before: serde_json::Value =
                    serde_json::from_str(original.trim_start_matches('\u{feff}'))
                        .map_err(|e| format!("{e}"))?;
                for key in ["name", "version"] {
                    if before.get(key).is_some() && !object.contains_key(key) {
                        return Err(format!("required key {key} lost"));
                    }
                }
            }
            ManifestKind::PomXml | ManifestKind::MsBuild => {
                let mut reader = quick_xml::Reader::from_str(text);
                let mut depth = 0usize;
                loop {
                    match reader.read_event().map_err(|e| format!("{e}"))? {
                        quick_xml::events::Event::Start(_) => depth += 1,
                        quick_xml::events::Event::End(_) => depth -= 1,
                        quick_xml::events::Event::Eof => break,
                        _ => {}
                    }
                }
                if depth != 0 {
                    return Err("unbalanced".into());
                }
            }
            ManifestKind::GoMod | ManifestKind::GoWork => {
                let lines = go_lex(kind, text).map_err(|e| e.to_string())?;
                let verbs: Vec<&str> = lines
                    .iter()
                    .map(|l| go_token_text(l.tokens.first()))
                    .collect();
                for verb in ["module", "go"] {
                    let had = original
                        .lines()
                        .any(|l| l.split_whitespace().next() == Some(verb));
                    if had && !verbs.contains(&verb) {
                        return Err(format!("{verb} directive lost"));
                    }
                }
            }
            ManifestKind::Requirements | ManifestKind::Gemfile => {}
        }
        candidates(kind, text.as_bytes())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Structural checks that hold for every result.
    fn check_shape(src: &str, levels: &[Vec<ManifestEdit>]) {
        for level in levels {
            assert!(!level.is_empty(), "empty level");
            let mut all: Vec<(&Range<usize>, &str)> = Vec::new();
            for edit in level {
                assert!(!edit.label.is_empty());
                assert!(!edit.delete.is_empty(), "{}", edit.label);
                for w in edit.delete.windows(2) {
                    assert!(
                        w[0].end < w[1].start,
                        "unsorted or overlapping: {}",
                        edit.label
                    );
                }
                for r in &edit.delete {
                    assert!(
                        r.start < r.end && r.end <= src.len(),
                        "{}: {r:?}",
                        edit.label
                    );
                    assert!(src.is_char_boundary(r.start) && src.is_char_boundary(r.end));
                }
                all.extend(edit.delete.iter().map(|r| (r, edit.label.as_str())));
            }
            all.sort_by_key(|r| r.0.start);
            // Two items of one comma-separated list may share the comma between them, nothing else.
            for (i, (a, la)) in all.iter().enumerate() {
                for (b, lb) in &all[i + 1..] {
                    if b.start >= a.end {
                        break;
                    }
                    let shared = &src.as_bytes()[b.start..a.end.min(b.end)];
                    assert!(
                        shared.contains(&b',')
                            && shared.iter().all(|c| *c == b',' || c.is_ascii_whitespace()),
                        "`{la}` and `{lb}` overlap beyond a shared comma\n{src}"
                    );
                }
            }
        }
    }

    fn check_all(kind: ManifestKind, src: &str) {
        let levels = levels_of(kind, src);
        assert!(!levels.is_empty(), "{kind:?} gives candidates");
        check_shape(src, &levels);
        check_each_applies(kind, src, &levels);
    }

    /// Applying any single candidate leaves a file that still parses as its kind.
    fn check_each_applies(kind: ManifestKind, src: &str, levels: &[Vec<ManifestEdit>]) {
        for edit in levels.iter().flatten() {
            let out = applied(src, edit);
            assert!(out.len() < src.len());
            if let Err(e) = reparses(kind, src, &out) {
                panic!("{kind:?}: `{}` breaks the file: {e}\n{out}", edit.label);
            }
        }
    }

    #[test]
    fn every_candidate_of_every_fixture_leaves_a_parsable_file() {
        for (kind, src) in fixtures() {
            check_all(kind, src);
        }
    }

    #[test]
    fn byte_order_mark_is_kept_and_ranges_shifted() {
        for (kind, src) in fixtures() {
            let with_bom = format!("\u{feff}{src}");
            let plain = levels_of(kind, src);
            let shifted = levels_of(kind, &with_bom);
            assert_eq!(labels(&plain), labels(&shifted), "{kind:?}");
            for (a, b) in plain.iter().flatten().zip(shifted.iter().flatten()) {
                let moved: Vec<Range<usize>> =
                    a.delete.iter().map(|r| r.start + 3..r.end + 3).collect();
                assert_eq!(moved, b.delete, "{kind:?} {}", a.label);
                assert!(applied(&with_bom, b).starts_with('\u{feff}'));
            }
            check_all(kind, &with_bom);
        }
        assert_eq!(
            requirement_includes("\u{feff}-r a.txt\n".as_bytes()),
            ["a.txt"]
        );
    }

    #[test]
    fn no_candidate_applied_leaves_bytes_unchanged() {
        for (kind, src) in fixtures() {
            let none = ManifestEdit {
                label: String::new(),
                delete: Vec::new(),
            };
            assert_eq!(none.apply(src.as_bytes()), src.as_bytes());
            // Computing candidates is pure and repeatable.
            assert_eq!(levels_of(kind, src), levels_of(kind, src));
            reparses(kind, src, src).expect("fixture parses");
        }
    }

    #[test]
    fn cargo_levels_and_exact_results() {
        let levels = levels_of(ManifestKind::CargoToml, CARGO);
        assert_eq!(
            labels(&levels)[0],
            [
                "table `[dependencies]` of Cargo.toml",
                "table `[dev-dependencies]` of Cargo.toml",
                "table `[features]` of Cargo.toml",
                "table `[[bin]]` #1 of Cargo.toml",
            ]
        );
        assert_eq!(
            labels(&levels)[1],
            [
                "key `edition` in `[package]` of Cargo.toml",
                "key `description` in `[package]` of Cargo.toml",
                "dependency `serde` of Cargo.toml",
                "dependency `anyhow` of Cargo.toml",
                "dependency `tokio` of Cargo.toml",
                "dependency `proptest` in `[dev-dependencies]` of Cargo.toml",
                "feature `default` of Cargo.toml",
                "feature `std` of Cargo.toml",
                "key `name` in `[[bin]]` #1 of Cargo.toml",
                "key `path` in `[[bin]]` #1 of Cargo.toml",
            ]
        );
        let all = labels(&levels).concat();
        assert!(
            !all.iter()
                .any(|l| l.contains("[package]`") && l.starts_with("table"))
        );
        assert!(!all.iter().any(|l| l.contains("`name` in `[package]`")));
        assert!(!all.iter().any(|l| l.contains("`version` in `[package]`")));

        let serde = find(&levels, "dependency `serde` of Cargo.toml");
        assert_eq!(
            applied(CARGO, serde),
            CARGO.replace(
                "# Serialization\nserde = { version = \"1\", features = [\"derive\", \"rc\"] }\n",
                ""
            )
        );
        let features = find(
            &levels,
            "key `features` of `dependencies.serde` in Cargo.toml",
        );
        assert!(applied(CARGO, features).contains("serde = { version = \"1\" }\n"));
        let version = find(
            &levels,
            "key `version` of `dependencies.serde` in Cargo.toml",
        );
        assert!(applied(CARGO, version).contains("serde = { features = [\"derive\", \"rc\"] }\n"));
        let derive = find(
            &levels,
            "item 1 of `dependencies.serde.features` in Cargo.toml",
        );
        assert!(applied(CARGO, derive).contains("features = [\"rc\"] }"));
        let rc = find(
            &levels,
            "item 2 of `dependencies.serde.features` in Cargo.toml",
        );
        assert!(applied(CARGO, rc).contains("features = [\"derive\"] }"));
        let rt = find(
            &levels,
            "item 1 of `dependencies.tokio.features` in Cargo.toml",
        );
        assert!(applied(CARGO, rt).contains("features = [\n    \"macros\",\n] }"));
        let dev = find(&levels, "table `[dev-dependencies]` of Cargo.toml");
        assert_eq!(
            applied(CARGO, dev),
            CARGO.replace("[dev-dependencies]\nproptest = \"1\"\n\n", "")
        );
        let description = find(&levels, "key `description` in `[package]` of Cargo.toml");
        assert_eq!(
            applied(CARGO, description),
            CARGO.replace("description = \"A demo\" # shown on crates.io\n", "")
        );
        let default_features = find(
            &levels,
            "key `default-features` of `dependencies.tokio` in Cargo.toml",
        );
        assert!(
            applied(CARGO, default_features).contains("tokio = { version = \"1.0\", features = [")
        );
    }

    #[test]
    fn cargo_required_keys_are_never_offered_in_any_form() {
        let src =
            "package.name = \"x\"\npackage.version.workspace = true\npackage.edition = \"2021\"\n";
        let levels = levels_of(ManifestKind::CargoToml, src);
        let all = labels(&levels).concat();
        assert_eq!(all, ["key `package.edition` of Cargo.toml"]);
        let src = "[package]\nname = \"x\"\nversion.workspace = true\nedition.workspace = true\n";
        let all = labels(&levels_of(ManifestKind::CargoToml, src)).concat();
        assert_eq!(
            all,
            ["key `edition.workspace` in `[package]` of Cargo.toml"]
        );
    }

    #[test]
    fn pyproject_items_and_protected_name() {
        let levels = levels_of(ManifestKind::PyprojectToml, PYPROJECT);
        let all = labels(&levels).concat();
        assert!(
            !all.iter()
                .any(|l| l == "table `[project]` of pyproject.toml")
        );
        assert!(!all.iter().any(|l| l.starts_with("key `name`")));
        assert!(
            all.iter()
                .any(|l| l == "table `[tool.pytest.ini_options]` of pyproject.toml")
        );
        assert!(
            all.iter()
                .any(|l| l == "key `version` in `[project]` of pyproject.toml")
        );
        let requests = find(
            &levels,
            "item 1 of `project.dependencies` in pyproject.toml",
        );
        assert_eq!(
            applied(PYPROJECT, requests),
            PYPROJECT.replace("    \"requests>=2.28\",  # HTTP\n", "")
        );
        let rich = find(
            &levels,
            "item 3 of `project.dependencies` in pyproject.toml",
        );
        assert_eq!(
            applied(PYPROJECT, rich),
            PYPROJECT.replace("    \"rich; python_version >= '3.8'\",\n", "")
        );
        let cov = find(
            &levels,
            "item 2 of `project.optional-dependencies.test` in pyproject.toml",
        );
        assert!(applied(PYPROJECT, cov).contains("test = [\"pytest\"]\n"));
        let tool = find(
            &levels,
            "table `[tool.pytest.ini_options]` of pyproject.toml",
        );
        assert_eq!(
            applied(PYPROJECT, tool),
            PYPROJECT.replace(
                "[tool.pytest.ini_options]\naddopts = \"-ra\"\ntestpaths = [\"tests\"]\n",
                ""
            )
        );
    }

    #[test]
    fn pipfile_packages() {
        let levels = levels_of(ManifestKind::Pipfile, PIPFILE);
        let flask = find(&levels, "dependency `flask` of Pipfile");
        assert!(!applied(PIPFILE, flask).contains("flask"));
        let extras = find(&levels, "key `extras` of `packages.flask` in Pipfile");
        assert!(applied(PIPFILE, extras).contains("flask = {version = \">=2.0\"}\n"));
        find(
            &levels,
            "dependency `pytest` in `[dev-packages]` of Pipfile",
        );
        find(&levels, "table `[[source]]` #1 of Pipfile");
    }

    #[test]
    fn toml_comments_and_odd_layouts() {
        // A comment inside a multi-line string is not a comment line.
        let src = "[package]\nname = \"x\"\nversion = \"1\"\nreadme = \"\"\"\n# not a comment\"\"\"\nkeywords = []\n";
        let levels = levels_of(ManifestKind::CargoToml, src);
        let keywords = find(&levels, "key `keywords` in `[package]` of Cargo.toml");
        assert_eq!(applied(src, keywords), src.replace("keywords = []\n", ""));
        // TOML 1.1 inline tables with newlines, comments and a trailing comma.
        let src = "[dependencies]\nfoo = {\n  version = \"1\", # pinned\n  path = \"../foo\",\n}\n";
        let levels = levels_of(ManifestKind::CargoToml, src);
        let version = find(&levels, "key `version` of `dependencies.foo` in Cargo.toml");
        assert_eq!(
            applied(src, version),
            "[dependencies]\nfoo = {\n  path = \"../foo\",\n}\n"
        );
        let path = find(&levels, "key `path` of `dependencies.foo` in Cargo.toml");
        assert_eq!(
            applied(src, path),
            "[dependencies]\nfoo = {\n  version = \"1\", # pinned\n}\n"
        );
        check_all(ManifestKind::CargoToml, src);
        // Dotted keys spread over lines, a last array item without a trailing comma.
        let src = "[package]\nname = \"x\"\nversion = \"1\"\n[package.metadata]\na.b = 1\nc = 2\na.d = [\n  1,\n  2\n]\n";
        let levels = levels_of(ManifestKind::CargoToml, src);
        let two = find(&levels, "item 2 of `package.metadata.a.d` in Cargo.toml");
        assert_eq!(applied(src, two), src.replace("  1,\n  2\n]", "  1\n]"));
        let ab = find(&levels, "key `a.b` in `[package.metadata]` of Cargo.toml");
        assert_eq!(applied(src, ab), src.replace("a.b = 1\n", ""));
        check_all(ManifestKind::CargoToml, src);
        // CRLF line endings.
        let src = "[package]\r\nname = \"x\"\r\nversion = \"1\"\r\n\r\n[dependencies]\r\nserde = \"1\"\r\n";
        let levels = levels_of(ManifestKind::CargoToml, src);
        let serde = find(&levels, "dependency `serde` of Cargo.toml");
        assert_eq!(applied(src, serde), src.replace("serde = \"1\"\r\n", ""));
        check_all(ManifestKind::CargoToml, src);
    }

    #[test]
    fn package_json_members_and_items() {
        let levels = levels_of(ManifestKind::PackageJson, PACKAGE_JSON);
        let top = &labels(&levels)[0];
        assert_eq!(
            top,
            &[
                "member `private` of package.json",
                "member `scripts` of package.json",
                "member `files` of package.json",
                "member `dependencies` of package.json",
                "member `devDependencies` of package.json",
                "member `workspaces` of package.json",
            ]
        );
        let react = find(&levels, "dependency `react` of package.json");
        assert!(
            applied(PACKAGE_JSON, react)
                .contains("\"dependencies\": {\n    \"lodash\": \"^4.17.21\"\n  },")
        );
        let lodash = find(&levels, "dependency `lodash` of package.json");
        assert!(
            applied(PACKAGE_JSON, lodash)
                .contains("\"dependencies\": {\n    \"react\": \"^18.2.0\"\n  },")
        );
        let readme = find(&levels, "item 3 of `files` in package.json");
        assert!(
            applied(PACKAGE_JSON, readme)
                .contains("\"files\": [\n    \"dist\",\n    \"lib\"\n  ],")
        );
        let ws = find(&levels, "item 1 of `workspaces` in package.json");
        assert!(applied(PACKAGE_JSON, ws).contains("\"workspaces\": [\"apps/*\"]\n}"));
        let ws2 = find(&levels, "item 2 of `workspaces` in package.json");
        assert!(applied(PACKAGE_JSON, ws2).contains("\"workspaces\": [\"packages/*\"]\n}"));
        let last = find(&levels, "member `workspaces` of package.json");
        assert!(applied(PACKAGE_JSON, last).ends_with("\"jest\": \"^29.0.0\"\n  }\n}\n"));
        let jest = find(
            &levels,
            "dependency `jest` in `devDependencies` of package.json",
        );
        assert!(applied(PACKAGE_JSON, jest).contains("\"devDependencies\": {\n  },"));
        find(&levels, "script `build` of package.json");
    }

    #[test]
    fn json_compact_layout_and_bom() {
        let src = "\u{feff}{\"name\":\"x\",\"version\":\"1\",\"dependencies\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}";
        let levels = levels_of(ManifestKind::PackageJson, src);
        let b = find(&levels, "dependency `b` of package.json");
        assert_eq!(applied(src, b), src.replace("\"b\":\"2\",", ""));
        let c = find(&levels, "dependency `c` of package.json");
        assert_eq!(applied(src, c), src.replace(",\"c\":\"3\"", ""));
        for edit in levels.iter().flatten() {
            let out = applied(src, edit);
            serde_json::from_str::<serde_json::Value>(out.trim_start_matches('\u{feff}'))
                .expect("valid JSON");
        }
    }

    #[test]
    fn composer_json() {
        let levels = levels_of(ManifestKind::ComposerJson, COMPOSER_JSON);
        let all = labels(&levels).concat();
        assert!(!all.iter().any(|l| l == "member `name` of composer.json"));
        let monolog = find(&levels, "dependency `monolog/monolog` of composer.json");
        assert!(
            applied(COMPOSER_JSON, monolog)
                .contains("\"require\": {\n        \"php\": \">=8.1\"\n    },")
        );
        find(
            &levels,
            "dependency `phpunit/phpunit` in `require-dev` of composer.json",
        );
        let psr4 = find(&levels, "member `psr-4` of `autoload` in composer.json");
        assert!(
            applied(COMPOSER_JSON, psr4)
                .contains("\"autoload\": {\n        \"files\": [\"src/helpers.php\"]\n    }")
        );
        find(
            &levels,
            "member `Acme\\Demo\\` of `autoload.psr-4` in composer.json",
        );
        find(&levels, "item 1 of `autoload.files` in composer.json");
    }

    #[test]
    fn go_mod_blocks_and_lines() {
        let levels = levels_of(ManifestKind::GoMod, GO_MOD);
        assert_eq!(
            labels(&levels)[0],
            [
                "`toolchain go1.21.5` directive of go.mod",
                "`require` block of go.mod",
                "`require github.com/stretchr/testify` directive of go.mod",
                "`replace example.com/old` directive of go.mod",
                "`exclude` block of go.mod",
            ]
        );
        assert_eq!(
            labels(&levels)[1],
            [
                "`require` entry `github.com/pkg/errors` of go.mod",
                "`require` entry `golang.org/x/text` of go.mod",
                "`exclude` entry `example.com/bad` of go.mod",
            ]
        );
        let text = find(&levels, "`require` entry `golang.org/x/text` of go.mod");
        assert_eq!(
            applied(GO_MOD, text),
            GO_MOD.replace(
                "\t// logging\n\tgolang.org/x/text v0.14.0 // indirect\n",
                ""
            )
        );
        let replace = find(&levels, "`replace example.com/old` directive of go.mod");
        assert_eq!(
            applied(GO_MOD, replace),
            GO_MOD.replace(
                "// Use the local fork.\nreplace example.com/old => ../old\n",
                ""
            )
        );
        for edit in levels.iter().flatten() {
            for r in &edit.delete {
                assert!(!GO_MOD[r.clone()].contains("module "));
                assert!(!GO_MOD[r.clone()].contains("go 1.21"));
            }
        }
        let work = levels_of(ManifestKind::GoWork, GO_WORK);
        let api = find(&work, "`use` entry `./api` of go.work");
        assert_eq!(applied(GO_WORK, api), GO_WORK.replace("\t./api\n", ""));
        find(&work, "`use ./lib` directive of go.work");
        assert!(!labels(&work).concat().iter().any(|l| l.starts_with("`go")));
    }

    #[test]
    fn pom_dependencies_plugins_and_comments() {
        let levels = levels_of(ManifestKind::PomXml, POM);
        assert_eq!(
            labels(&levels)[0],
            [
                "module `core` of pom.xml",
                "dependency `com.google.code.gson:gson` of pom.xml",
                "dependency `org.slf4j:slf4j-api` of pom.xml",
                "dependency `junit:junit` of pom.xml",
                "plugin `org.apache.maven.plugins:maven-compiler-plugin` of pom.xml",
                "profile `ci` of pom.xml",
            ]
        );
        assert_eq!(labels(&levels)[1], ["dependency `a:b` of pom.xml"]);
        let gson = find(&levels, "dependency `com.google.code.gson:gson` of pom.xml");
        assert_eq!(
            applied(POM, gson),
            POM.replace(
                "    <!-- JSON support -->\n    <dependency>\n      <groupId>com.google.code.gson</groupId>\n      <artifactId>gson</artifactId>\n      <version>2.10.1</version>\n    </dependency>\n",
                ""
            )
        );
        let module = find(&levels, "module `core` of pom.xml");
        assert!(applied(POM, module).contains("  <modules>\n  </modules>\n"));
    }

    #[test]
    fn msbuild_items_and_groups() {
        let levels = levels_of(ManifestKind::MsBuild, CSPROJ);
        assert_eq!(
            labels(&levels)[0],
            [
                "`PropertyGroup` #1 of MSBuild project",
                "`ItemGroup` #1 of MSBuild project",
                "`ItemGroup` #2 (Condition `'$(Configuration)' == 'Debug'`) of MSBuild project",
            ]
        );
        assert_eq!(
            labels(&levels)[1],
            [
                "`PackageReference` `Newtonsoft.Json` of MSBuild project",
                "`PackageReference` `Serilog` of MSBuild project",
                "`PackageReference` `xunit` of MSBuild project",
                "`ProjectReference` `..\\Lib\\Lib.csproj` of MSBuild project",
                "`Compile` `Legacy\\**` of MSBuild project",
                "`None` `appsettings.json` of MSBuild project",
                "`Content` `wwwroot\\**` of MSBuild project",
            ]
        );
        let serilog = find(&levels, "`PackageReference` `Serilog` of MSBuild project");
        assert_eq!(
            applied(CSPROJ, serilog),
            CSPROJ.replace(
                "    <PackageReference Include=\"Serilog\" Version=\"3.1.1\" />\n",
                ""
            )
        );
        let xunit = find(&levels, "`PackageReference` `xunit` of MSBuild project");
        assert_eq!(
            applied(CSPROJ, xunit),
            CSPROJ.replace(
                "    <PackageReference Include=\"xunit\">\n      <Version>2.6.2</Version>\n    </PackageReference>\n",
                ""
            )
        );
        // Elements sharing a line are cut exactly, without their neighbours.
        let src =
            "<Project><ItemGroup><None Include=\"a\"/><None Include=\"b\"/></ItemGroup></Project>";
        let levels = levels_of(ManifestKind::MsBuild, src);
        let a = find(&levels, "`None` `a` of MSBuild project");
        assert_eq!(
            applied(src, a),
            "<Project><ItemGroup><None Include=\"b\"/></ItemGroup></Project>"
        );
        check_all(ManifestKind::MsBuild, src);
    }

    #[test]
    fn xml_refusals_and_errors() {
        let doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE project>\n<project></project>\n";
        assert!(matches!(
            candidates(ManifestKind::PomXml, doctype.as_bytes()),
            Err(ManifestError::Refused { reason, .. }) if reason.contains("DOCTYPE")
        ));
        let entity = "<?xml version=\"1.0\"?>\n<!DOCTYPE project [\n<!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n<project>&x;</project>\n";
        let err = candidates(ManifestKind::PomXml, entity.as_bytes()).unwrap_err();
        assert!(matches!(err, ManifestError::Refused { .. }));
        assert!(err.to_string().contains("ENTITY"), "{err}");
        let bad: &[(ManifestKind, &str)] = &[
            (ManifestKind::PomXml, "<project><dependencies></project>"),
            (ManifestKind::PomXml, "<project>"),
            (
                ManifestKind::PomXml,
                "<project></project><project></project>",
            ),
            (ManifestKind::PomXml, "<project a=\"1\" a=\"2\"></project>"),
            (ManifestKind::PomXml, "text<project></project>"),
            (ManifestKind::PomXml, "<project>&undefined;</project>"),
            (ManifestKind::PomXml, "<Project></Project>"),
            (ManifestKind::MsBuild, "<project></project>"),
            (ManifestKind::MsBuild, ""),
            (ManifestKind::MsBuild, "<Project><!-- a -- b --></Project>"),
        ];
        for (kind, src) in bad {
            assert!(
                candidates(*kind, src.as_bytes()).is_err(),
                "{kind:?} accepted {src:?}"
            );
        }
    }

    #[test]
    fn requirements_lines_and_includes() {
        let levels = levels_of(ManifestKind::Requirements, REQUIREMENTS);
        assert_eq!(
            labels(&levels),
            [[
                "requirement `requests` of requirements file",
                "include `-r other.txt` of requirements file",
                "include `-r base.txt` of requirements file",
                "constraints include `-c constraints.txt` of requirements file",
                "option `--index-url` of requirements file",
                "requirement `flask` of requirements file",
                "requirement `numpy` of requirements file",
            ]]
        );
        let requests = find(&levels, "requirement `requests` of requirements file");
        assert_eq!(
            applied(REQUIREMENTS, requests),
            REQUIREMENTS.replace(
                "# Core\nrequests>=2.28 \\\n    --hash=sha256:abc \\\n    --hash=sha256:def\n",
                ""
            )
        );
        let flask = find(&levels, "requirement `flask` of requirements file");
        assert_eq!(
            applied(REQUIREMENTS, flask),
            REQUIREMENTS.replace("flask==2.3.0  # web\n", "")
        );
        assert_eq!(
            requirement_includes(REQUIREMENTS.as_bytes()),
            ["other.txt", "base.txt", "constraints.txt"]
        );
        let odd = "-rfirst.txt\n--requirem second.txt\n--constraint=\"with space.txt\"\n# -r commented.txt\nfoo # -r trailing.txt\n-r \\\n  continued.txt\n--re ambiguous.txt\n-e ./local\n";
        assert_eq!(
            requirement_includes(odd.as_bytes()),
            ["first.txt", "second.txt", "with space.txt", "continued.txt"]
        );
        // A comment line ends a continuation (pip's rule) and belongs to it.
        let src = "alpha \\\n# note\nbeta\n";
        let levels = levels_of(ManifestKind::Requirements, src);
        assert_eq!(levels[0][0].delete, vec![0..15]);
        assert_eq!(levels[0][1].delete, vec![15..20]);
    }

    #[test]
    fn gemfile_gems_and_groups() {
        let levels = levels_of(ManifestKind::Gemfile, GEMFILE);
        assert_eq!(
            labels(&levels),
            [
                vec![
                    "`group :development, :test` block of Gemfile",
                    "`group :development` block of Gemfile",
                ],
                vec![
                    "gem `rails` of Gemfile",
                    "gem `pg` of Gemfile",
                    "gem `puma` of Gemfile",
                    "gem `rspec-rails` of Gemfile",
                    "gem `debug` of Gemfile",
                    "gem `web-console` of Gemfile",
                    "gem `rubocop` of Gemfile",
                ],
            ]
        );
        let rails = find(&levels, "gem `rails` of Gemfile");
        assert_eq!(
            applied(GEMFILE, rails),
            GEMFILE.replace("# Rails itself\ngem \"rails\", \"~> 7.1\"\n", "")
        );
        let test_group = find(&levels, "`group :development, :test` block of Gemfile");
        assert_eq!(
            applied(GEMFILE, test_group),
            GEMFILE.replace(
                "group :development, :test do\n  gem \"rspec-rails\"\n  gem \"debug\", platforms: %i[mri windows]\nend\n",
                ""
            )
        );
    }

    #[test]
    fn gemfile_tricky_ruby() {
        let src = r#"source "https://rubygems.org"
=begin
gem "commented-out"
=end
DESC = <<~TEXT
  gem "inside-heredoc"
  end
TEXT
gem "a"; gem "b"
gem "c",
    "~> 1.0"
gem("d")
gem "e", git: "https://x/#{"e"}.git" # } do
gem "f" if x =~ /do|end/
platforms :jruby do
  gem "g"
end
group :x do |g|
  gem "h"
end
Foo.end
__END__
gem "after-end"
"#;
        let levels = levels_of(ManifestKind::Gemfile, src);
        assert_eq!(
            labels(&levels),
            [
                vec!["`group :x` block of Gemfile"],
                vec![
                    "gem `d` of Gemfile",
                    "gem `e` of Gemfile",
                    "gem `f` of Gemfile",
                    "gem `g` of Gemfile",
                    "gem `h` of Gemfile",
                ],
            ]
        );
        check_all(ManifestKind::Gemfile, src);
        for bad in [
            "group :x do\n  gem \"a\"\n",
            "gem \"a\nend\n",
            "end\n",
            "gem(\"a\"\n",
            "x = <<~EOS\nnever closed\n",
        ] {
            assert!(
                candidates(ManifestKind::Gemfile, bad.as_bytes()).is_err(),
                "accepted {bad:?}"
            );
        }
    }

    #[test]
    fn malformed_files_give_errors() {
        let bad: &[(ManifestKind, &str)] = &[
            (ManifestKind::CargoToml, "[package\nname = \"x\"\n"),
            (ManifestKind::CargoToml, "a = 1\na = 2\n"),
            (ManifestKind::PyprojectToml, "[project]\nname = \n"),
            (ManifestKind::Pipfile, "[packages]\nrequests = *\n"),
            (ManifestKind::PackageJson, "{\"name\": \"x\",}"),
            (ManifestKind::PackageJson, "{\"name\": \"x\" // c\n}"),
            (ManifestKind::PackageJson, "{'name': 'x'}"),
            (ManifestKind::PackageJson, "{\"a\": \"tab\there\"}"),
            (ManifestKind::PackageJson, "[1, 2]"),
            (ManifestKind::ComposerJson, ""),
            (ManifestKind::GoMod, "module x\nrequire (\n\ta v1\n"),
            (ManifestKind::GoMod, "module x\nrequire (\n\ta v1\n) x\n"),
            (ManifestKind::GoMod, "module x\n)\n"),
            (ManifestKind::GoMod, "module \"x\n"),
            (ManifestKind::GoMod, "module x\nrequire ( a v1 )\n"),
            (ManifestKind::GoWork, "\"go\" 1.22\n"),
            (ManifestKind::GoMod, "module x /* c */\n"),
            (ManifestKind::GoMod, "module x\nreplace a => \"b\\\n\"\n"),
        ];
        for (kind, src) in bad {
            let result = candidates(*kind, src.as_bytes());
            assert!(result.is_err(), "{kind:?} accepted {src:?}: {result:?}");
        }
        for (kind, _) in fixtures() {
            assert!(matches!(
                candidates(kind, b"name = \"\xff\xfe\"\n"),
                Err(ManifestError::NotUtf8 { offset: 8, .. })
            ));
        }
        let err = candidates(ManifestKind::PackageJson, b"[1]").unwrap_err();
        assert!(matches!(err, ManifestError::Shape { .. }), "{err}");
    }

    #[test]
    fn truncated_and_mutated_files_never_panic() {
        for (kind, src) in fixtures() {
            let positions: Vec<usize> = (0..=src.len())
                .filter(|&i| src.is_char_boundary(i))
                .collect();
            for &cut in &positions {
                let prefix = &src[..cut];
                if let Ok(levels) = candidates(kind, prefix.as_bytes()) {
                    check_shape(prefix, &levels);
                    if cut % 7 == 0 {
                        check_each_applies(kind, prefix, &levels);
                    }
                }
            }
            for (n, &at) in positions.iter().enumerate().step_by(2) {
                for replacement in ["\"", "\n", "{", "]", "#", ",", "<", "\\", "(", ")", "é"] {
                    if at >= src.len() || n % 3 != 0 {
                        continue;
                    }
                    let next = src[at..].chars().next().map_or(0, char::len_utf8);
                    let mutated = format!("{}{replacement}{}", &src[..at], &src[at + next..]);
                    if let Ok(levels) = candidates(kind, mutated.as_bytes()) {
                        check_shape(&mutated, &levels);
                        if n % 21 == 0 {
                            check_each_applies(kind, &mutated, &levels);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kinds_by_file_name() {
        let cases: &[(&str, Option<ManifestKind>)] = &[
            ("Cargo.toml", Some(ManifestKind::CargoToml)),
            ("crates/x/Cargo.toml", Some(ManifestKind::CargoToml)),
            ("pyproject.toml", Some(ManifestKind::PyprojectToml)),
            ("Pipfile", Some(ManifestKind::Pipfile)),
            ("Pipfile.lock", None),
            ("requirements.txt", Some(ManifestKind::Requirements)),
            ("requirements-dev.txt", Some(ManifestKind::Requirements)),
            ("dev-requirements.in", Some(ManifestKind::Requirements)),
            ("requirements.in", Some(ManifestKind::Requirements)),
            ("requirements/base.txt", Some(ManifestKind::Requirements)),
            ("requirements/dev.in", Some(ManifestKind::Requirements)),
            ("constraints.txt", Some(ManifestKind::Requirements)),
            ("Makefile.in", None),
            ("MANIFEST.in", None),
            ("notes.txt", None),
            ("web/package.json", Some(ManifestKind::PackageJson)),
            ("composer.json", Some(ManifestKind::ComposerJson)),
            ("go.mod", Some(ManifestKind::GoMod)),
            ("go.work", Some(ManifestKind::GoWork)),
            ("go.sum", None),
            ("pom.xml", Some(ManifestKind::PomXml)),
            ("src\\App\\App.csproj", Some(ManifestKind::MsBuild)),
            ("Lib.fsproj", Some(ManifestKind::MsBuild)),
            ("Old.VBPROJ", Some(ManifestKind::MsBuild)),
            ("Directory.Build.props", Some(ManifestKind::MsBuild)),
            ("build/Custom.targets", Some(ManifestKind::MsBuild)),
            ("Gemfile", Some(ManifestKind::Gemfile)),
            ("Gemfile.lock", None),
            ("cargo.toml", None),
            ("", None),
        ];
        for (path, kind) in cases {
            assert_eq!(manifest_kind(path), *kind, "{path}");
        }
    }
}

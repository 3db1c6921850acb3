//! What every candidate list must satisfy, checked from outside the readers: the shape of
//! the ranges, and that applying any single candidate leaves a file that still parses as its
//! kind with its required keys. The manifest tests and the fuzz target of `fuzz/` (through
//! `crate::fuzzing`) share these checks; each returns what is broken as a [`Violation`].

use std::ops::Range;

use super::go_mod::{go_lex, go_token_text};

/// What a checked value breaks, in words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

impl From<String> for Violation {
    fn from(text: String) -> Self {
        Violation(text)
    }
}

impl From<&str> for Violation {
    fn from(text: &str) -> Self {
        Violation(text.to_string())
    }
}
use super::types::{ManifestEdit, ManifestKind};

/// Parses `text` with the kind's own parser (the real one where there is one), and checks
/// that the keys a manifest of `kind` needs, if `original` had them, are still there.
pub(crate) fn reparses(kind: ManifestKind, original: &str, text: &str) -> Result<(), Violation> {
    match kind {
        ManifestKind::CargoToml | ManifestKind::PyprojectToml | ManifestKind::Pipfile => {
            let doc: toml_edit::DocumentMut =
                text.parse().map_err(|e| Violation::from(format!("{e}")))?;
            let required: &[&[&str]] = match kind {
                ManifestKind::CargoToml => &[&["package", "name"], &["package", "version"]],
                ManifestKind::PyprojectToml => &[&["project", "name"]],
                _ => &[],
            };
            let before: toml_edit::DocumentMut = original
                .parse()
                .map_err(|e| Violation::from(format!("{e}")))?;
            let lookup = |doc: &toml_edit::DocumentMut, path: &[&str]| {
                let mut item = Some(doc.as_item());
                for key in path {
                    item = item.and_then(|i| i.get(key));
                }
                item.is_some()
            };
            for path in required {
                if lookup(&before, path) && !lookup(&doc, path) {
                    return Err(Violation::from(format!("required key {path:?} lost")));
                }
            }
        }
        ManifestKind::PackageJson | ManifestKind::ComposerJson => {
            let value: serde_json::Value =
                serde_json::from_str(text.trim_start_matches('\u{feff}'))
                    .map_err(|e| Violation::from(format!("{e}")))?;
            let object = value.as_object().ok_or("not an object")?;
            let before: serde_json::Value =
                serde_json::from_str(original.trim_start_matches('\u{feff}'))
                    .map_err(|e| Violation::from(format!("{e}")))?;
            for key in ["name", "version"] {
                if before.get(key).is_some() && !object.contains_key(key) {
                    return Err(Violation::from(format!("required key {key} lost")));
                }
            }
        }
        ManifestKind::PomXml | ManifestKind::MsBuild => {
            let mut reader = quick_xml::Reader::from_str(text);
            let mut depth = 0usize;
            loop {
                match reader
                    .read_event()
                    .map_err(|e| Violation::from(format!("{e}")))?
                {
                    quick_xml::events::Event::Start(_) => depth += 1,
                    quick_xml::events::Event::End(_) => {
                        depth = depth.checked_sub(1).ok_or("unbalanced")?;
                    }
                    quick_xml::events::Event::Eof => break,
                    _ => {}
                }
            }
            if depth != 0 {
                return Err(Violation::from("unbalanced"));
            }
        }
        ManifestKind::GoMod | ManifestKind::GoWork => {
            let lines = go_lex(kind, text).map_err(|e| Violation::from(e.to_string()))?;
            let verbs = top_level_verbs(&lines);
            let before = go_lex(kind, original).map_err(|e| Violation::from(e.to_string()))?;
            let had = top_level_verbs(&before);
            for verb in ["module", "go"] {
                if had.contains(&verb) && !verbs.contains(&verb) {
                    return Err(Violation::from(format!("{verb} directive lost")));
                }
            }
        }
        ManifestKind::Requirements | ManifestKind::Gemfile => {}
    }
    super::candidates(kind, text.as_bytes())
        .map(|_| ())
        .map_err(|e| Violation::from(e.to_string()))
}

/// The shape every result has: no empty level or edit, every range non-empty, inside `src`,
/// on character boundaries, sorted and disjoint within its edit, and two edits of one level
/// overlapping only on the comma that two items of one list share.
pub(crate) fn shape(src: &str, levels: &[Vec<ManifestEdit>]) -> Result<(), Violation> {
    for level in levels {
        if level.is_empty() {
            return Err(Violation::from("empty level"));
        }
        let mut all: Vec<(&Range<usize>, &str)> = Vec::new();
        for edit in level {
            let label = &edit.label;
            if label.is_empty() || edit.delete.is_empty() {
                return Err(Violation::from(format!(
                    "an edit without label or ranges: `{label}`"
                )));
            }
            if edit.delete.windows(2).any(|w| w[0].end >= w[1].start) {
                return Err(Violation::from(format!(
                    "unsorted or overlapping ranges: `{label}`"
                )));
            }
            for r in &edit.delete {
                if !(r.start < r.end && r.end <= src.len()) {
                    return Err(Violation::from(format!(
                        "`{label}`: range {r:?} of {} bytes",
                        src.len()
                    )));
                }
                if !(src.is_char_boundary(r.start) && src.is_char_boundary(r.end)) {
                    return Err(Violation::from(format!(
                        "`{label}`: range {r:?} splits a character"
                    )));
                }
            }
            all.extend(edit.delete.iter().map(|r| (r, label.as_str())));
        }
        all.sort_by_key(|r| r.0.start);
        for (i, (a, la)) in all.iter().enumerate() {
            for (b, lb) in &all[i + 1..] {
                if b.start >= a.end {
                    break;
                }
                let shared = &src.as_bytes()[b.start..a.end.min(b.end)];
                if !(shared.contains(&b',')
                    && shared.iter().all(|c| *c == b',' || c.is_ascii_whitespace()))
                {
                    return Err(Violation::from(format!(
                        "`{la}` and `{lb}` overlap beyond a shared comma\n{src}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Applying any single candidate shortens the file and leaves one that still parses as its
/// kind ([`reparses`]).
pub(crate) fn each_applies(
    kind: ManifestKind,
    src: &str,
    levels: &[Vec<ManifestEdit>],
) -> Result<(), Violation> {
    for edit in levels.iter().flatten() {
        let out = String::from_utf8(edit.apply(src.as_bytes())).map_err(|_| {
            Violation::from(format!("`{}` leaves a file that is not UTF-8", edit.label))
        })?;
        if out.len() >= src.len() {
            return Err(Violation::from(format!("`{}` deletes nothing", edit.label)));
        }
        reparses(kind, src, &out).map_err(|e| {
            Violation::from(format!(
                "{kind:?}: `{}` breaks the file: {e}\n{out}",
                edit.label
            ))
        })?;
    }
    Ok(())
}

/// Deleting several candidates of one level together ([`super::merged_deletion`]) leaves a
/// file that still parses as its kind: every run of consecutive candidates of a level, and
/// each level's candidates but one (a list keeps that item, and with it a comma). Levels
/// of more than 64 candidates are checked on their runs of up to 64.
pub(crate) fn runs_apply(
    kind: ManifestKind,
    src: &str,
    levels: &[Vec<ManifestEdit>],
) -> Result<(), Violation> {
    const LONGEST: usize = 64;
    for level in levels {
        let n = level.len();
        let mut sets: Vec<Vec<&ManifestEdit>> = Vec::new();
        for start in 0..n {
            for end in start + 2..=n.min(start + LONGEST) {
                sets.push(level[start..end].iter().collect());
            }
        }
        if n <= LONGEST {
            for skip in 0..n {
                sets.push(
                    level
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != skip)
                        .map(|(_, e)| e)
                        .collect(),
                );
            }
        }
        for set in sets {
            let cut = super::merged_deletion(set.iter().copied());
            let out = super::types::without(src.as_bytes(), &cut);
            let out = String::from_utf8(out).map_err(|_| {
                Violation::from("a merged deletion leaves a file that is not UTF-8")
            })?;
            reparses(kind, src, &out).map_err(|e| {
                let labels: Vec<&str> = set.iter().map(|e| e.label.as_str()).collect();
                Violation::from(format!(
                    "{kind:?}: {labels:?} together break the file: {e}\n{out}"
                ))
            })?;
        }
    }
    Ok(())
}

/// The verbs of a go.mod's directives: the first word of each line outside a block (a line
/// inside `verb (` … `)` is an entry of that block, whatever its first word).
fn top_level_verbs(lines: &[super::go_mod::GoLine]) -> Vec<&str> {
    let mut verbs = Vec::new();
    let mut inside = false;
    for line in lines {
        let first = line.tokens.first();
        if inside {
            inside = first != Some(&super::go_mod::GoToken::Close);
            continue;
        }
        if first.is_some() {
            verbs.push(go_token_text(first));
            inside = line.tokens.last() == Some(&super::go_mod::GoToken::Open);
        }
    }
    verbs
}

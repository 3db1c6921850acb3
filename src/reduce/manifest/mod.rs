//! Deletion candidates inside package manifests.
//!
//! The reducer deletes parts of a source tree and keeps a cut only when the same failure
//! survives. This module proposes such cuts inside package manifests (Cargo.toml,
//! pyproject.toml, Pipfile, requirements files, package.json, composer.json, go.mod, go.work,
//! pom.xml, MSBuild projects and Gemfiles). Every candidate comes from a real parse of the file:
//! `toml_edit` for TOML, `serde_json` plus `jsonc-parser` (strict mode) for JSON, `quick-xml` for
//! XML, tree-sitter's Ruby grammar for Gemfiles, and small purpose-built line/token scanners for
//! requirements files and go.mod/go.work. Candidates are grouped in levels, coarse first. Applying any single candidate leaves
//! a file that still parses as its kind.

pub(crate) mod check;
mod gemfile;
mod go_mod;
mod json;
mod requirements;
mod toml;
mod types;
mod xml;

#[cfg(test)]
mod tests;

pub(crate) use types::{ManifestEdit, ManifestError, ManifestKind, merged_deletion};

/// By file name: Cargo.toml, pyproject.toml, Pipfile, requirements*.txt / *.in (requirements files), package.json, composer.json,
/// go.mod, go.work, pom.xml, *.csproj *.fsproj *.vbproj *.props *.targets, Gemfile.
///
/// Requirements files are recognised by a `.txt` or `.in` extension together with a
/// requirements-like name: a stem starting or ending with `requirements` or `constraints`
/// (`requirements-dev.txt`, `dev-requirements.in`, `constraints.txt`), or any file directly inside a
/// `requirements/` directory. Other `.in` files (`Makefile.in`, `MANIFEST.in`) are not manifests.
/// Names are matched exactly, except the MSBuild extensions, which are matched case-insensitively.
pub(crate) fn manifest_kind(path: &str) -> Option<ManifestKind> {
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
/// commas). The plain union of several candidates of one level can therefore leave a trailing
/// comma; [`merged_deletion`] deletes them together, through each list item's
/// [`ManifestEdit::slot`].
///
/// Required keys are never offered: `[package]` `name` and
/// `version` of Cargo.toml, `[project]` `name` of pyproject.toml, top-level `name` and `version` of
/// package.json/composer.json, and the `module` and `go` directives of go.mod/go.work (nor any
/// enclosing table or block that would remove them).
pub(crate) fn candidates(
    kind: ManifestKind,
    src: &[u8],
) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
    let text = std::str::from_utf8(src).map_err(|e| ManifestError::NotUtf8 {
        kind: kind.display_name(),
        offset: e.valid_up_to(),
    })?;
    // A leading byte-order mark is kept in place: the file is read after it, and ranges are shifted.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &text[bom..];
    let mut levels = match kind {
        ManifestKind::CargoToml | ManifestKind::PyprojectToml | ManifestKind::Pipfile => {
            toml::toml_candidates(kind, body)
        }
        ManifestKind::Requirements => Ok(requirements::requirements_candidates(body)),
        ManifestKind::PackageJson | ManifestKind::ComposerJson => json::json_candidates(kind, body),
        ManifestKind::GoMod | ManifestKind::GoWork => go_mod::go_candidates(kind, body),
        ManifestKind::PomXml | ManifestKind::MsBuild => xml::xml_candidates(kind, body),
        ManifestKind::Gemfile => gemfile::gemfile_candidates(body),
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
            if let Some(slot) = edit.slot.as_mut() {
                slot.list += bom;
                slot.comma_before = slot.comma_before.map(|c| c + bom);
            }
        }
    }
    Ok(levels)
}

//! Cargo.toml, pyproject.toml and Pipfile, read with `toml_edit`: tables and arrays of tables,
//! their entries, and the items of arrays and inline tables as deletion candidates.

use std::ops::Range;

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, extend_over_comments, line_end, line_number,
    line_start, list_deletions, list_slots, parse_error, skip_trivia,
};

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

pub(super) fn toml_candidates(
    kind: ManifestKind,
    src: &str,
) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
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
            let slots = list_slots(b, &items, Some(b'#'));
            for ((i, ranges), slot) in deletions.into_iter().enumerate().zip(slots) {
                levels.push_item(
                    level,
                    format!("item {} of `{path}` in {file}", i + 1),
                    ranges,
                    Some(slot),
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
            let slots = list_slots(b, &items, Some(b'#'));
            for (((key, _, _), ranges), slot) in members.iter().zip(deletions).zip(slots) {
                let label = format!("key `{key}` of `{path}` in {file}");
                levels.push_item(level, label, ranges, Some(slot));
            }
            for (key, _, v) in &members {
                toml_value_children(b, v, &format!("{path}.{key}"), level + 1, file, levels);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

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
}

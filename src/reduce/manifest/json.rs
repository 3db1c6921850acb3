//! package.json and composer.json, read with `serde_json` plus `jsonc-parser` in strict mode:
//! top-level members, their members and array items as deletion candidates.

use std::ops::Range;

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, list_deletions, list_slots, parse_error,
};

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

pub(super) fn json_candidates(
    kind: ManifestKind,
    src: &str,
) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
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
    let slots = list_slots(b, &items, None);
    for ((prop, ranges), slot) in root.properties.iter().zip(deletions).zip(slots) {
        let name = prop.name.as_str();
        if name != "name" && name != "version" {
            levels.push_item(0, format!("member `{name}` of {file}"), ranges, Some(slot));
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
            let slots = list_slots(b, &items, None);
            for ((prop, ranges), slot) in object.properties.iter().zip(deletions).zip(slots) {
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
                levels.push_item(level, label, ranges, Some(slot));
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
            let slots = list_slots(b, &items, None);
            for ((i, ranges), slot) in deletions.into_iter().enumerate().zip(slots) {
                levels.push_item(
                    level,
                    format!("item {} of `{path}` in {file}", i + 1),
                    ranges,
                    Some(slot),
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::types::without;
    use super::*;

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

    /// A member beside its object's brace, then one on a line of its own: the first one's
    /// deletion stops where the second's line starts (a fuzz finding: they overlapped on
    /// that line's indentation).
    #[test]
    fn a_member_beside_the_brace_shares_nothing_with_the_next_line() {
        let src = "{\n  \"require\": {   \"a/b\": \"1\",\n    \"c/d\": \"2\"\n  }\n}\n";
        let levels = levels_of(ManifestKind::ComposerJson, src);
        check_shape(src, &levels);
        let first = find(&levels, "dependency `a/b` of composer.json");
        assert_eq!(
            applied(src, first),
            "{\n  \"require\": {       \"c/d\": \"2\"\n  }\n}\n"
        );
        let second = find(&levels, "dependency `c/d` of composer.json");
        assert_eq!(
            applied(src, second),
            "{\n  \"require\": {   \"a/b\": \"1\"\n  }\n}\n"
        );
    }

    #[test]
    fn the_last_members_go_together_with_the_comma_before_them() {
        let src = "{\"name\":\"x\",\"a\":1,\"b\":[1,2,3],\"c\":3}";
        let levels = levels_of(ManifestKind::PackageJson, src);
        let text = |labels: &[&str]| {
            let cut = super::super::merged_deletion(labels.iter().map(|l| find(&levels, l)));
            String::from_utf8(without(src.as_bytes(), &cut)).expect("UTF-8")
        };
        let (b, c) = ("member `b` of package.json", "member `c` of package.json");
        assert_eq!(text(&[b, c]), "{\"name\":\"x\",\"a\":1}");
        assert_eq!(
            text(&["member `a` of package.json", b, c]),
            "{\"name\":\"x\"}"
        );
        // Not the last one: each takes its own comma.
        assert_eq!(
            text(&["member `a` of package.json", b]),
            "{\"name\":\"x\",\"c\":3}"
        );
        let (two, three) = (
            "item 2 of `b` in package.json",
            "item 3 of `b` in package.json",
        );
        assert_eq!(
            text(&[two, three]),
            "{\"name\":\"x\",\"a\":1,\"b\":[1],\"c\":3}"
        );
        // Their plain union leaves a comma before the bracket.
        let union: Vec<Range<usize>> = [two, three]
            .iter()
            .flat_map(|l| find(&levels, l).delete.clone())
            .collect();
        let plain = without(src.as_bytes(), &crate::reduce::edits::normalise(union));
        assert!(serde_json::from_slice::<serde_json::Value>(&plain).is_err());
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
}

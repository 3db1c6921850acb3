//! The `packages:` list of `pnpm-workspace.yaml`, and nothing else of it.
//!
//! The crate has no YAML parser, and this file needs only one key, so this reader takes
//! the simple forms pnpm's own documentation uses and refuses the rest with a reason
//! (the workspace is then ignored, never half read): a top-level `packages:` key followed
//! by a block sequence of scalars (plain, or quoted without escapes), or by a flow
//! sequence on the same line (`packages: ['a/*', "b"]`). Comments are skipped; every other
//! top-level key (`catalog:`, `onlyBuiltDependencies:`, …) and what is indented under it
//! is skipped whole. Tabs, anchors, aliases, tags, block scalars, multi-line scalars,
//! nested collections, several documents and a second `packages:` key are refused.

/// Why the file cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pnpm-workspace.yaml, line {line}: {reason}")]
pub(crate) struct YamlError {
    /// The line, from 1.
    pub line: usize,
    /// What is not read.
    pub reason: &'static str,
}

/// The `packages:` globs of `pnpm-workspace.yaml`'s text, in their order; empty when the
/// key is absent.
///
/// # Errors
/// Anything of the `packages:` key that is not in the forms this reader takes, or a file
/// that is not one YAML document of top-level keys.
pub(crate) fn packages(text: &str) -> Result<Vec<String>, YamlError> {
    let mut globs = Vec::new();
    let mut seen = false;
    let mut in_packages = false;
    let mut documents = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |reason| YamlError { line, reason };
        if raw.contains('\t') {
            return Err(err("a tab character"));
        }
        let content = strip_comment(raw).map_err(err)?;
        if content.trim().is_empty() {
            continue;
        }
        if content == "---" || content.starts_with("--- ") {
            documents += 1;
            if documents > 1 || seen || !content[3..].trim().is_empty() {
                return Err(err("more than one document, or content after `---`"));
            }
            continue;
        }
        if content == "..." {
            return Err(err("a document end marker"));
        }
        let indented = content.starts_with(' ');
        if !indented {
            in_packages = false;
            let Some((key, rest)) = content.split_once(':') else {
                return Err(err("a top-level line that is not `key: …`"));
            };
            let key = unquote_key(key.trim_end()).ok_or_else(|| err("a top-level key"))?;
            if key != "packages" {
                continue;
            }
            if seen {
                return Err(err("a second `packages:` key"));
            }
            seen = true;
            let rest = rest.trim();
            if rest.is_empty() {
                in_packages = true;
            } else if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                    globs.push(scalar(item).map_err(err)?);
                }
            } else {
                return Err(err("`packages:` is not a list"));
            }
            continue;
        }
        if !in_packages {
            // Inside another top-level key.
            continue;
        }
        let item = content.trim_start();
        let Some(value) = item.strip_prefix('-') else {
            return Err(err("a line under `packages:` that is not a list item"));
        };
        if !value.is_empty() && !value.starts_with(' ') {
            return Err(err("a list item without a space after `-`"));
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(err(
                "an empty list item (or one continued on the next line)",
            ));
        }
        globs.push(scalar(value).map_err(err)?);
    }
    Ok(globs)
}

/// The line without its comment: `#` at the start or after a space, outside quotes.
fn strip_comment(line: &str) -> Result<&str, &'static str> {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '#' && previous == ' ' => return Ok(line[..at].trim_end()),
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {}
        }
        previous = c;
    }
    if quote.is_some() {
        return Err("a quoted string that does not end on its line");
    }
    Ok(line.trim_end())
}

/// A top-level key, plain or quoted.
fn unquote_key(key: &str) -> Option<&str> {
    for q in ['\'', '"'] {
        if let Some(inner) = key.strip_prefix(q) {
            return inner.strip_suffix(q);
        }
    }
    (!key.is_empty() && !key.contains(['\'', '"', ' '])).then_some(key)
}

/// One scalar of the list: quoted without escapes, or plain without YAML's indicators.
fn scalar(value: &str) -> Result<String, &'static str> {
    for q in ['\'', '"'] {
        if let Some(rest) = value.strip_prefix(q) {
            let inner = rest
                .strip_suffix(q)
                .ok_or("a quoted item with something after its closing quote")?;
            if inner.contains(q) || inner.contains('\\') {
                return Err("a quoted item with an escape");
            }
            return Ok(inner.to_string());
        }
    }
    let first = value.chars().next().unwrap_or(' ');
    if "!&*|>[]{}%@`,?:-#".contains(first) {
        return Err("an item that starts with a YAML indicator (quote it)");
    }
    if value.contains(": ") || value.ends_with(':') {
        return Err("an item that is a mapping");
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_forms_are_read() {
        let text = "# a workspace\npackages:\n  # every package\n  - 'packages/*'\n  - \"apps/**\"\n  - components/**   # trailing\n  - '!**/test/**'\n\ncatalog:\n  react: ^18\n  packages: not-this\nonlyBuiltDependencies:\n  - esbuild\n";
        assert_eq!(
            packages(text).unwrap(),
            ["packages/*", "apps/**", "components/**", "!**/test/**"]
        );
        let flow = "---\npackages: ['packages/*', \"tools/x\"]\n";
        assert_eq!(packages(flow).unwrap(), ["packages/*", "tools/x"]);
        let unindented = "packages:\n- lib\n- app\nother: 1\n";
        assert_eq!(
            packages(unindented).unwrap_err().reason,
            "a top-level line that is not `key: …`"
        );
        assert!(packages("catalog:\n  a: 1\n").unwrap().is_empty());
    }

    #[test]
    fn what_is_not_read_is_refused_with_its_line() {
        let cases = [
            (
                "packages:\n  - !tagged\n",
                2,
                "an item that starts with a YAML indicator (quote it)",
            ),
            (
                "packages:\n  - *alias\n",
                2,
                "an item that starts with a YAML indicator (quote it)",
            ),
            ("packages: &a\n  - x\n", 1, "`packages:` is not a list"),
            (
                "packages:\n  - |\n    x\n",
                2,
                "an item that starts with a YAML indicator (quote it)",
            ),
            ("packages:\n  - a: b\n", 2, "an item that is a mapping"),
            (
                "packages:\n  -\n    x\n",
                2,
                "an empty list item (or one continued on the next line)",
            ),
            ("packages:\n\t- x\n", 2, "a tab character"),
            ("packages:\n  - 'a\\b'\n", 2, "a quoted item with an escape"),
            (
                "packages:\n  - 'open\n",
                2,
                "a quoted string that does not end on its line",
            ),
            (
                "packages:\n  - x\npackages:\n  - y\n",
                3,
                "a second `packages:` key",
            ),
            (
                "packages:\n  - x\n---\npackages: []\n",
                3,
                "more than one document, or content after `---`",
            ),
            (
                "packages:\n  x: y\n",
                2,
                "a line under `packages:` that is not a list item",
            ),
            ("packages: packages/*\n", 1, "`packages:` is not a list"),
        ];
        for (text, line, reason) in cases {
            let err = packages(text).unwrap_err();
            assert_eq!((err.line, err.reason), (line, reason), "{text:?}");
        }
    }
}

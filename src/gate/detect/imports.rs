//! The packages a JavaScript or TypeScript file imports by a bare specifier: `import … from
//! 'pkg'`, `import 'pkg'`, `export … from 'pkg'`, `require('pkg')` and `import('pkg')`,
//! scoped names and subpaths included (`@scope/pkg/sub` is the package `@scope/pkg`); and,
//! apart, the relative paths it imports the same ways (`../packages/app/src/index`).
//!
//! The text is read by a small lexer that skips comments and knows string and template
//! literals, so an import in a comment or a string names nothing. Relative and absolute
//! paths, `node:` and other URL-like specifiers, and specifiers built at run time are not
//! packages. A regular expression literal that holds a quote can confuse the lexer; it can
//! only add or hide a package name, never run anything.

/// The packages `text` imports by a bare specifier, sorted, each once.
pub(crate) fn imported_packages(text: &str) -> Vec<String> {
    let mut found: Vec<String> = specifiers(text)
        .iter()
        .filter_map(|s| package_of(s))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The relative paths `text` imports (`./x`, `../x`, `.`, `..`), as written, each once.
pub(crate) fn relative_specifiers(text: &str) -> Vec<String> {
    let mut found: Vec<String> = specifiers(text)
        .into_iter()
        .filter(|s| s == "." || s == ".." || s.starts_with("./") || s.starts_with("../"))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The package a bare specifier names: `@scope/name` or `name`, without a subpath; `None`
/// for a relative or absolute path, a URL-like specifier (`node:fs`, `https://…`) or
/// something that is no package name.
pub(crate) fn package_of(specifier: &str) -> Option<String> {
    let mut parts = specifier.split('/');
    let first = parts.next()?;
    let name = if let Some(scope) = first.strip_prefix('@') {
        let second = parts.next()?;
        if !valid_part(scope) || !valid_part(second) {
            return None;
        }
        format!("{first}/{second}")
    } else {
        if !valid_part(first) || first.starts_with('.') || first.starts_with('_') {
            return None;
        }
        first.to_string()
    };
    Some(name)
}

/// One part of a package name: what npm accepts in a name, minus uppercase (old packages
/// may have it, so it is kept) and `:` (a URL scheme).
fn valid_part(part: &str) -> bool {
    !part.is_empty()
        && part.len() <= 214
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// The module specifiers of `text`: the string literal after `from`, `import`,
/// `require(` or `import(`.
fn specifiers(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    // The code seen so far with comments and literals blanked, to look behind a literal.
    let mut code: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            code.push(b' ');
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(bytes.len());
            code.push(b' ');
            continue;
        }
        if matches!(b, b'\'' | b'"' | b'`') {
            let start = i + 1;
            let mut j = start;
            let mut escaped = false;
            while j < bytes.len() {
                let c = bytes[j];
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == b || (c == b'\n' && b != b'`') {
                    // The closing quote, or a line end no plain string may hold.
                    break;
                }
                j += 1;
            }
            let literal = &bytes[start..j.min(bytes.len())];
            let plain = b != b'`' || !literal.windows(2).any(|w| w == b"${");
            if plain
                && !literal.contains(&b'\\')
                && preceded_by_import(&code)
                && let Ok(s) = std::str::from_utf8(literal)
            {
                found.push(s.to_string());
            }
            code.extend_from_slice(b"\"\"");
            i = j + 1;
            continue;
        }
        code.push(b);
        i += 1;
    }
    found
}

/// Whether the code before a literal ends with a word that makes it a module specifier.
fn preceded_by_import(code: &[u8]) -> bool {
    let end = code
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    let code = &code[..end];
    let word_ends = |word: &[u8]| {
        code.ends_with(word)
            && code
                .len()
                .checked_sub(word.len() + 1)
                .is_none_or(|p| !is_ident(code[p]))
    };
    if word_ends(b"from") || word_ends(b"import") {
        return true;
    }
    let Some(before_paren) = code.strip_suffix(b"(") else {
        return false;
    };
    let end = before_paren
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    let callee = &before_paren[..end];
    [b"require".as_slice(), b"import".as_slice()]
        .iter()
        .any(|word| {
            callee.ends_with(word)
                && callee
                    .len()
                    .checked_sub(word.len() + 1)
                    .is_none_or(|p| !is_ident(callee[p]) && callee[p] != b'.')
        })
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_import_form_names_its_package() {
        let text = r#"
import { add } from 'lib';
import def, * as all from "@scope/util/sub/path.js";
import 'side-effect';
export { x } from 'reexported'
export * from "@acme/star";
const a = require('required/deep');
const b = require ( "spaced" );
const c = await import('dynamic');
import type { T } from 'types-only';
"#;
        assert_eq!(
            imported_packages(text),
            [
                "@acme/star",
                "@scope/util",
                "dynamic",
                "lib",
                "reexported",
                "required",
                "side-effect",
                "spaced",
                "types-only",
            ]
        );
    }

    #[test]
    fn paths_builtins_comments_and_plain_strings_name_nothing() {
        let text = r#"
import { a } from './local.js';
import { b } from '../up/lib';
import fs from 'node:fs';
import x from '/abs/path';
import y from 'https://example.com/mod.js';
// import { c } from 'commented';
/* const d = require('blocked'); */
const s = "import from 'in-a-string'";
const t = `${x} from 'template'`;
const u = myrequire('not-require');
const v = obj.require('method');
const w = fromage('cheese');
const z = import(`dyn-${name}`);
const q = require('esc\'aped');
"#;
        assert!(
            imported_packages(text).is_empty(),
            "{:?}",
            imported_packages(text)
        );
    }

    #[test]
    fn relative_paths_are_read_as_written() {
        let text = r#"
import { App } from '../../packages/app/src/index';
import { b } from './local.js';
export * from '..';
const c = require('./local.js');
import x from '/abs/path';
import y from '.hidden';
// import { d } from '../commented';
const s = "import from '../in-a-string'";
import z from 'lib';
"#;
        assert_eq!(
            relative_specifiers(text),
            ["..", "../../packages/app/src/index", "./local.js"]
        );
    }

    #[test]
    fn a_package_is_its_scope_and_name_without_the_subpath() {
        assert_eq!(package_of("lib").as_deref(), Some("lib"));
        assert_eq!(package_of("lib/dist/x.js").as_deref(), Some("lib"));
        assert_eq!(package_of("@s/p").as_deref(), Some("@s/p"));
        assert_eq!(package_of("@s/p/q").as_deref(), Some("@s/p"));
        for none in [
            "@s", "@/p", ".", "..", "./x", "/x", "node:fs", "", "_x", "a b",
        ] {
            assert_eq!(package_of(none), None, "{none}");
        }
    }
}

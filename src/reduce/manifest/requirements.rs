//! pip requirements and constraints files, read line by line with pip's rules (backslash
//! continuations, `#` comments, shell-like quoting of option values): each logical line is a
//! deletion candidate.

use super::types::{Levels, ManifestEdit, ManifestKind, extend_over_comments, line_end};

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

pub(super) fn requirements_candidates(src: &str) -> Vec<Vec<ManifestEdit>> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

    /// The files named by `-r FILE`, `--requirement FILE`, `-c FILE` and `--constraint FILE`, in
    /// file order, read with the same option parser the labels use.
    fn includes(src: &str) -> Vec<String> {
        let text = src.strip_prefix('\u{feff}').unwrap_or(src);
        req_logical_lines(text)
            .into_iter()
            .filter(|line| line.text.starts_with('-'))
            .flat_map(|line| req_options(&line.text))
            .filter(|(option, _)| *option == "--requirement" || *option == "--constraint")
            .map(|(_, value)| value)
            .collect()
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
            includes(REQUIREMENTS),
            ["other.txt", "base.txt", "constraints.txt"]
        );
        let odd = "-rfirst.txt\n--requirem second.txt\n--constraint=\"with space.txt\"\n# -r commented.txt\nfoo # -r trailing.txt\n-r \\\n  continued.txt\n--re ambiguous.txt\n-e ./local\n";
        assert_eq!(includes("\u{feff}-r a.txt\n"), ["a.txt"]);
        assert_eq!(
            includes(odd),
            ["first.txt", "second.txt", "with space.txt", "continued.txt"]
        );
        // A comment line ends a continuation (pip's rule) and belongs to it.
        let src = "alpha \\\n# note\nbeta\n";
        let levels = levels_of(ManifestKind::Requirements, src);
        assert_eq!(levels[0][0].delete, vec![0..15]);
        assert_eq!(levels[0][1].delete, vec![15..20]);
    }
}

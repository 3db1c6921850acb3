//! go.mod and go.work, read with a small line and token scanner that follows Go's own rules:
//! directives, directive blocks and the lines inside them as deletion candidates.

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, extend_over_comments, line_end, line_number,
    parse_error,
};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum GoToken {
    Word(String),
    Str(String),
    Open,
    Close,
}

pub(super) struct GoLine {
    start: usize,
    end: usize,
    pub(super) tokens: Vec<GoToken>,
}

pub(super) fn go_lex(kind: ManifestKind, src: &str) -> Result<Vec<GoLine>, ManifestError> {
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

pub(super) fn go_token_text(t: Option<&GoToken>) -> &str {
    match t {
        Some(GoToken::Word(w)) | Some(GoToken::Str(w)) => w,
        _ => "",
    }
}

pub(super) fn go_candidates(
    kind: ManifestKind,
    src: &str,
) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;

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
}

//! Bundler's Gemfile: single-line `gem` calls and `group ... do` blocks as deletion candidates.

use std::ops::Range;

use super::types::{
    Levels, ManifestEdit, ManifestError, ManifestKind, extend_over_comments, line_end, line_number,
    line_start, only_blanks_before, parse_error,
};

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

pub(super) fn gemfile_candidates(src: &str) -> Result<Vec<Vec<ManifestEdit>>, ManifestError> {
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
    use super::super::candidates;
    use super::super::tests::*;
    use super::*;

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
}

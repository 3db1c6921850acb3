//! Small text helpers that several layers share, each written once: lowercase hex, cuts to
//! a number of characters or bytes, shell words and the removal of terminal escapes.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// Writes `bytes` as lowercase hex, two digits a byte.
pub(crate) fn write_hex(out: &mut dyn fmt::Write, bytes: &[u8]) -> fmt::Result {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.write_char(char::from(DIGITS[usize::from(byte >> 4)]))?;
        out.write_char(char::from(DIGITS[usize::from(byte & 0xf)]))?;
    }
    Ok(())
}

/// `bytes` as lowercase hex, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    let _ = write_hex(&mut out, bytes);
    out
}

/// Cuts `text` to at most `max_chars` characters (Unicode scalar values): a text over the
/// limit keeps its first characters and ends with `ellipsis`, the whole within the limit.
pub fn clip(text: &str, max_chars: usize, ellipsis: &str) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let keep = max_chars.saturating_sub(ellipsis.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(ellipsis);
    out
}

/// The first `max` bytes of `text` at most, ending on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text`, or its first `max` bytes (cut at a character boundary) and a note of how many
/// were left out.
pub fn clip_bytes(text: &str, max: usize) -> String {
    let kept = cut(text, max);
    if kept.len() == text.len() {
        return text.to_string();
    }
    format!("{kept}…[{} bytes cut]", text.len() - kept.len())
}

/// `text` as one shell word: as it is when it holds only characters the shell reads
/// literally, else in single quotes.
pub(crate) fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,/=:@+%".contains(&b))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A terminal escape: a CSI sequence (colours, cursor moves), an OSC sequence (titles,
/// links) ended by BEL or ST, or a lone ESC.
static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(clippy::unwrap_used, reason = "a constant pattern, tested")]
    Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b").unwrap()
});

/// `text` without terminal escapes (CSI, OSC and lone ESC bytes).
pub(crate) fn strip_ansi(text: &str) -> Cow<'_, str> {
    ANSI.replace_all(text, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0, 0x0f, 0xa0, 0xff]), "000fa0ff");
        for byte in 0..=u8::MAX {
            assert_eq!(hex(&[byte]), format!("{byte:02x}"));
        }
        let mut shown = String::from("x");
        write_hex(&mut shown, &[1, 2]).unwrap();
        assert_eq!(shown, "x0102");
    }

    #[test]
    fn clip_counts_characters_and_keeps_the_ellipsis_within_the_limit() {
        assert_eq!(clip("abc", 3, "…"), "abc");
        assert_eq!(clip("abcd", 3, "…"), "ab…");
        assert_eq!(clip("abcd", 3, "..."), "...");
        assert_eq!(clip("ééééé", 4, "..."), "é...");
        assert_eq!(clip("abcd", 2, "..."), "...");
        for n in 0..8 {
            let text = "aé😀b".repeat(3);
            let out = clip(&text, n, "…");
            assert!(out.chars().count() <= n.max(1), "{n}: {out}");
        }
    }

    #[test]
    fn byte_cuts_end_on_a_character_boundary() {
        assert_eq!(cut("ééé", 3), "é");
        assert_eq!(cut("abc", 10), "abc");
        assert_eq!(clip_bytes("short", 10), "short");
        assert_eq!(clip_bytes("ééé", 3), "é…[4 bytes cut]");
        assert_eq!(clip_bytes("abcdef", 0), "…[6 bytes cut]");
        let text = "x😀y".repeat(5);
        for max in 0..text.len() + 2 {
            let kept = cut(&text, max);
            assert!(kept.len() <= max && text.starts_with(kept));
            assert!(kept.len() + 4 > max || kept.len() == text.len());
        }
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("pytest>=7"), "'pytest>=7'");
        assert_eq!(
            shell_quote("a-b_c.d,e/f=g:h@i+j%k"),
            "a-b_c.d,e/f=g:h@i+j%k"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("x'y"), "'x'\\''y'");
        assert_eq!(
            shell_quote("pkg; python_version<'3.9'"),
            "'pkg; python_version<'\\''3.9'\\'''"
        );
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("é"), "'é'");
    }

    #[test]
    fn escapes_go_and_text_stays() {
        let cases = [
            ("\x1b[1;31mError\x1b[0m: x", "Error: x"),
            (
                "\x1b[2mError: expect(\x1b[22mreceived)",
                "Error: expect(received)",
            ),
            ("a\x1b]0;title\x07b\x1b]8;;u\x1b\\c", "abc"),
            ("lone \x1b escape", "lone  escape"),
            ("\x1b[2~AssertionError", "AssertionError"),
            ("plain [31m text", "plain [31m text"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_ansi(input), want, "{input:?}");
        }
        assert!(matches!(strip_ansi("no escape"), Cow::Borrowed(_)));
    }

    /// Every SGR sequence (what colouring test runners print) goes whole and nothing else
    /// goes with it.
    #[test]
    fn sgr_sequences_go_whole() {
        let params = ["", "0", "1;31", "38;5;208", "48;2;1;2;3", "22"];
        for p in params {
            for tail in ["AssertionError", "1 passed", "", "[x]"] {
                let text = format!("\x1b[{p}m{tail}");
                assert_eq!(strip_ansi(&text), tail, "{text:?}");
            }
        }
    }
}

//! Text a person must read exactly as a program will take it: the words of a
//! command shown in a question to the user. A word may hold characters that
//! render as nothing, reorder what follows (bidirectional controls), hide
//! text (TAG characters) or rewrite a terminal (ANSI escapes); shown as they
//! are, a question could read as one command while another runs. Here every
//! such character is written out as `\u{...}` (or `\xNN`), and each word is
//! quoted with `"` and `\` escaped, so what is shown can be read back to the
//! exact bytes and two different words never look alike.

use std::fmt::Write;

/// `word` in double quotes, every invisible or control character escaped.
pub fn quoted(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('"');
    push_escaped(&mut out, word, true);
    out.push('"');
    out
}

/// `text` line by line, each line after `prefix`, with backslashes and
/// every invisible or control character escaped (a line break inside a
/// line, such as a lone carriage return, too).
pub fn lines(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split('\n') {
        out.push_str(prefix);
        push_escaped(&mut out, line, false);
        out.push('\n');
    }
    out.pop();
    out
}

fn push_escaped(out: &mut String, text: &str, quote: bool) {
    for c in text.chars() {
        match c {
            '"' if quote => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_invisible(c) => {
                if (c as u32) < 0x80 {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                } else {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
}

/// Words, each [`quoted`], separated by spaces.
pub fn quoted_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quoted(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `c` could change how text around it is read without showing
/// itself: control characters (C0, DEL, C1), format characters (bidi
/// controls and isolates, zero-width characters, the TAG block, the byte
/// order mark and other `Cf` characters), line and paragraph separators,
/// every space other than U+0020, variation selectors, fillers that render
/// as blanks, and private-use and non-characters, which fonts draw as
/// anything.
pub fn is_invisible(c: char) -> bool {
    if c.is_control() {
        return true;
    }
    matches!(
        c as u32,
        0x00A0 | 0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x1680 | 0x17B4 | 0x17B5
            | 0x180B..=0x180F
            | 0x0600..=0x0605 | 0x06DD | 0x070F | 0x0890 | 0x0891 | 0x08E2
            | 0x2000..=0x200F
            | 0x2028..=0x202F
            | 0x205F..=0x206F
            | 0x2800
            | 0x3000 | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF | 0xFFA0
            | 0xFFF0..=0xFFFB
            | 0xE000..=0xF8FF
            | 0xFDD0..=0xFDEF
            | 0x110BD | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
            | 0xF0000..=0x10FFFF
    ) || (c as u32 & 0xFFFE) == 0xFFFE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_only_quoted() {
        assert_eq!(quoted("cargo"), "\"cargo\"");
        assert_eq!(quoted("héllo wörld"), "\"héllo wörld\"");
        assert_eq!(quoted_words(&["cargo", "build"]), "\"cargo\" \"build\"");
    }

    #[test]
    fn quotes_and_backslashes_cannot_forge_an_escape_or_a_word_boundary() {
        // A literal `\u{202e}` typed as text reads differently from the
        // character itself.
        assert_eq!(quoted("\\u{202e}"), "\"\\\\u{202e}\"");
        assert_eq!(quoted("\u{202e}"), "\"\\u{202e}\"");
        assert_eq!(quoted("a\" \"b"), "\"a\\\" \\\"b\"");
    }

    #[test]
    fn lines_keep_their_breaks_and_escape_the_rest() {
        assert_eq!(
            lines("a\nb\u{202e}c\r\n", "| "),
            "| a\n| b\\u{202e}c\\x0d\n| "
        );
        assert_eq!(lines("\\x1b", ""), "\\\\x1b");
    }

    #[test]
    fn hiding_characters_are_shown() {
        for (c, shown) in [
            ('\u{1b}', "\\x1b"),
            ('\n', "\\x0a"),
            ('\r', "\\x0d"),
            ('\u{7f}', "\\x7f"),
            ('\u{9b}', "\\u{9b}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{200b}', "\\u{200b}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{e0041}', "\\u{e0041}"),
            ('\u{e007f}', "\\u{e007f}"),
            ('\u{a0}', "\\u{a0}"),
            ('\u{3000}', "\\u{3000}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{fe0f}', "\\u{fe0f}"),
            ('\u{e000}', "\\u{e000}"),
            ('\u{3164}', "\\u{3164}"),
            ('\u{ffff}', "\\u{ffff}"),
        ] {
            assert_eq!(quoted(&format!("a{c}b")), format!("\"a{shown}b\""), "{c:?}");
        }
    }

    #[test]
    fn no_shown_word_holds_an_invisible_character() {
        for code in (0u32..0x11_0000).step_by(7) {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let shown = quoted(&c.to_string());
            assert!(
                shown.chars().all(|s| !is_invisible(s)),
                "{code:x} -> {shown:?}"
            );
        }
    }
}

//! Text a person must read exactly as a program will take it: the words of a
//! command shown in a question to the user. A word may hold characters that
//! render as nothing, reorder what follows (bidirectional controls, and
//! right-to-left letters themselves), hide text (TAG characters), draw over
//! other characters (combining marks), pass for the quotes around a word, or
//! rewrite a terminal (ANSI escapes); shown as they are, a question could
//! read as one command while another runs. Here every such character is
//! written out as `\u{...}` (or `\xNN`), long runs of spaces are counted
//! (`\x20×N`), and each word is quoted with `"` and `\` escaped, so what is
//! shown can be read back to the exact bytes and two different words never
//! look alike.

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

/// `text` on one line: backslashes and every invisible or control
/// character escaped, line breaks included.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text, false);
    out
}

/// A run of this many spaces or more is written as `\x20×N`: a long run
/// could push what follows out of view.
const SPACE_RUN: usize = 5;

fn push_escaped(out: &mut String, text: &str, quote: bool) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quote => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' ' => {
                let mut run = 1;
                while chars.peek() == Some(&' ') {
                    chars.next();
                    run += 1;
                }
                if run >= SPACE_RUN {
                    let _ = write!(out, "\\x20\u{d7}{run}");
                } else {
                    out.extend(std::iter::repeat_n(' ', run));
                }
            }
            c if is_invisible(c) || is_misleading(c) => {
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

/// Whether `c` shows, but could make the text around it read otherwise:
/// letters of right-to-left scripts (two such words in a row are drawn in
/// the opposite order, with no control character at all), combining marks
/// of the generic blocks (strike-through, stacks that cover the lines
/// above), and characters that look like the double quote words are
/// shown in.
pub fn is_misleading(c: char) -> bool {
    matches!(
        c as u32,
        0x0590..=0x08FF
            | 0xFB1D..=0xFDFF
            | 0xFE70..=0xFEFC
            | 0x10800..=0x10FFF
            | 0x1E800..=0x1EFFF
            | 0x0300..=0x036F
            | 0x1AB0..=0x1AFF
            | 0x1DC0..=0x1DFF
            | 0x20D0..=0x20FF
            | 0xFE20..=0xFE2F
            | 0x02BA | 0x02DD | 0x02EE | 0x201C..=0x201F | 0x2033 | 0x2036 | 0x3003 | 0xFF02
            | 0x275D | 0x275E | 0x1CD3
    )
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
    fn what_reorders_overlays_or_mimics_a_quote_is_escaped() {
        // Two Hebrew words in a row would be drawn in the opposite order.
        assert_eq!(quoted("\u{5d1}"), "\"\\u{5d1}\"");
        assert_eq!(quoted("s\u{336}"), "\"s\\u{336}\"");
        assert_eq!(quoted("a\u{2ba} \u{2ba}b"), "\"a\\u{2ba} \\u{2ba}b\"");
        assert_eq!(quoted("a\u{201c}"), "\"a\\u{201c}\"");
        // Long runs of spaces are counted, short ones kept.
        assert_eq!(quoted("a    b"), "\"a    b\"");
        assert_eq!(
            quoted(&format!("a{}b", " ".repeat(60_000))),
            "\"a\\x20\u{d7}60000b\""
        );
        assert_eq!(escaped("x\ny"), "x\\x0ay");
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
                shown.chars().all(|s| !is_invisible(s) && !is_misleading(s)),
                "{code:x} -> {shown:?}"
            );
        }
    }
}

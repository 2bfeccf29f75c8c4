//! Text a person must read exactly as a program will take it: the words of a
//! command shown in a question to the user. A word may hold characters that
//! render as nothing, reorder what follows (bidirectional controls, and
//! right-to-left letters themselves), hide text (TAG characters), draw over
//! other characters (combining marks), pass for the quotes around a word, or
//! rewrite a terminal (ANSI escapes); shown as they are, a question could
//! read as one command while another runs. No list of such characters is
//! ever complete (the dashes and quotes of other scripts alone are dozens),
//! so only printable ASCII is shown as it is: every other character is
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
            // Printable ASCII is shown as it is; everything else is
            // written out. No list of look-alikes (dashes, quotes, a
            // backslash of another script), reordering letters or marks
            // that draw over their neighbours could ever be complete.
            c if !(' '..='~').contains(&c) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_only_quoted() {
        assert_eq!(quoted("cargo"), "\"cargo\"");
        assert_eq!(quoted("héllo"), "\"h\\u{e9}llo\"");
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
        // Dashes, quotes and backslashes of other scripts, enclosing marks.
        assert_eq!(
            quoted("\u{2010}\u{2010}dry-run"),
            "\"\\u{2010}\\u{2010}dry-run\""
        );
        assert_eq!(
            quoted("\u{301e}\u{29f5}x20\u{489}"),
            "\"\\u{301e}\\u{29f5}x20\\u{489}\""
        );
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
    fn a_shown_word_is_printable_ascii() {
        for code in (0u32..0x11_0000).step_by(7) {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let shown = quoted(&c.to_string());
            assert!(
                shown.chars().all(|s| (' '..='~').contains(&s)),
                "{code:x} -> {shown:?}"
            );
        }
    }
}

//! How file names are shown in listings. A name may hold a newline (which
//! would read as two entries), a carriage return or an ANSI escape sequence
//! (which would rewrite what a terminal shows), or bytes that are not UTF-8
//! (which JSON cannot carry). Such names are shown escaped, and the listing
//! says so once.

use std::borrow::Cow;
use std::fmt::Write;

/// What escaping a set of names involved, for the note under a listing.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Escaped {
    /// A name held a control character.
    pub control: bool,
    /// A name held bytes that are not UTF-8.
    pub not_utf8: bool,
}

impl Escaped {
    pub fn any(self) -> bool {
        self.control || self.not_utf8
    }

    pub fn add(&mut self, other: Escaped) {
        self.control |= other.control;
        self.not_utf8 |= other.not_utf8;
    }

    /// The note a listing ends with when it showed an escaped name.
    pub fn note(self) -> Option<String> {
        if !self.any() {
            return None;
        }
        let mut note = String::from(
            "(Some names hold control characters or bytes that are not UTF-8; they are shown \
             escaped as \\n, \\r, \\t, \\xNN or \\u{NN}.",
        );
        if self.not_utf8 {
            note.push_str(
                " A name that is not UTF-8 cannot be given back as a path: rename the file to \
                 reach it.",
            );
        }
        note.push(')');
        Some(note)
    }
}

/// `bytes` (a name or a path) as text for a listing: borrowed when it is
/// UTF-8 without control characters (nearly always), else escaped.
pub fn escape_name(bytes: &[u8]) -> (Cow<'_, str>, Escaped) {
    // Printable ASCII needs no decoding: one pass the compiler vectorises,
    // where walking `chars()` costs a decode per byte on every walked path.
    if bytes.iter().all(|b| (b' '..0x7f).contains(b))
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        return (Cow::Borrowed(text), Escaped::default());
    }
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.chars().any(char::is_control)
    {
        return (Cow::Borrowed(text), Escaped::default());
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut escaped = Escaped::default();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if !c.is_control() {
                out.push(c);
                continue;
            }
            escaped.control = true;
            // Writing to a String cannot fail.
            let _ = match c {
                '\n' => write!(out, "\\n"),
                '\r' => write!(out, "\\r"),
                '\t' => write!(out, "\\t"),
                c if u32::from(c) < 0x80 => write!(out, "\\x{:02X}", u32::from(c)),
                c => write!(out, "\\u{{{:X}}}", u32::from(c)),
            };
        }
        for byte in chunk.invalid() {
            escaped.not_utf8 = true;
            let _ = write!(out, "\\x{byte:02X}");
        }
    }
    (Cow::Owned(out), escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_borrowed_and_others_escaped() {
        let (shown, escaped) = escape_name("src/main.rs".as_bytes());
        assert!(matches!(shown, Cow::Borrowed("src/main.rs")));
        assert!(!escaped.any());
        assert_eq!(escape_name("naïve ✓.txt".as_bytes()).0, "naïve ✓.txt");

        let (shown, escaped) = escape_name(b"two\nlines\r.txt");
        assert_eq!(shown, "two\\nlines\\r.txt");
        assert_eq!(
            escaped,
            Escaped {
                control: true,
                not_utf8: false
            }
        );
        assert_eq!(
            escape_name(b"\x1b[31mred\x1b[0m\t").0,
            "\\x1B[31mred\\x1B[0m\\t"
        );
        assert_eq!(escape_name("c1\u{9b}x".as_bytes()).0, "c1\\u{9B}x");

        let (shown, escaped) = escape_name(b"bad\xff\xfe-\xc3(.txt");
        assert_eq!(shown, "bad\\xFF\\xFE-\\xC3(.txt");
        assert!(escaped.not_utf8 && !escaped.control);
        assert!(escaped.note().unwrap().contains("cannot be given back"));
        assert_eq!(Escaped::default().note(), None);
    }
}

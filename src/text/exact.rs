//! Text fidelity for edits: decode a file exactly (refusing what is not
//! valid text), know its line-ending style, and encode it back byte for byte.
//!
//! Edits match on LF-normalised text but are applied to the original text,
//! through [`Normalized`], which maps offsets in the normalised text back to
//! the original. So every byte outside a replaced span stays as it was: a
//! mixed-ending file stays mixed, a BOM stays, UTF-16 stays UTF-16.

use crate::text::filekind::{self, Encoding, FileKind};

/// A line-ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
    Cr,
}

impl LineEnding {
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
            LineEnding::Cr => "\r",
        }
    }
}

/// A text file decoded exactly: `text` re-encodes to the original bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    pub encoding: Encoding,
    /// The decoded text, BOM removed, line endings as in the file.
    pub text: String,
}

/// Why a file cannot be edited as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Binary or media by the file-kind rules.
    NotText,
    /// Invalid in its detected encoding; `offset` is the first bad byte.
    Invalid { encoding: Encoding, offset: usize },
}

impl TextFile {
    /// Decodes `bytes` of the file at `path`, strictly. UTF-8 is taken over
    /// without a copy.
    pub fn decode(path: &std::path::Path, mut bytes: Vec<u8>) -> Result<TextFile, DecodeError> {
        let encoding = match filekind::classify(path, &bytes) {
            FileKind::Text(enc) => enc,
            FileKind::Svg => filekind::detect_bom(&bytes).unwrap_or(Encoding::Utf8),
            FileKind::Media(..) | FileKind::Binary => return Err(DecodeError::NotText),
        };
        let bom = encoding.bom().len();
        if encoding.is_utf8() {
            if let Err(e) = std::str::from_utf8(&bytes[bom..]) {
                return Err(DecodeError::Invalid {
                    encoding,
                    offset: bom + e.valid_up_to(),
                });
            }
            bytes.drain(..bom);
            let text = String::from_utf8(bytes).map_err(|e| DecodeError::Invalid {
                encoding,
                offset: bom + e.utf8_error().valid_up_to(),
            })?;
            return Ok(TextFile { encoding, text });
        }
        let body = &bytes[bom..];
        let decoded = match encoding {
            Encoding::Utf16Le | Encoding::Utf16Be => {
                decode_utf16(body, encoding == Encoding::Utf16Le)
            }
            _ => decode_utf32(body, encoding == Encoding::Utf32Le),
        };
        let text = decoded.map_err(|at| DecodeError::Invalid {
            encoding,
            offset: bom + at,
        })?;
        Ok(TextFile { encoding, text })
    }
}

/// Strict UTF-16 (encoding_rs, without replacement); Err is the offset of
/// the first invalid unit.
fn decode_utf16(body: &[u8], little: bool) -> Result<String, usize> {
    use encoding_rs::{DecoderResult, UTF_16BE, UTF_16LE};
    let encoding = if little { UTF_16LE } else { UTF_16BE };
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let capacity = decoder
        .max_utf8_buffer_length_without_replacement(body.len())
        .ok_or(0usize)?;
    let mut text = String::with_capacity(capacity);
    let (result, read) = decoder.decode_to_string_without_replacement(body, &mut text, true);
    match result {
        DecoderResult::InputEmpty => Ok(text),
        // The buffer was sized for the whole input: cannot happen, but an
        // answer that refuses the file is better than a panic.
        DecoderResult::OutputFull => Err(read),
        DecoderResult::Malformed(bad, after) => Err(read - usize::from(bad) - usize::from(after)),
    }
}

/// Strict UTF-32; Err is the offset of the first invalid unit.
fn decode_utf32(body: &[u8], little: bool) -> Result<String, usize> {
    let mut text = String::with_capacity(body.len() / 4);
    for (i, q) in body.chunks_exact(4).enumerate() {
        let b = [q[0], q[1], q[2], q[3]];
        let v = if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        };
        text.push(char::from_u32(v).ok_or(i * 4)?);
    }
    if !body.len().is_multiple_of(4) {
        return Err(body.len() - body.len() % 4);
    }
    Ok(text)
}

/// The bytes of `text` in `encoding`: plain UTF-8 is the text itself.
pub fn encode_cow(text: &str, encoding: Encoding) -> std::borrow::Cow<'_, [u8]> {
    match encoding {
        Encoding::Utf8 => std::borrow::Cow::Borrowed(text.as_bytes()),
        other => std::borrow::Cow::Owned(encode(text, other)),
    }
}

/// Encodes `text` in `encoding`, BOM first.
pub fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 4);
    out.extend_from_slice(encoding.bom());
    match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => out.extend_from_slice(text.as_bytes()),
        Encoding::Utf16Le => text
            .encode_utf16()
            .for_each(|u| out.extend_from_slice(&u.to_le_bytes())),
        Encoding::Utf16Be => text
            .encode_utf16()
            .for_each(|u| out.extend_from_slice(&u.to_be_bytes())),
        Encoding::Utf32Le => text
            .chars()
            .for_each(|c| out.extend_from_slice(&(c as u32).to_le_bytes())),
        Encoding::Utf32Be => text
            .chars()
            .for_each(|c| out.extend_from_slice(&(c as u32).to_be_bytes())),
    }
    out
}

/// Counts of each line ending in `text`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EndingCounts {
    pub lf: usize,
    pub crlf: usize,
    pub cr: usize,
}

pub fn count_endings(text: &str) -> EndingCounts {
    let bytes = text.as_bytes();
    if memchr::memchr(b'\r', bytes).is_none() {
        // The common case, counted at memchr speed.
        return EndingCounts {
            lf: memchr::memchr_iter(b'\n', bytes).count(),
            ..EndingCounts::default()
        };
    }
    let mut counts = EndingCounts::default();
    for i in memchr::memchr2_iter(b'\r', b'\n', bytes) {
        match bytes[i] {
            b'\n' if i > 0 && bytes[i - 1] == b'\r' => counts.crlf += 1,
            b'\n' => counts.lf += 1,
            _ if bytes.get(i + 1) == Some(&b'\n') => {}
            _ => counts.cr += 1,
        }
    }
    counts
}

/// The most frequent line ending; a tie goes to LF, then CRLF. A file with
/// no line ending at all counts as LF.
pub fn dominant_ending(text: &str) -> LineEnding {
    let c = count_endings(text);
    if c.lf >= c.crlf && c.lf >= c.cr {
        LineEnding::Lf
    } else if c.crlf >= c.cr {
        LineEnding::CrLf
    } else {
        LineEnding::Cr
    }
}

/// `text` with CRLF and lone CR turned into LF.
pub fn normalize(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\r') {
        out.push_str(&rest[..at]);
        out.push('\n');
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('\n') {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `text` (LF-normalised) with every `\n` written as `ending`.
pub fn with_ending(text: &str, ending: LineEnding) -> String {
    match ending {
        LineEnding::Lf => text.to_string(),
        other => text.replace('\n', other.as_str()),
    }
}

/// Turns lone `\n` into `\r\n`, leaving existing `\r\n` alone.
pub fn lf_to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// The LF-normalised form of a text and the way back to original offsets.
pub struct Normalized<'a> {
    /// Borrowed when the text has no carriage return (nothing to change).
    pub text: std::borrow::Cow<'a, str>,
    /// Offsets in `text` of every `\n` that stands for a `\r\n` (two bytes
    /// in the original), ascending.
    crlf_at: Vec<usize>,
}

impl<'a> Normalized<'a> {
    pub fn new(original: &'a str) -> Normalized<'a> {
        if memchr::memchr(b'\r', original.as_bytes()).is_none() {
            return Normalized {
                text: std::borrow::Cow::Borrowed(original),
                crlf_at: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut crlf_at = Vec::new();
        let mut rest = original;
        while let Some(at) = rest.find('\r') {
            text.push_str(&rest[..at]);
            rest = &rest[at + 1..];
            if let Some(after) = rest.strip_prefix('\n') {
                crlf_at.push(text.len());
                rest = after;
            }
            text.push('\n');
        }
        text.push_str(rest);
        Normalized {
            text: std::borrow::Cow::Owned(text),
            crlf_at,
        }
    }

    /// The original offset of normalised offset `at`.
    pub fn original_offset(&self, at: usize) -> usize {
        at + self.crlf_at.partition_point(|&p| p < at)
    }
}

/// Whether `text` ends with a line ending.
pub fn ends_with_newline(text: &str) -> bool {
    text.ends_with('\n') || text.ends_with('\r')
}

/// Removes one trailing line ending (`\r\n`, `\n` or `\r`).
pub fn strip_one_newline(text: &mut String) {
    if text.ends_with("\r\n") {
        text.truncate(text.len() - 2);
    } else if text.ends_with('\n') || text.ends_with('\r') {
        text.truncate(text.len() - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn decode_and_encode_round_trip_every_encoding() {
        let text = "héllo\r\n😀 wörld\n";
        for enc in [
            Encoding::Utf8,
            Encoding::Utf8Bom,
            Encoding::Utf16Le,
            Encoding::Utf16Be,
            Encoding::Utf32Le,
            Encoding::Utf32Be,
        ] {
            let bytes = encode(text, enc);
            let file = TextFile::decode(Path::new("x.txt"), bytes.clone()).unwrap();
            assert_eq!(file.encoding, enc, "{enc:?}");
            assert_eq!(file.text, text, "{enc:?}");
            assert_eq!(encode(&file.text, file.encoding), bytes, "{enc:?}");
        }
    }

    #[test]
    fn invalid_text_is_refused_not_replaced() {
        let err = TextFile::decode(Path::new("x.txt"), b"ok \xC3\x28 bad".to_vec()).unwrap_err();
        assert_eq!(
            err,
            DecodeError::Invalid {
                encoding: Encoding::Utf8,
                offset: 3
            }
        );
        // A lone high surrogate in UTF-16.
        let err =
            TextFile::decode(Path::new("x.txt"), b"\xFF\xFEa\0\x00\xD8b\0".to_vec()).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::Invalid {
                    encoding: Encoding::Utf16Le,
                    offset: 4
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            TextFile::decode(Path::new("x.png"), b"text".to_vec()).unwrap_err(),
            DecodeError::NotText
        );
        assert_eq!(
            TextFile::decode(Path::new("x"), b"a\0b".to_vec()).unwrap_err(),
            DecodeError::NotText
        );
    }

    #[test]
    fn endings_are_counted_and_the_dominant_one_wins() {
        assert_eq!(
            count_endings("a\nb\r\nc\rd\r\n"),
            EndingCounts {
                lf: 1,
                crlf: 2,
                cr: 1
            }
        );
        assert_eq!(dominant_ending("a\r\nb\r\nc\n"), LineEnding::CrLf);
        assert_eq!(dominant_ending("a\rb\rc\n"), LineEnding::Cr);
        assert_eq!(dominant_ending("a\r\nb\n"), LineEnding::Lf);
        assert_eq!(dominant_ending("a\r\nb\r"), LineEnding::CrLf);
        assert_eq!(dominant_ending("no newline"), LineEnding::Lf);
    }

    #[test]
    fn normalisation_maps_offsets_back() {
        let original = "ab\r\ncd\ref\r\ngh";
        let n = Normalized::new(original);
        assert_eq!(n.text, "ab\ncd\nef\ngh");
        assert_eq!(n.text, normalize(original));
        // Each normalised offset maps to the same character in the original.
        for (i, c) in n.text.char_indices() {
            let o = n.original_offset(i);
            let oc = original[o..].chars().next().unwrap();
            if c == '\n' {
                assert!(oc == '\r', "offset {i}");
            } else {
                assert_eq!(oc, c, "offset {i}");
            }
        }
        assert_eq!(n.original_offset(n.text.len()), original.len());
    }

    #[test]
    fn crlf_conversion_does_not_double() {
        assert_eq!(lf_to_crlf("a\nb\r\nc\n"), "a\r\nb\r\nc\r\n");
        assert_eq!(with_ending("a\nb", LineEnding::Cr), "a\rb");
        let mut s = "x\r\n".to_string();
        strip_one_newline(&mut s);
        assert_eq!(s, "x");
    }
}

//! Encoding replies: `serde_json`'s bytes, with large text blocks escaped
//! eight bytes at a time.
//!
//! A tool's answer is mostly file text (read_many_files, search, glob), and
//! escaping it byte by byte was most of the protocol thread's time for a
//! large answer. The large texts of a `tools/call` result are taken out,
//! the rest is encoded by `serde_json` with a placeholder in their place
//! (a per-process nonce between NUL characters, which `serde_json` writes
//! as `\u0000`, so no text can spell it), and each placeholder is replaced
//! by its text, escaped exactly as `serde_json` escapes it.

use std::sync::OnceLock;

use rmcp::model::{ContentBlock, JsonRpcMessage, ServerResult};
use rmcp::service::{RoleServer, TxJsonRpcMessage};

/// Texts shorter than this are left to `serde_json`.
const TAKE_OVER: usize = 4096;

/// Encodes a reply as one JSON line (without the newline), with room for
/// the newline.
pub fn encode(mut item: TxJsonRpcMessage<RoleServer>) -> serde_json::Result<Vec<u8>> {
    let mut texts = Vec::new();
    if let JsonRpcMessage::Response(response) = &mut item
        && let ServerResult::CallToolResult(result) = &mut response.result
    {
        for block in &mut result.content {
            if let ContentBlock::Text(text) = block
                && text.text.len() >= TAKE_OVER
            {
                texts.push(std::mem::replace(&mut text.text, placeholder().0.clone()));
            }
        }
    }
    let envelope = serde_json::to_vec(&item)?;
    if texts.is_empty() {
        return Ok(envelope);
    }
    let marker = &placeholder().1;
    let size: usize = texts.iter().map(|t| t.len() + t.len() / 8).sum();
    let mut out = Vec::with_capacity(envelope.len() + size + 1);
    let mut rest = &envelope[..];
    let finder = memchr::memmem::Finder::new(marker);
    for text in &texts {
        let Some(at) = finder.find(rest) else {
            // Cannot happen: every text left a placeholder.
            return Err(serde::ser::Error::custom("a placeholder went missing"));
        };
        out.extend_from_slice(&rest[..at]);
        escape_into(text, &mut out);
        rest = &rest[at + marker.len()..];
    }
    out.extend_from_slice(rest);
    Ok(out)
}

/// The placeholder text, and how `serde_json` writes it (with its quotes).
fn placeholder() -> &'static (String, Vec<u8>) {
    static PLACEHOLDER: OnceLock<(String, Vec<u8>)> = OnceLock::new();
    PLACEHOLDER.get_or_init(|| {
        let nonce = std::collections::hash_map::RandomState::new();
        let nonce = std::hash::BuildHasher::hash_one(&nonce, std::process::id());
        let text = format!("\0rootbound-text-{nonce:016x}\0");
        let encoded = serde_json::to_vec(&text).unwrap_or_default();
        (text, encoded)
    })
}

/// Writes `text` as a JSON string (quotes included), byte for byte as
/// `serde_json` does: `\"`, `\\`, `\b \t \n \f \r`, other control bytes as
/// `\u00xx`; everything else as is.
pub fn escape_into(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    loop {
        // Find the next byte to escape, eight bytes at a time.
        while i + 8 <= bytes.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[i..i + 8]);
            let found = special_bytes(u64::from_le_bytes(word));
            if found != 0 {
                i += (found.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        if i + 8 > bytes.len() {
            while i < bytes.len() && !is_special(bytes[i]) {
                i += 1;
            }
        }
        let Some(&b) = bytes.get(i) else { break };
        out.extend_from_slice(&bytes[run..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// A byte JSON needs escaped: a control byte, `"` or `\\`.
fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The high bit of each byte of `word` (little-endian) that
/// [`is_special`]; exact up to the first such byte (borrows may mark bytes
/// after it), which is all the caller uses.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    // Bytes below 0x20 (bytes of 0x80 and above never count: UTF-8).
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    control | quote | backslash
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rmcp::model::{CallToolResult, JsonRpcResponse, JsonRpcVersion2_0, RequestId};

    fn escaped(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        escape_into(text, &mut out);
        out
    }

    #[test]
    fn escapes_as_serde_json_does() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é€𝄞\u{7f}\u{2028}\"\\ plain text long enough for words");
        for text in [all.as_str(), "", "\"", "\\", "abcdefgh\"", "\u{1}\u{1f}x"] {
            assert_eq!(escaped(text), serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn any_text_is_escaped_as_serde_json_escapes_it(text in any::<String>()) {
            prop_assert_eq!(escaped(&text), serde_json::to_vec(&text).unwrap());
        }

        #[test]
        fn replies_encode_to_serde_json_bytes(
            texts in proptest::collection::vec(
                prop_oneof![".{0,40}", "[ -~\n\t\"\\\\\u{0}-\u{1f}é]{4000,9000}"], 0..5)
        ) {
            let result = CallToolResult::success(texts.iter().map(ContentBlock::text).collect());
            let item: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id: RequestId::Number(7),
                result: ServerResult::CallToolResult(result),
            });
            let expected = serde_json::to_vec(&item).unwrap();
            prop_assert_eq!(encode(item).unwrap(), expected);
        }
    }
}

//! What kind of file is this: text (and in which encoding), SVG, media, or
//! other binary.
//!
//! The decision order is fixed by the tool contract (docs/tools.md) so that
//! every tool agrees: TypeScript extensions first (`.ts` is also the MPEG
//! transport-stream extension), then SVG, media by extension or content,
//! known binary extensions, byte-order marks, and finally a look at the first
//! 4 KB for NUL or control bytes.

use std::path::Path;

/// How many leading bytes are sniffed.
pub const SNIFF_BYTES: usize = 4096;

/// The text encodings we read and write. Text without a BOM is UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
}

impl Encoding {
    /// The byte-order mark this encoding starts with (empty for plain UTF-8).
    pub fn bom(self) -> &'static [u8] {
        match self {
            Encoding::Utf8 => b"",
            Encoding::Utf8Bom => b"\xEF\xBB\xBF",
            Encoding::Utf16Le => b"\xFF\xFE",
            Encoding::Utf16Be => b"\xFE\xFF",
            Encoding::Utf32Le => b"\xFF\xFE\x00\x00",
            Encoding::Utf32Be => b"\x00\x00\xFE\xFF",
        }
    }

    /// True for encodings whose text is UTF-8 bytes after the BOM.
    pub fn is_utf8(self) -> bool {
        matches!(self, Encoding::Utf8 | Encoding::Utf8Bom)
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf8Bom => "UTF-8 with BOM",
            Encoding::Utf16Le => "UTF-16 LE",
            Encoding::Utf16Be => "UTF-16 BE",
            Encoding::Utf32Le => "UTF-32 LE",
            Encoding::Utf32Be => "UTF-32 BE",
        }
    }
}

/// The encoding announced by a byte-order mark at the start of `head`.
/// UTF-32 LE is checked before UTF-16 LE because its BOM starts with it.
pub fn detect_bom(head: &[u8]) -> Option<Encoding> {
    [
        Encoding::Utf32Le,
        Encoding::Utf32Be,
        Encoding::Utf8Bom,
        Encoding::Utf16Le,
        Encoding::Utf16Be,
    ]
    .into_iter()
    .find(|enc| head.starts_with(enc.bom()))
}

/// Media that tools return as MCP image, audio or resource blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    Image,
    Audio,
    Video,
    Pdf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Text(Encoding),
    Svg,
    Media(Media, &'static str),
    Binary,
}

/// Extensions that are binary whatever their content looks like.
const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "exe", "dll", "so", "dylib",
    "class", "jar", "war", "ear", "pyc", "pyo", "o", "a", "lib", "obj", "bin", "dat", "wasm",
    "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "iso", "dmg", "deb", "rpm",
    "msi", "apk", "node",
];

/// Media by extension: (extension, kind, mime type).
const MEDIA_EXTENSIONS: &[(&str, Media, &str)] = &[
    ("png", Media::Image, "image/png"),
    ("jpg", Media::Image, "image/jpeg"),
    ("jpeg", Media::Image, "image/jpeg"),
    ("gif", Media::Image, "image/gif"),
    ("webp", Media::Image, "image/webp"),
    ("bmp", Media::Image, "image/bmp"),
    ("mp3", Media::Audio, "audio/mpeg"),
    ("wav", Media::Audio, "audio/wav"),
    ("aiff", Media::Audio, "audio/aiff"),
    ("aif", Media::Audio, "audio/aiff"),
    ("aac", Media::Audio, "audio/aac"),
    ("ogg", Media::Audio, "audio/ogg"),
    ("flac", Media::Audio, "audio/flac"),
    ("m4a", Media::Audio, "audio/mp4"),
    ("mp4", Media::Video, "video/mp4"),
    ("m4v", Media::Video, "video/x-m4v"),
    ("webm", Media::Video, "video/webm"),
    ("mov", Media::Video, "video/quicktime"),
    ("avi", Media::Video, "video/x-msvideo"),
    ("mkv", Media::Video, "video/x-matroska"),
    ("mpeg", Media::Video, "video/mpeg"),
    ("mpg", Media::Video, "video/mpeg"),
    ("wmv", Media::Video, "video/x-ms-wmv"),
    ("flv", Media::Video, "video/x-flv"),
    ("3gp", Media::Video, "video/3gpp"),
    ("pdf", Media::Pdf, "application/pdf"),
];

/// The lower-case extension of `path`, if any.
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// Media kind and mime type by extension alone.
pub fn media_by_extension(path: &Path) -> Option<(Media, &'static str)> {
    let ext = extension(path)?;
    MEDIA_EXTENSIONS
        .iter()
        .find(|(e, _, _)| *e == ext)
        .map(|&(_, kind, mime)| (kind, mime))
}

/// The extensions recognised as media of `kind`.
pub fn media_extensions(kind: Media) -> impl Iterator<Item = &'static str> {
    MEDIA_EXTENSIONS
        .iter()
        .filter(move |(_, k, _)| *k == kind)
        .map(|&(ext, _, _)| ext)
}

/// Decides the kind of the file at `path` whose first bytes are `head`
/// (at most [`SNIFF_BYTES`] are looked at).
pub fn classify(path: &Path, head: &[u8]) -> FileKind {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    let ext = extension(path);
    let ext = ext.as_deref();
    if matches!(ext, Some("ts" | "mts" | "cts")) {
        return FileKind::Text(detect_bom(head).unwrap_or(Encoding::Utf8));
    }
    if ext == Some("svg") {
        return FileKind::Svg;
    }
    if let Some((kind, mime)) = media_by_extension(path) {
        return FileKind::Media(kind, mime);
    }
    if let Some(media) = sniff_media(head) {
        return media;
    }
    if ext.is_some_and(|e| BINARY_EXTENSIONS.contains(&e)) {
        return FileKind::Binary;
    }
    if let Some(enc) = detect_bom(head) {
        return FileKind::Text(enc);
    }
    if looks_binary(head) {
        return FileKind::Binary;
    }
    FileKind::Text(Encoding::Utf8)
}

/// Media recognised by magic numbers (`infer`).
fn sniff_media(head: &[u8]) -> Option<FileKind> {
    let found = infer::get(head)?;
    let kind = match found.matcher_type() {
        infer::MatcherType::Image => Media::Image,
        infer::MatcherType::Audio => Media::Audio,
        infer::MatcherType::Video => Media::Video,
        infer::MatcherType::Archive | infer::MatcherType::Doc
            if found.mime_type() == "application/pdf" =>
        {
            Media::Pdf
        }
        _ => return None,
    };
    Some(FileKind::Media(kind, found.mime_type()))
}

/// A NUL byte, or more than 30% control bytes (below 9, or 14 to 31).
pub fn looks_binary(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    if memchr::memchr(0, head).is_some() {
        return true;
    }
    // Branch-free, so it is vectorised.
    let control: usize = head
        .iter()
        .map(|&b| usize::from(b < 9) | usize::from(b.wrapping_sub(14) < 18))
        .sum();
    control * 10 > head.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, head: &[u8]) -> FileKind {
        classify(Path::new(name), head)
    }

    #[test]
    fn typescript_is_text_even_if_it_looks_like_video() {
        assert_eq!(
            kind("a.ts", b"G\x40\x00\x10"),
            FileKind::Text(Encoding::Utf8)
        );
        assert_eq!(kind("a.mts", b"export {}"), FileKind::Text(Encoding::Utf8));
    }

    #[test]
    fn svg_by_extension() {
        assert_eq!(kind("logo.SVG", b"<svg/>"), FileKind::Svg);
    }

    #[test]
    fn media_by_extension_and_by_content() {
        assert_eq!(
            kind("x.png", b"whatever"),
            FileKind::Media(Media::Image, "image/png")
        );
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(
            kind("no_extension", png),
            FileKind::Media(Media::Image, "image/png")
        );
        assert_eq!(
            kind("doc.pdf", b"%PDF-1.4"),
            FileKind::Media(Media::Pdf, "application/pdf")
        );
        assert_eq!(
            kind("doc.bin.x", b"%PDF-1.7\n"),
            FileKind::Media(Media::Pdf, "application/pdf")
        );
        assert_eq!(
            kind("song.FLAC", b""),
            FileKind::Media(Media::Audio, "audio/flac")
        );
        assert_eq!(
            kind("clip.mov", b""),
            FileKind::Media(Media::Video, "video/quicktime")
        );
    }

    #[test]
    fn binary_extensions_win_over_text_content() {
        assert_eq!(kind("lib.so", b"plain text"), FileKind::Binary);
        assert_eq!(kind("m.pyc", b"plain text"), FileKind::Binary);
    }

    #[test]
    fn boms_mean_text_even_with_nul_bytes() {
        assert_eq!(
            kind("u16", b"\xFF\xFEa\0b\0"),
            FileKind::Text(Encoding::Utf16Le)
        );
        assert_eq!(
            kind("u16be", b"\xFE\xFF\0a\0b"),
            FileKind::Text(Encoding::Utf16Be)
        );
        assert_eq!(
            kind("u32", b"\xFF\xFE\0\0a\0\0\0"),
            FileKind::Text(Encoding::Utf32Le)
        );
        assert_eq!(
            kind("u32be", b"\0\0\xFE\xFF\0\0\0a"),
            FileKind::Text(Encoding::Utf32Be)
        );
        assert_eq!(
            kind("u8", b"\xEF\xBB\xBFhi"),
            FileKind::Text(Encoding::Utf8Bom)
        );
    }

    #[test]
    fn nul_or_many_control_bytes_mean_binary() {
        assert_eq!(kind("x", b"abc\0def"), FileKind::Binary);
        assert_eq!(kind("x", b"\x01\x02\x03abcdef"), FileKind::Binary);
        // 3 control bytes in 10 is exactly 30%: still text.
        assert_eq!(
            kind("x", b"\x01\x02\x03abcdefg"),
            FileKind::Text(Encoding::Utf8)
        );
        // Tabs, newlines, form feeds and carriage returns are not control bytes here.
        assert_eq!(
            kind("x", b"\t\n\x0b\x0c\r\t\n\r"),
            FileKind::Text(Encoding::Utf8)
        );
        assert_eq!(kind("empty", b""), FileKind::Text(Encoding::Utf8));
    }

    #[test]
    fn only_the_first_4k_are_sniffed() {
        let mut data = vec![b'a'; SNIFF_BYTES];
        data.push(0);
        assert_eq!(kind("x", &data), FileKind::Text(Encoding::Utf8));
    }
}

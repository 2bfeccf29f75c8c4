//! Reading one file the way every read tool does: through the guard's
//! race-safe open, classified by [`crate::filekind`], size-limited, and for
//! text streamed into a window of lines.
//!
//! Tools differ only in how they present the result, so this module returns
//! data ([`Body`]) and failures ([`ReadFailure`]), never messages.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use base64::Engine;

use crate::filekind::{self, Encoding, FileKind, Media, SNIFF_BYTES};
use crate::guard::{Existence, Guard, Resolved};
use crate::text::{self, LineRange, Utf8Reader, Window};

/// 1 MB as the contract counts it.
pub const MB: u64 = 1024 * 1024;
/// Files above this are refused unless a line range is given (text) or at
/// all (media).
pub const MAX_FILE_BYTES: u64 = 20 * MB;
/// SVG above this is not shown.
pub const MAX_SVG_BYTES: u64 = MB;

/// What a file turned out to hold.
#[derive(Debug)]
pub enum Body {
    /// A window of text lines.
    Text { window: Window, encoding: Encoding },
    /// Media, base64-encoded.
    Media {
        kind: Media,
        mime: &'static str,
        base64: String,
    },
    /// Binary data that is not shown.
    Binary,
    /// An SVG too large to show.
    SvgTooLarge,
}

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadFailure {
    NotFound,
    IsDirectory,
    /// Over the 20 MB limit; `text` says whether a line range would help.
    TooLarge {
        size: u64,
        text: bool,
    },
    /// A FIFO, socket or device: never opened.
    NotRegular(String),
    Io(io::Error),
}

impl ReadFailure {
    fn from_open(e: io::Error) -> ReadFailure {
        match e.kind() {
            io::ErrorKind::NotFound => ReadFailure::NotFound,
            io::ErrorKind::InvalidInput => ReadFailure::NotRegular(e.to_string()),
            _ => ReadFailure::Io(e),
        }
    }
}

/// Size in MB with two decimals, as the limit messages show it.
pub fn megabytes(size: u64) -> String {
    format!("{:.2}", size as f64 / MB as f64)
}

/// Reads the file at `resolved`. With `range` None, the file must be at most
/// 20 MB and `default_range` lines are collected; with a range, text of any
/// size is streamed.
pub fn read(
    guard: &Guard,
    resolved: &Resolved,
    range: Option<LineRange>,
    default_range: LineRange,
) -> Result<Body, ReadFailure> {
    match &resolved.existence {
        Existence::Missing => return Err(ReadFailure::NotFound),
        Existence::Exists(m) if m.is_dir() => return Err(ReadFailure::IsDirectory),
        Existence::Exists(_) => {}
    }
    let mut file = guard.open_read(resolved).map_err(ReadFailure::from_open)?;
    let size = file.metadata().map_err(ReadFailure::Io)?.len();
    let head = read_head(&file).map_err(ReadFailure::Io)?;
    let kind = filekind::classify(&resolved.real, &head);
    let encoding = match kind {
        FileKind::Binary => return Ok(Body::Binary),
        FileKind::Media(kind, mime) => {
            if size > MAX_FILE_BYTES {
                return Err(ReadFailure::TooLarge { size, text: false });
            }
            let mut data = Vec::with_capacity(size as usize);
            file.read_to_end(&mut data).map_err(ReadFailure::Io)?;
            let base64 = base64::engine::general_purpose::STANDARD.encode(&data);
            return Ok(Body::Media { kind, mime, base64 });
        }
        FileKind::Svg if size > MAX_SVG_BYTES => return Ok(Body::SvgTooLarge),
        FileKind::Svg => filekind::detect_bom(&head).unwrap_or(Encoding::Utf8),
        FileKind::Text(encoding) => encoding,
    };
    if range.is_none() && size > MAX_FILE_BYTES {
        return Err(ReadFailure::TooLarge { size, text: true });
    }
    file.seek(SeekFrom::Start(0)).map_err(ReadFailure::Io)?;
    let window = text::read_window(
        Utf8Reader::new(file, encoding),
        range.unwrap_or(default_range),
    )
    .map_err(ReadFailure::Io)?;
    Ok(Body::Text { window, encoding })
}

/// The first bytes of a file, for sniffing.
fn read_head(file: &File) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; SNIFF_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        match file.read_at(&mut head[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    head.truncate(filled);
    Ok(head)
}

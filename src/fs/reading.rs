//! Reading one file the way every read tool does: through the guard's
//! race-safe open, classified by [`crate::text::filekind`], size-limited, and for
//! text streamed into a window of lines.
//!
//! Tools differ only in how they present the result, so this module returns
//! data ([`Body`]) and failures ([`ReadFailure`]), never messages.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use base64::Engine;

use crate::fs::guard::{Existence, Guard, Resolved};
use crate::fs::writing::FileVersion;
use crate::text::filekind::{self, Encoding, FileKind, Media, SNIFF_BYTES};
use crate::text::lines::{self, LineIndex, LineRange, Utf8Reader, Window};

/// 1 MB as the contract counts it.
pub const MB: u64 = 1024 * 1024;
/// Files above this are refused unless a line range is given (text) or at
/// all (media).
pub const MAX_FILE_BYTES: u64 = 20 * MB;
/// Files up to this size are read in one go.
const SMALL_FILE_BYTES: u64 = 256 * 1024;
/// SVG above this is not shown.
pub const MAX_SVG_BYTES: u64 = MB;

/// What a file turned out to hold.
#[derive(Debug)]
pub enum Body {
    /// A window of text lines.
    Text { window: Window },
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

/// A regular file opened through the guard, not yet read.
#[derive(Debug)]
pub struct Opened {
    file: File,
    size: u64,
    real: PathBuf,
    version: crate::fs::writing::FileVersion,
}

impl Opened {
    /// Size in bytes: what reading it may cost.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file's path with every link resolved.
    pub fn real(&self) -> &std::path::Path {
        &self.real
    }

    /// Which version of the file this is (see `tools/seen.rs`).
    pub fn version(&self) -> &crate::fs::writing::FileVersion {
        &self.version
    }
}

/// Opens the file at `resolved` for reading (cheap: no content is read).
pub fn open(guard: &Guard, resolved: &Resolved) -> Result<Opened, ReadFailure> {
    match resolved.existence() {
        Existence::Missing => return Err(ReadFailure::NotFound),
        Existence::Exists(m) if m.is_dir() => return Err(ReadFailure::IsDirectory),
        Existence::Exists(_) => {}
    }
    let (file, metadata) = guard.open_read(resolved).map_err(ReadFailure::from_open)?;
    Ok(Opened {
        file,
        size: metadata.len(),
        real: resolved.real().to_path_buf(),
        version: crate::fs::writing::FileVersion::of(&metadata),
    })
}

/// How many files' line indexes a server keeps (each a few tens of
/// kilobytes at most).
const KEPT_INDEXES: usize = 32;

/// The line indexes of the big UTF-8 files read last ([`LineIndex`]), so
/// that reading a file window by window scans it once, not once per window.
/// An index is used only for the very version of the file it was made from
/// (device, inode, size, change and modification times): a file that
/// changed in any way is scanned, and indexed, again.
#[derive(Debug, Default)]
pub struct LineIndexes(Mutex<VecDeque<Indexed>>);

/// One file's index, and what it was made from.
#[derive(Debug)]
struct Indexed {
    real: PathBuf,
    version: FileVersion,
    encoding: Encoding,
    index: Arc<LineIndex>,
}

impl LineIndexes {
    fn get(
        &self,
        real: &Path,
        version: &FileVersion,
        encoding: Encoding,
    ) -> Option<Arc<LineIndex>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept
            .iter()
            .position(|i| i.real == real && i.version == *version && i.encoding == encoding)?;
        let entry = kept.remove(at)?;
        let index = entry.index.clone();
        kept.push_front(entry);
        Some(index)
    }

    fn put(&self, real: PathBuf, version: FileVersion, encoding: Encoding, index: LineIndex) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|i| i.real != real);
        kept.push_front(Indexed {
            real,
            version,
            encoding,
            index: Arc::new(index),
        });
        kept.truncate(KEPT_INDEXES);
    }
}

/// Reads an opened file. With `range` None, the file must be at most 20 MB
/// and `default_range` lines are collected; with a range, text of any size
/// is streamed. With `lines`, a text window always holds its lines
/// (file_read numbers them); otherwise a small file that fits is returned in
/// one piece.
/// A big UTF-8 text file is indexed as it is read, in `indexes`, and read
/// from its index the next time (see [`LineIndexes`]).
pub fn read(
    opened: Opened,
    range: Option<LineRange>,
    default_range: LineRange,
    lines: bool,
    indexes: &LineIndexes,
) -> Result<Body, ReadFailure> {
    let Opened {
        mut file,
        size,
        real,
        version,
    } = opened;
    let range_or_default = range.unwrap_or(default_range);
    // A small file is read whole, once: sniffing and the window then work
    // on memory (fewer system calls than sniff, seek and stream).
    if size <= SMALL_FILE_BYTES {
        let mut data = Vec::with_capacity(size as usize + 1);
        // The size was checked against the small-file limit: read no more,
        // however the file grows (procfs files say 0 and hold gigabytes).
        (&mut file)
            .take(SMALL_FILE_BYTES)
            .read_to_end(&mut data)
            .map_err(ReadFailure::Io)?;
        let kind = filekind::classify(&real, &data[..data.len().min(SNIFF_BYTES)]);
        let may_show_whole = !lines && range_or_default.start == 0;
        return body_of_whole(data, kind, size, range_or_default, may_show_whole);
    }
    let head = read_head(&file).map_err(ReadFailure::Io)?;
    let kind = filekind::classify(&real, &head);
    let encoding = match kind {
        FileKind::Binary => return Ok(Body::Binary),
        FileKind::Media(..) => {
            if size > MAX_FILE_BYTES {
                return Err(ReadFailure::TooLarge { size, text: false });
            }
            let mut data = Vec::with_capacity(size as usize);
            // No more than the size checked above, however the file grows.
            file.take(size)
                .read_to_end(&mut data)
                .map_err(ReadFailure::Io)?;
            return body_of_whole(data, kind, size, range_or_default, false);
        }
        FileKind::Svg if size > MAX_SVG_BYTES => return Ok(Body::SvgTooLarge),
        FileKind::Svg => filekind::detect_bom(&head).unwrap_or(Encoding::Utf8),
        FileKind::Text(encoding) => encoding,
    };
    if range.is_none() && size > MAX_FILE_BYTES {
        return Err(ReadFailure::TooLarge { size, text: true });
    }
    // Streamed up to the size the file had when it was opened: a file that
    // keeps growing (a log being written, a procfs file) cannot make the
    // read endless.
    if !encoding.is_utf8() {
        let window =
            lines::read_window(Utf8Reader::new(file.take(size), encoding), range_or_default)
                .map_err(ReadFailure::Io)?;
        return Ok(Body::Text { window });
    }
    // UTF-8's stream is the file's bytes after the BOM: a mark's offset in
    // it is a place in the file.
    let bom = encoding.bom().len() as u64;
    let len = size.saturating_sub(bom);
    if let Some(index) = indexes.get(&real, &version, encoding) {
        let from = index.resume_point(range_or_default.start);
        file.seek(io::SeekFrom::Start(bom + from.offset))
            .map_err(ReadFailure::Io)?;
        let rest = file.take(len.saturating_sub(from.offset));
        let window = lines::read_window_from(rest, range_or_default, from, &index)
            .map_err(ReadFailure::Io)?;
        return Ok(Body::Text { window });
    }
    let (window, index) = lines::read_window_indexing(
        Utf8Reader::new(file.take(size), encoding),
        range_or_default,
        len,
    )
    .map_err(ReadFailure::Io)?;
    indexes.put(real, version, encoding, index);
    Ok(Body::Text { window })
}

/// A small text file shown whole, read straight into one buffer after
/// `prefix` and followed by `suffix` (read_many_files' block), or what
/// [`read`] says of any other file. The buffer is sized once, from the
/// file's size; the text is neither copied nor split into lines.
pub enum Block {
    /// `prefix`, the file's text, `suffix`.
    Whole(String),
    /// Not a small UTF-8 text file that fits whole: as [`read`] answers.
    Other(Body),
}

/// Reads an opened file for a block of `prefix` + text + `suffix`: a small
/// UTF-8 text file (no BOM) of at most `default_range.count` lines, none cut,
/// comes back whole in one buffer; anything else as [`read`] with no range.
pub fn read_block(
    opened: Opened,
    default_range: LineRange,
    prefix: &str,
    suffix: &str,
    indexes: &LineIndexes,
) -> Result<Block, ReadFailure> {
    if opened.size > SMALL_FILE_BYTES {
        return read(opened, None, default_range, false, indexes).map(Block::Other);
    }
    let Opened {
        mut file,
        size,
        real,
        ..
    } = opened;
    let mut buf = Vec::with_capacity(prefix.len() + size as usize + suffix.len() + 1);
    buf.extend_from_slice(prefix.as_bytes());
    // The size was checked against the small-file limit: read no more.
    (&mut file)
        .take(SMALL_FILE_BYTES)
        .read_to_end(&mut buf)
        .map_err(ReadFailure::Io)?;
    let data = &buf[prefix.len()..];
    let kind = filekind::classify(&real, &data[..data.len().min(SNIFF_BYTES)]);
    if matches!(kind, FileKind::Text(Encoding::Utf8))
        && lines::fits_whole(data, default_range.count)
    {
        buf.extend_from_slice(suffix.as_bytes());
        match String::from_utf8(buf) {
            Ok(block) => return Ok(Block::Whole(block)),
            Err(e) => buf = e.into_bytes(),
        }
        buf.truncate(buf.len() - suffix.len());
    }
    let data = buf.split_off(prefix.len());
    body_of_whole(data, kind, size, default_range, true).map(Block::Other)
}

/// What [`read`] answers for a file already read whole and classified:
/// `range`'s lines, or with `may_show_whole` a UTF-8 text that fits the
/// range in one piece.
fn body_of_whole(
    data: Vec<u8>,
    kind: FileKind,
    size: u64,
    range: LineRange,
    may_show_whole: bool,
) -> Result<Body, ReadFailure> {
    let encoding = match kind {
        FileKind::Binary => return Ok(Body::Binary),
        FileKind::Media(kind, mime) => {
            let base64 = base64::engine::general_purpose::STANDARD.encode(&data);
            return Ok(Body::Media { kind, mime, base64 });
        }
        FileKind::Svg if size > MAX_SVG_BYTES => return Ok(Body::SvgTooLarge),
        FileKind::Svg => {
            filekind::detect_bom(&data[..data.len().min(SNIFF_BYTES)]).unwrap_or(Encoding::Utf8)
        }
        FileKind::Text(encoding) => encoding,
    };
    if may_show_whole
        && encoding.is_utf8()
        && let Some(window) = lines::whole_text(&data[encoding.bom().len()..], range.count)
    {
        return Ok(Body::Text { window });
    }
    let window =
        lines::read_window(Utf8Reader::new(&data[..], encoding), range).map_err(ReadFailure::Io)?;
    Ok(Body::Text { window })
}

/// The first bytes of a file, for sniffing; the file is read from its
/// start afterwards as before.
fn read_head(file: &File) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; SNIFF_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        match read_at(file, &mut head[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    head.truncate(filled);
    #[cfg(windows)]
    io::Seek::seek(&mut &*file, io::SeekFrom::Start(0))?;
    Ok(head)
}

/// A positioned read (`pread`); on Windows it moves the file's position,
/// which `read_head` puts back.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset);
}

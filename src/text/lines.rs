//! Reading text: decoding to UTF-8 as a stream, and cutting a window of
//! lines out of a file of any size.
//!
//! A file's lines are the text between `\n` bytes; a final newline does not
//! start another line. [`read_window`] makes one pass over the bytes: lines
//! before the window are only counted (`memchr`), lines inside it are kept
//! (each capped so one enormous line cannot exhaust memory), and lines after
//! it are counted to report the total. Memory is proportional to the window,
//! time to the bytes scanned. That pass can also index the file
//! ([`LineIndex`]): later windows then start near their first line and stop
//! at their last.

use std::io::{self, Read};

use crate::text::filekind::Encoding;

/// Longest line, in characters, that tools return in full.
pub const MAX_LINE_CHARS: usize = 2000;
/// Appended to a line that was cut.
pub const CUT_SUFFIX: &str = "... [truncated]";
/// A window stops collecting once it holds this many bytes of text, so a huge
/// `limit` on a huge file cannot exhaust memory.
pub const MAX_WINDOW_BYTES: usize = 20 * 1024 * 1024;

const CHUNK: usize = 256 * 1024;

/// Which lines to collect.
#[derive(Debug, Clone, Copy)]
pub struct LineRange {
    /// 0-based index of the first line.
    pub start: usize,
    /// How many lines, at most.
    pub count: usize,
}

/// The lines of one window and what is known about the whole file.
#[derive(Debug, Default)]
pub struct Window {
    /// The collected lines, without their `\n` (a CRLF line keeps its `\r`),
    /// each cut to [`MAX_LINE_CHARS`] characters plus [`CUT_SUFFIX`].
    pub lines: Vec<String>,
    /// 0-based index of the first collected line.
    pub start: usize,
    /// Number of lines in the file.
    pub total: usize,
    /// Whether any collected line was cut.
    pub any_cut: bool,
    /// Whether the file's last byte is `\n`.
    pub ends_with_newline: bool,
    /// The whole text, when it was taken in one piece ([`whole_text`]);
    /// `lines` is then empty.
    pub whole: Option<String>,
}

impl Window {
    /// True when the window shows every line of the file, none of them cut.
    pub fn is_whole_file(&self) -> bool {
        self.whole.is_some() || (self.start == 0 && self.lines.len() == self.total && !self.any_cut)
    }

    /// 1-based number of the last line shown (equals `start` when empty).
    pub fn end_line(&self) -> usize {
        match self.whole {
            Some(_) => self.total,
            None => self.start + self.lines.len(),
        }
    }

    /// Keeps the first `count` lines only. A window taken whole is split
    /// into its lines first; the file's total is unchanged, so the window
    /// then no longer shows the whole file.
    pub fn keep_first(&mut self, count: usize) {
        if let Some(whole) = self.whole.take() {
            let body = if self.ends_with_newline {
                &whole[..whole.len() - 1]
            } else {
                &whole[..]
            };
            self.lines = if whole.is_empty() {
                Vec::new()
            } else {
                body.split('\n').map(str::to_string).collect()
            };
        }
        self.lines.truncate(count);
    }

    /// The text of the window: the file's own text when the window is the
    /// whole file, else the lines joined with `\n`.
    pub fn into_text(self) -> String {
        if let Some(whole) = self.whole {
            return whole;
        }
        let whole_file = self.is_whole_file();
        let mut text = self.lines.join("\n");
        if whole_file && self.ends_with_newline {
            text.push('\n');
        }
        text
    }
}

/// The whole of `data` as one string, if it is UTF-8 of at most `max_lines`
/// lines none of which is cut: the common small-file case, without
/// splitting into lines and joining them again.
pub fn whole_text(data: &[u8], max_lines: usize) -> Option<Window> {
    let text = std::str::from_utf8(data).ok()?;
    let mut total = 0usize;
    let mut line_start = 0usize;
    for end in memchr::memchr_iter(b'\n', data).chain(std::iter::once(data.len())) {
        let line = &text[line_start..end];
        // Bytes bound characters from above: only long lines need counting.
        if line.len() > MAX_LINE_CHARS && line.chars().count() > MAX_LINE_CHARS {
            return None;
        }
        if end < data.len() || !line.is_empty() {
            total += 1;
        }
        if total > max_lines {
            return None;
        }
        line_start = end + 1;
    }
    Some(Window {
        start: 0,
        total,
        ends_with_newline: data.last() == Some(&b'\n'),
        whole: Some(text.to_string()),
        ..Window::default()
    })
}

/// Whether `data` (UTF-8 or not) has at most `max_lines` lines and no line
/// over [`MAX_LINE_CHARS`] bytes: then, if it is UTF-8, it is shown whole
/// (a line of more bytes may still have few enough characters; the caller
/// takes the exact path for it). Two vectorised passes instead of one
/// search per line: a newline count, and a look back from every
/// `MAX_LINE_CHARS + 1` bytes for a newline.
pub fn fits_whole(data: &[u8], max_lines: usize) -> bool {
    let newlines = memchr::memchr_iter(b'\n', data).count();
    let lines = newlines + usize::from(data.last().is_some_and(|&b| b != b'\n'));
    if lines > max_lines {
        return false;
    }
    let mut start = 0;
    while data.len() - start > MAX_LINE_CHARS {
        match memchr::memrchr(b'\n', &data[start..=start + MAX_LINE_CHARS]) {
            Some(at) => start += at + 1,
            None => return false,
        }
    }
    true
}

/// Reads `reader` (UTF-8 bytes, see [`Utf8Reader`]) once and collects the
/// lines of `range`.
pub fn read_window<R: Read>(reader: R, range: LineRange) -> io::Result<Window> {
    window_from(reader, range, Mark::default(), None, None)
}

/// A place a read may start from: a byte of the UTF-8 stream and the line
/// it belongs to (it may fall inside that line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    /// Bytes before it in the stream.
    pub offset: u64,
    /// 0-based line of that byte.
    pub line: usize,
}

/// What one pass over a whole file learned: marks spread through it, how
/// many lines it has, and how it ends. A window after the first starts at
/// the nearest mark before it and stops at its last line, so paging
/// through a file costs its own lines, not a scan of the file each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// In stream order; the first is the start of the stream.
    marks: Vec<Mark>,
    total: usize,
    ends_with_newline: bool,
}

/// At most this many marks per file: a file of any size indexes in a
/// few tens of kilobytes.
const MAX_MARKS: u64 = 4096;
/// Marks are at least this far apart.
const MIN_MARK_SPACING: u64 = 1024 * 1024;

impl LineIndex {
    /// How far apart marks are for a stream of `len` bytes.
    fn spacing(len: u64) -> u64 {
        (len / MAX_MARKS).max(MIN_MARK_SPACING)
    }

    /// The last mark a read for line `start` can begin at: one on a line
    /// before it (a mark may lie inside its line), or the stream's start.
    pub fn resume_point(&self, start: usize) -> Mark {
        let after = self.marks.partition_point(|m| m.line < start);
        after
            .checked_sub(1)
            .and_then(|i| self.marks.get(i))
            .copied()
            .unwrap_or_default()
    }
}

/// Reads a whole stream of `len` bytes once, as [`read_window`] does, and
/// also indexes it.
pub fn read_window_indexing<R: Read>(
    reader: R,
    range: LineRange,
    len: u64,
) -> io::Result<(Window, LineIndex)> {
    indexing(reader, range, LineIndex::spacing(len))
}

fn indexing<R: Read>(reader: R, range: LineRange, spacing: u64) -> io::Result<(Window, LineIndex)> {
    let mut marks = Vec::new();
    let window = window_from(
        reader,
        range,
        Mark::default(),
        None,
        Some((&mut marks, spacing)),
    )?;
    let index = LineIndex {
        marks,
        total: window.total,
        ends_with_newline: window.ends_with_newline,
    };
    Ok((window, index))
}

/// Collects the lines of `range` from `reader`, the rest of a stream
/// `index` describes, positioned at `from` (see [`LineIndex::resume_point`]):
/// it reads from there to the window's last line only.
pub fn read_window_from<R: Read>(
    reader: R,
    range: LineRange,
    from: Mark,
    index: &LineIndex,
) -> io::Result<Window> {
    window_from(reader, range, from, Some(index), None)
}

/// The one pass behind every window: from `from`, collecting `range`;
/// with `known`, it stops after the window and takes the total from there;
/// with `marks`, it records a mark at the start of a chunk at least
/// `spacing` bytes after the last.
fn window_from<R: Read>(
    mut reader: R,
    range: LineRange,
    from: Mark,
    known: Option<&LineIndex>,
    mut marks: Option<(&mut Vec<Mark>, u64)>,
) -> io::Result<Window> {
    let end = range.start.saturating_add(range.count);
    let mut window = Window {
        start: range.start,
        ..Window::default()
    };
    let mut buf = vec![0u8; CHUNK];
    let mut line_no = from.line; // index of the line the next byte belongs to
    let mut offset = from.offset; // of the next byte in the stream
    let mut next_mark = offset;
    let mut current = LineBuf::default();
    let mut collected_bytes = 0usize;
    let mut collecting = true;
    let mut last_byte: Option<u8> = None;

    loop {
        if let Some(index) = known
            && (line_no >= end || !collecting)
        {
            // Past the window: the rest is known.
            window.total = index.total;
            window.ends_with_newline = index.ends_with_newline;
            return Ok(window);
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some((marks, spacing)) = marks.as_mut()
            && offset >= next_mark
        {
            marks.push(Mark {
                offset,
                line: line_no,
            });
            next_mark = offset + *spacing;
        }
        offset += n as u64;
        let chunk = &buf[..n];
        last_byte = chunk.last().copied();
        let mut pos = 0;
        while pos < n {
            let rest = &chunk[pos..];
            if line_no < range.start {
                // Skip to the start of the window, counting newlines.
                let wanted = range.start - line_no;
                let in_rest = memchr::memchr_iter(b'\n', rest).count();
                let target = if in_rest >= wanted {
                    memchr::memchr_iter(b'\n', rest).nth(wanted - 1)
                } else {
                    None
                };
                match target {
                    Some(at) => {
                        line_no += wanted;
                        pos += at + 1;
                    }
                    None => {
                        line_no += in_rest;
                        pos = n;
                    }
                }
            } else if line_no < end && collecting {
                match memchr::memchr(b'\n', rest) {
                    Some(at) => {
                        current.push(&rest[..at]);
                        let line = current.finish(&mut window.any_cut);
                        collected_bytes += line.len() + 1;
                        window.lines.push(line);
                        line_no += 1;
                        pos += at + 1;
                        if collected_bytes > MAX_WINDOW_BYTES {
                            collecting = false;
                        }
                    }
                    None => {
                        current.push(rest);
                        pos = n;
                    }
                }
            } else {
                // Past the window: only the total is still needed.
                line_no += memchr::memchr_iter(b'\n', rest).count();
                pos = n;
            }
        }
    }
    window.ends_with_newline = last_byte == Some(b'\n');
    let has_unterminated_line = last_byte.is_some() && !window.ends_with_newline;
    if has_unterminated_line {
        if line_no >= range.start && line_no < end && collecting {
            let line = current.finish(&mut window.any_cut);
            window.lines.push(line);
        }
        line_no += 1;
    }
    window.total = line_no;
    Ok(window)
}

/// The bytes of one line being collected, capped: a line of more than
/// `MAX_LINE_CHARS * 4` bytes has more than `MAX_LINE_CHARS` characters
/// (even counting each invalid byte as one U+FFFD), so nothing needed is lost.
#[derive(Default)]
struct LineBuf {
    bytes: Vec<u8>,
    overflowed: bool,
}

const LINE_BYTE_CAP: usize = MAX_LINE_CHARS * 4 + 4;

impl LineBuf {
    fn push(&mut self, data: &[u8]) {
        let room = LINE_BYTE_CAP.saturating_sub(self.bytes.len());
        if data.len() > room {
            self.overflowed = true;
        }
        self.bytes.extend_from_slice(&data[..data.len().min(room)]);
    }

    fn finish(&mut self, any_cut: &mut bool) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let (line, cut) = cut_line(&text);
        *any_cut |= cut || self.overflowed;
        self.bytes.clear();
        self.overflowed = false;
        line
    }
}

/// Cuts `line` to [`MAX_LINE_CHARS`] characters plus [`CUT_SUFFIX`].
/// Returns the line and whether it was cut.
pub fn cut_line(line: &str) -> (String, bool) {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => {
            let mut cut = String::with_capacity(at + CUT_SUFFIX.len());
            cut.push_str(&line[..at]);
            cut.push_str(CUT_SUFFIX);
            (cut, true)
        }
        None => (line.to_string(), false),
    }
}

/// Adapts a reader of text in `encoding` (positioned at the start of the
/// file, BOM included) into a reader of UTF-8 bytes without the BOM. UTF-8
/// passes through untouched (invalid sequences are replaced later, per line);
/// UTF-16 and UTF-32 are transcoded chunk by chunk, invalid units becoming
/// U+FFFD.
pub struct Utf8Reader<R> {
    inner: R,
    encoding: Encoding,
    bom_left: usize,
    raw: Vec<u8>,
    raw_len: usize,
    out: Vec<u8>,
    out_pos: usize,
    /// UTF-16 is decoded by encoding_rs, which keeps a unit or surrogate
    /// split between two reads; UTF-32 by hand, in whole units.
    utf16: Option<encoding_rs::Decoder>,
    eof: bool,
}

impl<R: Read> Utf8Reader<R> {
    pub fn new(inner: R, encoding: Encoding) -> Self {
        Utf8Reader {
            inner,
            encoding,
            bom_left: encoding.bom().len(),
            raw: vec![0; 64 * 1024],
            raw_len: 0,
            out: Vec::new(),
            out_pos: 0,
            utf16: match encoding {
                Encoding::Utf16Le => Some(encoding_rs::UTF_16LE.new_decoder_without_bom_handling()),
                Encoding::Utf16Be => Some(encoding_rs::UTF_16BE.new_decoder_without_bom_handling()),
                _ => None,
            },
            eof: false,
        }
    }

    fn unit_size(&self) -> usize {
        match self.encoding {
            Encoding::Utf32Le | Encoding::Utf32Be => 4,
            // UTF-16's decoder keeps partial units itself.
            Encoding::Utf8 | Encoding::Utf8Bom | Encoding::Utf16Le | Encoding::Utf16Be => 1,
        }
    }

    /// Reads more raw bytes and transcodes every whole unit.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.out_pos = 0;
        while self.out.is_empty() && !self.eof {
            let n = loop {
                match self.inner.read(&mut self.raw[self.raw_len..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.raw_len += n;
            let unit = self.unit_size();
            let whole = if self.eof {
                self.raw_len
            } else {
                self.raw_len - self.raw_len % unit
            };
            let mut start = 0;
            if self.bom_left > 0 {
                let skip = self.bom_left.min(whole);
                self.bom_left -= skip;
                start = skip;
            }
            let encoding = self.encoding;
            let data = self.raw[start..whole].to_vec();
            self.transcode(encoding, &data);
            self.raw.copy_within(whole..self.raw_len, 0);
            self.raw_len -= whole;
        }
        Ok(())
    }

    fn transcode(&mut self, encoding: Encoding, data: &[u8]) {
        match encoding {
            Encoding::Utf8 | Encoding::Utf8Bom => self.out.extend_from_slice(data),
            Encoding::Utf16Le | Encoding::Utf16Be => {
                let last = self.eof;
                if let Some(decoder) = self.utf16.as_mut() {
                    let room = decoder.max_utf8_buffer_length(data.len()).unwrap_or(0);
                    let start = self.out.len();
                    self.out.resize(start + room, 0);
                    // Invalid units become U+FFFD, as on every read.
                    let (_, _, written, _) =
                        decoder.decode_to_utf8(data, &mut self.out[start..], last);
                    self.out.truncate(start + written);
                }
            }
            Encoding::Utf32Le | Encoding::Utf32Be => {
                let mut units = data.chunks_exact(4);
                for quad in units.by_ref() {
                    let bytes = [quad[0], quad[1], quad[2], quad[3]];
                    let value = if encoding == Encoding::Utf32Le {
                        u32::from_le_bytes(bytes)
                    } else {
                        u32::from_be_bytes(bytes)
                    };
                    self.push_char(char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                if !units.remainder().is_empty() {
                    self.push_char(char::REPLACEMENT_CHARACTER);
                }
            }
        }
    }

    fn push_char(&mut self, c: char) {
        let mut tmp = [0u8; 4];
        self.out
            .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }
}

impl<R: Read> Read for Utf8Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.encoding.is_utf8() && self.bom_left == 0 {
            // Plain UTF-8 after the BOM: no copy through our buffers.
            if self.out_pos < self.out.len() {
                return self.read_out(buf);
            }
            return self.inner.read(buf);
        }
        if self.out_pos >= self.out.len() {
            self.refill()?;
        }
        self.read_out(buf)
    }
}

impl<R> Utf8Reader<R> {
    fn read_out(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = &self.out[self.out_pos..];
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a whole byte buffer in `encoding` to a `String` (BOM removed,
    /// invalid sequences as U+FFFD).
    fn decode_lossy(bytes: &[u8], encoding: Encoding) -> String {
        let mut reader = Utf8Reader::new(bytes, encoding);
        let mut out = Vec::with_capacity(bytes.len());
        // Reading from a slice cannot fail.
        let _ = reader.read_to_end(&mut out);
        match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    fn window(text: &str, start: usize, count: usize) -> Window {
        read_window(text.as_bytes(), LineRange { start, count }).unwrap()
    }

    /// A reader that hands out at most `step` bytes a read, so a small text
    /// has many chunks, and so many marks.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_window_read_from_the_index_is_the_window_a_whole_scan_finds() {
        let long = "y".repeat(MAX_LINE_CHARS + 5);
        let texts = [
            String::new(),
            "\n".into(),
            "a".into(),
            "a\nb".into(),
            "one\r\ntwo\r\n\n\nthree\n".into(),
            format!("x\n{long}\nz\n\u{e9}\u{e9}\n"),
            (0..40).map(|i| format!("line {i}\n")).collect(),
            (0..40).map(|i| format!("{i}\n")).collect::<String>() + "tail",
        ];
        for text in &texts {
            let data = text.as_bytes();
            for step in [1, 3, 7, 64] {
                let (first, index) =
                    indexing(Trickle { data, step }, LineRange { start: 0, count: 2 }, 1).unwrap();
                assert_eq!(first.total, window(text, 0, 2).total, "{text:?}");
                assert_eq!(
                    index.marks.first().copied(),
                    (!data.is_empty()).then(Mark::default)
                );
                for start in 0..index.total + 3 {
                    for count in [1, 2, 5, 1000] {
                        let range = LineRange { start, count };
                        let from = index.resume_point(start);
                        assert!(from.line < start || from == Mark::default());
                        let rest = &data[from.offset as usize..];
                        let paged = read_window_from(rest, range, from, &index).unwrap();
                        let whole = read_window(data, range).unwrap();
                        let case = format!("{text:?} step {step} start {start} count {count}");
                        assert_eq!(paged.lines, whole.lines, "{case}");
                        assert_eq!(paged.total, whole.total, "{case}");
                        assert_eq!(paged.any_cut, whole.any_cut, "{case}");
                        assert_eq!(paged.ends_with_newline, whole.ends_with_newline, "{case}");
                        assert_eq!(paged.start, whole.start, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_read_from_the_index_stops_after_its_window() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let (_, index) = indexing(
            Trickle {
                data: text.as_bytes(),
                step: 100,
            },
            LineRange { start: 0, count: 1 },
            100,
        )
        .unwrap();
        assert!(index.marks.len() > 50, "{}", index.marks.len());
        let from = index.resume_point(500);
        let mut reader = Trickle {
            data: &text.as_bytes()[from.offset as usize..],
            step: 100,
        };
        let paged = read_window_from(
            &mut reader,
            LineRange {
                start: 500,
                count: 3,
            },
            from,
            &index,
        )
        .unwrap();
        assert_eq!(paged.lines, ["line 500", "line 501", "line 502"]);
        assert_eq!(paged.total, 1000);
        // Read: from a mark at most 100 bytes before line 500, to one chunk
        // past its window.
        let read = text.len() - from.offset as usize - reader.data.len();
        assert!(read <= 300, "read {read} bytes");
    }

    #[test]
    fn a_whole_window_split_keeps_the_lines_read_window_finds() {
        for text in ["", "\n", "a", "a\n", "a\r\nb", "a\n\nb\n", "x\ny\nz"] {
            let mut whole = whole_text(text.as_bytes(), 100).unwrap();
            whole.keep_first(usize::MAX);
            let read = window(text, 0, 100);
            assert_eq!(whole.lines, read.lines, "{text:?}");
            whole.keep_first(1);
            assert_eq!(whole.lines.len(), read.total.min(1), "{text:?}");
            assert_eq!(whole.total, read.total, "{text:?}");
        }
    }

    #[test]
    fn line_counting_follows_the_contract() {
        assert_eq!(window("", 0, 10).total, 0);
        assert_eq!(window("a\nb\n", 0, 10).total, 2);
        assert_eq!(window("a\nb", 0, 10).total, 2);
        assert_eq!(window("\n", 0, 10).total, 1);
        assert_eq!(window("\n\n", 0, 10).lines, vec!["", ""]);
    }

    #[test]
    fn whole_file_returns_text_unchanged() {
        for text in ["a\nb\n", "a\nb", "a\r\nb\r\n", "", "x"] {
            let w = window(text, 0, 100);
            assert!(w.is_whole_file());
            assert_eq!(w.into_text(), text);
        }
    }

    #[test]
    fn partial_window_joins_lines_without_trailing_newline() {
        let w = window("1\n2\n3\n4\n5\n", 1, 2);
        assert_eq!(w.lines, vec!["2", "3"]);
        assert_eq!(w.total, 5);
        assert_eq!(w.start, 1);
        assert_eq!(w.end_line(), 3);
        assert!(!w.is_whole_file());
        assert_eq!(w.into_text(), "2\n3");
    }

    #[test]
    fn whole_text_fast_path_agrees_with_the_window() {
        for text in ["", "a", "a\nb\n", "a\r\nb", "\n\n", "é\n"] {
            let fast = whole_text(text.as_bytes(), 100).unwrap();
            let slow = window(text, 0, 100);
            assert_eq!(fast.total, slow.total, "{text:?}");
            assert!(fast.is_whole_file());
            assert_eq!(fast.end_line(), slow.end_line(), "{text:?}");
            assert_eq!(fast.into_text(), slow.into_text(), "{text:?}");
        }
        assert!(whole_text(b"a\nb\nc\n", 2).is_none());
        assert!(whole_text("x".repeat(MAX_LINE_CHARS + 1).as_bytes(), 9).is_none());
        assert!(whole_text("é".repeat(MAX_LINE_CHARS).as_bytes(), 9).is_some());
        assert!(whole_text(b"\xff", 9).is_none());
    }

    #[test]
    fn crlf_lines_keep_their_carriage_return() {
        let w = window("a\r\nb\r\nc\r\n", 0, 2);
        assert_eq!(w.lines, vec!["a\r", "b\r"]);
    }

    #[test]
    fn window_past_the_end_is_empty_but_counts() {
        let w = window("a\nb\n", 5, 3);
        assert!(w.lines.is_empty());
        assert_eq!(w.total, 2);
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "é".repeat(MAX_LINE_CHARS + 10);
        let w = window(&format!("short\n{long}\n"), 0, 10);
        assert!(w.any_cut);
        assert!(!w.is_whole_file());
        assert_eq!(
            w.lines[1],
            format!("{}{}", "é".repeat(MAX_LINE_CHARS), CUT_SUFFIX)
        );
        let exact = "x".repeat(MAX_LINE_CHARS);
        let w = window(&exact, 0, 1);
        assert!(!w.any_cut);
        assert_eq!(w.lines[0], exact);
    }

    #[test]
    fn huge_single_line_is_held_capped() {
        let big = vec![b'x'; 3 * CHUNK + 17];
        let w = read_window(&big[..], LineRange { start: 0, count: 1 }).unwrap();
        assert_eq!(w.total, 1);
        assert!(w.any_cut);
        assert_eq!(
            w.lines[0].chars().count(),
            MAX_LINE_CHARS + CUT_SUFFIX.len()
        );
    }

    #[test]
    fn windows_across_chunk_boundaries() {
        let text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let w = window(&text, 150_000, 3);
        assert_eq!(w.lines, vec!["line 150000", "line 150001", "line 150002"]);
        assert_eq!(w.total, 200_000);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let w = read_window(&b"ok\n\xff\xfe bad\n"[..], LineRange { start: 0, count: 9 }).unwrap();
        assert_eq!(w.lines[1], "\u{FFFD}\u{FFFD} bad");
    }

    #[test]
    fn utf16_and_utf32_are_transcoded() {
        let text = "héllo\n😀 wörld\n";
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for u in text.encode_utf16() {
            le.extend_from_slice(&u.to_le_bytes());
            be.extend_from_slice(&u.to_be_bytes());
        }
        assert_eq!(decode_lossy(&le, Encoding::Utf16Le), text);
        assert_eq!(decode_lossy(&be, Encoding::Utf16Be), text);
        let mut le32 = vec![0xFF, 0xFE, 0, 0];
        let mut be32 = vec![0, 0, 0xFE, 0xFF];
        for c in text.chars() {
            le32.extend_from_slice(&(c as u32).to_le_bytes());
            be32.extend_from_slice(&(c as u32).to_be_bytes());
        }
        assert_eq!(decode_lossy(&le32, Encoding::Utf32Le), text);
        assert_eq!(decode_lossy(&be32, Encoding::Utf32Be), text);
        assert_eq!(decode_lossy(b"\xEF\xBB\xBFbom", Encoding::Utf8Bom), "bom");
    }

    #[test]
    fn utf16_streams_through_small_reads_and_bad_surrogates() {
        // A lone high surrogate, then a valid pair split over a read boundary.
        let units: Vec<u16> = vec![0xD800, 0x0041, 0xD83D, 0xDE00, 0x000A];
        let mut bytes = vec![0xFF, 0xFE];
        for u in units {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let reader = Utf8Reader::new(OneByteReader(&bytes), Encoding::Utf16Le);
        let w = read_window(reader, LineRange { start: 0, count: 5 }).unwrap();
        assert_eq!(w.lines, vec!["\u{FFFD}A😀"]);
    }

    /// A reader that hands out one byte per call, to exercise refills.
    struct OneByteReader<'a>(&'a [u8]);

    impl Read for OneByteReader<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((b, rest)), Some(slot)) => {
                    *slot = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn fits_whole_agrees_with_whole_text_on_ascii() {
        let long = "x".repeat(MAX_LINE_CHARS);
        let cases = [
            String::new(),
            "a".into(),
            "a\nb\n".into(),
            "a\nb".into(),
            format!("{long}\n"),
            format!("{long}x\n"),
            format!("a\n{long}"),
            format!("a\n{long}y"),
            format!("{long}\n{long}\n{long}x"),
            "l\n".repeat(3),
            "l\n".repeat(4),
            "l\n".repeat(3) + "m",
        ];
        for case in cases {
            assert_eq!(
                fits_whole(case.as_bytes(), 3),
                whole_text(case.as_bytes(), 3).is_some(),
                "{:?}",
                &case[..case.len().min(12)]
            );
        }
    }
}

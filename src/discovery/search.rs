//! Content search on ripgrep's engine (`grep-searcher` + `grep-regex`) over
//! the shared parallel walker.
//!
//! Results are deterministic under a match cap: files are searched while
//! the walk discovers them (as ripgrep does), and the files with matches are
//! kept in path order. Once they hold the cap, the last kept file is a
//! boundary: files after it in path order are neither searched nor kept
//! (they cannot hold one of the first matches), files before it are
//! searched and may move the boundary earlier. So a capped search stops
//! searching most of the tree, always returns the same matches, and holds
//! only what it returns, whatever the tree's size.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use globset::{GlobBuilder, GlobSet};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::discovery::walk::{self, Walk, WalkOptions};
use crate::fs::guard::Guard;
use crate::text::lines::cut_line;
use crate::text::names::{Escaped, escape_name};

/// One search's settings.
pub struct Query {
    pub matcher: RegexMatcher,
    /// Lines matching this are left out (matches and context alike).
    pub exclude: Option<RegexMatcher>,
    pub before: usize,
    pub after: usize,
    /// Most matching lines overall.
    pub total_max: usize,
    /// Most matching lines per file.
    pub per_file_max: Option<usize>,
    /// Only which files match (one hit per file is enough).
    pub names_only: bool,
    pub include: Option<Include>,
    pub walk: WalkOptions,
    pub deadline: Instant,
}

/// Builds the matcher: Rust regex syntax, or a literal with `fixed`.
pub fn build_matcher(
    pattern: &str,
    case_sensitive: bool,
    fixed: bool,
) -> Result<RegexMatcher, String> {
    RegexMatcherBuilder::new()
        .case_insensitive(!case_sensitive)
        .fixed_strings(fixed)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| e.to_string())
}

/// Why `pattern` is not a valid regular expression, worded on the pattern as
/// given (the matcher's own error shows the pattern as it rewrote it), or
/// None if the syntax is fine.
pub fn pattern_error(pattern: &str, case_sensitive: bool, fixed: bool) -> Option<String> {
    if fixed {
        return None;
    }
    regex_syntax::ParserBuilder::new()
        .case_insensitive(!case_sensitive)
        .build()
        .parse(pattern)
        .err()
        .map(|e| e.to_string())
}

/// The `include` filter: a glob on the path relative to the search
/// directory, or on the file name when it has no `/` (as in ripgrep's -g).
pub struct Include {
    /// A set of one glob: globset picks a fast strategy for it (`*.rs`
    /// is an extension lookup, not a regex run).
    matcher: GlobSet,
    on_name: bool,
}

impl Include {
    pub fn new(pattern: &str) -> Result<Include, String> {
        let pattern = pattern.trim().trim_start_matches("./");
        crate::text::globs::check_size(pattern)?;
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| e.to_string())?;
        let matcher = crate::text::globs::matcher(glob)?;
        Ok(Include {
            matcher,
            on_name: !pattern.contains('/'),
        })
    }

    pub fn accepts(&self, rel: &str) -> bool {
        if self.on_name {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// One shown line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: u64,
    pub text: String,
    /// False for a context line.
    pub is_match: bool,
}

/// The hits of one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    /// The file as walked.
    pub path: PathBuf,
    /// Relative to the search directory, `/`-separated.
    pub rel: String,
    pub lines: Vec<Line>,
    pub matches: usize,
}

/// What a search found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Files with matches, in path order, holding at most `total_max` matches.
    pub files: Vec<FileHits>,
    /// More matches existed (or may exist) than were returned.
    pub limited: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub files_searched: usize,
    /// What showing the files' names escaped.
    pub escaped: Escaped,
    /// The walk met directories nested too deeply to open.
    pub too_deep: bool,
}

/// The files with matches a walk found so far, in path order, kept only
/// while they can still be among the first `total_max` matches. Once the
/// kept files hold the cap, the last of them is the boundary: a file after
/// it in path order can hold none of the first matches, so it is neither
/// searched nor kept. Memory is bounded by the answer, not by the tree, and
/// the answer is the same whatever order the walk finds files in.
struct Kept {
    total_max: usize,
    /// Keyed by path order (lower-case form, then the path itself).
    files: BTreeMap<(String, String), (FileHits, Escaped)>,
    /// Matches in `files`.
    matches: usize,
    /// Files were left out past the boundary (or not searched past it).
    beyond: bool,
}

impl Kept {
    fn new(total_max: usize) -> Kept {
        Kept {
            total_max,
            files: BTreeMap::new(),
            matches: 0,
            beyond: false,
        }
    }

    /// Whether a file at `rel` can still hold one of the first matches;
    /// if not, it is left out (and the answer says more may exist).
    fn may_hold(&mut self, rel: &str) -> bool {
        if self.matches < self.total_max {
            return true;
        }
        let before = match self.files.last_key_value() {
            Some(((_, last), _)) => walk::path_order(rel, last).is_lt(),
            None => true,
        };
        self.beyond |= !before;
        before
    }

    fn add(&mut self, hits: FileHits, escaped: Escaped) {
        self.matches += hits.matches;
        let key = (walk::lower_key(&hits.rel), hits.rel.clone());
        self.files.insert(key, (hits, escaped));
        // Drop files the ones before them make unnecessary.
        while let Some(mut last) = self.files.last_entry()
            && self.matches - last.get().0.matches >= self.total_max
        {
            self.matches -= last.get_mut().0.matches;
            last.remove();
            self.beyond = true;
        }
    }
}

/// Searches `start` (a directory, or one file) for `query`.
pub fn search(
    guard: &Guard,
    start: &Path,
    is_file: bool,
    query: &Query,
    stop: &AtomicBool,
    on_progress: &(dyn Fn(usize) + Sync),
) -> Outcome {
    let mut outcome = Outcome::default();
    if is_file {
        let (rel, escaped) =
            escape_name(start.file_name().map_or(&[][..], |n| n.as_encoded_bytes()));
        let mut worker = Worker::new(query);
        let hits = worker.search(guard, start, &rel);
        outcome.files_searched = 1;
        let mut kept = Kept::new(query.total_max);
        if let Some(hits) = hits {
            kept.add(hits, escaped);
        }
        return finish(kept, query, outcome);
    }

    // Search while the walk discovers files; past the cap, only files that
    // come before the boundary in path order.
    let kept = Mutex::new(Kept::new(query.total_max));
    // The cap was reached: files must be checked against the boundary.
    let full = AtomicBool::new(false);
    let searched = AtomicUsize::new(0);
    let timed_out = AtomicBool::new(false);
    let walk = Walk::new(guard, start, query.walk.clone());
    let lock = || kept.lock().unwrap_or_else(|p| p.into_inner());
    walk.files(
        stop,
        || Worker::new(query),
        |worker, f| {
            if Instant::now() >= query.deadline {
                timed_out.store(true, Ordering::Relaxed);
                return false;
            }
            if let Some(include) = &query.include
                && !include.accepts(f.rel)
            {
                return true;
            }
            if full.load(Ordering::Relaxed) {
                let mut kept = lock();
                if !kept.may_hold(f.rel) {
                    return true;
                }
            }
            let hits = f
                .open(guard)
                .ok()
                .and_then(|(file, _)| worker.search_file(file, f.path, f.rel));
            let n = searched.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(64) {
                on_progress(n);
            }
            if let Some(hits) = hits {
                let mut kept = lock();
                kept.add(hits, f.escaped);
                if kept.matches >= kept.total_max {
                    full.store(true, Ordering::Relaxed);
                }
            }
            true
        },
    );
    outcome.timed_out = timed_out.load(Ordering::Relaxed);
    outcome.cancelled = stop.load(Ordering::Relaxed);
    outcome.files_searched = searched.load(Ordering::Relaxed);
    outcome.too_deep = walk.stopped_too_deep();
    finish(
        kept.into_inner().unwrap_or_else(|p| p.into_inner()),
        query,
        outcome,
    )
}

/// Takes the first `total_max` matches of the kept files, in path order.
fn finish(kept: Kept, query: &Query, mut outcome: Outcome) -> Outcome {
    outcome.limited = kept.beyond;
    let mut total = 0usize;
    let mut files = kept.files.into_values();
    for (hits, escaped) in files.by_ref() {
        let room = query.total_max - total;
        let hits = if hits.matches > room {
            outcome.limited = true;
            truncate_hits(hits, room)
        } else {
            hits
        };
        total += hits.matches;
        outcome.escaped.add(escaped);
        outcome.files.push(hits);
        if total >= query.total_max {
            break;
        }
    }
    if files.next().is_some() {
        outcome.limited = true;
    }
    outcome
}

/// Keeps the first `keep` matches of a file (and their context).
fn truncate_hits(mut hits: FileHits, keep: usize) -> FileHits {
    let mut seen = 0;
    let mut cut_at = hits.lines.len();
    for (i, line) in hits.lines.iter().enumerate() {
        if line.is_match {
            if seen == keep {
                cut_at = i;
                break;
            }
            seen += 1;
        }
    }
    hits.lines.truncate(cut_at);
    hits.matches = keep;
    hits
}

/// Longest stretch without a newline handed to the searcher: past it, a
/// virtual line break is inserted, so the searcher's buffer (which must
/// hold a whole line) stays small even for a 50 MB single-line file.
const MAX_LINE_BYTES: usize = 1024 * 1024;

/// A reader that breaks over-long lines, remembering where, so reported
/// line numbers can be mapped back to the file's own. It never counts the
/// lines it passes (the searcher does, only as far as it needs): it looks
/// back from the end of each chunk for the last newline, and records
/// where in the stream each virtual break went.
struct BoundedLines<R> {
    inner: R,
    since_newline: usize,
    /// Stream offsets of the virtual line breaks, in order.
    breaks: Vec<u64>,
    /// Bytes handed out so far (virtual breaks included).
    offset: u64,
    pending_break: bool,
    passthrough: bool,
}

impl<R: std::io::Read> BoundedLines<R> {
    fn new(inner: R) -> Self {
        BoundedLines {
            inner,
            since_newline: 0,
            breaks: Vec::new(),
            offset: 0,
            pending_break: false,
            passthrough: false,
        }
    }

    /// The file's own line number for a line the searcher numbered
    /// `stream_line` and found at stream offset `at`: each virtual break
    /// before it added one line.
    fn real_line(&self, stream_line: u64, at: u64) -> u64 {
        stream_line - self.breaks.partition_point(|&b| b < at) as u64
    }
}

impl<R: std::io::Read> std::io::Read for BoundedLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pending_break && !buf.is_empty() {
            buf[0] = b'\n';
            self.pending_break = false;
            self.breaks.push(self.offset);
            self.offset += 1;
            self.since_newline = 0;
            return Ok(1);
        }
        let room = if self.passthrough {
            buf.len()
        } else {
            buf.len().min(MAX_LINE_BYTES - self.since_newline)
        };
        let n = self.inner.read(&mut buf[..room])?;
        if self.passthrough || n == 0 {
            return Ok(n);
        }
        if self.offset == 0 && n >= 2 && matches!(&buf[..2], [0xFF, 0xFE] | [0xFE, 0xFF]) {
            // UTF-16: breaking it could split a code unit; leave it alone.
            self.passthrough = true;
            return Ok(n);
        }
        self.offset += n as u64;
        self.since_newline = match memchr::memrchr(b'\n', &buf[..n]) {
            Some(last) => n - last - 1,
            None => self.since_newline + n,
        };
        if self.since_newline >= MAX_LINE_BYTES {
            self.pending_break = true;
        }
        Ok(n)
    }
}

/// Searches the files of `outcome` again with `lines` of context around
/// each match (which were found without context).
pub fn add_context(guard: &Guard, outcome: &mut Outcome, query: &Query, lines: usize) {
    let mut worker = Worker::with_context(query, lines, lines);
    for hits in &mut outcome.files {
        if let Some(mut again) = worker.search(guard, &hits.path, &hits.rel) {
            // The same cap as the first time: keep as many matches as then.
            if again.matches > hits.matches {
                again = truncate_hits(again, hits.matches);
            }
            *hits = again;
        }
    }
}

/// A reusable searcher (its buffers) and matcher, one per thread.
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
    exclude: Option<RegexMatcher>,
    names_only: bool,
}

impl Worker {
    fn new(query: &Query) -> Worker {
        Worker::with_context(query, query.before, query.after)
    }

    fn with_context(query: &Query, before: usize, after: usize) -> Worker {
        // One match past the overall cap tells whether the cap cut anything.
        let per_file = if query.names_only {
            Some(1)
        } else {
            let cap = query
                .per_file_max
                .unwrap_or(usize::MAX)
                .min(query.total_max.saturating_add(1));
            Some(u64::try_from(cap).unwrap_or(u64::MAX))
        };
        let searcher = SearcherBuilder::new()
            // Lines are at most MAX_LINE_BYTES (see BoundedLines); context
            // lines are held too. Past this, the file is skipped.
            .heap_limit(Some(MAX_LINE_BYTES * (2 + before + after).min(64)))
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .bom_sniffing(true)
            .before_context(if query.names_only { 0 } else { before })
            .after_context(if query.names_only { 0 } else { after })
            .max_matches(per_file)
            .build();
        Worker {
            searcher,
            matcher: query.matcher.clone(),
            exclude: query.exclude.clone(),
            names_only: query.names_only,
        }
    }

    /// The file's hits, or None if it has no match (or cannot be searched).
    /// The file is opened through the guard as a walker entry: a file
    /// swapped for a symlink since the walk saw it is not followed, and a
    /// FIFO is refused instead of blocking the thread.
    fn search(&mut self, guard: &Guard, path: &Path, rel: &str) -> Option<FileHits> {
        // Unreadable files are skipped like ripgrep skips them.
        let (file, _) = guard.open_walked(path).ok()?;
        self.search_file(file, path, rel)
    }

    /// The hits of a file opened by the caller.
    fn search_file(
        &mut self,
        file: impl std::io::Read,
        path: &Path,
        rel: &str,
    ) -> Option<FileHits> {
        let mut sink = Collect {
            lines: Vec::new(),
            offsets: Vec::new(),
            matches: 0,
            binary: false,
            names_only: self.names_only,
            exclude: self.exclude.as_ref(),
        };
        let mut reader = BoundedLines::new(file);
        let result = self
            .searcher
            .search_reader(&self.matcher, &mut reader, &mut sink);
        if result.is_err() || sink.binary || sink.matches == 0 {
            return None;
        }
        if !reader.breaks.is_empty() {
            for (line, &at) in sink.lines.iter_mut().zip(&sink.offsets) {
                line.number = reader.real_line(line.number, at);
            }
            // Pieces of one broken line are one line: show and count it once.
            let mut kept: Vec<Line> = Vec::with_capacity(sink.lines.len());
            for line in sink.lines.drain(..) {
                match kept.last_mut() {
                    Some(prev) if prev.number == line.number => prev.is_match |= line.is_match,
                    _ => kept.push(line),
                }
            }
            sink.matches = kept.iter().filter(|l| l.is_match).count();
            sink.lines = kept;
        }
        Some(FileHits {
            path: path.to_path_buf(),
            rel: rel.to_string(),
            lines: sink.lines,
            matches: sink.matches,
        })
    }
}

/// Collects the lines of one file.
struct Collect<'m> {
    lines: Vec<Line>,
    /// Where each of `lines` starts in the searched stream.
    offsets: Vec<u64>,
    matches: usize,
    binary: bool,
    names_only: bool,
    exclude: Option<&'m RegexMatcher>,
}

impl Collect<'_> {
    fn excluded(&self, bytes: &[u8]) -> bool {
        use grep_matcher::Matcher;
        self.exclude
            .is_some_and(|m| m.is_match(bytes).unwrap_or(false))
    }

    fn push(&mut self, number: Option<u64>, at: u64, bytes: &[u8], is_match: bool) {
        self.offsets.push(at);
        let text = String::from_utf8_lossy(bytes);
        let (text, _) = cut_line(text.trim_end());
        self.lines.push(Line {
            number: number.unwrap_or(0),
            text,
            is_match,
        });
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.excluded(mat.bytes()) {
            return Ok(true);
        }
        self.matches += 1;
        if !self.names_only {
            self.push(
                mat.line_number(),
                mat.absolute_byte_offset(),
                mat.bytes(),
                true,
            );
        }
        Ok(!self.names_only)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.excluded(ctx.bytes()) {
            return Ok(true);
        }
        self.push(
            ctx.line_number(),
            ctx.absolute_byte_offset(),
            ctx.bytes(),
            false,
        );
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_matcher::Matcher;

    fn matches_text(matcher: &RegexMatcher, text: &str) -> bool {
        matcher.is_match(text.as_bytes()).unwrap_or(false)
    }

    #[test]
    fn include_matches_names_or_paths() {
        let inc = Include::new("*.rs").unwrap();
        assert!(inc.accepts("main.rs") && inc.accepts("a/b/lib.rs") && !inc.accepts("a/b.rsx"));
        let inc = Include::new("src/**/*.{ts,tsx}").unwrap();
        assert!(inc.accepts("src/a/b.tsx") && !inc.accepts("lib/a.ts"));
    }

    #[test]
    fn matcher_options() {
        let m = build_matcher("Hello", false, false).unwrap();
        assert!(matches_text(&m, "say hello"));
        let m = build_matcher("Hello", true, false).unwrap();
        assert!(!matches_text(&m, "say hello"));
        let m = build_matcher("a.b(", false, true).unwrap();
        assert!(matches_text(&m, "x a.b( y") && !matches_text(&m, "axb("));
        assert!(build_matcher("a(", false, false).is_err());
    }

    #[test]
    fn a_stopped_search_returns_at_once_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..50 {
            std::fs::write(dir.path().join(format!("f{i}.txt")), "needle\n").unwrap();
        }
        let guard = Guard::new(&[dir.path()]).unwrap();
        let query = Query {
            matcher: build_matcher("needle", false, false).unwrap(),
            exclude: None,
            before: 0,
            after: 0,
            total_max: 1000,
            per_file_max: None,
            names_only: false,
            include: None,
            walk: WalkOptions::default(),
            deadline: Instant::now() + std::time::Duration::from_secs(30),
        };
        let stop = AtomicBool::new(true);
        let start = guard.primary().to_path_buf();
        let outcome = search(&guard, &start, false, &query, &stop, &|_| {});
        assert!(outcome.cancelled);
        assert_eq!(outcome.files_searched, 0);
        let go = AtomicBool::new(false);
        let outcome = search(&guard, &start, false, &query, &go, &|_| {});
        assert_eq!(outcome.files.len(), 50);
        // A deadline already passed: stopped, with the flag for the note.
        let late = Query {
            deadline: Instant::now(),
            matcher: query.matcher.clone(),
            exclude: None,
            include: None,
            walk: WalkOptions::default(),
            ..query
        };
        let outcome = search(&guard, &start, false, &late, &go, &|_| {});
        assert!(outcome.timed_out);
    }

    #[test]
    fn over_long_lines_are_broken_and_numbers_mapped_back() {
        use std::io::Read;
        let mut data = b"short\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES * 2 + 10));
        data.extend_from_slice(b"\nafter\n");
        let mut reader = BoundedLines::new(&data[..]);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        let stream_lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        assert!(stream_lines.iter().all(|l| l.len() <= MAX_LINE_BYTES));
        // short, 3 pieces of the long line, after: breaks after the first
        // and the second piece.
        let first = 6 + MAX_LINE_BYTES as u64;
        assert_eq!(
            reader.breaks,
            vec![first, first + 1 + MAX_LINE_BYTES as u64]
        );
        assert_eq!(reader.real_line(1, 0), 1);
        assert_eq!(reader.real_line(2, 6), 2);
        assert_eq!(reader.real_line(4, first + 2 + MAX_LINE_BYTES as u64), 2);
        let after = (data.len() + 2 - 6) as u64;
        assert_eq!(reader.real_line(5, after), 3);
        assert_eq!(&out[after as usize..], b"after\n");
        assert_eq!(out.len(), data.len() + 2);
    }

    #[test]
    fn kept_files_are_the_first_in_path_order_whatever_the_walk_order() {
        let hits = |rel: &str, matches: usize| FileHits {
            path: PathBuf::from(rel),
            rel: rel.to_string(),
            lines: Vec::new(),
            matches,
        };
        let found = [("d", 2), ("B", 1), ("a", 1), ("e", 5), ("c", 1)];
        let mut orders = vec![found.to_vec()];
        orders.push(found.iter().rev().copied().collect());
        let mut sorted = found.to_vec();
        sorted.sort_by(|x, y| walk::path_order(x.0, y.0));
        orders.push(sorted);
        for order in orders {
            let mut kept = Kept::new(3);
            let mut skipped = Vec::new();
            for (rel, n) in order {
                if kept.may_hold(rel) {
                    kept.add(hits(rel, n), Escaped::default());
                } else {
                    skipped.push(rel);
                }
            }
            let rels: Vec<&str> = kept.files.values().map(|(h, _)| h.rel.as_str()).collect();
            assert_eq!(rels, vec!["a", "B", "c"]);
            assert!(kept.beyond, "d and e were left out");
            assert!(skipped.iter().all(|s| ["d", "e"].contains(s)));
        }
    }

    #[test]
    fn truncation_keeps_the_first_matches_with_their_context() {
        let line = |n, m| Line {
            number: n,
            text: format!("{n}"),
            is_match: m,
        };
        let hits = FileHits {
            path: PathBuf::from("f"),
            rel: "f".into(),
            lines: vec![
                line(1, false),
                line(2, true),
                line(3, false),
                line(4, true),
                line(5, true),
            ],
            matches: 3,
        };
        let cut = truncate_hits(hits, 2);
        assert_eq!(cut.matches, 2);
        assert_eq!(
            cut.lines.iter().map(|l| l.number).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
    }
}

//! Content search on ripgrep's engine (`grep-searcher` + `grep-regex`) over
//! the shared parallel walker.
//!
//! Results are deterministic under a match cap: files are searched while the
//! walk discovers them (as ripgrep does) until the cap is reached; then all
//! discovered files are put in path order and the first matches in that
//! order are taken, searching only the files that were not searched yet. A
//! search that finds fewer matches than the cap is therefore fully
//! pipelined, and a capped one stops early yet always returns the same
//! matches.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::guard::Guard;
use crate::text::cut_line;
use crate::walk::{self, Walk, WalkOptions};

/// One search's settings.
pub struct Query {
    pub matcher: RegexMatcher,
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

/// The `include` filter: a glob on the path relative to the search
/// directory, or on the file name when it has no `/` (as in ripgrep's -g).
pub struct Include {
    matcher: GlobMatcher,
    on_name: bool,
}

impl Include {
    pub fn new(pattern: &str) -> Result<Include, String> {
        let pattern = pattern.trim().trim_start_matches("./");
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| e.to_string())?
            .compile_matcher();
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
}

/// A file discovered by the walk, searched or not yet.
struct Discovered {
    path: PathBuf,
    rel: String,
    hits: Option<FileHits>,
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
    let found = AtomicUsize::new(0);
    let searched = AtomicUsize::new(0);
    let timed_out = AtomicBool::new(false);
    let discovered: Mutex<Vec<Discovered>> = Mutex::new(Vec::new());
    let mut outcome = Outcome::default();

    if is_file {
        let rel = start
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut worker = Worker::new(query);
        let hits = worker.search(start, &rel);
        outcome.files_searched = 1;
        let file = Discovered {
            path: start.to_path_buf(),
            rel,
            hits: Some(hits),
        };
        return finish(vec![file], query, outcome, &mut worker);
    }

    let walk = Walk::new(guard, start, query.walk.clone());
    let workers: Mutex<Vec<Worker>> = Mutex::new(Vec::new());
    walk.files(stop, |f| {
        if Instant::now() >= query.deadline {
            timed_out.store(true, Ordering::Relaxed);
            return false;
        }
        if let Some(include) = &query.include
            && !include.accepts(f.rel)
        {
            return true;
        }
        let hits = if found.load(Ordering::Relaxed) < query.total_max {
            let mut worker = take_worker(&workers, query);
            let hits = worker.search(f.path, f.rel);
            workers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(worker);
            found.fetch_add(hits.matches, Ordering::Relaxed);
            let n = searched.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(64) {
                on_progress(n);
            }
            Some(hits)
        } else {
            None
        };
        let item = Discovered {
            path: f.path.to_path_buf(),
            rel: f.rel.to_string(),
            hits,
        };
        discovered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(item);
        true
    });
    outcome.timed_out = timed_out.load(Ordering::Relaxed);
    outcome.cancelled = stop.load(Ordering::Relaxed);
    outcome.files_searched = searched.load(Ordering::Relaxed);
    let files = discovered.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut worker = take_worker(&workers, query);
    finish(files, query, outcome, &mut worker)
}

fn take_worker(pool: &Mutex<Vec<Worker>>, query: &Query) -> Worker {
    let existing = pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
    existing.unwrap_or_else(|| Worker::new(query))
}

/// Puts discovered files in path order and takes the first `total_max`
/// matches, searching unsearched files on the way as needed.
fn finish(
    mut files: Vec<Discovered>,
    query: &Query,
    mut outcome: Outcome,
    worker: &mut Worker,
) -> Outcome {
    walk::sort_by_path(&mut files, |d| &d.rel);
    let mut total = 0usize;
    let stopped = outcome.timed_out || outcome.cancelled;
    let mut items = files.into_iter();
    for item in items.by_ref() {
        let hits = match item.hits {
            Some(hits) => hits,
            None if stopped => {
                outcome.limited = true;
                continue;
            }
            None => {
                outcome.files_searched += 1;
                worker.search(&item.path, &item.rel)
            }
        };
        if hits.matches == 0 {
            continue;
        }
        let room = query.total_max - total;
        let hits = if hits.matches > room {
            outcome.limited = true;
            truncate_hits(hits, room)
        } else {
            hits
        };
        total += hits.matches;
        outcome.files.push(hits);
        if total >= query.total_max {
            break;
        }
    }
    // Past the cap: were there more matches, or files never searched?
    if items.any(|rest| rest.hits.is_none_or(|h| h.matches > 0)) {
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

/// A reusable searcher (its buffers) and matcher, one per thread at a time.
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
    names_only: bool,
}

impl Worker {
    fn new(query: &Query) -> Worker {
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
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .bom_sniffing(true)
            .before_context(if query.names_only { 0 } else { query.before })
            .after_context(if query.names_only { 0 } else { query.after })
            .max_matches(per_file)
            .build();
        Worker {
            searcher,
            matcher: query.matcher.clone(),
            names_only: query.names_only,
        }
    }

    fn search(&mut self, path: &Path, rel: &str) -> FileHits {
        let mut sink = Collect {
            lines: Vec::new(),
            matches: 0,
            binary: false,
            names_only: self.names_only,
        };
        // Unreadable files are skipped like ripgrep skips them.
        let result = self.searcher.search_path(&self.matcher, path, &mut sink);
        let empty = result.is_err() || sink.binary;
        FileHits {
            rel: rel.to_string(),
            lines: if empty { Vec::new() } else { sink.lines },
            matches: if empty { 0 } else { sink.matches },
        }
    }
}

/// Collects the lines of one file.
struct Collect {
    lines: Vec<Line>,
    matches: usize,
    binary: bool,
    names_only: bool,
}

impl Collect {
    fn push(&mut self, number: Option<u64>, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        let (text, _) = cut_line(text.trim_end());
        self.lines.push(Line {
            number: number.unwrap_or(0),
            text,
            is_match,
        });
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matches += 1;
        if !self.names_only {
            self.push(mat.line_number(), mat.bytes(), true);
        }
        Ok(!self.names_only)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(ctx.line_number(), ctx.bytes(), false);
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
    fn truncation_keeps_the_first_matches_with_their_context() {
        let line = |n, m| Line {
            number: n,
            text: format!("{n}"),
            is_match: m,
        };
        let hits = FileHits {
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

//! `glob` (docs/tools.md): files whose path relative to the search directory
//! matches a glob pattern, recently modified files first.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use globset::{GlobBuilder, GlobSet};
use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{DIR_AND_FILTERS, IgnoreSwitches, NestedSwitches};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, cancellable, parse_args};
use crate::discovery::walk::{self, TOO_DEEP_NOTE, Walk, WalkOptions};
use crate::fs::guard::Guard;
use crate::text::budget::{AnswerBudget, Listing};
use crate::text::first::FirstN;
use crate::text::names::{Escaped, escape_name};
use crate::tools::params::JsonObject;

/// Most paths listed.
pub const MAX_RESULTS: usize = 2000;
/// Files modified this recently are listed first, newest first.
const RECENT: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobParams {
    /// The glob pattern, matched against paths relative to the search
    /// directory: `*` stays within one directory, `**` crosses directories,
    /// `{a,b}` and `[abc]` work. For example "**/*.rs" or "src/**/*.{ts,tsx}".
    pub pattern: String,
    /// The directory to search in: an absolute path, or a path relative to
    /// the primary workspace root. Default: every workspace root.
    pub path: Option<String>,
    /// Whether letter case must match. Default false.
    #[schemars(extend("default" = false))]
    pub case_sensitive: Option<bool>,
    /// Whether to leave out files that .gitignore files ignore (inside a git
    /// work tree). Default true.
    #[schemars(extend("default" = true))]
    pub respect_git_ignore: Option<bool>,
}

/// glob as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct GlobCurrent {
    /// The glob pattern, matched against paths relative to the search
    /// directory, e.g. "**/*.rs" or "src/**/*.{ts,tsx}".
    pattern: String,
    /// The directory to search in: an absolute path, or a path relative to
    /// the primary workspace root. Default: every workspace root.
    dir_path: Option<String>,
    /// Whether letter case must match. Default false.
    #[schemars(extend("default" = false))]
    case_sensitive: Option<bool>,
    /// Whether to leave out files that .gitignore files ignore (inside a git
    /// work tree). Default true.
    #[schemars(extend("default" = true))]
    respect_git_ignore: Option<bool>,
    /// Whether to leave out files the workspace root's .geminiignore
    /// ignores. Default true.
    #[schemars(extend("default" = true))]
    respect_gemini_ignore: Option<bool>,
}

/// The same in both dialects.
const DESCRIPTION: &str = "Finds files by name and path: matches a glob pattern against the paths of the files \
    below a directory (relative to it) and returns their absolute paths. '*' matches within \
    one path segment, '**' across any number of directories, '?' one character, '[abc]' one \
    of a set and '{ts,tsx}' alternatives: \"**/*.py\", \"src/**/*.{ts,tsx}\", \"docs/*.md\". \
    Letter case is ignored unless case_sensitive is true. A pattern that names an existing \
    file exactly, brackets and all (\"app/[id]/page.tsx\"), finds that file.\n\n\
    Order: files changed in the last 24 hours first, newest first, then the rest in path \
    order. Only files are listed, at most 2000. Files that .gitignore or .geminiignore hide \
    are left out and counted in the answer; node_modules and .git are never searched. \
    Without a directory, every workspace root is searched. Use it to locate files before \
    reading them; to search inside files, use the search tool.";

pub fn spec() -> ToolSpec {
    ToolSpec::reads("glob", "Find Files By Glob")
        .params::<GlobParams>()
        .accepts::<IgnoreSwitches>()
        .accepts::<NestedSwitches>()
        .aliases(DIR_AND_FILTERS)
        .describe(DESCRIPTION)
        .current_schema::<GlobCurrent>("glob", DESCRIPTION)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

/// Where a glob looks: one directory, or every root.
struct SearchDirs {
    dirs: Vec<PathBuf>,
    /// The one directory searched, as messages show it (None: every root).
    single: Option<String>,
}

impl SearchDirs {
    /// How messages name the place; several roots are `across <k> workspace
    /// directories` when files were found and `within` when none were (as
    /// Gemini CLI words it).
    fn place(&self, found: bool) -> String {
        match &self.single {
            Some(dir) => format!("within {dir}"),
            None if found => format!("across {} workspace directories", self.dirs.len()),
            None => format!("within {} workspace directories", self.dirs.len()),
        }
    }
}

fn outside(path: &Path, dirs: &str) -> String {
    format!(
        "Search path (\"{}\") resolves outside the allowed workspace directories: {dirs}",
        path.display()
    )
}

/// Resolves glob's `path` parameter (None: every root) with glob's
/// messages.
fn search_dirs(state: &State, path: Option<&str>) -> Result<SearchDirs, ToolError> {
    let guard = &state.guard;
    let Some(raw) = path else {
        let dirs: Vec<PathBuf> = guard.roots().map(Path::to_path_buf).collect();
        let single = match dirs.as_slice() {
            [one] => Some(one.display().to_string()),
            _ => None,
        };
        return Ok(SearchDirs { dirs, single });
    };
    let resolved = guard
        .resolve(raw)
        .map_err(|refusal| super::refusal_message(state, refusal, outside))?;
    let abs = resolved.display().display().to_string();
    match resolved.metadata() {
        None => Err(ToolError::new(format!("Search path does not exist {abs}"))),
        Some(m) if !m.is_dir() => Err(ToolError::new(format!(
            "Search path is not a directory: {abs}"
        ))),
        Some(_) => Ok(SearchDirs {
            dirs: vec![resolved.real().to_path_buf()],
            single: Some(abs),
        }),
    }
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: GlobParams = parse_args(&args)?;
    let hidden: IgnoreSwitches = parse_args(&args)?;
    if params.pattern.trim().is_empty() {
        return Err(ToolError::new("The 'pattern' parameter cannot be empty."));
    }
    let state = ctx.state.clone();
    let search = search_dirs(&state, params.path.as_deref())?;
    let options = WalkOptions {
        respect_git_ignore: params.respect_git_ignore.unwrap_or(true),
        respect_gemini_ignore: hidden.respect_gemini_ignore.unwrap_or(true),
        ..WalkOptions::default()
    };
    let case_sensitive = params.case_sensitive.unwrap_or(false);
    cancellable(move |stop| {
        let found = find(
            &state.guard,
            &search.dirs,
            &params.pattern,
            case_sensitive,
            &options,
            stop,
        )?;
        if stop.load(Ordering::Relaxed) {
            return Err(ToolError::new("The glob was cancelled."));
        }
        super::text(format_result(
            &params.pattern,
            &search,
            found,
            ctx.state.config.answer_budget,
        ))
    })
    .await
}

/// What a glob found.
pub struct Matches {
    /// The first [`MAX_RESULTS`] in output order: (absolute path,
    /// modification time).
    pub files: Vec<(String, Option<SystemTime>)>,
    /// How many files matched (shown or not).
    pub total: usize,
    /// Matching files that ignore files hid.
    pub ignored: usize,
    /// What showing the paths escaped.
    pub escaped: Escaped,
    /// The walk met directories nested too deeply to open.
    pub too_deep: bool,
}

/// Finds the files under `dirs` matching `pattern`: the first
/// [`MAX_RESULTS`] in output order, and how many there are. Each walker
/// thread keeps fewer than twice [`MAX_RESULTS`] ([`Top`]), so memory is
/// bounded by the answer, not by the tree.
pub fn find(
    guard: &Guard,
    dirs: &[PathBuf],
    pattern: &str,
    case_sensitive: bool,
    options: &WalkOptions,
    stop: &AtomicBool,
) -> Result<Matches, ToolError> {
    let now = SystemTime::now();
    let mut all = Top::new(now);
    let mut too_deep = false;
    for dir in dirs {
        let relative = relative_pattern(pattern, dir);
        // A pattern that names an existing file literally (e.g. `app/[id]/page.tsx`).
        if let Some((file, mtime)) = literal_file(guard, dir, &relative) {
            all.offer(&file.display().to_string(), mtime);
            continue;
        }
        let matcher = compile(&relative, case_sensitive)?;
        let walk = Walk::new(guard, dir, options.clone());
        let per_thread = walk.classified(
            stop,
            || Top::new(now),
            |top, f| {
                if matcher.is_match(f.rel) {
                    if f.is_ignored() {
                        top.ignored += 1;
                    } else {
                        let (shown, escaped) = escape_name(f.path.as_os_str().as_encoded_bytes());
                        top.escaped.add(escaped);
                        top.offer(&shown, f.modified(guard));
                    }
                }
                true
            },
        );
        for top in per_thread {
            all.merge(top);
        }
        too_deep |= walk.stopped_too_deep();
    }
    let (total, ignored, escaped) = (all.total, all.ignored, all.escaped);
    let files = all.into_sorted();
    Ok(Matches {
        files: files.into_iter().map(|r| (r.path, r.mtime)).collect(),
        total,
        ignored,
        escaped,
        too_deep,
    })
}

/// A match, ordered as the answer lists it: files changed in the last 24
/// hours first, newest first; then the rest in path order.
#[derive(PartialEq, Eq)]
struct Ranked {
    recent: bool,
    mtime: Option<SystemTime>,
    path: String,
}

/// The order of a match (`recent`, `mtime`, `path`) against a ranked one.
fn rank(recent: bool, mtime: Option<SystemTime>, path: &str, other: &Ranked) -> std::cmp::Ordering {
    other
        .recent
        .cmp(&recent)
        .then_with(|| {
            if recent {
                other.mtime.cmp(&mtime)
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .then_with(|| walk::path_order(path, &other.path))
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        rank(self.recent, self.mtime, &self.path, other)
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The first [`MAX_RESULTS`] matches seen (`text::first`), and counts of
/// all of them.
struct Top {
    now: SystemTime,
    first: FirstN<Ranked>,
    total: usize,
    ignored: usize,
    escaped: Escaped,
}

impl Top {
    fn new(now: SystemTime) -> Top {
        Top {
            now,
            first: FirstN::new(MAX_RESULTS),
            total: 0,
            ignored: 0,
            escaped: Escaped::default(),
        }
    }

    /// Counts a match, and keeps it if it may be among the first (the path
    /// is copied only then).
    fn offer(&mut self, path: &str, mtime: Option<SystemTime>) {
        self.total += 1;
        let recent =
            mtime.is_some_and(|t| self.now.duration_since(t).map_or(true, |age| age <= RECENT));
        if self.first.may_keep(|bar| rank(recent, mtime, path, bar)) {
            self.first.push(Ranked {
                recent,
                mtime,
                path: path.to_string(),
            });
        }
    }

    fn merge(&mut self, other: Top) {
        for r in other.first.into_kept() {
            self.offer(&r.path, r.mtime);
            self.total -= 1;
        }
        self.total += other.total;
        self.ignored += other.ignored;
        self.escaped.add(other.escaped);
    }

    /// The first [`MAX_RESULTS`] matches, in output order.
    fn into_sorted(self) -> Vec<Ranked> {
        self.first.into_sorted()
    }
}

/// The pattern relative to `dir`: a leading `./` dropped, an absolute
/// pattern below `dir` made relative.
fn relative_pattern(pattern: &str, dir: &Path) -> String {
    let pattern = pattern.trim();
    if let Some(rest) = Path::new(pattern)
        .strip_prefix(dir)
        .ok()
        .and_then(|r| r.to_str())
    {
        return rest.to_string();
    }
    pattern.strip_prefix("./").unwrap_or(pattern).to_string()
}

/// A compiled glob pattern. The commonest pattern, `**/*.ext`, is decided
/// by comparing the path's end, without the regex globset builds: globset's
/// own extension shortcut is off when matching ignores case, as glob does
/// by default, and the regex then costs more per walked file than the rest
/// of the match.
struct PathMatcher {
    glob: GlobSet,
    /// `.ext` when the pattern is `**/*.ext` with an ASCII alphanumeric ext.
    suffix: Option<String>,
    case_sensitive: bool,
}

impl PathMatcher {
    fn is_match(&self, rel: &str) -> bool {
        if let Some(suffix) = &self.suffix {
            // Exact only where the path's end is ASCII: ignoring case, the
            // regex also lets `ſ` match `s` and `K` (Kelvin) match `k`.
            let tail = rel
                .len()
                .checked_sub(suffix.len())
                .and_then(|start| rel.as_bytes().get(start..));
            match tail {
                None => return false,
                Some(tail) if tail.is_ascii() => {
                    return if self.case_sensitive {
                        tail == suffix.as_bytes()
                    } else {
                        tail.eq_ignore_ascii_case(suffix.as_bytes())
                    };
                }
                Some(_) => {}
            }
        }
        self.glob.is_match(rel)
    }
}

fn compile(pattern: &str, case_sensitive: bool) -> Result<PathMatcher, ToolError> {
    crate::text::globs::check_size(pattern).map_err(ToolError::new)?;
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(!case_sensitive)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .map_err(|e| ToolError(format!("Invalid glob pattern \"{pattern}\": {e}")))?;
    let glob = crate::text::globs::matcher(glob).map_err(ToolError::new)?;
    let suffix = pattern
        .strip_prefix("**/*.")
        .filter(|ext| !ext.is_empty() && ext.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map(|ext| format!(".{ext}"));
    Ok(PathMatcher {
        glob,
        suffix,
        case_sensitive,
    })
}

/// The file `pattern` names literally below `dir`, if it exists, with its
/// modification time.
fn literal_file(guard: &Guard, dir: &Path, pattern: &str) -> Option<(PathBuf, Option<SystemTime>)> {
    if !pattern.contains(['*', '?', '[', '{']) || pattern.starts_with('/') {
        return None;
    }
    let resolved = guard.resolve_absolute(&dir.join(pattern)).ok()?;
    let meta = resolved.metadata().filter(|m| m.is_file())?;
    let mtime = meta.modified().ok();
    Some((resolved.into_display(), mtime))
}

fn format_result(
    pattern: &str,
    search: &SearchDirs,
    found: Matches,
    budget: AnswerBudget,
) -> String {
    let total = found.total;
    let place = search.place(total > 0);
    if total == 0 {
        let mut out = format!("No files found matching pattern \"{pattern}\" {place}");
        if found.ignored > 0 {
            out.push_str(&format!(" ({} files were ignored)", found.ignored));
        }
        if found.too_deep {
            out.push_str("\n\n");
            out.push_str(TOO_DEEP_NOTE);
        }
        return out;
    }
    let ignored = if found.ignored > 0 {
        format!(" ({} additional files were ignored)", found.ignored)
    } else {
        String::new()
    };
    let head = format!(
        "Found {total} file(s) matching \"{pattern}\" {place}{ignored}, sorted by modification time (newest first):"
    );
    let mut tail = String::new();
    if let Some(note) = found.escaped.note() {
        tail.push_str("\n\n");
        tail.push_str(&note);
    }
    if found.too_deep {
        tail.push_str("\n\n");
        tail.push_str(TOO_DEEP_NOTE);
    }
    let paths: Vec<&str> = found.files.iter().map(|(p, _)| p.as_str()).collect();
    let listing = Listing {
        head: &head,
        items: &paths,
        more: total - paths.len(),
        tail: &tail,
    };
    // Past MAX_RESULTS the walk keeps only the newest; the budget may stop
    // the list earlier. Either way the line after the last path says how
    // many are not listed.
    let left_out = |shown: usize| {
        let why = if shown < paths.len() {
            format!(" (the answer stops at {} characters)", budget.limit_or(0))
        } else {
            String::new()
        };
        format!(
            "... and {} more files not listed{why}. Narrow the pattern or the path to see them.",
            total - shown
        )
    };
    listing.fit(budget, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_first_then_path_order() {
        let now = SystemTime::now();
        let hour = Duration::from_secs(3600);
        let files = [
            ("/r/b.rs", Some(now - 48 * hour)),
            ("/r/new.rs", Some(now - hour)),
            ("/r/A.rs", Some(now - 72 * hour)),
            ("/r/newest.rs", Some(now)),
            ("/r/a.rs", Some(now - 72 * hour)),
        ];
        let mut top = Top::new(now);
        for (path, mtime) in files {
            top.offer(path, mtime);
        }
        let ranked = top.into_sorted();
        let order: Vec<&str> = ranked.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            order,
            vec!["/r/newest.rs", "/r/new.rs", "/r/A.rs", "/r/a.rs", "/r/b.rs"]
        );
    }

    #[test]
    fn only_the_first_matches_are_kept_and_all_are_counted() {
        let now = SystemTime::now();
        let old = Some(now - Duration::from_secs(7 * 24 * 3600));
        let (mut one, mut two) = (Top::new(now), Top::new(now));
        for i in (0..MAX_RESULTS + 500).rev() {
            let top = if i % 2 == 0 { &mut one } else { &mut two };
            top.offer(&format!("/r/{i:05}.rs"), old);
        }
        two.offer("/r/zzz.rs", Some(now));
        one.merge(two);
        assert_eq!(one.total, MAX_RESULTS + 501);
        let ranked = one.into_sorted();
        assert_eq!(ranked.len(), MAX_RESULTS);
        assert_eq!(ranked[0].path, "/r/zzz.rs", "recent first");
        assert_eq!(ranked[1].path, "/r/00000.rs");
        assert_eq!(
            ranked[MAX_RESULTS - 1].path,
            format!("/r/{:05}.rs", MAX_RESULTS - 2)
        );
    }

    #[test]
    fn the_kept_matches_are_those_a_full_sort_puts_first() {
        let now = SystemTime::now();
        let hour = Duration::from_secs(3600);
        // A fixed pseudo-random sequence: paths, some recent, some equal times.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for count in [
            0,
            1,
            MAX_RESULTS - 1,
            MAX_RESULTS,
            2 * MAX_RESULTS + 1,
            1500,
        ] {
            let files: Vec<(String, Option<SystemTime>)> = (0..count)
                .map(|i| {
                    let r = next();
                    let mtime = match r % 5 {
                        0 => None,
                        1 | 2 => Some(now - hour * (r % 7) as u32),
                        _ => Some(now - hour * 100),
                    };
                    (format!("/r/{}/{i}.rs", (r >> 8) % 50), mtime)
                })
                .collect();
            let (mut one, mut two) = (Top::new(now), Top::new(now));
            for (i, (path, mtime)) in files.iter().enumerate() {
                let top = if i % 3 == 0 { &mut one } else { &mut two };
                top.offer(path, *mtime);
            }
            one.merge(two);
            assert_eq!(one.total, count);
            let kept: Vec<String> = one.into_sorted().into_iter().map(|r| r.path).collect();
            let mut all: Vec<Ranked> = files
                .iter()
                .map(|(path, mtime)| Ranked {
                    recent: mtime.is_some_and(|t| now.duration_since(t).is_ok_and(|a| a <= RECENT)),
                    mtime: *mtime,
                    path: path.clone(),
                })
                .collect();
            all.sort_unstable();
            let expected: Vec<String> = all.into_iter().take(MAX_RESULTS).map(|r| r.path).collect();
            assert_eq!(kept, expected, "{count} matches");
        }
    }

    #[test]
    fn glob_semantics() {
        let m = compile("*.rs", false).unwrap();
        assert!(m.is_match("main.rs") && !m.is_match("src/main.rs"));
        let m = compile("**/*.rs", false).unwrap();
        assert!(m.is_match("main.rs") && m.is_match("a/b/c.RS"));
        let m = compile("src/**/*.{ts,tsx}", true).unwrap();
        assert!(m.is_match("src/a/b.tsx") && !m.is_match("src/a/b.TSX") && !m.is_match("lib/b.ts"));
        let m = compile("[ab].txt", false).unwrap();
        assert!(m.is_match("a.txt") && !m.is_match("c.txt"));
        assert!(compile("**/.*", false).unwrap().is_match("x/.env"));
        assert!(compile("a[", false).is_err());
    }

    #[test]
    fn the_extension_shortcut_agrees_with_the_glob() {
        let paths = [
            "main.rs",
            "a/b/c.RS",
            ".rs",
            "rs",
            "a.rsx",
            "a/b.rs/c",
            "a.r",
            "",
            "a.rs ",
            "x/ſ.rs",
            "x/a.ſ",
            "x/a.\u{212A}",
            "dir/é.rs",
            "dir/a.Rs",
        ];
        for pattern in ["**/*.rs", "**/*.s", "**/*.k", "**/*.RS"] {
            for case_sensitive in [true, false] {
                let fast = compile(pattern, case_sensitive).unwrap();
                assert!(fast.suffix.is_some(), "{pattern}");
                for path in paths {
                    assert_eq!(
                        fast.is_match(path),
                        fast.glob.is_match(path),
                        "{pattern} {case_sensitive} {path:?}"
                    );
                }
            }
        }
        for pattern in [
            "**/*.{rs,ts}",
            "**/*.r?",
            "src/**/*.rs",
            "**/*.",
            "**/*.tar.gz",
        ] {
            assert!(
                compile(pattern, false).unwrap().suffix.is_none(),
                "{pattern}"
            );
        }
    }

    #[test]
    fn patterns_relative_to_the_search_dir() {
        assert_eq!(relative_pattern("./src/*.rs", Path::new("/r")), "src/*.rs");
        assert_eq!(relative_pattern("/r/src/*.rs", Path::new("/r")), "src/*.rs");
        assert_eq!(relative_pattern("**/*.rs", Path::new("/r")), "**/*.rs");
    }
}

//! `search_file_content` (docs/tools.md; `grep_search` in gemini-current):
//! regular-expression search over the workspace with ripgrep's engine, in
//! Gemini CLI's output format.

use std::time::Instant;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{FILE_FILTERING, GitSwitch, IgnoreSwitches, NestedSwitches};
use super::{CallContext, ToolError, ToolResult, ToolSpec, cancellable, parse_args};
use crate::config::Dialect;
use crate::discovery::search::{self, Include, Outcome, Query};
use crate::discovery::walk::{
    HiddenEntries, SEARCH_EXCLUDED_DIRS, SEARCH_EXCLUDED_EXTENSIONS, TOO_DEEP_NOTE, WalkOptions,
};
use crate::text::budget::{AnswerBudget, Listing};
use crate::tools::params::{Alias, JsonObject};

/// Matches returned when no cap is given.
pub const DEFAULT_TOTAL_MAX: i64 = 100;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// The regular expression to search for (Rust regex syntax), e.g.
    /// "fn\\s+main" or "TODO|FIXME". With fixed_strings, a literal string.
    pub pattern: String,
    /// A directory to search recursively, or a single file: an absolute path
    /// or a path relative to the primary workspace root. Default: the
    /// primary workspace root.
    pub path: Option<String>,
    /// Only search files whose path matches this glob, e.g. "*.rs" or
    /// "src/**/*.{ts,tsx}" (without a '/', it matches the file name).
    pub include: Option<String>,
    /// A regular expression; matching lines are left out of the results.
    pub exclude_pattern: Option<String>,
    /// Whether letter case must match. Default false.
    #[schemars(extend("default" = false))]
    pub case_sensitive: Option<bool>,
    /// Treat the pattern as a literal string, not a regular expression.
    /// Default false.
    #[schemars(extend("default" = false))]
    pub fixed_strings: Option<bool>,
    /// Lines of context to show before and after each match. Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub context: Option<i64>,
    /// Lines of context before each match (overrides context). Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub before: Option<i64>,
    /// Lines of context after each match (overrides context). Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub after: Option<i64>,
    /// Most matching lines to return in all. Default 100.
    #[schemars(range(min = 1), extend("default" = 100))]
    pub total_max_matches: Option<i64>,
    /// Most matching lines to return per file. Default: no per-file limit.
    #[schemars(range(min = 1))]
    pub max_matches_per_file: Option<i64>,
    /// Return only the paths of files with matches. Default false.
    #[schemars(extend("default" = false))]
    pub names_only: Option<bool>,
    /// Also search files that ignore files or the default excludes hide
    /// (node_modules, build output, ...). Default false.
    #[schemars(extend("default" = false))]
    pub no_ignore: Option<bool>,
}

/// grep_search as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct SearchCurrent {
    /// The regular expression to search for (Rust regex syntax).
    pattern: String,
    /// A directory to search recursively, or a single file. Default: the
    /// primary workspace root.
    dir_path: Option<String>,
    /// Only search files whose path matches this glob.
    include_pattern: Option<String>,
    /// A regular expression; matching lines are left out of the results.
    exclude_pattern: Option<String>,
    /// Return only the paths of files with matches. Default false.
    #[schemars(extend("default" = false))]
    names_only: Option<bool>,
    /// Whether letter case must match. Default false.
    #[schemars(extend("default" = false))]
    case_sensitive: Option<bool>,
    /// Treat the pattern as a literal string. Default false.
    #[schemars(extend("default" = false))]
    fixed_strings: Option<bool>,
    /// Lines of context before and after each match. Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    context: Option<i64>,
    /// Lines of context after each match. Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    after: Option<i64>,
    /// Lines of context before each match. Default 0.
    #[schemars(range(min = 0), extend("default" = 0))]
    before: Option<i64>,
    /// Also search what ignore files and default excludes hide. Default false.
    #[schemars(extend("default" = false))]
    no_ignore: Option<bool>,
    /// Most matching lines per file. Default: no limit.
    #[schemars(range(min = 1))]
    max_matches_per_file: Option<i64>,
    /// Most matching lines in all. Default 100.
    #[schemars(range(min = 1), extend("default" = 100))]
    total_max_matches: Option<i64>,
}

const ALIASES: &[Alias] = &[
    Alias {
        from: "dir_path",
        to: "path",
    },
    Alias {
        from: "include_pattern",
        to: "include",
    },
    FILE_FILTERING[0],
    FILE_FILTERING[1],
];

const DESCRIPTION: &str = "Searches the contents of the workspace's files for a regular expression, with ripgrep's \
    engine, and returns the matching lines with their line numbers, grouped by file in path \
    order: 'File: <path>' then 'L<n>: <line>' for a match and 'L<n>- <line>' for a context \
    line. Lines keep their indentation, so a line can be copied into replace's old_string \
    (without the 'L<n>: ' prefix).\n\n\
    pattern uses Rust regex syntax (like ripgrep): escape regex characters such as ( [ . * + \
    ? to match them literally, or set fixed_strings to true to search for a plain string; \
    letter case is ignored unless case_sensitive is true. Narrow the search with path (a \
    directory or a single file, default the primary workspace root) and include (a glob on \
    file paths such as \"*.rs\" or \"src/**/*.{ts,tsx}\"; without a '/', it matches file names). \
    exclude_pattern is a regex: lines matching it are left out.\n\n\
    context, before and after show lines around each match. At most 100 matches are returned \
    unless total_max_matches says otherwise; max_matches_per_file limits each file, and \
    names_only returns just the paths of the files that match. Binary files, files \
    .gitignore or .geminiignore hide, hidden files and directories (unless the include \
    pattern names them, as in \".env*\"), node_modules, build output and *.log are skipped; \
    no_ignore searches ignored and excluded files too (never .git).";

const DESCRIPTION_CURRENT: &str = "Searches the contents of the workspace's files for a regular expression, with ripgrep's \
    engine, and returns the matching lines with their line numbers, grouped by file in path \
    order: 'File: <path>' then 'L<n>: <line>' for a match and 'L<n>- <line>' for a context \
    line. Lines keep their indentation, so a line can be copied into replace's old_string \
    (without the 'L<n>: ' prefix).\n\n\
    pattern uses Rust regex syntax (like ripgrep): escape regex characters such as ( [ . * + \
    ? to match them literally, or set fixed_strings to true to search for a plain string; \
    letter case is ignored unless case_sensitive is true. Narrow the search with dir_path (a \
    directory or a single file, default the primary workspace root) and include_pattern (a \
    glob on file paths such as \"*.rs\" or \"src/**/*.{ts,tsx}\"; without a '/', it matches file \
    names). exclude_pattern is a regex: lines matching it are left out.\n\n\
    context, before and after show lines around each match. At most 100 matches are returned \
    unless total_max_matches says otherwise; max_matches_per_file limits each file, and \
    names_only returns just the paths of the files that match. Binary files, files \
    .gitignore or .geminiignore hide, hidden files and directories (unless the include \
    pattern names them, as in \".env*\"), node_modules, build output and *.log are skipped; \
    no_ignore searches ignored and excluded files too (never .git). When a search finds 1 to \
    3 matches and no context was asked for, the lines around them come too (50 for one \
    match, 15 each for two or three), which often saves a read.";

pub fn spec() -> ToolSpec {
    ToolSpec::reads("search_file_content", "Search File Contents")
        .params::<SearchParams>()
        .accepts::<IgnoreSwitches>()
        .accepts::<NestedSwitches>()
        .accepts::<GitSwitch>()
        .aliases(ALIASES)
        .describe(DESCRIPTION)
        .current_schema::<SearchCurrent>("grep_search", DESCRIPTION_CURRENT)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

fn count(value: Option<i64>) -> Option<usize> {
    value.map(|n| usize::try_from(n).unwrap_or(if n < 0 { 0 } else { usize::MAX }))
}

/// Gemini CLI (newer) adds context by itself when a search finds 1 to 3
/// matches and no context was asked for: 50 lines around a single match,
/// 15 around two or three. Saves the read that usually follows.
fn auto_context(matches: usize) -> Option<usize> {
    match matches {
        1 => Some(50),
        2 | 3 => Some(15),
        _ => None,
    }
}

/// A regular-expression error quoting the caller's pattern.
fn regex_error(
    what: &str,
    pattern: &str,
    case_sensitive: bool,
    fixed: bool,
    e: String,
) -> ToolError {
    let reason = search::pattern_error(pattern, case_sensitive, fixed).unwrap_or(e);
    ToolError(format!(
        "Invalid {what}regular expression pattern provided: {pattern}. Error: {reason}"
    ))
}

/// Hidden files and directories (names starting with '.') are searched only
/// where the include pattern names them: its components that start with a
/// dot (".env*" lets `.env` in; ".github/**" lets `.github` in).
fn hidden_named_by(include: Option<&str>) -> GlobSet {
    let mut set = GlobSetBuilder::new();
    for part in include.unwrap_or_default().split('/') {
        if part.starts_with('.')
            && part != "."
            && part != ".."
            && let Ok(glob) = GlobBuilder::new(part).literal_separator(true).build()
        {
            set.add(glob);
        }
    }
    set.build().unwrap_or_else(|_| GlobSet::empty())
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: SearchParams = parse_args(&args)?;
    let switches: IgnoreSwitches = parse_args(&args)?;
    let git: GitSwitch = parse_args(&args)?;
    let state = ctx.state.clone();
    let guard = &state.guard;
    let dialect = state.config.dialect;

    let shown_path = params.path.clone().unwrap_or_else(|| ".".to_string());
    let filter = params
        .include
        .as_deref()
        .map(|i| format!(" (filter: \"{i}\")"))
        .unwrap_or_default();
    let case_sensitive = params.case_sensitive.unwrap_or(false);
    let fixed = params.fixed_strings.unwrap_or(false);
    let matcher = search::build_matcher(&params.pattern, case_sensitive, fixed)
        .map_err(|e| regex_error("", &params.pattern, case_sensitive, fixed, e))?;
    let exclude = match params.exclude_pattern.as_deref() {
        Some(p) => Some(
            search::build_matcher(p, case_sensitive, false)
                .map_err(|e| regex_error("exclude ", p, case_sensitive, false, e))?,
        ),
        None => None,
    };
    let include =
        match params.include.as_deref() {
            Some(pattern) => {
                // Too long a pattern is refused without being echoed.
                crate::text::globs::check_size(pattern).map_err(ToolError::new)?;
                Some(Include::new(pattern).map_err(|e| {
                    ToolError(format!("Invalid include pattern \"{pattern}\": {e}"))
                })?)
            }
            None => None,
        };
    let context = count(params.context);
    let before = count(params.before).or(context).unwrap_or(0);
    let after = count(params.after).or(context).unwrap_or(0);
    let context_asked =
        params.context.is_some() || params.before.is_some() || params.after.is_some();
    let total_max = count(params.total_max_matches).unwrap_or(DEFAULT_TOTAL_MAX as usize);
    let per_file_max = count(params.max_matches_per_file);

    let (start, is_file) = match &params.path {
        None => (guard.primary().to_path_buf(), false),
        Some(raw) => {
            let resolved = guard.resolve(raw).map_err(|refusal| {
                super::refusal_message(&state, refusal, |_, dirs| {
                    format!(
                        "Path validation failed: Attempted path \"{raw}\" resolves outside the \
                         allowed workspace directories: {dirs}"
                    )
                })
            })?;
            let Some(meta) = resolved.metadata() else {
                let abs = resolved.display().display();
                return Err(ToolError::new(match dialect {
                    // Gemini CLI 0.24 names the directory relative paths start from.
                    Dialect::Gemini024 => format!(
                        "Path does not exist: {abs} (CWD: {})",
                        guard.primary().display()
                    ),
                    Dialect::GeminiCurrent => format!("Path does not exist: {abs}"),
                }));
            };
            (resolved.real().to_path_buf(), !meta.is_dir())
        }
    };
    let no_ignore = params.no_ignore.unwrap_or(false);
    let walk = WalkOptions {
        respect_git_ignore: !no_ignore && git.respect_git_ignore.unwrap_or(true),
        respect_gemini_ignore: !no_ignore && switches.respect_gemini_ignore.unwrap_or(true),
        default_excludes: !no_ignore,
        // .git is never searched, whatever the switches say.
        excluded_dirs: if no_ignore {
            &[".git"]
        } else {
            SEARCH_EXCLUDED_DIRS
        },
        excluded_extensions: if no_ignore {
            &[]
        } else {
            SEARCH_EXCLUDED_EXTENSIONS
        },
        max_depth: None,
        hidden: HiddenEntries::SkipUnless(hidden_named_by(params.include.as_deref())),
        // As ripgrep: a symlink is not followed, so a linked file inside the
        // tree is not reported twice.
        file_links: false,
    };
    let names_only = params.names_only.unwrap_or(false);
    let timeout = state.config.search_timeout;
    let query = Query {
        matcher,
        exclude,
        before,
        after,
        total_max,
        per_file_max,
        names_only,
        include,
        walk,
        deadline: Instant::now() + timeout,
    };
    let progress = ctx.progress.clone();
    let auto = dialect.is_current() && !names_only && !context_asked;
    let outcome = cancellable(move |stop| {
        let report = |n: usize| {
            if let Some(p) = &progress {
                p.report(n as u64, None, format!("{n} files searched"));
            }
        };
        let mut outcome = search::search(&state.guard, &start, is_file, &query, stop, &report);
        let matches: usize = outcome.files.iter().map(|f| f.matches).sum();
        if auto && let Some(lines) = auto_context(matches) {
            search::add_context(&state.guard, &mut outcome, &query, lines);
        }
        outcome
    })
    .await;
    tracing::debug!(
        files_searched = outcome.files_searched,
        cancelled = outcome.cancelled,
        timed_out = outcome.timed_out,
        "search finished"
    );
    if outcome.cancelled {
        return Err(ToolError::new("The search was cancelled."));
    }
    let asked = Asked {
        pattern: &params.pattern,
        path: &shown_path,
        filter: &filter,
        names_only,
        total_max,
        timeout_secs: timeout.as_secs(),
        dialect: ctx.state.config.dialect,
        budget: ctx.state.config.answer_budget,
    };
    super::text(format_outcome(&asked, outcome))
}

/// What the answer repeats of the request, and how it is shaped.
struct Asked<'a> {
    pattern: &'a str,
    path: &'a str,
    filter: &'a str,
    names_only: bool,
    total_max: usize,
    timeout_secs: u64,
    dialect: Dialect,
    budget: AnswerBudget,
}

fn format_outcome(asked: &Asked, outcome: Outcome) -> String {
    let Asked {
        pattern,
        path,
        filter,
        names_only,
        total_max,
        timeout_secs,
        dialect,
        budget,
    } = *asked;
    let timed_out = outcome.timed_out.then(|| {
        format!(
            "\n(The search stopped after {timeout_secs} s and shows what it found until then. \
             Narrow it with 'path' or 'include' to search everything.)"
        )
    });
    let too_deep = outcome.too_deep.then(|| format!("\n{TOO_DEEP_NOTE}"));
    if outcome.files.is_empty() {
        let mut out =
            format!("No matches found for pattern \"{pattern}\" in path \"{path}\"{filter}.");
        out.push_str(timed_out.as_deref().unwrap_or(""));
        out.push_str(too_deep.as_deref().unwrap_or(""));
        return out;
    }
    let limited = if outcome.limited {
        format!(" (results limited to {total_max} matches for performance)")
    } else {
        String::new()
    };
    let mut tail = String::new();
    if let Some(note) = timed_out {
        tail.push_str(&note);
    }
    if let Some(note) = outcome.escaped.note() {
        tail.push('\n');
        tail.push_str(&note);
    }
    tail.push_str(too_deep.as_deref().unwrap_or(""));
    let narrow = match dialect {
        Dialect::Gemini024 => "'path' or 'include'",
        Dialect::GeminiCurrent => "'dir_path' or 'include_pattern'",
    };
    let limit = budget.limit_or(0);
    if names_only {
        let n = outcome.files.len();
        let head = format!(
            "Found {n} files with matches for pattern \"{pattern}\" in path \"{path}\"{filter}{limited}:"
        );
        let paths: Vec<&str> = outcome.files.iter().map(|f| f.rel.as_str()).collect();
        let listing = Listing {
            head: &head,
            items: &paths,
            more: 0,
            tail: &tail,
        };
        return listing.fit(budget, |shown| {
            format!(
                "... and {} more files not listed: the answer stops at {limit} characters. \
                 Narrow the search with {narrow} to see them.",
                n - shown
            )
        });
    }
    let n: usize = outcome.files.iter().map(|f| f.matches).sum();
    let term = if n == 1 { "match" } else { "matches" };
    let head = format!(
        "Found {n} {term} for pattern \"{pattern}\" in path \"{path}\"{filter}{limited}:\n---"
    );
    // One item per line of the answer: each file's name, its lines, and
    // the rule after it. `matches_before[i]`: match lines among the first i.
    let mut lines = Vec::new();
    let mut matches_before = vec![0];
    let mut files_of = Vec::new();
    for f in &outcome.files {
        let mut add = |line: String, is_match: bool| {
            lines.push(line);
            let before = matches_before.last().copied().unwrap_or(0);
            matches_before.push(before + usize::from(is_match));
            files_of.push(f.rel.as_str());
        };
        add(format!("File: {}", f.rel), false);
        for line in &f.lines {
            let sep = if line.is_match { ':' } else { '-' };
            add(
                format!("L{}{sep} {}", line.number, line.text),
                line.is_match,
            );
        }
        add("---".to_string(), false);
    }
    let items: Vec<&str> = lines.iter().map(String::as_str).collect();
    let listing = Listing {
        head: &head,
        items: &items,
        more: 0,
        tail: &tail,
    };
    let cut_note = |shown: usize| {
        let through = shown
            .checked_sub(1)
            .and_then(|last| files_of.get(last))
            .map(|f| format!(", through {f}"))
            .unwrap_or_default();
        format!(
            "[The answer stops at {limit} characters: {} of the {n} matches are shown{through}. \
             Narrow the search with {narrow}, or lower total_max_matches or \
             max_matches_per_file, to see the rest.]",
            matches_before.get(shown).copied().unwrap_or(0)
        )
    };
    let mut shown = listing.items_that_fit(budget, cut_note);
    // A cut ends after a line of a file's own, not on a name or a rule.
    while shown > 1 && shown < items.len() && !items[shown - 1].starts_with('L') {
        shown -= 1;
    }
    listing.render(shown, cut_note)
}

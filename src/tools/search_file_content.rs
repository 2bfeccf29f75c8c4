//! `search_file_content` (TOOLS.md 6): regular-expression search over the
//! workspace with ripgrep's engine, in Gemini CLI's output format.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;

use super::list_directory::Hidden;
use super::{CallContext, ToolError, ToolResult, ToolSpec, cancellable, parse_args};
use crate::discovery::search::{self, Include, Outcome, Query};
use crate::discovery::walk::{SEARCH_EXCLUDED_DIRS, SEARCH_EXCLUDED_EXTENSIONS, WalkOptions};
use crate::mcp::params::{Alias, JsonObject, portable_schema};

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

const ALIASES: &[Alias] = &[
    Alias {
        from: "dir_path",
        to: "path",
    },
    Alias {
        from: "include_pattern",
        to: "include",
    },
];

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "search_file_content",
        title: "Search File Contents",
        description: "Searches the contents of files in the workspace for a regular expression \
            (Rust regex syntax) with ripgrep's engine, and returns matching lines with their line \
            numbers, grouped by file in path order. Narrow it with 'path' and 'include' (a glob \
            such as \"*.rs\"); ignored and binary files are skipped. At most 100 matches are \
            returned unless total_max_matches says otherwise.",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: portable_schema::<SearchParams>(),
        hidden_schema: Some(portable_schema::<Hidden>()),
        aliases: ALIASES,
        handler: |ctx, args| Box::pin(run(ctx, args)),
    }
}

fn non_negative(name: &str, value: Option<i64>) -> Result<usize, ToolError> {
    match value {
        Some(n) if n < 0 => Err(ToolError(format!("{name} must be 0 or more"))),
        Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        None => Ok(0),
    }
}

fn positive(name: &str, value: Option<i64>) -> Result<Option<usize>, ToolError> {
    match value {
        Some(n) if n < 1 => Err(ToolError(format!("{name} must be 1 or more"))),
        Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        None => Ok(None),
    }
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: SearchParams = parse_args(&args)?;
    let hidden: Hidden = parse_args(&args)?;
    let state = ctx.state.clone();
    let guard = &state.guard;

    let shown_path = params.path.clone().unwrap_or_else(|| ".".to_string());
    let filter = params
        .include
        .as_deref()
        .map(|i| format!(" (filter: \"{i}\")"))
        .unwrap_or_default();
    let matcher = search::build_matcher(
        &params.pattern,
        params.case_sensitive.unwrap_or(false),
        params.fixed_strings.unwrap_or(false),
    )
    .map_err(|e| {
        ToolError(format!(
            "Invalid regular expression pattern provided: {}. Error: {e}",
            params.pattern
        ))
    })?;
    let include = match params.include.as_deref() {
        Some(pattern) => Some(
            Include::new(pattern)
                .map_err(|e| ToolError(format!("Invalid include pattern \"{pattern}\": {e}")))?,
        ),
        None => None,
    };
    let context = non_negative("context", params.context)?;
    let before = params
        .before
        .map_or(Ok(context), |b| non_negative("before", Some(b)))?;
    let after = params
        .after
        .map_or(Ok(context), |a| non_negative("after", Some(a)))?;
    let total_max = positive("total_max_matches", params.total_max_matches)?
        .unwrap_or(DEFAULT_TOTAL_MAX as usize);
    let per_file_max = positive("max_matches_per_file", params.max_matches_per_file)?;

    let (start, is_file) = match &params.path {
        None => (guard.primary().to_path_buf(), false),
        Some(raw) => {
            let resolved = guard.resolve(raw).map_err(|refusal| {
                super::refusal_message(guard, refusal, |_, dirs| {
                    format!(
                        "Path validation failed: Attempted path \"{raw}\" resolves outside the \
                         allowed workspace directories: {dirs}"
                    )
                })
            })?;
            let Some(meta) = resolved.metadata() else {
                return Err(
                    format!("Path does not exist: {}", resolved.display().display()).into(),
                );
            };
            (resolved.real().to_path_buf(), !meta.is_dir())
        }
    };
    let no_ignore = params.no_ignore.unwrap_or(false);
    let walk = WalkOptions {
        respect_git_ignore: !no_ignore,
        respect_gemini_ignore: !no_ignore && hidden.respect_gemini_ignore.unwrap_or(true),
        default_excludes: !no_ignore,
        excluded_dirs: if no_ignore { &[] } else { SEARCH_EXCLUDED_DIRS },
        excluded_extensions: if no_ignore {
            &[]
        } else {
            SEARCH_EXCLUDED_EXTENSIONS
        },
        max_depth: None,
    };
    let names_only = params.names_only.unwrap_or(false);
    let timeout = state.config.search_timeout;
    let query = Query {
        matcher,
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
    let outcome = cancellable(move |stop| {
        let report = |n: usize| {
            if let Some(p) = &progress {
                p.report(n as u64, None, format!("{n} files searched"));
            }
        };
        search::search(&state.guard, &start, is_file, &query, stop, &report)
    })
    .await;
    tracing::debug!(
        files_searched = outcome.files_searched,
        cancelled = outcome.cancelled,
        timed_out = outcome.timed_out,
        "search finished"
    );
    if outcome.cancelled {
        return Err("The search was cancelled.".into());
    }
    super::text(format_outcome(
        &params.pattern,
        &shown_path,
        &filter,
        names_only,
        total_max,
        timeout.as_secs(),
        outcome,
    ))
}

fn format_outcome(
    pattern: &str,
    path: &str,
    filter: &str,
    names_only: bool,
    total_max: usize,
    timeout_secs: u64,
    outcome: Outcome,
) -> String {
    let timed_out = outcome.timed_out.then(|| {
        format!(
            "\n(The search stopped after {timeout_secs} s and shows what it found until then. \
             Narrow it with 'path' or 'include' to search everything.)"
        )
    });
    if outcome.files.is_empty() {
        let mut out =
            format!("No matches found for pattern \"{pattern}\" in path \"{path}\"{filter}.");
        out.push_str(timed_out.as_deref().unwrap_or(""));
        return out;
    }
    let limited = if outcome.limited {
        format!(" (results limited to {total_max} matches for performance)")
    } else {
        String::new()
    };
    let mut out = if names_only {
        let n = outcome.files.len();
        let mut out = format!(
            "Found {n} files with matches for pattern \"{pattern}\" in path \"{path}\"{filter}{limited}:"
        );
        for f in &outcome.files {
            out.push('\n');
            out.push_str(&f.rel);
        }
        out
    } else {
        let n: usize = outcome.files.iter().map(|f| f.matches).sum();
        let term = if n == 1 { "match" } else { "matches" };
        let mut out = format!(
            "Found {n} {term} for pattern \"{pattern}\" in path \"{path}\"{filter}{limited}:\n---\n"
        );
        for f in &outcome.files {
            out.push_str("File: ");
            out.push_str(&f.rel);
            out.push('\n');
            for line in &f.lines {
                let sep = if line.is_match { ':' } else { '-' };
                out.push_str(&format!("L{}{sep} {}\n", line.number, line.text));
            }
            out.push_str("---\n");
        }
        out
    };
    if let Some(note) = timed_out {
        out.push_str(&note);
    }
    out
}

//! `read_file` (docs/tools.md): one file, raw text in a window of lines, media
//! as MCP blocks. Output and errors follow Gemini CLI's read_file.

use schemars::JsonSchema;
use serde::Deserialize;

use super::reads::{RangeStyle, ReadTarget, media_block, open_target, read_failure_message};
use super::{CallContext, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::fs::reading::{self, Body};
use crate::text::budget::{AnswerBudget, client_len};
use crate::text::lines::{LineRange, Window};
use crate::tools::params::{Alias, JsonObject};

/// Lines returned when no limit is given.
pub const DEFAULT_LIMIT: usize = 2000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileParams {
    /// The file to read: an absolute path, or a path relative to the primary
    /// workspace root.
    pub path: String,
    /// 0-based number of the first line to return (0 is the first line;
    /// must not be negative). Use it with 'limit' to page through a large
    /// file: the note at the top of a cut answer names the next offset.
    /// Default 0.
    #[schemars(extend("default" = 0))]
    pub offset: Option<i64>,
    /// How many lines to return at most (1 or more). Default 2000.
    #[schemars(extend("default" = 2000))]
    pub limit: Option<i64>,
}

/// Accepted in every dialect: newer Gemini CLI's 1-based inclusive range.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LineDialect {
    /// 1-based number of the first line to return.
    #[schemars(range(min = 1))]
    pub start_line: Option<i64>,
    /// 1-based number of the last line to return, inclusive.
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
}

/// read_file as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct ReadFileCurrent {
    /// The file to read: an absolute path, or a path relative to the primary
    /// workspace root.
    file_path: String,
    /// 1-based number of the first line to return. Default 1.
    #[schemars(range(min = 1))]
    start_line: Option<i64>,
    /// 1-based number of the last line to return, inclusive. Default: 2000
    /// lines from start_line, or the end of the file if that comes first.
    #[schemars(range(min = 1))]
    end_line: Option<i64>,
}

const ALIASES: &[Alias] = &[
    Alias {
        from: "file_path",
        to: "path",
    },
    Alias {
        from: "absolute_path",
        to: "path",
    },
];

const DESCRIPTION: &str = "Reads one file inside the workspace and returns its content as it is: no line numbers \
    are added (use file_read for numbered lines), and a byte-order mark is removed. UTF-8, \
    UTF-16 and UTF-32 text is decoded; bytes that are not valid text show as U+FFFD.\n\n\
    Long files: at most 2000 lines come back at a time (fewer when they would make the answer \
    longer than the server's answer limit, 39,000 characters by default), and a line longer than 2000 \
    characters is cut, ending in '... [truncated]'. When that happens the answer starts with \
    a note giving the lines shown, the file's total and the 'offset' to ask for next. offset \
    is the 0-based number of the first line (0 is line 1) and limit the number of lines; \
    pass both to page through a file or to read just the part you need, which is cheaper \
    than reading it all. An offset past the last line is an error that says how many lines \
    the file has.\n\n\
    Other kinds: images (PNG, JPEG, GIF, WebP, BMP) and audio (MP3, WAV, AIFF, AAC, OGG, \
    FLAC) come back as image or audio content, PDF and video as embedded resources; SVG is \
    read as text up to 1 MB; other binary files are not shown. Files over 20 MB are refused \
    unless you give a line range (text is then streamed). Files the workspace's \
    .geminiignore hides are refused. Paths are absolute or relative to the primary workspace \
    root.";

const DESCRIPTION_CURRENT: &str = "Reads one file inside the workspace and returns its content as it is: no line numbers \
    are added (use file_read for numbered lines), and a byte-order mark is removed. UTF-8, \
    UTF-16 and UTF-32 text is decoded; bytes that are not valid text show as U+FFFD.\n\n\
    Long files: at most 2000 lines come back at a time (fewer when they would make the answer \
    longer than the server's answer limit, 39,000 characters by default), and a line longer than 2000 \
    characters is cut, ending in '... [truncated]'. When that happens the answer starts with \
    a note giving the lines shown, the file's total and the 'start_line' to ask for next. \
    start_line and end_line are 1-based and inclusive; pass them to read just the part you \
    need, which is cheaper than reading the whole file. A start_line past the last line is \
    an error that says how many lines the file has.\n\n\
    Other kinds: images (PNG, JPEG, GIF, WebP, BMP) and audio (MP3, WAV, AIFF, AAC, OGG, \
    FLAC) come back as image or audio content, PDF and video as embedded resources; SVG is \
    read as text up to 1 MB; other binary files are not shown. Files over 20 MB are refused \
    unless you give a line range (text is then streamed). Files the workspace's \
    .geminiignore hides are refused. Paths are absolute or relative to the primary workspace \
    root.";

pub fn spec() -> ToolSpec {
    ToolSpec::reads("read_file", "Read File")
        .params::<ReadFileParams>()
        .accepts::<LineDialect>()
        .aliases(ALIASES)
        .describe(DESCRIPTION)
        .current_schema::<ReadFileCurrent>("read_file", DESCRIPTION_CURRENT)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ReadFileParams = parse_args(&args)?;
    let dialect: LineDialect = parse_args(&args)?;
    if params.path.trim().is_empty() {
        // Named as the caller named it (aliases are folded into `path`, and
        // stay in the arguments too).
        let name = ["file_path", "absolute_path"]
            .into_iter()
            .find(|n| args.get(*n).and_then(|v| v.as_str()) == Some(params.path.as_str()))
            .unwrap_or("path");
        return Err(ToolError::new(format!(
            "The '{name}' parameter must be non-empty."
        )));
    }
    // Without a range, notes name the range parameters this dialect shows.
    let default_style = if ctx.state.config.dialect.is_current() {
        RangeStyle::StartEnd
    } else {
        RangeStyle::OffsetLimit
    };
    let (range, style) = requested_range(&params, &dialect, default_style)?;
    let target = open_target(&ctx.state, &params.path, style)?;
    let budget = ctx.state.config.answer_budget;
    let indexes = ctx.state.line_indexes.clone();
    run_sized(target.opened.size(), move || {
        read_file(target, range, style, budget, &indexes)
    })
    .await
}

fn requested_range(
    params: &ReadFileParams,
    dialect: &LineDialect,
    default_style: RangeStyle,
) -> Result<(Option<LineRange>, RangeStyle), ToolError> {
    if params.offset.is_some() || params.limit.is_some() {
        let offset = params.offset.unwrap_or(0);
        if offset < 0 {
            return Err(ToolError::new("Offset must be a non-negative number"));
        }
        let limit = params.limit.unwrap_or(DEFAULT_LIMIT as i64);
        if limit <= 0 {
            return Err(ToolError::new("Limit must be a positive number"));
        }
        let range = LineRange {
            start: to_usize(offset),
            count: to_usize(limit),
        };
        return Ok((Some(range), RangeStyle::OffsetLimit));
    }
    if dialect.start_line.is_none() && dialect.end_line.is_none() {
        return Ok((None, default_style));
    }
    let start = dialect.start_line.unwrap_or(1);
    if start < 1 {
        return Err(ToolError::new(
            "start_line must be 1 or greater (lines are numbered from 1)",
        ));
    }
    let count = match dialect.end_line {
        Some(end) if end < start => {
            return Err(ToolError::new("start_line cannot be greater than end_line"));
        }
        Some(end) => to_usize(end - start + 1),
        None => DEFAULT_LIMIT,
    };
    let range = LineRange {
        start: to_usize(start - 1),
        count,
    };
    Ok((Some(range), RangeStyle::StartEnd))
}

fn to_usize(n: i64) -> usize {
    usize::try_from(n).unwrap_or(if n < 0 { 0 } else { usize::MAX })
}

fn read_file(
    target: ReadTarget,
    range: Option<LineRange>,
    style: RangeStyle,
    budget: AnswerBudget,
    indexes: &reading::LineIndexes,
) -> ToolResult {
    let default_range = LineRange {
        start: 0,
        count: DEFAULT_LIMIT,
    };
    let ReadTarget {
        opened,
        abs,
        rel,
        display,
    } = target;
    let body = reading::read(opened, range, default_range, false, indexes)
        .map_err(|f| read_failure_message(&abs, f, style))?;
    match body {
        Body::Text { window, .. } => {
            if window.start > 0 && window.start >= window.total {
                return Err(ToolError::new(beyond_end_message(
                    &abs,
                    window.start,
                    window.total,
                    style,
                )));
            }
            super::text(window_text(window, style, budget))
        }
        Body::Media { kind, mime, base64 } => Ok(vec![media_block(kind, mime, base64, &display)]),
        Body::Binary => super::text(format!("Cannot display content of binary file: {rel}")),
        Body::SvgTooLarge => super::text(format!(
            "Cannot display content of SVG file larger than 1MB: {rel}"
        )),
    }
}

/// The answer for a window of text: the file as it is when the window is
/// the whole file and fits the answer budget; otherwise Gemini CLI's
/// truncation note above the lines that fit, which names the first line
/// not shown.
fn window_text(mut window: Window, style: RangeStyle, budget: AnswerBudget) -> String {
    let total = window.total;
    if window.is_whole_file() {
        let text = window.into_text();
        if budget.fits(&text) {
            return text;
        }
        window = Window {
            total,
            ends_with_newline: text.ends_with('\n'),
            whole: Some(text),
            ..Window::default()
        };
    }
    if let Some(limit) = budget.limit() {
        // The note is widest when it names the file's last line.
        let note = client_len(&truncation_note(total, total, total, style));
        window.keep_first(fitting_lines(&window, limit.saturating_sub(note)));
        if window.is_whole_file() {
            // One line longer than a (small) budget: nothing follows it.
            return window.into_text();
        }
    }
    let first = window.start + 1;
    let last = window.end_line();
    let mut out = truncation_note(first, last, total, style);
    out.push_str(&window.into_text());
    out
}

/// How many of the window's first lines fit in `room` client characters
/// (each with its line break); at least one, so that paging moves on.
fn fitting_lines(window: &Window, room: usize) -> usize {
    let mut used = 0;
    let mut shown = 0;
    let mut count = |line: &str| {
        used += client_len(line) + 1;
        if used > room && shown > 0 {
            return false;
        }
        shown += 1;
        true
    };
    match &window.whole {
        Some(text) => {
            let body = text.strip_suffix('\n').unwrap_or(text);
            for line in body.split('\n') {
                if !count(line) {
                    break;
                }
            }
        }
        None => {
            for line in &window.lines {
                if !count(line) {
                    break;
                }
            }
        }
    }
    shown
}

/// The exact truncation block of Gemini CLI, in the caller's range style,
/// up to the content.
fn truncation_note(first: usize, last: usize, total: usize, style: RangeStyle) -> String {
    let (params, next) = match style {
        RangeStyle::OffsetLimit => ("'offset' and 'limit'", format!("offset: {last}")),
        RangeStyle::StartEnd => (
            "'start_line' and 'end_line'",
            format!("start_line: {}", last + 1),
        ),
    };
    format!(
        "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines {first}-{last} of \
         {total} total lines.\nAction: To read more of the file, you can use the {params} \
         parameters in a subsequent 'read_file' call. For example, to read the next section of \
         the file, use {next}.\n\n--- FILE CONTENT (truncated) ---\n"
    )
}

fn beyond_end_message(abs: &str, start: usize, total: usize, style: RangeStyle) -> String {
    let asked = match style {
        RangeStyle::OffsetLimit => format!("Offset {start}"),
        RangeStyle::StartEnd => format!("start_line {}", start + 1),
    };
    format!(
        "{asked} is beyond the end of the file: {abs} has {total} line{}. Read from an earlier line.",
        if total == 1 { "" } else { "s" }
    )
}

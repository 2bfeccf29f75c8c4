//! `file_read` (docs/tools.md): reads a file with line numbers, so a model can
//! cite what it read. Shares reading, limits and messages with read_file.

use schemars::JsonSchema;
use serde::Deserialize;

use super::reads::{RangeStyle, ReadTarget, open_target, read_failure_message};
use super::{CallContext, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::fs::reading::{self, Body};
use crate::text::budget::{AnswerBudget, client_len};
use crate::text::lines::LineRange;
use crate::tools::params::JsonObject;

/// Header and numbered lines are capped at this many characters.
pub const MAX_OUTPUT_CHARS: usize = 15_000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileReadParams {
    /// The file to read, relative to the primary workspace root (an absolute
    /// path inside a workspace root also works).
    pub path: String,
    /// 1-based number of the first line to show. Default 1.
    #[schemars(range(min = 1), extend("default" = 1))]
    pub start_line: Option<i64>,
    /// 1-based number of the last line to show, inclusive. Default: the end
    /// of the file.
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
}

const DESCRIPTION: &str = "Reads a text file inside the workspace and shows each line with its 1-based \
            line number, so you can cite exact lines. Give 'start_line' and 'end_line' to read a \
            part; output is capped at 15,000 characters, and a final line says which start_line \
            continues. Paths are relative to the primary workspace root.";

pub fn spec() -> ToolSpec {
    ToolSpec::reads("file_read", "Read File With Line Numbers")
        .params::<FileReadParams>()
        .describe(DESCRIPTION)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: FileReadParams = parse_args(&args)?;
    let request = Request::new(&params)?;
    let target = open_target(&ctx.state, &params.path, RangeStyle::StartEnd)?;
    let cap = output_cap(ctx.state.config.answer_budget);
    let indexes = ctx.state.line_indexes.clone();
    run_sized(target.opened.size(), move || {
        file_read(target, request, cap, &indexes)
    })
    .await
}

/// Room for the header and the numbered lines: [`MAX_OUTPUT_CHARS`], or
/// less when the answer budget leaves less beside the closing note.
fn output_cap(budget: AnswerBudget) -> usize {
    const NOTE_ROOM: usize = 200;
    MAX_OUTPUT_CHARS.min(budget.limit_or(usize::MAX).saturating_sub(NOTE_ROOM))
}

/// The checked line range of one call.
struct Request {
    /// 1-based first line asked for.
    start: i64,
    range: LineRange,
    /// Whether a range was given (a file over 20 MB needs one).
    explicit: bool,
}

impl Request {
    fn new(params: &FileReadParams) -> Result<Request, ToolError> {
        let start = params.start_line.unwrap_or(1);
        if start < 1 {
            return Err(ToolError::new(
                "start_line must be 1 or greater (lines are numbered from 1)",
            ));
        }
        if let Some(end) = params.end_line {
            if end < 1 {
                return Err(ToolError::new(
                    "end_line must be 1 or greater (lines are numbered from 1)",
                ));
            }
            if end < start {
                return Err(ToolError::new("start_line cannot be greater than end_line"));
            }
        }
        // Every shown line costs at least two characters ("1\t"), so no more
        // than this many can fit in the cap; never collect more.
        let most_that_fit = MAX_OUTPUT_CHARS / 2 + 1;
        let wanted = params.end_line.map_or(usize::MAX, |end| {
            usize::try_from(end - start + 1).unwrap_or(usize::MAX)
        });
        Ok(Request {
            start,
            range: LineRange {
                start: usize::try_from(start - 1).unwrap_or(usize::MAX),
                count: wanted.min(most_that_fit),
            },
            explicit: params.start_line.is_some() || params.end_line.is_some(),
        })
    }
}

fn file_read(
    target: ReadTarget,
    request: Request,
    cap: usize,
    indexes: &reading::LineIndexes,
) -> ToolResult {
    let ReadTarget {
        opened, abs, rel, ..
    } = target;
    let range = request.range;
    let body = reading::read(
        opened,
        request.explicit.then_some(range),
        range,
        true,
        indexes,
    )
    .map_err(|f| read_failure_message(&abs, f, RangeStyle::StartEnd))?;
    let window = match body {
        Body::Text { window, .. } => window,
        Body::Media { .. } | Body::Binary => {
            return Err(ToolError::new(format!(
                "Cannot display content of binary file: {rel}"
            )));
        }
        Body::SvgTooLarge => {
            return Err(ToolError::new(format!(
                "Cannot display content of SVG file larger than 1MB: {rel}"
            )));
        }
    };
    if window.total == 0 && !request.explicit {
        return super::text(format!("{rel} (empty file, 0 lines)"));
    }
    if range.start >= window.total {
        return Err(ToolError(format!(
            "start_line {} is beyond the end of {rel}, which has {} line{}.",
            request.start,
            window.total,
            if window.total == 1 { "" } else { "s" }
        )));
    }
    super::text(numbered(
        &rel,
        range.start + 1,
        &window.lines,
        window.total,
        cap,
    ))
}

/// The header, the numbered lines that fit in `cap` characters (as clients
/// count them), and, if cut, a last line saying where to continue.
fn numbered(rel: &str, first: usize, lines: &[String], total: usize, cap: usize) -> String {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // Exact size of the output showing the first k lines: header, and per
    // line a newline, the padded number, a tab and the text.
    let size = |k: usize, text_chars: usize| {
        let last = first + k - 1;
        client_len(&header(rel, first, last, total)) + k * (2 + digits(last)) + text_chars
    };
    let mut shown = lines.len().min(1);
    let mut text_chars = lines.first().map_or(0, |l| client_len(l));
    for line in lines.iter().skip(1) {
        let more = text_chars + client_len(line);
        if size(shown + 1, more) > cap {
            break;
        }
        shown += 1;
        text_chars = more;
    }
    let last = first + shown - 1;
    let width = digits(last);
    let mut out = header(rel, first, last, total);
    for (i, line) in lines.iter().take(shown).enumerate() {
        out.push('\n');
        out.push_str(&format!("{:>width$}\t{line}", first + i));
    }
    if shown < lines.len() {
        out.push_str(&format!(
            "\n[Output capped at {cap} characters after line {last} of {total}. \
             To continue, call file_read with start_line: {}.]",
            last + 1
        ));
    }
    out
}

fn header(rel: &str, first: usize, last: usize, total: usize) -> String {
    format!("{rel} (lines {first}-{last} of {total})")
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_right_aligned_to_the_widest_shown() {
        let lines: Vec<String> = (8..=11).map(|i| format!("line {i}")).collect();
        let out = numbered("src/a.rs", 8, &lines, 20, MAX_OUTPUT_CHARS);
        assert_eq!(
            out,
            "src/a.rs (lines 8-11 of 20)\n 8\tline 8\n 9\tline 9\n10\tline 10\n11\tline 11"
        );
    }

    #[test]
    fn carriage_returns_are_not_shown() {
        let out = numbered("a", 1, &["x\r".to_string()], 1, MAX_OUTPUT_CHARS);
        assert_eq!(out, "a (lines 1-1 of 1)\n1\tx");
    }

    #[test]
    fn output_is_capped_on_whole_lines() {
        let lines: Vec<String> = (0..5000).map(|_| "y".repeat(100)).collect();
        let out = numbered("big.txt", 1, &lines, 5000, MAX_OUTPUT_CHARS);
        let (body, note) = out.rsplit_once('\n').unwrap();
        assert!(body.chars().count() <= MAX_OUTPUT_CHARS);
        let shown = body.lines().count() - 1;
        assert!(body.starts_with(&format!("big.txt (lines 1-{shown} of 5000)")));
        assert!(
            note.contains(&format!("start_line: {}", shown + 1)),
            "{note}"
        );
        // One more line would not have fitted.
        assert!(body.chars().count() + 1 + 3 + 1 + 100 > MAX_OUTPUT_CHARS);
    }
}

//! `bash` (TOOLS.md 8): a guarded shell for searching and inspecting code.
//! What may run is decided by [`crate::shell`]; this file holds the
//! parameters and the result format.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallContext, ToolResult, ToolSpec, parse_args};
use crate::mcp::params::JsonObject;
use crate::shell::run::{Ending, Outcome, signal_name};

/// Characters of output shown, at most (head and tail kept).
pub const MAX_SHOWN_CHARS: usize = 10_000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashParams {
    /// The command line to run in the primary workspace root, e.g.
    /// "grep -rn 'fn main' src | head -20" or "git log --oneline -n 10".
    /// Commands may be joined with |, &&, || and ;.
    pub command: String,
}

const DESCRIPTION: &str = "Runs a command line in the primary workspace root and returns its output, \
            its error output under [stderr], and its exit code. By default only read-only \
            commands run (cat, head, tail, wc, ls, tree, find, grep, rg, sort, uniq, cut, diff, \
            stat, du, and read-only git: status, log, diff, show, grep, blame, ls-files, \
            rev-parse, branch). Commands may be joined with |, &&, || and ;. No variables, $(...), \
            backticks, subshells, or redirections other than >/dev/null, 2>/dev/null and 2>&1. \
            Paths must stay inside the workspace. A refused command says why and what is allowed.";

pub fn spec() -> ToolSpec {
    ToolSpec::shell("bash", "Run Shell Command")
        .params::<BashParams>()
        .describe(DESCRIPTION)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: BashParams = parse_args(&args)?;
    let state = ctx.state.clone();
    let Some(shell) = state.shell.as_ref() else {
        return Err("The bash tool is turned off on this server.".into());
    };
    let outcome = shell
        .execute(&params.command, &state.guard, &ctx.cancel)
        .await
        .map_err(super::ToolError)?;
    super::text(format_outcome(outcome))
}

/// stdout, then stderr under `[stderr]`, cut to the head and tail, then the
/// status line.
pub fn format_outcome(outcome: Outcome) -> String {
    let mut body = String::from_utf8_lossy(&outcome.stdout).into_owned();
    if !outcome.stderr.is_empty() {
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body.push_str("[stderr]\n");
        body.push_str(&String::from_utf8_lossy(&outcome.stderr));
    }
    let mut out = cut_middle(&body, MAX_SHOWN_CHARS);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&match outcome.ending {
        Ending::Exited(code) => format!("[exit code: {code}]"),
        Ending::Signaled(sig) => format!("[killed by signal {}]", signal_name(sig)),
        Ending::TimedOut(after) => format!("[killed: timed out after {}s]", after.as_secs()),
        Ending::Cancelled => "[killed: cancelled]".to_string(),
        Ending::OutputLimit => "[killed: the output passed 1 MB; narrow the command]".to_string(),
    });
    out
}

/// Keeps the first and last halves of `max` characters, with a line saying
/// how much was left out.
fn cut_middle(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head_end = text.char_indices().nth(half).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - half)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n[... {} characters left out ...]\n{}",
        &text[..head_end],
        total - 2 * half,
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn outcome(stdout: &str, stderr: &str, ending: Ending) -> Outcome {
        Outcome {
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
            ending,
        }
    }

    #[test]
    fn result_format() {
        assert_eq!(
            format_outcome(outcome("hi\n", "", Ending::Exited(0))),
            "hi\n[exit code: 0]"
        );
        assert_eq!(
            format_outcome(outcome("hi", "oops\n", Ending::Exited(2))),
            "hi\n[stderr]\noops\n[exit code: 2]"
        );
        assert_eq!(
            format_outcome(outcome("", "", Ending::Exited(1))),
            "[exit code: 1]"
        );
        assert_eq!(
            format_outcome(outcome("", "", Ending::TimedOut(Duration::from_secs(60)))),
            "[killed: timed out after 60s]"
        );
        assert_eq!(
            format_outcome(outcome("", "", Ending::Signaled(9))),
            "[killed by signal SIGKILL]"
        );
        assert_eq!(
            format_outcome(outcome("", "", Ending::Cancelled)),
            "[killed: cancelled]"
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let long: String = (0..5000).map(|i| format!("{i:05}\n")).collect();
        let text = format_outcome(outcome(&long, "", Ending::Exited(0)));
        assert!(text.starts_with("00000\n00001\n"));
        assert!(text.contains("characters left out"));
        assert!(text.ends_with("04999\n[exit code: 0]"));
        assert!(text.chars().count() < MAX_SHOWN_CHARS + 200);
        let odd = "é".repeat(MAX_SHOWN_CHARS + 3);
        assert!(cut_middle(&odd, MAX_SHOWN_CHARS).contains("[... 3 characters left out ...]"));
    }

    #[test]
    fn non_utf8_output_is_shown_lossily() {
        let o = Outcome {
            stdout: b"ok \xff\xfe\n".to_vec(),
            stderr: Vec::new(),
            ending: Ending::Exited(0),
        };
        assert_eq!(format_outcome(o), "ok \u{FFFD}\u{FFFD}\n[exit code: 0]");
    }
}

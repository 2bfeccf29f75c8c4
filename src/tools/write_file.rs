//! `write_file` (docs/tools.md): create or overwrite a file with the given
//! content, atomically, keeping an existing file's CRLF style, BOM/encoding
//! owner, mode and attributes; the answer shows a diff of what changed.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::writes::{
    Holding, Unseen, change_since, commit, hold, journal_after, journaling, links_note,
    placeholder_message, read_existing, target_or_ask, unseen_change,
};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::fs::writing::Target;
use crate::text::diff;
use crate::text::edit::omission;
use crate::text::exact::{self, LineEnding};
use crate::tools::params::JsonObject;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteFileParams {
    /// The file to write: an absolute path, or a path relative to the primary
    /// workspace root. Missing parent directories are created.
    pub file_path: String,
    /// The complete content of the file. Never abbreviate it with a
    /// placeholder such as "rest of code ...": that would delete the code.
    pub content: String,
}

const DESCRIPTION: &str = "Writes the complete content of one file inside the workspace: creates it (with any \
    missing parent directories) or replaces everything it held. The write is atomic, so the \
    file is never left half written. The answer says whether the file was created or \
    overwritten and, for an overwrite, shows a unified diff of the change.\n\n\
    content must be the whole file, every line written out: a placeholder line such as '// \
    ... rest of code ...' is refused, because writing it would delete the code it stands \
    for. Write \\n line breaks; an existing file keeps its CRLF line endings, byte-order \
    mark, encoding, owner, permissions and ACLs. For a change to part of an existing file, replace is \
    cheaper and safer. Files inside a .git directory are never written. Paths are absolute \
    or relative to the primary workspace root.";

pub fn spec() -> ToolSpec {
    ToolSpec::writes("write_file", "Write File", true)
        .params::<WriteFileParams>()
        .describe(DESCRIPTION)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: WriteFileParams = parse_args(&args)?;
    if params.file_path.is_empty() {
        return Err(ToolError::new("Missing or empty \"file_path\""));
    }
    let state = ctx.state.clone();
    if let Some(line) = omission::find_placeholder(&params.content) {
        return Err(placeholder_message(&state, line, "content"));
    }
    let shown = [("What it writes, the whole file", params.content.as_str())];
    let target = target_or_ask(&ctx, "write_file", &params.file_path, &shown).await?;
    let cost = target.existing_size() + params.content.len() as u64;
    // A command line that runs git has its configuration checked; no
    // write may land between that check and its end.
    let writing = state.writes.writing().await;
    let holding = hold(&state, &target).await?;
    run_sized(cost, move || {
        let _writing = writing;
        write_file(&state, &params, target, holding)
    })
    .await
}

/// Writes the file. It is never retried: if the file changed on disk after
/// it was read, the content the caller sent was meant for what it read, so
/// the write is refused (see `writing::write_error_message`).
fn write_file(
    state: &Arc<State>,
    params: &WriteFileParams,
    target: Target,
    mut holding: Holding,
) -> ToolResult {
    let guard = &state.guard;
    let held = &mut holding.held;
    let Some(existing) = read_existing(held, &target)? else {
        let bytes = params.content.as_bytes();
        let recorded = journaling(state, &target, None).record("write_file", None, bytes, None);
        let written = commit(guard, &target, bytes, held)?;
        let note = journal_after(state, &target, recorded, &written);
        return super::text(format!(
            "Successfully created and wrote to new file: {}.{note}",
            target.abs()
        ));
    };
    if let Some(unseen) = unseen_change(state, &target, &existing.metadata) {
        let what = match unseen {
            Unseen::Changed(sighting) => format!(
                "it changed on disk since this session last read or wrote it (an editor, a \
                 formatter or another program changed it), so this content would throw that \
                 change away. Nothing was written. {}",
                change_since(state, &target, &sighting, &existing.bytes)
            ),
            Unseen::Relinked(was) => format!(
                "the path leads to another file than when this session last read or wrote it \
                 ({}, where it led to {}), so this content was meant for another file. Nothing \
                 was written.",
                target.resolved().real().display(),
                was.display()
            ),
        };
        return Err(ToolError::new(format!(
            "Refusing to overwrite {}: {what}\n\nRead the file again, then write it with that \
             change kept.",
            target.abs()
        )));
    }
    let journal = journaling(state, &target, Some(&existing.metadata));
    // Decoding consumes the bytes; the journal needs them as they were.
    let before = journal
        .takes(existing.bytes.len() as u64)
        .then(|| existing.bytes.clone());
    // Keep the existing file's style: CRLF, and its BOM and encoding.
    let (metadata, decoded) = existing.decode(&target);
    let converted;
    let (bytes, diff, unchanged) = match decoded {
        Ok(old) => {
            let content: &str = if exact::dominant_ending(&old.text) == LineEnding::CrLf {
                converted = exact::lf_to_crlf(&params.content);
                &converted
            } else {
                &params.content
            };
            let rel = guard.relative_display(target.resolved().display());
            let diff = diff::unified(&old.text, content, &rel);
            let unchanged = old.text == content;
            (exact::encode_cow(content, old.encoding), diff, unchanged)
        }
        // Not text before: written exactly as given.
        Err(_) => (
            Cow::Borrowed(params.content.as_bytes()),
            String::new(),
            false,
        ),
    };
    let recorded = match &before {
        Some(before) => {
            journal.record("write_file", Some((before, &metadata)), &bytes, Some(&diff))
        }
        None => Err(journal.refusal(metadata.len())),
    };
    let written = commit(guard, &target, &bytes, held)?;
    let note = journal_after(state, &target, recorded, &written);
    let mut message = format!("Successfully overwrote file: {}.", target.abs());
    if unchanged {
        message.push_str(" The content is unchanged.");
    } else if !diff.is_empty() {
        message.push_str("\n\n");
        message.push_str(&diff::fenced(&diff));
    }
    message.push_str(&links_note(held));
    message.push_str(&note);
    super::text(message)
}

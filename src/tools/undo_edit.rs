//! `undo_edit` (docs/tools.md): reverts the last rootbound edit of a file
//! (write_file or replace, by this server or another on the same root), if
//! the file is still exactly what that edit wrote; otherwise it refuses and
//! shows what changed since, so nothing anyone else wrote is lost. Called
//! again, it steps further back. The journal is `fs/journal.rs`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::writes::{Holding, hold, root_and_rel, target_error_message};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, blocking, parse_args};
use crate::fs::journal::{self, Entry, RootJournal, UndoError, Undone};
use crate::fs::writing::{self, FileVersion, Target};
use crate::text::{diff, time};
use crate::tools::params::{Alias, JsonObject};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UndoEditParams {
    /// The file whose last edit to undo: an absolute path, or a path
    /// relative to the primary workspace root.
    pub file_path: String,
}

const ALIASES: &[Alias] = &[
    Alias {
        from: "path",
        to: "file_path",
    },
    Alias {
        from: "absolute_path",
        to: "file_path",
    },
];

const DESCRIPTION: &str = "Undoes the last edit that write_file or replace made to one file, putting back exactly \
    the bytes it held before (a file that edit created is removed again). Call it again to \
    step further back, one edit at a time. It works only while the file is exactly what that \
    edit wrote: if anything changed it since (another program, an editor, a command), \
    nothing is changed and the answer shows what changed, so that change is never lost; \
    make the correction with replace instead. Edits made by other means (bash, an editor) \
    are not undone. Paths are absolute or relative to the primary workspace root.";

pub fn spec() -> ToolSpec {
    ToolSpec::writes("undo_edit", "Undo Last Edit", false)
        .params::<UndoEditParams>()
        .aliases(ALIASES)
        .describe(DESCRIPTION)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: UndoEditParams = parse_args(&args)?;
    if params.file_path.is_empty() {
        return Err(ToolError::new(
            "The 'file_path' parameter must be non-empty.",
        ));
    }
    let state = ctx.state.clone();
    let target = writing::target(&state.guard, &params.file_path)
        .map_err(|e| target_error_message(&state, e))?;
    // As for every write: none may land while a line that runs git has
    // its configuration checked.
    let writing = state.writes.writing().await;
    let holding = hold(&state, &target).await?;
    // Off the protocol thread whatever the file's size: finding the edit
    // reads the journal's entries.
    blocking(move || {
        let _writing = writing;
        undo(&state, target, holding)
    })
    .await
}

fn undo(state: &Arc<State>, target: Target, mut holding: Holding) -> ToolResult {
    let abs = target.abs();
    let real = target.resolved().real();
    let (root, rel) = root_and_rel(state, real)
        .ok_or_else(|| ToolError(format!("Nothing to undo for {abs}: it is in no root.")))?;
    let journal = state.journal.of_root(root).map_err(|why| {
        ToolError(format!(
            "Nothing to undo for {abs}: edits here are not journaled ({why})."
        ))
    })?;
    let entry = journal
        .last_of(&rel)
        .map_err(|e| ToolError(format!("Cannot read the journal of edits: {e}.")))?
        .ok_or_else(|| {
            ToolError(format!(
                "Nothing left to undo for {abs}: the journal holds no edit of it by write_file or \
                 replace that is not undone already."
            ))
        })?;
    let what = edit_named(&entry);
    match journal::undo_held(
        journal,
        &state.guard,
        &target,
        &mut holding.held,
        &entry,
        false,
    ) {
        Ok(Undone::Restored(metadata)) => {
            state.seen.wrote(
                target.resolved().display(),
                real,
                FileVersion::of(&metadata),
                entry.before.clone(),
            );
            let shown = restored_diff(state, journal, &entry, &target);
            super::text(format!(
                "Undid {what} of {abs}: the file holds what it held before that edit.{shown}"
            ))
        }
        Ok(Undone::Removed) => {
            state.seen.forget(real);
            super::text(format!(
                "Undid {what} of {abs}: that edit created the file, so it was removed."
            ))
        }
        Err(e) => Err(ToolError(refusal(state, &target, &what, &entry, e))),
    }
}

/// "the replace edit made at 2026-11-26 14:05:03 UTC".
pub fn edit_named(entry: &Entry) -> String {
    format!("the {} edit made at {}", entry.tool, time::utc(entry.time))
}

/// The diff the undo made (from what the edit wrote back to before it).
fn restored_diff(state: &State, journal: &RootJournal, entry: &Entry, target: &Target) -> String {
    let Some(before) = &entry.before else {
        return String::new();
    };
    let (Ok(after), Ok(before)) = (journal.content(&entry.after), journal.content(before)) else {
        return String::new();
    };
    let rel = state.guard.relative_display(target.resolved().display());
    let unified = diff::unified(
        &String::from_utf8_lossy(&after),
        &String::from_utf8_lossy(&before),
        &rel,
    );
    if unified.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", diff::fenced(&unified))
    }
}

/// Why an undo did not happen, for the model and for `rootbound undo`.
pub fn refusal_text(shown: &str, rel: &str, what: &str, entry: &Entry, e: UndoError) -> String {
    match e {
        UndoError::Changed { wrote, now } => {
            let unified = diff::unified(
                &String::from_utf8_lossy(&wrote),
                &String::from_utf8_lossy(&now),
                rel,
            );
            format!(
                "Cannot undo {what} of {shown}: the file changed after that edit (another program, \
                 an editor, a command or a later edit changed it), and undoing it now would lose \
                 that change. Nothing was changed. What changed since that edit:\n\n{}",
                diff::fenced(&unified)
            )
        }
        UndoError::Deleted => format!(
            "Cannot undo {what} of {shown}: the file was deleted after that edit. Nothing was \
             changed; the user can bring back what it held before the edit with `rootbound undo \
             {} --force`.",
            entry.short_id()
        ),
        UndoError::Moved => format!(
            "Cannot undo {what} of {shown}: that path now leads to another file (a link was put \
             in its place). Nothing was changed."
        ),
        UndoError::Lost(e) => {
            format!("Cannot undo {what} of {shown}: {e}. Nothing was changed.")
        }
        UndoError::Io(e) => writing::write_error_message(shown, &e),
    }
}

fn refusal(state: &State, target: &Target, what: &str, entry: &Entry, e: UndoError) -> String {
    let rel = state.guard.relative_display(target.resolved().display());
    refusal_text(target.abs(), &rel, what, entry, e)
}

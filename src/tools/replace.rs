//! `replace` (TOOLS.md 3): literal search-and-replace in one file, exact to
//! the byte outside the replaced spans, with Gemini CLI's rules and
//! messages, and a near-miss hint when old_string is not found.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::write_file::{commit, placeholder_message, read_existing, target_error_message};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::fs::writing::{self, Target};
use crate::mcp::params::{JsonObject, portable_schema};
use crate::text::diff;
use crate::text::edit::{self, EditFailure, Expected, near_miss, omission};
use crate::text::exact::{self, DecodeError};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplaceParams {
    /// The file to edit: an absolute path, or a path relative to the primary
    /// workspace root.
    pub file_path: String,
    /// The exact text to replace, copied from the file including whitespace
    /// and indentation, with enough surrounding lines to be unique. Empty to
    /// create a new file.
    pub old_string: String,
    /// The text to put in its place, exactly as it should appear.
    pub new_string: String,
    /// How many occurrences of old_string must be found and replaced.
    /// Default 1.
    #[schemars(range(min = 1), extend("default" = 1))]
    pub expected_replacements: Option<i64>,
}

/// Accepted but unpublished spellings of older Gemini CLI versions.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplaceDialect {
    /// Replace every occurrence (at least one).
    pub allow_multiple: Option<bool>,
    /// A description of the edit; ignored.
    #[expect(
        dead_code,
        reason = "declared so the dialect schema type-checks it; never used"
    )]
    pub instruction: Option<String>,
}

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "replace",
        title: "Replace Text In File",
        description: "Replaces text in a file inside the workspace. old_string must match the file \
            exactly (whitespace and indentation included) and, unless expected_replacements says \
            otherwise, exactly once: include a few lines of context to make it unique. Matching is \
            literal, not a regular expression. The file keeps its line endings, encoding, \
            byte-order mark, final newline and permission bits. With an empty old_string and a \
            file that does not exist yet, creates it with new_string. The answer includes a diff.",
        read_only: false,
        destructive: true,
        idempotent: false,
        schema: portable_schema::<ReplaceParams>(),
        hidden_schema: Some(portable_schema::<ReplaceDialect>()),
        aliases: &[],
        handler: |ctx, args| Box::pin(run(ctx, args)),
    }
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ReplaceParams = parse_args(&args)?;
    let dialect: ReplaceDialect = parse_args(&args)?;
    let expected = expected(&params, &dialect)?;
    if let Some(line) = omission::new_placeholder(&params.old_string, &params.new_string) {
        return Err(placeholder_message(line));
    }
    let state = ctx.state.clone();
    let guard = &state.guard;
    let target =
        writing::target(guard, &params.file_path).map_err(|e| target_error_message(guard, e))?;
    let cost = target.existing_size() + params.new_string.len() as u64;
    run_sized(cost, move || replace(&state, &params, expected, target)).await
}

fn expected(params: &ReplaceParams, dialect: &ReplaceDialect) -> Result<Expected, ToolError> {
    match params.expected_replacements {
        Some(n) if n < 1 => Err("expected_replacements must be 1 or more".into()),
        Some(n) => Ok(Expected::Exactly(usize::try_from(n).unwrap_or(usize::MAX))),
        None if dialect.allow_multiple == Some(true) => Ok(Expected::AtLeastOne),
        None => Ok(Expected::Exactly(1)),
    }
}

fn replace(
    state: &Arc<State>,
    params: &ReplaceParams,
    expected: Expected,
    target: Target,
) -> ToolResult {
    let guard = &state.guard;
    let abs = target.abs.clone();
    let lock = state.locks.lock_for(target.resolved.real());
    let _held = lock.lock().unwrap_or_else(|p| p.into_inner());

    let Some(existing) = read_existing(guard, &target)? else {
        if params.old_string.is_empty() {
            commit(guard, &target, params.new_string.as_bytes(), None)?;
            return super::text(format!("Created new file: {abs} with provided content."));
        }
        return Err(format!(
            "File not found: {abs}. To create a new file, call replace with an empty old_string \
             and the whole content as new_string, or use write_file."
        )
        .into());
    };
    if params.old_string.is_empty() {
        return Err(format!("File already exists, cannot create: {abs}").into());
    }
    // Rule 4 comes before the content is looked at (a binary file included).
    if exact::normalize(&params.old_string) == exact::normalize(&params.new_string) {
        return Err(identical_message(&abs));
    }
    let (metadata, decoded) = existing.decode(&target);
    let file = decoded.map_err(|e| not_text_message(&abs, e))?;
    let edited = match edit::replace(&file.text, &params.old_string, &params.new_string, expected) {
        Ok(edited) => edited,
        Err(failure) => {
            return Err(failure_message(
                &abs,
                &file.text,
                &params.old_string,
                failure,
            ));
        }
    };
    let rel = guard.relative_display(target.resolved.display());
    let diff = diff::unified(&file.text, &edited.text, &rel);
    let bytes = exact::encode_cow(&edited.text, file.encoding);
    commit(guard, &target, &bytes, Some(&metadata))?;
    super::text(format!(
        "Successfully modified file: {abs} ({} replacements).\n\n{diff}",
        edited.replacements
    ))
}

fn not_text_message(abs: &str, e: DecodeError) -> ToolError {
    ToolError(match e {
        DecodeError::NotText => {
            format!("Cannot edit {abs}: it is a binary file, not text. It was left unchanged.")
        }
        DecodeError::Invalid { encoding, offset } => format!(
            "Cannot edit {abs}: it is not valid {} text (the first invalid byte is at offset \
             {offset}). It was left unchanged, since rewriting it would damage it; use write_file \
             only if you mean to replace the whole file.",
            encoding.name()
        ),
    })
}

fn identical_message(abs: &str) -> ToolError {
    ToolError(format!(
        "No changes to apply. The old_string and new_string are identical in file: {abs}"
    ))
}

fn failure_message(abs: &str, text: &str, old: &str, failure: EditFailure) -> ToolError {
    ToolError(match failure {
        EditFailure::Identical => return identical_message(abs),
        EditFailure::CountMismatch { expected, found } => format!(
            "Failed to edit, Expected {expected} occurrence{} but found {found} for old_string in \
             file: {abs}",
            if expected == 1 { "" } else { "s" }
        ),
        EditFailure::NotFound => {
            let mut message = format!(
                "Failed to edit, 0 occurrences found for old_string in {abs}. Nothing was changed. \
                 old_string must match the file exactly, including whitespace, indentation, line \
                 breaks and escaping; use read_file to see the current text and copy from it."
            );
            let normalized_file = exact::Normalized::new(text).text;
            let normalized_old = exact::normalize(old);
            if let Some(miss) = near_miss::find(&normalized_file, &normalized_old) {
                message.push_str(&format!(
                    "\nThe closest text is at lines {}-{}, where {}:\n{}\nThat text was not \
                     changed; correct old_string and try again.",
                    miss.first_line, miss.last_line, miss.difference, miss.excerpt
                ));
            }
            message
        }
    })
}

//! `replace` (docs/tools.md): literal search-and-replace in one file, exact to
//! the byte outside the replaced spans, with Gemini CLI's rules and
//! messages, and a near-miss hint when old_string is not found.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::writes::{
    CommitError, Holding, commit, hold, journal_after, journaling, links_note, placeholder_message,
    read_existing, target_or_ask, unseen_change,
};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::fs::writing::{self, Target};
use crate::text::diff;
use crate::text::edit::{self, EditFailure, Expected, near_miss, omission};
use crate::text::exact::{self, DecodeError};
use crate::tools::params::JsonObject;

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

/// Accepted in every dialect; advertised by gemini-current.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplaceDialect {
    /// true: replace every occurrence of old_string (there must be at least
    /// one) instead of exactly one.
    pub allow_multiple: Option<bool>,
    /// What the edit is for, in a sentence. Not used to change the edit.
    #[expect(
        dead_code,
        reason = "declared so the dialect schema type-checks it; never used"
    )]
    pub instruction: Option<String>,
}

/// replace as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct ReplaceCurrent {
    /// The file to edit: an absolute path, or a path relative to the primary
    /// workspace root.
    file_path: String,
    /// One sentence on what the edit does and why.
    instruction: String,
    /// The exact text to replace, copied from the file.
    old_string: String,
    /// The text to put in its place, exactly as it should appear.
    new_string: String,
    /// true: replace every occurrence of old_string. Default false.
    #[schemars(extend("default" = false))]
    allow_multiple: Option<bool>,
}

/// The description in pieces: the dialects differ in how several
/// occurrences are asked for, and the newest Gemini CLI has `instruction`.
macro_rules! description_head {
    () => {
        "Changes one part of a text file inside the workspace: finds old_string in the file and \
    puts new_string in its place, then writes the file atomically and answers with a unified \
    diff of what changed. Read the file first (read_file) so you copy old_string from its \
    current text.\n\n\
    How old_string is matched: literally, character for character, including spaces, tabs, \
    indentation, blank lines and punctuation. It is not a regular expression and nothing in \
    it is interpreted: `$1`, `$&` and backslashes in new_string end up in the file exactly \
    as written. Do not escape anything and do not add line numbers or the 'L12:' prefixes of \
    search results. The only leniency is line endings: the file's CRLF or CR line breaks \
    match the \\n in your strings, and the inserted text takes the file's own line-ending \
    style.\n\n\
    How many places: by default old_string must occur exactly once, so the edit cannot land \
    in the wrong place. Make it unique by including context, usually 2 or 3 unchanged lines \
    before and after the lines you change, copied exactly; repeat that context unchanged in \
    new_string. To change every occurrence of a repeated snippet on purpose, set "
    };
}
macro_rules! description_tail {
    () => {
        "\n\n\
    When it fails nothing is written, and the message says why: old_string not found (with \
    the closest text in the file and what differs, for example indentation, so you can \
    correct old_string; no approximate match is ever applied), found more often than \
    expected, or identical to new_string. Large changes go best as several small replace \
    calls, each with its own context; to rewrite most of a file, use write_file.\n\n\
    Creating a file: with an empty old_string and a path that does not exist yet, the file \
    is created (with missing parent directories) holding new_string. The file keeps its \
    encoding, byte-order mark, final newline, owner, permissions and ACLs. new_string must be \
    complete: a placeholder line such as '// ... rest of code ...' is refused, since it \
    would delete the code it stands for. Files inside a .git directory are never written. \
    Paths are absolute or relative to the primary workspace root."
    };
}

const DESCRIPTION: &str = concat!(
    description_head!(),
    "expected_replacements to the number of occurrences you expect; the call fails, \
     changing nothing, if the count differs.",
    description_tail!()
);

const DESCRIPTION_CURRENT: &str = concat!(
    description_head!(),
    "allow_multiple to true.",
    description_tail!(),
    "\n\ninstruction: one sentence saying what the edit is for and why; it documents the \
     call and does not change how the edit is applied."
);

pub fn spec() -> ToolSpec {
    ToolSpec::writes("replace", "Replace Text In File", false)
        .params::<ReplaceParams>()
        .accepts::<ReplaceDialect>()
        .describe(DESCRIPTION)
        .current_schema::<ReplaceCurrent>("replace", DESCRIPTION_CURRENT)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ReplaceParams = parse_args(&args)?;
    let dialect: ReplaceDialect = parse_args(&args)?;
    let expected = expected(&params, &dialect)?;
    if params.file_path.is_empty() {
        return Err(ToolError::new(
            "The 'file_path' parameter must be non-empty.",
        ));
    }
    let state = ctx.state.clone();
    if let Some(line) = omission::new_placeholder(&params.old_string, &params.new_string) {
        return Err(placeholder_message(&state, line, "new_string"));
    }
    let occurrences = match expected {
        Expected::Exactly(1) => "Replaces: exactly one occurrence of".to_string(),
        Expected::Exactly(n) => format!("Replaces: exactly {n} occurrences of"),
        Expected::AtLeastOne => "Replaces: every occurrence (at least one) of".to_string(),
    };
    let shown = [
        (occurrences.as_str(), params.old_string.as_str()),
        ("With", params.new_string.as_str()),
    ];
    let target = target_or_ask(&ctx, "replace", &params.file_path, &shown).await?;
    let cost = target.existing_size() + params.new_string.len() as u64;
    // A command line that runs git has its configuration checked; no
    // write may land between that check and its end.
    let writing = state.writes.writing().await;
    let holding = hold(&state, &target).await?;
    run_sized(cost, move || {
        let _writing = writing;
        replace(&state, &params, expected, target, holding)
    })
    .await
}

fn expected(params: &ReplaceParams, dialect: &ReplaceDialect) -> Result<Expected, ToolError> {
    match params.expected_replacements {
        Some(n) if n < 1 => Err(ToolError::new("expected_replacements must be 1 or more")),
        Some(n) => Ok(Expected::Exactly(usize::try_from(n).unwrap_or(usize::MAX))),
        None if dialect.allow_multiple == Some(true) => Ok(Expected::AtLeastOne),
        None => Ok(Expected::Exactly(1)),
    }
}

/// What one attempt at the edit came to.
enum Outcome {
    /// Written: the answer.
    Written(String),
    /// Not written: the file changed on disk after it was read (the
    /// message, should a retry not be possible).
    Changed(ToolError),
}

/// The edit, and once more on the new content if the file changed on disk
/// between reading and renaming (another program wrote it): the edit is
/// applied to what is there now, or fails as it would on that content.
fn replace(
    state: &Arc<State>,
    params: &ReplaceParams,
    expected: Expected,
    target: Target,
    mut holding: Holding,
) -> ToolResult {
    match attempt(state, params, expected, &target, &mut holding)? {
        Outcome::Written(message) => return super::text(message),
        Outcome::Changed(_) => {
            tracing::debug!(
                "{} changed on disk during an edit; editing again",
                target.abs()
            );
        }
    }
    holding.hold_again(&state.guard, &target)?;
    match attempt(state, params, expected, &target, &mut holding)? {
        Outcome::Written(message) => super::text(message),
        Outcome::Changed(message) => Err(message),
    }
}

fn attempt(
    state: &Arc<State>,
    params: &ReplaceParams,
    expected: Expected,
    target: &Target,
    holding: &mut Holding,
) -> Result<Outcome, ToolError> {
    let guard = &state.guard;
    let abs = target.abs().to_string();
    let held = &mut holding.held;
    let committed =
        |bytes: &[u8], held: &mut writing::Held| match commit(guard, target, bytes, held) {
            Ok(written) => Ok(Ok(written)),
            Err(CommitError::Changed(message)) => Ok(Err(Outcome::Changed(message))),
            Err(e) => Err(ToolError::from(e)),
        };

    let Some(existing) = read_existing(held, target)? else {
        if params.old_string.is_empty() {
            let bytes = params.new_string.as_bytes();
            let recorded = journaling(state, target, None).record("replace", None, bytes, None);
            let written = match committed(bytes, held)? {
                Ok(written) => written,
                Err(changed) => return Ok(changed),
            };
            let note = journal_after(state, target, recorded, &written);
            return Ok(Outcome::Written(format!(
                "Created new file: {abs} with provided content.{note}"
            )));
        }
        return Err(ToolError::new(format!(
            "File not found: {abs}. To create a new file, call replace with an empty old_string \
             and the whole content as new_string, or use write_file."
        )));
    };
    if params.old_string.is_empty() {
        return Err(ToolError::new(format!(
            "File already exists, cannot create: {abs}"
        )));
    }
    // Rule 4 comes before the content is looked at (a binary file included).
    if exact::normalize(&params.old_string) == exact::normalize(&params.new_string) {
        return Err(identical_message(&abs));
    }
    let unseen = unseen_change(state, target, &existing.metadata).is_some();
    let journal = journaling(state, target, Some(&existing.metadata));
    let (metadata, decoded) = existing.decode(target);
    let file = decoded.map_err(|e| not_text_message(&abs, e))?;
    let edited = match edit::replace(&file.text, &params.old_string, &params.new_string, expected) {
        Ok(edited) => edited,
        Err(failure) => {
            let wording = Wording {
                current: state.config.dialect.is_current(),
                count_given: params.expected_replacements.is_some(),
            };
            return Err(failure_message(
                &abs,
                &file.text,
                &params.old_string,
                failure,
                wording,
            ));
        }
    };
    let rel = guard.relative_display(target.resolved().display());
    let diff = diff::unified(&file.text, &edited.text, &rel);
    let bytes = exact::encode_cow(&edited.text, file.encoding);
    // Decoding was exact, so encoding the text again gives the file's bytes.
    let before = exact::encode_cow(&file.text, file.encoding);
    let recorded = journal.record("replace", Some((&before, &metadata)), &bytes, Some(&diff));
    let written = match committed(&bytes, held)? {
        Ok(written) => written,
        Err(changed) => return Ok(changed),
    };
    let note = journal_after(state, target, recorded, &written);
    let mut message = format!(
        "Successfully modified file: {abs} ({} replacements).",
        edited.replacements
    );
    if diff.is_empty() {
        message.push_str(" The content is unchanged.");
    } else {
        message.push_str("\n\n");
        message.push_str(&diff::fenced(&diff));
    }
    if unseen {
        message.push_str(
            "\n\nNote: the file had changed on disk since this session last read or wrote it; \
             the edit was applied to its current content. Read it again before further edits.",
        );
    }
    message.push_str(&links_note(held));
    message.push_str(&note);
    Ok(Outcome::Written(message))
}

/// Which dialect's words a failed edit is told in.
#[derive(Clone, Copy)]
struct Wording {
    current: bool,
    /// The caller gave expected_replacements (gemini-current's hint about
    /// allow_multiple would not fit).
    count_given: bool,
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

fn failure_message(
    abs: &str,
    text: &str,
    old: &str,
    failure: EditFailure,
    wording: Wording,
) -> ToolError {
    ToolError(match failure {
        EditFailure::Identical => return identical_message(abs),
        EditFailure::CountMismatch { expected, found } => {
            let mut message = format!(
                "Failed to edit, Expected {expected} occurrence{} but found {found} for old_string \
                 in file: {abs}",
                if expected == 1 { "" } else { "s" }
            );
            if wording.current && !wording.count_given {
                message.push_str(
                    ". If you intended to replace multiple occurrences, set 'allow_multiple' to \
                     true.",
                );
            }
            message
        }
        EditFailure::NotFound => {
            let mut message = if wording.current {
                format!(
                    "Could not find an exact match for 'old_string' in '{abs}'. If previous edits \
                     modified the file or you are modifying lines outside your recent read window, \
                     please use read_file to inspect the target lines before retrying with an exact \
                     'old_string'."
                )
            } else {
                format!(
                    "Failed to edit, 0 occurrences found for old_string in {abs}. Nothing was \
                     changed. old_string must match the file exactly, including whitespace, \
                     indentation, line breaks and escaping; use read_file to see the current text \
                     and copy from it."
                )
            };
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

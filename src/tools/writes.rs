//! What the two write tools (write_file, replace) share: their messages
//! for refused targets and placeholders, and reading and committing a file
//! with those messages.

use super::{State, ToolError};
use crate::fs::Metadata;
use crate::fs::guard::Guard;
use crate::fs::writing::{self, Existing, Target, TargetError};

/// Messages shared by the two write tools for a refused target.
pub fn target_error_message(state: &State, e: TargetError) -> ToolError {
    match e {
        TargetError::Refused(refusal) => {
            super::refusal_message(state, refusal, super::file_outside)
        }
        TargetError::InsideGit(abs) => ToolError(format!(
            "Refusing to write {abs}: it is inside a .git directory. Git's internal files must not \
             be edited directly; use git itself to change them."
        )),
        TargetError::Protected(abs, why) => ToolError(format!(
            "Refusing to write {abs}: {why}. Such files are protected so that nothing written \
             here runs later with the user's full rights; the user can lift this with \
             --unprotect."
        )),
        TargetError::IsDirectory(abs) => {
            ToolError(format!("Path is a directory, not a file: {abs}"))
        }
    }
}

/// Reads the target's current content (None: a new file), with the write
/// tools' message on failure.
pub fn read_existing(guard: &Guard, target: &Target) -> Result<Option<Existing>, ToolError> {
    writing::read_existing(guard, target)
        .map_err(|e| ToolError(writing::write_error_message(&target.abs, &e)))
}

/// Commits `bytes` to the target, with the write tools' message on failure.
pub fn commit(
    guard: &Guard,
    target: &Target,
    bytes: &[u8],
    previous: Option<&Metadata>,
) -> Result<(), ToolError> {
    writing::commit(guard, target, bytes, previous)
        .map_err(|e| ToolError(writing::write_error_message(&target.abs, &e)))
}

/// The refusal for content with an omission placeholder; `param` names
/// where it was (`content` or `new_string`).
pub fn placeholder_message(state: &State, line: &str, param: &str) -> ToolError {
    if state.config.dialect.is_current() {
        // Newer Gemini CLI's own words, which its models have seen.
        return ToolError(if param == "content" {
            "`content` contains an omission placeholder (for example 'rest of methods ...'). \
             Provide complete file content."
                .to_string()
        } else {
            "`new_string` contains an omission placeholder (for example 'rest of methods ...'). \
             Provide exact literal replacement text."
                .to_string()
        });
    }
    ToolError(format!(
        "The {param} holds an omission placeholder ('{}'). Writing it would replace the code it \
         stands for and delete that code. Send the complete content, with every line written out.",
        line.trim()
    ))
}

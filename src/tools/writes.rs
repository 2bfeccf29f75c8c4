//! What the two write tools (write_file, replace) share: their messages
//! for refused targets, placeholders and hard links, and holding, reading
//! and committing a file with those messages.

use super::{State, ToolError};
use crate::fs::atomic;
use crate::fs::guard::Guard;
use crate::fs::writing::{self, Existing, Held, Target, TargetError};

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

/// A target held against other writers: this process's turn for the path,
/// and the lock other processes see.
pub struct Holding {
    _turn: tokio::sync::OwnedMutexGuard<()>,
    pub held: Held,
}

/// Holds the target against other writers, in this process and in others
/// (see `fs/writing.rs`), with the write tools' message on failure.
pub async fn hold(state: &State, target: &Target) -> Result<Holding, ToolError> {
    let turn = state
        .locks
        .lock_for(target.resolved.real())
        .lock_owned()
        .await;
    let held = writing::hold(&state.guard, target)
        .await
        .map_err(|e| ToolError(writing::write_error_message(&target.abs, &e)))?;
    Ok(Holding { _turn: turn, held })
}

impl Holding {
    /// After the file changed under a write: lets go of it and holds what is
    /// at the name now, without waiting (a retry must not queue again).
    /// Err when another process holds it.
    pub fn hold_again(&mut self, guard: &Guard, target: &Target) -> Result<(), ToolError> {
        self.held.release();
        match writing::try_hold(guard, target) {
            Ok(Some(held)) => {
                self.held = held;
                Ok(())
            }
            Ok(None) => Err(ToolError(format!(
                "Failed to edit {}: it changed on disk while the edit was being written, and \
                 another process is writing it now. Nothing was written by this call; read the \
                 file again and retry.",
                target.abs
            ))),
            Err(e) => Err(ToolError(writing::write_error_message(&target.abs, &e))),
        }
    }
}

/// Reads the held file's content (None: a new file), with the write tools'
/// message on failure.
pub fn read_existing(held: &mut Held, target: &Target) -> Result<Option<Existing>, ToolError> {
    held.read()
        .map_err(|e| ToolError(writing::write_error_message(&target.abs, &e)))
}

/// Why a commit did not happen.
pub enum CommitError {
    /// The file changed on disk after it was read (see `atomic::Changed`).
    Changed(ToolError),
    Failed(ToolError),
}

impl From<CommitError> for ToolError {
    fn from(e: CommitError) -> ToolError {
        match e {
            CommitError::Changed(e) | CommitError::Failed(e) => e,
        }
    }
}

/// Commits `bytes` to the held target, with the write tools' message on
/// failure.
pub fn commit(
    guard: &Guard,
    target: &Target,
    bytes: &[u8],
    held: &mut Held,
) -> Result<(), CommitError> {
    writing::commit(guard, target, bytes, held).map_err(|e| {
        let message = ToolError(writing::write_error_message(&target.abs, &e));
        if atomic::is_changed(&e) {
            CommitError::Changed(message)
        } else {
            CommitError::Failed(message)
        }
    })
}

/// The note for a file with other hard links, which an atomic write leaves
/// holding the old content; empty when there are none.
pub fn links_note(held: &Held) -> String {
    match held.other_links() {
        0 => String::new(),
        n => format!(
            "\n\nNote: the file had {n} other hard link{}. The write made it a new file, so \
             {} the old content; edit {} too if it should change.",
            if n == 1 { "" } else { "s" },
            if n == 1 {
                "that link keeps"
            } else {
                "those links keep"
            },
            if n == 1 { "it" } else { "them" },
        ),
    }
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

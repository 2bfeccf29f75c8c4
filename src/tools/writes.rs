//! What the two write tools (write_file, replace) share: their messages
//! for refused targets, placeholders and hard links, and holding, reading
//! and committing a file with those messages.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ask::{Answer, Cannot, Question};
use super::seen::Sighting;
use super::{CallContext, State, ToolError};
use crate::fs::atomic;
use crate::fs::guard::Guard;
use crate::fs::journal::{Content, NotJournaled, Recorded, RootJournal, Version};
use crate::fs::writing::{self, Existing, FileVersion, Held, Metadata, Target, TargetError};
use crate::text::diff;
use crate::text::visible::{escaped, lines, quoted};

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

/// Content longer than this is not shown in a question, so its write is
/// refused without one: the user must see all of what they approve.
const MAX_SHOWN_WRITE: usize = 16 * 1024;

/// Resolves a write tool's target. A protected one (inside `.git`, or in
/// the protected set) becomes a question to the user where the client can
/// be asked: the path, why it is protected, and all of what would be
/// written (`shown`), escaped. Approved, this one write goes ahead; the
/// guard's rules still hold.
pub async fn target_or_ask(
    ctx: &CallContext,
    tool: &str,
    raw: &str,
    shown: &[(&str, &str)],
) -> Result<Target, ToolError> {
    let state = &ctx.state;
    let (abs, why, inside_git) = match writing::target(&state.guard, raw) {
        Ok(target) => return Ok(target),
        Err(TargetError::InsideGit(abs)) => (
            abs,
            "it is inside a .git directory; git runs its hooks and obeys its config outside the \
             sandbox"
                .to_string(),
            true,
        ),
        Err(TargetError::Protected(abs, why)) => (abs, why, false),
        Err(e) => return Err(target_error_message(state, e)),
    };
    // The refusal as it reads without a question.
    let refusal = || {
        let refused = if inside_git {
            TargetError::InsideGit(abs.clone())
        } else {
            TargetError::Protected(abs.clone(), why.clone())
        };
        target_error_message(state, refused)
    };
    if let Some(cannot) = ctx.asker.cannot_ask() {
        let mut message = refusal().0;
        if cannot == Cannot::NoCapability {
            message.push_str(" This client cannot ask the user to approve a single write.");
        }
        return Err(ToolError(message));
    }
    if shown.iter().map(|(_, text)| text.len()).sum::<usize>() > MAX_SHOWN_WRITE {
        return Err(ToolError(format!(
            "{} The write is too long to show the user in a question (over {MAX_SHOWN_WRITE} \
             bytes), so they were not asked.",
            refusal().0
        )));
    }
    // The file the write would reach, every link followed: what the user
    // approves, and what the write must still reach once approved.
    let real = writing::target_approved(&state.guard, raw)
        .map_err(|e| target_error_message(state, e))?
        .resolved()
        .real()
        .to_path_buf();
    let question = Question {
        message: format!(
            "rootbound: the model asked {tool} to write a protected file, one that runs or is \
             obeyed outside the sandbox with your full rights. Should it write it?\n\nFile (every \
             link followed):\n  {}\nProtected because:\n  {}\nAs the model named it:\n  {}\n\n\
             Approving allows this one write only, to this file.{}",
            quoted(&real.to_string_lossy()),
            escaped(&why),
            quoted(raw),
            // Each section's lines after a `|` of their own, so that no
            // text of the model's can pass for a heading.
            shown
                .iter()
                .map(|(heading, text)| format!(
                    "\n\n{heading} (each line after \"| \", escaped):\n{}",
                    lines(text, "  | ")
                ))
                .collect::<String>()
        ),
        choices: vec![("once", "Write it, this once"), ("no", "Do not write it")],
        wait: state.config.bash.timeout,
    };
    let declined = |what: &str| {
        ToolError(format!(
            "{what} Nothing was written to {abs}. Do not try again unless the user asks you to."
        ))
    };
    match ctx.asker.ask(&question, &ctx.cancel).await {
        Answer::Chose(choice) if choice == "once" => {
            let target = writing::target_approved(&state.guard, raw)
                .map_err(|e| target_error_message(state, e))?;
            if target.resolved().real() != real {
                return Err(ToolError(format!(
                    "{abs} led to another file once the user approved the write, so nothing \
                     was written."
                )));
            }
            tracing::info!(
                "{tool}: the user approved, once, writing the protected file {}",
                real.display()
            );
            Ok(target)
        }
        Answer::Chose(_) | Answer::Declined => Err(declined(
            "The user declined this write (asked through the client).",
        )),
        Answer::Dismissed => Err(declined("The user closed the question without approving.")),
        Answer::TimedOut(wait) => Err(declined(&format!(
            "The user did not answer within {}s.",
            wait.as_secs()
        ))),
        Answer::Busy => Err(ToolError(format!("{} {}", refusal().0, super::ask::BUSY))),
        Answer::Failed(e) => Err(ToolError(format!(
            "{} The client could not ask the user ({e}).",
            refusal().0
        ))),
        Answer::Deferred => Err(ToolError(String::new())),
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
        .lock_for(target.resolved().real())
        .lock_owned()
        .await;
    let held = writing::hold(&state.guard, target)
        .await
        .map_err(|e| ToolError(writing::write_error_message(target.abs(), &e)))?;
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
                target.abs()
            ))),
            Err(e) => Err(ToolError(writing::write_error_message(target.abs(), &e))),
        }
    }
}

/// Reads the held file's content (None: a new file), with the write tools'
/// message on failure.
pub fn read_existing(held: &mut Held, target: &Target) -> Result<Option<Existing>, ToolError> {
    held.read()
        .map_err(|e| ToolError(writing::write_error_message(target.abs(), &e)))
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
) -> Result<Metadata, CommitError> {
    writing::commit(guard, target, bytes, held).map_err(|e| {
        let message = ToolError(writing::write_error_message(target.abs(), &e));
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

/// Where an edit's entry goes: the root's journal and the file's path in
/// it (or why it is not journaled), and the version the journal already
/// holds of the file as it is now, if any.
pub struct Journaling<'a> {
    journal: Result<&'a Arc<RootJournal>, NotJournaled>,
    rel: PathBuf,
    known: Option<Version>,
}

/// The root `real` is in, and its path relative to it.
pub fn root_and_rel<'a>(state: &'a State, real: &Path) -> Option<(&'a Path, PathBuf)> {
    let root = state.guard.containing_root(real)?;
    let rel = real.strip_prefix(root).ok()?.to_path_buf();
    Some((root, rel))
}

/// The journal for an edit of `target`, whose file is now `now` (None: no
/// file).
pub fn journaling<'a>(state: &'a State, target: &Target, now: Option<&Metadata>) -> Journaling<'a> {
    let real = target.resolved().real();
    let Some((root, rel)) = root_and_rel(state, real) else {
        return Journaling {
            journal: Err(NotJournaled("the file is in no root".into())),
            rel: PathBuf::new(),
            known: None,
        };
    };
    // The session's own last write, unchanged since: its content is in the
    // journal already, under a hash that need not be computed again.
    let known = now.and_then(|now| state.seen.journaled(real, &FileVersion::of(now)));
    Journaling {
        journal: state.journal.of_root(root),
        rel,
        known,
    }
}

impl Journaling<'_> {
    /// Whether a file of `size` bytes would be journaled at all.
    pub fn takes(&self, size: u64) -> bool {
        self.journal.as_ref().is_ok_and(|j| j.takes(size))
    }

    /// Why a file of `size` bytes is not journaled.
    pub fn refusal(&self, size: u64) -> NotJournaled {
        match &self.journal {
            Err(why) => why.clone(),
            Ok(journal) => journal
                .check_size(size)
                .err()
                .unwrap_or_else(|| NotJournaled("it was not kept".into())),
        }
    }

    /// Records the edit before it is written: `before` what the file holds
    /// (its bytes and metadata; None: no file), `after` what the edit
    /// writes, `diff` its unified diff (None: a new file).
    pub fn record(
        &self,
        tool: &str,
        before: Option<(&[u8], &Metadata)>,
        after: &[u8],
        diff: Option<&str>,
    ) -> Result<Recorded, NotJournaled> {
        let journal = self.journal.as_ref().map_err(Clone::clone)?;
        let lines = match diff {
            None => (bytecount_lines(after), 0),
            Some(diff) => changed_lines(diff),
        };
        let before = before.map(|(bytes, metadata)| Content {
            bytes,
            mode: writing::mode_bits(metadata),
            known: self.known.as_ref(),
        });
        journal.record(before, tool, &self.rel, after, lines)
    }
}

/// After an edit of `target` was written (the new file's metadata
/// `written`): keeps its journal entry and remembers the version the
/// session now knows. The note for the answer when the edit could not be
/// journaled, else empty.
pub fn journal_after(
    state: &State,
    target: &Target,
    recorded: Result<Recorded, NotJournaled>,
    written: &Metadata,
) -> String {
    let real = target.resolved().real();
    match recorded {
        Ok(recorded) => {
            let entry = recorded.keep();
            state.seen.wrote(
                target.resolved().display(),
                real,
                FileVersion::of(written),
                Some(entry.after),
            );
            String::new()
        }
        Err(why) => {
            state.seen.wrote(
                target.resolved().display(),
                real,
                FileVersion::of(written),
                None,
            );
            if state.config.journal.off {
                String::new()
            } else {
                format!("\n\nNote: this edit is not in the journal, so it cannot be undone: {why}.")
            }
        }
    }
}

fn bytecount_lines(bytes: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Lines added and removed, counted in a unified diff.
pub fn changed_lines(diff: &str) -> (u64, u64) {
    let (mut added, mut removed) = (0, 0);
    for line in diff.lines() {
        if line.starts_with("+++ ") || line.starts_with("--- ") {
            continue;
        }
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

/// How a file differs from what this session last saw of it.
pub enum Unseen {
    /// It changed since: how the session saw it.
    Changed(Sighting),
    /// The path the model names leads to another file now (a link was put
    /// in its place); it led to this one.
    Relinked(PathBuf),
}

/// Whether the file changed since this session last read or wrote it, or
/// its path leads elsewhere now. None when neither, or the session never
/// saw it.
pub fn unseen_change(state: &State, target: &Target, now: &Metadata) -> Option<Unseen> {
    let (named, real) = (target.resolved().display(), target.resolved().real());
    if let Some(was) = state.seen.led_elsewhere(named, real) {
        return Some(Unseen::Relinked(was));
    }
    state
        .seen
        .changed(real, &FileVersion::of(now))
        .map(Unseen::Changed)
}

/// What changed in a file since the session saw it: a diff from the
/// content the session last wrote (the journal holds it), or the sizes.
pub fn change_since(state: &State, target: &Target, sighting: &Sighting, now: &[u8]) -> String {
    let rel = state.guard.relative_display(target.resolved().display());
    let old = sighting.journaled.as_ref().and_then(|version| {
        let (root, _) = root_and_rel(state, target.resolved().real())?;
        state.journal.of_root(root).ok()?.content(version).ok()
    });
    if let Some(old) = old {
        let unified = diff::unified(
            &String::from_utf8_lossy(&old),
            &String::from_utf8_lossy(now),
            &rel,
        );
        if !unified.is_empty() {
            return format!("What changed since:\n\n{}", diff::fenced(&unified));
        }
    }
    format!(
        "It was {} bytes then and is {} bytes now.",
        sighting.version.size(),
        now.len()
    )
}

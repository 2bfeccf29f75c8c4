//! `rootbound history` and `rootbound undo`: the user's view of the journal
//! of edits (`fs/journal.rs`), from the command line, while servers may be
//! running on the same roots. `undo` follows the rule `undo_edit` follows:
//! a file is put back only while it is exactly what the edit wrote, so
//! nothing written since is lost; a file deleted since comes back only with
//! `--force`.
//!
//! Like `main.rs` and `cli.rs`, this is a command-line front end: it prints
//! to stdout (tests/tidy.rs names it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;

use crate::fs::guard::Guard;
use crate::fs::journal::{self, Entry, Limits, RootJournal, Undone};
use crate::fs::writing;
use crate::text::{diff, time};
use crate::tools::undo_edit::{edit_named, refusal_text};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only the edits of this file, or of the files under this directory.
    pub path: Option<PathBuf>,
    /// Show the diff of the edit with this ID (or a unique start of it).
    #[arg(long, value_name = "ID")]
    pub diff: Option<String>,
    /// How many of the newest edits to list per root.
    #[arg(long, value_name = "N", default_value = "50")]
    pub last: usize,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// An edit's ID (from `rootbound history`, or a unique start of it), or
    /// a file: its newest edit not undone yet.
    pub edit: String,
    /// Bring back a file that was deleted after the edit.
    #[arg(long)]
    pub force: bool,
}

fn journals(state_dir: Option<&Path>, limits: Limits) -> Result<Vec<RootJournal>, String> {
    let Some(state_dir) = state_dir else {
        return Err(
            "there is no state directory (HOME is not set); name one with --state-dir".into(),
        );
    };
    journal::all_in(state_dir, limits)
        .map_err(|e| format!("cannot read the journal in {}: {e}", state_dir.display()))
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// `rootbound history`: exit code 0, or 1 with a message on stderr.
pub fn run_history(args: &HistoryArgs, state_dir: Option<&Path>, limits: Limits) -> i32 {
    match history(args, state_dir, limits) {
        Ok(text) => {
            out(&text);
            0
        }
        Err(message) => {
            eprintln!("rootbound history: {message}");
            1
        }
    }
}

fn history(args: &HistoryArgs, state_dir: Option<&Path>, limits: Limits) -> Result<String, String> {
    let journals = journals(state_dir, limits)?;
    if let Some(id) = &args.diff {
        let (journal, entry) = find_by_id(&journals, id)?;
        return Ok(shown_diff(journal, &entry));
    }
    let only = match &args.path {
        Some(path) => {
            Some(crate::fs::canonical_path(path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => None,
    };
    let mut text = String::new();
    for journal in &journals {
        let entries = journal
            .entries()
            .map_err(|e| format!("cannot read {}: {e}", journal.dir().display()))?;
        let chosen: Vec<&Entry> = entries
            .iter()
            .filter(|e| {
                only.as_ref()
                    .is_none_or(|only| journal.root().join(&e.path).starts_with(only))
            })
            .collect();
        if chosen.is_empty() {
            continue;
        }
        text.push_str(&format!("{}:\n", shown(&journal.root().to_string_lossy())));
        for entry in &chosen[chosen.len().saturating_sub(args.last)..] {
            text.push_str(&format!(
                "  {}  {}  {:<10} +{} -{}  {}{}\n",
                entry.short_id(),
                time::utc(entry.time),
                entry.tool,
                entry.added,
                entry.removed,
                shown(&entry.path),
                if entry.undone { "  (undone)" } else { "" }
            ));
        }
    }
    if text.is_empty() {
        text = "No edits are journaled".to_string()
            + &only.map_or(String::new(), |p| format!(" for {}", p.display()))
            + ".\n";
    }
    Ok(text)
}

/// A name as a terminal may show it: control characters escaped, so a
/// file name cannot forge or erase lines.
fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    crate::text::names::escape_name(name.as_bytes()).0
}

/// The edit whose id is `id` or starts with it (only one may).
fn find_by_id<'a>(
    journals: &'a [RootJournal],
    id: &str,
) -> Result<(&'a RootJournal, Entry), String> {
    let mut found = Vec::new();
    for journal in journals {
        for entry in journal.entries().unwrap_or_default() {
            if !id.is_empty() && (entry.short_id().starts_with(id) || entry.id == id) {
                found.push((journal, entry));
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("no journaled edit has the ID {id}")),
        n => Err(format!(
            "{n} journaled edits start with {id}; give more of the ID"
        )),
    }
}

fn shown_diff(journal: &RootJournal, entry: &Entry) -> String {
    let content = |version: Option<&journal::Version>| match version {
        None => Ok(Vec::new()),
        Some(version) => journal.content(version),
    };
    match (content(entry.before.as_ref()), content(Some(&entry.after))) {
        (Ok(before), Ok(after)) => {
            let unified = diff::unified(
                &String::from_utf8_lossy(&before),
                &String::from_utf8_lossy(&after),
                &entry.path,
            );
            format!(
                "{} {} of {} ({}){}\n{unified}",
                entry.short_id(),
                edit_named(entry),
                shown(&journal.root().join(&entry.path).to_string_lossy()),
                if entry.before.is_none() {
                    "created it"
                } else {
                    "changed it"
                },
                if entry.undone { ", undone since" } else { "" }
            )
        }
        (Err(e), _) | (_, Err(e)) => {
            format!("{}: the journal's content is gone: {e}\n", entry.short_id())
        }
    }
}

/// `rootbound undo`: exit code 0, or 1 with the reason on stderr.
pub fn run_undo(args: &UndoArgs, state_dir: Option<&Path>, limits: Limits) -> i32 {
    match undo(args, state_dir, limits) {
        Ok(text) => {
            out(&text);
            0
        }
        Err(message) => {
            eprintln!("rootbound undo: {message}");
            1
        }
    }
}

fn undo(args: &UndoArgs, state_dir: Option<&Path>, limits: Limits) -> Result<String, String> {
    let journals = journals(state_dir, limits)?;
    let (journal, entry) = match find_by_id(&journals, &args.edit) {
        Ok(found) if !found.1.undone => found,
        Ok((_, entry)) => {
            return Err(format!("the edit {} is undone already", entry.short_id()));
        }
        Err(by_id) => {
            let path = crate::fs::canonical_path(Path::new(&args.edit))
                .map_err(|e| format!("{by_id}, and {}: {e}", args.edit))?;
            let journal = journals
                .iter()
                .filter(|j| path.starts_with(j.root()))
                .max_by_key(|j| j.root().as_os_str().len())
                .ok_or_else(|| {
                    format!(
                        "no journaled edits are in a root holding {}",
                        path.display()
                    )
                })?;
            let rel = path.strip_prefix(journal.root()).unwrap_or(&path);
            let entry = journal
                .last_of(rel)
                .map_err(|e| format!("cannot read {}: {e}", journal.dir().display()))?
                .ok_or_else(|| format!("nothing left to undo for {}", path.display()))?;
            (journal, entry)
        }
    };
    let guard = Guard::new(&[journal.root()]).map_err(|e| e.to_string())?;
    // The root as it is now must be the directory the edit was made in: a
    // root replaced by a link would lead the undo elsewhere.
    if guard.roots().next() != Some(journal.root()) {
        return Err(format!(
            "the root {} is no longer the directory the edit was made in (it now leads to {}); \
             nothing was changed",
            journal.root().display(),
            guard.primary().display()
        ));
    }
    let shown = journal.root().join(&entry.path);
    let target = writing::target(&guard, &shown.to_string_lossy()).map_err(|e| {
        let why = match e {
            writing::TargetError::Refused(_) => "it is no longer inside its root".to_string(),
            writing::TargetError::InsideGit(_) => "it is inside a .git directory".to_string(),
            writing::TargetError::Protected(_, why) => why,
            writing::TargetError::IsDirectory(_) => "it is a directory now".to_string(),
        };
        format!("cannot undo the edit of {}: {why}", shown.display())
    })?;
    let mut held =
        hold(&guard, &target).map_err(|e| writing::write_error_message(target.abs(), &e))?;
    let what = edit_named(&entry);
    match journal::undo_held(journal, &guard, &target, &mut held, &entry, args.force) {
        Ok(Undone::Restored(_)) => Ok(format!(
            "Undid {what} ({}) of {}: it holds what it held before that edit.\n",
            entry.short_id(),
            target.abs()
        )),
        Ok(Undone::Removed) => Ok(format!(
            "Undid {what} ({}) of {}: that edit created the file, so it was removed.\n",
            entry.short_id(),
            target.abs()
        )),
        Err(e) => Err(refusal_text(target.abs(), &entry.path, &what, &entry, e)),
    }
}

/// Holds the file against rootbound servers writing it, as they do (a
/// thread's sleep between tries: there is no runtime here).
fn hold(guard: &Guard, target: &writing::Target) -> std::io::Result<writing::Held> {
    let deadline = Instant::now() + writing::PATIENCE;
    loop {
        if let Some(held) = writing::try_hold(guard, target)? {
            return Ok(held);
        }
        if Instant::now() >= deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                writing::Busy,
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

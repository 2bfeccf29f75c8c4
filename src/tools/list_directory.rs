//! `list_directory` (docs/tools.md): the immediate children of one directory,
//! directories first, with the number of entries ignore files hid.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{DIR_AND_FILTERS, FileFilteringOptions, IgnoreSwitches, NestedSwitches};
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::discovery::walk::{self, WalkOptions};
use crate::fs::guard::{DirEntries, EntryKind, Guard, Resolved};
use crate::text::budget::client_len;
use crate::text::first::FirstN;
use crate::text::names::{Escaped, escape_name};
use crate::tools::params::JsonObject;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDirectoryParams {
    /// The directory to list: an absolute path, or a path relative to the
    /// primary workspace root.
    pub path: String,
    /// Glob patterns matched against entry names; matching entries are left
    /// out (for example ["*.log", "tmp"]).
    pub ignore: Option<Vec<String>>,
    /// Whether to hide entries that .gitignore files ignore (inside a git
    /// work tree). Default true.
    #[schemars(extend("default" = true))]
    pub respect_git_ignore: Option<bool>,
}

/// list_directory as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct ListDirectoryCurrent {
    /// The directory to list: an absolute path, or a path relative to the
    /// primary workspace root.
    dir_path: String,
    /// Glob patterns matched against entry names; matching entries are left
    /// out (for example ["*.log", "tmp"]).
    ignore: Option<Vec<String>>,
    /// Which ignore files hide entries; both do by default.
    file_filtering_options: Option<FileFilteringOptions>,
}

/// The description both dialects share; the newest Gemini CLI also shows
/// sizes.
macro_rules! shared_description {
    () => {
        "Lists the entries directly inside one directory of the workspace (not recursively): \
    subdirectories first, each as '[DIR] name', then files, each group in name order. \
    Entries that .gitignore (inside a git work tree) or the workspace's .geminiignore hide \
    are left out, and a last line '(N ignored)' says how many. ignore takes glob patterns \
    matched against entry names (for example [\"*.log\", \"tmp\"]) to leave out more. Links that \
    lead outside the workspace are not shown. To find files by name anywhere below a \
    directory, glob is faster than listing level by level."
    };
}

const DESCRIPTION: &str = shared_description!();

const DESCRIPTION_CURRENT: &str = concat!(
    shared_description!(),
    " Each file is shown with its size in bytes."
);

pub fn spec() -> ToolSpec {
    ToolSpec::reads("list_directory", "List Directory")
        .params::<ListDirectoryParams>()
        .accepts::<IgnoreSwitches>()
        .accepts::<NestedSwitches>()
        .aliases(DIR_AND_FILTERS)
        .describe(DESCRIPTION)
        .current_schema::<ListDirectoryCurrent>("list_directory", DESCRIPTION_CURRENT)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

fn outside(_path: &Path, dirs: &str) -> String {
    format!("Path must be within one of the workspace directories: {dirs}")
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ListDirectoryParams = parse_args(&args)?;
    let hidden: IgnoreSwitches = parse_args(&args)?;
    let name_filter = name_globs(params.ignore.as_deref().unwrap_or_default())?;
    let state = ctx.state.clone();
    let guard = &state.guard;
    let resolved = guard
        .resolve(&params.path)
        .map_err(|r| super::refusal_message(&state, r, outside))?;
    let abs = resolved.display().display().to_string();
    let Some(meta) = resolved.metadata() else {
        return Err(ToolError::new(format!(
            "Error listing directory: {abs} does not exist."
        )));
    };
    if !meta.is_dir() {
        return Err(ToolError::new(format!(
            "Error: Path is not a directory: {abs}"
        )));
    }
    let options = WalkOptions {
        respect_git_ignore: params.respect_git_ignore.unwrap_or(true),
        respect_gemini_ignore: hidden.respect_gemini_ignore.unwrap_or(true),
        ..WalkOptions::default()
    };
    // A directory's size grows with its entries; big ones leave the thread.
    let cost = meta.len() * 4;
    run_sized(cost, move || {
        list(&state, &resolved, &abs, &name_filter, options)
    })
    .await
}

/// The line that ends a listing cut by the answer budget.
fn entries_left_out(left_out: usize, limit: usize) -> String {
    format!(
        "... and {left_out} more entries not listed: the answer stops at {limit} characters. \
         To see them, list a subdirectory, or use glob with a pattern that matches fewer names."
    )
}

fn name_globs(patterns: &[String]) -> Result<GlobSet, ToolError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        crate::text::globs::check_size(p).map_err(ToolError::new)?;
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError(format!("Invalid pattern in 'ignore': {p}: {e}")))?;
        set.add(glob);
    }
    crate::text::globs::set(&set).map_err(ToolError::new)
}

/// One entry shown: its (escaped) name is `names[start..end]`, so a
/// million-entry directory listed whole costs one string of names and one
/// small record per entry.
struct Entry {
    start: usize,
    end: usize,
    is_dir: bool,
    /// ASCII without upper-case letters: ordered by its bytes alone.
    plain: bool,
    /// Shown in gemini-current.
    size: Option<u64>,
}

/// Directories first, each group in path order.
fn listing_order(a: (bool, bool, &str), b: (bool, bool, &str)) -> std::cmp::Ordering {
    let ((a_dir, a_plain, a_name), (b_dir, b_plain, b_name)) = (a, b);
    b_dir.cmp(&a_dir).then_with(|| {
        if a_plain && b_plain {
            a_name.cmp(b_name)
        } else {
            walk::path_order(a_name, b_name)
        }
    })
}

/// An entry among the first a budgeted listing can show, with its own name.
struct Ranked {
    name: Box<str>,
    is_dir: bool,
    plain: bool,
    size: Option<u64>,
}

impl Ranked {
    fn key(&self) -> (bool, bool, &str) {
        (self.is_dir, self.plain, &self.name)
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        listing_order(self.key(), other.key())
    }
}

/// What a listing keeps of the entries it reads: every one where no budget
/// cuts the answer; with one, only the first that can fit, in listing order
/// (`text::first`). Memory is then bounded by the answer, not by the
/// directory.
enum Kept {
    All {
        names: String,
        entries: Vec<Entry>,
    },
    First {
        first: FirstN<Ranked>,
        /// Its entries in order, once reading is done.
        sorted: Vec<Ranked>,
    },
}

impl Kept {
    fn new(limit: Option<usize>) -> Kept {
        match limit {
            // Each entry shown takes two characters at least (a name and
            // its line break).
            Some(limit) => Kept::First {
                first: FirstN::new(limit / 2 + 1),
                sorted: Vec::new(),
            },
            None => Kept::All {
                names: String::new(),
                entries: Vec::new(),
            },
        }
    }

    fn add(&mut self, shown: &str, is_dir: bool, size: Option<u64>) {
        let plain = shown.is_ascii() && !shown.bytes().any(|b| b.is_ascii_uppercase());
        match self {
            Kept::All { names, entries } => {
                let start = names.len();
                names.push_str(shown);
                entries.push(Entry {
                    start,
                    end: names.len(),
                    is_dir,
                    plain,
                    size,
                });
            }
            Kept::First { first, .. } => {
                if first.may_keep(|bar| listing_order((is_dir, plain, shown), bar.key())) {
                    first.push(Ranked {
                        name: shown.into(),
                        is_dir,
                        plain,
                        size,
                    });
                }
            }
        }
    }

    /// The kept entries in listing order: name, whether a directory, size.
    fn in_order(&mut self) -> Vec<(&str, bool, Option<u64>)> {
        match self {
            Kept::All { names, entries } => {
                let name_of = |e: &Entry| &names[e.start..e.end];
                entries.sort_unstable_by(|a, b| {
                    listing_order(
                        (a.is_dir, a.plain, name_of(a)),
                        (b.is_dir, b.plain, name_of(b)),
                    )
                });
                entries
                    .iter()
                    .map(|e| (&names[e.start..e.end], e.is_dir, e.size))
                    .collect()
            }
            Kept::First { first, sorted } => {
                *sorted = std::mem::replace(first, FirstN::new(1)).into_sorted();
                sorted
                    .iter()
                    .map(|r| (&*r.name, r.is_dir, r.size))
                    .collect()
            }
        }
    }
}

fn list(
    state: &Arc<State>,
    dir: &Resolved,
    abs: &str,
    name_filter: &GlobSet,
    options: WalkOptions,
) -> ToolResult {
    let guard = &state.guard;
    let respect_git = options.respect_git_ignore;
    let sizes = state.config.dialect.is_current();
    let (rules, dir_rules) = walk::dir_rules(guard, dir.real(), &options);
    let mut reader = guard
        .read_dir(dir)
        .map_err(|e| ToolError(format!("Error listing directory: {abs}: {e}")))?;
    let budget = state.config.answer_budget;
    let mut kept = Kept::new(budget.limit());
    let mut count = 0usize;
    let mut seen_any = false;
    // One buffer for every entry's full path (no allocation per entry).
    let mut probe = dir.real().to_path_buf();
    let mut ignored = 0usize;
    let mut escaped = Escaped::default();
    while let Some(item) = reader.next() {
        let item = item.map_err(|e| ToolError(format!("Error listing directory: {abs}: {e}")))?;
        seen_any = true;
        let name = item.name.as_os_str();
        let Some(is_dir) = entry_is_dir(guard, dir, name, item.kind) else {
            continue; // a link leaving the roots, or dangling
        };
        // Ignore files first (what they hide is counted, as Gemini CLI
        // counts it), then the caller's `ignore` names (not counted).
        let hidden_git = respect_git && name == ".git";
        probe.push(name);
        let hidden_rules = rules.is_ignored(&dir_rules, &probe, is_dir);
        probe.pop();
        if hidden_git || hidden_rules {
            ignored += 1;
            continue;
        }
        if !name_filter.is_empty() && name_filter.is_match(Path::new(name)) {
            continue;
        }
        // gemini-current shows each file's size (a link's: its target's).
        let size = (sizes && !is_dir)
            .then(|| entry_size(guard, &reader, dir, name))
            .flatten();
        let (shown, shown_escaped) = escape_name(name.as_encoded_bytes());
        escaped.add(shown_escaped);
        count += 1;
        kept.add(&shown, is_dir, size);
    }
    if !seen_any {
        return super::text(format!("Directory {abs} is empty."));
    }
    let entries = kept.in_order();
    // The notes after the entries, known before the entries are written.
    let mut tail = String::new();
    if ignored > 0 {
        tail.push_str(&format!("\n\n({ignored} ignored)"));
    }
    if let Some(note) = escaped.note() {
        tail.push_str("\n\n");
        tail.push_str(&note);
    }
    // The header, then one entry per line (none at all: an empty line),
    // written straight into the answer, sized up front, as many as fit the
    // answer budget.
    let head = format!("Directory listing for {abs}:\n");
    let room = budget.limit().map(|limit| {
        let widest_note = client_len(&entries_left_out(count, limit));
        limit.saturating_sub(client_len(&head) + client_len(&tail) + widest_note + 1)
    });
    let shown_bytes: usize = entries.iter().map(|(name, _, _)| name.len() + 8).sum();
    let mut out = String::with_capacity(
        abs.len() + 64 + budget.limit().map_or(shown_bytes, |l| l.min(shown_bytes)),
    );
    out.push_str(&head);
    let mut used = 0;
    let mut entry = String::new();
    let mut shown = 0;
    for (i, (name, is_dir, size)) in entries.iter().enumerate() {
        entry.clear();
        if *is_dir {
            entry.push_str("[DIR] ");
        }
        entry.push_str(name);
        if let Some(size) = size {
            entry.push_str(&format!(" ({size} bytes)"));
        }
        used += client_len(&entry) + 1;
        if let Some(room) = room
            && i > 0
            && used > room
        {
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&entry);
        shown += 1;
    }
    // Kept entries run out only past the budget (each takes two characters
    // at least), but whatever is not shown is said.
    if shown < count {
        out.push('\n');
        out.push_str(&entries_left_out(count - shown, budget.limit_or(0)));
    }
    out.push_str(&tail);
    super::text(out)
}

/// The size of a file entry (for a symlink, of its target inside the
/// roots), asked of the handle the listing came from, never by path.
fn entry_size(guard: &Guard, reader: &DirEntries, dir: &Resolved, name: &OsStr) -> Option<u64> {
    match reader.stat_entry(name)? {
        (EntryKind::Symlink, _) => guard
            .resolve_absolute(&dir.real().join(name))
            .ok()?
            .metadata()
            .map(|m| m.len()),
        (EntryKind::Directory, _) => None,
        (EntryKind::File | EntryKind::Special, len) => Some(len),
    }
}

/// Whether an entry is a directory; for a symlink, whether its target is,
/// and None if the link leaves the roots or dangles.
fn entry_is_dir(guard: &Guard, dir: &Resolved, name: &OsStr, kind: EntryKind) -> Option<bool> {
    match kind {
        EntryKind::Directory => Some(true),
        EntryKind::Symlink => {
            let resolved = guard.resolve_absolute(&dir.real().join(name)).ok()?;
            resolved.metadata().map(|m| m.is_dir())
        }
        EntryKind::File | EntryKind::Special => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names in every case the order tells apart: upper case, non-ASCII,
    /// digits, dots, directories and files.
    fn names() -> Vec<(String, bool)> {
        let mut state = 0x2545_f491_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let parts = ["a", "B", "é", "1", ".", "z", "Z", "_", "ü", "10"];
        (0..3000)
            .map(|_| {
                let len = 1 + next() as usize % 5;
                let name: String = (0..len)
                    .map(|_| parts[next() as usize % parts.len()])
                    .collect();
                (name, next() % 4 == 0)
            })
            .collect()
    }

    #[test]
    fn a_budgeted_listing_keeps_the_first_entries_a_whole_one_would_show() {
        let all_names = names();
        let mut whole = Kept::new(None);
        for (name, is_dir) in &all_names {
            whole.add(name, *is_dir, None);
        }
        let whole: Vec<(String, bool)> = whole
            .in_order()
            .into_iter()
            .map(|(n, d, _)| (n.to_string(), d))
            .collect();
        for limit in [0, 1, 7, 100, 2000, 10_000] {
            let mut first = Kept::new(Some(limit));
            for (name, is_dir) in &all_names {
                first.add(name, *is_dir, None);
            }
            let first: Vec<(String, bool)> = first
                .in_order()
                .into_iter()
                .map(|(n, d, _)| (n.to_string(), d))
                .collect();
            assert_eq!(first.len(), (limit / 2 + 1).min(whole.len()), "{limit}");
            assert_eq!(first[..], whole[..first.len()], "{limit}");
        }
    }
}

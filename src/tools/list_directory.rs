//! `list_directory` (TOOLS.md 4): the immediate children of one directory,
//! directories first, with the number of entries ignore files hid.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallContext, State, ToolError, ToolResult, ToolSpec, parse_args, run_sized};
use crate::discovery::walk::{self, WalkOptions};
use crate::fs::guard::{EntryKind, Guard, Resolved, entry_metadata};
use crate::mcp::params::{Alias, JsonObject, portable_schema};

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

/// Accepted but unpublished.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Hidden {
    /// Whether to hide entries the root's .geminiignore ignores. Default true.
    pub respect_gemini_ignore: Option<bool>,
}

/// Gemini CLI's nested spellings of the ignore switches (shared by the
/// discovery tools).
pub const FILE_FILTERING_ALIASES: [Alias; 2] = [
    Alias {
        from: "file_filtering_options.respect_git_ignore",
        to: "respect_git_ignore",
    },
    Alias {
        from: "file_filtering_options.respect_gemini_ignore",
        to: "respect_gemini_ignore",
    },
];

/// list_directory's and glob's aliases.
pub const FILTER_ALIASES: &[Alias] = &[
    Alias {
        from: "dir_path",
        to: "path",
    },
    FILE_FILTERING_ALIASES[0],
    FILE_FILTERING_ALIASES[1],
];

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "list_directory",
        title: "List Directory",
        description: "Lists the files and subdirectories directly inside a directory of the \
            workspace, directories first, each marked [DIR]. Entries hidden by .gitignore or \
            .geminiignore are left out and counted; use 'ignore' to leave out more by name.",
        read_only: true,
        destructive: false,
        idempotent: true,
        schema: portable_schema::<ListDirectoryParams>(),
        hidden_schema: Some(portable_schema::<Hidden>()),
        aliases: FILTER_ALIASES,
        handler: |ctx, args| Box::pin(run(ctx, args)),
    }
}

fn outside(_path: &Path, dirs: &str) -> String {
    format!("Path must be within one of the workspace directories: {dirs}")
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ListDirectoryParams = parse_args(&args)?;
    let hidden: Hidden = parse_args(&args)?;
    let name_filter = name_globs(params.ignore.as_deref().unwrap_or_default())?;
    let state = ctx.state.clone();
    let guard = &state.guard;
    let resolved = guard
        .resolve(&params.path)
        .map_err(|r| super::refusal_message(guard, r, outside))?;
    let abs = resolved.display().display().to_string();
    let Some(meta) = resolved.metadata() else {
        return Err(format!("Error listing directory: {abs} does not exist.").into());
    };
    if !meta.is_dir() {
        return Err(format!("Error: Path is not a directory: {abs}").into());
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

fn name_globs(patterns: &[String]) -> Result<GlobSet, ToolError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError(format!("Invalid pattern in 'ignore': {p}: {e}")))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| ToolError(format!("Invalid 'ignore' patterns: {e}")))
}

struct Entry {
    name: String,
    is_dir: bool,
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
    let (rules, dir_rules) = walk::dir_rules(guard, dir.real(), &options);
    let reader = guard
        .read_dir(dir)
        .map_err(|e| ToolError(format!("Error listing directory: {abs}: {e}")))?;
    let mut entries = Vec::new();
    let mut seen_any = false;
    // One buffer for every entry's full path (no allocation per entry).
    let mut probe = dir.real().to_path_buf();
    let mut ignored = 0usize;
    for item in reader {
        let item = item.map_err(|e| ToolError(format!("Error listing directory: {abs}: {e}")))?;
        seen_any = true;
        let Some(name) = item.name.to_str() else {
            continue;
        };
        if !name_filter.is_empty() && name_filter.is_match(name) {
            continue;
        }
        let Some(is_dir) = entry_is_dir(guard, dir, name, item.kind) else {
            continue; // a link leaving the roots, or dangling
        };
        let hidden_git = respect_git && name == ".git";
        probe.push(name);
        let hidden_rules = rules.is_ignored(&dir_rules, &probe, is_dir);
        probe.pop();
        if hidden_git || hidden_rules {
            ignored += 1;
            continue;
        }
        entries.push(Entry {
            name: name.to_string(),
            is_dir,
        });
    }
    if !seen_any {
        return super::text(format!("Directory {abs} is empty."));
    }
    let (mut dirs, mut files): (Vec<Entry>, Vec<Entry>) =
        entries.into_iter().partition(|e| e.is_dir);
    walk::sort_by_path(&mut dirs, |e| &e.name);
    walk::sort_by_path(&mut files, |e| &e.name);
    let mut out = String::with_capacity(64 + (dirs.len() + files.len()) * 24);
    out.push_str(&format!("Directory listing for {abs}:"));
    for d in &dirs {
        out.push_str("\n[DIR] ");
        out.push_str(&d.name);
    }
    for f in &files {
        out.push('\n');
        out.push_str(&f.name);
    }
    if ignored > 0 {
        out.push_str(&format!("\n\n({ignored} ignored)"));
    }
    super::text(out)
}

/// Whether an entry is a directory; for a symlink, whether its target is,
/// and None if the link leaves the roots or dangles.
fn entry_is_dir(guard: &Guard, dir: &Resolved, name: &str, kind: EntryKind) -> Option<bool> {
    match kind {
        EntryKind::Directory => Some(true),
        EntryKind::Symlink => {
            let resolved = guard
                .resolve_absolute(&dir.real().join(OsStr::new(name)))
                .ok()?;
            resolved.metadata().map(|m| m.is_dir())
        }
        EntryKind::Unknown => {
            let meta = entry_metadata(&dir.real().join(name))?;
            if meta.file_type().is_symlink() {
                entry_is_dir(guard, dir, name, EntryKind::Symlink)
            } else {
                Some(meta.is_dir())
            }
        }
        EntryKind::File | EntryKind::Special => Some(false),
    }
}

//! The ignore-aware walker shared by glob, search_file_content,
//! read_many_files and list_directory.
//!
//! Built on the `ignore` crate (ripgrep's walker), configured for Gemini
//! CLI's semantics: hidden files are included; `.gitignore` files (and
//! `.git/info/exclude`) apply inside git work trees when respected, the
//! global gitignore never does; `.geminiignore` at the workspace root applies
//! unless turned off; the default excludes (`node_modules`, `.git`, ...) are
//! never walked. Directory symlinks are not followed, and a file symlink is
//! reported only if its target is a file inside the roots.
//!
//! Two walks are offered: [`Walk::files`] prunes ignored directories (the
//! fast path, used to find things), and [`Walk::classified`] also walks
//! ignored subtrees and reports their files as ignored (used where the
//! number of ignored files must be told). The parallel walker reads each
//! directory completely and closes it before descending, so open file
//! descriptors stay at about one per thread, whatever the tree's size.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ignore::{DirEntry, IncrementalIgnore, WalkBuilder, WalkState};

use crate::guard::Guard;
use crate::ignore_rules::GEMINI_IGNORE;

/// Directories no walk enters.
pub const DEFAULT_EXCLUDED_DIRS: &[&str] =
    &["node_modules", ".git", "bower_components", ".svn", ".hg"];

/// Extra directories and file globs search_file_content skips.
pub const SEARCH_EXCLUDED_DIRS: &[&str] = &[
    ".vscode",
    ".idea",
    "dist",
    "build",
    "coverage",
    "__pycache__",
];
pub const SEARCH_EXCLUDED_EXTENSIONS: &[&str] = &["log", "tmp"];

/// What a walk honours.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    pub respect_git_ignore: bool,
    pub respect_gemini_ignore: bool,
    /// Skip [`DEFAULT_EXCLUDED_DIRS`].
    pub default_excludes: bool,
    /// Further directory names never entered.
    pub excluded_dirs: &'static [&'static str],
    /// File extensions (lower case, no dot) skipped.
    pub excluded_extensions: &'static [&'static str],
    /// 1 = only the direct children of the start directory.
    pub max_depth: Option<usize>,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            respect_git_ignore: true,
            respect_gemini_ignore: true,
            default_excludes: true,
            excluded_dirs: &[],
            excluded_extensions: &[],
            max_depth: None,
        }
    }
}

/// A file found by a walk.
#[derive(Debug)]
pub struct Found<'a> {
    /// The path as walked (below the start directory, links not resolved).
    pub path: &'a Path,
    /// The path relative to the start directory, `/`-separated.
    pub rel: &'a str,
    /// Whether ignore files hide it ([`Walk::classified`] only).
    pub ignored: bool,
    /// The walker's entry, for cheap metadata.
    pub entry: &'a DirEntry,
}

/// One walk over a directory inside the roots.
pub struct Walk<'g> {
    guard: &'g Guard,
    /// Where the walk starts (a real, guard-checked directory).
    start: PathBuf,
    /// The workspace root containing `start`.
    root: PathBuf,
    options: WalkOptions,
    threads: usize,
}

impl<'g> Walk<'g> {
    pub fn new(guard: &'g Guard, start: &Path, options: WalkOptions) -> Walk<'g> {
        let root = guard
            .root_of(start)
            .and_then(|i| guard.roots().nth(i))
            .unwrap_or(start)
            .to_path_buf();
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(12);
        Walk {
            guard,
            start: start.to_path_buf(),
            root,
            options,
            threads,
        }
    }

    /// A builder configured with this walk's ignore semantics. With
    /// `ignore_rules` false, ignore files are not consulted at all.
    fn builder(&self, ignore_rules: bool) -> WalkBuilder {
        let mut b = WalkBuilder::new(&self.start);
        let git = ignore_rules && self.options.respect_git_ignore;
        b.standard_filters(false)
            .hidden(false)
            .parents(git)
            .git_ignore(git)
            .git_exclude(git)
            .git_global(false)
            .ignore(false)
            .require_git(true)
            .follow_links(false)
            .max_depth(self.options.max_depth)
            .threads(self.threads)
            .current_dir(self.root.clone());
        if ignore_rules && self.options.respect_gemini_ignore {
            let file = self.root.join(GEMINI_IGNORE);
            if file.is_file()
                && let Some(e) = b.add_ignore(&file)
            {
                tracing::warn!("{}: {e}", file.display());
            }
        }
        let options = self.options.clone();
        b.filter_entry(move |entry| keep_entry(&options, entry));
        b
    }

    /// Visits every file that is not ignored, in parallel. `visit` returns
    /// false to stop the walk early; `stop` stops it from outside.
    pub fn files<F>(&self, stop: &AtomicBool, visit: F)
    where
        F: Fn(Found<'_>) -> bool + Sync,
    {
        self.run(self.builder(true), None, stop, &visit);
    }

    /// Visits every file, ignored ones too (marked), in parallel.
    pub fn classified<F>(&self, stop: &AtomicBool, visit: F)
    where
        F: Fn(Found<'_>) -> bool + Sync,
    {
        let uses_rules = self.options.respect_git_ignore || self.options.respect_gemini_ignore;
        if !uses_rules {
            return self.run(self.builder(false), None, stop, &visit);
        }
        let matcher = self.builder(true).build_matchers().into_iter().next();
        self.run(self.builder(false), matcher, stop, &visit);
    }

    fn run<F>(
        &self,
        builder: WalkBuilder,
        matcher: Option<IncrementalIgnore>,
        stop: &AtomicBool,
        visit: &F,
    ) where
        F: Fn(Found<'_>) -> bool + Sync,
    {
        let halted = Arc::new(AtomicBool::new(false));
        builder.build_parallel().run(|| {
            let mut matcher = matcher.clone();
            let halted = halted.clone();
            Box::new(move |result| {
                if stop.load(Ordering::Relaxed) || halted.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = result else {
                    return WalkState::Continue;
                };
                let Some(file_type) = entry.file_type() else {
                    return WalkState::Continue;
                };
                let is_link = file_type.is_symlink();
                if !(file_type.is_file() || is_link) {
                    return WalkState::Continue;
                }
                if is_link && !self.link_is_file_inside(entry.path()) {
                    return WalkState::Continue;
                }
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(&self.start) else {
                    return WalkState::Continue;
                };
                let Some(rel) = rel.to_str() else {
                    // Non-UTF-8 names cannot be shown in JSON faithfully.
                    return WalkState::Continue;
                };
                let ignored = match matcher.as_mut() {
                    Some(m) => m.matched(rel, false).is_ignore(),
                    None => false,
                };
                let keep_going = visit(Found {
                    path,
                    rel,
                    ignored,
                    entry: &entry,
                });
                if keep_going {
                    WalkState::Continue
                } else {
                    halted.store(true, Ordering::Relaxed);
                    WalkState::Quit
                }
            })
        });
    }

    /// A symlink counts as a file only if it leads to a file inside the roots.
    fn link_is_file_inside(&self, path: &Path) -> bool {
        self.guard
            .resolve_absolute(path)
            .is_ok_and(|r| r.metadata().is_some_and(|m| m.is_file()))
    }
}

/// The entry filter shared by every walk: default and extra excludes.
fn keep_entry(options: &WalkOptions, entry: &DirEntry) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    let name = entry.file_name();
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    if is_dir {
        let Some(name) = name.to_str() else {
            return true;
        };
        if options.default_excludes && DEFAULT_EXCLUDED_DIRS.contains(&name) {
            return false;
        }
        return !options.excluded_dirs.contains(&name);
    }
    if options.excluded_extensions.is_empty() {
        return true;
    }
    let ext = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    !ext.is_some_and(|e| options.excluded_extensions.contains(&e.as_str()))
}

/// An ignore matcher for single paths under `start` with a walk's rules (for
/// list_directory and explicitly named files).
pub fn path_matcher(
    guard: &Guard,
    start: &Path,
    options: WalkOptions,
) -> Option<IncrementalIgnore> {
    let walk = Walk::new(guard, start, options);
    walk.builder(true).build_matchers().into_iter().next()
}

/// Orders paths as the contract says: by lower-case form, then bytes.
pub fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// Sorts `items` in path order by `key`, computing each lower-case key once.
pub fn sort_by_path<T>(items: &mut Vec<T>, key: impl Fn(&T) -> &str) {
    let mut keyed: Vec<(String, T)> = items
        .drain(..)
        .map(|t| (key(&t).to_lowercase(), t))
        .collect();
    keyed.sort_by(|(la, a), (lb, b)| la.cmp(lb).then_with(|| key(a).cmp(key(b))));
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

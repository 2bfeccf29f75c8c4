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
//! The crate only lists directories: it is told to read no ignore file,
//! because it would open them itself, by name, following symlinks and
//! blocking on a FIFO. The rules are applied here ([`IgnoreSet`], which reads
//! ignore files through the guard), per directory as the walk enters it.
//!
//! Two walks are offered. [`Walk::files`] skips what the rules hide (used to
//! find things). [`Walk::classified`] also sees what they hide: ignored
//! files are reported as such, ignored directories are pruned, remembered,
//! and walked afterwards rules-free to report their files, so their number
//! can be told. Files are opened with [`Guard::open_walked`], never by the
//! path the walk reported: a file swapped for a symlink since the walk
//! looked at it is not followed. Each walker thread keeps its own
//! state ([`Walk::files`] takes a per-thread collector); the parallel walker
//! reads each directory completely and closes it before descending, so open
//! file descriptors stay at about one per thread, whatever the tree's size.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::discovery::ignore_rules::{DirRules, IgnoreSet};
use crate::fs::guard::Guard;

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

/// What a walk does with hidden entries (names starting with '.').
#[derive(Debug, Clone, Default)]
pub enum HiddenEntries {
    /// Walked like any other (glob, list_directory, read_many_files).
    #[default]
    Walk,
    /// Skipped unless the name matches one of these globs (search, as
    /// ripgrep: hidden entries are searched only when asked for by name).
    SkipUnless(globset::GlobSet),
}

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
    pub hidden: HiddenEntries,
    /// Report a file symlink (whose target is a file inside the roots);
    /// false: leave every symlink out, as ripgrep does.
    pub file_links: bool,
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
            hidden: HiddenEntries::Walk,
            file_links: true,
        }
    }
}

impl WalkOptions {
    fn uses_rules(&self) -> bool {
        self.respect_git_ignore || self.respect_gemini_ignore
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

/// Each thread's collector is handed back here when the thread finishes.
struct PerThread<'a, C> {
    state: Option<C>,
    done: &'a Mutex<Vec<C>>,
}

impl<C> Drop for PerThread<'_, C> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.done
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(state);
        }
    }
}

impl<'g> Walk<'g> {
    pub fn new(guard: &'g Guard, start: &Path, options: WalkOptions) -> Walk<'g> {
        let root = guard.containing_root(start).unwrap_or(start).to_path_buf();
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

    /// A builder with this walk's settings. The crate reads no ignore file
    /// (see the module's comment); it only lists directories.
    fn builder(&self, start: &Path) -> WalkBuilder {
        let mut b = WalkBuilder::new(start);
        b.standard_filters(false)
            .hidden(false)
            .parents(false)
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .ignore(false)
            .follow_links(false)
            .max_depth(self.options.max_depth)
            .threads(self.threads)
            .current_dir(self.root.clone());
        let options = self.options.clone();
        b.filter_entry(move |entry| keep_entry(&options, entry));
        b
    }

    /// Visits every file that is not ignored, in parallel. Each thread gets
    /// its own collector from `make`; `visit` returns false to stop the walk
    /// early, and `stop` stops it from outside. Returns the collectors.
    pub fn files<C, M, F>(&self, stop: &AtomicBool, make: M, visit: F) -> Vec<C>
    where
        C: Send,
        M: Fn() -> C + Sync,
        F: Fn(&mut C, Found<'_>) -> bool + Sync,
    {
        let done = Mutex::new(Vec::new());
        if !self.options.uses_rules() {
            self.run(self.builder(&self.start), None, stop, &make, &visit, &done);
            return done.into_inner().unwrap_or_else(|p| p.into_inner());
        }
        let set = self.ignore_set();
        let classify = Classify::new(&set, &self.start, false);
        self.run(
            self.builder(&self.start),
            Some(&classify),
            stop,
            &make,
            &visit,
            &done,
        );
        done.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    fn ignore_set(&self) -> IgnoreSet<'g> {
        IgnoreSet::new(
            self.guard,
            &self.root,
            self.options.respect_git_ignore,
            self.options.respect_gemini_ignore,
        )
    }

    /// Like [`Walk::files`], but also visits the files ignore files hide,
    /// marked `ignored`.
    pub fn classified<C, M, F>(&self, stop: &AtomicBool, make: M, visit: F) -> Vec<C>
    where
        C: Send,
        M: Fn() -> C + Sync,
        F: Fn(&mut C, Found<'_>) -> bool + Sync,
    {
        if !self.options.uses_rules() {
            return self.files(stop, make, visit);
        }
        let set = self.ignore_set();
        let classify = Classify::new(&set, &self.start, true);
        let done = Mutex::new(Vec::new());
        self.run(
            self.builder(&self.start),
            Some(&classify),
            stop,
            &make,
            &visit,
            &done,
        );
        // The subtrees the rules hid: every file in them is ignored.
        let pruned = classify
            .pruned
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        if let Some((first, rest)) = pruned.split_first() {
            let mut builder = self.builder(first);
            for dir in rest {
                builder.add(dir);
            }
            let all_ignored = |state: &mut C, mut found: Found<'_>| {
                found.ignored = true;
                visit(state, found)
            };
            self.run(builder, None, stop, &make, &all_ignored, &done);
        }
        done.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    fn run<C, M, F>(
        &self,
        builder: WalkBuilder,
        classify: Option<&Classify<'_>>,
        stop: &AtomicBool,
        make: &M,
        visit: &F,
        done: &Mutex<Vec<C>>,
    ) where
        C: Send,
        M: Fn() -> C + Sync,
        F: Fn(&mut C, Found<'_>) -> bool + Sync,
    {
        let halted = AtomicBool::new(false);
        let mut start = self.start.as_os_str().as_encoded_bytes().to_vec();
        if !start.ends_with(b"/") {
            start.push(b'/');
        }
        let start = start.as_slice();
        builder.build_parallel().run(|| {
            let halted = &halted;
            let mut local = PerThread {
                state: Some(make()),
                done,
            };
            // A thread gets a directory's entries one after another: the
            // rules of the last parent are nearly always the next one's.
            let mut last_rules: Option<(PathBuf, Arc<DirRules>)> = None;
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
                let path = entry.path();
                if file_type.is_dir() {
                    if let Some(c) = classify
                        && entry.depth() > 0
                        && !c.enter_dir(path, &mut last_rules)
                    {
                        return WalkState::Skip;
                    }
                    return WalkState::Continue;
                }
                let is_link = file_type.is_symlink();
                if !(file_type.is_file() || is_link) {
                    return WalkState::Continue;
                }
                if is_link && !(self.options.file_links && self.link_is_file_inside(path)) {
                    return WalkState::Continue;
                }
                // The walker builds every path as `start/...`.
                let Some(rel) = path
                    .as_os_str()
                    .as_encoded_bytes()
                    .strip_prefix(start)
                    .and_then(|r| std::str::from_utf8(r).ok())
                else {
                    // Non-UTF-8 names cannot be shown in JSON faithfully.
                    return WalkState::Continue;
                };
                let ignored = classify.is_some_and(|c| c.file_is_ignored(path, &mut last_rules));
                if ignored && !classify.is_some_and(|c| c.report_ignored) {
                    return WalkState::Continue;
                }
                let Some(state) = local.state.as_mut() else {
                    return WalkState::Quit;
                };
                let found = Found {
                    path,
                    rel,
                    ignored,
                    entry: &entry,
                };
                if visit(state, found) {
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

/// Ignore rules per directory, as a walk enters them.
struct Classify<'a> {
    set: &'a IgnoreSet<'a>,
    rules: RwLock<HashMap<PathBuf, Arc<DirRules>>>,
    /// Report ignored files (marked) and remember ignored directories for a
    /// second walk, instead of leaving both out.
    report_ignored: bool,
    /// Ignored directories not entered by the rules-aware walk.
    pruned: Mutex<Vec<PathBuf>>,
}

impl<'a> Classify<'a> {
    fn new(set: &'a IgnoreSet<'a>, start: &Path, report_ignored: bool) -> Classify<'a> {
        let start_rules = Arc::new(set.dir_rules(start));
        Classify {
            set,
            rules: RwLock::new(HashMap::from([(start.to_path_buf(), start_rules)])),
            report_ignored,
            pruned: Mutex::new(Vec::new()),
        }
    }

    /// Decides whether the walk enters `dir`: an ignored directory is
    /// remembered for the second walk and not entered now; otherwise its own
    /// rules are derived from its parent's (entered first, so known).
    fn enter_dir(&self, dir: &Path, last: &mut Option<(PathBuf, Arc<DirRules>)>) -> bool {
        let Some(parent) = dir.parent() else {
            return true;
        };
        let parent_rules = self.cached(parent, last);
        if self.set.is_ignored(&parent_rules, dir, true) {
            if self.report_ignored {
                self.pruned
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(dir.to_path_buf());
            }
            return false;
        }
        let own = Arc::new(self.set.child_rules(&parent_rules, dir));
        self.rules
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(dir.to_path_buf(), own);
        true
    }

    /// The rules of `dir`, from this thread's last one or the shared map.
    fn cached(&self, dir: &Path, last: &mut Option<(PathBuf, Arc<DirRules>)>) -> Arc<DirRules> {
        if let Some((known, rules)) = last
            && known.as_os_str() == dir.as_os_str()
        {
            return rules.clone();
        }
        let found = self
            .rules
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(dir)
            .cloned();
        let rules = found.unwrap_or_else(|| Arc::new(self.set.dir_rules(dir)));
        *last = Some((dir.to_path_buf(), rules.clone()));
        rules
    }

    fn file_is_ignored(&self, path: &Path, last: &mut Option<(PathBuf, Arc<DirRules>)>) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let rules = self.cached(parent, last);
        self.set.is_ignored(&rules, path, false)
    }
}

/// The entry filter shared by every walk: default and extra excludes.
fn keep_entry(options: &WalkOptions, entry: &DirEntry) -> bool {
    if entry.depth() == 0 {
        return true;
    }
    let name = entry.file_name();
    if let HiddenEntries::SkipUnless(named) = &options.hidden
        && name.as_encoded_bytes().starts_with(b".")
        && !named.is_match(name)
    {
        return false;
    }
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

/// The ignore rules for the entries of `dir` (for list_directory and named
/// files), with a walk's options.
pub fn dir_rules<'g>(
    guard: &'g Guard,
    dir: &Path,
    options: &WalkOptions,
) -> (IgnoreSet<'g>, DirRules) {
    let root = guard.containing_root(dir).unwrap_or(dir);
    let set = IgnoreSet::new(
        guard,
        root,
        options.respect_git_ignore,
        options.respect_gemini_ignore,
    );
    let rules = set.dir_rules(dir);
    (set, rules)
}

/// Orders paths as the contract says: by lower-case form, then bytes.
pub fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// Sorts `items` in path order by `key`, computing each lower-case key once;
/// a key without upper-case letters (the common case) is borrowed, not copied.
pub fn sort_by_path<T>(items: &mut Vec<T>, key: impl Fn(&T) -> &str) {
    let lower = |s: &str| -> Option<String> {
        if s.is_ascii() {
            s.bytes()
                .any(|b| b.is_ascii_uppercase())
                .then(|| s.to_ascii_lowercase())
        } else {
            let l = s.to_lowercase();
            (l != s).then_some(l)
        }
    };
    let mut keyed: Vec<(Option<String>, T)> =
        items.drain(..).map(|t| (lower(key(&t)), t)).collect();
    keyed.sort_unstable_by(|(la, a), (lb, b)| {
        let ka = la.as_deref().unwrap_or_else(|| key(a));
        let kb = lb.as_deref().unwrap_or_else(|| key(b));
        ka.cmp(kb).then_with(|| key(a).cmp(key(b)))
    });
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_order_is_case_insensitive_with_byte_ties() {
        let mut names = vec!["b", "B", "a", "Ä", "ä", "C", "é", "E"];
        sort_by_path(&mut names, |s| s);
        assert_eq!(names, vec!["a", "B", "b", "C", "E", "Ä", "ä", "é"]);
        let mut sorted = names.clone();
        sorted.sort_by(|a, b| path_order(a, b));
        assert_eq!(sorted, names);
    }
}

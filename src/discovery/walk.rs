//! The walker shared by glob, search_file_content and read_many_files.
//!
//! Configured for Gemini CLI's semantics: hidden files are included;
//! `.gitignore` files (and `.git/info/exclude`) apply inside git work trees
//! when respected, the global gitignore never does; `.geminiignore` at the
//! workspace root applies unless turned off; the default excludes
//! (`node_modules`, `.git`, ...) are never walked. Directory symlinks are not
//! followed, and a file symlink is reported only if its target is a file
//! inside the roots.
//!
//! Every directory is listed through the guard ([`Guard::list_walked_dir`]):
//! opened beneath its root with no symlink followed, so a directory swapped
//! for a symlink during the walk is not listed, and nothing outside the
//! roots is ever named. The listing also says whether a directory holds
//! `.git` or `.gitignore` (most hold neither), so ignore rules cost no probe
//! per directory, and a `.gitignore` is read through the directory's own
//! handle, never blocking on a FIFO. Files are opened later with
//! [`Guard::open_walked`], never by the path the walk reported.
//!
//! Two walks are offered. [`Walk::files`] skips what the rules hide (used to
//! find things). [`Walk::classified`] also reports it, marked, so that what
//! the rules hid can be counted: ignored directories are still walked, with
//! everything in them marked ignored.
//!
//! Directories are listed by a few threads sharing one stack of directories
//! to list; each thread keeps its own collector, and holds one directory
//! handle at a time, whatever the tree's size. Results come in no particular
//! order: callers sort them ([`sort_by_path`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::SystemTime;

use crate::discovery::ignore_rules::{DirRules, IgnoreSet};
use crate::fs::guard::{EntryKind, Guard, Listing, OpenedFile};
use crate::text::names::{Escaped, escape_name};

/// What an answer says when its walk met directories nested too deeply.
pub const TOO_DEEP_NOTE: &str = "(Some directories are nested so deeply that their path is \
    longer than the system can open; nothing below them was looked at.)";

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
pub struct Found<'a> {
    /// The path as walked (below the start directory, links not resolved).
    pub path: &'a Path,
    /// The path relative to the start directory, `/`-separated, as a
    /// listing shows it: control characters and bytes that are not UTF-8
    /// escaped ([`escape_name`]).
    pub rel: &'a str,
    /// What showing `rel` escaped.
    pub escaped: Escaped,
    /// Whether ignore files hide it: known already in [`Walk::files`]
    /// (which skips those), asked only if the visitor wants to know in
    /// [`Walk::classified`] (glob asks only of the files its pattern matches).
    ignored: Ignored<'a>,
    /// A symlink (to a file inside the roots), not a file.
    pub is_symlink: bool,
    /// The directory it was listed in, and its name there.
    listing: &'a Listing,
    name: &'a OsStr,
}

/// Whether a found file is ignored: known, or how to ask.
#[derive(Clone, Copy)]
enum Ignored<'a> {
    Known(bool),
    Ask(&'a dyn Fn(&Path, bool) -> bool),
}

impl Found<'_> {
    /// Whether ignore files hide it (never in [`Walk::files`]).
    pub fn is_ignored(&self) -> bool {
        match self.ignored {
            Ignored::Known(ignored) => ignored,
            Ignored::Ask(ask) => ask(self.path, false),
        }
    }

    /// Opens the file for reading: a plain file relative to the handle of
    /// the directory it was listed in (opened beneath its root, no symlink
    /// followed; the name itself is opened with `O_NOFOLLOW`), a file
    /// symlink through the guard, its target resolved again.
    pub fn open(&self, guard: &Guard) -> std::io::Result<OpenedFile> {
        if self.is_symlink {
            return guard.open_walked(self.path);
        }
        self.listing.open_file(self.name)
    }

    /// When the file was last modified; a symlink's target's time, asked of
    /// the guard.
    pub fn modified(&self, guard: &Guard) -> Option<SystemTime> {
        if self.is_symlink {
            let target = guard.resolve_absolute(self.path).ok()?;
            return target.metadata()?.modified().ok();
        }
        self.listing.modified(self.name)
    }
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
    /// Directories not listed because their path is longer than the
    /// system can open (PATH_MAX).
    too_deep: AtomicUsize,
}

/// Directories this shallow are listed through their parent's handle (one
/// lookup instead of the whole path); deeper ones by their path from the
/// root, so a deep tree never holds more than this many handles per thread.
const PARENT_HANDLE_DEPTH: usize = 32;

/// A directory waiting to be listed.
struct Job {
    path: PathBuf,
    /// The listing of its parent, when it is listed through its handle.
    parent: Option<Arc<Listing>>,
    /// The rest of a big directory another thread started: its next batch
    /// is read from this listing (`rules` are the directory's own).
    rest: Option<Listing>,
    /// 0 for the start directory.
    depth: usize,
    rules: JobRules,
}

/// Which ignore rules apply to a directory's entries.
enum JobRules {
    /// None: the walk does not apply ignore rules.
    Off,
    /// Everything in it is ignored (a directory the rules hide, walked
    /// only to count what it holds).
    AllIgnored,
    /// Known already (the start directory).
    Known(Arc<DirRules>),
    /// Derived from the parent's once the directory is listed.
    FromParent(Arc<DirRules>),
}

/// The directories still to list, shared by the walk's threads.
struct Stack {
    jobs: Mutex<Pending>,
    changed: Condvar,
}

struct Pending {
    jobs: Vec<Job>,
    /// Threads listing a directory now (which may add more jobs).
    busy: usize,
    /// Threads waiting for a job (only they need waking).
    idle: usize,
}

impl Stack {
    /// The next directory to list, waiting while other threads may still
    /// add some; None when the walk is over (or stopped).
    fn next(&self, stop: impl Fn() -> bool) -> Option<Job> {
        let mut pending = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if stop() {
                pending.jobs.clear();
            }
            if let Some(job) = pending.jobs.pop() {
                pending.busy += 1;
                return Some(job);
            }
            if pending.busy == 0 {
                self.changed.notify_all();
                return None;
            }
            pending.idle += 1;
            pending = self
                .changed
                .wait(pending)
                .unwrap_or_else(|p| p.into_inner());
            pending.idle -= 1;
        }
    }

    /// Directories found to list, offered to every thread at once.
    fn push(&self, found: Vec<Job>) {
        if found.is_empty() {
            return;
        }
        let mut pending = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        pending.jobs.extend(found);
        if pending.idle > 0 {
            self.changed.notify_all();
        }
    }

    /// A listing is done.
    fn done(&self) {
        let mut pending = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        pending.busy -= 1;
        if pending.busy == 0 && pending.jobs.is_empty() && pending.idle > 0 {
            self.changed.notify_all();
        }
    }
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
            too_deep: AtomicUsize::new(0),
        }
    }

    /// Whether the walk met directories nested too deeply to open: what is
    /// below them was not walked, and the answer must say so
    /// ([`TOO_DEEP_NOTE`]).
    pub fn stopped_too_deep(&self) -> bool {
        self.too_deep.load(Ordering::Relaxed) > 0
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
        self.run(false, stop, &make, &visit)
    }

    /// Like [`Walk::files`], but also visits the files ignore files hide,
    /// marked `ignored`.
    pub fn classified<C, M, F>(&self, stop: &AtomicBool, make: M, visit: F) -> Vec<C>
    where
        C: Send,
        M: Fn() -> C + Sync,
        F: Fn(&mut C, Found<'_>) -> bool + Sync,
    {
        self.run(true, stop, &make, &visit)
    }

    fn run<C, M, F>(&self, report_ignored: bool, stop: &AtomicBool, make: &M, visit: &F) -> Vec<C>
    where
        C: Send,
        M: Fn() -> C + Sync,
        F: Fn(&mut C, Found<'_>) -> bool + Sync,
    {
        let set = self.options.uses_rules().then(|| {
            IgnoreSet::new(
                self.guard,
                &self.root,
                self.options.respect_git_ignore,
                self.options.respect_gemini_ignore,
            )
        });
        let rules = match &set {
            Some(set) => JobRules::Known(Arc::new(set.dir_rules(&self.start))),
            None => JobRules::Off,
        };
        let stack = Stack {
            jobs: Mutex::new(Pending {
                jobs: vec![Job {
                    path: self.start.clone(),
                    parent: None,
                    rest: None,
                    depth: 0,
                    rules,
                }],
                busy: 0,
                idle: 0,
            }),
            changed: Condvar::new(),
        };
        let halted = AtomicBool::new(false);
        let done = Mutex::new(Vec::new());
        let lister = Lister {
            walk: self,
            set: set.as_ref(),
            report_ignored,
            stop,
            halted: &halted,
        };
        let work = || {
            let mut local = PerThread {
                state: Some(make()),
                done: &done,
            };
            while let Some(job) = stack.next(|| lister.stopped()) {
                if let Some(state) = local.state.as_mut() {
                    lister.list(job, &stack, state, visit);
                }
                stack.done();
            }
        };
        if self.threads <= 1 {
            work();
        } else {
            std::thread::scope(|scope| {
                for _ in 1..self.threads {
                    scope.spawn(work);
                }
                work();
            });
        }
        done.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// A symlink counts as a file only if it leads to a file inside the roots.
    fn link_is_file_inside(&self, path: &Path) -> bool {
        self.guard
            .resolve_absolute(path)
            .is_ok_and(|r| r.metadata().is_some_and(|m| m.is_file()))
    }
}

/// What every thread of one walk shares to list directories.
struct Lister<'w, 'g> {
    walk: &'w Walk<'g>,
    set: Option<&'w IgnoreSet<'g>>,
    report_ignored: bool,
    stop: &'w AtomicBool,
    /// A visitor asked to stop.
    halted: &'w AtomicBool,
}

impl Lister<'_, '_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.halted.load(Ordering::Relaxed)
    }

    /// Lists one directory: first offers its subdirectories to the other
    /// threads (so they need not wait while this one works through the
    /// files), then visits its files.
    fn list<C, F>(&self, job: Job, stack: &Stack, state: &mut C, visit: &F)
    where
        F: Fn(&mut C, Found<'_>) -> bool,
    {
        let walk = self.walk;
        let listed = match (job.rest, &job.parent) {
            (Some(mut rest), _) => rest.next_batch().map(|_| rest),
            (None, Some(parent)) => job.path.file_name().map_or_else(
                || walk.guard.list_walked_dir(&job.path),
                |name| parent.list_child(name),
            ),
            (None, None) => walk.guard.list_walked_dir(&job.path),
        };
        drop(job.parent);
        let listing = match listed {
            Ok(listing) => listing,
            Err(e) => {
                if e.raw_os_error() == Some(rustix::io::Errno::NAMETOOLONG.raw_os_error()) {
                    walk.too_deep.fetch_add(1, Ordering::Relaxed);
                }
                // Other errors (a directory we may not read, one removed or
                // swapped for a symlink meanwhile) skip just that directory,
                // as ripgrep does.
                return;
            }
        };
        let (rules, all_ignored) = match job.rules {
            JobRules::Off => (None, false),
            JobRules::AllIgnored => (None, true),
            JobRules::Known(rules) => (Some(rules), false),
            JobRules::FromParent(parent) => {
                let own = self
                    .set
                    .map(|set| set.child_rules_listed(&parent, &job.path, &listing));
                (own, false)
            }
        };
        let is_ignored = |path: &Path, is_dir: bool| {
            all_ignored
                || rules
                    .as_ref()
                    .zip(self.set)
                    .is_some_and(|(rules, set)| set.is_ignored(rules, path, is_dir))
        };
        let start = walk.start.as_os_str().as_encoded_bytes();
        let child_depth = job.depth + 1;
        let descend = walk.options.max_depth.is_none_or(|max| child_depth < max);
        // A directory listed in batches: the rest goes to another thread
        // (this one walks the current batch); if that cannot be arranged,
        // this thread walks every batch, and its listing is not shared (its
        // handle reads the next batch).
        let mut listing = listing;
        if let Ok(Some(rest)) = listing.split_rest() {
            let rules = match (&rules, all_ignored) {
                (_, true) => JobRules::AllIgnored,
                (Some(rules), false) => JobRules::Known(rules.clone()),
                (None, false) => JobRules::Off,
            };
            stack.push(vec![Job {
                path: job.path.clone(),
                parent: None,
                rest: Some(rest),
                depth: job.depth,
                rules,
            }]);
        }
        let complete = listing.is_complete();
        let mut listing = Arc::new(listing);
        let mut path = job.path;
        let dir_len = path.as_os_str().len();
        loop {
            if descend {
                let share =
                    (complete && child_depth <= PARENT_HANDLE_DEPTH).then(|| listing.clone());
                let mut subdirs = Vec::new();
                for (name, _) in listing
                    .entries()
                    .filter(|(_, kind)| *kind == EntryKind::Directory)
                {
                    if !keep_entry(&walk.options, name, true) {
                        continue;
                    }
                    path.push(name);
                    let rules = match (&rules, is_ignored(&path, true)) {
                        (_, true) if !self.report_ignored => None,
                        (_, true) => Some(JobRules::AllIgnored),
                        (Some(rules), false) => Some(JobRules::FromParent(rules.clone())),
                        (None, false) => Some(JobRules::Off),
                    };
                    if let Some(rules) = rules {
                        subdirs.push(Job {
                            path: path.clone(),
                            parent: share.clone(),
                            rest: None,
                            depth: child_depth,
                            rules,
                        });
                    }
                    truncate_path(&mut path, dir_len);
                }
                // Pushed last first, so the walk takes them in about the
                // order answers list paths: glob's and search's first
                // files are then found early, and every later file costs
                // one comparison against them instead of a re-sort.
                if subdirs.len() > 1 {
                    let name = |job: &Job| {
                        let name = job.path.file_name().unwrap_or_default();
                        name.as_encoded_bytes().to_ascii_lowercase()
                    };
                    subdirs.sort_by_cached_key(|job| std::cmp::Reverse(name(job)));
                }
                stack.push(subdirs);
            }
            for (name, kind) in listing.entries() {
                let is_symlink = match kind {
                    EntryKind::File => false,
                    EntryKind::Symlink => true,
                    _ => continue,
                };
                if self.stopped() {
                    return;
                }
                if !keep_entry(&walk.options, name, false) {
                    continue;
                }
                path.push(name);
                let ignored = if self.report_ignored {
                    Ignored::Ask(&is_ignored)
                } else {
                    Ignored::Known(is_ignored(&path, false))
                };
                let wanted = !matches!(ignored, Ignored::Known(true))
                    && (!is_symlink
                        || (walk.options.file_links && walk.link_is_file_inside(&path)));
                if wanted && let Some(rel) = relative_to_start(&path, start) {
                    let (rel, escaped) = escape_name(&rel);
                    let found = Found {
                        path: &path,
                        rel: &rel,
                        escaped,
                        ignored,
                        is_symlink,
                        listing: &listing,
                        name,
                    };
                    if !visit(state, found) {
                        self.halted.store(true, Ordering::Relaxed);
                        return;
                    }
                }
                truncate_path(&mut path, dir_len);
            }
            // The next batch of a big directory (its listing is not shared).
            let Some(unshared) = Arc::get_mut(&mut listing) else {
                return;
            };
            if unshared.is_complete() || !matches!(unshared.next_batch(), Ok(true)) {
                return;
            }
        }
    }
}

/// Cuts `path` back to its first `len` bytes: the directory it was before
/// a name was pushed. On Unix without parsing it again (`PathBuf::pop`
/// does, which costs more per walked file than the rest of the bookkeeping).
fn truncate_path(path: &mut PathBuf, len: usize) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let mut bytes = std::mem::take(path).into_os_string().into_vec();
        bytes.truncate(len);
        *path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
    }
    #[cfg(not(unix))]
    {
        path.pop();
        debug_assert_eq!(path.as_os_str().len(), len);
    }
}

/// The bytes of `path` below `start`, `/`-separated whatever the platform's
/// separator (results and include patterns speak of `src/a.rs`, never
/// `src\a.rs`). Every walked path is built as `start` + separator + names,
/// and no name holds a separator, so replacing them is exact.
fn relative_to_start<'p>(path: &'p Path, start: &[u8]) -> Option<std::borrow::Cow<'p, [u8]>> {
    let rel = path.as_os_str().as_encoded_bytes().strip_prefix(start)?;
    let rel = rel
        .strip_prefix(std::path::MAIN_SEPARATOR_STR.as_bytes())
        .unwrap_or(rel);
    if std::path::MAIN_SEPARATOR == '/' {
        return Some(std::borrow::Cow::Borrowed(rel));
    }
    let separator = std::path::MAIN_SEPARATOR as u8;
    Some(std::borrow::Cow::Owned(
        rel.iter()
            .map(|&b| if b == separator { b'/' } else { b })
            .collect(),
    ))
}

/// The entry filter shared by every walk: default and extra excludes.
fn keep_entry(options: &WalkOptions, name: &OsStr, is_dir: bool) -> bool {
    if let HiddenEntries::SkipUnless(named) = &options.hidden
        && name.as_encoded_bytes().starts_with(b".")
        && !named.is_match(name)
    {
        return false;
    }
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
/// ASCII paths (the common case) are compared without allocating.
pub fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let by_lower = if a.is_ascii() && b.is_ascii() {
        // Paths share long prefixes: skip the equal part a block at a time.
        let (x, y) = (a.as_bytes(), b.as_bytes());
        let n = x.len().min(y.len());
        let mut i = 0;
        while i + 16 <= n && x[i..i + 16] == y[i..i + 16] {
            i += 16;
        }
        x[i..]
            .iter()
            .map(u8::to_ascii_lowercase)
            .cmp(y[i..].iter().map(u8::to_ascii_lowercase))
    } else {
        a.to_lowercase().cmp(&b.to_lowercase())
    };
    by_lower.then_with(|| a.cmp(b))
}

/// The lower-case form `path_order` compares first.
pub fn lower_key(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
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
        let long = |tail: &str| format!("/a/long/shared/prefix/of/many/bytes/{tail}");
        let mut paths = vec![long("b"), long("B"), long("a"), long("Ab"), long("_")];
        paths.sort_by(|a, b| path_order(a, b));
        let lowered = |s: &String| (s.to_lowercase(), s.clone());
        let mut by_definition = paths.clone();
        by_definition.sort_by_key(lowered);
        assert_eq!(paths, by_definition);
    }

    #[test]
    fn relative_paths_are_slash_separated_on_every_platform() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("sub").join("deeper")).unwrap();
        std::fs::write(root.join("sub").join("deeper").join("a.txt"), "").unwrap();
        std::fs::write(root.join("top.txt"), "").unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        let walk = Walk::new(&guard, &root, WalkOptions::default());
        let stop = AtomicBool::new(false);
        let found = walk.classified(&stop, Vec::new, |seen: &mut Vec<String>, f| {
            seen.push(f.rel.to_string());
            true
        });
        let mut rels: Vec<String> = found.into_iter().flatten().collect();
        rels.sort();
        assert_eq!(rels, ["sub/deeper/a.txt", "top.txt"]);
    }

    #[test]
    fn a_directory_bigger_than_a_batch_is_walked_whole_with_its_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        let n = Listing::BATCH * 2 + 100;
        for i in 0..n {
            let ext = if i % 10 == 0 { "log" } else { "txt" };
            std::fs::write(root.join(format!("f{i:06}.{ext}")), "").unwrap();
        }
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "").unwrap();
        std::fs::write(root.join("sub/b.log"), "").unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        let walk = Walk::new(&guard, &root, WalkOptions::default());
        let stop = AtomicBool::new(false);
        let counts = walk.classified(
            &stop,
            || (0usize, 0usize),
            |c, f| {
                if f.is_ignored() {
                    c.1 += 1;
                } else {
                    c.0 += 1;
                }
                true
            },
        );
        let (kept, ignored) = counts
            .into_iter()
            .fold((0, 0), |acc, c| (acc.0 + c.0, acc.1 + c.1));
        // Files at the top: n, a tenth of them .log; plus .gitignore itself,
        // and sub/a.txt, sub/b.log.
        let logs = n.div_ceil(10);
        assert_eq!(ignored, logs + 1);
        assert_eq!(kept, n - logs + 2);
    }
}

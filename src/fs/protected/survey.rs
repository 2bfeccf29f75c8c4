//! The survey of the roots before a writable call and the check after it
//! (Unix: the check renames and writes beneath directory handles).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::{Kind, QUARANTINE_SUFFIX, Unprotected, is_git_dir, list, read_small, settings_reason};
/// What may appear at the top level of a git directory during a call: what
/// git itself writes when it commits, checks out, merges, rebases or
/// fetches. Anything else new there (`commondir`, `config.worktree`, a new
/// `hooks/`) is moved aside.
const GIT_DIR_WRITABLE: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "index",
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_HEAD",
    "BISECT_RUN",
    "COMMIT_EDITMSG",
    "TAG_EDITMSG",
    "SQUASH_MSG",
    "NOTES_MERGE_PARTIAL",
    "NOTES_MERGE_REF",
    "packed-refs",
    "shallow",
    "description",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "rr-cache",
    "gc.pid",
    "gc.log",
    "lfs",
    "fsmonitor--daemon",
    "fsmonitor--daemon.ipc",
];

/// The entries of a git directory that are configuration or run programs.
const GIT_DIR_PROTECTED: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
];

/// Most directories a survey walks; past it a writable call is refused
/// (the check after it could not be done in time).
const MAX_DIRS: usize = 200_000;
/// Deepest directory a survey walks.
const MAX_DEPTH: usize = 256;
/// Copies kept for the check after a call where no mount protects: files,
/// bytes in all, bytes in one file.
const MAX_COPIES: usize = 4096;
const MAX_COPY_BYTES: u64 = 16 << 20;
const MAX_COPY_FILE: u64 = 1 << 20;

/// The paths a git config names as hooks or further configuration, as
/// written (`core.hooksPath`, `include.path`, `includeIf.<cond>.path`).
/// A plain reading of git's syntax: sections, keys, quoted values.
fn config_paths(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else { continue };
            let header = &rest[..end];
            let (name, sub) = match header.split_once(char::is_whitespace) {
                Some((name, sub)) => (name, sub.trim().trim_matches('"')),
                None => (header, ""),
            };
            section = if sub.is_empty() {
                name.to_ascii_lowercase()
            } else {
                format!("{}.{sub}", name.to_ascii_lowercase())
            };
            // `[core] hooksPath = x` on the header's line.
            let after = rest[end + 1..].trim();
            if after.is_empty() {
                continue;
            }
            push_setting(&section, after, &mut found);
            continue;
        }
        push_setting(&section, line, &mut found);
    }
    found
}

fn push_setting(section: &str, line: &str, found: &mut Vec<(String, String)>) {
    let Some((key, value)) = line.split_once('=') else {
        return;
    };
    let key = key.trim().to_ascii_lowercase();
    let value = value
        .split(['#', ';'])
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches('"');
    let wanted = (section == "core" && key == "hookspath")
        || ((section == "include" || section.starts_with("includeif.")) && key == "path");
    if wanted && !value.is_empty() {
        found.push((format!("{section}.{key}"), value.to_string()));
    }
}

fn kind_of(path: &Path) -> Option<Kind> {
    let t = std::fs::symlink_metadata(path).ok()?.file_type();
    Some(if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    })
}

/// A copy of a protected file, kept to put it back.
#[derive(Debug, Clone)]
struct Copy {
    bytes: Vec<u8>,
    mode: u32,
}

/// What protected things exist in the roots at one moment.
#[derive(Debug, Clone, Default)]
pub struct Survey {
    /// The roots surveyed.
    roots: Vec<PathBuf>,
    /// Git directories, each with the names at its top level.
    git_dirs: HashMap<PathBuf, HashSet<OsString>>,
    /// `.git` entries of every type.
    dot_git: HashSet<PathBuf>,
    /// Protected entries: a git directory's config, hooks and the like,
    /// the paths its config names, settings entries.
    protected: HashSet<PathBuf>,
    /// What each protected entry was: one of another type later (hooks
    /// swapped for a link) is set aside and, if it was a directory, made
    /// again.
    kinds: HashMap<PathBuf, Kind>,
    /// Every entry found beneath a protected directory, with a copy of
    /// each regular file where copies were asked for.
    beneath: HashMap<PathBuf, Option<Copy>>,
    copies: bool,
    /// Files whose copy was not kept (over the limits).
    uncopied: usize,
    /// Every directory walked, as listed; the check after a call lists
    /// again only those whose status changed since (their ctime moved).
    listed: HashMap<PathBuf, Arc<Listed>>,
    /// When the walk began.
    began: Option<SystemTime>,
}

/// A directory as a survey listed it: the entries it looks at, and the
/// subdirectories.
#[derive(Debug, Default)]
struct Listed {
    interesting: HashMap<OsString, Kind>,
    subdirs: Vec<OsString>,
}

/// Timestamps of coarse file systems lag behind the clock: a directory
/// whose status changed less than this before a walk began is listed again.
const CTIME_SLACK: Duration = Duration::from_secs(2);

/// Whether `dir`'s entries cannot have changed since `since`: it is still
/// a directory and its status last changed before then. Adding, removing or
/// renaming an entry sets a directory's ctime, and no unprivileged process
/// can set it back.
fn unchanged_since(dir: &Path, since: SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    let Ok(ctime) = u64::try_from(meta.ctime()) else {
        return false;
    };
    let changed = SystemTime::UNIX_EPOCH
        + Duration::from_secs(ctime)
        + Duration::from_nanos(meta.ctime_nsec().max(0) as u64);
    meta.is_dir() && changed + CTIME_SLACK < since
}

/// What the walk found wrong after a call, and what was done about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The entry, as found.
    pub path: PathBuf,
    /// What the call did: "created", "changed", "removed".
    pub did: &'static str,
    /// What rootbound did about it, in words.
    pub action: String,
    /// Why it matters.
    pub why: String,
}

impl Finding {
    /// One line for the answer.
    pub fn describe(&self, shown: impl Fn(&Path) -> String) -> String {
        format!(
            "the command {} {}; {}: {}",
            self.did,
            shown(&self.path),
            self.action,
            self.why
        )
    }
}

impl Survey {
    /// Walks `roots` and lists every protected entry. With `copies`, keeps
    /// a copy of each protected file (for a sandbox without mounts). Err if
    /// the roots are too large to walk before `deadline`.
    /// With `previous` (any earlier survey of the same roots), a directory
    /// whose ctime has not moved since that one began is not listed again.
    pub fn take(
        roots: &[PathBuf],
        unprotected: &Unprotected,
        copies: bool,
        deadline: Instant,
        previous: Option<&Survey>,
    ) -> Result<Survey, String> {
        let previous = previous.filter(|p| p.roots == roots);
        Survey::walk(roots, unprotected, copies, deadline, previous)
    }

    /// The walk of [`Survey::take`]; with `previous`, a directory whose
    /// ctime has not moved since that survey began is not listed again.
    fn walk(
        roots: &[PathBuf],
        unprotected: &Unprotected,
        copies: bool,
        deadline: Instant,
        previous: Option<&Survey>,
    ) -> Result<Survey, String> {
        let mut survey = Survey {
            roots: roots.to_vec(),
            copies,
            began: Some(SystemTime::now()),
            ..Survey::default()
        };
        let mut walked = 0usize;
        let mut stack: Vec<(PathBuf, usize)> = roots.iter().map(|r| (r.clone(), 0)).collect();
        let mut hooks_paths: Vec<PathBuf> = Vec::new();
        while let Some((dir, depth)) = stack.pop() {
            walked += 1;
            if walked > MAX_DIRS {
                return Err(format!(
                    "the roots hold more than {MAX_DIRS} directories, too many to check what \
                     a command leaves behind"
                ));
            }
            if walked.is_multiple_of(256) && Instant::now() > deadline {
                return Err("the roots took too long to check for protected files".into());
            }
            let reused = previous.and_then(|p| {
                let listed = p.listed.get(&dir)?;
                unchanged_since(&dir, p.began?).then(|| listed.clone())
            });
            let listed = match reused {
                Some(listed) => listed,
                None => match scan(&dir) {
                    Ok((interesting, subdirs)) => Arc::new(Listed {
                        interesting,
                        subdirs,
                    }),
                    Err(_) => continue,
                },
            };
            survey.listed.insert(dir.clone(), listed.clone());
            let (entries, subdirs) = (&listed.interesting, &listed.subdirs);
            // A `HEAD` may be rewritten in place, which leaves its
            // directory's ctime alone: asked again on every walk.
            let git_dir = is_git_dir(&dir, entries) && !unprotected.covers(&dir);
            if git_dir {
                let all = list(&dir)
                    .map(|all| all.into_keys().collect())
                    .unwrap_or_default();
                survey.git_dirs.insert(dir.clone(), all);
                for name in GIT_DIR_PROTECTED {
                    if entries.contains_key(OsStr::new(name)) {
                        survey.protected.insert(dir.join(name));
                    }
                }
                if let Some(bytes) = read_small(&dir.join("config"), 1 << 20) {
                    for (_, value) in config_paths(&String::from_utf8_lossy(&bytes)) {
                        hooks_paths.push(config_target(&dir, &value));
                    }
                }
            }
            for (name, kind) in entries {
                let path = dir.join(name);
                if unprotected.covers(&path) {
                    continue;
                }
                if name == ".git" {
                    survey.dot_git.insert(path.clone());
                    if *kind != Kind::Dir {
                        survey.protected.insert(path.clone());
                    }
                }
                if settings_reason(name).is_some() {
                    survey.protected.insert(path.clone());
                }
            }
            for name in subdirs {
                if depth >= MAX_DEPTH {
                    break;
                }
                let path = dir.join(name);
                // In a git directory only what may hold further git
                // directories is walked (submodules, worktrees), never its
                // objects; protected directories are walked for copies.
                let inside = !git_dir
                    || matches!(
                        name.to_str(),
                        Some("modules" | "worktrees" | "hooks" | "info")
                    );
                if inside {
                    stack.push((path, depth + 1));
                }
            }
        }
        for target in hooks_paths {
            if roots.iter().any(|r| target.starts_with(r))
                && !unprotected.covers(&target)
                && std::fs::symlink_metadata(&target).is_ok()
            {
                survey.protected.insert(target);
            }
        }
        survey.kinds = survey
            .protected
            .iter()
            .filter_map(|p| Some((p.clone(), kind_of(p)?)))
            .collect();
        survey.record_beneath();
        Ok(survey)
    }

    /// Lists (and copies, if asked) everything beneath protected directories.
    fn record_beneath(&mut self) {
        let mut bytes = 0u64;
        let mut stack: Vec<(PathBuf, usize)> =
            self.protected.iter().map(|p| (p.clone(), 0)).collect();
        let mut seen = 0usize;
        while let Some((path, depth)) = stack.pop() {
            seen += 1;
            if seen > MAX_DIRS {
                break;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if depth < MAX_DEPTH
                    && let Ok(entries) = std::fs::read_dir(&path)
                {
                    for entry in entries.flatten() {
                        let child = entry.path();
                        self.beneath.entry(child.clone()).or_insert(None);
                        stack.push((child, depth + 1));
                    }
                }
                continue;
            }
            if !self.copies || !meta.is_file() {
                continue;
            }
            use std::os::unix::fs::MetadataExt;
            let copied = (self.beneath.len() < MAX_COPIES
                && meta.len() <= MAX_COPY_FILE
                && bytes + meta.len() <= MAX_COPY_BYTES)
                .then(|| read_small(&path, MAX_COPY_FILE))
                .flatten();
            match copied {
                Some(content) => {
                    bytes += content.len() as u64;
                    self.beneath.insert(
                        path,
                        Some(Copy {
                            bytes: content,
                            mode: meta.mode() & 0o7777,
                        }),
                    );
                }
                None => self.uncopied += 1,
            }
        }
    }

    /// Git directories and `.git` entries, parents before children: each
    /// is bound onto itself in the call's mount namespace.
    pub fn pinned(&self) -> Vec<PathBuf> {
        let mut pinned: Vec<PathBuf> = self
            .git_dirs
            .keys()
            .chain(self.dot_git.iter())
            .cloned()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        pinned.sort_by_key(|p| p.components().count());
        pinned
    }

    /// Protected entries, parents before children: each is bound read-only
    /// over itself in the call's mount namespace.
    pub fn read_only(&self) -> Vec<PathBuf> {
        let mut read_only: Vec<PathBuf> = self.protected.iter().cloned().collect();
        read_only.sort_by_key(|p| p.components().count());
        read_only
    }

    /// Files whose copy could not be kept.
    pub fn uncopied(&self) -> usize {
        self.uncopied
    }

    /// Walks again after a call and undoes what it left: new repositories,
    /// `.git` entries and settings are renamed aside, new entries in a git
    /// directory that git does not write itself too; with copies, changed
    /// protected files are put back (the changed one is kept beside, renamed)
    /// and new ones beneath protected directories renamed aside.
    ///
    /// Also returns the survey this check took (before it renamed
    /// anything), for the next call's survey to start from.
    pub fn check_after(
        &self,
        unprotected: &Unprotected,
        deadline: Instant,
    ) -> (Vec<Finding>, Option<Survey>) {
        let now = match Survey::walk(&self.roots, unprotected, false, deadline, Some(self)) {
            Ok(now) => now,
            Err(why) => {
                let finding = Finding {
                    path: self.roots.first().cloned().unwrap_or_default(),
                    did: "may have changed",
                    action: "it could not be checked".into(),
                    why,
                };
                return (vec![finding], None);
            }
        };
        let findings = self.undo(&now);
        (findings, Some(now))
    }

    /// Undoes what `now` shows the call left, against this survey.
    fn undo(&self, now: &Survey) -> Vec<Finding> {
        let mut findings = Vec::new();
        let set_aside =
            |findings: &mut Vec<Finding>, path: &Path, did: &'static str, why: String| {
                findings.push(self.quarantine(path, did, why));
            };
        let mut new_repositories: Vec<&PathBuf> = now
            .git_dirs
            .keys()
            .filter(|d| !self.git_dirs.contains_key(*d))
            .collect();
        new_repositories.sort();
        for dir in &new_repositories {
            set_aside(
                &mut findings,
                &dir.join("HEAD"),
                "created",
                format!(
                    "a new git repository at {}: git would take its configuration and hooks, \
                     which run outside the sandbox (--unprotect allows new repositories)",
                    dir.display()
                ),
            );
        }
        let mut new_dot_git: Vec<&PathBuf> = now.dot_git.difference(&self.dot_git).collect();
        new_dot_git.sort();
        for path in &new_dot_git {
            set_aside(
                &mut findings,
                path,
                "created",
                "a new .git makes a new repository, whose configuration and hooks git runs \
                 outside the sandbox (--unprotect allows new repositories)"
                    .into(),
            );
        }
        let mut new_settings: Vec<&PathBuf> = now
            .protected
            .difference(&self.protected)
            .filter(|p| !now.dot_git.contains(*p))
            .filter(|p| {
                !p.ancestors().any(|a| {
                    new_repositories.contains(&&a.to_path_buf())
                        || new_dot_git.contains(&&a.to_path_buf())
                })
            })
            .collect();
        new_settings.sort();
        for path in new_settings {
            let why = match path.file_name().and_then(settings_reason) {
                Some(why) => why.to_string(),
                None => "git reads it as configuration or runs it as a hook".into(),
            };
            set_aside(&mut findings, path, "created", why);
        }
        let mut gone: Vec<&PathBuf> = self
            .git_dirs
            .keys()
            .chain(&self.dot_git)
            .filter(|p| std::fs::symlink_metadata(p).is_err())
            .collect();
        gone.sort();
        gone.dedup();
        for path in gone {
            findings.push(Finding {
                path: path.clone(),
                did: "removed or renamed",
                action: "it could not be put back".into(),
                why: "the repository it belonged to may be broken".into(),
            });
        }
        for (dir, before) in &self.git_dirs {
            let Some(after) = now.git_dirs.get(dir) else {
                continue;
            };
            let mut added: Vec<&OsString> = after
                .difference(before)
                .filter(|n| {
                    !n.to_str().is_some_and(|n| {
                        GIT_DIR_WRITABLE.contains(&n)
                            || n.ends_with(".lock")
                            || n.ends_with(QUARANTINE_SUFFIX)
                    })
                })
                .collect();
            added.sort();
            for name in added {
                set_aside(
                    &mut findings,
                    &dir.join(name),
                    "created",
                    "git does not write it, and may obey it outside the sandbox".into(),
                );
            }
        }
        let mut kinds: Vec<(&PathBuf, &Kind)> = self.kinds.iter().collect();
        kinds.sort();
        for (path, before) in kinds {
            let after = kind_of(path);
            if after == Some(*before) {
                continue;
            }
            let mut finding = match after {
                Some(_) => self.quarantine(
                    path,
                    "replaced",
                    "git or an editor would follow or obey what took its place".into(),
                ),
                None => Finding {
                    path: path.clone(),
                    did: "removed",
                    action: String::new(),
                    why: "git or an editor obeys it".into(),
                },
            };
            if *before == Kind::Dir {
                finding.action = match make_dir(&self.roots, path) {
                    Ok(()) if finding.action.is_empty() => "it was made again".into(),
                    Ok(()) => format!("{}, and the directory made again", finding.action),
                    Err(e) => format!("{}; it could not be made again ({e})", finding.action),
                };
            } else if finding.action.is_empty() {
                finding.action = "it is put back below if a copy was kept".into();
            }
            findings.push(finding);
        }
        if self.copies {
            findings.extend(self.restore(now));
        }
        findings
    }

    /// Puts back changed protected files from their copies; new entries
    /// beneath protected directories are renamed aside.
    fn restore(&self, now: &Survey) -> Vec<Finding> {
        let mut findings = Vec::new();
        let mut paths: Vec<&PathBuf> = self.beneath.keys().collect();
        paths.sort();
        for path in paths {
            let Some(copy) = &self.beneath[path] else {
                continue;
            };
            let current = std::fs::symlink_metadata(path);
            use std::os::unix::fs::MetadataExt;
            let unchanged = current
                .as_ref()
                .is_ok_and(|m| m.is_file() && m.mode() & 0o7777 == copy.mode)
                && read_small(path, MAX_COPY_FILE).as_deref() == Some(&copy.bytes[..]);
            if unchanged {
                continue;
            }
            let moved = current.is_ok().then(|| set_aside_path(&self.roots, path));
            let restored = put_back(&self.roots, path, copy);
            let action = match (moved, restored) {
                (Some(Err(e)), _) | (_, Err(e)) => format!("it could not be put back ({e})"),
                (Some(Ok(aside)), Ok(())) => format!(
                    "it was put back as it was, and the changed file kept as {}",
                    aside.display()
                ),
                (None, Ok(())) => "it was put back".into(),
            };
            findings.push(Finding {
                path: path.clone(),
                did: if current.is_ok() {
                    "changed"
                } else {
                    "removed"
                },
                action,
                why: "git or an editor obeys it outside the sandbox".into(),
            });
        }
        let mut added: Vec<&PathBuf> = now
            .beneath
            .keys()
            .filter(|p| !self.beneath.contains_key(*p))
            .filter(|p| !p.as_os_str().to_string_lossy().ends_with(QUARANTINE_SUFFIX))
            .collect();
        added.sort();
        for path in added {
            findings.push(self.quarantine(
                path,
                "created",
                "git or an editor would run or obey it outside the sandbox".into(),
            ));
        }
        findings
    }

    fn quarantine(&self, path: &Path, did: &'static str, why: String) -> Finding {
        let action = match set_aside_path(&self.roots, path) {
            Ok(aside) => format!(
                "it was renamed to {}",
                aside.file_name().unwrap_or_default().to_string_lossy()
            ),
            Err(e) => format!("it could not be moved aside ({e})"),
        };
        Finding {
            path: path.to_path_buf(),
            did,
            action,
            why,
        }
    }
}

/// The names a survey looks at: what makes a git directory, what a git
/// directory protects, `.git`, and the settings.
fn is_interesting(name: &[u8]) -> bool {
    matches!(
        name,
        b"HEAD"
            | b"objects"
            | b"refs"
            | b"commondir"
            | b".git"
            | b"config"
            | b"config.worktree"
            | b"hooks"
            | b"info"
            | b"gitdir"
    ) || std::str::from_utf8(name).is_ok_and(|n| settings_reason(OsStr::new(n)).is_some())
}

/// Lists `dir` (opened with no link followed on the way where the kernel
/// can): the interesting entries with their types, and the names of its
/// subdirectories. On Linux `getdents64` into a buffer the thread reuses,
/// so an ordinary entry costs no allocation.
fn scan(dir: &Path) -> io::Result<(HashMap<OsString, Kind>, Vec<OsString>)> {
    use rustix::fs::{Mode, OFlags};
    use std::os::unix::ffi::OsStrExt;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    #[cfg(target_os = "linux")]
    let fd = rustix::fs::openat2(
        rustix::fs::CWD,
        dir,
        flags,
        Mode::empty(),
        rustix::fs::ResolveFlags::NO_SYMLINKS | rustix::fs::ResolveFlags::NO_MAGICLINKS,
    )
    .or_else(|e| match e {
        rustix::io::Errno::NOSYS => rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty()),
        e => Err(e),
    })?;
    #[cfg(not(target_os = "linux"))]
    let fd = rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty())?;
    let mut interesting = HashMap::new();
    let mut subdirs = Vec::new();
    let mut visit = |name: &[u8], kind: Kind| {
        if name == b"." || name == b".." {
            return;
        }
        if kind == Kind::Dir {
            subdirs.push(OsStr::from_bytes(name).to_os_string());
        }
        if is_interesting(name) {
            interesting.insert(OsStr::from_bytes(name).to_os_string(), kind);
        }
    };
    let kind_at = |fd: &std::os::fd::OwnedFd, name: &std::ffi::CStr, t: rustix::fs::FileType| {
        use rustix::fs::FileType;
        let t = if t == FileType::Unknown {
            rustix::fs::statat(fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.st_mode))
        } else {
            t
        };
        match t {
            FileType::Directory => Kind::Dir,
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Link,
            _ => Kind::Other,
        }
    };
    #[cfg(target_os = "linux")]
    {
        use std::cell::RefCell;
        use std::mem::MaybeUninit;
        thread_local! {
            static BUFFER: RefCell<Vec<MaybeUninit<u8>>> =
                RefCell::new(vec![MaybeUninit::uninit(); 32 * 1024]);
        }
        BUFFER.with_borrow_mut(|buffer| -> io::Result<()> {
            let mut raw = rustix::fs::RawDir::new(&fd, buffer);
            while let Some(entry) = raw.next() {
                let entry = entry?;
                let kind = kind_at(&fd, entry.file_name(), entry.file_type());
                visit(entry.file_name().to_bytes(), kind);
            }
            Ok(())
        })?;
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut dir = rustix::fs::Dir::read_from(&fd)?;
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let kind = kind_at(&fd, entry.file_name(), entry.file_type());
            visit(entry.file_name().to_bytes(), kind);
        }
    }
    Ok((interesting, subdirs))
}

/// Where a config's path value leads: relative to the work tree for
/// `core.hooksPath` (the directory holding a `.git` directory), else to the
/// git directory.
fn config_target(git_dir: &Path, value: &str) -> PathBuf {
    let value = Path::new(value);
    if value.is_absolute() {
        return value.to_path_buf();
    }
    let base = if git_dir.file_name() == Some(OsStr::new(".git")) {
        git_dir.parent().unwrap_or(git_dir)
    } else {
        git_dir
    };
    let mut out = base.to_path_buf();
    for part in value.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// Opens the directory `rel` beneath `root` one component at a time, no
/// link followed, so a directory swapped for a link while this runs leads
/// nowhere outside.
fn open_dir_beneath(root: &Path, rel: &Path) -> io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, flags, Mode::empty())?;
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a plain path",
            ));
        };
        dir = rustix::fs::openat(&dir, name, flags | OFlags::NOFOLLOW, Mode::empty())?;
    }
    Ok(dir)
}

/// The root `path` lies in, its parent relative to that root, and its name.
fn split_beneath<'a>(
    roots: &'a [PathBuf],
    path: &'a Path,
) -> io::Result<(&'a Path, &'a Path, &'a OsStr)> {
    let outside = || io::Error::new(io::ErrorKind::InvalidInput, "not inside a root");
    let root = roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.components().count())
        .ok_or_else(outside)?;
    let name = path.file_name().ok_or_else(outside)?;
    let parent = path.parent().ok_or_else(outside)?;
    let rel = parent.strip_prefix(root).map_err(|_| outside())?;
    Ok((root, rel, name))
}

/// Renames `path` to the first free `<name>.rootbound-quarantine[-N]` in
/// its directory, relative to that directory's handle; never replaces.
fn set_aside_path(roots: &[PathBuf], path: &Path) -> io::Result<PathBuf> {
    let (root, rel, name) = split_beneath(roots, path)?;
    let dir = open_dir_beneath(root, rel)?;
    for n in 1..100 {
        let mut aside = name.to_os_string();
        aside.push(QUARANTINE_SUFFIX);
        if n > 1 {
            aside.push(format!("-{n}"));
        }
        match rustix::fs::renameat_with(
            &dir,
            name,
            &dir,
            &aside,
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(path.with_file_name(aside)),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other("too many entries set aside already"))
}

/// Makes the directory `path` again, beneath its root.
fn make_dir(roots: &[PathBuf], path: &Path) -> io::Result<()> {
    let (root, rel, name) = split_beneath(roots, path)?;
    let dir = open_dir_beneath(root, rel)?;
    rustix::fs::mkdirat(&dir, name, rustix::fs::Mode::from_raw_mode(0o755))?;
    Ok(())
}

/// Writes a copy back, atomically, with its mode.
fn put_back(roots: &[PathBuf], path: &Path, copy: &Copy) -> io::Result<()> {
    use std::io::Write;
    let (root, rel, name) = split_beneath(roots, path)?;
    let dir = open_dir_beneath(root, rel)?;
    crate::fs::atomic::write_with(&dir, name, None, |file| {
        file.write_all(&copy.bytes)?;
        rustix::fs::fchmod(&*file, rustix::fs::Mode::from_raw_mode(copy.mode as _))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_paths_are_found_in_every_spelling() {
        let text = "[core]\n\thooksPath = .husky\n[Include]\n\tpath = \"../x.cfg\" # c\n\
                    [includeIf \"gitdir:/a/\"]\n\tpath=y\n[core] HooksPath=z\n[user]\n\tpath = no\n";
        let got: Vec<String> = config_paths(text).into_iter().map(|(_, v)| v).collect();
        assert_eq!(got, [".husky", "../x.cfg", "y", "z"]);
    }

    #[test]
    fn config_targets_resolve_against_the_work_tree_or_git_dir() {
        let g = Path::new("/r/p/.git");
        assert_eq!(config_target(g, ".husky"), Path::new("/r/p/.husky"));
        assert_eq!(
            config_target(Path::new("/r/meta"), "../h"),
            Path::new("/r/h")
        );
        assert_eq!(config_target(g, "/abs/h"), Path::new("/abs/h"));
    }
}

//! The survey of the roots before a writable call and the check after it
//! (Unix: the check renames and writes beneath directory handles).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::{
    Kind, QUARANTINE_SUFFIX, Unprotected, is_git_dir, is_named, kind_of, list, read_small,
    settings_reason,
};
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
/// Copies kept for the check after a call where no mount protects: files,
/// bytes in all, bytes in one file.
const MAX_COPIES: usize = 4096;
const MAX_COPY_BYTES: u64 = 16 << 20;
const MAX_COPY_FILE: u64 = 1 << 20;

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
    /// What git configs name as hooks or configuration, while walking.
    config_targets: Vec<PathBuf>,
    /// The walk ran out of time before it saw every directory.
    incomplete: bool,
    /// How many names each protected regular file has: one that gains a
    /// name during a call is separated from it after.
    links: HashMap<PathBuf, (u64, u64)>,
    /// The walk beneath protected directories stopped at its bound: what it
    /// did not see cannot be checked.
    beneath_capped: bool,
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
        // The survey before a call is bounded in directories (past it the
        // call does not run); the check after one is not, since what it
        // must find may lie anywhere the call reached, only in time.
        let max_dirs = if previous.is_some() {
            usize::MAX
        } else {
            MAX_DIRS
        };
        let mut walked = 0usize;
        // Breadth first: should time run out (a chain of directories
        // thousands deep), what lies near the roots has been seen.
        let mut queue: std::collections::VecDeque<PathBuf> = roots.iter().cloned().collect();
        // Git directories that a `.git` file or a `commondir` names.
        let mut named: Vec<PathBuf> = Vec::new();
        let mut unlocked = Unlocked::default();
        while let Some(dir) = queue.pop_front() {
            walked += 1;
            if walked > max_dirs {
                return Err(format!(
                    "the roots hold more than {MAX_DIRS} directories, too many to check what \
                     a command leaves behind"
                ));
            }
            if walked.is_multiple_of(256) && Instant::now() > deadline {
                if previous.is_none() {
                    return Err("the roots took too long to check for protected files".into());
                }
                // The check goes on with what it has seen; the server
                // refuses writable lines from then on.
                survey.incomplete = true;
                break;
            }
            let reused = previous.and_then(|p| {
                let listed = p.listed.get(&dir)?;
                unchanged_since(&dir, p.began?).then(|| listed.clone())
            });
            let listed = match reused {
                Some(listed) => listed,
                None => match scan_unlocking(roots, &dir, &mut unlocked) {
                    Ok((interesting, subdirs)) => Arc::new(Listed {
                        interesting,
                        subdirs,
                    }),
                    Err(e) if previous.is_some() => {
                        unlocked.restore();
                        return Err(format!("{} could not be listed: {e}", dir.display()));
                    }
                    Err(_) => continue,
                },
            };
            survey.listed.insert(dir.clone(), listed.clone());
            let (entries, subdirs) = (&listed.interesting, &listed.subdirs);
            // A `HEAD` may be rewritten in place, which leaves its
            // directory's ctime alone: asked again on every walk.
            let git_dir = is_git_dir(&dir, entries) && !unprotected.covers(&dir);
            if git_dir {
                survey.add_git_dir(&dir, entries, &mut named);
            }
            for (name, kind) in entries {
                let path = dir.join(name);
                if unprotected.covers(&path) {
                    continue;
                }
                if is_named(name, ".git") {
                    survey.dot_git.insert(path.clone());
                    if *kind != Kind::Dir {
                        survey.protected.insert(path.clone());
                        if let Some(target) =
                            read_small(&path, 4096).and_then(|text| super::pointed_dir(&dir, &text))
                        {
                            named.push(target);
                        }
                    }
                }
                if settings_reason(name).is_some() {
                    survey.protected.insert(path.clone());
                }
            }
            // Git directories are walked whole too: a repository can be
            // hidden in `objects/` and reached through a link in the work
            // tree.
            for name in subdirs {
                queue.push_back(dir.join(name));
            }
        }
        // What a `.git` file or a `commondir` names is a git directory
        // whatever it holds: git reads its config and runs its hooks.
        let mut k = 0;
        while k < named.len() {
            let dir = named[k].clone();
            k += 1;
            if survey.git_dirs.contains_key(&dir)
                || !roots.iter().any(|r| dir.starts_with(r))
                || unprotected.covers(&dir)
            {
                continue;
            }
            if let Ok((entries, _)) = scan_unlocking(roots, &dir, &mut unlocked) {
                survey.add_git_dir(&dir, &entries, &mut named);
            }
        }
        unlocked.restore();
        let targets: Vec<PathBuf> = std::mem::take(&mut survey.config_targets);
        for target in targets {
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
        if copies && survey.uncopied > 0 {
            return Err(format!(
                "{} protected files are more than the server keeps copies of ({MAX_COPIES} \
                 files, {} MB), and without a mount namespace a copy is what puts them back",
                survey.uncopied,
                MAX_COPY_BYTES >> 20
            ));
        }
        Ok(survey)
    }

    /// Records `dir` as a git directory: its top-level names, its protected
    /// entries, what its config makes hooks or configuration, and the
    /// common directory it names.
    fn add_git_dir(
        &mut self,
        dir: &Path,
        entries: &HashMap<OsString, Kind>,
        named: &mut Vec<PathBuf>,
    ) {
        let all = list(dir)
            .map(|all| all.into_keys().collect())
            .unwrap_or_default();
        self.git_dirs.insert(dir.to_path_buf(), all);
        for name in entries.keys() {
            if GIT_DIR_PROTECTED.iter().any(|p| is_named(name, p)) {
                self.protected.insert(dir.join(name));
            }
        }
        if let Some(bytes) = read_small(&dir.join("config"), 1 << 20) {
            for (key, value) in super::config_paths(&String::from_utf8_lossy(&bytes)) {
                let target = super::config_target(dir, dir, &key, &value);
                // husky 9: hooksPath is `.husky/_`, whose stubs run
                // `.husky/<hook>`; the whole of `.husky` is protected by
                // name, and so is any hooks directory's parent named so.
                self.config_targets.push(target);
            }
        }
        if let Some(target) =
            read_small(&dir.join("commondir"), 4096).and_then(|t| super::pointed_dir(dir, &t))
        {
            named.push(target);
        }
    }

    /// Lists (and copies, if asked) everything beneath protected entries:
    /// first the protected files themselves (a config must never lose its
    /// copy to a directory's many files), then what the directories hold.
    /// Entries already set aside are neither listed nor copied.
    fn record_beneath(&mut self) {
        let mut bytes = 0u64;
        let mut copied = 0usize;
        let mut protected: Vec<PathBuf> = self.protected.iter().cloned().collect();
        protected.sort_by_key(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()));
        let mut queue: std::collections::VecDeque<PathBuf> = protected.into();
        let mut seen = 0usize;
        while let Some(path) = queue.pop_front() {
            seen += 1;
            if seen > MAX_DIRS {
                self.uncopied += 1;
                self.beneath_capped = true;
                break;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if let Ok(entries) = std::fs::read_dir(&path) {
                    for entry in entries.flatten() {
                        // What rootbound set aside is passed over; a directory
                        // only named so (an agent loads any folder of
                        // extensions) is looked into like any other.
                        if is_set_aside_name(&entry.file_name())
                            && entry.file_type().is_ok_and(|t| !t.is_dir())
                        {
                            continue;
                        }
                        let child = entry.path();
                        self.beneath.entry(child.clone()).or_insert(None);
                        queue.push_back(child);
                    }
                }
                continue;
            }
            use std::os::unix::fs::MetadataExt;
            if meta.is_file() {
                self.links.insert(path.clone(), (meta.ino(), meta.nlink()));
            }
            if !self.copies || !meta.is_file() {
                continue;
            }
            let content = (copied < MAX_COPIES
                && meta.len() <= MAX_COPY_FILE
                && bytes + meta.len() <= MAX_COPY_BYTES)
                .then(|| read_small(&path, MAX_COPY_FILE))
                .flatten();
            match content {
                Some(content) => {
                    bytes += content.len() as u64;
                    copied += 1;
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
        let (mut findings, separated) = self.undo(&now);
        // Past the bound only now (where copies protect, a baseline past
        // it refuses the call: its files could not all be copied).
        if now.beneath_capped && !self.beneath_capped {
            // What lies beneath them was not all seen: each protected
            // directory is set aside whole and made again, empty.
            let mut dirs: Vec<&PathBuf> = now
                .protected
                .iter()
                .filter(|p| now.kinds.get(*p) == Some(&Kind::Dir))
                .collect();
            dirs.sort();
            for dir in dirs {
                let mut finding = self.quarantine(
                    dir,
                    "filled",
                    format!(
                        "more than {MAX_DIRS} entries beneath protected directories cannot be \
                         checked"
                    ),
                );
                if let Err(e) = make_dir(&self.roots, dir) {
                    finding.action =
                        format!("{}; it could not be made again ({e})", finding.action);
                }
                findings.push(finding);
            }
            return (findings, None);
        }
        if !separated {
            return (findings, None);
        }
        if now.incomplete {
            findings.push(Finding {
                path: self.roots.first().cloned().unwrap_or_default(),
                did: "made more directories than could be checked in",
                action: "what was found was undone, what lies deeper was not looked at".into(),
                why: "no command that may write runs until the server is restarted".into(),
            });
            return (findings, None);
        }
        (findings, Some(now))
    }

    /// Undoes what `now` shows the call left, against this survey.
    /// Also says whether every protected file that gained a name was
    /// separated from it (if not, no writable call may run again).
    fn undo(&self, now: &Survey) -> (Vec<Finding>, bool) {
        let mut findings = Vec::new();
        // A path two rules name (a new `config.worktree` is both a new
        // setting and a new name in a git directory) is set aside once, and
        // said once: the second try would find it gone and say it failed.
        let mut set_aside_already: HashSet<PathBuf> = HashSet::new();
        let mut set_aside =
            |findings: &mut Vec<Finding>, path: &Path, did: &'static str, why: String| {
                if set_aside_already.insert(path.to_path_buf()) {
                    findings.extend(self.quarantine_if_there(path, did, why));
                }
            };
        let mut new_repositories: Vec<&PathBuf> = now
            .git_dirs
            .keys()
            .filter(|d| !self.git_dirs.contains_key(*d))
            .collect();
        new_repositories.sort();
        for dir in &new_repositories {
            let why = format!(
                "a new git repository at {}: git would take its configuration and hooks, \
                 which run outside the sandbox (--unprotect allows new repositories)",
                dir.display()
            );
            // Without its HEAD git takes it for no repository at all; one
            // that has none (a common directory a `commondir` names) loses
            // what git would obey.
            let parts: &[&str] = if dir.join("HEAD").symlink_metadata().is_ok() {
                &["HEAD"]
            } else {
                &["config", "config.worktree", "hooks", "info"]
            };
            for part in parts {
                if dir.join(part).symlink_metadata().is_ok() {
                    set_aside(&mut findings, &dir.join(part), "created", why.clone());
                }
            }
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
        let mut headless: Vec<&PathBuf> = self
            .git_dirs
            .iter()
            .filter(|(dir, names)| {
                names.contains(OsStr::new("HEAD"))
                    && dir.symlink_metadata().is_ok()
                    && dir.join("HEAD").symlink_metadata().is_err()
            })
            .map(|(dir, _)| dir)
            .collect();
        headless.sort();
        for dir in headless {
            findings.push(Finding {
                path: dir.join("HEAD"),
                did: "removed",
                action: "it could not be put back".into(),
                why: "the repository may have lost its history".into(),
            });
        }
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
                            || is_set_aside_name(OsStr::new(n))
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
            // A directory on the way swapped for a link (a hooks path's
            // parent, say) would make the path lead elsewhere, where a
            // comparison by path sees what it expects: the link goes.
            if let Some(link) = self.link_on_the_way(path) {
                findings.push(self.quarantine(
                    &link,
                    "replaced",
                    format!(
                        "a directory on the way to {} became a link, and git or an editor \
                         would follow it to what it leads to",
                        path.display()
                    ),
                ));
                continue;
            }
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
                finding.action = if self.copies {
                    "it is put back from its copy".into()
                } else {
                    "it could not be put back".into()
                };
            }
            findings.push(finding);
        }
        if self.copies {
            findings.extend(self.restore(now));
        }
        let (separations, separated) = self.separate_hard_links(now);
        findings.extend(separations);
        (findings, separated)
    }

    /// Separates each protected file that gained a name during the call (a
    /// hard link, which only a call without a mount namespace can make) from
    /// it: the protected name is renamed aside first, so the other name
    /// keeps the old file and nothing written through it reaches what git
    /// and agents read, then the copy taken before the call is put back in
    /// its place (without copies, what the set-aside file holds now). What
    /// is there is never read in place: the other name may be writing it.
    /// Links the file had before the call (a `cp -al` backup) are left.
    fn separate_hard_links(&self, now: &Survey) -> (Vec<Finding>, bool) {
        let mut gained: Vec<&PathBuf> = now
            .links
            .iter()
            // Two names or more, and either a name more than before or
            // another file than before (the call put a linked file in its
            // place, where the old one had a `cp -al` backup's name).
            .filter(|(path, (ino, n))| {
                *n >= 2
                    && self
                        .links
                        .get(*path)
                        .is_none_or(|(was_ino, was_n)| n > was_n || ino != was_ino)
            })
            .map(|(path, _)| path)
            .collect();
        gained.sort();
        let mut findings = Vec::new();
        let mut separated = true;
        for path in gained {
            use std::os::unix::fs::MetadataExt;
            // Put back from its copy a moment ago (it had changed), it has a
            // file of its own already.
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if !meta.is_file() || meta.nlink() < 2 {
                continue;
            }
            let mode = meta.mode() & 0o7777;
            let aside = match set_aside_path(&self.roots, path) {
                Ok(SetAside::Renamed(aside)) => aside,
                Ok(SetAside::Removed) => {
                    findings.push(Finding {
                        path: path.clone(),
                        did: "linked a second name to",
                        action: "it could not be renamed, so it was removed".into(),
                        why: LINK_WHY.into(),
                    });
                    continue;
                }
                Err(e) => {
                    // A rename can need room in the directory; removing the
                    // name does not (the other name keeps the file).
                    let action = match remove_name(&self.roots, path) {
                        Ok(()) => "it could not be renamed, so its name was removed".to_string(),
                        Err(_) => {
                            separated = false;
                            format!(
                                "IT COULD NOT BE SEPARATED ({e}); remove the other name before \
                                 running git here"
                            )
                        }
                    };
                    findings.push(Finding {
                        path: path.clone(),
                        did: "linked a second name to",
                        action,
                        why: LINK_WHY.into(),
                    });
                    // Its copy goes back where the name was, if there is room.
                    if let Some(Some(copy)) = self.beneath.get(path) {
                        let _ = put_back(&self.roots, path, copy);
                    }
                    continue;
                }
            };
            let copy = match self.beneath.get(path) {
                Some(Some(copy)) => Some(copy.clone()),
                _ => read_small(&aside, MAX_COPY_FILE).map(|bytes| Copy { bytes, mode }),
            };
            let shown_aside = aside.file_name().unwrap_or_default().to_string_lossy();
            let action = match copy.map(|copy| put_back(&self.roots, path, &copy)) {
                Some(Ok(())) => format!(
                    "it was given a file of its own, and the linked file kept as {shown_aside}"
                ),
                Some(Err(e)) => format!(
                    "the linked file was renamed to {shown_aside}, and its own could not be \
                     made ({e})"
                ),
                None => format!("the linked file was renamed to {shown_aside}"),
            };
            findings.push(Finding {
                path: path.clone(),
                did: "linked a second name to",
                action,
                why: LINK_WHY.into(),
            });
        }
        (findings, separated)
    }

    /// The first directory between `path`'s root and `path` that is a
    /// link now, if any.
    fn link_on_the_way(&self, path: &Path) -> Option<PathBuf> {
        let root = self
            .roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.components().count())?;
        let rel = path.strip_prefix(root).ok()?;
        let mut on_the_way = root.clone();
        let parts: Vec<_> = rel.components().collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            on_the_way.push(part);
            match std::fs::symlink_metadata(&on_the_way) {
                Ok(meta) if meta.file_type().is_symlink() => return Some(on_the_way),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
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
                (Some(Ok(SetAside::Renamed(aside))), Ok(())) => format!(
                    "it was put back as it was, and the changed file kept as {}",
                    aside.display()
                ),
                (Some(Ok(SetAside::Removed)) | None, Ok(())) => "it was put back".into(),
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
        // Past the walk's bound, the directories are set aside whole
        // instead (`check_after`), not entry by entry.
        if now.beneath_capped && !self.beneath_capped {
            return findings;
        }
        let mut added: Vec<&PathBuf> = now
            .beneath
            .keys()
            .filter(|p| !self.beneath.contains_key(*p))
            .filter(|p| {
                !(p.file_name().is_some_and(is_set_aside_name)
                    && std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()))
            })
            .collect();
        added.sort();
        for path in added {
            findings.extend(self.quarantine_if_there(
                path,
                "created",
                "git or an editor would run or obey it outside the sandbox".into(),
            ));
        }
        findings
    }

    /// [`Survey::quarantine`] of something the call created, unless it is
    /// gone: then a directory it was in was set aside already (a new
    /// repository's `hooks`, say), the note for that says so, and a note
    /// saying this one could not be moved would be false.
    fn quarantine_if_there(&self, path: &Path, did: &'static str, why: String) -> Option<Finding> {
        std::fs::symlink_metadata(path)
            .is_ok()
            .then(|| self.quarantine(path, did, why))
    }

    fn quarantine(&self, path: &Path, did: &'static str, why: String) -> Finding {
        let action = match set_aside_path(&self.roots, path) {
            Ok(SetAside::Renamed(aside)) => format!(
                "it was renamed to {}",
                aside.file_name().unwrap_or_default().to_string_lossy()
            ),
            Ok(SetAside::Removed) => "it could not be renamed, so it was removed".into(),
            Err(e) => {
                format!("IT COULD NOT BE MOVED ASIDE ({e}); remove it before running git here")
            }
        };
        Finding {
            path: path.to_path_buf(),
            did,
            action,
            why,
        }
    }
}

/// Why a second name of a protected file matters.
const LINK_WHY: &str =
    "a write through its other name would change what git or an editor obeys outside the sandbox";

/// Whether `name` is one rootbound sets aside under: `<name>` followed by
/// the quarantine suffix, alone or with its unguessable tail. A name that
/// only holds the suffix (`x.rootbound-quarantine.yaml`, which an agent
/// may load) is checked like any other.
fn is_set_aside_name(name: &OsStr) -> bool {
    let name = name.as_encoded_bytes();
    let suffix = QUARANTINE_SUFFIX.as_bytes();
    if name.ends_with(suffix) {
        return true;
    }
    let tail = 1 + 16;
    name.len() > suffix.len() + tail
        && name[..name.len() - tail].ends_with(suffix)
        && name[name.len() - tail] == b'-'
        && name[name.len() - 16..].iter().all(u8::is_ascii_hexdigit)
}

/// The names a survey looks at: what makes a git directory, what a git
/// directory protects, `.git`, and the settings.
fn is_interesting(name: &[u8]) -> bool {
    const GIT_NAMES: &[&str] = &[
        "HEAD",
        "objects",
        "refs",
        "commondir",
        ".git",
        "config",
        "config.worktree",
        "hooks",
        "info",
        "gitdir",
    ];
    // Asked of every entry a survey lists: compared as bytes, no decoding.
    let name = <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name);
    GIT_NAMES.iter().any(|g| is_named(name, g)) || settings_reason(name).is_some()
}

/// Lists `dir` (opened with no link followed on the way where the kernel
/// can): the interesting entries with their types, and the names of its
/// subdirectories. On Linux `getdents64` into a buffer the thread reuses,
/// so an ordinary entry costs no allocation.
fn open_listing(dir: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    #[cfg(target_os = "linux")]
    return rustix::fs::openat2(
        rustix::fs::CWD,
        dir,
        flags,
        Mode::empty(),
        rustix::fs::ResolveFlags::NO_SYMLINKS | rustix::fs::ResolveFlags::NO_MAGICLINKS,
    )
    .or_else(|e| match e {
        rustix::io::Errno::NOSYS => rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty()),
        e => Err(e),
    });
    #[cfg(not(target_os = "linux"))]
    return rustix::fs::openat(rustix::fs::CWD, dir, flags, Mode::empty());
}

/// Directories whose mode a walk raised to list or change them (a call
/// may take the owner's own rights away: `chmod 111`), with the modes they
/// had; put back when the walk or the check is done.
#[derive(Debug, Default)]
struct Unlocked(Vec<(PathBuf, u32)>);

impl Unlocked {
    /// Gives the owner full rights on `dir` (never following a link), if
    /// the server may.
    fn unlock(&mut self, dir: &Path) -> io::Result<()> {
        let mode = std::fs::symlink_metadata(dir)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)?;
        chmod_no_follow(dir, mode | 0o700)?;
        self.0.push((dir.to_path_buf(), mode));
        Ok(())
    }

    fn restore(&mut self) {
        for (dir, mode) in self.0.drain(..).rev() {
            let _ = chmod_no_follow(&dir, mode);
        }
    }
}

/// `chmod` of the directory `dir` itself, never of what a link there
/// leads to. Linux: through an `O_PATH` descriptor's `/proc` link (its
/// `fchmodat` cannot refuse a link before 6.6); elsewhere `fchmodat` with
/// `AT_SYMLINK_NOFOLLOW`.
fn chmod_no_follow(dir: &Path, mode: u32) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags};
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::PermissionsExt;
        let fd = rustix::fs::open(
            dir,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        std::fs::set_permissions(
            format!("/proc/self/fd/{}", fd.as_raw_fd()),
            std::fs::Permissions::from_mode(mode),
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        rustix::fs::chmodat(
            rustix::fs::CWD,
            dir,
            rustix::fs::Mode::from_raw_mode(mode as _),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )?;
        Ok(())
    }
}

/// Lists `dir` as `scan` does, opening it component by component from
/// its root when its path is too long for one open, and raising its mode
/// when a call took the owner's rights away.
fn scan_unlocking(
    roots: &[PathBuf],
    dir: &Path,
    unlocked: &mut Unlocked,
) -> io::Result<(HashMap<OsString, Kind>, Vec<OsString>)> {
    let fd = match open_listing(dir) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NAMETOOLONG) => {
            let root = roots
                .iter()
                .filter(|r| dir.starts_with(r))
                .max_by_key(|r| r.components().count())
                .ok_or_else(|| io::Error::other("not inside a root"))?;
            let rel = dir.strip_prefix(root).map_err(io::Error::other)?;
            open_beneath_as(root, rel, rustix::fs::OFlags::RDONLY)?
        }
        Err(rustix::io::Errno::ACCESS) => {
            unlocked.unlock(dir)?;
            open_listing(dir)?
        }
        Err(e) => return Err(e.into()),
    };
    scan_fd(&fd)
}

/// The interesting entries of an open directory, with their types, and the
/// names of its subdirectories. On Linux `getdents64` into a buffer the
/// thread reuses, so an ordinary entry costs no allocation.
fn scan_fd(fd: &OwnedFd) -> io::Result<(HashMap<OsString, Kind>, Vec<OsString>)> {
    use std::os::unix::ffi::OsStrExt;
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
                let kind = kind_at(fd, entry.file_name(), entry.file_type());
                visit(entry.file_name().to_bytes(), kind);
            }
            Ok(())
        })?;
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut dir = rustix::fs::Dir::read_from(fd)?;
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let kind = kind_at(fd, entry.file_name(), entry.file_type());
            visit(entry.file_name().to_bytes(), kind);
        }
    }
    Ok((interesting, subdirs))
}

/// Opens the directory `rel` beneath `root` one component at a time, no
/// link followed, so a directory swapped for a link while this runs leads
/// nowhere outside.
fn open_dir_beneath(root: &Path, rel: &Path) -> io::Result<std::os::fd::OwnedFd> {
    open_beneath_as(root, rel, THROUGH)
}

/// How directories on the way are opened: `O_PATH` where it exists (it
/// needs no right to read them), else for reading.
#[cfg(target_os = "linux")]
const THROUGH: rustix::fs::OFlags = rustix::fs::OFlags::PATH;
#[cfg(not(target_os = "linux"))]
const THROUGH: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY;

/// Opens `rel` beneath `root` as [`open_dir_beneath`] does, the last
/// component with `last` (`PATH` for a handle to rename and write in, which
/// needs no right to read the directory; `RDONLY` to list it). Components
/// on the way are `O_PATH`, so a directory a call left searchable but
/// unreadable is passed through.
fn open_beneath_as(
    root: &Path,
    rel: &Path,
    last: rustix::fs::OFlags,
) -> io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let through = THROUGH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let parts: Vec<&OsStr> = rel
        .components()
        .map(|part| match part {
            std::path::Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a plain path",
            )),
        })
        .collect::<io::Result<_>>()?;
    let Some((final_name, on_the_way)) = parts.split_last() else {
        return Ok(rustix::fs::open(
            root,
            last | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?);
    };
    let mut dir = rustix::fs::open(root, through, Mode::empty())?;
    for name in on_the_way {
        dir = rustix::fs::openat(&dir, *name, through | OFlags::NOFOLLOW, Mode::empty())?;
    }
    Ok(rustix::fs::openat(
        &dir,
        *final_name,
        last | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
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
/// A name a command cannot guess ahead of time, so it cannot take every
/// name the entry could be set aside under.
fn unguessable() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", hasher.finish())
}

/// What happened to an entry that had to go.
enum SetAside {
    Renamed(PathBuf),
    /// It could not be renamed (its directory refused, even with the owner's
    /// rights back), so it was removed: a file or link only.
    Removed,
}

/// Renames `path` to `<name>.rootbound-quarantine` in its directory (or,
/// if that is taken, a name with an unguessable tail), relative to that
/// directory's handle, never replacing anything. A directory whose mode a
/// call took the owner's rights from gets them back for the rename, then
/// its mode again. A file or link that still cannot be renamed is removed:
/// it must not stay where git or an editor finds it.
fn set_aside_path(roots: &[PathBuf], path: &Path) -> io::Result<SetAside> {
    let (root, rel, name) = split_beneath(roots, path)?;
    let dir = open_dir_beneath(root, rel)?;
    let rename = |aside: &OsStr| {
        rustix::fs::renameat_with(&dir, name, &dir, aside, rustix::fs::RenameFlags::NOREPLACE)
    };
    let attempt = || -> rustix::io::Result<PathBuf> {
        let mut aside = name.to_os_string();
        aside.push(QUARANTINE_SUFFIX);
        match rename(&aside) {
            Err(rustix::io::Errno::EXIST) => {}
            done => return done.map(|()| path.with_file_name(aside)),
        }
        for _ in 0..4 {
            let mut aside = name.to_os_string();
            aside.push(format!("{QUARANTINE_SUFFIX}-{}", unguessable()));
            match rename(&aside) {
                Err(rustix::io::Errno::EXIST) => continue,
                done => return done.map(|()| path.with_file_name(aside)),
            }
        }
        Err(rustix::io::Errno::EXIST)
    };
    let renamed = match attempt() {
        Err(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => {
            let mut unlocked = Unlocked::default();
            let parent = path.parent().unwrap_or(root);
            let retried = unlocked
                .unlock(parent)
                .map_err(|_| rustix::io::Errno::ACCESS);
            let renamed = retried.and_then(|()| attempt());
            unlocked.restore();
            renamed
        }
        other => other,
    };
    match renamed {
        Ok(aside) => Ok(SetAside::Renamed(aside)),
        // Only where the directory refuses the rename (its rights, which
        // the owner's could not restore) is the entry removed: any other
        // failure (a full disk) leaves it, and says so.
        Err(e) if !matches!(e, rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => {
            Err(e.into())
        }
        Err(e) => {
            let is_dir = rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|s| {
                    rustix::fs::FileType::from_raw_mode(s.st_mode)
                        == rustix::fs::FileType::Directory
                });
            if is_dir {
                return Err(e.into());
            }
            rustix::fs::unlinkat(&dir, name, rustix::fs::AtFlags::empty())?;
            Ok(SetAside::Removed)
        }
    }
}

/// Removes the name `path` (a file), beneath its root.
fn remove_name(roots: &[PathBuf], path: &Path) -> io::Result<()> {
    let (root, rel, name) = split_beneath(roots, path)?;
    let dir = open_dir_beneath(root, rel)?;
    rustix::fs::unlinkat(&dir, name, rustix::fs::AtFlags::empty())?;
    Ok(())
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
    crate::fs::atomic::write_with(&dir, name, crate::fs::atomic::Replacing::Whatever, |file| {
        file.write_all(&copy.bytes)?;
        rustix::fs::fchmod(&*file, rustix::fs::Mode::from_raw_mode(copy.mode as _))?;
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_rootbound_sets_aside_under_are_passed_over() {
        for name in [
            "config.rootbound-quarantine",
            "pre-commit.rootbound-quarantine-0123456789abcdef",
        ] {
            assert!(is_set_aside_name(OsStr::new(name)), "{name}");
        }
        for name in [
            "x.rootbound-quarantine.yaml",
            "settings.rootbound-quarantine.json",
            "a.rootbound-quarantine-0123456789abcdeg",
            "a.rootbound-quarantine-0123",
            "config",
        ] {
            assert!(!is_set_aside_name(OsStr::new(name)), "{name}");
        }
    }
}

//! The journal of rootbound's own edits (docs/tools.md, "Undo"): for each
//! root, what every write_file and replace found and what it wrote, so that
//! an edit can be undone by the model (`undo_edit`) or by the user
//! (`rootbound undo`) without losing anything anyone else wrote since.
//!
//! It lives in the user's state directory, never inside a root (a command
//! or a tool call that could write the journal could make an undo write
//! anything), one directory per root:
//!
//! ```text
//! journal/<key>/root                 the root's path (key: 16 hex digits of its SHA-256)
//! journal/<key>/entries/<id>.json    one edit; renamed to <id>.undone once undone
//! journal/<key>/blobs/<sha256>       content by its hash: an edit's result is usually
//!                                    the next edit's starting point, stored once
//! journal/<key>/pending/<sha256>.<n> a blob an edit in flight relies on
//! journal/<key>/lock                 shared by writers, exclusive while pruning
//! ```
//!
//! Several servers (and `rootbound undo`) share it safely: every entry is a
//! file of its own with a unique id (time, process, counter), every blob is
//! written under a temporary name and renamed, and pruning takes the lock
//! exclusively and keeps every blob an entry or a pending mark names. A
//! writer makes its blob and its mark (or its entry) under the shared lock,
//! so pruning sees both or neither. Nothing is synced to disk: a blob whose
//! hash does not match (after a crash) is refused when an undo needs it.
//! Directories are made with mode 0700 and files with 0600.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How much the journal keeps (`--journal-max-mb`, `--journal-max-days`,
/// `--journal-max-file-mb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The blobs of one root's journal together, in bytes.
    pub max_bytes: u64,
    /// Entries older than this are dropped.
    pub max_age: Duration,
    /// A file larger than this (before or after the edit) is not journaled.
    pub max_file: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: 256 * 1024 * 1024,
            max_age: Duration::from_secs(30 * 24 * 3600),
            max_file: 32 * 1024 * 1024,
        }
    }
}

/// The per-user state directory: `$XDG_STATE_HOME/rootbound` or
/// `~/.local/state/rootbound` (Linux and other Unix),
/// `~/Library/Application Support/rootbound` (macOS),
/// `%LOCALAPPDATA%\rootbound` (Windows). None without a home.
pub fn default_state_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        return absolute("LOCALAPPDATA").map(|p| p.join("rootbound"));
    }
    if cfg!(target_os = "macos") {
        return absolute("HOME").map(|p| p.join("Library/Application Support/rootbound"));
    }
    absolute("XDG_STATE_HOME")
        .map(|p| p.join("rootbound"))
        .or_else(|| absolute("HOME").map(|p| p.join(".local/state/rootbound")))
}

/// A file's content as the journal names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// SHA-256 of the bytes, lowercase hex.
    pub hash: String,
    pub size: u64,
    /// Unix permission bits, where there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl Version {
    fn of(bytes: &[u8], mode: Option<u32>) -> Version {
        Version {
            hash: hash_hex(bytes),
            size: bytes.len() as u64,
            mode,
        }
    }
}

/// One edit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    /// Seconds since the Unix epoch.
    pub time: u64,
    /// The tool that made it (`write_file`, `replace`).
    pub tool: String,
    /// The file, relative to the root, with `/` between components.
    pub path: String,
    /// What was there (None: the edit created the file).
    pub before: Option<Version>,
    /// What the edit wrote.
    pub after: Version,
    /// Lines added and removed.
    pub added: u64,
    pub removed: u64,
    /// Undone (by `undo_edit` or `rootbound undo`).
    #[serde(skip)]
    pub undone: bool,
}

impl Entry {
    /// The ID people see and type: 8 hex digits of the entry's hash.
    pub fn short_id(&self) -> String {
        hash_hex(self.id.as_bytes())[..8].to_string()
    }
}

/// Why an edit is not in the journal (the edit itself went through).
#[derive(Debug, Clone)]
pub struct NotJournaled(pub String);

impl std::fmt::Display for NotJournaled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The journals of a server's roots.
#[derive(Debug)]
pub struct Journal {
    roots: Vec<(PathBuf, Result<Arc<RootJournal>, String>)>,
}

impl Journal {
    /// A journal for each root in `state_dir`; a root whose journal cannot
    /// be made, or that holds the state directory, gets none (and the
    /// reason, for the answers that would have used it).
    pub fn open(state_dir: &Path, limits: Limits, roots: &[PathBuf]) -> Journal {
        let inside = roots.iter().find(|root| state_dir.starts_with(root));
        let roots = roots
            .iter()
            .map(|root| {
                let journal = match inside {
                    Some(holder) => Err(format!(
                        "the journal's directory {} is inside the root {}, where a tool call \
                         could change it; start the server with --state-dir outside the roots",
                        state_dir.display(),
                        holder.display()
                    )),
                    None => Ok(Arc::new(RootJournal::planned(state_dir, root, limits))),
                };
                if let Err(why) = &journal {
                    tracing::warn!("edits in {} are not journaled: {why}", root.display());
                }
                (root.clone(), journal)
            })
            .collect();
        Journal { roots }
    }

    /// No journal: every edit says why it was not journaled.
    pub fn off(roots: &[PathBuf], why: &str) -> Journal {
        Journal {
            roots: roots
                .iter()
                .map(|root| (root.clone(), Err(why.to_string())))
                .collect(),
        }
    }

    /// The journal of the root `root` (as the guard names it).
    pub fn of_root(&self, root: &Path) -> Result<&Arc<RootJournal>, NotJournaled> {
        match self.roots.iter().find(|(r, _)| r == root) {
            Some((_, Ok(journal))) => Ok(journal),
            Some((_, Err(why))) => Err(NotJournaled(why.clone())),
            None => Err(NotJournaled("the file is in no root".into())),
        }
    }
}

/// Every root's journal found in `state_dir` (for `rootbound history`).
pub fn all_in(state_dir: &Path, limits: Limits) -> io::Result<Vec<RootJournal>> {
    let base = state_dir.join("journal");
    let mut found = Vec::new();
    let listing = match fs::read_dir(&base) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e),
    };
    for item in listing {
        let dir = item?.path();
        let Ok(root) = fs::read_to_string(dir.join("root")) else {
            continue;
        };
        found.push(RootJournal::at(dir, PathBuf::from(root), limits));
    }
    found.sort_by(|a, b| a.root.cmp(&b.root));
    Ok(found)
}

/// One root's journal.
#[derive(Debug)]
pub struct RootJournal {
    root: PathBuf,
    dir: PathBuf,
    limits: Limits,
    /// This process's idea of the blobs' total size (u64::MAX: not known
    /// yet, so the first edit prunes, which counts them).
    estimate: AtomicU64,
    /// Entries this process wrote since it last pruned (another server's
    /// growth and the age limit are caught every [`PRUNE_EVERY`]).
    since_prune: AtomicU64,
    /// Its directories, made at the first edit (a server that edits
    /// nothing leaves nothing behind).
    made: std::sync::OnceLock<Result<(), String>>,
    /// A pruning of this process is under way on its own thread.
    pruning: AtomicBool,
}

/// Entries a process writes between two prunings at most.
const PRUNE_EVERY: u64 = 64;

/// Temporary blobs and pending marks older than this are a crashed
/// writer's.
const STALE: Duration = Duration::from_secs(3600);

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique() -> String {
    format!(
        "{:010}-{:06}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed) % 1_000_000
    )
}

fn hash_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        use std::fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn private_dir(path: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// Writes `bytes` to `path` through a temporary name beside it, mode 0600.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{}.{}.tmp", name.unwrap_or_default(), unique()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What an edit in flight found, recorded before it writes: its blob is
/// kept by a pending mark until [`RootJournal::record`] writes the entry
/// (or this is dropped: the edit did not happen).
#[derive(Debug)]
pub struct Before {
    version: Option<Version>,
    mark: Option<PathBuf>,
}

impl Before {
    /// The version the edit started from (None: no file).
    pub fn version(&self) -> Option<&Version> {
        self.version.as_ref()
    }
}

impl Drop for Before {
    fn drop(&mut self) {
        if let Some(mark) = self.mark.take() {
            let _ = fs::remove_file(mark);
        }
    }
}

impl RootJournal {
    fn key(root: &Path) -> String {
        hash_hex(root.as_os_str().as_encoded_bytes())[..16].to_string()
    }

    fn at(dir: PathBuf, root: PathBuf, limits: Limits) -> RootJournal {
        RootJournal {
            root,
            dir,
            limits,
            estimate: AtomicU64::new(u64::MAX),
            since_prune: AtomicU64::new(0),
            made: std::sync::OnceLock::new(),
            pruning: AtomicBool::new(false),
        }
    }

    fn planned(state_dir: &Path, root: &Path, limits: Limits) -> RootJournal {
        let dir = state_dir.join("journal").join(Self::key(root));
        Self::at(dir, root.to_path_buf(), limits)
    }

    /// Makes the journal's directories and its `root` file if missing.
    fn made(&self) -> Result<(), NotJournaled> {
        let made = self.made.get_or_init(|| {
            let make = || {
                for sub in ["entries", "blobs", "pending"] {
                    private_dir(&self.dir.join(sub))?;
                }
                let root_file = self.dir.join("root");
                let recorded = fs::read(&root_file).ok();
                if recorded.as_deref() != Some(self.root.as_os_str().as_encoded_bytes()) {
                    let Some(text) = self.root.to_str() else {
                        return Err(io::Error::other("the root's path is not UTF-8"));
                    };
                    write_private(&root_file, text.as_bytes())?;
                }
                Ok(())
            };
            make().map_err(|e: io::Error| {
                format!("the journal {} could not be made: {e}", self.dir.display())
            })
        });
        made.clone().map_err(NotJournaled)
    }

    /// The root this journal is for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where this journal is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self, exclusive: bool) -> io::Result<File> {
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(self.dir.join("lock"))?;
        if exclusive {
            file.lock()?;
        } else {
            file.lock_shared()?;
        }
        Ok(file)
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("blobs").join(hash)
    }

    /// Stores `bytes` as the blob `hash` unless it is there; true when it
    /// was written. Under the shared lock.
    fn ensure_blob(&self, hash: &str, bytes: &[u8]) -> io::Result<bool> {
        let path = self.blob_path(hash);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
            return Ok(false);
        }
        write_private(&path, bytes)?;
        Ok(true)
    }

    /// Before an edit changes the file `rel` (relative to the root): stores
    /// what is there now (`existing`: its bytes and mode; None for no file).
    pub fn before(&self, existing: Option<(&[u8], Option<u32>)>) -> Result<Before, NotJournaled> {
        self.made()?;
        let Some((bytes, mode)) = existing else {
            return Ok(Before {
                version: None,
                mark: None,
            });
        };
        self.check_size(bytes.len() as u64)?;
        let version = Version::of(bytes, mode);
        let mark = self
            .dir
            .join("pending")
            .join(format!("{}.{}", version.hash, unique()));
        let stored = (|| {
            let _lock = self.lock(false)?;
            let written = self.ensure_blob(&version.hash, bytes)?;
            write_private(&mark, b"")?;
            Ok::<_, io::Error>(written)
        })()
        .map_err(|e| NotJournaled(format!("the journal could not be written: {e}")))?;
        if stored {
            self.estimate.fetch_add(version.size, Ordering::Relaxed);
        }
        Ok(Before {
            version: Some(version),
            mark: Some(mark),
        })
    }

    fn check_size(&self, size: u64) -> Result<(), NotJournaled> {
        if size > self.limits.max_file {
            return Err(NotJournaled(format!(
                "files over {} MB are not journaled (--journal-max-file-mb)",
                self.limits.max_file / (1024 * 1024)
            )));
        }
        Ok(())
    }

    /// After the edit wrote `after` to `rel`: the entry, so that it can be
    /// undone.
    pub fn record(
        self: &Arc<Self>,
        before: Before,
        tool: &str,
        rel: &Path,
        after: &[u8],
        (added, removed): (u64, u64),
    ) -> Result<Entry, NotJournaled> {
        self.check_size(after.len() as u64)?;
        let Some(path) = relative_text(rel) else {
            return Err(NotJournaled("its path is not UTF-8".into()));
        };
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let entry = Entry {
            // Sorted as text, ids are in the order the edits were written.
            id: format!(
                "{:011}{:09}-{}",
                since_epoch.as_secs(),
                since_epoch.subsec_nanos(),
                unique()
            ),
            time: since_epoch.as_secs(),
            tool: tool.to_string(),
            path,
            before: before.version.clone(),
            after: Version::of(after, before.version.as_ref().and_then(|v| v.mode)),
            added,
            removed,
            undone: false,
        };
        let written = (|| {
            let _lock = self.lock(false)?;
            let written = self.ensure_blob(&entry.after.hash, after)?;
            let json = serde_json::to_vec(&entry).map_err(io::Error::other)?;
            write_private(&self.entry_path(&entry.id, false), &json)?;
            Ok::<_, io::Error>(written)
        })()
        .map_err(|e| NotJournaled(format!("the journal could not be written: {e}")))?;
        drop(before);
        if written {
            self.estimate.fetch_add(entry.after.size, Ordering::Relaxed);
        }
        self.prune_if_due();
        Ok(entry)
    }

    /// Prunes on a thread of its own (it reads every entry, which must not
    /// hold up the edit's answer) when the size limit is passed or every
    /// [`PRUNE_EVERY`] entries; here and now when a pruning fell behind to
    /// twice the limit, so the journal's size stays bounded whatever the
    /// pace of edits.
    fn prune_if_due(self: &Arc<Self>) {
        let due = self.since_prune.fetch_add(1, Ordering::Relaxed) + 1 >= PRUNE_EVERY;
        let estimate = self.estimate.load(Ordering::Relaxed);
        let report = |journal: &RootJournal, result: io::Result<()>| {
            if let Err(e) = result {
                tracing::warn!("pruning the journal {}: {e}", journal.dir.display());
            }
        };
        if estimate != u64::MAX && estimate > self.limits.max_bytes.saturating_mul(2) {
            report(self, self.prune());
            return;
        }
        if !(due || estimate > self.limits.max_bytes) || self.pruning.swap(true, Ordering::AcqRel) {
            return;
        }
        let journal = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("journal-prune".into())
            .spawn(move || {
                report(&journal, journal.prune());
                journal.pruning.store(false, Ordering::Release);
            });
        if spawned.is_err() {
            report(self, self.prune());
            self.pruning.store(false, Ordering::Release);
        }
    }

    fn entry_path(&self, id: &str, undone: bool) -> PathBuf {
        let suffix = if undone { "undone" } else { "json" };
        self.dir.join("entries").join(format!("{id}.{suffix}"))
    }

    /// Every entry, oldest first (undone ones too).
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let mut entries = Vec::new();
        let listing = match fs::read_dir(self.dir.join("entries")) {
            Ok(listing) => listing,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(entries),
            Err(e) => return Err(e),
        };
        for item in listing {
            let path = item?.path();
            let undone = match path.extension().and_then(|e| e.to_str()) {
                Some("json") => false,
                Some("undone") => true,
                _ => continue,
            };
            let Ok(bytes) = fs::read(&path) else {
                // Pruned or undone meanwhile.
                continue;
            };
            match serde_json::from_slice::<Entry>(&bytes) {
                Ok(mut entry) => {
                    entry.undone = undone;
                    entries.push(entry);
                }
                Err(e) => tracing::debug!("{}: {e}", path.display()),
            }
        }
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(entries)
    }

    /// The newest edit of `rel` not undone yet.
    pub fn last_of(&self, rel: &Path) -> io::Result<Option<Entry>> {
        let Some(path) = relative_text(rel) else {
            return Ok(None);
        };
        Ok(self
            .entries()?
            .into_iter()
            .rev()
            .find(|e| !e.undone && e.path == path))
    }

    /// The content the journal holds for `version`, checked against its
    /// hash.
    pub fn content(&self, version: &Version) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        File::open(self.blob_path(&version.hash))?
            .take(self.limits.max_file.max(version.size) + 1)
            .read_to_end(&mut bytes)?;
        if hash_hex(&bytes) != version.hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the journal's copy is damaged (its hash does not match)",
            ));
        }
        Ok(bytes)
    }

    /// Marks `entry` undone; false if it already was (or was pruned).
    pub fn mark_undone(&self, entry: &Entry) -> io::Result<bool> {
        match fs::rename(
            self.entry_path(&entry.id, false),
            self.entry_path(&entry.id, true),
        ) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drops entries past the age limit, then the oldest until the blobs
    /// they keep fit the size limit, then every blob nothing names.
    pub fn prune(&self) -> io::Result<()> {
        let _lock = self.lock(true)?;
        let entries = self.entries()?;
        let now = now_secs();
        let pending: Vec<(PathBuf, String, bool)> = list(&self.dir.join("pending"))?
            .into_iter()
            .map(|(path, name, age)| {
                let hash = name.split('.').next().unwrap_or_default().to_string();
                (path, hash, age > STALE)
            })
            .collect();
        // How many kept entries (and live marks) name each blob.
        let mut names: HashMap<&str, (u64, usize)> = HashMap::new();
        let mut total = 0u64;
        let versions = |e: &Entry| {
            e.before
                .iter()
                .chain(std::iter::once(&e.after))
                .map(|v| (v.hash.clone(), v.size))
                .collect::<Vec<_>>()
        };
        let entry_versions: Vec<Vec<(String, u64)>> = entries.iter().map(versions).collect();
        for versions in &entry_versions {
            for (hash, size) in versions {
                let slot = names.entry(hash.as_str()).or_insert((*size, 0));
                if slot.1 == 0 {
                    total += size;
                }
                slot.1 += 1;
            }
        }
        let mut live_marks = Vec::new();
        for (path, hash, stale) in &pending {
            if *stale {
                let _ = fs::remove_file(path);
            } else {
                live_marks.push(hash.as_str());
            }
        }
        let mut dropped = Vec::new();
        let max_age = self.limits.max_age.as_secs();
        for (index, entry) in entries.iter().enumerate() {
            let old = now.saturating_sub(entry.time) > max_age;
            if !old && total <= self.limits.max_bytes {
                break;
            }
            // Never the newest entry of all: the edit just made stays
            // undoable, whatever the limit.
            if index + 1 == entries.len() && !old {
                break;
            }
            dropped.push(entry);
            for (hash, _) in &entry_versions[index] {
                if let Some(slot) = names.get_mut(hash.as_str()) {
                    slot.1 -= 1;
                    if slot.1 == 0 {
                        total -= slot.0;
                    }
                }
            }
        }
        for entry in dropped {
            let _ = fs::remove_file(self.entry_path(&entry.id, entry.undone));
        }
        let mut kept_bytes = 0u64;
        for (path, name, age) in list(&self.dir.join("blobs"))? {
            if name.starts_with('.') {
                if age > STALE {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            let named = names.get(name.as_str()).is_some_and(|slot| slot.1 > 0);
            if named || live_marks.contains(&name.as_str()) {
                kept_bytes += fs::symlink_metadata(&path).map_or(0, |m| m.len());
            } else {
                let _ = fs::remove_file(&path);
            }
        }
        self.estimate.store(kept_bytes, Ordering::Relaxed);
        self.since_prune.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// The blobs' total size on disk now.
    pub fn stored_bytes(&self) -> io::Result<u64> {
        Ok(list(&self.dir.join("blobs"))?
            .iter()
            .map(|(path, _, _)| fs::symlink_metadata(path).map_or(0, |m| m.len()))
            .sum())
    }
}

/// `rel` as the journal writes it: `/` between components.
pub fn relative_text(rel: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join("/"))
}

/// A directory's entries: path, name and age.
fn list(dir: &Path) -> io::Result<Vec<(PathBuf, String, Duration)>> {
    let now = SystemTime::now();
    let mut found = Vec::new();
    for item in fs::read_dir(dir)? {
        let item = item?;
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        let age = item
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        found.push((item.path(), name, age));
    }
    Ok(found)
}

/// What undoing an edit did to the file.
#[derive(Debug)]
pub enum Undone {
    /// The bytes from before the edit are back; the file's metadata now.
    Restored(std::fs::Metadata),
    /// The edit had created the file: it is gone again.
    Removed,
}

/// Why an edit was not undone; the file is as it was.
#[derive(Debug)]
pub enum UndoError {
    /// The file is no longer what the edit wrote: what it wrote, and what
    /// is there now.
    Changed { wrote: Vec<u8>, now: Vec<u8> },
    /// The file was deleted after the edit (the user's `--force` restores
    /// it).
    Deleted,
    /// The journal's copy of the old content is missing or damaged.
    Lost(io::Error),
    /// Reading or writing the file failed.
    Io(io::Error),
}

/// Undoes `entry` on the file `target`, held against other rootbound
/// writers: only if the file is exactly what the edit wrote (or, with
/// `force`, gone), so nothing written since is lost. The entry is then
/// marked undone.
pub fn undo_held(
    journal: &RootJournal,
    guard: &crate::fs::guard::Guard,
    target: &crate::fs::writing::Target,
    held: &mut crate::fs::writing::Held,
    entry: &Entry,
    force: bool,
) -> Result<Undone, UndoError> {
    use crate::fs::writing;
    let current = held.read().map_err(UndoError::Io)?;
    match current {
        None if !force => return Err(UndoError::Deleted),
        None => {}
        Some(existing) if hash_hex(&existing.bytes) != entry.after.hash => {
            let wrote = journal.content(&entry.after).unwrap_or_default();
            return Err(UndoError::Changed {
                wrote,
                now: existing.bytes,
            });
        }
        Some(_) => {}
    }
    let undone = match &entry.before {
        Some(before) => {
            let bytes = journal.content(before).map_err(UndoError::Lost)?;
            let metadata = writing::commit(guard, target, &bytes, held).map_err(UndoError::Io)?;
            Undone::Restored(metadata)
        }
        None => {
            writing::remove(guard, target, held).map_err(UndoError::Io)?;
            Undone::Removed
        }
    };
    journal.mark_undone(entry).map_err(UndoError::Io)?;
    Ok(undone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(limits: Limits) -> (tempfile::TempDir, Arc<RootJournal>) {
        let state = tempfile::tempdir().unwrap();
        let root = PathBuf::from("/some/root");
        let journal = Journal::open(state.path(), limits, std::slice::from_ref(&root));
        let root_journal = Arc::clone(journal.of_root(&root).unwrap());
        (state, root_journal)
    }

    fn edit(journal: &Arc<RootJournal>, before: &[u8], after: &[u8]) -> Entry {
        let started = journal.before(Some((before, Some(0o644)))).unwrap();
        journal
            .record(started, "replace", Path::new("a/b.txt"), after, (1, 1))
            .unwrap()
    }

    #[test]
    fn an_edit_is_found_with_both_contents_and_can_be_marked_undone_once() {
        let (_state, journal) = journal(Limits::default());
        let entry = edit(&journal, b"old\n", b"new\n");
        let found = journal.last_of(Path::new("a/b.txt")).unwrap().unwrap();
        assert_eq!(found.id, entry.id);
        assert_eq!(found.path, "a/b.txt");
        assert_eq!(
            journal.content(found.before.as_ref().unwrap()).unwrap(),
            b"old\n"
        );
        assert_eq!(journal.content(&found.after).unwrap(), b"new\n");
        assert!(journal.mark_undone(&found).unwrap());
        assert!(!journal.mark_undone(&found).unwrap());
        assert!(journal.last_of(Path::new("a/b.txt")).unwrap().is_none());
        assert!(journal.entries().unwrap()[0].undone);
    }

    #[test]
    fn a_damaged_copy_is_refused() {
        let (_state, journal) = journal(Limits::default());
        let entry = edit(&journal, b"old\n", b"new\n");
        let before = entry.before.unwrap();
        std::fs::write(journal.blob_path(&before.hash), b"odd\n").unwrap();
        let e = journal.content(&before).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn pruning_drops_the_oldest_keeps_the_newest_and_what_edits_in_flight_need() {
        let limits = Limits {
            max_bytes: 3000,
            ..Limits::default()
        };
        let (_state, journal) = journal(limits);
        let contents: Vec<Vec<u8>> = (0..6u8).map(|i| vec![b'a' + i; 1000]).collect();
        let mut entries = Vec::new();
        for pair in contents.windows(2) {
            entries.push(edit(&journal, &pair[0], &pair[1]));
        }
        // An edit in flight holds a content no entry names.
        let in_flight = journal.before(Some((&[b'z'; 1000], None))).unwrap();
        journal.prune().unwrap();
        let kept: Vec<String> = journal
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        let last = entries.last().unwrap();
        assert!(kept.contains(&last.id), "the newest edit stays");
        assert!(!kept.contains(&entries[0].id), "the oldest goes");
        assert!(journal.content(&last.after).is_ok());
        assert!(journal.content(in_flight.version().unwrap()).is_ok());
        // Blobs named by kept entries and the edit in flight, no more.
        let named: std::collections::HashSet<String> = journal
            .entries()
            .unwrap()
            .iter()
            .flat_map(|e| e.before.iter().chain([&e.after]).map(|v| v.hash.clone()))
            .chain([in_flight.version().unwrap().hash.clone()])
            .collect();
        let stored: std::collections::HashSet<String> = list(&journal.dir.join("blobs"))
            .unwrap()
            .into_iter()
            .map(|(_, name, _)| name)
            .collect();
        assert_eq!(stored, named);
        assert!(journal.stored_bytes().unwrap() <= 3000 + 1000);
        // Once the edit in flight is gone, its content goes at the next pruning.
        drop(in_flight);
        journal.prune().unwrap();
        assert!(journal.stored_bytes().unwrap() <= 3000);
    }

    #[test]
    fn a_file_over_the_size_limit_is_not_journaled() {
        let (_state, journal) = journal(Limits {
            max_file: 10,
            ..Limits::default()
        });
        let e = journal.before(Some((&[0; 11], None))).unwrap_err();
        assert!(e.0.contains("not journaled"), "{e}");
    }

    #[test]
    fn a_state_directory_inside_a_root_keeps_no_journal() {
        let state = tempfile::tempdir().unwrap();
        let root = state.path().to_path_buf();
        let journal = Journal::open(
            &state.path().join("state"),
            Limits::default(),
            std::slice::from_ref(&root),
        );
        let e = journal.of_root(&root).unwrap_err();
        assert!(e.0.contains("inside the root"), "{e}");
    }

    #[test]
    fn paths_are_written_with_slashes_and_only_plain_components() {
        assert_eq!(
            relative_text(Path::new("a/b/c.txt")).as_deref(),
            Some("a/b/c.txt")
        );
        assert_eq!(relative_text(Path::new("../x")), None);
        assert_eq!(relative_text(Path::new("")), None);
    }
}

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
//! journal/<key>/entries/<n>.log      one append-only log per process: a JSON line per
//!                                    edit (contents up to 16 KiB inside it), per undo and
//!                                    per edit that failed after all
//! journal/<key>/blobs/<sha256>       larger contents by their hash: an edit's result is
//!                                    usually the next edit's starting point, stored once
//! journal/<key>/lock                 shared by writers, exclusive while pruning
//! ```
//!
//! Appending a line costs microseconds where making a file costs about a
//! millisecond on a virtual disk (as much as the edit itself): a small
//! edit's journaling is one `write` to a file that is open already.
//!
//! An edit's line and contents are written before the edit's file is, so
//! what it replaces is never lost; an edit that then fails appends that it
//! did not happen. Several servers (and `rootbound undo`) share the journal
//! safely: each process appends to its own log, whole lines in one `write`;
//! ids are unique (time, process, counter); an edit writes its blobs and
//! its line under the shared lock, and pruning holds it exclusively while
//! it rewrites logs and deletes blobs, so it never sees an edit half made.
//! Nothing is synced to disk: a content whose hash does not match (after a
//! crash) is refused when an undo needs it, a line cut short is ignored,
//! and a blob cut short is written again whole by the next edit that needs
//! it. Directories are made with mode 0700 and files with 0600.

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
    /// The content itself, base64, when it is at most [`INLINE_BYTES`]:
    /// kept in the entry, so that a small edit makes one file, not three.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
}

/// Contents up to this size are kept inside their entry.
const INLINE_BYTES: usize = 16 * 1024;

impl Version {
    fn of(bytes: &[u8], mode: Option<u32>) -> Version {
        use base64::Engine;
        Version {
            hash: hash_hex(bytes),
            size: bytes.len() as u64,
            mode,
            data: (bytes.len() <= INLINE_BYTES)
                .then(|| base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }

    /// Whether the content is kept inside the entry (else in a blob).
    fn inline(&self) -> bool {
        self.data.is_some()
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
        let overlap = overlap(state_dir, roots);
        let roots = roots
            .iter()
            .map(|root| {
                let journal = match &overlap {
                    Some(why) => Err(why.clone()),
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

/// Why a journal in `state_dir` could be changed by a call on `roots`
/// (None: it cannot): the state directory inside a root or a root inside
/// it, compared as written and with every link resolved (the roots are
/// resolved already). A state directory spelled with `..` is refused.
fn overlap(state_dir: &Path, roots: &[PathBuf]) -> Option<String> {
    if state_dir
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Some(format!(
            "the state directory {} is spelled with '..'; name it without",
            state_dir.display()
        ));
    }
    let resolved = resolved_best_effort(state_dir);
    for root in roots {
        for state in [state_dir, resolved.as_path()] {
            if state.starts_with(root) || root.starts_with(state) {
                return Some(format!(
                    "the journal's directory {} {} the root {}, where a tool call could change \
                     it; start the server with --state-dir outside the roots",
                    state_dir.display(),
                    if state.starts_with(root) {
                        "is inside"
                    } else {
                        "holds"
                    },
                    root.display()
                ));
            }
        }
    }
    None
}

/// `path` with every link resolved, as far as it exists (the rest is
/// appended as written).
fn resolved_best_effort(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(mut resolved) = fs::canonicalize(&existing) {
            resolved.extend(rest.iter().rev());
            return resolved;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
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
        let root = PathBuf::from(root);
        // A journal whose directory is not named after its root is not one
        // this program made.
        let named = dir.file_name().and_then(|n| n.to_str()) == Some(&RootJournal::key(&root));
        if !root.is_absolute() || !named {
            tracing::warn!("{} is not a journal rootbound made; skipped", dir.display());
            continue;
        }
        found.push(RootJournal::at(dir, root, limits));
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
    /// This process's idea of the journal's size: what it counted at its
    /// last pruning and what it wrote since.
    estimate: AtomicU64,
    /// Entries this process wrote since it last pruned (another server's
    /// growth and the age limit are caught every [`PRUNE_EVERY`]).
    since_prune: AtomicU64,
    /// Its directories, made at the first edit (a server that edits
    /// nothing leaves nothing behind).
    made: std::sync::OnceLock<Result<(), String>>,
    /// A pruning of this process is under way on its own thread.
    pruning: AtomicBool,
    /// The lock file, held shared while any edit of this process writes
    /// (opened once; the count says how many), so pruning, which holds it
    /// exclusively through another descriptor, sees an edit whole or not.
    shared: std::sync::Mutex<(Option<File>, usize)>,
    /// This process's log of records, made at its first record: appending
    /// to a file is cheap where making one per edit is not (about 1 ms
    /// each on a virtual disk, as much as the edit itself).
    log: std::sync::Mutex<Option<(File, u64)>>,
}

/// A log past this size is left for a new one, so that pruning rewrites
/// or removes a few small files, never one that holds everything.
const LOG_BYTES: u64 = 4 * 1024 * 1024;

/// What pruning needs of an edit: its id, time and contents' names, not
/// the contents (skipped while parsing, never held).
#[derive(Debug, Deserialize)]
struct Brief {
    id: String,
    time: u64,
    before: Option<BriefVersion>,
    after: BriefVersion,
}

#[derive(Debug, Deserialize)]
struct BriefVersion {
    hash: String,
    size: u64,
    #[serde(default)]
    data: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum BriefRecord {
    Edit(Brief),
    Undone(String),
    Discarded(String),
}

/// One log as pruning read it.
struct LogSummary {
    path: PathBuf,
    len: u64,
    /// Each line's id (None: a line that does not parse).
    ids: Vec<Option<String>>,
}

/// One line of a log.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Record {
    /// An edit, written before the edit's file is.
    Edit(Box<Entry>),
    /// The edit with this id was undone.
    Undone(String),
    /// The edit with this id did not happen after all (its write failed).
    Discarded(String),
}

/// Entries a process writes between two prunings at most.
const PRUNE_EVERY: u64 = 64;

/// Temporary blobs and unreadable entries older than this are a crashed
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

/// The content an edit replaces.
#[derive(Debug, Clone, Copy)]
pub struct Content<'a> {
    pub bytes: &'a [u8],
    /// Unix permission bits, where there are any.
    pub mode: Option<u32>,
    /// Its version as the journal already holds it (the session's own last
    /// write of the file, unchanged since): spares hashing it again.
    pub known: Option<&'a Version>,
}

/// An edit's entry, written before the edit's file is (so that what it
/// replaces is never lost); removed again when dropped without
/// [`Recorded::keep`]: the edit did not happen.
#[derive(Debug)]
pub struct Recorded {
    journal: Arc<RootJournal>,
    entry: Option<Entry>,
}

impl Recorded {
    /// The edit happened: the entry stays.
    pub fn keep(mut self) -> Entry {
        let entry = self
            .entry
            .take()
            .unwrap_or_else(|| unreachable!("kept once"));
        self.journal.prune_if_due();
        entry
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            let _ = self.journal.append(&Record::Discarded(entry.id));
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
            estimate: AtomicU64::new(0),
            // The first edit prunes, which counts what is there.
            since_prune: AtomicU64::new(PRUNE_EVERY),
            made: std::sync::OnceLock::new(),
            pruning: AtomicBool::new(false),
            shared: std::sync::Mutex::new((None, 0)),
            log: std::sync::Mutex::new(None),
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
                for sub in ["entries", "blobs"] {
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

    fn open_lock(&self) -> io::Result<File> {
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(self.dir.join("lock"))
    }

    /// Runs `write` under the shared lock.
    fn shared<T>(&self, write: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        {
            let mut shared = self
                .shared
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?;
            if shared.1 == 0 {
                if shared.0.is_none() {
                    shared.0 = Some(self.open_lock()?);
                }
                if let Some(file) = &shared.0 {
                    file.lock_shared()?;
                }
            }
            shared.1 += 1;
        }
        let result = write();
        if let Ok(mut shared) = self.shared.lock() {
            shared.1 -= 1;
            if shared.1 == 0
                && let Some(file) = &shared.0
            {
                let _ = file.unlock();
            }
        }
        result
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        self.dir.join("blobs").join(hash)
    }

    /// Stores `bytes` as the blob of `version` unless it is inline or there
    /// already; the bytes written. Under the shared lock.
    fn ensure_blob(&self, version: &Version, bytes: &[u8]) -> io::Result<u64> {
        if version.inline() {
            return Ok(0);
        }
        let path = self.blob_path(&version.hash);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                if let Err(e) = file.write_all(bytes) {
                    let _ = fs::remove_file(&path);
                    return Err(e);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Another writer's, complete or not (a crash): a short one
                // is written again, whole, under another name and renamed.
                if fs::symlink_metadata(&path).is_ok_and(|m| m.len() == version.size) {
                    return Ok(0);
                }
                write_private(&path, bytes)?;
            }
            Err(e) => return Err(e),
        }
        Ok(version.size)
    }

    /// Whether a file of `size` bytes is journaled.
    pub fn takes(&self, size: u64) -> bool {
        size <= self.limits.max_file
    }

    /// Err when a file of `size` bytes is over the limit for journaling.
    pub fn check_size(&self, size: u64) -> Result<(), NotJournaled> {
        if size > self.limits.max_file {
            return Err(NotJournaled(format!(
                "files over {} MB are not journaled (--journal-max-file-mb)",
                self.limits.max_file / (1024 * 1024)
            )));
        }
        Ok(())
    }

    /// Before an edit writes `after` to `rel` (relative to the root) over
    /// `before` (None: no file): its entry, with both contents stored.
    /// Keep it once the edit is written; dropped, it is removed.
    pub fn record(
        self: &Arc<Self>,
        before: Option<Content<'_>>,
        tool: &str,
        rel: &Path,
        after: &[u8],
        (added, removed): (u64, u64),
    ) -> Result<Recorded, NotJournaled> {
        self.made()?;
        if self.estimate.load(Ordering::Relaxed) > self.limits.max_bytes.saturating_mul(2) {
            // Pruning fell behind: the journal's size stays bounded rather
            // than the edit waiting for it.
            self.prune_if_due();
            return Err(NotJournaled(
                "the journal is over twice its size limit while it is pruned; try again shortly"
                    .into(),
            ));
        }
        if let Some(before) = before {
            self.check_size(before.bytes.len() as u64)?;
        }
        self.check_size(after.len() as u64)?;
        let Some(path) = relative_text(rel) else {
            return Err(NotJournaled("its path is not UTF-8".into()));
        };
        let before_version = before.map(|b| match b.known {
            Some(known) if known.size == b.bytes.len() as u64 => known.clone(),
            _ => Version::of(b.bytes, b.mode),
        });
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
            after: Version::of(after, before_version.as_ref().and_then(|v| v.mode)),
            before: before_version,
            added,
            removed,
            undone: false,
        };
        let written = self
            .shared(|| {
                let mut written = 0;
                if let (Some(version), Some(content)) = (&entry.before, before) {
                    written += self.ensure_blob(version, content.bytes)?;
                }
                written += self.ensure_blob(&entry.after, after)?;
                Ok(written + self.append_unlocked(&Record::Edit(Box::new(entry.clone())))?)
            })
            .map_err(|e| NotJournaled(format!("the journal could not be written: {e}")))?;
        self.estimate.fetch_add(written, Ordering::Relaxed);
        Ok(Recorded {
            journal: Arc::clone(self),
            entry: Some(entry),
        })
    }

    /// Prunes on a thread of its own (it reads every entry, which must never
    /// hold up an answer) when the size limit is passed, every
    /// [`PRUNE_EVERY`] entries, and at the first edit.
    fn prune_if_due(self: &Arc<Self>) {
        let due = self.since_prune.fetch_add(1, Ordering::Relaxed) + 1 >= PRUNE_EVERY;
        let over = self.estimate.load(Ordering::Relaxed) > self.limits.max_bytes;
        if !(due || over) || self.pruning.swap(true, Ordering::AcqRel) {
            return;
        }
        let journal = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("journal-prune".into())
            .spawn(move || {
                if let Err(e) = journal.prune() {
                    tracing::warn!("pruning the journal {}: {e}", journal.dir.display());
                }
                journal.pruning.store(false, Ordering::Release);
            });
        if let Err(e) = spawned {
            tracing::warn!("no thread to prune the journal {}: {e}", self.dir.display());
            self.pruning.store(false, Ordering::Release);
        }
    }

    /// Appends `record` to this process's log, under the shared lock.
    fn append(&self, record: &Record) -> io::Result<u64> {
        self.shared(|| self.append_unlocked(record))
    }

    /// Appends `record` as one line (one `write`, so lines of several
    /// threads never interleave); the caller holds the shared lock. A log
    /// that pruning removed (no name left) is replaced by a new one.
    fn append_unlocked(&self, record: &Record) -> io::Result<u64> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut log = self.log.lock().map_err(|_| io::Error::other("poisoned"))?;
        let gone = match &*log {
            None => true,
            Some((file, len)) => *len > LOG_BYTES || Self::unlinked(file)?,
        };
        if gone {
            let since_epoch = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let name = format!("{}-{}.log", since_epoch.as_nanos(), unique());
            let mut options = fs::OpenOptions::new();
            options.append(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            *log = Some((options.open(self.dir.join("entries").join(name))?, 0));
        }
        let Some((file, len)) = log.as_mut() else {
            return Err(io::Error::other("no log"));
        };
        file.write_all(&line)?;
        *len += line.len() as u64;
        Ok(line.len() as u64)
    }

    /// Whether `file` has no name left.
    fn unlinked(file: &File) -> io::Result<bool> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok(file.metadata()?.nlink() == 0)
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            Ok(false)
        }
    }

    /// Every entry, oldest first (undone ones too), read under the shared
    /// lock: a pruning rewrites logs in place, and a log read half way
    /// through that would lose its marks of undone edits.
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let logs = self.dir.join("entries");
        if !logs.is_dir() {
            return Ok(Vec::new());
        }
        self.shared(|| {
            let mut entries = HashMap::new();
            let mut undone = std::collections::HashSet::new();
            let mut discarded = std::collections::HashSet::new();
            for (path, name, _) in list(&logs)? {
                if !name.ends_with(".log") {
                    continue;
                }
                for_each_line(&path, 0, |line| {
                    match serde_json::from_slice::<Record>(line) {
                        Ok(Record::Edit(entry)) => {
                            entries.insert(entry.id.clone(), *entry);
                        }
                        Ok(Record::Undone(id)) => {
                            undone.insert(id);
                        }
                        Ok(Record::Discarded(id)) => {
                            discarded.insert(id);
                        }
                        Err(_) => {}
                    }
                })?;
            }
            let mut entries: Vec<Entry> = entries
                .into_values()
                .filter(|e| !discarded.contains(&e.id))
                .map(|mut e| {
                    e.undone = undone.contains(&e.id);
                    e
                })
                .collect();
            entries.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(entries)
        })
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
        let is_hash = version.hash.len() == 64
            && version
                .hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !is_hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the journal names its copy by something that is not a SHA-256",
            ));
        }
        let mut bytes = Vec::new();
        if let Some(data) = &version.data {
            use base64::Engine;
            bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        } else {
            let mut options = fs::OpenOptions::new();
            options.read(true);
            // Never a FIFO's endless wait, never a link.
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::custom_flags(
                &mut options,
                libc::O_NONBLOCK | libc::O_NOFOLLOW,
            );
            let file = options.open(self.blob_path(&version.hash))?;
            if !file.metadata()?.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the journal's copy is not a regular file",
                ));
            }
            file.take(self.limits.max_file.max(version.size) + 1)
                .read_to_end(&mut bytes)?;
        }
        if hash_hex(&bytes) != version.hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the journal's copy is damaged (its hash does not match)",
            ));
        }
        Ok(bytes)
    }

    /// Marks `entry` undone.
    pub fn mark_undone(&self, entry: &Entry) -> io::Result<()> {
        self.made().map_err(|e| io::Error::other(e.0))?;
        self.append(&Record::Undone(entry.id.clone())).map(|_| ())
    }

    /// Drops entries past the age limit and, once the journal is over its
    /// size limit, the oldest until what the rest keep (their lines, their
    /// blobs each once) is down to three quarters of it, so that pruning
    /// comes again only after real growth; then every blob nothing names.
    ///
    /// The plan is made from the logs as read without the lock; the lock is
    /// held exclusively only to carry it out: each log rewritten in place
    /// without the dropped entries' lines (a writer's descriptor appends to
    /// the same file after it), and the blobs deleted that neither a kept
    /// entry nor an edit written since names. Edits write their blobs and
    /// their line under the shared lock, so none is half made meanwhile.
    pub fn prune(&self) -> io::Result<()> {
        // The plan, from the logs as they are, without the lock.
        let mut logs = Vec::new();
        let mut briefs: HashMap<String, Brief> = HashMap::new();
        let mut discarded = std::collections::HashSet::new();
        let mut weights: HashMap<String, u64> = HashMap::new();
        for (path, name, age) in list(&self.dir.join("entries"))? {
            if !name.ends_with(".log") {
                // A rewrite's temporary file, left by a process that ended.
                if name.starts_with('.') && age > STALE {
                    let _ = fs::remove_file(&path);
                }
                continue;
            }
            let mut ids = Vec::new();
            let len = for_each_line(&path, 0, |line| {
                let id = match serde_json::from_slice::<BriefRecord>(line) {
                    Ok(BriefRecord::Edit(brief)) => {
                        let id = brief.id.clone();
                        briefs.insert(id.clone(), brief);
                        Some(id)
                    }
                    Ok(BriefRecord::Undone(id)) => Some(id),
                    Ok(BriefRecord::Discarded(id)) => {
                        discarded.insert(id.clone());
                        Some(id)
                    }
                    Err(_) => None,
                };
                if let Some(id) = &id {
                    *weights.entry(id.clone()).or_default() += line.len() as u64 + 1;
                }
                ids.push(id);
            })?;
            logs.push(LogSummary { path, len, ids });
        }
        let mut entries: Vec<&Brief> = briefs
            .values()
            .filter(|b| !discarded.contains(&b.id))
            .collect();
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        let now = now_secs();
        // How many kept entries name each blob, and its size.
        let mut names: HashMap<&str, (u64, usize)> = HashMap::new();
        let mut total = 0u64;
        let entry_blobs: Vec<Vec<(&str, u64)>> = entries
            .iter()
            .map(|e| {
                e.before
                    .iter()
                    .chain([&e.after])
                    .filter(|v| v.data.is_none())
                    .map(|v| (v.hash.as_str(), v.size))
                    .collect()
            })
            .collect();
        for (entry, blobs) in entries.iter().zip(&entry_blobs) {
            total += weights.get(&entry.id).copied().unwrap_or(0);
            for (hash, size) in blobs {
                let slot = names.entry(hash).or_insert((*size, 0));
                if slot.1 == 0 {
                    total += size;
                }
                slot.1 += 1;
            }
        }
        let target = if total > self.limits.max_bytes {
            self.limits.max_bytes / 4 * 3
        } else {
            u64::MAX
        };
        // What goes: dropped entries' lines, discarded edits' lines, and
        // lines that do not parse.
        let mut dropped: std::collections::HashSet<&str> =
            discarded.iter().map(String::as_str).collect();
        let max_age = self.limits.max_age.as_secs();
        for (index, entry) in entries.iter().enumerate() {
            let old = now.saturating_sub(entry.time) > max_age;
            if !old && total <= target {
                break;
            }
            // Never the newest entry of all: the edit just made stays
            // undoable, whatever the limit.
            if index + 1 == entries.len() && !old {
                break;
            }
            dropped.insert(entry.id.as_str());
            total -= weights.get(&entry.id).copied().unwrap_or(0);
            for (hash, _) in &entry_blobs[index] {
                if let Some(slot) = names.get_mut(hash) {
                    slot.1 -= 1;
                    if slot.1 == 0 {
                        total -= slot.0;
                    }
                }
            }
        }
        let goes = |id: &Option<String>| id.as_deref().is_none_or(|id| dropped.contains(id));
        let changed: Vec<&LogSummary> =
            logs.iter().filter(|log| log.ids.iter().any(goes)).collect();
        let blobs = list(&self.dir.join("blobs"))?;
        let unnamed: Vec<&(PathBuf, String, Duration)> = blobs
            .iter()
            .filter(|(_, name, age)| {
                if name.starts_with('.') {
                    *age > STALE
                } else {
                    names.get(name.as_str()).is_none_or(|slot| slot.1 == 0)
                }
            })
            .collect();
        self.estimate.store(total, Ordering::Relaxed);
        self.since_prune.store(0, Ordering::Relaxed);
        if changed.is_empty() && unnamed.is_empty() {
            // Nothing to do: no lock taken, no writer waits.
            return Ok(());
        }
        // Carried out under the lock held exclusively: no edit is half
        // made, no reader reads a log being rewritten.
        let lock = self.open_lock()?;
        lock.lock()?;
        for log in changed {
            let mut keep = Vec::new();
            let mut whole = 0u64;
            for_each_line(&log.path, 0, |line| {
                whole += line.len() as u64 + 1;
                // A line written since the plan is not in it: it stays.
                let id = line_id(line);
                let known = id.as_deref().is_some_and(|id| weights.contains_key(id));
                if !(known && goes(&id)) && id.is_some() {
                    keep.extend_from_slice(line);
                    keep.push(b'\n');
                }
            })?;
            if keep.len() as u64 == whole {
                continue;
            }
            if cfg!(unix) {
                // Replaced whole, never cut in place: a pruning stopped half
                // way (its process ended) leaves the old log or the new one.
                // Its writer, if alive, sees that its file has no name left
                // and starts another log.
                if keep.is_empty() {
                    let _ = fs::remove_file(&log.path);
                } else {
                    write_private(&log.path, &keep)?;
                }
            } else {
                // Windows: a writer could not tell its file was replaced, so
                // the log is rewritten in place.
                let mut file = fs::OpenOptions::new().write(true).open(&log.path)?;
                file.set_len(0)?;
                file.write_all(&keep)?;
            }
        }
        if !unnamed.is_empty() {
            // Blobs named by edits written since the plan stay.
            let mut written_since = std::collections::HashSet::new();
            let mut note = |line: &[u8]| {
                if let Ok(BriefRecord::Edit(brief)) = serde_json::from_slice::<BriefRecord>(line)
                    && !briefs.contains_key(&brief.id)
                {
                    for version in brief.before.iter().chain([&brief.after]) {
                        written_since.insert(version.hash.clone());
                    }
                }
            };
            let planned: HashMap<&Path, u64> =
                logs.iter().map(|l| (l.path.as_path(), l.len)).collect();
            for (path, name, _) in list(&self.dir.join("entries"))? {
                if !name.ends_with(".log") {
                    continue;
                }
                // The part written since the plan; a whole log that is new
                // or was rewritten by another pruning meanwhile.
                let from = planned.get(path.as_path()).copied().unwrap_or(0);
                let now_len = fs::metadata(&path).map_or(0, |m| m.len());
                let from = if now_len < from { 0 } else { from };
                for_each_line(&path, from, &mut note)?;
            }
            for (path, name, _) in unnamed {
                if !written_since.contains(name) {
                    let _ = fs::remove_file(path);
                }
            }
        }
        drop(lock);
        Ok(())
    }

    /// The blobs' total size on disk now.
    #[cfg(test)]
    fn stored_bytes(&self) -> io::Result<u64> {
        Ok(list(&self.dir.join("blobs"))?
            .iter()
            .map(|(path, _, _)| fs::symlink_metadata(path).map_or(0, |m| m.len()))
            .sum())
    }
}

/// Calls `each` with every line of the file at `path` from byte `from` on
/// (without its newline; a last line without one is left out: it is still
/// being written, or was cut short), one line in memory at a time; the
/// bytes read.
fn for_each_line(path: &Path, from: u64, mut each: impl FnMut(&[u8])) -> io::Result<u64> {
    use std::io::{BufRead, Seek};
    let mut file = match File::open(path) {
        Ok(file) => file,
        // Removed by a pruning meanwhile.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    file.seek(io::SeekFrom::Start(from))?;
    let mut reader = io::BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::new();
    let mut read = from;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Ok(read);
        }
        read += n as u64;
        each(&line[..line.len() - 1]);
    }
}

/// The id a log line is about, read from its head without parsing the
/// rest (serde writes an entry's `id` first); None for a line cut short.
fn line_id(line: &[u8]) -> Option<String> {
    if line.last() != Some(&b'}') {
        return None;
    }
    let rest = [
        &b"{\"edit\":{\"id\":\""[..],
        b"{\"undone\":\"",
        b"{\"discarded\":\"",
    ]
    .iter()
    .find_map(|head| line.strip_prefix(*head))?;
    let end = rest.iter().position(|b| *b == b'"')?;
    let id = std::str::from_utf8(&rest[..end]).ok()?;
    id.bytes()
        .all(|b| b.is_ascii_digit() || b == b'-')
        .then(|| id.to_string())
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
    /// The path leads to another file than the one the edit wrote (a link
    /// put in its place).
    Moved,
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
    // The name the edit wrote, not a link that leads elsewhere now.
    let rel = target.resolved().real().strip_prefix(journal.root()).ok();
    if rel.and_then(relative_text).as_deref() != Some(entry.path.as_str()) {
        return Err(UndoError::Moved);
    }
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
            // A file brought back (--force) gets its old permission bits,
            // not the defaults of a new file; one still there keeps its own.
            let mode = held.metadata().is_none().then_some(before.mode).flatten();
            let metadata = writing::commit_with_mode(guard, target, &bytes, held, mode)
                .map_err(UndoError::Io)?;
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

    fn content(bytes: &[u8]) -> Content<'_> {
        Content {
            bytes,
            mode: Some(0o644),
            known: None,
        }
    }

    fn edit(journal: &Arc<RootJournal>, before: &[u8], after: &[u8]) -> Entry {
        journal
            .record(
                Some(content(before)),
                "replace",
                Path::new("a/b.txt"),
                after,
                (1, 1),
            )
            .unwrap()
            .keep()
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
        journal.mark_undone(&found).unwrap();
        assert!(journal.last_of(Path::new("a/b.txt")).unwrap().is_none());
        assert!(journal.entries().unwrap()[0].undone);
    }

    #[test]
    fn a_damaged_copy_is_refused() {
        let (_state, journal) = journal(Limits::default());
        let big = vec![b'x'; INLINE_BYTES + 1];
        let entry = edit(&journal, &big, b"new\n");
        let before = entry.before.unwrap();
        assert!(!before.inline());
        std::fs::write(
            journal.blob_path(&before.hash),
            vec![b'y'; INLINE_BYTES + 1],
        )
        .unwrap();
        let e = journal.content(&before).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn an_entry_dropped_before_it_is_kept_is_gone() {
        let (_state, journal) = journal(Limits::default());
        let recorded = journal
            .record(Some(content(b"a")), "replace", Path::new("f"), b"b", (1, 1))
            .unwrap();
        assert_eq!(journal.entries().unwrap().len(), 1);
        drop(recorded);
        assert!(journal.entries().unwrap().is_empty());
    }

    #[test]
    fn pruning_drops_the_oldest_keeps_the_newest_and_every_blob_a_kept_entry_names() {
        let size = INLINE_BYTES + 1000;
        let limits = Limits {
            max_bytes: 3 * size as u64,
            ..Limits::default()
        };
        let (_state, journal) = journal(limits);
        let contents: Vec<Vec<u8>> = (0..6u8).map(|i| vec![b'a' + i; size]).collect();
        let mut entries = Vec::new();
        for pair in contents.windows(2) {
            entries.push(edit(&journal, &pair[0], &pair[1]));
        }
        journal.prune().unwrap();
        let kept = journal.entries().unwrap();
        let ids: Vec<&String> = kept.iter().map(|e| &e.id).collect();
        let last = entries.last().unwrap();
        assert!(ids.contains(&&last.id), "the newest edit stays");
        assert!(!ids.contains(&&entries[0].id), "the oldest goes");
        assert!(journal.content(&last.after).is_ok());
        assert!(journal.content(last.before.as_ref().unwrap()).is_ok());
        let named: std::collections::HashSet<String> = kept
            .iter()
            .flat_map(|e| e.before.iter().chain([&e.after]).map(|v| v.hash.clone()))
            .collect();
        let stored: std::collections::HashSet<String> = list(&journal.dir.join("blobs"))
            .unwrap()
            .into_iter()
            .map(|(_, name, _)| name)
            .collect();
        assert_eq!(stored, named);
        assert!(journal.stored_bytes().unwrap() <= 3 * size as u64);
    }

    #[test]
    fn small_contents_live_in_their_entry() {
        let (_state, journal) = journal(Limits::default());
        let entry = edit(&journal, b"old\n", b"new\n");
        assert!(entry.after.inline() && entry.before.as_ref().unwrap().inline());
        assert_eq!(journal.stored_bytes().unwrap(), 0);
        assert_eq!(journal.content(&entry.after).unwrap(), b"new\n");
    }

    #[test]
    fn a_file_over_the_size_limit_is_not_journaled() {
        let (_state, journal) = journal(Limits {
            max_file: 10,
            ..Limits::default()
        });
        let e = journal
            .record(
                Some(content(&[0; 11])),
                "replace",
                Path::new("f"),
                b"x",
                (0, 0),
            )
            .unwrap_err();
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

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn a_lines_id_is_read_from_its_head_and_a_cut_line_has_none() {
        let entry = Entry {
            id: "01795705933893381874-0000023374-000102".into(),
            time: 1,
            tool: "replace".into(),
            path: "a".into(),
            before: None,
            after: Version::of(b"x", None),
            added: 1,
            removed: 0,
            undone: false,
        };
        let line = serde_json::to_vec(&Record::Edit(Box::new(entry.clone()))).unwrap();
        assert_eq!(line_id(&line).as_deref(), Some(entry.id.as_str()));
        assert_eq!(line_id(&line[..line.len() / 2]), None);
        let undone = serde_json::to_vec(&Record::Undone(entry.id.clone())).unwrap();
        assert_eq!(line_id(&undone).as_deref(), Some(entry.id.as_str()));
        let discarded = serde_json::to_vec(&Record::Discarded(entry.id.clone())).unwrap();
        assert_eq!(line_id(&discarded).as_deref(), Some(entry.id.as_str()));
        assert_eq!(line_id(br#"{"edit":{"id":"../x"}}"#), None);
    }
}

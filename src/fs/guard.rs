//! The path guard: the one place that decides whether a path may be touched.
//!
//! Every tool hands the raw path string from its request to [`Guard::resolve`]
//! and gets back either a [`Resolved`] path that lies inside one of the roots
//! or a [`Refusal`]. Resolution follows the kernel's own rules (symlinks are
//! followed, `..` applies to the directory actually reached on Unix and to
//! the spelling on Windows, as each kernel does), so what we check is what
//! the kernel would open. On top of that:
//!
//! - a symlink inside a root must lead somewhere inside the roots, and must
//!   not dangle or loop (a dangling link could later be written through);
//!   Windows junctions count as symlinks;
//! - containment is decided on whole path components, never string prefixes
//!   (`/data_evil` is not inside `/data`), case-insensitively on Windows;
//! - files are opened beneath a handle of the root with no symlink followed,
//!   so a component swapped for a symlink between the check and the open
//!   cannot lead outside: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` on
//!   Linux, one `openat` with `O_NOFOLLOW_ANY` on macOS, an `O_NOFOLLOW`
//!   `openat` per component elsewhere, and on Windows an `NtCreateFile`
//!   per component relative to its parent's handle, never through a reparse
//!   point, with the opened handle's final path checked against the guard's
//!   (`unix.rs`, `windows.rs`);
//! - a [`Resolved`] path can only be made here and only opened here: its
//!   fields are private, and the rest of the crate never opens a file by
//!   name (`tests/tidy.rs` checks that no code outside `fs/` calls the file
//!   system);
//! - every open is non-blocking and regular-files-only where a file is
//!   read, so a FIFO, socket or device is refused instead of hanging the
//!   server. That includes the files the server reads for itself
//!   ([`Guard::read_own_file`]: `.gitignore`, `.geminiignore`, ...).

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;

pub use sys::{DirEntries, DirHandle, Listing};

/// A file opened for reading, and its metadata as opened.
pub type OpenedFile = (File, Metadata);

/// Longest path (in bytes) a request may name.
pub const MAX_PATH_BYTES: usize = 4096;

/// Which root a path lies in. Only the guard makes one, from its own roots,
/// and it holds the root itself: a root id always names a root, so no
/// lookup can miss and nothing falls back to another directory.
#[derive(Debug, Clone)]
pub struct RootId(Arc<Root>);

impl RootId {
    /// The root's canonical path.
    pub fn path(&self) -> &Path {
        &self.0.path
    }
}

impl PartialEq for RootId {
    fn eq(&self, other: &RootId) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for RootId {}

/// One configured root: its canonical path and a handle kept open for
/// race-safe opening beneath it.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    dir: DirHandle,
    /// The spelling the root was given in, made absolute, when it differs
    /// from `path` (it goes through a link): requests may spell paths
    /// beneath it.
    #[cfg(unix)]
    alias: Option<PathBuf>,
    /// The root as Windows compares paths (case-insensitively).
    #[cfg(windows)]
    win: super::winpath::WinPath,
}

/// The set of roots, canonicalised once at start.
#[derive(Debug)]
pub struct Guard {
    /// The first root: relative paths are taken from it. A guard has one by
    /// construction ([`Guard::new`] refuses none).
    primary: Arc<Root>,
    /// Every root, the primary first.
    roots: Vec<Arc<Root>>,
    /// Where what a call leaves behind is not protected (`--unprotect`).
    unprotected: crate::fs::protected::Unprotected,
    /// Cleared the first time the kernel refuses the one-call open beneath a
    /// root (`openat2` on Linux, `O_NOFOLLOW_ANY` on macOS); opens then take
    /// the component-by-component walk.
    #[cfg(unix)]
    one_call_open: std::sync::atomic::AtomicBool,
}

/// Whether the resolved path exists, and what it is if it does.
#[derive(Debug, Clone)]
pub enum Existence {
    /// The path exists; metadata of the final, non-symlink object.
    Exists(Metadata),
    /// Nothing exists at the path; its parents up to the first missing one do.
    Missing,
}

/// A path that passed the guard. Only the guard makes one, and only the
/// guard opens one: the fields are private.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The absolute request path, normalised lexically: what messages show.
    display: PathBuf,
    /// Where the path really is, all symlinks followed.
    real: PathBuf,
    /// The root that contains `real` (the deepest, for nested roots).
    root: RootId,
    existence: Existence,
}

impl Resolved {
    /// The absolute request path, normalised lexically: what messages show.
    pub fn display(&self) -> &Path {
        &self.display
    }

    pub fn into_display(self) -> PathBuf {
        self.display
    }

    /// Where the path really is, all symlinks followed: for matching rules
    /// against and for naming things, never for opening (the guard opens).
    pub fn real(&self) -> &Path {
        &self.real
    }

    pub fn root(&self) -> &RootId {
        &self.root
    }

    pub fn existence(&self) -> &Existence {
        &self.existence
    }

    pub fn metadata(&self) -> Option<&Metadata> {
        match &self.existence {
            Existence::Exists(m) => Some(m),
            Existence::Missing => None,
        }
    }

    pub fn exists(&self) -> bool {
        matches!(self.existence, Existence::Exists(_))
    }

    pub fn is_dir(&self) -> bool {
        self.metadata().is_some_and(Metadata::is_dir)
    }
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The request itself is malformed (empty, NUL byte, too long, bad URI).
    Invalid(String),
    /// The path leads outside the roots, or through a symlink that leaves
    /// them, dangles or loops. `display` is the normalised request path.
    Outside { display: PathBuf, why: OutsideWhy },
    /// The path cannot be resolved for another reason (permission denied on
    /// a directory, `..` after a missing directory, ...).
    Unresolvable { display: PathBuf, reason: String },
}

/// The detail behind [`Refusal::Outside`], for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutsideWhy {
    Resolved,
    SymlinkLeaves,
    SymlinkDangles,
    SymlinkLoops,
}

/// Errors building the guard at start-up.
#[derive(Debug)]
pub enum RootError {
    /// No root was given.
    None,
    Missing(PathBuf),
    NotADirectory(PathBuf),
    Io(PathBuf, io::Error),
    /// An `--unprotect` path, as given, that lies in no root.
    UnprotectOutside(String),
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootError::None => write!(f, "no root directory was given"),
            RootError::Missing(p) => write!(f, "root directory does not exist: {}", p.display()),
            RootError::NotADirectory(p) => write!(f, "root is not a directory: {}", p.display()),
            RootError::Io(p, e) => write!(f, "cannot open root {}: {e}", p.display()),
            RootError::UnprotectOutside(raw) => {
                write!(f, "--unprotect {raw}: not a path inside a root")
            }
        }
    }
}

impl std::error::Error for RootError {}

impl Guard {
    /// Canonicalises every root. A root that does not exist, or is not a
    /// directory, is an error naming it; so is an empty list. Duplicates are
    /// dropped.
    pub fn new<P: AsRef<Path>>(roots: &[P]) -> Result<Guard, RootError> {
        let mut out: Vec<Arc<Root>> = Vec::new();
        for given in roots {
            let root = sys::open_root(given.as_ref())?;
            if out.iter().any(|r| r.path == root.path) {
                continue;
            }
            out.push(Arc::new(root));
        }
        let primary = out.first().cloned().ok_or(RootError::None)?;
        Ok(Guard {
            primary,
            roots: out,
            unprotected: crate::fs::protected::Unprotected::default(),
            #[cfg(unix)]
            one_call_open: std::sync::atomic::AtomicBool::new(sys::one_call_open_available()),
        })
    }

    /// The same guard as a kernel without the one-call open would see it:
    /// every open takes the portable component-by-component walk, the one
    /// the BSDs and macOS before 11 use. Lets Linux tests cover that path too.
    #[cfg(all(test, unix))]
    pub(crate) fn stepwise_only(self) -> Guard {
        self.one_call_open
            .store(false, std::sync::atomic::Ordering::Relaxed);
        self
    }

    /// Lifts the protection of what a call leaves behind at and below each
    /// of `paths` (relative to the primary root, or absolute; each must lie
    /// in a root). Err names a path outside every root.
    pub fn unprotect(&mut self, paths: &[String]) -> Result<(), RootError> {
        for raw in paths {
            let path = self
                .absolute(raw)
                .map_err(|_| RootError::UnprotectOutside(raw.clone()))?;
            // The longest existing part is canonicalised, as the roots are.
            let mut existing = path.as_path();
            let mut rest = Vec::new();
            let canonical = loop {
                if let Ok(c) = std::fs::canonicalize(existing) {
                    break c;
                }
                match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_os_string());
                        existing = parent;
                    }
                    _ => break path.clone(),
                }
            };
            let full = rest.iter().rev().fold(canonical, |p, n| p.join(n));
            if !self.contains(&full) {
                return Err(RootError::UnprotectOutside(raw.clone()));
            }
            self.unprotected.0.push(full);
        }
        Ok(())
    }

    /// Where what a call leaves behind is not protected.
    pub fn unprotected(&self) -> &crate::fs::protected::Unprotected {
        &self.unprotected
    }

    /// The canonical roots, primary first.
    pub fn roots(&self) -> impl ExactSizeIterator<Item = &Path> {
        self.roots.iter().map(|r| r.path.as_path())
    }

    /// The first root, which relative paths are taken from.
    pub fn primary(&self) -> &Path {
        &self.primary.path
    }

    /// The roots joined with ", ", as error messages show them.
    pub fn roots_display(&self) -> String {
        let parts: Vec<String> = self.roots().map(|p| p.display().to_string()).collect();
        parts.join(", ")
    }

    /// The root that `path` is spelled beneath, compared by whole
    /// components (never string prefixes; case-insensitively on Windows).
    /// Nested roots give the deepest. This is the one place that picks a
    /// root for a path.
    pub fn root_of(&self, path: &Path) -> Option<RootId> {
        self.deepest_root_holding(path).map(|r| RootId(r.clone()))
    }

    /// The root that contains `real` (the deepest, for nested roots).
    pub fn containing_root(&self, real: &Path) -> Option<&Path> {
        self.deepest_root_holding(real).map(|r| r.path.as_path())
    }

    fn deepest_root_holding(&self, path: &Path) -> Option<&Arc<Root>> {
        self.roots
            .iter()
            .filter(|r| r.holds(path))
            .max_by_key(|r| r.path.as_os_str().len())
    }

    pub fn contains(&self, real: &Path) -> bool {
        self.root_of(real).is_some()
    }

    /// How messages name a path "relatively": relative to the primary root
    /// (what relative request paths resolve against), `.` for the root
    /// itself, and the absolute path for anything outside the primary root.
    pub fn relative_display(&self, path: &Path) -> String {
        match sys::beneath(path, self.primary()) {
            Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Some(rel) => rel.to_string_lossy().into_owned(),
            None => path.display().to_string(),
        }
    }

    /// Checks a raw request path and resolves it. This is the only gate.
    pub fn resolve(&self, raw: &str) -> Result<Resolved, Refusal> {
        let absolute = self.absolute(raw)?;
        self.resolve_absolute(&absolute)
    }

    /// Resolves an already absolute path (used by walkers for their entries
    /// and by `resolve`).
    pub fn resolve_absolute(&self, absolute: &Path) -> Result<Resolved, Refusal> {
        self.sys_resolve_absolute(absolute)
    }

    /// Validates the raw string and makes it absolute against the primary
    /// root (on Windows also: refuses what Windows would not open as
    /// spelled, see `fs/winpath.rs`).
    pub fn absolute(&self, raw: &str) -> Result<PathBuf, Refusal> {
        let decoded = decode_request_path(raw)?;
        self.sys_absolute(&decoded)
    }

    /// Opens an existing regular file for reading, race-safely: the open
    /// cannot follow a symlink planted after `resolve` checked the path.
    /// FIFOs, sockets and devices are refused without blocking. Returns the
    /// file and its metadata as opened.
    pub fn open_read(&self, resolved: &Resolved) -> io::Result<(File, Metadata)> {
        if let Some(m) = resolved.metadata()
            && !m.is_file()
        {
            return Err(sys::not_regular(m));
        }
        let (root, rel) = self.root_and_rel(resolved)?;
        self.open_beneath(root, rel)
    }

    /// Opens the regular file `rel` beneath `root` for reading, following
    /// no symlink on the way (see the module's comment for how, per
    /// platform), and without blocking: a FIFO, socket or device is refused.
    /// For walker entries, which were checked by name: a file swapped for a
    /// symlink since then fails to open instead of being followed.
    pub fn open_beneath(&self, root: &RootId, rel: &Path) -> io::Result<(File, Metadata)> {
        let root = &root.0;
        let file = self.open_fd_beneath(root, rel, ReadKind::File)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(sys::not_regular(&meta));
        }
        Ok((file, meta))
    }

    /// Opens a file a walker found at `path` (spelled beneath a root, as
    /// walkers build their paths). A plain file opens beneath its root with
    /// no symlinks followed; a file symlink the walker reported is resolved
    /// again and its target opened the same way, so a link retargeted since
    /// the walk cannot lead outside the roots.
    pub fn open_walked(&self, path: &Path) -> io::Result<(File, Metadata)> {
        let root = self.root_of(path).ok_or_else(outside_error)?;
        let rel = sys::beneath(path, root.path()).ok_or_else(outside_error)?;
        match self.open_beneath(&root, rel) {
            Err(e) if sys::is_link_error(&e) => {
                let resolved = self.resolve_absolute(path).map_err(|_| outside_error())?;
                self.open_read(&resolved)
            }
            other => other,
        }
    }

    /// The entries of a directory that passed the guard, read through a
    /// handle opened beneath its root (for listing).
    pub fn read_dir(&self, resolved: &Resolved) -> io::Result<DirEntries> {
        let (root, rel) = self.root_and_rel(resolved)?;
        let root = &root.0;
        let dir = self.open_fd_beneath(root, rel, ReadKind::Directory)?;
        DirEntries::new(dir)
    }

    /// Lists the directory a walker reached at `path` (spelled beneath a
    /// root, as walkers build their paths), opened beneath its root with no
    /// symlink followed: a directory swapped for a symlink since the walk
    /// saw it is not listed (the open fails). The listing keeps the
    /// directory's handle, so its entries can be looked at and its ignore
    /// file read without following symlinks or walking the path again.
    pub fn list_walked_dir(&self, path: &Path) -> io::Result<Listing> {
        let root = self.root_of(path).ok_or_else(outside_error)?;
        let rel = sys::beneath(path, root.path()).ok_or_else(outside_error)?;
        let root = &root.0;
        let dir = self.open_fd_beneath(root, rel, ReadKind::Directory)?;
        Listing::from_dir(dir)
    }

    /// Reads a file the server needs for itself (`.gitignore`,
    /// `.geminiignore`, `.git/info/exclude`), never following a symlink and
    /// never blocking: beneath its root when it lies in one, else (a git
    /// work tree's top above the root) by an absolute path in which no
    /// symlink is followed. Ok(None) when there is no such file; an error
    /// when it is not a regular file or is larger than `max_bytes`.
    pub fn read_own_file(&self, path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
        let opened = match self.root_of(path) {
            Some(root) => {
                let rel = sys::beneath(path, root.path()).ok_or_else(outside_error)?;
                self.open_beneath(&root, rel)
            }
            None => sys::open_absolute_no_symlinks(path),
        };
        match opened {
            Ok((file, _)) => read_bounded(file, max_bytes).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound || sys::is_not_dir_error(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A handle on each root's directory, with its path (for the sweep of
    /// stale temporary files at start); roots that cannot be opened now are
    /// left out.
    #[cfg_attr(windows, allow(dead_code))]
    pub fn root_dirs(&self) -> Vec<(DirHandle, PathBuf)> {
        self.roots
            .iter()
            .filter_map(|root| {
                let dir = self.sys_open_dir_chain(root, &[], false).ok()?;
                Some((dir, root.path.clone()))
            })
            .collect()
    }

    /// The error `open_read` gives for a file that is not regular (a FIFO,
    /// a socket, a device, a directory), for opens made outside the guard
    /// relative to a directory it opened.
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn not_regular(meta: &Metadata) -> io::Error {
        sys::not_regular(meta)
    }

    /// For writing: opens the directory that holds `resolved`, walking down
    /// from the root's handle one component at a time without following any
    /// symlink, and creating missing directories on the way when `create` is
    /// set. A component swapped for a symlink after `resolve` fails the walk
    /// instead of leading outside. Returns the directory and the file name.
    pub fn open_parent_dir(
        &self,
        resolved: &Resolved,
        create: bool,
    ) -> io::Result<(DirHandle, OsString)> {
        let (root, rel) = self.root_and_rel(resolved)?;
        let root = &root.0;
        let mut names: Vec<&OsStr> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => names.push(n),
                _ => return Err(io::Error::other("resolved path is not canonical")),
            }
        }
        let Some(file_name) = names.pop() else {
            return Err(sys::is_a_directory_error());
        };
        let dir = self.sys_open_dir_chain(root, &names, create)?;
        Ok((dir, file_name.to_os_string()))
    }

    /// Whether there is an entry at `path` (a symlink counts as itself;
    /// nothing is followed, nothing opened but its directory): the probe
    /// for `.git`. Asked of a handle of the directory that holds it, opened
    /// beneath its root with no symlink followed (above the roots, from
    /// `/` with none followed); false for anything outside the roots and
    /// their ancestors, whatever is there. There is no door that asks by
    /// path: a directory swapped for an outward link would answer for the
    /// outside.
    pub fn has_entry(&self, path: &Path) -> bool {
        self.sys_has_entry(path)
    }

    /// The root a resolved path lies in, and the path relative to it.
    fn root_and_rel<'a>(&'a self, resolved: &'a Resolved) -> io::Result<(&'a RootId, &'a Path)> {
        let rel = sys::beneath(&resolved.real, resolved.root.path())
            .ok_or_else(|| io::Error::other("resolved path is not beneath its root"))?;
        Ok((&resolved.root, rel))
    }

    /// Opens `rel` beneath `root` without following any symlink, read-only
    /// and non-blocking.
    fn open_fd_beneath(&self, root: &Root, rel: &Path, kind: ReadKind) -> io::Result<File> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        self.sys_open_beneath(root, rel, kind)
    }
}

/// What an open is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadKind {
    File,
    Directory,
}

/// Reads a regular file of at most `max_bytes`; anything else is an error.
fn read_bounded(file: File, max_bytes: u64) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(sys::not_regular(&meta));
    }
    if meta.len() > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it is {} bytes, more than the {max_bytes} read", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The size can change under us: read no more than the limit.
    io::Read::read_to_end(&mut io::Read::take(file, max_bytes), &mut bytes)?;
    Ok(bytes)
}

/// One directory entry: its name and the type the directory reports.
#[derive(Debug)]
pub struct DirItem {
    pub name: OsString,
    pub kind: EntryKind,
}

/// An entry's type as its directory reports it (no symlink followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Directory,
    File,
    /// A symlink (on Windows also a junction).
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

fn outside_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the path is outside the workspace roots",
    )
}

/// Decodes a `file://` URI and rejects empty, blank, NUL-containing and
/// over-long paths.
pub fn decode_request_path(raw: &str) -> Result<String, Refusal> {
    let decoded = if let Some(rest) = raw.strip_prefix("file://") {
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(Refusal::Invalid(format!(
                "Unsupported file URI '{raw}': only local file:///absolute/path URIs are accepted."
            )));
        }
        let bytes: Vec<u8> = percent_decode_str(rest).collect();
        String::from_utf8(bytes).map_err(|_| {
            Refusal::Invalid(format!(
                "The file URI '{raw}' does not decode to UTF-8 text."
            ))
        })?
    } else {
        raw.to_string()
    };
    if decoded.trim().is_empty() {
        return Err(Refusal::Invalid(
            "The path must be a non-empty string.".into(),
        ));
    }
    if decoded.contains('\0') {
        return Err(Refusal::Invalid(
            "The path must not contain NUL bytes.".into(),
        ));
    }
    if decoded.len() > MAX_PATH_BYTES {
        return Err(Refusal::Invalid(format!(
            "The path is {} bytes long; at most {MAX_PATH_BYTES} bytes are accepted.",
            decoded.len()
        )));
    }
    Ok(decoded)
}

/// True if any component of `path` is exactly `name` (on Windows: the same
/// name to Windows, whatever its case).
pub fn has_component(path: &Path, name: &str) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if sys::same_name(n, name)))
}

#[cfg(all(test, unix))]
use unix::normalize_lexically;
#[cfg(all(test, unix))]
mod tests;
#[cfg(all(test, windows))]
mod windows_tests;

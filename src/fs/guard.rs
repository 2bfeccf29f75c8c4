//! The path guard: the one place that decides whether a path may be touched.
//!
//! Every tool hands the raw path string from its request to [`Guard::resolve`]
//! and gets back either a [`Resolved`] path that lies inside one of the roots
//! or a [`Refusal`]. Resolution follows the kernel's own rules (symlinks are
//! followed, `..` applies to the directory actually reached), so what we check
//! is what the kernel would open. On top of that:
//!
//! - a symlink inside a root must lead somewhere inside the roots, and must
//!   not dangle or loop (a dangling link could later be written through);
//! - containment is decided on whole path components, never string prefixes
//!   (`/data_evil` is not inside `/data`);
//! - files are opened through a directory handle of the root with
//!   `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a component swapped
//!   for a symlink between the check and the open cannot lead outside;
//! - a [`Resolved`] path can only be made here and only opened here: its
//!   fields are private, and the rest of the crate never opens a file by
//!   name (`tests/tidy.rs` checks that no code outside `fs/` calls the file
//!   system);
//! - every open is non-blocking and regular-files-only where a file is
//!   read, so a FIFO, socket or device is refused instead of hanging the
//!   server. That includes the files the server reads for itself
//!   ([`Guard::read_own_file`]: `.gitignore`, `.geminiignore`, ...).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use percent_encoding::percent_decode_str;

/// Longest path (in bytes) a request may name.
pub const MAX_PATH_BYTES: usize = 4096;

/// How many symlinks one resolution may follow before it counts as a loop
/// (the kernel's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Which root a path lies in: an index into the guard's roots, only made by
/// the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootId(usize);

/// One configured root: its canonical path and a handle kept open for
/// race-safe opening beneath it.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    dir: OwnedFd,
}

/// The set of roots, canonicalised once at start.
#[derive(Debug)]
pub struct Guard {
    roots: Vec<Root>,
    /// Cleared the first time the kernel says it has no `openat2`.
    openat2_works: AtomicBool,
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

    pub fn root(&self) -> RootId {
        self.root
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
    Missing(PathBuf),
    NotADirectory(PathBuf),
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootError::Missing(p) => write!(f, "root directory does not exist: {}", p.display()),
            RootError::NotADirectory(p) => write!(f, "root is not a directory: {}", p.display()),
            RootError::Io(p, e) => write!(f, "cannot open root {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for RootError {}

impl Guard {
    /// Canonicalises every root. A root that does not exist, or is not a
    /// directory, is an error naming it. Duplicates are dropped.
    pub fn new<P: AsRef<Path>>(roots: &[P]) -> Result<Guard, RootError> {
        let mut out: Vec<Root> = Vec::new();
        for given in roots {
            let given = given.as_ref();
            let path = std::fs::canonicalize(given).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => RootError::Missing(given.to_path_buf()),
                _ => RootError::Io(given.to_path_buf(), e),
            })?;
            if !path.is_dir() {
                return Err(RootError::NotADirectory(given.to_path_buf()));
            }
            if out.iter().any(|r| r.path == path) {
                continue;
            }
            let dir = open_dir_handle(&path).map_err(|e| RootError::Io(given.to_path_buf(), e))?;
            out.push(Root { path, dir });
        }
        Ok(Guard {
            roots: out,
            openat2_works: AtomicBool::new(true),
        })
    }

    /// The canonical roots, primary first.
    pub fn roots(&self) -> impl ExactSizeIterator<Item = &Path> {
        self.roots.iter().map(|r| r.path.as_path())
    }

    pub fn primary(&self) -> &Path {
        // `Guard::new` is only ever called with at least one root by the CLI;
        // fall back to "/" rather than panic if a library user passes none.
        self.roots
            .first()
            .map_or(Path::new("/"), |r| r.path.as_path())
    }

    /// The roots joined with ", ", as error messages show them.
    pub fn roots_display(&self) -> String {
        let parts: Vec<String> = self.roots().map(|p| p.display().to_string()).collect();
        parts.join(", ")
    }

    /// The root that `path` is spelled beneath, compared by whole
    /// components (never string prefixes). Nested roots give the deepest.
    /// This is the one place that picks a root for a path.
    pub fn root_of(&self, path: &Path) -> Option<RootId> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| path.starts_with(&r.path))
            .max_by_key(|(_, r)| r.path.as_os_str().len())
            .map(|(i, _)| RootId(i))
    }

    /// The canonical path of a root.
    pub fn root_path(&self, root: RootId) -> &Path {
        // A RootId is only made from this guard's own roots.
        self.roots
            .get(root.0)
            .map_or(Path::new("/"), |r| r.path.as_path())
    }

    /// The root that contains `real` (the deepest, for nested roots).
    pub fn containing_root(&self, real: &Path) -> Option<&Path> {
        self.root_of(real).map(|id| self.root_path(id))
    }

    pub fn contains(&self, real: &Path) -> bool {
        self.root_of(real).is_some()
    }

    /// How messages name a path "relatively": relative to the primary root
    /// (what relative request paths resolve against), `.` for the root
    /// itself, and the absolute path for anything outside the primary root.
    pub fn relative_display(&self, path: &Path) -> String {
        match path.strip_prefix(self.primary()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.display().to_string(),
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
        let display = normalize_lexically(absolute);
        if let Some(fast) = self.resolve_without_symlinks(absolute, &display) {
            return Ok(fast);
        }
        let mut hops = 0;
        let (real, meta) = self
            .resolve_real(absolute, &mut hops)
            .map_err(|fault| fault.into_refusal(&display))?;
        let Some(root) = self.root_of(&real) else {
            return Err(Refusal::Outside {
                display,
                why: OutsideWhy::Resolved,
            });
        };
        let existence = match meta {
            Some(m) => Existence::Exists(m),
            None => Existence::Missing,
        };
        Ok(Resolved {
            display,
            real,
            root,
            existence,
        })
    }

    /// The common case in one system call: a path spelled below a root, with
    /// no `..` and no symlink on the way, that exists. `openat2` with
    /// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` proves all three at once; any
    /// other case (a symlink, a missing component, no openat2) returns None
    /// and takes the component-by-component walk.
    fn resolve_without_symlinks(&self, absolute: &Path, display: &Path) -> Option<Resolved> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        if !cfg!(target_os = "linux") || !self.openat2_works.load(Ordering::Relaxed) {
            return None;
        }
        let bytes = absolute.as_os_str().as_encoded_bytes();
        if bytes.ends_with(b"/") || bytes.ends_with(b"/.") {
            return None;
        }
        let root_index = self.root_of(absolute)?;
        let root = self.roots.get(root_index.0)?;
        let rel = absolute.strip_prefix(&root.path).ok()?;
        let mut real = root.path.clone();
        for c in rel.components() {
            match c {
                Component::Normal(n) => real.push(n),
                Component::CurDir => {}
                _ => return None,
            }
        }
        if real == root.path {
            return None;
        }
        let rel = real.strip_prefix(&root.path).ok()?;
        let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let fd = rustix::fs::openat2(&root.dir, rel, flags, Mode::empty(), resolve).ok()?;
        let meta = File::from(fd).metadata().ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
        Some(Resolved {
            display: display.to_path_buf(),
            real,
            root: root_index,
            existence: Existence::Exists(meta),
        })
    }

    /// Validates the raw string and makes it absolute against the primary root.
    pub fn absolute(&self, raw: &str) -> Result<PathBuf, Refusal> {
        let decoded = decode_request_path(raw)?;
        let path = PathBuf::from(decoded);
        Ok(if path.is_absolute() {
            path
        } else {
            self.primary().join(path)
        })
    }

    /// Follows the path like the kernel does, one component at a time.
    /// Returns the real path and, if it exists, its metadata.
    fn resolve_real(
        &self,
        absolute: &Path,
        hops: &mut usize,
    ) -> Result<(PathBuf, Option<Metadata>), Fault> {
        let mut queue: VecDeque<Step> = absolute.components().filter_map(Step::from).collect();
        // Fast start: a path spelled beneath a canonical root needs no look at
        // the root's ancestors (the root itself holds no symlinks).
        let mut cur = PathBuf::from("/");
        if let Some(root) = self.spelled_root(absolute, &queue) {
            cur = self.root_path(root).to_path_buf();
            let skip = cur.components().filter_map(Step::from).count();
            queue.drain(..skip);
        }
        let mut meta: Option<Metadata> = None;

        while let Some(step) = queue.pop_front() {
            let name = match step {
                Step::Up => {
                    if meta.as_ref().is_some_and(|m| !m.is_dir()) {
                        return Err(Fault::Io(io::Error::from_raw_os_error(libc_enotdir())));
                    }
                    cur.pop();
                    meta = None;
                    continue;
                }
                Step::Name(name) => name,
            };
            if let Some(m) = &meta
                && !m.is_dir()
            {
                // A file used as a directory: nothing can exist below it.
                return Ok((join_missing(cur, name, queue)?, None));
            }
            let candidate = cur.join(&name);
            match std::fs::symlink_metadata(&candidate) {
                Ok(m) if m.file_type().is_symlink() => {
                    *hops += 1;
                    if *hops > MAX_SYMLINK_HOPS {
                        return Err(Fault::Outside(OutsideWhy::SymlinkLoops));
                    }
                    let target = std::fs::read_link(&candidate).map_err(Fault::Io)?;
                    let target = if target.is_absolute() {
                        target
                    } else {
                        cur.join(target)
                    };
                    let link_inside = self.contains(&cur);
                    let (resolved, target_meta) = match self.resolve_real(&target, hops) {
                        Err(Fault::UpAfterMissing) => {
                            return Err(Fault::Outside(OutsideWhy::SymlinkDangles));
                        }
                        other => other?,
                    };
                    let Some(target_meta) = target_meta else {
                        return Err(Fault::Outside(OutsideWhy::SymlinkDangles));
                    };
                    if link_inside && !self.contains(&resolved) {
                        return Err(Fault::Outside(OutsideWhy::SymlinkLeaves));
                    }
                    cur = resolved;
                    meta = Some(target_meta);
                }
                Ok(m) => {
                    cur = candidate;
                    meta = Some(m);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok((join_missing(cur, name, queue)?, None));
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
        if meta.is_none() {
            // The path ended at "/" or after "..": look at what we reached.
            meta = Some(std::fs::symlink_metadata(&cur).map_err(Fault::Io)?);
        }
        // `file/` and `file/.` name a directory; the kernel refuses them.
        let spelled_as_dir = {
            let bytes = absolute.as_os_str().as_encoded_bytes();
            bytes.ends_with(b"/") || bytes.ends_with(b"/.")
        };
        if spelled_as_dir && meta.as_ref().is_some_and(|m| !m.is_dir()) {
            return Err(Fault::Io(io::Error::from_raw_os_error(libc_enotdir())));
        }
        Ok((cur, meta))
    }

    /// The canonical root that `absolute` is spelled beneath, if its spelling
    /// contains no `..` (so skipping the root's ancestors changes nothing).
    fn spelled_root(&self, absolute: &Path, steps: &VecDeque<Step>) -> Option<RootId> {
        if steps.iter().any(|s| matches!(s, Step::Up)) {
            return None;
        }
        self.root_of(absolute)
    }

    /// Opens an existing regular file for reading, race-safely: the open
    /// cannot follow a symlink planted after `resolve` checked the path.
    /// FIFOs, sockets and devices are refused without blocking. Returns the
    /// file and its metadata as opened.
    pub fn open_read(&self, resolved: &Resolved) -> io::Result<(File, Metadata)> {
        if let Some(m) = resolved.metadata()
            && !m.is_file()
        {
            return Err(not_regular(m));
        }
        let (root, rel) = self.root_and_rel(resolved)?;
        self.open_beneath(root, rel)
    }

    /// Opens the regular file `rel` beneath `root` for reading, following
    /// no symlink on the way (the root's handle, `RESOLVE_BENEATH |
    /// RESOLVE_NO_SYMLINKS`, or one `O_NOFOLLOW` component at a time), and
    /// without blocking: a FIFO, socket or device is refused. For walker
    /// entries, which were checked by name: a file swapped for a symlink
    /// since then fails to open instead of being followed.
    pub fn open_beneath(&self, root: RootId, rel: &Path) -> io::Result<(File, Metadata)> {
        let root = self
            .roots
            .get(root.0)
            .ok_or_else(|| io::Error::other("unknown root"))?;
        let file = self.open_fd_beneath(root, rel, ReadKind::File)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_regular(&meta));
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
        let rel = path
            .strip_prefix(self.root_path(root))
            .map_err(|_| outside_error())?;
        match self.open_beneath(root, rel) {
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
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
        let root = self
            .roots
            .get(root.0)
            .ok_or_else(|| io::Error::other("unknown root"))?;
        let dir = self.open_fd_beneath(root, rel, ReadKind::Directory)?;
        Ok(DirEntries {
            inner: rustix::fs::Dir::new(dir)?,
        })
    }

    /// Lists the directory a walker reached at `path` (spelled beneath a
    /// root, as walkers build their paths), opened beneath its root with no
    /// symlink followed: a directory swapped for a symlink since the walk
    /// saw it is not listed (the open fails with `ELOOP`). The listing keeps
    /// the directory's handle, so its entries can be looked at and its
    /// ignore file read without following symlinks or walking the path again.
    pub fn list_walked_dir(&self, path: &Path) -> io::Result<Listing> {
        let root = self.root_of(path).ok_or_else(outside_error)?;
        let rel = path
            .strip_prefix(self.root_path(root))
            .map_err(|_| outside_error())?;
        let root = self
            .roots
            .get(root.0)
            .ok_or_else(|| io::Error::other("unknown root"))?;
        let dir = self.open_fd_beneath(root, rel, ReadKind::Directory)?;
        Listing::first_batch(dir.into())
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
                let rel = path
                    .strip_prefix(self.root_path(root))
                    .map_err(|_| outside_error())?;
                self.open_beneath(root, rel)
            }
            None => open_absolute_no_symlinks(path),
        };
        match opened {
            Ok((file, _)) => read_bounded(file, max_bytes).map(Some),
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc_enotdir()) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
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
    ) -> io::Result<(OwnedFd, OsString)> {
        use rustix::fs::{Mode, OFlags};
        let (root, rel) = self.root_and_rel(resolved)?;
        let root = self
            .roots
            .get(root.0)
            .ok_or_else(|| io::Error::other("unknown root"))?;
        let mut names: Vec<&OsStr> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => names.push(n),
                _ => return Err(io::Error::other("resolved path is not canonical")),
            }
        }
        let Some(file_name) = names.pop() else {
            return Err(io::Error::from_raw_os_error(
                rustix::io::Errno::ISDIR.raw_os_error(),
            ));
        };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = rustix::fs::openat(&root.dir, ".", flags, Mode::empty())?;
        for name in names {
            dir = match rustix::fs::openat(&dir, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    rustix::fs::openat(&dir, name, flags, Mode::empty())?
                }
                Err(e) => return Err(e.into()),
            };
        }
        Ok((dir, file_name.to_os_string()))
    }

    /// The root a resolved path lies in, and the path relative to it.
    fn root_and_rel<'a>(&'a self, resolved: &'a Resolved) -> io::Result<(RootId, &'a Path)> {
        let rel = resolved
            .real
            .strip_prefix(self.root_path(resolved.root))
            .map_err(|_| io::Error::other("resolved path is not beneath its root"))?;
        Ok((resolved.root, rel))
    }

    /// Opens `rel` beneath `root` without following any symlink, read-only
    /// and non-blocking. `openat2` does it in one call; without it, one
    /// component at a time with `O_NOFOLLOW`.
    fn open_fd_beneath(&self, root: &Root, rel: &Path, kind: ReadKind) -> io::Result<File> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        if self.openat2_works.load(Ordering::Relaxed) {
            match openat2_beneath(&root.dir, rel, kind.flags()) {
                Ok(fd) => return Ok(File::from(fd)),
                Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NOSYS.raw_os_error()) => {
                    tracing::warn!("openat2 is not available; falling back to O_NOFOLLOW opens");
                    self.openat2_works.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
        open_nofollow_stepwise(&root.dir, rel, kind.flags())
    }
}

/// What an open is for: its flags.
#[derive(Debug, Clone, Copy)]
enum ReadKind {
    File,
    Directory,
}

impl ReadKind {
    fn flags(self) -> rustix::fs::OFlags {
        use rustix::fs::OFlags;
        // NONBLOCK: opening a FIFO for reading must not wait for a writer.
        let common = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        match self {
            ReadKind::File => common,
            ReadKind::Directory => common | OFlags::DIRECTORY,
        }
    }
}

/// The entries of a directory opened by [`Guard::read_dir`], without `.`
/// and `..`.
pub struct DirEntries {
    inner: rustix::fs::Dir,
}

/// A file opened for reading, and its metadata as opened.
pub type OpenedFile = (File, Metadata);

/// A directory listed by [`Guard::list_walked_dir`]: its entries, and its
/// handle for looking at them.
pub struct Listing {
    /// Kept for its handle (`Dir::fd`), which lookups relative to the
    /// directory use, and for the batches still to read.
    dir: DirEntries,
    /// The entries listed: all of them, or the current batch of a big
    /// directory.
    pub items: Vec<DirItem>,
    /// The first entry of the next batch, read to learn there is one.
    next: Option<DirItem>,
}

impl Listing {
    /// The type of entry `name`, for file systems that do not report it in
    /// the listing (a symlink is not followed).
    pub fn kind_of(&self, name: &OsStr) -> Option<EntryKind> {
        let meta = self.stat(name)?;
        let kind = rustix::fs::FileType::from_raw_mode(meta.mode);
        Some(match kind {
            rustix::fs::FileType::Directory => EntryKind::Directory,
            rustix::fs::FileType::RegularFile => EntryKind::File,
            rustix::fs::FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Special,
        })
    }

    /// When entry `name` was last modified (a symlink itself, not followed).
    pub fn modified(&self, name: &OsStr) -> Option<std::time::SystemTime> {
        let meta = self.stat(name)?;
        let since_epoch =
            std::time::Duration::new(u64::try_from(meta.mtime_secs).ok()?, meta.mtime_nanos);
        std::time::SystemTime::UNIX_EPOCH.checked_add(since_epoch)
    }

    /// Opens the entry `name` (a regular file) for reading, relative to the
    /// listed directory's handle: the directory was opened beneath its root
    /// with no symlink followed, and the entry is opened with `O_NOFOLLOW`
    /// and without blocking, so a file swapped for a symlink since the
    /// listing fails to open and a FIFO or device is refused. One path
    /// component to look up instead of the whole path from the root.
    pub fn open_file(&self, name: &OsStr) -> io::Result<(File, Metadata)> {
        use rustix::fs::Mode;
        let dir = self.dir.inner.fd()?;
        let file = File::from(rustix::fs::openat(
            dir,
            name,
            ReadKind::File.flags(),
            Mode::empty(),
        )?);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_regular(&meta));
        }
        Ok((file, meta))
    }

    /// Lists the subdirectory `name` of this listed directory, opened
    /// relative to this directory's handle with no symlink followed
    /// (`O_NOFOLLOW | O_DIRECTORY`): like [`Guard::list_walked_dir`] for a
    /// child, a subdirectory swapped for a symlink since this listing is not
    /// listed, and one path component is looked up instead of the whole
    /// path from the root.
    pub fn list_child(&self, name: &OsStr) -> io::Result<Listing> {
        use rustix::fs::Mode;
        let dir = self.dir.inner.fd()?;
        let fd = rustix::fs::openat(dir, name, ReadKind::Directory.flags(), Mode::empty())?;
        Listing::first_batch(fd)
    }

    /// At most this many entries are held at once: a bigger directory is
    /// listed in batches ([`Listing::next_batch`]), so memory stays bounded
    /// by the batch, not by the directory.
    pub const BATCH: usize = 8192;

    fn first_batch(fd: OwnedFd) -> io::Result<Listing> {
        let mut listing = Listing {
            dir: DirEntries {
                inner: rustix::fs::Dir::new(fd)?,
            },
            items: Vec::new(),
            next: None,
        };
        listing.next_batch()?;
        Ok(listing)
    }

    /// Whether every entry has been listed (the last batch is in `items`).
    pub fn is_complete(&self) -> bool {
        self.next.is_none()
    }

    /// For a directory listed in batches: hands the entries not read yet
    /// to a new listing (which reads them with this listing's reader, from
    /// where it stands), so another thread can walk the next batch while
    /// this one walks the current. This listing keeps its batch and a
    /// duplicate of the directory's handle for lookups, and is complete.
    /// None when every entry is listed already.
    pub fn split_rest(&mut self) -> io::Result<Option<Listing>> {
        if self.next.is_none() {
            return Ok(None);
        }
        let lookups = rustix::io::fcntl_dupfd_cloexec(self.dir.inner.fd()?, 0)?;
        let reader = std::mem::replace(
            &mut self.dir,
            DirEntries {
                inner: rustix::fs::Dir::new(lookups)?,
            },
        );
        Ok(Some(Listing {
            dir: reader,
            items: Vec::new(),
            next: self.next.take(),
        }))
    }

    /// Replaces `items` with the next batch of entries; false when there
    /// were none left.
    pub fn next_batch(&mut self) -> io::Result<bool> {
        self.items.clear();
        self.items.extend(self.next.take());
        while self.items.len() < Self::BATCH {
            match self.dir.next() {
                Some(item) => self.items.push(item?),
                None => return Ok(!self.items.is_empty()),
            }
        }
        self.next = self.dir.next().transpose()?;
        Ok(true)
    }

    /// Reads the entry `name` as one of the server's own files (an ignore
    /// file), relative to the listed directory's handle: no symlink
    /// followed, never blocking, at most `max_bytes`.
    pub fn read_own_file(&self, name: &OsStr, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
        use rustix::fs::Mode;
        let dir = self.dir.inner.fd()?;
        let file = match rustix::fs::openat(dir, name, ReadKind::File.flags(), Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        read_bounded(file, max_bytes).map(Some)
    }

    #[cfg(target_os = "linux")]
    fn stat(&self, name: &OsStr) -> Option<EntryStat> {
        use rustix::fs::{AtFlags, StatxFlags};
        let flags = AtFlags::SYMLINK_NOFOLLOW;
        let dir = self.dir.inner.fd().ok()?;
        let st = rustix::fs::statx(dir, name, flags, StatxFlags::TYPE | StatxFlags::MTIME).ok()?;
        Some(EntryStat {
            mode: u32::from(st.stx_mode),
            mtime_secs: st.stx_mtime.tv_sec,
            mtime_nanos: st.stx_mtime.tv_nsec,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn stat(&self, name: &OsStr) -> Option<EntryStat> {
        use std::os::unix::fs::MetadataExt;
        let flags = ReadKind::File.flags();
        let dir = self.dir.inner.fd().ok()?;
        let fd = rustix::fs::openat(dir, name, flags, rustix::fs::Mode::empty()).ok()?;
        let meta = File::from(fd).metadata().ok()?;
        Some(EntryStat {
            mode: meta.mode(),
            mtime_secs: meta.mtime(),
            mtime_nanos: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        })
    }
}

/// What [`Listing`] needs to know of one entry.
struct EntryStat {
    mode: u32,
    mtime_secs: i64,
    mtime_nanos: u32,
}

/// Reads a regular file of at most `max_bytes`; anything else is an error.
fn read_bounded(file: File, max_bytes: u64) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
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
    Symlink,
    /// A FIFO, socket or device.
    Special,
    /// The file system does not say; ask [`entry_metadata`].
    Unknown,
}

impl Iterator for DirEntries {
    type Item = io::Result<DirItem>;

    fn next(&mut self) -> Option<io::Result<DirItem>> {
        use rustix::fs::FileType;
        use std::os::unix::ffi::OsStrExt;
        loop {
            let entry = match self.inner.next()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(e.into())),
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Directory => EntryKind::Directory,
                FileType::RegularFile => EntryKind::File,
                FileType::Symlink => EntryKind::Symlink,
                FileType::Unknown => EntryKind::Unknown,
                _ => EntryKind::Special,
            };
            return Some(Ok(DirItem {
                name: OsStr::from_bytes(name).to_os_string(),
                kind,
            }));
        }
    }
}

/// The metadata of `path` itself (a symlink is not followed), or None if it
/// cannot be read. Reads no content and cannot block, so it is safe
/// anywhere; used to probe for `.git` and for entries whose type a directory
/// does not report.
pub fn entry_metadata(path: &Path) -> Option<Metadata> {
    std::fs::symlink_metadata(path).ok()
}

fn outside_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the path is outside the workspace roots",
    )
}

/// Fallback for kernels without `openat2`: opens each directory component
/// with `O_NOFOLLOW | O_DIRECTORY`, then the last one with `flags`, so no
/// symlink is followed anywhere on the way.
fn open_nofollow_stepwise(
    root: &OwnedFd,
    rel: &Path,
    flags: rustix::fs::OFlags,
) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => return Err(outside_error()),
        }
    }
    let Some(last) = names.pop() else {
        return Ok(File::from(rustix::fs::openat(
            root,
            ".",
            flags,
            Mode::empty(),
        )?));
    };
    let mut dir = rustix::fs::openat(root, ".", dir_flags, Mode::empty())?;
    for name in names {
        dir = rustix::fs::openat(&dir, name, dir_flags, Mode::empty())?;
    }
    Ok(File::from(rustix::fs::openat(
        &dir,
        last,
        flags,
        Mode::empty(),
    )?))
}

/// Opens an absolute path (above every root) for reading, following no
/// symlink in any component and without blocking; regular files only.
fn open_absolute_no_symlinks(path: &Path) -> io::Result<(File, Metadata)> {
    use rustix::fs::{CWD, Mode, ResolveFlags};
    let flags = ReadKind::File.flags();
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let file = match rustix::fs::openat2(CWD, path, flags, Mode::empty(), resolve) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::NOSYS) => {
            let root = rustix::fs::open("/", ReadKind::Directory.flags(), Mode::empty())?;
            let rel = path.strip_prefix("/").map_err(|_| outside_error())?;
            open_nofollow_stepwise(&root, rel, flags)?
        }
        Err(e) => return Err(e.into()),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta))
}

fn open_dir_handle(path: &Path) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    Ok(rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

#[cfg(target_os = "linux")]
fn openat2_beneath(dir: &OwnedFd, rel: &Path, flags: rustix::fs::OFlags) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, ResolveFlags};
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    loop {
        match rustix::fs::openat2(dir, rel, flags, Mode::empty(), resolve) {
            // EAGAIN: a concurrent rename elsewhere on the system; retry.
            Err(rustix::io::Errno::AGAIN) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn openat2_beneath(_dir: &OwnedFd, _rel: &Path, _flags: rustix::fs::OFlags) -> io::Result<OwnedFd> {
    Err(io::Error::from_raw_os_error(
        rustix::io::Errno::NOSYS.raw_os_error(),
    ))
}

fn libc_enotdir() -> i32 {
    rustix::io::Errno::NOTDIR.raw_os_error()
}

fn not_regular(meta: &Metadata) -> io::Error {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    let what = if ft.is_fifo() {
        "a named pipe (FIFO)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, which is never opened"),
    )
}

/// One component of a path on its way through resolution.
#[derive(Debug, Clone)]
enum Step {
    Up,
    Name(OsString),
}

impl Step {
    fn from(c: Component<'_>) -> Option<Step> {
        match c {
            Component::ParentDir => Some(Step::Up),
            Component::Normal(n) => Some(Step::Name(n.to_os_string())),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        }
    }
}

/// An internal resolution failure, turned into a [`Refusal`] once the
/// display path is known.
enum Fault {
    Outside(OutsideWhy),
    UpAfterMissing,
    Io(io::Error),
}

impl Fault {
    fn into_refusal(self, display: &Path) -> Refusal {
        let display = display.to_path_buf();
        match self {
            Fault::Outside(why) => Refusal::Outside { display, why },
            Fault::UpAfterMissing => Refusal::Unresolvable {
                display,
                reason: "the path goes up ('..') from a directory that does not exist".into(),
            },
            Fault::Io(e) => Refusal::Unresolvable {
                display,
                reason: e.to_string(),
            },
        }
    }
}

/// Appends the not-yet-existing tail. It may not contain `..`: the kernel
/// could not resolve it either, and a lexical guess could point anywhere.
fn join_missing(mut cur: PathBuf, first: OsString, rest: VecDeque<Step>) -> Result<PathBuf, Fault> {
    cur.push(first);
    for step in rest {
        match step {
            Step::Up => return Err(Fault::UpAfterMissing),
            Step::Name(n) => cur.push(n),
        }
    }
    Ok(cur)
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

/// Normalises `.` and `..` without touching the file system. Only for
/// display: decisions are made on the resolved path.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("/");
                }
                if out.as_os_str().is_empty() {
                    out.push("/");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// True if any component of `path` is exactly `name`.
pub fn has_component(path: &Path, name: &str) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if n == OsStr::new(name)))
}

#[cfg(test)]
mod tests;

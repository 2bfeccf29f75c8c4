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
//!   for a symlink between the check and the open cannot lead outside.

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

/// A path that passed the guard.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The absolute request path, normalised lexically: what messages show.
    pub display: PathBuf,
    /// Where the path really is, all symlinks followed.
    pub real: PathBuf,
    /// Index of the root that contains `real`.
    pub root: usize,
    pub existence: Existence,
}

impl Resolved {
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

    /// Index of the root that contains `real`, compared by whole components.
    /// Nested roots resolve to the deepest one.
    pub fn root_of(&self, real: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| real.starts_with(&r.path))
            .max_by_key(|(_, r)| r.path.as_os_str().len())
            .map(|(i, _)| i)
    }

    /// The root that contains `real` (the deepest, for nested roots).
    pub fn containing_root(&self, real: &Path) -> Option<&Path> {
        let index = self.root_of(real)?;
        self.roots.get(index).map(|r| r.path.as_path())
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
        let root_index = self
            .roots
            .iter()
            .enumerate()
            .filter(|(_, r)| absolute.starts_with(&r.path))
            .max_by_key(|(_, r)| r.path.as_os_str().len())
            .map(|(i, _)| i)?;
        let root = &self.roots[root_index];
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
            cur = root.to_path_buf();
            let skip = root.components().filter_map(Step::from).count();
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
    fn spelled_root<'a>(&'a self, absolute: &Path, steps: &VecDeque<Step>) -> Option<&'a Path> {
        if steps.iter().any(|s| matches!(s, Step::Up)) {
            return None;
        }
        self.roots()
            .filter(|r| absolute.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
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
        let file = self.open_beneath(resolved)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_regular(&meta));
        }
        Ok((file, meta))
    }

    /// Opens a directory that passed the guard, race-safely (for listing).
    pub fn open_dir(&self, resolved: &Resolved) -> io::Result<File> {
        let file = self.open_beneath(resolved)?;
        if !file.metadata()?.is_dir() {
            return Err(io::Error::from_raw_os_error(libc_enotdir()));
        }
        Ok(file)
    }

    /// The names in a directory that passed the guard (not `.` or `..`),
    /// read through a handle opened race-safely beneath its root. Names are
    /// returned as the kernel has them; nothing is followed.
    pub fn list_dir(&self, resolved: &Resolved) -> io::Result<Vec<OsString>> {
        use std::os::unix::ffi::OsStrExt;
        let dir = self.open_dir(resolved)?;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
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
    fn root_and_rel<'a>(&'a self, resolved: &'a Resolved) -> io::Result<(&'a Root, &'a Path)> {
        let root = self
            .roots
            .get(resolved.root)
            .ok_or_else(|| io::Error::other("resolved path names an unknown root"))?;
        let rel = resolved
            .real
            .strip_prefix(&root.path)
            .map_err(|_| io::Error::other("resolved path is not beneath its root"))?;
        Ok((root, rel))
    }

    fn open_beneath(&self, resolved: &Resolved) -> io::Result<File> {
        let (root, rel) = self.root_and_rel(resolved)?;
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        if self.openat2_works.load(Ordering::Relaxed) {
            match openat2_beneath(&root.dir, rel) {
                Ok(fd) => return Ok(File::from(fd)),
                Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NOSYS.raw_os_error()) => {
                    tracing::warn!("openat2 is not available; falling back to O_NOFOLLOW opens");
                    self.openat2_works.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
        self.open_nofollow_checked(&resolved.real)
    }

    /// Fallback for kernels without `openat2`: open without following a final
    /// symlink, then ask the kernel where the opened file really is.
    fn open_nofollow_checked(&self, real: &Path) -> io::Result<File> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        let fd = rustix::fs::open(real, flags, Mode::empty())?;
        let file = File::from(fd);
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let actual = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
            if actual != real || !self.contains(&actual) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the file moved outside the workspace while it was being opened",
                ));
            }
        }
        Ok(file)
    }
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
fn openat2_beneath(dir: &OwnedFd, rel: &Path) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
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
fn openat2_beneath(_dir: &OwnedFd, _rel: &Path) -> io::Result<OwnedFd> {
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

//! The guard on Unix. Resolution follows the path like the kernel does, one
//! component at a time (symlinks read and checked, `..` applied to the
//! directory reached). Opens are beneath the root's handle with no symlink
//! followed: one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` on Linux,
//! one `openat` with `O_NOFOLLOW_ANY` on macOS 11 and later (the relative
//! path the guard resolved has no `..`, so "no symlink anywhere" is all it
//! needs to stay beneath), and elsewhere, or when the kernel refuses those,
//! an `O_NOFOLLOW` `openat` per component. Linux tests run that walk too
//! (`Guard::stepwise_only`, in tests).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::Ordering;

use super::{
    DirItem, EntryKind, Existence, Guard, OutsideWhy, ReadKind, Refusal, Resolved, Root, RootError,
    RootId, outside_error, read_bounded,
};

/// A directory handle: a starting point for `openat`.
pub type DirHandle = OwnedFd;

/// How many symlinks one resolution may follow before it counts as a loop
/// (the kernel's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Canonicalises a root and opens its handle.
pub(super) fn open_root(given: &Path) -> Result<Root, RootError> {
    let path = std::fs::canonicalize(given).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => RootError::Missing(given.to_path_buf()),
        _ => RootError::Io(given.to_path_buf(), e),
    })?;
    if !path.is_dir() {
        return Err(RootError::NotADirectory(given.to_path_buf()));
    }
    let dir = open_dir_handle(&path).map_err(|e| RootError::Io(given.to_path_buf(), e))?;
    // The spelling the root was given in (`/tmp/r` for `/private/tmp/r`),
    // if it differs: requests may use it, and resolution must not look at
    // the links on it, which lie outside the root.
    let alias = std::path::absolute(given)
        .ok()
        .map(|a| normalize_lexically(&a))
        .filter(|a| *a != path);
    Ok(Root { path, dir, alias })
}

/// Whether this kernel is expected to open a path beneath a handle in one
/// call: Linux has `openat2`; macOS has `O_NOFOLLOW_ANY` from 11 (Darwin
/// 20) on. Older kernels ignore flags they do not know rather than refuse
/// them, so the version decides, not a failed call.
pub(super) fn one_call_open_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        true
    }
    #[cfg(target_os = "macos")]
    {
        // SAFETY: plain data; zero is a valid bit pattern.
        let mut name: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `name` is a live local; uname fills NUL-terminated fields.
        if unsafe { libc::uname(&mut name) } != 0 {
            return false;
        }
        // SAFETY: NUL-terminated by uname.
        let release = unsafe { std::ffi::CStr::from_ptr(name.release.as_ptr()) };
        darwin_has_nofollow_any(&release.to_string_lossy())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        false
    }
}

/// Whether a Darwin release (`uname -r`, "20.6.0") is macOS 11 or later.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn darwin_has_nofollow_any(release: &str) -> bool {
    release
        .split('.')
        .next()
        .and_then(|major| major.parse::<u32>().ok())
        .is_some_and(|major| major >= 20)
}

impl Root {
    /// Whether `path` is spelled beneath this root, by whole components.
    pub(super) fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.path)
    }
}

/// `path` relative to `base`, if it is spelled beneath it.
pub(super) fn beneath<'a>(path: &'a Path, base: &Path) -> Option<&'a Path> {
    path.strip_prefix(base).ok()
}

/// Whether a path component is the name `wanted`.
pub(super) fn same_name(name: &OsStr, wanted: &str) -> bool {
    name == OsStr::new(wanted)
}

impl Guard {
    pub(super) fn sys_resolve_absolute(&self, absolute: &Path) -> Result<Resolved, Refusal> {
        let display = normalize_lexically(absolute);
        let unaliased = self.unalias(absolute);
        let absolute = unaliased.as_deref().unwrap_or(absolute);
        if let Some(fast) = self.resolve_without_symlinks(absolute, &display) {
            return Ok(fast);
        }
        let mut hops = 0;
        let reached = self
            .resolve_real(absolute, &mut hops)
            .map_err(|fault| fault.into_refusal(&display))?;
        let real = reached.path;
        let Some(root) = self.root_of(&real) else {
            return Err(Refusal::Outside {
                display,
                why: OutsideWhy::Resolved,
            });
        };
        let existence = match reached.leaf {
            Leaf::Dir(Some(m)) | Leaf::Other(m) => Existence::Exists(m),
            Leaf::Dir(None) | Leaf::Missing => Existence::Missing,
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
    #[cfg(target_os = "linux")]
    fn resolve_without_symlinks(&self, absolute: &Path, display: &Path) -> Option<Resolved> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        if !self.one_call_open.load(Ordering::Relaxed) {
            return None;
        }
        let bytes = absolute.as_os_str().as_encoded_bytes();
        if bytes.ends_with(b"/") || bytes.ends_with(b"/.") {
            return None;
        }
        let root_id = self.root_of(absolute)?;
        let root = &root_id.0;
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
            root: root_id,
            existence: Existence::Exists(meta),
        })
    }

    /// Without `openat2` there is no one-call proof; every path takes the
    /// component-by-component walk.
    #[cfg(not(target_os = "linux"))]
    fn resolve_without_symlinks(&self, _absolute: &Path, _display: &Path) -> Option<Resolved> {
        None
    }

    /// Makes a decoded request path absolute against the primary root.
    pub(super) fn sys_absolute(&self, decoded: &str) -> Result<PathBuf, Refusal> {
        let path = PathBuf::from(decoded);
        Ok(if path.is_absolute() {
            path
        } else {
            self.primary().join(path)
        })
    }

    /// `absolute` with the spelling a root was given in (a path through a
    /// link, such as macOS's `/tmp`) replaced by the root's real path; None
    /// when it is not spelled beneath such an alias.
    fn unalias(&self, absolute: &Path) -> Option<PathBuf> {
        self.roots.iter().find_map(|r| {
            let rest = absolute.strip_prefix(r.alias.as_ref()?).ok()?;
            Some(r.path.join(rest))
        })
    }

    pub(super) fn sys_has_entry(&self, path: &Path) -> bool {
        use rustix::fs::{AtFlags, OFlags};
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        if !self.may_look_at(parent) {
            return false;
        }
        let dir = match self.root_of(parent) {
            Some(id) => {
                let Some(rel) = beneath(parent, id.path()) else {
                    return false;
                };
                self.open_fd_beneath(&id.0, rel, ReadKind::Directory)
            }
            None => open_absolute_nofollow(parent, dir_handle_flags() | OFlags::NOFOLLOW),
        };
        dir.is_ok_and(|dir| rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok())
    }

    /// Whether resolution may look at `path`: inside a root, or a directory
    /// on the way to one (an ancestor of a root). Anything else is outside,
    /// and is never looked at: whether it exists, is a file or a directory
    /// must not change the answer (`outside/X/..` and
    /// `../outside/D/../../root/a.txt` are refused alike, whatever lies
    /// there).
    fn may_look_at(&self, path: &Path) -> bool {
        self.roots
            .iter()
            .any(|r| path.starts_with(&r.path) || r.path.starts_with(path))
    }

    /// Follows the path like the kernel does, one component at a time,
    /// each looked up relative to the handle of the directory before it
    /// (never by the whole path, so a directory swapped for a link on the
    /// way cannot show what lies behind the link). A step that would leave
    /// the roots and their ancestors is refused before it is taken.
    fn resolve_real(&self, absolute: &Path, hops: &mut usize) -> Result<Reached, Fault> {
        let mut queue: VecDeque<Step> = absolute.components().filter_map(Step::from).collect();
        // Fast start: a path spelled beneath a canonical root needs no look at
        // the root's ancestors (the root itself holds no symlinks).
        let (mut path, first) = match self.spelled_root(absolute, &queue) {
            Some(id) => {
                let root = &id.0;
                let skip = root.path.components().filter_map(Step::from).count();
                queue.drain(..skip);
                let dir = root.dir.try_clone().map_err(Fault::Io)?;
                (root.path.clone(), dir)
            }
            None => (
                PathBuf::from("/"),
                open_dir_handle(Path::new("/")).map_err(Fault::Io)?,
            ),
        };
        // Handles of the directories on `path`, the first `/` or a root;
        // the last is `path` itself unless `leaf` is `Other`.
        let mut dirs = vec![first];
        let mut leaf = Leaf::Dir(None);

        while let Some(step) = queue.pop_front() {
            let name = match step {
                Step::Up => {
                    if matches!(leaf, Leaf::Other(_)) {
                        return Err(Fault::Io(io::Error::from_raw_os_error(libc_enotdir())));
                    }
                    if path.pop() {
                        if dirs.len() > 1 {
                            dirs.pop();
                        } else if let Some(base) = dirs.first_mut() {
                            // `/` or a root: its parent is its real one.
                            *base = rustix::fs::openat(
                                &*base,
                                "..",
                                dir_handle_flags(),
                                rustix::fs::Mode::empty(),
                            )
                            .map_err(|e| Fault::Io(e.into()))?;
                        }
                    }
                    leaf = Leaf::Dir(None);
                    continue;
                }
                Step::Name(name) => name,
            };
            if matches!(leaf, Leaf::Other(_)) {
                // A file used as a directory: nothing can exist below it.
                return Ok(Reached::missing(join_missing(path, name, queue)?));
            }
            let candidate = path.join(&name);
            if !self.may_look_at(&candidate) {
                return Err(Fault::Outside(OutsideWhy::Resolved));
            }
            let top = dirs
                .last()
                .ok_or_else(|| Fault::Io(io::Error::other("no directory handle")))?;
            match look_at(top, &name, &candidate) {
                Ok(Entry::Symlink) => {
                    *hops += 1;
                    if *hops > MAX_SYMLINK_HOPS {
                        return Err(Fault::Outside(OutsideWhy::SymlinkLoops));
                    }
                    let target = rustix::fs::readlinkat(top, name.as_os_str(), Vec::new())
                        .map_err(|e| Fault::Io(e.into()))?;
                    let target = PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes()));
                    let target = if target.is_absolute() {
                        target
                    } else {
                        path.join(target)
                    };
                    let link_inside = self.contains(&path);
                    let reached = match self.resolve_real(&target, hops) {
                        Err(Fault::UpAfterMissing) => {
                            return Err(Fault::Outside(OutsideWhy::SymlinkDangles));
                        }
                        Err(Fault::Outside(OutsideWhy::Resolved)) => {
                            return Err(Fault::Outside(OutsideWhy::SymlinkLeaves));
                        }
                        other => other?,
                    };
                    if matches!(reached.leaf, Leaf::Missing) {
                        return Err(Fault::Outside(OutsideWhy::SymlinkDangles));
                    }
                    if link_inside && !self.contains(&reached.path) {
                        return Err(Fault::Outside(OutsideWhy::SymlinkLeaves));
                    }
                    path = reached.path;
                    dirs = reached.dirs;
                    leaf = reached.leaf;
                }
                Ok(Entry::Dir(fd, m)) => {
                    path = candidate;
                    dirs.push(fd);
                    leaf = Leaf::Dir(Some(m));
                }
                Ok(Entry::Other(m)) => {
                    path = candidate;
                    leaf = Leaf::Other(m);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Reached::missing(join_missing(path, name, queue)?));
                }
                Err(e) => return Err(Fault::Io(e)),
            }
        }
        if let Leaf::Dir(None) = leaf {
            // The path ended at "/", a root or after "..": what we reached.
            let top = dirs
                .last()
                .ok_or_else(|| Fault::Io(io::Error::other("no directory handle")))?;
            let file = File::from(top.try_clone().map_err(Fault::Io)?);
            leaf = Leaf::Dir(Some(file.metadata().map_err(Fault::Io)?));
        }
        // `file/` and `file/.` name a directory; the kernel refuses them.
        let spelled_as_dir = {
            let bytes = absolute.as_os_str().as_encoded_bytes();
            bytes.ends_with(b"/") || bytes.ends_with(b"/.")
        };
        if spelled_as_dir && matches!(leaf, Leaf::Other(_)) {
            return Err(Fault::Io(io::Error::from_raw_os_error(libc_enotdir())));
        }
        Ok(Reached { path, dirs, leaf })
    }

    /// The canonical root that `absolute` is spelled beneath, if its spelling
    /// contains no `..` (so skipping the root's ancestors changes nothing).
    fn spelled_root(&self, absolute: &Path, steps: &VecDeque<Step>) -> Option<RootId> {
        if steps.iter().any(|s| matches!(s, Step::Up)) {
            return None;
        }
        self.root_of(absolute)
    }

    /// Opens the directory `names` beneath `root`, one component at a time
    /// with `O_NOFOLLOW`, creating missing ones when `create` is set.
    pub(super) fn sys_open_dir_chain(
        &self,
        root: &Root,
        names: &[&OsStr],
        create: bool,
    ) -> io::Result<OwnedFd> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = rustix::fs::openat(&root.dir, ".", flags, Mode::empty())?;
        for &name in names {
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
        Ok(dir)
    }

    /// Opens `rel` beneath `root` without following any symlink, read-only
    /// and non-blocking: in one call where the kernel can, else one
    /// component at a time with `O_NOFOLLOW`.
    pub(super) fn sys_open_beneath(
        &self,
        root: &Root,
        rel: &Path,
        kind: ReadKind,
    ) -> io::Result<File> {
        if self.one_call_open.load(Ordering::Relaxed) {
            match open_in_one_call(&root.dir, rel, kind.flags()) {
                Ok(fd) => return Ok(File::from(fd)),
                Err(e) if one_call_refused(&e) => {
                    let walked = open_nofollow_stepwise(&root.dir, rel, kind.flags());
                    // The flag, not the path, was the problem: stop asking.
                    if walked.is_ok() && self.one_call_open.swap(false, Ordering::Relaxed) {
                        tracing::warn!(
                            "the kernel refused the one-call open beneath a root ({e}); \
                             falling back to O_NOFOLLOW opens one component at a time"
                        );
                    }
                    return walked;
                }
                Err(e) => return Err(e),
            }
        }
        open_nofollow_stepwise(&root.dir, rel, kind.flags())
    }
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

impl DirEntries {
    pub(super) fn new(dir: File) -> io::Result<DirEntries> {
        Ok(DirEntries {
            inner: rustix::fs::Dir::new(dir)?,
        })
    }

    /// The type and size of entry `name`, asked of the listed directory's
    /// handle (`fstatat`, a symlink not followed): never by path, so a
    /// directory swapped for an outward link since the listing cannot lend
    /// an outside file's size to an inside name.
    pub fn stat_entry(&self, name: &OsStr) -> Option<(EntryKind, u64)> {
        let st = rustix::fs::statat(
            self.inner.fd().ok()?,
            name,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .ok()?;
        let kind = kind_of_type(rustix::fs::FileType::from_raw_mode(st.st_mode as _));
        Some((kind, u64::try_from(st.st_size).ok()?))
    }
}

/// A directory listed by [`Guard::list_walked_dir`]: its entries, and its
/// handle for looking at them.
///
/// The names of a batch share one buffer, so a batch costs two allocations
/// whatever its size: walks list tens of thousands of directories on
/// several threads, and a string per name (freed by whichever thread drops
/// the listing last) made the allocator, and its locks, a fifth of a
/// walk's time.
pub struct Listing {
    /// The directory: its handle for lookups relative to it, and what reads
    /// the batches still to read.
    reader: DirReader,
    /// The names of the entries listed (all of them, or the current batch
    /// of a big directory), one after another.
    names: Vec<u8>,
    /// Where each entry's name ends in `names`, and its type
    /// ([`listed_kind`]).
    entries: Vec<(usize, EntryKind)>,
    /// Every entry has been read.
    complete: bool,
}

/// Reads a directory's entries. On Linux, `getdents64` on the handle
/// itself, into a buffer each thread reuses ([`rustix::fs::RawDir`]): no
/// allocation per entry or per directory. Elsewhere, the system's
/// `readdir` ([`rustix::fs::Dir`]).
#[cfg(target_os = "linux")]
type DirReader = OwnedFd;
#[cfg(not(target_os = "linux"))]
type DirReader = rustix::fs::Dir;

/// The bytes of `getdents64` answers each walker thread reads into: a
/// directory of a few hundred entries comes in one call.
#[cfg(target_os = "linux")]
const GETDENTS_BUFFER: usize = 32 * 1024;

impl Listing {
    /// The entries listed (the current batch of a big directory), with
    /// their types; a symlink's own type, not its target's.
    pub fn entries(&self) -> impl Iterator<Item = (&OsStr, EntryKind)> {
        use std::os::unix::ffi::OsStrExt;
        let mut start = 0;
        self.entries.iter().map(move |&(end, kind)| {
            let name = OsStr::from_bytes(&self.names[start..end]);
            start = end;
            (name, kind)
        })
    }

    /// The type of entry `name`, for file systems that do not report it in
    /// the listing (a symlink is not followed).
    pub fn kind_of(&self, name: &OsStr) -> Option<EntryKind> {
        use std::os::unix::ffi::OsStrExt;
        kind_at(self.fd().ok()?, name.as_bytes())
    }

    /// When entry `name` was last modified (a symlink itself, not followed;
    /// the entry is not opened).
    pub fn modified(&self, name: &OsStr) -> Option<std::time::SystemTime> {
        let dir = self.fd().ok()?;
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let since_epoch = std::time::Duration::new(
            u64::try_from(st.st_mtime).ok()?,
            u32::try_from(st.st_mtime_nsec).ok()?,
        );
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
        let dir = self.fd()?;
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
        let dir = self.fd()?;
        let fd = rustix::fs::openat(dir, name, ReadKind::Directory.flags(), Mode::empty())?;
        Listing::first_batch(fd)
    }

    /// About this many entries are held at once (on Linux up to one read
    /// of the directory more, at most 32 KiB of entries): a bigger
    /// directory is listed in batches ([`Listing::next_batch`]), so memory
    /// stays bounded by the batch, not by the directory.
    pub const BATCH: usize = 8192;

    pub(super) fn from_dir(dir: File) -> io::Result<Listing> {
        Listing::first_batch(dir.into())
    }

    fn first_batch(fd: OwnedFd) -> io::Result<Listing> {
        #[cfg(not(target_os = "linux"))]
        let fd = rustix::fs::Dir::new(fd)?;
        let mut listing = Listing {
            reader: fd,
            names: Vec::new(),
            entries: Vec::new(),
            complete: false,
        };
        listing.next_batch()?;
        Ok(listing)
    }

    /// The directory's handle, for lookups relative to it.
    fn fd(&self) -> io::Result<std::os::fd::BorrowedFd<'_>> {
        #[cfg(target_os = "linux")]
        return Ok(std::os::fd::AsFd::as_fd(&self.reader));
        #[cfg(not(target_os = "linux"))]
        return Ok(self.reader.fd()?);
    }

    /// Whether every entry has been listed (the last batch is the one
    /// listed).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// For a directory listed in batches: hands the entries not read yet
    /// to a new listing (which reads them with this listing's reader, from
    /// where it stands), so another thread can walk the next batch while
    /// this one walks the current. This listing keeps its batch and a
    /// duplicate of the directory's handle for lookups, and is complete.
    /// None when every entry is listed already.
    pub fn split_rest(&mut self) -> io::Result<Option<Listing>> {
        if self.complete {
            return Ok(None);
        }
        let lookups = rustix::io::fcntl_dupfd_cloexec(self.fd()?, 0)?;
        #[cfg(not(target_os = "linux"))]
        let lookups = rustix::fs::Dir::new(lookups)?;
        let reader = std::mem::replace(&mut self.reader, lookups);
        self.complete = true;
        Ok(Some(Listing {
            reader,
            names: Vec::new(),
            entries: Vec::new(),
            complete: false,
        }))
    }

    /// Replaces the entries with the next batch: [`Listing::BATCH`] of
    /// them, or a little more (what one read of the directory brought in
    /// is never left behind). False when there were none left.
    pub fn next_batch(&mut self) -> io::Result<bool> {
        self.names.clear();
        self.entries.clear();
        if !self.complete {
            self.complete = self.read_batch()?;
        }
        Ok(!self.entries.is_empty())
    }

    /// Reads entries until [`Listing::BATCH`] of them are in, or the
    /// directory ends (true). They are gathered in buffers the thread
    /// reuses and then copied once, at their size, into the listing: no
    /// vector grows step by step per directory.
    #[cfg(target_os = "linux")]
    fn read_batch(&mut self) -> io::Result<bool> {
        use std::cell::RefCell;
        use std::mem::MaybeUninit;
        struct Scratch {
            getdents: Vec<MaybeUninit<u8>>,
            names: Vec<u8>,
            entries: Vec<(usize, EntryKind)>,
        }
        thread_local! {
            static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
                getdents: vec![MaybeUninit::uninit(); GETDENTS_BUFFER],
                names: Vec::new(),
                entries: Vec::new(),
            });
        }
        SCRATCH.with_borrow_mut(|scratch| {
            let Scratch {
                getdents,
                names,
                entries,
            } = scratch;
            names.clear();
            entries.clear();
            let mut raw = rustix::fs::RawDir::new(&self.reader, getdents);
            let ended = loop {
                // Stop only between reads: what a read brought in is not
                // kept anywhere else.
                if entries.len() >= Self::BATCH && raw.is_buffer_empty() {
                    break false;
                }
                let Some(entry) = raw.next() else {
                    break true;
                };
                let entry = entry?;
                let dir = std::os::fd::AsFd::as_fd(&self.reader);
                let name = entry.file_name().to_bytes();
                if let Some(kind) = listed_kind(dir, name, entry.file_type()) {
                    names.extend_from_slice(name);
                    entries.push((names.len(), kind));
                }
            };
            self.names = names.as_slice().to_vec();
            self.entries = entries.as_slice().to_vec();
            Ok(ended)
        })
    }

    /// Reads entries until [`Listing::BATCH`] of them are in, or the
    /// directory ends (true).
    #[cfg(not(target_os = "linux"))]
    fn read_batch(&mut self) -> io::Result<bool> {
        while self.entries.len() < Self::BATCH {
            let Some(entry) = self.reader.next() else {
                return Ok(true);
            };
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if let Some(kind) = listed_kind(self.reader.fd()?, name, entry.file_type()) {
                self.names.extend_from_slice(name);
                self.entries.push((self.names.len(), kind));
            }
        }
        Ok(false)
    }

    /// Reads the entry `name` as one of the server's own files (an ignore
    /// file), relative to the listed directory's handle: no symlink
    /// followed, never blocking, at most `max_bytes`.
    pub fn read_own_file(&self, name: &OsStr, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
        use rustix::fs::Mode;
        let dir = self.fd()?;
        let file = match rustix::fs::openat(dir, name, ReadKind::File.flags(), Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        read_bounded(file, max_bytes).map(Some)
    }
}

impl Iterator for DirEntries {
    type Item = io::Result<DirItem>;

    fn next(&mut self) -> Option<io::Result<DirItem>> {
        use std::os::unix::ffi::OsStrExt;
        loop {
            let entry = match self.inner.next()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(e.into())),
            };
            let dir = match self.inner.fd() {
                Ok(dir) => dir,
                Err(e) => return Some(Err(e.into())),
            };
            let name = entry.file_name().to_bytes();
            if let Some(kind) = listed_kind(dir, name, entry.file_type()) {
                return Some(Ok(DirItem {
                    name: OsStr::from_bytes(name).to_os_string(),
                    kind,
                }));
            }
        }
    }
}

/// The type of entry `name` of directory `dir` as a listing reports it:
/// what the directory said, or where it does not say (some file systems
/// never do), what `fstatat` says of the entry itself (never opened, a
/// symlink not followed); one that cannot be asked is special, which no
/// tool enters or reads. None for `.` and `..`, which no listing shows.
fn listed_kind(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &[u8],
    reported: rustix::fs::FileType,
) -> Option<EntryKind> {
    if name == b"." || name == b".." {
        return None;
    }
    Some(match reported {
        rustix::fs::FileType::Unknown => kind_at(dir, name).unwrap_or(EntryKind::Special),
        reported => kind_of_type(reported),
    })
}

/// The type of entry `name` of directory `dir`, asked of the file system
/// (not opened, a symlink not followed); None if it cannot be asked (gone).
fn kind_at(dir: std::os::fd::BorrowedFd<'_>, name: &[u8]) -> Option<EntryKind> {
    let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(kind_of_type(rustix::fs::FileType::from_raw_mode(
        st.st_mode as _,
    )))
}

/// The entry kind of a file type.
fn kind_of_type(kind: rustix::fs::FileType) -> EntryKind {
    use rustix::fs::FileType;
    match kind {
        FileType::Directory => EntryKind::Directory,
        FileType::RegularFile => EntryKind::File,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Special,
    }
}

/// The portable walk (kernels without a one-call open): opens each
/// directory component with `O_NOFOLLOW | O_DIRECTORY`, then the last one
/// with `flags`, so no symlink is followed anywhere on the way.
fn open_nofollow_stepwise(
    root: &OwnedFd,
    rel: &Path,
    flags: rustix::fs::OFlags,
) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let dir_flags = dir_handle_flags() | OFlags::NOFOLLOW;
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
pub(super) fn open_absolute_no_symlinks(path: &Path) -> io::Result<(File, Metadata)> {
    let file = open_absolute_nofollow(path, ReadKind::File.flags())?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta))
}

#[cfg(target_os = "linux")]
fn open_absolute_nofollow(path: &Path, flags: rustix::fs::OFlags) -> io::Result<File> {
    use rustix::fs::{CWD, Mode, ResolveFlags};
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(CWD, path, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(File::from(fd)),
        Err(rustix::io::Errno::NOSYS) => open_absolute_stepwise(path, flags),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_absolute_nofollow(path: &Path, flags: rustix::fs::OFlags) -> io::Result<File> {
    open_absolute_stepwise(path, flags)
}

fn open_absolute_stepwise(path: &Path, flags: rustix::fs::OFlags) -> io::Result<File> {
    let root = rustix::fs::open("/", ReadKind::Directory.flags(), rustix::fs::Mode::empty())?;
    let rel = path.strip_prefix("/").map_err(|_| outside_error())?;
    open_nofollow_stepwise(&root, rel, flags)
}

/// Flags for a handle that is only ever a starting point for `openat`:
/// `O_PATH` where the kernel has it (no read permission needed, nothing to
/// read by mistake), a plain read-only directory open elsewhere.
fn dir_handle_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let access = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let access = OFlags::RDONLY;
    access | OFlags::DIRECTORY | OFlags::CLOEXEC
}

fn open_dir_handle(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        dir_handle_flags(),
        rustix::fs::Mode::empty(),
    )?)
}

/// Opens `rel` beneath `dir` in one call, no symlink followed anywhere:
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`.
#[cfg(target_os = "linux")]
fn open_in_one_call(dir: &OwnedFd, rel: &Path, flags: rustix::fs::OFlags) -> io::Result<OwnedFd> {
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

/// Opens `rel` beneath `dir` in one call: `openat` with `O_NOFOLLOW_ANY`,
/// which refuses a symlink in any component. It does not stop `..`, so only
/// paths of plain names take it (the guard's resolved paths have no other
/// kind); anything else takes the walk, which refuses them.
#[cfg(target_os = "macos")]
fn open_in_one_call(dir: &OwnedFd, rel: &Path, flags: rustix::fs::OFlags) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let plain = rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return open_nofollow_stepwise(dir, rel, flags).map(OwnedFd::from);
    }
    Ok(rustix::fs::openat(
        dir,
        rel,
        flags | OFlags::NOFOLLOW_ANY,
        Mode::empty(),
    )?)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn open_in_one_call(
    _dir: &OwnedFd,
    _rel: &Path,
    _flags: rustix::fs::OFlags,
) -> io::Result<OwnedFd> {
    Err(io::Error::from_raw_os_error(
        rustix::io::Errno::NOSYS.raw_os_error(),
    ))
}

/// Whether the kernel refused the one-call open itself (no `openat2`; a
/// flag it does not take), not the path.
fn one_call_refused(e: &io::Error) -> bool {
    use rustix::io::Errno;
    let refusals = [Errno::NOSYS, Errno::INVAL, Errno::NOTSUP, Errno::OPNOTSUPP];
    let code = e.raw_os_error();
    if cfg!(target_os = "linux") {
        code == Some(Errno::NOSYS.raw_os_error())
    } else {
        refusals.iter().any(|r| code == Some(r.raw_os_error()))
    }
}

/// The error of an open that met a symlink where none may be followed.
pub(super) fn is_link_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

/// The error of a path that goes through a file as if it were a directory.
pub(super) fn is_not_dir_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc_enotdir())
}

/// The error of a path that names a directory where a file is needed.
pub(super) fn is_a_directory_error() -> io::Error {
    io::Error::from_raw_os_error(rustix::io::Errno::ISDIR.raw_os_error())
}

fn libc_enotdir() -> i32 {
    rustix::io::Errno::NOTDIR.raw_os_error()
}

pub(super) fn not_regular(meta: &Metadata) -> io::Error {
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

/// Where a resolution ended: the real path, the handles of the
/// directories on it, and what it names.
struct Reached {
    path: PathBuf,
    dirs: Vec<OwnedFd>,
    leaf: Leaf,
}

impl Reached {
    fn missing(path: PathBuf) -> Reached {
        Reached {
            path,
            dirs: Vec::new(),
            leaf: Leaf::Missing,
        }
    }
}

/// What a resolution's path names, as seen through its parent's handle.
enum Leaf {
    /// A directory (the last handle is its own); its metadata once known.
    Dir(Option<Metadata>),
    /// Anything else but a symlink (the last handle is its parent's).
    Other(Metadata),
    /// Nothing.
    Missing,
}

/// An entry looked at relative to its directory's handle.
enum Entry {
    Symlink,
    /// A directory, and a handle of it for the next lookups.
    Dir(OwnedFd, Metadata),
    Other(Metadata),
}

/// Looks at entry `name` of directory `dir` without following a symlink.
/// Linux: an `O_PATH | O_NOFOLLOW` handle of the entry itself (no read
/// permission needed, nothing opened for reading, a FIFO not waited on),
/// and its metadata from the handle.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn look_at(dir: &OwnedFd, name: &OsStr, _path: &Path) -> io::Result<Entry> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::openat(dir, name, flags, Mode::empty())?);
    let meta = file.metadata()?;
    Ok(if meta.file_type().is_symlink() {
        Entry::Symlink
    } else if meta.is_dir() {
        Entry::Dir(file.into(), meta)
    } else {
        Entry::Other(meta)
    })
}

/// Looks at entry `name` of directory `dir` (at `path`) without following
/// a symlink. Without `O_PATH`: `fstatat` on the handle says what it is; a directory
/// is opened (`O_NOFOLLOW | O_DIRECTORY`) for its handle and metadata;
/// anything else gets its metadata by path, kept only if it is the very
/// entry the handle showed (same device and inode), so a directory swapped
/// for a link meanwhile cannot lend an outside file's metadata.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn look_at(dir: &OwnedFd, name: &OsStr, path: &Path) -> io::Result<Entry> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::os::unix::fs::MetadataExt;
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    match FileType::from_raw_mode(st.st_mode as _) {
        FileType::Symlink => Ok(Entry::Symlink),
        FileType::Directory => {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let file = File::from(rustix::fs::openat(dir, name, flags, Mode::empty())?);
            let meta = file.metadata()?;
            Ok(Entry::Dir(file.into(), meta))
        }
        _ => {
            let meta = std::fs::symlink_metadata(path)?;
            if meta.dev() != st.st_dev as u64 || meta.ino() != st.st_ino as u64 {
                return Err(io::Error::other("the entry changed while it was looked at"));
            }
            Ok(Entry::Other(meta))
        }
    }
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

/// Normalises `.` and `..` without touching the file system. Only for
/// display: decisions are made on the resolved path.
pub(super) fn normalize_lexically(path: &Path) -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::darwin_has_nofollow_any;

    #[test]
    fn o_nofollow_any_is_trusted_from_macos_11_on() {
        assert!(darwin_has_nofollow_any("20.6.0"));
        assert!(darwin_has_nofollow_any("25.0.0"));
        assert!(!darwin_has_nofollow_any("19.6.0"));
        assert!(!darwin_has_nofollow_any(""));
        assert!(!darwin_has_nofollow_any("garbage"));
    }
}

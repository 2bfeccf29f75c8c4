//! Atomic writes: a temporary file beside the target, written, given what
//! the old file had (owner, group, mode, and on Linux its extended
//! attributes, POSIX ACLs included: see [`super::kept`]; on Windows its
//! hidden, system and archive attributes), flushed to disk, then renamed
//! over the target. A crash or an error at any point leaves the old content
//! intact, and the temporary file is removed on error. Because the rename
//! replaces the name in its directory, a symlink planted at the target is
//! never followed. The temporary file is created and renamed relative to
//! the directory's handle (`openat`/`renameat`; on Windows `NtCreateFile`
//! and a rename by handle into the directory's handle), never by a path
//! looked up again.
//!
//! Immediately before the rename the name is checked to still hold the file
//! that was read (device, inode, size, modification and change times), and
//! a new file is renamed without replacing anything (`RENAME_NOREPLACE`): a
//! write never replaces content it did not read ([`Changed`]).
//!
//! Also: per-path locks, so two edits of one file in this process queue
//! instead of polling the cross-process lock (`fs/writing.rs`); the rule
//! that a file whose permission bits allow no one to write (on Windows:
//! whose read-only attribute is set) is not replaced, whoever we run as; and
//! the removal of temporary files that crashed writes left behind.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;

use crate::fs::guard::DirHandle;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// How temporary files are named: `.rootbound-<pid>-<n>.tmp`.
const TEMP_PREFIX: &str = ".rootbound-";
const TEMP_SUFFIX: &str = ".tmp";

fn temp_name() -> String {
    format!(
        "{TEMP_PREFIX}{}-{}{TEMP_SUFFIX}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The file a write replaces, as it was read: an open handle on it (where
/// its extended attributes are copied from) and its metadata when opened,
/// before its content was read.
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    /// Read for its extended attributes, which only Linux copies; None on
    /// Windows, which cannot rename over a file that is open.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub file: Option<&'a File>,
    pub metadata: &'a Metadata,
}

/// What a write's rename may replace.
#[derive(Clone, Copy)]
pub enum Replacing<'a> {
    /// Nothing: the write makes a new file, and fails with [`Changed`] if
    /// something appeared at the name meanwhile.
    Nothing,
    /// The file that was read: it must still be at the name at the rename
    /// (else [`Changed`]), and the new file takes its owner, group, mode and
    /// attributes.
    Read(Previous<'a>),
    /// Whatever is there, unchecked: for the server's own copies put back
    /// over what a command left (`fs/protected`), which set their own mode.
    /// Unix only, as that check is.
    #[cfg_attr(windows, allow(dead_code))]
    Whatever,
}

impl<'a> Replacing<'a> {
    fn previous(self) -> Option<Previous<'a>> {
        match self {
            Replacing::Read(previous) => Some(previous),
            Replacing::Nothing | Replacing::Whatever => None,
        }
    }
}

/// Writes `bytes` as the file `name` in `dir`, atomically, replacing what
/// `replacing` says. Ok: the new file's metadata, once renamed.
pub fn write(
    dir: &DirHandle,
    name: &OsStr,
    bytes: &[u8],
    replacing: Replacing<'_>,
) -> io::Result<Metadata> {
    write_with(dir, name, replacing, |file| file.write_all(bytes))
}

/// Like [`write()`], with the content produced by `fill` (tests use it to fail
/// half-way).
pub fn write_with(
    dir: &DirHandle,
    name: &OsStr,
    replacing: Replacing<'_>,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<Metadata> {
    sys::write_with(dir, name, replacing, fill)
}

/// Removes `name` from `dir` if it still holds the file that was `read`
/// (else [`Changed`]): undoing an edit that created it.
pub fn remove_read(dir: &DirHandle, name: &OsStr, read: &Metadata) -> io::Result<()> {
    sys::still_there(dir, name, read)?;
    sys::remove(dir, name)
}

/// The name no longer holds the file that was read (or, for a new file,
/// something appeared there): another program wrote it meanwhile, and
/// renaming over it would lose that write.
#[derive(Debug)]
pub struct Changed;

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the file changed on disk after it was read")
    }
}

impl std::error::Error for Changed {}

fn changed() -> io::Error {
    io::Error::other(Changed)
}

/// Whether a write failed because the file changed under it.
pub fn is_changed(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Changed>())
}

/// A pause between writing the temporary file and the final check, from
/// `ROOTBOUND_TEST_PAUSE_BEFORE_RENAME_MS`: integration tests widen the
/// window in which another program may write the file, to show that the
/// check catches it. Read once; unset in any real use.
fn pause_before_rename() {
    static PAUSE: LazyLock<Option<Duration>> = LazyLock::new(|| {
        std::env::var("ROOTBOUND_TEST_PAUSE_BEFORE_RENAME_MS")
            .ok()?
            .parse()
            .ok()
            .map(Duration::from_millis)
    });
    if let Some(pause) = *PAUSE {
        std::thread::sleep(pause);
    }
}

/// A file that is read-only by intent: no write bit in its mode (0444), or
/// on Windows its read-only attribute.
#[derive(Debug)]
pub struct ModeDeniesWriting {
    /// How the file says so: "mode 0444", "the read-only attribute".
    pub shown: String,
}

impl std::fmt::Display for ModeDeniesWriting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "its {} denies writing", self.shown)
    }
}

impl std::error::Error for ModeDeniesWriting {}

/// Whether this process may replace the existing file `name` in `dir`,
/// whose metadata is `previous`. A file whose mode has no write bit (0444)
/// is read-only by intent and refused even when we run as root, whom
/// `access()` would let through; otherwise the kernel decides (ACLs
/// included). Root may still replace a 0644 file of another user: that is
/// how containers that run as root edit a mounted project. On Windows the
/// read-only attribute plays the mode's part; ACLs decide at the rename.
pub fn check_writable(dir: &DirHandle, name: &OsStr, previous: &Metadata) -> io::Result<()> {
    sys::check_writable(dir, name, previous)
}

/// Directories already swept in this process, by (device, inode) or on
/// Windows (volume, file index).
static SWEPT: LazyLock<Mutex<HashSet<(u64, u64)>>> = LazyLock::new(Mutex::default);

/// Removes temporary files that writes of crashed processes left in `dir`:
/// `.rootbound-<pid>-<n>.tmp` whose process no longer exists (a live
/// process, this one or another server, may be writing it right now). Done
/// once per directory per process, the first time a write touches it, so a
/// huge directory is listed once, not on every write. `shown` names the
/// directory in the log. Returns how many were removed.
pub fn sweep_stale_temps(dir: &DirHandle, shown: &Path) -> usize {
    let Ok(key) = sys::dir_key(dir) else {
        return 0;
    };
    if !SWEPT.lock().unwrap_or_else(|p| p.into_inner()).insert(key) {
        return 0;
    }
    let Ok(names) = sys::entry_names(dir) else {
        return 0;
    };
    let own = std::process::id();
    let mut removed = 0;
    for name in names {
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        if pid == own || sys::process_exists(pid) {
            continue;
        }
        if sys::remove(dir, &name).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::debug!(
            "removed {removed} temporary file(s) that writes of ended processes left in {}",
            shown.display()
        );
    }
    removed
}

/// How far the sweep at start goes: directories listed, entries read, time
/// taken, handles open at once (the next directories to list). A tree
/// bigger than that is swept where writes go, as before.
#[cfg(unix)]
const START_SWEEP_DIRS: usize = 4096;
#[cfg(unix)]
const START_SWEEP_ENTRIES: usize = 200_000;
#[cfg(unix)]
const START_SWEEP_TIME: Duration = Duration::from_secs(5);
#[cfg(unix)]
const START_SWEEP_OPEN: usize = 256;
/// How long the sweep waits before it starts: the client's handshake and
/// first listing come first. Run beside them, it made the first
/// `tools/list` of a server rooted in a big tree take 3.9 ms instead of
/// 0.5 ms on two cores. A write before it sweeps its own directory.
#[cfg(unix)]
const START_SWEEP_DELAY: Duration = Duration::from_millis(200);

/// Soon after start, on a thread of its own (start-up never waits for it,
/// and it waits for [`START_SWEEP_DELAY`] first): removes
/// the temporary files of ended processes from each root and the
/// directories below it, breadth first (shallow directories, where most
/// edits go, first), within [`START_SWEEP_DIRS`] directories,
/// [`START_SWEEP_ENTRIES`] entries and [`START_SWEEP_TIME`]. Subdirectories
/// are opened relative to their parent's handle without following a
/// symlink, so the sweep never leaves a root; `.git` is not entered (no
/// write goes there). Directories swept count as swept for later writes.
#[cfg(unix)]
pub fn sweep_at_start(roots: Vec<(DirHandle, PathBuf)>) {
    let spawned = std::thread::Builder::new()
        .name("sweep-temps".into())
        .spawn(move || {
            std::thread::sleep(START_SWEEP_DELAY);
            let removed: usize = roots
                .into_iter()
                .map(|(dir, shown)| sweep_tree(dir, shown))
                .sum();
            tracing::debug!("sweep at start removed {removed} stale temporary file(s)");
        });
    if let Err(e) = spawned {
        tracing::debug!("no sweep at start: {e}");
    }
}

/// The sweep of one root (see [`sweep_at_start`]); how many were removed.
#[cfg(unix)]
fn sweep_tree(root: DirHandle, shown: PathBuf) -> usize {
    use rustix::fs::{FileType, Mode, OFlags};
    let started = std::time::Instant::now();
    let (mut dirs, mut entries, mut removed) = (0, 0, 0);
    let mut queue = std::collections::VecDeque::from([(root, shown)]);
    let own = std::process::id();
    while let Some((dir, path)) = queue.pop_front() {
        if dirs >= START_SWEEP_DIRS
            || entries >= START_SWEEP_ENTRIES
            || started.elapsed() >= START_SWEEP_TIME
        {
            tracing::debug!(
                "sweep at start stopped at its bounds ({dirs} directories, {entries} entries)"
            );
            break;
        }
        dirs += 1;
        let fresh = sys::dir_key(&dir)
            .is_ok_and(|key| SWEPT.lock().unwrap_or_else(|p| p.into_inner()).insert(key));
        let Ok(listing) = rustix::fs::Dir::read_from(&dir) else {
            continue;
        };
        for entry in listing.flatten() {
            entries += 1;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            if let Some(pid) = name.to_str().and_then(temp_owner) {
                if fresh
                    && pid != own
                    && !sys::process_exists(pid)
                    && sys::remove(&dir, name).is_ok()
                {
                    removed += 1;
                }
                continue;
            }
            if entry.file_type() != FileType::Directory
                || name == ".git"
                || queue.len() >= START_SWEEP_OPEN
            {
                continue;
            }
            let flags = OFlags::RDONLY
                | OFlags::DIRECTORY
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC;
            if let Ok(sub) = rustix::fs::openat(&dir, name, flags, Mode::empty()) {
                queue.push_back((sub, path.join(name)));
            }
        }
        if removed > 0 {
            tracing::trace!("swept {}", path.display());
        }
    }
    removed
}

/// The process id in a temporary file's name, if it is one of ours.
fn temp_owner(name: &str) -> Option<u32> {
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (pid, counter) = middle.split_once('-')?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

#[cfg(unix)]
mod sys {
    use std::ffi::{OsStr, OsString};
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;

    use rustix::fs::{AtFlags, Mode, OFlags};

    use super::{ModeDeniesWriting, Replacing, changed, pause_before_rename, temp_name};

    pub fn write_with(
        dir: &OwnedFd,
        name: &OsStr,
        replacing: Replacing<'_>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<Metadata> {
        let previous = replacing.previous();
        let temp = temp_name();
        // New files get 0o666 less the umask, like any editor's; a replaced
        // file's bits are copied below, so start private.
        let mode = if previous.is_some() { 0o600 } else { 0o666 };
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, temp.as_str(), flags, Mode::from_raw_mode(mode))?;
        let mut file = File::from(fd);
        let result = (|| {
            fill(&mut file)?;
            // After the content: a write clears set-id bits and file
            // capabilities again.
            if let Some(previous) = previous {
                crate::fs::kept::pass_on(previous, &file)?;
            }
            file.sync_data()?;
            pause_before_rename();
            match replacing {
                Replacing::Read(previous) => {
                    still_there(dir, name, previous.metadata)?;
                    rustix::fs::renameat(dir, temp.as_str(), dir, name)?;
                }
                Replacing::Whatever => rustix::fs::renameat(dir, temp.as_str(), dir, name)?,
                Replacing::Nothing => rename_new(dir, &temp, name)?,
            }
            // After the rename, which moves the change time.
            file.metadata()
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
        }
        result
    }

    /// Err([`super::Changed`]) unless `name` still holds the file whose
    /// metadata was `read`: same inode, size and times. A rewrite in place
    /// keeps the inode but moves the modification time; a rename over it
    /// changes the inode; a chmod or a new ACL moves the change time.
    pub fn still_there(dir: &OwnedFd, name: &OsStr, read: &Metadata) -> io::Result<()> {
        let now = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) => now,
            Err(rustix::io::Errno::NOENT) => return Err(changed()),
            Err(e) => return Err(e.into()),
        };
        #[allow(
            clippy::unnecessary_cast,
            reason = "the field types differ by platform"
        )]
        let same = now.st_dev as u64 == read.dev()
            && now.st_ino as u64 == read.ino()
            && now.st_size as i64 == read.size() as i64
            && now.st_mtime as i64 == read.mtime()
            && now.st_mtime_nsec as i64 == read.mtime_nsec()
            && now.st_ctime as i64 == read.ctime()
            && now.st_ctime_nsec as i64 == read.ctime_nsec();
        if same { Ok(()) } else { Err(changed()) }
    }

    /// Renames the temporary file to `name` only if nothing is there:
    /// `RENAME_NOREPLACE` on Linux; elsewhere, or on a file system without
    /// it, a check just before the rename.
    fn rename_new(dir: &OwnedFd, temp: &str, name: &OsStr) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rustix::fs::renameat_with(dir, temp, dir, name, rustix::fs::RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::EXIST) => return Err(changed()),
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Err(changed()),
            Err(rustix::io::Errno::NOENT) => Ok(rustix::fs::renameat(dir, temp, dir, name)?),
            Err(e) => Err(e.into()),
        }
    }

    pub fn check_writable(dir: &OwnedFd, name: &OsStr, previous: &Metadata) -> io::Result<()> {
        let mode = previous.mode() & 0o7777;
        if mode & 0o222 == 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                ModeDeniesWriting {
                    shown: format!("mode {mode:04o}"),
                },
            ));
        }
        rustix::fs::accessat(
            dir,
            name,
            rustix::fs::Access::WRITE_OK,
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(io::Error::from)
    }

    pub fn dir_key(dir: &OwnedFd) -> io::Result<(u64, u64)> {
        let meta = dir.try_clone().map(File::from)?.metadata()?;
        Ok((meta.dev(), meta.ino()))
    }

    pub fn entry_names(dir: &OwnedFd) -> io::Result<Vec<OsString>> {
        let entries = rustix::fs::Dir::read_from(dir)?;
        Ok(entries
            .flatten()
            .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
            .collect())
    }

    pub fn remove(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
    }

    pub fn process_exists(pid: u32) -> bool {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // EPERM: it exists but is not ours to signal; it is alive all the same.
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
}

#[cfg(windows)]
mod sys {
    use std::ffi::{OsStr, OsString};
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::windows::fs::MetadataExt;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Foundation::{CloseHandle, ERROR_INVALID_PARAMETER, HANDLE};
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    use super::{ModeDeniesWriting, Replacing, changed, pause_before_rename, temp_name};
    use crate::fs::nt;

    /// The attributes a replaced file passes on to its successor.
    const KEPT_ATTRIBUTES: u32 = nt::FILE_ATTRIBUTE_HIDDEN
        | nt::FILE_ATTRIBUTE_SYSTEM
        | nt::FILE_ATTRIBUTE_ARCHIVE
        | nt::FILE_ATTRIBUTE_NOT_CONTENT_INDEXED;

    pub fn write_with(
        dir: &File,
        name: &OsStr,
        replacing: Replacing<'_>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<Metadata> {
        let previous = replacing.previous();
        let temp = temp_name();
        let mut file = nt::open_relative(
            dir,
            OsStr::new(&temp),
            nt::FILE_GENERIC_WRITE | nt::FILE_READ_ATTRIBUTES | nt::DELETE,
            nt::FILE_CREATE,
            nt::FILE_NON_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
        )?;
        let result = (|| {
            fill(&mut file)?;
            if let Some(previous) = previous {
                let kept = previous.metadata.file_attributes() & KEPT_ATTRIBUTES;
                if kept != 0 {
                    nt::set_attributes(&file, kept)?;
                }
            }
            file.sync_data()?;
            let written = file.metadata()?;
            pause_before_rename();
            if let Some(previous) = previous {
                still_there(dir, name, previous.metadata)?;
            }
            // A new file replaces nothing: a file that appeared meanwhile is
            // someone else's write.
            let new = matches!(replacing, Replacing::Nothing);
            match nt::rename_into(&file, dir, name, !new) {
                Err(e) if new && e.kind() == io::ErrorKind::AlreadyExists => Err(changed()),
                Err(e) => Err(e),
                Ok(()) => Ok(written),
            }
        })();
        if result.is_err() {
            let _ = nt::delete_when_closed(&file);
        }
        result
    }

    /// Err([`super::Changed`]) unless `name` still holds a file of the size
    /// and times of the one that was `read`.
    pub fn still_there(dir: &File, name: &OsStr, read: &Metadata) -> io::Result<()> {
        let now = match nt::open_relative(
            dir,
            name,
            nt::FILE_READ_ATTRIBUTES,
            nt::FILE_OPEN,
            nt::FILE_NON_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
        ) {
            Ok(file) => file.metadata()?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(changed()),
            Err(e) => return Err(e),
        };
        let same = now.file_size() == read.file_size()
            && now.last_write_time() == read.last_write_time()
            && now.creation_time() == read.creation_time();
        if same { Ok(()) } else { Err(changed()) }
    }

    pub fn check_writable(_dir: &File, _name: &OsStr, previous: &Metadata) -> io::Result<()> {
        if previous.permissions().readonly() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                ModeDeniesWriting {
                    shown: "read-only attribute".into(),
                },
            ));
        }
        Ok(())
    }

    pub fn dir_key(dir: &File) -> io::Result<(u64, u64)> {
        // SAFETY: plain data; zero is a valid bit pattern.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live local; the handle is open.
        if unsafe { GetFileInformationByHandle(dir.as_raw_handle() as HANDLE, &mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
        Ok((u64::from(info.dwVolumeSerialNumber), index))
    }

    pub fn entry_names(dir: &File) -> io::Result<Vec<OsString>> {
        nt::RawEntries::new(dir.try_clone()?)
            .map(|entry| entry.map(|e| e.name))
            .collect()
    }

    pub fn remove(dir: &File, name: &OsStr) -> io::Result<()> {
        let file = nt::open_relative(
            dir,
            name,
            nt::DELETE,
            nt::FILE_OPEN,
            nt::FILE_NON_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT | nt::FILE_DELETE_ON_CLOSE,
        )?;
        drop(file);
        Ok(())
    }

    pub fn process_exists(pid: u32) -> bool {
        /// `GetExitCodeProcess`'s answer for a process still running.
        const STILL_ACTIVE: u32 = 259;
        // SAFETY: no pointers; a null handle is checked below.
        let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if handle.is_null() {
            // Access denied: it exists, it is not ours to ask.
            return io::Error::last_os_error().raw_os_error()
                != Some(ERROR_INVALID_PARAMETER as i32);
        }
        let mut code = 0u32;
        // SAFETY: `handle` is open and ours; `code` is a live local.
        let asked = unsafe { GetExitCodeProcess(handle, &mut code) };
        // SAFETY: closed once, here.
        unsafe { CloseHandle(handle) };
        asked == 0 || code == STILL_ACTIVE
    }
}

/// One lock per file path, created on demand and dropped when unused: edits
/// of one file in this process wait their turn here, asleep, before they
/// take the lock other processes see (`fs/writing.rs`).
#[derive(Debug, Default)]
pub struct PathLocks {
    locks: Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>,
}

impl PathLocks {
    /// The lock for `path`; hold its guard for the whole read-modify-write.
    pub fn lock_for(&self, path: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(lock) = locks.get(path).and_then(Weak::upgrade) {
            return lock;
        }
        locks.retain(|_, weak| weak.strong_count() > 0);
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        locks.insert(path.to_path_buf(), Arc::downgrade(&lock));
        lock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory's handle, as the guard hands it to writes.
    fn open_dir(path: &Path) -> DirHandle {
        let guard = crate::fs::guard::Guard::new(&[path]).unwrap();
        let resolved = guard.resolve("probe").unwrap();
        guard.open_parent_dir(&resolved, false).unwrap().0
    }

    fn entries(path: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The file at `path`, opened and described as a write tool reads it.
    fn read(path: &Path) -> (File, Metadata) {
        let file = File::open(path).unwrap();
        let metadata = file.metadata().unwrap();
        (file, metadata)
    }

    #[cfg(unix)]
    #[test]
    fn replaces_content_and_keeps_permission_and_set_id_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o755, 0o2755, 0o4750, 0o640] {
            let target = dir.path().join("script.sh");
            std::fs::write(&target, "old").unwrap();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
            let (file, metadata) = read(&target);
            let previous = Previous {
                file: Some(&file),
                metadata: &metadata,
            };
            write(
                &open_dir(dir.path()),
                OsStr::new("script.sh"),
                b"new",
                Replacing::Read(previous),
            )
            .unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"new");
            // Tests run as root here, whom the kernel lets keep set-id bits.
            assert_eq!(
                std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
                mode,
                "{mode:o}"
            );
            assert_eq!(entries(dir.path()), vec!["script.sh"]);
        }
    }

    #[test]
    fn a_file_changed_after_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data.txt");
        std::fs::write(&target, "as read").unwrap();
        let (file, metadata) = read(&target);
        // Windows cannot rename over a file that is open: a write closes
        // its handle before the rename, and so does this.
        let file = if cfg!(windows) {
            drop(file);
            None
        } else {
            Some(file)
        };
        // Another program renames a new file over it.
        std::fs::write(dir.path().join("other"), "theirs").unwrap();
        std::fs::rename(dir.path().join("other"), &target).unwrap();
        let previous = Previous {
            file: file.as_ref(),
            metadata: &metadata,
        };
        let handle = open_dir(dir.path());
        let err = write(
            &handle,
            OsStr::new("data.txt"),
            b"mine",
            Replacing::Read(previous),
        );
        assert!(is_changed(&err.unwrap_err()));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        // Or rewrites it in place, same inode, same size.
        let (file, metadata) = read(&target);
        // Windows cannot rename over a file that is open: a write closes
        // its handle before the rename, and so does this.
        let file = if cfg!(windows) {
            drop(file);
            None
        } else {
            Some(file)
        };
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&target, "THEIRS").unwrap();
        let previous = Previous {
            file: file.as_ref(),
            metadata: &metadata,
        };
        let err = write(
            &handle,
            OsStr::new("data.txt"),
            b"mine",
            Replacing::Read(previous),
        );
        assert!(is_changed(&err.unwrap_err()));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "THEIRS");
        // A new file does not replace one that appeared.
        let err = write(&handle, OsStr::new("data.txt"), b"mine", Replacing::Nothing);
        assert!(is_changed(&err.unwrap_err()));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "THEIRS");
        assert_eq!(entries(dir.path()), vec!["data.txt"]);
    }

    #[test]
    fn a_failure_half_way_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data.txt");
        std::fs::write(&target, "original content").unwrap();
        let (file, metadata) = read(&target);
        let previous = Previous {
            file: Some(&file),
            metadata: &metadata,
        };
        let err = write_with(
            &open_dir(dir.path()),
            OsStr::new("data.txt"),
            Replacing::Read(previous),
            |f| {
                f.write_all(b"half of the new")?;
                Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    "disk full (simulated)",
                ))
            },
        )
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "original content"
        );
        assert_eq!(entries(dir.path()), vec!["data.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_is_replaced_or_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        let handle = open_dir(dir.path());
        // Planted where a new file was to be made: refused.
        std::os::unix::fs::symlink(&victim, dir.path().join("f")).unwrap();
        let err = write(&handle, OsStr::new("f"), b"mine", Replacing::Nothing).unwrap_err();
        assert!(is_changed(&err));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        // Planted over the file that was read: refused too.
        std::fs::write(dir.path().join("g"), "read").unwrap();
        let (file, metadata) = read(&dir.path().join("g"));
        std::fs::remove_file(dir.path().join("g")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("g")).unwrap();
        let previous = Previous {
            file: Some(&file),
            metadata: &metadata,
        };
        let err = write(&handle, OsStr::new("g"), b"mine", Replacing::Read(previous)).unwrap_err();
        assert!(is_changed(&err));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        // Put back by the server over whatever is there: replaced.
        write(&handle, OsStr::new("f"), b"mine", Replacing::Whatever).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        let meta = std::fs::symlink_metadata(dir.path().join("f")).unwrap();
        assert!(meta.is_file());
    }

    #[test]
    fn locks_are_shared_per_path_and_released() {
        let locks = PathLocks::default();
        let a = locks.lock_for(Path::new("/x/a"));
        let a2 = locks.lock_for(Path::new("/x/a"));
        assert!(Arc::ptr_eq(&a, &a2));
        let b = locks.lock_for(Path::new("/x/b"));
        assert!(!Arc::ptr_eq(&a, &b));
        drop((a, a2, b));
        let fresh = locks.lock_for(Path::new("/x/c"));
        assert_eq!(locks.locks.lock().unwrap().len(), 1);
        drop(fresh);
    }
}

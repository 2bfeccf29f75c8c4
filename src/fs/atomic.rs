//! Atomic writes: a temporary file beside the target, written, flushed to
//! disk, given the old file's permission bits (on Windows: its hidden,
//! system and archive attributes), then renamed over the target. A crash or
//! an error at any point leaves the old content intact, and the temporary
//! file is removed on error. Because the rename replaces the name in its
//! directory, a symlink planted at the target is replaced, never followed.
//! The temporary file is created and renamed relative to the directory's
//! handle (`openat`/`renameat`; on Windows `NtCreateFile` and a rename by
//! handle into the directory's handle), never by a path looked up again.
//!
//! Also: per-path locks, so two edits of one file cannot interleave their
//! read-modify-write cycles and lose one of them; the rule that a file whose
//! permission bits allow no one to write (on Windows: whose read-only
//! attribute is set) is not replaced, whoever we run as; and the removal of
//! temporary files that crashed writes left behind.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

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

/// Writes `bytes` as the file `name` in `dir`, atomically. `previous` is the
/// metadata of the file being replaced, whose permission bits (and, where
/// allowed, owner) the new file takes.
pub fn write(
    dir: &DirHandle,
    name: &OsStr,
    bytes: &[u8],
    previous: Option<&Metadata>,
) -> io::Result<()> {
    write_with(dir, name, previous, |file| file.write_all(bytes))
}

/// Like [`write`], with the content produced by `fill` (tests use it to fail
/// half-way).
pub fn write_with(
    dir: &DirHandle,
    name: &OsStr,
    previous: Option<&Metadata>,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    sys::write_with(dir, name, previous, fill)
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

    use super::{ModeDeniesWriting, temp_name};

    pub fn write_with(
        dir: &OwnedFd,
        name: &OsStr,
        previous: Option<&Metadata>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
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
            if let Some(previous) = previous {
                rustix::fs::fchmod(&file, Mode::from_raw_mode((previous.mode() & 0o7777) as _))?;
                // Keep the owner when we may (running as root); not an error otherwise.
                let _ = rustix::fs::fchown(
                    &file,
                    Some(rustix::fs::Uid::from_raw(previous.uid())),
                    Some(rustix::fs::Gid::from_raw(previous.gid())),
                );
            }
            file.sync_data()?;
            rustix::fs::renameat(dir, temp.as_str(), dir, name)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
        }
        result
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

    use super::{ModeDeniesWriting, temp_name};
    use crate::fs::nt;

    /// The attributes a replaced file passes on to its successor.
    const KEPT_ATTRIBUTES: u32 = nt::FILE_ATTRIBUTE_HIDDEN
        | nt::FILE_ATTRIBUTE_SYSTEM
        | nt::FILE_ATTRIBUTE_ARCHIVE
        | nt::FILE_ATTRIBUTE_NOT_CONTENT_INDEXED;

    pub fn write_with(
        dir: &File,
        name: &OsStr,
        previous: Option<&Metadata>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
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
                let kept = previous.file_attributes() & KEPT_ATTRIBUTES;
                if kept != 0 {
                    nt::set_attributes(&file, kept)?;
                }
            }
            file.sync_data()?;
            nt::rename_into(&file, dir, name, true)
        })();
        if result.is_err() {
            let _ = nt::delete_when_closed(&file);
        }
        result
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

/// One lock per file path, created on demand and dropped when unused.
#[derive(Debug, Default)]
pub struct PathLocks {
    locks: Mutex<HashMap<PathBuf, Weak<Mutex<()>>>>,
}

impl PathLocks {
    /// The lock for `path`; hold its guard for the whole read-modify-write.
    pub fn lock_for(&self, path: &Path) -> Arc<Mutex<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(lock) = locks.get(path).and_then(Weak::upgrade) {
            return lock;
        }
        locks.retain(|_, weak| weak.strong_count() > 0);
        let lock = Arc::new(Mutex::new(()));
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

    #[cfg(unix)]
    #[test]
    fn replaces_content_and_keeps_permission_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("script.sh");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let previous = std::fs::metadata(&target).unwrap();
        write(
            &open_dir(dir.path()),
            OsStr::new("script.sh"),
            b"new",
            Some(&previous),
        )
        .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777,
            0o755
        );
        assert_eq!(entries(dir.path()), vec!["script.sh"]);
    }

    #[test]
    fn a_failure_half_way_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data.txt");
        std::fs::write(&target, "original content").unwrap();
        let previous = std::fs::metadata(&target).unwrap();
        let err = write_with(
            &open_dir(dir.path()),
            OsStr::new("data.txt"),
            Some(&previous),
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
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("f")).unwrap();
        write(&open_dir(dir.path()), OsStr::new("f"), b"mine", None).unwrap();
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

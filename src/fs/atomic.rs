//! Atomic writes: a temporary file beside the target, written, flushed to
//! disk, given the old file's permission bits, then renamed over the target.
//! A crash or an error at any point leaves the old content intact, and the
//! temporary file is removed on error. Because the rename replaces the name
//! in its directory, a symlink planted at the target is replaced, never
//! followed.
//!
//! Also: per-path locks, so two edits of one file cannot interleave their
//! read-modify-write cycles and lose one of them.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rustix::fs::{AtFlags, Mode, OFlags};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` as the file `name` in `dir`, atomically. `previous` is the
/// metadata of the file being replaced, whose permission bits (and, where
/// allowed, owner) the new file takes.
pub fn write(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    previous: Option<&Metadata>,
) -> io::Result<()> {
    write_with(dir, name, previous, |file| file.write_all(bytes))
}

/// Like [`write`], with the content produced by `fill` (tests use it to fail
/// half-way).
pub fn write_with(
    dir: &OwnedFd,
    name: &OsStr,
    previous: Option<&Metadata>,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let temp = format!(
        ".rootbound-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    // New files get 0o666 less the umask, like any editor's; a replaced
    // file's bits are copied below, so start private.
    let mode = if previous.is_some() { 0o600 } else { 0o666 };
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, temp.as_str(), flags, Mode::from_raw_mode(mode))?;
    let mut file = File::from(fd);
    let result = (|| {
        fill(&mut file)?;
        if let Some(previous) = previous {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(previous.mode() & 0o7777))?;
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

/// Whether this process may write the existing file `name` in `dir`.
pub fn may_write(dir: &OwnedFd, name: &OsStr) -> bool {
    rustix::fs::accessat(
        dir,
        name,
        rustix::fs::Access::WRITE_OK,
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .is_ok()
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
    use std::os::unix::fs::PermissionsExt;

    fn open_dir(path: &Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    fn entries(path: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_content_and_keeps_permission_bits() {
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

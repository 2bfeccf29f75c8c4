//! Temporary directories for bash calls, all under one directory per server
//! and one per user:
//!
//! ```text
//! $TMPDIR/rootbound-<uid>/             the user's, 0700, checked before use
//!     <pid>-<nanoseconds>/             one server's, removed when it ends
//!         lock                         locked for as long as the server runs
//!         tmp/                         where each call's fresh file system in
//!                                      memory is mounted (Linux)
//!         call-<n>/                    a call's own directory otherwise
//! ```
//!
//! A server's directory whose lock nobody holds belongs to a server that is
//! gone (killed before it could clean up) and is removed by the next server
//! to start. The lock, not a process id, says who is alive: a server in
//! another PID namespace sharing the directory is never taken for dead.
//! Nothing outside `rootbound-<uid>` is ever touched.

use std::fs::{DirBuilder, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// A server directory without a lock file is taken as abandoned only after
/// this long (its server may be between creating it and locking it).
const UNLOCKED_GRACE: Duration = Duration::from_secs(60);

/// One server's temporary directory, locked while the server runs.
#[derive(Debug)]
pub struct ServerTemp {
    dir: PathBuf,
    /// Held for the server's lifetime: the sign that it is alive.
    _lock: File,
    next_call: AtomicU64,
}

impl ServerTemp {
    /// Creates and locks this server's directory under `base` (normally
    /// the system's temporary directory).
    pub fn create(base: &Path) -> io::Result<ServerTemp> {
        // Resolved first: macOS's `$TMPDIR` lies under `/var`, a link to
        // `/private/var`, and its sandbox profile matches resolved paths.
        let base = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
        let user_dir = user_dir(&base);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = user_dir.join(format!("{}-{nanos}", std::process::id()));
        // Another server may remove the (empty) user directory as it ends;
        // then make it again.
        let mut attempts = 0;
        loop {
            crate::fs::dir_locks::private_dir(&user_dir)?;
            match DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound && attempts < 3 => attempts += 1,
                Err(e) => return Err(e),
            }
        }
        let lock = File::options()
            .write(true)
            .create_new(true)
            .open(dir.join("lock"))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ServerTemp {
            dir,
            _lock: lock,
            next_call: AtomicU64::new(0),
        })
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Where each call's fresh file system in memory is mounted; created.
    #[cfg(target_os = "linux")]
    pub fn mount_point(&self) -> io::Result<PathBuf> {
        let path = self.dir.join("tmp");
        match DirBuilder::new().mode(0o700).create(&path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(path),
        }
    }

    /// A new directory for one call, removed when dropped.
    pub fn private_dir(&self) -> io::Result<PrivateTemp> {
        loop {
            let n = self.next_call.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(format!("call-{n}"));
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateTemp { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Removes the directories of servers that are gone; returns how many.
    pub fn remove_abandoned(&self) -> usize {
        let Some(parent) = self.dir.parent() else {
            return 0;
        };
        let Ok(entries) = std::fs::read_dir(parent) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path == self.dir {
                continue;
            }
            if abandoned(&path) && remove_tree(&path).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Removes this server's directory, and the user's if it is then empty.
    pub fn remove(&self) {
        match remove_tree(&self.dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                tracing::warn!("cannot remove {}: {e}", self.dir.display());
            }
            _ => {}
        }
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// `$TMPDIR/rootbound-<uid>`.
fn user_dir(base: &Path) -> PathBuf {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    base.join(format!("rootbound-{uid}"))
}

/// A server directory whose lock can be taken: its server is gone.
fn abandoned(dir: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    if !meta.is_dir() {
        return false;
    }
    match File::options().read(true).open(dir.join("lock")) {
        // SAFETY: flock on a descriptor we own; the lock is dropped with it.
        Ok(lock) => unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 },
        Err(e) if e.kind() == io::ErrorKind::NotFound => meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > UNLOCKED_GRACE),
        Err(_) => false,
    }
}

/// A call's private temporary directory (`TMPDIR`), removed when dropped,
/// which is when the call ends, however it ends.
#[derive(Debug)]
pub struct PrivateTemp {
    path: PathBuf,
}

impl PrivateTemp {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        if let Err(e) = remove_tree(&self.path) {
            tracing::warn!("cannot remove {}: {e}", self.path.display());
        }
    }
}

/// Removes a directory tree a call may have left in any state: first as it
/// is, then, if a directory inside was made unreadable or unwritable
/// (`chmod 000`, which stops even its owner), after giving every directory
/// in it back its owner's rights. Symlinks are never followed (the call has
/// ended, so nothing swaps them meanwhile).
fn remove_tree(path: &Path) -> io::Result<()> {
    if std::fs::remove_dir_all(path).is_ok() {
        return Ok(());
    }
    restore_owner_rights(path);
    std::fs::remove_dir_all(path)
}

fn restore_owner_rights(dir: &Path) {
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            restore_owner_rights(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_of_servers_that_are_gone_are_removed() {
        let base = tempfile::tempdir().unwrap();
        let user = user_dir(base.path());
        let ours = ServerTemp::create(base.path()).unwrap();
        let live = ServerTemp::create(base.path()).unwrap();
        // A server killed before it cleaned up: its lock file is unlocked.
        let gone = user.join("1-1");
        std::fs::create_dir_all(gone.join("call-0/deep")).unwrap();
        std::fs::write(gone.join("lock"), "").unwrap();
        // A server that has made its directory but not yet its lock.
        let starting = user.join("2-2");
        std::fs::create_dir(&starting).unwrap();
        // The user's own data beside ours, named like a directory of ours.
        let data = base.path().join("rootbound-3999999-mydata");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("notes.txt"), "keep").unwrap();

        assert_eq!(ours.remove_abandoned(), 1);
        assert!(!gone.exists());
        assert!(live.path().join("lock").exists());
        assert!(starting.exists());
        assert_eq!(
            std::fs::read_to_string(data.join("notes.txt")).unwrap(),
            "keep"
        );

        let call = ours.private_dir().unwrap();
        std::fs::write(call.path().join("f"), "x").unwrap();
        let call_path = call.path().to_path_buf();
        drop(call);
        assert!(!call_path.exists());
        ours.remove();
        assert!(!ours.path().exists());
        assert!(user.exists(), "another server's directory is still in it");
    }

    #[test]
    fn a_user_directory_someone_else_could_enter_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let user = user_dir(base.path());
        std::fs::create_dir(&user).unwrap();
        std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ServerTemp::create(base.path()).unwrap_err();
        assert!(err.to_string().contains("not a private directory"), "{err}");
        std::fs::remove_dir(&user).unwrap();
        std::os::unix::fs::symlink(base.path(), &user).unwrap();
        assert!(ServerTemp::create(base.path()).is_err());
    }
}

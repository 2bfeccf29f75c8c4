//! Advisory locks on directories, shared by every rootbound server on the
//! machine, so that what one server checked of a git repository is what git
//! reads, even when another server writes in the same tree.
//!
//! A server holds a shared lock on each of its roots while it writes there
//! (a writable bash line, `write_file`, `replace`). A line that runs git
//! holds an exclusive lock on the repository's directory and on every
//! directory above it, from its configuration check to its end: any server
//! that could write in the repository has a root among those directories,
//! so the two never overlap. Locks are taken without blocking, all or none,
//! in path order, and retried, so two servers can never wait on each other.
//!
//! `flock(2)` locks belong to the open file description: they conflict
//! between servers, and between calls of one server too.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

/// Whether a lock may be shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Writers: any number at once.
    Shared,
    /// A line that runs git: nobody else.
    Exclusive,
}

/// Locks held until dropped.
#[derive(Debug)]
pub struct DirLocks {
    _held: Vec<File>,
}

/// The directories a git line locks: each given one and every directory
/// above it.
pub fn with_ancestors<'a>(dirs: impl IntoIterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
    dirs.into_iter()
        .flat_map(|dir| dir.ancestors().map(PathBuf::from).collect::<Vec<_>>())
        .collect()
}

/// Takes a lock on every directory in `dirs`, waiting (politely, without
/// blocking a thread) until all can be had at once.
pub async fn lock(dirs: &[PathBuf], sharing: Sharing) -> DirLocks {
    let mut dirs = dirs.to_vec();
    dirs.sort();
    dirs.dedup();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(held) = try_lock(&dirs, sharing) {
            return held;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// All the locks, or none. A directory that cannot be opened (no read
/// permission) is passed over: no server can hold a lock on it either.
fn try_lock(dirs: &[PathBuf], sharing: Sharing) -> Option<DirLocks> {
    let operation = match sharing {
        Sharing::Shared => libc::LOCK_SH,
        Sharing::Exclusive => libc::LOCK_EX,
    } | libc::LOCK_NB;
    let mut held = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let Ok(file) = open_directory(dir) else {
            continue;
        };
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } != 0 {
            return None;
        }
        held.push(file);
    }
    Some(DirLocks { _held: held })
}

fn open_directory(dir: &PathBuf) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
        .open(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writers_share_and_a_git_line_excludes_them_above_its_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let repo = root.join("sub/.git");
        std::fs::create_dir_all(&repo).unwrap();
        let other = tmp.path().join("other");
        std::fs::create_dir_all(&other).unwrap();

        let writer = lock(std::slice::from_ref(&root), Sharing::Shared).await;
        let _second = lock(std::slice::from_ref(&root), Sharing::Shared).await;
        let git_dirs = with_ancestors([&repo]);
        assert!(git_dirs.contains(&root));
        assert!(try_lock(&git_dirs, Sharing::Exclusive).is_none());
        // A writer elsewhere does not stand in the way.
        let _elsewhere = lock(std::slice::from_ref(&other), Sharing::Shared).await;
        drop(writer);
        drop(_second);
        let git = try_lock(&git_dirs, Sharing::Exclusive).expect("free once writers are done");
        assert!(try_lock(std::slice::from_ref(&root), Sharing::Shared).is_none());
        drop(git);
        assert!(try_lock(std::slice::from_ref(&root), Sharing::Shared).is_some());
    }
}

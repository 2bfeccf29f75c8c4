//! Advisory locks on directories, shared by every rootbound server on the
//! machine, so that what one server checked of a git repository is what git
//! reads, even when another server writes in the same tree.
//!
//! A server holds a shared lock on each of its roots, and on every work tree
//! above them (a directory that holds `.git`), while it writes there (a
//! writable bash line, `write_file`, `replace`). A line that runs git holds
//! an exclusive lock on its work tree, its repository's directories and
//! every directory above them, from its configuration check to its end. So
//! a line that runs git and a write in another server never overlap: not
//! when the writer's root holds the repository, not when it lies inside the
//! work tree (a link made there during the line could lead into `.git`).
//! Locks are taken without blocking, all or none, in path order, and
//! retried, so two servers can never wait on each other.
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

/// What a writer locks: each root, and each directory above it that is a
/// git work tree (holds a `.git` entry) now; asked at every write, since a
/// repository may be made above a root while the server runs.
pub fn with_enclosing_work_trees(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for root in roots {
        dirs.push(root.clone());
        dirs.extend(
            root.ancestors()
                .skip(1)
                .filter(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
                .map(PathBuf::from),
        );
    }
    dirs
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
    async fn a_writer_whose_root_lies_inside_a_work_tree_excludes_its_git_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("repo");
        let inner_root = tree.join("sub");
        std::fs::create_dir_all(tree.join(".git")).unwrap();
        std::fs::create_dir_all(&inner_root).unwrap();
        let writer_dirs = with_enclosing_work_trees(std::slice::from_ref(&inner_root));
        assert_eq!(writer_dirs, [inner_root.clone(), tree.clone()]);
        let writer = lock(&writer_dirs, Sharing::Shared).await;
        let git_dirs = with_ancestors([&tree.join(".git"), &tree]);
        assert!(try_lock(&git_dirs, Sharing::Exclusive).is_none());
        drop(writer);
        // Other tests lock directories above this one (`/tmp`) now and then.
        let git =
            tokio::time::timeout(Duration::from_secs(10), lock(&git_dirs, Sharing::Exclusive))
                .await
                .expect("free once the writer is done");
        assert!(try_lock(&writer_dirs, Sharing::Shared).is_none());
        drop(git);
    }

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
        let git =
            tokio::time::timeout(Duration::from_secs(10), lock(&git_dirs, Sharing::Exclusive))
                .await
                .expect("free once writers are done");
        assert!(try_lock(std::slice::from_ref(&root), Sharing::Shared).is_none());
        drop(git);
        assert!(try_lock(std::slice::from_ref(&root), Sharing::Shared).is_some());
    }
}

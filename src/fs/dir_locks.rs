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
use std::path::{Path, PathBuf};
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
    let Ok(held) = retrying::<std::convert::Infallible>(|| Ok(try_lock(&dirs, sharing))).await;
    held
}

/// Tries `attempt` until it holds its locks (Ok(Some)), pausing between
/// tries without blocking a thread: all or none each time, so two servers
/// can never wait on each other.
async fn retrying<E>(
    mut attempt: impl FnMut() -> Result<Option<DirLocks>, E>,
) -> Result<DirLocks, E> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(held) = attempt()? {
            return Ok(held);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// A lock on `file` without waiting; false if another holds a conflicting
/// one.
fn try_flock(file: &File, sharing: Sharing) -> bool {
    let operation = match sharing {
        Sharing::Shared => libc::LOCK_SH,
        Sharing::Exclusive => libc::LOCK_EX,
    } | libc::LOCK_NB;
    // SAFETY: flock on a descriptor the caller owns.
    unsafe { libc::flock(file.as_raw_fd(), operation) == 0 }
}

/// All the locks, or none. A directory that cannot be opened (no read
/// permission) is passed over: no server can hold a lock on it either.
fn try_lock(dirs: &[PathBuf], sharing: Sharing) -> Option<DirLocks> {
    let mut held = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let Ok(file) = open_directory(dir) else {
            continue;
        };
        if !try_flock(&file, sharing) {
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

/// Locks that stand for whole trees, held by a server while writable bash
/// calls are in flight where no mount protects what they leave behind (the
/// check after them puts files back from copies, `fs/protected/survey.rs`):
/// each root exclusively, every directory above a root shared. Two servers
/// whose roots overlap (the same, or one inside the other) so never have
/// such calls in flight at once: the one that starts later cannot take a
/// copy of what the other's call planted, and put it back after that call's
/// own check removed it. Servers on unrelated trees do not meet.
///
/// Lock files stand in for the directories (a directory's own lock is the
/// write gate's), in `/tmp/rootbound-trees-<uid>/` (whatever each server's
/// `$TMPDIR`), each named by its directory's device and inode, so that a
/// bind mount or another spelling of a directory meets it. Servers of
/// different users do not meet here.
pub async fn lock_trees(roots: &[PathBuf]) -> io::Result<DirLocks> {
    let wanted = tree_locks(roots);
    retrying(|| try_lock_trees(&wanted)).await
}

/// Each root exclusive, each directory above one shared, in path order.
fn tree_locks(roots: &[PathBuf]) -> Vec<(PathBuf, Sharing)> {
    let mut wanted: std::collections::BTreeMap<PathBuf, Sharing> = Default::default();
    for root in roots {
        for above in root.ancestors().skip(1) {
            wanted.entry(above.to_path_buf()).or_insert(Sharing::Shared);
        }
    }
    for root in roots {
        wanted.insert(root.clone(), Sharing::Exclusive);
    }
    wanted.into_iter().collect()
}

/// All the tree locks, or none (Ok(None): another server holds one).
fn try_lock_trees(wanted: &[(PathBuf, Sharing)]) -> io::Result<Option<DirLocks>> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    // Not `$TMPDIR`, which servers of one user may each have their own of.
    let base = Path::new("/tmp");
    let base = if base.is_dir() {
        base.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("rootbound-trees-{uid}"));
    private_dir(&dir)?;
    let mut held = Vec::with_capacity(wanted.len());
    for (path, sharing) in wanted {
        // Named by the directory's device and inode, not its path: a bind
        // mount or another spelling of one directory is the same tree.
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let name = format!("{:x}-{:x}", meta.dev(), meta.ino());
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join(name))?;
        if !try_flock(&file, *sharing) {
            return Ok(None);
        }
        held.push(file);
    }
    Ok(Some(DirLocks { _held: held }))
}

/// Makes `dir` a directory only this user may use, or says why it is not
/// one (another user's, a link, open to others): what is in it decides
/// which server waits for which.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private directory of this user's; remove it, or set TMPDIR",
            dir.display()
        )));
    }
    Ok(())
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

    #[test]
    fn tree_locks_meet_where_roots_overlap_and_only_there() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        let inner = root.join("sub");
        let sibling = tmp.path().join("other");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(&sibling).unwrap();
        let held = try_lock_trees(&tree_locks(std::slice::from_ref(&root)))
            .unwrap()
            .expect("free");
        for overlapping in [&root, &inner] {
            assert!(
                try_lock_trees(&tree_locks(std::slice::from_ref(overlapping)))
                    .unwrap()
                    .is_none(),
                "{overlapping:?}"
            );
        }
        let apart = try_lock_trees(&tree_locks(std::slice::from_ref(&sibling))).unwrap();
        assert!(apart.is_some(), "an unrelated tree waits");
        drop(held);
        let held = try_lock_trees(&tree_locks(std::slice::from_ref(&inner)))
            .unwrap()
            .expect("free");
        assert!(
            try_lock_trees(&tree_locks(std::slice::from_ref(&root)))
                .unwrap()
                .is_none(),
            "a root above a held one"
        );
        drop(held);
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

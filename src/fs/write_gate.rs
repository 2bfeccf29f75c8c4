//! The write gate: everything that writes in the roots on one side, a line
//! that runs git on the other. git's configuration is checked before such a
//! line runs; holding the gate alone from that check to the line's end means
//! what was checked is what git reads.
//!
//! Within the server a read-write lock keeps the two sides apart; between
//! servers on one machine, directory locks do (see [`super::dir_locks`]).

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

#[cfg(unix)]
use super::dir_locks::{self, DirLocks, Sharing};

/// The server's gate.
#[derive(Debug)]
pub struct WriteGate {
    turns: Arc<RwLock<()>>,
    /// The server's roots (locks are Unix only). A writer locks them, and
    /// every directory above them that is a git work tree (holds `.git`) at
    /// the time of the write. A git line locks its work tree, its
    /// repository, this server's roots and every directory above all of
    /// those. So a writer in another server meets the line when its root
    /// holds the repository, lies inside its work tree (`--root repo/sub`,
    /// where a link made during the line could lead into `.git`), or is one
    /// of this server's roots (where a link from the work tree could lead).
    /// Writers and git lines in unrelated trees do not meet.
    #[cfg_attr(not(unix), allow(dead_code))]
    roots: Vec<PathBuf>,
}

/// Held while writing in the roots.
#[derive(Debug)]
pub struct Writing {
    _turn: OwnedRwLockReadGuard<()>,
    #[cfg(unix)]
    _locks: DirLocks,
}

/// Held by a line that runs git, from its configuration check to its end.
#[derive(Debug)]
pub struct GitAlone {
    _turn: OwnedRwLockWriteGuard<()>,
    #[cfg(unix)]
    _locks: DirLocks,
}

impl WriteGate {
    pub fn new(roots: Vec<PathBuf>) -> WriteGate {
        WriteGate {
            turns: Arc::new(RwLock::new(())),
            roots,
        }
    }

    /// Waits until no line that runs git is between its check and its end,
    /// here or in another server whose repository lies in these roots.
    pub async fn writing(&self) -> Writing {
        let turn = self.turns.clone().read_owned().await;
        Writing {
            _turn: turn,
            #[cfg(unix)]
            _locks: dir_locks::lock(
                &dir_locks::with_enclosing_work_trees(&self.roots),
                Sharing::Shared,
            )
            .await,
        }
    }

    /// Waits until nothing writes where it could change `repositories`
    /// (work trees and git directories) or this server's roots, here or in
    /// another server.
    pub async fn git_alone(&self, repositories: &[PathBuf]) -> GitAlone {
        let turn = self.turns.clone().write_owned().await;
        #[cfg(not(unix))]
        let _ = repositories;
        GitAlone {
            _turn: turn,
            #[cfg(unix)]
            _locks: dir_locks::lock(
                &dir_locks::with_ancestors(repositories.iter().chain(&self.roots)),
                Sharing::Exclusive,
            )
            .await,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Another server's writer, as `writing` locks for it.
    fn other_writer(root: &PathBuf) -> DirLocks {
        let dirs = dir_locks::with_enclosing_work_trees(std::slice::from_ref(root));
        futures::executor::block_on(dir_locks::lock(&dirs, Sharing::Shared))
    }

    /// Whether a git line is still waiting after `patience`.
    async fn git_line_waits(gate: &WriteGate, repositories: &[PathBuf], patience: u64) -> bool {
        tokio::time::timeout(
            Duration::from_millis(patience),
            gate.git_alone(repositories),
        )
        .await
        .is_err()
    }

    #[tokio::test]
    async fn a_repository_made_above_a_root_after_start_is_locked_by_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        let inner = tree.join("sub");
        std::fs::create_dir_all(&inner).unwrap();
        // The writer's server starts before `tree` is a repository.
        let writer_gate = WriteGate::new(vec![inner.clone()]);
        std::fs::create_dir(tree.join(".git")).unwrap();
        let writing = writer_gate.writing().await;
        let git_gate = WriteGate::new(vec![tree.clone()]);
        let repositories = [tree.join(".git"), tree.clone()];
        assert!(git_line_waits(&git_gate, &repositories, 300).await);
        drop(writing);
        assert!(!git_line_waits(&git_gate, &repositories, 10_000).await);
    }

    #[tokio::test]
    async fn a_git_line_waits_for_writers_in_every_root_of_its_server() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        let other_root = tmp.path().join("other");
        std::fs::create_dir_all(tree.join(".git")).unwrap();
        std::fs::create_dir_all(&other_root).unwrap();
        // A link in the work tree could lead into the other root.
        let git_gate = WriteGate::new(vec![tree.clone(), other_root.clone()]);
        let repositories = [tree.join(".git"), tree.clone()];
        let writer = other_writer(&other_root);
        assert!(git_line_waits(&git_gate, &repositories, 300).await);
        drop(writer);
        assert!(!git_line_waits(&git_gate, &repositories, 10_000).await);
    }
}

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
    /// Locked by writers against other servers (Unix only): the roots, and
    /// every directory above them that is a git work tree (holds `.git`).
    /// A git line locks its work tree, its repository and every directory
    /// above them, so a writer in another server meets it whether the
    /// writer's root holds the repository or lies inside its work tree
    /// (`--root repo/sub`, where a link made during the line could lead
    /// into `.git`). Writers and git lines in unrelated trees do not meet.
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
        #[cfg(unix)]
        let roots = dir_locks::with_enclosing_work_trees(&roots);
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
            _locks: dir_locks::lock(&self.roots, Sharing::Shared).await,
        }
    }

    /// Waits until nothing writes where it could change `repositories`
    /// (work trees and git directories), here or in another server.
    pub async fn git_alone(&self, repositories: &[PathBuf]) -> GitAlone {
        let turn = self.turns.clone().write_owned().await;
        #[cfg(not(unix))]
        let _ = repositories;
        GitAlone {
            _turn: turn,
            #[cfg(unix)]
            _locks: dir_locks::lock(&dir_locks::with_ancestors(repositories), Sharing::Exclusive)
                .await,
        }
    }
}

//! Why a checked command line did not run, or a call's time limit was not
//! given: kinds, not sentences. The bash tool says them to the model.

use std::time::Duration;

use super::refusal::Refusal;
use super::sandbox;

/// Why a checked line did not run (none of it ran, but where the sandbox
/// lost its supervisor midway).
#[derive(Debug)]
pub enum CallError {
    /// Refused as it was about to run: the repository changed while it
    /// waited, git's configuration names a program, a path it writes now
    /// leads into the repository's own directory.
    Refused(Refusal),
    /// The sandbox could not confine it, or lost it.
    Sandbox(sandbox::Error),
    /// An earlier writable call's check of what it left behind could not
    /// finish, so no writable call runs until the server restarts.
    Poisoned,
    /// The roots could not be surveyed before a writable call.
    Survey(String),
    /// The server is shutting down: its turns are closed.
    Closing,
}

impl From<sandbox::Error> for CallError {
    fn from(e: sandbox::Error) -> CallError {
        CallError::Sandbox(e)
    }
}

impl From<Refusal> for CallError {
    fn from(r: Refusal) -> CallError {
        CallError::Refused(r)
    }
}

/// A time limit the server does not give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitError {
    Zero,
    /// More than `--bash-timeout-max`, which it carries.
    AboveMax(Duration),
}

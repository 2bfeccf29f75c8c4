//! Why the sandbox could not confine a call.
//!
//! One type for every layer, so a caller can tell a system call the kernel
//! refused from a path that was not safe to use and from a helper process
//! that went away, without reading a sentence. The shell passes it up
//! unchanged; only the bash tool turns it into words for the model (its
//! `Display`).
//!
//! Part of the sandbox runs in other processes (the fork server, its view's
//! template, each call's supervisor), and what they report crosses a socket
//! or a pipe as text: that is [`Error::Reported`], said as it was written.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a step of the sandbox failed.
#[derive(Debug)]
pub enum Error {
    /// A system call that builds, enters or runs a layer failed.
    Os {
        /// What was being done, for the message ("mounting /proc").
        doing: Cow<'static, str>,
        source: io::Error,
    },
    /// A path the confinement needs is not safe to use as it is: a link
    /// on its way, a NUL byte in it.
    Unsafe { path: PathBuf, why: &'static str },
    /// Landlock refused a ruleset.
    #[cfg(target_os = "linux")]
    Landlock(::landlock::RulesetError),
    /// A seccomp filter could not be compiled (a jump too far, a filter
    /// too long): a fault of this crate's tables, not of the call.
    Filter(Cow<'static, str>),
    /// The kernel does not offer a layer it was said to.
    Unavailable(&'static str),
    /// The call asked for what the sandbox does not do (no view to build,
    /// the wrong number of descriptors).
    Request(Cow<'static, str>),
    /// Reported by another process of the sandbox, as it wrote it.
    Reported(String),
    /// A process of the sandbox exited or answered out of turn.
    Gone(Cow<'static, str>),
}

impl Error {
    /// The system call just made failed: its `errno`, with what it did.
    pub fn last_os(doing: impl Into<Cow<'static, str>>) -> Error {
        Error::Os {
            doing: doing.into(),
            source: io::Error::last_os_error(),
        }
    }

    /// An I/O error, with what was being done.
    pub fn io(doing: impl Into<Cow<'static, str>>, source: impl Into<io::Error>) -> Error {
        Error::Os {
            doing: doing.into(),
            source: source.into(),
        }
    }

    /// The same error, said as part of `context` ("protecting .git: ...").
    pub fn within(self, context: &str) -> Error {
        match self {
            Error::Os { doing, source } => Error::Os {
                doing: format!("{context}: {doing}").into(),
                source,
            },
            other => other,
        }
    }

    pub fn gone(what: impl Into<Cow<'static, str>>) -> Error {
        Error::Gone(what.into())
    }

    pub fn request(what: impl Into<Cow<'static, str>>) -> Error {
        Error::Request(what.into())
    }
}

/// A prepared confinement that failed keeps its error and gives each call
/// that asks for it a copy; an `io::Error` is not `Clone`, so the copy keeps
/// its `errno` (or its kind and text).
impl Clone for Error {
    fn clone(&self) -> Error {
        match self {
            Error::Os { doing, source } => Error::Os {
                doing: doing.clone(),
                source: match source.raw_os_error() {
                    Some(errno) => io::Error::from_raw_os_error(errno),
                    None => io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::Unsafe { path, why } => Error::Unsafe {
                path: path.clone(),
                why,
            },
            #[cfg(target_os = "linux")]
            Error::Landlock(e) => Error::Reported(format!("Landlock: {e}")),
            Error::Filter(what) => Error::Filter(what.clone()),
            Error::Unavailable(what) => Error::Unavailable(what),
            Error::Request(what) => Error::Request(what.clone()),
            Error::Reported(text) => Error::Reported(text.clone()),
            Error::Gone(what) => Error::Gone(what.clone()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Os { doing, source } => write!(f, "{doing}: {source}"),
            Error::Unsafe { path, why } => write!(f, "{}: {why}", path.display()),
            #[cfg(target_os = "linux")]
            Error::Landlock(e) => write!(f, "Landlock: {e}"),
            Error::Filter(what) => write!(f, "seccomp filter: {what}"),
            Error::Unavailable(what) => f.write_str(what),
            Error::Request(what) => f.write_str(what),
            Error::Reported(text) => f.write_str(text),
            Error::Gone(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Os { source, .. } => Some(source),
            #[cfg(target_os = "linux")]
            Error::Landlock(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(target_os = "linux")]
pub type Result<T, E = Error> = std::result::Result<T, E>;

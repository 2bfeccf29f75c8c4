//! Running a checked command line. How depends on the platform:
//!
//! - Linux ([`supervised`]): each call runs under a supervisor that the
//!   sandbox's fork server clones into namespaces of its own; the server
//!   reads its output and keeps its deadline.
//! - macOS and other Unix ([`direct`]): the server runs each command itself,
//!   on macOS under `sandbox-exec` with a profile made from the roots and
//!   the mode.
//! - Windows ([`windows`]): only `--bash-mode unrestricted`, with no
//!   sandbox; the line goes to one shell process.

#[cfg(unix)]
pub mod direct;
#[cfg(target_os = "linux")]
pub mod supervised;
#[cfg(windows)]
pub mod windows;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parse::{Connector, Redirect};

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub argv: Vec<String>,
    pub redirects: Vec<Redirect>,
    /// Variables added to the common environment (git's repository pins).
    pub env: Vec<(String, String)>,
}

impl Stage {
    pub fn new(argv: Vec<String>) -> Stage {
        Stage {
            argv,
            redirects: Vec::new(),
            env: Vec::new(),
        }
    }
}

/// One pipeline and how the next one depends on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub stages: Vec<Stage>,
    pub then: Option<Connector>,
}

/// How the command line ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut(Duration),
    Cancelled,
    OutputLimit,
}

#[derive(Debug)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub ending: Ending,
}

#[cfg(unix)]
/// Reads both streams until they close. True if the output budget ran out.
pub(crate) async fn collect(
    stdout: std::os::fd::OwnedFd,
    stderr: std::os::fd::OwnedFd,
    max_bytes: usize,
    out: &mut Outcome,
) -> bool {
    let (Ok(mut o), Ok(mut e)) = (
        tokio::net::unix::pipe::Receiver::from_owned_fd(stdout),
        tokio::net::unix::pipe::Receiver::from_owned_fd(stderr),
    ) else {
        return false;
    };
    use tokio::io::AsyncReadExt;
    let mut obuf = vec![0u8; 64 * 1024];
    let mut ebuf = vec![0u8; 16 * 1024];
    let (mut o_open, mut e_open) = (true, true);
    while o_open || e_open {
        tokio::select! {
            r = o.read(&mut obuf), if o_open => match r {
                Ok(0) | Err(_) => o_open = false,
                Ok(n) => out.stdout.extend_from_slice(&obuf[..n]),
            },
            r = e.read(&mut ebuf), if e_open => match r {
                Ok(0) | Err(_) => e_open = false,
                Ok(n) => out.stderr.extend_from_slice(&ebuf[..n]),
            },
        }
        if out.stdout.len() + out.stderr.len() > max_bytes {
            return true;
        }
    }
    false
}

/// The status a shell gives a command that could not start: 127 when no
/// such program exists, 126 when it exists but cannot run (as bash does).
#[cfg(unix)]
pub fn failed_start_status(e: &std::io::Error) -> i32 {
    if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

/// The name of a signal, for result lines.
#[cfg(unix)]
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// Windows has no signals; an ending is never `Signaled` there. The names
/// of the signals whose numbers POSIX fixes, for the answer's format.
#[cfg(not(unix))]
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(77), "signal 77");
    }
}

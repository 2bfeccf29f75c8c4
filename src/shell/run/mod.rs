//! Running a checked command line. How depends on the platform:
//!
//! - Linux ([`supervised`]): each call runs under a supervisor that the
//!   sandbox's fork server clones into namespaces of its own; the server
//!   reads its output and keeps its deadline.
//! - macOS and other Unix ([`direct`]): the server runs each command itself,
//!   on macOS under `sandbox-exec` with a profile made from the roots and
//!   the mode.
//! - Windows (`windows`): only `--bash-mode unrestricted`, with no
//!   sandbox; the line goes to one shell process.

#[cfg(unix)]
pub mod direct;
#[cfg(target_os = "linux")]
pub mod supervised;
#[cfg(windows)]
pub mod windows;

use std::time::Duration;

use super::steps::HiddenFailure;

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
    /// Commands before the last of a pipeline that failed, in the order
    /// they ran.
    pub hidden_failures: Vec<HiddenFailure>,
}

impl Outcome {
    pub fn new(ending: Ending) -> Outcome {
        Outcome {
            stdout: Vec::new(),
            stderr: Vec::new(),
            ending,
            hidden_failures: Vec::new(),
        }
    }
}

/// The end of what a running call has printed so far, for progress
/// reports: both streams, as they come.
#[derive(Debug, Default)]
pub struct LiveOutput {
    tail: std::sync::Mutex<Vec<u8>>,
}

/// Bytes of output kept for the last line.
const LIVE_TAIL_BYTES: usize = 1024;

impl LiveOutput {
    pub fn record(&self, chunk: &[u8]) {
        let Ok(mut tail) = self.tail.lock() else {
            return;
        };
        let chunk = &chunk[chunk.len().saturating_sub(LIVE_TAIL_BYTES)..];
        tail.extend_from_slice(chunk);
        let excess = tail.len().saturating_sub(LIVE_TAIL_BYTES);
        tail.drain(..excess);
    }

    /// The last line with anything on it (a progress bar's last redraw
    /// after `\r`), at most 200 characters; empty before any output.
    pub fn last_line(&self) -> String {
        let Ok(tail) = self.tail.lock() else {
            return String::new();
        };
        let text = String::from_utf8_lossy(&tail);
        text.split(['\n', '\r'])
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .map(|line| line.chars().take(200).collect())
            .unwrap_or_default()
    }
}

#[cfg(unix)]
/// Reads both streams until they close. True if the output budget ran out.
/// `live`: where progress reports read the output as it comes.
pub(crate) async fn collect(
    stdout: std::os::fd::OwnedFd,
    stderr: std::os::fd::OwnedFd,
    max_bytes: usize,
    out: &mut Outcome,
    live: Option<&LiveOutput>,
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
                Ok(n) => {
                    out.stdout.extend_from_slice(&obuf[..n]);
                    live.inspect(|l| l.record(&obuf[..n]));
                }
            },
            r = e.read(&mut ebuf), if e_open => match r {
                Ok(0) | Err(_) => e_open = false,
                Ok(n) => {
                    out.stderr.extend_from_slice(&ebuf[..n]);
                    live.inspect(|l| l.record(&ebuf[..n]));
                }
            },
        }
        if out.stdout.len() + out.stderr.len() > max_bytes {
            return true;
        }
    }
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::shell::steps::{StageStatus, signal_name};

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_hidden_failure_names_the_command_and_how_it_ended() {
        let failed = |words: &[&str], status| HiddenFailure::of(&argv(words), status);
        let cargo = failed(
            &["/usr/bin/cargo", "test", "--offline"],
            StageStatus::Exited(101),
        );
        assert_eq!(
            HiddenFailure::describe(&[cargo.clone().unwrap()]),
            "earlier stage failed: cargo test exited 101"
        );
        let grep = failed(&["grep", "-r", "x", "src/"], StageStatus::Exited(2)).unwrap();
        let cat = failed(&["cat", "a.txt"], StageStatus::Signaled(libc::SIGSEGV)).unwrap();
        assert_eq!(
            HiddenFailure::describe(&[grep.clone(), cat.clone(), grep.clone(), cat]),
            "earlier stages failed: grep exited 2, cat was killed by SIGSEGV, grep exited 2, 1 more"
        );
        // What a command gets when a later one stops reading is no failure.
        assert_eq!(failed(&["yes"], StageStatus::Signaled(libc::SIGPIPE)), None);
        assert_eq!(failed(&["sh", "-c", "yes"], StageStatus::Exited(141)), None);
        assert_eq!(failed(&["true"], StageStatus::Exited(0)), None);
        assert_eq!(HiddenFailure::describe(&[]), "");
        // Nothing in the name can break the status line or look like it.
        let odd = failed(&["a]\n[stdout x", "b\nc"], StageStatus::Exited(1)).unwrap();
        assert!(!odd.command.contains(['[', ']', '\n']), "{odd:?}");
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(77), "signal 77");
    }
}

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

/// The shell's rule for `&&`, `||` and `;`, kept once for both runners:
/// a step after `&&` runs when the last step that ran succeeded, after `||`
/// when it failed, after `;` always. (Windows runs a single command.)
#[cfg(unix)]
#[derive(Debug, Default)]
pub struct Sequence {
    previous: Option<Connector>,
    status: i32,
}

#[cfg(unix)]
impl Sequence {
    /// Whether `step` runs; asked once for each step, in order.
    pub fn runs(&mut self, step: &Step) -> bool {
        let runs = match self.previous {
            Some(Connector::And) => self.status == 0,
            Some(Connector::Or) => self.status != 0,
            Some(Connector::Seq) | None => true,
        };
        self.previous = step.then;
        runs
    }

    /// How the step that just ran ended (a signal counts as `128 + n`, as
    /// `$?` has it).
    pub fn ran(&mut self, status: StageStatus) {
        self.status = match status {
            StageStatus::Exited(code) => code,
            StageStatus::Signaled(sig) => 128 + sig,
        };
    }
}

/// How one command of a pipeline ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StageStatus {
    Exited(i32),
    Signaled(i32),
}

#[cfg(unix)]
impl StageStatus {
    /// A status as `waitpid` gives it.
    pub fn of_wait(status: i32) -> StageStatus {
        if libc::WIFSIGNALED(status) {
            StageStatus::Signaled(libc::WTERMSIG(status))
        } else {
            StageStatus::Exited(libc::WEXITSTATUS(status))
        }
    }
}

/// A command of a pipeline, not its last, that failed. A pipeline's status
/// is its last command's, as in bash: without this, `cargo test | tail -5`
/// would read as a success when the tests fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiddenFailure {
    /// The program's name and, where it looks like a subcommand, its first
    /// word (`cargo test`).
    pub command: String,
    pub status: StageStatus,
}

/// At most this many hidden failures are named; the rest are counted.
const MAX_NAMED_FAILURES: usize = 3;

impl HiddenFailure {
    /// The failure of the command `argv` that ended with `status`, if it
    /// is one: a non-zero exit, or a signal other than SIGPIPE (which a
    /// command gets when a later one stopped reading, as `head` does: not
    /// a failure; nor is a shell's 141 for it).
    pub fn of(argv: &[String], status: StageStatus) -> Option<HiddenFailure> {
        const SIGPIPE: i32 = 13;
        match status {
            StageStatus::Exited(0 | 141) | StageStatus::Signaled(SIGPIPE) => return None,
            _ => {}
        }
        let program = argv
            .first()
            .map_or("", |p| p.rsplit('/').next().unwrap_or(p));
        let mut command = program.to_string();
        if let Some(word) = argv.get(1).filter(|w| {
            !w.starts_with('-') && !w.contains('/') && !w.contains('.') && w.len() <= 24
        }) {
            command.push(' ');
            command.push_str(word);
        }
        // The status line is the answer's first; nothing in it may look
        // like the answer's own brackets or break its line.
        let command: String = command
            .chars()
            .take(48)
            .map(|c| {
                if c.is_control() || c == '[' || c == ']' {
                    '?'
                } else {
                    c
                }
            })
            .collect();
        Some(HiddenFailure { command, status })
    }

    /// The failures among a pipeline's commands before its last:
    /// `ended[k]` is how `stages[k]` ended, where that is known.
    pub fn in_pipeline(stages: &[Stage], ended: &[Option<StageStatus>]) -> Vec<HiddenFailure> {
        let but_last = stages.len().saturating_sub(1);
        stages
            .iter()
            .zip(ended)
            .take(but_last)
            .filter_map(|(stage, status)| HiddenFailure::of(&stage.argv, (*status)?))
            .collect()
    }

    /// What the status line adds for `failures`: `earlier stage failed:
    /// cargo test exited 101`. Empty for none.
    pub fn describe(failures: &[HiddenFailure]) -> String {
        if failures.is_empty() {
            return String::new();
        }
        let mut named: Vec<String> = failures
            .iter()
            .take(MAX_NAMED_FAILURES)
            .map(|f| match f.status {
                StageStatus::Exited(code) => format!("{} exited {code}", f.command),
                StageStatus::Signaled(sig) => {
                    format!("{} was killed by {}", f.command, signal_name(sig))
                }
            })
            .collect();
        if failures.len() > MAX_NAMED_FAILURES {
            named.push(format!("{} more", failures.len() - MAX_NAMED_FAILURES));
        }
        let which = if failures.len() == 1 {
            "earlier stage failed"
        } else {
            "earlier stages failed"
        };
        format!("{which}: {}", named.join(", "))
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

    #[cfg(unix)]
    #[test]
    fn a_sequence_runs_steps_as_a_shell_does() {
        let step = |then| Step {
            stages: Vec::new(),
            then,
        };
        // `a && b || c ; d && e` where a is killed by SIGTERM (status 143)
        // and c and d exit 0: b is skipped, the others run.
        let steps = [
            (step(Some(Connector::And)), Some(StageStatus::Signaled(15))),
            (step(Some(Connector::Or)), None),
            (step(Some(Connector::Seq)), Some(StageStatus::Exited(0))),
            (step(Some(Connector::And)), Some(StageStatus::Exited(0))),
            (step(None), Some(StageStatus::Exited(3))),
        ];
        let mut sequence = Sequence::default();
        let mut ran = Vec::new();
        for (k, (step, status)) in steps.iter().enumerate() {
            if sequence.runs(step) {
                ran.push(k);
                sequence.ran(status.expect("a step that runs has a status"));
            }
        }
        assert_eq!(ran, [0, 2, 3, 4]);
        assert_eq!(sequence.status, 3);
        let mut killed = Sequence::default();
        killed.ran(StageStatus::Signaled(15));
        assert_eq!(killed.status, 143);
    }

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

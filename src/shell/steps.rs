//! What a checked command line is made of, as the planner hands it to a
//! runner and the server hands it to the sandbox's supervisor: steps of
//! pipelines of commands, the shell's rule for `&&`, `||` and `;`, and how a
//! command ended. Below both the runners (`run/`) and the sandbox, so that
//! neither imports the other for it.

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
}

//! Runs a checked command line: the server's half of the sandbox.
//!
//! The plan goes to a per-call supervisor (the server's own binary, see
//! [`sandbox::supervisor`](super::sandbox::supervisor)), which runs it
//! confined and reports how it ended. The server reads the commands' output
//! from two pipes with one budget, and keeps the one deadline: past it, on
//! cancellation, or past the output budget, it asks the supervisor to stop
//! (SIGTERM: it kills and reaps every process of the call) and kills it if
//! it does not go within a few seconds.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use super::parse::{Connector, Redirect};
use super::sandbox::supervisor::{Report, Request};
use super::sandbox::{Confinement, SUPERVISOR_ARG};

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

/// Where and how commands run.
pub struct Setup<'a> {
    /// The binary that supervises the call (the server's own).
    pub supervisor: &'a Path,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub confinement: Confinement,
    /// When the commands are killed.
    pub deadline: Instant,
    /// The time limit as the answer states it.
    pub limit: Duration,
    /// Output read at most (stdout and stderr together).
    pub max_bytes: usize,
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

/// Why the server stopped the call.
enum Stop {
    Deadline,
    Cancelled,
    OutputLimit,
}

/// How long the supervisor gets to kill and reap the call after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Runs the steps under a supervisor. Err: the sandbox could not be set up
/// (nothing ran) or the supervisor could not be started.
pub async fn run(
    steps: &[Step],
    setup: &Setup<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, String> {
    let request = serde_json::to_vec(&Request {
        steps: steps.to_vec(),
        cwd: setup.cwd.to_path_buf(),
        env: setup.env.to_vec(),
        confinement: setup.confinement.clone(),
    })
    .map_err(|e| format!("cannot encode the plan: {e}"))?;
    let cannot = |e: std::io::Error| format!("cannot start the sandbox supervisor: {e}");
    let (stdout_read, stdout_write) = new_pipe().map_err(cannot)?;
    let (stderr_read, stderr_write) = new_pipe().map_err(cannot)?;
    let (report_read, report_write) = new_pipe().map_err(cannot)?;
    let mut command = tokio::process::Command::new(setup.supervisor);
    command
        .args([SUPERVISOR_ARG, "run"])
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::from(stdout_write))
        .stderr(Stdio::from(stderr_write))
        .process_group(0)
        .kill_on_drop(true);
    let report_fd = report_write.as_raw_fd();
    // SAFETY: dup2 and fcntl are async-signal-safe; they give the child the
    // report pipe as descriptor 3 (without close-on-exec).
    unsafe {
        command.pre_exec(move || {
            if report_fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0);
            } else if libc::dup2(report_fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Spawned on the runtime's own thread: the supervisor's parent-death
    // signal fires when the thread that spawned it exits.
    let mut child = command.spawn().map_err(cannot)?;
    drop(command);
    drop(report_write);
    let mut stdin = child.stdin.take();
    let feed = async move {
        if let Some(stdin) = stdin.as_mut() {
            let _ = stdin.write_all(&request).await;
        }
        drop(stdin);
    };
    let mut out = Outcome {
        stdout: Vec::new(),
        stderr: Vec::new(),
        ending: Ending::Exited(0),
    };
    let (_, collected) = tokio::join!(feed, async {
        tokio::select! {
            full = collect(stdout_read, stderr_read, setup.max_bytes, &mut out) => {
                if full { Err(Stop::OutputLimit) } else { Ok(()) }
            }
            () = tokio::time::sleep_until(setup.deadline.into()) => Err(Stop::Deadline),
            () = cancel.cancelled() => Err(Stop::Cancelled),
        }
    });
    if let Err(stop) = collected {
        stop_supervisor(&mut child).await;
        out.ending = match stop {
            Stop::Deadline => Ending::TimedOut(setup.limit),
            Stop::Cancelled => Ending::Cancelled,
            Stop::OutputLimit => Ending::OutputLimit,
        };
        return Ok(out);
    }
    // The output closed: every process of the call is gone or going.
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        () = tokio::time::sleep_until(setup.deadline.into()) => {
            stop_supervisor(&mut child).await;
            out.ending = Ending::TimedOut(setup.limit);
            return Ok(out);
        }
    };
    let report = read_report(report_read).await;
    out.ending = match report {
        Some(Report::Exited(code)) => Ending::Exited(code),
        Some(Report::Signaled(sig)) => Ending::Signaled(sig),
        Some(Report::Failed(why)) => {
            return Err(format!(
                "The command did not run: the sandbox could not be set up ({why})."
            ));
        }
        Some(Report::Stopped) | None => {
            return Err(format!(
                "The command's supervisor ended without a report ({}).",
                status.map_or("unknown status".into(), |s| match s.signal() {
                    Some(sig) => format!("killed by {}", signal_name(sig)),
                    None => s.to_string(),
                })
            ));
        }
    };
    Ok(out)
}

/// Asks the supervisor to stop (it kills and reaps the call), and kills it
/// and its process group if it has not gone within [`STOP_GRACE`].
async fn stop_supervisor(child: &mut tokio::process::Child) {
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    if let Some(pid) = pid {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        if let Some(pid) = pid {
            // SAFETY: killing our own child's process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = child.start_kill();
        let _ = tokio::time::timeout(STOP_GRACE, child.wait()).await;
    }
}

async fn read_report(fd: OwnedFd) -> Option<Report> {
    let mut receiver = pipe::Receiver::from_owned_fd(fd).ok()?;
    let mut line = Vec::new();
    let read = tokio::time::timeout(
        STOP_GRACE,
        (&mut receiver).take(64 * 1024).read_to_end(&mut line),
    )
    .await;
    if !matches!(read, Ok(Ok(_))) {
        return None;
    }
    serde_json::from_slice(&line).ok()
}

fn new_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Reads both streams until they close. True if the output budget ran out.
async fn collect(stdout: OwnedFd, stderr: OwnedFd, max_bytes: usize, out: &mut Outcome) -> bool {
    let (Ok(mut o), Ok(mut e)) = (
        pipe::Receiver::from_owned_fd(stdout),
        pipe::Receiver::from_owned_fd(stderr),
    ) else {
        return false;
    };
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

/// The name of a signal, for result lines.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(77), "signal 77");
    }
}

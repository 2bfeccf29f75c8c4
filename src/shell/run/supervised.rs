//! Linux: the server's half of a sandboxed call.
//!
//! The plan goes to a per-call supervisor, forked by the sandbox's fork
//! server (see [`fork_server`](crate::shell::sandbox::fork_server)), which
//! runs it confined and reports how it ended. The server reads the
//! commands' output from two pipes with one budget, and keeps the one
//! deadline: past it, on cancellation, or past the output budget, it asks
//! the supervisor to stop (SIGTERM through its pidfd: it kills and reaps
//! every process of the call) and kills it if it has not gone within a few
//! seconds.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use super::{Ending, Outcome, collect};
use crate::shell::sandbox::fork_server::ForkServer;
use crate::shell::sandbox::supervisor::{Finished, Report, Request};
use crate::shell::sandbox::{Confinement, Error};
use crate::shell::steps::Step;

/// Where and how commands run.
pub struct Setup<'a> {
    /// Forks the call's supervisor.
    pub fork_server: Arc<ForkServer>,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub confinement: Confinement,
    /// What the call's mount namespace binds over itself.
    pub protect: crate::shell::sandbox::Protect,
    /// When the commands are killed.
    pub deadline: Instant,
    /// The time limit as the answer states it.
    pub limit: Duration,
    /// Output read at most (stdout and stderr together).
    pub max_bytes: usize,
    /// Where progress reports read the output as it comes.
    pub live: Option<&'a super::LiveOutput>,
}

/// Why the server stopped the call.
enum Stop {
    Deadline,
    Cancelled,
    OutputLimit,
}

const NO_REPORT: &str = "the call's supervisor ended without a report";

/// How long the supervisor gets to kill and reap the call after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Runs the steps under a supervisor. Err: the sandbox could not be set up
/// (nothing ran) or the supervisor could not be started.
pub async fn run(
    steps: &[Step],
    setup: &Setup<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, Error> {
    let request = serde_json::to_vec(&Request {
        steps: steps.to_vec(),
        cwd: setup.cwd.to_path_buf(),
        env: setup.env.to_vec(),
        confinement: setup.confinement.clone(),
        protect: setup.protect.clone(),
    })
    .map_err(|e| Error::io("encoding the plan", e))?;
    let cannot = |e: std::io::Error| Error::io("starting the call's supervisor", e);
    let (plan_read, plan_write) = new_pipe().map_err(cannot)?;
    let (stdout_read, stdout_write) = new_pipe().map_err(cannot)?;
    let (stderr_read, stderr_write) = new_pipe().map_err(cannot)?;
    let (report_read, report_write) = new_pipe().map_err(cannot)?;
    // The plan goes into its pipe before the supervisor is started, as much
    // as the pipe holds (all of a usual plan), so that the supervisor finds
    // it there rather than waiting a round trip for it.
    let sent = rustix::io::ioctl_fionbio(&plan_write, true)
        .and_then(|()| rustix::io::write(&plan_write, &request))
        .unwrap_or(0);
    // Only the call's supervisor holds these ends once it has started.
    let pidfd = setup
        .fork_server
        .launch([plan_read, stdout_write, stderr_write, report_write])
        .await?;
    let mut supervisor = Supervisor::new(pidfd)?;
    let feed = async move {
        if sent < request.len()
            && let Ok(mut sender) = pipe::Sender::from_owned_fd(plan_write)
        {
            let _ = sender.write_all(&request[sent..]).await;
        }
    };
    let mut out = Outcome::new(Ending::Exited(0));
    let (_, collected) = tokio::join!(feed, async {
        tokio::select! {
            full = collect(stdout_read, stderr_read, setup.max_bytes, &mut out, setup.live) => {
                if full { Err(Stop::OutputLimit) } else { Ok(()) }
            }
            () = tokio::time::sleep_until(setup.deadline.into()) => Err(Stop::Deadline),
            () = cancel.cancelled() => Err(Stop::Cancelled),
        }
    });
    if let Err(stop) = collected {
        supervisor.stop().await;
        out.ending = match stop {
            Stop::Deadline => Ending::TimedOut(setup.limit),
            Stop::Cancelled => Ending::Cancelled,
            Stop::OutputLimit => Ending::OutputLimit,
        };
        return Ok(out);
    }
    // The output closed: the commands are done, and the supervisor writes
    // its report once every process of the call is gone.
    let report = tokio::select! {
        report = read_report(report_read) => report,
        () = tokio::time::sleep_until(setup.deadline.into()) => {
            supervisor.stop().await;
            out.ending = Ending::TimedOut(setup.limit);
            return Ok(out);
        }
    };
    if report.is_some() {
        supervisor.ended();
    }
    let Some(Finished {
        report,
        hidden_failures,
    }) = report
    else {
        return Err(Error::gone(NO_REPORT));
    };
    out.hidden_failures = hidden_failures;
    out.ending = match report {
        Report::Exited(code) => Ending::Exited(code),
        Report::Signaled(sig) => Ending::Signaled(sig),
        Report::Failed(why) => {
            return Err(Error::Reported(why));
        }
        Report::Stopped => {
            return Err(Error::gone(NO_REPORT));
        }
    };
    Ok(out)
}

/// A call's supervisor, known by a pidfd (no pid can be reused under it).
/// Dropped before the call has ended (the call was cancelled, and the
/// dispatcher dropped it), it stops the call all the same.
struct Supervisor {
    pidfd: Option<AsyncFd<OwnedFd>>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        let Some(pidfd) = self.pidfd.take() else {
            return;
        };
        // SIGTERM now: the supervisor kills and reaps every process of the
        // call. SIGKILL later if it is still there.
        let _ = rustix::process::pidfd_send_signal(pidfd.get_ref(), Signal::TERM);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let exited = tokio::time::timeout(STOP_GRACE, pidfd.readable()).await;
                    if exited.is_err() {
                        let _ = rustix::process::pidfd_send_signal(pidfd.get_ref(), Signal::KILL);
                    }
                });
            }
            Err(_) => {
                let _ = rustix::process::pidfd_send_signal(pidfd.get_ref(), Signal::KILL);
            }
        }
    }
}

impl Supervisor {
    fn new(pidfd: OwnedFd) -> Result<Supervisor, Error> {
        // SAFETY: an OwnedFd keeps its descriptor open and unchanged for as
        // long as the AsyncFd owns it.
        let pidfd =
            unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
                .map_err(|e| Error::io("watching the call's supervisor", e))?;
        Ok(Supervisor { pidfd: Some(pidfd) })
    }

    /// Waits until the supervisor has exited (its pidfd turns readable).
    async fn exited(&self) {
        if let Some(pidfd) = &self.pidfd {
            let _ = pidfd.readable().await;
        }
    }

    /// The call ended and the supervisor reported: nothing to stop on drop.
    fn ended(&mut self) {
        self.pidfd = None;
    }

    fn signal(&self, signal: Signal) {
        if let Some(pidfd) = &self.pidfd {
            let _ = rustix::process::pidfd_send_signal(pidfd.get_ref(), signal);
        }
    }

    /// Asks the supervisor to stop (it kills and reaps the call), and kills
    /// it if it has not gone within [`STOP_GRACE`] (the namespace's init
    /// then dies with it, and every process of the call with that).
    async fn stop(&mut self) {
        self.signal(Signal::TERM);
        if tokio::time::timeout(STOP_GRACE, self.exited())
            .await
            .is_err()
        {
            self.signal(Signal::KILL);
            let _ = tokio::time::timeout(STOP_GRACE, self.exited()).await;
        }
        self.ended();
    }
}

async fn read_report(fd: OwnedFd) -> Option<Finished> {
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

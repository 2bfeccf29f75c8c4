//! Runs a checked command line: each stage's argv spawned directly (never
//! through a shell), pipes between stages, `&&` / `||` / `;` evaluated
//! here, so what runs is exactly what was checked.
//!
//! Every pipeline gets its own process group, stdin from /dev/null and the
//! given environment. The whole command line has one deadline and one output
//! budget: past either, or on cancellation, the process group is killed and
//! reaped, and the outcome says why.

use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use super::parse::{Connector, Redirect};
use super::sandbox;

/// One command of a pipeline.
#[derive(Debug, Clone)]
pub struct Stage {
    pub argv: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// One pipeline and how the next one depends on it.
#[derive(Debug, Clone)]
pub struct Step {
    pub stages: Vec<Stage>,
    pub then: Option<Connector>,
}

/// Where and how commands run.
pub struct Setup<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// A Landlock ruleset to apply in each child.
    pub sandbox: Option<RawFd>,
    pub timeout: Duration,
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

/// Why a pipeline stopped before its commands ended on their own.
enum Stop {
    Deadline,
    Cancelled,
    OutputLimit,
}

/// Runs the steps in order, honouring their connectors.
pub async fn run(steps: &[Step], setup: &Setup<'_>, cancel: &CancellationToken) -> Outcome {
    let deadline = Instant::now() + setup.timeout;
    let mut out = Outcome {
        stdout: Vec::new(),
        stderr: Vec::new(),
        ending: Ending::Exited(0),
    };
    let mut status = 0i32;
    let mut previous: Option<Connector> = None;
    for step in steps {
        let runs = match previous {
            Some(Connector::And) => status == 0,
            Some(Connector::Or) => status != 0,
            Some(Connector::Seq) | None => true,
        };
        previous = step.then;
        if !runs {
            continue;
        }
        match run_pipeline(&step.stages, setup, deadline, cancel, &mut out).await {
            Ok(ExitOf::Code(code)) => {
                status = code;
                out.ending = Ending::Exited(code);
            }
            Ok(ExitOf::Signal(sig)) => {
                status = 128 + sig;
                out.ending = Ending::Signaled(sig);
            }
            Err(Stop::Deadline) => {
                out.ending = Ending::TimedOut(setup.timeout);
                return out;
            }
            Err(Stop::Cancelled) => {
                out.ending = Ending::Cancelled;
                return out;
            }
            Err(Stop::OutputLimit) => {
                out.ending = Ending::OutputLimit;
                return out;
            }
        }
    }
    out
}

enum ExitOf {
    Code(i32),
    Signal(i32),
}

fn exit_of(status: ExitStatus) -> ExitOf {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitOf::Code(code),
        (None, Some(sig)) => ExitOf::Signal(sig),
        (None, None) => ExitOf::Code(1),
    }
}

fn new_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Where a stage's output goes.
enum Target {
    Fd(OwnedFd),
    Null,
}

impl Target {
    fn stdio(&self) -> std::io::Result<Stdio> {
        Ok(match self {
            Target::Fd(fd) => Stdio::from(fd.try_clone()?),
            Target::Null => Stdio::null(),
        })
    }

    fn try_clone(&self) -> std::io::Result<Target> {
        Ok(match self {
            Target::Fd(fd) => Target::Fd(fd.try_clone()?),
            Target::Null => Target::Null,
        })
    }
}

async fn run_pipeline(
    stages: &[Stage],
    setup: &Setup<'_>,
    deadline: Instant,
    cancel: &CancellationToken,
    out: &mut Outcome,
) -> Result<ExitOf, Stop> {
    let io_failure = |out: &mut Outcome, e: std::io::Error| {
        out.stderr
            .extend_from_slice(format!("rootbound: cannot set up the pipeline: {e}\n").as_bytes());
        Ok(ExitOf::Code(126))
    };
    let (stdout_read, stdout_write) = match new_pipe() {
        Ok(p) => p,
        Err(e) => return io_failure(out, e),
    };
    let (stderr_read, stderr_write) = match new_pipe() {
        Ok(p) => p,
        Err(e) => return io_failure(out, e),
    };
    let mut children = Vec::new();
    let mut group: Option<i32> = None;
    let mut stdin_from: Option<OwnedFd> = None;
    let mut last_failed_to_start = None;
    for (k, stage) in stages.iter().enumerate() {
        let last = k + 1 == stages.len();
        let (next_read, stdout_to) = if last {
            match stdout_write.try_clone() {
                Ok(fd) => (None, fd),
                Err(e) => return io_failure(out, e),
            }
        } else {
            match new_pipe() {
                Ok((r, w)) => (Some(r), w),
                Err(e) => return io_failure(out, e),
            }
        };
        let spawned = spawn_stage(
            stage,
            setup,
            group,
            stdin_from.take(),
            stdout_to,
            &stderr_write,
        );
        stdin_from = next_read;
        match spawned {
            Ok(child) => {
                if group.is_none() {
                    group = child.id().and_then(|id| i32::try_from(id).ok());
                }
                children.push(child);
                if last {
                    last_failed_to_start = None;
                }
            }
            Err(e) => {
                let name = stage.argv.first().map_or("", String::as_str);
                let message = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("bash: {name}: command not found\n")
                } else {
                    format!("bash: {name}: {e}\n")
                };
                out.stderr.extend_from_slice(message.as_bytes());
                if last {
                    last_failed_to_start = Some(if e.kind() == std::io::ErrorKind::NotFound {
                        127
                    } else {
                        126
                    });
                }
            }
        }
    }
    // Only the children hold the write ends now: EOF comes when they exit.
    drop(stdout_write);
    drop(stderr_write);
    drop(stdin_from);

    let collected = tokio::select! {
        reached = collect(stdout_read, stderr_read, setup.max_bytes, out) => {
            if reached { Err(Stop::OutputLimit) } else { Ok(()) }
        }
        () = tokio::time::sleep_until(deadline.into()) => Err(Stop::Deadline),
        () = cancel.cancelled() => Err(Stop::Cancelled),
    };
    if let Err(stop) = collected {
        kill_group(group);
        for child in &mut children {
            let _ = child.start_kill();
        }
        reap(&mut children).await;
        return Err(stop);
    }
    // Output is closed; wait for the processes, still within the deadline.
    let last_status = tokio::select! {
        statuses = wait_all(&mut children) => statuses,
        () = tokio::time::sleep_until(deadline.into()) => {
            kill_group(group);
            reap(&mut children).await;
            return Err(Stop::Deadline);
        }
        () = cancel.cancelled() => {
            kill_group(group);
            reap(&mut children).await;
            return Err(Stop::Cancelled);
        }
    };
    if let Some(code) = last_failed_to_start {
        return Ok(ExitOf::Code(code));
    }
    Ok(last_status.map_or(ExitOf::Code(1), exit_of))
}

fn spawn_stage(
    stage: &Stage,
    setup: &Setup<'_>,
    group: Option<i32>,
    stdin: Option<OwnedFd>,
    stdout_to: OwnedFd,
    stderr_to: &OwnedFd,
) -> std::io::Result<tokio::process::Child> {
    let Some((program, args)) = stage.argv.split_first() else {
        return Err(std::io::Error::other("empty command"));
    };
    // Apply the redirections in order, as a shell does.
    let mut stdout = Target::Fd(stdout_to);
    let mut stderr = Target::Fd(stderr_to.try_clone()?);
    for redirect in &stage.redirects {
        match redirect {
            Redirect::StdoutToNull => stdout = Target::Null,
            Redirect::StderrToNull => stderr = Target::Null,
            Redirect::StderrToStdout => stderr = stdout.try_clone()?,
        }
    }
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(setup.env.iter().map(|(k, v)| (k, v)))
        .current_dir(setup.cwd)
        .stdin(match stdin {
            Some(fd) => Stdio::from(fd),
            None => Stdio::null(),
        })
        .stdout(stdout.stdio()?)
        .stderr(stderr.stdio()?)
        .process_group(group.unwrap_or(0))
        .kill_on_drop(true);
    let ruleset = setup.sandbox;
    // SAFETY: the closure only makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(move || match ruleset {
            Some(fd) => sandbox::apply_in_child(fd),
            None => {
                libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
                Ok(())
            }
        });
    }
    cmd.spawn()
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

/// Waits for every child; the status of the last one (the pipeline's).
async fn wait_all(children: &mut [tokio::process::Child]) -> Option<ExitStatus> {
    let mut last = None;
    for child in children.iter_mut() {
        last = child.wait().await.ok();
    }
    last
}

fn kill_group(group: Option<i32>) {
    if let Some(pgid) = group.filter(|g| *g > 0) {
        // SAFETY: kill(2) on our own process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Waits (briefly) for killed children so none is left a zombie.
async fn reap(children: &mut [tokio::process::Child]) {
    for child in children.iter_mut() {
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    }
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
    use crate::shell::sandbox::Sandbox;

    fn stage(argv: &[&str]) -> Stage {
        Stage {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            redirects: Vec::new(),
        }
    }

    fn env() -> Vec<(String, String)> {
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
    }

    async fn run_one(
        argv: &[&str],
        cwd: &Path,
        sandbox: Option<RawFd>,
        timeout: Duration,
    ) -> Outcome {
        let env = env();
        let setup = Setup {
            cwd,
            env: &env,
            sandbox,
            timeout,
            max_bytes: 1024 * 1024,
        };
        let steps = [Step {
            stages: vec![stage(argv)],
            then: None,
        }];
        run(&steps, &setup, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn pipes_connectors_and_redirections() {
        let dir = tempfile::tempdir().unwrap();
        let env = env();
        let setup = Setup {
            cwd: dir.path(),
            env: &env,
            sandbox: None,
            timeout: Duration::from_secs(10),
            max_bytes: 1024 * 1024,
        };
        let mut err_to_out = stage(&["ls", "missing-file"]);
        err_to_out.redirects = vec![Redirect::StderrToStdout];
        let steps = [
            Step {
                stages: vec![stage(&["printf", "b\\na\\n"]), stage(&["sort"])],
                then: Some(Connector::And),
            },
            Step {
                stages: vec![stage(&["false"])],
                then: Some(Connector::And),
            },
            Step {
                stages: vec![stage(&["echo", "skipped"])],
                then: Some(Connector::Or),
            },
            Step {
                stages: vec![err_to_out, stage(&["wc", "-l"])],
                then: Some(Connector::Seq),
            },
            Step {
                stages: vec![stage(&["no-such-program-xyz"])],
                then: None,
            },
        ];
        let out = run(&steps, &setup, &CancellationToken::new()).await;
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a\nb\n1\n");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no-such-program-xyz: command not found")
        );
        assert_eq!(out.ending, Ending::Exited(127));
    }

    #[tokio::test]
    async fn the_read_only_sandbox_denies_writes_reads_outside_and_network() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("in.txt"), "inside\n").unwrap();
        std::fs::write(base.join("secret.txt"), "secret\n").unwrap();
        let Ok(sandbox) = Sandbox::build(std::slice::from_ref(&root), &[]) else {
            eprintln!("SKIPPED the_read_only_sandbox_denies_writes: this kernel has no Landlock");
            return;
        };
        let fd = Some(sandbox.raw_fd());
        let t = Duration::from_secs(10);
        let out = run_one(&["cat", "in.txt"], &root, fd, t).await;
        assert_eq!(String::from_utf8_lossy(&out.stdout), "inside\n");
        let out = run_one(&["touch", "new.txt"], &root, fd, t).await;
        assert_ne!(out.ending, Ending::Exited(0));
        assert!(!root.join("new.txt").exists());
        let out = run_one(
            &["cat", &base.join("secret.txt").display().to_string()],
            &root,
            fd,
            t,
        )
        .await;
        assert_ne!(out.ending, Ending::Exited(0));
        assert!(out.stdout.is_empty());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let out = run_one(
            &[
                "bash",
                "-c",
                &format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
            ],
            &root,
            fd,
            t,
        )
        .await;
        assert_ne!(out.ending, Ending::Exited(0));
        // The same without the sandbox works, so the refusals above are the sandbox's.
        let out = run_one(&["touch", "new.txt"], &root, None, t).await;
        assert_eq!(out.ending, Ending::Exited(0));
    }

    #[tokio::test]
    async fn a_deadline_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run_one(
            &["sh", "-c", "sleep 4711 & sleep 4712"],
            dir.path(),
            None,
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(out.ending, Ending::TimedOut(Duration::from_millis(300)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(77), "signal 77");
    }
}

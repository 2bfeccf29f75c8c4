//! macOS and other Unix: the server runs a checked command line itself.
//! Each stage's argv is spawned directly (never through a shell), with
//! pipes between stages and `&&` / `||` / `;` evaluated here; on macOS
//! each stage runs under `sandbox-exec` with the call's profile (see
//! [`crate::shell::sandbox::macos`]).
//!
//! Every pipeline gets its own process group, stdin from /dev/null and the
//! given environment. The whole command line has one deadline and one
//! output budget: past either, or on cancellation, the process group is
//! killed and reaped, and the outcome says why. Without a PID namespace a
//! process that leaves the group (`setsid`) can outlive the call; macOS's
//! sandbox still confines it.
//!
//! Compiled on every Unix, so that its tests run on Linux too (where only
//! they use it).
#![cfg_attr(target_os = "linux", allow(dead_code))]

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::{Ending, Outcome, collect};
use crate::shell::parse::Redirect;
use crate::shell::steps::{HiddenFailure, Sequence, Stage, StageStatus, Step, failed_start_status};

/// Where and how commands run.
pub struct Setup<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// Words put before each stage's argv (`sandbox-exec -p PROFILE`).
    pub wrapper: &'a [String],
    /// When the commands are killed.
    pub deadline: Instant,
    /// The time limit as the answer states it.
    pub limit: Duration,
    /// Output read at most (stdout and stderr together).
    pub max_bytes: usize,
    /// CPU seconds each process may use (`RLIMIT_CPU`), so a process that
    /// left the group still stops.
    pub cpu_seconds: u64,
    /// Where progress reports read the output as it comes.
    pub live: Option<&'a super::LiveOutput>,
}

/// Why a pipeline stopped before its commands ended on their own.
enum Stop {
    Deadline,
    Cancelled,
    OutputLimit,
}

/// Runs the steps in order, honouring their connectors.
pub async fn run(steps: &[Step], setup: &Setup<'_>, cancel: &CancellationToken) -> Outcome {
    let deadline = setup.deadline;
    let mut out = Outcome::new(Ending::Exited(0));
    let mut sequence = Sequence::default();
    for step in steps {
        if !sequence.runs(step) {
            continue;
        }
        let ran = run_pipeline(&step.stages, setup, deadline, cancel, &mut out).await;
        if let Ok(status) = ran {
            sequence.ran(status);
        }
        match ran {
            Ok(StageStatus::Exited(code)) => out.ending = Ending::Exited(code),
            Ok(StageStatus::Signaled(sig)) => out.ending = Ending::Signaled(sig),
            Err(Stop::Deadline) => {
                out.ending = Ending::TimedOut(setup.limit);
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

fn exit_of(status: ExitStatus) -> StageStatus {
    match (status.code(), status.signal()) {
        (Some(code), _) => StageStatus::Exited(code),
        (None, Some(sig)) => StageStatus::Signaled(sig),
        (None, None) => StageStatus::Exited(1),
    }
}

fn new_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    Ok((read.into(), write.into()))
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
) -> Result<StageStatus, Stop> {
    let io_failure = |out: &mut Outcome, e: std::io::Error| {
        out.stderr
            .extend_from_slice(format!("rootbound: cannot set up the pipeline: {e}\n").as_bytes());
        Ok(StageStatus::Exited(126))
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
    // Declared after `children`, so dropped before them: a pipeline whose
    // call is dropped (cancelled) kills its group while the group's leader
    // is still unreaped, so its id cannot have gone to another group.
    let mut dropped_midway = KillOnDrop(None);
    let mut stdin_from: Option<OwnedFd> = None;
    // Each command's child, or the status it got when it could not start.
    let mut starts: Vec<Result<usize, i32>> = Vec::new();
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
                    dropped_midway.0 = group;
                }
                starts.push(Ok(children.len()));
                children.push(child);
            }
            Err(e) => {
                let name = stage.argv.first().map_or("", String::as_str);
                let message = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("rootbound: {name}: command not found\n")
                } else {
                    format!("rootbound: {name}: {e}\n")
                };
                out.stderr.extend_from_slice(message.as_bytes());
                starts.push(Err(failed_start_status(&e)));
            }
        }
    }
    // Only the children hold the write ends now: EOF comes when they exit.
    drop(stdout_write);
    drop(stderr_write);
    drop(stdin_from);

    let collected = tokio::select! {
        reached = collect(stdout_read, stderr_read, setup.max_bytes, out, setup.live) => {
            if reached { Err(Stop::OutputLimit) } else { Ok(()) }
        }
        () = tokio::time::sleep_until(deadline.into()) => Err(Stop::Deadline),
        () = cancel.cancelled() => Err(Stop::Cancelled),
    };
    if let Err(stop) = collected {
        dropped_midway.0 = None;
        kill_group(group);
        for child in &mut children {
            let _ = child.start_kill();
        }
        reap(&mut children).await;
        return Err(stop);
    }
    // Output is closed; wait for the processes, still within the deadline.
    let statuses = tokio::select! {
        statuses = wait_all(&mut children, group) => statuses,
        () = tokio::time::sleep_until(deadline.into()) => {
            dropped_midway.0 = None;
            kill_group(group);
            reap(&mut children).await;
            return Err(Stop::Deadline);
        }
        () = cancel.cancelled() => {
            dropped_midway.0 = None;
            kill_group(group);
            reap(&mut children).await;
            return Err(Stop::Cancelled);
        }
    };
    // Every process the pipeline started has been waited for; the group's
    // id is no longer ours to signal.
    dropped_midway.0 = None;
    let ended: Vec<Option<StageStatus>> = starts
        .iter()
        .map(|start| match start {
            Err(code) => Some(StageStatus::Exited(*code)),
            Ok(child) => statuses.get(*child).copied().flatten().map(exit_of),
        })
        .collect();
    out.hidden_failures
        .extend(HiddenFailure::in_pipeline(stages, &ended));
    // The pipeline's status is its last command's (the status it got if it
    // could not start).
    Ok(ended
        .last()
        .copied()
        .flatten()
        .unwrap_or(StageStatus::Exited(1)))
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
            Redirect::StdoutToStderr => stdout = stderr.try_clone()?,
        }
    }
    let (program, args): (&String, Vec<&String>) = match setup.wrapper.split_first() {
        Some((first, rest)) => (first, rest.iter().chain([program]).chain(args).collect()),
        None => (program, args.iter().collect()),
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(setup.env.iter().chain(&stage.env).map(|(k, v)| (k, v)))
        .current_dir(setup.cwd)
        .stdin(match stdin {
            Some(fd) => Stdio::from(fd),
            None => Stdio::null(),
        })
        .stdout(stdout.stdio()?)
        .stderr(stderr.stdio()?)
        .process_group(group.unwrap_or(0))
        .kill_on_drop(true);
    let cpu_seconds = setup.cpu_seconds;
    // SAFETY: the closure only makes async-signal-safe system calls: the
    // server ignores SIGXFSZ, commands get the default back; limits are
    // only lowered.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            lower_limit(libc::RLIMIT_CPU, cpu_seconds);
            lower_limit(libc::RLIMIT_CORE, 0);
            Ok(())
        });
    }
    cmd.spawn()
}

/// Lowers a resource limit to `value`; never raises one.
///
/// # Safety
/// Only async-signal-safe calls: usable between fork and exec.
unsafe fn lower_limit(resource: LimitResource, value: u64) {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write or read only the struct given.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return;
        }
        let value = value as libc::rlim_t;
        let lowered = libc::rlimit {
            rlim_cur: current.rlim_cur.min(value),
            rlim_max: current.rlim_max.min(value),
        };
        libc::setrlimit(resource, &lowered);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type LimitResource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type LimitResource = libc::c_int;

/// Waits for every child and returns each one's status, in order; then
/// kills what is left of the pipeline's process group (`group`, the first
/// child's id): whatever its commands left running (`cmd &`, `nohup`) ends
/// with the line, as in the Linux sandbox's PID namespace.
///
/// The first child, the group's leader, is waited for without being
/// reaped, and reaped only after the kill: while it is a zombie the
/// group's id is still its, so the kill cannot reach a group that took the
/// id since.
async fn wait_all(
    children: &mut [tokio::process::Child],
    group: Option<i32>,
) -> Vec<Option<ExitStatus>> {
    let mut statuses = Vec::with_capacity(children.len());
    let Some((leader, rest)) = children.split_first_mut() else {
        return statuses;
    };
    let mut rest_statuses = Vec::with_capacity(rest.len());
    for child in rest.iter_mut() {
        rest_statuses.push(child.wait().await.ok());
    }
    if let Some(pid) = leader.id() {
        // Blocks a thread of the blocking pool until the leader exits; a
        // deadline or cancellation meanwhile kills the group, so it does.
        let _ = tokio::task::spawn_blocking(move || exited_unreaped(pid)).await;
        kill_group(group);
    }
    statuses.push(leader.wait().await.ok());
    statuses.extend(rest_statuses);
    statuses
}

/// Waits until process `pid`, our child, has exited, leaving it to be
/// reaped.
fn exited_unreaped(pid: u32) {
    loop {
        // SAFETY: waitid on our own child, into a zeroed siginfo_t.
        let waited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if waited == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

/// Kills the pipeline's process group when the pipeline is dropped before
/// it has ended.
struct KillOnDrop(Option<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        kill_group(self.0);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse::Connector;

    fn stage(argv: &[&str]) -> Stage {
        Stage::new(argv.iter().map(|s| s.to_string()).collect())
    }

    fn setup<'a>(cwd: &'a Path, env: &'a [(String, String)], timeout: Duration) -> Setup<'a> {
        Setup {
            cwd,
            env,
            wrapper: &[],
            deadline: Instant::now() + timeout,
            limit: timeout,
            max_bytes: 1024 * 1024,
            cpu_seconds: timeout.as_secs() + 5,
            live: None,
        }
    }

    #[tokio::test]
    async fn pipes_connectors_and_redirections() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
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
        let setup = setup(dir.path(), &env, Duration::from_secs(10));
        let out = run(&steps, &setup, &CancellationToken::new()).await;
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).replace(' ', ""),
            "a\nb\n1\n"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no-such-program-xyz: command not found")
        );
        assert_eq!(out.ending, Ending::Exited(127));
    }

    #[tokio::test]
    async fn a_wrapper_runs_before_each_stage() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let wrapper = vec!["env".to_string(), "WRAPPED=yes".to_string()];
        let setup = Setup {
            wrapper: &wrapper,
            ..setup(dir.path(), &env, Duration::from_secs(10))
        };
        let steps = [Step {
            stages: vec![stage(&["printenv", "WRAPPED"])],
            then: None,
        }];
        let out = run(&steps, &setup, &CancellationToken::new()).await;
        assert_eq!(String::from_utf8_lossy(&out.stdout), "yes\n");
    }

    #[tokio::test]
    async fn a_deadline_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let started = Instant::now();
        let steps = [Step {
            stages: vec![stage(&["sh", "-c", "sleep 4711 & sleep 4712"])],
            then: None,
        }];
        let setup = setup(dir.path(), &env, Duration::from_millis(300));
        let out = run(&steps, &setup, &CancellationToken::new()).await;
        assert_eq!(out.ending, Ending::TimedOut(Duration::from_millis(300)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// The processes whose command line contains `needle` (Linux's /proc).
    #[cfg(target_os = "linux")]
    fn processes_with(needle: &str) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
            })
            .count()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn what_a_line_leaves_running_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let needle = format!("sleep 8.{}", std::process::id());
        let script = format!("{needle}1 >/dev/null 2>&1 & nohup {needle}2 >/dev/null 2>&1 &");
        let steps = [Step {
            stages: vec![stage(&["sh", "-c", &script]), stage(&["cat"])],
            then: None,
        }];
        let setup = setup(dir.path(), &env, Duration::from_secs(30));
        let out = run(&steps, &setup, &CancellationToken::new()).await;
        assert_eq!(out.ending, Ending::Exited(0));
        let deadline = Instant::now() + Duration::from_secs(5);
        while processes_with(&needle) > 0 {
            assert!(
                Instant::now() < deadline,
                "a process the line left lives on"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_dropped_call_kills_its_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let needle = format!("sleep 7.{}", std::process::id());
        // A grandchild in the background, then a child that waits.
        let script = format!("{needle}1 & {needle}2");
        let steps = [Step {
            stages: vec![stage(&["sh", "-c", &script])],
            then: None,
        }];
        let setup = setup(dir.path(), &env, Duration::from_secs(30));
        let cancel = CancellationToken::new();
        let running = run(&steps, &setup, &cancel);
        let dropped = tokio::time::timeout(Duration::from_millis(300), running).await;
        assert!(dropped.is_err(), "the pipeline ended on its own");
        let deadline = Instant::now() + Duration::from_secs(5);
        while processes_with(&needle) > 0 {
            assert!(
                Instant::now() < deadline,
                "a process of the dropped call lives on"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

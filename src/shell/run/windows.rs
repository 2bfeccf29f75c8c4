//! Windows: `bash` only in `--bash-mode unrestricted`, where the plan is a
//! single `bash -c LINE`. It runs as one process with the server's own
//! rights: no sandbox stands behind it (said at start-up, in `--help` and
//! in the README). The time limit, cancellation and the output cap still
//! apply: past them the process is killed.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::{Ending, Outcome};
use crate::shell::sandbox::Error;
use crate::shell::steps::Step;

const ONLY_UNRESTRICTED: &str = "on Windows bash runs only in unrestricted mode";

/// Where and how the line runs.
pub struct Setup<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub deadline: Instant,
    pub limit: Duration,
    pub max_bytes: usize,
}

/// The line's environment: the caller's, but the server's own `PATH`. The
/// Unix directories the shared environment names do not exist here, and
/// Windows looks the program up on the child's `PATH` when one is set, so
/// `bash` (Git for Windows', or wherever the user has it) would not be found.
fn child_env(env: &[(String, String)]) -> impl Iterator<Item = (&String, &String)> {
    env.iter()
        .filter(|(key, _)| !key.eq_ignore_ascii_case("PATH"))
        .map(|(k, v)| (k, v))
}

/// Runs the plan's one stage. Err if the plan is not one stage (only
/// unrestricted mode runs on Windows) or the program cannot start.
pub async fn run(
    steps: &[Step],
    setup: &Setup<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, Error> {
    let [step] = steps else {
        return Err(Error::request(ONLY_UNRESTRICTED));
    };
    let [stage] = step.stages.as_slice() else {
        return Err(Error::request(ONLY_UNRESTRICTED));
    };
    let Some((program, args)) = stage.argv.split_first() else {
        return Err(Error::request("empty command"));
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(child_env(setup.env))
        .current_dir(setup.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Error::io(format!("rootbound: {program}"), e))?;
    let mut out = Outcome::new(Ending::Exited(0));
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Error::gone("cannot read the command's output"));
    };
    let mut obuf = vec![0u8; 64 * 1024];
    let mut ebuf = vec![0u8; 16 * 1024];
    let (mut o_open, mut e_open) = (true, true);
    let stop = loop {
        if !o_open && !e_open {
            break None;
        }
        tokio::select! {
            r = stdout.read(&mut obuf), if o_open => match r {
                Ok(0) | Err(_) => o_open = false,
                Ok(n) => out.stdout.extend_from_slice(&obuf[..n]),
            },
            r = stderr.read(&mut ebuf), if e_open => match r {
                Ok(0) | Err(_) => e_open = false,
                Ok(n) => out.stderr.extend_from_slice(&ebuf[..n]),
            },
            () = tokio::time::sleep_until(setup.deadline.into()) => {
                break Some(Ending::TimedOut(setup.limit));
            }
            () = cancel.cancelled() => break Some(Ending::Cancelled),
        }
        if out.stdout.len() + out.stderr.len() > setup.max_bytes {
            break Some(Ending::OutputLimit);
        }
    };
    if let Some(ending) = stop {
        let _ = child.start_kill();
        let _ = child.wait().await;
        out.ending = ending;
        return Ok(out);
    }
    let status = tokio::select! {
        status = child.wait() => status.map_err(|e| Error::io("waiting for the command", e))?,
        () = tokio::time::sleep_until(setup.deadline.into()) => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            out.ending = Ending::TimedOut(setup.limit);
            return Ok(out);
        }
    };
    out.ending = Ending::Exited(status.code().unwrap_or(1));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::child_env;

    #[test]
    fn the_server_path_is_kept() {
        let env = [
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("TERM".to_string(), "dumb".to_string()),
        ];
        let kept: Vec<_> = child_env(&env).collect();
        assert_eq!(kept, [(&env[1].0, &env[1].1)]);
    }
}

//! How a checked plan runs on this platform, in its sandbox.
//!
//! - Linux: the fork server, started once in the background, clones a
//!   supervisor per call into namespaces of its own (see `sandbox/`).
//! - macOS: each command runs under `sandbox-exec` with a profile made from
//!   the roots and the mode; a private temporary directory per call.
//! - Other Unix: the same runner with no sandbox (said at start-up).
//! - Windows: only unrestricted mode, one shell process, no sandbox.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::MAX_READ_BYTES;
use super::run::{Outcome, Step};
#[cfg(unix)]
use super::sandbox;
use crate::config::BashConfig;
#[cfg(unix)]
use crate::config::BashMode;

/// One command line (or git's configuration query) to run.
pub struct Call<'a> {
    pub steps: &'a [Step],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// Nothing may be written (read-only mode, or git's query).
    pub read_only: bool,
    pub deadline: Instant,
    /// The time limit as the answer states it.
    pub limit: Duration,
}

#[cfg(target_os = "linux")]
pub use linux::Executor;
#[cfg(all(unix, not(target_os = "linux")))]
pub use other_unix::Executor;
#[cfg(windows)]
pub use windows::Executor;

/// The directories a call may read and (in writable modes) write.
#[cfg(unix)]
fn granted(config: &BashConfig, roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut readable = roots.to_vec();
    readable.extend(config.extra_read.iter().cloned());
    let writable = if config.mode == BashMode::ReadOnly {
        Vec::new()
    } else {
        roots.to_vec()
    };
    (readable, writable)
}

/// The server's temporary directory, made at start.
#[cfg(unix)]
fn server_temp() -> Result<sandbox::temp::ServerTemp, String> {
    sandbox::temp::ServerTemp::create(&std::env::temp_dir()).map_err(|e| {
        tracing::warn!("bash: no temporary directory: {e}");
        e.to_string()
    })
}

/// Removes what servers that are gone left in the temporary directory.
#[cfg(unix)]
fn remove_abandoned(temp: &Result<sandbox::temp::ServerTemp, String>) {
    if let Ok(temp) = temp {
        let removed = temp.remove_abandoned();
        if removed > 0 {
            tracing::debug!("removed {removed} temporary directories of servers that are gone");
        }
    }
}

/// A new private directory for one call.
#[cfg(unix)]
fn private_dir(
    temp: &Result<sandbox::temp::ServerTemp, String>,
) -> Result<sandbox::temp::PrivateTemp, String> {
    let temp = temp
        .as_ref()
        .map_err(|why| format!("there is no temporary directory for commands: {why}"))?;
    temp.private_dir()
        .map_err(|e| format!("cannot create the private temporary directory: {e}"))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::sync::{Arc, OnceLock};

    use super::*;
    use crate::shell::run::supervised::{self, Setup};
    use crate::shell::sandbox::fork_server::ForkServer;
    use crate::shell::sandbox::temp::ServerTemp;
    use crate::shell::sandbox::{Confinement, Layers};

    /// The fork server, started once on a thread of its own, and what every
    /// call may touch.
    #[derive(Debug)]
    pub struct Executor {
        base: Confinement,
        /// The binary that supervises calls: the server's own.
        supervisor: PathBuf,
        start: Arc<Start>,
        /// The server's temporary directory (Err: why none could be made).
        temp: Arc<Result<ServerTemp, String>>,
    }

    #[derive(Debug)]
    struct Start {
        once: std::sync::Once,
        server: OnceLock<Result<Arc<ForkServer>, String>>,
    }

    impl Executor {
        pub fn new(config: &BashConfig, roots: &[PathBuf]) -> Executor {
            let (readable, mut writable) = granted(config, roots);
            let server_temp = server_temp();
            // Each call mounts a fresh file system in memory on this
            // directory, in its own mount namespace.
            let temp = if config.mode == BashMode::ReadOnly {
                None
            } else {
                server_temp.as_ref().ok().and_then(|t| t.mount_point().ok())
            };
            writable.extend(temp.clone());
            Executor {
                temp: Arc::new(server_temp),
                base: Confinement {
                    readable,
                    writable,
                    temp,
                    read_only: config.mode == BashMode::ReadOnly,
                    layers: Layers::default(),
                    max_tasks: sandbox::MAX_TASKS,
                    cpu_seconds: config.timeout.as_secs() + sandbox::CPU_GRACE_SECONDS,
                    address_space: sandbox::MAX_ADDRESS_SPACE,
                },
                supervisor: PathBuf::from("/proc/self/exe"),
                start: Arc::new(Start {
                    once: std::sync::Once::new(),
                    server: OnceLock::new(),
                }),
            }
        }

        /// At serve start: removes, in the background, what servers that
        /// are gone left in the temporary directory. The fork server itself
        /// starts with the first call ([`Executor::start_fork_server`]): a
        /// session that never runs bash pays neither its start nor its
        /// memory (about 7 MB).
        pub fn start(&self) {
            let temp = self.temp.clone();
            std::thread::spawn(move || remove_abandoned(&temp));
        }

        /// Starts the fork server on a thread of its own, which it keeps for
        /// the server's lifetime (the fork server's parent-death signal is
        /// tied to that thread).
        fn start_fork_server(&self) {
            let start = self.start.clone();
            let exe = self.supervisor.clone();
            let base = self.base.clone();
            self.start.once.call_once(move || {
                std::thread::spawn(move || {
                    let _ = start.server.set(start_and_log(&exe, &base));
                    loop {
                        std::thread::park();
                    }
                });
            });
        }

        /// Removes the server's temporary directory.
        pub fn finish(&self) {
            if let Ok(temp) = self.temp.as_ref() {
                temp.remove();
            }
        }

        /// The fork server; the first call waits for its start on the
        /// blocking pool, not on the runtime's thread.
        async fn fork_server(&self) -> Result<Arc<ForkServer>, String> {
            if let Some(started) = self.start.server.get() {
                return started.clone();
            }
            self.start_fork_server();
            let start = self.start.clone();
            tokio::task::spawn_blocking(move || start.server.wait().clone())
                .await
                .map_err(|e| format!("the sandbox did not start: {e}"))?
        }

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, String> {
            let fork_server = self.fork_server().await?;
            let mut confinement = self.base.clone();
            confinement.layers = fork_server.layers;
            if call.read_only {
                confinement.writable.clear();
                confinement.read_only = true;
                confinement.temp = None;
            }
            // Without a mount namespace for a fresh file system in memory,
            // each call gets a directory of its own, removed when it ends.
            if let (false, Err(why)) = (call.read_only, self.temp.as_ref()) {
                return Err(format!(
                    "there is no temporary directory for commands: {why}"
                ));
            }
            let private = if confinement.temp.is_some() && !confinement.layers.mount_ns {
                let temp = private_dir(&self.temp)?;
                let mount_point = confinement.temp.replace(temp.path().to_path_buf());
                confinement
                    .writable
                    .retain(|w| Some(w) != mount_point.as_ref());
                confinement.writable.push(temp.path().to_path_buf());
                Some(temp)
            } else {
                None
            };
            let mut env = call.env.to_vec();
            if let Some(temp) = &confinement.temp {
                env.push(("TMPDIR".to_string(), temp.display().to_string()));
            }
            let setup = Setup {
                fork_server,
                cwd: call.cwd,
                env: &env,
                confinement,
                deadline: call.deadline,
                limit: call.limit,
                max_bytes: MAX_READ_BYTES,
            };
            let outcome = supervised::run(call.steps, &setup, cancel).await;
            // Removing what the call left can take a while: on the blocking
            // pool, but before the call answers.
            if let Some(temp) = private {
                let _ = tokio::task::spawn_blocking(move || drop(temp)).await;
            }
            outcome
        }
    }

    /// Starts the fork server (it probes the kernel's layers) and logs what
    /// is enforced.
    fn start_and_log(exe: &Path, base: &Confinement) -> Result<Arc<ForkServer>, String> {
        match ForkServer::start(exe, base) {
            Ok(server) => {
                let summary = sandbox::probe::summary(&server.layers);
                if sandbox::probe::properties(&server.layers)
                    .iter()
                    .any(|p| !p.enforced)
                {
                    tracing::warn!("bash sandbox: {summary}");
                } else {
                    tracing::info!("bash sandbox: {summary}");
                }
                Ok(Arc::new(server))
            }
            Err(why) => {
                tracing::warn!("bash sandbox: {why}; bash commands cannot run");
                Err(why)
            }
        }
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
mod other_unix {
    use std::sync::Arc;

    use super::*;
    use crate::shell::run::direct::{self, Setup};
    use crate::shell::sandbox::macos::Profile;
    use crate::shell::sandbox::temp::ServerTemp;

    /// Runs commands directly; on macOS under `sandbox-exec`.
    #[derive(Debug)]
    pub struct Executor {
        readable: Vec<PathBuf>,
        writable: Vec<PathBuf>,
        cpu_seconds: u64,
        temp: Arc<Result<ServerTemp, String>>,
    }

    impl Executor {
        pub fn new(config: &BashConfig, roots: &[PathBuf]) -> Executor {
            let (readable, writable) = granted(config, roots);
            Executor {
                readable,
                writable,
                cpu_seconds: config.timeout.as_secs() + sandbox::CPU_GRACE_SECONDS,
                temp: Arc::new(server_temp()),
            }
        }

        pub fn start(&self) {
            let temp = self.temp.clone();
            std::thread::spawn(move || remove_abandoned(&temp));
            if cfg!(target_os = "macos") {
                tracing::info!("bash sandbox: sandbox-exec with a profile made from the roots");
            } else {
                tracing::warn!(
                    "bash sandbox: none on this platform; commands run with the server's rights \
                     after the policy's checks"
                );
            }
        }

        pub fn finish(&self) {
            if let Ok(temp) = self.temp.as_ref() {
                temp.remove();
            }
        }

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, String> {
            let temp = if call.read_only || self.writable.is_empty() {
                None
            } else {
                Some(private_dir(&self.temp)?)
            };
            let mut writable = if call.read_only {
                Vec::new()
            } else {
                self.writable.clone()
            };
            let mut env = call.env.to_vec();
            if let Some(temp) = &temp {
                writable.push(temp.path().to_path_buf());
                env.push(("TMPDIR".to_string(), temp.path().display().to_string()));
            }
            let wrapper = if cfg!(target_os = "macos") {
                Profile {
                    readable: &self.readable,
                    writable: &writable,
                }
                .wrapper()
            } else {
                Vec::new()
            };
            let setup = Setup {
                cwd: call.cwd,
                env: &env,
                wrapper: &wrapper,
                deadline: call.deadline,
                limit: call.limit,
                max_bytes: MAX_READ_BYTES,
                cpu_seconds: self.cpu_seconds,
            };
            let outcome = direct::run(call.steps, &setup, cancel).await;
            if let Some(temp) = temp {
                let _ = tokio::task::spawn_blocking(move || drop(temp)).await;
            }
            Ok(outcome)
        }
    }
}

#[cfg(windows)]
mod windows {
    use super::*;
    use crate::shell::run::windows::{self as runner, Setup};

    /// Runs the line in one shell process, with no sandbox.
    #[derive(Debug)]
    pub struct Executor;

    impl Executor {
        pub fn new(_config: &BashConfig, _roots: &[PathBuf]) -> Executor {
            Executor
        }

        pub fn start(&self) {
            tracing::warn!(
                "bash on Windows: no sandbox stands behind it; commands run with the server's \
                 own rights"
            );
        }

        pub fn finish(&self) {}

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, String> {
            // Nothing could keep such a call from writing: no sandbox here.
            if call.read_only {
                return Err("on Windows no sandbox can keep a command from writing, so \
                            read-only commands do not run"
                    .into());
            }
            let setup = Setup {
                cwd: call.cwd,
                env: call.env,
                deadline: call.deadline,
                limit: call.limit,
                max_bytes: MAX_READ_BYTES,
            };
            runner::run(call.steps, &setup, cancel).await
        }
    }
}

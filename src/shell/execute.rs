//! How a checked plan runs on this platform, in its sandbox.
//!
//! - Linux: the fork server, started at the first call, clones a
//!   supervisor per call into namespaces of its own (see `sandbox/`).
//! - macOS: each command runs under `sandbox-exec` with a profile made from
//!   the roots and the mode; a private temporary directory per call.
//! - Other Unix: the same runner with no sandbox (said at start-up).
//! - Windows: only unrestricted mode, one shell process, no sandbox.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::MAX_READ_BYTES;
use super::run::Outcome;
use super::sandbox;
use super::steps::Step;
use crate::shell::config::BashConfig;
#[cfg(unix)]
use crate::shell::config::BashMode;

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
    /// Where progress reports read the output as it comes (not on
    /// Windows, whose runner reports only the time run).
    #[cfg_attr(windows, allow(dead_code))]
    pub live: Option<&'a super::run::LiveOutput>,
    /// What a writable call may not change (bound over itself on Linux;
    /// elsewhere the check after the call alone protects).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub protect: super::sandbox::Protect,
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

/// The server's temporary directory, made when first needed: on Linux by
/// the fork server's start at the first bash call (a session that never
/// runs bash makes none), elsewhere by the sweep at start, on a thread of
/// its own. Start-up never waits for the file system.
#[cfg(unix)]
#[derive(Debug, Default)]
struct LazyTemp(std::sync::OnceLock<Result<sandbox::temp::ServerTemp, sandbox::Error>>);

#[cfg(unix)]
impl LazyTemp {
    /// The directory, made now if it is not yet (waiting if another thread
    /// is making it).
    fn get(&self) -> &Result<sandbox::temp::ServerTemp, sandbox::Error> {
        self.0.get_or_init(|| {
            sandbox::temp::ServerTemp::create(&std::env::temp_dir()).map_err(|e| {
                tracing::warn!("bash: no temporary directory: {e}");
                sandbox::Error::io("making the temporary directory for commands", e)
            })
        })
    }

    /// Makes the directory if it is not yet, then removes what servers that
    /// are gone left beside it.
    fn remove_abandoned(&self) {
        if let Ok(temp) = self.get() {
            let removed = temp.remove_abandoned();
            if removed > 0 {
                tracing::debug!("removed {removed} temporary directories of servers that are gone");
            }
        }
    }

    /// Removes the directory if it was made, without waiting for a
    /// thread that may be making it (on Linux, a first bash call still
    /// starting as the server exits: its directory is then swept by the
    /// next server, as its lock is gone).
    #[cfg(target_os = "linux")]
    fn remove_if_made(&self) {
        if let Some(Ok(temp)) = self.0.get() {
            temp.remove();
        }
    }

    /// Removes the directory, waiting for it to be made if it is being
    /// made (or making it): for servers whose sweep at start makes it.
    #[cfg(not(target_os = "linux"))]
    fn remove(&self) {
        if let Ok(temp) = self.get() {
            temp.remove();
        }
    }
}

/// A new private directory for one call.
#[cfg(unix)]
fn private_dir(
    temp: &Result<sandbox::temp::ServerTemp, sandbox::Error>,
) -> Result<sandbox::temp::PrivateTemp, sandbox::Error> {
    let temp = temp.as_ref().map_err(Clone::clone)?;
    temp.private_dir()
        .map_err(|e| sandbox::Error::io("making the call's private temporary directory", e))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::sync::{Arc, OnceLock};

    use super::*;
    use crate::shell::run::supervised::{self, Setup};
    use crate::shell::sandbox::fork_server::ForkServer;
    use crate::shell::sandbox::{Confinement, Layers};

    /// The fork server, started once on a thread of its own, and what every
    /// call may touch.
    #[derive(Debug)]
    pub struct Executor {
        /// What every call may touch, but the server's temporary directory
        /// (added when the fork server starts, once that directory is made).
        base: Confinement,
        /// The binary that supervises calls: the server's own.
        supervisor: PathBuf,
        start: Arc<Start>,
        temp: Arc<LazyTemp>,
    }

    #[derive(Debug)]
    struct Start {
        once: std::sync::Once,
        started: OnceLock<Result<Started, sandbox::Error>>,
    }

    /// A started fork server, and the confinement it was started with.
    #[derive(Debug, Clone)]
    struct Started {
        fork_server: Arc<ForkServer>,
        base: Confinement,
    }

    impl Executor {
        pub fn new(config: &BashConfig, roots: &[PathBuf]) -> Executor {
            let (readable, writable) = granted(config, roots);
            Executor {
                temp: Arc::new(LazyTemp::default()),
                base: Confinement {
                    readable,
                    writable,
                    temp: None,
                    read_only: config.mode == BashMode::ReadOnly,
                    layers: Layers::default(),
                    max_tasks: sandbox::MAX_TASKS,
                    cpu_seconds: config.timeout.as_secs() + sandbox::CPU_GRACE_SECONDS,
                    address_space: sandbox::MAX_ADDRESS_SPACE,
                },
                supervisor: PathBuf::from("/proc/self/exe"),
                start: Arc::new(Start {
                    once: std::sync::Once::new(),
                    started: OnceLock::new(),
                }),
            }
        }

        /// Nothing at serve start: the fork server, the server's temporary
        /// directory and the removal of what dead servers left all come
        /// with the first call ([`Executor::start_fork_server`]). A session
        /// that never runs bash pays neither their start nor the fork
        /// server's memory (about 7 MB).
        pub fn start(&self) {}

        /// Starts the fork server on a thread of its own, which it keeps for
        /// the server's lifetime (the fork server's parent-death signal is
        /// tied to that thread).
        fn start_fork_server(&self) {
            let start = self.start.clone();
            let exe = self.supervisor.clone();
            let mut base = self.base.clone();
            let temp = self.temp.clone();
            self.start.once.call_once(move || {
                std::thread::spawn(move || {
                    // Made before any call may ask for it (see `execute`).
                    let made = temp.get();
                    // Each call mounts a fresh file system in memory on this
                    // directory, in its own mount namespace.
                    if !base.read_only
                        && let Ok(made) = made
                        && let Ok(mount_point) = made.mount_point()
                    {
                        base.writable.push(mount_point.clone());
                        base.temp = Some(mount_point);
                    }
                    let started =
                        start_and_log(&exe, &base).map(|fork_server| Started { fork_server, base });
                    let _ = start.started.set(started);
                    // After the first call is on its way.
                    temp.remove_abandoned();
                    loop {
                        std::thread::park();
                    }
                });
            });
        }

        /// Removes the server's temporary directory.
        pub fn finish(&self) {
            self.temp.remove_if_made();
        }

        /// Whether a writable call's mount namespace binds the protected
        /// files over themselves (else the check after the call puts them
        /// back from copies).
        pub async fn protects_by_mount(&self) -> bool {
            self.started().await.is_ok_and(|started| {
                crate::shell::sandbox::supervisor::namespaced(&Confinement {
                    layers: started.fork_server.layers,
                    ..started.base
                })
            })
        }

        /// Whether a read-only call is kept from writing by the kernel:
        /// Landlock (no write right anywhere) or read-only mounts. Without
        /// either, only the policy stands between its commands and the
        /// files.
        pub async fn enforces_read_only(&self) -> bool {
            self.started().await.is_ok_and(|started| {
                let layers = started.fork_server.layers;
                layers.landlock_abi > 0 || layers.mount_ns
            })
        }

        /// The fork server; the first call waits for its start on the
        /// blocking pool, not on the runtime's thread.
        async fn started(&self) -> Result<Started, sandbox::Error> {
            if let Some(started) = self.start.started.get() {
                return started.clone();
            }
            self.start_fork_server();
            let start = self.start.clone();
            tokio::task::spawn_blocking(move || start.started.wait().clone())
                .await
                .map_err(|e| sandbox::Error::io("starting the sandbox", e))?
        }

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, sandbox::Error> {
            let Started { fork_server, base } = self.started().await?;
            let mut confinement = base;
            confinement.layers = fork_server.layers;
            if call.read_only {
                confinement.writable.clear();
                confinement.read_only = true;
                confinement.temp = None;
            }
            // Made by now: the fork server's thread made it before it
            // answered, so this never waits on the runtime's thread.
            let server_temp = self.temp.get();
            // Without a mount namespace for a fresh file system in memory,
            // each call gets a directory of its own, removed when it ends.
            if let (false, Err(why)) = (call.read_only, server_temp) {
                return Err(why.clone());
            }
            let private = if confinement.temp.is_some() && !confinement.layers.mount_ns {
                let temp = private_dir(server_temp)?;
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
                env.extend(temp_env(temp));
            }
            let setup = Setup {
                fork_server,
                cwd: call.cwd,
                env: &env,
                confinement,
                protect: call.protect.clone(),
                deadline: call.deadline,
                limit: call.limit,
                max_bytes: MAX_READ_BYTES,
                live: call.live,
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
    fn start_and_log(exe: &Path, base: &Confinement) -> Result<Arc<ForkServer>, sandbox::Error> {
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

    /// Runs commands directly; on macOS under `sandbox-exec`.
    #[derive(Debug)]
    pub struct Executor {
        readable: Vec<PathBuf>,
        writable: Vec<PathBuf>,
        cpu_seconds: u64,
        temp: Arc<LazyTemp>,
    }

    impl Executor {
        pub fn new(config: &BashConfig, roots: &[PathBuf]) -> Executor {
            let (readable, writable) = granted(config, roots);
            Executor {
                readable,
                writable,
                cpu_seconds: config.timeout.as_secs() + sandbox::CPU_GRACE_SECONDS,
                temp: Arc::new(LazyTemp::default()),
            }
        }

        pub fn start(&self) {
            let temp = self.temp.clone();
            std::thread::spawn(move || temp.remove_abandoned());
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
            self.temp.remove();
        }

        /// No mounts here: the check after a call puts protected files back
        /// from copies.
        pub async fn protects_by_mount(&self) -> bool {
            false
        }

        /// On macOS `sandbox-exec`'s profile grants no write to a read-only
        /// call; elsewhere nothing does.
        pub async fn enforces_read_only(&self) -> bool {
            cfg!(target_os = "macos")
        }

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, sandbox::Error> {
            let temp = if call.read_only || self.writable.is_empty() {
                None
            } else {
                Some(private_dir(self.temp.get())?)
            };
            let mut writable = if call.read_only {
                Vec::new()
            } else {
                self.writable.clone()
            };
            let mut env = call.env.to_vec();
            if let Some(temp) = &temp {
                writable.push(temp.path().to_path_buf());
                env.extend(temp_env(temp.path()));
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
                live: call.live,
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

        /// Read-only calls do not run here (see `execute`).
        pub async fn enforces_read_only(&self) -> bool {
            false
        }

        pub async fn execute(
            &self,
            call: &Call<'_>,
            cancel: &CancellationToken,
        ) -> Result<Outcome, sandbox::Error> {
            // Nothing could keep such a call from writing: no sandbox here.
            if call.read_only {
                return Err(sandbox::Error::Unavailable(
                    "on Windows no sandbox can keep a command from writing, so read-only \
                     commands do not run",
                ));
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

/// The variables that point into a call's temporary directory: `TMPDIR`,
/// and the build cache Go must write (the call's own, gone with it), so
/// that a Go toolchain found outside the roots needs nothing writable there.
#[cfg(unix)]
fn temp_env(temp: &std::path::Path) -> [(String, String); 2] {
    [
        ("TMPDIR".to_string(), temp.display().to_string()),
        (
            "GOCACHE".to_string(),
            temp.join("go-build").display().to_string(),
        ),
    ]
}

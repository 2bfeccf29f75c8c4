//! The guarded shell behind the `bash` tool.
//!
//! A command line goes: [`parse`] (a strict parser for a small shell subset)
//! → [`expand`] (globs, through the path guard, within one budget) →
//! [`policy`] (what may run: per-program option tables, paths through the
//! guard) → [`git_repo`] (git pinned to a repository inside the roots, its
//! configuration asked of git itself) → [`run`] (the checked argv, spawned
//! directly, never through `bash -c`, inside the [`sandbox`]).
//!
//! The sandbox is the boundary; the policy is the first line. In
//! `workspace-write` mode a real shell runs the line and only the sandbox
//! confines it.

pub mod config;
mod error;
mod execute;
pub mod expand;
pub mod fuzzing;
pub mod git_repo;
pub mod parse;
pub mod policy;
pub mod refusal;
pub mod run;
pub mod sandbox;
pub mod steps;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::fs::guard::{Guard, MAX_PATH_BYTES, Refusal as GuardRefusal};
#[cfg(unix)]
use crate::fs::protected::Survey;
use crate::fs::write_gate::{GitAlone, WriteGate, Writing};
use crate::shell::config::{BashConfig, BashMode};
pub use error::{CallError, LimitError};
use execute::{Call, Executor};
use expand::{Budget, Expander};
use git_repo::Pin;
use policy::{PathCheck, Policy};
pub use refusal::Refusal;
use run::Outcome;
use steps::{Stage, Step};

/// Output read from a command line at most; past it the commands are killed.
pub const MAX_READ_BYTES: usize = 1024 * 1024;
/// The longest command line accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Words in all commands of a line together, after glob expansion.
pub const MAX_WORDS: usize = 10_000;
/// Bytes in all commands of a line together, after glob expansion.
pub const MAX_ARGV_BYTES: usize = 1024 * 1024;
/// Commands lines one server runs at once; more wait for a turn, within
/// their own time limit. With the per-call process limit this bounds the
/// processes a server's calls can have.
pub const MAX_CONCURRENT_CALLS: usize = 4;
/// How long git may take to report its configuration.
const GIT_CONFIG_TIMEOUT: Duration = Duration::from_secs(5);

/// The system directories on the commands' PATH. Nothing relative, nothing
/// empty, nothing under a root.
pub const SYSTEM_PATH: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// What runs for one command line, once checked. Only the planner
/// ([`Shell::plan_approved`]) makes one, and [`Shell::run`] runs only what
/// it made: the fields are private.
#[derive(Debug, Clone)]
pub struct Plan {
    steps: Vec<Step>,
    /// The repositories git stages run in; their configuration is asked of
    /// git and checked before anything runs.
    git_pins: Vec<Pin>,
    /// Glob matches left out because they lead outside the roots.
    left_out: usize,
    /// The line runs git beside other programs (or `git config` beside
    /// other git commands), so it runs with nothing writable: no stage can
    /// change the configuration git reads after it was checked.
    writes_nothing: bool,
    /// The paths each writing git stage names, checked again once the line
    /// holds the write gate: another call may have changed what they lead to
    /// while this one waited (a new link into `.git`).
    git_written_paths: Vec<(Pin, Vec<PathBuf>)>,
    /// In read-only mode, the user chose to run this line once with the
    /// roots writable (still in the sandbox, with the check of what it left
    /// behind).
    writable_once: bool,
}

impl Plan {
    /// A plan that runs nothing, with these notes (tests of the answer).
    #[cfg(test)]
    pub fn with_notes(left_out: usize, writes_nothing: bool) -> Plan {
        Plan {
            steps: Vec::new(),
            git_pins: Vec::new(),
            left_out,
            writes_nothing,
            git_written_paths: Vec::new(),
            writable_once: false,
        }
    }

    /// Notes for the answer, after its status line.
    pub fn notes(&self, mode: BashMode) -> Vec<String> {
        let mut notes = Vec::new();
        if self.left_out > 0 {
            notes.push(format!(
                "{} glob match{} leading outside the workspace {} left out",
                self.left_out,
                if self.left_out == 1 { "" } else { "es" },
                if self.left_out == 1 { "was" } else { "were" },
            ));
        }
        if self.writes_nothing && mode != BashMode::ReadOnly {
            notes.push(
                "this line runs git beside other programs, so nothing was writable; run \
                 commands that write in a call of their own"
                    .to_string(),
            );
        }
        notes
    }
}

/// One of the shell's turns, held from a line's planning to its end.
#[derive(Debug)]
pub struct Turn<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
}

/// A command line's outcome, and what the check after it undid.
#[derive(Debug)]
pub struct Ran {
    pub outcome: Outcome,
    /// One line per protected thing the call created or changed, and what
    /// was done about it.
    pub left_behind: Vec<String>,
}

/// How long, at most, the check after a call walks the roots.
#[cfg(unix)]
const AFTERCARE_TIME: Duration = Duration::from_secs(120);
/// How long a dropped call's check waits for the call's processes to be
/// gone (its supervisor gets SIGTERM, then SIGKILL three seconds later).
#[cfg(unix)]
const DROPPED_CALL_GRACE: Duration = Duration::from_secs(5);

/// What the protection of the roots keeps between calls (see
/// `fs/protected.rs`).
///
/// Writable lines that overlap in time form an *episode*: its baseline is
/// the survey taken when the first of them started, and every line of the
/// episode is checked against it. So a line cannot pass off what another
/// line of the episode planted as the user's, however they interleave, and
/// lines still run side by side.
#[cfg(unix)]
#[derive(Debug, Default)]
struct Protection {
    /// Held while an episode's first survey is taken.
    starting: tokio::sync::Mutex<()>,
    episode: std::sync::Mutex<Episode>,
    /// The latest survey: the next one lists again only the directories
    /// whose ctime moved since it began.
    last: std::sync::Mutex<Option<Arc<Survey>>>,
    /// A check could not be done: writable lines are refused from then on.
    poisoned: std::sync::atomic::AtomicBool,
}

#[cfg(unix)]
#[derive(Debug, Default)]
struct Episode {
    in_flight: usize,
    baseline: Option<Arc<Survey>>,
    /// Where copies protect: held from the episode's survey to its end, so
    /// that no other server's writable call overlaps it in these trees.
    trees: Option<crate::fs::dir_locks::DirLocks>,
}

#[cfg(unix)]
impl Protection {
    fn poison(&self) {
        self.poisoned
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn episode(&self) -> std::sync::MutexGuard<'_, Episode> {
        self.episode.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps the survey a check took, for the next survey to start from.
    fn keep_last(&self, now: Option<Survey>) {
        match now {
            Some(now) => *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(now)),
            None => self.poison(),
        }
    }
}

/// One writable line's place in its episode; leaving ends the episode when
/// it was the last.
#[cfg(unix)]
#[derive(Debug)]
struct InFlight(Arc<Protection>);

#[cfg(unix)]
impl Drop for InFlight {
    fn drop(&mut self) {
        let mut episode = self.0.episode();
        episode.in_flight = episode.in_flight.saturating_sub(1);
        if episode.in_flight == 0 {
            episode.baseline = None;
            episode.trees = None;
        }
    }
}

/// The baseline a writable line is checked against, and the check after
/// it. If the line is dropped before it checks (a cancelled request whose
/// future the dispatcher drops), the check runs all the same, on a thread
/// of its own, once the line's processes are gone; the episode lasts until
/// then.
#[cfg(unix)]
struct Aftercare {
    baseline: Option<Arc<Survey>>,
    unprotected: crate::fs::protected::Unprotected,
    protection: Arc<Protection>,
    in_flight: Option<InFlight>,
}

#[cfg(unix)]
impl Aftercare {
    fn protect(&self) -> sandbox::Protect {
        self.baseline
            .as_ref()
            .map(|s| sandbox::Protect {
                pinned: s.pinned(),
                read_only: s.read_only(),
            })
            .unwrap_or_default()
    }

    /// Walks the roots again, undoes what the line (or another of its
    /// episode) left, and says so.
    async fn check(mut self, guard: &Guard) -> Vec<String> {
        let Some(baseline) = self.baseline.take() else {
            return Vec::new();
        };
        let unprotected = self.unprotected.clone();
        let found = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let found = baseline.check_after(&unprotected, Instant::now() + AFTERCARE_TIME);
            tracing::debug!(
                "bash: the check after the call took {:?}",
                started.elapsed()
            );
            found
        })
        .await;
        let Ok((found, now)) = found else {
            self.protection.poison();
            return vec!["the check of what the command left behind failed".into()];
        };
        self.protection.keep_last(now);
        found
            .iter()
            .map(|f| f.describe(|p| guard.relative_display(p)))
            .collect()
    }
}

#[cfg(unix)]
impl Drop for Aftercare {
    fn drop(&mut self) {
        if let Some(baseline) = self.baseline.take() {
            let unprotected = self.unprotected.clone();
            let protection = self.protection.clone();
            // The episode lasts until this check is done.
            let in_flight = self.in_flight.take();
            std::thread::spawn(move || {
                std::thread::sleep(DROPPED_CALL_GRACE);
                let (found, now) =
                    baseline.check_after(&unprotected, Instant::now() + AFTERCARE_TIME);
                protection.keep_last(now);
                drop(in_flight);
                for finding in found {
                    tracing::warn!(
                        "bash: after a cancelled call: {}",
                        finding.describe(|p| p.display().to_string())
                    );
                }
            });
        }
    }
}

/// The shell of one server: policy, sandbox and environment, built once.
#[derive(Debug)]
pub struct Shell {
    config: BashConfig,
    policy: Policy,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    /// How this platform runs a checked plan, in its sandbox.
    executor: Executor,
    /// Turns for running command lines ([`MAX_CONCURRENT_CALLS`]).
    turns: tokio::sync::Semaphore,
    /// Held by everything that may write in the roots (writable command
    /// lines, the file tools' writes), and alone by a line that runs git
    /// from its configuration check to its end: what was checked is what
    /// git reads.
    writes: Arc<WriteGate>,
    /// What protecting the roots keeps between writable lines.
    #[cfg(unix)]
    protection: Arc<Protection>,
    /// Allow entries the user approved for the rest of the session, through
    /// the client (docs/security.md, "Asking the user"). Memory only.
    approved: std::sync::Mutex<Vec<Vec<String>>>,
    /// In read-only mode, the executor of lines the user chose to run once
    /// with the roots writable: a sandbox of its own, made (and its fork
    /// server started) only when first needed, so that every read-only
    /// line keeps its read-only template.
    widened: std::sync::OnceLock<Executor>,
    roots: Vec<PathBuf>,
}

impl Shell {
    /// Builds the shell for `config`. The sandbox starts on first use.
    pub fn new(config: &BashConfig, guard: &Guard, writes: Arc<WriteGate>) -> Shell {
        let roots: Vec<PathBuf> = guard.roots().map(Path::to_path_buf).collect();
        Shell {
            config: config.clone(),
            policy: Policy::new(config),
            env: child_env(config),
            cwd: guard.primary().to_path_buf(),
            executor: Executor::new(config, &roots),
            turns: tokio::sync::Semaphore::new(MAX_CONCURRENT_CALLS),
            writes,
            #[cfg(unix)]
            protection: Arc::default(),
            approved: std::sync::Mutex::new(Vec::new()),
            widened: std::sync::OnceLock::new(),
            roots,
        }
    }

    /// The executor `plan` runs under: the server's, or for a line the user
    /// let write once in read-only mode, one whose sandbox has the roots
    /// writable.
    fn executor_for(&self, plan: &Plan) -> &Executor {
        if plan.writable_once && self.config.mode == BashMode::ReadOnly {
            self.widened.get_or_init(|| {
                let config = BashConfig {
                    mode: BashMode::Allowlist,
                    ..self.config.clone()
                };
                Executor::new(&config, &self.roots)
            })
        } else {
            &self.executor
        }
    }

    /// The user approved commands starting with `prefix` for this session.
    pub fn approve_for_session(&self, prefix: &[String]) {
        let mut approved = self.approved.lock().unwrap_or_else(|p| p.into_inner());
        if !approved.iter().any(|e| e == prefix) {
            tracing::info!(
                "bash: the user approved, for this session, commands starting with {}",
                crate::text::visible::quoted_words(prefix)
            );
            approved.push(prefix.to_vec());
        }
    }

    /// Whether the user may be asked about refused commands (`--bash-ask`).
    pub fn asks(&self) -> bool {
        self.config.ask && !self.config.mode.full_shell()
    }

    /// The mode commands run in.
    pub fn mode(&self) -> BashMode {
        self.config.mode
    }

    /// At serve start. On Linux nothing: the fork server, the server's
    /// temporary directory and the sweep of what dead servers left come
    /// with the first bash call (a session that never runs bash sweeps
    /// nothing; the next one that does, will). Elsewhere it logs what
    /// confines commands, and sweeps in the background.
    pub fn start_sandbox(&self) {
        self.executor.start();
    }

    /// Cleans up what the sandbox keeps while the server runs.
    pub fn finish(&self) {
        self.executor.finish();
        if let Some(widened) = self.widened.get() {
            widened.finish();
        }
    }

    /// A call's time limit: the one it asked for (in seconds), at most
    /// `--bash-timeout-max`, else the server's `--bash-timeout`. Err: the
    /// message for a limit the server does not give.
    pub fn limit_for(&self, asked: Option<u64>) -> Result<Duration, LimitError> {
        match asked {
            None => Ok(self.config.timeout),
            Some(0) => Err(LimitError::Zero),
            Some(secs) if Duration::from_secs(secs) > self.config.timeout_max => {
                Err(LimitError::AboveMax(self.config.timeout_max))
            }
            Some(secs) => Ok(Duration::from_secs(secs)),
        }
    }

    /// Waits for one of the [`MAX_CONCURRENT_CALLS`] turns, within the
    /// call's time limit and cancellation. A line holds its turn from its
    /// planning (glob expansion reads directories) to its end, so no more
    /// than that many lines work at once, whatever they hold. Err: how the
    /// call ends instead, or a message.
    pub async fn take_turn(
        &self,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Turn<'_>, Result<Ran, CallError>> {
        let turn = self.turns.acquire();
        let waited = self.wait_for(turn, deadline, cancel, "other commands held every turn");
        match waited.await {
            Ok(Ok(permit)) => Ok(Turn { _permit: permit }),
            Ok(Err(_closed)) => Err(Err(CallError::Closing)),
            Err(ended) => Err(Ok(Ran {
                outcome: ended,
                left_behind: Vec::new(),
            })),
        }
    }

    /// Runs a checked plan in `turn`: first git's configuration is checked in every
    /// repository the plan's git stages use, then the steps run. Err is a
    /// refusal message.
    pub async fn run(
        &self,
        plan: &Plan,
        guard: &Guard,
        (deadline, limit): (Instant, Duration),
        cancel: &CancellationToken,
        turn: Turn<'_>,
        live: Option<&run::LiveOutput>,
    ) -> Result<Ran, CallError> {
        let _turn = turn;
        let read_only =
            (self.config.mode == BashMode::ReadOnly && !plan.writable_once) || plan.writes_nothing;
        let executor = self.executor_for(plan);
        // Where the kernel cannot keep a read-only call from writing (no
        // Landlock, no mount namespace), only the policy stands between a
        // program the user allowed (`cp`) and the files: such a call is
        // gated, surveyed and checked after as a writable one is.
        let writable = !read_only || !executor.enforces_read_only().await;
        // A line that runs git beside another program runs read-only, so
        // that nothing in it changes what git reads after the check; where
        // it cannot be made so, it does not run.
        if plan.writes_nothing && writable {
            return Err(CallError::Refused(Refusal::new(
                "git",
                "it shares its line with another program, and this kernel's sandbox cannot keep \
                 that program from changing what git reads (no Landlock, no mount namespace); \
                 run git in a call of its own",
            )));
        }
        let gate = async {
            if !plan.git_pins.is_empty() {
                let repositories: Vec<PathBuf> = plan
                    .git_pins
                    .iter()
                    .flat_map(|pin| {
                        pin.git_dir
                            .iter()
                            .chain(&pin.common_dir)
                            .chain(&pin.work_tree)
                            .cloned()
                    })
                    .collect();
                Some(Gate::Alone(self.writes.git_alone(&repositories).await))
            } else if writable {
                Some(Gate::Shared(self.writes.writing().await))
            } else {
                None
            }
        };
        let waited = self.wait_for(gate, deadline, cancel, "writes in the roots went on");
        let _gate = match waited.await {
            Ok(gate) => gate,
            Err(ended) => {
                return Ok(Ran {
                    outcome: ended,
                    left_behind: Vec::new(),
                });
            }
        };
        // What planning found of each repository may have changed while the
        // line waited; with the gate held, nothing in this server changes it
        // until the line ends.
        for pin in &plan.git_pins {
            if let Some(tree) = &pin.work_tree
                && git_repo::locate(guard, tree).as_ref() != Ok(pin)
            {
                let why = Refusal::new("git", "the repository changed while the command waited");
                return Err(CallError::Refused(why));
            }
        }
        for (pin, paths) in &plan.git_written_paths {
            git_repo::refuse_paths_in_repository(guard, pin, &self.cwd, paths)?;
        }
        self.check_git_configs(plan, deadline, cancel).await?;
        // Windows has no sandbox to protect in; only the write tools' rules
        // apply there (docs/security.md).
        #[cfg(unix)]
        let aftercare = if !writable {
            None
        } else {
            Some(self.survey(executor, guard, deadline).await?)
        };
        #[cfg(unix)]
        let protect = aftercare
            .as_ref()
            .map(Aftercare::protect)
            .unwrap_or_default();
        #[cfg(not(unix))]
        let protect = sandbox::Protect::default();
        let call = Call {
            steps: &plan.steps,
            cwd: &self.cwd,
            env: &self.env,
            read_only,
            deadline,
            limit,
            live,
            protect,
        };
        let outcome = executor.execute(&call, cancel).await;
        #[cfg(unix)]
        let left_behind = match aftercare {
            Some(aftercare) => aftercare.check(guard).await,
            None => Vec::new(),
        };
        #[cfg(not(unix))]
        let left_behind = Vec::new();
        Ok(Ran {
            outcome: outcome?,
            left_behind,
        })
    }

    /// What protected things the roots hold before a writable call (see
    /// `fs/protected.rs`). Err: the roots could not be surveyed, so the
    /// call does not run.
    #[cfg(unix)]
    async fn survey(
        &self,
        executor: &Executor,
        guard: &Guard,
        deadline: Instant,
    ) -> Result<Aftercare, CallError> {
        let protection = &self.protection;
        if protection
            .poisoned
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err(CallError::Poisoned);
        }
        let unprotected = guard.unprotected().clone();
        let aftercare = |baseline: Arc<Survey>| Aftercare {
            baseline: Some(baseline),
            unprotected: unprotected.clone(),
            protection: protection.clone(),
            in_flight: Some(InFlight(protection.clone())),
        };
        let _starting = protection.starting.lock().await;
        {
            let mut episode = protection.episode();
            if episode.in_flight > 0
                && let Some(baseline) = episode.baseline.clone()
            {
                episode.in_flight += 1;
                return Ok(aftercare(baseline));
            }
        }
        let copies = !executor.protects_by_mount().await;
        let roots: Vec<PathBuf> = guard.roots().map(Path::to_path_buf).collect();
        // Where copies protect, another server whose roots overlap these
        // must have no writable call in flight while this episode lasts:
        // its plants would be taken for the user's and put back after its
        // own check set them aside (`fs::dir_locks::lock_trees`).
        let trees = if copies {
            let locked =
                tokio::time::timeout_at(deadline.into(), crate::fs::dir_locks::lock_trees(&roots))
                    .await;
            match locked {
                Ok(Ok(held)) => Some(held),
                Ok(Err(e)) => {
                    return Err(CallError::Survey(format!(
                        "the roots could not be locked against other servers ({e})"
                    )));
                }
                Err(_late) => {
                    return Err(CallError::Survey(
                        "another rootbound server's command that may write where these roots \
                         lie went on until the time limit"
                            .into(),
                    ));
                }
            }
        } else {
            None
        };
        let last = protection
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let walk_unprotected = unprotected.clone();
        let taken = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let taken = Survey::take(&roots, &walk_unprotected, copies, deadline, last.as_deref());
            tracing::debug!("bash: the survey took {:?}", started.elapsed());
            taken
        })
        .await
        .map_err(|e| CallError::Survey(e.to_string()))?;
        match taken {
            Ok(survey) => {
                let baseline = Arc::new(survey);
                let mut episode = protection.episode();
                episode.in_flight += 1;
                episode.baseline = Some(baseline.clone());
                episode.trees = trees;
                Ok(aftercare(baseline))
            }
            Err(why) => Err(CallError::Survey(why)),
        }
    }

    /// Waits for `what` within the call's time limit and cancellation; Err
    /// is how the call ends instead (`why_late` says what held it up).
    async fn wait_for<T>(
        &self,
        what: impl std::future::Future<Output = T>,
        deadline: Instant,
        cancel: &CancellationToken,
        why_late: &str,
    ) -> Result<T, Outcome> {
        tokio::select! {
            done = what => Ok(done),
            () = tokio::time::sleep_until(deadline.into()) => Err(Outcome {
                stderr: format!("rootbound: {why_late} until the time limit\n").into_bytes(),
                ..Outcome::new(run::Ending::TimedOut(self.config.timeout))
            }),
            () = cancel.cancelled() => Err(Outcome::new(run::Ending::Cancelled)),
        }
    }

    /// The text a refused command answers with: what and why, then what is allowed.
    pub fn refusal_message(&self, r: &Refusal) -> String {
        let mut message = format!(
            "Command refused: `{}`: {}.",
            r.part,
            r.reason.trim_end_matches('.')
        );
        if !self.config.mode.full_shell() {
            message.push('\n');
            message.push_str(&self.policy.summary());
        }
        message
    }

    /// Parses, expands and checks `command` into the steps to run.
    pub fn plan(&self, command: &str, guard: &Guard, deadline: Instant) -> Result<Plan, Refusal> {
        self.plan_approved(command, guard, deadline, &[], false)
    }

    /// [`Shell::plan`], with the session's approvals and `once` (commands
    /// the user approved for this call alone, word for word) on the allow
    /// list. When only
    /// the allow list refuses, the refusal names every command of the line
    /// it refused ([`Refusal::asks`]), so the user is asked once per line.
    pub fn plan_approved(
        &self,
        command: &str,
        guard: &Guard,
        deadline: Instant,
        once: &[Vec<String>],
        writable_once: bool,
    ) -> Result<Plan, Refusal> {
        // Only read-only mode has roots to make writable for one call.
        let writable_once = writable_once && self.config.mode == BashMode::ReadOnly;
        if command.len() > MAX_COMMAND_BYTES {
            return Err(Refusal::new(
                format!("{}...", command.chars().take(40).collect::<String>()),
                format!(
                    "the command line is {} bytes long; at most {MAX_COMMAND_BYTES} are accepted",
                    command.len()
                ),
            ));
        }
        if self.config.mode.full_shell() {
            return Ok(Plan {
                steps: vec![Step {
                    stages: vec![Stage::new(vec![
                        "bash".into(),
                        "-c".into(),
                        command.to_string(),
                    ])],
                    then: None,
                }],
                git_pins: Vec::new(),
                left_out: 0,
                writes_nothing: false,
                git_written_paths: Vec::new(),
                writable_once,
            });
        }
        let line = parse::parse(command)?;
        let paths = GuardPaths {
            guard,
            cwd: &self.cwd,
        };
        let budget = Budget {
            max_words: MAX_WORDS,
            max_bytes: MAX_ARGV_BYTES,
            deadline,
        };
        let mut expander = Expander::new(guard, &self.cwd, budget);
        let session = self
            .approved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut needs_approval: Option<Refusal> = None;
        let mut steps = Vec::new();
        let mut git_pins: Vec<Pin> = Vec::new();
        let mut other_programs = false;
        let mut git_stages = 0;
        let mut writes_git_config = false;
        let mut git_written_paths = Vec::new();
        // A git stage before which the work tree may have changed.
        let mut tree_changed_by: Option<String> = None;
        for item in &line.items {
            let mut stages = Vec::new();
            for cmd in &item.pipeline.commands {
                let Some((program, args)) = cmd.words.split_first() else {
                    continue;
                };
                if program.glob.is_some() {
                    return Err(Refusal::new(
                        program.value.clone(),
                        "glob characters are not allowed in a program name",
                    ));
                }
                let mut argv = vec![program.value.clone()];
                for arg in args {
                    argv.extend(expander.expand(arg)?);
                }
                // A command approved once runs only with exactly the words
                // the user saw: if a glob now matches more, it is asked anew.
                let mut approved = session.clone();
                if once.contains(&argv) {
                    approved.push(argv.clone());
                }
                let checked = match self.policy.check_approved(&argv, &paths, &approved) {
                    Ok(checked) => checked,
                    Err(refusal) if !refusal.asks.is_empty() => {
                        // Checked on as if approved, so that a refusal no
                        // approval lifts (a path, an option) is found now.
                        let mut with = approved.clone();
                        with.extend(refusal.asks.iter().map(|a| a.argv.clone()));
                        let checked = self.policy.check_approved(&argv, &paths, &with)?;
                        match &mut needs_approval {
                            Some(first) => {
                                for ask in refusal.asks {
                                    if !first.asks.contains(&ask) {
                                        first.asks.push(ask);
                                    }
                                }
                            }
                            None => needs_approval = Some(refusal),
                        }
                        checked
                    }
                    Err(refusal) => return Err(refusal),
                };
                let assigned = policy::env::check(
                    &cmd.assignments,
                    &self.config.env_names,
                    self.config.mode == BashMode::Allowlist,
                    checked.git_dir.is_some(),
                )?;
                let mut stage = Stage::new(checked.argv);
                stage.redirects = cmd.redirects.clone();
                stage.env = assigned;
                other_programs |= checked.git_dir.is_none();
                git_stages += usize::from(checked.git_dir.is_some());
                writes_git_config |= checked.git_subcommand.as_deref() == Some("config");
                if let Some(dir) = checked.git_dir {
                    let subcommand = checked.git_subcommand.as_deref().unwrap_or("");
                    if let Some(earlier) = &tree_changed_by {
                        return Err(Refusal::new(
                            format!("git {subcommand}"),
                            format!(
                                "it follows `git {earlier}`, which may change the work tree after \
                                 this line was checked; run it in a call of its own"
                            ),
                        ));
                    }
                    // The paths of later git stages were checked against the
                    // tree as it was before the line ran (a checkout that
                    // brings a link to `.git` would let a later `git mv -f x
                    // lnk/config` write there).
                    if checked.git_changes_work_tree {
                        tree_changed_by = Some(subcommand.to_string());
                    }
                    let pin = git_repo::locate(guard, &self.cwd.join(dir))?;
                    git_repo::refuse_paths_in_repository(
                        guard,
                        &pin,
                        &self.cwd,
                        &checked.git_written_paths,
                    )?;
                    if !checked.git_written_paths.is_empty() {
                        git_written_paths.push((pin.clone(), checked.git_written_paths));
                    }
                    // The pins come last and win over any assignment.
                    stage.env.extend(pin.env());
                    if !git_pins.contains(&pin) {
                        git_pins.push(pin);
                    }
                }
                stages.push(stage);
            }
            steps.push(Step {
                stages,
                then: item.then,
            });
        }
        if let Some(refusal) = needs_approval {
            return Err(refusal);
        }
        // git's configuration is checked before the line runs; nothing in
        // the line may change it before git reads it.
        let writes_nothing =
            !git_pins.is_empty() && (other_programs || (writes_git_config && git_stages > 1));
        Ok(Plan {
            steps,
            git_pins,
            left_out: expander.left_out,
            writes_nothing,
            git_written_paths,
            writable_once,
        })
    }

    /// Asks git for its effective configuration in each repository a git
    /// stage will run in, under that stage's environment, and refuses the
    /// line if any key names a program, pager, helper, filter or include.
    async fn check_git_configs(
        &self,
        plan: &Plan,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<(), CallError> {
        let mut checked = HashSet::new();
        for pin in &plan.git_pins {
            if !checked.insert(pin.clone()) {
                continue;
            }
            let mut query = Stage::new(
                [
                    "git",
                    "--no-pager",
                    "config",
                    "--list",
                    "-z",
                    "--show-scope",
                    "--show-origin",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            );
            query.env = pin.env();
            let steps = [Step {
                stages: vec![query],
                then: None,
            }];
            let call = Call {
                steps: &steps,
                cwd: &self.cwd,
                env: &self.env,
                read_only: true,
                deadline: deadline.min(Instant::now() + GIT_CONFIG_TIMEOUT),
                limit: GIT_CONFIG_TIMEOUT,
                live: None,
                protect: sandbox::Protect::default(),
            };
            let outcome = self.executor.execute(&call, cancel).await?;
            let refused = |why: String| Err(CallError::Refused(Refusal::new("git", why)));
            match outcome.ending {
                run::Ending::Exited(0 | 1) => {}
                _ => {
                    return refused(format!(
                        "git's configuration could not be read ({})",
                        String::from_utf8_lossy(&outcome.stderr).trim()
                    ));
                }
            }
            if let Some(why) = policy::git::config_listing_hazard(&outcome.stdout) {
                return refused(why);
            }
        }
        Ok(())
    }
}

/// How a command line holds [`Shell::writes`].
enum Gate {
    #[allow(dead_code, reason = "held, never read")]
    Alone(GitAlone),
    #[allow(dead_code, reason = "held, never read")]
    Shared(Writing),
}

/// The environment commands get: an allowlist. A fixed PATH of system
/// directories (after any `--bash-path`), HOME and LANG from the server, a
/// pager-free terminal, and git kept from system and user configuration.
fn child_env(config: &BashConfig) -> Vec<(String, String)> {
    let from_server =
        |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    let path: Vec<String> = config
        .extra_path
        .iter()
        .map(|p| p.display().to_string())
        .chain(SYSTEM_PATH.iter().map(|s| s.to_string()))
        .collect();
    let mut env = vec![
        ("PATH".to_string(), path.join(":")),
        ("HOME".to_string(), from_server("HOME", "/")),
        ("LANG".to_string(), from_server("LANG", "C.UTF-8")),
        ("TERM".to_string(), "dumb".to_string()),
        ("PAGER".to_string(), "cat".to_string()),
        ("GIT_PAGER".to_string(), "cat".to_string()),
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
        // git 2.44 and later: never fetch a missing object on its own.
        ("GIT_NO_LAZY_FETCH".to_string(), "1".to_string()),
        ("GIT_ATTR_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()),
        ("GIT_OPTIONAL_LOCKS".to_string(), "0".to_string()),
    ];
    for key in ["TZ", "LC_ALL"] {
        if let Ok(value) = std::env::var(key) {
            env.push((key.to_string(), value));
        }
    }
    env.extend(config.extra_env.iter().cloned());
    if cfg!(not(windows)) {
        // Calls have no network: package managers are told so in their own
        // words, so that they use what is on disk rather than fail on a
        // connection (or wait for one) first.
        env.extend(
            OFFLINE
                .iter()
                .map(|(key, value)| (key.to_string(), value.to_string())),
        );
    }
    env
}

/// What tells each package manager it is offline (docs/security.md).
pub const OFFLINE: &[(&str, &str)] = &[
    ("CARGO_NET_OFFLINE", "true"),
    ("npm_config_offline", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_fund", "false"),
    ("PIP_NO_INDEX", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("UV_OFFLINE", "1"),
    ("GOPROXY", "off"),
    ("GOTOOLCHAIN", "local"),
];

/// Path checks through the guard, relative to the working directory.
struct GuardPaths<'a> {
    guard: &'a Guard,
    cwd: &'a Path,
}

impl PathCheck for GuardPaths<'_> {
    fn check(&self, base: &Path, arg: &str, follow_last: bool) -> Result<(), String> {
        if arg.len() > MAX_PATH_BYTES {
            return Err(format!(
                "a path of {} bytes is longer than the {MAX_PATH_BYTES} accepted",
                arg.len()
            ));
        }
        let path = self.cwd.join(base).join(arg);
        let names_a_directory = arg.ends_with('/')
            || arg.ends_with("/.")
            || arg.ends_with("/..")
            || matches!(arg, "" | "." | "..");
        let names_a_link_itself = !follow_last && !names_a_directory;
        let to_check = match path.parent() {
            Some(parent) if names_a_link_itself => parent,
            _ => path.as_path(),
        };
        match self.guard.resolve_absolute(to_check) {
            Ok(_) => Ok(()),
            Err(GuardRefusal::Outside { .. }) => {
                Err(format!("`{arg}` leads outside the workspace roots"))
            }
            Err(GuardRefusal::Unresolvable { reason, .. }) => {
                Err(format!("`{arg}` cannot be checked ({reason})"))
            }
            Err(GuardRefusal::Invalid(reason)) => Err(reason),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn shell(mode: BashMode, dir: &Path) -> (Shell, Guard) {
        let guard = Guard::new(&[dir]).unwrap();
        let config = BashConfig {
            mode,
            timeout: Duration::from_secs(5),
            ..BashConfig::default()
        };
        let gate = Arc::new(WriteGate::new(guard.roots().map(Into::into).collect()));
        (Shell::new(&config, &guard, gate), guard)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    /// Each line is refused, and no approval could lift its refusal.
    fn refused_without_asking(sh: &Shell, guard: &Guard, lines: &[&str]) {
        for line in lines {
            let refusal = sh.plan(line, guard, soon()).unwrap_err();
            assert!(refusal.asks.is_empty(), "{line}: {refusal:?}");
        }
    }

    #[test]
    fn a_line_only_the_allow_list_refuses_names_every_command_to_ask_about() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let refusal = sh
            .plan(
                "cargo build --release && ls && make test && cargo build --release",
                &guard,
                soon(),
            )
            .unwrap_err();
        let asked: Vec<_> = refusal.asks.iter().map(|a| a.argv.join(" ")).collect();
        assert_eq!(asked, ["cargo build --release", "make test"]);
        assert_eq!(refusal.asks[0].prefix, words("cargo build"));
        // Interpreters, and writing git subcommands with a table, too.
        let refusal = sh.plan("python3 -c pass", &guard, soon()).unwrap_err();
        assert_eq!(refusal.asks[0].prefix, words("python3"));
        let refusal = sh.plan("git -C . commit -m x", &guard, soon()).unwrap_err();
        assert_eq!(refusal.asks[0].prefix, words("git -C . commit"));
        // No approval lifts a path outside the roots, an option a table
        // refuses, a syntax error or a git subcommand without a table.
        refused_without_asking(
            &sh,
            &guard,
            &[
                "cargo build && cat /etc/passwd",
                "touch ../outside",
                "grep --pre=sh x a.txt",
                "cargo build $(id)",
                "git bisect run x",
            ],
        );
    }

    #[test]
    fn an_approval_once_is_word_for_word_and_one_for_the_session_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a1"), "a").unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let once = [words("touch a1")];
        assert!(
            sh.plan_approved("touch a*", &guard, soon(), &once, false)
                .is_ok()
        );
        // A glob that matches more than the user saw is asked anew.
        std::fs::write(dir.path().join("a2"), "a").unwrap();
        let refusal = sh
            .plan_approved("touch a*", &guard, soon(), &once, false)
            .unwrap_err();
        assert_eq!(refusal.asks[0].argv, words("touch a1 a2"));
        assert!(sh.plan("touch a1", &guard, soon()).is_err());
        sh.approve_for_session(&words("touch"));
        assert!(sh.plan("touch a1 a2 b", &guard, soon()).is_ok());
        assert!(sh.plan("mkdir b", &guard, soon()).is_err());
        // Still no path outside the roots.
        assert!(
            sh.plan("touch ../x", &guard, soon())
                .unwrap_err()
                .asks
                .is_empty()
        );
        // A git approval holds for the repository it named.
        sh.approve_for_session(&words("git clean"));
        assert!(sh.plan("git clean -f a1", &guard, soon()).is_ok());
        let refusal = sh.plan("git -C . clean -f a1", &guard, soon()).unwrap_err();
        assert_eq!(refusal.asks[0].prefix, words("git -C . clean"));
    }

    #[test]
    fn a_command_that_names_a_denied_entry_is_neither_asked_about_nor_approved() {
        let dir = tempfile::tempdir().unwrap();
        let guard = Guard::new(&[dir.path()]).unwrap();
        let config = BashConfig {
            mode: BashMode::Allowlist,
            allow: vec!["make build".into()],
            deny: vec!["make deploy".into(), "git clean".into()],
            timeout: Duration::from_secs(5),
            ..BashConfig::default()
        };
        let gate = Arc::new(WriteGate::new(guard.roots().map(Into::into).collect()));
        let sh = Shell::new(&config, &guard, gate);
        refused_without_asking(
            &sh,
            &guard,
            &[
                "make -C . deploy",
                "env make deploy",
                "nice make -f Makefile deploy",
                "git -C . clean -f x",
            ],
        );
        sh.approve_for_session(&words("nice"));
        assert!(sh.plan("nice make deploy", &guard, soon()).is_err());
        assert!(sh.plan("nice make build", &guard, soon()).is_ok());
        let once = [words("env make deploy")];
        assert!(
            sh.plan_approved("env make deploy", &guard, soon(), &once, false)
                .is_err()
        );
    }

    #[test]
    fn git_is_pinned_and_neutralised() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, &root);
        let plan = sh.plan("git log -n 1", &guard, soon()).unwrap();
        let stage = &plan.steps[0].stages[0];
        assert_eq!(stage.argv[0], "git");
        assert!(
            stage
                .argv
                .windows(2)
                .any(|w| w == ["-c", "core.fsmonitor=false"])
        );
        let log = stage.argv.iter().position(|a| a == "log").unwrap();
        assert_eq!(
            &stage.argv[log..],
            [
                "log",
                "-n",
                "1",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules=all"
            ]
        );
        assert!(
            stage
                .env
                .contains(&("GIT_DIR".into(), root.join(".git").display().to_string()))
        );
        assert!(stage.env.contains(&(
            "GIT_COMMON_DIR".into(),
            root.join(".git").display().to_string()
        )));
        assert_eq!(plan.git_pins.len(), 1);
    }

    #[test]
    fn plans_expand_globs_and_check_each_stage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::write(dir.path().join("b.rs"), "").unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let plan = sh
            .plan("wc -l *.rs | sort -n && echo done", &guard, soon())
            .unwrap();
        assert_eq!(plan.steps[0].stages[0].argv, ["wc", "-l", "a.rs", "b.rs"]);
        assert_eq!(plan.steps[0].stages[1].argv, ["sort", "-n"]);
        assert_eq!(plan.steps[1].stages[0].argv, ["echo", "done"]);
        assert!(sh.plan("ls | rm x", &guard, soon()).is_err());
    }

    #[test]
    fn paths_are_checked_literally_and_links_themselves_may_be_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("file:")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::os::unix::fs::symlink(base.join("out"), root.join("link")).unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, &root);
        // `file://../..` is a relative path to the kernel, not a URI.
        for bad in [
            "cat file://../../etc/shadow",
            "cat link/x",
            "ls link",
            "cat ~/.bashrc",
        ] {
            assert!(sh.plan(bad, &guard, soon()).is_err(), "{bad}");
        }
        assert!(sh.plan("ls -l link", &guard, soon()).is_ok());
        assert!(sh.plan("ls -ld link", &guard, soon()).is_ok());
    }

    #[test]
    fn a_long_line_is_refused_before_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let line = format!("echo {}", "x ".repeat(MAX_COMMAND_BYTES));
        let e = sh.plan(&line, &guard, soon()).unwrap_err();
        assert!(e.reason.contains("bytes long"), "{e:?}");
    }

    #[test]
    fn the_child_environment_is_an_allowlist_with_a_fixed_path() {
        let env = child_env(&BashConfig::default());
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"PATH") && keys.contains(&"HOME") && keys.contains(&"TERM"));
        let path = &env.iter().find(|(k, _)| k == "PATH").unwrap().1;
        assert_eq!(path, &SYSTEM_PATH.join(":"));
        assert!(!keys.iter().any(|k| k.contains("TOKEN")
            || k.contains("SECRET")
            || *k == "USER"
            || *k == "SSH_AUTH_SOCK"));
    }
}

//! The tool registry and the one dispatch path every call takes.
//!
//! A call goes: find the tool (unknown: JSON-RPC error) → fold aliases into
//! canonical names → check arguments against the published schema (failure:
//! an `isError` result in Gemini CLI's words) → run the handler, with panics
//! caught and cancellation observed → a `CallToolResult`.
//!
//! Each tool lives in its own file with its parameter struct (the schema),
//! its handler and its output format, and declares itself with a
//! [`ToolSpec`] (one view per dialect, see [`spec`]).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::FutureExt;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ErrorData, ProgressNotificationParam,
    ProgressToken, Tool,
};
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::config::{Config, Dialect};
use crate::fs::atomic::PathLocks;
use crate::fs::guard::{Guard, Refusal};
use crate::fs::journal::Journal;
use crate::fs::write_gate::WriteGate;
use crate::shell::Shell;
use crate::text::budget::{AnswerBudget, client_len, whole_lines_within};
use params::JsonObject;

pub mod ask;
pub mod bash;
pub mod file_read;
pub mod filters;
pub mod glob;
pub mod list_directory;
pub mod params;
pub mod read_file;
pub mod read_many_files;
pub mod reads;
pub mod reference;
pub mod replace;
pub mod search_file_content;
pub mod seen;
pub mod spec;
pub mod undo_edit;
pub mod write_file;
pub mod writes;

pub use spec::ToolSpec;

/// Every tool the server knows, in the order `tools/list` shows them.
fn all_specs() -> [ToolSpec; 10] {
    [
        read_file::spec(),
        write_file::spec(),
        replace::spec(),
        list_directory::spec(),
        glob::spec(),
        search_file_content::spec(),
        read_many_files::spec(),
        bash::spec(),
        file_read::spec(),
        undo_edit::spec(),
    ]
}

/// The names of every tool the server knows in any dialect, offered or not.
pub fn all_tool_names() -> Vec<&'static str> {
    all_specs()
        .iter()
        .flat_map(|t| t.names().collect::<Vec<_>>())
        .collect()
}

/// What every handler shares: the guard and the configuration.
#[derive(Debug)]
pub struct State {
    pub guard: Guard,
    pub config: Config,
    /// Serialises read-modify-write cycles per file.
    pub locks: PathLocks,
    /// The bash tool's policy and sandbox (None when bash is off).
    pub shell: Option<Shell>,
    /// Writers against lines that run git (see `fs::write_gate`); also
    /// with bash off here, since another server may run git in these roots.
    pub writes: Arc<WriteGate>,
    /// The journal of edits behind undo (`fs/journal.rs`).
    pub journal: Journal,
    /// Which version of each file this session last read or wrote.
    pub seen: seen::Seen,
    /// Questions to the user asked in rounds (2026-07-28) and not yet
    /// answered.
    pub questions: Arc<ask::Pending>,
    /// Where the lines of big files read lately begin, so paging through
    /// one scans it once (`fs::reading::LineIndexes`).
    pub line_indexes: Arc<crate::fs::reading::LineIndexes>,
}

impl State {
    pub fn new(guard: Guard, config: Config) -> State {
        let writes = Arc::new(WriteGate::new(guard.roots().map(Into::into).collect()));
        let shell = bash::spec()
            .offered_by(&config)
            .then(|| Shell::new(&config.bash, &guard, writes.clone()));
        let journal = journal_for(&guard, &config);
        State {
            guard,
            config,
            locks: PathLocks::default(),
            shell,
            writes,
            journal,
            seen: seen::Seen::default(),
            questions: Arc::default(),
            line_indexes: Arc::default(),
        }
    }
}

/// The journal a configuration asks for: none when the server writes
/// nothing, when the user turned it off, or without a state directory.
fn journal_for(guard: &Guard, config: &Config) -> Journal {
    let roots: Vec<std::path::PathBuf> = guard.roots().map(Into::into).collect();
    if config.read_only {
        return Journal::off(&roots, "the server is read-only");
    }
    if config.journal.off {
        return Journal::off(&roots, "the journal is off (--no-journal)");
    }
    match config.journal.state_dir() {
        Some(dir) => Journal::open(&dir, config.journal.limits, &roots),
        None => Journal::off(
            &roots,
            "there is no state directory (HOME is not set); start the server with --state-dir",
        ),
    }
}

impl State {
    /// At serve start: the temporary files that crashed writes left in the
    /// roots are removed on a thread of their own, within bounds (see
    /// `atomic::sweep_at_start`; on Windows a write sweeps its directory
    /// only). A read-only server removes nothing.
    pub fn sweep_at_start(&self) {
        #[cfg(unix)]
        if !self.config.read_only {
            crate::fs::atomic::sweep_at_start(self.guard.root_dirs());
        }
    }
}

/// A failure the model can act on; becomes an `isError` result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    /// The words the model reads.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError(message.into())
    }
}

pub type ToolResult = Result<Vec<ContentBlock>, ToolError>;
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;

/// Per-call context handed to a handler.
#[derive(Clone)]
pub struct CallContext {
    pub state: Arc<State>,
    pub cancel: CancellationToken,
    pub progress: Option<Progress>,
    /// How the user may be asked, if at all (`ask.rs`).
    pub asker: ask::Asker,
}

/// Reports progress for a request that carried a progress token, at most
/// once per interval.
#[derive(Clone)]
pub struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    last: Arc<std::sync::Mutex<Option<Instant>>>,
    /// Notifications are sent from the runtime even when reported from a
    /// walker thread.
    runtime: tokio::runtime::Handle,
}

const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

impl Progress {
    /// Must be called on the runtime.
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Progress {
        Progress {
            peer,
            token,
            last: Arc::new(std::sync::Mutex::new(None)),
            runtime: tokio::runtime::Handle::current(),
        }
    }

    /// Sends a progress notification unless one went out less than 250 ms ago.
    pub fn report(&self, done: u64, total: Option<u64>, message: String) {
        {
            let Ok(mut last) = self.last.lock() else {
                return;
            };
            if last.is_some_and(|t| t.elapsed() < PROGRESS_INTERVAL) {
                return;
            }
            *last = Some(Instant::now());
        }
        let mut param =
            ProgressNotificationParam::new(self.token.clone(), done as f64).with_message(message);
        if let Some(total) = total {
            param = param.with_total(total as f64);
        }
        let peer = self.peer.clone();
        self.runtime.spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// The tools this server offers, given its configuration, in its dialect.
pub struct Registry {
    state: Arc<State>,
    tools: Vec<ToolSpec>,
    dialect: Dialect,
}

impl Registry {
    pub fn new(state: Arc<State>) -> Registry {
        let tools = all_specs()
            .into_iter()
            .filter(|t| t.offered_by(&state.config))
            .collect();
        let dialect = state.config.dialect;
        Registry {
            state,
            tools,
            dialect,
        }
    }

    pub fn state(&self) -> &Arc<State> {
        &self.state
    }

    pub fn list(&self) -> Vec<Tool> {
        let shell_writes = matches!(
            self.state.config.bash.mode,
            crate::config::BashMode::Allowlist
                | crate::config::BashMode::WorkspaceWrite
                | crate::config::BashMode::Unrestricted
        );
        self.tools
            .iter()
            .map(|t| t.to_tool(self.dialect, shell_writes))
            .collect()
    }

    /// The offered tools' names in this dialect.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name_in(self.dialect)).collect()
    }

    /// The tool called `name`: by this dialect's names first, then by any
    /// dialect's (a model may use the other spelling).
    fn find(&self, name: &str) -> Option<&ToolSpec> {
        self.tools
            .iter()
            .find(|t| t.name_in(self.dialect) == name)
            .or_else(|| self.tools.iter().find(|t| t.names().any(|n| n == name)))
    }

    /// Runs one call. `Err` only for protocol faults (unknown tool).
    pub async fn call(
        &self,
        name: &str,
        args: Option<JsonObject>,
        parts: CallParts,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = self.find(name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool '{name}'. Available tools: {}",
                    self.names().join(", ")
                ),
                None,
            ));
        };
        let asker = parts.asker.clone();
        let ctx = CallContext {
            state: self.state.clone(),
            cancel: parts.cancel,
            progress: parts.progress,
            asker: parts.asker,
        };
        let mut args = args.unwrap_or_default();
        if let Err(message) = spec.check(self.dialect, &mut args) {
            return Ok(error_result(message).into());
        }
        let cancel = ctx.cancel.clone();
        let started = Instant::now();
        let run = AssertUnwindSafe((spec.handler)(ctx, args)).catch_unwind();
        let outcome = tokio::select! {
            outcome = run => outcome,
            () = cancel.cancelled() => {
                return Ok(error_result(format!("The {name} call was cancelled before it finished.")).into());
            }
        };
        // A question for the user goes back in place of a result (2026-07-28).
        if let Some(question) = asker.deferred() {
            return Ok(CallToolResponse::InputRequired(question));
        }
        tracing::debug!(
            tool = name,
            elapsed_us = started.elapsed().as_micros() as u64,
            "call finished"
        );
        let budget = self.state.config.answer_budget;
        Ok(CallToolResponse::Complete(match outcome {
            Ok(Ok(content)) => CallToolResult::success(within_budget(content, budget)),
            Ok(Err(ToolError(message))) => {
                CallToolResult::error(within_budget(vec![ContentBlock::text(message)], budget))
            }
            Err(panic) => {
                let what = panic_message(panic.as_ref());
                tracing::error!(tool = name, "tool handler panicked: {what}");
                error_result(format!(
                    "Internal error in {name}: {what}. This is a bug in rootbound; the server is \
                     still running, so you can retry or try another approach."
                ))
            }
        }))
    }
}

/// The parts of a call context that come from the session.
pub struct CallParts {
    pub cancel: CancellationToken,
    pub progress: Option<Progress>,
    pub asker: ask::Asker,
}

impl CallParts {
    /// For a call outside an MCP session (the `call` subcommand): nothing
    /// cancels it and nobody hears progress.
    pub fn detached() -> CallParts {
        CallParts {
            cancel: CancellationToken::new(),
            progress: None,
            asker: ask::Asker::cannot(ask::Cannot::TurnedOff),
        }
    }
}

/// The last line of defence for the answer budget: each tool fits its own
/// answers (with notes in its own words on how to go on), so only an
/// answer no tool shaped, made of one text block, is cut here, at a whole
/// line, saying so. Answers of several blocks (read_many_files) are fitted
/// by their tool.
fn within_budget(mut content: Vec<ContentBlock>, budget: AnswerBudget) -> Vec<ContentBlock> {
    let Some(limit) = budget.limit() else {
        return content;
    };
    let [ContentBlock::Text(block)] = content.as_mut_slice() else {
        return content;
    };
    if budget.fits(&block.text) {
        return content;
    }
    let lines = block.text.lines().count();
    let note = |shown: usize| {
        format!(
            "\n[rootbound cut this answer at {limit} characters: the first {shown} of its {lines} lines are shown.]"
        )
    };
    let room = limit.saturating_sub(client_len(&note(lines)));
    let end = whole_lines_within(&block.text, room);
    let mut text = block.text[..end].trim_end_matches('\n').to_string();
    if client_len(&text) > room {
        // One line longer than the budget: cut inside it.
        let mut used = 0;
        let cut = text
            .char_indices()
            .find(|(_, c)| {
                used += c.len_utf16();
                used > room
            })
            .map_or(text.len(), |(at, _)| at);
        text.truncate(cut);
    }
    let shown = text.lines().count();
    text.push_str(&note(shown));
    tracing::warn!(
        limit,
        lines,
        shown,
        "an answer no tool fitted was cut to the answer budget"
    );
    block.text = text;
    content
}

pub fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

pub fn text(message: impl Into<String>) -> ToolResult {
    Ok(vec![ContentBlock::text(message.into())])
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs blocking file-system work off the async threads. A panic inside is
/// re-raised here so the dispatcher reports it like any other.
pub async fn blocking<T, F>(work: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => std::panic::resume_unwind(Box::new(format!("blocking task failed: {e}"))),
    }
}

/// Sets a stop flag when dropped: the dispatcher drops a cancelled call's
/// future, and this tells its blocking work to stop.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs long work (a walk, a search) on the blocking pool with a stop flag
/// that is raised if the call is cancelled; the work must check it often.
pub async fn cancellable<T, F>(work: F) -> T
where
    F: FnOnce(&AtomicBool) -> T + Send + 'static,
    T: Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let _raise_on_drop = StopOnDrop(stop.clone());
    blocking(move || work(&stop)).await
}

/// Work up to this many bytes of file data runs inline on the protocol
/// thread; more goes to the blocking pool.
pub const INLINE_BYTES: u64 = 1024 * 1024;

/// Runs file work whose cost is about `bytes` of I/O: inline when small (no
/// thread hand-off, which dominates the latency of a small call), on the
/// blocking pool otherwise, so a big file never stalls other requests.
pub async fn run_sized<T, F>(bytes: u64, work: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if bytes <= INLINE_BYTES {
        work()
    } else {
        blocking(work).await
    }
}

/// Parses checked arguments into a tool's parameter struct.
pub fn parse_args<T: serde::de::DeserializeOwned>(args: &JsonObject) -> Result<T, ToolError> {
    params::parse(args).map_err(ToolError)
}

/// The outside-root message of read_file, write_file and replace.
pub fn file_outside(_path: &std::path::Path, dirs: &str) -> String {
    format!("File path must be within one of the workspace directories: {dirs}")
}

/// The outside-the-workspace message every tool gives in gemini-current.
pub fn current_outside(path: &std::path::Path, dirs: &str) -> String {
    format!(
        "Path not in workspace: Attempted path \"{}\" resolves outside the allowed workspace \
         directories: {dirs}",
        path.display()
    )
}

/// Turns a guard refusal into the message a tool shows; `outside` phrases
/// the outside-the-roots case in the tool's own words (gemini-0.24; in
/// gemini-current every tool says [`current_outside`]).
pub fn refusal_message(
    state: &State,
    refusal: Refusal,
    outside: impl FnOnce(&std::path::Path, &str) -> String,
) -> ToolError {
    let guard = &state.guard;
    ToolError(match refusal {
        Refusal::Invalid(message) => message,
        Refusal::Outside {
            display: shown,
            why,
        } => {
            tracing::info!(path = ?shown, ?why, "refused a path outside the roots");
            if state.config.dialect.is_current() {
                current_outside(&shown, &guard.roots_display())
            } else {
                outside(&shown, &guard.roots_display())
            }
        }
        Refusal::Unresolvable { display, reason } => {
            format!("Cannot resolve {}: {reason}.", display.display())
        }
    })
}

/// A clear message for an I/O error on `path`.
pub fn io_message(path: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => format!("Permission denied: {path}"),
        std::io::ErrorKind::StorageFull => format!("No space left on the device for {path}"),
        std::io::ErrorKind::NotFound => format!("File not found: {path}"),
        _ => format!("Cannot access {path}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct NoParams {
        /// Unused.
        x: Option<String>,
    }

    fn registry_with(handler: fn(CallContext, JsonObject) -> ToolFuture) -> Registry {
        let dir = std::env::temp_dir();
        let guard = Guard::new(&[&dir]).unwrap();
        let state = Arc::new(State::new(guard, Config::with_roots(vec![dir])));
        let spec = ToolSpec::reads("probe", "Probe")
            .params::<NoParams>()
            .describe("test tool")
            .run(handler);
        Registry {
            state,
            tools: vec![spec],
            dialect: Dialect::Gemini024,
        }
    }

    fn complete(response: CallToolResponse) -> CallToolResult {
        match response {
            CallToolResponse::Complete(result) => result,
            other => panic!("expected a result, got {other:?}"),
        }
    }

    fn text_of(result: &CallToolResult) -> String {
        match result.content.first() {
            Some(ContentBlock::Text(t)) => t.text.clone(),
            other => panic!("expected text, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_becomes_an_error_result() {
        let registry = registry_with(|_, _| Box::pin(async { panic!("boom in handler") }));
        let result = registry
            .call("probe", None, CallParts::detached())
            .await
            .map(complete)
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        let text = text_of(&result);
        assert!(
            text.starts_with("Internal error in probe: boom in handler."),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_panic_in_blocking_work_becomes_an_error_result() {
        let registry = registry_with(|_, _| {
            Box::pin(async { blocking(|| -> ToolResult { panic!("boom in blocking work") }).await })
        });
        let result = registry
            .call("probe", None, CallParts::detached())
            .await
            .map(complete)
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("boom in blocking work"));
    }

    #[tokio::test]
    async fn cancellation_stops_a_running_handler() {
        let registry = registry_with(|_, _| {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                text("never")
            })
        });
        let cancel = CancellationToken::new();
        let parts = CallParts {
            cancel: cancel.clone(),
            progress: None,
            asker: ask::Asker::cannot(ask::Cannot::TurnedOff),
        };
        let trigger = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        };
        let started = Instant::now();
        let (result, ()) = tokio::join!(registry.call("probe", None, parts), trigger);
        let result = complete(result.unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("cancelled"));
    }

    #[tokio::test]
    async fn dropping_a_cancellable_call_stops_its_blocking_work() {
        let (tx, rx) = std::sync::mpsc::channel();
        let work = cancellable(move |stop| {
            let started = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                if started.elapsed() > Duration::from_secs(10) {
                    let _ = tx.send(false);
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = tx.send(true);
        });
        // The dispatcher drops a cancelled call's future; a timeout does the same.
        let dropped_at = Instant::now();
        assert!(
            tokio::time::timeout(Duration::from_millis(30), work)
                .await
                .is_err()
        );
        let stopped = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(stopped, "the work ran until its own 10 s limit");
        assert!(
            dropped_at.elapsed() < Duration::from_millis(100),
            "{:?}",
            dropped_at.elapsed()
        );
    }

    #[tokio::test]
    async fn unknown_tools_are_protocol_errors() {
        let registry = registry_with(|_, _| Box::pin(async { text("ok") }));
        let err = registry
            .call("nope", None, CallParts::detached())
            .await
            .unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(err.message.contains("nope") && err.message.contains("probe"));
    }
}

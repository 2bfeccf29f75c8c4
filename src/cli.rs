//! The command line (docs/tools.md): options, their validation, and the two
//! one-shot subcommands `call` and `tools`. This is the only module besides
//! `main` that writes to stdout, and only when not serving MCP.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::config::{BashConfig, BashMode, Config, Dialect, JournalConfig};
use crate::text::budget::AnswerBudget;
use crate::tools::{self, Registry};

#[derive(Debug, Parser)]
#[command(
    name = "rootbound",
    version,
    about = "Gemini CLI's file-system tools, a guarded bash and file_read, served over MCP stdio \
             and confined to the roots you name."
)]
pub struct Cli {
    /// A directory the tools may use (repeatable; default: the current directory).
    /// The first is the primary root: relative paths resolve against it.
    #[arg(long = "root", value_name = "DIR", global = true)]
    pub roots: Vec<PathBuf>,

    /// What the bash tool may run: read-only commands (the default), an
    /// allowlist, or any command in workspace-write (a full shell the
    /// sandbox confines: writes only inside the roots, no network). On
    /// Windows no sandbox stands behind bash: it is off unless MODE is
    /// unrestricted, and then every command runs with the server's own rights.
    #[arg(long, value_enum, value_name = "MODE", global = true)]
    pub bash_mode: Option<BashMode>,

    /// Allow commands starting with PREFIX (repeatable; implies allowlist mode).
    #[arg(long, value_name = "PREFIX", global = true)]
    pub bash_allow: Vec<String>,

    /// Whether a command the allow list refuses becomes a question to the
    /// user, through a client that can be asked (MCP elicitation): run it
    /// once, allow its prefix for the session, or not. An approved command
    /// still runs in the sandbox (docs/security.md, "Asking the user").
    /// Always off with --read-only.
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "on",
        global = true
    )]
    pub bash_ask: Switch,

    /// Refuse commands starting with PREFIX (repeatable; wins over allow).
    /// Matched against the command with its options removed (`git -P log`
    /// is `git log`), but a deny entry names one command, not every spelling
    /// a tool offers (`npm t` is not `npm test`): to permit little, allow
    /// narrowly instead (`--bash-allow "npm run lint"`). Not valid with
    /// `--bash-mode workspace-write`, where a full shell runs the line.
    #[arg(long, value_name = "PREFIX", global = true)]
    pub bash_deny: Vec<String>,

    /// A directory bash commands may also read and run programs from
    /// (repeatable), e.g. a toolchain: `--bash-read ~/.rustup`.
    #[arg(long, value_name = "DIR", global = true)]
    pub bash_read: Vec<PathBuf>,

    /// A path inside a root at and below which calls may create and change
    /// what is otherwise protected (repeatable): git's hooks and config, new
    /// repositories, agent and editor settings (docs/security.md, "What a
    /// command leaves behind"). E.g. `--unprotect .vscode`, or
    /// `--unprotect vendor` to let `git init` make repositories there.
    #[arg(long, value_name = "PATH", global = true)]
    pub unprotect: Vec<String>,

    /// A directory put on bash commands' PATH before the system directories,
    /// and readable (repeatable), e.g. `--bash-path ~/.cargo/bin`.
    #[arg(long, value_name = "DIR", global = true)]
    pub bash_path: Vec<PathBuf>,

    /// Allow a toolchain's test, build and lint commands (repeatable;
    /// implies allowlist mode): rust (cargo test, build, check, clippy, fmt,
    /// doc), node (npm test, npm run, node --test, npx vitest/jest/eslint/
    /// tsc), python (pytest, python -m pytest/unittest, ruff, mypy), go (go
    /// test, build, vet, gofmt). The toolchain is found without options.
    #[arg(long, value_enum, value_name = "TOOLCHAIN", global = true)]
    pub bash_preset: Vec<Preset>,

    /// A variable a command line may set before an allowed command
    /// (repeatable), beyond the documented ones (docs/security.md): e.g.
    /// `--bash-env PYTEST_ADDOPTS` for `PYTEST_ADDOPTS=-x pytest`.
    #[arg(long, value_name = "NAME", global = true)]
    pub bash_env: Vec<String>,

    /// Time limit for one bash command, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60, global = true)]
    pub bash_timeout: u64,

    /// The longest time limit a call may ask for with its `timeout`
    /// parameter, in seconds (default: 600, or --bash-timeout if longer).
    #[arg(long, value_name = "SECS", global = true)]
    pub bash_timeout_max: Option<u64>,

    /// Do not offer write_file and replace; bash runs read-only commands only.
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Do not offer the tool NAME (repeatable).
    #[arg(long = "disable-tool", value_name = "NAME", global = true)]
    pub disabled_tools: Vec<String>,

    /// How long one answer may be, in characters as clients count them
    /// (UTF-16 units), or `off`. Longer answers are cut at whole lines or
    /// entries, and say where they stopped and how to go on. The default
    /// stays under Gemini CLI's 40,000, past which it cuts the middle out of
    /// an answer, and Claude Code's 25,000 tokens.
    #[arg(long, value_name = "CHARS|off", default_value = "39000", value_parser = parse_answer_budget, global = true)]
    pub answer_budget: AnswerBudget,

    /// Where rootbound keeps its state, such as the journal of edits behind
    /// undo (default: $XDG_STATE_HOME/rootbound, ~/.local/state/rootbound;
    /// macOS ~/Library/Application Support/rootbound; Windows
    /// %LOCALAPPDATA%\rootbound). Must be outside the roots.
    #[arg(long, value_name = "DIR", global = true)]
    pub state_dir: Option<PathBuf>,

    /// Keep no journal of edits: undo_edit and `rootbound undo` have
    /// nothing to undo.
    #[arg(long, global = true)]
    pub no_journal: bool,

    /// The most the journal keeps per root, in MB; the oldest edits go first.
    #[arg(long, value_name = "MB", default_value = "256", global = true)]
    pub journal_max_mb: u64,

    /// Edits older than this many days leave the journal.
    #[arg(long, value_name = "DAYS", default_value = "30", global = true)]
    pub journal_max_days: u64,

    /// Edits of files larger than this, in MB, are not journaled (the
    /// answer says so).
    #[arg(long, value_name = "MB", default_value = "32", global = true)]
    pub journal_max_file_mb: u64,

    /// Which Gemini CLI dialect the tool list speaks: names, schemas and
    /// messages (every dialect accepts every spelling).
    #[arg(
        long,
        value_enum,
        value_name = "DIALECT",
        default_value = "gemini-0.24",
        global = true
    )]
    pub dialect: Dialect,

    /// Log level (logs go to stderr; RUST_LOG overrides).
    #[arg(
        long,
        value_enum,
        value_name = "LEVEL",
        default_value = "warn",
        global = true
    )]
    pub log_level: LogLevel,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool call, print its result and exit (0 ok, 1 tool error, 2 usage error).
    Call {
        /// The tool's name.
        tool: String,
        /// The tool's arguments as a JSON object; `-` reads them from stdin.
        json: Option<String>,
    },
    /// Print the tool list with schemas as JSON.
    Tools,
    /// Print what the bash sandbox enforces on this machine: each property,
    /// the mechanism behind it, and whether this kernel provides it.
    Sandbox,
    /// Configure a client for this server: `setup gemini` writes the Gemini
    /// CLI policy that runs the read-only tools without prompts.
    Setup(crate::setup::SetupArgs),
    /// List the edits write_file and replace made (newest last), per root;
    /// `--diff ID` shows one.
    History(crate::history::HistoryArgs),
    /// Undo an edit (by its ID from `history`) or a file's newest edit, if
    /// the file is still exactly what that edit wrote.
    Undo(crate::history::UndoArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

impl Cli {
    /// The command line of this process. `--help` ends with the toolchains
    /// found on this machine (looked up only when help is asked for).
    pub fn from_env() -> Cli {
        let mut command = Cli::command();
        let asks_help = std::env::args()
            .skip(1)
            .any(|a| a == "--help" || a == "-h" || a == "help");
        if asks_help && !cfg!(windows) {
            let found = find_toolchains(BashMode::WorkspaceWrite, false, &[], &[], &[]);
            command = command.after_help(format!(
                "Toolchains found on this machine, made readable to bash calls that run them \
                 (`rootbound [OPTIONS] sandbox` shows what a configuration uses):\n{}",
                found.describe()
            ));
        }
        let matches = command.get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// Checks the options against each other and builds the configuration.
    pub fn config(&self) -> Result<Config, String> {
        let explicit_mode = self.bash_mode;
        if self.read_only {
            if !self.bash_preset.is_empty() {
                return Err(
                    "--read-only conflicts with --bash-preset: a read-only server runs \
                            only read-only commands"
                        .into(),
                );
            }
            if !self.bash_allow.is_empty() {
                return Err(
                    "--read-only conflicts with --bash-allow: a read-only server runs \
                            only read-only commands"
                        .into(),
                );
            }
            if let Some(
                mode @ (BashMode::Allowlist | BashMode::WorkspaceWrite | BashMode::Unrestricted),
            ) = explicit_mode
            {
                return Err(format!(
                    "--read-only conflicts with --bash-mode {}: a read-only server runs only \
                     read-only commands",
                    mode.as_str()
                ));
            }
        }
        if self.bash_timeout == 0 {
            return Err("--bash-timeout must be at least 1 second".into());
        }
        // A limit is added to the clock; a week keeps that far from overflow.
        const MAX_TIMEOUT: u64 = 7 * 24 * 3600;
        if self.bash_timeout.max(self.bash_timeout_max.unwrap_or(0)) > MAX_TIMEOUT {
            return Err(format!(
                "--bash-timeout and --bash-timeout-max are at most {MAX_TIMEOUT} seconds (a week)"
            ));
        }
        if !self.disabled_tools.is_empty() {
            let known = tools::all_tool_names();
            for name in &self.disabled_tools {
                if !known.contains(&name.as_str()) {
                    return Err(format!(
                        "--disable-tool {name}: no such tool (tools: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        let mut mode = explicit_mode.unwrap_or(BashMode::ReadOnly);
        if mode == BashMode::ReadOnly
            && !(self.bash_allow.is_empty() && self.bash_preset.is_empty())
        {
            mode = BashMode::Allowlist;
        }
        let roots = if self.roots.is_empty() {
            vec![
                std::env::current_dir()
                    .map_err(|e| format!("cannot read the current directory: {e}"))?,
            ]
        } else {
            self.roots.clone()
        };
        let mut config = Config::with_roots(roots);
        config.unprotect = self.unprotect.clone();
        if self.read_only {
            mode = if mode == BashMode::Off {
                BashMode::Off
            } else {
                BashMode::ReadOnly
            };
        }
        let (mode, note) = mode.on_platform(explicit_mode.is_some(), cfg!(windows));
        if let Some(note) = note {
            tracing::warn!("{note}");
        }
        if mode.full_shell() && !self.bash_deny.is_empty() {
            return Err(format!(
                "--bash-deny conflicts with --bash-mode {}: a deny list cannot be \
                 enforced on a full shell (use --bash-mode allowlist with --bash-allow instead)",
                mode.as_str()
            ));
        }
        let mut extra_read = Vec::new();
        for dir in self.bash_read.iter().chain(&self.bash_path) {
            let canonical = crate::fs::canonical_dir(dir)
                .map_err(|e| format!("--bash-read/--bash-path {}: {e}", dir.display()))?;
            extra_read.push(canonical);
        }
        let mut extra_path = extra_read[self.bash_read.len()..].to_vec();
        let mut allow = self.bash_allow.clone();
        for preset in &self.bash_preset {
            allow.extend(preset.commands().iter().map(|c| c.to_string()));
        }
        let ask = self.bash_ask == Switch::On && !self.read_only;
        let toolchains = find_toolchains(mode, ask, &allow, &extra_path, &config.roots);
        for dir in toolchains.read() {
            // A directory that cannot be made canonical now is left out.
            if let Ok(canonical) = crate::fs::canonical_dir(&dir)
                && !extra_read.contains(&canonical)
            {
                extra_read.push(canonical);
            }
        }
        extra_path.extend(toolchains.path());
        if let Some(bad) = self
            .bash_env
            .iter()
            .find(|n| !crate::shell::parse::is_name(n))
        {
            return Err(format!("--bash-env {bad}: not a variable name"));
        }
        config.bash = BashConfig {
            mode,
            allow,
            deny: self.bash_deny.clone(),
            timeout: Duration::from_secs(self.bash_timeout),
            timeout_max: Duration::from_secs(
                self.bash_timeout_max.unwrap_or(600).max(self.bash_timeout),
            ),
            extra_read,
            extra_path,
            env_names: self.bash_env.clone(),
            extra_env: toolchains.env(),
            toolchains,
            ask,
        };
        config.read_only = self.read_only;
        config.disabled_tools = self.disabled_tools.clone();
        config.dialect = self.dialect;
        config.answer_budget = self.answer_budget;
        config.journal = self.journal()?;
        Ok(config)
    }
}

impl Cli {
    /// The journal's settings, checked.
    pub fn journal(&self) -> Result<JournalConfig, String> {
        const MB: u64 = 1024 * 1024;
        if self.journal_max_mb == 0 || self.journal_max_mb > 1024 * 1024 {
            return Err("--journal-max-mb must be from 1 to 1048576".into());
        }
        if self.journal_max_file_mb == 0 || self.journal_max_file_mb > 1024 {
            return Err("--journal-max-file-mb must be from 1 to 1024".into());
        }
        if self.journal_max_days == 0 || self.journal_max_days > 36_500 {
            return Err("--journal-max-days must be from 1 to 36500".into());
        }
        let state_dir = match &self.state_dir {
            Some(dir) if !dir.is_absolute() => {
                let cwd = std::env::current_dir()
                    .map_err(|e| format!("--state-dir: the current directory: {e}"))?;
                Some(cwd.join(dir))
            }
            other => other.clone(),
        };
        Ok(JournalConfig {
            off: self.no_journal,
            state_dir,
            limits: crate::fs::journal::Limits {
                max_bytes: self.journal_max_mb * MB,
                max_age: Duration::from_secs(self.journal_max_days * 24 * 3600),
                max_file: self.journal_max_file_mb * MB,
            },
        })
    }
}

/// The toolchains of the programs `mode` lets bash run: the first word of
/// each allow entry, or in workspace-write mode every known one, and every
/// known one too where the user may be asked to approve a command. None on
/// Windows, where no sandbox narrows what commands see.
fn find_toolchains(
    mode: BashMode,
    ask: bool,
    allow: &[String],
    user_path: &[PathBuf],
    roots: &[PathBuf],
) -> crate::shell::sandbox::toolchains::Found {
    use crate::shell::sandbox::toolchains;
    if cfg!(windows) {
        return toolchains::Found::default();
    }
    let programs: Vec<String> = match mode {
        BashMode::ReadOnly | BashMode::Allowlist if ask => allow
            .iter()
            .filter_map(|entry| entry.split_whitespace().next())
            .chain(toolchains::KNOWN_PROGRAMS.iter().copied())
            .map(str::to_string)
            .collect(),
        BashMode::Allowlist => allow
            .iter()
            .filter_map(|entry| entry.split_whitespace().next())
            .map(str::to_string)
            .collect(),
        BashMode::WorkspaceWrite | BashMode::Unrestricted => toolchains::KNOWN_PROGRAMS
            .iter()
            .map(|p| p.to_string())
            .collect(),
        BashMode::ReadOnly | BashMode::Off => Vec::new(),
    };
    toolchains::find(
        &toolchains::RealHost,
        &programs,
        crate::shell::SYSTEM_PATH,
        user_path,
        &roots
            .iter()
            .map(|root| crate::fs::canonical_dir(root).unwrap_or_else(|_| root.clone()))
            .collect::<Vec<_>>(),
    )
}

/// On or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

/// `--bash-preset`: a toolchain's test, build and lint commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    Rust,
    Node,
    Python,
    Go,
}

impl Preset {
    /// The `--bash-allow` entries it stands for (docs/security.md).
    pub fn commands(self) -> &'static [&'static str] {
        match self {
            Preset::Rust => &[
                "cargo test",
                "cargo build",
                "cargo check",
                "cargo clippy",
                "cargo fmt",
                "cargo doc",
                "cargo nextest",
            ],
            Preset::Node => &[
                "npm test",
                "npm run",
                "npm ci --offline",
                "node --test",
                "npx vitest",
                "npx jest",
                "npx eslint",
                "npx tsc",
                "npx prettier",
            ],
            Preset::Python => &[
                "pytest",
                "python -m pytest",
                "python3 -m pytest",
                "python -m unittest",
                "python3 -m unittest",
                "ruff",
                "mypy",
                "flake8",
                "black",
            ],
            Preset::Go => &["go test", "go build", "go vet", "gofmt", "go fmt"],
        }
    }
}

/// `--answer-budget`: a number of characters, or `off`.
fn parse_answer_budget(value: &str) -> Result<AnswerBudget, String> {
    if value.eq_ignore_ascii_case("off") {
        return Ok(AnswerBudget::OFF);
    }
    match value.parse::<usize>() {
        Ok(chars) if chars >= MIN_ANSWER_BUDGET => Ok(AnswerBudget::chars(chars)),
        Ok(_) => Err(format!("at least {MIN_ANSWER_BUDGET} characters, or off")),
        Err(_) => Err("a number of characters, or off".into()),
    }
}

/// The smallest budget: the longest line a tool shows (2,000 characters
/// and the cut's suffix, up to twice as many UTF-16 units) with its note.
const MIN_ANSWER_BUDGET: usize = 5000;

/// `rootbound __rootbound-sandbox-supervisor probe`: the layers this kernel
/// has, as JSON on stdout, for the server that started it
/// (`probe::probe` reads them).
#[cfg(target_os = "linux")]
pub fn print_probe() -> i32 {
    let layers = crate::shell::sandbox::probe::probe_here();
    let json = serde_json::to_string(&layers).unwrap_or_else(|_| "{}".into());
    let _ = std::io::stdout().write_all(format!("{json}\n").as_bytes());
    0
}

/// `rootbound sandbox`: the property table for this kernel.
#[cfg(target_os = "linux")]
pub fn print_sandbox(config: &Config) -> i32 {
    use crate::shell::sandbox::probe;
    let layers = match probe::probe(std::path::Path::new("/proc/self/exe")) {
        Ok(layers) => layers,
        Err(why) => {
            eprintln!("rootbound: {why}");
            return 1;
        }
    };
    let mut out = format!(
        "bash mode: {}\n\n{}",
        config.bash.mode.as_str(),
        probe::table(&layers)
    );
    if config.bash.mode == BashMode::Off {
        out.push_str("\nbash is off: no command runs.\n");
    } else {
        out.push_str("\ntoolchains found for the programs bash may run:\n");
        out.push_str(&config.bash.toolchains.describe());
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    0
}

/// `rootbound sandbox`: what this platform enforces.
#[cfg(not(target_os = "linux"))]
pub fn print_sandbox(config: &Config) -> i32 {
    let out = format!(
        "bash mode: {}\n\n{}",
        config.bash.mode.as_str(),
        crate::shell::sandbox::platform_statement()
    );
    let _ = std::io::stdout().write_all(out.as_bytes());
    0
}

/// `rootbound tools`: the tool list as pretty JSON.
pub fn print_tools(registry: &Registry) -> i32 {
    let tools = registry.list();
    match serde_json::to_string_pretty(&tools) {
        // A reader that stops early (`| head`) is not an error of ours.
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            let _ = out
                .write_all(json.as_bytes())
                .and_then(|()| out.write_all(b"\n"));
            0
        }
        Err(e) => {
            eprintln!("rootbound: cannot serialise the tool list: {e}");
            1
        }
    }
}

/// `rootbound call TOOL [JSON]`: runs one call and prints its text.
pub async fn run_call(registry: &Registry, tool: &str, json: Option<&str>) -> i32 {
    let raw = match json {
        Some("-") => {
            let mut buf = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut buf) {
                eprintln!("rootbound: cannot read arguments from stdin: {e}");
                return 2;
            }
            buf
        }
        Some(text) => text.to_string(),
        None => "{}".to_string(),
    };
    let args = match serde_json::from_str::<serde_json::Value>(&raw) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => {
            eprintln!(
                "rootbound: the arguments must be a JSON object, e.g. '{{\"path\":\"README.md\"}}'"
            );
            return 2;
        }
        Err(e) => {
            eprintln!("rootbound: the arguments are not valid JSON: {e}");
            return 2;
        }
    };
    match registry
        .call(tool, Some(args), tools::CallParts::detached())
        .await
    {
        Ok(rmcp::model::CallToolResponse::Complete(result)) => print_result(&result),
        // Only a call that can ask the user is answered otherwise.
        Ok(_) => {
            eprintln!("rootbound: the call asked for input, which `rootbound call` cannot give");
            1
        }
        Err(e) => {
            eprintln!("rootbound: {}", e.message);
            2
        }
    }
}

fn print_result(result: &CallToolResult) -> i32 {
    let is_error = result.is_error == Some(true);
    let mut out = std::io::stdout().lock();
    for block in &result.content {
        let line = match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => media_summary("image", &i.mime_type, &i.data),
            ContentBlock::Audio(a) => media_summary("audio", &a.mime_type, &a.data),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::BlobResourceContents {
                    mime_type, blob, ..
                } => media_summary("resource", mime_type.as_deref().unwrap_or("?"), blob),
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                _ => "[unsupported resource]".to_string(),
            },
            _ => "[unsupported content block]".to_string(),
        };
        let ends_with_newline = line.ends_with('\n');
        let written = out.write_all(line.as_bytes()).and_then(|()| {
            if ends_with_newline {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        });
        if written.is_err() {
            return 1;
        }
    }
    let _ = out.flush();
    if is_error { 1 } else { 0 }
}

fn media_summary(kind: &str, mime: &str, base64: &str) -> String {
    // Base64 carries 3 bytes in every 4 characters.
    let bytes = base64.len() / 4 * 3;
    format!("[{kind} {mime}, about {bytes} bytes]")
}

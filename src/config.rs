//! The server's configuration, built once from the command line.

use std::path::PathBuf;
use std::time::Duration;

use crate::text::budget::AnswerBudget;
use crate::tools::spec::{Access, ToolSpec};

/// How the `bash` tool decides what may run (docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BashMode {
    /// Only read-only commands from the built-in allowlist.
    ReadOnly,
    /// The read-only list plus `--bash-allow` prefixes, minus `--bash-deny`.
    Allowlist,
    /// Any command, run by a full shell inside the sandbox: writes only
    /// inside the roots, no network (not on Windows, which has no sandbox).
    WorkspaceWrite,
    /// Windows: any command, with the server's own rights (no sandbox).
    /// Elsewhere, the old name of workspace-write.
    Unrestricted,
    /// The tool is not offered.
    Off,
}

impl BashMode {
    /// The mode a platform runs, and the start-up note when it differs from
    /// the one asked for. Windows has no sandbox to stand behind bash, so
    /// there bash is off unless the user asked for `unrestricted` by name,
    /// knowing that nothing but the time limit stands in its way (the
    /// executor says so when the server starts); the read-only and
    /// allowlist modes, whose checks the sandbox backs, are not offered.
    pub fn on_platform(self, explicit: bool, windows: bool) -> (BashMode, Option<String>) {
        if !windows && self == BashMode::Unrestricted {
            return (
                BashMode::WorkspaceWrite,
                Some(
                    "--bash-mode unrestricted is now called workspace-write (any command, in a \
                     full shell the sandbox confines: writes only inside the roots, no network); \
                     the old name will go in a later release"
                        .into(),
                ),
            );
        }
        if !windows || self == BashMode::Off || (self == BashMode::Unrestricted && explicit) {
            return (self, None);
        }
        let asked = if explicit {
            format!("--bash-mode {} is not available on Windows", self.as_str())
        } else {
            "bash is off on Windows".to_string()
        };
        let note = format!(
            "{asked}: no sandbox can confine commands here. Start the server with \
             --bash-mode unrestricted to offer bash anyway, with the server's own rights."
        );
        (BashMode::Off, Some(note))
    }

    /// Whether a full shell runs the line (no parser, no policy).
    pub fn full_shell(self) -> bool {
        matches!(self, BashMode::WorkspaceWrite | BashMode::Unrestricted)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BashMode::ReadOnly => "read-only",
            BashMode::Allowlist => "allowlist",
            BashMode::WorkspaceWrite => "workspace-write",
            BashMode::Unrestricted => "unrestricted",
            BashMode::Off => "off",
        }
    }
}

/// Which Gemini CLI dialect the tool list speaks (docs/tools.md): names,
/// schemas and messages. Every dialect accepts every spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Dialect {
    /// Gemini CLI 0.24's tools (`search_file_content`, `offset`/`limit`).
    #[default]
    #[value(name = "gemini-0.24")]
    Gemini024,
    /// The newest Gemini CLI's tools (`grep_search`, `start_line`/`end_line`,
    /// `dir_path`, `allow_multiple`).
    #[value(name = "gemini-current")]
    GeminiCurrent,
}

impl Dialect {
    /// Position in per-dialect arrays.
    pub fn index(self) -> usize {
        match self {
            Dialect::Gemini024 => 0,
            Dialect::GeminiCurrent => 1,
        }
    }

    pub fn is_current(self) -> bool {
        self == Dialect::GeminiCurrent
    }
}

#[derive(Debug, Clone)]
pub struct BashConfig {
    pub mode: BashMode,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub timeout: Duration,
    /// The longest time limit a call may ask for (`--bash-timeout-max`).
    pub timeout_max: Duration,
    /// Directories commands may also read (`--bash-read`), e.g. a toolchain.
    pub extra_read: Vec<PathBuf>,
    /// Directories put before the system directories on the commands' PATH
    /// (`--bash-path`); readable too.
    pub extra_path: Vec<PathBuf>,
    /// Variables a line may set before a command besides the documented
    /// ones (`--bash-env`).
    pub env_names: Vec<String>,
    /// Variables commands get from the toolchains found.
    pub extra_env: Vec<(String, String)>,
    /// The toolchains found for the programs bash may run (docs/security.md).
    pub toolchains: crate::shell::sandbox::toolchains::Found,
    /// Whether a command the allow list refuses becomes a question to the
    /// user, where the client can be asked (`--bash-ask`).
    pub ask: bool,
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig {
            mode: BashMode::ReadOnly,
            allow: Vec::new(),
            deny: Vec::new(),
            timeout: Duration::from_secs(60),
            timeout_max: Duration::from_secs(600),
            extra_read: Vec::new(),
            extra_path: Vec::new(),
            env_names: Vec::new(),
            extra_env: Vec::new(),
            toolchains: Default::default(),
            ask: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    /// Paths (as given, relative to the primary root or absolute) where
    /// nothing is protected (`--unprotect`); the guard makes them absolute.
    pub unprotect: Vec<String>,
    /// The roots as given; the guard canonicalises them.
    pub roots: Vec<PathBuf>,
    pub bash: BashConfig,
    /// Do not offer the writing tools; bash is forced to read-only.
    pub read_only: bool,
    /// Tools not offered, by name.
    pub disabled_tools: Vec<String>,
    /// How long a content search may run before it returns what it found.
    pub search_timeout: Duration,
    pub dialect: Dialect,
    /// How long one answer may be (`--answer-budget`, `text::budget`).
    pub answer_budget: AnswerBudget,
    /// The journal of edits behind undo (`fs/journal.rs`).
    pub journal: JournalConfig,
}

/// Where and how much the journal of edits keeps.
#[derive(Debug, Clone, Default)]
pub struct JournalConfig {
    /// `--no-journal`.
    pub off: bool,
    /// `--state-dir`; None: the platform's default
    /// (`fs::journal::default_state_dir`).
    pub state_dir: Option<PathBuf>,
    pub limits: crate::fs::journal::Limits,
}

impl JournalConfig {
    /// The state directory in use, if there is one.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.state_dir
            .clone()
            .or_else(crate::fs::journal::default_state_dir)
    }
}

impl Config {
    /// A configuration with defaults for everything but the roots (tests and
    /// library users).
    pub fn with_roots(roots: Vec<PathBuf>) -> Config {
        Config {
            unprotect: Vec::new(),
            roots,
            bash: BashConfig::default(),
            read_only: false,
            disabled_tools: Vec::new(),
            search_timeout: Duration::from_secs(30),
            dialect: Dialect::default(),
            answer_budget: AnswerBudget::default(),
            journal: JournalConfig::default(),
        }
    }

    /// Whether a tool is offered: not disabled under any of its names, and
    /// allowed by what it may do.
    pub fn offers(&self, spec: &ToolSpec) -> bool {
        if spec
            .names()
            .any(|n| self.disabled_tools.iter().any(|d| d == n))
        {
            return false;
        }
        match spec.access {
            Access::Reads => true,
            Access::Writes => !self.read_only,
            Access::Shell => self.bash.mode != BashMode::Off,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BashMode;

    #[test]
    fn on_windows_bash_is_off_unless_unrestricted_is_asked_for() {
        let (mode, note) = BashMode::ReadOnly.on_platform(false, true);
        assert_eq!(mode, BashMode::Off);
        assert!(note.unwrap().contains("bash is off on Windows"));
        for asked in [
            BashMode::ReadOnly,
            BashMode::Allowlist,
            BashMode::WorkspaceWrite,
        ] {
            let (mode, note) = asked.on_platform(true, true);
            assert_eq!(mode, BashMode::Off);
            assert!(note.unwrap().contains("not available on Windows"));
        }
        assert_eq!(
            BashMode::Unrestricted.on_platform(true, true),
            (BashMode::Unrestricted, None)
        );
        assert_eq!(BashMode::Off.on_platform(true, true), (BashMode::Off, None));
    }

    #[test]
    fn elsewhere_the_mode_is_the_one_asked_for() {
        for mode in [
            BashMode::ReadOnly,
            BashMode::Allowlist,
            BashMode::WorkspaceWrite,
            BashMode::Off,
        ] {
            assert_eq!(mode.on_platform(true, false), (mode, None));
            assert_eq!(mode.on_platform(false, false), (mode, None));
        }
        // The old name of the sandboxed full shell still works, and says
        // what it is now called.
        let (mode, note) = BashMode::Unrestricted.on_platform(true, false);
        assert_eq!(mode, BashMode::WorkspaceWrite);
        assert!(note.unwrap().contains("now called workspace-write"));
    }
}

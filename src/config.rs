//! The server's configuration, built once from the command line.

use std::path::PathBuf;
use std::time::Duration;

pub use crate::shell::config::{BashConfig, BashMode};
use crate::text::budget::AnswerBudget;

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
}

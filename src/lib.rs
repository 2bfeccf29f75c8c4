//! rootbound: Gemini CLI's file-system tools, a guarded `bash` and a
//! line-numbered `file_read`, served over MCP stdio and confined to the roots
//! the user names. See ARCHITECTURE.md for the map.
//!
//! Modules are crate-private so that dead-code warnings see every item; the
//! binary and the integration tests use only the re-exports below.

pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod discovery;
pub(crate) mod fs;
pub(crate) mod history;
pub(crate) mod mcp;
pub(crate) mod setup;
pub(crate) mod shell;
pub(crate) mod text;
pub(crate) mod tools;

#[cfg(target_os = "linux")]
pub use cli::print_probe;
pub use cli::{Cli, Command, LogLevel, print_sandbox, print_tools, run_call};
pub use fs::guard::Guard;
pub use history::{run_history, run_undo};
pub use mcp::server::RootboundServer;
pub use mcp::transport::StdioTransport;
pub use setup::run_setup;
pub use shell::sandbox::SUPERVISOR_ARG;
pub use shell::sandbox::run_supervisor;
#[cfg(unix)]
pub use shell::sandbox::{close_on_exec_from, take_back_child_signals};
pub use tools::{Registry, State};

/// For the `cargo fuzz` target in `fuzz/`: plans a bash line and panics
/// if an accepted line would run other words than the policy checked.
#[doc(hidden)]
pub use shell::fuzzing::check_line as fuzz_bash_line;

/// For `tests/docs.rs`: the parameter tables of docs/tools.md, generated
/// from the tools' schemas and aliases.
#[doc(hidden)]
pub use tools::reference::parameter_tables as tool_parameter_tables;

//! rootbound: Gemini CLI's file-system tools, a guarded `bash` and a
//! line-numbered `file_read`, served over MCP stdio and confined to the roots
//! the user names. See ARCHITECTURE.md for the map.

pub mod cli;
pub mod config;
pub mod discovery;
pub mod fs;
pub mod mcp;
pub mod shell;
pub mod text;
pub mod tools;

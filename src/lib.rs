//! rootbound: Gemini CLI's file-system tools, a guarded `bash` and a
//! line-numbered `file_read`, served over MCP stdio and confined to the roots
//! the user names. See ARCHITECTURE.md for the map.

pub mod atomic;
pub mod cli;
pub mod config;
pub mod diff;
pub mod edit;
pub mod filekind;
pub mod guard;
pub mod ignore_rules;
pub mod params;
pub mod reading;
pub mod search;
pub mod server;
pub mod shell;
pub mod text;
pub mod textfile;
pub mod tools;
pub mod transport;
pub mod walk;
pub mod writing;

//! The MCP side: the rmcp handler and the stdio transport.

pub mod json;
pub mod server;
pub mod transport;

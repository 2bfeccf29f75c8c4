//! The MCP side: the rmcp handler, the stdio transport, and the parameter
//! pipeline (schemas, validation, aliases).

pub mod json;
pub mod params;
pub mod server;
pub mod transport;

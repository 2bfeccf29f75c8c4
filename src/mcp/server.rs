//! The MCP handler: announces the server and its tools, and hands every
//! `tools/call` to the registry. Nothing else lives here.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::tools::{CallParts, Progress, Registry};

/// What the server tells a client about itself; `{search}` is the search
/// tool's name in the dialect served.
const INSTRUCTIONS: &str = "rootbound serves file-system tools confined to the workspace roots \
    listed in every outside-root error. Relative paths resolve against the primary root. Use \
    glob and {search} to find things, read_file or file_read to read them, and replace or \
    write_file to change them; read a file before editing it.";

pub struct RootboundServer {
    registry: Arc<Registry>,
}

impl RootboundServer {
    pub fn new(registry: Arc<Registry>) -> Self {
        RootboundServer { registry }
    }
}

impl ServerHandler for RootboundServer {
    fn get_info(&self) -> ServerConfig {
        let state = self.registry.state();
        let roots = state.guard.roots_display();
        let search = if state.config.dialect.is_current() {
            "grep_search"
        } else {
            "search_file_content"
        };
        let instructions = INSTRUCTIONS.replace("{search}", search);
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rootbound", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!("{instructions} Workspace roots: {roots}."))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.registry.list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| Progress::new(context.peer.clone(), token));
        let parts = CallParts {
            cancel: context.ct.clone(),
            progress,
        };
        self.registry
            .call(&request.name, request.arguments, parts)
            .await
            .map(CallToolResponse::from)
    }
}

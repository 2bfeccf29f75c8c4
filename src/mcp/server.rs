//! The MCP handler: announces the server and its tools, and hands every
//! `tools/call` to the registry. Nothing else lives here.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::tools::ask::{Asker, Cannot};
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

impl RootboundServer {
    /// How a call may ask the user (`tools/ask.rs`): not at all when asking
    /// is off or the client did not declare form elicitation; in the
    /// 2026-07-28 era by rounds; before it, by a request to the client.
    fn asker(
        &self,
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
    ) -> Asker {
        let state = self.registry.state();
        if !state.config.bash.ask {
            return Asker::cannot(Cannot::TurnedOff);
        }
        let can = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !can {
            return Asker::cannot(Cannot::NoCapability);
        }
        let in_rounds = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if in_rounds {
            Asker::rounds(
                state.questions.clone(),
                request.input_responses.clone(),
                request.request_state.clone(),
            )
        } else {
            Asker::peer(context.peer.clone(), state.questions.clone())
        }
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
            asker: self.asker(&context, &request),
        };
        self.registry
            .call(&request.name, request.arguments, parts)
            .await
    }
}

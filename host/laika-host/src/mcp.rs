//! `laika-host mcp`: the NLWeb asks as MCP tools over stdio, with the
//! official Rust MCP SDK (`rmcp`) (docs/nlweb.md#mcp-laika-host-mcp).
//!
//! Two tools, over the same asks as `serve` (`serve::asks`): `ask` takes an
//! NLWeb v0.54 request and returns the NLWeb response (never streamed: a
//! tool call has one result; a slow ask is a Promise), `await` takes the
//! `/await` request. Their input schemas are generated from the NLWeb
//! request types. A Failure is a tool-level error (`isError`), with the
//! NLWeb response as its content, so the caller sees the code and message.
//! stdout carries MCP messages only; logs go to stderr and the log file.

use crate::serve::asks::{self, Asks};
use crate::serve::nlweb::{self, AskRequest, AwaitRequest, ResponseType};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use std::sync::Arc;

pub struct McpServer {
    asks: Arc<Asks>,
}

impl McpServer {
    pub fn new(asks: Arc<Asks>) -> McpServer {
        McpServer { asks }
    }
}

fn input_schema<T: schemars::JsonSchema>() -> Map<String, Value> {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(schema)) => schema,
        _ => Map::new(),
    }
}

/// The tools, described for the model that will call them.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "ask",
            "Ask what the user has read with Laika (NLWeb v0.54). Arguments are an NLWeb request: \
             query.text (required), query.site (\"history\", a site, or a collection by id or title), \
             context.prev, prefer.response_format (chatgpt_app or conv_search), \
             meta.session_context.conversation_id. Returns an NLWeb response: an Answer with \
             schema.org results and verified citations, an Elicitation, a Promise (then call \
             await), or a Failure.",
            input_schema::<AskRequest>(),
        ),
        Tool::new(
            "await",
            "Check in on (action \"checkin\") or cancel (action \"cancel\") an ask that answered \
             with a Promise, by its promise_token. Returns the Promise with a fresh \
             estimated_time while it runs, then the final response.",
            input_schema::<AwaitRequest>(),
        ),
    ]
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerInfo {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(
                "Laika answers from the pages the user read with it, citing them. Use `ask`; \
                 when it returns a Promise, call `await` with its token.",
            );
        info.server_info = Implementation::new("laika-host", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let (response, _status) = match request.name.as_ref() {
            "ask" => match nlweb::parse_ask(arguments) {
                Ok(mut ask) => {
                    ask.prefer.streaming = false;
                    self.asks.respond(ask).await
                }
                Err(f) => asks::failed(f),
            },
            "await" => self.asks.await_promise(Value::Object(arguments)),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other:?}: the tools are ask and await"),
                    None,
                ))
            }
        };
        let json = response.to_json();
        let content = vec![ContentBlock::text(json.to_string())];
        let mut result = if response.meta.response_type == ResponseType::Failure {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = Some(json);
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_schemas_come_from_the_nlweb_types() {
        let tools = tools();
        let ask = &tools[0].input_schema;
        assert_eq!(ask["required"], serde_json::json!(["query"]));
        let query = serde_json::to_string(ask).unwrap();
        assert!(query.contains("accept-language"), "{query}");
        let await_schema = &tools[1].input_schema;
        assert!(await_schema["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from("promise_token")));
    }
}

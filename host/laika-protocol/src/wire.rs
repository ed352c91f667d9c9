//! Wire protocol v1 between the extension and the host (`docs/wire-protocol.md`).
//! These types are its single source: [`schema_document`] renders
//! `docs/wire-protocol.schema.json` from them.
//!
//! Every message is a JSON object with `type` and `id`; every host message that
//! answers something names it in `reply_to`. Inbound messages are parsed into
//! [`Request`]; outbound ones are [`crate::event::Event`]s.

use crate::agent::{ToolError, ToolStatus};
use crate::deferred::Deferred;
use crate::error::{Error, ErrorCode, Result};
use crate::ids::{ArtifactId, CallId, CollectionId, ConversationId, RequestId, SourceId};
use crate::llmcp::Task;
use crate::observation::Observation;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

mod json_schema;
pub use json_schema::schema_document;

pub const WIRE_PROTOCOL_NAME: &str = "laika.wire";
pub const WIRE_PROTOCOL_VERSION: u32 = 1;

/// Ids are echoed back and stored: keep them short and printable.
const MAX_ID_LEN: usize = 128;

/// The protocol a `hello` asks for and a `hello.result` answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WireProtocol {
    #[schemars(extend("const" = WIRE_PROTOCOL_NAME))]
    pub name: String,
    #[schemars(extend("const" = WIRE_PROTOCOL_VERSION))]
    pub version: u32,
}

impl WireProtocol {
    /// The protocol this host speaks.
    pub fn current() -> WireProtocol {
        WireProtocol {
            name: WIRE_PROTOCOL_NAME.into(),
            version: WIRE_PROTOCOL_VERSION,
        }
    }
}

/// The schema of an extension message's `id` ([`message_id`] checks it).
/// JSON Schema counts characters where the host counts bytes: keep ids ASCII.
impl JsonSchema for RequestId {
    fn schema_name() -> Cow<'static, str> {
        "RequestId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": format!(
                "The id of an extension message: a non-empty string of at most {MAX_ID_LEN} bytes."
            ),
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ID_LEN,
        })
    }
}

/// The schema of a host message's `id` and of the ids the host makes up:
/// a lowercase UUID v4, as `Ambient::new_id` gives them.
pub struct HostId;

impl JsonSchema for HostId {
    fn schema_name() -> Cow<'static, str> {
        "HostId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An id made by the host: a lowercase UUID v4.",
            "type": "string",
            "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct UserText {
    pub text: String,
}

/// The tab the observation came from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct Tab {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    /// Any JSON value; non-strings are stringified.
    #[serde(default, deserialize_with = "stringified")]
    #[schemars(with = "Option<Value>")]
    pub tab_id: Option<String>,
    #[serde(default)]
    pub browser: Option<String>,
}

/// A JSON value as text: a string as it is, anything else as its JSON.
fn stringified<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    Ok(Option::<Value>::deserialize(d)?.map(|v| match v {
        Value::String(s) => s,
        other => other.to_string(),
    }))
}

/// A `turn` request: one user message about one observed page.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct TurnRequest {
    pub id: RequestId,
    /// Omitted or `null`: a new conversation (its id comes back in `turn.started`).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_ID_LEN))]
    pub conversation_id: Option<ConversationId>,
    pub message: UserText,
    pub task: Task,
    /// Answer over this collection: its index and sources are packed
    /// instead of the page (which the agent loop still acts on).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_ID_LEN))]
    pub collection_id: Option<CollectionId>,
    /// Answer with the offline runtime (`builtin`) whatever the config
    /// names, and summarize without a model: nothing leaves the computer.
    /// The config is not changed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offline: bool,
    /// The user's own choice of mode (the sidebar's "Just tell me" / "Do
    /// it"): it overrides the mode the model reads from the message.
    /// Omitted: the model's reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::mode::Mode>,
    /// The sidebar shows a proposed plan as a checklist and answers it
    /// (docs/wire-protocol.md#plans). Omitted: a plan the model proposes
    /// is ignored, so no turn waits on a question nobody is shown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plans: bool,
    #[serde(default)]
    pub tab: Tab,
    /// Checked by the host only after `turn.started` (so a bad observation
    /// fails the turn with `INVALID_OBSERVATION`): kept as JSON until then.
    #[schemars(with = "Observation")]
    pub observation: Deferred<Observation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    #[default]
    Json,
    Html,
}

/// The keys `config.set` may change, for the schema only: the host takes
/// `values` as a map so that an unknown key is `CONFIG_INVALID` naming the
/// key (`Config::with_values` in `laika-host` applies them).
/// Besides these, `mcp.servers.<name>.trusted` (a boolean) sets a
/// configured MCP server's trust.
#[derive(JsonSchema)]
#[schemars(extend("patternProperties" = {
    "^mcp\\.servers\\.[A-Za-z0-9_-]{1,64}\\.trusted$": {"type": "boolean"}
}))]
pub struct ConfigValues {
    /// `null` means `builtin`.
    #[schemars(rename = "runtime.kind")]
    pub runtime_kind: Option<String>,
    #[schemars(rename = "runtime.base_url")]
    pub runtime_base_url: Option<String>,
    #[schemars(rename = "runtime.model")]
    pub runtime_model: Option<String>,
    /// For `openai`: the server family (`ConfigView.profiles`); `null`
    /// means `generic`.
    #[schemars(rename = "runtime.profile")]
    pub runtime_profile: Option<String>,
    /// `null` unsets it. Stored only in the config file (mode 0600), never
    /// sent back: `config.get` says only whether one is set.
    #[schemars(rename = "runtime.api_key", length(max = MAX_API_KEY_LEN))]
    pub runtime_api_key: Option<String>,
    #[schemars(default)]
    pub log_full_llm: bool,
}

/// The largest PDF `pdf.read` takes, in bytes once decoded. Its base64 (4/3
/// of it) fits the default inbound frame with room to spare.
pub const MAX_PDF_BYTES: usize = 32 << 20;
/// The most pages `pdf.read` reads.
pub const MAX_PDF_PAGES: usize = 500;

/// The longest API key `config.set` takes, in bytes (`runtime.api_key`).
pub const MAX_API_KEY_LEN: usize = 4096;

/// Every message the extension may send.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Request {
    #[serde(rename = "hello")]
    Hello {
        id: RequestId,
        /// The host accepts a `hello` without it as v1; the extension must send it.
        #[schemars(required)]
        protocol: Option<WireProtocol>,
        /// Free-form (e.g. `{name, version, browser}`); the host ignores it.
        // JSON: nothing reads it.
        #[serde(default)]
        client: Option<Value>,
    },
    #[serde(rename = "turn")]
    Turn(Box<TurnRequest>),
    #[serde(rename = "cancel")]
    Cancel {
        id: RequestId,
        /// The `id` of the `turn` to cancel.
        #[schemars(with = "String")]
        target: RequestId,
    },
    #[serde(rename = "history.list")]
    HistoryList {
        id: RequestId,
        #[serde(default)]
        limit: Option<usize>,
        #[serde(default)]
        offset: Option<usize>,
    },
    #[serde(rename = "history.get")]
    HistoryGet {
        id: RequestId,
        conversation_id: ConversationId,
    },
    #[serde(rename = "history.search")]
    HistorySearch {
        id: RequestId,
        query: String,
        #[serde(default)]
        limit: Option<usize>,
    },
    #[serde(rename = "history.delete")]
    HistoryDelete {
        id: RequestId,
        conversation_id: ConversationId,
    },
    /// "Forget what you assumed": clears the conversation's assumptions
    /// and tentative hypotheses and discards its provisional items; the
    /// change comes as an `entity_patch`, then `agent_state.forget.result`.
    #[serde(rename = "agent_state.forget")]
    AgentStateForget {
        id: RequestId,
        conversation_id: ConversationId,
    },
    #[serde(rename = "history.export")]
    HistoryExport {
        id: RequestId,
        conversation_id: ConversationId,
        #[serde(default)]
        format: ExportFormat,
    },
    /// The collections and artifacts, most recent first.
    #[serde(rename = "collections.list")]
    CollectionsList { id: RequestId },
    /// Adds a page the extension observed (the current page or an open tab)
    /// to a collection; without `collection_id`, to a new collection named
    /// `title` (or the page's title).
    #[serde(rename = "collection.add_page")]
    CollectionAddPage {
        id: RequestId,
        #[serde(default)]
        #[schemars(length(min = 1, max = MAX_ID_LEN))]
        collection_id: Option<CollectionId>,
        #[serde(default)]
        title: Option<String>,
        #[schemars(with = "Observation")]
        observation: Deferred<Observation>,
    },
    /// A collection and its sources (without their text), for managing it.
    #[serde(rename = "collection.get")]
    CollectionGet {
        id: RequestId,
        collection_id: CollectionId,
    },
    /// Gives a collection a new name (kept within the store's bounds).
    #[serde(rename = "collection.rename")]
    CollectionRename {
        id: RequestId,
        collection_id: CollectionId,
        title: String,
    },
    /// Takes one source out of a collection; its text is deleted with it.
    #[serde(rename = "collection.remove_source")]
    CollectionRemoveSource {
        id: RequestId,
        collection_id: CollectionId,
        source_id: SourceId,
    },
    /// Deletes a collection and its sources; its artifacts are kept.
    #[serde(rename = "collection.delete")]
    CollectionDelete {
        id: RequestId,
        collection_id: CollectionId,
    },
    /// Runs a transform (`collections.list.result` lists them) over a
    /// collection with the configured runtime, as the `transform.run` tool
    /// does, and saves its artifact. A `cancel` naming this request's id
    /// stops it and nothing is saved.
    #[serde(rename = "transform.run")]
    TransformRun {
        id: RequestId,
        collection_id: CollectionId,
        /// A transform's `id`.
        transform: String,
    },
    /// An artifact as a file's content, for the clipboard or a download.
    #[serde(rename = "artifact.export")]
    ArtifactExport {
        id: RequestId,
        artifact_id: ArtifactId,
        format: crate::collection::ShareFormat,
    },
    #[serde(rename = "config.get")]
    ConfigGet { id: RequestId },
    #[serde(rename = "config.set")]
    ConfigSet {
        id: RequestId,
        // A map, not `ConfigValues`: an unknown key is `CONFIG_INVALID`
        // naming it, not an `INVALID_REQUEST`.
        #[schemars(with = "ConfigValues")]
        values: Map<String, Value>,
    },
    /// Asks the model servers on loopback what they are (the ports are
    /// `ConfigView.discover_ports`). Answered with `config.discover.result`.
    #[serde(rename = "config.discover")]
    ConfigDiscover { id: RequestId },
    /// "Test connection": one short structured request to the runtime the
    /// config names with `values` applied (as `config.set` would, but
    /// nothing is saved), answered with `config.test.result`.
    #[serde(rename = "config.test")]
    ConfigTest {
        id: RequestId,
        // A map, as for `config.set`.
        #[serde(default)]
        #[schemars(with = "Option<ConfigValues>")]
        values: Option<Map<String, Value>>,
    },
    #[serde(rename = "ping")]
    Ping { id: RequestId },
    /// The text of a PDF the tab shows, which the extension fetched (the
    /// browser's viewer gives a content script nothing to read). Answered
    /// with `pdf.read.result`: an observation with one chunk per page (a
    /// long page in several), each chunk's `url` naming its page.
    #[serde(rename = "pdf.read")]
    PdfRead {
        id: RequestId,
        /// The address the PDF was fetched from, as the tab shows it.
        #[schemars(length(min = 1))]
        url: String,
        /// The tab's title, if it has one besides the address.
        #[serde(default)]
        title: Option<String>,
        /// The PDF's bytes, base64 (standard alphabet, padded); at most
        /// `MAX_PDF_BYTES` once decoded.
        data: String,
    },
    /// The configured MCP servers, their state and their tools; with
    /// `test`, that server is connected anew first ("Test connection").
    /// Answered with `mcp.servers.result`.
    #[serde(rename = "mcp.servers")]
    McpServers {
        id: RequestId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        test: Option<String>,
    },
    /// The saved prompts, shortcut slots first, then by name.
    #[serde(rename = "prompts.list")]
    PromptsList { id: RequestId },
    /// Saves a new prompt, or changes the one `prompt_id` names. A slot
    /// given to this prompt is taken from whichever prompt held it.
    #[serde(rename = "prompts.save")]
    PromptsSave {
        id: RequestId,
        prompt: crate::saved_prompt::PromptDraft,
    },
    #[serde(rename = "prompts.delete")]
    PromptsDelete {
        id: RequestId,
        prompt_id: crate::ids::PromptId,
    },
    #[serde(rename = "tool_result")]
    ToolResult(Box<ToolResultRequest>),
    /// The user's answer to an `ask` call, or to an `estimate`. Accepted
    /// only for the call the turn waits on, with the digest its `tool_call`
    /// (or `estimate`) gave, before it expires; answered with
    /// `approval.result` or an `error`.
    #[serde(rename = "approval")]
    Approval {
        id: RequestId,
        call_id: CallId,
        /// The `digest` of the `tool_call` or `estimate` the user saw.
        digest: String,
        approved: bool,
        /// For an `estimate` that offers it (`start_chars`), with
        /// `approved`: answer from the start of the page only, in one call.
        #[serde(default)]
        start_only: bool,
        /// For a `plan`, with `approved`: the steps the user unchecked or
        /// reworded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan: Option<crate::plan::PlanEdit>,
    },
}

/// `tool_result`: how a browser tool call the host asked for ended. No reply
/// on success (the turn's own `tool_result` event follows); an `error`
/// replies to a result for a call nobody waits on.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolResultRequest {
    pub id: RequestId,
    /// The `call_id` of the host's `tool_call`.
    #[schemars(length(min = 1, max = MAX_ID_LEN))]
    pub call_id: CallId,
    pub status: ToolStatus,
    /// The tool's data (`browser.get_selection_links`: `{links}`).
    // Free-form: each browser tool answers its own shape.
    #[serde(default)]
    pub result: Option<Map<String, Value>>,
    /// The page as seen after the call (after a mutating action, and for
    /// `browser.observe_dom`). Checked by the host like a turn's observation.
    #[serde(default)]
    #[schemars(with = "Option<Observation>")]
    pub observation: Option<Deferred<Observation>>,
    /// Why it failed; expected unless `status` is `ok`.
    #[serde(default)]
    pub error: Option<ToolError>,
}

/// A slice of a host message too large for one frame; concatenating the
/// `data` of all parts in `index` order gives the message's JSON text back.
/// Parts carry no `reply_to`: reassemble first, then route.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "part")]
#[schemars(transform = part_tag)]
pub struct Part<'a> {
    #[schemars(with = "HostId")]
    pub id: &'a str,
    /// The `id` of the message that was split.
    pub part_of: &'a str,
    /// Below `count`.
    pub index: usize,
    #[schemars(range(min = 1))]
    pub count: usize,
    pub data: &'a str,
}

/// schemars leaves a struct's serde `tag` out of its schema: put it back.
fn part_tag(schema: &mut Schema) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "type".into(),
            serde_json::json!({ "type": "string", "const": "part" }),
        );
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.insert(0, "type".into());
    }
}

pub const REQUEST_TYPES: &[&str] = &[
    "hello",
    "turn",
    "cancel",
    "history.list",
    "history.get",
    "history.search",
    "history.delete",
    "agent_state.forget",
    "history.export",
    "collections.list",
    "collection.add_page",
    "collection.get",
    "collection.rename",
    "collection.remove_source",
    "collection.delete",
    "transform.run",
    "artifact.export",
    "config.get",
    "config.set",
    "config.discover",
    "config.test",
    "ping",
    "pdf.read",
    "mcp.servers",
    "prompts.list",
    "prompts.save",
    "prompts.delete",
    "tool_result",
    "approval",
];

impl Request {
    /// The wire `type` of this request.
    pub fn kind(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Turn(_) => "turn",
            Request::Cancel { .. } => "cancel",
            Request::HistoryList { .. } => "history.list",
            Request::HistoryGet { .. } => "history.get",
            Request::HistorySearch { .. } => "history.search",
            Request::HistoryDelete { .. } => "history.delete",
            Request::AgentStateForget { .. } => "agent_state.forget",
            Request::HistoryExport { .. } => "history.export",
            Request::CollectionsList { .. } => "collections.list",
            Request::CollectionAddPage { .. } => "collection.add_page",
            Request::CollectionGet { .. } => "collection.get",
            Request::CollectionRename { .. } => "collection.rename",
            Request::CollectionRemoveSource { .. } => "collection.remove_source",
            Request::CollectionDelete { .. } => "collection.delete",
            Request::TransformRun { .. } => "transform.run",
            Request::ArtifactExport { .. } => "artifact.export",
            Request::ConfigGet { .. } => "config.get",
            Request::ConfigSet { .. } => "config.set",
            Request::ConfigDiscover { .. } => "config.discover",
            Request::ConfigTest { .. } => "config.test",
            Request::Ping { .. } => "ping",
            Request::PdfRead { .. } => "pdf.read",
            Request::McpServers { .. } => "mcp.servers",
            Request::PromptsList { .. } => "prompts.list",
            Request::PromptsSave { .. } => "prompts.save",
            Request::PromptsDelete { .. } => "prompts.delete",
            Request::ToolResult(_) => "tool_result",
            Request::Approval { .. } => "approval",
        }
    }

    pub fn id(&self) -> &RequestId {
        match self {
            Request::Turn(t) => &t.id,
            Request::ToolResult(r) => &r.id,
            Request::Hello { id, .. }
            | Request::Cancel { id, .. }
            | Request::HistoryList { id, .. }
            | Request::HistoryGet { id, .. }
            | Request::HistorySearch { id, .. }
            | Request::HistoryDelete { id, .. }
            | Request::AgentStateForget { id, .. }
            | Request::HistoryExport { id, .. }
            | Request::CollectionsList { id }
            | Request::CollectionAddPage { id, .. }
            | Request::CollectionGet { id, .. }
            | Request::CollectionRename { id, .. }
            | Request::CollectionRemoveSource { id, .. }
            | Request::CollectionDelete { id, .. }
            | Request::TransformRun { id, .. }
            | Request::ArtifactExport { id, .. }
            | Request::ConfigGet { id }
            | Request::ConfigSet { id, .. }
            | Request::ConfigDiscover { id }
            | Request::ConfigTest { id, .. }
            | Request::Ping { id }
            | Request::PdfRead { id, .. }
            | Request::McpServers { id, .. }
            | Request::PromptsList { id }
            | Request::PromptsSave { id, .. }
            | Request::PromptsDelete { id, .. }
            | Request::Approval { id, .. } => id,
        }
    }
}

/// The `id` of an inbound message, if it has a usable one, so even a
/// rejected message gets an error that names it.
pub fn message_id(msg: &Map<String, Value>) -> Option<RequestId> {
    match msg.get("id") {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_ID_LEN => {
            Some(RequestId::from(s.as_str()))
        }
        _ => None,
    }
}

/// Parses an inbound message, with errors that say which field is wrong.
pub fn parse_request(msg: Map<String, Value>) -> Result<Request> {
    if message_id(&msg).is_none() {
        return Err(Error::invalid_request(format!(
            "every message needs an \"id\": a non-empty string of at most {MAX_ID_LEN} bytes"
        )));
    }
    let kind = match msg.get("type") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(Error::invalid_request(
                "every message needs a string \"type\"",
            ))
        }
    };
    if !REQUEST_TYPES.contains(&kind.as_str()) {
        return Err(Error::invalid_request(format!(
            "unknown message type \"{}\"; expected one of: {}",
            kind.chars().take(64).collect::<String>(),
            REQUEST_TYPES.join(", ")
        )));
    }
    let request: Request = serde_json::from_value(Value::Object(msg))
        .map_err(|e| Error::invalid_request(format!("invalid \"{kind}\" message: {e}")))?;
    if let Request::Hello {
        protocol: Some(p), ..
    } = &request
    {
        if p.name != WIRE_PROTOCOL_NAME || p.version != WIRE_PROTOCOL_VERSION {
            return Err(Error::new(
                ErrorCode::UnsupportedVersion,
                format!(
                    "this host speaks {WIRE_PROTOCOL_NAME} v{WIRE_PROTOCOL_VERSION}, not {} v{}: update the extension and the host together",
                    p.name, p.version
                ),
            ));
        }
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn parses_every_request_type() {
        let cases = [
            json!({"type": "hello", "id": "1", "protocol": {"name": "laika.wire", "version": 1}}),
            json!({"type": "ping", "id": "2"}),
            json!({"type": "cancel", "id": "3", "target": "t"}),
            json!({"type": "history.list", "id": "4", "limit": 5}),
            json!({"type": "history.get", "id": "5", "conversation_id": "c"}),
            json!({"type": "history.search", "id": "6", "query": "q"}),
            json!({"type": "history.delete", "id": "7", "conversation_id": "c"}),
            json!({"type": "history.export", "id": "8", "conversation_id": "c", "format": "html"}),
            json!({"type": "config.get", "id": "9"}),
            json!({"type": "config.set", "id": "10", "values": {"runtime.kind": "builtin"}}),
            json!({"type": "turn", "id": "11", "message": {"text": "hi"},
                   "task": {"name": "web.answer", "args": {}}, "observation": {}}),
            json!({"type": "tool_result", "id": "12", "call_id": "r:0", "status": "ok",
                   "result": {"links": []}}),
            json!({"type": "approval", "id": "13", "call_id": "r:0", "digest": "ab", "approved": true}),
            json!({"type": "config.discover", "id": "14"}),
            json!({"type": "config.test", "id": "15", "values": {"runtime.profile": "llama.cpp"}}),
            json!({"type": "config.test", "id": "16"}),
            json!({"type": "pdf.read", "id": "17", "url": "https://example.com/a.pdf", "data": "JVBERi0="}),
        ];
        for (i, c) in cases.into_iter().enumerate() {
            let r = parse_request(obj(c));
            assert!(r.is_ok(), "case {i}: {r:?}");
            assert_eq!(
                r.map(|r| r.id().to_string()).ok(),
                Some((i + 1).to_string())
            );
        }
    }

    #[test]
    fn rejects_with_codes() {
        let e = parse_request(obj(json!({"type": "ping"}))).err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::InvalidRequest));
        let e = parse_request(obj(json!({"type": "launch", "id": "x"}))).err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("unknown message type"));
        let e = parse_request(obj(
            json!({"type": "turn", "id": "x", "task": {"name": "web.hack"}}),
        ));
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::InvalidRequest));
        let e = parse_request(obj(
            json!({"type": "hello", "id": "x", "protocol": {"name": "laika.wire", "version": 9}}),
        ));
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::UnsupportedVersion));
    }
}

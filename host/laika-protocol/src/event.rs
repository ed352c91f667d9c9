//! Everything the host sends: one [`Event`] enum, one variant per wire
//! `type` (`docs/wire-protocol.md`), serialized once at the edge inside the
//! envelope `{type, id, reply_to}` ([`Message`]).
//!
//! Producers (the session, the turn engine) build typed events and hand them
//! to a [`Sink`]; the stdio writer and the replay harness are sinks, and so
//! will be the HTTP server's SSE stream.

use crate::agent::{
    AgentState, OperationAction, OperationStatus, StopReason, ToolError, ToolStatus,
};
use crate::citation::VerifiedCitation;
use crate::error::{Error, ErrorCode};
use crate::history::{ConversationDetail, ConversationSummary, ExportDocument, SearchHit};
use crate::ids::{ArtifactId, CallId, ConversationId, RequestId, SourceId};
use crate::limits::{Limits, MAX_RETRIES};
use crate::llmcp::TaskName;
use crate::model::RuntimeInfo;
use crate::render::ast::{Block, Doc};
use crate::tool::Executor;
use crate::tool_call::ToolOutput;
use crate::usage::ContextUsage;
use crate::verdict::{Decision, Evidence, Reason};
use crate::wire::{HostId, WireProtocol};
use schemars::{json_schema, JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A host → extension message body; the variant names the wire `type`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "hello.result")]
    Hello(Hello),
    #[serde(rename = "pong")]
    Pong {},
    #[serde(rename = "cancel.result")]
    CancelResult {
        #[schemars(with = "String")]
        target: RequestId,
        /// True when a running turn with that id was signalled; its `done`
        /// tells how it ended.
        cancelled: bool,
    },
    #[serde(rename = "history.list.result")]
    HistoryList {
        conversations: Vec<ConversationSummary>,
    },
    #[serde(rename = "history.get.result")]
    HistoryGet { conversation: ConversationDetail },
    #[serde(rename = "history.search.result")]
    HistorySearch { query: String, hits: Vec<SearchHit> },
    #[serde(rename = "history.delete.result")]
    HistoryDelete {
        conversation_id: ConversationId,
        /// Always true: deleting what is not there is `NOT_FOUND`.
        #[schemars(extend("const" = true))]
        deleted: bool,
    },
    /// What `agent_state.forget` cleared (counts; the state itself came as
    /// an `entity_patch` just before, when anything changed).
    #[serde(rename = "agent_state.forget.result")]
    AgentStateForget {
        conversation_id: ConversationId,
        assumptions: usize,
        tentative_hypotheses: usize,
        items: usize,
    },
    #[serde(rename = "history.export.result")]
    HistoryExport(HistoryExport),
    #[serde(rename = "collections.list.result")]
    CollectionsList {
        collections: Vec<crate::collection::Collection>,
        artifacts: Vec<crate::collection::ArtifactSummary>,
        /// The transforms `transform.run` makes, in the order to offer them.
        transforms: Vec<crate::collection::TransformInfo>,
    },
    #[serde(rename = "collection.get.result")]
    CollectionGet {
        collection: crate::collection::Collection,
        /// In the collection's order.
        sources: Vec<crate::collection::SourceSummary>,
    },
    #[serde(rename = "collection.rename.result")]
    CollectionRename {
        collection: crate::collection::Collection,
    },
    #[serde(rename = "collection.remove_source.result")]
    CollectionRemoveSource {
        /// As it is now (`source_count` one less).
        collection: crate::collection::Collection,
        source_id: SourceId,
    },
    #[serde(rename = "collection.delete.result")]
    CollectionDelete {
        collection_id: crate::ids::CollectionId,
        /// Always true: deleting what is not there is `NOT_FOUND`.
        #[schemars(extend("const" = true))]
        deleted: bool,
    },
    #[serde(rename = "transform.run.result")]
    TransformRun(crate::collection::TransformResult),
    #[serde(rename = "collection.add_page.result")]
    CollectionAddPage {
        collection: crate::collection::Collection,
        source_id: SourceId,
        /// The page's title as stored.
        title: String,
    },
    #[serde(rename = "artifact.export.result")]
    ArtifactExport {
        artifact_id: ArtifactId,
        title: String,
        format: crate::collection::ShareFormat,
        /// A file name for a download (`<title>.<ext>`).
        filename: String,
        mime: String,
        content: String,
    },
    #[serde(rename = "config.get.result")]
    ConfigGet { config: ConfigView },
    #[serde(rename = "config.set.result")]
    ConfigSet {
        config: ConfigView,
        saved_to: String,
        /// The runtime new turns use from now on (the sidebar's header names it).
        runtime: RuntimeInfo,
    },
    #[serde(rename = "config.discover.result")]
    ConfigDiscover {
        /// The loopback ports asked.
        ports: Vec<u16>,
        /// The model servers that answered, in `ports` order.
        servers: Vec<crate::model::ModelServer>,
    },
    #[serde(rename = "config.test.result")]
    ConfigTest(ConnectionTest),
    #[serde(rename = "pdf.read.result")]
    PdfRead(PdfRead),
    #[serde(rename = "mcp.servers.result")]
    McpServers { servers: Vec<McpServerView> },
    #[serde(rename = "prompts.list.result")]
    PromptsList {
        prompts: Vec<crate::saved_prompt::SavedPrompt>,
    },
    #[serde(rename = "prompts.save.result")]
    PromptsSave {
        prompt: crate::saved_prompt::SavedPrompt,
        /// The whole library after the save (a slot may have moved).
        prompts: Vec<crate::saved_prompt::SavedPrompt>,
    },
    #[serde(rename = "prompts.delete.result")]
    PromptsDelete {
        prompt_id: crate::ids::PromptId,
        /// Always true: deleting what is not there is `NOT_FOUND`.
        #[schemars(extend("const" = true))]
        deleted: bool,
    },
    /// The first event of a turn the host accepted: the conversation and the
    /// agent state that later `entity_patch`es apply to.
    #[serde(rename = "session")]
    Session(Session),
    #[serde(rename = "turn.started")]
    TurnStarted(TurnStarted),
    #[serde(rename = "context_usage")]
    ContextUsage(ContextUsage),
    #[serde(rename = "text_delta")]
    TextDelta(TextDelta),
    #[serde(rename = "render_delta")]
    RenderDelta(RenderDelta),
    #[serde(rename = "render_reset")]
    RenderReset(RenderReset),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "tool_call")]
    ToolCall(ToolCallProposal),
    #[serde(rename = "agent_state")]
    AgentState(AgentStateChange),
    /// A change to state the sidebar keeps (the conversation's agent
    /// state), as JSON Patch operations on what `session` gave: a tool
    /// result's during the turn, the summarizer's after the turn's `done`,
    /// still in reply to it.
    #[serde(rename = "entity_patch")]
    EntityPatch(EntityPatch),
    #[serde(rename = "operation")]
    Operation(Operation),
    /// The turn would need many model calls; it waits for the user's
    /// `approval` before it asks any.
    #[serde(rename = "estimate")]
    Estimate(Estimate),
    /// The model proposed a plan of several steps; the turn waits for the
    /// user's `approval` (with any edits) before any step runs.
    #[serde(rename = "plan")]
    Plan(PlanProposal),
    #[serde(rename = "tool_result")]
    ToolResult(ToolCallResult),
    /// The answer to an `approval` the host accepted.
    #[serde(rename = "approval.result")]
    ApprovalResult { call_id: CallId, approved: bool },
    #[serde(rename = "error")]
    Error(ErrorBody),
    #[serde(rename = "done")]
    Done(Done),
}

impl Event {
    /// The `error` event for `error`.
    pub fn error(error: &Error) -> Event {
        Event::Error(ErrorBody::of(error))
    }
}

/// An event in its envelope, as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Message<'a> {
    #[schemars(with = "HostId")]
    pub id: String,
    /// The request this answers; `null` for unsolicited messages.
    pub reply_to: Option<&'a RequestId>,
    #[serde(flatten)]
    pub event: &'a Event,
}

/// Where events go. The stdio writer frames them, replay collects them,
/// and tests record them.
pub trait Sink: Send + Sync {
    fn emit(&self, reply_to: Option<&RequestId>, event: Event);
}

/// The `host.name` of `hello.result`.
pub const HOST_NAME: &str = "laika-host";

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostInfo {
    #[schemars(extend("const" = HOST_NAME))]
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HelloLimits {
    #[schemars(range(min = 1))]
    pub max_inbound_frame: usize,
    #[schemars(range(min = 1))]
    pub max_outbound_frame: usize,
    #[schemars(range(min = crate::limits::MIN_JSON_DEPTH))]
    pub max_json_depth: usize,
    pub max_tool_calls: usize,
}

/// `hello.result`: what this host speaks and runs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Hello {
    pub protocol: WireProtocol,
    pub host: HostInfo,
    #[schemars(length(min = 1), inner(range(min = 1)))]
    pub llmcp_versions: Vec<u32>,
    pub tasks: Vec<TaskName>,
    pub capabilities: Vec<&'static str>,
    pub runtime: RuntimeInfo,
    pub limits: HelloLimits,
}

/// `history.export.result`: a JSON document, or a complete, sanitized HTML
/// page as a string (offer it as a download, never inject it).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "format", content = "export")]
pub enum HistoryExport {
    #[serde(rename = "json")]
    Json(Box<ExportDocument>),
    #[serde(rename = "html")]
    Html(String),
}

/// The runtime part of `ConfigView`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RuntimeView {
    pub kind: String,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `runtime.profile` (`openai` only); `null`: `generic`.
    pub profile: Option<String>,
    /// Whether an API key is configured; the key itself is never sent.
    pub api_key_set: bool,
}

/// The configuration without secrets, as `config.get` and `config.set` answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConfigView {
    pub runtime: RuntimeView,
    /// The settings of the other runtimes used before, kept while another
    /// is in use (`[runtimes.<kind>]`): switching back to one restores them.
    pub saved_runtimes: Vec<RuntimeView>,
    pub data_dir: String,
    pub log_full_llm: bool,
    pub allowed_origins: Vec<String>,
    pub limits: Limits,
    /// The runtime kinds this build can run.
    pub runtime_kinds: Vec<&'static str>,
    /// The kinds Settings offers: not `scripted` (tests) nor `command`
    /// (a program only the config file may name).
    pub offered_kinds: Vec<&'static str>,
    /// The `runtime.profile` values (`openai`).
    pub profiles: Vec<&'static str>,
    /// The loopback ports `config.discover` asks.
    pub discover_ports: Vec<u16>,
}

/// `pdf.read.result`: the PDF's text as an observation to send with turns
/// about it (and to add to collections). Each chunk is (part of) one page
/// and its `url` is the PDF's address with `#page=N`, so a citation names
/// and opens its page.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PdfRead {
    #[schemars(schema_with = "observation_as_sent_back")]
    pub observation: crate::observation::Observation,
    /// Pages in the document.
    #[schemars(range(min = 1))]
    pub pages: u32,
    /// Pages (1-based) with no text to read: scanned images, drawings, or
    /// pages the parser could not read.
    pub pages_without_text: Vec<u32>,
}

/// The schema of an observation the host hands the extension to send back:
/// the one requests have (`#/$defs/Observation`, where a defaulted field is
/// optional), not a second, stricter one of the same name.
fn observation_as_sent_back(_: &mut schemars::SchemaGenerator) -> Schema {
    json_schema!({ "$ref": "#/$defs/Observation" })
}

/// One configured MCP server, as Settings shows it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct McpServerView {
    pub name: String,
    /// `stdio` (a program) or `http` (a loopback endpoint).
    pub transport: String,
    /// The program or the URL.
    pub endpoint: String,
    /// Its read-only tools run without a question.
    pub trusted: bool,
    pub state: McpServerState,
    /// Why it is not connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<McpError>,
    pub tools: Vec<McpToolView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    Connected,
    Error,
}

/// A coded MCP failure (`MCP_UNAVAILABLE`, `MCP_TIMEOUT`, …).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct McpError {
    pub code: String,
    pub message: String,
}

/// One tool a server listed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct McpToolView {
    /// As the model calls it: `mcp.<server>.<tool>`.
    pub name: String,
    pub description: String,
    /// The server says it only reads (`readOnlyHint`).
    pub read_only: bool,
    /// Offered to the model; otherwise `refused` says why not.
    pub offered: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// `config.test.result`: what one short structured request to the runtime
/// gave. `ok` with the parsed `answer`, or the coded `error` (and the raw
/// reply, cut, when the model answered something unusable).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConnectionTest {
    pub ok: bool,
    /// The runtime tested (with the values applied).
    pub runtime: RuntimeInfo,
    /// The endpoint that answered, when the runtime has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    pub elapsed_ms: u64,
    /// The parsed JSON the model answered (`{"reply": …}`); absent when the
    /// runtime needs no connection (`builtin`) or the test failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub answer: Option<ConnectionAnswer>,
    /// The model's text when it was not the JSON asked for (at most 300
    /// characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// One sentence for the user.
    pub message: String,
}

/// What a connection test asks the model to answer
/// (`laika_core::connection::schema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionAnswer {
    pub reply: String,
}

/// `turn.started`: the turn has a number and a request packet.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TurnStarted {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    /// The `laika.llmcp` request packet id.
    #[schemars(with = "HostId")]
    pub request_id: String,
    pub task: TaskName,
    pub runtime: RuntimeInfo,
}

/// `text_delta`: words of the answer's block in progress, as the model
/// writes them (plain text, to append); the block's `render_delta` replaces
/// them, and a `render_reset` withdraws them with the preview.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TextDelta {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    /// Where the block will most likely stand among the render's top-level
    /// blocks.
    pub index: usize,
    #[schemars(length(min = 1))]
    pub text: String,
}

/// `render_delta`: finished top-level blocks of the streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RenderDelta {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    /// The agent loop's step whose answer this previews.
    #[schemars(range(min = 1))]
    pub step: u32,
    /// Position of the first block among the render's top-level blocks.
    pub start_index: usize,
    #[schemars(length(min = 1))]
    pub blocks: Vec<Block>,
}

/// Why a preview was withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResetReason {
    /// The attempt was invalid; another follows.
    Retry,
    /// The turn failed.
    Failed,
    /// The final answer differs from what was previewed.
    Replaced,
}

/// `render_reset`: forget the blocks sent since the last reset.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RenderReset {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    pub reason: ResetReason,
}

/// `assistant`: one step's validated, sanitized answer. A step whose answer
/// proposes tool calls is followed by them and, usually, by another step;
/// the last `assistant` of a turn is its answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AssistantMessage {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    pub response_id: String,
    pub title: String,
    pub render: Doc,
    pub citations: Vec<VerifiedCitation>,
    /// `web.extract` results (field → value, `null` when not found); `null`
    /// for other tasks.
    // Open: the fields are the user's, their values whatever the page had.
    pub data: Option<Map<String, Value>>,
    /// The turn's mode, once the user or the model stated it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::mode::Mode>,
    /// A clarifying question's choices (`clarify` only, 2–5 short replies):
    /// the sidebar shows them as buttons that send the one clicked as the
    /// next message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(min = crate::mode::MIN_CHOICES, max = crate::mode::MAX_CHOICES),
        inner(length(min = 1, max = crate::mode::MAX_CHOICE_CHARS))
    )]
    pub choices: Vec<String>,
    /// A summary's suggested follow-up questions (a model runtime's; the
    /// offline runtime suggests none): plain one-line questions without
    /// links or markup, no two alike. The sidebar shows them as buttons that
    /// ask the one clicked as the next `turn`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = crate::llmcp::MAX_FOLLOW_UPS),
        inner(length(min = 1, max = crate::llmcp::MAX_FOLLOW_UP_CHARS))
    )]
    pub follow_ups: Vec<String>,
}

/// `tool_call`: a proposed call and the gate's verdict on it, sent when its
/// turn in the step comes. An `allow` browser call runs when `agent_state`
/// says `executing` for it; an `ask` call only after an accepted `approval`;
/// a `deny` call never (its `tool_result` follows at once).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolCallProposal {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    /// The agent loop's step (one model answer and its calls), from 1.
    #[schemars(range(min = 1))]
    pub step: u32,
    /// `<response id>:<index>`.
    pub call_id: CallId,
    /// Position among the calls of its step.
    pub index: usize,
    pub name: String,
    /// As the model proposed them; `null` when it omitted them.
    // JSON, so a call the gate refused still shows what was asked.
    #[schemars(with = "Option<Map<String, Value>>")]
    pub arguments: Value,
    pub decision: Decision,
    pub reason: Reason,
    /// One sentence for the user.
    pub detail: String,
    /// For a click: the evidence the decision rested on.
    pub evidence: Option<Evidence>,
    /// The user's message asked for this action; it is asked all the same.
    pub user_asked: bool,
    /// Who runs it: the extension (`page`, `tab`) or the host (`host`).
    pub executor: Executor,
    /// SHA-256 of the name and arguments: an `approval` must repeat it.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub digest: String,
    /// The element a handle call acts on, as the observation showed it: the
    /// extension acts only if the handle still points at an element with
    /// this role and text.
    pub target: Option<ToolTarget>,
    /// For `ask`: milliseconds until the approval expires.
    pub expires_in_ms: Option<u64>,
    /// The step of the approved plan this call serves; absent outside a
    /// plan. The plan's approval approves none of its calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_step: Option<crate::plan::PlanStepRef>,
}

/// The element behind a call's `handleId`, with everything about it the
/// gate's verdict rested on (as the observation described it): the
/// extension acts only if the element still matches all of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ToolTarget {
    pub handle_id: String,
    pub role: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The key of the form the control belongs to (`form-1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autocomplete: Option<String>,
}

impl ToolTarget {
    /// The target an observed element makes.
    pub fn of(element: &crate::observation::Element) -> ToolTarget {
        ToolTarget {
            handle_id: element.handle_id.clone(),
            role: element.role.clone(),
            text: element.text.clone(),
            href: element.href.clone(),
            label: element.label.clone(),
            name: element.name.clone(),
            id: element.id.clone(),
            form: element.form.clone(),
            input_type: element.input_type.clone(),
            autocomplete: element.autocomplete.clone(),
        }
    }
}

/// `agent_state`: where the agent loop is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgentStateChange {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    pub state: AgentState,
    /// The call being executed or waiting for approval.
    pub call_id: Option<CallId>,
    /// With `executing`, for a call the host prepares before the extension
    /// runs it: `source.refresh` gets the source's `url`, `artifact.share`
    /// the export (`filename`, `mime`, `content`, `target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub input: Option<ToolOutput>,
}

/// `session`: which conversation a turn belongs to, sent before
/// `turn.started`, with the agent state as it stands (the base of the
/// turn's `entity_patch`es).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Session {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    /// The conversation had turns before this one.
    pub resumed: bool,
    /// `null` until something put state in the conversation.
    pub agent_state: Option<crate::agent_state::AgentState>,
}

/// The entity an `entity_patch` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatchedEntity {
    /// The conversation's agent state (docs/conversation.md#agent-state);
    /// `entity_id` is the conversation id.
    AgentState,
    /// A turn's plan, as its `plan` event gave it; `entity_id` is the
    /// plan's id. Patches set each step's `status` (and `message`) as it
    /// runs, and the user's edits once approved.
    Plan,
}

/// An RFC 6902 operation (the subset the host writes).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    /// Add a member, or insert into an array (`-`: append).
    Add {
        path: String,
        value: Value,
    },
    Remove {
        path: String,
    },
    /// Replace the value at `path` (`""`: the whole entity).
    Replace {
        path: String,
        value: Value,
    },
}

/// `entity_patch`: the backend's change to an entity the sidebar shows.
/// Applying `patch` to the entity as the sidebar has it (from `session`
/// and earlier patches) gives the host's state; the sidebar applies it and
/// infers nothing from the answer's text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EntityPatch {
    pub conversation_id: ConversationId,
    /// The turn whose deltas it reflects.
    #[schemars(range(min = 1))]
    pub turn: u32,
    pub source: crate::agent_state::DeltaSource,
    pub entity: PatchedEntity,
    pub entity_id: String,
    #[schemars(length(min = 1))]
    pub patch: Vec<PatchOp>,
}

/// `operation`: a human-readable line for the step list ("Clicking “Show
/// more comments”"), at its start and at its end.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Operation {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    pub call_id: CallId,
    pub action: OperationAction,
    pub title: String,
    pub status: OperationStatus,
    /// At the end: what came of it, in one sentence.
    pub message: Option<String>,
}

/// `estimate`: what the work a turn planned would cost, before any of it
/// is asked (more model calls than `limits.confirm_calls`: a page too long
/// for the model's context, read in parts). The turn waits for an
/// `approval` of `call_id` with `digest`: approved reads it all; approved
/// with `start_only` (offered when `start_chars` is set) answers from the
/// start of the page in one call; not approved ends the turn with `done`
/// (`cancelled`, no `error`) and nothing asked.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Estimate {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    /// `stage:confirm:<n>`, the turn's number.
    pub call_id: CallId,
    /// SHA-256 of what is estimated: the `approval` must repeat it.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub digest: String,
    /// Model calls the work needs, about (the parts, the rounds that
    /// combine their points when those do not fit one call, the answer).
    #[schemars(range(min = 1))]
    pub calls: usize,
    /// Parts the page is read in.
    #[schemars(range(min = 1))]
    pub parts: usize,
    /// Chars of the page's text.
    pub page_chars: usize,
    /// Model calls kept in flight at once.
    #[schemars(range(min = 1))]
    pub concurrency: usize,
    /// Seconds it would take, about, at the speed earlier turns on this
    /// runtime showed; `null` when no earlier call was timed.
    pub seconds: Option<u64>,
    /// Chars of the page's start that one call can read instead; `null`
    /// when that is not offered.
    pub start_chars: Option<usize>,
    /// Milliseconds until the question expires (then the turn ends as if
    /// declined).
    pub expires_in_ms: u64,
}

/// `plan`: the plan the model proposed for a request of several steps,
/// each step `pending`. The turn waits for an `approval` of `call_id` with
/// `digest`, whose `plan` may uncheck or reword steps: approved runs the
/// steps (each action still gated on its own), not approved ends the turn
/// with `done` (`cancelled`, no `error`). Later `entity_patch`es (`entity:
/// "plan"`) apply to this plan.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanProposal {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    /// `plan:<turn>`.
    pub call_id: CallId,
    /// SHA-256 of the plan as proposed: the `approval` must repeat it.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub digest: String,
    pub plan: crate::plan::AgentPlan,
    /// Milliseconds until the question expires (then the turn ends as if
    /// cancelled).
    pub expires_in_ms: u64,
}

/// `tool_result`: how a call ended, whoever ran it (the gate's and the
/// user's denials included).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolCallResult {
    pub conversation_id: ConversationId,
    #[schemars(range(min = 1))]
    pub turn: u32,
    #[schemars(range(min = 1))]
    pub step: u32,
    pub call_id: CallId,
    pub name: String,
    pub status: ToolStatus,
    /// One sentence for the user.
    pub summary: String,
    /// The tool's data, size-capped (app tools' answers, selection links).
    // Free-form (each tool answers its own shape), and cut to size as JSON.
    pub result: Option<Value>,
    /// Present unless `status` is `ok`.
    pub error: Option<ToolError>,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(transform = retryable_follows_code)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    /// Whether the same request may succeed if sent again later; follows
    /// from `code`.
    pub retryable: bool,
}

impl ErrorBody {
    pub fn of(error: &Error) -> ErrorBody {
        ErrorBody {
            code: error.code,
            message: error.message.clone(),
            retryable: error.code.is_retryable(),
        }
    }
}

/// `retryable` is a function of `code`: say which codes are retryable.
fn retryable_follows_code(schema: &mut Schema) {
    let retryable: Vec<&str> = error_codes()
        .into_iter()
        .filter(|c| c.is_retryable())
        .map(ErrorCode::as_str)
        .collect();
    schema.insert(
        "if".into(),
        json_schema!({ "properties": { "code": { "enum": retryable } }, "required": ["code"] })
            .into(),
    );
    schema.insert(
        "then".into(),
        json_schema!({ "properties": { "retryable": { "const": true } } }).into(),
    );
    schema.insert(
        "else".into(),
        json_schema!({ "properties": { "retryable": { "const": false } } }).into(),
    );
}

/// Every error code, read off the enum's own schema so none is forgotten.
fn error_codes() -> Vec<ErrorCode> {
    let schema = schemars::schema_for!(ErrorCode);
    // Documented variants come as `oneOf` of `const`s, bare ones as `enum`.
    let documented = schema.get("oneOf").and_then(Value::as_array).into_iter();
    let bare = schema.get("enum").and_then(Value::as_array).into_iter();
    documented
        .flatten()
        .filter_map(|c| c.get("const"))
        .chain(bare.flatten())
        .filter_map(|c| serde_json::from_value(c.clone()).ok())
        .collect()
}

/// How a turn ended, as `done` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DoneStatus {
    Ok,
    Failed,
    Cancelled,
}

/// Milliseconds spent in each phase of a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, JsonSchema)]
pub struct Timings {
    #[schemars(range(min = 0.0))]
    pub pack_ms: f64,
    #[schemars(range(min = 0.0))]
    pub runtime_ms: f64,
    #[schemars(range(min = 0.0))]
    pub validate_ms: f64,
    /// Waiting for browser tools and approvals.
    #[schemars(range(min = 0.0))]
    pub tools_ms: f64,
    #[schemars(range(min = 0.0))]
    pub store_ms: f64,
    #[schemars(range(min = 0.0))]
    pub total_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct CitationCounts {
    pub total: usize,
    pub verified: usize,
    /// `verified / total`; `null` when that is undefined (JSON has no NaN).
    #[schemars(range(min = 0.0, max = 1.0), extend("type" = ["number", "null"]))]
    pub ratio: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DecisionCounts {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
}

/// What `done` says about an answer, when there was one (the last step's,
/// with the tool calls of every step counted).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnswerSummary {
    pub response_id: String,
    pub model: String,
    /// Runtime calls it took: the first attempt plus retries.
    #[schemars(range(min = 1, max = 1 + MAX_RETRIES))]
    pub attempts: u32,
    /// The first attempt's output was accepted (`attempts == 1`).
    pub first_try_valid: bool,
    /// What the JSON extractor had to fix.
    pub repairs: Vec<String>,
    /// How many things the sanitizer removed.
    pub render_dropped: usize,
    pub citations: CitationCounts,
    pub tool_calls: DecisionCounts,
    /// Which endpoint answered (its base URL without credentials), for
    /// runtimes with several.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub endpoint: Option<String>,
}

/// `done`: always the last event of a turn, sent after the commit; a turn
/// refused before it got a number ends with one too (`turn` 0, not stored).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(transform = done_rules)]
pub struct Done {
    /// `null` when the refused request named no usable conversation.
    pub conversation_id: Option<ConversationId>,
    /// 0 for a turn refused before it got a number.
    pub turn: u32,
    /// `null` for a refused turn (no request packet was made).
    #[schemars(with = "Option<HostId>")]
    pub request_id: Option<String>,
    pub status: DoneStatus,
    /// `null` exactly when `status` is `ok`.
    pub error_code: Option<ErrorCode>,
    pub runtime: RuntimeInfo,
    /// Whether the turn is in the history.
    pub stored: bool,
    /// Why the agent loop stopped.
    pub stop_reason: StopReason,
    /// Model answers the loop got (0 when the first call failed).
    pub steps: u32,
    pub timings: Timings,
    /// Present exactly when an `assistant` event was sent.
    #[serde(flatten)]
    pub answer: Option<AnswerSummary>,
}

impl Done {
    /// The `done` of a turn refused before it got a number: failed, not
    /// stored, no step taken.
    pub fn refused(
        conversation_id: Option<ConversationId>,
        error_code: ErrorCode,
        runtime: RuntimeInfo,
    ) -> Done {
        Done {
            conversation_id,
            turn: 0,
            request_id: None,
            status: DoneStatus::Failed,
            error_code: Some(error_code),
            runtime,
            stored: false,
            stop_reason: StopReason::Failed,
            steps: 0,
            timings: Timings::default(),
            answer: None,
        }
    }
}

/// What the engine's `committed` guarantees about `done`, beyond field
/// types: the answer summary comes whole or not at all, and `status`,
/// `error_code` and `stored` agree.
fn done_rules(schema: &mut Schema) {
    let answer = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<AnswerSummary>();
    let answer_fields: Vec<Value> = answer
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let together: Map<String, Value> = answer_fields
        .iter()
        .filter_map(Value::as_str)
        .map(|field| (field.to_owned(), Value::Array(answer_fields.clone())))
        .collect();
    schema.insert("dependentRequired".into(), Value::Object(together));
    let ok = DoneStatus::Ok;
    let cancelled = DoneStatus::Cancelled;
    schema.insert(
        "allOf".into(),
        serde_json::json!([
            {
                "if": { "properties": { "status": { "const": ok } } },
                "then": {
                    "required": answer_fields,
                    "properties": { "error_code": { "type": "null" }, "stored": { "const": true } }
                },
                "else": { "properties": { "error_code": { "type": "string" } } }
            },
            {
                "if": { "properties": { "status": { "const": cancelled } } },
                "then": { "properties": { "error_code": { "const": ErrorCode::Cancelled }, "stored": { "const": true } } }
            },
            {
                "if": { "properties": { "stored": { "const": false } } },
                "then": { "properties": { "status": { "const": DoneStatus::Failed } } }
            }
        ]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_carries_type_id_and_reply_to() {
        let event = Event::CancelResult {
            target: RequestId::from("t-1"),
            cancelled: true,
        };
        let c1 = RequestId::from("c-1");
        let message = Message {
            id: "m-1".into(),
            reply_to: Some(&c1),
            event: &event,
        };
        assert_eq!(
            serde_json::to_value(&message).unwrap_or_default(),
            json!({"type": "cancel.result", "id": "m-1", "reply_to": "c-1", "target": "t-1", "cancelled": true})
        );
        let pong = Event::Pong {};
        let unsolicited = Message {
            id: "m-2".into(),
            reply_to: None,
            event: &pong,
        };
        assert_eq!(
            serde_json::to_value(&unsolicited).unwrap_or_default(),
            json!({"type": "pong", "id": "m-2", "reply_to": null})
        );
    }

    #[test]
    fn an_error_event_says_whether_a_retry_may_help() {
        let e = Event::error(&Error::new(ErrorCode::RuntimeTimeout, "slow"));
        let v = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(
            v,
            json!({"type": "error", "code": "RUNTIME_TIMEOUT", "message": "slow", "retryable": true})
        );
    }
}

//! `laika.llmcp` v1 packets: the envelope, request and response
//! (docs/llmcp.md). The host builds requests with [`RequestPacket`] and reads
//! validated model output into [`ResponsePacket`].

use crate::agent::{ToolError, ToolStatus};
use crate::agent_state::AgentState;
use crate::ids::{CallId, ConversationId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PROTOCOL_NAME: &str = "laika.llmcp";
pub const PROTOCOL_VERSION: u32 = 1;

/// Most follow-up questions a summary suggests.
pub const MAX_FOLLOW_UPS: usize = 3;
/// Longest follow-up question, in characters: one line the user can read
/// on a button and send in a click.
pub const MAX_FOLLOW_UP_CHARS: usize = 120;

/// The three tasks of v1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum TaskName {
    #[serde(rename = "web.summarize")]
    Summarize,
    #[serde(rename = "web.answer")]
    Answer,
    #[serde(rename = "web.extract")]
    Extract,
}

impl TaskName {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskName::Summarize => "web.summarize",
            TaskName::Answer => "web.answer",
            TaskName::Extract => "web.extract",
        }
    }

    pub const ALL: [TaskName; 3] = [TaskName::Summarize, TaskName::Answer, TaskName::Extract];

    /// The task spelled `name` (as [`TaskName::as_str`] spells it).
    pub fn from_name(name: &str) -> Option<TaskName> {
        TaskName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    pub name: String,
    pub version: u32,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            name: PROTOCOL_NAME.into(),
            version: PROTOCOL_VERSION,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationRef {
    pub id: ConversationId,
    pub turn: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sender {
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    pub id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Task {
    pub name: TaskName,
    // Open: each task reads its own arguments (`web.extract`'s fields, …).
    #[serde(default)]
    pub args: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Input {
    pub user_message: UserMessage,
    pub task: Task,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentSource {
    pub browser: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<String>,
}

/// One context document. `trust` is always `"untrusted"` for web content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub doc_id: String,
    pub kind: String,
    pub trust: String,
    pub source: DocumentSource,
    /// Shaped by `kind` (an observation's parts, a collection's index or
    /// source, docs/llmcp.md#context-documents), and measured and cut as JSON.
    pub content: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub documents: Vec<Document>,
    /// The conversation so far (earlier turns of this conversation), for a
    /// follow-up. Derived from pages and model answers: untrusted data.
    /// Serialized after the documents and before the transcript: the
    /// prompt's stable parts come first (see `prompt::user_prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationContext>,
    /// The approved plan the turn runs, with each step's status, and the
    /// step this request is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::PlanContext>,
    /// The agent loop's earlier steps: each call and its result, as `tool`
    /// packets, oldest first. Results carry web data, so they sit in the
    /// context with the documents (and are redacted with them in storage).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<ToolPacket>,
}

/// What a `tool` packet answers: the response that proposed the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInReplyTo {
    pub response_id: String,
    pub call_id: CallId,
}

/// A tool call's outcome, as the model is shown it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    /// One sentence: what happened.
    pub summary: String,
    /// The tool's data, size-capped (compacted away in older steps):
    /// free-form, as the tool answered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// The page after the call, when the call changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageRef>,
    /// Always `untrusted`: results come from the web and the extension.
    pub trust: String,
}

/// Where a call left the browser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    pub url: String,
    pub title: String,
}

/// A `type: "tool"` packet (`sender.role: "tool"`): one call of one step and
/// its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolPacket {
    pub protocol: Protocol,
    pub id: String,
    #[serde(rename = "type")]
    pub packet_type: String,
    pub created_at: String,
    pub conversation: ConversationRef,
    pub sender: Sender,
    pub in_reply_to: ToolInReplyTo,
    pub step: u32,
    pub tool_call: ToolCall,
    pub outcome: ToolOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Output {
    pub format: String,
}

/// A `type: "request"` packet (docs/llmcp.md#request-packet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestPacket {
    pub protocol: Protocol,
    pub id: String,
    #[serde(rename = "type")]
    pub packet_type: String,
    pub created_at: String,
    pub conversation: ConversationRef,
    pub sender: Sender,
    pub input: Input,
    pub context: Context,
    pub output: Output,
}

impl RequestPacket {
    /// A request of the agent (the host) for a JSON answer: the `type`,
    /// `sender` and `output` every such request has around its own parts.
    pub fn from_agent(
        id: String,
        created_at: String,
        conversation: ConversationRef,
        input: Input,
        context: Context,
    ) -> RequestPacket {
        RequestPacket {
            protocol: Protocol::default(),
            id,
            packet_type: "request".into(),
            created_at,
            conversation,
            sender: Sender {
                role: "agent".into(),
            },
            input,
            context,
            output: Output {
                format: "json".into(),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InReplyTo {
    pub request_id: String,
}

/// A citation as the model gives it: a quote from a document, optionally
/// pointing at a node or an element handle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub doc_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle_id: Option<String>,
    pub quote: String,
    /// Set by the host after checking the quote against the documents; a
    /// model never sends it (the response schema forbids it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assistant {
    #[serde(default)]
    pub title: String,
    /// The model's render before the sanitizer made it a `Doc`: untrusted
    /// JSON.
    pub render: Value,
    #[serde(default)]
    pub citations: Vec<Citation>,
    /// `web.extract` results: field name → value, `null` when not found
    /// (open: the values are the page's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Map<String, Value>>,
    /// A clarifying question's choices: short replies the user may send
    /// with a click (shown only in `clarify` mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// A summary's suggested follow-up questions: untrusted model text the
    /// user may ask next with a click (kept only once sanitized).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
}

/// A tool call as proposed by the model: never executed without the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// As the model proposed them, before the gate parses them into a typed
    /// call (and kept so, for the transcript and the digest).
    #[serde(default)]
    pub arguments: Value,
}

/// A `type: "response"` packet, read from schema-validated model output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsePacket {
    pub protocol: Protocol,
    pub id: String,
    #[serde(rename = "type")]
    pub packet_type: String,
    pub created_at: String,
    pub conversation: ConversationRef,
    pub sender: Sender,
    pub in_reply_to: InReplyTo,
    pub assistant: Assistant,
    /// What the model read the user as asking for; absent in packets of
    /// runtimes that left it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::mode::Mode>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// A plan for work of several steps, proposed instead of calls; the
    /// user approves it before any step runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::AgentPlan>,
}

/// One earlier turn as a follow-up's request shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationTurn {
    pub turn: u32,
    pub task: String,
    pub user: String,
    pub answer: String,
    /// The URL of the page it was asked on (its title is in `pages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    #[serde(default, skip_serializing_if = "is_ok")]
    pub status: String,
}

fn is_ok(status: &String) -> bool {
    status == "ok"
}

/// `context.conversation` of a request packet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationContext {
    /// Always `untrusted`: it repeats pages and model answers.
    pub trust: String,
    /// The rolling summary of the turns before `turns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What the model asked to remember (`memory.summary` of an earlier answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Pages the conversation was on, by title and URL (content not re-sent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageRef>,
    /// The agent state snapshot (docs/conversation.md#agent-state): what the
    /// agent knows, assumes and expects so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<AgentState>,
    /// The most recent earlier turns, oldest first.
    pub turns: Vec<ConversationTurn>,
}

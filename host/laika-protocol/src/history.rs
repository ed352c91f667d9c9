//! Chat history as plain data: the record a finished turn commits, and what
//! the store hands out, so views of it (the HTML export) stay in the pure
//! core while SQLite stays in the host.

use crate::error::Error;
use crate::ids::{CallId, ConversationId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `format` of an [`ExportDocument`].
pub const EXPORT_FORMAT: &str = "laika.history.export";
pub const EXPORT_VERSION: u32 = 1;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Ok,
    Failed,
    Cancelled,
}

impl TurnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Ok => "ok",
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
        }
    }

    /// The status spelled `name` (as [`TurnStatus::as_str`] spells it).
    pub fn from_name(name: &str) -> Option<TurnStatus> {
        match name {
            "ok" => Some(TurnStatus::Ok),
            "failed" => Some(TurnStatus::Failed),
            "cancelled" => Some(TurnStatus::Cancelled),
            _ => None,
        }
    }
}

/// Everything about one turn that goes to history.
#[derive(Debug, Clone)]
pub struct TurnRecord {
    pub conversation_id: ConversationId,
    /// The conversation's title; only the first one given is kept. Without
    /// one, the first user message (shortened) becomes the title.
    pub title: Option<String>,
    pub turn: u32,
    /// RFC 3339 UTC; stored normalized to milliseconds so text order is time order.
    pub created_at: String,
    pub task: String,
    pub page_url: Option<String>,
    pub user_message_id: String,
    pub user_text: String,
    /// laika.llmcp request as sent (URL credentials already stripped by the
    /// caller); JSON because the store redacts packets as JSON.
    pub request_packet: Value,
    /// The validated, sanitized response packet (JSON, as above).
    pub response_packet: Option<Value>,
    /// Plain text of the render, for search.
    pub answer_text: String,
    pub model_id: Option<String>,
    pub status: TurnStatus,
    /// Required for a failed turn, absent for an ok one.
    pub error: Option<Error>,
    pub attempts: u32,
    pub citations_total: u32,
    pub citations_verified: u32,
    /// `{"total_ms":…, "runtime_ms":…, …}`, stored as this JSON object
    /// (its keys in the order stored rows have them).
    pub timings: Value,
    /// `LAIKA_LOG_FULL_LLM=1`: store packets whole instead of redacted.
    pub store_full_packets: bool,
    /// The agent loop's steps, in order (empty when the turn failed before
    /// its first model call).
    pub steps: Vec<StepRecord>,
    /// The agent state deltas its tool results made, in order; the store
    /// applies them to the conversation's state with the turn.
    pub agent_state_deltas: Vec<crate::agent_state::AgentStateDelta>,
    /// The plan the turn proposed, with how far each step got.
    pub plan: Option<crate::plan::AgentPlan>,
}

/// One step of a turn's agent loop, as history keeps it. The turn's own
/// request (step 1's) and response (the last step's) are in the
/// [`TurnRecord`]; a step holds what comes in between.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    pub step: u32,
    /// The request of steps after the first (JSON: redacted as JSON by the
    /// store, like the turn's).
    pub request_packet: Option<Value>,
    /// The response of every step but the last (JSON, as above).
    pub response_packet: Option<Value>,
    /// One `tool` packet per call of the step, in order (JSON, as above).
    pub tool_packets: Vec<Value>,
}

/// One conversation in the history list.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConversationSummary {
    pub id: ConversationId,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Number of stored turns.
    pub turns: u32,
    /// Status of the latest turn.
    pub last_status: Option<TurnStatus>,
    pub page_url: Option<String>,
    pub page_origin: Option<String>,
}

/// A stored error of a failed or cancelled turn. `code` is the wire spelling
/// (`RUNTIME_TIMEOUT`, …), kept as text so codes added later still read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StoredError {
    pub code: String,
    pub message: String,
}

/// One turn of a conversation, as history shows it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TurnDetail {
    pub turn: u32,
    pub created_at: String,
    pub task: String,
    pub status: TurnStatus,
    pub error: Option<StoredError>,
    pub user_message_id: String,
    pub user_text: String,
    /// Plain text of the answer.
    pub answer_text: String,
    /// `assistant.title` of the response.
    pub answer_title: Option<String>,
    /// `assistant.render` of the response (the sanitized render AST).
    // Read back from a stored packet as JSON: older rows keep their shape.
    pub render: Option<Value>,
    /// `assistant.citations` of the response.
    // Read back as JSON, as `render`.
    pub citations: Vec<Value>,
    pub citations_total: u32,
    pub citations_verified: u32,
    /// `citations_verified / citations_total`; absent when there are none.
    pub verified_ratio: Option<f64>,
    pub model_id: Option<String>,
    pub attempts: u32,
    // As stored (older rows have other keys): JSON.
    pub timings: Value,
    /// True when the packets below went through the redaction policy.
    pub redacted: bool,
    // The stored packets, read back as JSON (older rows keep their shape).
    pub request_packet: Value,
    pub response_packet: Option<Value>,
    /// The agent loop's tool calls, by step (empty for a turn that called
    /// no tool).
    pub steps: Vec<StepDetail>,
    /// The plan the turn proposed, with how far each step got (the
    /// checklist); absent for a turn without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::AgentPlan>,
}

/// One step of a turn's agent loop, as history shows it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StepDetail {
    pub step: u32,
    pub calls: Vec<StepCall>,
}

/// One tool call of a step and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StepCall {
    pub call_id: CallId,
    pub name: String,
    // As the model proposed them, read back from the stored packet.
    pub arguments: Value,
    /// `ok`, `error`, `denied` or `timeout`.
    pub status: String,
    pub summary: String,
    pub error: Option<StoredError>,
}

impl StepDetail {
    /// Groups stored `tool` packets (in the order they were made) by step.
    pub fn from_tool_packets<'a>(packets: impl IntoIterator<Item = &'a Value>) -> Vec<StepDetail> {
        let mut steps: Vec<StepDetail> = Vec::new();
        for packet in packets {
            let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
            let step = packet.get("step").and_then(Value::as_u64).unwrap_or(0) as u32;
            let outcome = packet.get("outcome");
            let call = StepCall {
                call_id: text(packet.pointer("/in_reply_to/call_id")).into(),
                name: text(packet.pointer("/tool_call/name")),
                arguments: packet
                    .pointer("/tool_call/arguments")
                    .cloned()
                    .unwrap_or(Value::Null),
                status: text(outcome.and_then(|o| o.get("status"))),
                summary: text(outcome.and_then(|o| o.get("summary"))),
                error: outcome
                    .and_then(|o| o.get("error"))
                    .filter(|e| !e.is_null())
                    .map(|e| StoredError {
                        code: text(e.get("code")),
                        message: text(e.get("message")),
                    }),
            };
            match steps.last_mut() {
                Some(last) if last.step == step => last.calls.push(call),
                _ => steps.push(StepDetail {
                    step,
                    calls: vec![call],
                }),
            }
        }
        steps
    }
}

/// A conversation with all its turns, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConversationDetail {
    pub id: ConversationId,
    pub title: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub page_url: Option<String>,
    pub page_origin: Option<String>,
    pub turns: Vec<TurnDetail>,
}

/// A piece of a search snippet; `highlight` marks text that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SnippetPart {
    pub text: String,
    pub highlight: bool,
}

/// One turn that matches a search.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SearchHit {
    pub conversation_id: ConversationId,
    pub conversation_title: Option<String>,
    pub turn: u32,
    pub created_at: String,
    pub status: TurnStatus,
    /// Text around the match, from the user message or the answer.
    pub snippet: Vec<SnippetPart>,
    /// FTS5 bm25 rank: lower is better.
    pub rank: f64,
}

/// A conversation exported as JSON (`history.export` with `format: "json"`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExportDocument {
    #[schemars(extend("const" = EXPORT_FORMAT))]
    pub format: String,
    #[schemars(extend("const" = EXPORT_VERSION))]
    pub version: u32,
    /// RFC 3339 UTC.
    pub exported_at: String,
    pub conversation: ConversationDetail,
    /// The saved prompts, which belong to no conversation but to the same
    /// history file.
    pub prompts: Vec<crate::saved_prompt::SavedPrompt>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn turn_status_spellings() {
        for (status, text) in [
            (TurnStatus::Ok, "ok"),
            (TurnStatus::Failed, "failed"),
            (TurnStatus::Cancelled, "cancelled"),
        ] {
            assert_eq!(status.as_str(), text);
            assert_eq!(TurnStatus::from_name(text), Some(status));
            assert_eq!(serde_json::to_value(status).unwrap(), json!(text));
            assert_eq!(
                serde_json::from_value::<TurnStatus>(json!(text)).unwrap(),
                status
            );
        }
        assert_eq!(TurnStatus::from_name("OK"), None);
    }
}

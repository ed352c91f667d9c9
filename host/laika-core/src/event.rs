//! Everything the host sends: one [`Event`] enum, one variant per wire
//! `type` (`docs/wire-protocol.md`), serialized once at the edge inside the
//! envelope `{type, id, reply_to}` ([`Message`]).
//!
//! Producers (the session, the turn engine) build typed events and hand them
//! to a [`Sink`]; the stdio writer and the replay harness are sinks, and so
//! will be the HTTP server's SSE stream.

use crate::citation::VerifiedCitation;
use crate::error::{Error, ErrorCode};
use crate::gate::{Decision, Reason};
use crate::llmcp::TaskName;
use crate::model::RuntimeInfo;
use crate::pack::ContextUsage;
use crate::render::ast::{Block, Doc};
use crate::wire::ExportFormat;
use serde::Serialize;
use serde_json::{Map, Value};

/// A host → extension message body; the variant names the wire `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "hello.result")]
    Hello(Hello),
    #[serde(rename = "pong")]
    Pong {},
    #[serde(rename = "cancel.result")]
    CancelResult { target: String, cancelled: bool },
    #[serde(rename = "history.list.result")]
    HistoryList { conversations: Value },
    #[serde(rename = "history.get.result")]
    HistoryGet { conversation: Value },
    #[serde(rename = "history.search.result")]
    HistorySearch { query: String, hits: Value },
    #[serde(rename = "history.delete.result")]
    HistoryDelete {
        conversation_id: String,
        deleted: bool,
    },
    #[serde(rename = "history.export.result")]
    HistoryExport { format: ExportFormat, export: Value },
    #[serde(rename = "config.get.result")]
    ConfigGet { config: Value },
    #[serde(rename = "config.set.result")]
    ConfigSet { config: Value, saved_to: String },
    #[serde(rename = "turn.started")]
    TurnStarted(TurnStarted),
    #[serde(rename = "context_usage")]
    ContextUsage(ContextUsage),
    #[serde(rename = "render_delta")]
    RenderDelta(RenderDelta),
    #[serde(rename = "render_reset")]
    RenderReset(RenderReset),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "tool_call")]
    ToolCall(ToolCallProposal),
    #[serde(rename = "error")]
    Error(ErrorBody),
    #[serde(rename = "done")]
    Done(Done),
}

impl Event {
    /// The `error` event for `error`.
    pub fn error(error: &Error) -> Event {
        Event::Error(ErrorBody {
            code: error.code,
            message: error.message.clone(),
            retryable: error.code.is_retryable(),
        })
    }
}

/// An event in its envelope, as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message<'a> {
    pub id: String,
    /// The request this answers; `null` for unsolicited messages.
    pub reply_to: Option<&'a str>,
    #[serde(flatten)]
    pub event: &'a Event,
}

/// Where events go. The stdio writer frames them, replay collects them,
/// and tests record them.
pub trait Sink: Send + Sync {
    fn emit(&self, reply_to: Option<&str>, event: Event);
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NameVersion {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WireProtocolVersion {
    pub name: &'static str,
    pub version: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HelloLimits {
    pub max_inbound_frame: usize,
    pub max_outbound_frame: usize,
    pub max_json_depth: usize,
    pub max_tool_calls: usize,
}

/// `hello.result`: what this host speaks and runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hello {
    pub protocol: WireProtocolVersion,
    pub host: NameVersion,
    pub llmcp_versions: Vec<u32>,
    pub tasks: Vec<TaskName>,
    pub capabilities: Vec<&'static str>,
    pub runtime: RuntimeInfo,
    pub limits: HelloLimits,
}

/// `turn.started`: the turn has a number and a request packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnStarted {
    pub conversation_id: String,
    pub turn: u32,
    pub request_id: String,
    pub task: TaskName,
    pub runtime: RuntimeInfo,
}

/// `render_delta`: finished top-level blocks of the streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenderDelta {
    pub conversation_id: String,
    pub turn: u32,
    /// Position of the first block among the render's top-level blocks.
    pub start_index: usize,
    pub blocks: Vec<Block>,
}

/// Why a preview was withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenderReset {
    pub conversation_id: String,
    pub turn: u32,
    pub reason: ResetReason,
}

/// `assistant`: the validated, sanitized answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssistantMessage {
    pub conversation_id: String,
    pub turn: u32,
    pub response_id: String,
    pub title: String,
    pub render: Doc,
    pub citations: Vec<VerifiedCitation>,
    pub data: Option<Map<String, Value>>,
}

/// `tool_call`: a proposed call and the gate's verdict on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallProposal {
    pub conversation_id: String,
    pub turn: u32,
    /// `<response id>:<index>`.
    pub call_id: String,
    pub index: usize,
    pub name: String,
    pub arguments: Value,
    pub decision: Decision,
    pub reason: Reason,
    pub detail: String,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
}

/// How a turn ended, as `done` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DoneStatus {
    Ok,
    Failed,
    Cancelled,
}

/// Milliseconds spent in each phase of a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timings {
    pub pack_ms: f64,
    pub runtime_ms: f64,
    pub validate_ms: f64,
    pub store_ms: f64,
    pub total_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CitationCounts {
    pub total: usize,
    pub verified: usize,
    pub ratio: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DecisionCounts {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
}

/// What `done` says about an answer, when there was one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerSummary {
    pub response_id: String,
    pub model: String,
    pub attempts: u32,
    pub first_try_valid: bool,
    pub repairs: Vec<String>,
    pub render_dropped: usize,
    pub citations: CitationCounts,
    pub tool_calls: DecisionCounts,
    /// Which endpoint answered, for runtimes with several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

/// `done`: always the last event of a started turn, sent after the commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Done {
    pub conversation_id: String,
    pub turn: u32,
    pub request_id: String,
    pub status: DoneStatus,
    pub error_code: Option<ErrorCode>,
    pub runtime: RuntimeInfo,
    pub stored: bool,
    pub timings: Timings,
    #[serde(flatten)]
    pub answer: Option<AnswerSummary>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_carries_type_id_and_reply_to() {
        let event = Event::CancelResult {
            target: "t-1".into(),
            cancelled: true,
        };
        let message = Message {
            id: "m-1".into(),
            reply_to: Some("c-1"),
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

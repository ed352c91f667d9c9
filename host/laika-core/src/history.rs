//! What history keeps of a turn: the record a finished turn commits.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

    /// The status [`TurnStatus::as_str`] spells `text`.
    pub fn parse(text: &str) -> Option<TurnStatus> {
        [TurnStatus::Ok, TurnStatus::Failed, TurnStatus::Cancelled]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// Everything about one turn that goes to history.
#[derive(Debug, Clone)]
pub struct TurnRecord {
    pub conversation_id: String,
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
    /// laika.llmcp request as sent (URL credentials already stripped by the caller).
    pub request_packet: Value,
    /// The validated, sanitized response packet.
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
    /// `{"total_ms":…, "runtime_ms":…, …}`
    pub timings: Value,
    /// `LAIKA_LOG_FULL_LLM=1`: store packets whole instead of redacted.
    pub store_full_packets: bool,
}

//! What the store knows about a conversation before a new turn: its earlier
//! turns, rolling summary, memory, pages and agent state. What of it a
//! follow-up's request carries is `llmcp::ConversationContext`, assembled by
//! `laika_core::conversation`.

use crate::agent_state::AgentState;
use crate::llmcp::PageRef;
use serde::{Deserialize, Serialize};

/// Turns kept verbatim by default (docs/conversation.md#recent-turns).
pub const DEFAULT_RECENT_TURNS: usize = 8;
/// A rolling summary is due once this many turns are outside one
/// (docs/conversation.md#rolling-summary).
pub const DEFAULT_SUMMARY_AFTER_TURNS: usize = 20;
/// …or once their questions and answers exceed this many chars.
pub const DEFAULT_SUMMARY_AFTER_CHARS: usize = 5_000;

/// One earlier turn, as the store hands it over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PastTurn {
    pub turn: u32,
    pub task: String,
    pub user_text: String,
    /// The answer as plain text (empty for a failed turn).
    pub answer_text: String,
    /// `ok`, `failed` or `cancelled`.
    pub status: String,
    /// The page the turn was asked on.
    pub page: Option<PageRef>,
    /// One line per tool call: `name → status: summary`.
    pub tools: Vec<String>,
}

/// The stored rolling summary of a conversation's older turns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSummary {
    /// 1 for the first summary of a conversation, then one more each time.
    pub version: u32,
    /// The last turn it covers.
    pub through_turn: u32,
    pub text: String,
}

/// What the store knows about a conversation before a new turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// Earlier turns not covered by `summary`, oldest first.
    pub turns: Vec<PastTurn>,
    /// The latest rolling summary, if one was made.
    pub summary: Option<StoredSummary>,
    /// The latest `memory.summary` a model answer carried.
    pub memory: Option<String>,
    /// Every page the conversation was on, in order of first visit.
    pub pages: Vec<PageRef>,
    /// The conversation's agent state (docs/conversation.md#agent-state), if it
    /// has one.
    pub agent_state: Option<AgentState>,
}

impl History {
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
            && self.summary.is_none()
            && self.memory.is_none()
            && self.agent_state.as_ref().is_none_or(AgentState::is_empty)
    }
}

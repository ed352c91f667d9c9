//! The agent state of a conversation (docs/conversation.md#agent-state), in
//! the documented shapes and field names, and the deltas that change it
//! (`session` and `entity_patch` in docs/wire-protocol.md). How a delta is applied, and where deltas come
//! from, is `laika_core::agent_state`.

use crate::ids::ConversationId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an item is (`'task' | 'doc' | 'note' | 'idea' | 'question'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    Task,
    Doc,
    Note,
    Idea,
    Question,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    Active,
    Resolved,
    Discarded,
}

/// A provisional item of the scratchpad (`AgentStateItem`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentStateItem {
    pub id: String,
    pub kind: ItemKind,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    pub status: ItemStatus,
    #[serde(
        rename = "relatedEntityIds",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub related_entity_ids: Vec<String>,
    /// Set by the host when the item is added (a model's value is ignored);
    /// always set in a stored state (left out of a model's context).
    #[serde(
        rename = "createdAt",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub created_at: String,
    #[serde(
        rename = "updatedAt",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub updated_at: String,
}

/// `Partial<AgentStateItem>`: the fields an `update` changes (the id and
/// the times are the host's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ItemKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    #[serde(
        rename = "relatedEntityIds",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub related_entity_ids: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Entity {
    pub id: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Dependency {
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CurrentUnderstanding {
    pub entities: Vec<Entity>,
    pub dependencies: Vec<Dependency>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Assumption {
    pub id: String,
    pub hypothesis: String,
    /// 0 to 1; 0 is a retracted assumption (kept, never deleted).
    pub confidence: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Expectation {
    /// The action it is about; one expectation per action.
    pub action: String,
    pub expected_outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TentativeHypothesis {
    pub id: String,
    pub hypothesis: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The agent state of one conversation (`AgentState`; `sessionId` is
/// the conversation id). Its schema name keeps it apart from the agent
/// loop's `agent_state` phase (`agent::AgentState`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "ConversationAgentState")]
pub struct AgentState {
    #[serde(rename = "sessionId")]
    pub session_id: ConversationId,
    #[serde(default)]
    pub current_understanding: CurrentUnderstanding,
    #[serde(default)]
    pub assumptions: Vec<Assumption>,
    #[serde(default)]
    pub expectations: Vec<Expectation>,
    #[serde(default)]
    pub tentative_hypotheses: Vec<TentativeHypothesis>,
    #[serde(default)]
    pub items: Vec<AgentStateItem>,
    #[serde(
        rename = "lastSummarizedAt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub last_summarized_at: Option<String>,
}

/// Where a delta came from (kept with each applied delta for audit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeltaSource {
    /// A tool result, during the turn (deterministic).
    Tool,
    /// The summarizer after `done` (a model, or extractive).
    Summarizer,
    /// The user, from the sidebar (`agent_state.forget`).
    User,
    /// The host running an approved plan (`entity: "plan"` patches only).
    Plan,
}

impl DeltaSource {
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaSource::Tool => "tool",
            DeltaSource::Summarizer => "summarizer",
            DeltaSource::User => "user",
            DeltaSource::Plan => "plan",
        }
    }
}

/// One change to the items (`AgentStateItemUpdate`, docs/conversation.md#shapes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum AgentStateItemUpdate {
    Add {
        item: AgentStateItem,
    },
    Update {
        id: String,
        patch: ItemPatch,
    },
    /// Marks the item `discarded`: items are never deleted.
    Remove {
        id: String,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UnderstandingUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entities: Option<Vec<Entity>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<Dependency>>,
}

/// Upserts to the state's lists (`AgentStateUpdate`, docs/conversation.md#shapes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentStateUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_understanding: Option<UnderstandingUpdate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumptions: Option<Vec<Assumption>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectations: Option<Vec<Expectation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tentative_hypotheses: Option<Vec<TentativeHypothesis>>,
}

/// One delta, its two parts named as the summarizer's output names them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentStateDelta {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_state_item_updates: Vec<AgentStateItemUpdate>,
    #[serde(default)]
    pub agent_state_updates: AgentStateUpdate,
}

impl AgentStateDelta {
    pub fn is_empty(&self) -> bool {
        let u = &self.agent_state_updates;
        self.agent_state_item_updates.is_empty()
            && u.current_understanding.as_ref().is_none_or(|c| {
                c.entities.as_ref().is_none_or(Vec::is_empty)
                    && c.dependencies.as_ref().is_none_or(Vec::is_empty)
            })
            && u.assumptions.as_ref().is_none_or(Vec::is_empty)
            && u.expectations.as_ref().is_none_or(Vec::is_empty)
            && u.tentative_hypotheses.as_ref().is_none_or(Vec::is_empty)
    }
}

impl AgentState {
    /// An empty state for conversation `session_id`.
    pub fn new(session_id: &ConversationId) -> Self {
        AgentState {
            session_id: session_id.clone(),
            ..AgentState::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.current_understanding.entities.is_empty()
            && self.current_understanding.dependencies.is_empty()
            && self.assumptions.is_empty()
            && self.expectations.is_empty()
            && self.tentative_hypotheses.is_empty()
            && self.items.is_empty()
    }
}

//! A conversation's agent state (docs/conversation.md#agent-state): one
//! snapshot per conversation, changed by applying deltas, every applied
//! delta kept with what was refused of it, so each change can be audited;
//! and by the user's "forget what you assumed", which removes what deltas
//! never may (the assumptions) and is logged rather than kept as a delta.
//!
//! A tool result's deltas are applied in the transaction that stores their
//! turn; the summarizer's after `done` in their own. Secrets are scrubbed
//! from both before they are written, like every other stored string. A
//! snapshot that no longer reads as an agent state is never overwritten:
//! the deltas are skipped (and logged) instead.

use super::{sqlite, Store};
use laika_core::agent_state::Forgotten;
use laika_protocol::agent_state::{AgentState, AgentStateDelta, DeltaSource};
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::ids::ConversationId;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::Serialize;
use serde_json::Value;

/// The tables keyed by conversation that this module writes.
pub(super) const TABLES: [&str; 2] = ["agent_state_deltas", "agent_state"];

impl Store {
    /// The conversation's agent state; `None` if it has none (or its stored
    /// snapshot no longer reads, which is logged and left as it is).
    pub fn agent_state(&self, conversation_id: &ConversationId) -> Result<Option<AgentState>> {
        match read(&self.conn, conversation_id).map_err(sqlite)? {
            Snapshot::Missing => Ok(None),
            Snapshot::Unreadable => Ok(None),
            Snapshot::Found(state) => Ok(Some(state)),
        }
    }

    /// Applies `deltas` to the conversation's agent state for `turn` and
    /// stores the new snapshot; returns it.
    pub fn apply_agent_state(
        &mut self,
        conversation_id: &ConversationId,
        turn: u32,
        source: DeltaSource,
        deltas: &[AgentStateDelta],
        now: &str,
    ) -> Result<AgentState> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let state = apply_in(&tx, conversation_id, turn, source, deltas, now)
            .map_err(sqlite)?
            .ok_or_else(|| {
                Error::store(
                    "the conversation's stored agent state does not read; it was left as it is",
                )
            })?;
        tx.commit().map_err(sqlite)?;
        Ok(state)
    }

    /// "Forget what you assumed" on the conversation's stored state
    /// (`laika_core::agent_state::forget`): the state before and after,
    /// `None` when there is none yet. An unknown conversation is
    /// NOT_FOUND; a stored state that does not read is left as it is.
    pub fn forget_assumptions(
        &mut self,
        conversation_id: &ConversationId,
        now: &str,
    ) -> Result<Option<(AgentState, AgentState, Forgotten)>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let known: bool = tx
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM conversations WHERE id = ?1)")
            .map_err(sqlite)?
            .query_row([conversation_id.as_str()], |r| r.get(0))
            .map_err(sqlite)?;
        if !known {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("no conversation {conversation_id}"),
            ));
        }
        let before = match read(&tx, conversation_id).map_err(sqlite)? {
            Snapshot::Missing => return Ok(None),
            Snapshot::Unreadable => {
                return Err(Error::store(
                    "the conversation's stored agent state does not read; it was left as it is",
                ))
            }
            Snapshot::Found(state) => state,
        };
        let mut after = before.clone();
        let forgotten = laika_core::agent_state::forget(&mut after, now);
        tx.prepare_cached(
            "UPDATE agent_state SET state_json = ?2, updated_at = ?3 WHERE conversation_id = ?1",
        )
        .map_err(sqlite)?
        .execute(params![conversation_id.as_str(), scrubbed(&after), now])
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(Some((before, after, forgotten)))
    }

    /// Every applied delta of a conversation, oldest first: (turn, source,
    /// delta, refused operations).
    pub fn agent_state_deltas(
        &self,
        conversation_id: &ConversationId,
    ) -> Result<Vec<(u32, String, Value, Value)>> {
        let conversation_id = conversation_id.as_str();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT turn, source, delta_json, refused_json FROM agent_state_deltas
                 WHERE conversation_id = ?1 ORDER BY seq",
            )
            .map_err(sqlite)?;
        let rows = stmt
            .query_map([conversation_id], |r| {
                let json = |i: usize| -> rusqlite::Result<Value> {
                    Ok(serde_json::from_str(&r.get::<_, String>(i)?).unwrap_or(Value::Null))
                };
                Ok((r.get(0)?, r.get(1)?, json(2)?, json(3)?))
            })
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sqlite)
    }
}

enum Snapshot {
    Missing,
    Unreadable,
    Found(AgentState),
}

fn read(conn: &Connection, conversation_id: &ConversationId) -> rusqlite::Result<Snapshot> {
    let conversation_id = conversation_id.as_str();
    let json: Option<String> = conn
        .prepare_cached("SELECT state_json FROM agent_state WHERE conversation_id = ?1")?
        .query_row([conversation_id], |r| r.get(0))
        .optional()?;
    Ok(match json {
        None => Snapshot::Missing,
        Some(json) => match serde_json::from_str(&json) {
            Ok(state) => Snapshot::Found(state),
            Err(e) => {
                tracing::warn!("a stored agent state does not read: {e}");
                Snapshot::Unreadable
            }
        },
    })
}

/// Applies `deltas` inside the caller's transaction: the new snapshot, or
/// `None` when the stored one does not read (then nothing is written).
/// Refused operations are logged and kept with their delta.
pub(super) fn apply_in(
    conn: &Connection,
    conversation_id: &ConversationId,
    turn: u32,
    source: DeltaSource,
    deltas: &[AgentStateDelta],
    now: &str,
) -> rusqlite::Result<Option<AgentState>> {
    let mut state = match read(conn, conversation_id)? {
        Snapshot::Unreadable => return Ok(None),
        Snapshot::Missing => AgentState::new(conversation_id),
        Snapshot::Found(state) => state,
    };
    if deltas.is_empty() {
        return Ok(Some(state));
    }
    let mut insert = conn.prepare_cached(
        "INSERT INTO agent_state_deltas
           (conversation_id, turn, source, delta_json, refused_json, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for delta in deltas {
        let refused: Vec<Value> = laika_core::agent_state::apply(&mut state, delta, now)
            .into_iter()
            .map(|e| {
                tracing::warn!(code = %e.code, source = source.as_str(), "an agent state change was refused: {}", e.message);
                serde_json::json!({"code": e.code, "message": e.message})
            })
            .collect();
        insert.execute(params![
            conversation_id.as_str(),
            turn,
            source.as_str(),
            scrubbed(delta),
            scrubbed(&refused),
            now
        ])?;
    }
    if source == DeltaSource::Summarizer {
        state.last_summarized_at = Some(now.to_owned());
    }
    // Scrubbed like the rows above; what is kept is what the store holds.
    let stored = scrubbed(&state);
    if let Ok(scrubbed_state) = serde_json::from_str::<AgentState>(&stored) {
        state = scrubbed_state;
    }
    conn.prepare_cached(
        "INSERT INTO agent_state (conversation_id, state_json, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(conversation_id) DO UPDATE SET
           state_json = excluded.state_json, updated_at = excluded.updated_at",
    )?
    .execute(params![conversation_id.as_str(), stored, now])?;
    Ok(Some(state))
}

/// `value` as stored JSON ([`super::scrub::json`]); what cannot be
/// serialized is stored as `null`.
fn scrubbed<T: Serialize>(value: &T) -> String {
    super::scrub::json(value).unwrap_or_else(|_| Value::Null.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::agent_state::{AgentStateUpdate, Assumption};

    fn assume(id: &str, confidence: f64) -> AgentStateDelta {
        AgentStateDelta {
            agent_state_updates: AgentStateUpdate {
                assumptions: Some(vec![Assumption {
                    id: id.into(),
                    hypothesis: format!("h {id}"),
                    confidence,
                    evidence: Vec::new(),
                }]),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn an_unreadable_snapshot_is_never_overwritten() {
        let mut store = Store::open_in_memory().unwrap();
        store
            .conn
            .execute(
                "INSERT INTO conversations (id, created_at) VALUES ('c', 'T0')",
                [],
            )
            .unwrap();
        store
            .apply_agent_state(
                &"c".into(),
                1,
                DeltaSource::Tool,
                &[assume("a1", 0.5)],
                "T1",
            )
            .unwrap();
        store
            .conn
            .execute(
                "UPDATE agent_state SET state_json = '{\"broken\": ' WHERE conversation_id = 'c'",
                [],
            )
            .unwrap();
        assert_eq!(store.agent_state(&"c".into()).unwrap(), None);
        let err = store
            .apply_agent_state(
                &"c".into(),
                2,
                DeltaSource::Summarizer,
                &[assume("a2", 0.5)],
                "T2",
            )
            .unwrap_err();
        assert_eq!(err.code, laika_protocol::error::ErrorCode::StoreFailed);
        let kept: String = store
            .conn
            .query_row("SELECT state_json FROM agent_state", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, "{\"broken\": ");
        assert_eq!(store.agent_state_deltas(&"c".into()).unwrap().len(), 1);
    }
}

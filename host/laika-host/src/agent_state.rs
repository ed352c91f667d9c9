//! The agent state's end-of-turn reconciliation
//! (docs/conversation.md#where-deltas-come-from-and-when), run after `done` on
//! the turn's worker thread, like the rolling summary, so the stream never
//! waits for it.
//!
//! When the rolling summary's model proposed agent state deltas with it,
//! those are applied. Else, when the rolling summary has just been written
//! by a model (so, at the
//! summary's pace rather than after every turn: a call after each answer
//! would queue before the user's follow-up and evict the server's prompt
//! cache), that summarizer is asked for deltas with the agent state's
//! prompt, given the current state and the turn just finished. Other turns,
//! failed or cancelled ones, and a model answer that is not a JSON object get
//! the extractive delta (the question as an item, its page as an entity). The
//! delta is applied and stored (`Store::apply_agent_state`), and the change
//! goes out as an `entity_patch` in reply to the turn, after its `done`. Nothing here fails a turn or loses stored state: what goes
//! wrong is logged.

use crate::store::Store;
use laika_core::agent_state;
use laika_core::ambient::Ambient;
use laika_core::runtime::Runtime;
use laika_protocol::agent_state::{AgentState, AgentStateDelta, DeltaSource};
use laika_protocol::conversation::PastTurn;
use laika_protocol::event::Sink;
use laika_protocol::ids::{ConversationId, RequestId};
use laika_runtime::{CancelToken, SystemAmbient};
use serde_json::json;
use std::sync::Mutex;

/// Reconciles the agent state of `conversation_id` with its latest turn and
/// sends the change to `sink` as an `entity_patch`, in reply to the turn
/// request `reply_to`.
pub fn after_turn(
    store: &Mutex<Store>,
    (summarizer, proposed): (Option<&dyn Runtime>, Option<AgentStateDelta>),
    conversation_id: &ConversationId,
    (sink, reply_to): (&dyn Sink, &RequestId),
) {
    let loaded = store.lock().map_err(|_| None).and_then(|s| {
        s.history(conversation_id)
            .map_err(Some)
            .map(|h| (h.turns.last().cloned(), h.agent_state))
    });
    // `before` is what the sidebar has: the turn's `session` state with the
    // turn's own patches applied.
    let (turn, before) = match loaded {
        Ok((Some(turn), state)) => (turn, state),
        Ok((None, _)) => return,
        Err(Some(e)) => {
            tracing::warn!(code = %e.code, "agent state not updated: {}", e.chain());
            return;
        }
        Err(None) => {
            tracing::warn!("agent state not updated: the store lock was poisoned");
            return;
        }
    };
    // A failed or cancelled turn is not worth a model call (its runtime may
    // be what failed): its question is recorded as still open.
    let state = before
        .clone()
        .unwrap_or_else(|| AgentState::new(conversation_id));
    let delta = match (proposed.filter(|d| !d.is_empty()), summarizer) {
        (Some(delta), _) => delta,
        (None, Some(model)) if turn.status == "ok" => {
            ask_model(model, conversation_id, &state, &turn)
                .unwrap_or_else(|| agent_state::extractive_delta(&turn))
        }
        _ => agent_state::extractive_delta(&turn),
    };
    let now = SystemAmbient.now_iso8601();
    let applied = store.lock().map_err(|_| None).and_then(|mut s| {
        s.apply_agent_state(
            conversation_id,
            turn.turn,
            DeltaSource::Summarizer,
            &[delta],
            &now,
        )
        .map_err(Some)
    });
    match applied {
        Ok(after) => {
            let patch = laika_core::entity_patch::agent_state_patch(
                conversation_id,
                turn.turn,
                DeltaSource::Summarizer,
                before.as_ref(),
                &after,
            );
            if let Some(patch) = patch {
                sink.emit(Some(reply_to), patch);
            }
        }
        Err(Some(e)) => tracing::warn!(code = %e.code, "agent state not saved: {}", e.chain()),
        Err(None) => tracing::warn!("agent state not saved: the store lock was poisoned"),
    }
}

/// Asks the turn's model for the state's deltas; `None` when it fails or
/// answers something that is not a JSON object (entries of the wrong shape
/// are dropped and logged).
fn ask_model(
    runtime: &dyn Runtime,
    conversation_id: &ConversationId,
    state: &AgentState,
    turn: &PastTurn,
) -> Option<AgentStateDelta> {
    let request = crate::summarize::summarizer_request(
        conversation_id,
        turn.turn,
        agent_state::SUMMARIZER_PROMPT,
        agent_state::summarizer_input(state, turn),
        json!({
            "type": "object",
            "properties": {
                "agent_state_item_updates": {"type": "array"},
                "agent_state_updates": {"type": "object"}
            }
        }),
    );
    let reply = match runtime.complete(&request, &CancelToken::default(), &mut |_| {}) {
        Ok(reply) => reply,
        Err(e) => {
            tracing::warn!(code = %e.code, "the agent state summarizer failed: {}", e.chain());
            return None;
        }
    };
    match agent_state::parse_delta(&reply.text) {
        Ok((delta, dropped)) => {
            for note in dropped {
                tracing::warn!("an agent state entry from the model was dropped: {note}");
            }
            Some(delta)
        }
        Err(e) => {
            tracing::warn!(code = %e.code, "{}", e.message);
            None
        }
    }
}

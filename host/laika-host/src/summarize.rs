//! The rolling summary (docs/conversation.md#rolling-summary), made after a
//! turn's `done` on the turn's worker thread, so the stream never waits for it.
//!
//! When the conversation's unsummarized turns pass a trigger
//! (`limits.summary_after_turns`, `summary_after_chars`, more turns than
//! the verbatim window, or a block larger than the conversation's share of
//! the turn's token budget), the older ones are folded into a new version
//! of the summary (`Store::save_summary`; every version is kept for audit).
//!
//! The summarizer is the `[summarizer]` runtime when the config has one,
//! else the turn's own. A model runtime is asked with the summarizer prompt;
//! the builtin runtime — and, as the turn's own, the scripted and command
//! runtimes, whose answers are the turn's — and any model answer that is
//! not a usable summary get the extractive summary instead. Nothing here
//! fails a turn: a summary not made is logged and tried again after the
//! next one.

use crate::config::Config;
use crate::store::Store;
use crate::turn::Stored;
use laika_core::conversation::{self, Summarized};
use laika_core::model::ModelRequest;
use laika_core::runtime::Runtime;
use laika_protocol::conversation::PastTurn;
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::TaskName;
use laika_runtime::{CancelToken, SystemAmbient};
use serde_json::json;
use std::sync::Mutex;

/// Who writes summaries and the agent state's model deltas: the
/// `[summarizer]` runtime when the config has one, else the turn's own.
pub struct Summarizer<'a> {
    configured: Option<std::sync::Arc<dyn Runtime>>,
    turns: &'a dyn Runtime,
}

impl<'a> Summarizer<'a> {
    pub fn choose(config: &Config, turns: &'a dyn Runtime) -> Summarizer<'a> {
        let configured = config.summarizer.as_ref().and_then(|c| {
            laika_runtime::from_config(c)
                .map_err(
                    |e| tracing::warn!(code = %e.code, "the [summarizer] runtime: {}", e.chain()),
                )
                .ok()
        });
        Summarizer { configured, turns }
    }

    /// The model to ask; `None` when summaries are extractive: the builtin
    /// runtime, and — as the turn's own — the scripted and command runtimes,
    /// whose answers are the turn's.
    pub fn model(&self) -> Option<&dyn Runtime> {
        match &self.configured {
            Some(r) => (r.info().kind != "builtin").then_some(r.as_ref()),
            None => (!matches!(
                self.turns.info().kind.as_str(),
                "builtin" | "scripted" | "command"
            ))
            .then_some(self.turns),
        }
    }
}

/// Folds the older turns of `conversation_id` into a new rolling summary if
/// one is due. Returns it when it was made (so the summarizer has just
/// run), with the agent state deltas a model proposed alongside.
pub fn after_turn(
    store: &Mutex<Store>,
    summarizer: &Summarizer<'_>,
    config: &Config,
    turn: &Stored,
) -> Option<Summarized> {
    let conversation_id = &turn.conversation_id;
    let history = store.lock().ok().and_then(|s| {
        s.history(conversation_id)
            .map_err(|e| tracing::warn!(code = %e.code, "no rolling summary: {}", e.chain()))
            .ok()
    })?;
    let limits = &config.limits;
    let through = conversation::summary_due(
        &history,
        limits.recent_turns,
        limits.summary_after_turns,
        limits.summary_after_chars,
        turn.conversation_share,
    )?;
    let (window, kept): (Vec<PastTurn>, Vec<PastTurn>) = history
        .turns
        .iter()
        .cloned()
        .partition(|t| t.turn <= through);
    let kept: Vec<u32> = kept.iter().map(|t| t.turn).collect();
    let previous = history.summary.as_ref().map(|s| s.text.as_str());
    let input =
        conversation::summarizer_input(previous, &window, &kept, history.agent_state.as_ref());
    let from_model = summarizer.model().and_then(|model| {
        let info = model.info();
        ask_model(model, conversation_id, through, input, (&window, &kept))
            .map(|summarized| (summarized, format!("{}:{}", info.kind, info.model)))
    });
    let (summarized, made_by) = from_model.unwrap_or_else(|| {
        (
            Summarized::new(
                conversation::extractive_summary(previous, &window),
                &window,
                &kept,
            ),
            "builtin".to_owned(),
        )
    });
    let saved = store.lock().map_err(|_| None).and_then(|mut s| {
        s.save_summary(
            conversation_id,
            through,
            &summarized.summary,
            &made_by,
            &laika_core::ambient::Ambient::now_iso8601(&SystemAmbient),
        )
        .map_err(Some)
    });
    match saved {
        Ok(summary) => tracing::info!(
            version = summary.version,
            through_turn = through,
            made_by = %made_by,
            kept = %summarized.kept_message_ids.join(","),
            dropped = %summarized.dropped_message_ids.join(","),
            "rolling summary saved"
        ),
        Err(Some(e)) => tracing::warn!(code = %e.code, "rolling summary not saved: {}", e.chain()),
        Err(None) => tracing::warn!("rolling summary not saved: the store lock was poisoned"),
    }
    Some(summarized)
}

/// Asks the turn's model for the summary; `None` when it fails or answers
/// something unusable.
fn ask_model(
    runtime: &dyn Runtime,
    conversation_id: &ConversationId,
    through: u32,
    input: String,
    (window, kept): (&[PastTurn], &[u32]),
) -> Option<Summarized> {
    let request = summarizer_request(
        conversation_id,
        through,
        conversation::SUMMARIZER_PROMPT,
        input,
        json!({
            "type": "object",
            "required": ["summary"],
            "properties": {
                "summary": {"type": "string", "maxLength": conversation::SUMMARY_CHARS},
                "kept_message_ids": {"type": "array", "items": {"type": "string"}},
                "dropped_message_ids": {"type": "array", "items": {"type": "string"}},
                "agent_state_item_updates": {"type": "array"},
                "agent_state_updates": {"type": "object"}
            }
        }),
    );
    match runtime.complete(&request, &CancelToken::default(), &mut |_| {}) {
        Ok(reply) => {
            let (summarized, notes) = conversation::parse_summary(&reply.text, window, kept)?;
            for note in notes {
                tracing::warn!("the summarizer's answer: {note}");
            }
            Some(summarized)
        }
        Err(e) => {
            tracing::warn!(code = %e.code, "the summarizer model failed: {}", e.chain());
            None
        }
    }
}

/// A summarizer's model request (the rolling summary's, the agent state's):
/// its prompts and answer schema, over an empty `web.summarize` packet of
/// the conversation (no page: everything it needs is in `user_prompt`).
pub(crate) fn summarizer_request(
    conversation_id: &ConversationId,
    turn: u32,
    system_prompt: &str,
    user_prompt: String,
    response_schema: serde_json::Value,
) -> ModelRequest {
    ModelRequest::without_page(
        TaskName::Summarize,
        (conversation_id, turn),
        (system_prompt, user_prompt),
        response_schema,
        1_024,
        &SystemAmbient,
    )
}

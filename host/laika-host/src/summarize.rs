//! The rolling summary (agentic chat seed §5.3–5.4), made after a turn's
//! `done` on the turn's worker thread, so the stream never waits for it.
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
use laika_core::conversation::{self, PastTurn};
use laika_core::llmcp::{Task, TaskName};
use laika_core::model::ModelRequest;
use laika_core::pack::{self, Budget, PackInput};
use laika_runtime::{CancelToken, Runtime, SystemAmbient};
use serde_json::json;
use std::sync::Mutex;

/// Folds the older turns of `conversation_id` into a new rolling summary if
/// one is due.
pub fn after_turn(store: &Mutex<Store>, runtime: &dyn Runtime, config: &Config, turn: &Stored) {
    let conversation_id = turn.conversation_id.as_str();
    let history = match store.lock().map_err(|_| ()).and_then(|s| {
        s.history(conversation_id).map_err(|e| {
            tracing::warn!(code = %e.code, "no rolling summary: {}", e.chain());
        })
    }) {
        Ok(h) => h,
        Err(()) => return,
    };
    let limits = &config.limits;
    let Some(through) = conversation::summary_due(
        &history,
        limits.recent_turns,
        limits.summary_after_turns,
        limits.summary_after_chars,
        turn.conversation_share,
    ) else {
        return;
    };
    let turns: Vec<PastTurn> = history
        .turns
        .iter()
        .filter(|t| t.turn <= through)
        .cloned()
        .collect();
    let previous = history.summary.as_ref().map(|s| s.text.as_str());
    let configured = config.summarizer.as_ref().and_then(|c| {
        laika_runtime::from_config(c)
            .map_err(|e| tracing::warn!(code = %e.code, "the [summarizer] runtime: {}", e.chain()))
            .ok()
    });
    let (summarizer, asked) = match &configured {
        Some(r) => (r.as_ref(), r.info().kind != "builtin"),
        None => (
            runtime,
            !matches!(
                runtime.info().kind.as_str(),
                "builtin" | "scripted" | "command"
            ),
        ),
    };
    let info = summarizer.info();
    let from_model = asked
        .then(|| ask_model(summarizer, conversation_id, through, previous, &turns))
        .flatten();
    let (text, made_by) = match from_model {
        Some(text) => (text, format!("{}:{}", info.kind, info.model)),
        None => (
            conversation::extractive_summary(previous, &turns),
            "builtin".to_owned(),
        ),
    };
    let saved = store.lock().map_err(|_| None).and_then(|mut s| {
        s.save_summary(
            conversation_id,
            through,
            &text,
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
            "rolling summary saved"
        ),
        Err(Some(e)) => tracing::warn!(code = %e.code, "rolling summary not saved: {}", e.chain()),
        Err(None) => tracing::warn!("rolling summary not saved: the store lock was poisoned"),
    }
}

/// Asks the turn's model for the summary; `None` when it fails or answers
/// something unusable.
fn ask_model(
    runtime: &dyn Runtime,
    conversation_id: &str,
    through: u32,
    previous: Option<&str>,
    turns: &[PastTurn],
) -> Option<String> {
    let task = Task {
        name: TaskName::Summarize,
        args: Default::default(),
    };
    let packet = pack::pack(
        &PackInput {
            conversation_id,
            turn: through,
            user_message_id: "",
            user_text: "",
            task: &task,
            observation: None,
            browser: "",
            tab_id: None,
            history: None,
            recent_turns: 0,
            ambient: &SystemAmbient,
        },
        Budget {
            max_chars: 0,
            max_tokens: 0,
        },
    )
    .packet;
    let request = ModelRequest {
        packet,
        response_schema: json!({
            "type": "object",
            "required": ["summary"],
            "properties": {"summary": {"type": "string", "maxLength": conversation::SUMMARY_CHARS}}
        }),
        system_prompt: conversation::SUMMARIZER_PROMPT.to_owned(),
        user_prompt: conversation::summarizer_input(previous, turns),
        attempt: 0,
        feedback: None,
        max_output_tokens: Some(1_024),
    };
    match runtime.complete(&request, &CancelToken::default(), &mut |_| {}) {
        Ok(reply) => conversation::parse_summary(&reply.text),
        Err(e) => {
            tracing::warn!(code = %e.code, "the summarizer model failed: {}", e.chain());
            None
        }
    }
}

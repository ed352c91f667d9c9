//! One turn, start to finish: validate → pack → compose schema and prompts
//! (interceptors) → ask the runtime, previewing the render as it streams
//! (with validation-retry) → sanitize → verify citations → gate tool calls →
//! interceptors' `post_response` → store → `done`.
//!
//! Invariants kept here:
//! - the events of a turn are `turn.started`, `context_usage`, any number of
//!   `render_delta` / `render_reset`, then either `assistant` and one
//!   `tool_call` per proposed call, or `error`; `done` is always last and is
//!   sent only after the turn is committed;
//! - every `render_delta` block is either confirmed by the `assistant` that
//!   follows (the blocks sent since the last `render_reset` are exactly the
//!   first blocks of its render) or withdrawn by a `render_reset`;
//! - a failed or cancelled turn is stored too, with its error code;
//! - model output reaches the extension only after strict parsing, schema
//!   validation and render sanitizing (a preview block is sanitized alone);
//! - output cut by the token limit is not retried: asking again with the
//!   same limit would cut it again.

use crate::config::Config;
use crate::store::{Store, TurnRecord, TurnStatus};
use crate::wire::{self, TurnRequest};
use laika_core::ambient::Ambient;
use laika_core::citation::{self, CitationReport};
use laika_core::error::{Error, ErrorCode, Result};
use laika_core::gate::{self, Decision, GateContext, Verdict};
use laika_core::interceptor::Pipeline;
use laika_core::llmcp::{self, RequestPacket, ResponsePacket};
use laika_core::model_output;
use laika_core::observation::Observation;
use laika_core::pack::{self, Budget, PackInput};
use laika_core::render::{self, RenderLimits};
use laika_core::schema;
use laika_core::stream::{Batch, Preview, COALESCE_INTERVAL};
use laika_runtime::{CancelToken, ModelRequest, RetryFeedback, Runtime, SystemAmbient};
use serde_json::{json, Map, Value};
use std::sync::Mutex;
use std::time::Instant;

/// What a turn needs from the session.
pub struct TurnContext<'a> {
    pub config: &'a Config,
    pub runtime: &'a dyn Runtime,
    pub store: &'a Mutex<Store>,
    pub cancel: &'a CancelToken,
    pub emit: &'a (dyn Fn(Value) + Sync),
}

/// A validated model answer, ready to show and store.
struct Answer {
    response: ResponsePacket,
    citations: CitationReport,
    verdicts: Vec<Verdict>,
    model: String,
    /// Which endpoint answered, for runtimes with several.
    endpoint: Option<String>,
    attempts: u32,
    repairs: Vec<String>,
    dropped: Vec<String>,
    /// What `post_response` hooks attach to the stored response.
    attachments: Map<String, Value>,
}

/// The streaming events of one turn.
struct Events<'a> {
    conversation_id: &'a str,
    turn: u32,
    emit: &'a dyn Fn(&str, Value),
}

impl Events<'_> {
    fn delta(&self, batch: Batch) {
        (self.emit)(
            "render_delta",
            json!({
                "conversation_id": self.conversation_id,
                "turn": self.turn,
                "start_index": batch.start_index,
                "blocks": batch.blocks,
            }),
        );
    }

    /// Withdraws the preview, if one was sent.
    fn reset(&self, preview: &Preview, reason: &str) {
        if preview.sent_any() {
            (self.emit)(
                "render_reset",
                json!({
                    "conversation_id": self.conversation_id,
                    "turn": self.turn,
                    "reason": reason,
                }),
            );
        }
    }
}

#[derive(Default)]
struct Timings {
    pack_ms: f64,
    runtime_ms: f64,
    validate_ms: f64,
    store_ms: f64,
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

const MAX_CONVERSATION_ID_LEN: usize = 128;

/// Runs one turn and emits its events. Never panics; every failure becomes an
/// `error` event and a failed turn in the store.
pub fn run(request: TurnRequest, ctx: &TurnContext<'_>) {
    let started = Instant::now();
    let reply_to = request.id.clone();
    let emit = |kind: &str, body: Value| (ctx.emit)(wire::message(kind, Some(&reply_to), body));

    let conversation_id = match &request.conversation_id {
        Some(id) if !id.is_empty() && id.len() <= MAX_CONVERSATION_ID_LEN => id.clone(),
        Some(_) => {
            let e = Error::invalid_request(format!(
                "conversation_id must be 1..={MAX_CONVERSATION_ID_LEN} bytes"
            ));
            (ctx.emit)(wire::error_message(Some(&reply_to), &e));
            return;
        }
        None => SystemAmbient.new_id(),
    };
    // Before `turn.started` a turn is merely rejected: an `error`, no `done`.
    let turn_no = match lock(ctx.store).and_then(|s| s.next_turn(&conversation_id)) {
        Ok(n) => n,
        Err(e) => {
            (ctx.emit)(wire::error_message(Some(&reply_to), &e));
            return;
        }
    };

    let mut timings = Timings::default();
    let t = Instant::now();
    let observation = Observation::from_value(request.observation.clone());
    let user_message_id = SystemAmbient.new_id();
    let budget = Budget::for_runtime(&ctx.runtime.info().kind, &ctx.config.limits);
    let packed = pack::pack(
        &PackInput {
            conversation_id: &conversation_id,
            turn: turn_no,
            user_message_id: &user_message_id,
            user_text: &request.message.text,
            task: &request.task,
            observation: observation.as_ref().ok(),
            browser: request.tab.browser.as_deref().unwrap_or("unknown"),
            tab_id: request.tab.tab_id.as_ref().map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            ambient: &SystemAmbient,
        },
        budget,
    );
    timings.pack_ms = ms(t);
    let runtime_info = ctx.runtime.info();
    emit(
        "turn.started",
        json!({
            "conversation_id": conversation_id,
            "turn": turn_no,
            "request_id": packed.packet.id,
            "task": request.task.name,
            "runtime": runtime_info,
        }),
    );
    emit(
        "context_usage",
        serde_json::to_value(&packed.usage).unwrap_or(Value::Null),
    );

    let events = Events {
        conversation_id: &conversation_id,
        turn: turn_no,
        emit: &emit,
    };
    let outcome = observation.and_then(|obs| {
        let answer = ask(&packed.packet, &request, &obs, ctx, &mut timings, &events)?;
        Ok((obs, answer))
    });

    let title = request
        .tab
        .title
        .clone()
        .or_else(|| outcome.as_ref().ok().map(|(o, _)| o.summary.title.clone()))
        .filter(|t| !t.is_empty());
    let page_url = request
        .tab
        .url
        .as_deref()
        .or_else(|| outcome.as_ref().ok().map(|(o, _)| o.summary.url.as_str()))
        .map(laika_core::redact::strip_url_credentials);

    let mut record = TurnRecord {
        conversation_id: conversation_id.clone(),
        title,
        turn: turn_no,
        created_at: packed.packet.created_at.clone(),
        task: request.task.name.as_str().into(),
        page_url,
        user_message_id,
        user_text: packed.packet.input.user_message.text.clone(),
        request_packet: serde_json::to_value(&packed.packet).unwrap_or(Value::Null),
        response_packet: None,
        answer_text: String::new(),
        model_id: Some(runtime_info.model.clone()),
        status: TurnStatus::Ok,
        error: None,
        attempts: 0,
        citations_total: 0,
        citations_verified: 0,
        timings: Value::Null,
        store_full_packets: ctx.config.log_full_llm,
    };

    let mut summary = json!({});
    match &outcome {
        Ok((_, answer)) => {
            let mut response_value = serde_json::to_value(&answer.response).unwrap_or(Value::Null);
            if let Value::Object(stored) = &mut response_value {
                stored.extend(answer.attachments.clone());
            }
            emit(
                "assistant",
                json!({
                    "conversation_id": conversation_id,
                    "turn": turn_no,
                    "response_id": answer.response.id,
                    "title": answer.response.assistant.title,
                    "render": answer.response.assistant.render,
                    "citations": answer.citations.citations,
                    "data": answer.response.assistant.data,
                }),
            );
            for (index, (call, verdict)) in answer
                .response
                .tool_calls
                .iter()
                .zip(&answer.verdicts)
                .enumerate()
            {
                emit(
                    "tool_call",
                    json!({
                        "conversation_id": conversation_id,
                        "turn": turn_no,
                        "call_id": format!("{}:{index}", answer.response.id),
                        "index": index,
                        "name": call.name,
                        "arguments": call.arguments,
                        "decision": verdict.decision,
                        "reason": verdict.reason,
                        "detail": verdict.detail,
                    }),
                );
            }
            record.response_packet = Some(response_value);
            record.answer_text = render::plain_text(&answer.response.assistant.render);
            record.model_id = Some(answer.model.clone());
            record.attempts = answer.attempts;
            record.citations_total = answer.citations.total as u32;
            record.citations_verified = answer.citations.verified as u32;
            let count = |d: Decision| answer.verdicts.iter().filter(|v| v.decision == d).count();
            summary = json!({
                "response_id": answer.response.id,
                "model": answer.model,
                "attempts": answer.attempts,
                "first_try_valid": answer.attempts == 1,
                "repairs": answer.repairs,
                "render_dropped": answer.dropped.len(),
                "citations": {
                    "total": answer.citations.total,
                    "verified": answer.citations.verified,
                    "ratio": answer.citations.ratio,
                },
                "tool_calls": {
                    "allow": count(Decision::Allow),
                    "ask": count(Decision::Ask),
                    "deny": count(Decision::Deny),
                },
            });
            if let Some(endpoint) = &answer.endpoint {
                summary["endpoint"] = json!(endpoint);
            }
        }
        Err(e) => {
            (ctx.emit)(wire::error_message(Some(&reply_to), e));
            record.status = if e.code == ErrorCode::Cancelled {
                TurnStatus::Cancelled
            } else {
                TurnStatus::Failed
            };
            record.error = Some(e.clone());
        }
    }

    let t = Instant::now();
    record.timings = json!({
        "pack_ms": timings.pack_ms,
        "runtime_ms": timings.runtime_ms,
        "validate_ms": timings.validate_ms,
        "total_ms": ms(started),
    });
    let stored = lock(ctx.store).and_then(|mut s| s.commit_turn(&record));
    timings.store_ms = ms(t);
    if let Err(e) = &stored {
        (ctx.emit)(wire::error_message(Some(&reply_to), e));
    }

    let mut done = json!({
        "conversation_id": conversation_id,
        "turn": turn_no,
        "request_id": packed.packet.id,
        "status": if stored.is_err() { "failed" } else { record.status.as_str() },
        "error_code": record.error.as_ref().map(|e| e.code).or(stored.as_ref().err().map(|e| e.code)),
        "runtime": runtime_info,
        "stored": stored.is_ok(),
        "timings": {
            "pack_ms": timings.pack_ms,
            "runtime_ms": timings.runtime_ms,
            "validate_ms": timings.validate_ms,
            "store_ms": timings.store_ms,
            "total_ms": ms(started),
        },
    });
    if let (Value::Object(d), Value::Object(s)) = (&mut done, summary) {
        d.extend(s);
    }
    emit("done", done);
}

fn lock(store: &Mutex<Store>) -> Result<std::sync::MutexGuard<'_, Store>> {
    store
        .lock()
        .map_err(|_| Error::internal("the store lock was poisoned by an earlier failure"))
}

/// Asks the runtime until its output validates, at most `1 + max_retries`
/// times (CLAIJ seed), feeding back the errors each time. The schema and
/// prompts come from the standard interceptor pipeline. While the model
/// streams, finished render blocks go out as `render_delta` events.
fn ask(
    packet: &RequestPacket,
    request: &TurnRequest,
    observation: &Observation,
    ctx: &TurnContext<'_>,
    timings: &mut Timings,
    events: &Events<'_>,
) -> Result<Answer> {
    let pipeline = Pipeline::standard();
    let composed = pipeline.schema(packet.input.task.name, &SystemAmbient)?;
    let prompts = pipeline.prompts(packet, &composed);
    let mut model_request = ModelRequest {
        packet: packet.clone(),
        response_schema: composed.schema().clone(),
        system_prompt: prompts.system,
        user_prompt: prompts.user.clone(),
        attempt: 0,
        feedback: None,
    };
    let max_attempts = ctx.config.limits.max_retries + 1;
    let mut last_issues = Vec::new();
    for attempt in 0..max_attempts {
        ctx.cancel.check()?;
        model_request.attempt = attempt;
        let mut preview = Preview::new(RenderLimits::default(), COALESCE_INTERVAL);
        let t = Instant::now();
        let reply = ctx
            .runtime
            .complete(&model_request, ctx.cancel, &mut |piece| {
                if let Some(batch) = preview.push(piece, Instant::now()) {
                    events.delta(batch);
                }
            })
            .and_then(|reply| ctx.cancel.check().map(|()| reply));
        timings.runtime_ms += ms(t);
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                events.reset(&preview, "failed");
                return Err(e);
            }
        };

        let t = Instant::now();
        let checked = check_output(&reply.text, packet, composed.validator());
        timings.validate_ms += ms(t);
        match checked {
            Ok(valid) => {
                if let Some(batch) = preview.finish(Instant::now()) {
                    events.delta(batch);
                }
                let t = Instant::now();
                let attachments = pipeline.post_response(&valid.value).attachments;
                let mut answer = finish(
                    valid.response,
                    valid.repairs,
                    reply.model,
                    attempt + 1,
                    request,
                    observation,
                    packet,
                    ctx,
                    attachments,
                );
                timings.validate_ms += ms(t);
                answer.endpoint = reply.endpoint;
                if !preview.is_prefix_of(&answer.response.assistant.render) {
                    events.reset(&preview, "replaced");
                }
                return Ok(answer);
            }
            Err(rejected) => {
                let length = reply.finish_reason.as_deref() == Some("length");
                if rejected.truncated || length {
                    events.reset(&preview, "failed");
                    let why = if length {
                        "the runtime stopped at its token limit".to_string()
                    } else {
                        rejected
                            .issues
                            .first()
                            .map(|i| i.message.clone())
                            .unwrap_or_default()
                    };
                    return Err(Error::new(
                        ErrorCode::InvalidModelOutput,
                        format!("the model's output was cut off before the answer was complete ({why}); raise the runtime's maximum output tokens"),
                    ));
                }
                let last = attempt + 1 == max_attempts;
                events.reset(&preview, if last { "failed" } else { "retry" });
                let issues = rejected.issues;
                model_request.user_prompt =
                    schema::retry_prompt(&prompts.user, &reply.text, &issues);
                model_request.feedback = Some(RetryFeedback {
                    previous_output: reply.text,
                    errors: issues
                        .iter()
                        .map(|i| format!("{}: {}", i.path, i.message))
                        .collect(),
                });
                last_issues = issues;
            }
        }
    }
    let first = last_issues
        .first()
        .map(|i| {
            format!(
                "{}: {}",
                if i.path.is_empty() { "/" } else { &i.path },
                i.message
            )
        })
        .unwrap_or_default();
    Err(Error::new(
        ErrorCode::InvalidModelOutput,
        format!("the model's output was still invalid after {max_attempts} attempts ({first})"),
    ))
}

/// A model output that passed every check.
struct Valid {
    response: ResponsePacket,
    /// The validated JSON, with fields `ResponsePacket` does not keep (for
    /// `post_response` hooks).
    value: Value,
    repairs: Vec<String>,
}

/// Why an output was refused: the issues to feed back, and whether it was
/// cut short (then a retry would not help).
struct Rejected {
    issues: Vec<schema::Issue>,
    truncated: bool,
}

/// Strict parse + schema + reply-to checks.
fn check_output(
    raw: &str,
    packet: &RequestPacket,
    validator: &jsonschema::Validator,
) -> std::result::Result<Valid, Rejected> {
    let rejected = |message: String, truncated: bool| Rejected {
        issues: vec![schema::Issue {
            path: String::new(),
            message,
        }],
        truncated,
    };
    let extracted =
        model_output::extract_json_object(raw).map_err(|e| rejected(e.message, e.truncated))?;
    schema::validate(validator, &extracted.value).map_err(|issues| Rejected {
        issues,
        truncated: false,
    })?;
    let issues = schema::check_reply_to(&extracted.value, packet);
    if !issues.is_empty() {
        return Err(Rejected {
            issues,
            truncated: false,
        });
    }
    let response: ResponsePacket =
        serde_json::from_value(extracted.value.clone()).map_err(|e| {
            rejected(
                format!("response does not match the packet shape: {e}"),
                false,
            )
        })?;
    Ok(Valid {
        response,
        value: extracted.value,
        repairs: extracted.repairs,
    })
}

#[allow(clippy::too_many_arguments)]
fn finish(
    mut response: ResponsePacket,
    repairs: Vec<String>,
    model: String,
    attempts: u32,
    request: &TurnRequest,
    observation: &Observation,
    packet: &RequestPacket,
    ctx: &TurnContext<'_>,
    attachments: Map<String, Value>,
) -> Answer {
    let sanitized = render::sanitize(&response.assistant.render, &RenderLimits::default());
    response.assistant.render = sanitized.render.to_value();
    let citations = citation::verify(&response.assistant.citations, &packet.context.documents);
    response.assistant.citations = citations
        .citations
        .iter()
        .map(|c| llmcp::Citation {
            doc_id: c.doc_id.clone(),
            node_id: c.node_id.clone(),
            handle_id: c.handle_id.clone(),
            quote: c.quote.clone(),
            verified: Some(c.verified),
        })
        .collect();
    let verdicts = gate::review(
        &response.tool_calls,
        &GateContext {
            observation,
            user_message: &request.message.text,
            max_calls: ctx.config.limits.max_tool_calls,
        },
    );
    Answer {
        response,
        citations,
        verdicts,
        model,
        endpoint: None,
        attempts,
        repairs,
        dropped: sanitized.dropped,
        attachments,
    }
}

//! One turn, start to finish: validate → pack → ask the runtime (with
//! validation-retry) → sanitize → verify citations → gate tool calls →
//! store → `done`.
//!
//! Invariants kept here:
//! - the events of a turn are `turn.started`, `context_usage`, then either
//!   `assistant` and one `tool_call` per proposed call, or `error`; `done` is
//!   always last and is sent only after the turn is committed;
//! - a failed or cancelled turn is stored too, with its error code;
//! - model output reaches the extension only after strict parsing, schema
//!   validation and render sanitizing.

use crate::citation::{self, CitationReport};
use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::gate::{self, Decision, GateContext, Verdict};
use crate::llmcp::{self, RequestPacket, ResponsePacket};
use crate::model_output;
use crate::observation::Observation;
use crate::pack::{self, Budget, PackInput};
use crate::prompt;
use crate::render::{self, RenderLimits};
use crate::runtime::{CancelToken, ModelRequest, RetryFeedback, Runtime};
use crate::schema;
use crate::store::{Store, TurnRecord, TurnStatus};
use crate::wire::{self, TurnRequest};
use serde_json::{json, Value};
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
        None => llmcp::new_id(),
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
    let user_message_id = llmcp::new_id();
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

    let outcome = observation.and_then(|obs| {
        let answer = ask(&packed.packet, &request, &obs, ctx, &mut timings)?;
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
        .map(crate::redact::strip_url_credentials);

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
            let response_value = serde_json::to_value(&answer.response).unwrap_or(Value::Null);
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
/// times (CLAIJ seed), feeding back the errors each time.
fn ask(
    packet: &RequestPacket,
    request: &TurnRequest,
    observation: &Observation,
    ctx: &TurnContext<'_>,
    timings: &mut Timings,
) -> Result<Answer> {
    let user_prompt = prompt::user_prompt(packet);
    let mut model_request = ModelRequest {
        packet: packet.clone(),
        response_schema: schema::response_schema().clone(),
        system_prompt: prompt::system_prompt(packet.input.task.name),
        user_prompt: user_prompt.clone(),
        attempt: 0,
        feedback: None,
    };
    let max_attempts = ctx.config.limits.max_retries + 1;
    let mut last_issues = Vec::new();
    for attempt in 0..max_attempts {
        ctx.cancel.check()?;
        model_request.attempt = attempt;
        let t = Instant::now();
        let reply = ctx
            .runtime
            .complete(&model_request, ctx.cancel, &mut |_| {})?;
        timings.runtime_ms += ms(t);
        ctx.cancel.check()?;

        let t = Instant::now();
        let checked = check_output(&reply.text, packet);
        timings.validate_ms += ms(t);
        match checked {
            Ok((response, repairs)) => {
                let t = Instant::now();
                let mut answer = finish(
                    response,
                    repairs,
                    reply.model,
                    attempt + 1,
                    request,
                    observation,
                    packet,
                    ctx,
                );
                timings.validate_ms += ms(t);
                answer.endpoint = reply.endpoint;
                return Ok(answer);
            }
            Err(issues) => {
                model_request.user_prompt =
                    schema::retry_prompt(&user_prompt, &reply.text, &issues);
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

/// Strict parse + schema + reply-to checks. Returns the issues to feed back.
fn check_output(
    raw: &str,
    packet: &RequestPacket,
) -> std::result::Result<(ResponsePacket, Vec<String>), Vec<schema::Issue>> {
    let issue = |message: String| {
        vec![schema::Issue {
            path: String::new(),
            message,
        }]
    };
    let extracted = model_output::extract_json_object(raw).map_err(|e| issue(e.message))?;
    schema::validate_response(&extracted.value)?;
    let issues = schema::check_reply_to(&extracted.value, packet);
    if !issues.is_empty() {
        return Err(issues);
    }
    let response: ResponsePacket = serde_json::from_value(extracted.value)
        .map_err(|e| issue(format!("response does not match the packet shape: {e}")))?;
    Ok((response, extracted.repairs))
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
) -> Answer {
    let sanitized = render::sanitize(&response.assistant.render, &RenderLimits::default());
    response.assistant.render = sanitized.render;
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
    }
}

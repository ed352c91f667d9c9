//! Every path of a turn, driven without I/O: a scripted model, a store that
//! answers as told, and the fixed clock.

use super::*;
use crate::ambient::Fixed;
use crate::event::DoneStatus;
use crate::gate::Reason;
use serde_json::json;

/// What the scripted model does for one attempt.
struct Step {
    /// Streamed before the reply; the clock moves `gap` before each piece.
    pieces: Vec<String>,
    gap: Duration,
    reply: Result<ModelReply>,
    /// The user cancels while the model is answering.
    cancel: bool,
}

impl Step {
    fn answer(text: String) -> Step {
        Step {
            pieces: Vec::new(),
            gap: Duration::ZERO,
            reply: Ok(reply(text, "stop")),
            cancel: false,
        }
    }

    /// The whole text streamed in `size`-byte pieces, `gap` apart.
    fn streamed(text: String, size: usize, gap: Duration) -> Step {
        let chars: Vec<char> = text.chars().collect();
        let pieces = chars
            .chunks(size)
            .map(|c| c.iter().collect::<String>())
            .collect();
        Step {
            pieces,
            gap,
            reply: Ok(reply(text, "stop")),
            cancel: false,
        }
    }

    fn failure(error: Error) -> Step {
        Step {
            pieces: Vec::new(),
            gap: Duration::ZERO,
            reply: Err(error),
            cancel: false,
        }
    }
}

fn reply(text: String, finish_reason: &str) -> ModelReply {
    ModelReply {
        text,
        model: "scripted-model".into(),
        finish_reason: Some(finish_reason.into()),
        endpoint: None,
    }
}

/// Everything a turn did.
#[derive(Default)]
struct Run {
    events: Vec<Event>,
    asks: Vec<ModelRequest>,
    reserved_for: Vec<String>,
    commits: Vec<TurnRecord>,
    finished: bool,
}

impl Run {
    fn kinds(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap_or_default()["type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    fn done(&self) -> &Done {
        let done: Vec<&Done> = self
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Done(d) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(done.len(), 1, "one done: {:?}", self.kinds());
        done[0]
    }

    fn errors(&self) -> Vec<&ErrorBody> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Error(b) => Some(b),
                _ => None,
            })
            .collect()
    }

    fn record(&self) -> &TurnRecord {
        assert_eq!(self.commits.len(), 1, "one commit");
        &self.commits[0]
    }
}

use crate::event::ErrorBody;

/// Drives a turn the way the host does: the model's answer for attempt `n`
/// comes from `model(n, request)`, the store reserves `number` and answers
/// commits with `stored`.
fn drive(
    request: TurnRequest,
    settings: TurnSettings,
    number: Result<u32>,
    stored: Result<()>,
    mut model: impl FnMut(usize, &ModelRequest) -> Step,
) -> Run {
    let ambient = Fixed::new();
    let mut run = Run::default();
    let (mut turn, first) = Turn::start(request, settings, &ambient);
    let mut queue: std::collections::VecDeque<Action> = first.into();
    let mut number = Some(number);
    while let Some(action) = queue.pop_front() {
        assert!(!run.finished, "nothing after Finish");
        let next = match action {
            Action::Emit(event) => {
                run.events.push(event);
                Vec::new()
            }
            Action::Reserve { conversation_id } => {
                run.reserved_for.push(conversation_id);
                let answer = number.take().unwrap_or(Ok(0));
                turn.handle(Input::Reserved(answer))
            }
            Action::Ask(request) => {
                let step = model(run.asks.len(), &request);
                run.asks.push(ModelRequest::clone(&request));
                drop(request);
                let mut next = Vec::new();
                for piece in step.pieces {
                    ambient.advance(step.gap);
                    for action in turn.handle(Input::ModelText(piece)) {
                        match action {
                            Action::Emit(event) => run.events.push(event),
                            other => next.push(other),
                        }
                    }
                }
                if step.cancel {
                    next.extend(turn.handle(Input::Cancel));
                }
                ambient.advance(Duration::from_millis(5));
                next.extend(turn.handle(Input::ModelReply(step.reply)));
                next
            }
            Action::Commit(record) => {
                run.commits.push(*record);
                turn.handle(Input::Committed(stored.clone()))
            }
            Action::Finish => {
                run.finished = true;
                Vec::new()
            }
        };
        queue.extend(next);
    }
    assert!(run.finished, "every turn ends with Finish");
    assert!(turn.is_finished());
    run
}

fn observation() -> Value {
    json!({
        "summary": {
            "doc_type": "web.observation.summary.v1",
            "url": "https://user:secret@news.example.org/night-trains",
            "title": "Night trains are back",
            "text": "The first sleeper service between Brussels and Prague left on Tuesday with 312 passengers. Tickets start at 49 euros.",
            "elements": [
                {"handle_id": "laika-1", "role": "button", "text": "Read more"},
                {"handle_id": "laika-2", "role": "button", "text": "Buy now"}
            ]
        }
    })
}

fn request(conversation_id: Option<&str>, observation: Value) -> TurnRequest {
    let mut v = json!({
        "id": "turn-1",
        "message": {"text": "How many passengers were on board?"},
        "task": {"name": "web.answer", "args": {}},
        "tab": {"browser": "chrome", "tab_id": 7},
        "observation": observation,
    });
    if let Some(c) = conversation_id {
        v["conversation_id"] = json!(c);
    }
    serde_json::from_value(v).unwrap()
}

fn settings() -> TurnSettings {
    TurnSettings {
        limits: Limits::default(),
        runtime: RuntimeInfo {
            kind: "scripted".into(),
            model: "scripted-model".into(),
            offline: true,
            label: "Scripted".into(),
        },
        store_full_packets: false,
    }
}

fn paragraph(text: &str) -> Value {
    json!({"type": "paragraph", "children": [{"type": "text", "text": text}]})
}

/// A valid response packet answering `request`.
fn answer(request: &ModelRequest, blocks: Vec<Value>, tool_calls: Value) -> String {
    let p = &request.packet;
    json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "response-1",
        "type": "response",
        "created_at": "2026-01-01T00:00:00.000Z",
        "conversation": {"id": p.conversation.id, "turn": p.conversation.turn},
        "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": p.id},
        "assistant": {
            "title": "Passengers",
            "render": {"type": "doc", "children": blocks},
            "citations": [
                {"doc_id": "doc:web:summary", "quote": "312 passengers"},
                {"doc_id": "doc:web:summary", "quote": "a quote the page does not hold"}
            ]
        },
        "tool_calls": tool_calls
    })
    .to_string()
}

/// A turn of conversation `c-1`, numbered 1, that commits fine.
fn answer_turn(model: impl FnMut(usize, &ModelRequest) -> Step) -> Run {
    drive(
        request(Some("c-1"), observation()),
        settings(),
        Ok(1),
        Ok(()),
        model,
    )
}

fn ok_answer(request: &ModelRequest) -> String {
    answer(
        request,
        vec![paragraph("There were 312 passengers.")],
        json!([]),
    )
}

#[test]
fn an_answered_turn_emits_in_order_commits_then_says_done() {
    let run = drive(
        request(Some("c-1"), observation()),
        settings(),
        Ok(4),
        Ok(()),
        |_, r| Step::answer(ok_answer(r)),
    );
    assert_eq!(run.reserved_for, vec!["c-1"]);
    assert_eq!(
        run.kinds(),
        ["turn.started", "context_usage", "assistant", "done"]
    );
    let Event::TurnStarted(started) = &run.events[0] else {
        panic!("turn.started first")
    };
    assert_eq!(started.turn, 4);
    assert_eq!(started.request_id, run.asks[0].packet.id);
    let Event::Assistant(a) = &run.events[2] else {
        panic!("assistant")
    };
    assert_eq!(a.title, "Passengers");
    assert_eq!(
        a.citations.iter().map(|c| c.verified).collect::<Vec<_>>(),
        [true, false]
    );
    // The packet carries the page as untrusted context, credentials stripped.
    let packet = serde_json::to_string(&run.asks[0].packet).unwrap();
    assert!(packet.contains("\"trust\":\"untrusted\""));
    assert!(!packet.contains("secret"));
    let record = run.record();
    assert_eq!((record.conversation_id.as_str(), record.turn), ("c-1", 4));
    assert_eq!(record.status, TurnStatus::Ok);
    assert_eq!(record.answer_text, "There were 312 passengers.");
    assert_eq!((record.citations_total, record.citations_verified), (2, 1));
    assert_eq!(record.title.as_deref(), Some("Night trains are back"));
    assert_eq!(
        record.page_url.as_deref(),
        Some("https://news.example.org/night-trains")
    );
    let done = run.done();
    assert_eq!(done.status, DoneStatus::Ok);
    assert!(done.stored);
    assert_eq!(done.error_code, None);
    let summary = done.answer.as_ref().unwrap();
    assert_eq!(summary.attempts, 1);
    assert!(summary.first_try_valid);
    assert_eq!(summary.citations.ratio, 0.5);
    assert_eq!(summary.model, "scripted-model");
}

#[test]
fn a_new_conversation_gets_an_id_from_the_ambient() {
    let run = drive(
        request(None, observation()),
        settings(),
        Ok(1),
        Ok(()),
        |_, r| Step::answer(ok_answer(r)),
    );
    assert_eq!(run.reserved_for, vec!["id-1"]);
    assert_eq!(run.record().conversation_id, "id-1");
}

#[test]
fn a_bad_conversation_id_is_rejected_without_a_number_or_done() {
    let run = drive(
        request(Some(&"x".repeat(200)), observation()),
        settings(),
        Ok(1),
        Ok(()),
        |_, _| panic!("no model call"),
    );
    assert!(run.reserved_for.is_empty());
    assert_eq!(run.kinds(), ["error"]);
    assert_eq!(run.errors()[0].code, ErrorCode::InvalidRequest);
    assert!(run.commits.is_empty());
}

#[test]
fn no_turn_number_means_rejected_without_done() {
    let run = drive(
        request(Some("c-1"), observation()),
        settings(),
        Err(Error::store("database is locked")),
        Ok(()),
        |_, _| panic!("no model call"),
    );
    assert_eq!(run.kinds(), ["error"]);
    assert_eq!(run.errors()[0].code, ErrorCode::StoreFailed);
    assert!(run.commits.is_empty());
}

#[test]
fn an_invalid_observation_fails_the_turn_without_asking_the_model() {
    let run = drive(
        request(Some("c-1"), json!({"summary": {"doc_type": "nope"}})),
        settings(),
        Ok(2),
        Ok(()),
        |_, _| panic!("no model call"),
    );
    assert_eq!(
        run.kinds(),
        ["turn.started", "context_usage", "error", "done"]
    );
    assert_eq!(run.errors()[0].code, ErrorCode::InvalidObservation);
    let record = run.record();
    assert_eq!(record.status, TurnStatus::Failed);
    assert_eq!(
        record.error.as_ref().map(|e| e.code),
        Some(ErrorCode::InvalidObservation)
    );
    let done = run.done();
    assert_eq!(done.status, DoneStatus::Failed);
    assert_eq!(done.error_code, Some(ErrorCode::InvalidObservation));
    assert!(done.answer.is_none());
}

#[test]
fn an_invalid_output_is_retried_with_its_errors_fed_back() {
    let run = answer_turn(|n, r| match n {
        0 => Step::answer(r#"{"type": "response", "assistant": 7}"#.into()),
        _ => Step::answer(ok_answer(r)),
    });
    assert_eq!(run.asks.len(), 2);
    let retry = &run.asks[1];
    assert_eq!(retry.attempt, 1);
    let feedback = retry.feedback.as_ref().unwrap();
    assert!(feedback.previous_output.contains("\"assistant\": 7"));
    assert!(!feedback.errors.is_empty());
    assert!(retry.user_prompt.contains(&run.asks[0].user_prompt));
    assert_eq!(retry.system_prompt, run.asks[0].system_prompt);
    let summary = run.done().answer.as_ref().unwrap();
    assert_eq!(summary.attempts, 2);
    assert!(!summary.first_try_valid);
    assert_eq!(run.record().attempts, 2);
}

#[test]
fn retries_stop_at_the_limit_with_invalid_model_output() {
    let mut settings = settings();
    settings.limits.max_retries = 2;
    let run = drive(
        request(Some("c-1"), observation()),
        settings,
        Ok(1),
        Ok(()),
        |_, _| Step::answer("no json here".into()),
    );
    assert_eq!(run.asks.len(), 3);
    let errors = run.errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, ErrorCode::InvalidModelOutput);
    assert!(
        errors[0].message.contains("after 3 attempts"),
        "{}",
        errors[0].message
    );
    assert_eq!(run.record().status, TurnStatus::Failed);
    assert_eq!(run.done().status, DoneStatus::Failed);
}

#[test]
fn no_retries_when_the_limit_is_zero() {
    let mut settings = settings();
    settings.limits.max_retries = 0;
    let run = drive(
        request(Some("c-1"), observation()),
        settings,
        Ok(1),
        Ok(()),
        |_, _| Step::answer("{}".into()),
    );
    assert_eq!(run.asks.len(), 1);
    assert_eq!(run.errors()[0].code, ErrorCode::InvalidModelOutput);
}

#[test]
fn output_cut_at_the_token_limit_fails_at_once() {
    let run = answer_turn(|_, r| {
        let full = ok_answer(r);
        let cut: String = full.chars().take(full.chars().count() / 2).collect();
        Step {
            reply: Ok(reply(cut, "length")),
            ..Step::answer(String::new())
        }
    });
    assert_eq!(run.asks.len(), 1, "a cut answer is not retried");
    let error = run.errors()[0];
    assert_eq!(error.code, ErrorCode::InvalidModelOutput);
    assert!(error.message.contains("cut off"), "{}", error.message);
    assert!(error.message.contains("token limit"), "{}", error.message);
}

#[test]
fn an_object_that_never_closes_fails_at_once_too() {
    let run = answer_turn(|_, r| {
        let full = ok_answer(r);
        Step::answer(full[..full.len() - 10].to_string())
    });
    assert_eq!(run.asks.len(), 1);
    assert!(run.errors()[0].message.contains("cut off"));
}

#[test]
fn a_valid_answer_is_kept_even_when_the_runtime_reports_length() {
    let run = answer_turn(|_, r| Step {
        reply: Ok(reply(ok_answer(r), "length")),
        ..Step::answer(String::new())
    });
    assert_eq!(run.done().status, DoneStatus::Ok);
}

#[test]
fn runtime_errors_end_the_turn_with_their_code_and_no_retry() {
    let run =
        answer_turn(|_, _| Step::failure(Error::new(ErrorCode::RuntimeTimeout, "no first token")));
    assert_eq!(run.asks.len(), 1);
    assert_eq!(run.errors()[0].code, ErrorCode::RuntimeTimeout);
    assert_eq!(run.record().status, TurnStatus::Failed);
    assert_eq!(run.done().error_code, Some(ErrorCode::RuntimeTimeout));
}

#[test]
fn a_cancel_while_the_model_answers_ends_the_turn_as_cancelled() {
    let run = answer_turn(|_, r| Step {
        cancel: true,
        ..Step::answer(ok_answer(r))
    });
    assert_eq!(
        run.kinds(),
        ["turn.started", "context_usage", "error", "done"],
        "a cancelled turn shows no answer, even one that arrived"
    );
    assert_eq!(run.errors()[0].code, ErrorCode::Cancelled);
    assert_eq!(run.record().status, TurnStatus::Cancelled);
    assert_eq!(run.done().status, DoneStatus::Cancelled);
}

#[test]
fn a_cancel_before_a_retry_stops_the_retry() {
    let run = answer_turn(|_, _| Step {
        cancel: true,
        ..Step::failure(Error::cancelled())
    });
    assert_eq!(run.asks.len(), 1);
    assert_eq!(run.done().status, DoneStatus::Cancelled);
}

#[test]
fn streamed_blocks_are_previewed_then_confirmed_by_the_answer() {
    let run = answer_turn(|_, r| {
        let blocks = (0..6)
            .map(|i| paragraph(&format!("Block {i} of the answer.")))
            .collect();
        Step::streamed(answer(r, blocks, json!([])), 16, Duration::from_millis(10))
    });
    let deltas: Vec<&RenderDelta> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::RenderDelta(d) => Some(d),
            _ => None,
        })
        .collect();
    assert!(deltas.len() >= 2, "{:?}", run.kinds());
    let previewed: Vec<crate::render::ast::Block> =
        deltas.iter().flat_map(|d| d.blocks.clone()).collect();
    assert_eq!(previewed.len(), 6);
    let mut next = 0;
    for d in &deltas {
        assert_eq!(d.start_index, next, "deltas are contiguous");
        next += d.blocks.len();
    }
    let Some(Event::Assistant(a)) = run.events.iter().find(|e| matches!(e, Event::Assistant(_)))
    else {
        panic!("assistant")
    };
    assert_eq!(a.render.children, previewed);
    assert!(!run.kinds().contains(&"render_reset".to_string()));
    let last_delta = run.kinds().iter().rposition(|k| k == "render_delta");
    let assistant = run.kinds().iter().position(|k| k == "assistant");
    assert!(last_delta < assistant);
}

#[test]
fn deltas_are_coalesced_to_the_interval() {
    let run = answer_turn(|_, r| {
        let blocks = (0..6).map(|i| paragraph(&format!("B{i}"))).collect();
        // Pieces 1 ms apart: many blocks finish within one interval.
        Step::streamed(answer(r, blocks, json!([])), 8, Duration::from_millis(1))
    });
    let deltas = run.kinds().iter().filter(|k| *k == "render_delta").count();
    assert!((1..6).contains(&deltas), "{deltas} deltas for 6 blocks");
}

#[test]
fn a_previewed_attempt_that_fails_validation_is_withdrawn_before_the_retry() {
    let run = answer_turn(|n, r| match n {
        0 => {
            // Blocks stream, but the packet answers the wrong request.
            let text = answer(
                r,
                vec![paragraph("Wrong."), paragraph("Still wrong.")],
                json!([]),
            )
            .replace(&r.packet.id, "another-request");
            Step::streamed(text, 12, Duration::from_millis(40))
        }
        _ => Step::answer(ok_answer(r)),
    });
    let kinds = run.kinds();
    let reset = kinds.iter().position(|k| k == "render_reset").unwrap();
    assert!(kinds[..reset].contains(&"render_delta".to_string()));
    let Event::RenderReset(r) = &run.events[reset] else {
        panic!("reset")
    };
    assert_eq!(r.reason, ResetReason::Retry);
    assert_eq!(run.asks.len(), 2);
    assert_eq!(run.done().status, DoneStatus::Ok);
}

#[test]
fn a_final_answer_that_differs_from_its_preview_replaces_it() {
    let run = answer_turn(|_, r| {
        let text = answer(
            r,
            vec![paragraph("First."), paragraph("Second.")],
            json!([]),
        );
        let mut step = Step::streamed(text, 10, Duration::from_millis(40));
        // The reply the runtime reports differs from what it streamed.
        step.reply = Ok(reply(
            answer(r, vec![paragraph("Replaced.")], json!([])),
            "stop",
        ));
        step
    });
    let resets: Vec<&RenderReset> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::RenderReset(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(resets.len(), 1);
    assert_eq!(resets[0].reason, ResetReason::Replaced);
    let kinds = run.kinds();
    assert!(
        kinds.iter().position(|k| k == "render_reset")
            < kinds.iter().position(|k| k == "assistant")
    );
}

#[test]
fn a_failed_stream_is_withdrawn() {
    let run = answer_turn(|_, r| {
        let mut step = Step::streamed(ok_answer(r), 10, Duration::from_millis(40));
        step.reply = Err(Error::new(ErrorCode::RuntimeError, "the server went away"));
        step
    });
    let resets: Vec<ResetReason> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::RenderReset(r) => Some(r.reason),
            _ => None,
        })
        .collect();
    assert_eq!(resets, [ResetReason::Failed]);
    assert_eq!(run.done().error_code, Some(ErrorCode::RuntimeError));
}

#[test]
fn tool_calls_are_gated_and_reported_one_by_one() {
    let run = answer_turn(|_, r| {
        Step::answer(answer(
            r,
            vec![paragraph("Opening it.")],
            json!([
                {"name": "browser.scroll", "arguments": {"deltaY": 400}},
                {"name": "browser.click", "arguments": {"handleId": "laika-404"}},
                {"name": "shell.exec", "arguments": {}}
            ]),
        ))
    });
    let calls: Vec<&ToolCallProposal> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].call_id, "response-1:0");
    assert_eq!(calls[2].index, 2);
    assert_eq!(calls[1].decision, Decision::Deny);
    assert_eq!(calls[2].reason, Reason::UnknownTool);
    let counts = run.done().answer.as_ref().unwrap().tool_calls;
    assert_eq!(counts.allow + counts.ask + counts.deny, 3);
    assert_eq!(counts.deny, 2);
}

#[test]
fn a_store_failure_is_reported_and_done_says_not_stored() {
    let run = drive(
        request(Some("c-1"), observation()),
        settings(),
        Ok(1),
        Err(Error::store("disk full")),
        |_, r| Step::answer(ok_answer(r)),
    );
    assert_eq!(
        run.kinds(),
        [
            "turn.started",
            "context_usage",
            "assistant",
            "error",
            "done"
        ]
    );
    let done = run.done();
    assert!(!done.stored);
    assert_eq!(done.status, DoneStatus::Failed);
    assert_eq!(done.error_code, Some(ErrorCode::StoreFailed));
}

#[test]
fn timings_come_from_the_ambient_clock() {
    let run = answer_turn(|_, r| Step::answer(ok_answer(r)));
    let t = run.done().timings;
    // The driver moves the fixed clock 5 ms while the model answers.
    assert_eq!(t.runtime_ms, 5.0);
    assert_eq!(t.total_ms, 5.0);
    assert_eq!(run.record().timings["runtime_ms"], 5.0);
}

#[test]
fn inputs_the_turn_is_not_waiting_for_change_nothing() {
    let ambient = Fixed::new();
    let (mut turn, first) = Turn::start(request(Some("c-1"), observation()), settings(), &ambient);
    assert!(matches!(first.as_slice(), [Action::Reserve { .. }]));
    assert!(turn.handle(Input::ModelText("{".into())).is_empty());
    assert!(turn
        .handle(Input::ModelReply(Ok(reply("{}".into(), "stop"))))
        .is_empty());
    assert!(turn.handle(Input::Committed(Ok(()))).is_empty());
    assert!(!turn.is_finished());
    assert_eq!(turn.reply_to(), "turn-1");
}

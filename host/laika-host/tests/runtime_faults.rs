//! The HTTP runtimes against a stub server on 127.0.0.1: full turns through
//! the built binary for every fault (coded error, failed turn stored, host
//! still healthy), plus direct runtime calls where the reply itself matters.
//!
//! Time bounds here only separate "promptly" from "hung" (seconds against
//! the stub's 20 s stalls), so a slow machine does not make them flaky.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::*;
use laika_core::runtime::Runtime;
use laika_protocol::error::ErrorCode;
use laika_runtime::http::HttpConfig;
use laika_runtime::openai::{OpenAiConfig, OpenAiRuntime};
use laika_runtime::{CancelToken, ModelRequest};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use stub::*;

const KEY: &str = "sk-test-5ecret-key-0123456789";

fn summarize() -> Value {
    json!({"name": "web.summarize", "args": {"style": "concise"}})
}

fn host_for(url: &str, config: &str) -> Host {
    Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), url.into()),
            ("LAIKA_API_KEY".into(), KEY.into()),
        ],
        config,
        ..Launch::default()
    })
}

const FAST: &str =
    "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\nconnect_timeout_ms = 1000\nfirst_token_timeout_ms = 1500\ntotal_timeout_ms = 3000\n";

/// Runs one turn and checks the failure contract: one error with `code`,
/// `done` failed with that code, the failed turn stored with its code, no
/// key anywhere. Returns the error message.
fn failed_turn(host: &mut Host, code: &str) -> String {
    let started = Instant::now();
    let events = host.summarize_article("t1", summarize());
    // A timeout that never fired would leave the harness waiting for `done`
    // until its own receive timeout, failing the test: no time bound needed.
    eprintln!("coded error after {:?}", started.elapsed());
    let err = one(&events, "error");
    assert_eq!(err["code"], code, "{err:#}");
    let done = one(&events, "done");
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error_code"], code);
    assert_eq!(done["stored"], true);
    assert!(of_type(&events, "assistant").is_empty());
    let conv = done["conversation_id"].as_str().unwrap();
    let h = host.request(json!({"type": "history.get", "id": "g", "conversation_id": conv}));
    assert!(h.to_string().contains(code), "{h:#}");
    for e in &events {
        assert!(!e.to_string().contains(KEY), "key leaked: {e}");
    }
    err["message"].as_str().unwrap().to_string()
}

/// A host on `url` with `config` fails a turn with `code` as
/// [`failed_turn`] checks, `check` reads the message, and the host is
/// [`still_healthy`].
fn fails_healthy(url: &str, config: &str, code: &str, check: impl FnOnce(&str)) {
    let mut host = host_for(url, config);
    let m = failed_turn(&mut host, code);
    check(&m);
    still_healthy(host);
}

/// The host answers a ping after the failure and exits cleanly on EOF.
fn still_healthy(mut host: Host) {
    let r = host.request(json!({"type": "ping", "id": "p"}));
    assert_eq!(r["type"], "pong");
    assert_eq!(host.wait(), Some(0));
}

fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", l.local_addr().unwrap());
    drop(l);
    url
}

#[test]
fn streamed_answer_is_validated_and_the_request_follows_the_profile() {
    let stub =
        Stub::start(|body, _| sse_answer(&answer_for(body, "Night trains are back."), 7, "stop"));
    let mut host = host_for(&stub.url, FAST);
    let events = host.summarize_article("t1", summarize());
    let a = one(&events, "assistant");
    assert_eq!(
        laika_core::render::plain_text(&a["render"]).trim(),
        "Night trains are back."
    );
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok");
    assert_eq!(done["endpoint"], stub.url);
    assert_eq!(done["model"], "stub-model");
    assert_eq!(done["runtime"]["kind"], "openai");
    assert_eq!(done["runtime"]["offline"], true);

    let seen = stub.seen();
    assert_eq!(seen.len(), 1);
    let head = seen[0].head.to_ascii_lowercase();
    assert!(head.starts_with("post /v1/chat/completions "), "{head}");
    assert!(head.contains(&format!(
        "authorization: bearer {}",
        KEY.to_ascii_lowercase()
    )));
    let body = &seen[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["chat_template_kwargs"],
        json!({"enable_thinking": false})
    );
    assert_eq!(body["json_schema"]["type"], "object");
    // The answer schema: the model writes the answer, the host the envelope.
    assert!(body["json_schema"]["properties"]["assistant"].is_object());
    assert!(body["json_schema"]["properties"]
        .get("in_reply_to")
        .is_none());
    assert!(body.get("response_format").is_none() && body.get("stream_options").is_none());
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["role"], "user");
    // The server enforces the schema: the prompt leaves the shape to it.
    assert!(!body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("Answer shape"));
    for e in &events {
        assert!(!e.to_string().contains(KEY), "key leaked: {e}");
    }
    let dir = host.into_dir();
    for entry in walk(dir.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "key written to {}",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn connection_refused_is_runtime_unavailable() {
    let url = closed_port();
    fails_healthy(&url, FAST, "RUNTIME_UNAVAILABLE", |m| {
        assert!(m.contains(&url) && m.contains("cannot connect"), "{m}");
    });
}

#[test]
fn a_coded_failure_keeps_its_cause_for_the_log_without_credentials() {
    let url = closed_port().replace("http://", "http://user:s3cret@");
    let e = direct(&url, "llama.cpp")
        .complete(&model_request(), &CancelToken::default(), &mut |_| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RuntimeUnavailable);
    assert!(std::error::Error::source(&e).is_some());
    let chain = e.chain();
    assert!(chain.len() > e.to_string().len(), "{chain}");
    assert!(!chain.contains("s3cret"), "{chain}");
}

#[test]
fn http_500_is_runtime_error_with_the_runtimes_message() {
    let stub = Stub::start(|_, _| {
        status(
            500,
            r#"{"error":{"message":"model failed to load","code":500}}"#,
        )
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_ERROR", |m| {
        assert!(
            m.contains("HTTP 500") && m.contains("model failed to load"),
            "{m}"
        );
        assert_eq!(stub.seen().len(), 1, "runtime errors are not retried");
    });
}

#[test]
fn a_web_page_instead_of_a_model_server_is_named_in_plain_words() {
    let page = "<!DOCTYPE html><html><head><title>Router</title></head><body>Welcome</body></html>";
    let stub = Stub::start(move |_, i| {
        if i == 0 {
            vec![
                ok_head("text/html; charset=utf-8"),
                Step::Write(page.into()),
            ]
        } else {
            let mut s = status(404, page);
            if let Some(Step::Write(b)) = s.first_mut() {
                *b = String::from_utf8_lossy(b)
                    .replace("application/json", "text/html")
                    .into_bytes();
            }
            s
        }
    });
    let mut host = host_for(&stub.url, FAST);
    for expected in ["answered with a web page", "HTTP 404"] {
        let m = failed_turn(&mut host, "RUNTIME_ERROR");
        assert!(
            m.contains(expected) && m.contains("web page") && m.contains("runtime.base_url"),
            "{m}"
        );
        assert!(
            !m.contains('<') && !m.contains("Welcome"),
            "no raw HTML: {m}"
        );
    }
    still_healthy(host);
}

#[test]
fn an_echoed_api_key_is_scrubbed_from_the_error() {
    let stub = Stub::start(|_, _| {
        status(
            401,
            &format!(r#"{{"error":"Incorrect API key provided: {KEY}"}}"#),
        )
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_ERROR", |m| {
        assert!(
            m.contains("HTTP 401") && m.contains("[redacted]") && m.contains("api_key"),
            "{m}"
        );
    });
}

#[test]
fn stall_after_headers_hits_the_first_token_timeout() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(b": ping\n\n".to_vec()),
            Step::Hold,
        ]
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_TIMEOUT", |m| {
        assert!(m.contains("first_token_timeout_ms = 1500"), "{m}");
        assert!(
            stub.wait_closed(0, Duration::from_secs(5)),
            "connection left open"
        );
    });
}

#[test]
fn stall_mid_stream_hits_the_total_timeout() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(sse_content("{\"proto").into_bytes()),
            Step::Hold,
        ]
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_TIMEOUT", |m| {
        assert!(m.contains("total_timeout_ms = 3000"), "{m}");
        assert!(
            stub.wait_closed(0, Duration::from_secs(5)),
            "connection left open"
        );
    });
}

#[test]
fn garbage_sse_is_runtime_error() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(b"<html><body>502 Bad Gateway</body></html>\n".to_vec()),
        ]
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_ERROR", |m| {
        assert!(m.contains("not an event stream"), "{m}");
    });
}

#[test]
fn error_object_mid_stream_is_runtime_error() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(sse_content("{\"protocol\":").into_bytes()),
            Step::Write(b"data: {\"error\":{\"message\":\"CUDA out of memory\",\"type\":\"server_error\"}}\n\n".to_vec()),
        ]
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_ERROR", |m| {
        assert!(m.contains("CUDA out of memory"), "{m}");
    });
}

#[test]
fn a_stream_cut_before_done_is_runtime_error() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(sse_content("{\"pro").into_bytes()),
        ]
    });
    fails_healthy(&stub.url, FAST, "RUNTIME_ERROR", |m| {
        assert!(m.contains("ended before the answer was complete"), "{m}");
    });
}

#[test]
fn an_answer_over_the_cap_is_runtime_error() {
    let stub = Stub::start(|_, _| {
        let piece = sse_content(&"x".repeat(64 * 1024)).into_bytes();
        let mut steps = vec![ok_head("text/event-stream")];
        // 17 MiB and a bit: just over the 16 MiB cap.
        steps.extend((0..275).map(|_| Step::Write(piece.clone())));
        steps
    });
    fails_healthy(
        &stub.url,
        FAST.replace("3000", "20000").as_str(),
        "RUNTIME_ERROR",
        |m| {
            assert!(m.contains("more than 16 MiB"), "{m}");
        },
    );
}

#[test]
fn failover_tries_the_next_endpoint_and_done_names_it() {
    let refused = closed_port();
    let stub = Stub::start(|body, _| sse_answer(&answer_for(body, "From the second."), 50, "stop"));
    let mut host = host_for(&format!("{refused},{}", stub.url), FAST);
    let events = host.summarize_article("t1", summarize());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["endpoint"], stub.url);
    assert_ne!(done["endpoint"], refused);
    still_healthy(host);
}

#[test]
fn failover_when_every_endpoint_is_down_names_each() {
    let (a, b) = (closed_port(), closed_port());
    fails_healthy(&format!("{a}, {b}"), FAST, "RUNTIME_UNAVAILABLE", |m| {
        assert!(
            m.contains("no endpoint answered") && m.contains(&a) && m.contains(&b),
            "{m}"
        );
    });
}

#[test]
fn cancel_mid_stream_ends_the_turn_and_closes_the_connection() {
    let stub = Stub::start(|_, _| {
        vec![
            ok_head("text/event-stream"),
            Step::Write(sse_content("{\"protocol\"").into_bytes()),
            Step::Hold,
        ]
    });
    let slow = "[runtime]\nkind = \"openai\"\nprofile = \"vllm\"\nfirst_token_timeout_ms = 60000\ntotal_timeout_ms = 60000\n";
    let mut host = host_for(&stub.url, slow);
    host.send_summarize_article("slow", summarize());
    assert_eq!(host.recv().unwrap()["type"], "session");
    assert_eq!(host.recv().unwrap()["type"], "turn.started");
    assert_eq!(stub.wait_requests(1).len(), 1);
    std::thread::sleep(Duration::from_millis(100));
    let cancelled_at = Instant::now();
    let (r, events) = host.cancel("c1", "slow");
    assert_eq!(r["cancelled"], true);
    eprintln!("cancel → done in {:?}", cancelled_at.elapsed());
    assert_eq!(one(&events, "error")["code"], "CANCELLED");
    assert_eq!(one(&events, "done")["status"], "cancelled");
    assert!(
        stub.wait_closed(0, Duration::from_secs(5)),
        "the stub never saw the connection close"
    );
    let body = &stub.seen()[0].body;
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    still_healthy(host);
}

#[test]
fn ollama_turn_streams_ndjson_with_schema_in_format() {
    let stub = Stub::start(|body, _| {
        let answer = answer_for(body, "Hello from Ollama.");
        let mut steps = vec![ok_head("application/x-ndjson")];
        let chars: Vec<char> = answer.chars().collect();
        for part in chars.chunks(40) {
            let line = json!({"model": "qwen3:4b", "message": {"role": "assistant", "content": part.iter().collect::<String>()}, "done": false});
            steps.push(Step::Write(format!("{line}\n").into_bytes()));
        }
        steps.push(Step::Write(b"{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n".to_vec()));
        steps
    });
    let base = stub.url.trim_end_matches("/v1").to_string();
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "ollama".into()),
            ("LAIKA_BASE_URL".into(), base.clone()),
            ("LAIKA_MODEL".into(), "qwen3:4b".into()),
        ],
        config: "[runtime]\nkind = \"ollama\"\nmodel = \"qwen3:4b\"\nnum_ctx = 8192\nkeep_alive = \"5m\"\n",
        ..Launch::default()
    });
    let events = host.summarize_article("t1", summarize());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["endpoint"], base);
    assert_eq!(done["runtime"]["kind"], "ollama");
    let seen = stub.seen();
    assert!(
        seen[0].head.starts_with("POST /api/chat "),
        "{}",
        seen[0].head
    );
    let body = &seen[0].body;
    assert_eq!(body["model"], "qwen3:4b");
    assert_eq!(body["think"], false);
    // The window is known (num_ctx), so the answer gets its share of it:
    // a third.
    assert_eq!(
        body["options"],
        json!({"num_ctx": 8192, "num_predict": 2730})
    );
    assert_eq!(body["keep_alive"], "5m");
    assert!(body["format"]["properties"]["assistant"].is_object());
    still_healthy(host);
}

fn model_request() -> ModelRequest {
    let packet: laika_protocol::llmcp::RequestPacket = serde_json::from_value(json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "r1", "type": "request", "created_at": "2025-01-01T00:00:00Z",
        "conversation": {"id": "c1", "turn": 1},
        "sender": {"role": "agent"},
        "input": {"user_message": {"id": "u1", "text": "hi"}, "task": {"name": "web.summarize"}},
        "context": {"documents": []},
        "output": {"format": "render_ast"}
    }))
    .unwrap();
    ModelRequest {
        user_prompt: serde_json::to_string(&packet).unwrap(),
        packet,
        response_schema: json!({"type": "object"}),
        system_prompt: "SYS".into(),
        attempt: 0,
        feedback: None,
        max_output_tokens: None,
    }
}

/// An `openai` runtime on `url` for direct calls, with timeouts far beyond
/// the stub's stalls: only the stub or a cancel can end a call.
fn direct(url: &str, profile: &str) -> OpenAiRuntime {
    OpenAiRuntime::from_config(&OpenAiConfig {
        http: HttpConfig {
            base_url: Some(url.into()),
            first_token_timeout_ms: 60_000,
            total_timeout_ms: 60_000,
            ..HttpConfig::default()
        },
        profile: Some(profile.into()),
        ..OpenAiConfig::default()
    })
    .unwrap()
}

#[test]
fn a_cut_answer_reports_finish_reason_length_and_streams_its_pieces() {
    let stub = Stub::start(|_, _| sse_answer("{\"protocol\":{\"name\":\"laika.ll", 5, "length"));
    let rt = direct(&stub.url, "generic");
    let mut pieces = Vec::new();
    let reply = rt
        .complete(&model_request(), &CancelToken::default(), &mut |p| {
            pieces.push(p.to_string())
        })
        .unwrap();
    assert_eq!(reply.text, "{\"protocol\":{\"name\":\"laika.ll");
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(reply.endpoint.as_deref(), Some(stub.url.as_str()));
    assert_eq!(reply.model, "stub-model");
    assert_eq!(pieces.len(), 6, "{pieces:?}");
    assert_eq!(pieces.concat(), reply.text);
    assert_eq!(
        stub.seen()[0].body["response_format"],
        json!({"type": "json_object"})
    );
}

#[test]
fn a_cut_answer_fails_the_turn_with_a_code() {
    let stub = Stub::start(|_, _| sse_answer("{\"protocol\":{\"name\":\"laika.ll", 5, "length"));
    let mut host = host_for(&stub.url, FAST);
    let events = host.summarize_article("t1", summarize());
    let code = one(&events, "error")["code"].as_str().unwrap().to_string();
    assert!(
        code == "INVALID_MODEL_OUTPUT" || code == "RUNTIME_ERROR",
        "{code}"
    );
    assert_eq!(one(&events, "done")["status"], "failed");
    still_healthy(host);
}

#[test]
fn cancel_aborts_a_direct_call_on_a_stalled_stream_promptly() {
    let stub = Stub::start(|_, _| vec![ok_head("text/event-stream"), Step::Hold]);
    let rt = direct(&stub.url, "llama.cpp");
    let cancel = CancelToken::default();
    let c2 = cancel.clone();
    let waiter = std::thread::spawn(move || {
        let started = Instant::now();
        let r = rt.complete(&model_request(), &c2, &mut |_| {});
        (r, started.elapsed())
    });
    stub.wait_requests(1);
    std::thread::sleep(Duration::from_millis(50));
    let at = Instant::now();
    cancel.cancel();
    let (result, _) = waiter.join().unwrap();
    let latency = at.elapsed();
    assert_eq!(result.unwrap_err().code, ErrorCode::Cancelled);
    eprintln!("cancel latency {latency:?}");
    assert!(stub.wait_closed(0, Duration::from_secs(5)));
}

#[test]
fn a_silent_endpoint_times_out_and_the_next_one_answers() {
    let silent = Stub::start(|_, _| vec![Step::Hold]);
    let good = Stub::start(|body, _| sse_answer(&answer_for(body, "Second answers."), 30, "stop"));
    let config = "[runtime]\nkind = \"openai\"\nprofile = \"sglang\"\nfirst_token_timeout_ms = 500\ntotal_timeout_ms = 20000\n";
    let mut host = host_for(&format!("{},{}", silent.url, good.url), config);
    let events = host.summarize_article("t1", summarize());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["endpoint"], good.url);
    assert_eq!(silent.seen().len(), 1);
    assert!(silent.wait_closed(0, Duration::from_secs(5)));
    still_healthy(host);
}

/// One streamed call on a stub that answers in pieces: the reply and the
/// pieces `on_text` got, in order.
fn streamed_call() -> (String, Vec<String>) {
    let stub = Stub::start(|_, _| sse_answer("{\"streamed\":\"in pieces\"}", 4, "stop"));
    let mut pieces = Vec::new();
    let reply = direct(&stub.url, "llama.cpp")
        .complete(&model_request(), &CancelToken::default(), &mut |p| {
            pieces.push(p.to_string())
        })
        .unwrap();
    (reply.text, pieces)
}

fn assert_streamed((text, pieces): (String, Vec<String>)) {
    assert_eq!(text, "{\"streamed\":\"in pieces\"}");
    assert!(pieces.len() > 1, "{pieces:?}");
    assert_eq!(pieces.concat(), text);
}

// A server built on tokio (axum) will call the blocking `complete` from its
// own tasks: that must neither panic nor deadlock, whatever the flavor.

#[tokio::test(flavor = "current_thread")]
async fn a_call_from_a_current_thread_runtime_task_streams_its_answer() {
    assert_streamed(streamed_call());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_from_a_multi_thread_runtime_task_or_its_blocking_pool_streams_its_answer() {
    assert_streamed(streamed_call());
    assert_streamed(tokio::task::spawn_blocking(streamed_call).await.unwrap());
}

/// Cancels a call stalled after the response headers, from another thread.
/// CANCELLED (not the stub's end of stall, not a timeout) shows the cancel
/// woke the call; the stub then sees the connection close.
fn cancel_a_stalled_call() {
    let stub = std::sync::Arc::new(Stub::start(|_, _| {
        vec![ok_head("text/event-stream"), Step::Hold]
    }));
    let cancel = CancelToken::default();
    let canceller = {
        let (stub, cancel) = (stub.clone(), cancel.clone());
        std::thread::spawn(move || {
            stub.wait_requests(1);
            cancel.cancel();
        })
    };
    let result = direct(&stub.url, "llama.cpp").complete(&model_request(), &cancel, &mut |_| {});
    canceller.join().unwrap();
    assert_eq!(result.unwrap_err().code, ErrorCode::Cancelled);
    assert!(stub.wait_closed(0, Duration::from_secs(5)));
}

#[tokio::test(flavor = "current_thread")]
async fn cancel_wakes_a_stalled_call_made_from_a_current_thread_runtime_task() {
    cancel_a_stalled_call();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_wakes_a_stalled_call_made_from_a_multi_thread_runtime_task() {
    cancel_a_stalled_call();
}

/// The Anthropic Messages adapter through the whole host: the answer comes
/// as a forced tool call's streamed input (answer only: the host fills the
/// envelope), the key travels as `x-api-key` with `anthropic-version`, and
/// a `max_tokens` stop fails the turn as cut, not as invalid.
#[test]
fn anthropic_messages_tool_input_is_the_answer() {
    fn messages_sse(input_json: &str, stop: &str) -> Vec<Step> {
        let mut steps = vec![
            ok_head("text/event-stream"),
            Step::Write(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-stub\",\"content\":[]}}\n\n".to_vec()),
            Step::Write(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"laika_answer\",\"input\":{}}}\n\n".to_vec()),
        ];
        let chars: Vec<char> = input_json.chars().collect();
        for part in chars.chunks(9) {
            let piece: String = part.iter().collect();
            let event = json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}});
            steps.push(Step::Write(
                format!("event: content_block_delta\ndata: {event}\n\n").into_bytes(),
            ));
        }
        steps.push(Step::Write(format!("event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop}\"}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n").into_bytes()));
        steps
    }
    let answer = json!({"assistant": {
        "title": "Nachtzüge",
        "render": {"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "Night trains are back."}]}]}
    }})
    .to_string();
    let stub = Stub::start(move |_, i| match i {
        0 => messages_sse(&answer, "tool_use"),
        _ => messages_sse(&answer[..40], "max_tokens"),
    });
    let config = format!(
        "[runtime]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-stub\"\napi_key = \"{KEY}\"\nmax_tokens = 700\n",
        stub.url
    );
    let mut host = Host::launch(Launch {
        config: &config,
        ..Launch::default()
    });
    let obs = observation("article-night-trains.observation.json");
    let events = host.turn("a1", summarize(), "Summarize", obs.clone());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{done:#}");
    assert_eq!(done["runtime"]["kind"], "anthropic");
    assert_eq!(done["model"], "claude-stub");
    assert_eq!(one(&events, "assistant")["title"], "Nachtzüge");

    let seen = stub.seen();
    let head = seen[0].head.to_ascii_lowercase();
    assert!(head.starts_with("post /v1/messages "), "{head}");
    assert!(head.contains(&format!("x-api-key: {}", KEY.to_ascii_lowercase())));
    assert!(head.contains("anthropic-version: 2023-06-01"));
    assert!(!head.contains("authorization:"));
    let body = &seen[0].body;
    assert_eq!(body["max_tokens"], 700);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "laika_answer"})
    );
    assert!(body["tools"][0]["input_schema"]["properties"]["assistant"].is_object());
    assert!(body["system"]
        .as_str()
        .unwrap()
        .contains("write exactly this JSON shape"));

    let events = host.turn("a2", summarize(), "Summarize", obs);
    let err = one(&events, "error");
    assert_eq!(err["code"], "INVALID_MODEL_OUTPUT");
    assert!(
        err["message"].as_str().unwrap().contains("cut off"),
        "{err:#}"
    );
    for e in &events {
        assert!(!e.to_string().contains(KEY), "key leaked: {e}");
    }
    still_healthy(host);
}

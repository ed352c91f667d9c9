//! The host against a real llama.cpp `llama-server` (started by
//! `scripts/real-runtime.sh`, which sets `LAIKA_REAL_BASE_URL`). Without
//! that variable every test prints that it skipped and passes, so a plain
//! `cargo test` stays offline and fast.
//!
//! The model is tiny (Gemma 3 270M, a base model): these tests assert what
//! holds whatever it writes — every turn ends with `done`, answers validate
//! and are sanitized, the JSON-Schema constraint is sent and obeyed, text
//! streams in pieces, cancel is prompt — never answer quality.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use laika_core::pack::{self, Budget, PackInput};
use laika_core::render::{self, RenderLimits};
use laika_core::runtime::Runtime;
use laika_protocol::llmcp::Task;
use laika_protocol::observation::Observation;
use laika_runtime::http::HttpConfig;
use laika_runtime::openai::{OpenAiConfig, OpenAiRuntime};
use laika_runtime::{CancelToken, ModelRequest};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Bounded so a model that loops (tiny models do) costs seconds, not minutes.
const MAX_TOKENS: u32 = 512;
/// Documents budget: the fixtures fit, and the prompt stays far below the
/// server's context even with a retry's feedback.
const CONTEXT_TOKENS: usize = 1000;

fn base_url() -> Option<String> {
    match std::env::var("LAIKA_REAL_BASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            println!("skipped: LAIKA_REAL_BASE_URL is not set (scripts/real-runtime.sh sets it)");
            None
        }
    }
}

/// One step, no tools: there is no browser to run a call the model proposes
/// (a tiny base model often does), so it is denied and the turn ends.
fn host_config(max_retries: u32) -> String {
    format!(
        "[runtime]\nkind = \"openai\"\nmax_tokens = {MAX_TOKENS}\nfirst_token_timeout_ms = 120000\ntotal_timeout_ms = 600000\n\
         [limits]\nmax_retries = {max_retries}\ncontext_max_tokens = {CONTEXT_TOKENS}\n\
         max_steps = 1\nmax_tool_calls = 0\n"
    )
}

fn real_host(url: &str, config: &str) -> Host {
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_PROFILE".into(), "llama.cpp".into()),
            ("LAIKA_BASE_URL".into(), url.into()),
        ],
        config,
        ..Launch::default()
    });
    // A host that refuses to serve (a config error) answers every turn with
    // an error and no `done`: fail here, with its message, not at a timeout.
    let hello = host.request(
        json!({"type": "hello", "id": "hello", "protocol": {"name": "laika.wire", "version": 1}}),
    );
    assert_eq!(hello["type"], "hello.result", "{hello:#}");
    // A slow shared machine: a turn with a retry can take minutes.
    host.recv_timeout = Duration::from_secs(600);
    host
}

/// The three tasks on the fixtures: (label, task, user text, fixture).
fn cases() -> Vec<(&'static str, Value, &'static str, &'static str)> {
    vec![
        (
            "summarize",
            json!({"name": "web.summarize", "args": {"style": "concise"}}),
            "Summarize this page.",
            "article-night-trains.observation.json",
        ),
        (
            "answer",
            json!({"name": "web.answer"}),
            "How much does a private compartment cost?",
            "article-night-trains.observation.json",
        ),
        (
            "extract",
            json!({"name": "web.extract", "args": {"fields": ["price", "sku", "availability"]}}),
            "Extract the product details.",
            "product-backpack.observation.json",
        ),
    ]
}

/// The model request the host builds for `task` on `fixture` (same packing,
/// prompts and schema as a turn).
fn model_request(task: &Value, text: &str, fixture: &str, rt: &OpenAiRuntime) -> ModelRequest {
    let task: Task = serde_json::from_value(task.clone()).unwrap();
    let obs = Observation::from_value(observation(fixture)).unwrap();
    let packed = pack::pack(
        &PackInput {
            conversation_id: &"c-real".into(),
            turn: 1,
            user_message_id: "u-real",
            user_text: text,
            task: &task,
            observation: Some(&obs),
            browser: "chrome",
            tab_id: None,
            history: None,
            recent_turns: 8,
            ambient: &laika_runtime::SystemAmbient,
            for_model: true,
        },
        Budget {
            max_chars: CONTEXT_TOKENS * 4,
            max_tokens: CONTEXT_TOKENS,
        },
    );
    // Exactly what the turn sends: the interceptor-composed schema and prompts.
    let pipeline = laika_core::interceptor::Pipeline::standard();
    let composed = pipeline
        .schema(task.name, &laika_runtime::SystemAmbient)
        .unwrap();
    pipeline.model_request(
        packed.packet,
        &composed,
        rt.decoding(),
        laika_core::tools::McpTools::none(),
    )
}

fn runtime(url: &str, schema_mode: Option<&str>) -> OpenAiRuntime {
    OpenAiRuntime::from_config(&OpenAiConfig {
        http: HttpConfig {
            base_url: Some(url.into()),
            first_token_timeout_ms: 120_000,
            total_timeout_ms: 600_000,
            ..HttpConfig::default()
        },
        profile: Some("llama.cpp".into()),
        max_tokens: Some(MAX_TOKENS),
        schema_mode: schema_mode.map(str::to_string),
        ..OpenAiConfig::default()
    })
    .unwrap()
}

/// Closes a JSON text cut anywhere: keeps it up to the last point where a
/// value inside the innermost open container is complete, then closes the
/// open containers. `None` when `text` is not the start of one JSON value.
fn close_prefix(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let mut stack: Vec<char> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    // (byte offset, open containers) where the text can be closed.
    let mut cut: Option<(usize, Vec<char>)> = None;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                stack.push(c);
                cut = Some((i + 1, stack.clone()));
            }
            '}' | ']' => {
                let open = stack.pop()?;
                if (open, c) != ('{', '}') && (open, c) != ('[', ']') {
                    return None;
                }
                cut = Some((i + 1, stack.clone()));
            }
            ',' if !stack.is_empty() => cut = Some((i, stack.clone())),
            _ => {}
        }
    }
    let (end, open) = cut?;
    let mut closed = text.get(..end)?.to_string();
    for c in open.iter().rev() {
        closed.push(if *c == '{' { '}' } else { ']' });
    }
    serde_json::from_str(&closed).ok()
}

/// Schema errors of `text` as a (possibly cut) answer, leaving out the
/// `required` errors a cut causes. Empty: the text obeys the schema so far.
fn schema_errors_of_prefix(text: &str, schema: &Value) -> Vec<String> {
    let Some(value) = close_prefix(text) else {
        return vec![format!("not the start of a JSON value: {:.120}", text)];
    };
    // A cut may land before any member: nothing is required of a prefix,
    // also inside `anyOf` branches (whose errors hide the missing member).
    let validator = jsonschema::validator_for(&without_required(schema)).unwrap();
    validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// `schema` with every `required` list dropped.
fn without_required(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => map
            .iter()
            .filter(|(k, v)| !(k.as_str() == "required" && v.is_array()))
            .map(|(k, v)| (k.clone(), without_required(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        Value::Array(items) => items.iter().map(without_required).collect(),
        other => other.clone(),
    }
}

#[test]
fn close_prefix_finds_the_complete_part_of_a_cut_json_text() {
    assert_eq!(
        close_prefix(r#"{"a":{"b":[1,2,{"c":"x,}"}],"d":"cut he"#),
        Some(json!({"a": {"b": [1, 2, {"c": "x,}"}]}}))
    );
    assert_eq!(close_prefix(r#"{"a":[1,"#), Some(json!({"a": [1]})));
    assert_eq!(close_prefix(r#"{"#), Some(json!({})));
    assert_eq!(close_prefix(r#"{"a":1}"#), Some(json!({"a": 1})));
    assert_eq!(close_prefix("Sure! Here is"), None);
    assert_eq!(close_prefix(r#"{"a":[1}"#), None);
    let (_, task, text, fixture) = cases().remove(0);
    let schema = model_request(
        &task,
        text,
        fixture,
        &runtime("http://127.0.0.1:9/v1", None),
    )
    .response_schema;
    let errors = |text: &str| schema_errors_of_prefix(text, &schema);
    assert!(
        errors(r#"{"assistant":{"title":"Trains","render":{"type":"doc","children":[{"type":"paragraph","children":[{"type":"text","text":"Hi"}]}"#).is_empty()
    );
    assert!(!errors(r##"{"$ref":"#/x"},"type""##).is_empty());
    assert!(!errors(r#"{"assistant":{"title":7,"render":{"#).is_empty());
    // Cut inside the first text of a nested block: the node is still empty.
    assert!(errors(
        r#"{"assistant":{"render":{"children":[{"children":[{"children":[{"text":"The SKU is 1000"#
    )
    .is_empty());
    assert!(!errors(r#"{"assistant":{"render":{"children":[{"type":"nonsense","#).is_empty());
}

/// Direct calls with the host's own request body: the text streams in
/// pieces and obeys the response schema (the whole of it when the model
/// finishes, the part written so far when `max_tokens` cuts it).
#[test]
fn direct_calls_stream_and_obey_the_json_schema() {
    let Some(url) = base_url() else { return };
    let rt = runtime(&url, None);
    let mut parsed_first_try = 0;
    for (label, task, text, fixture) in cases() {
        let request = model_request(&task, text, fixture, &rt);
        let body = rt.request_body(&request);
        assert_eq!(
            body["json_schema"], request.response_schema,
            "the llama.cpp profile sends the schema as top-level json_schema"
        );
        let mut pieces = Vec::new();
        let started = Instant::now();
        let reply = rt
            .complete(&request, &CancelToken::default(), &mut |t| {
                pieces.push(t.to_string())
            })
            .unwrap();
        let elapsed = started.elapsed();
        assert!(pieces.len() > 1, "{label}: not streamed: {pieces:?}");
        assert_eq!(pieces.concat(), reply.text, "{label}");
        let whole = serde_json::from_str::<Value>(reply.text.trim()).is_ok();
        parsed_first_try += usize::from(whole);
        let errors = schema_errors_of_prefix(&reply.text, &request.response_schema);
        println!(
            "{label}: {} pieces in {elapsed:?}, finish {:?}, parses whole: {whole}, schema errors: {errors:?}\n  text: {:.300}",
            pieces.len(),
            reply.finish_reason,
            reply.text
        );
        assert!(
            errors.is_empty(),
            "{label}: the constrained output breaks the schema: {errors:?}\n{}",
            reply.text
        );
        if reply.finish_reason.as_deref() == Some("stop") {
            assert!(whole, "{label}: finished but is not one JSON value");
            let validator = jsonschema::validator_for(&request.response_schema).unwrap();
            let value: serde_json::Value = serde_json::from_str(reply.text.trim()).unwrap();
            assert!(validator.is_valid(&value), "{label}: {value}");
        }
    }
    println!(
        "first-try JSON parse success (whole answer within {MAX_TOKENS} tokens): {parsed_first_try}/{}",
        cases().len()
    );

    // For contrast, the same request without the constraint: a base model
    // left alone rarely writes the packet. Recorded, not asserted.
    let (_, task, text, fixture) = cases().remove(0);
    let unconstrained = runtime(&url, Some("none"));
    let request = model_request(&task, text, fixture, &unconstrained);
    let free = unconstrained
        .complete(&request, &CancelToken::default(), &mut |_| {})
        .unwrap();
    println!(
        "without json_schema: schema errors {:?}\n  text: {:.200}",
        schema_errors_of_prefix(&free.text, &request.response_schema),
        free.text
    );
}

/// All three tasks through the binary end with `done`: ok with a sanitized,
/// schema-valid answer, or `INVALID_MODEL_OUTPUT` after the retry (the
/// constraint itself is proven by the direct-call test above).
#[test]
fn every_task_ends_with_done() {
    let Some(url) = base_url() else { return };
    let mut host = real_host(&url, &host_config(1));
    let (mut ok, mut first_try) = (0, 0);
    for (i, (label, task, text, fixture)) in cases().into_iter().enumerate() {
        let id = format!("t{i}");
        let events = host.turn(&id, task, text, observation(fixture));
        let started = one(&events, "turn.started");
        assert_eq!(started["runtime"]["kind"], "openai");
        assert_eq!(started["runtime"]["offline"], true);
        let done = one(&events, "done");
        assert_eq!(done["stored"], true, "{label}: {done:#}");
        println!(
            "{label}: status {} attempts {} error {} timings {}",
            done["status"], done["attempts"], done["error_code"], done["timings"]
        );
        match done["status"].as_str() {
            Some("ok") => {
                ok += 1;
                let attempts = done["attempts"].as_u64().unwrap();
                assert!((1..=2).contains(&attempts), "{label}: {attempts}");
                first_try += usize::from(attempts == 1);
                assert_eq!(done["endpoint"], url.as_str());
                let answer = one(&events, "assistant");
                let again = render::sanitize(&answer["render"], &RenderLimits::default());
                assert_eq!(
                    again.render.to_value(),
                    answer["render"],
                    "{label}: render not sanitized"
                );
                assert!(again.dropped.is_empty(), "{label}: {:?}", again.dropped);
                assert_eq!(answer["render"]["type"], "doc");
            }
            Some("failed") => {
                assert_eq!(
                    done["error_code"], "INVALID_MODEL_OUTPUT",
                    "{label}: {done:#}"
                );
                // Either every attempt was invalid, or the answer hit the
                // token cap (reported at once: a cut answer is not retried).
                let err = one(&events, "error");
                let message = err["message"].as_str().unwrap();
                assert!(
                    message.contains("after 2 attempts") || message.contains("was cut off"),
                    "{err:#}"
                );
                assert!(of_type(&events, "assistant").is_empty());
            }
            other => panic!("{label}: unexpected status {other:?}: {done:#}"),
        }
    }
    println!(
        "turns: {ok}/3 valid, {first_try}/3 valid on the first try (max_tokens {MAX_TOKENS}, 1 retry)"
    );
    let pong = host.request(json!({"type": "ping", "id": "p"}));
    assert_eq!(pong["type"], "pong");
}

/// Sends `request` to the server and returns (status line, body).
fn http(url: &str, request: &str) -> (String, String) {
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut stream = std::net::TcpStream::connect(&authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// A cancel while the model is streaming ends the turn promptly, and the
/// server answers the next request normally (the cut connection did not
/// wedge its only slot).
#[test]
fn cancel_mid_stream_is_prompt_and_the_server_stays_healthy() {
    let Some(url) = base_url() else { return };
    let mut host = real_host(&url, &host_config(1));
    let (_, task, text, fixture) = cases().remove(0);
    host.send(&turn_msg("slow", task, text, observation(fixture), None));
    let started = host.until("turn.started", "slow");
    assert_eq!(one(&started, "turn.started")["runtime"]["kind"], "openai");
    // Let the request reach the server and start decoding.
    std::thread::sleep(Duration::from_millis(1500));
    let cancelled_at = Instant::now();
    host.send(&json!({"type": "cancel", "id": "c1", "target": "slow"}));
    let mut events = Vec::new();
    while !(events.iter().any(|e: &Value| e["type"] == "done")
        && events.iter().any(|e: &Value| e["type"] == "cancel.result"))
    {
        events.push(host.recv().expect("the host went quiet after cancel"));
    }
    let took = cancelled_at.elapsed();
    println!("cancel → done in {took:?}");
    assert_eq!(one(&events, "cancel.result")["cancelled"], true);
    assert_eq!(one(&events, "error")["code"], "CANCELLED");
    assert_eq!(one(&events, "done")["status"], "cancelled");

    let root = url.trim_end_matches("/v1");
    let (status, body) = http(
        root,
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(status.contains(" 200"), "{status} {body}");
    assert!(body.contains("ok"), "{body}");
    let tiny =
        json!({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": false})
            .to_string();
    let answered_at = Instant::now();
    let (status, body) = http(
        root,
        &format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{tiny}",
            tiny.len()
        ),
    );
    assert!(status.contains(" 200"), "{status} {body}");
    assert!(body.contains("\"choices\""), "{body}");
    println!("next request answered in {:?}", answered_at.elapsed());
    let pong = host.request(json!({"type": "ping", "id": "p"}));
    assert_eq!(pong["type"], "pong");
}

/// The compatibility-matrix command measures the builtin baseline and the
/// server and writes its Markdown report.
#[test]
fn compat_matrix_command_runs() {
    let Some(url) = base_url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("compatibility.md");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_laika-compat-matrix"))
        .args(["--base-url", &url, "--profile", "llama.cpp", "--runs", "1"])
        .args(["--tasks", "summarize", "--max-retries", "0"])
        .args(["--model-label", "test-model", "--out"])
        .arg(&out)
        .args(["--host-bin", BIN])
        .status()
        .unwrap();
    assert!(status.success());
    let report = std::fs::read_to_string(&out).unwrap();
    println!("{report}");
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("| summarize ("))
        .collect();
    assert_eq!(rows.len(), 2, "{report}");
    assert!(rows[0].starts_with("| builtin"), "{}", rows[0]);
    assert!(
        rows[0].contains("| 1/1 (100 %) | 1/1 (100 %) |"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains(&format!("openai at {url} | llama.cpp | test-model")),
        "{}",
        rows[1]
    );
    assert!(report.contains("## Not measured here") && report.contains("vLLM"));
    assert!(report.contains("- Date: 20"), "{report}");
}

/// Tokens of `text` by the server's own tokenizer.
fn tokens(url: &str, text: &str) -> usize {
    let root = url.trim_end_matches("/v1");
    let body = json!({ "content": text }).to_string();
    let (status, reply) = http(
        root,
        &format!(
            "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(status.contains(" 200"), "{status} {reply}");
    let v: Value = serde_json::from_str(&reply).unwrap();
    v["tokens"].as_array().unwrap().len()
}

/// The system prompt's size per task, in the server's tokens: with the
/// whole composed response schema as JSON (as before the answer schema) and
/// with the sketch of the answer schema. Recorded; the sketch must save at
/// least a third.
#[test]
fn system_prompt_tokens_per_shape() {
    let Some(url) = base_url() else { return };
    let enforced = runtime(&url, None);
    let prompt_only = runtime(&url, Some("none"));
    for (label, task, text, fixture) in cases() {
        let sketched = model_request(&task, text, fixture, &enforced);
        let schema = model_request(&task, text, fixture, &prompt_only);
        let composed = laika_core::interceptor::Pipeline::standard()
            .schema(
                sketched.packet.input.task.name,
                &laika_runtime::SystemAmbient,
            )
            .unwrap();
        let whole = laika_core::interceptor::Pipeline::standard().prompts(
            &sketched.packet,
            &laika_core::prompt::AnswerShape {
                sketch: composed.schema_json().to_string(),
                enforced: false,
            },
            laika_core::tools::McpTools::none(),
        );
        let answer_schema = serde_json::to_string(&schema.response_schema).unwrap();
        let (w, s, k) = (
            tokens(&url, &whole.system),
            tokens(&url, &answer_schema),
            tokens(&url, &sketched.system_prompt),
        );
        println!(
            "{label}: system prompt tokens: with the whole response schema {w}, with the sketch {k} (the answer schema alone as JSON: {s}); user prompt {}",
            tokens(&url, &sketched.user_prompt)
        );
        assert!(k * 3 < w * 2, "{label}: {w} {k}");
    }
}

/// POSTs `body` to llama-server's chat endpoint without streaming; returns
/// the reply and the wall time.
fn chat(url: &str, mut body: Value) -> (Value, Duration) {
    body["stream"] = json!(false);
    let body = body.to_string();
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(900)))
        .unwrap();
    let started = Instant::now();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let took = started.elapsed();
    let (head, reply) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{reply}");
    (serde_json::from_str(reply).unwrap(), took)
}

/// A follow-up on the same page reuses llama-server's prompt cache: the
/// request the host builds for the second question (the same page, then the
/// first turn in `context.conversation`, the question last) shares the first
/// request's prefix up to the conversation block. Prints the figures for
/// docs/PERFORMANCE.md; asserts only the cache reuse, never time.
#[test]
fn a_follow_up_on_the_same_page_reuses_the_prompt_cache() {
    let Some(url) = base_url() else { return };
    let rt = runtime(&url, None);
    let task: Task = serde_json::from_value(json!({"name": "web.answer"})).unwrap();
    let obs =
        Observation::from_value(observation("article-night-trains.observation.json")).unwrap();
    let page = laika_protocol::llmcp::PageRef {
        url: obs.summary.url.clone(),
        title: obs.summary.title.clone(),
    };
    // Room for the whole page: a short page is sent whole on both turns.
    let budget = Budget {
        max_chars: 24_000,
        max_tokens: 6_000,
    };
    let request =
        |turn: u32, text: &str, history: Option<&laika_protocol::conversation::History>| {
            let packed = pack::pack(
                &PackInput {
                    conversation_id: &"c-follow-up".into(),
                    turn,
                    user_message_id: &format!("u-{turn}"),
                    user_text: text,
                    task: &task,
                    observation: Some(&obs),
                    browser: "chrome",
                    tab_id: Some("7".into()),
                    history,
                    recent_turns: 8,
                    ambient: &laika_runtime::SystemAmbient,
                    for_model: true,
                },
                budget,
            );
            let pipeline = laika_core::interceptor::Pipeline::standard();
            let composed = pipeline
                .schema(task.name, &laika_runtime::SystemAmbient)
                .unwrap();
            let mut request = pipeline.model_request(
                packed.packet,
                &composed,
                rt.decoding(),
                laika_core::tools::McpTools::none(),
            );
            // Both answers as long: the figure compares reading the prompts.
            request.max_output_tokens = Some(64);
            rt.request_body(&request)
        };
    let first_q = "How much does a private compartment cost?";
    let (first, first_took) = chat(&url, request(1, first_q, None));
    let answer = first["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let history = laika_protocol::conversation::History {
        turns: vec![laika_protocol::conversation::PastTurn {
            turn: 1,
            task: "web.answer".into(),
            user_text: first_q.into(),
            answer_text: laika_core::text::clip(&answer, 400),
            status: "ok".into(),
            page: Some(page.clone()),
            tools: Vec::new(),
        }],
        pages: vec![page],
        ..Default::default()
    };
    let (second, second_took) = chat(&url, request(2, "And a couchette?", Some(&history)));
    let t = |v: &Value, k: &str| v["timings"][k].as_f64().unwrap_or(f64::NAN);
    for (label, reply, took) in [
        ("first", &first, first_took),
        ("follow-up", &second, second_took),
    ] {
        println!(
            "{label}: wall {:.2} s; prompt {} tokens, of which {} from the cache ({} evaluated in {:.0} ms); {} tokens written in {:.0} ms",
            took.as_secs_f64(),
            t(reply, "cache_n") + t(reply, "prompt_n"),
            t(reply, "cache_n"),
            t(reply, "prompt_n"),
            t(reply, "prompt_ms"),
            t(reply, "predicted_n"),
            t(reply, "predicted_ms"),
        );
    }
    let model_ms = |v: &Value| t(v, "prompt_ms") + t(v, "predicted_ms");
    println!(
        "follow-up / first: model time {:.3}, wall {:.3}",
        model_ms(&second) / model_ms(&first),
        second_took.as_secs_f64() / first_took.as_secs_f64()
    );
    let cached = t(&second, "cache_n");
    let whole = cached + t(&second, "prompt_n");
    assert!(
        cached > whole / 2.0,
        "the follow-up reused {cached} of {whole} prompt tokens"
    );
}

//! Performance figures for docs/PERFORMANCE.md. Prints numbers; asserts
//! nothing. Run with `bash scripts/bench.sh` (release build).
//!
//! 1. process start → `hello.result` (spawn the binary, one framed hello);
//! 2. a full `builtin` turn on a 1 MiB observation, frame in → `done` out,
//!    through the running binary, and the in-process pack + answer part alone;
//! 3. one turn's SQLite commit on disk;
//! 4. the agent loop: host time per step (model time excluded: the scripted
//!    runtime answers at once), from the extension's `tool_result` to the
//!    next call's `agent_state executing`, with a re-observed 200 KiB page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_builtin::BuiltinRuntime;
use laika_core::pack::{self, Budget, PackInput};
use laika_core::runtime::Runtime;
use laika_host::frame::{encode_frame, PartAssembler};
use laika_host::store::{Store, TurnRecord, TurnStatus};
use laika_protocol::llmcp::{Task, TaskName};
use laika_protocol::observation::Observation;
use laika_runtime::{CancelToken, ModelRequest, SystemAmbient};
#[path = "support/stats.rs"]
mod stats;
mod support;
use stats::quantile;

use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;
use support::{read_frame, spawn};

const WORDS: &[&str] = &[
    "rail",
    "night",
    "carriage",
    "ticket",
    "border",
    "station",
    "sleeper",
    "operator",
    "price",
    "demand",
    "route",
    "summer",
    "winter",
    "passenger",
    "timetable",
    "network",
    "budget",
    "service",
    "europe",
    "city",
    "track",
    "charge",
    "rule",
    "country",
    "journey",
    "comfort",
    "berth",
    "window",
    "schedule",
    "delay",
];

/// A deterministic, varied article of about `bytes` bytes.
fn article(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut n = 0;
    while out.len() < bytes {
        if n % 40 == 0 {
            out.push_str(&format!("H2: Section {}\n", n / 40 + 1));
        }
        let len = 8 + (x % 14) as usize;
        for i in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = WORDS[(x % WORDS.len() as u64) as usize];
            if i == 0 {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    out.extend(f.to_uppercase());
                    out.push_str(c.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(w);
            }
        }
        out.push_str(&format!(" in {}.\n", 1990 + n % 35));
        n += 1;
    }
    out
}

/// About 1 MiB of observation JSON in all: the page text and the primary
/// (main-content) text overlap, as they do on real article pages.
fn observation_1mib() -> Value {
    let text = article(1 << 19);
    json!({
        "summary": {
            "doc_type": "web.observation.summary.v1",
            "url": "https://news.example.org/long",
            "title": "A long article",
            "text": text,
            "primary": {"text": text, "handle_id": "laika-1"},
            "elements": (0..200).map(|i| json!({"handle_id": format!("laika-{}", i + 2), "role": "link", "text": format!("Link {i}"), "href": format!("https://news.example.org/{i}")})).collect::<Vec<_>>()
        }
    })
}

/// Steps per turn in the loop benchmark (the default step cap).
const LOOP_STEPS: usize = 8;

/// A page of about `bytes` of text with 120 elements; `n` varies it so
/// every step sees a new page.
fn page(bytes: usize, n: usize) -> Value {
    json!({
        "summary": {
            "doc_type": "web.observation.summary.v1",
            "url": format!("https://news.example.org/night-trains?page={n}"),
            "title": format!("Night trains, page {n}"),
            "text": article(bytes),
            "elements": (0..120).map(|i| json!({"handle_id": format!("laika-{}", i + 1), "role": "link", "text": format!("Link {i}"), "href": format!("https://news.example.org/{i}")})).collect::<Vec<_>>()
        }
    })
}

fn loop_steps(bin: &str, turns: usize) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let response = |calls: Value| {
        json!({
            "protocol": {"name": "laika.llmcp", "version": 1}, "id": "{{new_id}}", "type": "response",
            "created_at": "{{now}}", "conversation": {"id": "{{conversation_id}}", "turn": 999_999},
            "sender": {"role": "assistant"}, "in_reply_to": {"request_id": "{{request_id}}"},
            "assistant": {"title": "Reading", "render": {"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "Scrolling on."}]}]}, "citations": []},
            "tool_calls": calls
        })
        .to_string()
        .replace("999999", "{{turn}}")
    };
    let mut outputs = Vec::new();
    for _ in 0..turns + 1 {
        for step in 0..LOOP_STEPS - 1 {
            outputs.push(response(
                json!([{"name": "browser.scroll", "arguments": {"deltaY": (step + 1) * 100}}]),
            ));
        }
        outputs.push(response(json!([])));
    }
    let script = dir.path().join("script.json");
    std::fs::write(&script, serde_json::to_string(&outputs).unwrap()).unwrap();
    let mut child = spawn(bin, dir.path(), Some(&script));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let send = |stdin: &mut std::process::ChildStdin, msg: &Value| {
        stdin
            .write_all(&encode_frame(&serde_json::to_vec(msg).unwrap()))
            .unwrap();
        stdin.flush().unwrap();
    };
    let pages: Vec<Value> = (0..LOOP_STEPS).map(|n| page(200 << 10, n)).collect();
    let mut out = Vec::new();
    for i in 0..turns + 1 {
        let id = format!("t{i}");
        send(
            &mut stdin,
            &json!({"type": "turn", "id": id, "message": {"text": "Read the comments"},
            "task": {"name": "web.answer"}, "tab": {"browser": "chrome"}, "observation": pages[0]}),
        );
        let mut asm = PartAssembler::default();
        let mut sent_at: Option<Instant> = None;
        let mut step = 0;
        loop {
            let f = read_frame(&mut stdout).expect("host closed the pipe");
            let Some(m) = asm.push(f).unwrap() else {
                continue;
            };
            if m["reply_to"] != id.as_str() {
                continue;
            }
            if m["type"] == "done" {
                assert_eq!(m["stop_reason"], "answered", "{m}");
                break;
            }
            if m["type"] == "agent_state" && m["state"] == "executing" {
                // The first turn warms the page cache and SQLite.
                if let (Some(t), true) = (sent_at.take(), i > 0) {
                    out.push(t.elapsed().as_secs_f64() * 1e3);
                }
                step += 1;
                let result = json!({"type": "tool_result", "id": format!("r{i}-{step}"), "call_id": m["call_id"],
                    "status": "ok", "result": {"message": "Scrolled down"}, "observation": pages[step % LOOP_STEPS]});
                sent_at = Some(Instant::now());
                send(&mut stdin, &result);
            }
        }
    }
    drop(stdin);
    let _ = child.wait();
    out
}

fn start_to_hello(bin: &str, runs: usize) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let hello =
        encode_frame(br#"{"type":"hello","id":"h","protocol":{"name":"laika.wire","version":1}}"#);
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut child = spawn(bin, dir.path(), None);
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = child.stdout.take().unwrap();
            stdin.write_all(&hello).unwrap();
            stdin.flush().unwrap();
            let reply = read_frame(&mut stdout).unwrap();
            let elapsed = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(reply["type"], "hello.result");
            drop(stdin);
            let _ = child.wait();
            elapsed
        })
        .collect()
}

fn turn_over_pipes(bin: &str, obs: &Value, runs: usize) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(bin, dir.path(), None);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    for i in 0..runs + 1 {
        let id = format!("t{i}");
        let msg = json!({"type": "turn", "id": id, "message": {"text": "What happened to the sleeper service in 2001?"},
            "task": {"name": "web.answer"}, "tab": {"browser": "chrome"}, "observation": obs});
        let frame = encode_frame(&serde_json::to_vec(&msg).unwrap());
        let t = Instant::now();
        stdin.write_all(&frame).unwrap();
        stdin.flush().unwrap();
        let mut asm = PartAssembler::default();
        loop {
            let f = read_frame(&mut stdout).expect("host closed the pipe");
            if let Some(m) = asm.push(f).unwrap() {
                if m["type"] == "done" && m["reply_to"] == id.as_str() {
                    assert_eq!(m["status"], "ok", "{m}");
                    break;
                }
            }
        }
        // The first turn warms the page cache and SQLite; it is not counted.
        if i > 0 {
            out.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    drop(stdin);
    let _ = child.wait();
    out
}

fn pack_and_answer(obs: &Value, runs: usize) -> Vec<f64> {
    let runtime = BuiltinRuntime::new(SystemAmbient);
    let task = Task {
        name: TaskName::Answer,
        args: Default::default(),
    };
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let o = Observation::from_value(obs.clone()).unwrap();
            let packed = pack::pack(
                &PackInput {
                    conversation_id: &"c".into(),
                    turn: 1,
                    user_message_id: "u",
                    user_text: "What happened to the sleeper service in 2001?",
                    task: &task,
                    observation: Some(&o),
                    browser: "chrome",
                    tab_id: None,
                    history: None,
                    recent_turns: 8,
                    ambient: &laika_runtime::SystemAmbient,
                    for_model: true,
                },
                Budget::for_runtime("builtin", &Default::default()),
            );
            let req = ModelRequest {
                response_schema: serde_json::Value::Null,
                system_prompt: String::new(),
                user_prompt: String::new(),
                packet: packed.packet,
                attempt: 0,
                feedback: None,
                max_output_tokens: None,
            };
            let reply = runtime
                .complete(&req, &CancelToken::default(), &mut |_| {})
                .unwrap();
            std::hint::black_box(reply);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

fn commits(runs: usize) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("bench.sqlite3")).unwrap();
    let request = json!({"protocol": {"name": "laika.llmcp", "version": 1}, "id": "r", "type": "request",
        "context": {"documents": [{"doc_id": "doc:web:summary", "kind": "web.observation.summary.v1", "trust": "untrusted",
            "content": {"doc_type": "web.observation.summary.v1", "url": "https://e.org", "title": "T", "text": article(20_000)}}]}});
    let response = json!({"assistant": {"title": "Summary", "render": {"type": "doc", "children": []}, "citations": []}, "tool_calls": []});
    (0..runs)
        .map(|i| {
            let record = TurnRecord {
                conversation_id: format!("c{}", i / 4).into(),
                title: Some("Bench".into()),
                turn: (i % 4 + 1) as u32,
                created_at: laika_core::ambient::Ambient::now_iso8601(
                    &laika_runtime::SystemAmbient,
                ),
                task: "web.summarize".into(),
                page_url: Some("https://e.org".into()),
                user_message_id: format!("u{i}"),
                user_text: "summarize this page".into(),
                request_packet: request.clone(),
                response_packet: Some(response.clone()),
                answer_text: "Rail demand doubled since 2022. Night trains are back.".into(),
                model_id: Some("bench".into()),
                status: TurnStatus::Ok,
                error: None,
                attempts: 1,
                citations_total: 3,
                citations_verified: 3,
                timings: json!({"total_ms": 1.0}),
                store_full_packets: false,
                steps: Vec::new(),
                agent_state_deltas: Vec::new(),
                plan: None,
            };
            let t = Instant::now();
            store.commit_turn(&record).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

fn report_size(obs: &Value) {
    let bytes = serde_json::to_string(obs).map_or(0, |s| s.len());
    println!(
        "observation size: {:.2} MiB of JSON",
        bytes as f64 / (1 << 20) as f64
    );
}

fn report(name: &str, target: &str, v: Vec<f64>) {
    println!(
        "{name:<44} median {:>8.3} ms   p90 {:>8.3} ms   n={:<4} target {target}",
        quantile(&v, 0.5),
        quantile(&v, 0.9),
        v.len()
    );
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/release/laika-host".into());
    let obs = observation_1mib();
    report_size(&obs);
    println!(
        "laika-host benchmarks ({} cores)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    report("start → hello.result", "≤ 5 ms", start_to_hello(&bin, 50));
    report(
        "1 MiB observation: pack + builtin answer",
        "≤ 20 ms",
        pack_and_answer(&obs, 20),
    );
    report(
        "1 MiB observation: frame in → done out",
        "(whole turn)",
        turn_over_pipes(&bin, &obs, 20),
    );
    report("SQLite commit of one turn", "≤ 1 ms", commits(400));
    let steps = loop_steps(&bin, 25);
    println!(
        "{:<44} median {:>8.3} ms   p99 {:>8.3} ms   n={:<4} (model time excluded)",
        "agent loop step, host only (200 KiB page)",
        quantile(&steps, 0.5),
        quantile(&steps, 0.99),
        steps.len()
    );
}

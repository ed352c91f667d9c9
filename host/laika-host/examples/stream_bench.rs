//! Streaming figures: prints numbers, asserts nothing. Run with a release
//! build: `cargo run --release --example stream_bench -- target/release/laika-host`.
//!
//! Both use the scripted runtime's streamed mode (`chunk_bytes`,
//! `chunk_delay_ms`), one chunk of 4 bytes standing for one token.
//!
//! 1. Host overhead on time to first token: the first `render_delta` through
//!    the running binary (turn frame written → event read), minus the time
//!    the same stub runtime, called directly, takes to deliver the text up
//!    to the end of the first block (the earliest a block can be shown).
//!    Target ≤ 2 ms median.
//! 2. An 8-block answer streamed at 50 tokens/s: time to the first
//!    `render_delta` over time to `assistant` (the full answer). Target ≤ 0.25.

use laika_core::render::RenderLimits;
use laika_core::runtime::Runtime;
use laika_core::stream::RenderStream;
use laika_host::frame::{encode_frame, PartAssembler};
use laika_protocol::llmcp::{
    Context, ConversationRef, Input, Output, Protocol, RequestPacket, Sender, Task, TaskName,
    UserMessage,
};
use laika_runtime::scripted::{Scripted, Step};
use laika_runtime::{CancelToken, ModelRequest};
#[path = "support/stats.rs"]
mod stats;
mod support;
use stats::quantile;

use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;
use support::{read_frame, spawn};

const TOKEN_BYTES: usize = 4;

/// A response packet as a model following the schema's (alphabetical)
/// property order writes it: `assistant` first.
fn answer(blocks: usize) -> String {
    let children: Vec<Value> = (0..blocks)
        .map(|i| json!({"type": "paragraph", "children": [{"type": "text",
            "text": format!("Point {}: the night train network grew again this year, with new routes.", i + 1)}]}))
        .collect();
    json!({
        "assistant": {"title": "Summary", "render": {"type": "doc", "children": children}, "citations": []},
        "conversation": {"id": "{{conversation_id}}", "turn": 999_999},
        "created_at": "{{now}}",
        "id": "{{new_id}}",
        "in_reply_to": {"request_id": "{{request_id}}"},
        "protocol": {"name": "laika.llmcp", "version": 1},
        "sender": {"role": "assistant"},
        "tool_calls": [],
        "type": "response"
    })
    .to_string()
    .replace("999999", "{{turn}}")
}

/// Bytes of `text` needed before its first render block is complete.
fn first_block_end(text: &str) -> usize {
    let mut s = RenderStream::new(RenderLimits::default());
    let mut seen = 0;
    for c in text.chars() {
        seen += c.len_utf8();
        if !s.push(c.encode_utf8(&mut [0; 4])).is_empty() {
            return seen;
        }
    }
    text.len()
}

fn step(output: &str, chunk_delay_ms: u64) -> Value {
    json!({"output": output, "chunk_bytes": TOKEN_BYTES, "chunk_delay_ms": chunk_delay_ms})
}

fn observation() -> Value {
    json!({"summary": {"doc_type": "web.observation.summary.v1", "url": "https://news.example.org/trains",
        "title": "Night trains", "text": "H1: Night trains\nThe night train network grew again this year, with new routes."}})
}

/// Per turn through the binary: (ms to first render_delta, ms to assistant,
/// number of render_delta events).
fn over_pipes(bin: &str, script: &[Value]) -> Vec<(f64, f64, usize)> {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, Value::Array(script.to_vec()).to_string()).unwrap();
    let mut child = spawn(bin, dir.path(), Some(&script_path));
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    for i in 0..script.len() {
        let id = format!("t{i}");
        let msg = json!({"type": "turn", "id": id, "message": {"text": "Summarize"},
            "task": {"name": "web.summarize"}, "tab": {"browser": "chrome"}, "observation": observation()});
        let frame = encode_frame(&serde_json::to_vec(&msg).unwrap());
        let t = Instant::now();
        stdin.write_all(&frame).unwrap();
        stdin.flush().unwrap();
        let mut asm = PartAssembler::default();
        let (mut first, mut full, mut deltas) = (None, None, 0);
        loop {
            let f = read_frame(&mut stdout).expect("host closed the pipe");
            let Some(m) = asm.push(f).unwrap() else {
                continue;
            };
            if m["reply_to"] != id.as_str() {
                continue;
            }
            let ms = t.elapsed().as_secs_f64() * 1e3;
            match m["type"].as_str() {
                Some("render_delta") => {
                    deltas += 1;
                    first.get_or_insert(ms);
                }
                Some("assistant") => full = Some(ms),
                Some("done") => {
                    assert_eq!(m["status"], "ok", "{m}");
                    break;
                }
                _ => {}
            }
        }
        out.push((first.unwrap_or(f64::NAN), full.unwrap_or(f64::NAN), deltas));
    }
    drop(stdin);
    let _ = child.wait();
    out
}

/// The stub runtime called directly: ms until `threshold` bytes arrived.
fn direct(output: &str, chunk_delay_ms: u64, threshold: usize, runs: usize) -> Vec<f64> {
    let packet = RequestPacket {
        protocol: Protocol::default(),
        id: "req".into(),
        packet_type: "request".into(),
        created_at: laika_core::ambient::Ambient::now_iso8601(&laika_runtime::SystemAmbient),
        conversation: ConversationRef {
            id: "c".into(),
            turn: 1,
        },
        sender: Sender {
            role: "agent".into(),
        },
        input: Input {
            user_message: UserMessage {
                id: "u".into(),
                text: "Summarize".into(),
            },
            task: Task {
                name: TaskName::Summarize,
                args: Default::default(),
            },
        },
        context: Context {
            documents: vec![],
            transcript: vec![],
            conversation: None,
            plan: None,
        },
        output: Output {
            format: "json".into(),
        },
    };
    let request = ModelRequest {
        packet,
        response_schema: Value::Null,
        system_prompt: String::new(),
        user_prompt: String::new(),
        attempt: 0,
        feedback: None,
        max_output_tokens: None,
    };
    (0..runs)
        .map(|_| {
            let step: Step = serde_json::from_value(step(output, chunk_delay_ms)).unwrap();
            let runtime = Scripted::new(vec![step]);
            let mut got = 0;
            let mut at = None;
            let t = Instant::now();
            runtime
                .complete(&request, &CancelToken::default(), &mut |piece| {
                    got += piece.len();
                    if got >= threshold && at.is_none() {
                        at = Some(t.elapsed().as_secs_f64() * 1e3);
                    }
                })
                .unwrap();
            at.unwrap_or(f64::NAN)
        })
        .collect()
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/release/laika-host".into());
    let text = answer(8);
    let threshold = first_block_end(&text);
    println!(
        "laika-host streaming benchmarks ({} cores); 8-block answer of {} bytes, first block complete after {} bytes",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        text.len(),
        threshold
    );

    // 1. Overhead on time to first token, with a fast stream (2 ms/token).
    let runs = 20;
    let delay = 2;
    let script: Vec<Value> = (0..runs + 1).map(|_| step(&text, delay)).collect();
    // The first turn warms the page cache and SQLite; it is not counted.
    let host: Vec<f64> = over_pipes(&bin, &script)
        .into_iter()
        .skip(1)
        .map(|r| r.0)
        .collect();
    let stub = direct(&text, delay, threshold, runs);
    let (h, s) = (quantile(&host, 0.5), quantile(&stub, 0.5));
    println!(
        "time to first block: host {h:>8.3} ms, stub runtime direct {s:>8.3} ms, host overhead {:>7.3} ms (median, n={runs}; target ≤ 2 ms)",
        h - s
    );

    // 2. 8 blocks at 50 tokens/s (20 ms per 4-byte token).
    let runs = 3;
    let script: Vec<Value> = (0..runs).map(|_| step(&text, 20)).collect();
    let results = over_pipes(&bin, &script);
    for (first, full, deltas) in &results {
        println!(
            "50 tok/s: first render_delta {first:>8.1} ms, assistant {full:>8.1} ms, ratio {:.3}, {deltas} render_delta events",
            first / full
        );
    }
    let ratio = quantile(
        &results.iter().map(|(f, a, _)| f / a).collect::<Vec<_>>(),
        0.5,
    );
    println!("time to first rendered block / time to full answer: {ratio:.3} (median, n={runs}; target ≤ 0.25)");
}

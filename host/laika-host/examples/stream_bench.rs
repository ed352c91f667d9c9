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
//!    Also the host's CPU per streamed turn (its process's user + system
//!    time over the measured turns, which load moves far less than wall
//!    time). `LAIKA_BENCH_TURNS` sets the number of turns (default 40),
//!    `LAIKA_BENCH_GAP_MS` a pause before each (default none: the next turn
//!    is sent as soon as the previous one's `done` is read).
//!    Then the same turns again with the host marking its stages
//!    (`LAIKA_STAGE_TIMES`): the median time from writing the turn frame to
//!    each stage, up to the first `render_delta` written.
//! 2. An 8-block answer streamed at 50 tokens/s: time to the first
//!    `render_delta` over time to `assistant` (the full answer). Target ≤ 0.25.
//! 3. The host's own work, in process: the turn engine from the turn
//!    request to the model's request, and fed the same pieces from the
//!    first to the first block, each event put in its envelope and framed
//!    as the writer does; neither the stub's sleeps nor threads count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::ambient::Fixed;
use laika_core::engine::{Action, Input as EngineInput, Reservation, Turn};
use laika_core::render::RenderLimits;
use laika_core::runtime::Runtime;
use laika_core::stream::RenderStream;
use laika_host::frame::{encode_frame, encode_message, PartAssembler, MAX_OUTBOUND_FRAME};
use laika_protocol::event::Event;
use laika_protocol::llmcp::{
    Context, ConversationRef, Input, Output, Protocol, RequestPacket, Sender, Task, TaskName,
    UserMessage,
};
use laika_runtime::scripted::{Scripted, Step};
use laika_runtime::{CancelToken, ModelRequest};
#[path = "support/settings.rs"]
mod settings;
#[path = "support/stats.rs"]
mod stats;
mod support;
use stats::quantile;

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use support::read_frame;

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

/// CPU time (user + system, ms) a process used so far, its ended threads
/// included; in clock ticks (10 ms), so it is read over many turns.
fn process_cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(utime), Some(stime)) => (utime + stime) * 10.0,
        _ => f64::NAN,
    }
}

/// One turn through the binary, in ms from writing its frame.
struct Timed {
    /// The first `agent_state` (`thinking`): the model is asked next.
    thinking: f64,
    first_block: f64,
    assistant: f64,
    render_deltas: usize,
    /// When its frame was written, in ns on the wall clock.
    written_at: u128,
}

fn wall_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Each stage the host marked (`laika_host::stage_times`) on the way of a
/// turn, at its first mark after the turn's frame was written: the median
/// over `turns` (the first left out) of µs since that write, in order.
fn stage_split(file: &Path, turns: &[Timed]) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let marks: Vec<(u128, &str)> = text
        .lines()
        .filter_map(|l| {
            let (ns, stage) = l.split_once(' ')?;
            Some((ns.parse().ok()?, stage))
        })
        .collect();
    let mut by_stage: Vec<(String, Vec<f64>)> = Vec::new();
    for (i, turn) in turns.iter().enumerate().skip(1) {
        let end = turns.get(i + 1).map_or(u128::MAX, |t| t.written_at);
        let mut seen = std::collections::HashSet::new();
        for (ns, stage) in &marks {
            if *ns < turn.written_at || *ns >= end || !seen.insert(*stage) {
                continue;
            }
            let us = (*ns - turn.written_at) as f64 / 1e3;
            match by_stage.iter_mut().find(|(s, _)| s == stage) {
                Some((_, v)) => v.push(us),
                None => by_stage.push((stage.to_string(), vec![us])),
            }
        }
    }
    let mut split: Vec<(String, f64)> = by_stage
        .into_iter()
        .map(|(stage, v)| (stage, quantile(&v, 0.5)))
        .collect();
    split.sort_by(|a, b| a.1.total_cmp(&b.1));
    split
}

/// Each turn through the binary, and the host's CPU per turn after the
/// first (ms). With `stages`, the host records its stage times
/// (`laika_host::stage_times`) there, and each turn's `Timed` has its
/// frame's write time on the wall clock.
fn over_pipes(bin: &str, script: &[Value], stages: Option<&Path>) -> (Vec<Timed>, f64) {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, Value::Array(script.to_vec()).to_string()).unwrap();
    let mut command = support::command(bin, dir.path(), Some(&script_path));
    if let Some(file) = stages {
        command.env(laika_host::stage_times::ENV, file);
    }
    let mut child = command.spawn().expect("cannot start the host");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    let mut cpu_after_first = f64::NAN;
    // Before each turn, so that the previous turn's work after `done`
    // (rolling summary, agent state) is over before the next starts.
    let gap = std::env::var("LAIKA_BENCH_GAP_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(std::time::Duration::from_millis);
    for i in 0..script.len() {
        let id = format!("t{i}");
        let msg = json!({"type": "turn", "id": id, "message": {"text": "Summarize"},
            "task": {"name": "web.summarize"}, "tab": {"browser": "chrome"}, "observation": observation()});
        let frame = encode_frame(&serde_json::to_vec(&msg).unwrap());
        if let Some(gap) = gap {
            std::thread::sleep(gap);
        }
        let written_at = wall_ns();
        let t = Instant::now();
        stdin.write_all(&frame).unwrap();
        stdin.flush().unwrap();
        let mut asm = PartAssembler::default();
        let (mut thinking, mut first, mut full, mut deltas) = (None, None, None, 0);
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
                Some("agent_state") => {
                    thinking.get_or_insert(ms);
                }
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
        out.push(Timed {
            thinking: thinking.unwrap_or(f64::NAN),
            first_block: first.unwrap_or(f64::NAN),
            assistant: full.unwrap_or(f64::NAN),
            render_deltas: deltas,
            written_at,
        });
        if i == 0 {
            cpu_after_first = process_cpu_ms(child.id());
        }
    }
    let cpu = (process_cpu_ms(child.id()) - cpu_after_first) / (script.len() - 1).max(1) as f64;
    drop(stdin);
    let _ = child.wait();
    (out, cpu)
}

/// The host's own work in process, per run: (ms from the turn request to
/// the model's request (pack, compose), ms from the first piece of the
/// answer to its first `render_delta`, pieces read until then). Both loops
/// are CPU-bound (no sleeps, no I/O), so their median wall time is their
/// CPU time; a run the scheduler preempts shows in the p90 only.
fn engine_to_first_block(text: &str, runs: usize) -> Vec<(f64, f64, usize)> {
    let pieces: Vec<String> = text
        .as_bytes()
        .chunks(TOKEN_BYTES)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let request = json!({"type": "turn", "id": "t", "message": {"text": "Summarize"},
        "task": {"name": "web.summarize"}, "tab": {"browser": "chrome"}, "observation": observation()});
    let reply_to = laika_protocol::ids::RequestId::from("t");
    (0..runs)
        .map(|_| {
            let ambient = Fixed::new();
            let started = Instant::now();
            let (mut turn, _) = Turn::start(
                serde_json::from_value(request.clone()).unwrap(),
                settings::scripted(),
                &ambient,
            );
            let actions = turn.handle(EngineInput::Reserved(Ok(Reservation::from(1))));
            assert!(actions.iter().any(|a| matches!(a, Action::Ask(_))));
            let before_model = started.elapsed().as_secs_f64() * 1e3;
            let wall = Instant::now();
            let mut fed = 0;
            for piece in &pieces {
                fed += 1;
                // The pieces' time goes by, so text is coalesced as in a
                // real stream at 2 ms a piece.
                ambient.advance(std::time::Duration::from_millis(2));
                let mut block = false;
                for action in turn.handle(EngineInput::ModelText(piece.clone())) {
                    if let Action::Emit(event) = action {
                        block |= matches!(event, Event::RenderDelta(_));
                        let json = laika_host::sink::to_json(Some(&reply_to), &event);
                        std::hint::black_box(encode_message(&json, MAX_OUTBOUND_FRAME).unwrap());
                    }
                }
                if block {
                    break;
                }
            }
            (before_model, wall.elapsed().as_secs_f64() * 1e3, fed)
        })
        .collect()
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
    let runs: usize = std::env::var("LAIKA_BENCH_TURNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40)
        .max(2);
    let delay = 2;
    let script: Vec<Value> = (0..runs + 1).map(|_| step(&text, delay)).collect();
    // The first turn warms the page cache and SQLite; it is not counted.
    let (turns, cpu_per_turn) = over_pipes(&bin, &script, None);
    let host: Vec<f64> = turns.iter().skip(1).map(|t| t.first_block).collect();
    let thinking: Vec<f64> = turns.iter().skip(1).map(|t| t.thinking).collect();
    let stub = direct(&text, delay, threshold, runs);
    let (h, s) = (quantile(&host, 0.5), quantile(&stub, 0.5));
    println!(
        "time to first block: host {h:>8.3} ms, stub runtime direct {s:>8.3} ms, host overhead {:>7.3} ms (median, n={runs}; target ≤ 2 ms)",
        h - s
    );
    println!(
        "  spread: host p10 {:.3} / p90 {:.3} ms, stub p10 {:.3} / p90 {:.3} ms",
        quantile(&host, 0.1),
        quantile(&host, 0.9),
        quantile(&stub, 0.1),
        quantile(&stub, 0.9)
    );
    println!(
        "  turn frame written → agent_state thinking (the host's work before the model): {:.3} ms (median; p10 {:.3}, p90 {:.3})",
        quantile(&thinking, 0.5),
        quantile(&thinking, 0.1),
        quantile(&thinking, 0.9)
    );
    println!("  host CPU per streamed turn (user + system, whole turn): {cpu_per_turn:.2} ms");

    // The same turns again, the host marking its stages: where its time
    // before the model goes (a separate run, so the marks' own cost is not
    // in the figures above).
    let stages = tempfile::NamedTempFile::new().unwrap();
    let (turns, _) = over_pipes(&bin, &script, Some(stages.path()));
    let split = stage_split(stages.path(), &turns);
    if split.is_empty() {
        println!("  stages: none recorded (a host without stage times)");
    } else {
        println!("  stages, µs from writing the turn frame to the host's first mark of each (median, n={runs}):");
        for (stage, us) in &split {
            println!("    {us:>9.1}  {stage}");
            if stage == "written render_delta" {
                break;
            }
        }
    }

    // 2. 8 blocks at 50 tokens/s (20 ms per 4-byte token).
    let runs = 3;
    let script: Vec<Value> = (0..runs).map(|_| step(&text, 20)).collect();
    let (results, _) = over_pipes(&bin, &script, None);
    for t in &results {
        println!(
            "50 tok/s: first render_delta {:>8.1} ms, assistant {:>8.1} ms, ratio {:.3}, {} render_delta events",
            t.first_block,
            t.assistant,
            t.first_block / t.assistant,
            t.render_deltas
        );
    }
    let ratio = quantile(
        &results
            .iter()
            .map(|t| t.first_block / t.assistant)
            .collect::<Vec<_>>(),
        0.5,
    );
    println!("time to first rendered block / time to full answer: {ratio:.3} (median, n={runs}; target ≤ 0.25)");

    // 3. The host's own work, in process.
    let runs = 500;
    let results = engine_to_first_block(&text, runs);
    let before: Vec<f64> = results.iter().map(|r| r.0).collect();
    let stream: Vec<f64> = results.iter().map(|r| r.1).collect();
    let pieces = results.first().map_or(0, |r| r.2);
    println!(
        "engine in process, turn request → model request (pack, compose): {:.4} ms (p10 {:.4}, p90 {:.4}; median, n={runs})",
        quantile(&before, 0.5),
        quantile(&before, 0.1),
        quantile(&before, 0.9),
    );
    let median = quantile(&stream, 0.5);
    println!(
        "engine + envelopes in process, first piece → first render_delta ({pieces} pieces): {median:.4} ms (p10 {:.4}, p90 {:.4}), {:.3} µs a piece (median, n={runs})",
        quantile(&stream, 0.1),
        quantile(&stream, 0.9),
        median * 1e3 / pieces.max(1) as f64,
    );
}

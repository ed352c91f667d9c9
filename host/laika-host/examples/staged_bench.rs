//! Staged summarize figures for docs/PERFORMANCE.md. Prints numbers;
//! asserts nothing. Run with `bash scripts/bench.sh` (release build).
//!
//! A `web.summarize` turn on a 400,000-char page (the extension's shape: a
//! 6,000-char head and 4,000-char chunks) for a model with an 8,192-token
//! window, driven through the turn engine with the scripted runtime (each
//! part answered at once with two points): the parts, the calls, the whole
//! turn's time and the host's time per model call (everything outside the
//! runtime's `complete`: planning, building each part's request, reading
//! its points, the reduce request, validation, citations against the page).
//! Then the same turn against a model that takes 50 ms a call, with its
//! parts read one at a time and four at a time (`transform_concurrency`),
//! through the host's driver of parallel calls (`turn::ask_parts`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic
#![allow(clippy::disallowed_methods)]

#[path = "support/stats.rs"]
mod stats;

use laika_core::ambient::Ambient;
use laika_core::cancel::CancelToken;
use laika_core::engine::{Action, Input, Reservation, Turn, TurnSettings};
use laika_core::model::ContextWindow;
use laika_core::runtime::Runtime;
use laika_host::turn::PartEvent;
use laika_protocol::event::Event;
use laika_protocol::limits::Limits;
use laika_runtime::scripted::Scripted;
use laika_runtime::SystemAmbient;
use serde_json::{json, Value};
use stats::quantile;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn page() -> Value {
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < 400_000 {
        text.push_str(&format!(
            "Item {i}. The committee reviewed request {} on the harbour, schools and roads, and deferred it.\n",
            i * 7 % 1000
        ));
        i += 1;
    }
    let (head, rest) = text.split_at(6_000);
    let chunks: Vec<&str> = rest
        .as_bytes()
        .chunks(4_000)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    json!({
        "summary": {"doc_type": "web.observation.summary.v1", "url": "https://example.com/minutes", "title": "Minutes", "text": head},
        "chunks": chunks.iter().enumerate().map(|(i, c)| json!({
            "doc_type": "web.observation.chunk.v1", "url": "https://example.com/minutes",
            "title": "Minutes", "chunk_index": i + 1, "chunk_count": chunks.len(), "text": c
        })).collect::<Vec<_>>()
    })
}

/// Every call's answer: two points, one a quote of the page.
fn script() -> String {
    let answer = json!({
        "protocol": {"name": "laika.llmcp", "version": 1}, "id": "{{new_id}}", "type": "response",
        "created_at": "{{now}}", "conversation": {"id": "{{conversation_id}}", "turn": "{{turn}}"},
        "sender": {"role": "assistant"}, "in_reply_to": {"request_id": "{{request_id}}"},
        "assistant": {"title": "Summary", "render": {"type": "doc", "children": [
            {"type": "paragraph", "children": [{"type": "text", "text": "The committee reviewed requests and deferred them."}]},
            {"type": "paragraph", "children": [{"type": "text", "text": "Item 12. The committee reviewed request 84 on the harbour, schools and roads, and deferred it."}]}
        ]}, "citations": [{"doc_id": "doc:web:summary", "quote": "The committee reviewed request 84 on the harbour"}]},
        "tool_calls": []
    })
    .to_string()
    .replace("\"{{turn}}\"", "{{turn}}");
    serde_json::to_string(&vec![answer; 400]).unwrap_or_default()
}

/// A model that takes `latency` to answer each call (as the scripted
/// runtime would answer it at once).
struct Slow {
    inner: Scripted,
    latency: Duration,
}

impl Runtime for Slow {
    fn info(&self) -> laika_protocol::model::RuntimeInfo {
        self.inner.info()
    }
    fn decoding(&self) -> laika_core::decoding::Decoding {
        self.inner.decoding()
    }
    fn complete(
        &self,
        request: &laika_core::model::ModelRequest,
        cancel: &CancelToken,
        on_text: &mut laika_core::runtime::TextSink<'_>,
    ) -> laika_protocol::error::Result<laika_core::model::ModelReply> {
        std::thread::sleep(self.latency);
        self.inner.complete(request, cancel, on_text)
    }
}

struct Run {
    total: Duration,
    in_runtime: Duration,
    calls: usize,
    parts: usize,
    verified: bool,
}

fn scripted() -> Scripted {
    Scripted::from_json(&script()).unwrap_or_else(|e| panic!("script: {e}"))
}

fn run(page: &Value) -> Run {
    run_with(page, &scripted(), 1)
}

/// One turn on `page` with `runtime`, its parts `concurrency` at a time.
fn run_with(page: &Value, runtime: &dyn Runtime, concurrency: usize) -> Run {
    let request = serde_json::from_value(json!({
        "type": "turn", "id": "t", "message": {"text": "Summarize this page"},
        "task": {"name": "web.summarize"}, "tab": {}, "observation": page
    }))
    .unwrap_or_else(|e| panic!("turn request: {e}"));
    let settings = TurnSettings {
        limits: Limits {
            transform_concurrency: concurrency,
            // Read without asking: nobody is there to answer an estimate.
            confirm_calls: laika_protocol::limits::MAX_CONFIRM_CALLS,
            ..Limits::default()
        },
        runtime: runtime.info(),
        store_full_packets: false,
        context_window: Some(ContextWindow {
            tokens: 8_192,
            source: "bench".into(),
        }),
        page_indexes: None,
        decoding: runtime.decoding(),
        integrations: Vec::new(),
        mcp: Default::default(),
        cancel: laika_core::cancel::CancelToken::default(),
        call_time: None,
    };
    let cancel = CancelToken::default();
    let started = Instant::now();
    let mut in_runtime = Duration::ZERO;
    let (mut calls, mut parts, mut verified) = (0, 0, false);
    let (mut turn, first) = Turn::start(request, settings, &SystemAmbient);
    let mut queue: std::collections::VecDeque<Action> = first.into();
    while let Some(action) = queue.pop_front() {
        let next = match action {
            Action::Reserve { .. } => turn.handle(Input::Reserved(Ok(Reservation::from(1)))),
            Action::Ask(request) => {
                calls += 1;
                let t = Instant::now();
                let reply = runtime.complete(&request, &cancel, &mut |_| {});
                in_runtime += t.elapsed();
                drop(request);
                turn.handle(Input::ModelReply(reply))
            }
            Action::AskParts {
                requests,
                concurrency,
            } => {
                calls += requests.len();
                let mut next = Vec::new();
                let t = Instant::now();
                laika_host::turn::ask_parts(runtime, &cancel, &requests, concurrency, &mut |e| {
                    let input = match e {
                        PartEvent::Started(i) => Input::PartStarted(i),
                        PartEvent::Replied(index, reply) => Input::PartReply { index, reply },
                    };
                    next.extend(turn.handle(input));
                });
                in_runtime += t.elapsed();
                next
            }
            Action::Emit(Event::ContextUsage(u)) => {
                parts = u.selection.map_or(0, |s| s.passages_total);
                continue;
            }
            Action::Emit(Event::Assistant(a)) => {
                verified = a.citations.iter().any(|c| c.verified);
                continue;
            }
            Action::Commit(_) => turn.handle(Input::Committed(Ok(()))),
            Action::Finish => break,
            _ => continue,
        };
        queue.extend(next);
    }
    Run {
        total: started.elapsed(),
        in_runtime,
        calls,
        parts,
        verified,
    }
}

fn main() {
    let page = page();
    println!(
        "laika-host staged summarize benchmark ({} cores; started {})",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        SystemAmbient.now_iso8601()
    );
    run(&page);
    let runs: Vec<Run> = (0..RUNS).map(|_| run(&page)).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let totals: Vec<f64> = runs.iter().map(|r| ms(r.total)).collect();
    let per_call: Vec<f64> = runs
        .iter()
        .map(|r| ms(r.total.saturating_sub(r.in_runtime)) / r.calls.max(1) as f64)
        .collect();
    let first = &runs[0];
    println!(
        "400,000-char page, 8,192-token window: {} parts, {} model calls (parts, combining, summary); quote verified against the page: {}",
        first.parts, first.calls, first.verified
    );
    println!(
        "  whole turn (scripted runtime): median {:.1} ms, max {:.1} ms ({RUNS} runs)",
        quantile(&totals, 0.5),
        quantile(&totals, 1.0)
    );
    println!(
        "  host time per model call (outside the runtime): median {:.2} ms, max {:.2} ms",
        quantile(&per_call, 0.5),
        quantile(&per_call, 1.0)
    );
    let latency = Duration::from_millis(50);
    let mut walls = Vec::new();
    for concurrency in [1, 4] {
        let slow = Slow {
            inner: scripted(),
            latency,
        };
        let r = run_with(&page, &slow, concurrency);
        println!(
            "  model taking {} ms a call, parts {concurrency} at a time: whole turn {:.2} s ({} calls)",
            latency.as_millis(),
            r.total.as_secs_f64(),
            r.calls
        );
        walls.push(r.total.as_secs_f64());
    }
    if let [one, four] = walls[..] {
        println!("  concurrency 4 against 1: {:.2}x faster", one / four);
    }
}

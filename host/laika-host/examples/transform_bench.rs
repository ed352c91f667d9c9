//! Transform figures for docs/PERFORMANCE.md. Prints numbers; asserts
//! nothing. Run with `bash scripts/bench.sh` (release build).
//!
//! 1. a 20-source `comparison` transform with the builtin runtime, through
//!    the host tool as a turn runs it (SQLite on disk): total time, and the
//!    host's share (everything outside the runtime's `complete` calls:
//!    loading the collection, building each map request, reading the
//!    replies, the reduce step, saving the artifact);
//! 2. the same transform with a stub model that answers the builtin's text
//!    at a fixed token rate (a first-token latency plus 4 chars per token):
//!    wall time with `transform_concurrency` 1 and 4.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_builtin::BuiltinRuntime;
use laika_core::cancel::CancelToken;
use laika_core::model::{ModelReply, ModelRequest};
use laika_core::runtime::{Runtime, TextSink};
use laika_host::store::Store;
use laika_host::tools::{self, ToolContext};
use laika_host::transform::Progress;
use laika_protocol::error::Result;
use laika_protocol::model::RuntimeInfo;
use laika_protocol::tool_call::{ToolCall, ToolName, ToolOutput};
use laika_runtime::SystemAmbient;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SOURCES: usize = 20;
/// The stub model's speed: tokens per second per request, and the wait
/// before its first token.
const TOKENS_PER_SEC: f64 = 2_000.0;
const FIRST_TOKEN: Duration = Duration::from_millis(40);

/// Words the generated sources are made of (varied enough for the ranking
/// to pick different sentences per source).
const VOCABULARY: &str = "rail night carriage ticket border station sleeper operator price \
     demand route summer winter passenger timetable cabin bicycle delay";

/// A source of about 6 KB: paragraphs of sentences with figures and years.
fn source_text(seed: usize) -> String {
    let words: Vec<&str> = VOCABULARY.split_whitespace().collect();
    let mut out = String::new();
    let mut n = seed * 7919 + 13;
    for p in 0..12 {
        out.push_str(&format!("H2: Section {p} of report {seed}\n"));
        for s in 0..5 {
            let mut sentence = Vec::new();
            for _ in 0..14 {
                n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345) % 2_147_483_648;
                sentence.push(words[n % words.len()]);
            }
            out.push_str(&format!(
                "The {} service {} carried {} passengers in {}. ",
                sentence[0],
                sentence[1..].join(" "),
                100 + (n % 900),
                1990 + (s + p + seed) % 35
            ));
        }
        out.push('\n');
    }
    out
}

/// Counts the time spent inside another runtime's `complete`.
struct Timed<'a> {
    inner: &'a dyn Runtime,
    nanos: AtomicU64,
}

impl Runtime for Timed<'_> {
    fn info(&self) -> RuntimeInfo {
        self.inner.info()
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        let t = Instant::now();
        let reply = self.inner.complete(request, cancel, on_text);
        let spent = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(spent, Ordering::Relaxed);
        reply
    }
}

/// The builtin's answer, delivered at a fixed token rate.
struct Stub;

impl Runtime for Stub {
    fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            kind: "stub".into(),
            model: "stub-fixed-rate".into(),
            offline: true,
            label: "Stub model at a fixed token rate".into(),
        }
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        let reply = BuiltinRuntime::new(SystemAmbient).complete(request, cancel, &mut |_| {})?;
        let tokens = reply.text.chars().count() as f64 / 4.0;
        std::thread::sleep(FIRST_TOKEN + Duration::from_secs_f64(tokens / TOKENS_PER_SEC));
        cancel.check()?;
        on_text(&reply.text);
        Ok(reply)
    }
}

/// A figure over fewer sources than asked would mislead: say so.
fn warn_short(result: &Value) {
    if result["sourcesRead"] != SOURCES {
        eprintln!(
            "warning: only {} of {SOURCES} sources were read",
            result["sourcesRead"]
        );
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("laika-transform-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Mutex::new(Store::open(&dir.join("history.sqlite3")).expect("store"));
    let progress = |_: Progress| {};
    let cancel = CancelToken::default();
    let run = |runtime: &dyn Runtime, concurrency: usize, name: &str, args: Value| -> Value {
        let tool_ctx = ToolContext {
            store: &store,
            runtime,
            cancel: &cancel,
            ambient: &SystemAmbient,
            concurrency,
            progress: &progress,
            integrations: &Default::default(),
            mcp: laika_host::mcp_client::McpHub::none(),
        };
        let tool = ToolName::from_name(name).expect("a tool");
        let call = ToolCall::from_arguments(tool, args).expect("valid arguments");
        tools::run(&call, None, &tool_ctx)
            .map(ToolOutput::into_value)
            .unwrap_or_else(|e| panic!("{name}: {}", e.message))
    };
    let created = run(
        &BuiltinRuntime::new(SystemAmbient),
        1,
        "collection.create",
        json!({"title": "Bench"}),
    );
    let id = created["collectionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let sources: Vec<Value> = (0..SOURCES)
        .map(|i| json!({"type": "note", "title": format!("Report {i}"), "text": source_text(i)}))
        .collect();
    run(
        &BuiltinRuntime::new(SystemAmbient),
        1,
        "collection.add_sources",
        json!({"collectionId": id, "sources": sources}),
    );
    let args = json!({"collectionId": id, "type": "comparison"});

    // Warm up (schema compilation, page cache).
    run(
        &BuiltinRuntime::new(SystemAmbient),
        1,
        "transform.run",
        args.clone(),
    );
    let rounds = 5;
    let mut totals = Vec::new();
    let mut host = Vec::new();
    for _ in 0..rounds {
        let timed = Timed {
            inner: &BuiltinRuntime::new(SystemAmbient),
            nanos: AtomicU64::new(0),
        };
        let t = Instant::now();
        let result = run(&timed, 1, "transform.run", args.clone());
        let total = t.elapsed();
        warn_short(&result);
        let runtime = Duration::from_nanos(timed.nanos.load(Ordering::Relaxed));
        totals.push(total.as_secs_f64() * 1e3);
        host.push(total.saturating_sub(runtime).as_secs_f64() * 1e3);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (total, host_ms) = (median(&mut totals), median(&mut host));
    println!(
        "builtin, {SOURCES}-source comparison (concurrency 1, median of {rounds}): total {total:.1} ms, host {host_ms:.1} ms ({:.0}% host share; the rest is the extractive runtime)",
        100.0 * host_ms / total
    );
    let timed = Timed {
        inner: &BuiltinRuntime::new(SystemAmbient),
        nanos: AtomicU64::new(0),
    };
    let t = Instant::now();
    run(&timed, 4, "transform.run", args.clone());
    println!(
        "builtin, {SOURCES}-source comparison (concurrency 4): total {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    let mut walls = Vec::new();
    for concurrency in [1, 4] {
        let t = Instant::now();
        let result = run(&Stub, concurrency, "transform.run", args.clone());
        let wall = t.elapsed().as_secs_f64();
        warn_short(&result);
        println!(
            "stub model ({TOKENS_PER_SEC:.0} tokens/s per request, {} ms to first token), {SOURCES}-source comparison, concurrency {concurrency}: wall {wall:.2} s",
            FIRST_TOKEN.as_millis()
        );
        walls.push(wall);
    }
    println!(
        "speed-up at concurrency 4: {:.2}× (goal ≥ 3×)",
        walls[0] / walls[1]
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

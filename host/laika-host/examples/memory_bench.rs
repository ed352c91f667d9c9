//! Conversation figures for docs/PERFORMANCE.md. Prints numbers; asserts
//! nothing. Run with `bash scripts/bench.sh` (release build).
//!
//! 1. context assembly of a follow-up (the page's index kept by the session,
//!    as `page_index` keeps it) and of a first question on the page (index
//!    built): a 50-turn conversation and a 1 MiB
//!    page (in the extension's shape: an 8,000-char head and 4,000-char
//!    chunks), packed for a question into an 8,192-token window and into the
//!    fixed 24k budget (conversation block + passage selection + packet);
//! 2. model token → `text_delta`: the turn engine's time for one streamed
//!    piece of ~4 chars (a token) until the `text_delta` it produces.
//!
//! `memory_bench follow-up [runs]` times only the follow-up (8,192 window),
//! with its stages, for a profiler (`perf record`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic
#![allow(clippy::disallowed_methods)]

#[path = "support/settings.rs"]
mod settings;
#[path = "support/stats.rs"]
mod stats;

use laika_core::ambient::Fixed;
use laika_core::engine::{Action, Input, Reservation, Turn};
use laika_core::pack::{self, Budget, PackInput};
use laika_core::select::PageIndexes;
use laika_host::page_index::PageIndexCache;
use laika_protocol::conversation::{History, PastTurn, StoredSummary};
use laika_protocol::event::Event;
use laika_protocol::limits::Limits;
use laika_protocol::llmcp::{PageRef, Task, TaskName};
use laika_protocol::observation::Observation;
use serde_json::{json, Value};
use stats::quantile;
use std::time::Instant;

const WORDS: &[&str] = &[
    "council",
    "bridge",
    "budget",
    "school",
    "road",
    "park",
    "library",
    "vote",
    "mayor",
    "tax",
    "housing",
    "transport",
    "river",
    "harbour",
    "plan",
    "report",
    "delay",
    "contract",
    "tender",
    "museum",
];

/// Lines of prose with the punctuation pages have: a colon and a question
/// mark on every line, a link every 40 lines, an address every 200 (the
/// URL redaction that reads every chunk has to look at those).
fn text(chars: usize, seed: usize) -> String {
    let mut out = String::with_capacity(chars + 100);
    let mut i = seed;
    let mut line = 0usize;
    while out.len() < chars {
        for _ in 0..14 {
            out.push_str(WORDS[(i * 7 + 3) % WORDS.len()]);
            out.push(' ');
            i += 1;
        }
        line += 1;
        out.push_str(&format!("item {i}: is it due? "));
        if line % 40 == 0 {
            out.push_str(&format!("See https://example.org/items/{i}?ref=list. "));
        }
        if line % 200 == 0 {
            out.push_str("Write to clerk@example.org. ");
        }
        out.push('\n');
    }
    out.truncate(chars);
    out
}

fn page_1mib() -> Value {
    let body = text(1 << 20, 1);
    let (head, rest) = body.split_at(8_000);
    let chunks: Vec<&str> = rest
        .as_bytes()
        .chunks(4_000)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    let n = chunks.len();
    json!({
        "summary": {"doc_type": "web.observation.summary.v1", "url": "https://example.org/minutes", "title": "Minutes", "text": head},
        "chunks": chunks.iter().enumerate().map(|(i, c)| json!({
            "doc_type": "web.observation.chunk.v1", "url": "https://example.org/minutes", "title": "Minutes",
            "chunk_index": i + 1, "chunk_count": n, "text": c
        })).collect::<Vec<_>>()
    })
}

fn history_50() -> History {
    History {
        turns: (1..=50)
            .map(|i| PastTurn {
                turn: i,
                task: "web.answer".into(),
                user_text: text(200, i as usize),
                answer_text: text(1_500, i as usize * 3),
                status: "ok".into(),
                page: Some(PageRef {
                    url: format!("https://example.org/p{}", i % 5),
                    title: format!("Page {}", i % 5),
                }),
                tools: vec![format!("browser.click → ok: clicked item {i}")],
            })
            .collect(),
        summary: Some(StoredSummary {
            version: 3,
            through_turn: 0,
            text: text(4_000, 9),
        }),
        memory: Some(text(1_000, 5)),
        pages: (0..5)
            .map(|i| PageRef {
                url: format!("https://example.org/p{i}"),
                title: format!("Page {i}"),
            })
            .collect(),
        agent_state: None,
    }
}

fn report(name: &str, target: &str, v: Vec<f64>) {
    println!(
        "{name:<52} median {:>8.3} ms   p99 {:>8.3} ms   n={:<5} target {target}",
        quantile(&v, 0.5),
        quantile(&v, 0.99),
        v.len()
    );
}

/// `indexes`: the session's page indexes (a follow-up on the page finds its
/// index there); `None` indexes the page for every request, as the first
/// question on a page does.
fn assembly(
    obs: &Observation,
    history: &History,
    budget: Budget,
    runs: usize,
    indexes: Option<&dyn PageIndexes>,
) -> Vec<f64> {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let packed = assembly_packed(obs, history, budget, indexes);
            let prompt = laika_core::prompt::user_prompt(&packed.packet);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(prompt);
            ms
        })
        .collect()
}

/// The follow-up's packet (what [`assembly`] times, but the prompt).
fn assembly_packed(
    obs: &Observation,
    history: &History,
    budget: Budget,
    indexes: Option<&dyn PageIndexes>,
) -> pack::Packed {
    let task = Task {
        name: TaskName::Answer,
        args: Default::default(),
    };
    pack::pack_with(
        &PackInput {
            conversation_id: &"c".into(),
            turn: 51,
            user_message_id: "u",
            user_text: "How much will the harbour bridge contract cost?",
            task: &task,
            observation: Some(obs),
            browser: "chrome",
            tab_id: None,
            history: Some(history),
            recent_turns: 8,
            ambient: &laika_runtime::SystemAmbient,
            for_model: true,
        },
        budget,
        indexes,
    )
}

/// The engine's time per streamed token that yields a `text_delta`.
fn token_to_text_delta(runs: usize) -> Vec<f64> {
    let paragraph = text(3_000, 4).replace('\n', " ");
    let answer = json!({
        "protocol": {"name": "laika.llmcp", "version": 1}, "id": "r", "type": "response",
        "created_at": "2026-01-01T00:00:00Z", "conversation": {"id": "c", "turn": 1},
        "sender": {"role": "assistant"}, "in_reply_to": {"request_id": "x"},
        "assistant": {"title": "A", "render": {"type": "doc", "children": [
            {"type": "paragraph", "children": [{"type": "text", "text": paragraph}]}
        ]}, "citations": []},
        "tool_calls": []
    })
    .to_string();
    let pieces: Vec<String> = answer
        .chars()
        .collect::<Vec<_>>()
        .chunks(4)
        .map(|c| c.iter().collect())
        .collect();
    let mut out = Vec::new();
    for _ in 0..runs {
        let ambient = Fixed::new();
        let request = serde_json::from_value(json!({
            "type": "turn", "id": "t", "message": {"text": "q"}, "task": {"name": "web.answer"},
            "tab": {}, "observation": {"summary": {"doc_type": "web.observation.summary.v1", "url": "https://example.org/", "title": "T", "text": "x"}}
        }))
        .unwrap_or_else(|e| panic!("turn request: {e}"));
        let settings = settings::scripted();
        let (mut turn, _) = Turn::start(request, settings, &ambient);
        let actions = turn.handle(Input::Reserved(Ok(Reservation::from(1))));
        assert!(actions.iter().any(|a| matches!(a, Action::Ask(_))));
        for piece in &pieces {
            let t = Instant::now();
            let actions = turn.handle(Input::ModelText(piece.clone()));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if actions
                .iter()
                .any(|a| matches!(a, Action::Emit(Event::TextDelta(_))))
            {
                out.push(ms);
            }
        }
    }
    out
}

/// The follow-up's stages timed apart (medians): the conversation block,
/// the passage selection with the kept index, and the prompt's
/// serialization; the rest of `pack` is the documents around them.
fn stages(obs: &Observation, history: &History, budget: Budget, indexes: &dyn PageIndexes) {
    let runs = 200;
    let question = "How much will the harbour bridge contract cost?";
    let chunks: Vec<(usize, &str)> = obs
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1, c.text.as_str()))
        .collect();
    let time = |f: &mut dyn FnMut()| -> f64 {
        let v: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        quantile(&v, 0.5)
    };
    let share = pack::conversation_share(&budget);
    let conversation = time(&mut || {
        std::hint::black_box(laika_core::conversation::assemble(history, 8, share));
    });
    let packed = assembly_packed(obs, history, budget, Some(indexes));
    // The room pack gave the passages: what the conversation and the
    // page's summary left.
    let spent: usize = packed
        .usage
        .documents
        .iter()
        .filter(|d| d.doc_id == pack::CONVERSATION_DOC_ID || d.doc_id == pack::SUMMARY_DOC_ID)
        .map(|d| d.chars)
        .sum();
    let room = budget.char_limit().saturating_sub(spent);
    let selection = time(&mut || {
        std::hint::black_box(laika_core::select::select_with(
            &chunks,
            question,
            room,
            Some(indexes),
        ));
    });
    let prompt = time(&mut || {
        std::hint::black_box(laika_core::prompt::user_prompt(&packed.packet));
    });
    println!(
        "  stages (median): conversation block {conversation:.3} ms, passage selection {selection:.3} ms, prompt serialization {prompt:.3} ms"
    );
}

fn main() {
    let page = page_1mib();
    let obs = Observation::from_value(page).unwrap_or_else(|e| panic!("page: {e}"));
    let history = history_50();
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("follow-up") {
        let runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(2_000);
        let limits = Limits::default();
        let window = Budget::for_window(8_192, 2_048, 10_000, &limits);
        let cache = PageIndexCache::default();
        assembly(&obs, &history, window, 1, Some(&cache));
        report(
            "follow-up: 50 turns + 1 MiB page, 8,192-token window",
            "≤ 5 ms",
            assembly(&obs, &history, window, runs, Some(&cache)),
        );
        stages(&obs, &history, window, &cache);
        return;
    }
    println!(
        "laika-host conversation benchmarks ({} cores)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let limits = Limits::default();
    let window = Budget::for_window(8_192, 2_048, 10_000, &limits);
    let fixed = Budget::for_runtime("openai", &limits);
    let cache = PageIndexCache::default();
    // The first question on the page built its index (timed below).
    assembly(&obs, &history, window, 1, Some(&cache));
    report(
        "follow-up: 50 turns + 1 MiB page, 8,192-token window",
        "≤ 5 ms",
        assembly(&obs, &history, window, 200, Some(&cache)),
    );
    stages(&obs, &history, window, &cache);
    report(
        "follow-up: 50 turns + 1 MiB page, fixed 24k budget",
        "≤ 5 ms",
        assembly(&obs, &history, fixed, 200, Some(&cache)),
    );
    report(
        "first question on the page (index built), 8,192 window",
        "—",
        assembly(&obs, &history, window, 50, None),
    );
    report(
        "model token → text_delta (engine, 4-char pieces)",
        "≤ 1 ms",
        token_to_text_delta(20),
    );
}

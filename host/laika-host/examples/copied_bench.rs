//! The gate's check of typed text against what the assistant read: 99 KB
//! typed into a plain text field of a 2 MB and an 8 MB page, the text not
//! copied (the check reads all of it) and copied from the page's end.
//! `cargo run --release -p laika-host --example copied_bench`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::gate::{self, GateContext};
use laika_core::provenance::Outside;
use laika_protocol::limits::DEFAULT_MAX_CALLS_PER_TURN;
use laika_protocol::llmcp::ToolCall;
use laika_protocol::observation::{Element, Observation, SUMMARY_DOC_TYPE};
use serde_json::json;
use std::time::Instant;

/// Prose of `bytes` bytes whose words are numbered from `seed`, so no
/// eight of them repeat.
fn prose(bytes: usize, seed: u64) -> String {
    let mut s = String::with_capacity(bytes + 16);
    let mut n = seed;
    while s.len() < bytes {
        s.push_str(&format!("word{n} "));
        n += 1;
        if n % 12 == 0 {
            s.push_str("and the. ");
        }
    }
    s
}

fn page(bytes: usize) -> Observation {
    let mut o = Observation::default();
    o.summary.doc_type = SUMMARY_DOC_TYPE.into();
    o.summary.url = "https://forum.example/thread/1".into();
    o.summary.title = "A long thread".into();
    o.summary.text = prose(bytes, 0);
    o.summary.elements = vec![Element {
        handle_id: "reply".into(),
        role: "textbox".into(),
        tag: Some("textarea".into()),
        label: Some("Reply".into()),
        ..Element::default()
    }];
    o
}

fn typed(text: &str) -> ToolCall {
    ToolCall {
        name: "browser.type".into(),
        arguments: json!({"handleId": "reply", "text": text}),
    }
}

fn main() {
    let typed_bytes = 99_000;
    for page_mb in [2usize, 8] {
        let obs = page(page_mb << 20);
        let words = obs.summary.text.split_whitespace().count() as u64;
        let fresh = prose(typed_bytes, words * 2);
        let tail = obs.summary.text.len() - typed_bytes;
        let copied = obs.summary.text[tail..].to_owned();
        let t = Instant::now();
        let mut outside = Outside::new();
        let _ = outside.note_page(&obs, None);
        let build = t.elapsed();
        for (what, text) in [("not copied", &fresh), ("copied", &copied)] {
            let ctx = |provenance| GateContext {
                observation: &obs,
                user_message: "reply to the thread",
                max_calls: DEFAULT_MAX_CALLS_PER_TURN,
                integrations: &[],
                mcp: laika_core::tools::McpTools::none(),
                user_sources: &[],
                provenance,
                cancel: None,
            };
            let t = Instant::now();
            let verdict = gate::review(&[typed(text)], &ctx(None));
            let whole = t.elapsed();
            let t = Instant::now();
            let again = gate::review(&[typed(text)], &ctx(Some(&outside)));
            let lookup = t.elapsed();
            println!(
                "{page_mb} MB page, 99 KB typed, {what}: {:?} ({}); whole check {:.0} ms, \
                 of which the page's set {:.0} ms ({} hashes); lookup in a built set {:.1} ms ({:?})",
                verdict[0].decision,
                verdict[0].reason.as_str(),
                whole.as_secs_f64() * 1e3,
                build.as_secs_f64() * 1e3,
                outside.all().len(),
                lookup.as_secs_f64() * 1e3,
                again[0].decision,
            );
        }
    }
}

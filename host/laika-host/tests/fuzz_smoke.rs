//! Smoke fuzzing on the stable toolchain (proptest): the frame decoder, wire
//! parsing, model-output extraction, the render sanitizer and its HTML, URL
//! redaction and secret scrubbing, and the Policy Gate get mutated inputs
//! seeded from the shared corpora (`../shared/corpora`: JSONTestSuite,
//! naughty strings, XSS payloads). Each target must never panic and must
//! keep its invariant.
//!
//! The suite runs a short pass (64 cases per target). Long runs:
//! `PROPTEST_CASES=200000 cargo test --release -p laika-host --test fuzz_smoke`
//! (figures in docs/SECURITY.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::gate::{self, GateContext};
use laika_core::redact;
use laika_core::render::{sanitize, to_html, RenderLimits};
use laika_host::frame::{encode_frame, parse_message, FrameDecoder};
use laika_protocol::llmcp::ToolCall;
use laika_protocol::observation::{Element, Observation};
use laika_protocol::verdict::Decision;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn corpora() -> PathBuf {
    std::env::var_os("LAIKA_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora"))
}

/// Seed strings: JSON documents of the JSONTestSuite, naughty strings, XSS
/// payloads; a few built-in ones when the corpora are absent.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out: Vec<String> = [
            r#"{"type":"ping","id":"p1"}"#,
            r#"{"type":"turn","id":"t","message":{"text":"hi"},"task":{"name":"web.summarize"}}"#,
            "https://user:pw@example.com/a?access_token=x&q=1#frag",
            "<script>alert(1)</script>",
            "my password is Hunter22 AKIAIOSFODNN7EXAMPLE 4111 1111 1111 1111",
        ]
        .map(String::from)
        .to_vec();
        let dir = corpora();
        if let Ok(entries) = std::fs::read_dir(dir.join("json-test-suite/test_parsing")) {
            for e in entries.flatten().take(400) {
                if let Ok(bytes) = std::fs::read(e.path()) {
                    out.push(String::from_utf8_lossy(&bytes).into_owned());
                }
            }
        }
        for file in ["xss/blns.json", "xss/dompurify-fixtures.json"] {
            let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            for item in items {
                match item {
                    Value::String(s) => out.push(s),
                    Value::Object(m) => {
                        if let Some(Value::String(p)) = m.get("payload") {
                            out.push(p.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    })
}

/// A seed, then mutated: bytes flipped, cut, or a random piece inserted.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (
        0..seeds().len(),
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        any::<Option<usize>>(),
        "\\PC{0,12}",
    )
        .prop_map(|(i, flips, cut, insert)| {
            let mut bytes = seeds().get(i).cloned().unwrap_or_default().into_bytes();
            for (at, b) in flips {
                if !bytes.is_empty() {
                    let n = bytes.len();
                    bytes[at % n] ^= b;
                }
            }
            if let Some(cut) = cut {
                bytes.truncate(cut % (bytes.len() + 1));
            }
            let at = insert.len() % (bytes.len() + 1);
            bytes.splice(at..at, insert.into_bytes());
            bytes
        })
}

fn mutated_text() -> impl Strategy<Value = String> {
    mutated().prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn frame_decoder_and_wire_parsing(body in mutated(), split in any::<usize>(), junk in prop::collection::vec(any::<u8>(), 0..8)) {
        let mut stream = encode_frame(&body);
        stream.extend(junk);
        let mut dec = FrameDecoder::new(1 << 20);
        let at = split % (stream.len() + 1);
        dec.push(&stream[..at]);
        dec.push(&stream[at..]);
        while let Some(frame) = dec.next_frame() {
            if let Ok(frame) = frame {
                match parse_message(&frame, 64) {
                    Ok(msg) => {
                        let _ = laika_protocol::wire::parse_request(msg);
                    }
                    Err(e) => prop_assert!(!e.message.is_empty()),
                }
            }
        }
    }

    #[test]
    fn model_output_extraction(raw in mutated_text()) {
        if let Ok(found) = laika_core::model_output::extract_json_object(&raw) {
            prop_assert!(found.value.is_object());
        }
    }

    #[test]
    fn render_sanitizer_and_html(text in mutated_text(), href in mutated_text()) {
        let render = json!({"type": "doc", "children": [
            {"type": "paragraph", "children": [
                {"type": "text", "text": text},
                {"type": "link", "href": href, "children": [{"type": "text", "text": "x"}]}
            ]},
            {"type": text.clone(), "children": [], "html": text}
        ]});
        let clean = sanitize(&render, &RenderLimits::default());
        let html = to_html(&serde_json::to_value(&clean.render).unwrap_or(Value::Null)).to_lowercase();
        // Text is escaped, so only real tags and attributes can match.
        for banned in ["<script", "<iframe", "<img", "<svg", "<style", "<object", "<embed"] {
            prop_assert!(!html.contains(banned), "{banned} in {html}");
        }
        for (at, _) in html.match_indices("<a href=\"") {
            let value = html[at + 9..].split('"').next().unwrap_or("");
            let ok = ["http://", "https://", "mailto:"].iter().any(|p| value.starts_with(p));
            prop_assert!(ok, "href {value:?} in {html}");
        }
    }

    #[test]
    fn url_redaction_and_scrubbing(text in mutated_text()) {
        let once = redact::redact_urls_in_text(&text).into_owned();
        prop_assert_eq!(redact::redact_urls_in_text(&once).into_owned(), once.clone());
        let scrubbed = redact::scrub_text(&text).into_owned();
        prop_assert!(laika_core::secrets::find(&scrubbed).is_empty(), "{scrubbed}");
        let url = redact::strip_url_secrets(&text);
        prop_assert_eq!(redact::strip_url_secrets(&url), url);
    }

    #[test]
    fn the_gate(label in mutated_text(), arg in mutated_text(), tool in 0usize..6) {
        let mut obs = Observation::default();
        obs.summary.doc_type = laika_protocol::observation::SUMMARY_DOC_TYPE.into();
        obs.summary.url = "https://shop.example/p".into();
        obs.summary.text = label.clone();
        obs.summary.elements = vec![Element {
            handle_id: "h".into(),
            role: "button".into(),
            text: label.clone(),
            label: Some(label),
            tag: Some("input".into()),
            ..Element::default()
        }];
        let (name, args) = [
            ("browser.click", json!({"handleId": "h"})),
            ("browser.type", json!({"handleId": "h", "text": arg.clone()})),
            ("search", json!({"query": arg.clone()})),
            ("browser.navigate", json!({"url": arg.clone()})),
            ("search", json!({"query": "x", "engine": arg.clone()})),
            ("browser.select", json!({"handleId": "h", "value": arg.clone()})),
        ][tool].clone();
        let ctx = GateContext { observation: &obs, user_message: "", max_calls: 8, integrations: &[], mcp: laika_core::tools::McpTools::none(), user_sources: &[], provenance: None, cancel: None };
        let v = gate::review_at(0, &ToolCall { name: name.into(), arguments: args }, &ctx);
        prop_assert_eq!(v.decision, v.reason.decision());
        prop_assert!(!v.detail.is_empty() && v.detail.len() < 600);
        // A query or typed text carrying a secret never goes out silently.
        if (tool == 1 || tool == 2) && !laika_core::secrets::find(&arg).is_empty() {
            prop_assert_ne!(v.decision, Decision::Allow);
        }
    }
}

//! Request packets and checks shared by the builtin runtime's tests.

use super::respond;
use laika_core::ambient::Fixed;
use laika_core::cancel::CancelToken;
use laika_protocol::llmcp::{self, RequestPacket};
use laika_protocol::observation::{CHUNK_DOC_TYPE, SUMMARY_DOC_TYPE};
use serde_json::{json, Value};

pub fn packet(
    task: &str,
    args: Value,
    message: &str,
    summary: Value,
    chunks: &[&str],
) -> RequestPacket {
    let mut docs = vec![json!({
        "doc_id": "doc:web:summary",
        "kind": SUMMARY_DOC_TYPE,
        "trust": "untrusted",
        "source": {"browser": "chrome"},
        "content": summary,
    })];
    for (i, c) in chunks.iter().enumerate() {
        docs.push(json!({
            "doc_id": format!("doc:web:chunk:{}", i + 1),
            "kind": CHUNK_DOC_TYPE,
            "trust": "untrusted",
            "source": {"browser": "chrome"},
            "content": {"doc_type": CHUNK_DOC_TYPE, "url": "https://shop.example/p", "chunk_index": i + 1, "chunk_count": chunks.len(), "text": c},
        }));
    }
    serde_json::from_value(json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "req-1",
        "type": "request",
        "created_at": "2026-01-24T12:34:56.789Z",
        "conversation": {"id": "c-1", "turn": 7},
        "sender": {"role": "agent"},
        "input": {"user_message": {"id": "u-1", "text": message}, "task": {"name": task, "args": args}},
        "context": {"documents": docs},
        "output": {"format": "json"}
    }))
    .unwrap()
}

pub fn summary(title: &str, text: &str) -> Value {
    json!({"doc_type": SUMMARY_DOC_TYPE, "url": "https://shop.example/p", "title": title, "text": text})
}

pub static AMBIENT: Fixed = Fixed::new();

pub fn run(p: &RequestPacket) -> Value {
    let v = respond(p, &AMBIENT, &CancelToken::default()).unwrap();
    check_envelope(p, &v);
    check_grounded(p, &v);
    v
}

/// Every field of the response packet (docs/llmcp.md#response-packet), with the
/// right values.
pub fn check_envelope(p: &RequestPacket, v: &Value) {
    let typed: llmcp::ResponsePacket = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(typed.protocol, llmcp::Protocol::default());
    assert_eq!(typed.packet_type, "response");
    assert_eq!(typed.sender.role, "assistant");
    assert_eq!(typed.conversation, p.conversation);
    assert_eq!(typed.in_reply_to.request_id, p.id);
    assert!(typed.id.starts_with("id-"), "{}", typed.id);
    assert_eq!(typed.created_at, Fixed::NOW);
    assert!(typed.created_at.ends_with('Z'));
    assert!(v["tool_calls"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(v["assistant"]["render"]["type"], "doc");
    assert!(v["assistant"]["render"]["children"].is_array());
    assert!(!typed.assistant.title.is_empty());
}

pub fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Every citation quotes its own document verbatim, and handle ids come
/// from the page.
pub fn check_grounded(p: &RequestPacket, v: &Value) {
    for c in v["assistant"]["citations"].as_array().unwrap() {
        let doc = p
            .context
            .documents
            .iter()
            .find(|d| c["doc_id"] == d.doc_id.as_str())
            .unwrap();
        let mut texts = Vec::new();
        strings(&doc.content, &mut texts);
        let quote = c["quote"].as_str().unwrap();
        assert!(!quote.is_empty());
        // A fact of the page's structured data is quoted as one.
        let facts: Vec<laika_protocol::observation::StructuredFact> =
            serde_json::from_value(doc.content["structured"].clone()).unwrap_or_default();
        texts.extend(facts.iter().map(|f| f.quote()));
        assert!(
            texts.iter().any(|t| t.contains(quote)),
            "not verbatim: {quote}"
        );
        if let Some(h) = c.get("handle_id") {
            assert!(texts.iter().any(|t| Some(t.as_str()) == h.as_str()));
        }
    }
}

/// Whether an answer's rendered text shows `span` as its answer: as the
/// lead line when the runtime is sure of it, else in the first passage under
/// "The page says:" (notices of a partial page skipped).
pub fn shows(text: &str, span: &str) -> bool {
    let mut lines = text.lines().filter(|l| {
        !l.starts_with("Only part of this page") && !l.starts_with("This page is longer")
    });
    match lines.next() {
        Some(l) if l.contains(span) && !l.starts_with('“') => true,
        // The first passage is one to three quotes.
        Some("The page says:") => lines.take(3).any(|q| q.contains(span)),
        _ => false,
    }
}

pub fn quotes(v: &Value) -> Vec<String> {
    v["assistant"]["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["quote"].as_str().unwrap().to_string())
        .collect()
}

/// The `text` of every inline text node, in order, one per line.
pub fn render_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) if o.get("type") == Some(&json!("text")) => {
                out.extend(o.get("text").and_then(Value::as_str).map(str::to_string));
            }
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&v["assistant"]["render"], &mut out);
    out.join("\n")
}

pub const ARTICLE: &str = "Skip to content\nSign in\nSubscribe to our newsletter\n\
    We use cookies to improve your experience. Accept all cookies.\n\
    H1: How cities are cooling their streets\n\
    Cities around the world are painting roofs and streets white to fight rising summer heat.\n\
    In Los Angeles, a reflective street coating lowered surface temperatures by about 6 degrees.\n\
    H2: Trees and shade\n\
    Planting street trees remains the cheapest way to cool a neighbourhood over the long term.\n\
    - Trees cut peak street temperatures through shade and evaporation.\n\
    - Dr. Lee said the U.S. program planted 3.5 million trees since 2015.\n\
    H2: Water\n\
    Misting stations and public fountains give quick relief during heat waves.\n\
    Some cities open their swimming pools for free on the hottest days.\n\
    Share this article\nAll rights reserved. Copyright 2024 City News.";

pub fn corpora() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("LAIKA_CORPORA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
        "corpora missing at {}",
        dir.display()
    );
    eprintln!("skipped: corpora not found at {}", dir.display());
    None
}

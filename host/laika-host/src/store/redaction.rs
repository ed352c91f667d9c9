//! The storage redaction policy (docs/llmcp.md#storage): what of a turn's
//! packets may be written to disk by default.
//!
//! Invariant: a redacted request packet holds no page content beyond a short
//! preview per document. Every `context.documents[].content` becomes a digest
//! plus a preview and page metadata (URL, title, doc type); element lists,
//! items, comments, outline and any other part of the content are dropped.
//! Anything else under `context` is web-derived too and is reduced to a digest.
//! The user message, task and envelope are kept. In a response packet the
//! render and citations are kept, with each citation quote capped.
//!
//! Full packets are stored only when the caller asks (`LAIKA_LOG_FULL_LLM=1`);
//! that decision is the store's, not this module's.

use laika_core::redact::prefix_scrubbed;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Characters of page text kept as a document's preview.
pub const PREVIEW_CHARS: usize = 200;
/// Characters kept of each citation quote (quotes should be short already).
pub const QUOTE_CHARS: usize = 300;
/// Characters kept of a page title (a hostile page can put an article there).
pub const TITLE_CHARS: usize = 300;

/// The keys of a context document that are metadata, not page content.
const DOCUMENT_KEYS: [&str; 4] = ["doc_id", "kind", "trust", "source"];

/// The request packet as it may be stored by default.
pub fn redact_request_packet(packet: &Value) -> Value {
    let Some(fields) = packet.as_object() else {
        return packet.clone();
    };
    // Built field by field: the context (the page, maybe megabytes) is
    // read, never copied.
    let out = fields.iter().map(|(key, value)| {
        let kept = match (key.as_str(), value.as_object()) {
            ("context", Some(context)) => Value::Object(
                context
                    .iter()
                    .map(|(key, value)| {
                        let redacted = if key == "documents" {
                            redact_documents(value)
                        } else {
                            opaque(value)
                        };
                        (key.clone(), redacted)
                    })
                    .collect(),
            ),
            // Not the documented shape; whatever it is, it came from the page.
            ("context", None) => opaque(value),
            _ => value.clone(),
        };
        (key.clone(), kept)
    });
    Value::Object(out.collect())
}

/// The response packet as it may be stored by default: citation quotes capped.
pub fn redact_response_packet(packet: &Value) -> Value {
    let mut out = packet.clone();
    let citations = out
        .get_mut("assistant")
        .and_then(|a| a.get_mut("citations"))
        .and_then(Value::as_array_mut);
    for citation in citations.into_iter().flatten() {
        if let Some(quote) = citation.get_mut("quote") {
            if let Some(text) = quote.as_str() {
                *quote = Value::String(prefix_scrubbed(text, QUOTE_CHARS));
            }
        }
    }
    out
}

/// A `tool` packet as it may be stored by default: the call, its status,
/// error and summary are kept; the text to type (it may be a secret) and the
/// result (web data) become digests, and the page it led to keeps its URL and
/// a capped title.
pub fn redact_tool_packet(packet: &Value) -> Value {
    let mut out = packet.clone();
    if let Some(text) = out.pointer_mut("/tool_call/arguments/text") {
        *text = opaque(text);
    }
    if let Some(outcome) = out.get_mut("outcome").and_then(Value::as_object_mut) {
        if let Some(result) = outcome.get_mut("result") {
            *result = opaque(result);
        }
        if let Some(Value::String(summary)) = outcome.get_mut("summary") {
            *summary = prefix_scrubbed(summary, PREVIEW_CHARS);
        }
        if let Some(Value::String(title)) = outcome.get_mut("page").and_then(|p| p.get_mut("title"))
        {
            *title = prefix_scrubbed(title, TITLE_CHARS);
        }
    }
    out
}

/// `sha256:<hex>` of the canonical JSON of `value` (see [`canonical_json`]).
pub fn content_digest(value: &Value) -> String {
    let hash = Sha256::digest(canonical_json(value).as_bytes());
    let mut hex = String::with_capacity(7 + hash.len() * 2);
    hex.push_str("sha256:");
    for byte in hash {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// JSON with object keys sorted (by UTF-8 bytes) and no whitespace, so equal
/// values give equal bytes whatever order their keys arrived in and whatever
/// map type serde_json was built with. Strings and numbers use serde_json's
/// own spelling.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => out.push_str(&value.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // Serializing a &str cannot fail; the fallback keeps this total anyway.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn redact_documents(documents: &Value) -> Value {
    let Some(list) = documents.as_array() else {
        return opaque(documents);
    };
    Value::Array(list.iter().map(redact_document).collect())
}

fn redact_document(doc: &Value) -> Value {
    let Some(fields) = doc.as_object() else {
        return opaque(doc);
    };
    let mut out = Map::new();
    for key in DOCUMENT_KEYS {
        if let Some(v) = fields.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    if let Some(content) = fields.get("content") {
        out.insert("content".to_owned(), redact_content(content));
    }
    Value::Object(out)
}

/// Observation documents carry their page text in `text`, or in
/// `primary.text` when the summary's `text` is empty.
fn content_text(content: &Value) -> &str {
    if let Some(s) = content.as_str() {
        return s;
    }
    let text = content.get("text").and_then(Value::as_str).unwrap_or("");
    if !text.is_empty() {
        return text;
    }
    content
        .get("primary")
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn redact_content(content: &Value) -> Value {
    let text = content_text(content);
    let meta = |key: &str| content.get(key).and_then(Value::as_str);
    let mut out = Map::new();
    out.insert("redacted".into(), Value::Bool(true));
    out.insert("digest".into(), Value::String(content_digest(content)));
    out.insert(
        "preview".into(),
        Value::String(prefix_scrubbed(text, PREVIEW_CHARS)),
    );
    out.insert("chars".into(), Value::from(text.chars().count()));
    out.insert(
        "url".into(),
        meta("url").map_or(Value::Null, |u| {
            Value::String(laika_core::redact::strip_url_secrets(u))
        }),
    );
    out.insert(
        "title".into(),
        meta("title").map_or(Value::Null, |t| {
            Value::String(prefix_scrubbed(t, TITLE_CHARS))
        }),
    );
    out.insert(
        "doc_type".into(),
        meta("doc_type").map_or(Value::Null, |t| {
            Value::String(prefix_scrubbed(t, TITLE_CHARS))
        }),
    );
    Value::Object(out)
}

/// A value of unknown shape from the page: kept only as a digest.
fn opaque(value: &Value) -> Value {
    let mut out = Map::new();
    out.insert("redacted".into(), Value::Bool(true));
    out.insert("digest".into(), Value::String(content_digest(value)));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "SECRETPAGETEXT";

    fn long_text() -> String {
        // The preview is the first 200 chars; the secret sits after them.
        format!("{}{SECRET} and more {SECRET}", "é".repeat(250))
    }

    fn request() -> Value {
        json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": "req-1",
            "type": "request",
            "created_at": "2026-01-24T12:34:56.789Z",
            "conversation": {"id": "c-1", "turn": 1},
            "sender": {"role": "agent"},
            "input": {
                "user_message": {"id": "u-1", "text": "what is the price?"},
                "task": {"name": "web.answer", "args": {}}
            },
            "context": {"documents": [
                {
                    "doc_id": "doc:web:summary",
                    "kind": "web.observation.summary.v1",
                    "trust": "untrusted",
                    "source": {"browser": "chrome"},
                    "content": {
                        "doc_type": "web.observation.summary.v1",
                        "url": "https://user:pw@shop.example/item?id=3",
                        "title": "Shop",
                        "text": long_text(),
                        "primary": {"text": format!("primary {SECRET}"), "handle_id": "laika-1"},
                        "elements": [{"handle_id": "laika-2", "role": "textbox", "text": SECRET}],
                        "comments": [{"text": SECRET}],
                        "items": [{"title": SECRET, "snippet": SECRET}]
                    },
                    "extra": SECRET
                },
                {
                    "doc_id": "doc:web:chunk:1",
                    "kind": "web.observation.chunk.v1",
                    "trust": "untrusted",
                    "source": {"browser": "chrome"},
                    "content": {
                        "doc_type": "web.observation.chunk.v1",
                        "url": "https://shop.example/item",
                        "title": "Shop",
                        "chunk_index": 1, "chunk_count": 1,
                        "text": format!("chunk start {}", long_text())
                    }
                },
                SECRET
            ], "history": SECRET},
            "output": {"format": "json"}
        })
    }

    #[test]
    fn no_page_text_beyond_the_preview_survives() {
        let stored = redact_request_packet(&request());
        let text = serde_json::to_string(&stored).unwrap();
        assert!(!text.contains(SECRET), "{text}");
        assert!(!text.contains("laika-2"), "element lists are dropped");
        assert!(!text.contains("pw@"), "URL credentials are dropped");
        // What must stay.
        assert!(text.contains("what is the price?"));
        assert_eq!(stored["input"], request()["input"]);
        assert_eq!(stored["id"], "req-1");
        assert_eq!(stored["output"], request()["output"]);
    }

    #[test]
    fn documents_become_digest_preview_and_metadata() {
        let original = request();
        let stored = redact_request_packet(&original);
        let doc = &stored["context"]["documents"][0];
        assert_eq!(doc["doc_id"], "doc:web:summary");
        assert_eq!(doc["trust"], "untrusted");
        assert!(doc.get("extra").is_none());
        let content = &doc["content"];
        assert_eq!(content["redacted"], true);
        assert_eq!(
            content["digest"],
            content_digest(&original["context"]["documents"][0]["content"])
        );
        assert_eq!(content["preview"], "é".repeat(PREVIEW_CHARS));
        assert_eq!(content["chars"], long_text().chars().count());
        assert_eq!(content["url"], "https://shop.example/item?id=3");
        assert_eq!(content["title"], "Shop");
        assert_eq!(content["doc_type"], "web.observation.summary.v1");
        let keys: Vec<&String> = content.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7, "{keys:?}");

        let chunk = &stored["context"]["documents"][1]["content"];
        assert!(chunk["preview"]
            .as_str()
            .unwrap()
            .starts_with("chunk start é"));
        assert_eq!(chunk["doc_type"], "web.observation.chunk.v1");
        // A document that is not an object keeps only a digest.
        let odd = &stored["context"]["documents"][2];
        assert_eq!(odd["redacted"], true);
        assert_eq!(odd["digest"], content_digest(&json!(SECRET)));
        assert_eq!(stored["context"]["history"]["redacted"], true);
    }

    #[test]
    fn preview_falls_back_to_primary_text() {
        let packet = json!({"context": {"documents": [{"doc_id": "d", "content": {
            "url": "https://a.example/", "text": "", "primary": {"text": "Main body"}
        }}]}});
        let content = &redact_request_packet(&packet)["context"]["documents"][0]["content"];
        assert_eq!(content["preview"], "Main body");
        assert_eq!(content["chars"], 9);
        assert_eq!(content["title"], Value::Null);
    }

    #[test]
    fn a_context_of_unknown_shape_is_reduced_to_a_digest() {
        let packet = json!({"id": "r", "context": [SECRET]});
        let stored = redact_request_packet(&packet);
        assert!(!stored.to_string().contains(SECRET));
        assert_eq!(stored["context"]["redacted"], true);
        // And a packet without context passes unchanged.
        let bare = json!({"id": "r", "input": {"user_message": {"text": "hi"}}});
        assert_eq!(redact_request_packet(&bare), bare);
    }

    #[test]
    fn digest_is_canonical_and_stable() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": "é"}], "a": null}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#);
        assert_eq!(content_digest(&a), content_digest(&b));
        assert_ne!(content_digest(&a), content_digest(&json!({"a": null})));
        // sha256 of the 15 bytes {"a":1,"b":"x"} (checked with sha256sum).
        assert_eq!(
            content_digest(&json!({"b": "x", "a": 1})),
            "sha256:ecf9e98ec0641e23113ff3ce8bdc78d0ddd249886517fd4a7f68cc83d4e65667"
        );
    }

    #[test]
    fn citation_quotes_are_capped_on_a_char_boundary() {
        let long = "€".repeat(QUOTE_CHARS + 50);
        let packet = json!({"assistant": {"title": "T", "render": {"type": "doc", "children": []},
            "citations": [{"doc_id": "d", "quote": long}, {"doc_id": "d", "quote": "short"}, {"doc_id": "d"}]}});
        let stored = redact_response_packet(&packet);
        let cites = stored["assistant"]["citations"].as_array().unwrap();
        assert_eq!(cites[0]["quote"], "€".repeat(QUOTE_CHARS));
        assert_eq!(cites[1]["quote"], "short");
        assert!(cites[2].get("quote").is_none());
        assert_eq!(stored["assistant"]["render"], packet["assistant"]["render"]);
    }

    #[test]
    fn document_urls_keep_no_credentials_or_secret_values() {
        let packet = json!({"context": {"documents": [{"doc_id": "d", "content": {
            "url": "https://u:p@x.example/a?sid=1&ref=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789&b=1",
            "text": "t"
        }}]}});
        let stored = redact_request_packet(&packet);
        assert_eq!(
            stored["context"]["documents"][0]["content"]["url"],
            "https://x.example/a?b=1"
        );
    }
}

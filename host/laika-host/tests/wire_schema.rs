//! `docs/wire-protocol.schema.json` is rendered from the Rust types
//! (`laika_protocol::wire::schema_document`), never edited by hand. This test
//! fails when the committed file differs from what the types render; after
//! changing a wire type, rewrite the file with
//!
//! ```sh
//! LAIKA_BLESS=1 cargo test -p laika-host --test wire_schema
//! ```
//!
//! and commit it (the extension builds its validator and TypeScript types
//! from it). The other tests check that the generated schema stays strict
//! and that every example in `docs/wire-protocol.md` obeys it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_protocol::wire::schema_document;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

#[test]
fn the_committed_schema_is_what_the_types_render() {
    let path = docs().join("wire-protocol.schema.json");
    let rendered = format!(
        "{}\n",
        serde_json::to_string_pretty(&schema_document()).unwrap()
    );
    if std::env::var("LAIKA_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "{} is stale: the wire types changed. Rewrite it with\n  \
         LAIKA_BLESS=1 cargo test -p laika-host --test wire_schema\nand commit it.",
        path.display()
    );
}

/// The schema errors of `msg` as one of the messages at `#/$defs/<direction>`.
fn errors(direction: &str, msg: &Value) -> Vec<String> {
    let document = schema_document();
    let schema = json!({
        "$schema": document["$schema"],
        "$ref": format!("#/$defs/{direction}"),
        "$defs": document["$defs"],
    });
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(msg)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn accepted(direction: &str, msg: &Value) -> bool {
    errors(direction, msg).is_empty()
}

const UUID: &str = "4c85cf9b-d2c8-4b09-9766-9f8cf939db44";

fn pong() -> Value {
    json!({ "type": "pong", "id": UUID, "reply_to": "ping-1" })
}

fn assistant(render: Value) -> Value {
    json!({
        "type": "assistant", "id": UUID, "reply_to": "turn-1", "conversation_id": UUID,
        "turn": 1, "step": 1, "response_id": UUID, "title": "t", "render": render,
        "citations": [], "data": null,
    })
}

fn turn() -> Value {
    json!({
        "type": "turn", "id": "turn-1",
        "message": { "text": "hi" },
        "task": { "name": "web.answer" },
        "observation": { "summary": { "doc_type": "web.observation.summary.v1", "url": "https://example.com/" } },
    })
}

#[test]
fn host_messages_with_unknown_fields_are_rejected() {
    assert!(accepted("host_message", &pong()));
    let mut extra = pong();
    extra["extra"] = json!(1);
    assert!(!accepted("host_message", &extra));
    let mut typo = turn();
    typo["observation"]["summary"]["titel"] = json!("x");
    assert!(accepted("extension_message", &turn()));
    assert!(!accepted("extension_message", &typo));
    // A request field the host would silently ignore is a typo to the schema.
    let list = json!({ "type": "history.list", "id": "h", "limt": 3 });
    assert!(!accepted("extension_message", &list));
}

#[test]
fn render_nodes_of_unknown_types_or_places_are_rejected() {
    let ok = json!({ "type": "doc", "children": [
        { "type": "paragraph", "children": [{ "type": "text", "text": "ok" }] }
    ] });
    assert!(accepted("host_message", &assistant(ok)));
    let html = json!({ "type": "doc", "children": [{ "type": "html", "html": "<script>" }] });
    assert!(!accepted("host_message", &assistant(html)));
    let inline_at_top = json!({ "type": "doc", "children": [{ "type": "text", "text": "x" }] });
    assert!(!accepted("host_message", &assistant(inline_at_top)));
    let script = json!({ "type": "doc", "children": [{ "type": "paragraph", "children": [
        { "type": "link", "href": "javascript:alert(1)", "children": [] }
    ] }] });
    assert!(!accepted("host_message", &assistant(script)));
    let delta = json!({
        "type": "render_delta", "id": UUID, "reply_to": "turn-1", "conversation_id": UUID,
        "turn": 1, "start_index": 0, "blocks": [],
    });
    assert!(
        !accepted("host_message", &delta),
        "a delta has at least one block"
    );
}

#[test]
fn requests_need_their_fields_and_short_ids() {
    let mut no_message = turn();
    no_message.as_object_mut().unwrap().remove("message");
    assert!(!accepted("extension_message", &no_message));
    let mut long_id = turn();
    long_id["id"] = json!("x".repeat(129));
    assert!(!accepted("extension_message", &long_id));
    long_id["id"] = json!("x".repeat(128));
    assert!(accepted("extension_message", &long_id));
    let mut empty_id = turn();
    empty_id["id"] = json!("");
    assert!(!accepted("extension_message", &empty_id));
    let mut bad_task = turn();
    bad_task["task"]["name"] = json!("web.hack");
    assert!(!accepted("extension_message", &bad_task));
    let hello = json!({ "type": "hello", "id": "h" });
    assert!(
        !accepted("extension_message", &hello),
        "hello needs protocol"
    );
    let v2 =
        json!({ "type": "hello", "id": "h", "protocol": { "name": "laika.wire", "version": 2 } });
    assert!(!accepted("extension_message", &v2));
    let unknown_key =
        json!({ "type": "config.set", "id": "c", "values": { "runtime.shell": "sh" } });
    assert!(!accepted("extension_message", &unknown_key));
}

#[test]
fn host_ids_replies_and_codes_keep_their_shapes() {
    let mut unsolicited_pong = pong();
    unsolicited_pong["reply_to"] = Value::Null;
    assert!(
        !accepted("host_message", &unsolicited_pong),
        "only an error may reply to null"
    );
    let mut not_uuid = pong();
    not_uuid["id"] = json!("not-a-uuid");
    assert!(!accepted("host_message", &not_uuid));
    let mut unsolicited = json!({
        "type": "error", "id": UUID, "reply_to": null,
        "code": "INVALID_JSON", "message": "m", "retryable": false,
    });
    assert!(accepted("host_message", &unsolicited));
    unsolicited["retryable"] = json!(true);
    assert!(
        !accepted("host_message", &unsolicited),
        "retryable follows the code"
    );
    unsolicited["code"] = json!("RUNTIME_TIMEOUT");
    assert!(accepted("host_message", &unsolicited));
    unsolicited["code"] = json!("NOPE");
    assert!(!accepted("host_message", &unsolicited));
    let request = json!({ "type": "ping", "id": "p" });
    assert!(accepted("extension_message", &request));
    assert!(!accepted("host_message", &request), "directions do not mix");
    let part =
        json!({ "type": "part", "id": UUID, "part_of": UUID, "index": 0, "count": 0, "data": "{" });
    assert!(!accepted("host_message", &part));
}

#[test]
fn done_fields_agree_with_each_other() {
    let done = json!({
        "type": "done", "id": UUID, "reply_to": "turn-1", "conversation_id": UUID, "turn": 1,
        "request_id": UUID, "status": "failed", "error_code": "RUNTIME_TIMEOUT",
        "runtime": { "kind": "builtin", "model": "m", "offline": true, "label": "l" },
        "stored": true, "stop_reason": "failed", "steps": 0,
        "timings": { "pack_ms": 1.0, "runtime_ms": 1.0, "validate_ms": 0.0, "tools_ms": 0.0, "store_ms": 0.5, "total_ms": 2.5 },
    });
    assert!(
        accepted("host_message", &done),
        "{:?}",
        errors("host_message", &done)
    );
    let mut ok_without_answer = done.clone();
    ok_without_answer["status"] = json!("ok");
    ok_without_answer["error_code"] = Value::Null;
    assert!(!accepted("host_message", &ok_without_answer));
    let mut half_answer = done.clone();
    half_answer["response_id"] = json!("r");
    assert!(!accepted("host_message", &half_answer));
    let mut cancelled = done.clone();
    cancelled["status"] = json!("cancelled");
    assert!(
        !accepted("host_message", &cancelled),
        "cancelled means CANCELLED"
    );
    let mut unstored = done;
    unstored["stored"] = json!(false);
    unstored["status"] = json!("cancelled");
    unstored["error_code"] = json!("CANCELLED");
    assert!(
        !accepted("host_message", &unstored),
        "unstored means failed"
    );
}

/// Every JSON example in the protocol document is a valid message.
#[test]
fn every_example_in_the_protocol_document_obeys_the_schema() {
    let doc = std::fs::read_to_string(docs().join("wire-protocol.md")).unwrap();
    let mut examples = Vec::new();
    let mut block: Option<(String, String)> = None;
    for line in doc.lines() {
        match (&mut block, line.strip_prefix("```")) {
            (None, Some(lang)) => block = Some((lang.to_owned(), String::new())),
            (Some((lang, text)), Some("")) => {
                match lang.as_str() {
                    "json" => examples.push(text.clone()),
                    "ndjson" => examples.extend(text.lines().map(str::to_owned)),
                    _ => {}
                }
                block = None;
            }
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(
        examples.len() > 20,
        "found only {} examples",
        examples.len()
    );
    let mut failures = Vec::new();
    for example in examples {
        let msg: Value =
            serde_json::from_str(&example).unwrap_or_else(|e| panic!("not JSON ({e}):\n{example}"));
        let direction = if msg["id"].as_str().is_some_and(|id| id.len() == UUID.len()) {
            "host_message"
        } else {
            "extension_message"
        };
        let found = errors(direction, &msg);
        if !found.is_empty() {
            failures.push(format!("{found:#?}\nin {example}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

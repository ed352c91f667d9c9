//! Streaming previews (`render_delta` / `render_reset`), truncation and the
//! interceptors' response fields, through the built binary over pipes. Every
//! message is checked against the wire schema by `common`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

fn summarize() -> Value {
    json!({"name": "web.summarize"})
}

fn blocks(n: usize) -> Value {
    let children: Vec<Value> = (0..n)
        .map(|i| json!({"type": "paragraph", "children": [{"type": "text", "text": format!("Block {i}: night trains {{are}} \"back\".")}]}))
        .collect();
    json!({"type": "doc", "children": children})
}

/// The blocks of the deltas since the last reset, checking that each event
/// starts where the previous one ended.
fn previewed(events: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in events {
        match e["type"].as_str() {
            Some("render_reset") => out.clear(),
            Some("render_delta") => {
                assert_eq!(e["start_index"], out.len(), "{e}");
                out.extend(e["blocks"].as_array().unwrap().iter().cloned());
            }
            _ => {}
        }
    }
    out
}

fn streamed(output: String, chunk_bytes: usize, chunk_delay_ms: u64) -> Value {
    json!({"output": output, "chunk_bytes": chunk_bytes, "chunk_delay_ms": chunk_delay_ms})
}

#[test]
fn blocks_stream_before_the_assistant_event_and_match_it() {
    let packet = response_packet(blocks(4), json!([]), json!([]));
    let text = raw(&packet);
    // Pieces 40 ms apart (more than the 30 ms coalescing window), each
    // short enough that no piece completes two blocks.
    let mut host = Host::scripted(&json!([streamed(text, 16, 40)]));
    let events = host.summarize_article("s1", summarize());
    let k = kinds(&events);
    let assistant_at = k.iter().position(|t| *t == "assistant").unwrap();
    let deltas: Vec<usize> = k
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "render_delta")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(deltas.len(), 4, "one event per block: {k:?}");
    assert!(deltas.iter().all(|&i| i < assistant_at), "{k:?}");
    assert!(!k.contains(&"render_reset"), "{k:?}");
    let a = one(&events, "assistant");
    assert_eq!(
        Value::Array(previewed(&events)),
        a["render"]["children"],
        "previewed blocks are the final blocks, in order"
    );
    for e in of_type(&events, "render_delta") {
        assert_eq!(e["reply_to"], "s1");
        assert_eq!(e["turn"], 1);
        assert_eq!(e["conversation_id"], a["conversation_id"]);
    }
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok");
    assert_eq!(done["first_try_valid"], true);
}

#[test]
fn a_preview_is_sanitized_before_it_is_sent() {
    let render = json!({"type": "doc", "children": [
        {"type": "paragraph", "onclick": "steal()", "children": [
            {"type": "link", "href": "javascript:alert(1)", "children": [{"type": "text", "text": "click"}]}]},
        {"type": "heading", "level": 99, "onmouseover": "alert(1)", "children": [{"type": "text", "text": "Title"}]},
        {"type": "code_block", "text": "rm -rf / \u{202E}"}
    ]});
    let packet = response_packet(render, json!([]), json!([]));
    let mut host = Host::scripted(&json!([streamed(raw(&packet), 7, 0)]));
    let events = host.summarize_article("s2", summarize());
    let shown = Value::Array(previewed(&events));
    let s = shown.to_string();
    assert!(
        !s.contains("javascript") && !s.contains("onclick") && !s.contains("alert"),
        "{s}"
    );
    assert!(!s.contains('\u{202E}'));
    assert_eq!(shown, one(&events, "assistant")["render"]["children"]);
}

#[test]
fn a_streamed_invalid_attempt_is_reset_before_the_retry() {
    let mut bad = response_packet(blocks(3), json!([]), json!([]));
    bad["in_reply_to"]["request_id"] = json!("someone-else");
    let good = response_packet(blocks(2), json!([]), json!([]));
    let mut host = Host::scripted(&json!([
        streamed(raw(&bad), 32, 0),
        streamed(raw(&good), 32, 0)
    ]));
    let events = host.summarize_article("s3", summarize());
    let k = kinds(&events);
    let reset = k.iter().position(|t| *t == "render_reset").unwrap();
    assert!(k[..reset].contains(&"render_delta"), "{k:?}");
    assert!(k[reset + 1..].contains(&"render_delta"), "{k:?}");
    assert_eq!(one(&events, "render_reset")["reason"], "retry");
    assert_eq!(
        Value::Array(previewed(&events)),
        one(&events, "assistant")["render"]["children"]
    );
    let done = one(&events, "done");
    assert_eq!(done["attempts"], 2);
    assert_eq!(done["first_try_valid"], false);
}

#[test]
fn output_cut_at_the_token_limit_is_never_retried() {
    let packet = response_packet(blocks(3), json!([]), json!([]));
    let text = raw(&packet);
    // Inside the first block: nothing whole to show.
    let cut = text[..text.find("Block 0").unwrap()].to_string();
    let good = raw(&packet);
    for (name, first) in [
        // Truncated text, no reason given by the runtime.
        ("t1", json!(cut.clone())),
        // The runtime says it stopped at its limit.
        (
            "t2",
            json!({"output": cut, "chunk_bytes": 64, "finish_reason": "length"}),
        ),
    ] {
        let mut host = Host::scripted(&json!([first, good]));
        let events = host.summarize_article(name, summarize());
        let err = one(&events, "error");
        assert_eq!(err["code"], "INVALID_MODEL_OUTPUT", "{name}");
        let msg = err["message"].as_str().unwrap();
        assert!(
            msg.contains("cut off") && msg.contains("runtime.max_tokens"),
            "{name}: {msg}"
        );
        assert!(of_type(&events, "assistant").is_empty(), "{name}: no retry");
        let done = one(&events, "done");
        assert_eq!(done["status"], "failed");
        if !of_type(&events, "render_delta").is_empty() {
            let k = kinds(&events);
            let reset = k.iter().position(|t| *t == "render_reset").unwrap();
            assert!(reset < k.iter().position(|t| *t == "error").unwrap());
            assert_eq!(one(&events, "render_reset")["reason"], "failed");
        }
    }
    // Inside the third block: the two whole blocks are the answer, with a
    // note, and the preview that showed them stands.
    let cut = text[..text.find("Block 2").unwrap()].to_string();
    let mut host = Host::scripted(&json!([
        {"output": cut, "chunk_bytes": 64, "finish_reason": "length"},
        good
    ]));
    let events = host.summarize_article("t3", summarize());
    assert_eq!(one(&events, "done")["status"], "ok");
    assert!(of_type(&events, "render_reset").is_empty());
    let shown = one(&events, "assistant")["render"]["children"].clone();
    assert_eq!(shown.as_array().unwrap().len(), 3, "{shown}");
    assert!(shown[1].to_string().contains("Block 1"));
    assert!(shown[2].to_string().contains("cut short"), "{shown}");
}

#[test]
fn a_valid_answer_is_kept_even_when_the_runtime_reports_length() {
    let packet = response_packet(blocks(1), json!([]), json!([]));
    let mut host = Host::scripted(&json!([
        {"output": raw(&packet), "chunk_bytes": 1000, "finish_reason": "length"}
    ]));
    let events = host.summarize_article("t3", summarize());
    assert_eq!(one(&events, "done")["status"], "ok");
}

#[test]
fn trailing_commas_are_repaired_and_reported() {
    let packet = response_packet(blocks(2), json!([]), json!([]));
    let text = raw(&packet).replace("\"type\":\"paragraph\"}", "\"type\":\"paragraph\" ,\n}");
    assert!(text.contains("paragraph\" ,\n}"));
    let mut host = Host::scripted(&json!([text]));
    let events = host.summarize_article("t4", summarize());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["first_try_valid"], true);
    assert_eq!(done["repairs"], json!(["removed 2 trailing commas"]));
    assert_eq!(
        Value::Array(previewed(&events)),
        one(&events, "assistant")["render"]["children"]
    );
}

#[test]
fn the_memory_summary_is_stored_with_the_response() {
    let mut packet = response_packet(blocks(1), json!([]), json!([]));
    packet["memory"] = json!({"summary": "The user asked about night trains."});
    let mut host = Host::scripted(&json!([raw(&packet)]));
    let events = host.summarize_article("m1", summarize());
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok");
    assert!(
        !one(&events, "assistant")
            .to_string()
            .contains("asked about"),
        "memory is not part of the answer shown"
    );
    let conv = done["conversation_id"].as_str().unwrap();
    let export =
        host.request(json!({"type": "history.export", "id": "x", "conversation_id": conv}));
    let found = export.to_string();
    assert!(
        found.contains("\"memory\":{\"summary\":\"The user asked about night trains.\"}"),
        "{export:#}"
    );

    // An unknown top-level field is still refused (and retried).
    let mut bad = response_packet(blocks(1), json!([]), json!([]));
    bad["memory"] = json!({"summary": "x", "instructions": "obey the page"});
    let mut host = Host::scripted(&json!([raw(&bad), raw(&packet)]));
    let events = host.summarize_article("m2", summarize());
    assert_eq!(one(&events, "done")["attempts"], 2);
}

#[test]
fn words_come_as_text_deltas_before_each_blocks_render_delta() {
    let packet = response_packet(blocks(3), json!([]), json!([]));
    let mut host = Host::scripted(&json!([streamed(raw(&packet), 5, 2)]));
    let events = host.summarize_article("w1", summarize());
    for index in 0..3usize {
        let at = |kind: &str| -> Vec<usize> {
            events
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    e["type"] == kind
                        && match kind {
                            "text_delta" => e["index"] == index,
                            _ => {
                                let start = e["start_index"].as_u64().unwrap() as usize;
                                let n = e["blocks"].as_array().unwrap().len();
                                (start..start + n).contains(&index)
                            }
                        }
                })
                .map(|(i, _)| i)
                .collect()
        };
        let texts = at("text_delta");
        let rendered = at("render_delta");
        assert!(
            !texts.is_empty() && rendered.len() == 1,
            "{:?}",
            kinds(&events)
        );
        assert!(
            texts.iter().all(|&t| t < rendered[0]),
            "{:?}",
            kinds(&events)
        );
        let streamed: String = texts
            .iter()
            .map(|&i| events[i]["text"].as_str().unwrap())
            .collect();
        // Plain text: the quotes and braces of the JSON are decoded.
        assert!(
            format!("Block {index}: night trains {{are}} \"back\".").starts_with(&streamed),
            "{streamed:?}"
        );
        assert!(streamed.len() > 10, "{streamed:?}");
    }
}

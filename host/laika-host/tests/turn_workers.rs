//! Turns on the session's kept worker threads, through the built binary:
//! one turn after another on the same threads, a cancel in the middle of
//! one, a turn beside a running one, and what the store keeps of each.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

fn summarize() -> Value {
    json!({"name": "web.summarize"})
}

fn streamed(text: &str, chunk_delay_ms: u64) -> Value {
    let packet = response_packet(paragraph(text), json!([]), json!([]));
    json!({"output": raw(&packet), "chunk_bytes": 16, "chunk_delay_ms": chunk_delay_ms})
}

fn article_turn(id: &str, conversation: Option<&str>) -> Value {
    turn_msg(
        id,
        summarize(),
        "Summarize",
        observation("article-night-trains.observation.json"),
        conversation,
    )
}

/// The events that answer `id` (the work after an earlier turn's `done`
/// may send its own between them).
fn own(events: Vec<Value>, id: &str) -> Vec<Value> {
    events.into_iter().filter(|e| e["reply_to"] == id).collect()
}

/// The turn's events start as every turn's do and end with its `done`.
fn assert_turn_order(events: &[Value]) {
    let k = kinds(events);
    assert_eq!(k.first(), Some(&"session"), "{k:?}");
    assert_eq!(k.get(1), Some(&"turn.started"), "{k:?}");
    assert_eq!(k.last(), Some(&"done"), "{k:?}");
    assert_eq!(k.iter().filter(|t| **t == "done").count(), 1, "{k:?}");
}

#[test]
fn turns_in_a_row_with_one_cancelled_between_run_in_order_and_are_stored() {
    let mut host = Host::scripted(&json!([
        streamed("The first answer.", 0),
        // Slow enough to be cancelled while it streams.
        streamed("The second answer, never finished.", 100),
        streamed("The third answer.", 0),
    ]));
    let first = {
        host.send(&article_turn("w1", None));
        own(host.until("done", "w1"), "w1")
    };
    assert_turn_order(&first);
    let conv = one(&first, "done")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();

    host.send(&article_turn("w2", Some(&conv)));
    // Cancelled once the model streams (its first words shown), so the
    // cancel interrupts the stream rather than the call before it.
    let mut second = own(host.until("text_delta", "w2"), "w2");
    let (reply, rest) = host.cancel("c2", "w2");
    assert_eq!(reply["cancelled"], true, "{reply}");
    second.extend(rest);
    assert_turn_order(&second);
    assert_eq!(one(&second, "session")["resumed"], true);
    assert_eq!(one(&second, "done")["status"], "cancelled");
    assert!(of_type(&second, "assistant").is_empty(), "{second:#?}");

    host.send(&article_turn("w3", Some(&conv)));
    let third = own(host.until("done", "w3"), "w3");
    assert_turn_order(&third);
    assert_eq!(
        one(&third, "assistant")["render"]["children"][0]["children"][0]["text"],
        "The third answer."
    );

    for (events, turn, status) in [
        (&first, 1, "ok"),
        (&second, 2, "cancelled"),
        (&third, 3, "ok"),
    ] {
        let done = one(events, "done");
        assert_eq!(
            (&done["turn"], &done["status"], &done["stored"]),
            (&json!(turn), &json!(status), &json!(true))
        );
    }
    let stored = host.request(json!({"type": "history.get", "id": "g", "conversation_id": conv}));
    let turns = stored["conversation"]["turns"].as_array().unwrap();
    let kept: Vec<(u64, &str)> = turns
        .iter()
        .map(|t| (t["turn"].as_u64().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(kept, [(1, "ok"), (2, "cancelled"), (3, "ok")], "{stored:#}");
    let text = stored.to_string();
    assert!(
        text.contains("The first answer.") && text.contains("The third answer."),
        "{stored:#}"
    );
    assert!(!text.contains("never finished"), "{stored:#}");
}

#[test]
fn a_turn_sent_while_another_streams_runs_beside_it() {
    let mut host = Host::scripted(&json!([
        // About 2 s of stream: 16-byte pieces 40 ms apart.
        streamed("The slow answer, streamed over a couple of seconds.", 40),
        streamed("The quick answer.", 0),
    ]));
    host.send(&article_turn("slow", None));
    // The slow turn asked the model (and took the first script step).
    host.until("agent_state", "slow");
    host.send(&article_turn("quick", None));
    let mut order = Vec::new();
    while order
        .iter()
        .filter(|d: &&String| d.starts_with("done"))
        .count()
        < 2
    {
        let m = host
            .recv()
            .expect("the host closed before both turns ended");
        if m["type"] == "done" {
            assert_eq!(m["status"], "ok", "{m}");
            order.push(format!("done {}", m["reply_to"].as_str().unwrap()));
        }
    }
    // The quick turn did not wait for the slow one's thread.
    assert_eq!(order, ["done quick", "done slow"]);
}

//! Saved prompts through the built binary: `prompts.save`, `prompts.list`,
//! `prompts.delete` with their coded refusals, the library surviving a
//! restart, and a conversation's export carrying it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

fn save(host: &mut Host, id: &str, prompt: Value) -> Value {
    let reply = host.request(json!({"type": "prompts.save", "id": id, "prompt": prompt}));
    assert_wire_valid(&reply);
    reply
}

fn names(list: &Value) -> Vec<(String, Value)> {
    list["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["key"].clone()))
        .collect()
}

#[test]
fn the_library_is_saved_listed_refused_and_deleted_over_the_wire() {
    let mut host = Host::start();
    let tldr = save(
        &mut host,
        "s1",
        json!({"name": "TL;DR", "text": "Three bullets, no more.", "task": "web.summarize", "key": 1}),
    );
    assert_eq!(tldr["type"], "prompts.save.result", "{tldr}");
    assert_eq!(tldr["prompt"]["task"], "web.summarize");
    let tldr_id = tldr["prompt"]["id"].as_str().unwrap().to_owned();
    let german = save(
        &mut host,
        "s2",
        json!({"name": "To German", "text": "Translate the page into German.", "task": "web.answer", "key": 2}),
    );
    assert_eq!(
        names(&german),
        [
            ("TL;DR".to_owned(), json!(1)),
            ("To German".to_owned(), json!(2))
        ]
    );

    for (id, prompt, code, says) in [
        (
            "b1",
            json!({"name": " ", "text": "t", "task": "web.answer"}),
            "PROMPT_INVALID",
            "needs a name",
        ),
        (
            "b2",
            json!({"name": "n", "text": "", "task": "web.answer"}),
            "PROMPT_INVALID",
            "needs a text",
        ),
        (
            "b3",
            json!({"name": "n", "text": "x".repeat(4001), "task": "web.answer"}),
            "PROMPT_INVALID",
            "at most 4000",
        ),
        (
            "b4",
            json!({"name": "n", "text": "t", "task": "web.translate"}),
            "PROMPT_INVALID",
            "unknown task",
        ),
        (
            "b5",
            json!({"name": "n", "text": "t", "task": "web.answer", "key": 4}),
            "PROMPT_INVALID",
            "slots are 1 to 3",
        ),
        (
            "b6",
            json!({"name": "to german", "text": "t", "task": "web.answer"}),
            "PROMPT_NAME_TAKEN",
            "already named",
        ),
        (
            "b7",
            json!({"name": "n", "text": "t", "task": "web.answer", "shell": "rm"}),
            "INVALID_REQUEST",
            "shell",
        ),
    ] {
        // Some break the schema too: sent as the extension never would.
        let msg = json!({"type": "prompts.save", "id": id, "prompt": prompt});
        host.send_invalid(&msg);
        let e = host.reply_to(&msg);
        assert_wire_valid(&e);
        assert_eq!(e["type"], "error", "{e}");
        assert_eq!(e["code"], code, "{e}");
        assert!(
            e["message"].as_str().unwrap().contains(says),
            "{e} should say {says}"
        );
    }

    // Slot 2 moves to the TL;DR.
    let moved = save(
        &mut host,
        "s3",
        json!({"prompt_id": tldr_id, "name": "TL;DR", "text": "Three bullets, no more.", "task": "web.summarize", "key": 2}),
    );
    assert_eq!(moved["prompt"]["id"], tldr_id.as_str());
    assert_eq!(
        names(&moved),
        [
            ("TL;DR".to_owned(), json!(2)),
            ("To German".to_owned(), Value::Null)
        ]
    );

    let deleted = host.request(json!({"type": "prompts.delete", "id": "d1", "prompt_id": tldr_id}));
    assert_wire_valid(&deleted);
    assert_eq!(deleted["deleted"], true);
    let again = host.request(json!({"type": "prompts.delete", "id": "d2", "prompt_id": tldr_id}));
    assert_eq!(again["code"], "NOT_FOUND");

    // The library is in the history file: it outlives the process.
    let dir = host.into_dir();
    let mut host = Host::launch(Launch {
        dir: Some(dir),
        ..Launch::default()
    });
    let list = host.request(json!({"type": "prompts.list", "id": "l1"}));
    assert_wire_valid(&list);
    assert_eq!(names(&list), [("To German".to_owned(), Value::Null)]);
}

#[test]
fn a_conversation_export_carries_the_saved_prompts() {
    let mut host = Host::start();
    save(
        &mut host,
        "s1",
        json!({"name": "What's the catch?", "text": "What is the catch here?", "task": "web.answer", "key": 3}),
    );
    let obs = observation("article-night-trains.observation.json");
    let events = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "What is the catch here?",
        obs,
    );
    let conv = one(&events, "done")["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let export =
        host.request(json!({"type": "history.export", "id": "x", "conversation_id": conv}));
    assert_wire_valid(&export);
    let prompts = &export["export"]["prompts"];
    assert_eq!(prompts[0]["name"], "What's the catch?", "{export}");
    assert_eq!(prompts[0]["key"], 3);
    let html = host.request(
        json!({"type": "history.export", "id": "h", "conversation_id": conv, "format": "html"}),
    );
    let html = html["export"].as_str().unwrap();
    assert!(
        html.contains("<h2>Saved prompts</h2>")
            && html.contains("<strong>What&#39;s the catch?</strong> <span class=\"meta\">Question · shortcut 3</span><br>What is the catch here?"),
        "{html}"
    );
}

//! Collections through the built binary: the sidebar's requests
//! (`collection.add_page`, `collections.list`, `artifact.export`) and a turn
//! over a collection with the builtin runtime.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

fn page(url: &str, title: &str, text: &str) -> Value {
    json!({"summary": {
        "doc_type": "web.observation.summary.v1",
        "url": url, "title": title, "text": text,
        "elements": [{"handle_id": "l1", "role": "link", "text": "Home", "href": "https://rail.example/"}]
    }})
}

#[test]
fn pages_added_from_the_sidebar_answer_a_question_with_a_cited_source() {
    let mut host = Host::start();
    let first = host.request(json!({
        "type": "collection.add_page", "id": "p1",
        "observation": page("https://rail.example/stations", "Stations", "Trains leave from the central station every evening.")
    }));
    assert_wire_valid(&first);
    assert_eq!(first["type"], "collection.add_page.result", "{first}");
    assert_eq!(
        first["collection"]["title"], "Stations",
        "named after the page"
    );
    let collection = first["collection"]["id"].as_str().unwrap().to_owned();
    let second = host.request(json!({
        "type": "collection.add_page", "id": "p2", "collection_id": collection,
        "observation": page("https://rail.example/luggage", "Luggage", "Each passenger may bring two suitcases and one bicycle.")
    }));
    let luggage = second["source_id"].as_str().unwrap().to_owned();
    host.request(json!({
        "type": "collection.add_page", "id": "p3", "collection_id": collection,
        "observation": page("https://rail.example/food", "Food", "The dining car serves soup until midnight.")
    }));
    let again = host.request(json!({
        "type": "collection.add_page", "id": "p4", "collection_id": collection,
        "observation": page("https://rail.example/luggage", "Luggage", "Each passenger may bring two suitcases and one bicycle.")
    }));
    assert_eq!(
        again["source_id"],
        luggage.as_str(),
        "the same page is refreshed, not added twice"
    );
    assert_eq!(again["collection"]["source_count"], 3);

    let list = host.request(json!({"type": "collections.list", "id": "l"}));
    assert_wire_valid(&list);
    assert_eq!(list["collections"][0]["id"], collection.as_str());

    let mut msg = json!({
        "type": "turn", "id": "t1",
        "collection_id": collection,
        "message": {"text": "How many suitcases may a passenger bring?"},
        "task": {"name": "web.answer", "args": {}},
        "observation": page("https://elsewhere.example/", "Unrelated", "Nothing about trains.")
    });
    assert_wire_valid(&msg);
    host.send(&msg);
    let events = host.until("done", "t1");
    for e in &events {
        assert_wire_valid(e);
    }
    let assistant = events.iter().find(|e| e["type"] == "assistant").unwrap();
    let cited = &assistant["citations"][0];
    assert_eq!(cited["verified"], true, "{assistant}");
    assert_eq!(cited["source"]["source_id"], luggage.as_str());
    assert_eq!(cited["source"]["url"], "https://rail.example/luggage");

    msg["id"] = json!("t2");
    msg["collection_id"] = json!("no-such-collection");
    host.send(&msg);
    let events = host.until("done", "t2");
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "NOT_FOUND");

    let missing = host.request(
        json!({"type": "artifact.export", "id": "x", "artifact_id": "gone", "format": "markdown"}),
    );
    assert_eq!(missing["type"], "error");
    assert_eq!(missing["code"], "NOT_FOUND");
    let stale = host.request(json!({
        "type": "collection.add_page", "id": "p5", "collection_id": "gone",
        "observation": page("https://a.example/", "A", "x")
    }));
    assert_eq!(stale["code"], "NOT_FOUND");
    let bad = json!({
        "type": "collection.add_page", "id": "p6", "collection_id": collection,
        "observation": {"summary": {"doc_type": "nope"}}
    });
    host.send_invalid(&bad);
    let bad = host.reply_to(&bad);
    assert_eq!(bad["code"], "INVALID_OBSERVATION");
    let list = host.request(json!({"type": "collections.list", "id": "l2"}));
    assert_eq!(
        list["collections"][0]["source_count"], 3,
        "nothing half-stored"
    );
}

/// The SQLite file and its WAL, as bytes.
fn store_bytes(host: &Host) -> Vec<u8> {
    let data = host.dir.path().join("data");
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains(".sqlite") {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    assert!(!bytes.is_empty(), "a store under {}", data.display());
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn a_collection_is_named_renamed_trimmed_transformed_and_deleted_from_the_sidebar() {
    let mut host = Host::start();
    let first = host.request(json!({
        "type": "collection.add_page", "id": "p1", "title": "Night trains",
        "observation": page("https://rail.example/stations", "Stations", "Trains leave from the central station every evening at nine.")
    }));
    assert_eq!(
        first["collection"]["title"], "Night trains",
        "named as the user named it: {first}"
    );
    let collection = first["collection"]["id"].as_str().unwrap().to_owned();
    let luggage = host.request(json!({
        "type": "collection.add_page", "id": "p2", "collection_id": collection,
        "observation": page("https://rail.example/luggage", "Luggage", "Each passenger may bring two zebra-striped suitcases and one bicycle.")
    }))["source_id"]
        .as_str()
        .unwrap()
        .to_owned();
    host.request(json!({
        "type": "collection.add_page", "id": "p3", "collection_id": collection,
        "observation": page("https://rail.example/food", "Food", "The dining car serves hot soup until midnight.")
    }));

    let list = host.request(json!({"type": "collections.list", "id": "l1"}));
    let transforms: Vec<&str> = list["transforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        transforms,
        [
            "key_points",
            "comparison",
            "timeline",
            "faq",
            "bibliography"
        ]
    );
    assert_eq!(list["transforms"][0]["title"], "Key points");

    let got =
        host.request(json!({"type": "collection.get", "id": "g1", "collection_id": collection}));
    assert_eq!(got["type"], "collection.get.result", "{got}");
    let titles: Vec<&str> = got["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Stations", "Luggage", "Food"]);
    assert_eq!(got["sources"][1]["id"], luggage.as_str());
    assert!(
        got["sources"][0].get("text").is_none(),
        "no text in the list"
    );

    let renamed = host.request(json!({
        "type": "collection.rename", "id": "r1", "collection_id": collection, "title": "  Rail notes  "
    }));
    assert_eq!(renamed["type"], "collection.rename.result", "{renamed}");
    assert_eq!(renamed["collection"]["title"], "Rail notes");
    let blank = host.request(json!({
        "type": "collection.rename", "id": "r2", "collection_id": collection, "title": "   "
    }));
    assert_eq!(blank["code"], "INVALID_REQUEST", "{blank}");
    let gone = host.request(json!({
        "type": "collection.rename", "id": "r3", "collection_id": "no-such", "title": "X"
    }));
    assert_eq!(gone["code"], "NOT_FOUND", "{gone}");

    assert!(contains(&store_bytes(&host), "zebra-striped"));
    let removed = host.request(json!({
        "type": "collection.remove_source", "id": "d1", "collection_id": collection, "source_id": luggage
    }));
    assert_eq!(
        removed["type"], "collection.remove_source.result",
        "{removed}"
    );
    assert_eq!(removed["collection"]["source_count"], 2);
    assert_eq!(removed["source_id"], luggage.as_str());
    assert!(
        !contains(&store_bytes(&host), "zebra-striped"),
        "the removed source's text is gone from the file"
    );
    let again = host.request(json!({
        "type": "collection.remove_source", "id": "d2", "collection_id": collection, "source_id": luggage
    }));
    assert_eq!(again["code"], "NOT_FOUND", "{again}");

    let unknown = host.request(json!({
        "type": "transform.run", "id": "x0", "collection_id": collection, "transform": "haiku"
    }));
    assert_eq!(unknown["code"], "INVALID_REQUEST", "{unknown}");
    let made = host.request(json!({
        "type": "transform.run", "id": "x1", "collection_id": collection, "transform": "key_points"
    }));
    assert_eq!(made["type"], "transform.run.result", "{made}");
    assert_eq!(made["transform"], "key_points");
    assert_eq!(made["sources_read"], 2);
    assert_eq!(made["artifact"]["collection_id"], collection.as_str());
    let artifact = made["artifact"]["id"].as_str().unwrap().to_owned();
    let markdown = host.request(json!({
        "type": "artifact.export", "id": "e1", "artifact_id": artifact, "format": "markdown"
    }))["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        markdown.contains("dining car serves hot soup"),
        "{markdown}"
    );
    assert!(markdown.contains("central station"), "{markdown}");
    assert!(!markdown.contains("suitcases"), "{markdown}");

    // Kept on disk: a new host on the same data dir sees the name and the two sources.
    let dir = host.into_dir();
    let mut host = Host::launch(Launch {
        dir: Some(dir),
        ..Launch::default()
    });
    let list = host.request(json!({"type": "collections.list", "id": "l2"}));
    assert_eq!(list["collections"][0]["title"], "Rail notes");
    assert_eq!(list["collections"][0]["source_count"], 2);

    // A page added after the transform: its text is in no artifact.
    host.request(json!({
        "type": "collection.add_page", "id": "p4", "collection_id": collection,
        "observation": page("https://rail.example/tickets", "Tickets", "Quokka-shaped tickets are sold at the kiosk.")
    }));
    assert!(contains(&store_bytes(&host), "Quokka-shaped"));
    let deleted =
        host.request(json!({"type": "collection.delete", "id": "x2", "collection_id": collection}));
    assert_eq!(deleted["type"], "collection.delete.result", "{deleted}");
    assert_eq!(deleted["deleted"], true);
    let list = host.request(json!({"type": "collections.list", "id": "l3"}));
    assert_eq!(list["collections"], json!([]), "{list}");
    assert_eq!(
        list["artifacts"][0]["id"],
        artifact.as_str(),
        "its artifact is kept"
    );
    assert!(list["artifacts"][0]["collection_id"].is_null(), "{list}");
    assert!(
        !contains(&store_bytes(&host), "Quokka-shaped"),
        "the sources' text is gone from the file"
    );
    let missing =
        host.request(json!({"type": "collection.get", "id": "g2", "collection_id": collection}));
    assert_eq!(missing["code"], "NOT_FOUND", "{missing}");
    let twice =
        host.request(json!({"type": "collection.delete", "id": "x3", "collection_id": collection}));
    assert_eq!(twice["code"], "NOT_FOUND", "{twice}");
}

#[test]
fn a_transform_run_from_the_sidebar_stops_on_cancel_and_saves_nothing() {
    let slow = json!({"output": "{}", "delay_ms": 30_000});
    let mut host = Host::scripted(&json!([slow, slow]));
    let first = host.request(json!({
        "type": "collection.add_page", "id": "p1",
        "observation": page("https://rail.example/stations", "Stations", "Trains leave from the central station every evening.")
    }));
    let collection = first["collection"]["id"].as_str().unwrap().to_owned();
    host.request(json!({
        "type": "collection.add_page", "id": "p2", "collection_id": collection,
        "observation": page("https://rail.example/food", "Food", "The dining car serves soup until midnight.")
    }));
    let run = json!({"type": "transform.run", "id": "x1", "collection_id": collection, "transform": "faq"});
    host.send(&run);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    let cancel = json!({"type": "cancel", "id": "c1", "target": "x1"});
    host.send(&cancel);
    let mut replies = host.until_any(&["transform.run.result", "error"], "x1");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "stopped before the model answered"
    );
    let end = replies.last().unwrap().clone();
    // The run wakes the moment its token fires, so its end may come before
    // the reply to the cancel.
    if !replies.iter().any(|m| m["type"] == "cancel.result") {
        replies.extend(host.until("cancel.result", "c1"));
    }
    let cancelled = replies
        .iter()
        .find(|m| m["type"] == "cancel.result")
        .unwrap();
    assert_eq!(cancelled["cancelled"], true, "{replies:#?}");
    assert_eq!(end["type"], "error", "{end}");
    assert_eq!(end["code"], "CANCELLED", "{end}");
    let list = host.request(json!({"type": "collections.list", "id": "l"}));
    assert_eq!(list["artifacts"], json!([]), "nothing saved");
}

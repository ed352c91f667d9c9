//! Collections through the built binary: the sidebar's requests
//! (`collection.add_page`, `collections.list`, `artifact.export`) and a turn
//! over a collection with the builtin runtime.

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

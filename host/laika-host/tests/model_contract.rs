//! The model contract through the built binary, against a loopback
//! OpenAI-compatible server with the `llama.cpp` profile: a capable model's
//! full answer is shown and stored whole; an answer cut at `max_tokens` is
//! closed at its last complete block, shown with a note and stored so; a
//! small model (by what its server says, or by its own record of cut
//! answers) gets the tight caps; a follow-up repeats the first prompt as its
//! prefix.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::{observation, of_type, one, Host, Launch};
use laika_core::decoding::Caps;
use serde_json::{json, Value};
use stub::{sse_answer, Stub};

/// Sentences of the night-trains fixture, for quotes that verify.
const QUOTES: [&str; 6] = [
    "left on Tuesday evening with 312 passengers on board",
    "demand for overnight rail has doubled since 2022",
    "Rolling stock is the main constraint",
    "1.2 billion euros for new carriages",
    "starts at 49 euros",
    "make up a third of the ticket price",
];

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn paragraph(t: &str) -> Value {
    json!({"type": "paragraph", "children": [text(t)]})
}

/// A capable model's summary of the fixture, in the order a model following
/// the schema writes it: a heading, an introduction with a link, ten points,
/// a table of 8 rows × 6 cells, a closing paragraph, then six citations.
fn capable_answer() -> Value {
    let points: Vec<Value> = (1..=10)
        .map(|i| {
            json!({"type": "list_item", "children": [paragraph(&format!(
                "Point {i}: night trains across Europe are growing again, with new sleeper routes, rising demand from travellers avoiding short flights, and old rolling stock that still has to be replaced."
            ))]})
        })
        .collect();
    let rows: Vec<Value> = (0..8)
        .map(|r| {
            let cells: Vec<Value> = (0..6)
                .map(|c| json!({"type": "table_cell", "header": r == 0, "children": [text(&format!("row {r} cell {c}"))]}))
                .collect();
            json!({"type": "table_row", "cells": cells})
        })
        .collect();
    let citations: Vec<Value> = QUOTES
        .iter()
        .map(|q| json!({"doc_id": "doc:web:summary", "quote": q}))
        .collect();
    json!({"assistant": {
        "title": "Night trains are coming back",
        "render": {"type": "doc", "children": [
            {"type": "heading", "level": 2, "children": [text("What is happening")]},
            {"type": "paragraph", "children": [
                text("A new sleeper service between Brussels and Prague started this week, and operators report that demand has doubled. "),
                {"type": "link", "href": "https://news.example.org/trains", "children": [text("the report")]},
                text(" gives the details of routes, prices and the obstacles ahead.")
            ]},
            {"type": "list", "ordered": false, "items": points},
            {"type": "table", "rows": rows},
            paragraph("Without common rules on track access charges, critics say night trains may stay a niche product for enthusiasts."),
        ]},
        "citations": citations
    }, "tool_calls": []})
}

/// The answer as a model streams it: keys in the schema's order (`title`,
/// `render`, then `citations`), which `Value` (sorted) would not keep.
fn as_streamed(answer: &Value) -> String {
    let a = &answer["assistant"];
    format!(
        r#"{{"assistant":{{"title":{},"render":{},"citations":{}}},"tool_calls":[]}}"#,
        a["title"], a["render"], a["citations"]
    )
}

fn host(stub: &Stub, model: &str) -> Host {
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
            ("LAIKA_MODEL".into(), model.into()),
        ],
        config: "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n",
        ..Launch::default()
    });
    host.recv_timeout = std::time::Duration::from_secs(60);
    host
}

fn window(path: &str) -> Option<Value> {
    (path == "/props").then(|| json!({"default_generation_settings": {"n_ctx": 16384}}))
}

fn summarize(host: &mut Host) -> Vec<Value> {
    host.turn(
        "t1",
        json!({"name": "web.summarize", "args": {}}),
        "Summarize this page",
        observation("article-night-trains.observation.json"),
    )
}

fn stored_turn(host: &mut Host, events: &[Value]) -> Value {
    let conversation = one(events, "done")["conversation_id"].clone();
    let got =
        host.request(json!({"type": "history.get", "id": "h", "conversation_id": conversation}));
    got["conversation"]["turns"][0].clone()
}

fn render_of(events: &[Value]) -> Value {
    one(events, "assistant")["render"].clone()
}

#[test]
fn a_capable_models_full_answer_is_shown_and_stored_whole() {
    let streamed = as_streamed(&capable_answer());
    let stub = Stub::with_probes(window, move |_, _| sse_answer(&streamed, 40, "stop"));
    let mut host = host(&stub, "qwen3-4b-instruct");
    let events = summarize(&mut host);
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["first_try_valid"], true);
    assert_eq!(done["repairs"], json!([]));

    // The request: full caps, a budget that holds them, a short prompt.
    let body = stub.wait_requests(1)[0].body.clone();
    let schema = &body["json_schema"];
    assert_eq!(
        schema["$defs"]["list"]["properties"]["items"]["maxItems"],
        12
    );
    assert!(schema["$defs"]["text"]["properties"]["text"]["maxLength"].as_u64() >= Some(400));
    assert_eq!(body["max_tokens"], 4096);
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.chars().count() <= 2_000,
        "{}",
        system.chars().count()
    );
    assert!(
        !system.contains("browser.click"),
        "a summary is offered no tools"
    );
    assert!(
        !system.contains("Answer shape"),
        "the server enforces the schema"
    );

    // Shown whole: ten points, the table, six verified citations.
    let render = render_of(&events);
    let blocks = render["children"].as_array().unwrap();
    assert_eq!(blocks.len(), 5);
    assert_eq!(blocks[2]["items"].as_array().unwrap().len(), 10);
    assert_eq!(blocks[3]["rows"].as_array().unwrap().len(), 8);
    assert_eq!(blocks[3]["rows"][7]["cells"].as_array().unwrap().len(), 6);
    assert_eq!(blocks[1]["children"].as_array().unwrap().len(), 3);
    let citations = one(&events, "assistant")["citations"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(citations.len(), 6);
    assert_eq!(done["citations"]["verified"], 6);

    // Stored whole.
    let turn = stored_turn(&mut host, &events);
    assert_eq!(turn["status"], "ok", "{turn:#}");
    let stored = turn.to_string();
    assert!(stored.contains("Point 10: night trains"), "{stored}");
    assert!(stored.contains("row 7 cell 5"), "{stored}");
}

#[test]
fn an_answer_cut_at_max_tokens_is_closed_at_its_last_complete_block_and_stored_so() {
    let streamed = as_streamed(&capable_answer());
    // Cut inside the table: the heading, the introduction and the list are whole.
    let cut = streamed[..streamed.find("row 3 cell 2").unwrap()].to_string();
    let stub = Stub::with_probes(window, move |_, _| sse_answer(&cut, 40, "length"));
    let mut host = host(&stub, "qwen3-4b-instruct");
    let events = summarize(&mut host);
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert!(of_type(&events, "error").is_empty());
    assert_eq!(stub.seen().len(), 1, "a cut answer is not asked again");
    let repairs = done["repairs"].to_string();
    assert!(
        repairs.contains("closed at its last complete block"),
        "{repairs}"
    );

    let render = render_of(&events);
    let blocks = render["children"].as_array().unwrap();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["heading", "paragraph", "list", "paragraph"]);
    assert_eq!(blocks[2]["items"].as_array().unwrap().len(), 10);
    let note = blocks[3].to_string();
    assert!(note.contains("cut short"), "{note}");
    assert_eq!(
        one(&events, "assistant")["title"],
        "Night trains are coming back"
    );
    // The streamed preview showed the same whole blocks: never withdrawn.
    assert!(of_type(&events, "render_reset").is_empty());

    let turn = stored_turn(&mut host, &events);
    assert_eq!(turn["status"], "ok");
    let stored = turn.to_string();
    assert!(stored.contains("cut short"), "{stored}");
    assert!(stored.contains("Point 10: night trains"), "{stored}");
    assert!(
        !stored.contains("row 1 cell"),
        "the cut table is not kept: {stored}"
    );
}

#[test]
fn an_answer_cut_before_any_block_is_complete_fails() {
    let streamed = as_streamed(&capable_answer());
    let cut = streamed[..streamed.find("What is happening").unwrap()].to_string();
    let stub = Stub::with_probes(window, move |_, _| sse_answer(&cut, 40, "length"));
    let mut host = host(&stub, "qwen3-4b-instruct");
    let events = summarize(&mut host);
    assert_eq!(one(&events, "done")["status"], "failed");
    assert_eq!(one(&events, "error")["code"], "INVALID_MODEL_OUTPUT");
}

/// What the server says of the model picks the caps: llama.cpp's
/// `/v1/models` parameter count, else the model's name.
#[test]
fn a_small_model_gets_the_tight_caps() {
    let tiny = |path: &str| match path {
        "/props" => Some(json!({"default_generation_settings": {"n_ctx": 8192}})),
        "/v1/models" => {
            Some(json!({"data": [{"id": "model.gguf", "meta": {"n_params": 268_098_176u64}}]}))
        }
        _ => None,
    };
    let short = as_streamed(
        &json!({"assistant": {"title": "Trains", "render": {"type": "doc", "children": [paragraph("Night trains are back.")]}, "citations": []}}),
    );
    let reply = short.clone();
    let stub = Stub::with_probes(tiny, move |_, _| sse_answer(&reply, 40, "stop"));
    let mut small = host(&stub, "model.gguf");
    assert_eq!(one(&summarize(&mut small), "done")["status"], "ok");
    let schema = stub.wait_requests(1)[0].body["json_schema"].clone();
    let list_items = schema["$defs"]["list"]["properties"]["items"]["maxItems"]
        .as_u64()
        .unwrap();
    assert!(list_items <= 8, "{list_items}");
    assert!(
        !schema["$defs"]["block"].to_string().contains("code_block"),
        "no code block where the page has no code"
    );

    // No count from the server: the name says it.
    let reply = short.clone();
    let stub = Stub::with_probes(window, move |_, _| sse_answer(&reply, 40, "stop"));
    let mut named = host(&stub, "gemma-3-270m-it");
    assert_eq!(one(&summarize(&mut named), "done")["status"], "ok");
    let schema = stub.wait_requests(1)[0].body["json_schema"].clone();
    assert!(schema["$defs"]["list"]["properties"]["items"]["maxItems"].as_u64() <= Some(8));
}

/// A turn's request, not a summarizer's after `done`.
fn is_turn_request(body: &Value) -> bool {
    body["json_schema"]["properties"]["assistant"].is_object()
}

fn list_items_cap(body: &Value) -> u64 {
    body["json_schema"]["$defs"]["list"]["properties"]["items"]["maxItems"]
        .as_u64()
        .unwrap()
}

/// A model the server says nothing of, whose answers keep being cut at
/// `max_tokens`, gets the tight caps from its own record, and the full caps
/// back once it answers whole again.
#[test]
fn a_model_whose_answers_are_cut_gets_the_tight_caps_until_it_answers_whole() {
    let streamed = as_streamed(&capable_answer());
    let cut = streamed[..streamed.find("row 3 cell 2").unwrap()].to_string();
    let whole = as_streamed(
        &json!({"assistant": {"title": "Trains", "render": {"type": "doc", "children": [paragraph("Night trains are back in Europe.")]}, "citations": []}}),
    );
    let turns = std::sync::atomic::AtomicUsize::new(0);
    let stub = Stub::with_probes(window, move |body, _| {
        if !is_turn_request(body) {
            return sse_answer("{}", 40, "stop");
        }
        match turns.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 | 1 => sse_answer(&cut, 40, "length"),
            _ => sse_answer(&whole, 40, "stop"),
        }
    });
    let mut host = host(&stub, "qwen3-4b-instruct");
    let mut caps = Vec::new();
    for turn in 0..6 {
        let events = summarize(&mut host);
        assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
        // The record is kept just after `done`, before the agent state's
        // summarizer runs: its `entity_patch` says the record is kept.
        let after = host.until("entity_patch", "t1");
        assert_eq!(after.last().unwrap()["source"], "summarizer");
        let asked: Vec<_> = stub
            .seen()
            .into_iter()
            .filter(|s| is_turn_request(&s.body))
            .collect();
        assert_eq!(asked.len(), turn + 1);
        caps.push(list_items_cap(&asked[turn].body));
    }
    // Two cut answers of the last four: small from the third turn; after
    // three whole answers only one cut is left in the record: full again.
    let full = Caps::FULL.list_items as u64;
    assert_eq!(caps[..2], [full, full], "{caps:?}");
    assert!(caps[2..5].iter().all(|c| *c < full), "{caps:?}");
    assert_eq!(caps[5], full, "{caps:?}");
}

/// A follow-up question on the same page is sent the first request's
/// prompt again as its prefix (the same system prompt, the same page
/// document first), so a server that caches the prompt's prefix reads only
/// what is new.
#[test]
fn a_follow_up_on_the_same_page_repeats_the_first_prompt_as_its_prefix() {
    let stub = Stub::with_probes(window, |body, _| {
        sse_answer(&stub::answer_for(body, "The dining car."), 40, "stop")
    });
    let mut host = host(&stub, "qwen3-4b-instruct");
    let page = observation("article-night-trains.observation.json");
    let first = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "How much does a couchette cost?",
        page.clone(),
    );
    assert_eq!(one(&first, "done")["status"], "ok", "{first:#?}");
    let conversation = one(&first, "done")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    host.send(&common::turn_msg(
        "t2",
        json!({"name": "web.answer", "args": {}}),
        "And when do tickets go on sale?",
        page,
        Some(&conversation),
    ));
    let second = host.until("done", "t2");
    assert_eq!(one(&second, "done")["status"], "ok", "{second:#?}");

    let asked: Vec<Value> = stub
        .seen()
        .into_iter()
        .filter(|s| is_turn_request(&s.body))
        .map(|s| s.body)
        .collect();
    assert_eq!(asked.len(), 2);
    let message =
        |body: &Value, i: usize| body["messages"][i]["content"].as_str().unwrap().to_owned();
    assert_eq!(
        message(&asked[0], 0),
        message(&asked[1], 0),
        "system prompts"
    );
    let (user1, user2) = (message(&asked[0], 1), message(&asked[1], 1));
    let packet: Value = serde_json::from_str(&user2).unwrap();
    assert!(
        packet["context"]["conversation"]["turns"][0]["user"]
            .as_str()
            .is_some_and(|u| u.contains("couchette")),
        "the follow-up carries the first turn: {packet:#}"
    );
    // Everything before the conversation block (the page's documents) is
    // the same.
    let end = user2
        .find(",\"conversation\":{\"trust\"")
        .expect("the conversation block");
    let common = user1
        .bytes()
        .zip(user2.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(common >= end, "common prefix {common} of {end} bytes");
    assert!(
        end > user2.len() / 2,
        "the page is most of the prompt: {end} of {}",
        user2.len()
    );
}

/// Ollama's `POST /api/show` parameter count picks the caps, ahead of
/// what the model's name states.
#[test]
fn ollamas_parameter_count_picks_the_tight_caps() {
    let short = as_streamed(
        &json!({"assistant": {"title": "Trains", "render": {"type": "doc", "children": [paragraph("Night trains are back in Europe.")]}, "citations": []}}),
    );
    let show = |path: &str| {
        path.ends_with("/api/show").then(|| {
            json!({"parameters": "num_ctx 8192", "model_info": {"general.parameter_count": 268_098_176u64}})
        })
    };
    let stub = Stub::with_probes(show, move |_, _| {
        let mut steps = vec![stub::ok_head("application/x-ndjson")];
        let line = json!({"model": "qwen3:4b", "message": {"role": "assistant", "content": short}, "done": false});
        steps.push(stub::Step::Write(format!("{line}\n").into_bytes()));
        steps.push(stub::Step::Write(
            b"{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n".to_vec(),
        ));
        steps
    });
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "ollama".into()),
            (
                "LAIKA_BASE_URL".into(),
                stub.url.trim_end_matches("/v1").into(),
            ),
        ],
        config: "[runtime]\nkind = \"ollama\"\nmodel = \"qwen3:4b\"\n",
        ..Launch::default()
    });
    let events = summarize(&mut host);
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    assert!(stub.probes().iter().any(|p| p.ends_with("/api/show")));
    let format = stub.wait_requests(1)[0].body["format"].clone();
    let list_items = format["$defs"]["list"]["properties"]["items"]["maxItems"]
        .as_u64()
        .unwrap();
    assert!(list_items < Caps::FULL.list_items as u64, "{list_items}");
}

//! Collections, artifacts and transforms against a real SQLite file: the
//! host tools as the turn driver runs them, transforms with the builtin
//! runtime and with runtimes that fail, stall or count calls in flight, and
//! a whole turn over a collection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_builtin::BuiltinRuntime;
use laika_core::cancel::CancelToken;
use laika_core::model::{ModelReply, ModelRequest};
use laika_core::runtime::{Runtime, TextSink};
use laika_host::config::Config;
use laika_host::sink::Collector;
use laika_host::store::Store;
use laika_host::tools::{self, ToolContext};
use laika_host::transform::Progress;
use laika_host::turn::{self, TurnContext};
use laika_protocol::agent::OperationStatus;
use laika_protocol::deferred::Deferred;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::model::RuntimeInfo;
use laika_runtime::SystemAmbient;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Builtin answers, except for sources whose text contains `fail_on`, and
/// with a count of calls in flight.
struct Probe {
    fail_on: Option<&'static str>,
    delay: Duration,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    calls: AtomicUsize,
    /// Cancel this token on the call with this number (from 1).
    cancel_on: Option<(usize, CancelToken)>,
}

impl Probe {
    fn new() -> Probe {
        Probe {
            fail_on: None,
            delay: Duration::ZERO,
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
            cancel_on: None,
        }
    }
}

impl Runtime for Probe {
    fn info(&self) -> RuntimeInfo {
        BuiltinRuntime::new(SystemAmbient).info()
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if let Some((at, token)) = &self.cancel_on {
            if *at == n {
                token.cancel();
            }
        }
        std::thread::sleep(self.delay);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        cancel.check()?;
        let text = serde_json::to_string(&request.packet.context.documents).unwrap_or_default();
        if self.fail_on.is_some_and(|f| text.contains(f)) {
            return Err(Error::new(
                ErrorCode::RuntimeTimeout,
                "the model did not answer in time",
            ));
        }
        BuiltinRuntime::new(SystemAmbient).complete(request, cancel, on_text)
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Mutex<Store>,
    integrations: std::collections::BTreeMap<String, laika_host::integration::IntegrationConfig>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let store = Mutex::new(Store::open(&path).unwrap());
    Fixture {
        _dir: dir,
        path,
        store,
        integrations: Default::default(),
    }
}

fn call(
    f: &Fixture,
    runtime: &dyn Runtime,
    cancel: &CancelToken,
    concurrency: usize,
    events: &Mutex<Vec<Progress>>,
    name: &str,
    args: Value,
) -> std::result::Result<Value, laika_protocol::agent::ToolError> {
    let progress = |p: Progress| events.lock().unwrap().push(p);
    let ctx = ToolContext {
        store: &f.store,
        runtime,
        cancel,
        ambient: &SystemAmbient,
        concurrency,
        progress: &progress,
        integrations: &f.integrations,
        mcp: laika_host::mcp_client::McpHub::none(),
    };
    // As the engine hands a call on: typed, with the page read for a capture.
    let mut args = args;
    let page = args.as_object_mut().and_then(|a| a.remove("observation"));
    let name = laika_protocol::tool_call::ToolName::from_name(name).unwrap();
    let typed = laika_protocol::tool_call::ToolCall::from_arguments(name, args)
        .map_err(|e| laika_protocol::agent::ToolError::new("INVALID_ARGUMENTS", e.to_string()))?;
    tools::run(&typed, page.map(Deferred::new), &ctx)
        .map(laika_protocol::tool_call::ToolOutput::into_value)
}

/// Runs a tool with the builtin runtime, two calls at a time, uncancelled.
fn builtin_call(
    f: &Fixture,
    name: &str,
    args: Value,
) -> std::result::Result<Value, laika_protocol::agent::ToolError> {
    let events = Mutex::new(Vec::new());
    call(
        f,
        &BuiltinRuntime::new(SystemAmbient),
        &CancelToken::default(),
        2,
        &events,
        name,
        args,
    )
}

/// Runs a tool with the builtin runtime; panics on failure.
fn ok(f: &Fixture, name: &str, args: Value) -> Value {
    builtin_call(f, name, args).unwrap_or_else(|e| panic!("{name}: {}: {}", e.code, e.message))
}

/// The code a tool fails with; panics when it succeeds.
fn err(f: &Fixture, name: &str, args: Value) -> String {
    builtin_call(f, name, args)
        .err()
        .map(|e| e.code)
        .unwrap_or_else(|| panic!("{name} should fail"))
}

/// A new collection's id.
fn collection(f: &Fixture, title: &str) -> String {
    ok(f, "collection.create", json!({ "title": title }))["collectionId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A saved artifact's id.
fn saved_artifact(f: &Fixture, args: Value) -> String {
    ok(f, "artifact.save", args)["artifactId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A collection of `n` notes, each `text(i)`.
fn numbered(f: &Fixture, title: &str, n: usize, text: impl Fn(usize) -> String) -> String {
    let id = collection(f, title);
    let texts: Vec<(String, String)> = (0..n).map(|i| (format!("S{i}"), text(i))).collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    notes(f, &id, &refs);
    id
}

fn notes(f: &Fixture, collection: &str, texts: &[(&str, &str)]) -> Vec<String> {
    let sources: Vec<Value> = texts
        .iter()
        .map(|(title, text)| json!({"type": "note", "title": title, "text": text}))
        .collect();
    let added = ok(
        f,
        "collection.add_sources",
        json!({"collectionId": collection, "sources": sources}),
    );
    added["sourceIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn collections_and_artifacts_persist_and_unknown_ids_are_coded() {
    let f = fixture();
    let created = ok(
        &f,
        "collection.create",
        json!({"title": "Night trains", "tags": ["travel"]}),
    );
    let id = created["collectionId"].as_str().unwrap().to_owned();
    assert_eq!(created["message"], "Created the collection “Night trains”.");
    let added = ok(
        &f,
        "collection.add_sources",
        json!({"collectionId": id, "sources": [
            {"type": "url", "url": "https://rail.example/fares?token=abc", "title": "Fares"},
            {"type": "note", "text": "Ask about cabins at https://bob:secret@notes.example/x"}
        ]}),
    );
    assert_eq!(added["sourceIds"].as_array().unwrap().len(), 2);
    let listed = ok(&f, "collection.list_sources", json!({"collectionId": id}));
    let sources = listed["sources"].as_array().unwrap();
    assert_eq!(sources[0]["status"], "pending");
    assert_eq!(sources[0]["outlet"], "rail.example");
    assert!(
        !sources[0]["url"].as_str().unwrap().contains("abc"),
        "credential parameters stripped"
    );
    assert_eq!(sources[1]["status"], "ready");

    assert_eq!(
        err(
            &f,
            "collection.list_sources",
            json!({"collectionId": "nope"})
        ),
        "NOT_FOUND"
    );
    assert_eq!(
        err(
            &f,
            "collection.add_sources",
            json!({"collectionId": "nope", "sources": [{"type": "note", "text": "x"}]})
        ),
        "NOT_FOUND"
    );
    assert_eq!(
        err(
            &f,
            "collection.add_sources",
            json!({"collectionId": id, "sources": [{"type": "url", "url": "javascript:alert(1)"}]})
        ),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        err(&f, "artifact.open", json!({"artifactId": "stale"})),
        "NOT_FOUND"
    );

    let artifact = saved_artifact(
        &f,
        json!({"title": "Notes", "text": "see https://u:pw@a.example/ for more"}),
    );
    let doc = ok(
        &f,
        "artifact.save",
        json!({"title": "Doc", "doc": {"type": "doc", "children": [
            {"type": "paragraph", "children": [{"type": "text", "text": "kept"}]},
            {"type": "script", "text": "dropped"}
        ]}}),
    );
    assert_eq!(doc["mime"], tools::RENDER_MIME);

    // Everything is on disk: a new store over the same file reads it back.
    drop(f.store.lock().unwrap());
    let reopened = Store::open(&f.path).unwrap();
    let a = reopened.artifact(&artifact.as_str().into()).unwrap();
    assert_eq!(a.text.as_deref(), Some("see https://a.example/ for more"));
    let d = reopened
        .artifact(&doc["artifactId"].as_str().unwrap().into())
        .unwrap();
    assert_eq!(
        d.doc.unwrap()["children"].as_array().unwrap().len(),
        1,
        "sanitized"
    );
    let pack = reopened.collection_pack(&id.as_str().into()).unwrap();
    assert!(!pack.sources[1].text.contains("secret"));
    assert_eq!(reopened.list_collections(10).unwrap()[0].source_count, 2);
}

#[test]
fn a_comparison_reads_every_source_reports_failures_and_saves_an_artifact() {
    let f = fixture();
    let id = collection(&f, "Trains");
    notes(
        &f,
        &id,
        &[
            (
                "North",
                "The north line runs every hour. Tickets cost 12 euros. It opened in 1998.",
            ),
            (
                "Slow",
                "This source makes the model time out. It has text all the same.",
            ),
            (
                "South",
                "The south line runs at night only. A sleeper costs 89 euros.",
            ),
        ],
    );
    ok(
        &f,
        "collection.add_sources",
        json!({"collectionId": id, "sources": [{"type": "url", "url": "https://later.example/"}]}),
    );
    let probe = Probe {
        fail_on: Some("time out"),
        ..Probe::new()
    };
    let events = Mutex::new(Vec::new());
    let result = call(
        &f,
        &probe,
        &CancelToken::default(),
        4,
        &events,
        "transform.run",
        json!({"collectionId": id, "type": "comparison"}),
    )
    .unwrap();
    assert_eq!(result["sourcesRead"], 2);
    let failed: Vec<&str> = result["sourcesFailed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["RUNTIME_TIMEOUT", "NOT_CAPTURED"]);
    assert_eq!(result["plan"]["stages"][0]["mode"], "parallel");
    assert_eq!(
        result["plan"]["stages"][0]["steps"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    let events = events.into_inner().unwrap();
    assert_eq!(events.len(), 6, "start and end per source read");
    let ends: Vec<OperationStatus> = events
        .iter()
        .filter(|p| p.status != OperationStatus::Start)
        .map(|p| p.status)
        .collect();
    assert_eq!(
        ends.iter()
            .filter(|s| **s == OperationStatus::Error)
            .count(),
        1
    );

    let artifact = f
        .store
        .lock()
        .unwrap()
        .artifact(&result["artifactId"].as_str().unwrap().into())
        .unwrap();
    assert_eq!(artifact.collection_id.as_deref(), Some(id.as_str()));
    let text = laika_core::render::plain_text(artifact.doc.as_ref().unwrap());
    assert!(text.contains("The north line runs every hour."), "{text}");
    assert!(text.contains("A sleeper costs 89 euros."), "{text}");
    assert!(text.contains("Slow — RUNTIME_TIMEOUT"), "{text}");
    assert!(text.contains("12"), "figures column: {text}");
}

#[test]
fn the_parallel_stage_keeps_the_configured_calls_in_flight() {
    let f = fixture();
    let id = numbered(&f, "Many", 8, |i| {
        format!("Source {i} says the train number {i} is late.")
    });
    for (concurrency, want) in [(1, 1), (3, 3)] {
        let probe = Probe {
            delay: Duration::from_millis(30),
            ..Probe::new()
        };
        let events = Mutex::new(Vec::new());
        let result = call(
            &f,
            &probe,
            &CancelToken::default(),
            concurrency,
            &events,
            "transform.run",
            json!({"collectionId": id, "type": "key_points"}),
        )
        .unwrap();
        assert_eq!(result["sourcesRead"], 8);
        assert_eq!(probe.calls.load(Ordering::SeqCst), 8);
        assert_eq!(
            probe.max_in_flight.load(Ordering::SeqCst),
            want,
            "concurrency {concurrency}"
        );
    }
}

#[test]
fn a_cancel_stops_every_step_and_saves_nothing() {
    let f = fixture();
    let id = numbered(&f, "Cancelled", 12, |i| {
        format!("Source {i} has a sentence to read.")
    });
    let cancel = CancelToken::default();
    let probe = Probe {
        delay: Duration::from_millis(10),
        cancel_on: Some((2, cancel.clone())),
        ..Probe::new()
    };
    let events = Mutex::new(Vec::new());
    let e = call(
        &f,
        &probe,
        &cancel,
        2,
        &events,
        "transform.run",
        json!({"collectionId": id, "type": "timeline"}),
    )
    .unwrap_err();
    assert_eq!(e.code, "CANCELLED");
    assert!(
        probe.calls.load(Ordering::SeqCst) <= 3,
        "no step starts after the cancel"
    );
    assert!(f
        .store
        .lock()
        .unwrap()
        .list_artifacts(10)
        .unwrap()
        .is_empty());
}

#[test]
fn unknown_transform_types_and_empty_collections_are_refused() {
    let f = fixture();
    let id = collection(&f, "Empty");
    assert_eq!(
        err(
            &f,
            "transform.run",
            json!({"collectionId": id, "type": "poem"})
        ),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        err(
            &f,
            "transform.run",
            json!({"collectionId": id, "type": "faq"})
        ),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        err(
            &f,
            "transform.run",
            json!({"collectionId": "gone", "type": "faq"})
        ),
        "NOT_FOUND"
    );
    assert_eq!(
        ok(&f, "transform.list_types", json!({}))["types"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn a_turn_over_a_collection_cites_the_source_that_answers() {
    let f = fixture();
    let id = collection(&f, "Trip");
    let ids = notes(
        &f,
        &id,
        &[
            (
                "Stations",
                "The train leaves from the central station. The platform is announced late.",
            ),
            (
                "Luggage",
                "Each passenger may bring two suitcases and one bicycle on board.",
            ),
            (
                "Food",
                "The dining car serves soup and bread until midnight.",
            ),
        ],
    );
    let request: laika_protocol::wire::TurnRequest = serde_json::from_value(json!({
        "id": "t-1",
        "conversation_id": "conv-1",
        "collection_id": id,
        "message": {"text": "How many suitcases may a passenger bring?"},
        "task": {"name": "web.answer", "args": {}},
        "observation": {"summary": {
            "doc_type": "web.observation.summary.v1",
            "url": "https://elsewhere.example/",
            "title": "Unrelated page",
            "text": "Nothing about trains here."
        }}
    }))
    .unwrap();
    let sink = Collector::default();
    let (_tx, inbox) = mpsc::channel();
    let config = Config::default();
    // Both turns run as the host runs one, with the builtin runtime.
    let run_turn = |request| {
        turn::run(
            request,
            &TurnContext {
                config: &config,
                runtime: &BuiltinRuntime::new(SystemAmbient),
                store: &f.store,
                cancel: &CancelToken::default(),
                inbox: &inbox,
                sink: &sink,
                context_window: None,
                page_indexes: None,
                regime: Default::default(),
                mcp: laika_host::mcp_client::McpHub::none(),
                call_time: None,
            },
        )
    };
    run_turn(request);
    let events = sink.take();
    let assistant = events
        .iter()
        .find(|e| e["type"] == "assistant")
        .unwrap_or_else(|| panic!("{events:#?}"));
    let citations = assistant["citations"].as_array().unwrap();
    assert!(!citations.is_empty());
    for c in citations {
        assert_eq!(c["verified"], true);
        assert_eq!(c["source"]["source_id"], ids[1].as_str(), "{c}");
        assert_eq!(c["source"]["title"], "Luggage");
    }
    let usage = events
        .iter()
        .find(|e| e["type"] == "context_usage")
        .unwrap();
    assert_eq!(usage["documents"][0]["kind"], "collection.index.v1");
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["status"], "ok");

    // An unknown collection fails the turn with NOT_FOUND, stored as failed.
    let bad: laika_protocol::wire::TurnRequest = serde_json::from_value(json!({
        "id": "t-2", "conversation_id": "conv-1", "collection_id": "gone",
        "message": {"text": "?"}, "task": {"name": "web.answer", "args": {}},
        "observation": {"summary": {"doc_type": "web.observation.summary.v1", "url": "https://e.example/", "title": "t", "text": "x"}}
    }))
    .unwrap();
    run_turn(bad);
    let events = sink.take();
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(error["code"], "NOT_FOUND");
    assert_eq!(events.last().unwrap()["status"], "failed");
}

#[test]
fn a_capture_fills_the_pending_source_or_adds_one() {
    let f = fixture();
    let id = collection(&f, "Pages");
    let added = ok(
        &f,
        "collection.add_sources",
        json!({"collectionId": id, "sources": [{"type": "url", "url": "https://a.example/story"}]}),
    );
    let pending = added["sourceIds"][0].as_str().unwrap().to_owned();
    let page = |url: &str, text: &str| {
        json!({"summary": {
            "doc_type": "web.observation.summary.v1",
            "url": url, "title": "A story", "text": text,
            "elements": [{"handle_id": "l1", "role": "link", "text": "Next", "href": "https://a.example/next"}]
        }})
    };
    let captured = ok(
        &f,
        "source.capture",
        json!({"collectionId": id, "url": "https://a.example/story",
               "observation": page("https://a.example/story", "The story, told in full.")}),
    );
    assert_eq!(
        captured["sourceId"],
        pending.as_str(),
        "the pending source is filled"
    );
    assert_eq!(captured["links"], 1);
    let other = ok(
        &f,
        "source.capture",
        json!({"collectionId": id, "url": "https://b.example/", "maxChars": 4,
               "observation": page("https://b.example/", "Another page entirely.")}),
    );
    assert_ne!(other["sourceId"], pending.as_str());
    assert_eq!(other["chars"], 4);
    let listed = ok(&f, "collection.list_sources", json!({"collectionId": id}));
    let statuses: Vec<&str> = listed["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ready", "ready"]);
    let source = f
        .store
        .lock()
        .unwrap()
        .source(&pending.as_str().into())
        .unwrap();
    assert_eq!(source.text, "The story, told in full.");
    assert!(source.captured_at.is_some());
    assert_eq!(
        err(
            &f,
            "source.capture",
            json!({"collectionId": id, "url": "https://a.example/", "observation": {"summary": {}}})
        ),
        "INVALID_OBSERVATION"
    );
    assert_eq!(
        err(
            &f,
            "source.capture",
            json!({"collectionId": "gone", "url": "https://a.example/", "observation": page("https://a.example/", "x")})
        ),
        "NOT_FOUND"
    );
}

#[test]
fn a_refresh_replaces_the_document_keeps_the_id_and_records_when() {
    let f = fixture();
    let id = collection(&f, "Pages");
    let page = |url: &str, title: &str, text: &str| {
        json!({"summary": {
            "doc_type": "web.observation.summary.v1",
            "url": url, "title": title, "text": text
        }})
    };
    let captured = ok(
        &f,
        "source.capture",
        json!({"collectionId": id, "url": "https://a.example/story",
               "observation": page("https://a.example/story", "A story", "The first version.")}),
    );
    let source_id = captured["sourceId"].as_str().unwrap().to_owned();
    let before = f
        .store
        .lock()
        .unwrap()
        .source(&source_id.as_str().into())
        .unwrap();
    assert_eq!(before.refreshed_at, None);
    // Without a page: where the extension must read it from.
    let prepared = ok(&f, "source.refresh", json!({"sourceId": source_id}));
    assert_eq!(prepared["url"], "https://a.example/story");
    assert_eq!(prepared["collectionId"], id.as_str());
    // With the page it read: the document is replaced, the id kept.
    let refreshed = ok(
        &f,
        "source.refresh",
        json!({"sourceId": source_id, "observation": page("https://a.example/story?after=redirect", "A story, updated", "The second version, longer.")}),
    );
    assert_eq!(refreshed["sourceId"], source_id.as_str());
    assert_eq!(
        refreshed["message"],
        "Refreshed “A story, updated” (27 characters)."
    );
    let after = f
        .store
        .lock()
        .unwrap()
        .source(&source_id.as_str().into())
        .unwrap();
    assert_eq!(after.text, "The second version, longer.");
    assert_eq!(after.title, "A story, updated");
    assert_eq!(
        after.url.as_deref(),
        Some("https://a.example/story"),
        "the URL it is known by"
    );
    assert!(after.refreshed_at.is_some());
    assert_eq!(after.refreshed_at, after.captured_at);
    let listed = ok(&f, "collection.list_sources", json!({"collectionId": id}));
    assert_eq!(
        listed["sources"].as_array().unwrap().len(),
        1,
        "no second source"
    );
    assert_eq!(
        listed["sources"][0]["refreshedAt"],
        json!(after.refreshed_at)
    );
    // A bad page changes nothing; nor does a note or an unknown id.
    assert_eq!(
        err(
            &f,
            "source.refresh",
            json!({"sourceId": source_id, "observation": {"summary": {}}})
        ),
        "INVALID_OBSERVATION"
    );
    assert_eq!(
        f.store
            .lock()
            .unwrap()
            .source(&source_id.as_str().into())
            .unwrap()
            .text,
        "The second version, longer."
    );
    let note = notes(&f, &id, &[("Note", "Ask about cabins.")])[0].clone();
    assert_eq!(
        err(&f, "source.refresh", json!({"sourceId": note})),
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        err(&f, "source.refresh", json!({"sourceId": "gone"})),
        "NOT_FOUND"
    );
    // Reopened from disk, the refresh is still there.
    let reopened = Store::open(&f.path).unwrap();
    let stored = reopened.source(&source_id.as_str().into()).unwrap();
    assert_eq!(stored.text, "The second version, longer.");
    assert_eq!(stored.refreshed_at, after.refreshed_at);
}

#[test]
fn a_share_renders_the_export_the_extension_writes() {
    let f = fixture();
    let artifact = saved_artifact(
        &f,
        json!({"title": "Trains: a comparison", "text": "Night trains are back.\n\nFares = rising."}),
    );
    let md = ok(
        &f,
        "artifact.share",
        json!({"artifactId": artifact, "format": "markdown"}),
    );
    assert_eq!(md["target"], "file");
    assert_eq!(md["filename"], "Trains-a-comparison.md");
    assert_eq!(md["mime"], "text/markdown");
    assert!(md["content"]
        .as_str()
        .unwrap()
        .contains("Night trains are back."));
    let csv = ok(
        &f,
        "artifact.share",
        json!({"artifactId": artifact, "format": "csv", "target": "clipboard", "filename": "../../etc/passwd"}),
    );
    assert_eq!(csv["target"], "clipboard");
    assert_eq!(csv["filename"], "etc-passwd.csv");
    assert!(csv["content"]
        .as_str()
        .unwrap()
        .contains("Night trains are back."));
    for (args, code) in [
        (
            json!({"artifactId": artifact, "format": "pdf"}),
            "UNSUPPORTED_FORMAT",
        ),
        (
            json!({"artifactId": artifact, "format": "markdown", "target": "share_sheet"}),
            "UNSUPPORTED_TARGET",
        ),
        (
            json!({"artifactId": "gone", "format": "markdown"}),
            "NOT_FOUND",
        ),
    ] {
        assert_eq!(err(&f, "artifact.share", args), code);
    }
}

//! `laika-host serve` (NLWeb v0.54) against the real binary on a loopback
//! port with a temporary data dir: v0.54's request shapes and response
//! types in JSON and SSE, `/await`, and the server's defences.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod nlweb;

use nlweb::{send, serve, serve_prepared, Served, PAGES};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_laika-host");

fn builtin() -> Served {
    serve(Path::new(BIN), "", &[], &PAGES)
}

/// A scripted model that takes `delay_ms` per answer, `n` answers. The
/// script's folder is returned with the server, and outlives it.
fn slow(
    n: usize,
    delay_ms: u64,
    env: &[(&str, &str)],
    config: &str,
) -> (Served, tempfile::TempDir) {
    let answer = json!({
        "protocol": {"name": "laika.llmcp", "version": 1}, "id": "{{new_id}}", "type": "response",
        "created_at": "{{now}}", "conversation": {"id": "{{conversation_id}}", "turn": 999_999},
        "sender": {"role": "assistant"}, "in_reply_to": {"request_id": "{{request_id}}"},
        "assistant": {"title": "Answer", "render": {"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "Cinnamon muffins, from your history."}]}]}, "citations": []},
        "tool_calls": []
    })
    .to_string()
    .replace("999999", "{{turn}}");
    let script: Vec<Value> = (0..n)
        .map(|_| json!({"output": answer, "delay_ms": delay_ms}))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, Value::Array(script).to_string()).unwrap();
    let mut all = vec![
        ("LAIKA_RUNTIME", "scripted"),
        ("LAIKA_SCRIPT", path.to_str().unwrap()),
    ];
    all.extend_from_slice(env);
    (serve(Path::new(BIN), config, &all, &PAGES), dir)
}

fn ask(text: &str) -> Value {
    json!({"query": {"text": text}, "prefer": {"streaming": false}})
}

fn assert_failure(reply: &nlweb::Reply, status: u16, code: &str) -> String {
    assert_eq!(reply.status, status, "{reply:?}");
    let v = reply.json();
    assert_eq!(v["_meta"]["response_type"], "Failure", "{v}");
    assert_eq!(v["_meta"]["version"], "0.54");
    assert_eq!(v["error"]["code"], code, "{v}");
    v["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn the_seeds_request_is_answered_from_history_with_verified_citations() {
    let s = builtin();
    assert!(s.stdout_line.contains("serve-token"), "{}", s.stdout_line);
    assert!(!s.stdout_line.contains(&s.token));
    let reply = s.post(
        "/ask",
        &json!({
            "query": {"text": "protein rich muffins with cinnamon", "itemType": "WebPage"},
            "context": {"@type": "ConversationalContext", "prev": ["breakfast muffins"], "text": "looking at recipes", "memory": ["vegetarian"]},
            "prefer": {"streaming": false, "response_format": "conv_search", "mode": "generate", "accept-language": "en", "user-agent": "Test/1.0"},
            "meta": {"api_version": "0.54", "session_context": {"conversation_id": "conv_98765", "state_token": "blob_xyz"}}
        }),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let v = reply.json();
    assert_eq!(v["_meta"]["response_type"], "Answer");
    assert_eq!(v["_meta"]["response_format"], "conv_search");
    assert_eq!(v["_meta"]["version"], "0.54");
    assert_eq!(
        v["_meta"]["session_context"]["conversation_id"],
        "conv_98765"
    );
    assert_eq!(v["_meta"]["session_context"]["state_token"], "blob_xyz");
    let results = v["results"].as_array().unwrap();
    let answer = &results[0];
    assert_eq!(answer["@type"], "Answer");
    let citations = answer["grounding"]["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "{answer}");
    let muffins = PAGES[1];
    for c in citations {
        assert_eq!(c["verified"], true);
        let quote = c["quote"].as_str().unwrap();
        // Verified quotes come from what the history holds of that page.
        assert_eq!(c["url"], muffins.0, "{c}");
        assert!(
            quote.to_lowercase().contains("muffin") || quote.contains("cinnamon"),
            "{quote}"
        );
    }
    assert_eq!(answer["grounding"]["source_urls"], json!([muffins.0]));
    let page = results
        .iter()
        .find(|r| r["url"] == muffins.0)
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(page["@type"], "WebPage");
    assert_eq!(page["name"], muffins.1);
    assert!(page["description"].as_str().unwrap().len() > 10);
    assert_eq!(page["grounding"]["source_urls"], json!([muffins.0]));
    // The ask is a turn of the Laika conversation it named.
    let stored = s.history(&["show", "conv_98765"]);
    assert_eq!(stored["turns"][0]["status"], "ok");
    assert_eq!(
        stored["turns"][0]["user_text"],
        "protein rich muffins with cinnamon"
    );
    // The same conversation goes on.
    let again = s.post(
        "/ask",
        &json!({"query": {"text": "night train couchette price"}, "prefer": {"streaming": false},
                "meta": {"session_context": {"conversation_id": "conv_98765"}}}),
    );
    assert_eq!(
        again.json()["_meta"]["session_context"]["conversation_id"],
        "conv_98765"
    );
    assert_eq!(
        s.history(&["show", "conv_98765"])["turns"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn chatgpt_app_is_the_default_format_and_get_parameters_nest() {
    let s = builtin();
    let reply = s.get("/ask?query.text=how%20much%20is%20a%20couchette%20bed&prefer.streaming=false&context.prev=trains&context.prev=sleepers");
    assert_eq!(reply.status, 200, "{reply:?}");
    let v = reply.json();
    assert_eq!(v["_meta"]["response_format"], "chatgpt_app");
    assert_eq!(v["content"][0]["type"], "text");
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("49 euros"),
        "{v}"
    );
    let results = v["structuredData"]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["url"] == PAGES[2].0), "{v}");
    assert!(v.get("results").is_none());
    // A new conversation when none is named; its id comes back.
    let id = v["_meta"]["session_context"]["conversation_id"]
        .as_str()
        .unwrap();
    assert_eq!(s.history(&["show", id])["turns"][0]["status"], "ok");
    // POST: the body wins over the URL's parameters.
    let reply = s.request(
        "POST",
        "/ask?query.text=couchette&prefer.streaming=true",
        Some(
            &json!({"query": {"text": "executor worker threads"}, "prefer": {"streaming": false}}),
        ),
        &[],
    );
    let v = reply.json();
    let urls: Vec<&Value> = v["structuredData"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["url"])
        .collect();
    assert!(urls.contains(&&json!(PAGES[0].0)), "{v}");
    assert!(!urls.contains(&&json!(PAGES[2].0)), "{v}");
}

#[test]
fn sse_sends_meta_first_then_each_result_and_ends() {
    let s = builtin();
    let reply = s.post(
        "/ask",
        &json!({"query": {"text": "cinnamon muffins"}, "prefer": {"response_format": "conv_search"}}),
    );
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/event-stream"));
    assert!(reply.header("access-control-allow-origin").is_none());
    let events = reply.events();
    assert!(events.len() >= 3, "{events:?}");
    assert_eq!(
        events[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["_meta"]
    );
    assert_eq!(events[0]["_meta"]["response_type"], "Answer");
    assert_eq!(events[0]["_meta"]["version"], "0.54");
    for e in &events[1..] {
        assert_eq!(e["results"].as_array().unwrap().len(), 1, "{e}");
    }
    // The pages as soon as they are found, the answer when it is made.
    assert_eq!(events[1]["results"][0]["@type"], "WebPage");
    assert_eq!(events.last().unwrap()["results"][0]["@type"], "Answer");
    assert!(events.iter().any(|e| e["results"][0]["url"] == PAGES[1].0));

    // chatgpt_app streams the pages, then the answer's content and result.
    let events = s.get("/ask?query.text=night%20trains").events();
    assert_eq!(events[0]["_meta"]["response_format"], "chatgpt_app");
    assert_eq!(
        events[1]["structuredData"]["results"][0]["@type"],
        "WebPage"
    );
    let content = events
        .iter()
        .position(|e| e.get("content").is_some())
        .unwrap();
    assert_eq!(events[content]["content"][0]["type"], "text");
    assert_eq!(
        events[content + 1]["structuredData"]["results"][0]["@type"],
        "Answer"
    );

    // Other response types stream too: _meta, then their object.
    let events = s.get("/ask?query.text=muffins&query.site=example").events();
    assert_eq!(events[0]["_meta"]["response_type"], "Elicitation");
    assert!(events[1]["elicitation"]["questions"].is_array());
    let events = s.get("/ask?query.text=zeppelin%20timetables").events();
    assert_eq!(events[0]["_meta"]["response_type"], "Failure");
    assert_eq!(events[1]["error"]["code"], "NO_RESULTS");
}

#[test]
fn site_picks_the_source_or_asks_which_and_filters_narrow() {
    let s = builtin();
    let with = |site: &str, text: &str| {
        s.post(
            "/ask",
            &json!({"query": {"text": text, "site": site}, "prefer": {"streaming": false, "response_format": "conv_search"}}),
        )
    };
    // "example" is part of all three hosts: which one?
    let v = with("example", "muffins").json();
    assert_eq!(v["_meta"]["response_type"], "Elicitation", "{v}");
    let q = &v["elicitation"]["questions"][0];
    assert_eq!(q["id"], "site");
    assert_eq!(q["type"], "single_select");
    assert_eq!(
        q["options"],
        json!(["blog.example.net", "docs.example.com", "example.org"])
    );
    assert!(v["elicitation"]["text"]
        .as_str()
        .unwrap()
        .contains("example"));
    // A domain keeps that site (and its subdomains) only.
    let v = with("example.com", "threads muffins cinnamon").json();
    let urls: Vec<&str> = v["results"].as_array().unwrap()[1..]
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, [PAGES[0].0], "{v}");
    // The whole history by name.
    assert_eq!(
        with("history", "muffins").json()["_meta"]["response_type"],
        "Answer"
    );
    // Unknown collections and sites, and queries nothing matches.
    let msg = assert_failure(&with("recipes-collection", "muffins"), 404, "NO_RESULTS");
    assert!(msg.contains("recipes-collection"), "{msg}");
    assert_failure(
        &s.post("/ask", &ask("zeppelin timetables")),
        404,
        "NO_RESULTS",
    );
    // A follow-up nothing matches alone is read with the queries before it.
    let follow_up = s.post(
        "/ask",
        &json!({"query": {"text": "zeppelin timetables"}, "context": {"prev": ["sleeper Prague"]},
                "prefer": {"streaming": false, "response_format": "conv_search"}}),
    );
    assert_eq!(
        follow_up.json()["results"][1]["url"],
        PAGES[2].0,
        "{follow_up:?}"
    );
    // Extra query fields are filters: every document must mention them.
    let v = s
        .post("/ask", &json!({"query": {"text": "muffins trains", "price": "49 euros"}, "prefer": {"streaming": false, "response_format": "conv_search"}}))
        .json();
    let urls: Vec<&str> = v["results"].as_array().unwrap()[1..]
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, [PAGES[2].0], "{v}");
}

/// A source to store: `(url, title, text)`, a note when there is no URL.
type NewSource<'a> = (Option<&'a str>, &'a str, &'a str);

/// Writes collections `(id, title, sources)` straight into the data dir's
/// store, before the server opens it.
fn add_collections(dir: &Path, collections: &[(&str, &str, &[NewSource<'_>])]) {
    use laika_protocol::collection::{Collection, Source, SourceKind, SourceStatus};
    let mut store = laika_host::store::Store::open(&dir.join("history.sqlite3")).unwrap();
    for (id, title, sources) in collections {
        store
            .create_collection(&Collection {
                id: (*id).into(),
                title: (*title).into(),
                tags: Vec::new(),
                created_at: "2026-11-01T10:00:00Z".into(),
                source_count: 0,
            })
            .unwrap();
        let sources: Vec<Source> = sources
            .iter()
            .enumerate()
            .map(|(i, (url, title, text))| Source {
                id: format!("{id}-s{i}").into(),
                collection_id: (*id).into(),
                kind: if url.is_some() {
                    SourceKind::Url
                } else {
                    SourceKind::Note
                },
                url: url.map(str::to_owned),
                title: (*title).into(),
                outlet: None,
                captured_at: Some("2026-11-01T10:05:00Z".into()),
                refreshed_at: None,
                status: SourceStatus::Ready,
                error: None,
                text: (*text).into(),
                outline: Vec::new(),
                extracted_links: Vec::new(),
            })
            .collect();
        store
            .add_sources(
                &(*id).into(),
                &sources,
                laika_host::store::collections::AddedBy::User,
                "2026-11-01T10:05:00Z",
            )
            .unwrap();
    }
}

#[test]
fn site_names_a_collection_answered_from_its_sources() {
    let lake = "https://lakes.example/garda";
    let s = serve_prepared(Path::new(BIN), "", &[], &PAGES, |dir| {
        add_collections(
            dir,
            &[
                (
                    "col-lakes",
                    "Alpine Lakes",
                    &[
                        (
                            Some("https://lakes.example/como"),
                            "Lake Como",
                            "Lake Como is shaped like an inverted Y. Ferries link Bellagio, Varenna and Menaggio.",
                        ),
                        (
                            Some(lake),
                            "Lake Garda",
                            "Lake Garda is the largest lake in Italy, with a surface of 370 square kilometres.",
                        ),
                    ],
                ),
                (
                    "col-notes-a",
                    "Reading list",
                    &[(None, "Note", "Read the chapter on glaciers.")],
                ),
                (
                    "col-notes-b",
                    "READING LIST",
                    &[(None, "Note", "Borrow the atlas.")],
                ),
            ],
        );
    });
    let with = |site: &str, text: &str| {
        s.post(
            "/ask",
            &json!({"query": {"text": text, "site": site}, "prefer": {"streaming": false, "response_format": "conv_search"}}),
        )
    };
    // The title, in any case: answered from the collection's sources only.
    let reply = with("alpine lakes", "Which lake is the largest in Italy?");
    assert_eq!(reply.status, 200, "{reply:?}");
    let v = reply.json();
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    let results = v["results"].as_array().unwrap();
    let answer = &results[0];
    assert_eq!(answer["@type"], "Answer");
    assert_eq!(answer["grounding"]["source_urls"], json!([lake]), "{v}");
    let citations = answer["grounding"]["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "{v}");
    for c in citations {
        assert_eq!(c["verified"], true);
        assert_eq!(c["url"], lake, "{c}");
        assert!(c["quote"].as_str().unwrap().contains("Garda"), "{c}");
    }
    let source = results
        .iter()
        .find(|r| r["url"] == lake)
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(source["@type"], "WebPage");
    assert_eq!(source["name"], "Lake Garda");
    assert!(source["description"]
        .as_str()
        .unwrap()
        .contains("370 square kilometres"));
    assert_eq!(source["grounding"]["source_urls"], json!([lake]));
    assert_eq!(source["identifier"], "col-lakes-s1");
    // Nothing from the history: the history pages are not the collection.
    assert!(
        results
            .iter()
            .all(|r| !PAGES.iter().any(|p| r["url"] == p.0)),
        "{v}"
    );
    // The id picks it too.
    let v = with("col-lakes", "ferries Bellagio").json();
    assert_eq!(
        v["results"][0]["grounding"]["source_urls"],
        json!(["https://lakes.example/como"]),
        "{v}"
    );

    // Two collections with that title: which one? The options are ids, the
    // text names both.
    let v = with("Reading List", "glaciers").json();
    assert_eq!(v["_meta"]["response_type"], "Elicitation", "{v}");
    let q = &v["elicitation"]["questions"][0];
    assert_eq!(q["type"], "single_select");
    assert_eq!(q["options"], json!(["col-notes-a", "col-notes-b"]));
    let text = v["elicitation"]["text"].as_str().unwrap();
    assert!(
        text.contains("Reading list") && text.contains("READING LIST"),
        "{text}"
    );
    // Picking one answers from it.
    let v = with("col-notes-a", "What should I read about glaciers?").json();
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    assert_eq!(v["results"][1]["name"], "Note", "{v}");
    assert_eq!(v["results"][1]["@type"], "CreativeWork", "{v}");

    // Unknown names still fail with NO_RESULTS.
    let msg = assert_failure(&with("Nordic Lakes", "largest lake"), 404, "NO_RESULTS");
    assert!(msg.contains("Nordic Lakes"), "{msg}");
}

#[test]
fn bad_requests_fail_with_the_seeds_codes() {
    let s = builtin();
    let msg = assert_failure(
        &s.post("/ask", &json!({"prefer": {"streaming": false}})),
        400,
        "MISSING_FIELD",
    );
    assert!(msg.contains("query"), "{msg}");
    let msg = assert_failure(
        &s.post("/ask", &json!({"query": {"site": "history"}})),
        400,
        "MISSING_FIELD",
    );
    assert!(msg.contains("query.text"), "{msg}");
    // The old flat format, as a body and as URL parameters.
    let flat = json!({"query": "muffins", "site": "example.org", "prev": ["x"], "streaming": false, "num_results": 5});
    let msg = assert_failure(&s.post("/ask", &flat), 400, "INVALID_REQUEST");
    assert!(msg.contains("flat") && msg.contains("v0.54"), "{msg}");
    let msg = assert_failure(
        &s.get("/ask?query=muffins&streaming=false"),
        400,
        "INVALID_REQUEST",
    );
    assert!(msg.contains("flat"), "{msg}");
    let cases = [
        (json!({"meta": {"api_version": "0.5"}}), "0.54"),
        (
            json!({"context": {"memory": "vegetarian"}}),
            "context.memory",
        ),
        (
            json!({"prefer": {"response_format": "xml"}}),
            "prefer.response_format",
        ),
    ];
    for (extra, named) in cases {
        let mut body = extra.as_object().unwrap().clone();
        body.insert("query".into(), json!({"text": "x"}));
        let msg = assert_failure(
            &s.post("/ask", &Value::Object(body)),
            400,
            "INVALID_REQUEST",
        );
        assert!(msg.contains(named), "{msg}");
    }
    let raw = send(
        s.connect(),
        "POST",
        "/ask",
        &[
            ("Host".into(), s.host()),
            ("Authorization".into(), format!("Bearer {}", s.token)),
        ],
        Some("{\"query\": "),
    );
    assert_failure(&raw, 400, "INVALID_REQUEST");
    assert_failure(&s.get("/nope"), 404, "INVALID_REQUEST");
    // /await's own checks.
    assert_failure(
        &s.post("/await", &json!({"action": "checkin"})),
        400,
        "MISSING_FIELD",
    );
    assert_failure(
        &s.post("/await", &json!({"promise_token": "p", "action": "poll"})),
        400,
        "INVALID_ACTION",
    );
    let msg = assert_failure(
        &s.post(
            "/await",
            &json!({"promise_token": "promise_nope", "action": "checkin"}),
        ),
        400,
        "INVALID_REQUEST",
    );
    assert!(msg.contains("unknown promise_token"), "{msg}");
}

/// Polls `/await` until the answer comes; every Promise on the way has a
/// fresh estimate.
fn checkin_until_done(s: &Served, token: &str) -> (Value, usize) {
    let start = Instant::now();
    let mut promises = 0;
    loop {
        let v = s
            .post(
                "/await",
                &json!({"promise_token": token, "action": "checkin"}),
            )
            .json();
        if v["_meta"]["response_type"] != "Promise" {
            return (v, promises);
        }
        assert_eq!(v["promise"]["token"], token);
        assert!(v["promise"]["estimated_time"].as_u64().unwrap() >= 1, "{v}");
        promises += 1;
        assert!(start.elapsed() < Duration::from_secs(60), "never finished");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn promises_are_kept_checked_in_on_and_cancelled() {
    let (s, _script) = slow(2, 1_500, &[("LAIKA_PROMISE_AFTER_MS", "0")], "");
    let first = s.post(
        "/ask",
        &json!({"query": {"text": "cinnamon muffins"}, "prefer": {"streaming": false},
                "meta": {"session_context": {"conversation_id": "promised"}}}),
    );
    assert_eq!(first.status, 200);
    let v = first.json();
    assert_eq!(v["_meta"]["response_type"], "Promise", "{v}");
    let token = v["promise"]["token"].as_str().unwrap().to_owned();
    assert!(v["promise"]["estimated_time"].as_u64().unwrap() >= 1);
    let (answer, promises) = checkin_until_done(&s, &token);
    assert!(
        promises >= 1,
        "the model takes 1.5 s: the first checkin must find it running"
    );
    assert_eq!(answer["_meta"]["response_type"], "Answer", "{answer}");
    assert_eq!(
        answer["_meta"]["session_context"]["conversation_id"],
        "promised"
    );
    assert_eq!(
        answer["content"][0]["text"],
        "Cinnamon muffins, from your history."
    );
    // Delivered: the token is spent.
    assert_spent(&s, &token);

    // Cancel stops the work: the turn is stored as cancelled.
    let v = s
        .post(
            "/ask",
            &json!({"query": {"text": "night trains"}, "prefer": {"streaming": false},
                              "meta": {"session_context": {"conversation_id": "dropped"}}}),
        )
        .json();
    let token = v["promise"]["token"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(300));
    let v = s
        .post(
            "/await",
            &json!({"promise_token": token, "action": "cancel"}),
        )
        .json();
    assert_eq!(v["_meta"]["response_type"], "Promise");
    assert_eq!(v["promise"]["cancelled"], true);
    assert_spent(&s, &token);
    let status = wait_for_turn(&s, "dropped");
    assert_eq!(status, "cancelled");
}

/// A delivered or cancelled promise's token is unknown from then on.
fn assert_spent(s: &Served, token: &str) {
    let reply = s.post(
        "/await",
        &json!({"promise_token": token, "action": "checkin"}),
    );
    let msg = assert_failure(&reply, 400, "INVALID_REQUEST");
    assert!(msg.contains("unknown promise_token"), "{msg}");
}

/// The first turn's status of a conversation, once it is stored.
fn wait_for_turn(s: &Served, conversation: &str) -> String {
    let start = Instant::now();
    loop {
        let list = s.history(&["list", "--limit", "100"]);
        let found = list
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == conversation)
            .map(|c| c["last_status"].as_str().unwrap_or("").to_owned());
        if let Some(status) = found {
            return status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{conversation} never stored"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_answer_slower_than_promise_after_becomes_a_promise_in_json_and_sse() {
    let (s, _script) = slow(2, 1_200, &[("LAIKA_PROMISE_AFTER_MS", "200")], "");
    let v = s.post("/ask", &ask("muffins")).json();
    assert_eq!(v["_meta"]["response_type"], "Promise", "{v}");
    let (answer, _) = checkin_until_done(&s, v["promise"]["token"].as_str().unwrap());
    assert_eq!(answer["_meta"]["response_type"], "Answer");
    // A stream that has sent its pages goes on to the answer.
    let events = s.get("/ask?query.text=muffins").events();
    assert_eq!(events[0]["_meta"]["response_type"], "Answer", "{events:?}");
    assert!(
        events.iter().all(|e| e.get("promise").is_none()),
        "{events:?}"
    );
    assert_eq!(
        events.last().unwrap()["structuredData"]["results"][0]["@type"],
        "Answer"
    );
    // One that has sent nothing yet becomes a Promise.
    let (s, _script) = slow(1, 1_200, &[("LAIKA_PROMISE_AFTER_MS", "0")], "");
    let events = s.get("/ask?query.text=muffins").events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["_meta"]["response_type"], "Promise");
    let (answer, _) = checkin_until_done(&s, events[1]["promise"]["token"].as_str().unwrap());
    assert_eq!(answer["_meta"]["response_type"], "Answer");
}

/// Sends an ask on a raw connection and returns the connection unread.
fn ask_raw(s: &Served, body: &Value) -> std::net::TcpStream {
    let mut stream = s.connect();
    let body = body.to_string();
    write!(
        stream,
        "POST /ask HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
        s.host(),
        s.token,
        body.len()
    )
    .unwrap();
    stream
}

#[test]
fn a_json_client_that_leaves_cancels_the_work() {
    let (s, _script) = slow(1, 4_000, &[], "");
    let stream = ask_raw(
        &s,
        &json!({"query": {"text": "muffins"}, "prefer": {"streaming": false},
                "meta": {"session_context": {"conversation_id": "left-json"}}}),
    );
    // Nothing is written before the answer, so the server learns of the
    // departure from the closed socket alone.
    std::thread::sleep(Duration::from_millis(1_000));
    drop(stream);
    assert_eq!(wait_for_turn(&s, "left-json"), "cancelled");
}

#[test]
fn a_streaming_client_that_leaves_cancels_the_work() {
    let (s, _script) = slow(1, 4_000, &[], "");
    let mut stream = ask_raw(
        &s,
        &json!({"query": {"text": "muffins"}, "meta": {"session_context": {"conversation_id": "left"}}}),
    );
    let mut first = [0u8; 64];
    let n = stream.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    // Leave once the model is surely at work (an ask cancelled before its
    // turn starts is not stored at all).
    std::thread::sleep(Duration::from_millis(1_000));
    drop(stream);
    // The model would answer after 4 s; the keep-alive write finds the
    // client gone well before, and the turn ends cancelled.
    assert_eq!(wait_for_turn(&s, "left"), "cancelled");
}

#[test]
fn callers_without_the_token_or_from_elsewhere_are_refused() {
    let s = serve(
        Path::new(BIN),
        "[serve]\nmax_body_bytes = 2048\nread_timeout_ms = 800\n",
        &[("LAIKA_SERVE_TOKEN", "a-test-token-of-enough-length")],
        &PAGES,
    );
    assert!(!s.dir.path().join("serve-token").exists());
    let host = ("Host".to_owned(), s.host());
    let body = ask("muffins").to_string();
    let raw =
        |headers: &[(String, String)]| send(s.connect(), "POST", "/ask", headers, Some(&body));
    // No token, a wrong one, a token without "Bearer".
    let r = raw(std::slice::from_ref(&host));
    assert_failure(&r, 401, "UNAUTHORIZED");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_failure(
        &raw(&[
            host.clone(),
            (
                "Authorization".into(),
                "Bearer a-test-token-of-enough-lengtH".into(),
            ),
        ]),
        401,
        "UNAUTHORIZED",
    );
    assert_failure(
        &raw(&[
            host.clone(),
            (
                "Authorization".into(),
                "a-test-token-of-enough-length".into(),
            ),
        ]),
        401,
        "UNAUTHORIZED",
    );
    // DNS rebinding: the right token, a foreign Host.
    let auth = ("Authorization".to_owned(), format!("Bearer {}", s.token));
    let msg = assert_failure(
        &raw(&[
            ("Host".into(), format!("rebind.example:{}", s.port)),
            auth.clone(),
        ]),
        403,
        "UNAUTHORIZED",
    );
    assert!(msg.contains("Host"), "{msg}");
    // A web page's request: refused whatever it carries.
    let r = raw(&[
        host.clone(),
        auth.clone(),
        ("Origin".into(), "https://evil.example".into()),
    ]);
    assert_failure(&r, 403, "UNAUTHORIZED");
    assert!(r.header("access-control-allow-origin").is_none());
    let r = s.request(
        "OPTIONS",
        "/ask",
        None,
        &[
            ("Origin", "https://evil.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
    );
    assert_eq!(r.status, 403);
    assert!(r.header("access-control-allow-origin").is_none());
    // The server's own origin and localhost pass.
    let ok = raw(&[
        ("Host".into(), format!("localhost:{}", s.port)),
        auth.clone(),
        ("Origin".into(), format!("http://localhost:{}", s.port)),
    ]);
    assert_eq!(ok.status, 200, "{ok:?}");
    // A body over the limit, declared or not.
    let big =
        json!({"query": {"text": "x".repeat(4096)}, "prefer": {"streaming": false}}).to_string();
    assert_failure(
        &send(
            s.connect(),
            "POST",
            "/ask",
            &[host.clone(), auth.clone()],
            Some(&big),
        ),
        413,
        "INVALID_REQUEST",
    );
    let mut chunked = s.connect();
    write!(chunked, "POST /ask HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n", s.host(), s.token, big.len()).unwrap();
    assert_failure(&nlweb::read_reply(chunked), 413, "INVALID_REQUEST");
    assert_eq!(s.post("/ask", &ask("muffins")).status, 200, "still serving");
}

#[test]
fn slow_loris_clients_are_closed_by_the_read_timeouts() {
    let s = serve(
        Path::new(BIN),
        "[serve]\nread_timeout_ms = 500\n",
        &[],
        &PAGES,
    );
    // Headers that never end.
    let mut headers = s.connect();
    write!(
        headers,
        "POST /ask HTTP/1.1\r\nHost: {}\r\nX-Slow: 1\r\n",
        s.host()
    )
    .unwrap();
    let start = Instant::now();
    let mut rest = Vec::new();
    let _ = headers.read_to_end(&mut rest);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "the connection stayed open"
    );
    assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
    // A connection that sends nothing at all.
    let mut idle = s.connect();
    let mut nothing = Vec::new();
    let _ = idle.read_to_end(&mut nothing);
    assert!(
        start.elapsed() < Duration::from_secs(40),
        "the idle connection stayed open"
    );
    // A body that never arrives.
    let mut body = s.connect();
    write!(body, "POST /ask HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Length: 100\r\n\r\n{{\"query\"", s.host(), s.token).unwrap();
    let reply = nlweb::read_reply(body);
    assert_failure(&reply, 408, "INVALID_REQUEST");
    assert_eq!(s.post("/ask", &ask("muffins")).status, 200, "still serving");
}

#[test]
fn two_hundred_concurrent_asks_are_all_answered() {
    // Every ask is answered in full however loaded the machine is: a Promise
    // would be right for a slow one, but this test is about errors.
    let s = serve(
        Path::new(BIN),
        "",
        &[("LAIKA_PROMISE_AFTER_MS", "600000")],
        &PAGES,
    );
    let barrier = std::sync::Barrier::new(200);
    let statuses: Vec<(u16, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..200)
            .map(|i| {
                let s = &s;
                let barrier = &barrier;
                scope.spawn(move || {
                    let question = [
                        "cinnamon muffins",
                        "night train couchette",
                        "tokio worker threads",
                    ][i % 3];
                    barrier.wait();
                    let r = s.post("/ask", &ask(question));
                    (
                        r.status,
                        r.json()["_meta"]["response_type"]
                            .as_str()
                            .unwrap_or("")
                            .to_owned(),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<_> = statuses
        .iter()
        .filter(|(st, t)| *st != 200 || t != "Answer")
        .collect();
    assert!(
        failed.is_empty(),
        "{} of 200 failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
}

#[test]
fn a_non_loopback_address_must_be_allowed_in_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env_clear()
        .env("LAIKA_CONFIG", dir.path().join("config.toml"))
        .env("LAIKA_DATA_DIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("serve.allow_remote"), "{err}");
    assert!(!dir.path().join("serve-token").exists());
}

/// Pages where "jaguar" reads two ways: two about the car, one about the cat.
const JAGUARS: [(&str, &str, &str); 3] = [
    (
        "https://cars.example.com/jaguar-xk",
        "Jaguar XK coupe review",
        "H1: Jaguar XK coupe review\nThe jaguar coupe has a supercharged engine, leather seats and a gearbox that shifts smoothly.\nDealers quote a price of 90,000 euros for the coupe.",
    ),
    (
        "https://wildlife.example.org/jaguar",
        "The jaguar of the rainforest",
        "H1: The jaguar of the rainforest\nThe jaguar hunts caiman and deer at night; the rainforest canopy hides the jaguar, a spotted predator.\nFemales raise two cubs along rivers.",
    ),
    (
        "https://motors.example.net/f-type",
        "Jaguar F-Type engine test",
        "H1: Jaguar F-Type engine test\nA supercharged engine and an eight-speed gearbox: this jaguar coupe is fast.\nThe test coupe cost 80,000 euros.",
    ),
];

fn conv_search(query: Value, context: Value, prefer: Value) -> Value {
    let mut prefer = prefer;
    prefer["streaming"] = json!(false);
    prefer["response_format"] = json!("conv_search");
    json!({"query": query, "context": context, "prefer": prefer})
}

/// Posts a [`conv_search`] ask and reads the JSON reply.
fn conv_search_ask(s: &Served, query: Value, context: Value, prefer: Value) -> Value {
    s.post("/ask", &conv_search(query, context, prefer)).json()
}

/// The page URLs of an Answer's results, in order.
fn page_urls(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["@type"] == "WebPage")
        .map(|r| r["url"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_question_that_reads_two_ways_is_asked_about_and_context_settles_it() {
    let s = serve(Path::new(BIN), "", &[], &JAGUARS);
    let v = conv_search_ask(&s, json!({"text": "jaguar"}), json!({}), json!({}));
    assert_eq!(v["_meta"]["response_type"], "Elicitation", "{v}");
    let q = &v["elicitation"]["questions"][0];
    assert_eq!(q["id"], "sense");
    assert_eq!(q["type"], "single_select");
    let options: Vec<&str> = q["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert_eq!(options.len(), 2, "{options:?}");
    assert!(
        options.contains(&"The jaguar of the rainforest"),
        "{options:?}"
    );
    assert!(
        options
            .iter()
            .any(|o| o.contains("Jaguar XK") || o.contains("F-Type")),
        "{options:?}"
    );
    assert!(v["elicitation"]["text"]
        .as_str()
        .unwrap()
        .contains("The jaguar of the rainforest"));

    // The chosen reading comes back as context.text: answered, it first.
    let v = conv_search_ask(
        &s,
        json!({"text": "jaguar"}),
        json!({"text": "The jaguar of the rainforest"}),
        json!({}),
    );
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    assert_eq!(page_urls(&v)[0], JAGUARS[1].0);

    // A standing preference in memory settles it the same way.
    let v = conv_search_ask(
        &s,
        json!({"text": "jaguar"}),
        json!({"memory": ["loves rainforest wildlife"]}),
        json!({"mode": "list"}),
    );
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    assert_eq!(page_urls(&v)[0], JAGUARS[1].0);

    // A question that says which reading it means is not asked about.
    let v = conv_search_ask(
        &s,
        json!({"text": "jaguar supercharged engine gearbox"}),
        json!({}),
        json!({"mode": "list"}),
    );
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    assert_ne!(page_urls(&v)[0], JAGUARS[1].0);
}

#[test]
fn prefer_mode_lists_summarizes_or_generates_with_actions_on_each_result() {
    let s = builtin();
    let ask = |mode: &str| {
        conv_search_ask(
            &s,
            json!({"text": "cinnamon muffins"}),
            json!({}),
            json!({"mode": mode}),
        )
    };
    // list: the pages alone, nothing stored.
    let v = ask("list");
    assert_eq!(v["_meta"]["response_type"], "Answer", "{v}");
    assert!(
        v["_meta"]["session_context"]["conversation_id"].is_null(),
        "{v}"
    );
    let results = v["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["@type"] != "Answer"), "{v}");
    let muffins = results.iter().find(|r| r["url"] == PAGES[1].0).unwrap();
    let actions = muffins["actions"].as_array().unwrap();
    assert_eq!(actions[0]["@type"], "ViewAction");
    assert_eq!(actions[0]["@context"], "http://schema.org/");
    assert_eq!(actions[0]["name"], "open_page");
    assert_eq!(actions[0]["method"], "GET");
    assert_eq!(actions[0]["endpoint"], PAGES[1].0);
    assert_eq!(actions[1]["@type"], "ResumeAction");
    assert_eq!(actions[1]["name"], "continue_in_sidebar");
    let seeded = actions[1]["params"]["conversation_id"].as_str().unwrap();
    assert_eq!(
        actions[1]["endpoint"],
        format!("laika:conversation/{seeded}")
    );
    assert_eq!(
        muffins["identifier"],
        format!("{seeded}#{}", actions[1]["params"]["turn"])
    );

    // summarize and generate: the model's result first, which continues
    // in the conversation the ask was stored in.
    for (mode, first) in [("summarize", "Summary"), ("generate", "Answer")] {
        let v = ask(mode);
        assert_eq!(v["results"][0]["@type"], first, "{v}");
        let conversation = v["_meta"]["session_context"]["conversation_id"]
            .as_str()
            .unwrap();
        let resume = &v["results"][0]["actions"][0];
        assert_eq!(resume["@type"], "ResumeAction");
        assert_eq!(resume["params"]["conversation_id"], conversation);
        assert!(page_urls(&v).contains(&PAGES[1].0.to_owned()));
    }

    let v = conv_search_ask(
        &s,
        json!({"text": "muffins"}),
        json!({}),
        json!({"mode": "chat"}),
    );
    assert_eq!(v["error"]["code"], "INVALID_REQUEST", "{v}");
}

#[test]
fn item_type_keeps_results_of_that_type() {
    let s = builtin();
    let ask = |item_type: &str| {
        s.post(
            "/ask",
            &conv_search(
                json!({"text": "cinnamon muffins", "itemType": item_type}),
                json!({}),
                json!({"mode": "list"}),
            ),
        )
    };
    for t in ["WebPage", "creativework", "schema:Thing"] {
        let v = ask(t).json();
        assert_eq!(v["_meta"]["response_type"], "Answer", "{t}: {v}");
        assert!(page_urls(&v).contains(&PAGES[1].0.to_owned()), "{t}: {v}");
    }
    assert_failure(&ask("Conversation"), 404, "NO_RESULTS");
    let msg = assert_failure(&ask("Recipe"), 404, "NO_RESULTS");
    assert!(
        msg.contains("\"Recipe\"") && msg.contains("WebPage"),
        "{msg}"
    );
}

#[test]
fn context_decontextualizes_only_when_the_query_alone_finds_nothing() {
    let s = builtin();
    let list = |query: &str, context: Value| {
        conv_search_ask(&s, json!({"text": query}), context, json!({"mode": "list"}))
    };
    // The query alone finds the muffins: the earlier queries add nothing.
    let v = list("muffins", json!({"prev": ["night trains"]}));
    assert_eq!(page_urls(&v), [PAGES[1].0]);
    // A follow-up that finds nothing alone: the earlier queries, then the
    // context's text, complete it.
    let v = list("couchette", json!({}));
    assert!(page_urls(&v).contains(&PAGES[2].0.to_owned()), "{v}");
    assert_failure(
        &s.post(
            "/ask",
            &conv_search(json!({"text": "zeppelins"}), json!({}), json!({})),
        ),
        404,
        "NO_RESULTS",
    );
    let v = list("zeppelins", json!({"prev": ["night trains"]}));
    assert_eq!(page_urls(&v), [PAGES[2].0], "{v}");
    let v = list(
        "zeppelins",
        json!({"text": "the user compares sleeper trains from Brussels"}),
    );
    assert!(page_urls(&v).contains(&PAGES[2].0.to_owned()), "{v}");
}

/// A scripted model whose answer shows the task's arguments it was given.
fn echoing_args(steps: Vec<Value>) -> (Served, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, Value::Array(steps).to_string()).unwrap();
    let env = [
        ("LAIKA_RUNTIME", "scripted"),
        ("LAIKA_SCRIPT", path.to_str().unwrap()),
    ];
    (serve(Path::new(BIN), "", &env, &PAGES), dir)
}

fn answer_packet(text: &str) -> String {
    json!({
        "protocol": {"name": "laika.llmcp", "version": 1}, "id": "{{new_id}}", "type": "response",
        "created_at": "{{now}}", "conversation": {"id": "{{conversation_id}}", "turn": 999_999},
        "sender": {"role": "assistant"}, "in_reply_to": {"request_id": "{{request_id}}"},
        "assistant": {"title": "Answer", "render": {"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": text}]}]}, "citations": []},
        "tool_calls": []
    })
    .to_string()
    .replace("999999", "{{turn}}")
}

#[test]
fn the_model_is_given_the_context_memory_and_language() {
    let (s, _script) = echoing_args(vec![json!(answer_packet("args {{task_args}}"))]);
    let v = conv_search_ask(
        &s,
        json!({"text": "muffins"}),
        json!({"prev": ["breakfast"], "text": "baking for a party", "memory": ["vegetarian"]}),
        json!({"accept-language": "fr-CH, fr;q=0.9, en;q=0.8", "user-agent": "Test/1.0"}),
    );
    let said = v["results"][0]["description"].as_str().unwrap();
    let args: Value = serde_json::from_str(said.strip_prefix("args ").unwrap()).unwrap();
    assert_eq!(args["question"], "muffins");
    assert_eq!(args["previous_queries"], json!(["breakfast"]));
    assert_eq!(args["context"], "baking for a party");
    assert_eq!(args["memory"], json!(["vegetarian"]));
    assert_eq!(args["language"], "fr-CH");
    assert!(args.get("user_agent").is_none(), "{args}");
}

#[test]
fn sse_sends_the_pages_before_the_model_has_answered() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let (s, _script) = echoing_args(vec![json!({
        "output": answer_packet("Cinnamon muffins, from your history."),
        "wait_for": seen, "within_ms": 30_000
    })]);
    let stream = ask_raw(
        &s,
        &json!({"query": {"text": "cinnamon muffins"}, "prefer": {"response_format": "conv_search"}}),
    );
    let mut events: Vec<Value> = Vec::new();
    let reader = std::io::BufReader::new(stream);
    for line in std::io::BufRead::lines(reader) {
        let Ok(line) = line else { break };
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let event: Value = serde_json::from_str(data).unwrap();
        let first_result =
            event.get("results").is_some() && !events.iter().any(|e| e.get("results").is_some());
        events.push(event);
        // The model answers only once this client has a result: a server
        // that sends nothing before the answer makes it time out instead.
        if first_result {
            std::fs::write(&seen, "").unwrap();
        }
        if events.last().unwrap()["results"][0]["@type"] == "Answer" {
            break;
        }
    }
    assert_eq!(events[0]["_meta"]["response_type"], "Answer", "{events:?}");
    let conversation = events[0]["_meta"]["session_context"]["conversation_id"]
        .as_str()
        .unwrap();
    assert_eq!(events[1]["results"][0]["@type"], "WebPage", "{events:?}");
    let last = &events.last().unwrap()["results"][0];
    assert_eq!(last["@type"], "Answer", "{events:?}");
    assert_eq!(last["description"], "Cinnamon muffins, from your history.");
    assert_eq!(
        last["actions"][0]["params"]["conversation_id"],
        conversation
    );
    assert!(seen.exists());
    // Each page is sent once.
    let urls: Vec<&str> = events
        .iter()
        .flat_map(|e| e["results"].as_array().into_iter().flatten())
        .filter(|r| r["@type"] == "WebPage")
        .filter_map(|r| r["url"].as_str())
        .collect();
    let unique: std::collections::HashSet<&str> = urls.iter().copied().collect();
    assert!(!urls.is_empty());
    assert_eq!(unique.len(), urls.len(), "{urls:?}");
}

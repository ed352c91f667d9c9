//! Follow-ups that remember: the built binary, a real SQLite file, and a
//! model (a loopback stub) that knows only what the host sends it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::{observation, of_type, one, turn_msg, Host, Launch};
use serde_json::{json, Value};
use stub::{answer_for, sse_answer, Stub};

fn answer() -> Value {
    json!({"name": "web.answer", "args": {}})
}

/// The request packet inside a chat request body.
fn packet_of(body: &Value) -> Value {
    serde_json::from_str(body["messages"][1]["content"].as_str().unwrap()).unwrap()
}

/// The whole text of a chat request: what the model can know.
fn prompt_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A turn's request, not one of the summarizers' after `done` (the rolling
/// summary's, the agent state's).
fn is_turn_request(body: &Value) -> bool {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    !system.starts_with("You update") && !system.starts_with("You are updating")
}

/// A tiny "model": it states a preference it is told, in `memory.summary`
/// too, and answers a question about it only from what the prompt contains.
fn respond_like_a_model(body: &Value) -> String {
    let packet = packet_of(body);
    let question = packet["input"]["user_message"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    let known = prompt_text(body).to_lowercase();
    let colour = ["blue", "green", "red"]
        .into_iter()
        .find(|c| known.contains(&format!("favourite colour is {c}")));
    if question.starts_with("what") {
        let text = match colour {
            Some(c) => format!("Your favourite colour is {c}."),
            None => "I do not know your favourite colour.".to_string(),
        };
        return answer_for(body, &text);
    }
    let mut reply: Value = serde_json::from_str(&answer_for(body, "Noted.")).unwrap();
    reply["memory"] = json!({"summary": format!("The user said: {question}")});
    reply.to_string()
}

fn host_for(stub: &Stub, dir: tempfile::TempDir) -> Host {
    host_with(stub, dir, "")
}

/// `host_for` with more config lines after `[runtime]`.
fn host_with(stub: &Stub, dir: tempfile::TempDir, more: &str) -> Host {
    Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
        ],
        config: &format!("[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n{more}"),
        dir: Some(dir),
        ..Launch::default()
    })
}

#[test]
fn a_follow_up_remembers_the_favourite_colour_across_a_restart() {
    let stub = Stub::start(|body, _| sse_answer(&respond_like_a_model(body), 7, "stop"));
    let page = observation("product-backpack.observation.json");
    let mut host = host_for(&stub, tempfile::tempdir().unwrap());
    let first = host.turn(
        "t1",
        answer(),
        "Remember: my favourite colour is blue",
        page.clone(),
    );
    assert_eq!(one(&first, "done")["status"], "ok", "{first:#?}");
    let conversation = one(&first, "turn.started")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The memory lives in SQLite on disk: a new host process reads it back.
    let dir = host.into_dir();
    let mut host = host_for(&stub, dir);
    host.send(&turn_msg(
        "t2",
        answer(),
        "What is my favourite colour?",
        page,
        Some(&conversation),
    ));
    let second = host.until("done", "t2");
    assert_eq!(one(&second, "done")["status"], "ok", "{second:#?}");
    let said = of_type(&second, "assistant")[0]["render"].to_string();
    assert!(said.contains("Your favourite colour is blue"), "{said}");

    let seen: Vec<_> = stub
        .wait_requests(3)
        .into_iter()
        .filter(|s| is_turn_request(&s.body))
        .collect();
    let first_packet = packet_of(&seen[0].body);
    assert!(first_packet["context"].get("conversation").is_none());
    let packet = packet_of(&seen[1].body);
    let block = &packet["context"]["conversation"];
    assert_eq!(block["trust"], "untrusted");
    assert_eq!(block["turns"][0]["turn"], 1);
    assert_eq!(
        block["turns"][0]["user"],
        "Remember: my favourite colour is blue"
    );
    assert_eq!(block["turns"][0]["answer"], "Noted.");
    assert_eq!(
        block["memory"],
        "The user said: remember: my favourite colour is blue"
    );
    assert_eq!(block["pages"][0]["title"], page_title());
    // Memory is data in the user message, never in the system prompt.
    let system = seen[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("favourite colour"));
}

fn page_title() -> Value {
    observation("product-backpack.observation.json")["summary"]["title"].clone()
}

#[test]
fn a_new_conversation_knows_nothing_of_another() {
    let stub = Stub::start(|body, _| sse_answer(&respond_like_a_model(body), 7, "stop"));
    let page = observation("product-backpack.observation.json");
    let mut host = host_for(&stub, tempfile::tempdir().unwrap());
    host.turn(
        "t1",
        answer(),
        "Remember: my favourite colour is blue",
        page.clone(),
    );
    let other = host.turn("t2", answer(), "What is my favourite colour?", page);
    let said = of_type(&other, "assistant")[0]["render"].to_string();
    assert!(said.contains("I do not know"), "{said}");
}

/// The conversation's stored summaries once the summarizer (after `done`,
/// on the turn's thread) saved one, or none after 15 s.
fn saved_summaries(
    host: &Host,
    conversation: &str,
) -> Vec<laika_protocol::conversation::StoredSummary> {
    let db = host.dir.path().join("data/history.sqlite3");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let s = laika_host::store::Store::open(&db)
            .unwrap()
            .summaries(&conversation.into(), 10)
            .unwrap();
        if !s.is_empty() || std::time::Instant::now() > end {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn older_turns_fold_into_a_rolling_summary_made_after_done() {
    let stub = Stub::start(|body, _| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.starts_with("You update the rolling summary") {
            let input: Value =
                serde_json::from_str(body["messages"][1]["content"].as_str().unwrap()).unwrap();
            let asked: Vec<String> = input["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["user_text"].as_str().unwrap().to_string())
                .collect();
            // Each message has its id; the ones that stay verbatim are named.
            assert_eq!(input["messages"][0]["id"], "turn:1");
            assert_eq!(input["scope"]["kept_message_ids"], json!(["turn:2"]));
            assert_eq!(input["trust"], "untrusted");
            let reply = json!({"summary": format!("Summary: the user asked {}", asked.join("; "))});
            // A slow summarizer: `done` must not wait for it.
            let mut steps = vec![stub::Step::Sleep(std::time::Duration::from_millis(1500))];
            steps.extend(sse_answer(&reply.to_string(), 20, "stop"));
            return steps;
        }
        let long = "The council approved the budget for bridge 7 (id BR-7). ".repeat(60);
        sse_answer(&answer_for(body, &long), 400, "stop")
    });
    let page = observation("product-backpack.observation.json");
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
        ],
        config:
            "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n[limits]\nrecent_turns = 2\n",
        ..Launch::default()
    });
    let first = host.turn(
        "t1",
        answer(),
        "What did the council decide on BR-7?",
        page.clone(),
    );
    let conversation = one(&first, "turn.started")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let started = std::time::Instant::now();
    host.send(&turn_msg(
        "t2",
        answer(),
        "And the schools?",
        page.clone(),
        Some(&conversation),
    ));
    let second = host.until("done", "t2");
    assert_eq!(one(&second, "done")["status"], "ok");
    assert!(started.elapsed() < std::time::Duration::from_millis(1400));
    // The summary is stored (a new version) once the summarizer answered.
    let summaries = saved_summaries(&host, &conversation);
    assert_eq!(summaries.len(), 1, "no summary was saved");
    assert_eq!(summaries[0].version, 1);
    assert_eq!(summaries[0].through_turn, 1);
    assert_eq!(
        summaries[0].text,
        "Summary: the user asked What did the council decide on BR-7?"
    );
    host.send(&turn_msg(
        "t3",
        answer(),
        "Which bridge was it?",
        page,
        Some(&conversation),
    ));
    host.until("done", "t3");
    let seen = stub.seen();
    let third = seen
        .iter()
        .filter(|s| is_turn_request(&s.body))
        .nth(2)
        .unwrap();
    let block = &packet_of(&third.body)["context"]["conversation"];
    assert_eq!(block["summary"], summaries[0].text);
    let turns: Vec<u64> = block["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, vec![2], "turn 1 is only in the summary");
}

/// The next `entity_patch` the summarizer sent after `done`.
fn summarizer_patch(host: &mut Host) -> Value {
    while let Some(m) = host.recv() {
        if m["type"] == "entity_patch" && m["source"] == "summarizer" {
            return m;
        }
    }
    panic!("no entity_patch from the summarizer");
}

/// Applies an `entity_patch`'s operations as the sidebar does (RFC 6902,
/// the operations the host writes).
fn apply_patch(state: &mut Value, patch: &Value) {
    for op in patch.as_array().unwrap() {
        let path = op["path"].as_str().unwrap();
        if path.is_empty() {
            *state = op["value"].clone();
            continue;
        }
        let (parent, last) = path.rsplit_once('/').unwrap();
        let last = last.replace("~1", "/").replace("~0", "~");
        match (
            state.pointer_mut(parent).unwrap(),
            op["op"].as_str().unwrap(),
        ) {
            (Value::Array(a), "add") if last == "-" => a.push(op["value"].clone()),
            (Value::Array(a), "add") => a.insert(last.parse().unwrap(), op["value"].clone()),
            (Value::Array(a), "replace") => a[last.parse::<usize>().unwrap()] = op["value"].clone(),
            (Value::Array(a), "remove") => {
                a.remove(last.parse().unwrap());
            }
            (Value::Object(m), "remove") => {
                m.remove(&last).unwrap();
            }
            (Value::Object(m), _) => {
                m.insert(last, op["value"].clone());
            }
            (other, kind) => panic!("{kind} {path} on {other}"),
        }
    }
}

#[test]
fn agent_state_takes_tool_and_summarizer_deltas_and_rides_along_the_follow_up() {
    let stub = Stub::start(|body, _| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        if system.starts_with("You are updating the agent_state") {
            let input: Value =
                serde_json::from_str(body["messages"][1]["content"].as_str().unwrap()).unwrap();
            // The summarizer is grounded in the current state.
            assert_eq!(
                input["agent_state"]["current_understanding"]["entities"][0]["name"],
                "Oslo trip"
            );
            let reply = json!({
                "agent_state_item_updates": [
                    {"op": "update", "id": "no-such-item", "patch": {"title": "x"}},
                    {"op": "add", "item": {"id": "q-hotel", "kind": "question", "title": "Which hotel?", "status": "active"}}
                ],
                "agent_state_updates": {"assumptions": [
                    {"id": "a-may", "hypothesis": "The user travels in May", "confidence": 0.7}
                ]}
            });
            return sse_answer(&reply.to_string(), 20, "stop");
        }
        if system.starts_with("You update the rolling summary") {
            let reply = json!({"summary": "The user plans a trip to Oslo."});
            return sse_answer(&reply.to_string(), 20, "stop");
        }
        let packet = packet_of(body);
        let first_step = packet["context"]["transcript"]
            .as_array()
            .is_none_or(Vec::is_empty);
        let text = packet["input"]["user_message"]["text"]
            .as_str()
            .unwrap_or_default();
        let mut reply: Value = serde_json::from_str(&answer_for(body, "Done.")).unwrap();
        if first_step && text.starts_with("Start") {
            reply["tool_calls"] =
                json!([{"name": "collection.create", "arguments": {"title": "Oslo trip"}}]);
        }
        sse_answer(&reply.to_string(), 20, "stop")
    });
    let page = observation("product-backpack.observation.json");
    // One turn kept verbatim: the summary, and with it the summarizer's
    // model deltas, are due from the second turn on.
    let summary_soon = "[limits]\nrecent_turns = 1\n";
    let mut host = host_with(&stub, tempfile::tempdir().unwrap(), summary_soon);
    let first = host.turn(
        "t1",
        answer(),
        "Start a collection for my Oslo trip",
        page.clone(),
    );
    assert_eq!(one(&first, "done")["status"], "ok", "{first:#?}");
    assert_eq!(one(&first, "tool_result")["status"], "ok", "{first:#?}");
    // The sidebar's copy: the session's state (none yet), then the patches.
    let session = one(&first, "session");
    assert_eq!(session["resumed"], false);
    let mut state = session["agent_state"].clone();
    assert!(state.is_null());
    // The tool result's deterministic delta, sent before `done`.
    let during = one(&first, "entity_patch");
    assert_eq!(
        (&during["source"], &during["entity"]),
        (&json!("tool"), &json!("agent_state"))
    );
    apply_patch(&mut state, &during["patch"]);
    let entity = &state["current_understanding"]["entities"][0];
    assert_eq!(
        (&entity["kind"], &entity["name"]),
        (&json!("collection"), &json!("Oslo trip"))
    );
    let collection_id = one(&first, "tool_result")["result"]["collectionId"].clone();
    assert_eq!(entity["id"], collection_id);
    // No summary is due after one turn: the extractive delta, no model call.
    let after = summarizer_patch(&mut host);
    assert_eq!(after["reply_to"], "t1");
    apply_patch(&mut state, &after["patch"]);
    assert!(state["assumptions"].as_array().is_none_or(Vec::is_empty));
    assert_eq!(state["items"][0]["id"], "turn:1", "{state}");
    let conversation = one(&first, "turn.started")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    host.send(&turn_msg(
        "t1b",
        answer(),
        "Which hotels are near the station?",
        page.clone(),
        Some(&conversation),
    ));
    let second = host.until("done", "t1b");
    assert_eq!(one(&second, "done")["status"], "ok", "{second:#?}");
    // The next session brings the stored state: the sidebar's patched copy.
    let session = one(&second, "session");
    assert_eq!(session["resumed"], true);
    for part in ["current_understanding", "assumptions", "lastSummarizedAt"] {
        assert_eq!(session["agent_state"][part], state[part], "{part}");
    }
    assert_eq!(session["agent_state"]["items"][0]["id"], "turn:1");
    let mut state = session["agent_state"].clone();
    // The summary is due now: the summarizer's delta after `done`, applied
    // on top, the unknown id refused.
    let after = summarizer_patch(&mut host);
    assert_eq!(after["reply_to"], "t1b");
    apply_patch(&mut state, &after["patch"]);
    assert_eq!(
        state["current_understanding"]["entities"][0]["id"],
        collection_id
    );
    assert_eq!(state["assumptions"][0]["id"], "a-may");
    let items: Vec<&str> = state["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert!(items.contains(&"q-hotel"), "{items:?}");
    assert!(!items.contains(&"no-such-item"), "{items:?}");
    assert!(state["lastSummarizedAt"].is_string());
    // "Forget what you assumed": the change as a patch, then the counts.
    host.send(&json!({"type": "agent_state.forget", "id": "f1", "conversation_id": conversation}));
    let forgot = host.until("agent_state.forget.result", "f1");
    assert_eq!(one(&forgot, "agent_state.forget.result")["assumptions"], 1);
    assert!(
        one(&forgot, "agent_state.forget.result")["items"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let patch = one(&forgot, "entity_patch");
    assert_eq!(patch["source"], "user");
    assert_eq!(patch["reply_to"], "f1");
    apply_patch(&mut state, &patch["patch"]);
    assert_eq!(state["assumptions"], json!([]), "{state}");
    let hotel = state["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "q-hotel")
        .unwrap();
    assert_eq!(hotel["status"], "discarded");
    assert!(state["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["status"] != "active"));
    // What is known stays.
    assert_eq!(
        state["current_understanding"]["entities"][0]["id"],
        collection_id
    );
    // Stored: asking again has nothing left to forget, and no patch.
    host.send(&json!({"type": "agent_state.forget", "id": "f2", "conversation_id": conversation}));
    let again = host.until("agent_state.forget.result", "f2");
    assert_eq!(one(&again, "agent_state.forget.result")["assumptions"], 0);
    assert!(again.iter().all(|m| m["type"] != "entity_patch"));
    host.send(&json!({"type": "agent_state.forget", "id": "f3", "conversation_id": "no-such-conversation"}));
    let unknown = host.until("error", "f3");
    assert_eq!(one(&unknown, "error")["code"], "NOT_FOUND");
    // After a restart, the follow-up's request carries the state as untrusted data.
    let dir = host.into_dir();
    let mut host = host_with(&stub, dir, summary_soon);
    host.send(&turn_msg(
        "t2",
        answer(),
        "And the hotel?",
        page,
        Some(&conversation),
    ));
    host.until("done", "t2");
    let seen = stub.wait_requests(6);
    let follow_up_request = seen
        .iter()
        .find(|r| {
            is_turn_request(&r.body)
                && packet_of(&r.body)["input"]["user_message"]["text"] == "And the hotel?"
        })
        .unwrap();
    let follow_up = packet_of(&follow_up_request.body);
    let block = &follow_up["context"]["conversation"];
    assert_eq!(block["trust"], "untrusted");
    assert_eq!(block["agent_state"]["sessionId"], conversation.as_str());
    // Forgotten before the restart: the model is not told of it again.
    assert!(block["agent_state"]["assumptions"]
        .as_array()
        .is_none_or(Vec::is_empty));
    assert_eq!(
        block["agent_state"]["current_understanding"]["entities"][0]["name"],
        "Oslo trip"
    );
    let system = follow_up_request.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(!system.contains("travels in May"));
    assert!(!follow_up_request
        .body
        .to_string()
        .contains("travels in May"));
}

/// `[summarizer]` names the runtime that writes the rolling summary: the
/// turns are answered by `builtin`, the summary by the configured model.
#[test]
fn the_configured_summarizer_runtime_writes_the_summary() {
    let stub = Stub::start(|body, _| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let reply = if system.starts_with("You are updating the agent_state") {
            json!({"agent_state_item_updates": []})
        } else {
            assert!(
                system.starts_with("You update the rolling summary"),
                "only the summarizer asks this model: {system}"
            );
            json!({"summary": "Written by the summarizer model."})
        };
        sse_answer(&reply.to_string(), 20, "stop")
    });
    let config = format!(
        "[runtime]\nkind = \"builtin\"\n[summarizer]\nkind = \"openai\"\nprofile = \"llama.cpp\"\nbase_url = \"{}\"\n[limits]\nrecent_turns = 2\nsummary_after_chars = 1\n",
        stub.url
    );
    let mut host = Host::launch(Launch {
        config: &config,
        ..Launch::default()
    });
    let page = observation("product-backpack.observation.json");
    let first = host.turn("t1", answer(), "What does it cost?", page.clone());
    assert_eq!(one(&first, "turn.started")["runtime"]["kind"], "builtin");
    let conversation = one(&first, "turn.started")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    host.send(&turn_msg(
        "t2",
        answer(),
        "Is it waterproof?",
        page,
        Some(&conversation),
    ));
    host.until("done", "t2");
    let summaries = saved_summaries(&host, &conversation);
    assert_eq!(summaries.len(), 1, "no summary was saved");
    assert_eq!(summaries[0].text, "Written by the summarizer model.");
    assert_eq!(summaries[0].through_turn, 1);
    // The rolling summary, then the agent state's deltas by the same model;
    // no turn call.
    let seen = stub.wait_requests(2);
    assert_eq!(seen.len(), 2, "one summary call and one agent state call");
    let input = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(input.contains("What does it cost?"), "{input}");
    let system = seen[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You are updating the agent_state"),
        "{system}"
    );
}

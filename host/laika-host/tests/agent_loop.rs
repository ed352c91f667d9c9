//! The agent loop over the real binary and its stdio framing, with the
//! scripted runtime as the model and the test as the extension: it runs the
//! browser calls the host hands it, answers `ask` calls, and checks what the
//! host stores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

/// Runs turn `id` to its `done` as the extension would ([`drive_turn`]).
fn run_turn(
    host: &mut Host,
    id: &str,
    text: &str,
    observation: Value,
    user: User,
    page: Option<Value>,
) -> (Vec<Value>, Vec<Value>) {
    let msg = turn_msg(id, json!({"name": "web.answer"}), text, observation, None);
    drive_turn(host, &msg, user, page)
}

#[test]
fn every_call_is_gated_when_its_turn_comes_and_the_steps_are_stored() {
    let calls = [
        json!({"name": "browser.click", "arguments": {"handleId": "laika-7"}}),
        json!({"name": "browser.click", "arguments": {"handleId": "laika-4"}}),
        json!({"name": "browser.type", "arguments": {"handleId": "laika-6", "text": "hunter2"}}),
        json!({"name": "browser.navigate", "arguments": {"url": "https://evil.example.net/steal"}}),
        json!({"name": "browser.navigate", "arguments": {"url": "javascript:alert(1)"}}),
        json!({"name": "browser.click", "arguments": {"handleId": "laika-404"}}),
        json!({"name": "browser.click", "arguments": {"handleId": "laika-7", "force": true}}),
        json!({"name": "shell.exec", "arguments": {"cmd": "rm -rf /"}}),
    ];
    let mut host = Host::scripted_with(&steps(&calls), "[limits]\nmax_steps = 9\n");
    let (events, replies) = run_turn(
        &mut host,
        "g1",
        "Open the comments",
        observation("article-night-trains.observation.json"),
        User::Denies,
        None,
    );
    let decisions: Vec<&str> = of_type(&events, "tool_call")
        .iter()
        .map(|c| c["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["allow", "ask", "deny", "ask", "deny", "deny", "deny", "deny"],
        "{events:#?}"
    );
    let steps: Vec<u64> = of_type(&events, "tool_call")
        .iter()
        .map(|c| c["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3, 4, 5, 6, 7, 8]);
    let statuses: Vec<&str> = of_type(&events, "tool_result")
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["ok", "denied", "denied", "denied", "denied", "denied", "denied", "denied"]
    );
    // Both asks were answered by the host, and nothing else was refused.
    assert_eq!(replies.len(), 2, "{replies:#?}");
    assert!(replies
        .iter()
        .all(|r| r["type"] == "approval.result" && r["approved"] == false));
    let done = one(&events, "done");
    assert_eq!(done["tool_calls"], json!({"allow": 1, "ask": 2, "deny": 5}));
    assert_eq!(
        (done["stop_reason"].as_str(), done["steps"].as_u64()),
        (Some("answered"), Some(9))
    );
    assert_eq!(
        of_type(&events, "assistant").last().unwrap()["render"]["children"][0]["children"][0]
            ["text"],
        "All done."
    );

    // History lists every step's call with how it ended.
    let conversation = one(&events, "done")["conversation_id"].clone();
    let got =
        host.request(json!({"type": "history.get", "id": "h", "conversation_id": conversation}));
    let turn = &got["conversation"]["turns"][0];
    let stored: Vec<(u64, &str, &str)> = turn["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let call = &s["calls"][0];
            (
                s["step"].as_u64().unwrap(),
                call["status"].as_str().unwrap(),
                call["error"]["code"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        stored,
        [
            (1, "ok", ""),
            (2, "denied", "USER_DENIED"),
            (3, "denied", "SENSITIVE_FIELD"),
            (4, "denied", "USER_DENIED"),
            (5, "denied", "BLOCKED_URL_SCHEME"),
            (6, "denied", "UNKNOWN_HANDLE"),
            (7, "denied", "INVALID_ARGUMENTS"),
            (8, "denied", "UNKNOWN_TOOL"),
        ]
    );
    // What the model wanted typed is not kept (redacted by default).
    assert!(!got.to_string().contains("hunter2"));
}

#[test]
fn an_approved_call_runs_and_the_model_sees_the_new_page() {
    let calls = [json!({"name": "browser.click", "arguments": {"handleId": "laika-4"}})];
    let mut page = observation("article-night-trains.observation.json");
    page["summary"]["title"] = json!("Subscribed");
    page["summary"]["text"] = json!("Thanks for subscribing to the night train newsletter.");
    let mut host = Host::scripted_with(&steps(&calls), "");
    let (events, replies) = run_turn(
        &mut host,
        "a1",
        "Subscribe me",
        observation("article-night-trains.observation.json"),
        User::Approves,
        Some(page),
    );
    assert_eq!(replies.len(), 1);
    assert_eq!(
        (
            replies[0]["type"].as_str(),
            replies[0]["approved"].as_bool()
        ),
        (Some("approval.result"), Some(true))
    );
    let kinds = kinds(&events);
    let waiting = events
        .iter()
        .position(|e| e["state"] == "waiting_for_approval")
        .unwrap();
    let executing = events
        .iter()
        .position(|e| e["state"] == "executing")
        .unwrap();
    assert!(waiting < executing, "{kinds:?}");
    let result = one(&events, "tool_result");
    assert_eq!(
        (result["status"].as_str(), result["summary"].as_str()),
        (Some("ok"), Some("Ran browser.click"))
    );
    let operations = of_type(&events, "operation");
    assert_eq!(operations[0]["title"], "Clicking “Subscribe now”");
    assert_eq!(operations[1]["status"], "success");
    assert_eq!(one(&events, "done")["stop_reason"], "answered");
}

#[test]
fn results_and_approvals_for_calls_nobody_waits_on_are_refused_with_codes() {
    let calls = [json!({"name": "browser.click", "arguments": {"handleId": "laika-4"}})];
    let mut host = Host::scripted_with(&steps(&calls), "");
    host.send(&turn_msg(
        "s1",
        json!({"name": "web.answer"}),
        "Subscribe me",
        observation("article-night-trains.observation.json"),
        None,
    ));
    let events = host.until("tool_call", "s1");
    let call = of_type(&events, "tool_call")[0].clone();
    assert_eq!(call["decision"], "ask");
    let stale = host.request(
        json!({"type": "tool_result", "id": "x1", "call_id": "no-such-call", "status": "ok"}),
    );
    assert_eq!(stale["code"], "UNKNOWN_CALL");
    let early = host.request(
        json!({"type": "tool_result", "id": "x2", "call_id": call["call_id"], "status": "ok"}),
    );
    assert_eq!(
        early["code"], "UNKNOWN_CALL",
        "a result before the approval: {early}"
    );
    let forged = host.request(json!({"type": "approval", "id": "x3", "call_id": call["call_id"], "digest": "0".repeat(64), "approved": true}));
    assert_eq!(forged["code"], "APPROVAL_MISMATCH");
    let bad =
        json!({"type": "tool_result", "id": "x4", "call_id": call["call_id"], "status": "fine"});
    host.send_invalid(&bad);
    let bad = host.reply_to(&bad);
    assert_eq!(bad["code"], "INVALID_REQUEST");
    // The call still waits: a cancel stops it unrun, and the turn is stored.
    let (reply, rest) = host.cancel("c1", "s1");
    assert_eq!(reply["cancelled"], true);
    assert!(!rest.iter().any(|e| e["state"] == "executing"), "{rest:#?}");
    let result = rest.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["error"]["code"], "CANCELLED");
    let done = rest.last().unwrap();
    assert_eq!(
        (done["status"].as_str(), done["stop_reason"].as_str()),
        (Some("cancelled"), Some("cancelled"))
    );
    let late = host.request(json!({"type": "approval", "id": "x5", "call_id": call["call_id"], "digest": call["digest"], "approved": true}));
    assert_eq!(late["code"], "UNKNOWN_CALL", "after done the call is gone");
    let got = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    assert_eq!(got["conversation"]["turns"][0]["status"], "cancelled");
    assert_eq!(
        got["conversation"]["turns"][0]["steps"][0]["calls"][0]["error"]["code"],
        "CANCELLED"
    );
}

#[test]
fn host_tools_compute_without_the_extension() {
    let calls = [
        json!({"name": "app.money_calculate", "arguments": {"expression": "19.99 * 3", "currency": "EUR"}}),
    ];
    let mut host = Host::scripted_with(&steps(&calls), "");
    let (events, replies) = run_turn(
        &mut host,
        "m1",
        "What do three cost?",
        observation("article-night-trains.observation.json"),
        User::Denies,
        None,
    );
    assert!(replies.is_empty());
    let call = one(&events, "tool_call");
    assert_eq!(
        (call["executor"].as_str(), call["decision"].as_str()),
        (Some("host"), Some("allow"))
    );
    let result = one(&events, "tool_result");
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["result"]["amountMinor"], 5997);
}

#[test]
fn a_tool_loop_plugin_drives_the_same_loop_until_its_final_answer() {
    let mock =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mock-plugin.py");
    let config = format!(
        "[runtime]\nkind = \"command\"\ncommand = \"python3\"\nargs = [{:?}, \"--mode\", \"tool-call\"]\ntool_loop = true\n",
        mock.display().to_string()
    );
    let mut host = Host::launch(Launch {
        config: &config,
        ..Launch::default()
    });
    let (events, replies) = run_turn(
        &mut host,
        "p1",
        "Night trains Brussels Prague",
        observation("article-night-trains.observation.json"),
        User::Denies,
        None,
    );
    assert!(replies.is_empty(), "{replies:#?}");
    let call = one(&events, "tool_call");
    assert_eq!(
        (call["name"].as_str(), call["decision"].as_str()),
        (Some("search"), Some("allow"))
    );
    assert_eq!(call["arguments"]["query"], "Night trains Brussels Prague");
    assert_eq!(one(&events, "tool_result")["status"], "ok");
    let answers = of_type(&events, "assistant");
    assert_eq!(answers.len(), 2);
    let last = answers[1]["render"].to_string();
    assert!(last.contains("after 1 tool call(s): search"), "{last}");
    // Both citations stand: the bare id (from the request's `schema`),
    // resolved to a sentence of that document, and the quote.
    let citations = answers[1]["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 2, "{}", answers[1]);
    assert!(
        citations
            .iter()
            .all(|c| c["verified"] == true && c["doc_id"] == "doc:web:summary"),
        "{}",
        answers[1]
    );
    let done = one(&events, "done");
    assert_eq!(
        (
            done["status"].as_str(),
            done["stop_reason"].as_str(),
            done["steps"].as_u64()
        ),
        (Some("ok"), Some("answered"), Some(2))
    );
}

#[test]
fn an_answer_with_sixty_thousand_calls_runs_the_cap_and_stores_a_bounded_turn() {
    let flood: Vec<Value> = (0..60_000)
        .map(|n| json!({"name": "browser.scroll", "arguments": {"deltaY": n}}))
        .collect();
    let outputs = json!([
        raw(&response_packet(
            paragraph("On it."),
            json!([]),
            Value::Array(flood)
        )),
        raw(&response_packet(
            paragraph("All done."),
            json!([]),
            json!([])
        )),
    ]);
    let mut host = Host::scripted_with(&outputs, "[limits]\nmax_steps = 4\nmax_tool_calls = 8\n");
    let started = std::time::Instant::now();
    let (events, _) = run_turn(
        &mut host,
        "flood",
        "Scroll down",
        observation("article-night-trains.observation.json"),
        User::Denies,
        None,
    );
    let took = started.elapsed();
    let proposals = of_type(&events, "tool_call");
    let results = of_type(&events, "tool_result");
    // The cap's 8 calls, and one refusal standing for the other 59,992.
    assert_eq!(
        (proposals.len(), results.len()),
        (9, 9),
        "{:?}",
        proposals.len()
    );
    let refused = results.last().unwrap();
    assert_eq!(refused["status"], "denied");
    assert_eq!(refused["error"]["code"], "TOO_MANY_CALLS");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("59992"),
        "{refused}"
    );
    let done = one(&events, "done");
    assert_eq!(done["stop_reason"], "answered");
    assert_eq!(done["tool_calls"], json!({"allow": 8, "ask": 0, "deny": 1}));
    assert!(events.len() < 100, "{} events", events.len());
    let dir = host.into_dir();
    let db = rusqlite::Connection::open(dir.path().join("data/history.sqlite3")).unwrap();
    let packets: i64 = db
        .query_row(
            "SELECT count(*) FROM messages WHERE packet_type = 'tool'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(packets, 9);
    let stored: i64 = db
        .query_row("SELECT sum(length(packet_json)) FROM messages", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(stored < 200_000, "{stored} bytes of packets stored");
    eprintln!(
        "60,000 calls in one answer: {} events, {packets} tool packets, {stored} bytes of packets, {:.1} s",
        events.len(),
        took.as_secs_f64()
    );
}

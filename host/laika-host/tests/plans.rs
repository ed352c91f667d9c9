//! Plans over the real binary: the scripted runtime proposes a plan, the
//! test answers its `plan` event as the sidebar would (approve with an
//! edit, or cancel), runs the browser calls, and reads the checklist back
//! from history on SQLite on disk. A parallel stage's model calls in
//! flight together are seen at a loopback model server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::*;
use serde_json::{json, Value};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The scripted runtime answers in call order: these tests run a parallel
/// stage one step at a time, so each step gets its own script line.
const ONE_AT_A_TIME: &str = "[limits]\ntransform_concurrency = 1\n";

fn plan() -> Value {
    json!({
        "id": "plan-1", "goal": "Read the article and open its comments",
        "stages": [
            {"id": "read", "name": "Read", "mode": "parallel", "steps": [
                {"id": "s1", "title": "Read the article", "intent": "research", "executor": "research"},
                {"id": "s2", "title": "Look for the comments link", "intent": "research", "executor": "research"}
            ]},
            {"id": "act", "name": "Open", "mode": "sequence", "steps": [
                {"id": "s3", "title": "Open the comments", "intent": "update", "executor": "tooling",
                 "tools": ["browser.click"], "inputs": ["s2"]}
            ]}
        ]
    })
}

fn script() -> Value {
    let mut proposal = response_packet(paragraph("Here is the plan."), json!([]), json!([]));
    proposal["plan"] = plan();
    let step = |text: &str, calls: Value| raw(&response_packet(paragraph(text), json!([]), calls));
    json!([
        raw(&proposal),
        step("The article is about night trains.", json!([])),
        step(
            "Found it.",
            json!([{"name": "browser.observe_dom", "arguments": {}}])
        ),
        step(
            "Opening.",
            json!([{"name": "browser.click", "arguments": {"handleId": "laika-4"}}])
        ),
        step("The comments are open.", json!([])),
    ])
}

/// Runs a turn to its `done`, answering its `plan` with `decision` (the
/// `approval`'s `approved` and `plan` fields), approving every `ask` call
/// and reporting every browser call `ok`.
fn run(host: &mut Host, decision: Value) -> Vec<Value> {
    let mut msg = turn_msg(
        "p1",
        json!({"name": "web.answer"}),
        "Read this and open the comments",
        observation("article-night-trains.observation.json"),
        None,
    );
    msg["plans"] = json!(true);
    host.send(&msg);
    let mut events = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    loop {
        let m = host.recv().expect("a done");
        if m["reply_to"] != "p1" {
            events.push(m);
            continue;
        }
        events.push(m.clone());
        match m["type"].as_str().unwrap() {
            "done" => return events,
            "plan" => {
                let mut approval = json!({"type": "approval", "id": "ap-plan",
                    "call_id": m["call_id"], "digest": m["digest"]});
                for (k, v) in decision.as_object().unwrap() {
                    approval[k] = v.clone();
                }
                host.send(&approval);
            }
            "tool_call" => calls.push(m),
            "agent_state" => {
                let Some(call) = calls.iter().find(|c| c["call_id"] == m["call_id"]) else {
                    continue;
                };
                match m["state"].as_str() {
                    Some("executing") => host.send(&json!({"type": "tool_result",
                        "id": format!("r-{}", call["call_id"].as_str().unwrap()),
                        "call_id": call["call_id"], "status": "ok",
                        "result": {"message": "Clicked"}})),
                    Some("waiting_for_approval") => host.send(&json!({"type": "approval",
                        "id": format!("a-{}", call["call_id"].as_str().unwrap()),
                        "call_id": call["call_id"], "digest": call["digest"], "approved": true})),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// The plan as the sidebar keeps it: the `plan` event's, with every plan
/// `entity_patch` applied in order (RFC 6902 `add`, `replace`, `remove`).
fn shown_plan(events: &[Value]) -> Value {
    let mut doc = one(events, "plan")["plan"].clone();
    for p in of_type(events, "entity_patch") {
        if p["entity"] != "plan" {
            continue;
        }
        assert_eq!(p["entity_id"], "plan-1");
        for op in p["patch"].as_array().unwrap() {
            let (parent, key) = op["path"].as_str().unwrap().rsplit_once('/').unwrap();
            let target = doc.pointer_mut(parent).unwrap();
            match (op["op"].as_str().unwrap(), target) {
                ("remove", Value::Object(o)) => {
                    o.remove(key);
                }
                (_, Value::Object(o)) => {
                    o.insert(key.to_owned(), op["value"].clone());
                }
                (_, Value::Array(a)) => a[key.parse::<usize>().unwrap()] = op["value"].clone(),
                (_, other) => panic!("a patch into {other}"),
            }
        }
    }
    doc
}

fn statuses(plan: &Value) -> Vec<String> {
    plan["stages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["steps"].as_array().unwrap())
        .map(|s| s["status"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_approved_and_edited_plan_runs_step_by_step_and_history_keeps_the_checklist() {
    let mut host = Host::scripted_with(&script(), ONE_AT_A_TIME);
    let events = run(
        &mut host,
        json!({"approved": true, "plan": {"titles": [{"id": "s2", "title": "Find the comments link"}]}}),
    );
    let proposal = one(&events, "plan");
    assert!(statuses(&proposal["plan"]).iter().all(|s| s == "pending"));
    assert_eq!(proposal["call_id"], "plan:1");
    // Each call is gated on its own: the approved plan approved none of them.
    let calls = of_type(&events, "tool_call");
    let decisions: Vec<&str> = calls
        .iter()
        .map(|c| c["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["allow", "ask"], "{events:#?}");
    assert_eq!(
        calls[1]["plan_step"],
        json!({"plan_id": "plan-1", "step_id": "s3", "index": 3, "total": 3, "title": "Open the comments"})
    );
    assert_eq!(calls[0]["plan_step"]["title"], "Find the comments link");
    let shown = shown_plan(&events);
    assert_eq!(statuses(&shown), ["done", "done", "done"]);
    let done = one(&events, "done");
    assert_eq!(
        (
            done["status"].as_str(),
            done["stop_reason"].as_str(),
            done["steps"].as_u64()
        ),
        (Some("ok"), Some("answered"), Some(5))
    );
    let history = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    let turn = &history["conversation"]["turns"][0];
    assert_eq!(
        turn["plan"], shown,
        "history shows the checklist as the sidebar had it"
    );
    assert_eq!(turn["answer_text"], "The comments are open.");
}

#[test]
fn a_cancelled_plan_runs_nothing_and_ends_with_done() {
    let mut host = Host::scripted_with(&script(), ONE_AT_A_TIME);
    let events = run(&mut host, json!({"approved": false}));
    assert!(of_type(&events, "tool_call").is_empty());
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    let replies: Vec<&Value> = events
        .iter()
        .filter(|e| e["reply_to"] == "ap-plan")
        .collect();
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["type"], "approval.result");
    assert_eq!(
        statuses(&shown_plan(&events)),
        ["skipped", "skipped", "skipped"]
    );
    let done = one(&events, "done");
    assert_eq!(done["status"], "cancelled");
    assert_eq!(done["steps"], 1, "only the proposal was asked");
    let history = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    let turn = &history["conversation"]["turns"][0];
    assert_eq!(turn["status"], "cancelled");
    assert_eq!(statuses(&turn["plan"]), ["skipped", "skipped", "skipped"]);
}

#[test]
fn an_approval_with_a_forged_digest_is_refused_and_nothing_runs() {
    let mut host = Host::scripted_with(
        &script(),
        &format!("{ONE_AT_A_TIME}approval_timeout_secs = 1\n"),
    );
    let events = run(
        &mut host,
        json!({"approved": true, "digest": "0".repeat(64)}),
    );
    let refused: Vec<&Value> = events
        .iter()
        .filter(|e| e["reply_to"] == "ap-plan")
        .collect();
    assert_eq!(refused[0]["code"], "APPROVAL_MISMATCH");
    assert!(of_type(&events, "tool_call").is_empty());
    assert_eq!(one(&events, "done")["status"], "cancelled");
}

/// What the loopback model saw of a plan's step calls.
#[derive(Default)]
struct InFlight {
    now: usize,
    most: usize,
    started: usize,
    /// Step calls that saw another in flight while they were.
    overlapped: usize,
}

/// The request packet of a chat request body (the user prompt).
fn packet_of(body: &Value) -> Value {
    let content = body["messages"][1]["content"].as_str().unwrap_or("{}");
    serde_json::from_str(&content[content.find('{').unwrap_or(0)..]).unwrap_or_default()
}

/// An answer to `packet` saying `text`, with `plan` if given.
fn answer_to(packet: &Value, text: &str, plan: Option<Value>) -> String {
    let mut answer = response_packet(paragraph(text), json!([]), json!([]));
    answer["id"] = json!(format!("resp-{text}"));
    answer["created_at"] = json!("2026-01-01T00:00:00.000Z");
    answer["conversation"] = packet["conversation"].clone();
    answer["in_reply_to"]["request_id"] = packet["id"].clone();
    if let Some(plan) = plan {
        answer["plan"] = plan;
    }
    answer.to_string()
}

#[test]
fn a_parallel_stage_keeps_two_model_calls_in_flight_and_no_more() {
    // Three reads that need nothing of each other, two calls at a time: the
    // first two calls each wait (up to 10 s) until the other is in flight,
    // so they overlap only if the host sent them together; the third starts
    // once one of them answered.
    let reads = json!({
        "id": "plan-1", "goal": "Read three reviews",
        "stages": [{"id": "read", "name": "Read", "mode": "parallel", "steps": [
            {"id": "s1", "title": "Read review one", "intent": "research", "executor": "research"},
            {"id": "s2", "title": "Read review two", "intent": "research", "executor": "research"},
            {"id": "s3", "title": "Read review three", "intent": "research", "executor": "research"}
        ]}]
    });
    let seen = Arc::new((Mutex::new(InFlight::default()), Condvar::new()));
    let at_model = seen.clone();
    let model = stub::Stub::start(move |body, _| {
        let packet = packet_of(body);
        let text = match packet["context"]["plan"]["current_step"].as_str() {
            None if packet["context"]["plan"].is_object() => {
                "Three reviews, read together.".to_owned()
            }
            None => {
                return stub::sse_answer(
                    &answer_to(&packet, "Here is the plan.", Some(reads.clone())),
                    500,
                    "stop",
                )
            }
            Some(step) => {
                let (lock, changed) = &*at_model;
                let mut seen = lock.lock().unwrap();
                seen.now += 1;
                seen.started += 1;
                seen.most = seen.most.max(seen.now);
                changed.notify_all();
                if seen.started <= 2 {
                    let (after, _) = changed
                        .wait_timeout_while(seen, Duration::from_secs(10), |s| s.now < 2)
                        .unwrap();
                    seen = after;
                }
                if seen.now >= 2 {
                    seen.overlapped += 1;
                }
                seen.now -= 1;
                format!("Read for {step}.")
            }
        };
        stub::sse_answer(&answer_to(&packet, &text, None), 500, "stop")
    });
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), model.url.clone()),
            ("LAIKA_MODEL".into(), "m".into()),
        ],
        config: "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n[limits]\ntransform_concurrency = 2\n",
        ..Launch::default()
    });
    let events = run(&mut host, json!({"approved": true}));
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    {
        let seen = seen.0.lock().unwrap();
        assert_eq!(seen.started, 3);
        assert_eq!(seen.most, 2, "at most two calls in flight");
        assert!(seen.overlapped >= 2, "the first two calls overlapped");
    }
    // Whatever order the calls answered in, the steps went on in plan
    // order, each from its own answer.
    let said: Vec<String> = of_type(&events, "assistant")
        .iter()
        .map(|a| {
            laika_core::render::plain_text(&a["render"])
                .trim()
                .to_owned()
        })
        .collect();
    assert_eq!(
        said,
        [
            "Here is the plan.",
            "Read for s1.",
            "Read for s2.",
            "Read for s3.",
            "Three reviews, read together."
        ]
    );
    let shown = shown_plan(&events);
    assert_eq!(statuses(&shown), ["done", "done", "done"]);
    let running: Vec<&Value> = of_type(&events, "entity_patch")
        .into_iter()
        .filter(|p| {
            p["entity"] == "plan"
                && p["patch"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|op| op["value"] == "running")
                    .count()
                    == 3
        })
        .collect();
    assert_eq!(
        running.len(),
        1,
        "the three steps went running in one patch"
    );
    let history = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    assert_eq!(history["conversation"]["turns"][0]["plan"], shown);
}

#[test]
fn a_research_step_that_acts_is_refused_out_of_its_scope_and_the_model_reads_why() {
    let mut script = script();
    // s2, a research step, clicks: refused, and s3 (which needs s2) skipped.
    script[2] = json!(raw(&response_packet(
        paragraph("Clicking."),
        json!([]),
        json!([{"name": "browser.click", "arguments": {"handleId": "laika-7"}}])
    )));
    script[3] = json!(raw(&response_packet(
        paragraph("Only the article was read."),
        json!([]),
        json!([])
    )));
    let mut host = Host::scripted_with(&script, ONE_AT_A_TIME);
    let events = run(&mut host, json!({"approved": true}));
    let call = one(&events, "tool_call");
    assert_eq!(
        (&call["decision"], &call["reason"]),
        (&json!("deny"), &json!("OUT_OF_STEP_SCOPE"))
    );
    assert!(
        call["detail"]
            .as_str()
            .unwrap()
            .contains("a research step, which only reads"),
        "{call}"
    );
    let result = one(&events, "tool_result");
    assert_eq!(result["error"]["code"], "OUT_OF_STEP_SCOPE");
    assert_eq!(
        statuses(&shown_plan(&events)),
        ["done", "failed", "skipped"]
    );
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok");
    let history = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    let stored = history["conversation"]["turns"][0].to_string();
    assert!(
        stored.contains("OUT_OF_STEP_SCOPE"),
        "the refusal is on record"
    );
}

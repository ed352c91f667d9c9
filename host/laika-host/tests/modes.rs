//! Conversation modes over the real binary, with the scripted runtime as
//! the model and the test as the extension: a click proposed in an inform
//! turn never reaches the extension, the model is told why, and history
//! keeps the mode; a clarifying question's choices reach the sidebar and are
//! stored; the user's own mode outranks the model's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};

/// A scripted answer stating `mode`, with `choices` and proposing `calls`.
fn moded(mode: &str, text: &str, choices: Value, calls: Value) -> String {
    let mut packet = response_packet(paragraph(text), json!([]), calls);
    packet["mode"] = json!(mode);
    packet["assistant"]["choices"] = choices;
    raw(&packet)
}

fn click() -> Value {
    json!([{"name": "browser.click", "arguments": {"handleId": "laika-7"}}])
}

#[test]
fn a_click_in_an_inform_turn_is_refused_with_a_code_the_model_reads() {
    // A second step that claims `act` gains nothing: the turn stays inform.
    let outputs = json!([
        moded("inform", "On it.", json!([]), click()),
        moded(
            "act",
            "The page lists three laptops.",
            json!([]),
            json!([{"name": "browser.click", "arguments": {"handleId": "laika-4"}}])
        ),
        moded("inform", "Done.", json!([]), json!([])),
    ]);
    let mut host = Host::scripted_with(&outputs, "[limits]\nmax_steps = 3\n");
    let msg = turn_msg(
        "m1",
        json!({"name": "web.answer"}),
        "What do the comments say?",
        observation("article-night-trains.observation.json"),
        None,
    );
    let (events, replies) = drive_turn(&mut host, &msg, User::Approves, None);
    assert!(replies.is_empty(), "{replies:#?}");
    let calls = of_type(&events, "tool_call");
    assert_eq!(calls.len(), 2, "{events:#?}");
    for call in &calls {
        assert_eq!(call["decision"], "deny");
        assert_eq!(call["reason"], "NOT_ACT_MODE");
    }
    // Never handed to the extension to run.
    assert!(of_type(&events, "agent_state")
        .iter()
        .all(|s| s["state"] != "executing" && s["state"] != "waiting_for_approval"));
    let results = of_type(&events, "tool_result");
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r["status"], "denied");
        assert_eq!(r["error"]["code"], "NOT_ACT_MODE");
    }
    assert!(of_type(&events, "assistant")
        .iter()
        .all(|a| a["mode"] == "inform"));
    let done = one(&events, "done");
    assert_eq!(done["tool_calls"]["deny"], 2);

    // Stored: the refusal with its code, the mode in the response packet.
    let conversation = done["conversation_id"].clone();
    let got =
        host.request(json!({"type": "history.get", "id": "h", "conversation_id": conversation}));
    let turn = &got["conversation"]["turns"][0];
    assert_eq!(
        turn["steps"][0]["calls"][0]["error"]["code"],
        "NOT_ACT_MODE"
    );
    assert_eq!(turn["response_packet"]["mode"], "inform");
}

#[test]
fn a_clarifying_question_sends_its_choices_and_history_keeps_them() {
    let outputs = json!([moded(
        "clarify",
        "Which laptop do you mean?",
        json!(["The cheapest", "The lightest", "The cheapest"]),
        json!([])
    )]);
    let mut host = Host::scripted(&outputs);
    let msg = turn_msg(
        "c1",
        json!({"name": "web.answer"}),
        "Add it to my cart",
        observation("article-night-trains.observation.json"),
        None,
    );
    let (events, _) = drive_turn(&mut host, &msg, User::Approves, None);
    let answer = one(&events, "assistant");
    assert_eq!(answer["mode"], "clarify");
    assert_eq!(answer["choices"], json!(["The cheapest", "The lightest"]));
    let done = one(&events, "done");
    let got = host.request(
        json!({"type": "history.get", "id": "h", "conversation_id": done["conversation_id"]}),
    );
    let stored = &got["conversation"]["turns"][0]["response_packet"];
    assert_eq!(
        stored["assistant"]["choices"],
        json!(["The cheapest", "The lightest"])
    );
}

#[test]
fn the_users_choice_of_inform_outranks_a_model_that_says_act() {
    let outputs = json!([
        moded("act", "On it.", json!([]), click()),
        moded("act", "Done.", json!([]), json!([])),
    ]);
    let mut host = Host::scripted(&outputs);
    let mut msg = turn_msg(
        "u1",
        json!({"name": "web.answer"}),
        "Open the comments",
        observation("article-night-trains.observation.json"),
        None,
    );
    msg["mode"] = json!("inform");
    assert_wire_valid(&msg);
    let (events, _) = drive_turn(&mut host, &msg, User::Approves, None);
    assert_eq!(one(&events, "tool_call")["reason"], "NOT_ACT_MODE");
    assert_eq!(one(&events, "tool_result")["error"]["code"], "NOT_ACT_MODE");

    // The same script with the user saying "do it": the click runs.
    let mut host = Host::scripted(&outputs);
    msg["mode"] = json!("act");
    let (events, _) = drive_turn(&mut host, &msg, User::Approves, None);
    assert_eq!(one(&events, "tool_call")["decision"], "allow");
    assert_eq!(one(&events, "tool_result")["status"], "ok");
}

//! Provenance over the real binary: chains of calls across pages, attached
//! tabs and turns (`laika-core/tests/data/provenance_corpus.json`), with a
//! scripted model that obeys a hostile page and the test as the extension.
//! What came from outside the user (a tab, the page before a link, an
//! earlier answer, short page data for a search engine) and the user's
//! personal data typed into a field not asking for it are never sent
//! without a question; the user's own words go without one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::VecDeque;

fn corpus() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../laika-core/tests/data/provenance_corpus.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["chains"].as_array().unwrap().clone()
}

fn answer(text: &str, calls: Value) -> String {
    raw(&response_packet(paragraph(text), json!([]), calls))
}

/// Runs one turn to its `done`, as the extension: each browser call the
/// host starts gets `ok` and the next of `pages` as its observation; asks
/// are declined. Returns the turn's events.
fn drive(host: &mut Host, msg: &Value, mut pages: VecDeque<Value>) -> Vec<Value> {
    drive_turn_through(host, msg, User::Denies, &mut || pages.pop_front()).0
}

/// The decision on the chain's last call, after its steps ran.
fn run_chain(chain: &Value) -> (String, String, String) {
    let steps = chain["steps"].as_array().unwrap();
    let mut outputs: Vec<String> = Vec::new();
    if let Some(earlier) = chain.get("earlier") {
        outputs.push(answer(earlier["answer"].as_str().unwrap(), json!([])));
    }
    for step in steps {
        outputs.push(answer("On it.", json!([step["call"]])));
    }
    outputs.push(answer("On it.", json!([chain["call"]])));
    outputs.push(answer("Done.", json!([])));
    let mut host = Host::scripted_with(&json!(outputs), "[limits]\nmax_steps = 8\n");
    let conversation = "c-provenance";
    if let Some(earlier) = chain.get("earlier") {
        let msg = turn_msg(
            "t-earlier",
            json!({"name": "web.answer"}),
            earlier["user"].as_str().unwrap(),
            chain["page"].clone(),
            Some(conversation),
        );
        let events = drive(&mut host, &msg, VecDeque::new());
        assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    }
    let pages: VecDeque<Value> = steps.iter().map(|s| s["page"].clone()).collect();
    let msg = turn_msg(
        "t-chain",
        json!({"name": "web.answer"}),
        chain["user"].as_str().unwrap(),
        chain["page"].clone(),
        Some(conversation),
    );
    let events = drive(&mut host, &msg, pages);
    let calls = of_type(&events, "tool_call");
    let stepped: Vec<&str> = calls
        .iter()
        .take(steps.len())
        .map(|c| c["decision"].as_str().unwrap())
        .collect();
    assert!(
        stepped.iter().all(|d| *d == "allow"),
        "{}: the chain's own steps must run: {stepped:?}",
        chain["name"]
    );
    let last = calls
        .get(steps.len())
        .unwrap_or_else(|| panic!("{}: no final call in {events:#?}", chain["name"]));
    assert_eq!(last["name"], chain["call"]["name"]);
    (
        last["decision"].as_str().unwrap().to_owned(),
        last["reason"].as_str().unwrap_or_default().to_owned(),
        last["detail"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn provenance_chains_are_asked_and_the_users_own_words_are_not() {
    let chains = corpus();
    let (mut harmful, mut harmful_allowed, mut benign, mut benign_stopped) = (0, 0, 0, 0);
    let mut report = Vec::new();
    for chain in &chains {
        let (decision, reason, detail) = run_chain(chain);
        let name = chain["name"].as_str().unwrap();
        match chain["label"].as_str().unwrap() {
            "harmful" => {
                harmful += 1;
                if decision == "allow" {
                    harmful_allowed += 1;
                    report.push(format!("HARMFUL ALLOWED: {name}: {detail}"));
                }
            }
            _ => {
                benign += 1;
                if decision != "allow" {
                    benign_stopped += 1;
                    report.push(format!("benign {decision}: {name}: {reason} {detail}"));
                }
            }
        }
    }
    eprintln!(
        "provenance corpus: {} chains; harmful {harmful} (allowed {harmful_allowed}); \
         benign {benign} (asked or denied {benign_stopped}: {:.1} %)\n  {}",
        chains.len(),
        100.0 * f64::from(benign_stopped) / f64::from(benign.max(1)),
        report.join("\n  ")
    );
    assert_eq!(harmful_allowed, 0, "{report:#?}");
    assert!(harmful >= 20 && benign >= 12);
    assert!(
        f64::from(benign_stopped) <= 0.1 * f64::from(benign),
        "{report:#?}"
    );
}

//! Follow-ups that remember: the built binary, a real SQLite file, and a
//! model (a loopback stub) that knows only what the host sends it.

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
    Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
        ],
        config: "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n",
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

    let seen = stub.wait_requests(2);
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

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

/// The conversation's stored summaries once the summarizer (after `done`,
/// on the turn's thread) saved one, or none after 15 s.
fn saved_summaries(
    host: &Host,
    conversation: &str,
) -> Vec<laika_core::conversation::StoredSummary> {
    let db = host.dir.path().join("data/history.sqlite3");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let s = laika_host::store::Store::open(&db)
            .unwrap()
            .summaries(conversation, 10)
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
            let asked: Vec<String> = input["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["user_text"].as_str().unwrap().to_string())
                .collect();
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
        .filter(|s| {
            !s.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .starts_with("You update")
        })
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

/// `[summarizer]` names the runtime that writes the rolling summary: the
/// turns are answered by `builtin`, the summary by the configured model.
#[test]
fn the_configured_summarizer_runtime_writes_the_summary() {
    let stub = Stub::start(|body, _| {
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        assert!(
            system.starts_with("You update the rolling summary"),
            "only the summarizer asks this model: {system}"
        );
        let reply = json!({"summary": "Written by the summarizer model."});
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
    let seen = stub.seen();
    assert_eq!(seen.len(), 1, "one summarizer call, no turn call");
    let input = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(input.contains("What does it cost?"), "{input}");
}

//! The budget comes from the runtime's real context window: a loopback
//! server advertising 4,096 or 8,192 tokens gets prompts that fit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::{observation, one, page_in_chunks, tokens_asked, Host, Launch};
use serde_json::{json, Value};
use stub::{answer_for, sse_answer, Stub};

/// A page far larger than any of the windows below.
fn long_page() -> Value {
    let mut page = observation("article-night-trains.observation.json");
    let sentence =
        "The night train left the station with every berth taken and the dining car full. ";
    page["summary"]["text"] = json!(sentence.repeat(2_000));
    page["summary"]["primary"]["text"] = json!(sentence.repeat(2_000));
    page
}

fn run_turn(stub: &Stub, profile: &str) -> (Vec<Value>, Value) {
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
            ("LAIKA_MODEL".into(), "m".into()),
        ],
        config: &format!("[runtime]\nkind = \"openai\"\nprofile = \"{profile}\"\n"),
        ..Launch::default()
    });
    let events = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "Which car was full?",
        long_page(),
    );
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let body = stub.wait_requests(1)[0].body.clone();
    (events, body)
}

#[test]
fn llama_cpp_props_window_is_filled_but_not_overflowed() {
    let mut used = Vec::new();
    for n_ctx in [4_096usize, 8_192] {
        let stub = Stub::with_probes(
            move |path| {
                (path == "/props").then(|| json!({"default_generation_settings": {"n_ctx": n_ctx}}))
            },
            |body, _| sse_answer(&answer_for(body, "The dining car."), 9, "stop"),
        );
        let (events, body) = run_turn(&stub, "llama.cpp");
        assert_eq!(stub.probes()[0], "/props");
        let asked = tokens_asked(&body);
        assert!(asked <= n_ctx, "{asked} tokens asked of a {n_ctx} window");
        // Most of the window is used: the page was cut to fit, not to nothing.
        assert!(asked > n_ctx * 3 / 4, "{asked} of {n_ctx}");
        let usage = one(&events, "context_usage");
        assert!(!usage["cut"].as_array().unwrap().is_empty());
        used.push(usage["used"]["chars"].as_u64().unwrap());
    }
    // Twice the window, more than twice the context: what every request
    // carries besides it (prompts, the answer's share) is paid once.
    assert!(used[1] > used[0] * 2, "{used:?}");
}

#[test]
fn vllm_max_model_len_is_read_from_the_models_list() {
    let stub = Stub::with_probes(
        |path| {
            (path == "/v1/models").then(|| {
                json!({"object": "list", "data": [
                    {"id": "other", "max_model_len": 131072},
                    {"id": "m", "max_model_len": 4096}
                ]})
            })
        },
        |body, _| sse_answer(&answer_for(body, "The dining car."), 9, "stop"),
    );
    let (_, body) = run_turn(&stub, "vllm");
    assert_eq!(stub.probes(), vec!["/props", "/v1/models"]);
    assert!(tokens_asked(&body) <= 4_096);
}

/// A 400,000-character page in the extension's shape: the head in the
/// summary, the rest in 4,000-char chunks.
fn page_with_fact_at_90_percent() -> Value {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < 400_000 {
        text.push_str(&format!(
            "Line {line}: the council discussed budgets, roads, schools and parks once more.\n"
        ));
        line += 1;
        if text.len() > 360_000 && !text.contains("Elbe") {
            text.push_str("The new bridge over the Elbe will cost 48 million euros.\n");
        }
    }
    page_in_chunks("Council minutes", &text, 8_000)
}

#[test]
fn a_fact_at_90_percent_of_a_400k_page_reaches_an_8k_model() {
    let stub = Stub::with_probes(
        |path| (path == "/props").then(|| json!({"n_ctx": 8192})),
        |body, _| sse_answer(&answer_for(body, "48 million euros."), 9, "stop"),
    );
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
        ],
        config: "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n",
        ..Launch::default()
    });
    let events = host.turn(
        "t1",
        json!({"name": "web.answer", "args": {}}),
        "How much will the bridge cost?",
        page_with_fact_at_90_percent(),
    );
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let body = stub.wait_requests(1)[0].body.clone();
    assert!(body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("48 million euros"));
    assert!(tokens_asked(&body) <= 8_192);
    let selection = &one(&events, "context_usage")["selection"];
    assert_eq!(selection["strategy"], "ranked");
    assert_eq!(selection["about"], json!(["bridge", "cost"]));
    let read =
        selection["sent_chars"].as_f64().unwrap() / selection["page_chars"].as_f64().unwrap();
    assert!(read < 0.05, "{selection}");
}

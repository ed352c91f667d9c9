//! The Settings requests through the built binary: `config.set` writes the
//! key only into the config file (mode 0600, the other settings kept) and
//! never sends it back, logs it or stores it; bad values change nothing;
//! `config.test` against a loopback stub that answers like llama.cpp, and
//! against ones that fail; `config.discover` finds the stub on a port added
//! through `LAIKA_DISCOVER_PORTS`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::*;
use serde_json::{json, Value};
use stub::*;

const KEY: &str = "sk-settings-5ecret-0123456789abcdef";

const FILE: &str =
    "log_full_llm = false\n\n[limits]\nmax_steps = 5\n\n[serve]\npromise_after_ms = 4321\n";

/// Answers like `llama-server`: `/props` with its context window,
/// `/v1/models` with its model, chat completions streamed.
fn llama_server(answer: &'static str) -> Stub {
    Stub::with_probes(
        |path| match path {
            "/props" => Some(json!({
                "default_generation_settings": {"n_ctx": 4096},
                "model_path": "/models/gemma-3-270m-it-Q8_0.gguf",
                "build_info": "b6002-stub"
            })),
            "/v1/models" => Some(json!({
                "object": "list",
                "data": [{"id": "gemma-3-270m-it-Q8_0.gguf", "object": "model", "owned_by": "llamacpp"}]
            })),
            _ => None,
        },
        move |_, _| sse_answer(answer, 7, "stop"),
    )
}

fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .parse()
        .unwrap()
}

fn request(host: &mut Host, all: &mut Vec<Value>, msg: Value) -> Value {
    let reply = host.request(msg);
    assert_wire_valid(&reply);
    all.push(reply.clone());
    reply
}

#[test]
fn the_key_lives_only_in_a_private_config_file_and_bad_values_change_nothing() {
    let stub = llama_server(r#"{"reply": "Ready."}"#);
    let mut host = Host::launch(Launch {
        config: FILE,
        ..Launch::default()
    });
    let path = host.dir.path().join("config.toml");
    let mut all = Vec::new();

    let set = request(
        &mut host,
        &mut all,
        json!({"type": "config.set", "id": "s1", "values": {
            "runtime.kind": "openai",
            "runtime.base_url": stub.url,
            "runtime.profile": "llama.cpp",
            "runtime.model": "gemma-3-270m-it-Q8_0.gguf",
            "runtime.api_key": KEY,
        }}),
    );
    assert_eq!(set["type"], "config.set.result", "{set:#}");
    assert_eq!(set["config"]["runtime"]["api_key_set"], true);
    assert_eq!(set["config"]["runtime"]["profile"], "llama.cpp");
    assert_eq!(
        set["config"]["offered_kinds"],
        json!(["builtin", "openai", "ollama", "anthropic"])
    );

    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains(KEY), "{saved}");
    assert!(saved.contains("max_steps = 5"), "{saved}");
    assert!(saved.contains("promise_after_ms = 4321"), "{saved}");
    assert!(saved.contains("profile = \"llama.cpp\""), "{saved}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }

    // Bad values: a coded error naming the key, never the key's value, and
    // the file as it was.
    let long = "k".repeat(5000);
    let bad = [
        json!({"runtime.api_key": long}),
        json!({"runtime.api_key": format!("{KEY}\nX-Evil: 1")}),
        json!({"runtime.base_url": "ftp://127.0.0.1/v1"}),
        json!({"runtime.base_url": "file:///etc/passwd"}),
        json!({"runtime.profile": "gpt-9"}),
        json!({"runtime.kind": "skynet"}),
        json!({"runtime.profile": 7}),
        json!({"runtime.shell": "sh"}),
    ];
    for (i, values) in bad.into_iter().enumerate() {
        // Some are refused by the schema too: sent unchecked.
        let msg = json!({"type": "config.set", "id": format!("bad{i}"), "values": values.clone()});
        host.send_invalid(&msg);
        let reply = host.reply_to(&msg);
        all.push(reply.clone());
        assert_eq!(reply["type"], "error", "{values} → {reply:#}");
        assert_eq!(reply["code"], "CONFIG_INVALID", "{values} → {reply:#}");
        let message = reply["message"].as_str().unwrap();
        assert!(message.contains("runtime."), "{message}");
        assert!(!message.contains("kkkk"), "{message}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), saved, "{values}");
    }
    // Not even `config.test` takes them.
    let reply = request(
        &mut host,
        &mut all,
        json!({"type": "config.test", "id": "bad-test", "values": {"runtime.base_url": "ftp://x"}}),
    );
    assert_eq!(reply["code"], "CONFIG_INVALID", "{reply:#}");
    assert!(stub.seen().is_empty());

    let got = request(
        &mut host,
        &mut all,
        json!({"type": "config.get", "id": "g1"}),
    );
    assert_eq!(got["config"]["runtime"]["api_key_set"], true);
    assert_eq!(got["config"]["runtime"]["base_url"], stub.url);

    // Test connection with the stored key: the stub sees it in the header.
    let test = request(
        &mut host,
        &mut all,
        json!({"type": "config.test", "id": "t1"}),
    );
    assert_eq!(test["type"], "config.test.result", "{test:#}");
    assert_eq!(test["ok"], true, "{test:#}");
    assert_eq!(test["answer"], json!({"reply": "Ready."}));
    let seen = stub.wait_requests(1);
    assert!(seen[0].head.contains(&format!("Bearer {KEY}")));
    assert!(
        seen[0].body["json_schema"].is_object(),
        "{:#}",
        seen[0].body
    );

    // A turn through it stores the answer, never the key.
    let events = host.turn(
        "turn-1",
        json!({"name": "web.summarize", "args": {}}),
        "Summarize",
        observation("article-night-trains.observation.json"),
    );
    all.extend(events);

    for msg in &all {
        assert!(!msg.to_string().contains(KEY), "key echoed in {msg:#}");
    }
    host.close_stdin();
    let dir = host.into_dir();
    let data = dir.path().join("data");
    let log = std::fs::read_to_string(data.join("laika-host.log")).unwrap();
    assert!(log.contains("connection tested"), "{log}");
    assert!(!log.contains(KEY));
    let mut db = Vec::new();
    for entry in std::fs::read_dir(&data).unwrap() {
        let p = entry.unwrap().path();
        if p.to_string_lossy().contains("history.sqlite3") {
            db.extend(std::fs::read(&p).unwrap());
        }
    }
    assert!(!db.is_empty());
    assert!(
        !db.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the key is in the database"
    );
}

#[test]
fn test_connection_says_what_came_back_or_why_not() {
    let good = llama_server(r#"{"reply": "Ready when you are."}"#);
    let prose = llama_server("Sure! I am ready to help you today.");
    let failing =
        Stub::start(|_, _| status(500, r#"{"error":{"message":"model failed to load"}}"#));
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let mut host = Host::start();
    let test = |host: &mut Host, id: &str, url: &str| {
        let reply = host.request(json!({"type": "config.test", "id": id, "values": {
            "runtime.kind": "openai", "runtime.base_url": url, "runtime.profile": "llama.cpp"
        }}));
        assert_wire_valid(&reply);
        assert_eq!(reply["type"], "config.test.result", "{reply:#}");
        reply
    };

    let ok = test(&mut host, "good", &good.url);
    assert_eq!(ok["ok"], true, "{ok:#}");
    assert_eq!(ok["answer"]["reply"], "Ready when you are.");
    assert!(ok["message"].as_str().unwrap().contains("answered in"));
    // llama.cpp gets the schema as its own top-level `json_schema`.
    let body = &good.wait_requests(1)[0].body;
    assert_eq!(
        body["json_schema"]["required"],
        json!(["reply"]),
        "{body:#}"
    );
    assert_eq!(
        body["messages"][1]["content"],
        laika_core::connection::QUESTION
    );

    let unusable = test(&mut host, "prose", &prose.url);
    assert_eq!(unusable["ok"], false);
    assert_eq!(unusable["error"]["code"], "INVALID_MODEL_OUTPUT");
    assert_eq!(unusable["raw"], "Sure! I am ready to help you today.");

    let error = test(&mut host, "500", &failing.url);
    assert_eq!(error["ok"], false);
    assert_eq!(error["error"]["code"], "RUNTIME_ERROR", "{error:#}");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("model failed to load"));

    let refused = test(&mut host, "closed", &closed);
    assert_eq!(
        refused["error"]["code"], "RUNTIME_UNAVAILABLE",
        "{refused:#}"
    );

    // Nothing was saved: the runtime in use is still the offline one.
    let builtin = host.request(json!({"type": "config.test", "id": "now"}));
    assert_eq!(builtin["ok"], true);
    assert_eq!(builtin["runtime"]["kind"], "builtin");
    assert!(builtin.get("answer").is_none());
}

#[test]
fn discovery_finds_a_llama_server_on_an_added_port() {
    let stub = llama_server(r#"{"reply": "Ready."}"#);
    let port = port_of(&stub.url);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut host = Host::launch(Launch {
        env: vec![("LAIKA_DISCOVER_PORTS".into(), format!("{closed}, {port}"))],
        ..Launch::default()
    });
    let got = host.request(json!({"type": "config.get", "id": "g"}));
    assert_eq!(got["config"]["discover_ports"], json!([closed, port]));
    let found = host.request(json!({"type": "config.discover", "id": "d"}));
    assert_wire_valid(&found);
    assert_eq!(found["type"], "config.discover.result", "{found:#}");
    assert_eq!(found["ports"], json!([closed, port]));
    let servers = found["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{found:#}");
    let server = &servers[0];
    assert_eq!(server["kind"], "llama_cpp");
    assert_eq!(server["runtime"], "openai");
    assert_eq!(server["profile"], "llama.cpp");
    assert_eq!(server["base_url"], stub.url);
    assert_eq!(server["context_window"], 4096);
    assert_eq!(server["models"], json!(["gemma-3-270m-it-Q8_0.gguf"]));
    // Discovery asks, it never posts.
    assert!(stub.seen().is_empty());

    // A bad port list is the config's error, named.
    let mut bad = Host::launch(Launch {
        env: vec![("LAIKA_DISCOVER_PORTS".into(), "8080,http".into())],
        ..Launch::default()
    });
    let reply = bad.request(json!({"type": "config.discover", "id": "d"}));
    assert_eq!(reply["code"], "CONFIG_INVALID");
    assert!(reply["message"]
        .as_str()
        .unwrap()
        .contains("LAIKA_DISCOVER_PORTS"));
}

#[test]
fn an_offline_turn_answers_without_the_server_and_leaves_the_config_as_it_was() {
    // The config names a server that is not there; "Use offline" never asks it.
    let config = "[runtime]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"router-model\"\n";
    let mut host = Host::launch(Launch {
        config,
        ..Launch::default()
    });
    let mut turn = turn_msg(
        "turn-offline",
        json!({"name": "web.summarize", "args": {}}),
        "Summarize",
        observation("article-night-trains.observation.json"),
        None,
    );
    turn["offline"] = json!(true);
    assert_wire_valid(&turn);
    host.send(&turn);
    let events = host.until("done", "turn-offline");
    let started = one(&events, "turn.started");
    assert_eq!(started["runtime"]["kind"], "builtin", "{started:#}");
    let done = one(&events, "done");
    assert_eq!(done["status"], "ok", "{done:#}");
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    let path = host.dir.path().join("config.toml");
    assert_eq!(std::fs::read_to_string(path).unwrap(), config);
    // The next turn is the server's again (and fails: nothing answers there).
    let events = host.turn(
        "turn-server",
        json!({"name": "web.summarize", "args": {}}),
        "Summarize",
        observation("article-night-trains.observation.json"),
    );
    assert_eq!(one(&events, "turn.started")["runtime"]["kind"], "openai");
}

//! The MCP client over the real binary: a test MCP server
//! (`laika-mcp-fixture`, over stdio and streamable HTTP) configured under
//! `[mcp.servers.<name>]`, a model (scripted, or a stub server that records
//! its prompts) and the test as the extension. The prompt offers each tool
//! in one line; the gate asks unless the tool only reads and the server is
//! trusted, refuses arguments its schema does not admit and asks before an
//! MCP result's words leave in a search; a slow, flooding or hostile
//! server gives a coded error and the turn goes on; Settings lists the
//! servers and saves the trust.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;
mod stub;

use common::*;
use serde_json::{json, Value};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use stub::{answer_for, sse_answer, Stub};

const FIXTURE: &str = env!("CARGO_BIN_EXE_laika-mcp-fixture");

fn stdio_server(name: &str, trusted: bool, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = {FIXTURE:?}\nargs = [\"stdio\"]\ntrusted = {trusted}\n{extra}"
    )
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn page() -> Value {
    json!({"summary": {
        "doc_type": "web.observation.summary.v1",
        "url": "https://notes.example/today", "title": "Today",
        "text": "A quiet page about the weather."
    }})
}

/// Runs one question whose model proposes `calls` one step each; the test
/// as the extension answers asks with `user`.
fn run(config: &str, calls: &[Value], user: User) -> Vec<Value> {
    let mut host = Host::scripted_with(&steps(calls), config);
    let msg = turn_msg(
        "t1",
        json!({"name": "web.answer"}),
        "look up falcon in my notes",
        page(),
        None,
    );
    let (events, _) = drive_turn(&mut host, &msg, user, None);
    for e in &events {
        assert_wire_valid(e);
    }
    events
}

/// `(name, decision, reason)` of each proposed call.
fn decisions(events: &[Value]) -> Vec<(String, String, String)> {
    of_type(events, "tool_call")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["decision"].as_str().unwrap().to_owned(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn results(events: &[Value]) -> Vec<&Value> {
    of_type(events, "tool_result")
}

fn error_code(result: &Value) -> &str {
    result["error"]["code"].as_str().unwrap_or_default()
}

#[test]
fn the_prompt_offers_each_tool_in_one_line_with_its_required_arguments() {
    let stub = Stub::start(|body, _| sse_answer(&answer_for(body, "Noted."), 64, "stop"));
    let mut host = Host::launch(Launch {
        env: vec![
            ("LAIKA_RUNTIME".into(), "openai".into()),
            ("LAIKA_BASE_URL".into(), stub.url.clone()),
            ("LAIKA_MODEL".into(), "m".into()),
        ],
        config: &format!(
            "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n\n{}",
            stdio_server("fixture", false, "")
        ),
        ..Launch::default()
    });
    host.recv_timeout = std::time::Duration::from_secs(60);
    let events = host.turn("t1", json!({"name": "web.answer"}), "falcon?", page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let events = host.turn("t2", json!({"name": "web.summarize"}), "", page());
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
    let seen = stub.wait_requests(2);
    let system = seen[0].body["messages"][0]["content"].as_str().unwrap();
    for line in [
        "\n  mcp.fixture.lookup(query)",
        "\n  mcp.fixture.append(text)",
        "\n  mcp.fixture.inject()",
        "\n  mcp.fixture.huge(bytes)",
        "\n  mcp.fixture.slow(ms)",
    ] {
        assert!(system.contains(line), "{line:?} in {system}");
    }
    // Listed with the registry's own tools, and never the servers' words.
    assert!(system.contains("\n  search(query)"), "{system}");
    assert!(!system.contains("Looks a note up"), "{system}");
    // The answer schema's tool calls offer them with their schemas.
    let schema = seen[0].body.to_string();
    assert!(
        schema.contains(r#"{"const":"mcp.fixture.lookup"}"#),
        "{schema}"
    );
    // A summary never acts: no tools at all.
    let summary = seen[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(!summary.contains("mcp.fixture"), "{summary}");
}

#[test]
fn calls_are_asked_unless_the_tool_only_reads_on_a_trusted_server() {
    let lookup = call("mcp.fixture.lookup", json!({"query": "falcon"}));
    let append = call("mcp.fixture.append", json!({"text": "buy milk"}));
    let trusted = run(
        &stdio_server("fixture", true, ""),
        &[lookup.clone(), append.clone()],
        User::Approves,
    );
    assert_eq!(
        decisions(&trusted),
        vec![
            (
                "mcp.fixture.lookup".into(),
                "allow".into(),
                "READ_ONLY".into()
            ),
            (
                "mcp.fixture.append".into(),
                "ask".into(),
                "CALLS_INTEGRATION".into()
            ),
        ],
        "{trusted:#?}"
    );
    let done = results(&trusted);
    assert_eq!(done[0]["status"], "ok", "{done:#?}");
    assert_eq!(done[0]["result"]["server"], "fixture");
    assert!(done[0]["result"]["text"]
        .as_str()
        .unwrap()
        .contains("Meridian Falcon ledger entry for falcon"));
    // Approved, it ran on the server: the host called it, not the extension.
    assert_eq!(done[1]["status"], "ok", "{done:#?}");
    assert_eq!(done[1]["result"]["text"], "Stored: buy milk");
    let call_events = of_type(&trusted, "tool_call");
    assert!(call_events.iter().all(|c| c["executor"] == "host"));

    // Not trusted: even a read-only tool is asked; declined, nothing runs.
    let untrusted = run(&stdio_server("fixture", false, ""), &[lookup], User::Denies);
    let d = decisions(&untrusted);
    assert_eq!(d[0].1, "ask", "{untrusted:#?}");
    let detail = one(&untrusted, "tool_call")["detail"].as_str().unwrap();
    assert!(
        detail.contains("not marked this server trusted"),
        "{detail}"
    );
    assert_ne!(results(&untrusted)[0]["status"], "ok");
}

#[test]
fn arguments_the_schema_does_not_admit_are_refused_before_any_call() {
    let events = run(
        &stdio_server("fixture", true, ""),
        &[call(
            "mcp.fixture.lookup",
            json!({"query": 5, "extra": true}),
        )],
        User::Approves,
    );
    let c = one(&events, "tool_call");
    assert_eq!(c["decision"], "deny", "{events:#?}");
    assert_eq!(c["reason"], "INVALID_ARGUMENTS");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .starts_with("mcp.fixture.lookup: unexpected argument"),
        "{c}"
    );
    let events = run(
        &stdio_server("fixture", true, ""),
        &[call("mcp.fixture.lookup", json!({}))],
        User::Approves,
    );
    let c = one(&events, "tool_call");
    assert_eq!(c["reason"], "INVALID_ARGUMENTS", "{events:#?}");
    assert!(c["detail"].as_str().unwrap().contains("\"query\""), "{c}");
    // A tool the server does not list, and a server not configured.
    for name in ["mcp.fixture.delete_all", "mcp.other.lookup"] {
        let events = run(
            &stdio_server("fixture", true, ""),
            &[call(name, json!({"query": "x"}))],
            User::Approves,
        );
        let c = one(&events, "tool_call");
        assert_eq!(c["decision"], "deny", "{name}: {events:#?}");
        assert_eq!(c["reason"], "UNKNOWN_TOOL", "{name}");
    }
}

#[test]
fn a_secret_in_the_arguments_is_denied_like_any_outgoing_text() {
    let events = run(
        &stdio_server("fixture", true, ""),
        &[call(
            "mcp.fixture.lookup",
            json!({"query": "AKIAIOSFODNN7EXAMPLE"}),
        )],
        User::Approves,
    );
    let c = one(&events, "tool_call");
    assert_eq!(c["decision"], "deny", "{events:#?}");
    assert_eq!(c["reason"], "SECRET_IN_OUTPUT");
}

#[test]
fn a_slow_server_times_out_with_a_code_and_the_next_call_works() {
    let events = run(
        &stdio_server("fixture", true, "timeout_ms = 400\n"),
        &[
            call("mcp.fixture.slow", json!({"ms": 20000})),
            call("mcp.fixture.lookup", json!({"query": "falcon"})),
        ],
        User::Approves,
    );
    let done = results(&events);
    assert_eq!(done.len(), 2, "{events:#?}");
    assert_eq!(error_code(done[0]), "MCP_TIMEOUT", "{done:#?}");
    assert!(done[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("400 ms"));
    assert_eq!(done[1]["status"], "ok", "{done:#?}");
    assert_eq!(one(&events, "done")["status"], "ok");
}

#[test]
fn output_past_the_cap_is_refused_and_the_server_is_used_again() {
    let events = run(
        &stdio_server("fixture", true, "max_output_bytes = 4096\n"),
        &[
            // Over the cap, read whole…
            call("mcp.fixture.huge", json!({"bytes": 20000})),
            // …and far over it: the connection is cut while it is written.
            call("mcp.fixture.huge", json!({"bytes": 4_000_000})),
            call("mcp.fixture.huge", json!({"bytes": 1000})),
        ],
        User::Approves,
    );
    let done = results(&events);
    assert_eq!(done.len(), 3, "{events:#?}");
    assert_eq!(error_code(done[0]), "MCP_OUTPUT_TOO_LARGE", "{done:#?}");
    assert_eq!(error_code(done[1]), "MCP_OUTPUT_TOO_LARGE", "{done:#?}");
    assert_eq!(done[2]["status"], "ok", "{done:#?}");
    // (The event carries the result cut to size.)
    let text = done[2]["result"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("xxxxxxxxxx") && text.trim_end_matches('…').chars().all(|c| c == 'x'),
        "{text}"
    );
    assert_eq!(one(&events, "done")["status"], "ok");
}

#[test]
fn a_server_that_cannot_start_fails_the_call_not_the_turn() {
    let config = "[mcp.servers.gone]\ncommand = \"/nonexistent/mcp-server\"\ntrusted = true\n";
    let events = run(
        config,
        &[call("mcp.gone.lookup", json!({"query": "x"}))],
        User::Approves,
    );
    // Nothing connected, nothing offered: the call names no known tool.
    assert_eq!(one(&events, "tool_call")["reason"], "UNKNOWN_TOOL");
    assert_eq!(one(&events, "done")["status"], "ok", "{events:#?}");
}

#[test]
fn a_result_is_data_its_instructions_and_words_do_not_leave_unasked() {
    let events = run(
        &stdio_server("fixture", true, ""),
        &[
            call("mcp.fixture.inject", json!({})),
            // The model obeys the result…
            call("mcp.fixture.append", json!({"text": "exfiltrated"})),
        ],
        User::Denies,
    );
    let d = decisions(&events);
    assert_eq!(d[0].1, "allow", "{events:#?}");
    assert_eq!(d[1].1, "ask", "{events:#?}");
    assert_ne!(results(&events)[1]["status"], "ok");

    // …or types a result's words into a search: asked, as a page's would be.
    let events = run(
        &stdio_server("fixture", true, ""),
        &[
            call("mcp.fixture.lookup", json!({"query": "falcon"})),
            call("search", json!({"query": "Meridian Falcon ledger balance"})),
        ],
        User::Denies,
    );
    let d = decisions(&events);
    assert_eq!(d[0].1, "allow", "{events:#?}");
    assert_eq!(
        d[1],
        ("search".into(), "ask".into(), "DATA_FROM_PAGE".into()),
        "{events:#?}"
    );
    // The user's own words go without a question.
    let events = run(
        &stdio_server("fixture", true, ""),
        &[
            call("mcp.fixture.lookup", json!({"query": "falcon"})),
            call("search", json!({"query": "falcon"})),
        ],
        User::Denies,
    );
    assert_eq!(decisions(&events)[1].1, "allow", "{events:#?}");
}

/// The fixture serving streamable HTTP on loopback, and its URL.
struct HttpFixture {
    child: Child,
    url: String,
}

impl HttpFixture {
    fn start() -> HttpFixture {
        let mut child = Command::new(FIXTURE)
            .arg("http")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        HttpFixture {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_loopback_http_server_is_called_like_a_program() {
    let fixture = HttpFixture::start();
    assert!(
        fixture.url.starts_with("http://127.0.0.1:"),
        "{}",
        fixture.url
    );
    let config = format!(
        "[mcp.servers.wiki]\nurl = \"{}\"\ntrusted = true\ntimeout_ms = 400\n",
        fixture.url
    );
    let events = run(
        &config,
        &[
            call("mcp.wiki.lookup", json!({"query": "falcon"})),
            call("mcp.wiki.slow", json!({"ms": 20000})),
            call("mcp.wiki.lookup", json!({"query": "heron"})),
        ],
        User::Approves,
    );
    let done = results(&events);
    assert_eq!(done.len(), 3, "{events:#?}");
    assert_eq!(done[0]["status"], "ok", "{done:#?}");
    assert!(done[0]["result"]["text"]
        .as_str()
        .unwrap()
        .contains("entry for falcon"));
    assert_eq!(error_code(done[1]), "MCP_TIMEOUT", "{done:#?}");
    assert_eq!(done[2]["status"], "ok", "{done:#?}");
}

#[test]
fn settings_list_the_servers_and_save_the_trust() {
    let fixture = HttpFixture::start();
    let config = format!(
        "{}\n[mcp.servers.gone]\ncommand = \"/nonexistent/mcp-server\"\n\n[mcp.servers.wiki]\nurl = \"{}\"\n",
        stdio_server("fixture", false, ""),
        fixture.url
    );
    let mut host = Host::launch(Launch {
        config: &config,
        ..Launch::default()
    });
    let reply = host.request(json!({"type": "mcp.servers", "id": "m1"}));
    assert_wire_valid(&reply);
    assert_eq!(reply["type"], "mcp.servers.result", "{reply}");
    let servers = reply["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fixture", "gone", "wiki"]);
    let (fixture_view, gone, wiki) = (&servers[0], &servers[1], &servers[2]);
    assert_eq!(fixture_view["state"], "connected");
    assert_eq!(fixture_view["transport"], "stdio");
    assert_eq!(fixture_view["trusted"], false);
    let tools: Vec<&str> = fixture_view["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "mcp.fixture.lookup",
            "mcp.fixture.append",
            "mcp.fixture.inject",
            "mcp.fixture.huge",
            "mcp.fixture.slow"
        ]
    );
    assert_eq!(fixture_view["tools"][0]["read_only"], true);
    assert_eq!(fixture_view["tools"][1]["read_only"], false);
    assert_eq!(gone["state"], "error");
    assert_eq!(gone["error"]["code"], "MCP_UNAVAILABLE");
    assert!(gone["tools"].as_array().unwrap().is_empty());
    assert_eq!(wiki["state"], "connected", "{wiki}");
    assert_eq!(wiki["transport"], "http");

    // "Test connection" connects anew and answers the same way.
    let tested = host.request(json!({"type": "mcp.servers", "id": "m2", "test": "gone"}));
    assert_eq!(tested["servers"][1]["error"]["code"], "MCP_UNAVAILABLE");

    // The trust toggle is saved to config.toml and applies at once.
    let set = host.request(json!({"type": "config.set", "id": "c1",
        "values": {"mcp.servers.fixture.trusted": true}}));
    assert_eq!(set["type"], "config.set.result", "{set}");
    let saved = std::fs::read_to_string(host.dir.path().join("config.toml")).unwrap();
    let saved: toml::Table = toml::from_str(&saved).unwrap();
    assert_eq!(
        saved["mcp"]["servers"]["fixture"]["trusted"].as_bool(),
        Some(true)
    );
    assert_eq!(
        saved["mcp"]["servers"]["wiki"]["url"].as_str(),
        Some(fixture.url.as_str())
    );
    let again = host.request(json!({"type": "mcp.servers", "id": "m3"}));
    assert_eq!(again["servers"][0]["trusted"], true);
    assert_eq!(again["servers"][0]["state"], "connected");
    // Only a configured server's trust can be set.
    let refused = host.request(json!({"type": "config.set", "id": "c2",
        "values": {"mcp.servers.nobody.trusted": true}}));
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["code"], "CONFIG_INVALID", "{refused}");
}

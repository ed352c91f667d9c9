//! `laika-host mcp`: the NLWeb asks as MCP tools, through the real binary
//! over stdio (newline-delimited JSON-RPC), on a seeded history.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod nlweb;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_laika-host");

#[test]
fn ask_and_await_are_tools_over_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    nlweb::seed(Path::new(BIN), dir.path(), &nlweb::PAGES);
    let mut child = Command::new(BIN)
        .arg("mcp")
        .env_clear()
        .env("LAIKA_CONFIG", dir.path().join("config.toml"))
        .env("LAIKA_DATA_DIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut call = |message: Value| -> Option<Value> {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        let id = message.get("id")?.clone();
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "mcp closed");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return Some(reply);
            }
        }
    };
    let init = call(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}))
    .unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "laika-host");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    call(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = call(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ask", "await"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["query"]));

    let tool = |id: u32, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let answer = call(tool(
        3,
        "ask",
        json!({"query": {"text": "cinnamon muffins"}, "prefer": {"response_format": "conv_search"},
               "meta": {"session_context": {"conversation_id": "from-mcp"}}}),
    ))
    .unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    let nl = &result["structuredContent"];
    assert_eq!(nl["_meta"]["response_type"], "Answer");
    assert_eq!(
        nl["_meta"]["session_context"]["conversation_id"],
        "from-mcp"
    );
    let citations = nl["results"][0]["grounding"]["citations"]
        .as_array()
        .unwrap();
    assert!(!citations.is_empty(), "{nl}");
    assert!(citations.iter().all(|c| c["url"] == nlweb::PAGES[1].0));
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, nl);

    let missing = call(tool(4, "ask", json!({"query": {"site": "history"}}))).unwrap();
    assert_eq!(missing["result"]["isError"], true);
    assert_eq!(
        missing["result"]["structuredContent"]["error"]["code"],
        "MISSING_FIELD"
    );
    let unknown = call(tool(
        5,
        "await",
        json!({"promise_token": "promise_none", "action": "checkin"}),
    ))
    .unwrap();
    assert_eq!(unknown["result"]["isError"], true);
    let bad = call(tool(
        6,
        "await",
        json!({"promise_token": "p", "action": "poke"}),
    ))
    .unwrap();
    assert_eq!(
        bad["result"]["structuredContent"]["error"]["code"],
        "INVALID_ACTION"
    );
    let nope = call(tool(7, "delete_everything", json!({}))).unwrap();
    assert!(nope["error"]["message"]
        .as_str()
        .unwrap()
        .contains("ask and await"));

    drop(stdin);
    assert!(child.wait().unwrap().success());
}

//! The command line a person uses: `history …`, `--help`, `--version`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use serde_json::{json, Value};
use std::process::{Command, Output};

fn run(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("LAIKA_CONFIG", dir.join("config.toml"))
        .env("LAIKA_DATA_DIR", dir.join("data"))
        .output()
        .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn history_commands_list_search_show_export_and_delete() {
    let mut host = Host::start();
    let events = host.turn(
        "t",
        json!({"name": "web.answer"}),
        "What does a couchette bed cost?",
        observation("article-night-trains.observation.json"),
    );
    let conv = one(&events, "done")["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = host.into_dir();
    let d = dir.path();

    let list = stdout_json(&run(d, &["history", "list"]));
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list:#}");
    assert_eq!(list[0]["id"], conv.as_str());
    assert_eq!(list[0]["title"], "Night trains are coming back to Europe");

    let hits = stdout_json(&run(d, &["history", "search", "couchette"]));
    assert_eq!(hits[0]["conversation_id"], conv.as_str(), "{hits:#}");
    let none = stdout_json(&run(d, &["history", "search", "\"NEAR(zeppelin*"]));
    assert_eq!(none, json!([]));

    let show = stdout_json(&run(d, &["history", "show", &conv]));
    assert_eq!(
        show["turns"][0]["user_text"],
        "What does a couchette bed cost?"
    );
    assert!(show["turns"][0]["answer_text"]
        .as_str()
        .unwrap()
        .contains("49 euros"));

    let html_path = d.join("chat.html");
    let out = run(
        d,
        &[
            "history",
            "export",
            &conv,
            "--format",
            "html",
            "-o",
            html_path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        html.starts_with("<!doctype html>") && html.contains("couchette"),
        "{html}"
    );
    assert!(!html.contains("<script"));
    let json_export = stdout_json(&run(d, &["history", "export", &conv]));
    assert_eq!(json_export["conversation"]["id"], conv.as_str());

    let out = run(d, &["history", "delete", &conv]);
    assert!(out.status.success());
    assert_eq!(stdout_json(&run(d, &["history", "list"])), json!([]));
    let out = run(d, &["history", "show", &conv]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NOT_FOUND"));
}

#[test]
fn help_version_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--version"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    let out = run(dir.path(), &["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["replay", "history", "install", "doctor"] {
        assert!(help.contains(word), "{help}");
    }
    let out = run(dir.path(), &["history", "list", "--limit", "many"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--limit"));
}

#[test]
fn a_bad_config_file_names_the_key_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        "[runtime]\nknd = \"builtin\"\n",
    )
    .unwrap();
    let out = run(dir.path(), &["history", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("CONFIG_INVALID") && err.contains("knd"),
        "{err}"
    );
}

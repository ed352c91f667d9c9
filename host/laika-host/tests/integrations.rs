//! `integration.invoke` run by the host: a configured plugin program
//! (`scripts/mock-integration.py`) answers, fails, hangs, floods or talks
//! nonsense, and each ends as a coded tool result; the config names its key
//! when an integration is written wrong.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::cancel::CancelToken;
use laika_host::config::Config;
use laika_host::integration::{self, IntegrationConfig};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

fn mock() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/mock-integration.py")
        .display()
        .to_string()
}

fn configured(mode: &str, timeout_ms: u64) -> BTreeMap<String, IntegrationConfig> {
    let config = Config::from_toml(&format!(
        "[integrations.notes]\ncommand = \"python3\"\nargs = [{:?}, \"--mode\", {mode:?}]\ntimeout_ms = {timeout_ms}\noperations = [\"append\"]\n",
        mock()
    ))
    .unwrap();
    config.integrations
}

fn invoke(mode: &str, arguments: Value) -> Result<Value, (String, String)> {
    integration::invoke(
        &configured(mode, 5_000),
        &typed(arguments),
        &CancelToken::default(),
    )
    .map_err(|e| (e.code, e.message))
}

/// Arguments as the gate hands them on: typed.
fn typed(arguments: Value) -> laika_protocol::tool_call::IntegrationInvoke {
    serde_json::from_value(arguments).unwrap()
}

fn append() -> Value {
    json!({"integration": "notes", "operation": "append", "payload": {"text": "Night trains"}, "idempotencyKey": "k-1"})
}

#[test]
fn a_configured_integration_gets_the_call_and_its_result_comes_back() {
    let done = invoke("echo", append()).unwrap();
    assert_eq!(done["result"]["operation"], "append");
    assert_eq!(done["result"]["payload"], json!({"text": "Night trains"}));
    assert_eq!(done["result"]["idempotency_key"], "k-1");
    assert_eq!(done["message"], "Mock notes did append.");
}

#[test]
fn unknown_integrations_and_operations_are_refused_before_anything_runs() {
    let (code, message) = invoke(
        "echo",
        json!({"integration": "crm", "operation": "append", "payload": {}}),
    )
    .unwrap_err();
    assert_eq!(code, "NOT_FOUND");
    assert!(message.contains("\"crm\""), "{message}");
    let (code, message) = invoke(
        "echo",
        json!({"integration": "notes", "operation": "delete_all", "payload": {}}),
    )
    .unwrap_err();
    assert_eq!(code, "UNKNOWN_OPERATION");
    assert!(message.contains("it offers append"), "{message}");
}

#[test]
fn a_failing_or_garbled_plugin_is_a_coded_error() {
    for (mode, code, says) in [
        ("error", "INTEGRATION_FAILED", "the remote service said no"),
        ("garbage", "INTEGRATION_FAILED", "integration notes:"),
        ("no-result", "INTEGRATION_FAILED", "without a `result`"),
        ("exit", "INTEGRATION_FAILED", "3"),
        ("flood", "INTEGRATION_FAILED", "256 KiB"),
    ] {
        let (got, message) = invoke(mode, append()).unwrap_err();
        assert_eq!(got, code, "{mode}: {message}");
        assert!(message.contains(says), "{mode}: {message}");
        assert!(message.chars().count() <= 2000, "{mode}");
    }
}

#[test]
fn a_hanging_plugin_is_killed_at_its_timeout() {
    let started = Instant::now();
    let err = integration::invoke(
        &configured("hang", 300),
        &typed(append()),
        &CancelToken::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, "INTEGRATION_TIMEOUT", "{}", err.message);
    assert!(err.message.contains("300 ms"), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_cancel_stops_the_plugin() {
    let cancel = CancelToken::default();
    let stopper = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stopper.cancel();
    });
    let err =
        integration::invoke(&configured("hang", 60_000), &typed(append()), &cancel).unwrap_err();
    t.join().unwrap();
    assert_eq!(err.code, "CANCELLED");
}

#[test]
fn a_missing_program_is_unavailable() {
    let mut integrations = configured("echo", 5_000);
    if let Some(c) = integrations.get_mut("notes") {
        c.command = Some("/nonexistent/laika-integration".into());
    }
    let err =
        integration::invoke(&integrations, &typed(append()), &CancelToken::default()).unwrap_err();
    assert_eq!(err.code, "INTEGRATION_UNAVAILABLE", "{}", err.message);
}

#[test]
fn integration_config_errors_name_the_key() {
    let msg = |toml: &str| Config::from_toml(toml).unwrap_err().message;
    assert!(
        msg("[integrations.notes]\nargs = [\"x\"]\n").contains("integrations.notes needs command")
    );
    assert!(msg("[integrations.notes]\ncommand = \"rel/p.py\"\n")
        .contains("integrations.notes.command"));
    assert!(
        msg("[integrations.notes]\ncommand = \"p\"\ntimeout_ms = 0\n")
            .contains("integrations.notes.timeout_ms")
    );
    assert!(msg("[integrations.notes]\ncommand = \"p\"\nshell = true\n").contains("shell"));
    assert!(msg("[integrations.\"a b\"]\ncommand = \"p\"\n").contains("a name is"));
    let none = Config::from_toml("").unwrap();
    assert!(
        none.integrations.is_empty(),
        "no integration unless one is added"
    );
}

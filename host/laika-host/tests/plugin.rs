//! The `command` runtime end to end: the built `laika-host` over pipes, with
//! `scripts/mock-plugin.py` as the plugin; plus the runtime's library API
//! (tool-loop step, environment, stdout cap) against the same mock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

mod common;

use common::*;
use laika_core::runtime::Runtime;
use laika_protocol::error::ErrorCode;
use laika_protocol::llmcp::RequestPacket;
use laika_runtime::command::{
    CommandRuntime, Step, ToolLoopTask, ToolSpec, TranscriptEntry, INHERITED_ENV,
};
use laika_runtime::{CancelToken, ModelRequest};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn mock() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mock-plugin.py")
}

fn answer_task() -> Value {
    json!({"name": "web.answer", "args": {}})
}

const NIGHT_TRAINS: &str = "article-night-trains.observation.json";
/// The first sentence of that page's summary text, as the mock quotes it.
const FIRST_SENTENCE: &str = "Night trains are coming back to Europe";

/// A host whose runtime is `python3 mock-plugin.py <mode> <extra…>`.
fn plugin_host(mode: &str, extra: &[&str], timeout_ms: u64) -> Host {
    let mut args = vec![
        mock().display().to_string(),
        "--mode".to_string(),
        mode.to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    // A JSON array of strings is a valid TOML inline array.
    let config = format!(
        "[runtime]\nkind = \"command\"\ncommand = \"python3\"\nargs = {}\ntimeout_ms = {timeout_ms}\n",
        serde_json::to_string(&args).unwrap()
    );
    launch_plugin("python3", &config)
}

fn launch_plugin(command: &str, config: &str) -> Host {
    Host::launch(Launch {
        config,
        env: vec![
            ("LAIKA_RUNTIME".into(), "command".into()),
            ("LAIKA_COMMAND".into(), command.into()),
        ],
        ..Launch::default()
    })
}

fn failed_turn(host: &mut Host, id: &str) -> (String, String, Vec<Value>) {
    let events = host.turn(id, answer_task(), "Why?", observation(NIGHT_TRAINS));
    let err = one(&events, "error");
    let code = err["code"].as_str().unwrap().to_string();
    let message = err["message"].as_str().unwrap().to_string();
    assert_eq!(one(&events, "done")["status"], "failed", "{events:#?}");
    (code, message, events)
}

/// Whether a process is still running (a zombie is not: its orphaned
/// remains may wait for a reaper that this container may not have).
fn alive(pid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => false,
            Ok(stat) => {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !(state.starts_with('Z') || state.starts_with('X'))
            }
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        rustix::process::Pid::from_raw(pid)
            .map(|p| rustix::process::test_kill_process(p).is_ok())
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// Waits (bounded) for every pid to be gone; returns those still alive.
fn survivors(pids: &[i32]) -> Vec<i32> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids the mock wrote (itself, then its helper), once the file exists.
fn read_pids(path: &Path) -> Vec<i32> {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text.lines().map(|l| l.trim().parse().unwrap()).collect();
        }
        assert!(Instant::now() < end, "the plugin never started");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_quotes_first_sentence(events: &[Value]) {
    let a = one(events, "assistant");
    let citations = a["citations"].as_array().unwrap();
    assert_eq!(citations.len(), 1, "{a:#}");
    assert_eq!(citations[0]["quote"], FIRST_SENTENCE);
    assert_eq!(citations[0]["doc_id"], "doc:web:summary");
    assert_eq!(citations[0]["verified"], true);
    let text = laika_core::render::plain_text(&a["render"]);
    assert!(
        text.contains(&format!("The page begins: {FIRST_SENTENCE}")),
        "{text}"
    );
    let done = one(events, "done");
    assert_eq!(done["status"], "ok", "{events:#?}");
    assert_eq!(done["citations"]["verified"], 1);
}

#[test]
fn a_full_turn_is_answered_by_the_plugin_with_a_verified_citation() {
    let mut host = plugin_host("ok", &[], 30_000);
    let r = host.request(
        json!({"type": "hello", "id": "h", "protocol": {"name": "laika.wire", "version": 1}}),
    );
    assert_eq!(r["runtime"]["kind"], "command");
    assert_eq!(r["runtime"]["offline"], false);
    let events = host.turn(
        "t1",
        answer_task(),
        "When did it leave?",
        observation(NIGHT_TRAINS),
    );
    let kinds = kinds(&events);
    assert_eq!(kinds, ANSWERED_TURN);
    assert_quotes_first_sentence(&events);
    let text = laika_core::render::plain_text(&one(&events, "assistant")["render"]);
    assert!(text.contains("You asked: When did it leave?"), "{text}");
}

#[test]
fn an_answer_given_as_text_goes_through_the_same_validation() {
    let mut host = plugin_host("ok-text", &[], 30_000);
    let events = host.turn("t", answer_task(), "Why?", observation(NIGHT_TRAINS));
    assert_quotes_first_sentence(&events);
}

#[test]
fn a_plugin_error_field_is_a_runtime_error_with_its_message() {
    let mut host = plugin_host("error", &[], 30_000);
    let (code, message, _) = failed_turn(&mut host, "e");
    assert_eq!(code, "RUNTIME_ERROR");
    assert!(
        message.contains("reported an error: mock plugin: model not loaded (mode=error)"),
        "{message}"
    );
    assert!(message.contains("loading model weights"), "{message}");
}

#[test]
fn garbage_on_stdout_is_a_runtime_error_with_the_stderr_tail() {
    let mut host = plugin_host("garbage", &[], 30_000);
    let (code, message, _) = failed_turn(&mut host, "g");
    assert_eq!(code, "RUNTIME_ERROR");
    assert!(message.contains("invalid JSON"), "{message}");
    assert!(
        message.contains("stderr: mock: garbage mode, stderr tail marker"),
        "{message}"
    );
}

#[test]
fn a_crash_is_a_runtime_error() {
    let mut host = plugin_host("crash", &[], 30_000);
    let (code, message, _) = failed_turn(&mut host, "c");
    assert_eq!(code, "RUNTIME_ERROR");
    #[cfg(unix)]
    assert!(message.contains("killed by signal 6"), "{message}");
    assert!(message.contains("mock: crashing now"), "{message}");
}

#[test]
fn a_slow_plugin_times_out_and_its_whole_group_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let pid_arg = pid_file.display().to_string();
    let mut host = plugin_host("sleep", &["--pid-file", &pid_arg], 1500);
    let start = Instant::now();
    let (code, message, _) = failed_turn(&mut host, "s");
    // The mock sleeps 120 s: an answer well before means the host gave up.
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(code, "RUNTIME_TIMEOUT");
    assert!(message.contains("within 1500 ms"), "{message}");
    let pids = read_pids(&pid_file);
    assert_eq!(pids.len(), 2, "plugin and its helper");
    assert_eq!(survivors(&pids), Vec::<i32>::new());
}

#[test]
fn cancel_mid_call_kills_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let pid_arg = pid_file.display().to_string();
    let mut host = plugin_host("sleep", &["--pid-file", &pid_arg], 60_000);
    host.send(&turn_msg(
        "slow",
        answer_task(),
        "Why?",
        observation(NIGHT_TRAINS),
        None,
    ));
    let pids = read_pids(&pid_file);
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    let (r, events) = host.cancel("c1", "slow");
    assert_eq!(r["cancelled"], true);
    assert_eq!(one(&events, "error")["code"], "CANCELLED");
    assert_eq!(one(&events, "done")["status"], "cancelled");
    assert_eq!(survivors(&pids), Vec::<i32>::new());
}

#[test]
fn megabytes_of_stderr_do_not_deadlock() {
    let mut host = plugin_host("huge-stderr", &[], 120_000);
    let events = host.turn("h", answer_task(), "Why?", observation(NIGHT_TRAINS));
    assert_quotes_first_sentence(&events);
}

#[test]
fn a_missing_program_is_runtime_unavailable_naming_the_path() {
    let mut host = launch_plugin("/nonexistent/laika-plugin", "");
    let (code, message, _) = failed_turn(&mut host, "m");
    assert_eq!(code, "RUNTIME_UNAVAILABLE");
    assert!(message.contains("/nonexistent/laika-plugin"), "{message}");
    assert!(message.contains("not found"), "{message}");
}

// ---- the library API against the mock ----

fn runtime(mode: &str, extra: &[&str], env: BTreeMap<String, String>) -> CommandRuntime {
    runtime_of(PathBuf::from("python3"), mode, extra, env)
}

fn runtime_of(
    program: PathBuf,
    mode: &str,
    extra: &[&str],
    env: BTreeMap<String, String>,
) -> CommandRuntime {
    let mut args = vec![mock().display().to_string(), "--mode".into(), mode.into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    CommandRuntime::new(program, args, Duration::from_secs(60), env, None)
}

fn packet() -> RequestPacket {
    let obs = observation(NIGHT_TRAINS);
    serde_json::from_value(json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "req-1", "type": "request", "created_at": "2026-01-01T00:00:00.000Z",
        "conversation": {"id": "c-1", "turn": 3}, "sender": {"role": "agent"},
        "input": {"user_message": {"id": "u", "text": "What is new?"}, "task": {"name": "web.answer"}},
        "context": {"documents": [{
            "doc_id": "doc:web:summary", "kind": "web.observation.summary.v1",
            "trust": "untrusted", "source": {"browser": "chrome"}, "content": obs["summary"]
        }]},
        "output": {"format": "json"}
    }))
    .unwrap()
}

fn model_request() -> ModelRequest {
    ModelRequest {
        packet: packet(),
        response_schema: json!({"type": "object"}),
        system_prompt: "sys".into(),
        user_prompt: "user".into(),
        attempt: 0,
        feedback: None,
        max_output_tokens: None,
    }
}

#[test]
fn the_tool_loop_step_round_trips_through_the_plugin() {
    let rt = runtime("tool-call", &[], BTreeMap::new());
    let mut task = ToolLoopTask {
        question: "What is new?".into(),
        packet: packet(),
        tools: vec![ToolSpec {
            name: "fts_chunks".into(),
            description: "full-text search over the page's chunks".into(),
            args_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        }],
        transcript: vec![],
    };
    let cancel = CancelToken::default();
    let step = rt.tool_loop_step(&task, &cancel).unwrap();
    let Step::ToolCall { name, args } = step else {
        panic!("{step:?}")
    };
    assert_eq!(name, "fts_chunks");
    assert_eq!(args.get("query"), Some(&json!("What is new?")));
    task.transcript.push(TranscriptEntry {
        tool: name,
        args: Value::Object(args),
        result: json!({"hits": []}),
    });
    let Step::FinalAnswer(answer) = rt.tool_loop_step(&task, &cancel).unwrap() else {
        panic!("no final answer")
    };
    assert!(answer.answer.starts_with(FIRST_SENTENCE), "{answer:?}");
    assert!(answer.answer.contains("1 tool call(s): fts_chunks"));
    assert_eq!(answer.citations[0], "doc:web:summary");
    assert!(answer.answer.starts_with(answer.citations[1].as_str()));
}

#[test]
fn the_plugin_sees_only_the_inherited_few_and_the_configured_env() {
    let mut env = BTreeMap::new();
    env.insert("LAIKA_MOCK_FLAVOR".to_string(), "x".to_string());
    // `python3` may be a wrapper script (pyenv) that adds variables of its
    // own: ask for the interpreter itself.
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let rt = runtime_of(python, "env", &[], env);
    let reply = rt
        .complete(&model_request(), &CancelToken::default(), &mut |_| {})
        .unwrap();
    let names: Vec<String> = serde_json::from_str(&reply.text).unwrap();
    assert!(
        names.contains(&"LAIKA_MOCK_FLAVOR".to_string()),
        "{names:?}"
    );
    for name in &names {
        // Python may add its own (LC_CTYPE coercion); nothing else may leak.
        assert!(
            INHERITED_ENV.contains(&name.as_str()) || name == "LAIKA_MOCK_FLAVOR",
            "leaked {name} into the plugin: {names:?}"
        );
    }
    // cargo sets this for the test process: it must not reach the plugin.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(!names.contains(&"CARGO_MANIFEST_DIR".to_string()));
}

#[test]
fn stdout_up_to_the_cap_works_and_beyond_it_is_refused() {
    let big = (8 << 20).to_string();
    let rt = runtime("huge-stdout", &["--size", &big], BTreeMap::new());
    let mut streamed = String::new();
    let reply = rt
        .complete(&model_request(), &CancelToken::default(), &mut |t| {
            streamed.push_str(t)
        })
        .unwrap();
    assert_eq!(streamed, reply.text);
    let packet: Value = serde_json::from_str(&reply.text).unwrap();
    assert_eq!(packet["in_reply_to"]["request_id"], "req-1");
    assert_eq!(packet["conversation"]["turn"], 3);
    assert_eq!(reply.model, "command:python3");

    let huge = (20 << 20).to_string();
    let rt = runtime("huge-stdout", &["--size", &huge], BTreeMap::new());
    let err = rt
        .complete(&model_request(), &CancelToken::default(), &mut |_| {})
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::RuntimeError);
    assert!(err.message.contains("more than 16 MiB"), "{}", err.message);
}

#[test]
fn a_cancelled_token_never_starts_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let pid_arg = pid_file.display().to_string();
    let rt = runtime("ok", &["--pid-file", &pid_arg], BTreeMap::new());
    let cancel = CancelToken::default();
    cancel.cancel();
    let err = rt
        .complete(&model_request(), &cancel, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(!pid_file.exists());
}

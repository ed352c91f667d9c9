//! `scripted`: replays given raw model outputs, in order, one per call.
//!
//! For deterministic tests of everything after the model: broken JSON, schema
//! violations, retries, runtime errors, slow answers and cancellation. The
//! script is a JSON array (or `{"outputs": [...]}`) whose entries are
//! - a string: the raw model text;
//! - `{"output": "...", "delay_ms": N}`: the same, after a cancellable delay;
//! - `{"output": "...", "chunk_bytes": N, "chunk_delay_ms": M}`: streamed to
//!   `on_text` in pieces of about N bytes (cut on char boundaries), M ms
//!   apart, like a streaming model; optional `delay_ms` before the first
//!   piece and `finish_reason` (e.g. `"length"`) reported with the reply;
//! - `{"output": "...", "wait_for": "PATH", "within_ms": N}`: the same, once
//!   the file PATH exists (a test's signal that it saw what came before the
//!   answer); a `RUNTIME_TIMEOUT` when it does not appear within N ms;
//! - `{"error": {"code": "RUNTIME_UNAVAILABLE", "message": "..."}}`: a runtime failure.
//!
//! In outputs, `{{request_id}}`, `{{conversation_id}}`, `{{turn}}`, `{{new_id}}`,
//! `{{now}}`, `{{collection_id}}` (the collection a turn over a collection
//! is packed with, else empty) and `{{task_args}}` (the task's arguments as
//! JSON, escaped to sit inside a JSON string) are replaced, so a script can
//! hold valid response packets and tool calls, and show what it was asked.

use super::{config_error, CancelToken, ModelReply, ModelRequest, RuntimeInfo, SystemAmbient};
use laika_core::ambient::Ambient;
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// `[runtime]` with `kind = "scripted"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptedConfig {
    /// The JSON file of outputs to replay (required). Only from the file or
    /// `LAIKA_SCRIPT`, never from `config.set`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
}

impl ScriptedConfig {
    /// The field names above, for the config loader's key check.
    pub const KEYS: &'static [&'static str] = &["script"];

    pub fn script(&self) -> Result<&Path> {
        self.script.as_deref().ok_or_else(|| {
            config_error(
                "runtime.kind = \"scripted\" needs runtime.script (or LAIKA_SCRIPT): a JSON file of outputs",
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ScriptedError {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Step {
    Text(String),
    Streamed {
        output: String,
        chunk_bytes: usize,
        #[serde(default)]
        chunk_delay_ms: u64,
        #[serde(default)]
        delay_ms: u64,
        #[serde(default)]
        finish_reason: Option<String>,
    },
    Delayed {
        output: String,
        delay_ms: u64,
    },
    Gated {
        output: String,
        wait_for: PathBuf,
        within_ms: u64,
    },
    Fail {
        error: ScriptedError,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptFile {
    Steps(Vec<Step>),
    Wrapped { outputs: Vec<Step> },
}

pub struct Scripted {
    steps: Vec<Step>,
    next: AtomicUsize,
}

impl Scripted {
    pub fn new(steps: Vec<Step>) -> Self {
        Scripted {
            steps,
            next: AtomicUsize::new(0),
        }
    }

    pub fn from_json(text: &str) -> Result<Self> {
        let file: ScriptFile = serde_json::from_str(text).map_err(|e| {
            config_error(format!(
                "runtime.script: not a valid script (array of outputs): {e}"
            ))
        })?;
        Ok(Scripted::new(match file {
            ScriptFile::Steps(s) | ScriptFile::Wrapped { outputs: s } => s,
        }))
    }

    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            config_error(format!(
                "runtime.script: cannot read {}: {e}",
                path.display()
            ))
            .with_source(e)
        })?;
        Scripted::from_json(&text)
    }
}

fn fill(template: &str, request: &ModelRequest) -> String {
    let p = &request.packet;
    template
        .replace("{{request_id}}", &p.id)
        .replace("{{conversation_id}}", &p.conversation.id)
        .replace("{{turn}}", &p.conversation.turn.to_string())
        .replace("{{new_id}}", &SystemAmbient.new_id())
        .replace("{{now}}", &SystemAmbient.now_iso8601())
        .replace("{{collection_id}}", collection_id(request))
        .replace("{{task_args}}", &task_args(request))
}

/// The task's arguments as JSON, escaped for the inside of a JSON string.
fn task_args(request: &ModelRequest) -> String {
    let json = serde_json::Value::Object(request.packet.input.task.args.clone()).to_string();
    let quoted = serde_json::Value::String(json).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// The `collection_id` of the request's `collection.index.v1` document.
fn collection_id(request: &ModelRequest) -> &str {
    request
        .packet
        .context
        .documents
        .iter()
        .find(|d| d.kind == laika_core::collection::INDEX_DOC_TYPE)
        .and_then(|d| d.content.get("collection_id"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

/// Sleeps `ms`, or until cancelled: the thread parks, and a cancel unparks it.
fn cancellable_sleep(ms: u64, cancel: &CancelToken) -> Result<()> {
    let end = Instant::now() + Duration::from_millis(ms);
    let _watch = cancel.wake_on_cancel(Waker::from(Arc::new(Unpark(std::thread::current()))));
    loop {
        cancel.check()?;
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        // May return early (spurious wakeups): the loop checks again.
        std::thread::park_timeout(left);
    }
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// `text` in pieces of at least `bytes` bytes (never splitting a char).
fn pieces(text: &str, bytes: usize) -> impl Iterator<Item = &str> {
    let bytes = bytes.max(1);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = bytes.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

impl Runtime for Scripted {
    fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            kind: "scripted".into(),
            model: "scripted".into(),
            offline: true,
            label: "Scripted replies (testing)".into(),
        }
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        cancel.check()?;
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        let step = self.steps.get(i).ok_or_else(|| {
            Error::new(
                ErrorCode::RuntimeError,
                format!(
                    "scripted runtime has no output left ({} given)",
                    self.steps.len()
                ),
            )
        })?;
        let text = match step {
            Step::Text(t) => fill(t, request),
            Step::Streamed {
                output,
                chunk_bytes,
                chunk_delay_ms,
                delay_ms,
                finish_reason,
            } => {
                cancellable_sleep(*delay_ms, cancel)?;
                let text = fill(output, request);
                for (i, piece) in pieces(&text, *chunk_bytes).enumerate() {
                    if i > 0 {
                        cancellable_sleep(*chunk_delay_ms, cancel)?;
                    }
                    on_text(piece);
                }
                return Ok(ModelReply {
                    text,
                    model: "scripted".into(),
                    finish_reason: finish_reason.clone(),
                    ..ModelReply::default()
                });
            }
            Step::Delayed { output, delay_ms } => {
                cancellable_sleep(*delay_ms, cancel)?;
                fill(output, request)
            }
            Step::Gated {
                output,
                wait_for,
                within_ms,
            } => {
                let end = Instant::now() + Duration::from_millis(*within_ms);
                while !wait_for.exists() {
                    if Instant::now() >= end {
                        return Err(Error::new(
                            ErrorCode::RuntimeTimeout,
                            format!("{} did not appear in time", wait_for.display()),
                        ));
                    }
                    cancellable_sleep(20, cancel)?;
                }
                fill(output, request)
            }
            Step::Fail { error } => return Err(Error::new(error.code, error.message.clone())),
        };
        on_text(&text);
        Ok(ModelReply {
            text,
            model: "scripted".into(),
            ..ModelReply::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::llmcp::*;

    fn request() -> ModelRequest {
        ModelRequest {
            response_schema: serde_json::Value::Null,
            packet: RequestPacket::from_agent(
                "req-9".into(),
                "2026-01-01T00:00:00.000Z".into(),
                ConversationRef {
                    id: "c-9".into(),
                    turn: 4,
                },
                Input {
                    user_message: UserMessage {
                        id: "u".into(),
                        text: "q".into(),
                    },
                    task: Task {
                        name: TaskName::Answer,
                        args: Default::default(),
                    },
                },
                Context {
                    documents: vec![],
                    transcript: vec![],
                    conversation: None,
                    plan: None,
                },
            ),
            system_prompt: String::new(),
            user_prompt: String::new(),
            attempt: 0,
            feedback: None,
            max_output_tokens: None,
        }
    }

    #[test]
    fn replays_in_order_with_placeholders_then_runs_out() {
        let s = Scripted::from_json(
            r#"["{{request_id}}/{{conversation_id}}/{{turn}}", {"error": {"code": "RUNTIME_UNAVAILABLE", "message": "down"}}]"#,
        )
        .unwrap();
        let c = CancelToken::default();
        assert_eq!(
            s.complete(&request(), &c, &mut |_| {}).unwrap().text,
            "req-9/c-9/4"
        );
        assert_eq!(
            s.complete(&request(), &c, &mut |_| {})
                .err()
                .map(|e| e.code),
            Some(ErrorCode::RuntimeUnavailable)
        );
        assert_eq!(
            s.complete(&request(), &c, &mut |_| {})
                .err()
                .map(|e| e.code),
            Some(ErrorCode::RuntimeError)
        );
    }

    #[test]
    fn delay_is_cancellable() {
        let s = Scripted::from_json(r#"{"outputs": [{"output": "x", "delay_ms": 5000}]}"#).unwrap();
        let c = CancelToken::default();
        let c2 = c.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            c2.cancel();
        });
        let r = s.complete(&request(), &c, &mut |_| {});
        t.join().unwrap();
        assert_eq!(r.err().map(|e| e.code), Some(ErrorCode::Cancelled));
    }

    #[test]
    fn streamed_steps_arrive_in_pieces_on_char_boundaries() {
        let s = Scripted::from_json(
            r#"[{"output": "{{turn}}:ééé-abc", "chunk_bytes": 3, "chunk_delay_ms": 1, "finish_reason": "length"},
                {"output": "x", "delay_ms": 1}]"#,
        )
        .unwrap();
        let c = CancelToken::default();
        let mut got = Vec::new();
        let reply = s
            .complete(&request(), &c, &mut |p| got.push(p.to_string()))
            .unwrap();
        assert_eq!(got, ["4:é", "éé", "-ab", "c"]);
        assert_eq!(reply.text, "4:ééé-abc");
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        let mut calls = 0;
        let reply = s.complete(&request(), &c, &mut |_| calls += 1).unwrap();
        assert_eq!(
            (reply.text.as_str(), calls),
            ("x", 1),
            "delayed steps still work"
        );
        assert_eq!(reply.finish_reason, None);
    }

    #[test]
    fn bad_script_is_a_config_error() {
        assert_eq!(
            Scripted::from_json("{").err().map(|e| e.code),
            Some(ErrorCode::ConfigInvalid)
        );
    }
}

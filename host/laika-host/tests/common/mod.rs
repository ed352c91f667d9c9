//! Drives the real `laika-host` binary over pipes, as a browser would.
#![allow(dead_code)]

use laika_host::frame::{encode_frame, PartAssembler};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_laika-host");

/// The wire schema the extension also uses: every message a test sends or
/// receives is checked against it.
fn wire_schema() -> &'static jsonschema::Validator {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wire-protocol.schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    })
}

/// Panics with every schema error when `msg` is not a valid wire message.
pub fn assert_wire_valid(msg: &Value) {
    let errors: Vec<String> = wire_schema()
        .iter_errors(msg)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid wire message: {errors:#?}\n{}",
        laika_core::text::prefix_chars(&msg.to_string(), 2000)
    );
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

pub fn observation(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A raw frame read from the host's stdout.
pub enum Frame {
    Message(Value),
    /// Bytes that are not a valid frame: a host bug.
    Garbage(Vec<u8>),
}

pub struct Host {
    pub child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Frame>,
    pub dir: tempfile::TempDir,
    assembler: PartAssembler,
    /// Every frame size seen, to check the 1 MiB invariant.
    pub frame_sizes: std::sync::Arc<std::sync::Mutex<Vec<usize>>>,
    /// How long `recv` waits for the next message (a real model can be slower).
    pub recv_timeout: Duration,
}

#[derive(Default)]
pub struct Launch<'a> {
    pub args: Vec<String>,
    pub config: &'a str,
    pub env: Vec<(String, String)>,
    /// Reuse an existing data dir (history after restart).
    pub dir: Option<tempfile::TempDir>,
}

impl Host {
    pub fn start() -> Host {
        Host::launch(Launch::default())
    }

    pub fn scripted(outputs: &Value) -> Host {
        Host::scripted_with(outputs, "")
    }

    /// A scripted host with `config` as its config file.
    pub fn scripted_with(outputs: &Value, config: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(&script, outputs.to_string()).unwrap();
        Host::launch(Launch {
            env: vec![
                ("LAIKA_RUNTIME".into(), "scripted".into()),
                ("LAIKA_SCRIPT".into(), script.display().to_string()),
            ],
            config,
            dir: Some(dir),
            ..Launch::default()
        })
    }

    pub fn launch(launch: Launch<'_>) -> Host {
        Host::launch_with(launch, Command::new(BIN))
    }

    /// [`Host::launch`] with the process's umask set to `umask` (through
    /// `sh`, which then becomes the host).
    pub fn launch_under_umask(launch: Launch<'_>, umask: u32) -> Host {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("umask {umask:03o} && exec \"$0\" \"$@\""))
            .arg(BIN);
        Host::launch_with(launch, cmd)
    }

    fn launch_with(launch: Launch<'_>, mut cmd: Command) -> Host {
        let dir = launch.dir.unwrap_or_else(|| tempfile::tempdir().unwrap());
        let config = dir.path().join("config.toml");
        std::fs::write(&config, launch.config).unwrap();
        cmd.args(&launch.args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir.path())
            .env("LAIKA_CONFIG", &config)
            .env("LAIKA_DATA_DIR", dir.path().join("data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in &launch.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        let sizes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sizes2 = sizes.clone();
        std::thread::spawn(move || loop {
            let mut header = [0u8; 4];
            if stdout.read_exact(&mut header).is_err() {
                return;
            }
            let len = u32::from_ne_bytes(header) as usize;
            if len > 64 << 20 {
                let _ = tx.send(Frame::Garbage(header.to_vec()));
                return;
            }
            let mut body = vec![0u8; len];
            if stdout.read_exact(&mut body).is_err() {
                let _ = tx.send(Frame::Garbage(body));
                return;
            }
            sizes2.lock().unwrap().push(len);
            match serde_json::from_slice(&body) {
                Ok(v) => {
                    if tx.send(Frame::Message(v)).is_err() {
                        return;
                    }
                }
                Err(_) => {
                    let _ = tx.send(Frame::Garbage(body));
                    return;
                }
            }
        });
        Host {
            child,
            stdin,
            frames: rx,
            dir,
            assembler: PartAssembler::default(),
            frame_sizes: sizes,
            recv_timeout: Duration::from_secs(30),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = stdin.write_all(bytes);
            let _ = stdin.flush();
        }
    }

    pub fn send(&mut self, msg: &Value) {
        assert_wire_valid(msg);
        self.send_invalid(msg);
    }

    /// Sends a message the schema rejects, to test the host's own checks.
    pub fn send_invalid(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).unwrap();
        self.send_raw(&encode_frame(&body));
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next whole message (parts reassembled), or None after
    /// `recv_timeout` (30 s by default) / EOF.
    pub fn recv(&mut self) -> Option<Value> {
        loop {
            match self.frames.recv_timeout(self.recv_timeout) {
                Ok(Frame::Message(v)) => {
                    assert_wire_valid(&v);
                    if let Some(whole) = self.assembler.push(v).unwrap() {
                        assert_wire_valid(&whole);
                        return Some(whole);
                    }
                }
                Ok(Frame::Garbage(b)) => {
                    panic!("host wrote a non-frame: {:?}", String::from_utf8_lossy(&b))
                }
                Err(_) => return None,
            }
        }
    }

    /// Messages until one of `kind` replying to `id` (inclusive).
    pub fn until(&mut self, kind: &str, id: &str) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(m) = self.recv() {
            let stop = m["type"] == kind && m["reply_to"] == id;
            out.push(m);
            if stop {
                return out;
            }
        }
        panic!("no {kind} for {id}; got {out:#?}");
    }

    pub fn request(&mut self, msg: Value) -> Value {
        self.send(&msg);
        self.reply_to(&msg)
    }

    /// The reply to `msg`, already sent.
    pub fn reply_to(&mut self, msg: &Value) -> Value {
        let id = msg["id"].as_str().unwrap().to_string();
        let kind = format!("{}.result", msg["type"].as_str().unwrap());
        let msgs = self.until_any(&[&kind, "error", "pong"], &id);
        msgs.into_iter().last().unwrap()
    }

    pub fn until_any(&mut self, kinds: &[&str], id: &str) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(m) = self.recv() {
            let stop = kinds.iter().any(|k| m["type"] == *k) && m["reply_to"] == id;
            out.push(m);
            if stop {
                return out;
            }
        }
        panic!("no reply for {id}; got {out:#?}");
    }

    /// Cancels the running turn `target`: the reply to the cancel and the
    /// turn's events up to `done`. They may come in either order, since the
    /// turn wakes the moment its token fires.
    pub fn cancel(&mut self, id: &str, target: &str) -> (Value, Vec<Value>) {
        self.send(&json!({"type": "cancel", "id": id, "target": target}));
        self.cancel_reply(id, target)
    }

    /// What [`Host::cancel`] collects, for a cancel already sent.
    pub fn cancel_reply(&mut self, id: &str, target: &str) -> (Value, Vec<Value>) {
        let mut reply = None;
        let mut events: Vec<Value> = Vec::new();
        while reply.is_none() || !events.iter().any(|e| e["type"] == "done") {
            let m = self
                .recv()
                .unwrap_or_else(|| panic!("no cancel reply or done; got {events:#?}"));
            if m["reply_to"] == id {
                reply = Some(m);
            } else if m["reply_to"] == target {
                events.push(m);
            }
        }
        (reply.unwrap_or_default(), events)
    }

    /// Sends a turn and returns all its events, `done` last.
    pub fn turn(&mut self, id: &str, task: Value, text: &str, observation: Value) -> Vec<Value> {
        self.send(&turn_msg(id, task, text, observation, None));
        self.until("done", id)
    }

    /// [`Host::turn`] `id`, "Summarize" with `task`, on the night-trains
    /// article.
    pub fn summarize_article(&mut self, id: &str, task: Value) -> Vec<Value> {
        self.send_summarize_article(id, task);
        self.until("done", id)
    }

    /// Sends that turn without waiting for it.
    pub fn send_summarize_article(&mut self, id: &str, task: Value) {
        self.send(&turn_msg(
            id,
            task,
            "Summarize",
            observation("article-night-trains.observation.json"),
            None,
        ));
    }

    /// Waits for the process to exit and returns its code.
    pub fn wait(mut self) -> Option<i32> {
        self.close_stdin();
        for _ in 0..300 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        None
    }

    pub fn into_dir(mut self) -> tempfile::TempDir {
        self.close_stdin();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn turn_msg(
    id: &str,
    task: Value,
    text: &str,
    observation: Value,
    conversation: Option<&str>,
) -> Value {
    let mut m = json!({
        "type": "turn",
        "id": id,
        "message": {"text": text},
        "task": task,
        "tab": {"url": observation["summary"]["url"], "title": observation["summary"]["title"], "tab_id": 7, "browser": "chrome"},
        "observation": observation,
    });
    if let Some(c) = conversation {
        m["conversation_id"] = json!(c);
    }
    m
}

/// The events' types of a turn answered in one model call, in order.
pub const ANSWERED_TURN: [&str; 7] = [
    "session",
    "turn.started",
    "context_usage",
    "agent_state",
    "render_delta",
    "assistant",
    "done",
];

/// Each event's `type`, in order.
pub fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

pub fn one<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    let found = of_type(events, kind);
    assert_eq!(found.len(), 1, "expected one {kind} in {events:#?}");
    found[0]
}

/// A valid llmcp response packet as a scripted model would write it.
pub fn response_packet(render: Value, citations: Value, tool_calls: Value) -> Value {
    json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "{{new_id}}",
        "type": "response",
        "created_at": "{{now}}",
        "conversation": {"id": "{{conversation_id}}", "turn": 999_999},
        "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": "{{request_id}}"},
        "assistant": {"title": "Answer", "render": render, "citations": citations},
        "tool_calls": tool_calls
    })
}

/// Serializes a response packet to the raw text a model would emit, with the
/// turn placeholder (numbers can't hold `{{turn}}` in JSON).
pub fn raw(packet: &Value) -> String {
    packet.to_string().replace("999999", "{{turn}}")
}

pub fn paragraph(text: &str) -> Value {
    json!({"type": "doc", "children": [{"type": "paragraph", "children": [{"type": "text", "text": text}]}]})
}

/// A long page in the extension's shape: its first `head` bytes of `text`
/// as the summary's text, the rest in 4,000-char chunks.
pub fn page_in_chunks(title: &str, text: &str, head: usize) -> Value {
    let url = "https://example.com/minutes";
    let (head, rest) = text.split_at(head);
    let chunks: Vec<&str> = rest
        .as_bytes()
        .chunks(4_000)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let n = chunks.len();
    json!({
        "summary": {"doc_type": "web.observation.summary.v1", "url": url, "title": title, "text": head},
        "chunks": chunks.iter().enumerate().map(|(i, c)| json!({
            "doc_type": "web.observation.chunk.v1", "url": url,
            "title": title, "chunk_index": i + 1, "chunk_count": n, "text": c
        })).collect::<Vec<_>>()
    })
}

/// A model request's prompt tokens at the packer's window estimate
/// (`WINDOW_CHARS_PER_TOKEN`; real tokenizers give fewer for this text)
/// plus the answer's `max_tokens`: what must fit a runtime's window.
pub fn tokens_asked(body: &Value) -> usize {
    let chars: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().chars().count())
        .sum();
    chars.div_ceil(laika_core::pack::WINDOW_CHARS_PER_TOKEN)
        + body["max_tokens"].as_u64().unwrap() as usize
}

/// What the test-as-extension does with an `ask` call.
#[derive(Clone, Copy)]
pub enum User {
    Approves,
    Denies,
}

/// Runs the turn `msg` starts to its `done`, acting as the extension:
/// every browser call the host starts is reported `ok` (with `page` as the
/// new observation when given), every `ask` gets `user`'s answer. Returns
/// the turn's events and the replies to the test's own messages.
pub fn drive_turn(
    host: &mut Host,
    msg: &Value,
    user: User,
    page: Option<Value>,
) -> (Vec<Value>, Vec<Value>) {
    drive_turn_through(host, msg, user, &mut || page.clone())
}

/// [`drive_turn`], each browser call's new observation the next of
/// `next_page` (none when it answers `None`).
pub fn drive_turn_through(
    host: &mut Host,
    msg: &Value,
    user: User,
    next_page: &mut dyn FnMut() -> Option<Value>,
) -> (Vec<Value>, Vec<Value>) {
    let id = msg["id"].as_str().unwrap_or_default().to_owned();
    host.send(msg);
    let mut events: Vec<Value> = Vec::new();
    let mut replies = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    loop {
        let m = host
            .recv()
            .unwrap_or_else(|| panic!("no done for {id}; got {events:#?}"));
        if m["reply_to"] != id {
            replies.push(m);
            continue;
        }
        events.push(m.clone());
        match m["type"].as_str().unwrap_or_default() {
            "done" => return (events, replies),
            "tool_call" => calls.push(m),
            "agent_state" => {
                let call = calls.iter().find(|c| c["call_id"] == m["call_id"]).cloned();
                let Some(call) = call else { continue };
                match m["state"].as_str() {
                    Some("executing") if call["executor"] != "host" => {
                        let mut result = json!({
                            "type": "tool_result",
                            "id": format!("res-{}", call["call_id"].as_str().unwrap()),
                            "call_id": call["call_id"],
                            "status": "ok",
                            "result": {"message": format!("Ran {}", call["name"].as_str().unwrap())},
                        });
                        if let Some(p) = next_page() {
                            result["observation"] = p;
                        }
                        host.send(&result);
                    }
                    Some("waiting_for_approval") => host.send(&json!({
                        "type": "approval",
                        "id": format!("ap-{}", call["call_id"].as_str().unwrap()),
                        "call_id": call["call_id"],
                        "digest": call["digest"],
                        "approved": matches!(user, User::Approves),
                    })),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// A script: one response per step, each proposing `calls[i]`, then a plain
/// answer.
pub fn steps(calls: &[Value]) -> Value {
    let mut outputs: Vec<String> = calls
        .iter()
        .map(|c| raw(&response_packet(paragraph("On it."), json!([]), json!([c]))))
        .collect();
    outputs.push(raw(&response_packet(
        paragraph("All done."),
        json!([]),
        json!([]),
    )));
    json!(outputs)
}

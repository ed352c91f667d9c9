//! `command`: an external plugin program answers model calls (the Axiograph
//! plugin protocol, carrying `laika.llmcp`). The protocol as implemented is
//! documented in docs/plugin-protocol.md.
//!
//! One call = one process: the host writes ONE JSON request on the plugin's
//! stdin and closes it, then reads ONE JSON object from its stdout. The
//! object's `answer` is the model's raw text (a string, or the response
//! packet itself), which the turn validates like any other runtime's output;
//! an `error` field fails the call.
//!
//! Invariants:
//! - No shell: the program and its arguments go to `std::process::Command`
//!   as given. The child never inherits the host's stdin or stdout (they carry
//!   native-messaging frames): all three pipes are ours.
//! - The child's environment is built, not inherited: [`INHERITED_ENV`] plus
//!   the configured `runtime.env`. The host's secrets (`LAIKA_API_KEY`,
//!   cloud credentials …) never reach a plugin unless configured for it.
//! - stdin is written and stdout and stderr are drained on their own threads,
//!   so no pipe can fill up and deadlock either side. stdout is capped at
//!   [`MAX_STDOUT`]; only the last [`STDERR_TAIL`] bytes of stderr are kept,
//!   and shown only when the call fails.
//! - The plugin runs in its own process group (Unix). The whole group is
//!   killed on timeout, on cancel, on an oversized answer, and after the
//!   plugin exits (so helpers it left behind die with it). The leader is
//!   reaped only after the group kill, so the group id cannot have been reused.
//!   No path out of a call leaves the plugin running: a guard kills and reaps
//!   it on every return.
//! - The wait is driven by events on one channel, not by polling: the
//!   readers report overflow and end of pipe, a waiter thread reports the
//!   plugin's exit (Unix; elsewhere the exit is checked every [`POLL`]), and
//!   the cancel token's waker reports a cancel. A cancel or the timeout
//!   ends the call at once.

use super::{config_error, CancelToken, ModelReply, ModelRequest, RuntimeInfo};
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::llmcp::RequestPacket;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::task::{Wake, Waker};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The `protocol` value of every request (Axiograph's `<name>_llm_plugin_v<N>` form).
pub const PROTOCOL: &str = "laika_llm_plugin_v1";
/// Task kind of a model call for one turn.
pub const TASK_LLMCP_TURN: &str = "llmcp_turn";
/// Task kind of one tool-loop step (docs/plugin-protocol.md#tool-loop-steps-tool_loop_step).
pub const TASK_TOOL_LOOP_STEP: &str = "tool_loop_step";
/// A plugin writing more than this on stdout is killed.
pub const MAX_STDOUT: usize = 16 << 20;
/// How much of stderr's end is kept for the failure message.
pub const STDERR_TAIL: usize = 4 << 10;
/// The only host variables a plugin or an MCP server program inherits (when set): enough to find
/// programs, a home for caches, the locale, and a temp dir. Windows needs
/// `SYSTEMROOT` for almost any program to start.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERPROFILE",
];
/// How often the wait looks at the child where no thread can wait for its
/// exit without reaping it (not Unix).
#[cfg(not(unix))]
pub const POLL: Duration = Duration::from_millis(10);
/// After the plugin's group is gone, how long its pipes may stay open (held
/// by a process that left the group) before the host stops waiting for them.
const PIPE_GRACE: Duration = Duration::from_millis(500);
/// Longest `error` message taken from a plugin.
const MAX_ERROR_CHARS: usize = 2000;
/// Tool names: what a model can be expected to spell, nothing to escape.
const MAX_TOOL_NAME: usize = 64;
/// Default for `runtime.timeout_ms`: local models on a laptop can be slow.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Upper bound for `runtime.timeout_ms` (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// `[runtime]` with `kind = "command"` (see docs/plugin-protocol.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandConfig {
    /// The plugin program (required), an absolute path or a bare name looked
    /// up in PATH. Only from the file or `LAIKA_COMMAND`, never from
    /// `config.set` (the extension must not choose what the host runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<PathBuf>,
    /// The program's arguments, passed as is (no shell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// How long one call may take; default [`DEFAULT_TIMEOUT_MS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Extra environment variables for the plugin, which otherwise inherits
    /// only [`INHERITED_ENV`].
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Sent to the plugin as `model` and stored with each answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The plugin speaks the v3 tool loop: each step of a turn is a
    /// `tool_loop_step` (one tool call or a final answer) instead of an
    /// `llmcp_turn`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tool_loop: bool,
}

impl CommandConfig {
    /// The field names above, for the config loader's key check.
    pub const KEYS: &'static [&'static str] =
        &["command", "args", "timeout_ms", "env", "model", "tool_loop"];

    /// Every key's check. The program must resolve the same way whatever
    /// the host's working directory (the browser picks it).
    pub fn validate(&self) -> Result<()> {
        self.validate_as("runtime")
    }

    /// [`Self::validate`] for the same keys under another table (an
    /// integration's `integrations.<name>`), which the messages name.
    pub fn validate_as(&self, table: &str) -> Result<()> {
        self.program_as(table)?;
        if let Some(i) = self.args.iter().position(|a| a.contains('\0')) {
            return Err(config_error(format!(
                "{table}.args[{i}] contains a NUL byte"
            )));
        }
        if let Some(ms) = self.timeout_ms {
            if !(1..=MAX_TIMEOUT_MS).contains(&ms) {
                return Err(config_error(format!(
                    "{table}.timeout_ms must be 1..={MAX_TIMEOUT_MS}"
                )));
            }
        }
        for (key, value) in &self.env {
            let mut chars = key.chars();
            let valid_name = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid_name {
                return Err(config_error(format!(
                    "{table}.env.{key:?} is not a valid variable name (letters, digits, _)"
                )));
            }
            if value.contains('\0') {
                return Err(config_error(format!(
                    "{table}.env.{key} contains a NUL byte"
                )));
            }
        }
        Ok(())
    }

    /// The plugin program: set, and an absolute path or a bare name.
    pub fn program(&self) -> Result<&Path> {
        self.program_as("runtime")
    }

    fn program_as(&self, table: &str) -> Result<&Path> {
        let program = self.command.as_deref().ok_or_else(|| {
            config_error(if table == "runtime" {
                "runtime.kind = \"command\" needs runtime.command (or LAIKA_COMMAND): the plugin program".to_owned()
            } else {
                format!("{table} needs command: the plugin program")
            })
        })?;
        let text = program.to_string_lossy();
        let mut parts = program.components();
        let bare = matches!(parts.next(), Some(Component::Normal(_))) && parts.next().is_none();
        if text.is_empty() || text.contains('\0') || !(program.is_absolute() || bare) {
            return Err(config_error(format!(
                "{table}.command = {text:?} must be an absolute path or a program name found in PATH"
            )));
        }
        Ok(program)
    }
}

/// Runs a plugin program for each model call.
#[derive(Debug, Clone)]
pub struct CommandRuntime {
    program: PathBuf,
    args: Vec<String>,
    timeout: Duration,
    env: BTreeMap<String, String>,
    model: Option<String>,
    tool_loop: bool,
    /// What the plugin may write on stdout before it is killed.
    max_stdout: usize,
}

impl CommandRuntime {
    pub fn new(
        program: PathBuf,
        args: Vec<String>,
        timeout: Duration,
        env: BTreeMap<String, String>,
        model: Option<String>,
    ) -> Self {
        CommandRuntime {
            program,
            args,
            timeout,
            env,
            model,
            tool_loop: false,
            max_stdout: MAX_STDOUT,
        }
    }

    /// Kills the plugin once its stdout passes `bytes` (default
    /// [`MAX_STDOUT`]).
    pub fn with_max_stdout(mut self, bytes: usize) -> Self {
        self.max_stdout = bytes;
        self
    }

    pub fn from_config(config: &CommandConfig) -> Result<Self> {
        let mut runtime = CommandRuntime::new(
            config.program()?.to_path_buf(),
            config.args.clone(),
            Duration::from_millis(config.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
            config.env.clone(),
            config.model.clone(),
        );
        runtime.tool_loop = config.tool_loop;
        Ok(runtime)
    }

    /// One step of the v3 tool loop: the plugin answers either a tool
    /// call or a final answer. With `tool_loop` set, every model call of a
    /// turn is one (see [`Runtime::complete`]). A plugin `error` is
    /// `RUNTIME_ERROR`; a step that breaks the rules is `INVALID_MODEL_OUTPUT`.
    pub fn tool_loop_step(&self, task: &ToolLoopTask, cancel: &CancelToken) -> Result<Step> {
        let response = self.call(&tool_loop_request(task, self.model.as_deref()), cancel)?;
        match parse_step(&response, &task.tools)? {
            Step::Error(message) => Err(Error::new(
                ErrorCode::RuntimeError,
                format!("plugin {} reported an error: {message}", self.name()),
            )),
            step => Ok(step),
        }
    }

    /// The program as the user wrote it, for messages.
    fn name(&self) -> String {
        format!("{:?}", self.program.display().to_string())
    }

    fn model_id(&self) -> String {
        self.model.clone().unwrap_or_else(|| {
            let file = self
                .program
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("command:{file}")
        })
    }

    fn spawn(&self) -> Result<Child> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .env_clear()
            .envs(child_env(&|k| std::env::var_os(k), &self.env))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd.spawn().map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "not found".to_string(),
                std::io::ErrorKind::PermissionDenied => "not executable".to_string(),
                _ => e.to_string(),
            };
            Error::new(
                ErrorCode::RuntimeUnavailable,
                format!(
                    "cannot start plugin {}: {why} (runtime.command)",
                    self.name()
                ),
            )
            .with_source(e)
        })
    }

    /// Runs the plugin on `request` and returns its JSON response object, or
    /// the coded failure: `RUNTIME_UNAVAILABLE` (it cannot start),
    /// `RUNTIME_TIMEOUT` (killed at the timeout), `RUNTIME_ERROR` (a non-zero
    /// exit, an `error` field, too much output, anything but one JSON
    /// object), `CANCELLED`.
    pub fn call(&self, request: &Value, cancel: &CancelToken) -> Result<Value> {
        cancel.check()?;
        let body = serde_json::to_vec(request)
            .map_err(|e| Error::internal(format!("plugin request to JSON: {e}")))?;
        let mut plugin = Plugin::new(self.spawn()?);
        let started = Instant::now();
        let (stdin, stdout, stderr) = match (
            plugin.child.stdin.take(),
            plugin.child.stdout.take(),
            plugin.child.stderr.take(),
        ) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => return Err(Error::internal("plugin pipes were not created")),
        };
        // A plugin may exit without reading its input: the write then fails
        // with a broken pipe, which is not an error in itself.
        spawn_named("laika-plugin-stdin", move || {
            let mut stdin = stdin;
            let _ = stdin.write_all(&body);
        })?;
        let (tx, rx) = mpsc::channel();
        let max_stdout = self.max_stdout;
        let out = {
            let tx = tx.clone();
            spawn_named("laika-plugin-stdout", move || {
                let bytes = read_capped(stdout, max_stdout, || {
                    let _ = tx.send(Event::Overflow);
                });
                let _ = tx.send(Event::StdoutClosed);
                bytes
            })?
        };
        let err = {
            let tx = tx.clone();
            spawn_named("laika-plugin-stderr", move || {
                let tail = read_tail(stderr, STDERR_TAIL);
                let _ = tx.send(Event::StderrClosed);
                tail
            })?
        };
        #[cfg(unix)]
        watch_exit(&plugin.child, tx.clone())?;
        let _on_cancel = cancel.wake_on_cancel(Waker::from(Arc::new(SendCancelled(tx))));
        let mut watch = Watch::new(rx);

        let deadline = started + self.timeout;
        let unwatchable = |e: std::io::Error| {
            Error::new(
                ErrorCode::RuntimeError,
                format!("cannot watch plugin {}: {e}", self.name()),
            )
            .with_source(e)
        };
        let ending = loop {
            if watch.cancelled {
                break Ending::Cancelled;
            }
            if watch.overflow {
                break Ending::Overflow;
            }
            if let Some(exit) = watch.exited.take() {
                exit.map_err(unwatchable)?;
                break Ending::Exited;
            }
            let now = Instant::now();
            if now >= deadline {
                break Ending::TimedOut;
            }
            #[cfg(not(unix))]
            {
                if plugin.exited().map_err(unwatchable)? {
                    break Ending::Exited;
                }
                watch.next(deadline.min(now + POLL));
            }
            #[cfg(unix)]
            watch.next(deadline);
        };
        let status = plugin.finish();
        if ending == Ending::Cancelled {
            return Err(Error::cancelled());
        }
        let grace = Instant::now() + PIPE_GRACE;
        let tail = watch
            .until(grace, |w| w.stderr_closed)
            .then(|| err.join().ok())
            .flatten()
            .map(|(bytes, total)| describe_stderr(&bytes, total))
            .unwrap_or_default();
        let fail = |code: ErrorCode, what: String| {
            Error::new(code, format!("plugin {} {what}{tail}", self.name()))
        };
        let overflowed = || {
            fail(
                ErrorCode::RuntimeError,
                format!(
                    "wrote more than {} on stdout and was killed",
                    if self.max_stdout >= 1 << 20 {
                        format!("{} MiB", self.max_stdout >> 20)
                    } else {
                        format!("{} KiB", self.max_stdout >> 10)
                    }
                ),
            )
        };
        match ending {
            Ending::TimedOut => {
                return Err(fail(
                    ErrorCode::RuntimeTimeout,
                    format!(
                        "did not answer within {} ms and was killed",
                        self.timeout.as_millis()
                    ),
                ))
            }
            Ending::Overflow => return Err(overflowed()),
            Ending::Cancelled | Ending::Exited => {}
        }
        cancel.check()?;
        let stdout = watch
            .until(grace, |w| w.stdout_closed)
            .then(|| out.join().ok())
            .flatten();
        cancel.check()?;
        // The plugin may have exited with the excess still in the pipe.
        if watch.overflow {
            return Err(overflowed());
        }
        let status = status.map_err(|e| {
            fail(
                ErrorCode::RuntimeError,
                format!("could not be waited for: {e}"),
            )
            .with_source(e)
        })?;
        let parsed = match stdout {
            None => Err("exited but its stdout stayed open (a process it started holds it)".into()),
            Some(bytes) => parse_response(&bytes),
        };
        // A present `error` fails the call whatever else happened.
        if let Ok(response) = &parsed {
            if let Some(message) = error_field(response) {
                return Err(fail(
                    ErrorCode::RuntimeError,
                    format!("reported an error: {message}"),
                ));
            }
        }
        if !status.success() {
            return Err(fail(ErrorCode::RuntimeError, describe_status(status)));
        }
        parsed.map_err(|what| fail(ErrorCode::RuntimeError, what))
    }
}

impl Runtime for CommandRuntime {
    fn info(&self) -> RuntimeInfo {
        let file = self
            .program
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        RuntimeInfo {
            kind: "command".into(),
            model: self.model_id(),
            // The plugin may well call a remote API: the host cannot tell.
            offline: false,
            label: format!("Plugin command ({file})"),
        }
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        if self.tool_loop {
            let step = self.tool_loop_step(&ToolLoopTask::for_request(request), cancel)?;
            let text = step_response(&step, &request.packet).to_string();
            on_text(&text);
            return Ok(ModelReply {
                text,
                model: self.model_id(),
                ..ModelReply::default()
            });
        }
        let response = self.call(&turn_request(request, self.model.as_deref()), cancel)?;
        if let Some(notes) = response.get("notes") {
            tracing::debug!(plugin = %self.name(), %notes, "plugin notes");
        }
        let text = match response.get("answer") {
            Some(Value::String(text)) => text.clone(),
            Some(answer @ Value::Object(_)) => answer.to_string(),
            None | Some(Value::Null) => {
                return Err(Error::new(
                    ErrorCode::RuntimeError,
                    format!(
                        "plugin {} answered neither \"answer\" nor \"error\"",
                        self.name()
                    ),
                ))
            }
            Some(_) => {
                return Err(Error::new(
                    ErrorCode::RuntimeError,
                    format!(
                        "plugin {}: \"answer\" must be a string or an object",
                        self.name()
                    ),
                ))
            }
        };
        on_text(&text);
        Ok(ModelReply {
            text,
            model: self.model_id(),
            ..ModelReply::default()
        })
    }
}

/// What the wait for a plugin hears about, from the threads around it.
#[derive(Debug)]
enum Event {
    Cancelled,
    /// stdout went over [`MAX_STDOUT`].
    Overflow,
    /// The plugin exited (not reaped yet), or waiting for it failed.
    Exited(std::io::Result<()>),
    StdoutClosed,
    StderrClosed,
}

/// The events of one call so far.
struct Watch {
    events: Receiver<Event>,
    cancelled: bool,
    overflow: bool,
    exited: Option<std::io::Result<()>>,
    stdout_closed: bool,
    stderr_closed: bool,
}

impl Watch {
    fn new(events: Receiver<Event>) -> Watch {
        Watch {
            events,
            cancelled: false,
            overflow: false,
            exited: None,
            stdout_closed: false,
            stderr_closed: false,
        }
    }

    /// Records the next event, waiting for it until `until`; false when
    /// none came.
    fn next(&mut self, until: Instant) -> bool {
        match self
            .events
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(Event::Cancelled) => self.cancelled = true,
            Ok(Event::Overflow) => self.overflow = true,
            Ok(Event::Exited(result)) => self.exited = Some(result),
            Ok(Event::StdoutClosed) => self.stdout_closed = true,
            Ok(Event::StderrClosed) => self.stderr_closed = true,
            Err(RecvTimeoutError::Timeout) => return false,
            // Unreachable while the call holds the cancel waker's sender;
            // ending the wait keeps it from spinning should that change.
            Err(RecvTimeoutError::Disconnected) => {
                self.exited = Some(Err(std::io::Error::other("the plugin's watchers are gone")));
            }
        }
        true
    }

    /// Waits until `done` holds, `until` passes or the call is cancelled;
    /// whether `done` holds.
    fn until(&mut self, until: Instant, done: impl Fn(&Watch) -> bool) -> bool {
        while !done(self) {
            if self.cancelled || !self.next(until) {
                return false;
            }
        }
        true
    }
}

/// The cancel token's waker for a call: it posts [`Event::Cancelled`].
struct SendCancelled(Sender<Event>);

impl Wake for SendCancelled {
    fn wake(self: Arc<Self>) {
        let _ = self.0.send(Event::Cancelled);
    }
}

/// Reports the plugin's exit without reaping it (a zombie leader keeps its
/// process group id from being reused until [`Plugin::finish`] kills the
/// group and reaps it). The thread ends when the plugin does, which every
/// call ensures.
#[cfg(unix)]
fn watch_exit(child: &Child, events: Sender<Event>) -> Result<()> {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let pid = Pid::from_child(child);
    spawn_named("laika-plugin-wait", move || {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        let result = loop {
            match waitid(WaitId::Pid(pid), options) {
                Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => break Ok(()),
                Err(e) => break Err(e.into()),
            }
        };
        let _ = events.send(Event::Exited(result));
    })
    .map(drop)
}

fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| Error::internal(format!("cannot start a thread ({name})")).with_source(e))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited,
    Cancelled,
    TimedOut,
    Overflow,
}

/// The running plugin; dropping it kills its group and reaps it.
struct Plugin {
    child: Child,
    reaped: bool,
    /// Where `exited` had to reap (non-Unix), the status it got.
    status: Option<ExitStatus>,
}

impl Plugin {
    fn new(child: Child) -> Self {
        Plugin {
            child,
            reaped: false,
            status: None,
        }
    }

    /// Whether the plugin has exited, reaping it (there is no process group
    /// id to protect where this is used).
    #[cfg(not(unix))]
    fn exited(&mut self) -> std::io::Result<bool> {
        let status = self.child.try_wait()?;
        if status.is_some() {
            self.reaped = true;
            self.status = status;
        }
        Ok(status.is_some())
    }

    fn kill_all(&mut self) {
        if self.reaped {
            return;
        }
        #[cfg(unix)]
        {
            use rustix::process::{kill_process_group, Pid, Signal};
            let pid = Pid::from_child(&self.child);
            // `kill(-1)` would signal every process we may signal: never.
            if pid != Pid::INIT {
                let _ = kill_process_group(pid, Signal::KILL);
            }
        }
        let _ = self.child.kill();
    }

    /// Kills what is left of the plugin's group, then reaps the plugin.
    fn finish(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        self.kill_all();
        let status = self.child.wait();
        self.reaped = true;
        if let Ok(s) = &status {
            self.status = Some(*s);
        }
        status
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.finish();
        }
    }
}

/// The plugin's environment: the inherited few, then the configured ones
/// (which win).
pub fn child_env(
    host: &dyn Fn(&str) -> Option<OsString>,
    configured: &BTreeMap<String, String>,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = INHERITED_ENV
        .iter()
        .filter_map(|k| host(k).map(|v| (OsString::from(k), v)))
        .collect();
    for (k, v) in configured {
        env.insert(OsString::from(k), OsString::from(v));
    }
    env.into_iter().collect()
}

/// Reads everything up to `cap` bytes; beyond it, calls `overflow` and stops.
fn read_capped(mut from: impl Read, cap: usize, overflow: impl FnOnce()) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => {
                if out.len() + n > cap {
                    overflow();
                    return out;
                }
                out.extend_from_slice(buf.get(..n).unwrap_or_default());
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return out,
        }
    }
}

/// Drains `from` to the end, keeping only its last `keep` bytes; returns
/// them and the total byte count.
fn read_tail(mut from: impl Read, keep: usize) -> (Vec<u8>, usize) {
    let mut tail = Vec::new();
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total = total.saturating_add(n);
                tail.extend_from_slice(buf.get(..n).unwrap_or_default());
                if tail.len() > keep.saturating_mul(2) {
                    tail.drain(..tail.len() - keep);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if tail.len() > keep {
        tail.drain(..tail.len() - keep);
    }
    (tail, total)
}

/// Plugin-written text made safe for one message line: control characters
/// (ANSI escapes included) become spaces, length is capped.
fn clean(text: &str, max_chars: usize) -> String {
    let out: String = laika_core::text::clip(text, max_chars)
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    out.trim().to_string()
}

/// `"; stderr (last N bytes of M): …"`, or nothing when stderr was empty.
fn describe_stderr(tail: &[u8], total: usize) -> String {
    // The cut may fall inside a UTF-8 sequence: skip its continuation bytes.
    let start = tail
        .iter()
        .position(|b| b & 0xC0 != 0x80)
        .unwrap_or(tail.len());
    let text = String::from_utf8_lossy(tail.get(start..).unwrap_or_default());
    let text = clean(&text, STDERR_TAIL);
    if text.is_empty() {
        return String::new();
    }
    if total > tail.len() {
        format!("; stderr (last {} of {total} bytes): {text}", tail.len())
    } else {
        format!("; stderr: {text}")
    }
}

fn describe_status(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended abnormally ({status})"),
    }
}

/// stdout must hold exactly one JSON object (whitespace around it is fine).
fn parse_response(stdout: &[u8]) -> std::result::Result<Value, String> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err("wrote no JSON on stdout".into());
    }
    match serde_json::from_slice::<Value>(stdout) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("wrote JSON on stdout that is not an object".into()),
        Err(e) => Err(format!("wrote invalid JSON on stdout ({e})")),
    }
}

/// A present, non-null `error` fails the request (docs/plugin-protocol.md#response).
fn error_field(response: &Value) -> Option<String> {
    match response.get("error")? {
        Value::Null => None,
        Value::String(s) if !s.trim().is_empty() => Some(clean(s, MAX_ERROR_CHARS)),
        Value::String(_) => Some("(empty error message)".into()),
        other => Some(clean(&other.to_string(), MAX_ERROR_CHARS)),
    }
}

/// The request for one model call of a turn.
pub fn turn_request(request: &ModelRequest, model: Option<&str>) -> Value {
    let feedback = request.feedback.as_ref().map(|f| {
        json!({
            "previous_output": f.previous_output,
            "errors": f.errors,
        })
    });
    envelope(
        model,
        json!({
            "kind": TASK_LLMCP_TURN,
            "question": request.packet.input.user_message.text,
            "packet": request.packet,
            "system_prompt": request.system_prompt,
            "user_prompt": request.user_prompt,
            "response_schema": request.response_schema,
            "attempt": request.attempt,
            "feedback": feedback,
        }),
    )
}

fn envelope(model: Option<&str>, task: Value) -> Value {
    let mut request = json!({"protocol": PROTOCOL, "task": task});
    if let (Some(model), Some(obj)) = (model, request.as_object_mut()) {
        obj.insert("model".into(), json!(model));
    }
    request
}

/// A tool the plugin may call in the tool loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the call's `args`.
    pub args_schema: Value,
}

/// One executed call, fed back on the next step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptEntry {
    pub tool: String,
    pub args: Value,
    pub result: Value,
}

/// What one tool-loop step is asked.
#[derive(Debug, Clone)]
pub struct ToolLoopTask {
    pub question: String,
    /// The llmcp request packet: the context the answer must come from.
    pub packet: RequestPacket,
    pub tools: Vec<ToolSpec>,
    pub transcript: Vec<TranscriptEntry>,
}

impl ToolLoopTask {
    /// The step a turn's model call stands for: its question and context,
    /// the registry's offered tools, and the turn's calls so far with their
    /// outcomes (from the packet's transcript).
    pub fn for_request(request: &ModelRequest) -> ToolLoopTask {
        let mut packet = request.packet.clone();
        let done = std::mem::take(&mut packet.context.transcript);
        ToolLoopTask {
            question: packet.input.user_message.text.clone(),
            tools: laika_core::tools::offered()
                .map(|t| ToolSpec {
                    name: t.name.to_string(),
                    description: t.description.to_string(),
                    args_schema: t.arguments.clone(),
                })
                .collect(),
            transcript: done
                .into_iter()
                .map(|p| TranscriptEntry {
                    tool: p.tool_call.name,
                    args: p.tool_call.arguments,
                    result: serde_json::to_value(&p.outcome).unwrap_or(Value::Null),
                })
                .collect(),
            packet,
        }
    }
}

/// A tool-loop step as the llmcp response packet the turn validates: a
/// tool call becomes `tool_calls: [call]`, a final answer a render of its
/// paragraphs. Citations that are quotes are cited against the page summary
/// (and verified like any other); a bare id that names a document sent
/// (`doc:web:chunk:3`, or a chunk by its number: `DocChunk#3`) is resolved
/// to that document, quoting its sentence that shares most words with the
/// answer; an id naming nothing sent is dropped.
pub fn step_response(step: &Step, packet: &RequestPacket) -> Value {
    let doc_ids: Vec<&str> = packet
        .context
        .documents
        .iter()
        .map(|d| d.doc_id.as_str())
        .collect();
    let summary = doc_ids.first().copied().unwrap_or("doc:web:summary");
    let cite = |answer: &str, citation: &str| -> Option<Value> {
        match bare_id_document(citation, packet) {
            Some(doc) => closest_sentence(&doc.content, answer)
                .map(|quote| json!({"doc_id": doc.doc_id, "quote": quote})),
            None if looks_like_an_id(citation) => None,
            None => Some(json!({"doc_id": summary, "quote": citation})),
        }
    };
    let paragraph =
        |text: &str| json!({"type": "paragraph", "children": [{"type": "text", "text": text}]});
    let (title, blocks, citations, calls) = match step {
        Step::ToolCall { name, args } => (
            String::new(),
            vec![paragraph(&format!("Using {name}."))],
            Vec::new(),
            vec![json!({"name": name, "arguments": args})],
        ),
        Step::FinalAnswer(answer) => (
            String::new(),
            answer
                .answer
                .split("\n\n")
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(paragraph)
                .collect(),
            answer
                .citations
                .iter()
                .filter_map(|c| cite(&answer.answer, c))
                .collect(),
            Vec::new(),
        ),
        Step::Error(message) => (
            String::new(),
            vec![paragraph(message)],
            Vec::new(),
            Vec::new(),
        ),
    };
    json!({
        "protocol": {"name": laika_protocol::llmcp::PROTOCOL_NAME, "version": laika_protocol::llmcp::PROTOCOL_VERSION},
        "id": laika_core::ambient::Ambient::new_id(&crate::SystemAmbient),
        "type": "response",
        "created_at": laika_core::ambient::Ambient::now_iso8601(&crate::SystemAmbient),
        "conversation": packet.conversation,
        "sender": {"role": "assistant"},
        "in_reply_to": {"request_id": packet.id},
        "assistant": {"title": title, "render": {"type": "doc", "children": blocks}, "citations": citations},
        "tool_calls": calls,
    })
}

/// The document a bare citation id names: a document id sent, or a chunk
/// sent, by the number that ends the id (`DocChunk#128`, `chunk:128`).
fn bare_id_document<'p>(
    citation: &str,
    packet: &'p RequestPacket,
) -> Option<&'p laika_protocol::llmcp::Document> {
    let documents = &packet.context.documents;
    let citation = citation.trim();
    if let Some(doc) = documents.iter().find(|d| d.doc_id == citation) {
        return Some(doc);
    }
    if !looks_like_an_id(citation) {
        return None;
    }
    let number: String = citation
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let number = number.parse::<u64>().ok()?;
    documents
        .iter()
        .find(|d| d.doc_id == format!("doc:web:chunk:{number}"))
}

/// An id rather than a quote: one token, no spaces, with a digit or a
/// separator (`DocChunk#128`, `doc_proto_api_0`, `doc:web:summary`).
fn looks_like_an_id(citation: &str) -> bool {
    let c = citation.trim();
    !c.is_empty()
        && c.len() <= 128
        && !c.contains(char::is_whitespace)
        && c.contains(|ch: char| ch.is_ascii_digit() || matches!(ch, '#' | ':' | '_'))
}

/// The sentence of a document's text that shares most words (3 letters or
/// more) with `answer`; `None` when none shares any.
fn closest_sentence(content: &Value, answer: &str) -> Option<String> {
    fn words(text: &str) -> std::collections::HashSet<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect()
    }
    fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
        match value {
            Value::String(s) => out.push(s),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(fields) => fields.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let wanted = words(answer);
    let mut texts = Vec::new();
    strings(content, &mut texts);
    texts
        .iter()
        .flat_map(|t| t.split_inclusive(['.', '!', '?', '\n']))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| (words(s).intersection(&wanted).count(), s))
        .filter(|(shared, _)| *shared > 0)
        // The first of the best: `max_by_key` keeps the last.
        .fold(None, |best: Option<(usize, &str)>, next| match best {
            Some(b) if b.0 >= next.0 => Some(b),
            _ => Some(next),
        })
        .map(|(_, s)| s.to_string())
}

/// The request for one tool-loop step: Axiograph's v3 task as its
/// specification writes it (`question`, `schema`, `tools`, `transcript`),
/// with the llmcp packet beside it as `packet`. Laika has no ontology, so
/// `schema` holds what stands for one: the document kinds as `types`, the
/// document ids a citation may name as `contexts`, `laika.llmcp` as the
/// schema; the fields it has no use for are left out (the specification
/// tells plugins to treat `schema` as hints and to expect missing fields).
pub fn tool_loop_request(task: &ToolLoopTask, model: Option<&str>) -> Value {
    let documents = &task.packet.context.documents;
    let mut types: Vec<&str> = Vec::new();
    for d in documents {
        if !types.contains(&d.kind.as_str()) {
            types.push(&d.kind);
        }
    }
    let contexts: Vec<&str> = documents.iter().map(|d| d.doc_id.as_str()).collect();
    envelope(
        model,
        json!({
            "kind": TASK_TOOL_LOOP_STEP,
            "question": task.question,
            "schema": {
                "types": types,
                "schemas": [laika_protocol::llmcp::PROTOCOL_NAME],
                "contexts": contexts,
            },
            "packet": task.packet,
            "tools": task.tools,
            "transcript": task.transcript,
        }),
    )
}

/// A tool-loop step's final answer (v3 `final_answer`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FinalAnswer {
    pub answer: String,
    pub citations: Vec<String>,
    pub queries: Vec<String>,
    pub notes: Vec<String>,
}

/// One tool-loop step as the plugin answered it.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run this tool (one of those offered) with these arguments.
    ToolCall {
        name: String,
        args: Map<String, Value>,
    },
    FinalAnswer(FinalAnswer),
    /// The plugin failed (a present `error` fails the request).
    Error(String),
}

fn step_error(path: &str, message: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::InvalidModelOutput,
        format!("tool-loop step {path}: {message}"),
    )
}

/// Rejects keys outside `allowed` in `obj`, naming the first.
fn only_keys(obj: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(step_error(
            &format!("{path}/{k}"),
            format!("unknown field; allowed: {}", allowed.join(", ")),
        )),
        None => Ok(()),
    }
}

fn strings(value: Option<&Value>, path: &str) -> Result<Vec<String>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| step_error(&format!("{path}/{i}"), "must be a string"))
            })
            .collect(),
        Some(_) => Err(step_error(path, "must be an array of strings")),
    }
}

/// Parses one tool-loop step strictly: an object with `error` (which wins,
/// docs/plugin-protocol.md), or else exactly one of `tool_call` and
/// `final_answer`, plus optional `notes`; no other fields. A tool call must
/// name an offered tool. Errors are `INVALID_MODEL_OUTPUT` with the JSON path
/// of the problem.
pub fn parse_step(value: &Value, tools: &[ToolSpec]) -> Result<Step> {
    let obj = value
        .as_object()
        .ok_or_else(|| step_error("", "must be a JSON object"))?;
    only_keys(obj, &["tool_call", "final_answer", "error", "notes"], "")?;
    if let Some(message) = error_field(value) {
        return Ok(Step::Error(message));
    }
    strings(obj.get("notes"), "/notes")?;
    let present = |k: &str| obj.get(k).filter(|v| !v.is_null());
    match (present("tool_call"), present("final_answer")) {
        (Some(call), None) => parse_tool_call(call, tools),
        (None, Some(answer)) => parse_final_answer(answer),
        (Some(_), Some(_)) => Err(step_error(
            "",
            "has both tool_call and final_answer; give exactly one",
        )),
        (None, None) => Err(step_error(
            "",
            "needs one of tool_call, final_answer or error",
        )),
    }
}

fn parse_tool_call(call: &Value, tools: &[ToolSpec]) -> Result<Step> {
    let obj = call
        .as_object()
        .ok_or_else(|| step_error("/tool_call", "must be an object"))?;
    only_keys(obj, &["name", "args"], "/tool_call")?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| step_error("/tool_call/name", "must be a string"))?;
    let well_formed = !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !well_formed {
        return Err(step_error(
            "/tool_call/name",
            format!(
                "{} is not a tool name (1..={MAX_TOOL_NAME} of A-Z a-z 0-9 _ . -)",
                clean(&json!(name).to_string(), 80)
            ),
        ));
    }
    if !tools.iter().any(|t| t.name == name) {
        let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(step_error(
            "/tool_call/name",
            format!("{name:?} was not offered; tools: [{}]", offered.join(", ")),
        ));
    }
    let args = match obj.get("args") {
        None => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => return Err(step_error("/tool_call/args", "must be an object")),
    };
    Ok(Step::ToolCall {
        name: name.to_string(),
        args,
    })
}

fn parse_final_answer(answer: &Value) -> Result<Step> {
    let obj = answer
        .as_object()
        .ok_or_else(|| step_error("/final_answer", "must be an object"))?;
    only_keys(
        obj,
        &["answer", "citations", "queries", "notes"],
        "/final_answer",
    )?;
    let text = obj
        .get("answer")
        .and_then(Value::as_str)
        .ok_or_else(|| step_error("/final_answer/answer", "must be a string"))?;
    if text.trim().is_empty() {
        return Err(step_error("/final_answer/answer", "must not be empty"));
    }
    Ok(Step::FinalAnswer(FinalAnswer {
        answer: text.to_string(),
        citations: strings(obj.get("citations"), "/final_answer/citations")?,
        queries: strings(obj.get("queries"), "/final_answer/queries")?,
        notes: strings(obj.get("notes"), "/final_answer/notes")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetryFeedback;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "fts_chunks".into(),
            description: "search the page".into(),
            args_schema: json!({"type": "object"}),
        }]
    }

    fn err_message(v: Value) -> String {
        match parse_step(&v, &tools()) {
            Err(e) => {
                assert_eq!(e.code, ErrorCode::InvalidModelOutput, "{e}");
                e.message
            }
            Ok(step) => panic!("accepted {v}: {step:?}"),
        }
    }

    #[test]
    fn tool_call_and_final_answer_steps_parse() {
        let step = parse_step(
            &json!({"tool_call": {"name": "fts_chunks", "args": {"query": "trains"}}}),
            &tools(),
        )
        .unwrap();
        let Step::ToolCall { name, args } = step else {
            panic!("{step:?}")
        };
        assert_eq!(name, "fts_chunks");
        assert_eq!(args.get("query"), Some(&json!("trains")));
        // A tool without arguments may leave `args` out.
        assert_eq!(
            parse_step(&json!({"tool_call": {"name": "fts_chunks"}}), &tools()).unwrap(),
            Step::ToolCall {
                name: "fts_chunks".into(),
                args: Map::new()
            }
        );
        let step = parse_step(
            &json!({"final_answer": {"answer": "Two RPCs.", "citations": ["DocChunk#128"], "queries": ["select ?x"], "notes": ["n"]}, "notes": ["top"]}),
            &tools(),
        )
        .unwrap();
        assert_eq!(
            step,
            Step::FinalAnswer(FinalAnswer {
                answer: "Two RPCs.".into(),
                citations: vec!["DocChunk#128".into()],
                queries: vec!["select ?x".into()],
                notes: vec!["n".into()],
            })
        );
    }

    #[test]
    fn error_wins_and_null_error_is_absent() {
        assert_eq!(
            parse_step(
                &json!({"error": "model \u{1b}[31mdown", "tool_call": {"name": "x"}}),
                &tools()
            )
            .unwrap(),
            Step::Error("model  [31mdown".into())
        );
        assert_eq!(
            parse_step(&json!({"error": {"code": 5}}), &tools()).unwrap(),
            Step::Error(r#"{"code":5}"#.into())
        );
        let Step::Error(long) =
            parse_step(&json!({"error": "x".repeat(10_000)}), &tools()).unwrap()
        else {
            panic!("not an error step")
        };
        assert_eq!(long.chars().count(), MAX_ERROR_CHARS + 1);
        assert!(long.ends_with('…'));
        assert!(matches!(
            parse_step(
                &json!({"error": null, "final_answer": {"answer": "ok"}}),
                &tools()
            ),
            Ok(Step::FinalAnswer(_))
        ));
    }

    #[test]
    fn invalid_steps_are_refused_with_their_path() {
        let cases = [
            (json!([]), "must be a JSON object"),
            (json!({}), "needs one of"),
            (
                json!({"tool_call": {"name": "fts_chunks"}, "final_answer": {"answer": "a"}}),
                "exactly one",
            ),
            (
                json!({"tool_call": {"name": "fts_chunks"}, "answer": "x"}),
                "/answer: unknown field",
            ),
            (
                json!({"tool_call": {"name": "fts_chunks", "arguments": {}}}),
                "/tool_call/arguments: unknown field",
            ),
            (
                json!({"tool_call": "fts_chunks"}),
                "/tool_call: must be an object",
            ),
            (
                json!({"tool_call": {"args": {}}}),
                "/tool_call/name: must be a string",
            ),
            (
                json!({"tool_call": {"name": "axql_run"}}),
                "/tool_call/name: \"axql_run\" was not offered",
            ),
            (
                json!({"tool_call": {"name": "rm -rf /; \u{0}"}}),
                "/tool_call/name:",
            ),
            (
                json!({"tool_call": {"name": "a".repeat(65)}}),
                "is not a tool name",
            ),
            (
                json!({"tool_call": {"name": "fts_chunks", "args": ["q"]}}),
                "/tool_call/args: must be an object",
            ),
            (
                json!({"final_answer": {"answer": "  "}}),
                "/final_answer/answer: must not be empty",
            ),
            (
                json!({"final_answer": {"answer": 3}}),
                "/final_answer/answer: must be a string",
            ),
            (
                json!({"final_answer": {"answer": "a", "citations": ["ok", 7]}}),
                "/final_answer/citations/1: must be a string",
            ),
            (
                json!({"final_answer": {"answer": "a", "queries": "select"}}),
                "/final_answer/queries: must be an array",
            ),
            (
                json!({"final_answer": {"answer": "a", "confidence": 1}}),
                "/final_answer/confidence: unknown field",
            ),
            (
                json!({"final_answer": {"answer": "a"}, "notes": [1]}),
                "/notes/0",
            ),
        ];
        for (value, expected) in cases {
            let msg = err_message(value.clone());
            assert!(msg.contains(expected), "{value} → {msg:?}");
        }
        // No tools offered: no call can be valid.
        assert!(parse_step(&json!({"tool_call": {"name": "fts_chunks"}}), &[]).is_err());
    }

    #[test]
    fn child_env_is_the_inherited_few_plus_the_configured() {
        let host = |k: &str| match k {
            "PATH" => Some(OsString::from("/usr/bin")),
            "HOME" => Some(OsString::from("/home/u")),
            "LAIKA_API_KEY" | "AWS_SECRET_ACCESS_KEY" => Some(OsString::from("secret")),
            _ => None,
        };
        let mut configured = BTreeMap::new();
        configured.insert("HOME".to_string(), "/srv/plugin".to_string());
        configured.insert(
            "OLLAMA_HOST".to_string(),
            "http://127.0.0.1:11434".to_string(),
        );
        let env = child_env(&host, &configured);
        let pairs: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("HOME".to_string(), "/srv/plugin".to_string()),
                (
                    "OLLAMA_HOST".to_string(),
                    "http://127.0.0.1:11434".to_string()
                ),
                ("PATH".to_string(), "/usr/bin".to_string()),
            ]
        );
    }

    #[test]
    fn stderr_tail_is_bounded_clean_and_says_what_was_cut() {
        let mut input = vec![b'x'; 100_000];
        input.extend_from_slice("é\u{1b}[2Jend".as_bytes());
        let (tail, total) = read_tail(&input[..], 8);
        assert_eq!(total, input.len());
        assert_eq!(tail.len(), 8);
        let shown = describe_stderr(&tail, total);
        // The cut landed inside "é": the partial character is dropped, the
        // escape is neutralized.
        assert_eq!(shown, format!("; stderr (last 8 of {total} bytes): [2Jend"));
        assert_eq!(describe_stderr(b"  \n", 3), "");
        assert_eq!(describe_stderr(b"boom\n", 5), "; stderr: boom");
    }

    #[test]
    fn stdout_is_capped_and_must_be_one_object() {
        let mut overflowed = false;
        let out = read_capped(&vec![b'a'; 300_000][..], 200_000, || overflowed = true);
        assert!(overflowed);
        assert!(out.len() <= 200_000);
        let mut overflowed = false;
        assert_eq!(read_capped(&b"{}"[..], 10, || overflowed = true), b"{}");
        assert!(!overflowed);

        assert!(parse_response(b" \n").unwrap_err().contains("no JSON"));
        assert!(parse_response(b"[1]")
            .unwrap_err()
            .contains("not an object"));
        assert!(parse_response(b"{\"answer\": \"a\"} trailing")
            .unwrap_err()
            .contains("invalid JSON"));
        let deep = "[".repeat(10_000);
        assert!(parse_response(deep.as_bytes()).is_err());
        assert_eq!(
            parse_response(b"\n{\"answer\": \"a\"}\n").unwrap(),
            json!({"answer": "a"})
        );
    }

    fn page_packet() -> RequestPacket {
        serde_json::from_value(json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": "req-1", "type": "request", "created_at": "2026-01-01T00:00:00.000Z",
            "conversation": {"id": "c-1", "turn": 1}, "sender": {"role": "agent"},
            "input": {"user_message": {"id": "u", "text": "How much is a couchette?"}, "task": {"name": "web.answer"}},
            "context": {"documents": [
                {"doc_id": "doc:web:summary", "kind": "web.observation.summary.v1", "trust": "untrusted",
                 "source": {"browser": "chrome"}, "content": {"title": "Night trains", "text": "Night trains are back. They run three times a week."}},
                {"doc_id": "doc:web:chunk:2", "kind": "web.observation.chunk.v1", "trust": "untrusted",
                 "source": {"browser": "chrome"}, "content": {"chunk_index": 2, "text": "Tickets go on sale in May. A couchette bed costs 49 euros, a private compartment more."}}
            ]},
            "output": {"format": "json"}
        }))
        .unwrap()
    }

    #[test]
    fn a_tool_loop_step_carries_the_v3_schema_beside_the_packet() {
        let task = ToolLoopTask {
            question: "How much?".into(),
            packet: page_packet(),
            tools: Vec::new(),
            transcript: Vec::new(),
        };
        let t = &tool_loop_request(&task, None)["task"];
        assert_eq!(t["kind"], "tool_loop_step");
        assert_eq!(
            t["schema"],
            json!({
                "types": ["web.observation.summary.v1", "web.observation.chunk.v1"],
                "schemas": ["laika.llmcp"],
                "contexts": ["doc:web:summary", "doc:web:chunk:2"]
            })
        );
        assert_eq!(t["packet"]["id"], "req-1");
    }

    #[test]
    fn bare_id_citations_are_resolved_against_the_documents_sent() {
        let answer = |citations: &[&str]| {
            let step = Step::FinalAnswer(FinalAnswer {
                answer: "A couchette costs 49 euros.".into(),
                citations: citations.iter().map(|c| c.to_string()).collect(),
                ..FinalAnswer::default()
            });
            step_response(&step, &page_packet())["assistant"]["citations"].clone()
        };
        let couchette = json!({"doc_id": "doc:web:chunk:2", "quote": "A couchette bed costs 49 euros, a private compartment more."});
        assert_eq!(answer(&["doc:web:chunk:2"]), json!([couchette]));
        assert_eq!(answer(&["DocChunk#2"]), json!([couchette]));
        // An id naming nothing sent is dropped; a quote is cited as before.
        assert_eq!(answer(&["DocChunk#128", "doc_proto_api_0"]), json!([]));
        assert_eq!(
            answer(&["Night trains are back."]),
            json!([{"doc_id": "doc:web:summary", "quote": "Night trains are back."}])
        );
        // A document that shares no word with the answer gives nothing to quote.
        let unrelated = Step::FinalAnswer(FinalAnswer {
            answer: "Zebra.".into(),
            citations: vec!["doc:web:chunk:2".into()],
            ..FinalAnswer::default()
        });
        assert_eq!(
            step_response(&unrelated, &page_packet())["assistant"]["citations"],
            json!([])
        );
    }

    #[test]
    fn turn_request_carries_everything_the_model_needs() {
        let packet: RequestPacket = serde_json::from_value(json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": "req-1", "type": "request", "created_at": "2026-01-01T00:00:00.000Z",
            "conversation": {"id": "c-1", "turn": 2}, "sender": {"role": "agent"},
            "input": {"user_message": {"id": "u", "text": "What changed?"}, "task": {"name": "web.answer"}},
            "context": {"documents": []}, "output": {"format": "json"}
        }))
        .unwrap();
        let request = ModelRequest {
            packet,
            response_schema: json!({"type": "object"}),
            system_prompt: "sys".into(),
            user_prompt: "user".into(),
            attempt: 1,
            feedback: Some(RetryFeedback {
                previous_output: "{bad".into(),
                errors: vec!["/id: missing".into()],
            }),
            max_output_tokens: None,
        };
        let r = turn_request(&request, Some("gemma"));
        assert_eq!(r["protocol"], PROTOCOL);
        assert_eq!(r["model"], "gemma");
        let t = &r["task"];
        assert_eq!(t["kind"], "llmcp_turn");
        assert_eq!(t["question"], "What changed?");
        assert_eq!(t["packet"]["id"], "req-1");
        assert_eq!(t["system_prompt"], "sys");
        assert_eq!(t["user_prompt"], "user");
        assert_eq!(t["response_schema"], json!({"type": "object"}));
        assert_eq!(t["attempt"], 1);
        assert_eq!(
            t["feedback"],
            json!({"previous_output": "{bad", "errors": ["/id: missing"]})
        );
        assert!(turn_request(&request, None).get("model").is_none());
    }
}

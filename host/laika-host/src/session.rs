//! A session: one connected extension (or one replay). Dispatches wire
//! requests, runs turns on worker threads so `cancel` and `ping` are answered
//! while a turn runs, and owns the store and the runtime.

use crate::config::Config;
use crate::store::Store;
use crate::transport::{Incoming, Outbox};
use crate::turn::{self, TurnContext};
use crate::wire::{self, ExportFormat, Request, TurnRequest};
use laika_core::error::{Error, Result};
use laika_runtime::{CancelToken, Runtime};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

/// Where events go: the stdio outbox, or a replay's collector.
pub type Emit = Arc<dyn Fn(Value) + Send + Sync>;

const DEFAULT_HISTORY_LIMIT: usize = 50;
const MAX_HISTORY_LIMIT: usize = 500;
/// One thread per running turn; a tab rarely needs more than one at a time.
const MAX_RUNNING_TURNS: usize = 4;

struct Shared {
    config: RwLock<Config>,
    config_path: PathBuf,
    runtime: RwLock<Arc<dyn Runtime>>,
    store: Mutex<Store>,
    in_flight: Mutex<HashMap<String, CancelToken>>,
}

pub struct Session {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// Replay runs turns inline so its output order is deterministic.
    threaded: bool,
}

impl Session {
    pub fn new(
        config: Config,
        config_path: PathBuf,
        store: Store,
        runtime: Arc<dyn Runtime>,
        threaded: bool,
    ) -> Session {
        Session {
            shared: Arc::new(Shared {
                config: RwLock::new(config),
                config_path,
                runtime: RwLock::new(runtime),
                store: Mutex::new(store),
                in_flight: Mutex::new(HashMap::new()),
            }),
            workers: Vec::new(),
            threaded,
        }
    }

    /// The transport's handler.
    pub fn handle_incoming(&mut self, incoming: Incoming, outbox: &Outbox) {
        let out = outbox.clone();
        let emit: Emit = Arc::new(move |v| {
            out.send(v);
        });
        match incoming {
            Incoming::Message(msg) => self.handle_message(msg, emit),
            Incoming::Malformed(e) => emit(wire::error_message(None, &e)),
            Incoming::Closed => {
                // Nobody is listening any more: stop running turns (they are
                // stored as cancelled) instead of finishing them for no one.
                if let Ok(m) = self.shared.in_flight.lock() {
                    m.values().for_each(CancelToken::cancel);
                }
                self.finish();
            }
        }
    }

    /// Handles one inbound message object.
    pub fn handle_message(&mut self, msg: serde_json::Map<String, Value>, emit: Emit) {
        let id = wire::message_id(&msg);
        match wire::parse_request(msg) {
            Ok(request) => self.handle_request(request, emit),
            Err(e) => emit(wire::error_message(id.as_deref(), &e)),
        }
    }

    fn handle_request(&mut self, request: Request, emit: Emit) {
        let id = request.id().to_string();
        let kind = format!("{}.result", request.kind());
        self.workers.retain(|w| !w.is_finished());
        let result = match request {
            Request::Turn(turn) => {
                self.start_turn(*turn, emit);
                return;
            }
            Request::Hello { .. } => Ok(self.hello()),
            Request::Ping { .. } => {
                emit(wire::message("pong", Some(&id), json!({})));
                return;
            }
            Request::Cancel { target, .. } => {
                let token = self
                    .shared
                    .in_flight
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&target).cloned());
                if let Some(t) = &token {
                    t.cancel();
                }
                Ok(json!({"target": target, "cancelled": token.is_some()}))
            }
            Request::HistoryList { limit, offset, .. } => self.with_store(|s| {
                let limit = limit
                    .unwrap_or(DEFAULT_HISTORY_LIMIT)
                    .min(MAX_HISTORY_LIMIT);
                Ok(json!({"conversations": s.list_conversations(limit, offset.unwrap_or(0))?}))
            }),
            Request::HistoryGet {
                conversation_id, ..
            } => {
                self.with_store(|s| Ok(json!({"conversation": s.conversation(&conversation_id)?})))
            }
            Request::HistorySearch { query, limit, .. } => self.with_store(|s| {
                let limit = limit
                    .unwrap_or(DEFAULT_HISTORY_LIMIT)
                    .min(MAX_HISTORY_LIMIT);
                Ok(json!({"query": query, "hits": s.search(&query, limit)?}))
            }),
            Request::HistoryDelete {
                conversation_id, ..
            } => self.with_store(|s| {
                s.delete_conversation(&conversation_id)?;
                Ok(json!({"conversation_id": conversation_id, "deleted": true}))
            }),
            Request::HistoryExport {
                conversation_id,
                format,
                ..
            } => self.with_store(|s| export(s, &conversation_id, format)),
            Request::ConfigGet { .. } => {
                self.read_config(|c| Ok(json!({"config": c.public_view()})))
            }
            Request::ConfigSet { values, .. } => self.set_config(&values),
        };
        match result {
            Ok(body) => emit(wire::message(&kind, Some(&id), body)),
            Err(e) => emit(wire::error_message(Some(&id), &e)),
        }
    }

    fn hello(&self) -> Value {
        let runtime = self.runtime().info();
        let limits = self
            .read_config(|c| Ok(c.limits.clone()))
            .unwrap_or_default();
        json!({
            "protocol": {"name": wire::WIRE_PROTOCOL_NAME, "version": wire::WIRE_PROTOCOL_VERSION},
            "host": {"name": "laika-host", "version": env!("CARGO_PKG_VERSION")},
            "llmcp_versions": [laika_core::llmcp::PROTOCOL_VERSION],
            "tasks": ["web.summarize", "web.answer", "web.extract"],
            "capabilities": ["turn", "cancel", "history", "config", "parts", "render_delta"],
            "runtime": runtime,
            "limits": {
                "max_inbound_frame": limits.max_inbound_frame,
                "max_outbound_frame": crate::frame::MAX_OUTBOUND_FRAME,
                "max_json_depth": limits.max_json_depth,
                "max_tool_calls": limits.max_tool_calls,
            },
        })
    }

    fn runtime(&self) -> Arc<dyn Runtime> {
        match self.shared.runtime.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn with_store(&self, f: impl FnOnce(&mut Store) -> Result<Value>) -> Result<Value> {
        let mut store = self
            .shared
            .store
            .lock()
            .map_err(|_| Error::internal("the store lock was poisoned"))?;
        f(&mut store)
    }

    fn read_config<T>(&self, f: impl FnOnce(&Config) -> Result<T>) -> Result<T> {
        let c = self
            .shared
            .config
            .read()
            .map_err(|_| Error::internal("the config lock was poisoned"))?;
        f(&c)
    }

    /// Validates, saves, then swaps config and runtime: a bad value changes
    /// nothing, and turns already running keep the runtime they started with.
    fn set_config(&self, values: &serde_json::Map<String, Value>) -> Result<Value> {
        let next = self.read_config(|c| c.with_values(values))?;
        let runtime = laika_runtime::from_config(&next.runtime)?;
        // Save onto what the file holds, so environment overrides (an API key
        // from LAIKA_API_KEY, say) never end up written to disk.
        let path = &self.shared.config_path;
        Config::from_file(path)?.with_values(values)?.save(path)?;
        let view = next.public_view();
        if let Ok(mut c) = self.shared.config.write() {
            *c = next;
        }
        if let Ok(mut r) = self.shared.runtime.write() {
            *r = runtime;
        }
        Ok(json!({"config": view, "saved_to": self.shared.config_path.display().to_string()}))
    }

    fn start_turn(&mut self, turn: TurnRequest, emit: Emit) {
        let cancel = CancelToken::default();
        let id = turn.id.clone();
        match self.shared.in_flight.lock() {
            Ok(m) if m.contains_key(&id) => {
                let e = Error::invalid_request(format!("a turn with id {id:?} is already running"));
                drop(m);
                emit(wire::error_message(Some(&id), &e));
                return;
            }
            Ok(m) if m.len() >= MAX_RUNNING_TURNS => {
                let e = Error::invalid_request(format!(
                    "{MAX_RUNNING_TURNS} turns are already running: wait for one to finish or cancel it"
                ));
                drop(m);
                emit(wire::error_message(Some(&id), &e));
                return;
            }
            Ok(mut m) => {
                m.insert(id.clone(), cancel.clone());
            }
            Err(_) => {}
        }
        let shared = self.shared.clone();
        let runtime = self.runtime();
        // A turn stops being cancellable before its `done` goes out, so a
        // `cancel` that arrives after `done` always answers `cancelled: false`.
        let in_flight = shared.clone();
        let turn_id = id.clone();
        let emit: Emit = Arc::new(move |event: Value| {
            if event["type"] == "done" {
                if let Ok(mut m) = in_flight.in_flight.lock() {
                    m.remove(&turn_id);
                }
            }
            emit(event);
        });
        let job = move || {
            let config = match shared.config.read() {
                Ok(c) => c.clone(),
                Err(p) => p.into_inner().clone(),
            };
            turn::run(
                turn,
                &TurnContext {
                    config: &config,
                    runtime: runtime.as_ref(),
                    store: &shared.store,
                    cancel: &cancel,
                    emit: &*emit,
                },
            );
            // Also covers a turn rejected before `turn.started` (no `done`).
            if let Ok(mut m) = shared.in_flight.lock() {
                m.remove(&id);
            }
        };
        if self.threaded {
            self.workers.push(std::thread::spawn(job));
        } else {
            job();
        }
    }

    /// Waits for running turns (they end with `done` or a cancel).
    pub fn finish(&mut self) {
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn export(store: &Store, conversation_id: &str, format: ExportFormat) -> Result<Value> {
    match format {
        ExportFormat::Json => {
            Ok(json!({"format": "json", "export": store.export(conversation_id)?}))
        }
        ExportFormat::Html => Ok(json!({
            "format": "html",
            "export": laika_core::render::export::to_html(&store.conversation(conversation_id)?),
        })),
    }
}

//! A session: one connected extension (or one replay). Dispatches wire
//! requests, runs turns on worker threads so `cancel` and `ping` are answered
//! while a turn runs, and owns the store and the runtime.

use crate::agent_state;
use crate::config::{Config, RuntimeConfig};
use crate::settings;
use crate::sink::OutboxSink;
use crate::store::Store;
use crate::summarize;
use crate::transport::{Incoming, Outbox};
use crate::turn::{self, TurnContext};
use crate::workers::Workers;
use laika_core::ambient::Ambient;
use laika_core::decoding::{CutRecord, Regime};
use laika_core::engine::Input;
use laika_core::model::ContextWindow;
use laika_core::runtime::Runtime;
use laika_protocol::agent_state::DeltaSource;
use laika_protocol::collection::{
    ArtifactSummary, SourceLeftOut, SourceSummary, TransformInfo, TransformResult,
};
use laika_protocol::deferred::Deferred;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{
    Done, Event, Hello, HelloLimits, HistoryExport, HostInfo, Sink, HOST_NAME,
};
use laika_protocol::ids::{CallId, CollectionId, ConversationId, RequestId};
use laika_protocol::llmcp::TaskName;
use laika_protocol::observation::Observation;
use laika_protocol::wire::{self, ExportFormat, Request, TurnRequest, WireProtocol};
use laika_runtime::context_window::ModelFacts;
use laika_runtime::{CancelToken, SystemAmbient};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, RwLock};

const DEFAULT_HISTORY_LIMIT: usize = 50;
const MAX_HISTORY_LIMIT: usize = 500;
/// Turns running at once; a tab rarely needs more than one at a time.
const MAX_RUNNING_TURNS: usize = 4;
/// Worker threads at once: the turns, plus a few discoveries and
/// connection tests beside them.
const MAX_WORKERS: usize = MAX_RUNNING_TURNS + 4;

struct Shared {
    config: RwLock<Config>,
    config_path: PathBuf,
    runtime: RwLock<Arc<dyn Runtime>>,
    store: Mutex<Store>,
    in_flight: Mutex<HashMap<RequestId, Running>>,
    /// Tool call id → the id of the running turn that made it, so the
    /// extension's results and approvals reach that turn.
    calls: Mutex<HashMap<CallId, RequestId>>,
    /// What the runtime's server says of its model (its context window and
    /// size), asked once per runtime configuration.
    model: Mutex<Option<(String, ModelFacts)>>,
    /// The model's record of answers cut at its token limit, per runtime
    /// configuration (forgotten when it changes).
    cuts: Mutex<(String, CutRecord)>,
    /// How long one model call took in the latest turn that made one, per
    /// runtime configuration: an `estimate`'s time.
    call_time: Mutex<Option<(String, std::time::Duration)>>,
    /// Page indexes kept for the next step or follow-up on the same page.
    page_indexes: Arc<crate::page_index::PageIndexCache>,
    /// The configured MCP servers' connections.
    mcp: Arc<crate::mcp_client::McpHub>,
}

impl Shared {
    /// The context window turns are packed for: `limits.context_window_tokens`
    /// when set, else what the configured runtime says (asked on the first
    /// turn after each runtime change, then remembered).
    fn context_window(&self, config: &Config) -> Option<ContextWindow> {
        config
            .configured_window()
            .or_else(|| self.model(config).window)
    }

    /// The answer's caps for the configured model: the small regime when
    /// the model's record says it cannot stop, else as its size says
    /// (`laika_core::decoding::caps`).
    fn regime(&self, config: &Config) -> Regime {
        let key = runtime_key(config);
        let recorded = self
            .cuts
            .lock()
            .ok()
            .filter(|c| c.0 == key)
            .and_then(|c| c.1.regime());
        recorded.unwrap_or_else(|| Regime::for_params(self.model(config).size.map(|s| s.params)))
    }

    /// The time of one model call on the configured runtime, when a turn
    /// since it was configured timed one.
    fn call_time(&self, config: &Config) -> Option<std::time::Duration> {
        let key = runtime_key(config);
        let known = self.call_time.lock().ok()?;
        known.as_ref().filter(|(k, _)| *k == key).map(|(_, t)| *t)
    }

    fn record_call_time(&self, config: &Config, took: Option<std::time::Duration>) {
        if let (Some(took), Ok(mut known)) = (took, self.call_time.lock()) {
            *known = Some((runtime_key(config), took));
        }
    }

    /// Adds a turn to the model's record of cut answers.
    fn record_cut(&self, config: &Config, cut: bool) {
        let key = runtime_key(config);
        if let Ok(mut cuts) = self.cuts.lock() {
            if cuts.0 != key {
                *cuts = (key, CutRecord::default());
            }
            let before = cuts.1.regime();
            cuts.1.record(cut);
            if cuts.1.regime() != before {
                tracing::info!(
                    regime = cuts.1.regime().unwrap_or_default().as_str(),
                    "answer caps changed by the model's record of answers cut at max_tokens"
                );
            }
        }
    }

    /// What the configured runtime's server says of its model, asked on the
    /// first turn after each runtime change, then remembered.
    fn model(&self, config: &Config) -> ModelFacts {
        let key = runtime_key(config);
        if let Ok(cache) = self.model.lock() {
            if let Some((k, facts)) = &*cache {
                if *k == key {
                    return facts.clone();
                }
            }
        }
        let found = laika_runtime::context_window::probe_model(&config.runtime);
        match &found.window {
            Some(w) => {
                tracing::info!(tokens = w.tokens, source = %w.source, "runtime context window")
            }
            None => tracing::info!("runtime context window unknown: using the fixed budget"),
        }
        let regime = Regime::for_params(found.size.as_ref().map(|s| s.params));
        match &found.size {
            Some(size) => tracing::info!(
                params = size.params,
                source = %size.source,
                regime = regime.as_str(),
                "runtime model size"
            ),
            None => tracing::info!(regime = regime.as_str(), "runtime model size unknown"),
        }
        if let Ok(mut cache) = self.model.lock() {
            *cache = Some((key, found.clone()));
        }
        found
    }
}

/// The runtime configuration a probe and a record of cut answers belong to.
fn runtime_key(config: &Config) -> String {
    serde_json::to_string(&config.runtime).unwrap_or_default()
}

/// A running turn, as the session reaches it: by its request id.
struct Running {
    /// Interrupts the runtime at once.
    cancel: CancelToken,
    /// What the session forwards to the turn's engine.
    inbox: Sender<Input>,
}

impl Running {
    /// The engine hears of the cancel before the runtime is interrupted, so
    /// whatever the runtime answers next, the turn ends as cancelled.
    fn cancel(&self) {
        let _ = self.inbox.send(Input::Cancel);
        self.cancel.cancel();
    }
}

pub struct Session {
    shared: Arc<Shared>,
    /// Where turns and the requests beside them run, when threaded.
    workers: Workers,
    /// Replay runs turns inline so its output order is deterministic.
    threaded: bool,
    /// Where `pdf.read` runs the PDF parser.
    pdf: crate::pdf::Reader,
}

impl Session {
    pub fn new(
        config: Config,
        config_path: PathBuf,
        store: Store,
        runtime: Arc<dyn Runtime>,
        threaded: bool,
    ) -> Session {
        let mcp = Arc::new(crate::mcp_client::McpHub::new(&config.mcp));
        Session {
            shared: Arc::new(Shared {
                mcp,
                config: RwLock::new(config),
                config_path,
                runtime: RwLock::new(runtime),
                store: Mutex::new(store),
                in_flight: Mutex::new(HashMap::new()),
                calls: Mutex::new(HashMap::new()),
                call_time: Mutex::new(None),
                model: Mutex::new(None),
                cuts: Mutex::new((String::new(), CutRecord::default())),
                page_indexes: Arc::default(),
            }),
            workers: Workers::default(),
            threaded,
            pdf: crate::pdf::Reader::InProcess,
        }
    }

    /// Runs the PDF parser of `pdf.read` with `reader` (the binary gives
    /// its own child process; the default parses on a thread).
    pub fn with_pdf_reader(mut self, reader: crate::pdf::Reader) -> Session {
        self.pdf = reader;
        self
    }

    /// The transport's handler.
    pub fn handle_incoming(&mut self, incoming: Incoming, outbox: &Outbox) {
        let sink: Arc<dyn Sink> = Arc::new(OutboxSink(outbox.clone()));
        match incoming {
            Incoming::Message(msg) => self.handle_message(msg, sink),
            Incoming::Malformed(e) => sink.emit(None, Event::error(&e)),
            Incoming::Closed => {
                // Nobody is listening any more: stop running turns (they are
                // stored as cancelled) instead of finishing them for no one.
                if let Ok(m) = self.shared.in_flight.lock() {
                    m.values().for_each(Running::cancel);
                }
                self.finish();
            }
        }
    }

    /// Handles one inbound message object.
    pub fn handle_message(&mut self, msg: serde_json::Map<String, Value>, sink: Arc<dyn Sink>) {
        let id = wire::message_id(&msg);
        let is_turn = msg.get("type").and_then(Value::as_str) == Some("turn");
        match wire::parse_request(msg) {
            Ok(request) => {
                crate::stage_times::mark("request parsed");
                self.handle_request(request, sink)
            }
            Err(e) => match id.as_ref().filter(|_| is_turn) {
                Some(id) => self.refuse_turn(id, &e, sink.as_ref()),
                None => sink.emit(id.as_ref(), Event::error(&e)),
            },
        }
    }

    /// A turn refused before it started: its `error`, then a `done` that
    /// says nothing was stored (every turn ends with `done`), unless a
    /// running turn has that id: a `done` would end it.
    fn refuse_turn(&self, id: &RequestId, error: &Error, sink: &dyn Sink) {
        sink.emit(Some(id), Event::error(error));
        let running = self
            .shared
            .in_flight
            .lock()
            .map_or(true, |m| m.contains_key(id));
        if running {
            return;
        }
        sink.emit(
            Some(id),
            Event::Done(Done::refused(None, error.code, self.runtime().info())),
        );
    }

    fn handle_request(&mut self, request: Request, sink: Arc<dyn Sink>) {
        let id = request.id().clone();
        let result = match request {
            Request::Turn(turn) => {
                self.start_turn(*turn, sink);
                return;
            }
            Request::Hello { .. } => Ok(self.hello()),
            Request::Ping { .. } => Ok(Event::Pong {}),
            Request::Cancel { target, .. } => {
                let cancelled = match self.shared.in_flight.lock() {
                    Ok(m) => m.get(&target).map(Running::cancel).is_some(),
                    Err(_) => false,
                };
                Ok(Event::CancelResult { target, cancelled })
            }
            Request::HistoryList { limit, offset, .. } => self.with_store(|s| {
                let limit = limit
                    .unwrap_or(DEFAULT_HISTORY_LIMIT)
                    .min(MAX_HISTORY_LIMIT);
                Ok(Event::HistoryList {
                    conversations: s.list_conversations(limit, offset.unwrap_or(0))?,
                })
            }),
            Request::HistoryGet {
                conversation_id, ..
            } => self.with_store(|s| {
                Ok(Event::HistoryGet {
                    conversation: s.conversation(&conversation_id)?,
                })
            }),
            Request::HistorySearch { query, limit, .. } => self.with_store(|s| {
                let limit = limit
                    .unwrap_or(DEFAULT_HISTORY_LIMIT)
                    .min(MAX_HISTORY_LIMIT);
                let hits = s.search(&query, limit)?;
                Ok(Event::HistorySearch { query, hits })
            }),
            Request::HistoryDelete {
                conversation_id, ..
            } => self.with_store(|s| {
                s.delete_conversation(&conversation_id)?;
                Ok(Event::HistoryDelete {
                    conversation_id,
                    deleted: true,
                })
            }),
            Request::HistoryExport {
                conversation_id,
                format,
                ..
            } => self.with_store(|s| export(s, &conversation_id, format)),
            Request::AgentStateForget {
                conversation_id, ..
            } => self.with_store(|s| forget_assumptions(s, &conversation_id, &id, sink.as_ref())),
            Request::CollectionsList { .. } => self.with_store(|s| {
                Ok(Event::CollectionsList {
                    collections: s.list_collections(MAX_HISTORY_LIMIT)?,
                    artifacts: s.list_artifacts(MAX_HISTORY_LIMIT)?,
                    transforms: laika_core::transform::TYPES
                        .iter()
                        .map(|t| TransformInfo {
                            id: t.id.into(),
                            title: t.title.into(),
                            description: t.description.into(),
                        })
                        .collect(),
                })
            }),
            Request::CollectionAddPage {
                collection_id,
                title,
                observation,
                ..
            } => self.with_store(|s| add_page(s, collection_id, title, observation)),
            Request::CollectionGet { collection_id, .. } => self.with_store(|s| {
                let pack = s.collection_pack(&collection_id)?;
                Ok(Event::CollectionGet {
                    sources: pack.sources.iter().map(SourceSummary::from).collect(),
                    collection: pack.collection,
                })
            }),
            Request::CollectionRename {
                collection_id,
                title,
                ..
            } => self.with_store(|s| {
                let title = collection_title(&title)?;
                Ok(Event::CollectionRename {
                    collection: s.rename_collection(
                        &collection_id,
                        &title,
                        &SystemAmbient.now_iso8601(),
                    )?,
                })
            }),
            Request::CollectionRemoveSource {
                collection_id,
                source_id,
                ..
            } => self.with_store(|s| {
                Ok(Event::CollectionRemoveSource {
                    collection: s.remove_source(
                        &collection_id,
                        &source_id,
                        &SystemAmbient.now_iso8601(),
                    )?,
                    source_id,
                })
            }),
            Request::CollectionDelete { collection_id, .. } => self.with_store(|s| {
                s.delete_collection(&collection_id)?;
                Ok(Event::CollectionDelete {
                    collection_id,
                    deleted: true,
                })
            }),
            Request::TransformRun {
                collection_id,
                transform,
                ..
            } => match laika_core::transform::find_type(&transform) {
                Some(kind) => {
                    self.run_transform(id, kind, collection_id, sink);
                    return;
                }
                None => Err(Error::invalid_request(format!(
                    "unknown transform {}; collections.list.result lists them",
                    laika_core::text::clip_quoted(&transform, 80)
                ))),
            },
            Request::ArtifactExport {
                artifact_id,
                format,
                ..
            } => self.with_store(|s| {
                let artifact = s.artifact(&artifact_id)?;
                Ok(Event::ArtifactExport {
                    artifact_id,
                    title: artifact.title.clone(),
                    format,
                    filename: laika_core::artifact::filename(&artifact, format),
                    mime: format.mime().into(),
                    content: laika_core::artifact::export(&artifact, format),
                })
            }),
            Request::ConfigGet { .. } => self.read_config(|c| {
                Ok(Event::ConfigGet {
                    config: c.public_view(),
                })
            }),
            Request::ConfigSet { values, .. } => self.set_config(&values),
            Request::ConfigDiscover { .. } => {
                match self.read_config(|c| Ok(c.discover.ports.clone())) {
                    Ok(ports) => {
                        self.aside(id, sink, move || settings::discover(&ports));
                    }
                    Err(e) => sink.emit(Some(&id), Event::error(&e)),
                }
                return;
            }
            Request::ConfigTest { values, .. } => {
                // Checked now, like `config.set`: bad values are an `error`
                // and nothing is asked.
                let tested = self.read_config(|c| match &values {
                    Some(values) => c.with_values(values).map(|c| c.runtime),
                    None => Ok(c.runtime.clone()),
                });
                match tested {
                    Ok(runtime) => {
                        self.aside(id, sink, move || settings::test_connection(&runtime));
                    }
                    Err(e) => sink.emit(Some(&id), Event::error(&e)),
                }
                return;
            }
            Request::PdfRead {
                url, title, data, ..
            } => {
                let reader = self.pdf.clone();
                self.aside(id, sink, move || {
                    match crate::pdf::read(&reader, &url, title.as_deref(), &data) {
                        Ok(read) => Event::PdfRead(read),
                        Err(e) => Event::error(&e),
                    }
                });
                return;
            }
            Request::McpServers { test, .. } => {
                let hub = self.shared.mcp.clone();
                self.aside(id, sink, move || Event::McpServers {
                    servers: hub.status(test.as_deref()),
                });
                return;
            }
            Request::PromptsList { .. } => self.with_store(|s| {
                Ok(Event::PromptsList {
                    prompts: s.list_prompts()?,
                })
            }),
            Request::PromptsSave { prompt, .. } => self.with_store(|s| {
                let prompt = s.save_prompt(&prompt)?;
                Ok(Event::PromptsSave {
                    prompt,
                    prompts: s.list_prompts()?,
                })
            }),
            Request::PromptsDelete { prompt_id, .. } => self.with_store(|s| {
                s.delete_prompt(&prompt_id)?;
                Ok(Event::PromptsDelete {
                    prompt_id,
                    deleted: true,
                })
            }),
            // The turn answers these itself (a result only when it is stale).
            Request::ToolResult(result) => {
                let call_id = result.call_id.clone();
                match self.forward(&call_id, Input::ToolResult(result)) {
                    Ok(()) => return,
                    Err(e) => Err(e),
                }
            }
            Request::Approval {
                id,
                call_id,
                digest,
                approved,
                start_only,
                plan,
            } => {
                let input = Input::Approval {
                    reply_to: id,
                    call_id: call_id.clone(),
                    digest,
                    approved,
                    start_only,
                    plan,
                };
                match self.forward(&call_id, input) {
                    Ok(()) => return,
                    Err(e) => Err(e),
                }
            }
        };
        match result {
            Ok(event) => sink.emit(Some(&id), event),
            Err(e) => sink.emit(Some(&id), Event::error(&e)),
        }
    }

    /// Answers request `id` with what `job` gives, on a worker thread (inline
    /// for replay): for the slow requests that are not turns. False when
    /// too many are running (the request got an `error` and `job` never runs).
    fn aside(
        &mut self,
        id: RequestId,
        sink: Arc<dyn Sink>,
        job: impl FnOnce() -> Event + Send + 'static,
    ) -> bool {
        if self.workers.busy() >= MAX_WORKERS {
            let e = Error::invalid_request(format!(
                "{MAX_WORKERS} requests and turns are already running: wait for one to finish"
            ));
            sink.emit(Some(&id), Event::error(&e));
            return false;
        }
        let run = move || sink.emit(Some(&id), job());
        if self.threaded {
            self.workers.run(run);
        } else {
            run();
        }
        true
    }

    /// `transform.run`: on a worker, with the configured runtime; listed
    /// with the running turns so that a `cancel` naming it stops it.
    fn run_transform(
        &mut self,
        id: RequestId,
        kind: &'static laika_core::transform::TransformType,
        collection_id: CollectionId,
        sink: Arc<dyn Sink>,
    ) {
        let cancel = CancelToken::default();
        match self.shared.in_flight.lock() {
            Ok(m) if m.contains_key(&id) => {
                let e =
                    Error::invalid_request(format!("a request with id {id:?} is already running"));
                drop(m);
                sink.emit(Some(&id), Event::error(&e));
                return;
            }
            Ok(mut m) => {
                // Nothing reads this inbox: a cancel reaches the transform through its token.
                let (inbox, _) = mpsc::channel();
                m.insert(
                    id.clone(),
                    Running {
                        cancel: cancel.clone(),
                        inbox,
                    },
                );
            }
            Err(_) => {}
        }
        let shared = self.shared.clone();
        let runtime = self.runtime();
        let concurrency = self
            .read_config(|c| Ok(c.limits.transform_concurrency))
            .unwrap_or(1);
        let running = id.clone();
        let job = move || {
            let workers = crate::transform::Workers {
                runtime: runtime.as_ref(),
                cancel: &cancel,
                ambient: &SystemAmbient,
                concurrency,
                progress: &|_| {},
            };
            let made =
                crate::transform::run_and_save(kind, &collection_id, &shared.store, &workers);
            if let Ok(mut m) = shared.in_flight.lock() {
                m.remove(&running);
            }
            match made {
                Ok(outcome) => Event::TransformRun(TransformResult {
                    artifact: ArtifactSummary {
                        id: outcome.artifact.id,
                        title: outcome.artifact.title,
                        mime: outcome.artifact.mime,
                        collection_id: outcome.artifact.collection_id,
                        created_at: outcome.artifact.created_at,
                    },
                    transform: kind.id.into(),
                    sources_read: outcome.read,
                    sources_failed: outcome
                        .failed
                        .into_iter()
                        .map(|(source_id, e)| SourceLeftOut {
                            source_id,
                            code: e.code,
                            message: e.message,
                        })
                        .collect(),
                }),
                Err(e) => Event::error(&e),
            }
        };
        let key = id.clone();
        if !self.aside(id, sink, job) {
            if let Ok(mut m) = self.shared.in_flight.lock() {
                m.remove(&key);
            }
        }
    }

    /// Hands a tool result or an approval to the turn that made the call;
    /// the turn answers it. A call no running turn made is `UNKNOWN_CALL`.
    fn forward(&self, call_id: &CallId, input: Input) -> Result<()> {
        let turn = self
            .shared
            .calls
            .lock()
            .ok()
            .and_then(|calls| calls.get(call_id).cloned());
        let sent = turn.and_then(|turn| {
            let running = self.shared.in_flight.lock().ok()?;
            running.get(&turn)?.inbox.send(input).ok()
        });
        sent.ok_or_else(|| {
            Error::new(
                ErrorCode::UnknownCall,
                format!(
                    "no running turn made call {}; the message was ignored",
                    laika_core::text::clip_quoted(call_id, 80)
                ),
            )
        })
    }

    fn hello(&self) -> Event {
        let limits = self
            .read_config(|c| Ok(c.limits.clone()))
            .unwrap_or_default();
        Event::Hello(Hello {
            protocol: WireProtocol::current(),
            host: HostInfo {
                name: HOST_NAME.into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            llmcp_versions: vec![laika_protocol::llmcp::PROTOCOL_VERSION],
            tasks: vec![TaskName::Summarize, TaskName::Answer, TaskName::Extract],
            capabilities: vec![
                "turn",
                "cancel",
                "history",
                "collections",
                "config",
                "parts",
                "render_delta",
                "agent_loop",
                "pdf",
            ],
            runtime: self.runtime().info(),
            limits: HelloLimits {
                max_inbound_frame: limits.max_inbound_frame,
                max_outbound_frame: crate::frame::MAX_OUTBOUND_FRAME,
                max_json_depth: limits.max_json_depth,
                max_tool_calls: limits.max_tool_calls,
            },
        })
    }

    fn runtime(&self) -> Arc<dyn Runtime> {
        match self.shared.runtime.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn with_store(&self, f: impl FnOnce(&mut Store) -> Result<Event>) -> Result<Event> {
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
    fn set_config(&self, values: &serde_json::Map<String, Value>) -> Result<Event> {
        let next = self.read_config(|c| c.with_values(values))?;
        let runtime = laika_runtime::from_config(&next.runtime)?;
        self.read_config(|c| c.save_values(&self.shared.config_path, values))?;
        let view = next.public_view();
        let info = runtime.info();
        self.shared.mcp.reconfigure(&next.mcp);
        if let Ok(mut c) = self.shared.config.write() {
            *c = next;
        }
        if let Ok(mut r) = self.shared.runtime.write() {
            *r = runtime;
        }
        Ok(Event::ConfigSet {
            config: view,
            saved_to: self.shared.config_path.display().to_string(),
            runtime: info,
        })
    }

    fn start_turn(&mut self, turn: TurnRequest, sink: Arc<dyn Sink>) {
        let cancel = CancelToken::default();
        let (inbox_tx, inbox) = mpsc::channel();
        let id = turn.id.clone();
        match self.shared.in_flight.lock() {
            // No `done` here: it would end the running turn of that id.
            Ok(m) if m.contains_key(&id) => {
                let e = Error::invalid_request(format!("a turn with id {id:?} is already running"));
                drop(m);
                sink.emit(Some(&id), Event::error(&e));
                return;
            }
            Ok(m) if m.len() >= MAX_RUNNING_TURNS => {
                let e = Error::invalid_request(format!(
                    "{MAX_RUNNING_TURNS} turns are already running: wait for one to finish or cancel it"
                ));
                drop(m);
                self.refuse_turn(&id, &e, sink.as_ref());
                return;
            }
            Ok(mut m) => {
                m.insert(
                    id.clone(),
                    Running {
                        cancel: cancel.clone(),
                        inbox: inbox_tx,
                    },
                );
            }
            Err(_) => {}
        }
        let shared = self.shared.clone();
        let offline = turn.offline;
        let runtime = if offline {
            match laika_runtime::from_config(&RuntimeConfig::Builtin) {
                Ok(r) => r,
                Err(e) => {
                    if let Ok(mut m) = self.shared.in_flight.lock() {
                        m.remove(&id);
                    }
                    sink.emit(Some(&id), Event::error(&e));
                    return;
                }
            }
        } else {
            self.runtime()
        };
        // A turn stops being cancellable before its `done` goes out, so a
        // `cancel` that arrives after `done` always answers `cancelled: false`.
        let sink = Arc::new(TurnSink {
            shared: shared.clone(),
            turn_id: id.clone(),
            inner: sink,
        });
        let job = move || {
            crate::stage_times::mark("turn thread");
            let mut config = match shared.config.read() {
                Ok(c) => c.clone(),
                Err(p) => p.into_inner().clone(),
            };
            crate::stage_times::mark("config cloned");
            if offline {
                // This turn only: its packing and its summary are the offline runtime's too.
                config.runtime = RuntimeConfig::Builtin;
                config.summarizer = None;
            }
            let stored = turn::run(
                turn,
                &TurnContext {
                    config: &config,
                    runtime: runtime.as_ref(),
                    store: &shared.store,
                    cancel: &cancel,
                    inbox: &inbox,
                    sink: sink.as_ref(),
                    context_window: shared.context_window(&config),
                    page_indexes: Some(shared.page_indexes.clone()),
                    regime: shared.regime(&config),
                    mcp: &shared.mcp,
                    call_time: shared.call_time(&config),
                },
            );
            if let Some(stored) = &stored {
                shared.record_cut(&config, stored.cut);
                if !offline {
                    shared.record_call_time(&config, stored.call_time);
                }
            }
            // Also covers a turn refused before `turn.started`.
            if let Ok(mut m) = shared.in_flight.lock() {
                m.remove(&id);
            }
            // After `done`: the stream never waits for the summarizer.
            crate::stage_times::mark("after the turn");
            if let Some(stored) = stored {
                let summarizer = summarize::Summarizer::choose(&config, runtime.as_ref());
                let summarized =
                    summarize::after_turn(&shared.store, &summarizer, &config, &stored);
                let by_model = summarized.is_some().then(|| summarizer.model()).flatten();
                agent_state::after_turn(
                    &shared.store,
                    (by_model, summarized.map(|s| s.delta)),
                    &stored.conversation_id,
                    (sink.as_ref(), &id),
                );
            }
            crate::stage_times::mark("after the turn done");
        };
        if self.threaded {
            self.workers.run(job);
        } else {
            job();
        }
    }

    /// Waits for running turns (they end with `done` or a cancel).
    pub fn finish(&mut self) {
        self.workers.finish();
    }
}

/// "Forget what you assumed": the stored state's change goes out as an
/// `entity_patch` (what the sidebar applies), then the counts.
fn forget_assumptions(
    store: &mut Store,
    conversation_id: &ConversationId,
    reply_to: &RequestId,
    sink: &dyn Sink,
) -> Result<Event> {
    let now = laika_core::ambient::Ambient::now_iso8601(&SystemAmbient);
    let forgotten = match store.forget_assumptions(conversation_id, &now)? {
        Some((before, after, forgotten)) => {
            let turn = store
                .history(conversation_id)?
                .turns
                .last()
                .map_or(0, |t| t.turn);
            let patch = laika_core::entity_patch::agent_state_patch(
                conversation_id,
                turn,
                DeltaSource::User,
                Some(&before),
                &after,
            );
            if let Some(patch) = patch {
                sink.emit(Some(reply_to), patch);
            }
            tracing::info!(
                assumptions = forgotten.assumptions,
                tentative_hypotheses = forgotten.tentative_hypotheses,
                items = forgotten.items,
                "the user had the agent state's assumptions forgotten"
            );
            forgotten
        }
        None => Default::default(),
    };
    Ok(Event::AgentStateForget {
        conversation_id: conversation_id.clone(),
        assumptions: forgotten.assumptions,
        tentative_hypotheses: forgotten.tentative_hypotheses,
        items: forgotten.items,
    })
}

/// A running turn's events: its `done` first takes it off the running list.
struct TurnSink {
    shared: Arc<Shared>,
    turn_id: RequestId,
    inner: Arc<dyn Sink>,
}

impl Sink for TurnSink {
    fn emit(&self, reply_to: Option<&RequestId>, event: Event) {
        match &event {
            // What the extension may answer with an `approval` or a
            // `tool_result` is routed to this turn.
            Event::ToolCall(laika_protocol::event::ToolCallProposal { call_id, .. })
            | Event::Plan(laika_protocol::event::PlanProposal { call_id, .. })
            | Event::Estimate(laika_protocol::event::Estimate { call_id, .. }) => {
                if let Ok(mut calls) = self.shared.calls.lock() {
                    calls.insert(call_id.clone(), self.turn_id.clone());
                }
            }
            Event::Done(_) => {
                if let Ok(mut m) = self.shared.in_flight.lock() {
                    m.remove(&self.turn_id);
                }
                if let Ok(mut calls) = self.shared.calls.lock() {
                    calls.retain(|_, turn| *turn != self.turn_id);
                }
            }
            _ => {}
        }
        self.inner.emit(reply_to, event);
    }
}

fn export(store: &Store, conversation_id: &ConversationId, format: ExportFormat) -> Result<Event> {
    let export = match format {
        ExportFormat::Json => HistoryExport::Json(Box::new(store.export(conversation_id)?)),
        ExportFormat::Html => HistoryExport::Html(laika_core::render::export::to_html(
            &store.conversation(conversation_id)?,
            &store.list_prompts()?,
        )),
    };
    Ok(Event::HistoryExport(export))
}

/// `collection.add_page`: the page goes into the collection named, or into
/// a new one.
fn add_page(
    store: &mut Store,
    collection_id: Option<CollectionId>,
    title: Option<String>,
    observation: Deferred<Observation>,
) -> laika_protocol::error::Result<Event> {
    let ambient = laika_runtime::SystemAmbient;
    let id = match collection_id {
        Some(id) => store.collection(&id)?.id,
        None => {
            let page_title = observation
                .raw()
                .get("summary")
                .and_then(|s| s.get("title"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let wanted = title.as_deref().unwrap_or(page_title);
            let title = if wanted.trim().is_empty() {
                "Collection"
            } else {
                wanted
            };
            let collection = laika_protocol::collection::Collection {
                id: ambient.new_id().into(),
                title: collection_title(title)?,
                tags: Vec::new(),
                created_at: ambient.now_iso8601(),
                source_count: 0,
            };
            store.create_collection(&collection)?;
            collection.id
        }
    };
    let source = crate::tools::store_page(
        store,
        &id,
        None,
        observation,
        laika_core::collection::MAX_SOURCE_CHARS,
        crate::store::collections::AddedBy::User,
        &ambient,
    )?;
    Ok(Event::CollectionAddPage {
        collection: store.collection(&id)?,
        source_id: source.id,
        title: source.title,
    })
}

/// A collection's title as the user gave it: bounded, URL credentials out.
fn collection_title(title: &str) -> Result<String> {
    let (title, _) = laika_core::collection::create_args(title, &[])?;
    Ok(laika_core::redact::redact_urls_in_text(&title).into_owned())
}

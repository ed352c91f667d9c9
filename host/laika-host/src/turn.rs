//! Drives one turn: runs the engine's actions against the real runtime, the
//! store and a sink, and feeds the results back (`laika_core::engine`).
//!
//! The turn's inbox carries what the session forwards while it runs (a
//! cancel, the extension's tool results and approvals); it is drained
//! between actions and while the model streams, and waited on when the
//! engine waits for the extension.

use crate::config::Config;
use crate::stage_times;
use crate::store::Store;
use crate::tools::{self, ToolContext};
use crate::transform::Progress;
use laika_core::ambient::Ambient;
use laika_core::engine::{Action, Input, Turn, TurnSettings};
use laika_core::model::{ModelReply, ModelRequest};
use laika_core::runtime::Runtime;
use laika_protocol::agent::OperationAction;
use laika_protocol::error::{Error, Result};
use laika_protocol::event::{Event, Operation, Sink};
use laika_protocol::ids::ConversationId;
use laika_protocol::wire::TurnRequest;
use laika_runtime::{CancelToken, SystemAmbient};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a turn needs from the session.
pub struct TurnContext<'a> {
    pub config: &'a Config,
    pub runtime: &'a dyn Runtime,
    pub store: &'a Mutex<Store>,
    /// Interrupts the runtime; the inbox tells the engine.
    pub cancel: &'a CancelToken,
    pub inbox: &'a Receiver<Input>,
    pub sink: &'a dyn Sink,
    /// The runtime's context window, when known (see `context_window`).
    pub context_window: Option<laika_core::model::ContextWindow>,
    /// The session's page indexes (`page_index`), if it keeps them.
    pub page_indexes: Option<std::sync::Arc<dyn laika_core::select::PageIndexes>>,
    /// The answer's caps, as chosen for the runtime's model
    /// (`laika_core::decoding::caps`).
    pub regime: laika_core::decoding::Regime,
    /// The MCP servers' connections.
    pub mcp: &'a crate::mcp_client::McpHub,
    /// How long one model call of this runtime took in an earlier turn.
    pub call_time: Option<std::time::Duration>,
}

/// A turn that was stored, as the summarizer needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub conversation_id: ConversationId,
    /// The chars its requests gave the conversation block, when its budget
    /// was worked out (`pack::conversation_share`).
    pub conversation_share: Option<usize>,
    /// The model's output was cut at its token limit in this turn.
    pub cut: bool,
    /// How long one of its model calls took, on average.
    pub call_time: Option<std::time::Duration>,
}

/// Runs one turn to its end. Never panics; every failure becomes an `error`
/// event and, once the turn has a number, a failed turn in the store.
/// Returns the turn if it was stored (for the summarizer).
pub fn run(request: TurnRequest, ctx: &TurnContext<'_>) -> Option<Stored> {
    let reply_to = request.id.clone();
    // Only a turn that may act offers tools: others never wait on a server.
    let mcp = if laika_core::task_view::task_may_act(request.task.name) {
        ctx.mcp.tools(ctx.cancel)
    } else {
        Default::default()
    };
    let settings = TurnSettings {
        limits: ctx.config.limits.clone(),
        runtime: ctx.runtime.info(),
        store_full_packets: ctx.config.log_full_llm,
        context_window: ctx.context_window.clone(),
        decoding: laika_core::decoding::Decoding {
            regime: ctx.regime,
            ..ctx.runtime.decoding()
        },
        page_indexes: ctx.page_indexes.clone(),
        integrations: ctx.config.integrations.keys().cloned().collect(),
        mcp: std::sync::Arc::new(mcp),
        cancel: ctx.cancel.clone(),
        call_time: ctx.call_time,
    };
    stage_times::mark("settings");
    let (mut turn, first) = Turn::start(request, settings, &SystemAmbient);
    let mut queue = VecDeque::from(first);
    while let Some(action) = queue.pop_front() {
        let next = match action {
            Action::Emit(event) => {
                ctx.sink.emit(Some(&reply_to), event);
                continue;
            }
            Action::Reply { to, event } => {
                ctx.sink.emit(Some(&to), event);
                continue;
            }
            Action::Await { .. } if !queue.is_empty() => continue,
            Action::Await { until } => {
                let wait = until.saturating_sub(SystemAmbient.monotonic());
                match ctx.inbox.recv_timeout(wait) {
                    Ok(input) => turn.handle(input),
                    Err(RecvTimeoutError::Timeout) => turn.handle(Input::Tick),
                    // The session is gone: nobody can answer any more.
                    Err(RecvTimeoutError::Disconnected) => turn.handle(Input::Cancel),
                }
            }
            Action::Reserve { conversation_id } => {
                stage_times::mark("reserving");
                let reserved = lock(ctx.store).and_then(|mut s| {
                    stage_times::mark("store locked");
                    s.reserve(&conversation_id)
                });
                stage_times::mark("reserved");
                let actions = turn.handle(Input::Reserved(reserved));
                stage_times::mark("packed");
                actions
            }
            Action::Ask(request) => {
                stage_times::mark("model asked");
                let mut next = Vec::new();
                let reply = ctx.runtime.complete(&request, ctx.cancel, &mut |piece| {
                    stage_times::mark("model piece");
                    next.extend(drain_inbox(&mut turn, ctx.inbox));
                    for action in turn.handle(Input::ModelText(piece.to_owned())) {
                        // Previews go out as they come; anything else waits
                        // for the reply.
                        match action {
                            Action::Emit(event) => ctx.sink.emit(Some(&reply_to), event),
                            other => next.push(other),
                        }
                    }
                });
                // The engine reuses the request for a retry without a copy
                // once this handle is gone.
                drop(request);
                if let Err(e) = &reply {
                    tracing::warn!(code = %e.code, "model call failed: {}", e.chain());
                }
                next.extend(drain_inbox(&mut turn, ctx.inbox));
                next.extend(turn.handle(Input::ModelReply(reply)));
                next
            }
            Action::AskParts {
                requests,
                concurrency,
            } => {
                let mut next = Vec::new();
                ask_parts(
                    ctx.runtime,
                    ctx.cancel,
                    &requests,
                    concurrency,
                    &mut |event| {
                        next.extend(drain_inbox(&mut turn, ctx.inbox));
                        let input = match event {
                            PartEvent::Started(i) => Input::PartStarted(i),
                            PartEvent::Replied(index, reply) => {
                                if let Err(e) = &reply {
                                    tracing::warn!(code = %e.code, "part call failed: {}", e.chain());
                                }
                                Input::PartReply { index, reply }
                            }
                        };
                        for action in turn.handle(input) {
                            // Progress goes out as it comes; the rest, in order, after the round.
                            match action {
                                Action::Emit(event) if next.is_empty() => {
                                    ctx.sink.emit(Some(&reply_to), event)
                                }
                                other => next.push(other),
                            }
                        }
                    },
                );
                drop(requests);
                next.extend(drain_inbox(&mut turn, ctx.inbox));
                next
            }
            Action::LoadCollection { collection_id } => {
                let loaded = lock(ctx.store).and_then(|s| s.collection_pack(&collection_id));
                turn.handle(Input::CollectionLoaded(loaded))
            }
            Action::RunTool {
                call_id,
                call,
                page,
                conversation_id,
                turn: number,
                step,
            } => {
                let progress = |p: Progress| {
                    ctx.sink.emit(
                        Some(&reply_to),
                        Event::Operation(Operation {
                            conversation_id: conversation_id.clone(),
                            turn: number,
                            step,
                            call_id: call_id.clone(),
                            action: OperationAction::Read,
                            title: p.title,
                            status: p.status,
                            message: p.message,
                        }),
                    );
                };
                let tool_ctx = ToolContext {
                    store: ctx.store,
                    runtime: ctx.runtime,
                    cancel: ctx.cancel,
                    ambient: &SystemAmbient,
                    concurrency: ctx.config.limits.transform_concurrency,
                    progress: &progress,
                    integrations: &ctx.config.integrations,
                    mcp: ctx.mcp,
                };
                let result = tools::run(&call, page, &tool_ctx);
                if let Err(e) = &result {
                    let name = call.name().as_str();
                    tracing::info!(code = %e.code, "host tool {name} failed: {}", e.message);
                }
                let mut next = drain_inbox(&mut turn, ctx.inbox);
                next.extend(turn.handle(Input::HostToolResult { call_id, result }));
                next
            }
            Action::Commit(record) => {
                let stored = lock(ctx.store).and_then(|mut s| s.commit_turn(&record));
                if let Err(e) = &stored {
                    tracing::error!(code = %e.code, "turn not stored: {}", e.chain());
                }
                turn.handle(Input::Committed(stored))
            }
            Action::Finish => break,
        };
        queue.extend(next);
        queue.extend(drain_inbox(&mut turn, ctx.inbox));
    }
    if !turn.is_finished() {
        tracing::error!("turn {reply_to} stopped before it finished: an engine bug");
        return None;
    }
    turn.conversation().map(|id| Stored {
        conversation_id: id.clone(),
        conversation_share: turn.conversation_share(),
        cut: turn.was_cut(),
        call_time: turn.call_time(),
    })
}

/// What became of one request of [`ask_parts`].
#[derive(Debug)]
pub enum PartEvent {
    /// Request `i` went to the runtime.
    Started(usize),
    /// Request `i`'s answer (`CANCELLED` for one a cancel kept from starting).
    Replied(usize, Result<ModelReply>),
}

/// Asks the runtime each of `requests` on scoped worker threads, at most
/// `concurrency` in flight, and tells `on` (on this thread) as each starts
/// and answers, in the order that happens. After a cancel no request
/// starts (those in flight are interrupted through the token) and each
/// unstarted one is answered `CANCELLED`: every request gets one reply.
pub fn ask_parts(
    runtime: &dyn Runtime,
    cancel: &CancelToken,
    requests: &[Arc<ModelRequest>],
    concurrency: usize,
    on: &mut dyn FnMut(PartEvent),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, requests.len().max(1)) {
            let (tx, next) = (tx.clone(), &next);
            scope.spawn(move || loop {
                if cancel.is_cancelled() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(request) = requests.get(i) else {
                    break;
                };
                let _ = tx.send(PartEvent::Started(i));
                let reply = runtime.complete(request, cancel, &mut |_| {});
                let _ = tx.send(PartEvent::Replied(i, reply));
            });
        }
        drop(tx);
        for event in rx {
            on(event);
        }
    });
    let started = next.load(Ordering::SeqCst).min(requests.len());
    for i in started..requests.len() {
        on(PartEvent::Replied(i, Err(Error::cancelled())));
    }
}

/// Feeds the engine what the session forwarded since the last look.
fn drain_inbox(turn: &mut Turn<'_>, inbox: &Receiver<Input>) -> Vec<Action> {
    let mut actions = Vec::new();
    while let Ok(input) = inbox.try_recv() {
        actions.extend(turn.handle(input));
    }
    actions
}

fn lock(store: &Mutex<Store>) -> Result<MutexGuard<'_, Store>> {
    store
        .lock()
        .map_err(|_| Error::internal("the store lock was poisoned by an earlier failure"))
}

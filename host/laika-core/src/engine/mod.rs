//! The turn engine: one turn as a state machine, with no I/O of its own.
//!
//! A driver (the host's session, the replay harness, tests) feeds it
//! [`Input`]s — the store's answers, the model's text and reply, a cancel —
//! and carries out the [`Action`]s it returns: reserve a turn number, ask the
//! runtime, emit an event, commit the turn. Time and ids come from the
//! [`Ambient`] it is given.
//!
//! The steps: validate → reserve the turn number → pack → then the agent
//! loop, one step per model answer: compose schema and prompts
//! (interceptors) → ask the runtime, previewing the render as it streams
//! (with validation-retry) → sanitize → verify citations → `assistant` → for
//! each proposed call in order: gate it against the page as it is now → run
//! it (host tools here, browser tools by the extension, `ask` calls after
//! the user's approval) → its `tool_result` → then ask again with the
//! transcript and the latest page, until the model answers without calls, the
//! step cap, a repeated call on an unchanged page, the time budget or a
//! cancel → commit → `done` (the stop reason in it).
//!
//! Invariants kept here:
//! - the events of a turn are `session`, `turn.started`, `context_usage`,
//!   then per step `agent_state` `thinking`, any number of `text_delta` /
//!   `render_delta` / `render_reset` and an `assistant`, each
//!   `tool_call` followed (after its `agent_state`/`operation` events) by
//!   exactly one `tool_result`, or an `error`; `done` is always last and is
//!   emitted only after the store answered the commit;
//! - calls run one after another in the model's order; nothing runs while
//!   an earlier `ask` waits, after a call that did not succeed (the rest of
//!   the step is reported `NOT_RUN`), or after a cancel;
//! - an approval counts only for the call waiting on it, with its digest,
//!   before it expires; a result counts only for the call waiting on it;
//!   anything else is answered with a coded error and changes nothing;
//! - a turn refused before it has a number (bad conversation id, no number
//!   to be had) gets an `error`, then a `done` that says nothing was stored;
//! - every `render_delta` block is either confirmed by the `assistant` that
//!   follows (the blocks sent since the last `render_reset` are exactly the
//!   first blocks of its render) or withdrawn by a `render_reset`;
//! - a failed or cancelled turn is committed too, with its error code;
//! - model output reaches an event only after strict parsing, schema
//!   validation and render sanitizing (a preview block is sanitized alone);
//! - output cut by the token limit is not retried: asking again with the
//!   same limit would cut it again.

mod act;
mod output;
mod planning;
mod staging;
#[cfg(test)]
mod tests;

use crate::ambient::Ambient;
use crate::citation::{self, CitationReport};
use crate::collection::CollectionPack;
use crate::decoding::Decoding;
use crate::interceptor::{ComposedSchema, Pipeline};
use crate::model::{ContextWindow, ModelReply, ModelRequest, RetryFeedback};
use crate::pack::{self, Budget, PackInput};
use crate::render::{self, RenderLimits};
use crate::schema::{self, Issue};
use crate::stream::{Batch, Preview, TextPiece, COALESCE_INTERVAL};
use act::Acting;
use laika_protocol::agent::{AgentState, StopReason, ToolError};
use laika_protocol::conversation::History;
use laika_protocol::deferred::Deferred;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{
    AgentStateChange, AnswerSummary, AssistantMessage, CitationCounts, DecisionCounts, Done,
    DoneStatus, Event, RenderDelta, RenderReset, ResetReason, Session, TextDelta, Timings,
    TurnStarted,
};
use laika_protocol::history::{StepRecord, TurnRecord, TurnStatus};
use laika_protocol::ids::{CallId, CollectionId, ConversationId, RequestId};
use laika_protocol::limits::Limits;
use laika_protocol::llmcp::{self, RequestPacket, ResponsePacket};
use laika_protocol::mode::Mode;
use laika_protocol::model::RuntimeInfo;
use laika_protocol::observation::Observation;
use laika_protocol::render::ast::Doc;
use laika_protocol::tool_call::ToolOutput;
use laika_protocol::wire::{ToolResultRequest, TurnRequest};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const MAX_CONVERSATION_ID_LEN: usize = 128;
/// `RuntimeInfo.kind` of the extractive runtime.
const BUILTIN_KIND: &str = "builtin";
/// The least the answer gets of a tight window…
const MIN_OUTPUT_TOKENS: usize = 256;
/// …and the least the context gets before the answer's share shrinks.
const MIN_CONTEXT_TOKENS: usize = 256;

/// What a turn needs to know about the host it runs in.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub limits: Limits,
    /// The runtime that will answer, as the events name it.
    pub runtime: RuntimeInfo,
    /// `LAIKA_LOG_FULL_LLM`: store packets whole instead of redacted.
    pub store_full_packets: bool,
    /// The runtime's context window, as configured or as its server says;
    /// `None` when unknown (a fixed budget is used then).
    pub context_window: Option<ContextWindow>,
    /// Whether the runtime enforces the answer schema, and its configured
    /// output cap (the answer's token limit, if any).
    pub decoding: Decoding,
    /// The host's page indexes, kept between steps and turns on one page
    /// (`None`: every request over budget indexes its page anew).
    pub page_indexes: Option<Arc<dyn crate::select::PageIndexes>>,
    /// The names of the configured integrations `integration.invoke` may
    /// call (the gate denies any other).
    pub integrations: Vec<String>,
    /// The tools of the connected MCP servers, offered with the registry's.
    pub mcp: Arc<crate::tools::McpTools>,
    /// The turn's cancel token (the driver cancels it with the runtime):
    /// long checks stop when it is cancelled.
    pub cancel: crate::cancel::CancelToken,
    /// How long one model call of this runtime took in earlier turns, on
    /// average (`None`: none was timed): an `estimate` turns it into time.
    pub call_time: Option<Duration>,
}

/// The store's answer to [`Action::Reserve`]: the turn's number, what
/// the conversation said before it, and the collection sources the user
/// added themselves (the gate reads the others again only when asked).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reservation {
    pub turn: u32,
    pub history: History,
    pub user_sources: Vec<String>,
}

impl From<u32> for Reservation {
    fn from(turn: u32) -> Self {
        Reservation {
            turn,
            ..Reservation::default()
        }
    }
}

/// What the driver tells the engine.
#[derive(Debug)]
pub enum Input {
    /// The store's answer to [`Action::Reserve`].
    Reserved(Result<Reservation>),
    /// The next piece of the model's streamed text.
    ModelText(String),
    /// The runtime's answer to [`Action::Ask`].
    ModelReply(Result<ModelReply>),
    /// Request `index` of an [`Action::AskParts`] was sent to the runtime.
    PartStarted(usize),
    /// The runtime's answer to request `index` of an [`Action::AskParts`]
    /// (a cancelled one never started: `CANCELLED`).
    PartReply {
        index: usize,
        reply: Result<ModelReply>,
    },
    /// The extension's result for a browser call.
    ToolResult(Box<ToolResultRequest>),
    /// The user's answer to an `ask` call or an `estimate`, from the
    /// message `reply_to`.
    Approval {
        reply_to: RequestId,
        call_id: CallId,
        digest: String,
        approved: bool,
        /// An `estimate`'s third answer: the start of the page only.
        start_only: bool,
        /// A plan's edits, with its approval.
        plan: Option<laika_protocol::plan::PlanEdit>,
    },
    /// The store's answer to [`Action::LoadCollection`].
    CollectionLoaded(Result<CollectionPack>),
    /// The host's answer to [`Action::RunTool`]: the tool's result data
    /// (with a `message` sentence) or why it failed.
    HostToolResult {
        call_id: CallId,
        result: std::result::Result<ToolOutput, ToolError>,
    },
    /// The wait of an [`Action::Await`] ran out.
    Tick,
    /// The store's answer to [`Action::Commit`].
    Committed(Result<()>),
    /// The user cancelled. The driver also interrupts the runtime; whatever
    /// it answers afterwards, the turn ends as cancelled.
    Cancel,
}

/// What the engine asks the driver to do, in order.
// Actions live for one step and are moved once; boxing events would cost an
// allocation per streamed delta to save a few hundred bytes of stack.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Action {
    /// Reserve the conversation's next turn number and load its history;
    /// answer with [`Input::Reserved`].
    Reserve { conversation_id: ConversationId },
    /// Read the collection the turn answers over (its sources with their
    /// text); answer with [`Input::CollectionLoaded`].
    LoadCollection { collection_id: CollectionId },
    /// Run a host tool that needs the store or the runtime (collections,
    /// artifacts, transforms): the engine stays pure, the driver does the
    /// I/O and answers with [`Input::HostToolResult`] for `call_id`. It may
    /// emit `operation` events for the call's progress meanwhile.
    RunTool {
        call_id: CallId,
        call: laika_protocol::tool_call::ToolCall,
        /// The page the extension read for a capture (`source.capture`,
        /// `source.refresh`), which the host stores; `None` before it.
        page: Option<Deferred<Observation>>,
        /// For the progress events the driver emits.
        conversation_id: ConversationId,
        turn: u32,
        step: u32,
    },
    /// Send this event, in reply to the turn request.
    Emit(Event),
    /// Ask the runtime; stream its text as [`Input::ModelText`] and answer
    /// with [`Input::ModelReply`].
    /// The engine keeps its own handle for the retry that may follow; the
    /// driver drops its handle once the runtime answered.
    Ask(Arc<ModelRequest>),
    /// Ask the runtime each of these independent requests (a staged
    /// summary's round), at most `concurrency` in flight at once, none
    /// streamed. Feed [`Input::PartStarted`] as each is sent and
    /// [`Input::PartReply`] as each answers, in any order; once the turn's
    /// token is cancelled start no other and answer each unstarted one
    /// with `CANCELLED`. Exactly one `PartReply` per request.
    AskParts {
        requests: Vec<Arc<ModelRequest>>,
        concurrency: usize,
    },
    /// Wait for the extension (a tool result, an approval, a cancel) and
    /// feed what comes; if nothing has come when the ambient's monotonic
    /// clock reaches `until`, feed [`Input::Tick`]. An `Await` with more
    /// actions queued behind it is stale (each refused message renews the
    /// wait): carry those out instead.
    Await { until: Duration },
    /// Answer a message other than the turn request (an approval, a stale
    /// tool result).
    Reply { to: RequestId, event: Event },
    /// Store the turn (the store releases the reserved number whatever the
    /// outcome); answer with [`Input::Committed`].
    Commit(Box<TurnRecord>),
    /// The turn is over: nothing more will be asked or emitted.
    Finish,
}

/// A validated model answer, ready to show and store.
struct Answer {
    response: ResponsePacket,
    /// The sanitized render; the response holds its JSON for storage.
    render: Doc,
    citations: CitationReport,
    model: String,
    endpoint: Option<String>,
    attempts: u32,
    repairs: Vec<String>,
    dropped: usize,
    /// What `post_response` hooks attach to the stored response.
    attachments: Map<String, Value>,
}

/// What a turn has once it has a number and a packet.
struct Started {
    turn: u32,
    /// The first step's request: the turn's request in history.
    packet: RequestPacket,
    /// The page as first observed (its title and URL, for history; the
    /// observation itself is `Turn::page`, not copied: it may be 60 MiB).
    page: Option<laika_protocol::llmcp::PageRef>,
}

/// The model call in progress and what the next attempt needs.
struct Asking {
    composed: Arc<ComposedSchema>,
    /// The first attempt's user prompt, which every retry prompt repeats.
    base_user_prompt: String,
    request: Arc<ModelRequest>,
    preview: Preview,
    asked_at: Duration,
    last_issues: Vec<Issue>,
}

enum Phase {
    Reserving,
    /// Waiting for the collection, with the reserved turn number and history.
    Loading(Reservation),
    /// Waiting for the user's answer to an `estimate` (`staging`).
    Confirming(Box<staging::Confirming>),
    /// Reading the parts of a page too long for one call (`staging`).
    Staging(Box<staging::Staging>),
    Asking(Box<Asking>),
    Acting(Box<Acting>),
    /// Waiting for the user's answer to a proposed plan (`planning`).
    Proposing,
    /// Asking the model for a parallel stage's steps at once (`planning`).
    Parallel(Box<planning::Round>),
    Committing {
        /// How the committed record ended (the record itself went to the
        /// driver: it holds the whole request packet).
        status: TurnStatus,
        error_code: Option<ErrorCode>,
        answer: Option<AnswerSummary>,
        since: Duration,
    },
    Finished,
}

/// One turn. Build it with [`Turn::start`], then feed it inputs until it
/// returns [`Action::Finish`].
pub struct Turn<'a> {
    ambient: &'a dyn Ambient,
    settings: TurnSettings,
    request: TurnRequest,
    conversation_id: ConversationId,
    started_at: Duration,
    cancelled: bool,
    timings: Timings,
    started: Option<Started>,
    phase: Phase,
    /// The agent loop's current step, from 1 (0 before the first ask).
    step: u32,
    /// The page as last seen: the first observation, then the latest one a
    /// tool result brought.
    page: Option<Observation>,
    /// Every call so far and its outcome, for the next step's request.
    transcript: Vec<laika_protocol::llmcp::ToolPacket>,
    /// What each step asked, answered and did, for history.
    steps: Vec<StepRecord>,
    /// (call digest, page digest) of every call proposed so far.
    seen: HashSet<(String, String)>,
    /// Gate decisions over every step.
    decisions: DecisionCounts,
    /// The latest step's answer; the last one is the turn's.
    last: Option<Answer>,
    stop: StopReason,
    /// What the conversation said before this turn (from the store); its
    /// agent state takes this turn's tool deltas as they come.
    history: History,
    /// The ids of the collection sources the user added (from the store).
    user_sources: Vec<String>,
    /// Everything from outside the user this conversation saw (the gate
    /// asks before outgoing text carries it): earlier answers from the
    /// history, then every page, attached tab, collection source and tool
    /// result of this turn as it comes.
    provenance: crate::provenance::Outside,
    /// Whether the history, the first page and the collection are in
    /// `provenance` yet: they are read when it is first needed (the gate, a
    /// result, a new page), not before the model is asked, so a turn that
    /// only answers never reads them.
    outside_noted: bool,
    /// The agent state deltas this turn's tool results made, stored with it.
    agent_state_deltas: Vec<laika_protocol::agent_state::AgentStateDelta>,
    /// The context budget every step is packed within.
    budget: Option<Budget>,
    /// The answer's token limit in a known window (see [`Turn::budget`]).
    output: Option<u32>,
    /// The collection the turn answers over, once loaded (`Err`: it could
    /// not be read, which fails the turn).
    collection: Option<Result<CollectionPack>>,
    /// A staged summary's parts, once read (`staging`).
    staged: Option<staging::Staged>,
    /// The model's output was cut at the token limit in this turn (its
    /// answer closed at its last complete block, or failed).
    cut: bool,
    /// The turn's mode: the user's choice, else the first one the model
    /// stated; fixed once known (`mode`).
    mode: Option<Mode>,
    /// Model calls timed in this turn, and their time in all.
    call_times: (u32, Duration),
    /// The plan the model proposed in this turn, and how far it got.
    plan: Option<planning::PlanRun>,
    /// Why the proposed plan did not run (the turn is stored cancelled).
    declined: Option<String>,
}

impl<'a> Turn<'a> {
    /// A turn for `request`, and its first actions.
    pub fn start(
        request: TurnRequest,
        settings: TurnSettings,
        ambient: &'a dyn Ambient,
    ) -> (Turn<'a>, Vec<Action>) {
        let conversation_id = match &request.conversation_id {
            Some(id) if !id.is_empty() && id.len() <= MAX_CONVERSATION_ID_LEN => Ok(id.clone()),
            Some(_) => Err(Error::invalid_request(format!(
                "conversation_id must be 1..={MAX_CONVERSATION_ID_LEN} bytes"
            ))),
            None => Ok(ConversationId::from(ambient.new_id())),
        };
        let mut turn = Turn {
            ambient,
            settings,
            mode: request.mode,
            request,
            conversation_id: conversation_id.clone().unwrap_or_default(),
            started_at: ambient.monotonic(),
            cancelled: false,
            timings: Timings::default(),
            started: None,
            phase: Phase::Reserving,
            step: 0,
            page: None,
            transcript: Vec::new(),
            steps: Vec::new(),
            seen: HashSet::new(),
            decisions: DecisionCounts::default(),
            last: None,
            stop: StopReason::Answered,
            history: History::default(),
            user_sources: Vec::new(),
            provenance: crate::provenance::Outside::new(),
            outside_noted: false,
            agent_state_deltas: Vec::new(),
            budget: None,
            output: None,
            collection: None,
            staged: None,
            cut: false,
            call_times: (0, Duration::ZERO),
            plan: None,
            declined: None,
        };
        let actions = match conversation_id {
            Ok(conversation_id) => vec![Action::Reserve { conversation_id }],
            Err(e) => turn.reject(&e),
        };
        (turn, actions)
    }

    /// The id of the turn request, which every event of the turn answers.
    pub fn reply_to(&self) -> &RequestId {
        &self.request.id
    }

    /// The conversation of a turn that got a number (and so was committed
    /// once it finished); `None` for a turn rejected before that.
    pub fn conversation(&self) -> Option<&ConversationId> {
        self.started.as_ref().map(|_| &self.conversation_id)
    }

    /// The chars the conversation block got in this turn's requests, once
    /// its budget is known: the rolling summary is due when the history
    /// outgrows it.
    pub fn conversation_share(&self) -> Option<usize> {
        self.budget.as_ref().map(pack::conversation_share)
    }

    /// Whether the model's output was cut at the token limit in this turn:
    /// the model's record of cut answers (`decoding::CutRecord`) counts it.
    pub fn was_cut(&self) -> bool {
        self.cut
    }

    /// How long one model call took in this turn, on average (`None`:
    /// none answered), for the next turns' estimates.
    pub fn call_time(&self) -> Option<Duration> {
        let (n, total) = self.call_times;
        (n > 0).then(|| total / n)
    }

    fn note_call_time(&mut self, took: Duration) {
        self.call_times.0 += 1;
        self.call_times.1 += took;
    }

    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    /// Feeds one input; returns what to do next. An input the turn is not
    /// waiting for changes nothing.
    pub fn handle(&mut self, input: Input) -> Vec<Action> {
        match (input, &mut self.phase) {
            // Nothing runs after a cancel: a loop waiting on the extension
            // ends now; a model call ends when the interrupted runtime answers.
            (Input::Cancel, Phase::Acting(_)) => {
                self.cancelled = true;
                self.stop_acting()
            }
            // Nothing was asked yet: the turn ends now.
            (Input::Cancel, Phase::Confirming(_) | Phase::Proposing) => {
                self.cancelled = true;
                self.fail(Error::cancelled())
            }
            (Input::Cancel, _) => {
                self.cancelled = true;
                Vec::new()
            }
            (Input::ToolResult(result), _) => {
                let actions = self.tool_result(*result);
                self.still_waiting(actions)
            }
            (
                Input::Approval {
                    reply_to,
                    call_id,
                    digest,
                    approved,
                    start_only,
                    ..
                },
                Phase::Confirming(_),
            ) => self.confirmed(reply_to, &call_id, &digest, (approved, start_only)),
            (
                Input::Approval {
                    reply_to,
                    call_id,
                    digest,
                    approved,
                    plan,
                    ..
                },
                Phase::Proposing,
            ) => self.plan_decided(reply_to, &call_id, &digest, approved, plan),
            (
                Input::Approval {
                    reply_to,
                    call_id,
                    digest,
                    approved,
                    ..
                },
                _,
            ) => {
                let actions = self.approval(reply_to, &call_id, &digest, approved);
                self.still_waiting(actions)
            }
            (Input::Tick, Phase::Acting(_)) => self.tick(),
            (Input::Tick, Phase::Confirming(_)) => self.confirm_tick(),
            (Input::Tick, Phase::Proposing) => self.plan_tick(),
            (Input::Reserved(Err(e)), Phase::Reserving) => self.reject(&e),
            (Input::Reserved(Ok(reserved)), Phase::Reserving) => {
                match self.request.collection_id.clone() {
                    Some(collection_id) => {
                        self.phase = Phase::Loading(reserved);
                        vec![Action::LoadCollection { collection_id }]
                    }
                    None => self.begin(reserved),
                }
            }
            (Input::CollectionLoaded(loaded), Phase::Loading(reserved)) => {
                let reserved = std::mem::take(reserved);
                self.collection = Some(loaded);
                self.begin(reserved)
            }
            (Input::HostToolResult { call_id, result }, Phase::Acting(_)) => {
                let actions = self.host_tool_result(&call_id, result);
                self.still_waiting(actions)
            }
            (Input::ModelText(piece), Phase::Asking(asking)) => {
                let now = self.ambient.monotonic();
                let batch = asking.preview.push(&piece, now);
                // Held text goes before the blocks that replace it; new
                // text belongs to the block after those just completed.
                let held = batch.as_ref().and_then(|_| asking.preview.flush_text(now));
                let text = asking.preview.take_text(now);
                let mut actions: Vec<Action> =
                    held.map(|t| self.text_delta(t)).into_iter().collect();
                actions.extend(batch.map(|b| self.delta(b)));
                actions.extend(text.into_iter().map(|t| self.text_delta(t)));
                actions
            }
            (Input::PartStarted(index), Phase::Staging(_)) => self.part_started(index),
            (Input::PartReply { index, reply }, Phase::Staging(_)) => {
                self.part_replied(index, reply)
            }
            (Input::PartStarted(index), Phase::Parallel(_)) => self.round_started(index),
            (Input::PartReply { index, reply }, Phase::Parallel(_)) => {
                self.round_replied(index, reply)
            }
            (Input::ModelReply(reply), Phase::Asking(_)) => self.answered(reply),
            (Input::Committed(stored), Phase::Committing { .. }) => self.committed(stored),
            _ => Vec::new(),
        }
    }

    /// Ends a turn that never got a number: an `error`, then a `done` that
    /// says nothing was stored.
    fn reject(&mut self, error: &Error) -> Vec<Action> {
        self.phase = Phase::Finished;
        let conversation_id = Some(self.conversation_id.clone()).filter(|c| !c.is_empty());
        vec![
            Action::Emit(Event::error(error)),
            Action::Emit(Event::Done(Done::refused(
                conversation_id,
                error.code,
                self.settings.runtime.clone(),
            ))),
            Action::Finish,
        ]
    }

    /// Packs the request, announces the turn and asks the model.
    fn begin(&mut self, reserved: Reservation) -> Vec<Action> {
        let number = reserved.turn;
        self.history = reserved.history;
        self.user_sources = reserved.user_sources;
        let t = self.ambient.monotonic();
        // The raw observation is read once, here: take it rather than copy it.
        let observation = std::mem::take(&mut self.request.observation).parse();
        let user_message_id = self.ambient.new_id();
        let budget = match self.budget() {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        let packed = pack::pack_with(
            &PackInput {
                conversation_id: &self.conversation_id,
                turn: number,
                user_message_id: &user_message_id,
                user_text: &self.request.message.text,
                task: &self.request.task,
                observation: observation.as_ref().ok(),
                browser: self.request.tab.browser.as_deref().unwrap_or("unknown"),
                tab_id: self.request.tab.tab_id.clone(),
                history: Some(&self.history),
                recent_turns: self.settings.limits.recent_turns,
                ambient: self.ambient,
                for_model: self.settings.runtime.kind != BUILTIN_KIND,
            },
            budget,
            self.settings.page_indexes.as_deref(),
        );
        let mut packed = packed;
        self.pack_collection(&mut packed, budget);
        let plan = self.stage_plan(&packed, observation.as_ref().ok(), budget);
        // What the packed request reads: the start of the page, which the
        // user may choose over reading it all.
        let mut start_usage = None;
        if let Some(Ok(plan)) = &plan {
            let staged = crate::staged::usage(&packed, plan);
            start_usage = Some(std::mem::replace(&mut packed.usage, staged));
        }
        self.timings.pack_ms = self.ms_since(t);
        let mut actions = vec![
            Action::Emit(Event::Session(Session {
                conversation_id: self.conversation_id.clone(),
                turn: number,
                resumed: !self.history.turns.is_empty(),
                agent_state: self.history.agent_state.clone(),
            })),
            Action::Emit(Event::TurnStarted(TurnStarted {
                conversation_id: self.conversation_id.clone(),
                turn: number,
                request_id: packed.packet.id.clone(),
                task: self.request.task.name,
                runtime: self.settings.runtime.clone(),
            })),
            Action::Emit(Event::ContextUsage(packed.usage)),
        ];
        let (observation, invalid) = match observation {
            Ok(o) => (Some(o), None),
            Err(e) => (None, Some(e)),
        };
        let invalid = invalid.or_else(|| {
            self.collection
                .as_ref()
                .and_then(|c| c.as_ref().err().cloned())
        });
        let first = packed.packet.clone();
        self.started = Some(Started {
            turn: number,
            packet: packed.packet,
            page: observation
                .as_ref()
                .map(|o| laika_protocol::llmcp::PageRef {
                    url: o.summary.url.clone(),
                    title: o.summary.title.clone(),
                }),
        });
        self.page = observation;
        let next = match (invalid, plan) {
            (Some(e), _) | (None, Some(Err(e))) => self.fail(e),
            (None, Some(Ok(plan))) => self.stage_or_confirm(plan, first, start_usage),
            (None, None) => self.compose(first),
        };
        actions.extend(next);
        actions
    }

    /// Starts the next step with `packet`: composes the schema and prompts,
    /// then makes the first attempt.
    fn compose(&mut self, packet: RequestPacket) -> Vec<Action> {
        match self.prepare(packet) {
            Ok(asking) => self.begin_step(asking, None),
            Err(e) => self.fail(e),
        }
    }

    /// A step's model call, composed (schema and prompts) and not yet asked.
    fn prepare(&self, packet: RequestPacket) -> Result<Box<Asking>> {
        let pipeline = Pipeline::standard();
        let composed = pipeline.schema(packet.input.task.name, self.ambient)?;
        let decoding = Decoding {
            max_tokens: self.output_tokens(),
            ..self.settings.decoding
        };
        let request = pipeline.model_request(packet, &composed, decoding, &self.settings.mcp);
        Ok(Box::new(Asking {
            composed,
            base_user_prompt: request.user_prompt.clone(),
            request: Arc::new(request),
            preview: Preview::new(RenderLimits::default(), COALESCE_INTERVAL),
            asked_at: Duration::ZERO,
            last_issues: Vec::new(),
        }))
    }

    /// Starts the next step of the agent loop with `asking`: asks the
    /// model, or, when its first answer came already (`answered`: a
    /// parallel stage's round, with how long the call took), reviews that
    /// answer as if it had just come.
    fn begin_step(
        &mut self,
        mut asking: Box<Asking>,
        answered: Option<(Result<ModelReply>, Duration)>,
    ) -> Vec<Action> {
        self.step += 1;
        self.steps.push(StepRecord {
            step: self.step,
            request_packet: (self.step > 1)
                .then(|| serde_json::to_value(&asking.request.packet).ok())
                .flatten(),
            response_packet: None,
            tool_packets: Vec::new(),
        });
        let mut actions = vec![self.agent_state(AgentState::Thinking, None)];
        match answered {
            None => {
                self.phase = Phase::Asking(asking);
                actions.extend(self.ask());
            }
            Some((reply, took)) => {
                asking.asked_at = self.ambient.monotonic().saturating_sub(took);
                self.phase = Phase::Asking(asking);
                actions.extend(self.answered(reply));
            }
        }
        actions
    }

    /// Sends the current attempt to the runtime, unless the turn was cancelled.
    fn ask(&mut self) -> Vec<Action> {
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        let now = self.ambient.monotonic();
        let Phase::Asking(asking) = &mut self.phase else {
            return self.fail(Error::internal("the turn asked the model out of order"));
        };
        asking.preview = Preview::new(RenderLimits::default(), COALESCE_INTERVAL);
        asking.asked_at = now;
        vec![Action::Ask(asking.request.clone())]
    }

    /// The runtime answered (or failed): validate, retry or finish.
    fn answered(&mut self, reply: Result<ModelReply>) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let cancelled = self.cancelled;
        let Phase::Asking(asking) = &mut self.phase else {
            return Vec::new();
        };
        let took = now.saturating_sub(asking.asked_at);
        self.timings.runtime_ms += ms(took);
        self.call_times.0 += 1;
        self.call_times.1 += took;
        let reply = match reply {
            Ok(_) if cancelled => Err(Error::cancelled()),
            other => other,
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                let mut actions = self.reset(ResetReason::Failed);
                actions.extend(self.step_failed(e));
                return actions;
            }
        };
        let ambient = self.ambient;
        let checked = output::check(
            &reply.text,
            &asking.request.packet,
            asking.composed.validator(),
            &|| ambient.new_id(),
            &|| ambient.now_iso8601(),
        );
        let length = reply.finish_reason.as_deref() == Some("length");
        // Cut at the token limit: asking again with the same limit would
        // cut it again, so what was written whole is kept.
        let closed = match &checked {
            Err(rejected) if rejected.truncated || length => output::close_cut(
                &reply.text,
                &asking.request.packet,
                asking.composed.validator(),
                &|| ambient.new_id(),
                &|| ambient.now_iso8601(),
            ),
            _ => None,
        };
        self.timings.validate_ms += self.ms_since(now);
        match checked {
            Ok(valid) => self.accept(valid, reply),
            Err(rejected) => {
                if rejected.truncated || length {
                    self.cut = true;
                    if let Some(valid) = closed {
                        return self.accept(valid, reply);
                    }
                    let why = if length {
                        "the runtime stopped at its token limit".to_string()
                    } else {
                        rejected
                            .issues
                            .first()
                            .map(|i| i.message.clone())
                            .unwrap_or_default()
                    };
                    let mut actions = self.reset(ResetReason::Failed);
                    actions.extend(self.step_failed(Error::new(
                        ErrorCode::InvalidModelOutput,
                        format!("the model's output was cut off before any part of the answer was complete ({why}); raise runtime.max_tokens"),
                    )));
                    return actions;
                }
                self.retry(reply.text, rejected.issues)
            }
        }
    }

    /// Feeds the errors back for another attempt, or gives up after the last.
    fn retry(&mut self, previous_output: String, issues: Vec<Issue>) -> Vec<Action> {
        let max_attempts = self.settings.limits.max_retries + 1;
        let Phase::Asking(asking) = &mut self.phase else {
            return Vec::new();
        };
        let last = asking.request.attempt + 1 >= max_attempts;
        let reason = if last {
            ResetReason::Failed
        } else {
            ResetReason::Retry
        };
        // The driver has dropped its handle by now, so this does not copy.
        let request = Arc::make_mut(&mut asking.request);
        request.user_prompt =
            schema::retry_prompt(&asking.base_user_prompt, &previous_output, &issues);
        request.feedback = Some(RetryFeedback {
            previous_output,
            errors: issues
                .iter()
                .map(|i| format!("{}: {}", i.path, i.message))
                .collect(),
        });
        request.attempt += 1;
        asking.last_issues = issues;
        let first = asking
            .last_issues
            .first()
            .map(|i| {
                format!(
                    "{}: {}",
                    if i.path.is_empty() { "/" } else { &i.path },
                    i.message
                )
            })
            .unwrap_or_default();
        let mut actions = self.reset(reason);
        if last {
            actions.extend(self.step_failed(Error::new(
                ErrorCode::InvalidModelOutput,
                format!(
                    "the model's output was still invalid after {max_attempts} attempts ({first})"
                ),
            )));
        } else {
            actions.extend(self.ask());
        }
        actions
    }

    /// A valid output: flush the preview, then sanitize, verify and gate.
    fn accept(&mut self, valid: output::Valid, reply: ModelReply) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Asking(asking) = &mut self.phase else {
            return Vec::new();
        };
        let held = asking.preview.flush_text(now);
        let flushed = asking.preview.finish(now);
        let attempts = asking.request.attempt + 1;
        let mut actions: Vec<Action> = held.map(|t| self.text_delta(t)).into_iter().collect();
        actions.extend(flushed.into_iter().map(|b| self.delta(b)));
        let attachments = Pipeline::standard().post_response(&valid.value).attachments;
        let Some(mut answer) = self.review(valid, reply, attempts, attachments) else {
            actions.extend(self.fail(Error::internal("the turn lost its packet")));
            return actions;
        };
        self.timings.validate_ms += self.ms_since(now);
        self.mode = self.mode.or(answer.response.mode);
        let confirmed = match &self.phase {
            Phase::Asking(asking) => asking
                .preview
                .is_prefix_of(&answer.response.assistant.render),
            _ => true,
        };
        if !confirmed {
            actions.extend(self.reset(ResetReason::Replaced));
        }
        actions.extend(self.close_reduce(
            laika_protocol::agent::OperationStatus::Success,
            "Summarized.".into(),
        ));
        actions.push(self.assistant(&answer));
        // A plan comes instead of calls: none runs before the user approved.
        let plan = answer.response.plan.clone().filter(|_| self.takes_plan());
        let calls = std::mem::take(&mut answer.response.tool_calls);
        let calls = if plan.is_some() { Vec::new() } else { calls };
        let response_id = answer.response.id.clone();
        let acting = Acting::new(response_id, calls, self.settings.limits.max_tool_calls);
        // The stored response keeps the calls that were looked at, and the
        // first refused one.
        answer.response.tool_calls = acting.proposed();
        if let Some(step) = self.steps.last_mut() {
            step.response_packet = Some(stored_response(&answer));
        }
        self.last = Some(answer);
        if let Some(plan) = plan {
            actions.extend(self.propose_plan(plan));
        } else if acting.is_empty() && self.in_plan_step() {
            actions.extend(self.plan_step_over(true, None));
        } else if acting.is_empty() {
            actions.extend(self.finish_loop(StopReason::Answered));
        } else {
            self.phase = Phase::Acting(Box::new(acting));
            actions.extend(self.act());
        }
        actions
    }

    /// Sanitizes the render and verifies citations against the documents
    /// this step was shown.
    fn review(
        &self,
        valid: output::Valid,
        reply: ModelReply,
        attempts: u32,
        attachments: Map<String, Value>,
    ) -> Option<Answer> {
        let Phase::Asking(asking) = &self.phase else {
            return None;
        };
        let mut response = valid.response;
        let mut sanitized = render::sanitize(&response.assistant.render, &RenderLimits::default());
        // The reduce step of a staged summary: its documents are part
        // summaries (the model's words), so quotes are checked against the
        // page itself, and parts not read are named.
        let staged = self.staged.as_ref().filter(|_| self.step == 1);
        let page_docs;
        let documents = match (staged, &self.page) {
            (Some(staged), Some(page)) => {
                if let Some(notice) = crate::staged::unread_notice(&staged.parts_read) {
                    sanitized
                        .render
                        .children
                        .push(laika_protocol::render::ast::Block::Paragraph {
                            children: vec![laika_protocol::render::ast::Inline::Text(
                                laika_protocol::render::ast::Text::new(notice),
                            )],
                        });
                }
                let mut docs = crate::staged::page_documents(page);
                docs.extend(
                    asking
                        .request
                        .packet
                        .context
                        .documents
                        .iter()
                        .filter(|d| !crate::staged::is_page_text(&d.doc_id))
                        .cloned(),
                );
                page_docs = docs;
                &page_docs
            }
            // The page's handles (its main region, items, comments and
            // elements) name where a quote stands on the page, though the
            // model was sent the page's text once, without them.
            (None, Some(page)) => {
                page_docs =
                    crate::task_view::with_handles(&asking.request.packet.context.documents, page);
                &page_docs
            }
            _ => &asking.request.packet.context.documents,
        };
        response.assistant.render = sanitized.render.to_value();
        response.assistant.choices = match response.mode {
            Some(Mode::Clarify) => crate::mode::choices(&response.assistant.choices),
            _ => Vec::new(),
        };
        response.assistant.follow_ups = if crate::follow_ups::offered(&asking.request.packet) {
            crate::follow_ups::follow_ups(&response.assistant.follow_ups)
        } else {
            Vec::new()
        };
        let citations = citation::verify(&response.assistant.citations, documents);
        response.assistant.citations = citations
            .citations
            .iter()
            .map(|c| llmcp::Citation {
                doc_id: c.doc_id.clone(),
                node_id: c.node_id.clone(),
                handle_id: c.handle_id.clone(),
                quote: c.quote.clone(),
                verified: Some(c.verified),
            })
            .collect();
        Some(Answer {
            response,
            render: sanitized.render,
            citations,
            model: reply.model,
            endpoint: reply.endpoint,
            attempts,
            repairs: valid.repairs,
            dropped: sanitized.dropped.len(),
            attachments,
        })
    }

    /// One step's `assistant` event.
    fn assistant(&self, answer: &Answer) -> Action {
        Action::Emit(Event::Assistant(AssistantMessage {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step,
            response_id: answer.response.id.clone(),
            title: answer.response.assistant.title.clone(),
            render: answer.render.clone(),
            citations: answer.citations.citations.clone(),
            data: answer.response.assistant.data.clone(),
            mode: self.mode,
            choices: answer.response.assistant.choices.clone(),
            follow_ups: answer.response.assistant.follow_ups.clone(),
        }))
    }

    /// Ends the loop for `reason` with the latest step's answer as the
    /// turn's, then commits.
    fn finish_loop(&mut self, reason: StopReason) -> Vec<Action> {
        self.stop = reason;
        let Some(answer) = self.last.take() else {
            return self.fail(Error::internal("the agent loop stopped without an answer"));
        };
        let mut record = self.record(true);
        if let Some(why) = self.declined.take() {
            record.status = TurnStatus::Cancelled;
            record.error = Some(Error::new(ErrorCode::Cancelled, why));
        }
        // The last step's response is the turn's response.
        if let Some(step) = record.steps.last_mut() {
            step.response_packet = None;
        }
        record.response_packet = Some(stored_response(&answer));
        record.answer_text = crate::render::text::doc_text(&answer.render);
        record.model_id = Some(answer.model.clone());
        record.attempts = answer.attempts;
        record.citations_total = answer.citations.total as u32;
        record.citations_verified = answer.citations.verified as u32;
        let summary = AnswerSummary {
            response_id: answer.response.id.clone(),
            model: answer.model,
            attempts: answer.attempts,
            first_try_valid: answer.attempts == 1,
            repairs: answer.repairs,
            render_dropped: answer.dropped,
            citations: CitationCounts {
                total: answer.citations.total,
                verified: answer.citations.verified,
                ratio: answer.citations.ratio,
            },
            tool_calls: self.decisions,
            endpoint: answer.endpoint,
        };
        self.commit(record, Some(summary))
    }

    /// Reports the error, then commits the turn as failed or cancelled.
    fn fail(&mut self, error: Error) -> Vec<Action> {
        let mut record = self.record(false);
        (record.status, self.stop) = if error.code == ErrorCode::Cancelled {
            (TurnStatus::Cancelled, StopReason::Cancelled)
        } else {
            (TurnStatus::Failed, StopReason::Failed)
        };
        let mut actions: Vec<Action> = self
            .close_reduce(
                laika_protocol::agent::OperationStatus::Error,
                format!("{}: {}", error.code.as_str(), error.message),
            )
            .into_iter()
            .collect();
        actions.push(Action::Emit(Event::error(&error)));
        record.error = Some(error);
        actions.extend(self.commit(record, None));
        actions
    }

    fn commit(&mut self, mut record: TurnRecord, answer: Option<AnswerSummary>) -> Vec<Action> {
        record.timings = serde_json::json!({
            "pack_ms": self.timings.pack_ms,
            "runtime_ms": self.timings.runtime_ms,
            "validate_ms": self.timings.validate_ms,
            "tools_ms": self.timings.tools_ms,
            "total_ms": self.ms_since(self.started_at),
            "steps": self.step,
            "stop_reason": self.stop,
        });
        if self.cut {
            record.timings["cut_short"] = serde_json::json!(true);
        }
        let mut actions = self.settle_plan();
        record.plan = self.plan.as_ref().map(|r| r.plan().clone());
        // Only a loop that acted has a state worth closing in the step list.
        if !self.transcript.is_empty() {
            actions.push(self.agent_state(AgentState::Done, None));
        }
        self.phase = Phase::Committing {
            status: record.status,
            error_code: record.error.as_ref().map(|e| e.code),
            answer,
            since: self.ambient.monotonic(),
        };
        actions.push(Action::Commit(Box::new(record)));
        actions
    }

    /// The store answered: report a failed commit, then `done`.
    fn committed(&mut self, stored: Result<()>) -> Vec<Action> {
        let Phase::Committing {
            status,
            error_code,
            answer,
            since,
        } = std::mem::replace(&mut self.phase, Phase::Finished)
        else {
            return Vec::new();
        };
        self.timings.store_ms = self.ms_since(since);
        self.timings.total_ms = self.ms_since(self.started_at);
        let mut actions = Vec::new();
        if let Err(e) = &stored {
            actions.push(Action::Emit(Event::error(e)));
        }
        let status = match (&stored, status) {
            (Err(_), _) | (Ok(()), TurnStatus::Failed) => DoneStatus::Failed,
            (Ok(()), TurnStatus::Ok) => DoneStatus::Ok,
            (Ok(()), TurnStatus::Cancelled) => DoneStatus::Cancelled,
        };
        actions.push(Action::Emit(Event::Done(Done {
            conversation_id: Some(self.conversation_id.clone()),
            turn: self.turn_number(),
            request_id: self.started.as_ref().map(|s| s.packet.id.clone()),
            status,
            error_code: error_code.or(stored.as_ref().err().map(|e| e.code)),
            runtime: self.settings.runtime.clone(),
            stored: stored.is_ok(),
            stop_reason: self.stop,
            steps: self
                .steps
                .iter()
                .filter(|s| s.response_packet.is_some())
                .count() as u32,
            timings: self.timings,
            answer,
        })));
        actions.push(Action::Finish);
        actions
    }

    /// The history record of this turn; page details come from the
    /// observation only for an answered turn.
    fn record(&self, answered: bool) -> TurnRecord {
        let page = self
            .started
            .as_ref()
            .and_then(|s| s.page.as_ref())
            .filter(|_| answered);
        let title = self
            .request
            .tab
            .title
            .clone()
            .or_else(|| page.map(|p| p.title.clone()))
            .filter(|t| !t.is_empty());
        let page_url = self
            .request
            .tab
            .url
            .as_deref()
            .or_else(|| page.map(|p| p.url.as_str()))
            .map(crate::redact::strip_url_credentials);
        let packet = self.started.as_ref().map(|s| &s.packet);
        TurnRecord {
            conversation_id: self.conversation_id.clone(),
            title,
            turn: self.turn_number(),
            created_at: packet.map(|p| p.created_at.clone()).unwrap_or_default(),
            task: self.request.task.name.as_str().into(),
            page_url,
            user_message_id: packet
                .map(|p| p.input.user_message.id.clone())
                .unwrap_or_default(),
            user_text: packet
                .map(|p| p.input.user_message.text.clone())
                .unwrap_or_default(),
            request_packet: packet
                .and_then(|p| serde_json::to_value(p).ok())
                .unwrap_or(Value::Null),
            response_packet: None,
            answer_text: String::new(),
            model_id: Some(self.settings.runtime.model.clone()),
            status: TurnStatus::Ok,
            error: None,
            attempts: 0,
            citations_total: 0,
            citations_verified: 0,
            timings: Value::Null,
            store_full_packets: self.settings.store_full_packets,
            steps: self.steps.clone(),
            agent_state_deltas: self.agent_state_deltas.clone(),
            plan: None,
        }
    }

    /// The context budget of this turn's requests, worked out once: from
    /// the runtime's context window when it is known (less the answer's
    /// tokens and what every request carries besides the context: the
    /// system prompt, the envelope, the question), else the runtime's fixed
    /// budget. When the window is tight, the answer's share shrinks (down
    /// to [`MIN_OUTPUT_TOKENS`]) so the documents keep some room.
    fn budget(&mut self) -> Result<Budget> {
        if let Some(budget) = self.budget {
            return Ok(budget);
        }
        let limits = &self.settings.limits;
        let budget = match (self.window().cloned(), self.output_tokens()) {
            (Some(window), Some(wanted)) => {
                let pipeline = Pipeline::standard();
                let composed = pipeline.schema(self.request.task.name, self.ambient)?;
                let bare = pack::pack(
                    &PackInput {
                        conversation_id: &self.conversation_id,
                        turn: 1,
                        user_message_id: "",
                        user_text: &self.request.message.text,
                        task: &self.request.task,
                        observation: None,
                        browser: "",
                        tab_id: None,
                        history: None,
                        recent_turns: 0,
                        ambient: self.ambient,
                        for_model: self.settings.runtime.kind != BUILTIN_KIND,
                    },
                    Budget::for_runtime(&self.settings.runtime.kind, limits),
                );
                let decoding = Decoding {
                    max_tokens: Some(wanted),
                    ..self.settings.decoding
                };
                let bare =
                    pipeline.model_request(bare.packet, &composed, decoding, &self.settings.mcp);
                let fixed = bare.system_prompt.chars().count() + bare.user_prompt.chars().count();
                let room = Budget::for_window(window.tokens, 0, fixed, limits).max_tokens;
                let output = if room >= wanted as usize + MIN_CONTEXT_TOKENS {
                    wanted
                } else {
                    room.saturating_sub(MIN_CONTEXT_TOKENS)
                        .max(MIN_OUTPUT_TOKENS)
                        .min(wanted as usize) as u32
                };
                self.output = Some(output);
                Budget::for_window(window.tokens, output as usize, fixed, limits)
            }
            _ => Budget::for_runtime(&self.settings.runtime.kind, limits),
        };
        self.budget = Some(budget);
        Ok(budget)
    }

    /// The answer's token limit: as worked out by [`Turn::budget`], else as
    /// configured, else, when the window is known, a third of it (at most
    /// [`crate::decoding::DEFAULT_MAX_TOKENS`], which holds a full answer).
    fn output_tokens(&self) -> Option<u32> {
        if self.output.is_some() {
            return self.output;
        }
        let window = self.window()?;
        let default = (window.tokens / 3).min(crate::decoding::DEFAULT_MAX_TOKENS as usize) as u32;
        Some(
            self.settings
                .decoding
                .max_tokens
                .unwrap_or(default)
                .min(window.tokens as u32 / 2),
        )
    }

    /// The model's context window, when known. The builtin runtime has
    /// none: it reads any page whole, whatever window is configured.
    fn window(&self) -> Option<&ContextWindow> {
        self.settings
            .context_window
            .as_ref()
            .filter(|_| self.settings.runtime.kind != BUILTIN_KIND)
    }

    /// A turn over a collection packs the collection instead of the page;
    /// a question (`web.answer`) puts the passages that answer it first.
    /// Adds what came from outside the user to the provenance. Reading
    /// stops if the turn is cancelled, and the turn ends as cancelled.
    fn note_outside(
        &mut self,
        add: impl FnOnce(
            &mut crate::provenance::Outside,
            Option<&crate::cancel::CancelToken>,
        ) -> std::result::Result<(), crate::provenance::Cancelled>,
    ) {
        let cancel = self.settings.cancel.clone();
        if add(&mut self.provenance, Some(&cancel)).is_err() {
            self.cancelled = true;
        }
    }

    /// Notes the history, the first page and the collection, once, before
    /// anything the turn sees later.
    pub(super) fn note_start(&mut self) {
        if std::mem::replace(&mut self.outside_noted, true) {
            return;
        }
        let history = std::mem::take(&mut self.history);
        self.note_outside(|p, c| p.elsewhere().add_history(&history, c));
        self.history = history;
        self.note_current_page();
        self.note_collection();
    }

    /// A new page (one left by a redirect stays known): it becomes the
    /// current page.
    pub(super) fn note_page(&mut self, page: Observation) {
        self.note_start();
        self.page = Some(page);
        self.note_current_page();
    }

    /// The page as it is now, with the tabs the user attached.
    fn note_current_page(&mut self) {
        let Some(page) = self.page.take() else {
            return;
        };
        self.note_outside(|p, c| p.note_page(&page, c));
        self.page = Some(page);
    }

    fn note_collection(&mut self) {
        let Some(Ok(collection)) = self.collection.take() else {
            return;
        };
        self.note_outside(|p, c| {
            let p = p.elsewhere();
            collection.sources.iter().try_for_each(|s| {
                p.add(&s.title, c)?;
                p.add(&s.text, c)?;
                s.url.as_deref().map_or(Ok(()), |u| p.add(u, c))
            })
        });
        self.collection = Some(Ok(collection));
    }

    /// A tool's result, as the model will read it.
    pub(super) fn note_result(&mut self, result: &Value) {
        self.note_start();
        self.note_outside(|p, c| p.elsewhere().add_value(result, c));
    }

    fn pack_collection(&self, packed: &mut pack::Packed, budget: Budget) {
        let Some(Ok(collection)) = &self.collection else {
            return;
        };
        let question = match self.request.task.name {
            llmcp::TaskName::Answer => Some(
                self.request
                    .task
                    .args
                    .get("question")
                    .and_then(Value::as_str)
                    .unwrap_or(&self.request.message.text),
            ),
            _ => None,
        };
        crate::collection::pack_into(packed, collection, budget, question);
    }

    fn turn_number(&self) -> u32 {
        self.started.as_ref().map_or(0, |s| s.turn)
    }

    fn delta(&self, batch: Batch) -> Action {
        Action::Emit(Event::RenderDelta(RenderDelta {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step,
            start_index: batch.start_index,
            blocks: batch.blocks,
        }))
    }

    fn text_delta(&self, piece: TextPiece) -> Action {
        Action::Emit(Event::TextDelta(TextDelta {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step,
            index: piece.index,
            text: piece.text,
        }))
    }

    /// Withdraws the preview of the current attempt, if any block was sent.
    fn reset(&self, reason: ResetReason) -> Vec<Action> {
        match &self.phase {
            Phase::Asking(asking) if asking.preview.shown_any() => {
                vec![Action::Emit(Event::RenderReset(RenderReset {
                    conversation_id: self.conversation_id.clone(),
                    turn: self.turn_number(),
                    step: self.step,
                    reason,
                }))]
            }
            _ => Vec::new(),
        }
    }

    /// An `operation` event of this turn.
    fn operation_event(
        &self,
        step: u32,
        call_id: CallId,
        action: laika_protocol::agent::OperationAction,
        title: String,
        (status, message): (laika_protocol::agent::OperationStatus, Option<String>),
    ) -> Action {
        Action::Emit(Event::Operation(laika_protocol::event::Operation {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step,
            call_id,
            action,
            title,
            status,
            message,
        }))
    }

    fn agent_state(&self, state: AgentState, call_id: Option<CallId>) -> Action {
        self.agent_state_with(state, call_id, None)
    }

    /// `executing` for a call the host prepared, with what it prepared.
    fn executing_with(&self, call_id: &CallId, input: ToolOutput) -> Action {
        self.agent_state_with(AgentState::Executing, Some(call_id.clone()), Some(input))
    }

    fn agent_state_with(
        &self,
        state: AgentState,
        call_id: Option<CallId>,
        input: Option<ToolOutput>,
    ) -> Action {
        Action::Emit(Event::AgentState(AgentStateChange {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step.max(1),
            state,
            call_id,
            input,
        }))
    }

    fn ms_since(&self, since: Duration) -> f64 {
        ms(self.ambient.monotonic().saturating_sub(since))
    }
}

/// A step's response as history keeps it: the validated packet plus what
/// the `post_response` hooks attached.
fn stored_response(answer: &Answer) -> Value {
    let mut stored = serde_json::to_value(&answer.response).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut stored {
        fields.extend(answer.attachments.clone());
    }
    stored
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

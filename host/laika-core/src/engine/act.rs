//! The acting half of an agent-loop step: the proposed calls, one after
//! another — gate, run (here for host tools, by the extension for browser
//! tools, after the user's approval for `ask`), report — then the next step's
//! request with the transcript and the latest page.

use super::{ms, Action, Phase, Turn};
use crate::agent;
use crate::agent_state;
use crate::app;
use crate::gate::{self, GateContext};
use crate::pack::{self, Budget, PackInput};
use crate::tools;
use laika_protocol::agent::{
    codes, AgentState, OperationStatus, StopReason, ToolError, ToolStatus,
};
use laika_protocol::error::{Error, ErrorCode};
use laika_protocol::event::{Event, ToolCallProposal, ToolCallResult, ToolTarget};
use laika_protocol::ids::{CallId, RequestId};
use laika_protocol::llmcp::{
    ConversationRef, PageRef, Protocol, RequestPacket, Sender, ToolCall, ToolInReplyTo,
    ToolOutcome, ToolPacket,
};
use laika_protocol::observation::Observation;
use laika_protocol::tool::Executor;
use laika_protocol::tool_call;
use laika_protocol::verdict::{Decision, Reason, Verdict};
use laika_protocol::wire::ToolResultRequest;
use serde_json::Value;
use std::time::Duration;

/// Steps whose tool results the model sees in full; older ones keep their
/// status and summary only.
const FULL_RESULT_STEPS: u32 = 2;
/// Tool packets a request carries at most (the oldest go first).
const MAX_TRANSCRIPT_PACKETS: usize = 48;

/// The calls of one model answer and how far they got.
pub(super) struct Acting {
    response_id: String,
    calls: Vec<ToolCall>,
    next: usize,
    /// An earlier call of this step did not succeed: the rest are not run.
    halted: bool,
    waiting: Option<Waiting>,
    /// Calls past the per-answer cap: the first of them (reported once for
    /// all) and how many there were. None of them is looked at.
    refused: Option<(ToolCall, usize)>,
}

impl Acting {
    /// The first `max_calls` of an answer's calls; the rest are refused in
    /// one result the model reads at its next step, so an answer with
    /// thousands of calls costs as much as one with `max_calls + 1`.
    pub(super) fn new(response_id: String, mut calls: Vec<ToolCall>, max_calls: usize) -> Acting {
        let extra = calls.len().saturating_sub(max_calls);
        let refused = calls
            .drain(max_calls.min(calls.len())..)
            .next()
            .map(|first| (first, extra));
        Acting {
            response_id,
            calls,
            next: 0,
            halted: false,
            waiting: None,
            refused,
        }
    }

    /// The calls that will be looked at, and the first refused one.
    pub(super) fn proposed(&self) -> Vec<ToolCall> {
        let mut calls = self.calls.clone();
        calls.extend(self.refused.as_ref().map(|(call, _)| call.clone()));
        calls
    }

    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.refused.is_none()
    }
}

/// The call the loop waits on.
struct Waiting {
    call_id: CallId,
    /// The call as the model proposed it (what the transcript records).
    call: ToolCall,
    /// The same call, typed (what runs).
    typed: tool_call::ToolCall,
    digest: String,
    executor: Executor,
    title: String,
    action: laika_protocol::agent::OperationAction,
    /// Still waiting for the user (an `ask` call), not for a result.
    approval: bool,
    /// A browser call the host prepares first ([`tools::host_prepared`]):
    /// the driver's result goes to the extension, not to the model.
    preparing: bool,
    deadline: Duration,
    since: Duration,
}

/// How a call ended, before it becomes a `tool` packet and an event.
struct Outcome {
    status: ToolStatus,
    summary: String,
    result: Option<Value>,
    error: Option<ToolError>,
    page: Option<PageRef>,
}

impl Outcome {
    fn failed(status: ToolStatus, code: &str, message: impl Into<String>) -> Outcome {
        let message = message.into();
        Outcome {
            status,
            summary: message.clone(),
            result: None,
            error: Some(ToolError::new(code, message)),
            page: None,
        }
    }
}

impl Turn<'_> {
    /// Runs the current step's calls from where it stopped, until one has
    /// to wait for the extension or the user, then starts the next step.
    pub(super) fn act(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        loop {
            if self.cancelled {
                actions.extend(self.fail(Error::cancelled()));
                return actions;
            }
            let Phase::Acting(acting) = &mut self.phase else {
                return actions;
            };
            let index = acting.next;
            let Some(call) = acting.calls.get(index).cloned() else {
                if let Some((call, extra)) = acting.refused.take() {
                    actions.extend(self.refuse_extra(index, &call, extra));
                }
                actions.extend(self.next_step());
                return actions;
            };
            acting.next += 1;
            let halted = acting.halted;
            let call_id = CallId::from(self.ambient.new_id());
            // The gate reads the provenance.
            self.note_start();
            let Some(page) = self.page.as_ref() else {
                actions.extend(self.fail(Error::internal("the agent loop lost the page")));
                return actions;
            };
            let digest = agent::call_digest(&call.name, &call.arguments);
            if !halted && !self.seen.insert((digest.clone(), agent::page_digest(page))) {
                actions.extend(self.finish_loop(StopReason::LoopDetected));
                return actions;
            }
            let target = target_of(page, &call);
            if halted {
                let outcome = Outcome::failed(
                    ToolStatus::Error,
                    codes::NOT_RUN,
                    "Not run: an earlier action of this step did not succeed.",
                );
                actions.extend(self.conclude(&call_id, &call, outcome));
                continue;
            }
            let review = gate::inspect(
                index,
                &call,
                &GateContext {
                    observation: page,
                    user_message: &self.request.message.text,
                    max_calls: self.settings.limits.max_tool_calls,
                    integrations: &self.settings.integrations,
                    mcp: &self.settings.mcp,
                    user_sources: &self.user_sources,
                    provenance: Some(&self.provenance),
                    cancel: Some(&self.settings.cancel),
                },
            );
            if self.settings.cancel.is_cancelled() {
                actions.extend(self.fail(Error::cancelled()));
                return actions;
            }
            let mut verdict = review.verdict;
            if let (Some(tool), Some(mode)) = (review.tool, self.mode) {
                let reads_only = match &review.call {
                    Some(laika_protocol::tool_call::ToolCall::Mcp(mcp)) => {
                        !tools::mcp_acts(&self.settings.mcp, &mcp.name())
                    }
                    _ => false,
                };
                if !reads_only && !crate::mode::permits(Some(mode), tool) {
                    verdict = Verdict::new(Reason::NotActMode, crate::mode::refusal(mode));
                }
            }
            if verdict.decision != Decision::Deny {
                if let Some(why) = self.out_of_step_scope(&call.name) {
                    verdict = Verdict::new(Reason::OutOfStepScope, why);
                }
            }
            let executor = review.tool.map_or(Executor::Unavailable, tools::executor);
            actions.push(self.proposal(
                &call_id,
                index,
                &call,
                &verdict,
                executor,
                &digest,
                target.clone(),
            ));
            let typed = match (verdict.decision, review.call) {
                (Decision::Allow | Decision::Ask, Some(typed)) => typed,
                (Decision::Deny, _) | (Decision::Allow | Decision::Ask, None) => {
                    self.decisions.deny += 1;
                    let outcome = Outcome::failed(
                        ToolStatus::Denied,
                        verdict.reason.as_str(),
                        verdict.detail,
                    );
                    actions.extend(self.conclude(&call_id, &call, outcome));
                    self.halt();
                    continue;
                }
            };
            let label = typed.handle().and_then(|h| page.element(h)).map(|e| {
                if e.text.trim().is_empty() {
                    e.label.clone().unwrap_or_default()
                } else {
                    e.text.clone()
                }
            });
            let (action, title) = agent::describe(&typed, label.as_deref());
            let now = self.ambient.monotonic();
            let limits = &self.settings.limits;
            let mut waiting = Waiting {
                call_id: call_id.clone(),
                call,
                typed,
                digest,
                executor,
                title,
                action,
                approval: false,
                preparing: false,
                deadline: now + Duration::from_secs(limits.tool_timeout_secs),
                since: now,
            };
            if verdict.decision == Decision::Ask {
                self.decisions.ask += 1;
                waiting.approval = true;
                waiting.deadline = now + Duration::from_secs(limits.approval_timeout_secs);
                actions.push(self.agent_state(AgentState::WaitingForApproval, Some(call_id)));
                actions.push(self.set_waiting(waiting));
                return actions;
            }
            self.decisions.allow += 1;
            actions.extend(self.execute(waiting));
            if self.waiting().is_some() {
                return actions;
            }
        }
    }

    /// Why a call of tool `name` may not run in the plan step now running,
    /// if it may not (`step_scope`). A tool the gate does not know was
    /// denied before this.
    fn out_of_step_scope(&self, name: &str) -> Option<String> {
        let context = self.plan_context()?;
        let step = context.current()?;
        let tool = tools::find(name).or_else(|| self.settings.mcp.find(name))?;
        (!tools::step_may_call(step, tool)).then(|| crate::step_scope::refusal(step, name))
    }

    /// Says once that the calls past the per-answer cap were not run: one
    /// proposal and one result, whatever their number.
    fn refuse_extra(&mut self, index: usize, call: &ToolCall, extra: usize) -> Vec<Action> {
        let max = self.settings.limits.max_tool_calls;
        let verdict = Verdict::new(
            Reason::TooManyCalls,
            format!(
                "This answer proposed {} tool calls; at most {max} run per answer, \
                 so the other {extra} (this one and all after it) were not run. \
                 Propose at most {max} calls at a time.",
                max + extra
            ),
        );
        let call_id = CallId::from(self.ambient.new_id());
        let digest = agent::call_digest(&call.name, &call.arguments);
        self.decisions.deny += 1;
        let mut actions = vec![self.proposal(
            &call_id,
            index,
            call,
            &verdict,
            Executor::Unavailable,
            &digest,
            None,
        )];
        let outcome = Outcome::failed(ToolStatus::Denied, verdict.reason.as_str(), verdict.detail);
        actions.extend(self.conclude(&call_id, call, outcome));
        actions
    }

    /// Starts a call that may run: a host tool runs here and now, a browser
    /// tool is handed to the extension and waited on.
    fn execute(&mut self, mut waiting: Waiting) -> Vec<Action> {
        let call_id = waiting.call_id.clone();
        waiting.since = self.ambient.monotonic();
        // The extension runs a prepared call once the host's part is in:
        // only then does it hear `executing`.
        let prepared = tools::host_prepared(waiting.typed.name());
        let mut actions = Vec::new();
        if !prepared {
            actions.push(self.agent_state(AgentState::Executing, Some(call_id.clone())));
        }
        actions.push(self.operation(&waiting, OperationStatus::Start, None));
        if prepared {
            waiting.executor = Executor::Host;
            waiting.preparing = true;
        }
        if waiting.executor == Executor::Host {
            let Some(result) = app::run(&waiting.typed) else {
                let now = waiting.since;
                waiting.approval = false;
                waiting.deadline =
                    now + Duration::from_secs(self.settings.limits.tool_timeout_secs);
                actions.push(Action::RunTool {
                    call_id,
                    call: waiting.typed.clone(),
                    page: None,
                    conversation_id: self.conversation_id.clone(),
                    turn: self.turn_number(),
                    step: self.step,
                });
                actions.push(self.set_waiting(waiting));
                return actions;
            };
            let outcome = match result {
                Ok(result) => Outcome {
                    status: ToolStatus::Ok,
                    summary: match (result.message(), result.formatted()) {
                        (Some(m), _) => m.to_owned(),
                        (None, Some(f)) => format!("= {f}"),
                        (None, None) => "Done.".to_owned(),
                    },
                    result: Some(result.into_value()),
                    error: None,
                    page: None,
                },
                Err(e) => Outcome::failed(ToolStatus::Error, e.code.as_str(), e.message),
            };
            actions.extend(self.finish_call(&waiting, outcome));
            return actions;
        }
        let now = waiting.since;
        waiting.approval = false;
        waiting.deadline = now + Duration::from_secs(self.settings.limits.tool_timeout_secs);
        actions.push(self.set_waiting(waiting));
        actions
    }

    /// Reports a call's end (operation, result) and stops the rest of the
    /// step if it did not succeed.
    fn finish_call(&mut self, waiting: &Waiting, outcome: Outcome) -> Vec<Action> {
        self.timings.tools_ms += self.ms_since(waiting.since);
        if let Some(result) = &outcome.result {
            self.note_result(result);
        }
        let status = if outcome.status == ToolStatus::Ok {
            OperationStatus::Success
        } else {
            OperationStatus::Error
        };
        let mut actions = vec![self.operation(waiting, status, Some(outcome.summary.clone()))];
        let ok = outcome.status == ToolStatus::Ok;
        actions.extend(self.conclude(&waiting.call_id, &waiting.call, outcome));
        if !ok {
            self.halt();
        }
        actions
    }

    /// The host ran a store-backed tool (`Action::RunTool`).
    pub(super) fn host_tool_result(
        &mut self,
        call_id: &CallId,
        result: std::result::Result<tool_call::ToolOutput, ToolError>,
    ) -> Vec<Action> {
        let runs_here = self
            .waiting()
            .is_some_and(|w| w.call_id == *call_id && !w.approval && w.executor == Executor::Host);
        if !runs_here {
            return Vec::new();
        }
        let Some(mut waiting) = self.take_waiting() else {
            return Vec::new();
        };
        if waiting.preparing {
            if let Ok(input) = result {
                // Now the extension's part: it gets what the host prepared.
                waiting.preparing = false;
                waiting.executor = tools::executor(waiting.typed.name());
                waiting.deadline = self.ambient.monotonic()
                    + Duration::from_secs(self.settings.limits.tool_timeout_secs);
                let executing = self.executing_with(&waiting.call_id, input);
                return vec![executing, self.set_waiting(waiting)];
            }
        }
        let outcome = match result {
            Ok(data) => Outcome {
                status: ToolStatus::Ok,
                summary: data
                    .message()
                    .map_or_else(|| "Done.".to_owned(), agent::bounded_message),
                result: Some(agent::bounded_result(&data.into_value())),
                error: None,
                page: None,
            },
            Err(e) => {
                let e = e.bounded();
                Outcome::failed(ToolStatus::Error, &e.code, e.message)
            }
        };
        let mut actions = self.finish_call(&waiting, outcome);
        actions.extend(self.act());
        actions
    }

    /// The extension reported a result.
    pub(super) fn tool_result(&mut self, result: ToolResultRequest) -> Vec<Action> {
        if let Some(w) = self.waiting() {
            if w.call_id == result.call_id && w.executor == Executor::Host {
                return vec![reply_error(
                    &result.id,
                    ErrorCode::UnknownCall,
                    format!(
                        "call {} runs in the host, not in the extension; the result was ignored",
                        w.call_id
                    ),
                )];
            }
        }
        let expected = match self.waiting() {
            Some(w) if w.call_id == result.call_id && !w.approval => true,
            Some(w) if w.call_id == result.call_id => {
                return vec![reply_error(
                    &result.id,
                    ErrorCode::UnknownCall,
                    format!(
                        "call {} waits for the user's approval: it must not have run",
                        w.call_id
                    ),
                )]
            }
            _ => false,
        };
        if !expected {
            return vec![reply_error(
                &result.id,
                ErrorCode::UnknownCall,
                format!(
                    "no call {} waits for a result (it ended, timed out or never existed); the result was ignored",
                    crate::text::clip_quoted(&result.call_id, 80)
                ),
            )];
        }
        let Some(mut waiting) = self.take_waiting() else {
            return Vec::new();
        };
        // A capture read a page in a background tab: the host stores it,
        // and the page the loop acts on stays as it was.
        let capture = tools::captures(waiting.typed.name());
        if capture && result.status == ToolStatus::Ok {
            if let Some(observation) = result.observation {
                waiting.executor = Executor::Host;
                let step = self.step;
                return vec![
                    Action::RunTool {
                        call_id: waiting.call_id.clone(),
                        call: waiting.typed.clone(),
                        page: Some(observation),
                        conversation_id: self.conversation_id.clone(),
                        turn: self.turn_number(),
                        step,
                    },
                    self.set_waiting(waiting),
                ];
            }
        }
        let mut outcome = Outcome {
            status: result.status,
            summary: String::new(),
            result: result
                .result
                .map(|r| agent::bounded_result(&Value::Object(r))),
            error: result.error.map(ToolError::bounded),
            page: None,
        };
        if let Some(raw) = result.observation.filter(|_| !capture) {
            match raw.parse() {
                Ok(page) => {
                    outcome.page = Some(PageRef {
                        url: crate::redact::strip_url_credentials(&page.summary.url),
                        title: page.summary.title.clone(),
                    });
                    self.note_page(page);
                }
                Err(e) => {
                    outcome.summary =
                        format!("(the page could not be read afterwards: {}) ", e.message);
                }
            }
        }
        let message = outcome
            .result
            .as_ref()
            .and_then(|r| r.get("message"))
            .and_then(Value::as_str)
            .map(agent::bounded_message);
        let said = match (outcome.status, &outcome.error, message) {
            (_, _, Some(m)) if !m.is_empty() => m,
            (ToolStatus::Ok, _, _) => "Done.".to_owned(),
            (_, Some(e), _) => e.message.clone(),
            (status, None, _) => format!("The extension reported {}.", status.as_str()),
        };
        outcome.summary.push_str(&said);
        if outcome.status != ToolStatus::Ok && outcome.error.is_none() {
            outcome.error = Some(ToolError::new("TOOL_FAILED", outcome.summary.clone()));
        }
        let mut actions = self.finish_call(&waiting, outcome);
        actions.extend(self.act());
        actions
    }

    /// The user approved or denied the `ask` call.
    pub(super) fn approval(
        &mut self,
        reply_to: RequestId,
        call_id: &CallId,
        digest: &str,
        approved: bool,
    ) -> Vec<Action> {
        let now = self.ambient.monotonic();
        match self.waiting() {
            Some(w) if w.call_id == *call_id && w.approval => {
                if w.digest != digest {
                    return vec![reply_error(
                        &reply_to,
                        ErrorCode::ApprovalMismatch,
                        "the approval does not match the call waiting for it (its arguments differ); nothing was run",
                    )];
                }
                if now >= w.deadline {
                    let mut actions = vec![reply_error(
                        &reply_to,
                        ErrorCode::ApprovalExpired,
                        "the approval came after the call expired; nothing was run",
                    )];
                    actions.extend(self.tick());
                    return actions;
                }
            }
            Some(w) if w.call_id == *call_id => {
                return vec![reply_error(
                    &reply_to,
                    ErrorCode::UnknownCall,
                    "this call was already approved",
                )]
            }
            _ => {
                return vec![reply_error(
                    &reply_to,
                    ErrorCode::UnknownCall,
                    format!(
                        "no call {} waits for approval (it ended, expired or never existed)",
                        crate::text::clip_quoted(call_id, 80)
                    ),
                )]
            }
        }
        let Some(waiting) = self.take_waiting() else {
            return Vec::new();
        };
        self.timings.tools_ms += ms(now.saturating_sub(waiting.since));
        let mut actions = vec![Action::Reply {
            to: reply_to,
            event: Event::ApprovalResult {
                call_id: call_id.clone(),
                approved,
            },
        }];
        if approved {
            actions.extend(self.execute(waiting));
            if self.waiting().is_some() {
                return actions;
            }
        } else {
            let outcome = Outcome::failed(
                ToolStatus::Denied,
                codes::USER_DENIED,
                "You denied this action.",
            );
            actions.extend(self.conclude(&waiting.call_id, &waiting.call, outcome));
            self.halt();
        }
        actions.extend(self.act());
        actions
    }

    /// Time passed: expire the call waited on, or end the loop when the
    /// turn's budget is spent, or wait on.
    pub(super) fn tick(&mut self) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let over_budget = now >= self.budget_deadline();
        let expired = self.waiting().is_some_and(|w| now >= w.deadline);
        if !expired && !over_budget {
            return vec![self.await_action()];
        }
        let Some(waiting) = self.take_waiting() else {
            return self.finish_loop(StopReason::TimeBudget);
        };
        let (code, message) = match (waiting.approval, over_budget && !expired) {
            (_, true) => (
                codes::TOOL_TIMEOUT,
                "The turn's time budget ran out while this action was pending.",
            ),
            (true, false) => (
                codes::APPROVAL_EXPIRED,
                "Nobody approved this action in time, so it was not run.",
            ),
            (false, false) => (
                codes::TOOL_TIMEOUT,
                "The browser did not report a result in time.",
            ),
        };
        let outcome = Outcome::failed(ToolStatus::Timeout, code, message);
        let mut actions = if waiting.approval {
            self.timings.tools_ms += ms(now.saturating_sub(waiting.since));
            let actions = self.conclude(&waiting.call_id, &waiting.call, outcome);
            self.halt();
            actions
        } else {
            self.finish_call(&waiting, outcome)
        };
        if over_budget {
            actions.extend(self.finish_loop(StopReason::TimeBudget));
        } else {
            actions.extend(self.act());
        }
        actions
    }

    /// The user cancelled: the call waited on (if any) is reported as
    /// stopped, nothing else runs, and the turn ends as cancelled.
    pub(super) fn stop_acting(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        if let Some(waiting) = self.take_waiting() {
            let message = if waiting.approval {
                "Not run: you stopped the turn."
            } else {
                "You stopped the turn while this action was running; it may have completed."
            };
            let outcome = Outcome::failed(ToolStatus::Error, codes::CANCELLED, message);
            actions.extend(if waiting.approval {
                self.conclude(&waiting.call_id, &waiting.call, outcome)
            } else {
                self.finish_call(&waiting, outcome)
            });
        }
        actions.extend(self.fail(Error::cancelled()));
        actions
    }

    /// After a step's calls: stop, or ask the model again with what they did.
    fn next_step(&mut self) -> Vec<Action> {
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        if self.in_plan_step() {
            let halted = matches!(&self.phase, Phase::Acting(a) if a.halted);
            let why = self
                .transcript
                .iter()
                .rev()
                .take_while(|p| p.step == self.step)
                .filter(|p| p.outcome.status != ToolStatus::Ok)
                .last()
                .map(|p| p.outcome.summary.clone());
            return self.plan_step_over(!halted, why);
        }
        if self.step >= self.step_cap() {
            return self.finish_loop(StopReason::StepCap);
        }
        if self.ambient.monotonic() >= self.budget_deadline() {
            return self.finish_loop(StopReason::TimeBudget);
        }
        let t = self.ambient.monotonic();
        let Some(packet) = self.next_packet() else {
            return self.fail(Error::internal("the agent loop lost its packet"));
        };
        self.timings.pack_ms += self.ms_since(t);
        self.compose(packet)
    }

    /// The next step's request: the same question, the latest page, and the
    /// transcript (recent results in full, older ones compacted).
    pub(super) fn next_packet(&self) -> Option<RequestPacket> {
        let started = self.started.as_ref()?;
        let first = &started.packet;
        let transcript = self.compacted_transcript();
        let transcript_chars = serde_json::to_string(&transcript).map_or(0, |t| t.chars().count());
        let budget = self
            .budget
            .unwrap_or_else(|| {
                Budget::for_runtime(&self.settings.runtime.kind, &self.settings.limits)
            })
            .less(transcript_chars);
        let mut packed = pack::pack_with(
            &PackInput {
                conversation_id: &self.conversation_id,
                turn: started.turn,
                user_message_id: &first.input.user_message.id,
                user_text: &first.input.user_message.text,
                task: &first.input.task,
                observation: self.page.as_ref(),
                browser: &first
                    .context
                    .documents
                    .first()
                    .map_or_else(|| "unknown".to_owned(), |d| d.source.browser.clone()),
                tab_id: first
                    .context
                    .documents
                    .first()
                    .and_then(|d| d.source.tab_id.clone()),
                history: Some(&self.history),
                recent_turns: self.settings.limits.recent_turns,
                ambient: self.ambient,
                for_model: self.settings.runtime.kind != super::BUILTIN_KIND,
            },
            budget,
            self.settings.page_indexes.as_deref(),
        );
        self.pack_collection(&mut packed, budget);
        packed.packet.context.transcript = transcript;
        packed.packet.context.plan = self.plan_context();
        Some(packed.packet)
    }

    fn compacted_transcript(&self) -> Vec<ToolPacket> {
        let skip = self.transcript.len().saturating_sub(MAX_TRANSCRIPT_PACKETS);
        self.transcript
            .iter()
            .skip(skip)
            .map(|p| {
                let mut p = p.clone();
                if p.step + FULL_RESULT_STEPS <= self.step {
                    p.outcome.result = None;
                }
                p
            })
            .collect()
    }

    /// Records a call's outcome as a `tool` packet and says it.
    fn conclude(&mut self, call_id: &CallId, call: &ToolCall, outcome: Outcome) -> Vec<Action> {
        let response_id = match &self.phase {
            Phase::Acting(a) => a.response_id.clone(),
            _ => String::new(),
        };
        let packet = ToolPacket {
            protocol: Protocol::default(),
            id: self.ambient.new_id(),
            packet_type: "tool".into(),
            created_at: self.ambient.now_iso8601(),
            conversation: ConversationRef {
                id: self.conversation_id.clone(),
                turn: self.turn_number(),
            },
            sender: Sender {
                role: "tool".into(),
            },
            in_reply_to: ToolInReplyTo {
                response_id,
                call_id: call_id.clone(),
            },
            step: self.step,
            tool_call: call.clone(),
            outcome: ToolOutcome {
                status: outcome.status,
                summary: outcome.summary.clone(),
                result: outcome.result.clone(),
                error: outcome.error.clone(),
                page: outcome.page,
                trust: "untrusted".into(),
            },
        };
        if let Some(step) = self.steps.last_mut() {
            step.tool_packets
                .push(serde_json::to_value(&packet).unwrap_or(Value::Null));
        }
        let delta = agent_state::from_tool(call_id, call, &packet.outcome);
        self.transcript.push(packet);
        let mut actions = vec![Action::Emit(Event::ToolResult(ToolCallResult {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step,
            call_id: call_id.clone(),
            name: call.name.clone(),
            status: outcome.status,
            summary: outcome.summary,
            result: outcome.result,
            error: outcome.error,
        }))];
        actions.extend(self.apply_tool_delta(delta));
        actions
    }

    /// Applies a tool result's agent state delta, as the result lands, to the
    /// state the next step is packed with, keeps it for the commit, and
    /// sends the change as an `entity_patch`. Refused operations change
    /// nothing here; the store logs them when it applies the same delta.
    fn apply_tool_delta(
        &mut self,
        delta: laika_protocol::agent_state::AgentStateDelta,
    ) -> Option<Action> {
        if delta.is_empty() {
            return None;
        }
        let now = self.ambient.now_iso8601();
        let turn = self.turn_number();
        let before = self.history.agent_state.clone();
        let state = self.history.agent_state.get_or_insert_with(|| {
            laika_protocol::agent_state::AgentState::new(&self.conversation_id)
        });
        agent_state::apply(state, &delta, &now);
        let patch = crate::entity_patch::agent_state_patch(
            &self.conversation_id,
            turn,
            laika_protocol::agent_state::DeltaSource::Tool,
            before.as_ref(),
            state,
        );
        self.agent_state_deltas.push(delta);
        patch.map(Action::Emit)
    }

    #[allow(clippy::too_many_arguments)]
    fn proposal(
        &self,
        call_id: &CallId,
        index: usize,
        call: &ToolCall,
        verdict: &Verdict,
        executor: Executor,
        digest: &str,
        target: Option<ToolTarget>,
    ) -> Action {
        let expires_in_ms = (verdict.decision == Decision::Ask).then(|| {
            self.settings
                .limits
                .approval_timeout_secs
                .saturating_mul(1000)
        });
        Action::Emit(Event::ToolCall(ToolCallProposal {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step,
            call_id: call_id.clone(),
            index,
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            decision: verdict.decision,
            reason: verdict.reason,
            detail: verdict.detail.clone(),
            evidence: verdict.evidence,
            user_asked: verdict.user_asked,
            executor,
            digest: digest.to_owned(),
            target,
            expires_in_ms,
            plan_step: self.plan_step_ref(),
        }))
    }

    fn operation(
        &self,
        waiting: &Waiting,
        status: OperationStatus,
        message: Option<String>,
    ) -> Action {
        self.operation_event(
            self.step,
            waiting.call_id.clone(),
            waiting.action,
            waiting.title.clone(),
            (status, message),
        )
    }

    /// A message that was refused leaves the turn waiting: make sure the
    /// driver goes on waiting too.
    pub(super) fn still_waiting(&self, mut actions: Vec<Action>) -> Vec<Action> {
        let waits = actions
            .iter()
            .any(|a| matches!(a, Action::Await { .. } | Action::Finish | Action::Commit(_)));
        if !waits && self.waiting().is_some() {
            actions.push(self.await_action());
        }
        actions
    }

    fn halt(&mut self) {
        if let Phase::Acting(acting) = &mut self.phase {
            acting.halted = true;
        }
    }

    fn waiting(&self) -> Option<&Waiting> {
        match &self.phase {
            Phase::Acting(acting) => acting.waiting.as_ref(),
            _ => None,
        }
    }

    fn take_waiting(&mut self) -> Option<Waiting> {
        match &mut self.phase {
            Phase::Acting(acting) => acting.waiting.take(),
            _ => None,
        }
    }

    /// Parks `waiting` and asks the driver to wait for the extension.
    fn set_waiting(&mut self, waiting: Waiting) -> Action {
        if let Phase::Acting(acting) = &mut self.phase {
            acting.waiting = Some(waiting);
        }
        self.await_action()
    }

    fn await_action(&self) -> Action {
        let until = self.waiting().map_or(self.budget_deadline(), |w| {
            w.deadline.min(self.budget_deadline())
        });
        Action::Await { until }
    }

    pub(super) fn budget_deadline(&self) -> Duration {
        self.started_at + Duration::from_secs(self.settings.limits.turn_budget_secs)
    }
}

/// The element a handle call acts on, if the observation lists it.
fn target_of(page: &Observation, call: &ToolCall) -> Option<ToolTarget> {
    let handle = call.arguments.get("handleId")?.as_str()?;
    page.element(handle).map(ToolTarget::of)
}

fn reply_error(to: &RequestId, code: ErrorCode, message: impl Into<String>) -> Action {
    Action::Reply {
        to: to.clone(),
        event: Event::error(&Error::new(code, message)),
    }
}

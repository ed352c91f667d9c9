//! A `web.summarize` turn whose page does not fit the model's context:
//! the page is read in parts, then the turn's own call summarizes the part
//! summaries (`crate::staged`).
//!
//! When the plan needs more model calls than `limits.confirm_calls`, the
//! user is shown an `estimate` first and the turn waits for their
//! `approval` (the same round-trip as an `ask` call's): read it all, read
//! the start only (the packed request, in one call), or not at all.
//!
//! Each round (the parts, then each combining round) is one
//! [`Action::AskParts`]: the driver keeps up to `limits.transform_concurrency`
//! of its calls in flight and reports each as it starts and answers, in any
//! order; the engine keeps the answers in page order. A cancel interrupts
//! the calls in flight through the turn's token, the driver starts no
//! other, and the round ends the turn as cancelled. Part calls stream
//! nothing to the user: their text is not the answer.

use super::{Action, Phase, Turn};
use crate::model::ModelReply;
use crate::pack::{Budget, Packed};
use crate::staged::{self, Part, PartNotes, Plan};
use crate::text::prefix_chars;
use laika_protocol::agent::{AgentState, OperationAction, OperationStatus, StopReason};
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{Estimate, Event};
use laika_protocol::history::TurnStatus;
use laika_protocol::ids::{CallId, RequestId};
use laika_protocol::llmcp::{ConversationRef, RequestPacket};
use laika_protocol::observation::Observation;
use laika_protocol::usage::ContextUsage;
use std::sync::Arc;
use std::time::Duration;

/// The `call_id` of the reduce call's `operation` events.
const REDUCE_CALL_ID: &str = "stage:reduce";

/// The parts being read, or their summaries being combined.
pub(super) struct Staging {
    plan: Plan,
    /// 0 while the page's parts are read; 1, 2, … for each round of
    /// combining their summaries.
    level: usize,
    /// What this round asks for: the plan's parts, or merged stretches.
    units: Vec<Part>,
    /// In a combining round, each unit's members among `below`.
    groups: Vec<std::ops::Range<usize>>,
    below: Vec<(Part, PartNotes)>,
    /// The page's parts as read (for the notice of parts not read).
    parts_read: Vec<(Part, PartNotes)>,
    /// This round's notes, one per unit; `None` until its call answered.
    notes: Vec<Option<PartNotes>>,
    /// This round's calls, in the order of its `AskParts` requests.
    asked: Vec<Asked>,
    /// The turn's packed request, which the reduce call is made from.
    packet: RequestPacket,
    round_started: Duration,
}

/// One call of a round: the unit it reads, and when it started.
#[derive(Clone, Copy)]
struct Asked {
    unit: usize,
    started: Option<Duration>,
}

/// A plan too costly to start unasked: the `estimate` the user was shown.
pub(super) struct Confirming {
    plan: Plan,
    packet: RequestPacket,
    /// The packed request's usage: what "the start only" reads (`None`:
    /// not offered).
    start_usage: Option<ContextUsage>,
    call_id: CallId,
    digest: String,
    deadline: Duration,
}

/// What the reduce step needs once the parts were read.
pub(super) struct Staged {
    /// The page's parts and how each was read.
    pub(super) parts_read: Vec<(Part, PartNotes)>,
    /// The reduce call's `operation` started and has not ended.
    reduce_open: bool,
}

fn call_id(level: usize, n: usize) -> CallId {
    CallId::from(match level {
        0 => format!("stage:part:{n}"),
        l => format!("stage:merge:{l}:{n}"),
    })
}

fn title(level: usize, unit: &Part, of: usize) -> String {
    match level {
        0 => format!("Reading part {} of {of}", unit.number),
        _ => format!("Combining the points of {}", unit.label()),
    }
}

impl Turn<'_> {
    /// The stages of this turn, when it needs them: a `web.summarize` on a
    /// page whose text did not all fit, for a model (the builtin runtime
    /// reads any page whole).
    pub(super) fn stage_plan(
        &self,
        packed: &Packed,
        observation: Option<&Observation>,
        budget: Budget,
    ) -> Option<Result<Plan>> {
        let obs = observation?;
        if self.request.task.name != laika_protocol::llmcp::TaskName::Summarize
            || self.request.collection_id.is_some()
            || self.settings.runtime.kind == super::BUILTIN_KIND
            || !staged::over_budget(&packed.usage)
        {
            return None;
        }
        let decoding = crate::decoding::Decoding {
            max_tokens: self.output_tokens(),
            ..self.settings.decoding
        };
        Some(staged::plan(
            obs,
            self.window().map(|w| w.tokens),
            budget,
            decoding,
            &self.settings.limits,
            staged::reduce_room(packed, &budget),
            self.ambient,
        ))
    }

    /// Starts reading the parts of `plan`, or first asks the user when the
    /// plan needs more model calls than `limits.confirm_calls`. `packet`
    /// becomes the reduce call; `start_usage` is its own usage, for an
    /// answer from the start of the page only.
    pub(super) fn stage_or_confirm(
        &mut self,
        plan: Plan,
        packet: RequestPacket,
        start_usage: Option<ContextUsage>,
    ) -> Vec<Action> {
        let calls = staged::estimate_calls(&plan);
        if calls <= self.settings.limits.confirm_calls {
            return self.stage(plan, packet);
        }
        let concurrency = self.settings.limits.transform_concurrency.max(1);
        let parts = plan.parts.len();
        // The parts and each combining round run `concurrency` at a time;
        // the answer's call alone.
        let rounds =
            parts.div_ceil(concurrency) + calls.saturating_sub(parts + 1).div_ceil(concurrency) + 1;
        let seconds = self
            .settings
            .call_time
            .map(|t| (t.as_secs_f64() * rounds as f64).ceil() as u64);
        let turn = self.turn_number();
        let call_id = CallId::from(format!("stage:confirm:{turn}"));
        let digest = crate::agent::call_digest(
            "stage.confirm",
            &serde_json::json!({
                "conversation_id": self.conversation_id, "turn": turn,
                "parts": parts, "calls": calls, "page_chars": plan.page_chars,
            }),
        );
        let wait = Duration::from_secs(self.settings.limits.approval_timeout_secs);
        let deadline = self.ambient.monotonic() + wait;
        let estimate = Estimate {
            conversation_id: self.conversation_id.clone(),
            turn,
            call_id: call_id.clone(),
            digest: digest.clone(),
            calls,
            parts,
            page_chars: plan.page_chars,
            concurrency,
            seconds,
            start_chars: start_usage
                .as_ref()
                .map(|u| u.used.chars)
                .filter(|c| *c > 0),
            expires_in_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        };
        self.phase = Phase::Confirming(Box::new(Confirming {
            plan,
            packet,
            start_usage,
            call_id: call_id.clone(),
            digest,
            deadline,
        }));
        vec![
            self.agent_state(AgentState::WaitingForApproval, Some(call_id)),
            Action::Emit(Event::Estimate(estimate)),
            Action::Await { until: deadline },
        ]
    }

    /// The user's answer to the `estimate`.
    pub(super) fn confirmed(
        &mut self,
        reply_to: RequestId,
        call_id: &CallId,
        digest: &str,
        (approved, start_only): (bool, bool),
    ) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Confirming(confirming) = &self.phase else {
            return Vec::new();
        };
        let refused = if confirming.call_id != *call_id {
            Some((
                ErrorCode::UnknownCall,
                format!(
                    "no call {} waits for approval (the turn waits on its estimate)",
                    crate::text::clip_quoted(call_id, 80)
                ),
            ))
        } else if confirming.digest != digest {
            Some((
                ErrorCode::ApprovalMismatch,
                "the approval does not match the estimate the turn waits on; nothing was asked"
                    .to_owned(),
            ))
        } else if start_only && approved && confirming.start_usage.is_none() {
            Some((
                ErrorCode::InvalidRequest,
                "this estimate offers no reading of the start only".to_owned(),
            ))
        } else if now >= confirming.deadline {
            Some((
                ErrorCode::ApprovalExpired,
                "the approval came after the estimate expired; nothing was asked".to_owned(),
            ))
        } else {
            None
        };
        if let Some((code, message)) = refused {
            let expired = code == ErrorCode::ApprovalExpired;
            let mut actions = vec![Action::Reply {
                to: reply_to,
                event: Event::error(&Error::new(code, message)),
            }];
            actions.extend(if expired {
                self.decline("nobody answered in time")
            } else {
                vec![Action::Await {
                    until: confirming.deadline,
                }]
            });
            return actions;
        }
        let Phase::Confirming(confirming) = std::mem::replace(&mut self.phase, Phase::Reserving)
        else {
            return Vec::new();
        };
        let Confirming {
            plan,
            packet,
            start_usage,
            ..
        } = *confirming;
        let mut actions = vec![Action::Reply {
            to: reply_to,
            event: Event::ApprovalResult {
                call_id: call_id.clone(),
                approved,
            },
        }];
        actions.extend(match (approved, start_only) {
            (true, false) => self.stage(plan, packet),
            (true, true) => {
                let mut next: Vec<Action> = start_usage
                    .map(|u| Action::Emit(Event::ContextUsage(u)))
                    .into_iter()
                    .collect();
                next.extend(self.compose(packet));
                next
            }
            (false, _) => self.decline("you chose not to read it"),
        });
        actions
    }

    /// The estimate's wait ran out (or a stale wait woke up).
    pub(super) fn confirm_tick(&mut self) -> Vec<Action> {
        let Phase::Confirming(confirming) = &self.phase else {
            return Vec::new();
        };
        if self.ambient.monotonic() < confirming.deadline {
            return vec![Action::Await {
                until: confirming.deadline,
            }];
        }
        self.decline("nobody answered in time")
    }

    /// The long page is not read: the turn is stored as cancelled with why,
    /// and ends with `done`, without an `error` (nothing failed).
    fn decline(&mut self, why: &str) -> Vec<Action> {
        let parts = match &self.phase {
            Phase::Confirming(c) => c.plan.parts.len(),
            _ => 0,
        };
        self.phase = Phase::Reserving;
        let mut record = self.record(false);
        record.status = TurnStatus::Cancelled;
        self.stop = StopReason::Cancelled;
        record.error = Some(Error::new(
            ErrorCode::Cancelled,
            format!("the page was not read: it needs {parts} parts for this model, and {why}"),
        ));
        self.commit(record, None)
    }

    /// Starts reading the parts of `plan`; `packet` becomes the reduce call.
    fn stage(&mut self, plan: Plan, packet: RequestPacket) -> Vec<Action> {
        self.phase = Phase::Staging(Box::new(Staging {
            notes: Vec::new(),
            asked: Vec::new(),
            level: 0,
            units: plan.parts.clone(),
            groups: Vec::new(),
            below: Vec::new(),
            parts_read: Vec::new(),
            plan,
            packet,
            round_started: Duration::ZERO,
        }));
        self.start_round()
    }

    /// Asks for every unit of this round at once (the driver keeps
    /// `transform_concurrency` in flight); a unit whose request cannot be
    /// built is noted as failed at once.
    fn start_round(&mut self) -> Vec<Action> {
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        let now = self.ambient.monotonic();
        let conversation = ConversationRef {
            id: self.conversation_id.clone(),
            turn: self.turn_number(),
        };
        let enforced = self.settings.decoding.enforced;
        let concurrency = self.settings.limits.transform_concurrency.max(1);
        let ambient = self.ambient;
        let page = self.page.as_ref();
        let Phase::Staging(staging) = &mut self.phase else {
            return self.fail(Error::internal("the turn read a part out of order"));
        };
        staging.round_started = now;
        staging.notes = vec![None; staging.units.len()];
        staging.asked.clear();
        let mut requests = Vec::new();
        let mut failed = Vec::new();
        for (i, unit) in staging.units.iter().enumerate() {
            let request = match (staging.level, page) {
                (0, Some(page)) => staged::part_request(
                    page,
                    &staging.plan,
                    unit,
                    conversation.clone(),
                    enforced,
                    ambient,
                ),
                (0, None) => Err(Error::internal("the staged turn lost its page")),
                _ => {
                    let members = staging
                        .groups
                        .get(i)
                        .and_then(|r| staging.below.get(r.clone()))
                        .unwrap_or_default();
                    staged::merge_request(
                        &staging.plan,
                        members,
                        unit,
                        conversation.clone(),
                        enforced,
                        ambient,
                    )
                }
            };
            match request {
                Ok(request) => {
                    staging.asked.push(Asked {
                        unit: i,
                        started: None,
                    });
                    requests.push(Arc::new(request));
                }
                Err(e) => failed.push((i, e)),
            }
        }
        let mut actions = Vec::new();
        for (i, e) in failed {
            actions.extend(self.unit_operation(i, OperationStatus::Start, None));
            actions.extend(self.unit_answered(i, Err(e), true));
        }
        if requests.is_empty() {
            actions.extend(self.round_over());
        } else {
            actions.push(Action::AskParts {
                requests,
                concurrency,
            });
        }
        actions
    }

    /// Call `index` of the round's `AskParts` started.
    pub(super) fn part_started(&mut self, index: usize) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Staging(staging) = &mut self.phase else {
            return Vec::new();
        };
        let Some(asked) = staging.asked.get_mut(index).filter(|a| a.started.is_none()) else {
            return Vec::new();
        };
        asked.started = Some(now);
        let unit = asked.unit;
        self.unit_operation(unit, OperationStatus::Start, None)
            .into_iter()
            .collect()
    }

    /// Call `index` of the round's `AskParts` answered (or failed, or was
    /// never started because of a cancel: then it has no step to close).
    pub(super) fn part_replied(&mut self, index: usize, reply: Result<ModelReply>) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Staging(staging) = &self.phase else {
            return Vec::new();
        };
        let Some(&Asked { unit, started }) = staging.asked.get(index) else {
            return Vec::new();
        };
        if staging.notes.get(unit).is_none_or(Option::is_some) {
            return Vec::new();
        }
        if let Some(started) = started {
            self.note_call_time(now.saturating_sub(started));
        }
        let reply = match reply {
            Ok(_) if self.cancelled => Err(Error::cancelled()),
            other => other,
        };
        let mut actions = self.unit_answered(unit, reply, started.is_some());
        actions.extend(self.round_over());
        actions
    }

    /// Keeps unit `unit`'s points (or why not) and closes its step, if it
    /// was opened.
    fn unit_answered(
        &mut self,
        unit: usize,
        reply: Result<ModelReply>,
        opened: bool,
    ) -> Vec<Action> {
        let Phase::Staging(staging) = &mut self.phase else {
            return Vec::new();
        };
        let notes = match reply.and_then(|r| staged::read_points(&r.text, &staging.plan)) {
            Ok(points) => PartNotes::Points(points),
            Err(e) => PartNotes::Failed {
                code: e.code,
                message: prefix_chars(&e.message, 300).to_owned(),
            },
        };
        let label = staging.units.get(unit).map(Part::label).unwrap_or_default();
        let (status, message) = match &notes {
            PartNotes::Points(p) => (
                OperationStatus::Success,
                format!("{} key point(s) from {label}.", p.len()),
            ),
            PartNotes::Failed {
                code: ErrorCode::Cancelled,
                ..
            } => (OperationStatus::Error, "Stopped.".to_owned()),
            PartNotes::Failed { code, message } => {
                (OperationStatus::Error, format!("{code}: {message}"))
            }
        };
        if let Some(slot) = staging.notes.get_mut(unit) {
            *slot = Some(notes);
        }
        if !opened {
            return Vec::new();
        }
        self.unit_operation(unit, status, Some(message))
            .into_iter()
            .collect()
    }

    /// The `operation` of unit `unit` of this round.
    fn unit_operation(
        &self,
        unit: usize,
        status: OperationStatus,
        message: Option<String>,
    ) -> Option<Action> {
        let Phase::Staging(staging) = &self.phase else {
            return None;
        };
        let part = staging.units.get(unit)?;
        let (id, title) = (
            call_id(staging.level, part.number),
            title(staging.level, part, staging.units.len()),
        );
        Some(self.stage_operation(id, OperationAction::Read, title, status, message))
    }

    /// Once every unit of the round has its notes: the next round, the
    /// reduce, or the cancel's end.
    fn round_over(&mut self) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Staging(staging) = &mut self.phase else {
            return Vec::new();
        };
        if staging.notes.iter().any(Option::is_none) {
            return Vec::new();
        }
        self.timings.runtime_ms += super::ms(now.saturating_sub(staging.round_started));
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        self.round_done()
    }

    /// A round is done: combine the summaries again if they do not fit the
    /// reduce call, else reduce.
    fn round_done(&mut self) -> Vec<Action> {
        let Phase::Staging(staging) = &mut self.phase else {
            return self.fail(Error::internal("the turn combined out of order"));
        };
        let notes: Vec<PartNotes> = std::mem::take(&mut staging.notes)
            .into_iter()
            .flatten()
            .collect();
        let read: Vec<(Part, PartNotes)> = if staging.level == 0 {
            staging.units.iter().cloned().zip(notes).collect()
        } else {
            let mut read = Vec::with_capacity(notes.len());
            for ((unit, notes), range) in staging.units.iter().zip(notes).zip(&staging.groups) {
                let members = staging.below.get(range.clone()).unwrap_or_default();
                let notes = match notes {
                    PartNotes::Failed { .. } => {
                        staged::merge_fallback(&staging.plan, members, notes)
                    }
                    points => points,
                };
                read.push((unit.clone(), notes));
            }
            read
        };
        if staging.level == 0 {
            staging.parts_read = read.clone();
            if !read.iter().any(|(_, n)| matches!(n, PartNotes::Points(_))) {
                return self.none_read();
            }
        }
        match staged::merge_groups(&staging.plan, &read) {
            Some(groups) => {
                staging.units = groups
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        staged::merged_part(read.get(r.clone()).unwrap_or_default(), i + 1)
                    })
                    .collect();
                staging.groups = groups;
                staging.below = read;
                staging.level += 1;
                self.start_round()
            }
            None => self.reduce(read),
        }
    }

    /// No part of the page could be read: a coded error, no summary.
    fn none_read(&mut self) -> Vec<Action> {
        let Phase::Staging(staging) = &self.phase else {
            return self.fail(Error::internal("the turn reduced out of order"));
        };
        let notes: Vec<&PartNotes> = staging.parts_read.iter().map(|(_, n)| n).collect();
        {
            let (code, why) = notes
                .iter()
                .find_map(|n| match n {
                    PartNotes::Failed { code, message } => Some((*code, message.clone())),
                    PartNotes::Points(_) => None,
                })
                .unwrap_or((ErrorCode::RuntimeError, String::new()));
            let error = Error::new(
                code,
                format!(
                    "no part of the page could be read ({} part(s); the first failed with: {why})",
                    notes.len()
                ),
            );
            self.fail(error)
        }
    }

    /// The turn's own call over the part summaries `read`.
    fn reduce(&mut self, read: Vec<(Part, PartNotes)>) -> Vec<Action> {
        let Phase::Staging(staging) = std::mem::replace(&mut self.phase, Phase::Reserving) else {
            return self.fail(Error::internal("the turn reduced out of order"));
        };
        let Staging {
            plan,
            parts_read,
            mut packet,
            ..
        } = *staging;
        let Some(budget) = self.budget else {
            return self.fail(Error::internal("the staged turn has no budget"));
        };
        staged::reduce_into(&mut packet, &plan, &read, &budget);
        if let Some(started) = &mut self.started {
            started.packet = packet.clone();
        }
        let of = plan.parts.len();
        self.staged = Some(Staged {
            parts_read,
            reduce_open: true,
        });
        let mut actions = vec![self.stage_operation(
            REDUCE_CALL_ID.into(),
            OperationAction::Other,
            format!("Summarizing the {of} parts"),
            OperationStatus::Start,
            None,
        )];
        actions.extend(self.compose(packet));
        actions
    }

    /// Ends the reduce call's `operation`, if it is open.
    pub(super) fn close_reduce(
        &mut self,
        status: OperationStatus,
        message: String,
    ) -> Option<Action> {
        let staged = self.staged.as_mut().filter(|s| s.reduce_open)?;
        staged.reduce_open = false;
        let title = format!("Summarizing the {} parts", staged.parts_read.len());
        Some(self.stage_operation(
            REDUCE_CALL_ID.into(),
            OperationAction::Other,
            title,
            status,
            Some(message),
        ))
    }

    /// An `operation` of the stages: all belong to step 1, the reduce.
    fn stage_operation(
        &self,
        call_id: CallId,
        action: OperationAction,
        title: String,
        status: OperationStatus,
        message: Option<String>,
    ) -> Action {
        self.operation_event(1, call_id, action, title, (status, message))
    }
}

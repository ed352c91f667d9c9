//! A `web.summarize` turn whose page does not fit the model's context:
//! the page is read in parts, one model call after another, then the
//! turn's own call summarizes the part summaries (`crate::staged`).
//!
//! The parts run one at a time through the same [`Action::Ask`] every
//! driver already carries out (host session, `serve`, replay), so a cancel
//! works as for any model call: the call in flight is interrupted through
//! the turn's token, and no part is asked after the engine saw the cancel.
//! Part calls stream nothing to the user: their text is not the answer.

use super::{Action, Phase, Turn};
use crate::model::ModelReply;
use crate::pack::{Budget, Packed};
use crate::staged::{self, Part, PartNotes, Plan};
use crate::text::prefix_chars;
use laika_protocol::agent::{OperationAction, OperationStatus};
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::ids::CallId;
use laika_protocol::llmcp::{ConversationRef, RequestPacket};
use laika_protocol::observation::Observation;
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
    /// One per unit asked so far, in order.
    notes: Vec<PartNotes>,
    /// The turn's packed request, which the reduce call is made from.
    packet: RequestPacket,
    asked_at: Duration,
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

    /// Starts reading the parts of `plan`; `packet` becomes the reduce call.
    pub(super) fn stage(&mut self, plan: Plan, packet: RequestPacket) -> Vec<Action> {
        self.phase = Phase::Staging(Box::new(Staging {
            notes: Vec::with_capacity(plan.parts.len()),
            level: 0,
            units: plan.parts.clone(),
            groups: Vec::new(),
            below: Vec::new(),
            parts_read: Vec::new(),
            plan,
            packet,
            asked_at: Duration::ZERO,
        }));
        self.next_part()
    }

    /// Asks for the next part (or combining call); once a round is done,
    /// starts the next round or the reduce.
    fn next_part(&mut self) -> Vec<Action> {
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        let now = self.ambient.monotonic();
        let conversation = ConversationRef {
            id: self.conversation_id.clone(),
            turn: self.turn_number(),
        };
        let enforced = self.settings.decoding.enforced;
        let Phase::Staging(staging) = &mut self.phase else {
            return self.fail(Error::internal("the turn read a part out of order"));
        };
        let i = staging.notes.len();
        let Some(unit) = staging.units.get(i) else {
            return self.round_done();
        };
        let request = match (staging.level, &self.page) {
            (0, Some(page)) => staged::part_request(
                page,
                &staging.plan,
                unit,
                conversation,
                enforced,
                self.ambient,
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
                    conversation,
                    enforced,
                    self.ambient,
                )
            }
        };
        staging.asked_at = now;
        let (id, title) = (
            call_id(staging.level, unit.number),
            title(staging.level, unit, staging.units.len()),
        );
        let start = self.stage_operation(
            id,
            OperationAction::Read,
            title,
            OperationStatus::Start,
            None,
        );
        match request {
            Ok(request) => vec![start, Action::Ask(Arc::new(request))],
            Err(e) => {
                let mut actions = vec![start];
                actions.extend(self.part_answered(Err(e)));
                actions
            }
        }
    }

    /// A part's call answered (or failed): keep its points or why not.
    pub(super) fn part_answered(&mut self, reply: Result<ModelReply>) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let cancelled = self.cancelled;
        let Phase::Staging(staging) = &mut self.phase else {
            return Vec::new();
        };
        self.timings.runtime_ms += super::ms(now.saturating_sub(staging.asked_at));
        let reply = match reply {
            Ok(_) if cancelled => Err(Error::cancelled()),
            other => other,
        };
        let notes = match reply.and_then(|r| staged::read_points(&r.text, &staging.plan)) {
            Ok(points) => PartNotes::Points(points),
            Err(e) => PartNotes::Failed {
                code: e.code,
                message: prefix_chars(&e.message, 300).to_owned(),
            },
        };
        let i = staging.notes.len();
        let Some(unit) = staging.units.get(i) else {
            return self.fail(Error::internal("a part answered out of order"));
        };
        let label = unit.label();
        let (status, message) = match &notes {
            PartNotes::Points(p) => (
                OperationStatus::Success,
                format!("{} key point(s) from {label}.", p.len()),
            ),
            PartNotes::Failed { code, message } => {
                (OperationStatus::Error, format!("{code}: {message}"))
            }
        };
        let (id, title) = (
            call_id(staging.level, unit.number),
            title(staging.level, unit, staging.units.len()),
        );
        staging.notes.push(notes);
        let end = self.stage_operation(id, OperationAction::Read, title, status, Some(message));
        let mut actions = vec![end];
        actions.extend(self.next_part());
        actions
    }

    /// A round is done: combine the summaries again if they do not fit the
    /// reduce call, else reduce.
    fn round_done(&mut self) -> Vec<Action> {
        let Phase::Staging(staging) = &mut self.phase else {
            return self.fail(Error::internal("the turn combined out of order"));
        };
        let notes = std::mem::take(&mut staging.notes);
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
                self.next_part()
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

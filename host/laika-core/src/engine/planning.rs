//! Plans (docs/wire-protocol.md#plans): a model answer may propose an
//! `AgentPlan` for a request of several steps instead of calls. The turn
//! sends it as a `plan` event and waits for the user's `approval` — the
//! same round-trip as an `ask` call's or an `estimate`'s (call id routing,
//! digest, expiry) — which may uncheck or reword steps. Approved, each
//! step is one step of the agent loop: the model is asked again with the
//! plan and the step it is on (`context.plan`), and the calls it proposes
//! are gated one by one as in any turn; the step is `done` when they all
//! succeeded, `failed` otherwise, and a step whose `inputs` did not finish
//! is `skipped`. When every step is over the model writes the answer.
//! Every status change goes out as an `entity_patch` of the plan.
//!
//! Invariant: a plan never widens what the gate allows. Its approval
//! approves no call: each is reviewed alone, `ask` calls wait for their own
//! approval (their `tool_call` names the plan step), and a call that
//! changes something still needs an `act` turn.

use super::{Action, Asking, Phase, Turn};
use crate::agent;
use crate::model::ModelReply;
use laika_protocol::agent::{AgentState, StopReason};
use laika_protocol::agent_state::DeltaSource;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{EntityPatch, Event, PatchedEntity, PlanProposal};
use laika_protocol::ids::{CallId, RequestId};
use laika_protocol::plan::{
    AgentPlan, PlanContext, PlanEdit, PlanStepRef, StageMode, StepStatus, MAX_PLAN_TEXT_CHARS,
};
use std::collections::VecDeque;
use std::time::Duration;

/// The turn's plan and how far it got.
pub(super) struct PlanRun {
    plan: AgentPlan,
    call_id: CallId,
    digest: String,
    /// Until the user answers: when the question expires.
    deadline: Option<Duration>,
    /// The step running now, by its place in run order; `None` before the
    /// first and once every step is over.
    current: Option<usize>,
    approved: bool,
    /// Steps of the last round whose first answers came and that have not
    /// run yet, in plan order.
    ready: VecDeque<Ready>,
}

/// A parallel stage's steps asked at once: each step's request, made as
/// its own step would make it, and its answer once it came.
pub(super) struct Round {
    /// (place in run order, the prepared request), in plan order.
    steps: Vec<(usize, Box<Asking>)>,
    /// When each call went to the runtime.
    started: Vec<Option<Duration>>,
    /// Each call's answer and how long it took; `None` until it came.
    replies: Vec<Option<(Result<ModelReply>, Duration)>>,
}

/// A step whose first answer came in a round: it runs from that answer.
struct Ready {
    index: usize,
    asking: Box<Asking>,
    reply: Result<ModelReply>,
    took: Duration,
}

impl PlanRun {
    pub(super) fn plan(&self) -> &AgentPlan {
        &self.plan
    }
}

impl Turn<'_> {
    /// Whether a model answer's plan is taken up: only the first plan of a
    /// turn, only for a question (the one task that may act), and only when
    /// the client shows plans (`turn.plans`).
    pub(super) fn takes_plan(&self) -> bool {
        self.plan.is_none()
            && self.request.plans
            && crate::task_view::task_may_act(self.request.task.name)
    }

    /// Sends the plan and waits for the user's answer.
    pub(super) fn propose_plan(&mut self, mut plan: AgentPlan) -> Vec<Action> {
        for step in plan.steps_mut() {
            step.status = StepStatus::Pending;
            step.message = None;
        }
        let digest = agent::call_digest(
            "plan",
            &serde_json::to_value(&plan).unwrap_or(serde_json::Value::Null),
        );
        let call_id = CallId::from(format!("plan:{}", self.turn_number()));
        let timeout = self.settings.limits.approval_timeout_secs;
        let deadline = self.ambient.monotonic() + Duration::from_secs(timeout);
        let proposal = Event::Plan(PlanProposal {
            conversation_id: self.conversation_id.clone(),
            turn: self.turn_number(),
            step: self.step.max(1),
            call_id: call_id.clone(),
            digest: digest.clone(),
            plan: plan.clone(),
            expires_in_ms: timeout.saturating_mul(1000),
        });
        self.plan = Some(PlanRun {
            plan,
            call_id: call_id.clone(),
            digest,
            deadline: Some(deadline),
            current: None,
            approved: false,
            ready: VecDeque::new(),
        });
        self.phase = Phase::Proposing;
        vec![
            Action::Emit(proposal),
            self.agent_state(AgentState::WaitingForApproval, Some(call_id)),
            Action::Await {
                until: deadline.min(self.budget_deadline()),
            },
        ]
    }

    /// The user's answer to the plan.
    pub(super) fn plan_decided(
        &mut self,
        reply_to: RequestId,
        call_id: &CallId,
        digest: &str,
        approved: bool,
        edit: Option<PlanEdit>,
    ) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Some(run) = &self.plan else {
            return Vec::new();
        };
        let deadline = run.deadline.unwrap_or_default();
        let refused = if run.call_id != *call_id {
            Some((
                ErrorCode::UnknownCall,
                format!(
                    "no call {} waits for approval (the turn waits on its plan)",
                    crate::text::clip_quoted(call_id, 80)
                ),
            ))
        } else if run.digest != digest {
            Some((
                ErrorCode::ApprovalMismatch,
                "the approval does not match the plan the turn waits on; nothing was run"
                    .to_owned(),
            ))
        } else if now >= deadline {
            Some((
                ErrorCode::ApprovalExpired,
                "the approval came after the plan expired; nothing was run".to_owned(),
            ))
        } else {
            edit.as_ref()
                .filter(|_| approved)
                .and_then(|e| edit_problem(&run.plan, e))
                .map(|m| (ErrorCode::InvalidRequest, m))
        };
        if let Some((code, message)) = refused {
            let mut actions = vec![Action::Reply {
                to: reply_to,
                event: Event::error(&Error::new(code, message)),
            }];
            actions.extend(if code == ErrorCode::ApprovalExpired {
                self.decline_plan("nobody answered in time")
            } else {
                vec![Action::Await {
                    until: deadline.min(self.budget_deadline()),
                }]
            });
            return actions;
        }
        let mut actions = vec![Action::Reply {
            to: reply_to,
            event: Event::ApprovalResult {
                call_id: call_id.clone(),
                approved,
            },
        }];
        if !approved {
            actions.extend(self.decline_plan("you cancelled it"));
            return actions;
        }
        actions.extend(self.update_plan(DeltaSource::User, |plan| {
            if let Some(edit) = &edit {
                apply_edit(plan, edit);
            }
        }));
        if let Some(run) = &mut self.plan {
            run.approved = true;
            run.deadline = None;
        }
        actions.extend(self.next_plan_step());
        actions
    }

    /// Time passed while the plan waits: expire it, or wait on.
    pub(super) fn plan_tick(&mut self) -> Vec<Action> {
        let deadline = self
            .plan
            .as_ref()
            .and_then(|r| r.deadline)
            .unwrap_or_default()
            .min(self.budget_deadline());
        if self.ambient.monotonic() < deadline {
            return vec![Action::Await { until: deadline }];
        }
        self.decline_plan("nobody answered in time")
    }

    /// The plan will not run: every step is skipped, and the turn is stored
    /// as cancelled with the proposing answer and ends with `done`, without
    /// an `error` (nothing failed).
    pub(super) fn decline_plan(&mut self, why: &str) -> Vec<Action> {
        let mut actions = self.update_plan(DeltaSource::User, |plan| {
            for step in plan.steps_mut() {
                step.status = StepStatus::Skipped;
            }
        });
        self.phase = Phase::Reserving;
        self.declined = Some(format!("the plan was not run: {why}"));
        actions.extend(self.finish_loop(StopReason::Cancelled));
        actions
    }

    /// After a plan step's answer and calls: its status, then the next
    /// step, or the answer once every step is over. `ok`: every call of the
    /// step succeeded.
    pub(super) fn plan_step_over(&mut self, ok: bool, why: Option<String>) -> Vec<Action> {
        let actions = self.set_current_status(if ok {
            (StepStatus::Done, None)
        } else {
            (StepStatus::Failed, why)
        });
        let mut actions = actions;
        actions.extend(self.next_plan_step());
        actions
    }

    /// Whether an approved plan is running a step now (the model's answer
    /// without calls ends that step, not the turn).
    pub(super) fn in_plan_step(&self) -> bool {
        self.plan
            .as_ref()
            .is_some_and(|r| r.approved && r.current.is_some())
    }

    /// Starts the next step: one whose first answer came in the last round,
    /// else the next pending steps (skipping those whose inputs did not
    /// finish), else asks for the answer once none is left.
    fn next_plan_step(&mut self) -> Vec<Action> {
        if self.cancelled {
            return self.fail(Error::cancelled());
        }
        let ready = self.plan.as_mut().and_then(|r| r.ready.pop_front());
        if let Some(ready) = ready {
            if let Some(run) = &mut self.plan {
                run.current = Some(ready.index);
            }
            return self.ask_next(Some(ready));
        }
        let together = self.settings.limits.transform_concurrency > 1;
        let mut picked = Vec::new();
        let mut actions = self.update_plan(DeltaSource::Plan, |plan| {
            picked = pick(plan, together);
        });
        if let Some(run) = &mut self.plan {
            run.current = picked.first().copied();
        }
        if picked.len() > 1 {
            actions.extend(self.ask_round(picked));
        } else {
            actions.extend(self.ask_next(None));
        }
        actions
    }

    /// The request for the step now running (or for the answer), as the
    /// agent loop's next step; `ready`: that step's first answer, which
    /// came in a round.
    fn ask_next(&mut self, ready: Option<Ready>) -> Vec<Action> {
        if let Some(stop) = self.plan_out_of_room() {
            return stop;
        }
        if let Some(ready) = ready {
            return self.begin_step(ready.asking, Some((ready.reply, ready.took)));
        }
        let t = self.ambient.monotonic();
        let Some(packet) = self.next_packet() else {
            return self.fail(Error::internal("the plan lost its packet"));
        };
        self.timings.pack_ms += self.ms_since(t);
        self.compose(packet)
    }

    /// The turn's end when it has no room for another model step (the step
    /// cap, the time budget): the plan settled, the loop finished.
    fn plan_out_of_room(&mut self) -> Option<Vec<Action>> {
        let reason = if self.step >= self.step_cap() {
            StopReason::StepCap
        } else if self.ambient.monotonic() >= self.budget_deadline() {
            StopReason::TimeBudget
        } else {
            return None;
        };
        let mut actions = self.settle_plan();
        actions.extend(self.finish_loop(reason));
        Some(actions)
    }

    /// Asks the model for the steps `picked` (places in run order) at once:
    /// one request each, made as each step's own would be, sent as one
    /// [`Action::AskParts`] that keeps `limits.transform_concurrency` in
    /// flight.
    fn ask_round(&mut self, picked: Vec<usize>) -> Vec<Action> {
        if let Some(stop) = self.plan_out_of_room() {
            return stop;
        }
        let t = self.ambient.monotonic();
        let mut steps = Vec::with_capacity(picked.len());
        for index in picked {
            if let Some(run) = &mut self.plan {
                run.current = Some(index);
            }
            let prepared = self
                .next_packet()
                .ok_or_else(|| Error::internal("the plan lost its packet"))
                .and_then(|packet| self.prepare(packet));
            match prepared {
                Ok(asking) => steps.push((index, asking)),
                Err(e) => return self.fail(e),
            }
        }
        if let Some(run) = &mut self.plan {
            run.current = None;
        }
        self.timings.pack_ms += self.ms_since(t);
        let requests = steps.iter().map(|(_, a)| a.request.clone()).collect();
        let replies = steps.iter().map(|_| None).collect();
        self.phase = Phase::Parallel(Box::new(Round {
            started: vec![None; steps.len()],
            steps,
            replies,
        }));
        vec![
            self.agent_state(AgentState::Thinking, None),
            Action::AskParts {
                requests,
                concurrency: self.settings.limits.transform_concurrency,
            },
        ]
    }

    /// Call `index` of the round went to the runtime.
    pub(super) fn round_started(&mut self, index: usize) -> Vec<Action> {
        let now = self.ambient.monotonic();
        if let Phase::Parallel(round) = &mut self.phase {
            if let Some(slot) = round.started.get_mut(index) {
                *slot = Some(now);
            }
        }
        Vec::new()
    }

    /// Call `index` of the round answered (or failed, or never started
    /// because of a cancel). Once every call has answered, the steps go on
    /// one at a time in plan order, each from its answer.
    pub(super) fn round_replied(&mut self, index: usize, reply: Result<ModelReply>) -> Vec<Action> {
        let now = self.ambient.monotonic();
        let Phase::Parallel(round) = &mut self.phase else {
            return Vec::new();
        };
        let took = round
            .started
            .get(index)
            .copied()
            .flatten()
            .map_or(Duration::ZERO, |at| now.saturating_sub(at));
        match round.replies.get_mut(index) {
            Some(slot @ None) => *slot = Some((reply, took)),
            _ => return Vec::new(),
        }
        if round.replies.iter().any(Option::is_none) {
            return Vec::new();
        }
        let Phase::Parallel(round) = std::mem::replace(&mut self.phase, Phase::Reserving) else {
            return Vec::new();
        };
        let Round { steps, replies, .. } = *round;
        if let Some(run) = &mut self.plan {
            run.ready = steps
                .into_iter()
                .zip(replies.into_iter().flatten())
                .map(|((index, asking), (reply, took))| Ready {
                    index,
                    asking,
                    reply,
                    took,
                })
                .collect();
        }
        self.next_plan_step()
    }

    /// A step's model call failed for good (`error`): in a plan step that
    /// step fails alone and the plan goes on; anywhere else, and on a
    /// cancel, the turn fails.
    pub(super) fn step_failed(&mut self, error: Error) -> Vec<Action> {
        if error.code == ErrorCode::Cancelled || !self.in_plan_step() {
            return self.fail(error);
        }
        let why = format!(
            "The model could not do this step ({}: {}).",
            error.code.as_str(),
            crate::text::clip(&error.message, 200)
        );
        self.plan_step_over(false, Some(why))
    }

    /// The most model steps this turn takes: the configured cap, or for an
    /// approved plan one per plan step plus the proposal and the answer.
    pub(super) fn step_cap(&self) -> u32 {
        let plan_steps = self
            .plan
            .as_ref()
            .filter(|r| r.approved)
            .map_or(0, |r| r.plan.step_count() as u32 + 2);
        self.settings.limits.max_steps.max(plan_steps)
    }

    /// `context.plan` for the next request, while an approved plan runs.
    pub(super) fn plan_context(&self) -> Option<PlanContext> {
        let run = self.plan.as_ref().filter(|r| r.approved)?;
        Some(PlanContext {
            plan: run.plan.clone(),
            current_step: run
                .current
                .and_then(|i| run.plan.steps().nth(i))
                .map(|s| s.id.clone()),
        })
    }

    /// The plan step a `tool_call` serves, for its card.
    pub(super) fn plan_step_ref(&self) -> Option<PlanStepRef> {
        let run = self.plan.as_ref().filter(|r| r.approved)?;
        let index = run.current?;
        let step = run.plan.steps().nth(index)?;
        Some(PlanStepRef {
            plan_id: run.plan.id.clone(),
            step_id: step.id.clone(),
            index: index + 1,
            total: run.plan.step_count(),
            title: step.title.clone(),
        })
    }

    /// The turn ends with the plan unfinished: the running step failed,
    /// the pending ones were skipped.
    pub(super) fn settle_plan(&mut self) -> Vec<Action> {
        if !self.plan.as_ref().is_some_and(|r| r.approved) {
            return Vec::new();
        }
        let why = if self.cancelled {
            "Stopped."
        } else {
            "The turn ended before this step finished."
        };
        let actions = self.update_plan(DeltaSource::Plan, |plan| {
            for step in plan.steps_mut() {
                match step.status {
                    StepStatus::Running => {
                        step.status = StepStatus::Failed;
                        step.message = Some(why.into());
                    }
                    StepStatus::Pending => step.status = StepStatus::Skipped,
                    StepStatus::Done | StepStatus::Failed | StepStatus::Skipped => {}
                }
            }
        });
        if let Some(run) = &mut self.plan {
            run.current = None;
            run.ready.clear();
        }
        actions
    }

    fn set_current_status(
        &mut self,
        (status, message): (StepStatus, Option<String>),
    ) -> Vec<Action> {
        let Some(index) = self.plan.as_ref().and_then(|r| r.current) else {
            return Vec::new();
        };
        self.update_plan(DeltaSource::Plan, |plan| {
            if let Some(step) = plan.steps_mut().nth(index) {
                step.status = status;
                step.message = message;
            }
        })
    }

    /// Changes the plan and sends what changed as an `entity_patch`.
    fn update_plan(
        &mut self,
        source: DeltaSource,
        change: impl FnOnce(&mut AgentPlan),
    ) -> Vec<Action> {
        let turn = self.turn_number();
        let Some(run) = &mut self.plan else {
            return Vec::new();
        };
        let before = serde_json::to_value(&run.plan).unwrap_or_default();
        change(&mut run.plan);
        let after = serde_json::to_value(&run.plan).unwrap_or_default();
        let patch = crate::entity_patch::diff(&before, &after);
        if patch.is_empty() {
            return Vec::new();
        }
        vec![Action::Emit(Event::EntityPatch(EntityPatch {
            conversation_id: self.conversation_id.clone(),
            turn,
            source,
            entity: PatchedEntity::Plan,
            entity_id: run.plan.id.clone(),
            patch,
        }))]
    }
}

/// Why an edit cannot apply: it names a step the plan does not have, or a
/// title that is empty or too long.
fn edit_problem(plan: &AgentPlan, edit: &PlanEdit) -> Option<String> {
    let known = |id: &String| plan.steps().any(|s| &s.id == id);
    if let Some(id) = edit
        .skip
        .iter()
        .chain(edit.titles.iter().map(|t| &t.id))
        .find(|id| !known(id))
    {
        return Some(format!(
            "the plan has no step {}",
            crate::text::clip_quoted(id, 80)
        ));
    }
    edit.titles
        .iter()
        .any(|t| t.title.trim().is_empty() || t.title.chars().count() > MAX_PLAN_TEXT_CHARS)
        .then(|| format!("a step's title is 1 to {MAX_PLAN_TEXT_CHARS} characters"))
}

/// Unchecked steps are skipped; reworded ones take the user's words.
fn apply_edit(plan: &mut AgentPlan, edit: &PlanEdit) {
    for step in plan.steps_mut() {
        if edit.skip.contains(&step.id) {
            step.status = StepStatus::Skipped;
            step.message = Some("You unchecked this step.".into());
        }
        if let Some(t) = edit.titles.iter().find(|t| t.id == step.id) {
            step.title = t.title.trim().to_owned();
        }
    }
}

/// The steps to run next, set `running`: the first pending step, in run
/// order, whose inputs all finished (a pending step whose inputs did not
/// is `skipped` on the way), and — in a `parallel` stage, when steps may
/// run `together` — every later pending step of that stage whose inputs
/// are all `done` already (a step naming one picked now waits for it).
fn pick(plan: &mut AgentPlan, together: bool) -> Vec<usize> {
    let before: Vec<(String, String, StepStatus)> = plan
        .steps()
        .map(|s| (s.id.clone(), s.title.clone(), s.status))
        .collect();
    let status_of = |id: &str| before.iter().find(|(i, _, _)| i == id);
    let mut picked = Vec::new();
    let mut index = 0;
    for stage in &mut plan.stages {
        let parallel = together && stage.mode == StageMode::Parallel;
        for step in &mut stage.steps {
            let at = index;
            index += 1;
            if step.status != StepStatus::Pending {
                continue;
            }
            if !picked.is_empty() {
                let ready = step
                    .inputs
                    .iter()
                    .all(|i| status_of(i).is_some_and(|(_, _, s)| *s == StepStatus::Done));
                if parallel && ready {
                    step.status = StepStatus::Running;
                    picked.push(at);
                }
                continue;
            }
            let unfinished = step.inputs.iter().find_map(|input| {
                status_of(input)
                    .filter(|(_, _, status)| *status != StepStatus::Done)
                    .map(|(_, title, _)| title.clone())
            });
            if let Some(title) = unfinished {
                step.status = StepStatus::Skipped;
                step.message = Some(format!(
                    "Skipped: it needs “{title}”, which did not finish."
                ));
                continue;
            }
            step.status = StepStatus::Running;
            picked.push(at);
        }
        if !picked.is_empty() {
            break;
        }
    }
    picked
}

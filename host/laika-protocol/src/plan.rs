//! Plans (docs/wire-protocol.md#plans): for a request that needs several
//! steps the model may answer with an `AgentPlan` — stages run in order,
//! each a `parallel` or `sequence` group of steps — which the user approves,
//! edits (unchecks or rewords steps) or cancels once, before any step runs.
//! The field names are the agentic-chat specification's; `status` and
//! `message` are the host's own, never the model's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most steps a plan holds, over all its stages.
pub const MAX_PLAN_STEPS: usize = 8;
/// Longest id (plan, stage, step), in bytes.
pub const MAX_PLAN_ID_LEN: usize = 64;
/// Longest goal, stage name or step title, in characters.
pub const MAX_PLAN_TEXT_CHARS: usize = 200;
/// Most constraints, tools, inputs or outputs one plan or step lists.
pub const MAX_PLAN_LIST: usize = 8;

/// `AgentPlan`: the plan the model proposed, with the host's progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentPlan {
    pub id: String,
    pub goal: String,
    /// Run in order.
    pub stages: Vec<PlanStage>,
    #[serde(default)]
    pub constraints: Vec<String>,
}

/// `PlanStage`: steps that may run together (`parallel`) or in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStage {
    pub id: String,
    pub name: String,
    pub mode: StageMode,
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StageMode {
    Parallel,
    Sequence,
}

/// `PlanStep`: one piece of the work, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStep {
    pub id: String,
    pub title: String,
    pub intent: StepIntent,
    pub executor: StepExecutor,
    /// The tools the step expects to use (a hint: every call is still
    /// gated on its own, whatever the plan says).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Ids of the steps this one needs; it is skipped when one of them
    /// did not finish.
    #[serde(default)]
    pub inputs: Vec<String>,
    #[serde(default)]
    pub outputs: Vec<String>,
    /// The host's: where the step stands.
    #[serde(default)]
    pub status: StepStatus,
    /// The host's: why a step failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepIntent {
    Research,
    Analysis,
    Draft,
    Edit,
    Create,
    Update,
    Review,
}

impl StepIntent {
    pub const ALL: [StepIntent; 7] = [
        StepIntent::Research,
        StepIntent::Analysis,
        StepIntent::Draft,
        StepIntent::Edit,
        StepIntent::Create,
        StepIntent::Update,
        StepIntent::Review,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StepIntent::Research => "research",
            StepIntent::Analysis => "analysis",
            StepIntent::Draft => "draft",
            StepIntent::Edit => "edit",
            StepIntent::Create => "create",
            StepIntent::Update => "update",
            StepIntent::Review => "review",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepExecutor {
    Planner,
    Research,
    Writer,
    Editor,
    Tooling,
}

impl StepExecutor {
    pub const ALL: [StepExecutor; 5] = [
        StepExecutor::Planner,
        StepExecutor::Research,
        StepExecutor::Writer,
        StepExecutor::Editor,
        StepExecutor::Tooling,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StepExecutor::Planner => "planner",
            StepExecutor::Research => "research",
            StepExecutor::Writer => "writer",
            StepExecutor::Editor => "editor",
            StepExecutor::Tooling => "tooling",
        }
    }
}

/// Where a step stands; the sidebar's checklist shows it as the host's
/// `entity_patch`es set it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    #[default]
    Pending,
    Running,
    Done,
    Failed,
    Skipped,
}

impl AgentPlan {
    /// The steps in the order they run: stage by stage, each stage's in
    /// its order.
    pub fn steps(&self) -> impl Iterator<Item = &PlanStep> {
        self.stages.iter().flat_map(|s| s.steps.iter())
    }

    pub fn steps_mut(&mut self) -> impl Iterator<Item = &mut PlanStep> {
        self.stages.iter_mut().flat_map(|s| s.steps.iter_mut())
    }

    pub fn step_count(&self) -> usize {
        self.stages.iter().map(|s| s.steps.len()).sum()
    }

    /// Why the plan cannot run, if it cannot: 1 to [`MAX_PLAN_STEPS`]
    /// steps, no empty stage, ids unique and bounded, texts bounded, and
    /// every `inputs` id naming a step that runs before it.
    pub fn problem(&self) -> Option<String> {
        let total = self.step_count();
        if total == 0 || total > MAX_PLAN_STEPS {
            return Some(format!(
                "a plan has 1 to {MAX_PLAN_STEPS} steps; this one has {total}"
            ));
        }
        if self.stages.iter().any(|s| s.steps.is_empty()) {
            return Some("every stage of a plan has at least one step".into());
        }
        let mut texts = std::iter::once(&self.goal)
            .chain(self.stages.iter().map(|s| &s.name))
            .chain(self.steps().map(|s| &s.title));
        if texts.any(|t| t.trim().is_empty() || t.chars().count() > MAX_PLAN_TEXT_CHARS) {
            return Some(format!(
                "a plan's goal, stage names and step titles are 1 to {MAX_PLAN_TEXT_CHARS} characters"
            ));
        }
        let mut ids = std::iter::once(&self.id)
            .chain(self.stages.iter().map(|s| &s.id))
            .chain(self.steps().map(|s| &s.id));
        if ids.any(|id| id.is_empty() || id.len() > MAX_PLAN_ID_LEN) {
            return Some(format!("plan ids are 1 to {MAX_PLAN_ID_LEN} bytes"));
        }
        let mut before: Vec<&str> = Vec::new();
        for step in self.steps() {
            if before.contains(&step.id.as_str()) {
                return Some(format!("step id {:?} is used twice", step.id));
            }
            if let Some(missing) = step.inputs.iter().find(|i| !before.contains(&i.as_str())) {
                return Some(format!(
                    "step {:?} needs {:?}, which is not a step before it",
                    step.id, missing
                ));
            }
            before.push(&step.id);
        }
        None
    }
}

/// The user's changes to a proposed plan, sent with its `approval`: steps
/// unchecked (they are skipped) and steps reworded. Nothing can be added:
/// an edit only narrows what the plan does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanEdit {
    /// Ids of the steps not to run.
    #[serde(default)]
    #[schemars(length(max = MAX_PLAN_STEPS))]
    pub skip: Vec<String>,
    /// New titles, in the user's words.
    #[serde(default)]
    #[schemars(length(max = MAX_PLAN_STEPS))]
    pub titles: Vec<StepTitle>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepTitle {
    pub id: String,
    #[schemars(length(min = 1, max = MAX_PLAN_TEXT_CHARS))]
    pub title: String,
}

/// Which step of an approved plan a `tool_call` serves, so its card can
/// say "Step 2 of 4: …".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStepRef {
    pub plan_id: String,
    pub step_id: String,
    /// From 1, in the order the steps run.
    #[schemars(range(min = 1))]
    pub index: usize,
    #[schemars(range(min = 1))]
    pub total: usize,
    pub title: String,
}

/// `context.plan` of a request while an approved plan runs: the plan with
/// each step's status, and the step this request is for (`null`: every
/// step is over, write the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanContext {
    pub plan: AgentPlan,
    pub current_step: Option<String>,
}

impl PlanContext {
    /// The step this request is for (`None`: the plan's answer).
    pub fn current(&self) -> Option<&PlanStep> {
        let id = self.current_step.as_ref()?;
        self.plan.steps().find(|s| &s.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(steps: serde_json::Value) -> AgentPlan {
        serde_json::from_value(json!({
            "id": "p1", "goal": "Compare", "stages": [
                {"id": "s1", "name": "Read", "mode": "parallel", "steps": steps}
            ]
        }))
        .unwrap()
    }

    fn step(id: &str, inputs: &[&str]) -> serde_json::Value {
        json!({"id": id, "title": format!("Do {id}"), "intent": "research",
               "executor": "research", "inputs": inputs})
    }

    #[test]
    fn a_well_formed_plan_has_no_problem_and_starts_pending() {
        let p = plan(json!([step("a", &[]), step("b", &["a"])]));
        assert_eq!(p.problem(), None);
        assert!(p.steps().all(|s| s.status == StepStatus::Pending));
    }

    #[test]
    fn too_many_steps_duplicates_and_forward_inputs_are_problems() {
        let nine: Vec<_> = (0..9).map(|i| step(&format!("x{i}"), &[])).collect();
        assert!(plan(json!(nine))
            .problem()
            .unwrap()
            .contains("1 to 8 steps"));
        assert!(plan(json!([step("a", &[]), step("a", &[])]))
            .problem()
            .unwrap()
            .contains("used twice"));
        assert!(plan(json!([step("a", &["b"]), step("b", &[])]))
            .problem()
            .unwrap()
            .contains("not a step before it"));
        assert!(plan(json!([])).problem().is_some());
    }
}

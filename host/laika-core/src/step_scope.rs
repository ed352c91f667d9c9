//! What a step of an approved plan may call: its executor's scope
//! (docs/wire-protocol.md#plans). The step's model call is offered only
//! these tools (`tools::for_request`), and a call outside them is denied
//! `OUT_OF_STEP_SCOPE` with the sentence here, which the model reads at
//! its next step (`engine/act.rs`).
//!
//! The scope is `tools::step_may_call`, derived from the registry's own
//! `Effect` of each tool, never from a list of names:
//! - `planner` and `research`: reads only (the page, arithmetic, listings);
//! - `writer` and `editor`: the host's own tools that read or write Laika's
//!   store (artifacts, collections, the calculators), never the page;
//! - `tooling`: the tools its `tools` lists, and reads; everything when it
//!   lists none.
//!
//! A scope only narrows: the turn's mode and the gate still decide each
//! call that is in scope.

use laika_protocol::plan::{PlanStep, StepExecutor};

/// Why a call of `tool` was not run in `step`, for the model's next step
/// and the user.
pub fn refusal(step: &PlanStep, tool: &str) -> String {
    let title = crate::text::clip(&step.title, 80);
    let scope = match step.executor {
        StepExecutor::Planner | StepExecutor::Research => {
            "only reads (the page, arithmetic, what Laika stores); leave actions to a step that takes them".to_owned()
        }
        StepExecutor::Writer | StepExecutor::Editor => {
            "works with Laika's own tools (artifacts, collections, arithmetic), not the page; write from what earlier steps found".to_owned()
        }
        StepExecutor::Tooling => format!("uses only {} and reads", step.tools.join(", ")),
    };
    format!(
        "Not run: {tool} is outside step “{title}”, a {} step, which {scope}.",
        step.executor.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{self, step_may_call as allows, Effect};
    use laika_protocol::plan::{StepIntent, StepStatus};

    fn step(executor: StepExecutor, tools: &[&str]) -> PlanStep {
        PlanStep {
            id: "s1".into(),
            title: "Read the offers".into(),
            intent: StepIntent::Research,
            executor,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            status: StepStatus::Pending,
            message: None,
        }
    }

    fn allowed(step: &PlanStep) -> Vec<&'static str> {
        tools::offered()
            .filter(|t| allows(step, t))
            .map(|t| &*t.name)
            .collect()
    }

    #[test]
    fn a_research_step_may_only_read() {
        for executor in [StepExecutor::Research, StepExecutor::Planner] {
            let got = allowed(&step(executor, &["browser.click"]));
            assert!(got.contains(&"browser.observe_dom"), "{got:?}");
            assert!(got.contains(&"app.calculate"), "{got:?}");
            for acting in [
                "browser.click",
                "browser.navigate",
                "search",
                "artifact.save",
                "artifact.share",
            ] {
                assert!(!got.contains(&acting), "{acting} in {got:?}");
            }
            assert!(got
                .iter()
                .all(|n| tools::tool_effect(tools::find(n).unwrap()) == Effect::Reads));
        }
    }

    #[test]
    fn a_writer_step_gets_the_hosts_store_tools_and_never_the_page() {
        for executor in [StepExecutor::Writer, StepExecutor::Editor] {
            let got = allowed(&step(executor, &[]));
            assert!(got.contains(&"artifact.save"), "{got:?}");
            assert!(got.contains(&"app.calculate"), "{got:?}");
            for other in [
                "browser.observe_dom",
                "browser.click",
                "search",
                "artifact.share",
                "integration.invoke",
            ] {
                assert!(!got.contains(&other), "{other} in {got:?}");
            }
        }
    }

    #[test]
    fn a_tooling_step_gets_what_it_names_and_reads_or_everything() {
        let got = allowed(&step(StepExecutor::Tooling, &["browser.click"]));
        assert!(got.contains(&"browser.click") && got.contains(&"browser.observe_dom"));
        assert!(!got.contains(&"browser.navigate") && !got.contains(&"artifact.save"));
        let all: Vec<&str> = tools::offered().map(|t| &*t.name).collect();
        assert_eq!(allowed(&step(StepExecutor::Tooling, &[])), all);
    }

    #[test]
    fn an_mcp_tool_is_a_read_only_when_its_server_says_so() {
        let mut mcp = tools::McpTools::default();
        for (name, read_only) in [("search", true), ("append", false)] {
            let listing = tools::McpListing {
                name: name.into(),
                description: None,
                input_schema: serde_json::json!({"type": "object"}),
                read_only,
            };
            mcp.add("notes", false, listing).unwrap();
        }
        let research = step(StepExecutor::Research, &[]);
        let names: Vec<&str> = mcp
            .iter()
            .filter(|t| allows(&research, t))
            .map(|t| &*t.name)
            .collect();
        assert_eq!(names, ["mcp.notes.search"]);
    }

    #[test]
    fn the_refusal_names_the_tool_and_the_step() {
        let why = refusal(&step(StepExecutor::Research, &[]), "browser.click");
        assert!(why.starts_with("Not run: browser.click is outside step “Read the offers”, a research step, which only reads"), "{why}");
    }
}

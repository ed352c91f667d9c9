//! The tool registry: every tool a model may propose (docs/llmcp.md#tool-calls),
//! as the model, the gate and the extension see it.
//!
//! Each [`Tool`] is derived from its [`ToolName`] (`crate::tool_call`, the
//! one list of tools): its name, a short description for the model, the
//! JSON Schema of its `arguments` (from the typed argument struct), and
//! where it runs. How the Policy Gate reviews each is the gate's own
//! exhaustive `match` on the typed call.
//! From here come the gate's argument checks, the tools offered to the
//! model (the `tool_calls` interceptor), and `docs/tools.json`, from which
//! the extension's build generates its tool types and executor tables.
//!
//! Argument schemas are draft 2020-12 plus one keyword, `maxBytes`: a cap on
//! a string's UTF-8 length (`maxLength` counts characters, and the caps
//! bound the bytes a proposal makes the extension handle).

use laika_protocol::plan::{PlanStep, StepExecutor};
use laika_protocol::tool::Executor;
use laika_protocol::tool_call::{ToolName, MAX_BYTES};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

mod mcp;
pub use mcp::{is_name as mcp_name, McpListing, McpOrigin, McpTools};

/// One tool of the registry.
#[derive(Debug, Serialize)]
pub struct Tool {
    #[serde(skip)]
    pub id: ToolName,
    pub name: Cow<'static, str>,
    /// What the tool does, for the model: a lower-case phrase.
    pub description: Cow<'static, str>,
    pub executor: Executor,
    /// The JSON Schema of `arguments`, with one valid example.
    pub arguments: Value,
    /// `None` only if the schema does not compile (a registry bug, caught by
    /// the tests); the gate then denies every call of the tool.
    #[serde(skip)]
    validator: Option<jsonschema::Validator>,
    /// For a tool of an MCP server: which one, and what the gate reads.
    #[serde(skip)]
    pub mcp: Option<McpOrigin>,
}

impl Tool {
    pub fn validator(&self) -> Option<&jsonschema::Validator> {
        self.validator.as_ref()
    }

    /// Whether the tool can run in this version (and so is offered).
    pub fn has_executor(&self) -> bool {
        self.executor != Executor::Unavailable
    }

    /// `name(required, …)`, as the model is shown the tool: the arguments
    /// a call needs. Optional ones have defaults, and the answer schema a
    /// server enforces offers only these (`decoding`).
    pub fn signature(&self) -> String {
        let required: Vec<&str> = self.arguments["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        format!("{}({})", self.name, required.join(", "))
    }
}

/// What the registry says of each tool beyond its arguments: the
/// description the model reads and where it runs. (How the gate reviews
/// it is the gate's own exhaustive `match`.)
fn spec(name: ToolName) -> (&'static str, Executor) {
    use Executor::{Host, Page, Tab};
    match name {
        ToolName::ObserveDom => (
            "re-reads the page, or only the part under rootHandleId",
            Page,
        ),
        ToolName::GetSelectionLinks => (
            "lists the links in the text the user selected",
            Page,
        ),
        ToolName::Click => ("clicks the element with that handle", Page),
        ToolName::Type => ("types text into a text field", Page),
        ToolName::Select => (
            "chooses an option (by value or label) in a list box",
            Page,
        ),
        ToolName::Scroll => (
            "scrolls the page by deltaY pixels (negative scrolls up)",
            Page,
        ),
        ToolName::OpenTab => ("opens an http(s) URL in a new tab", Tab),
        ToolName::Navigate => ("opens an http(s) URL in this tab", Tab),
        ToolName::Back => ("goes back in this tab's history", Tab),
        ToolName::Forward => ("goes forward in this tab's history", Tab),
        ToolName::Refresh => ("reloads this tab", Tab),
        ToolName::Search => (
            "searches the web (engine: duckduckgo, google or bing), in this tab or a new one",
            Tab,
        ),
        ToolName::ArtifactSave => (
            "saves a text or document as an artifact (exactly one of text or doc)",
            Host,
        ),
        ToolName::ArtifactShare => (
            "exports an artifact as markdown, text, json or csv to a file (a download) or the clipboard; the user is asked first",
            Tab,
        ),
        ToolName::ArtifactOpen => (
            "opens an artifact in the workspace or the browser",
            Host,
        ),
        ToolName::IntegrationInvoke => (
            "calls an operation of an integration the user configured; the user is asked first",
            Host,
        ),
        ToolName::Calculate => (
            "evaluates an arithmetic expression exactly, in decimal (precision: 0 to 6 decimals)",
            Host,
        ),
        ToolName::CollectionCreate => ("creates a collection of sources", Host),
        ToolName::CollectionAddSources => ("adds URLs or notes to a collection", Host),
        ToolName::CollectionListSources => {
            ("lists the sources of a collection", Host)
        }
        ToolName::SourceCapture => (
            "captures a page into a collection (opened in a background tab, read, closed)",
            Tab,
        ),
        ToolName::SourceRefresh => (
            "captures a page source of a collection again, replacing its text (same sourceId)",
            Tab,
        ),
        ToolName::TransformListTypes => (
            "lists the transforms a collection can go through",
            Host,
        ),
        ToolName::TransformRun => (
            "runs a transform over a collection, producing an artifact",
            Host,
        ),
        ToolName::MoneyCalculate => (
            "evaluates a money expression in fixed-point decimal, rounded to the currency's minor units",
            Host,
        ),
        ToolName::EstimateTax => (
            "estimates the sales tax on an amount (in minor units) for a destination",
            Host,
        ),
        ToolName::EstimateShipping => ("estimates shipping to a destination", Host),
        ToolName::Mcp => (
            "calls a tool of an MCP server the user configured",
            Host,
        ),
    }
}

/// What a call of a tool changes. One classification for every use: the
/// mode lets only [`Effect::Reads`] run outside `act` ([`acts`]), and a
/// plan step's executor is offered the effects its work needs
/// (`step_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing: reads a page, computes, lists what is stored.
    Reads,
    /// Changes the page, or where a tab is; opening or following a URL
    /// counts (a GET can change things, and the user's page is left).
    Browser,
    /// Changes Laika's own store: artifacts, collections, transforms.
    Store,
    /// Reaches past the browser and the store: a file, the clipboard, an
    /// integration, an MCP server.
    Outside,
}

/// What a call of tool `name` changes. An MCP tool may do anything: it
/// reaches outside unless its server says it only reads ([`tool_effect`]).
pub fn effect(name: ToolName) -> Effect {
    match name {
        ToolName::ObserveDom
        | ToolName::GetSelectionLinks
        | ToolName::Scroll
        | ToolName::Calculate
        | ToolName::MoneyCalculate
        | ToolName::EstimateTax
        | ToolName::EstimateShipping
        | ToolName::CollectionListSources
        | ToolName::TransformListTypes => Effect::Reads,
        ToolName::Click
        | ToolName::Type
        | ToolName::Select
        | ToolName::OpenTab
        | ToolName::Navigate
        | ToolName::Back
        | ToolName::Forward
        | ToolName::Refresh
        | ToolName::Search
        | ToolName::ArtifactOpen
        | ToolName::SourceCapture
        | ToolName::SourceRefresh => Effect::Browser,
        ToolName::ArtifactSave
        | ToolName::CollectionCreate
        | ToolName::CollectionAddSources
        | ToolName::TransformRun => Effect::Store,
        ToolName::ArtifactShare | ToolName::IntegrationInvoke | ToolName::Mcp => Effect::Outside,
    }
}

/// What a call of `tool` changes, an MCP tool's as its server lists it.
pub fn tool_effect(tool: &Tool) -> Effect {
    match &tool.mcp {
        Some(origin) if origin.read_only => Effect::Reads,
        _ => effect(tool.id),
    }
}

/// Whether `step` of an approved plan may call `tool`: its executor's
/// scope (`step_scope`), from the tool's [`Effect`] — `planner` and
/// `research` read only; `writer` and `editor` use the host's own tools
/// that read or write Laika's store, never the page; `tooling` what its
/// `tools` names and reads, or everything when it names none.
pub fn step_may_call(step: &PlanStep, tool: &Tool) -> bool {
    let effect = tool_effect(tool);
    match step.executor {
        StepExecutor::Planner | StepExecutor::Research => effect == Effect::Reads,
        StepExecutor::Writer | StepExecutor::Editor => {
            tool.executor == Executor::Host && matches!(effect, Effect::Reads | Effect::Store)
        }
        StepExecutor::Tooling => {
            step.tools.is_empty()
                || effect == Effect::Reads
                || step.tools.iter().any(|t| *t == tool.name)
        }
    }
}

/// Whether a call of tool `name` changes something: the page, the tab's
/// location, the store, a file, the clipboard or the world outside (an
/// integration). Only an `act` turn runs these (`engine/act.rs`); reads and
/// arithmetic run in any mode. An MCP tool acts unless its server says it
/// only reads ([`mcp_acts`]).
pub fn acts(name: ToolName) -> bool {
    effect(name) != Effect::Reads
}

/// Whether the MCP call named `name` (`mcp.<server>.<tool>`) changes
/// something: unless its server listed the tool with `readOnlyHint`, it
/// does (an unknown tool too).
pub fn mcp_acts(mcp: &McpTools, name: &str) -> bool {
    mcp.find(name)
        .is_none_or(|t| tool_effect(t) != Effect::Reads)
}

/// Browser tools the host prepares before the extension runs them (an
/// `Action::RunTool` first, its result sent as `agent_state.input`): the
/// extension knows neither a source's URL nor an artifact's content.
pub fn host_prepared(name: ToolName) -> bool {
    matches!(name, ToolName::SourceRefresh | ToolName::ArtifactShare)
}

/// Tools whose browser result is a page read in a background tab, which
/// the host stores (the page the loop acts on stays as it was).
pub fn captures(name: ToolName) -> bool {
    matches!(name, ToolName::SourceCapture | ToolName::SourceRefresh)
}

/// Every tool, in the catalog's order ([`ToolName::ALL`], docs/llmcp.md#tool-calls).
pub fn all() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        ToolName::ALL
            .iter()
            .filter(|name| !name.is_family())
            .map(|&name| tool(name))
            .collect()
    })
}

/// The tool called exactly `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    ToolName::from_name(name).and_then(|id| all().iter().find(|t| t.id == id))
}

/// Where tool `name` runs.
pub fn executor(name: ToolName) -> Executor {
    spec(name).1
}

/// Required arguments that name something a tool made or the turn's
/// collection holds: a tool needing one is offered only where the request
/// can give it.
const REFERENCES: &[&str] = &["collectionId", "sourceId", "artifactId"];

/// The tools offered for `packet` (the prompt lists them and the answer
/// schema's tool calls are a union of them): none where the task never acts;
/// for a question, every offered tool its plan step's executor may call
/// ([`step_may_call`], while an approved plan runs a step) and whose required
/// ids the request can give, which are all of them over a collection or once the agent loop has
/// run a call (its outcomes are in the transcript), and otherwise those
/// needing no collection, source or artifact id.
pub fn for_request<'a>(
    packet: &laika_protocol::llmcp::RequestPacket,
    mcp: &'a McpTools,
) -> Vec<&'a Tool> {
    if !crate::task_view::task_may_act(packet.input.task.name) {
        return Vec::new();
    }
    let ids_at_hand = !packet.context.transcript.is_empty()
        || packet
            .context
            .documents
            .iter()
            .any(|d| d.kind == crate::collection::INDEX_DOC_TYPE);
    let mcp_tools = mcp.iter();
    let step = packet
        .context
        .plan
        .as_ref()
        .and_then(laika_protocol::plan::PlanContext::current);
    offered()
        .map(|t| -> &'a Tool { t })
        .chain(mcp_tools)
        .filter(|t| step.is_none_or(|s| step_may_call(s, t)))
        .filter(|t| {
            ids_at_hand
                || !t.arguments["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r.as_str().is_some_and(|r| REFERENCES.contains(&r)))
        })
        .collect()
}

/// The tools offered to the model: those with an executor.
pub fn offered() -> impl Iterator<Item = &'static Tool> {
    all().iter().filter(|t| t.has_executor())
}

/// The registry as `docs/tools.json` has it (see the test in
/// `laika-host/tests/tools_catalog.rs`); the extension's build generates its
/// tool tables from that file.
pub fn catalog() -> impl Serialize {
    #[derive(Serialize)]
    struct Catalog {
        #[serde(rename = "$comment")]
        comment: &'static str,
        tools: &'static [Tool],
    }
    Catalog {
        comment: "Generated from host/laika-core/src/tools.rs; do not edit. Rewrite with: LAIKA_BLESS=1 cargo test -p laika-host --test tools_catalog",
        tools: all(),
    }
}

/// Compiles an argument schema (draft 2020-12 with `maxBytes`).
fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_keyword(MAX_BYTES, |_, limit, _| {
            let limit = limit
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    jsonschema::ValidationError::schema("maxBytes must be a non-negative integer")
                })?;
            Ok(Box::new(MaxBytes(limit)))
        })
        .build(schema)
        .map_err(|e| e.to_string())
}

struct MaxBytes(usize);

impl<'i> jsonschema::Keyword<'i> for MaxBytes {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(format!(
                "longer than {} bytes",
                self.0
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        instance.as_str().is_none_or(|s| s.len() <= self.0)
    }
}

fn tool(id: ToolName) -> Tool {
    let (description, executor) = spec(id);
    let arguments = id.arguments_schema();
    let validator = match compile(&arguments) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::error!(tool = id.as_str(), error = %e, "tool argument schema does not compile");
            None
        }
    };
    Tool {
        id,
        name: Cow::Borrowed(id.as_str()),
        description: Cow::Borrowed(description),
        executor,
        arguments,
        validator,
        mcp: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_every_schema_compiles() {
        let mut names: Vec<&str> = all().iter().map(|t| &*t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
        for t in all() {
            assert!(t.validator().is_some(), "{}", t.name);
            assert_eq!(find(&t.name).map(|f| &f.name), Some(&t.name));
        }
        assert!(find("browser.teleport").is_none());
    }

    #[test]
    fn every_example_is_valid_and_every_schema_is_closed() {
        for t in all() {
            let examples = t.arguments["examples"].as_array().unwrap();
            assert!(!examples.is_empty(), "{}", t.name);
            for example in examples {
                assert!(t.validator().unwrap().is_valid(example), "{}", t.name);
            }
            assert_eq!(
                t.arguments["additionalProperties"],
                json!(false),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn prepared_tools_run_in_the_tab_and_the_right_ones_are_offered() {
        for t in all() {
            if host_prepared(t.id) {
                assert_eq!(t.executor, Executor::Tab, "{}", t.name);
            }
        }
        let offered: Vec<&str> = offered().map(|t| &*t.name).collect();
        for name in [
            "search",
            "app.calculate",
            "app.money_calculate",
            "commerce.estimate_tax",
            "collection.create",
            "transform.run",
            "artifact.save",
        ] {
            assert!(offered.contains(&name), "{name}");
        }
        assert_eq!(find("source.capture").unwrap().executor, Executor::Tab);
        for name in ["artifact.share", "source.refresh", "integration.invoke"] {
            assert!(offered.contains(&name), "{name}");
        }
        assert!(captures(ToolName::SourceRefresh) && !captures(ToolName::ArtifactShare));
    }

    #[test]
    fn max_bytes_counts_utf8_bytes() {
        let v = compile(&json!({ "type": "string", "maxBytes": 4 })).unwrap();
        assert!(v.is_valid(&json!("abcd")));
        assert!(!v.is_valid(&json!("abcde")));
        assert!(!v.is_valid(&json!("ééé")), "6 bytes, 3 characters");
        assert!(compile(&json!({ "maxBytes": -1 })).is_err());
        assert!(compile(&json!({ "maxBytes": "4" })).is_err());
    }

    #[test]
    fn signatures_name_the_required_arguments() {
        let sig = |n: &str| find(n).unwrap().signature();
        assert_eq!(sig("browser.type"), "browser.type(handleId, text)");
        assert_eq!(sig("browser.back"), "browser.back()");
        assert_eq!(sig("search"), "search(query)");
        assert_eq!(sig("browser.observe_dom"), "browser.observe_dom()");
    }

    #[test]
    fn the_catalog_lists_every_tool_with_its_executor() {
        let catalog = serde_json::to_value(catalog()).unwrap();
        let tools = catalog["tools"].as_array().unwrap();
        assert_eq!(tools.len(), all().len());
        assert_eq!(tools[0]["executor"], json!("page"));
        assert_eq!(tools[6]["executor"], json!("tab"));
        assert_eq!(tools[12]["executor"], json!("host"), "artifact.save");
        assert_eq!(tools[13]["executor"], json!("tab"), "artifact.share");
    }
}

//! The agent loop's vocabulary (docs/wire-protocol.md#the-agent-loop): how a
//! tool call ended, the states and operations the sidebar shows, why a loop
//! stops, and the digests that bind an approval to one call and spot a loop.
//!
//! The loop itself is the turn engine's (`crate::engine`); this module is the
//! plain data and the pure helpers it shares with the wire and the store.

use crate::observation::Observation;
use crate::text::prefix_chars;
use crate::tool_call::ToolCall;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Most steps a turn may take: the configurable cap's upper bound.
pub const MAX_STEPS: u32 = 32;
/// The step cap when the config does not set one.
pub const DEFAULT_MAX_STEPS: u32 = 8;
/// How long an `ask` call waits for the user by default.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u64 = 120;
/// How long a browser tool may take by default (navigation included).
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;
/// A whole turn's default time budget, model calls included.
pub const DEFAULT_TURN_BUDGET_SECS: u64 = 600;

/// Bytes of a tool result's JSON kept in the transcript the model sees.
pub const MAX_RESULT_BYTES: usize = 4_000;
/// Characters kept of any one string inside a tool result.
const MAX_RESULT_STRING_CHARS: usize = 500;
/// Entries kept of any one array inside a tool result.
const MAX_RESULT_ITEMS: usize = 25;
/// Bytes of an error message or summary kept.
const MAX_MESSAGE_BYTES: usize = 500;
/// Bytes of an error code from the extension.
const MAX_CODE_BYTES: usize = 64;

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    Ok,
    Error,
    /// The gate, the user or the extension refused it: it did not run.
    Denied,
    /// No result (or no approval) came in time.
    Timeout,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Denied => "denied",
            ToolStatus::Timeout => "timeout",
        }
    }
}

/// A tool call's error: a code (the host's, the gate's reason, or the
/// extension's) and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    #[schemars(length(min = 1, max = MAX_CODE_BYTES))]
    pub code: String,
    pub message: String,
}

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>) -> ToolError {
        ToolError {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// The same error with its code and message cut to size (they may come
    /// from the extension).
    pub fn bounded(self) -> ToolError {
        ToolError {
            code: prefix_chars(&self.code, MAX_CODE_BYTES).to_owned(),
            message: prefix_chars(&self.message, MAX_MESSAGE_BYTES).to_owned(),
        }
    }
}

/// Host error codes of tool results (beyond the gate's reasons and the
/// extension's own codes).
pub mod codes {
    /// The user denied the call.
    pub const USER_DENIED: &str = "USER_DENIED";
    /// Nobody approved or denied the call before its approval expired.
    pub const APPROVAL_EXPIRED: &str = "APPROVAL_EXPIRED";
    /// The extension did not report a result in time.
    pub const TOOL_TIMEOUT: &str = "TOOL_TIMEOUT";
    /// The user stopped the turn while the call was pending.
    pub const CANCELLED: &str = "CANCELLED";
    /// An earlier call of the same step did not succeed, so this one was
    /// not run (it may have depended on it).
    pub const NOT_RUN: &str = "NOT_RUN";
}

/// Where the agent is, as the sidebar shows it (docs/wire-protocol.md#agent_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// The model is being asked.
    Thinking,
    /// A tool call is running.
    Executing,
    /// An `ask` call waits for the user.
    WaitingForApproval,
    /// The loop is over; `done` follows.
    Done,
}

/// A human-readable operation's progress (docs/wire-protocol.md#operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OperationStatus {
    Start,
    Success,
    Error,
}

/// What an operation does to the page, for its icon and wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationAction {
    Read,
    Click,
    Type,
    Select,
    Scroll,
    Navigate,
    Search,
    Calculate,
    Other,
}

/// Why an agent loop stopped: a code in `done`, told to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without tool calls.
    Answered,
    /// The step cap was reached.
    StepCap,
    /// The model proposed the same call again on an unchanged page.
    LoopDetected,
    /// The turn's time budget ran out.
    TimeBudget,
    /// The user stopped it.
    Cancelled,
    /// A step failed (the `error` event says why).
    Failed,
}

/// The digest that binds an approval to one exact call: SHA-256 over the
/// tool name and its arguments' canonical JSON (object keys sorted).
pub fn call_digest(name: &str, arguments: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    hasher.update([0]);
    hasher.update(
        serde_json::to_string(arguments)
            .unwrap_or_default()
            .as_bytes(),
    );
    hex(&hasher.finalize())
}

/// A digest of what the page shows, to tell an unchanged page from a new one.
pub fn page_digest(observation: &Observation) -> String {
    let mut hasher = Sha256::new();
    hasher.update(
        serde_json::to_string(&observation.summary)
            .unwrap_or_default()
            .as_bytes(),
    );
    hex(&hasher.finalize()[..16])
}

/// Text from the model or the page, as an operation quotes it: one line,
/// clipped, in typographic quotes.
fn quoted(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let kept = prefix_chars(&line, 60);
    let more = if kept.len() < line.len() { "…" } else { "" };
    format!("“{kept}{more}”")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A tool result cut to a size the model can be shown: long strings
/// clipped, long arrays shortened, and, if it is still too big, replaced by
/// a preview of its JSON.
pub fn bounded_result(result: &Value) -> Value {
    let trimmed = trim(result, 0);
    let text = serde_json::to_string(&trimmed).unwrap_or_default();
    if text.len() <= MAX_RESULT_BYTES {
        return trimmed;
    }
    serde_json::json!({
        "truncated": true,
        "preview": prefix_chars(&text, MAX_RESULT_BYTES / 2),
    })
}

fn trim(value: &Value, depth: usize) -> Value {
    match value {
        Value::String(s) => Value::String(prefix_chars(s, MAX_RESULT_STRING_CHARS).to_owned()),
        Value::Array(items) if depth < 8 => Value::Array(
            items
                .iter()
                .take(MAX_RESULT_ITEMS)
                .map(|v| trim(v, depth + 1))
                .collect(),
        ),
        Value::Object(map) if depth < 8 => Value::Object(
            map.iter()
                .take(MAX_RESULT_ITEMS * 2)
                .map(|(k, v)| (prefix_chars(k, 64).to_owned(), trim(v, depth + 1)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(_) | Value::Object(_) => Value::String("…".into()),
        other => other.clone(),
    }
}

/// A one-line message, cut to size.
pub fn bounded_message(message: &str) -> String {
    prefix_chars(message.trim(), MAX_MESSAGE_BYTES).to_owned()
}

/// The wording of an operation: what it does and to what, e.g.
/// (`Click`, `Clicking “Show more comments”`).
pub fn describe(call: &ToolCall, target: Option<&str>) -> (OperationAction, String) {
    let on = target.filter(|t| !t.trim().is_empty()).map(quoted);
    let element = || on.clone().unwrap_or_else(|| "an element".to_owned());
    match call {
        ToolCall::ObserveDom(_) => (OperationAction::Read, "Reading the page".into()),
        ToolCall::GetSelectionLinks(_) => {
            (OperationAction::Read, "Reading the selected links".into())
        }
        ToolCall::Click(_) => (OperationAction::Click, format!("Clicking {}", element())),
        ToolCall::Type(_) => (OperationAction::Type, format!("Typing into {}", element())),
        ToolCall::Select(args) => (
            OperationAction::Select,
            format!("Choosing {} in {}", quoted(&args.value), element()),
        ),
        ToolCall::Scroll(args) => {
            let way = if args.delta_y >= 0.0 { "down" } else { "up" };
            (OperationAction::Scroll, format!("Scrolling {way}"))
        }
        ToolCall::Navigate(args) => (
            OperationAction::Navigate,
            format!("Opening {}", quoted(&args.url)),
        ),
        ToolCall::OpenTab(args) => (
            OperationAction::Navigate,
            format!("Opening {} in a new tab", quoted(&args.url)),
        ),
        ToolCall::Back(_) => (OperationAction::Navigate, "Going back".into()),
        ToolCall::Forward(_) => (OperationAction::Navigate, "Going forward".into()),
        ToolCall::Refresh(_) => (OperationAction::Navigate, "Reloading the page".into()),
        ToolCall::Search(args) => (
            OperationAction::Search,
            format!("Searching for {}", quoted(&args.query)),
        ),
        ToolCall::Calculate(args) => (
            OperationAction::Calculate,
            format!("Calculating {}", quoted(&args.expression)),
        ),
        ToolCall::MoneyCalculate(args) => (
            OperationAction::Calculate,
            format!("Calculating {}", quoted(&args.expression)),
        ),
        ToolCall::ArtifactSave(_)
        | ToolCall::ArtifactShare(_)
        | ToolCall::ArtifactOpen(_)
        | ToolCall::IntegrationInvoke(_)
        | ToolCall::CollectionCreate(_)
        | ToolCall::CollectionAddSources(_)
        | ToolCall::CollectionListSources(_)
        | ToolCall::SourceCapture(_)
        | ToolCall::SourceRefresh(_)
        | ToolCall::TransformListTypes(_)
        | ToolCall::TransformRun(_)
        | ToolCall::EstimateTax(_)
        | ToolCall::EstimateShipping(_) => (
            OperationAction::Other,
            format!("Running {}", quoted(call.name().as_str())),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_binds_name_and_arguments_whatever_the_key_order() {
        let a = call_digest("browser.click", &json!({"handleId": "laika-1"}));
        let b: Value = serde_json::from_str(r#"{"handleId":"laika-1"}"#).unwrap_or_default();
        assert_eq!(a, call_digest("browser.click", &b));
        assert_eq!(a.len(), 64);
        assert_ne!(
            a,
            call_digest("browser.click", &json!({"handleId": "laika-2"}))
        );
        assert_ne!(
            a,
            call_digest("browser.type", &json!({"handleId": "laika-1"}))
        );
        let one = json!({"url": "https://a.example/", "x": 1});
        let other: Value =
            serde_json::from_str(r#"{"x":1,"url":"https://a.example/"}"#).unwrap_or_default();
        assert_eq!(call_digest("t", &one), call_digest("t", &other));
    }

    #[test]
    fn big_results_are_cut_to_size() {
        let huge = json!({"links": (0..500).map(|i| json!({"text": "x".repeat(900), "url": format!("https://e.example/{i}")})).collect::<Vec<_>>()});
        let bounded = bounded_result(&huge);
        let text = serde_json::to_string(&bounded).unwrap_or_default();
        assert!(text.len() <= MAX_RESULT_BYTES + 64, "{}", text.len());
        let small = json!({"result": 3, "formatted": "3"});
        assert_eq!(bounded_result(&small), small);
    }

    #[test]
    fn operations_read_like_sentences() {
        let describe = |name: &str, arguments: &Value, target| {
            let name = crate::tool_call::ToolName::from_name(name).unwrap();
            let call = ToolCall::from_arguments(name, arguments.clone()).unwrap();
            super::describe(&call, target)
        };
        let (action, title) = describe(
            "browser.click",
            &json!({"handleId": "laika-3"}),
            Some("Show more comments"),
        );
        assert_eq!(action, OperationAction::Click);
        assert_eq!(title, "Clicking “Show more comments”");
        let (_, title) = describe("search", &json!({"query": "rust"}), None);
        assert_eq!(title, "Searching for “rust”");
        let (_, title) = describe("browser.type", &json!({"handleId": "h", "text": "x"}), None);
        assert_eq!(title, "Typing into an element");
    }
}

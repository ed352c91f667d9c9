//! The agent loop's pure helpers (docs/wire-protocol.md#the-agent-loop):
//! the digests that bind an approval to one call and spot a loop, tool
//! results cut to what the model is shown, and the wording of operations.
//! The loop's vocabulary (tool status, states, stop reasons) is
//! `laika_protocol::agent`.
//!
//! The loop itself is the turn engine's (`crate::engine`); these helpers are
//! what it shares with the wire and the store.

use crate::text::prefix_chars;
use laika_protocol::agent::{OperationAction, MAX_MESSAGE_BYTES};
use laika_protocol::observation::Observation;
use laika_protocol::tool_call::ToolCall;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Bytes of a tool result's JSON kept in the transcript the model sees.
pub const MAX_RESULT_BYTES: usize = 4_000;
/// Characters kept of any one string inside a tool result.
const MAX_RESULT_STRING_CHARS: usize = 500;
/// Entries kept of any one array inside a tool result.
const MAX_RESULT_ITEMS: usize = 25;

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
        ToolCall::Mcp(args) => (
            OperationAction::Other,
            format!(
                "Calling {} on the MCP server {}",
                quoted(&args.tool),
                quoted(&args.server)
            ),
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
            let name = laika_protocol::tool_call::ToolName::from_name(name).unwrap();
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

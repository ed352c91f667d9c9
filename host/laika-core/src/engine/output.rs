//! Checking one model output: strict parse, the envelope the host fills,
//! schema, reply-to.

use crate::decoding;
use crate::model_output;
use crate::render::RenderLimits;
use crate::schema::{self, Issue};
use crate::stream::RenderStream;
use laika_protocol::llmcp::{RequestPacket, ResponsePacket, TaskName};
use laika_protocol::render::ast::{Block, Doc, Inline, Text};
use serde_json::{json, Map, Value};

/// The note a cut answer ends with, and the repair it is recorded as.
pub(super) const CUT_NOTE: &str =
    "This answer was cut short: the model reached its output limit (runtime.max_tokens).";
pub(super) const CUT_REPAIR: &str =
    "closed at its last complete block: the output was cut at the token limit";

/// A model output that passed every check.
pub(super) struct Valid {
    pub response: ResponsePacket,
    /// The validated JSON, with fields `ResponsePacket` does not keep (for
    /// `post_response` hooks).
    pub value: Value,
    pub repairs: Vec<String>,
}

/// Why an output was refused: the issues to feed back, and whether it was
/// cut short (then a retry would not help).
pub(super) struct Rejected {
    pub issues: Vec<Issue>,
    pub truncated: bool,
}

impl Rejected {
    fn one(message: String, truncated: bool) -> Rejected {
        Rejected {
            issues: vec![Issue {
                path: String::new(),
                message,
            }],
            truncated,
        }
    }
}

/// Strict parse, envelope fill (`new_id` and `now` asked only for what the
/// model left out), then the full schema and reply-to checks.
pub(super) fn check(
    raw: &str,
    packet: &RequestPacket,
    validator: &jsonschema::Validator,
    new_id: &dyn Fn() -> String,
    now: &dyn Fn() -> String,
) -> Result<Valid, Rejected> {
    let mut extracted = model_output::extract_json_object(raw)
        .map_err(|e| Rejected::one(e.message, e.truncated))?;
    decoding::fill_envelope(&mut extracted.value, packet, new_id, now);
    schema::validate(validator, &extracted.value).map_err(|issues| Rejected {
        issues,
        truncated: false,
    })?;
    let issues = schema::check_reply_to(&extracted.value, packet);
    if !issues.is_empty() {
        return Err(Rejected {
            issues,
            truncated: false,
        });
    }
    let response: ResponsePacket =
        serde_json::from_value(extracted.value.clone()).map_err(|e| {
            Rejected::one(
                format!("response does not match the packet shape: {e}"),
                false,
            )
        })?;
    if let Some(problem) = response.plan.as_ref().and_then(|p| p.problem()) {
        return Err(Rejected {
            issues: vec![Issue {
                path: "/plan".into(),
                message: problem,
            }],
            truncated: false,
        });
    }
    Ok(Valid {
        response,
        value: extracted.value,
        repairs: extracted.repairs,
    })
}

/// An output cut at the token limit, closed at its last complete block: the
/// render blocks finished before the cut (sanitized, as the preview showed
/// them) and a note that the answer was cut short; the title, citations and
/// extracted fields written whole before the cut. Never a tool call: a cut
/// answer proposes nothing. `None` when no block was complete, or the
/// closed answer still fails a check.
pub(super) fn close_cut(
    raw: &str,
    packet: &RequestPacket,
    validator: &jsonschema::Validator,
    new_id: &dyn Fn() -> String,
    now: &dyn Fn() -> String,
) -> Option<Valid> {
    let mut blocks = RenderStream::new(RenderLimits::default()).push(raw);
    if blocks.is_empty() {
        return None;
    }
    blocks.push(Block::Paragraph {
        children: vec![Inline::Text(Text::new(CUT_NOTE))],
    });
    let written = model_output::close_cut_object(raw).unwrap_or(Value::Null);
    let assistant = &written["assistant"];
    let title = assistant["title"].as_str().map_or_else(
        || default_title(packet.input.task.name).to_string(),
        str::to_string,
    );
    let citations: Vec<Value> = assistant["citations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["doc_id"].is_string() && c["quote"].as_str().is_some_and(|q| !q.is_empty()))
        .cloned()
        .collect();
    let mut answer = Map::new();
    answer.insert("title".into(), json!(title));
    answer.insert("render".into(), Doc { children: blocks }.to_value());
    answer.insert("citations".into(), Value::Array(citations));
    if let Some(data) = assistant.get("data").filter(|d| d.is_object()) {
        answer.insert("data".into(), data.clone());
    }
    let mut value = json!({"assistant": answer, "tool_calls": []});
    decoding::fill_envelope(&mut value, packet, new_id, now);
    schema::validate(validator, &value).ok()?;
    if !schema::check_reply_to(&value, packet).is_empty() {
        return None;
    }
    let response: ResponsePacket = serde_json::from_value(value.clone()).ok()?;
    Some(Valid {
        response,
        value,
        repairs: vec![CUT_REPAIR.to_string()],
    })
}

/// The title of a cut answer whose own title was not written.
fn default_title(task: TaskName) -> &'static str {
    match task {
        TaskName::Summarize => "Summary",
        TaskName::Answer => "Answer",
        TaskName::Extract => "Extracted fields",
    }
}

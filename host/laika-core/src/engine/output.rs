//! Checking one model output: strict parse, the envelope the host fills,
//! schema, reply-to.

use crate::decoding;
use crate::model_output;
use crate::schema::{self, Issue};
use laika_protocol::llmcp::{RequestPacket, ResponsePacket};
use serde_json::Value;

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
    Ok(Valid {
        response,
        value: extracted.value,
        repairs: extracted.repairs,
    })
}

//! "Test connection" in Settings: one short structured request that shows
//! whether the chosen runtime answers, and answers in the shape it was
//! asked for. The host sends it ([`request`]) and reads the reply
//! ([`check`]); nothing of it is stored.
//!
//! The schema is tiny and bounded, so a constrained decoder must finish it
//! within the token cap: a failure here is the server's, not the budget's.

use crate::ambient::Ambient;
use crate::model::ModelRequest;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::ConnectionAnswer;
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::TaskName;
use serde_json::{json, Value};

/// The longest reply asked for, in characters.
pub const REPLY_CHARS: usize = 80;
/// Enough tokens for the reply (and a server that prefixes a little).
const MAX_OUTPUT_TOKENS: u32 = 96;
/// The most of an unusable reply shown back to the user.
pub const MAX_RAW_CHARS: usize = 300;

pub const SYSTEM_PROMPT: &str = "You are checking that a connection works. Reply with exactly one JSON object of the form {\"reply\": \"<one short line>\"} and nothing else.";
pub const QUESTION: &str = "Connection test: reply with one short line saying that you are ready.";

/// The JSON Schema of the answer: `{"reply": "<one line>"}`.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["reply"],
        "properties": {"reply": {"type": "string", "minLength": 1, "maxLength": REPLY_CHARS}},
        "additionalProperties": false
    })
}

/// The request the runtime gets: a packet without documents, the schema,
/// one question.
pub fn request(ambient: &dyn Ambient) -> ModelRequest {
    let mut request = ModelRequest::without_page(
        TaskName::Answer,
        (&ConversationId::from(ambient.new_id()), 1),
        (SYSTEM_PROMPT, QUESTION.to_owned()),
        schema(),
        MAX_OUTPUT_TOKENS,
        ambient,
    );
    request.packet.input.user_message.text = QUESTION.to_owned();
    request
}

/// The parsed answer, or `INVALID_MODEL_OUTPUT` saying what is wrong with
/// it (in words a user can read next to the raw reply).
pub fn check(raw: &str) -> Result<ConnectionAnswer> {
    let extracted = crate::model_output::extract_json_object(raw).map_err(|e| {
        let why = if e.truncated {
            "its JSON was cut off".to_owned()
        } else {
            format!("it is not JSON ({})", e.message)
        };
        invalid(&why)
    })?;
    let validator = crate::schema::compile(&schema())
        .map_err(|e| Error::internal(format!("the connection test schema: {e}")))?;
    if let Some(issue) = validator.iter_errors(&extracted.value).next() {
        let at = issue.instance_path().to_string();
        let what = crate::text::clip(&issue.to_string(), 160);
        return Err(invalid(&format!(
            "it does not have the shape asked for ({}: {what})",
            if at.is_empty() { "(root)" } else { &at }
        )));
    }
    // The schema allows exactly this shape: a failure here is the schema's.
    serde_json::from_value(extracted.value)
        .map_err(|e| Error::internal(format!("the connection test answer: {e}")))
}

fn invalid(why: &str) -> Error {
    Error::new(
        ErrorCode::InvalidModelOutput,
        format!("the model answered, but {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ambient::Fixed;

    #[test]
    fn the_request_asks_one_bounded_question() {
        let r = request(&Fixed::new());
        assert_eq!(r.user_prompt, QUESTION);
        assert_eq!(r.response_schema["properties"]["reply"]["maxLength"], 80);
        assert!(r.packet.context.documents.is_empty());
        assert_eq!(r.max_output_tokens, Some(96));
    }

    #[test]
    fn a_reply_in_shape_is_returned_parsed() {
        let v = check("```json\n{\"reply\": \"Ready.\"}\n```").unwrap();
        assert_eq!(serde_json::to_value(v).unwrap(), json!({"reply": "Ready."}));
    }

    #[test]
    fn unusable_replies_say_why() {
        let cases = [
            ("I am ready!", "not JSON"),
            ("{\"reply\": \"Rea", "cut off"),
            ("{\"answer\": \"Ready\"}", "shape"),
            ("{\"reply\": \"\"}", "shape"),
        ];
        for (raw, why) in cases {
            let e = check(raw).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidModelOutput);
            assert!(e.message.contains(why), "{raw:?} → {}", e.message);
        }
        let long = format!("{{\"reply\": \"{}\"}}", "a".repeat(REPLY_CHARS + 1));
        assert!(check(&long).is_err());
    }
}

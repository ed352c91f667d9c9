//! Fixtures the runtimes' unit tests share.

use crate::http::{Decoder, StreamEvent};
use crate::ModelRequest;
use laika_protocol::error::Result;
use serde_json::{json, Value};

/// A summarize request with the given answer schema and system prompt, and
/// "USER" as the user prompt.
pub fn request(response_schema: Value, system_prompt: String) -> ModelRequest {
    let packet = serde_json::from_value(json!({
        "protocol": {"name": "laika.llmcp", "version": 1},
        "id": "r1", "type": "request", "created_at": "2025-01-01T00:00:00Z",
        "conversation": {"id": "c1", "turn": 1},
        "sender": {"role": "agent"},
        "input": {"user_message": {"id": "u1", "text": "hi"}, "task": {"name": "web.summarize"}},
        "context": {"documents": []},
        "output": {"format": "render_ast"}
    }))
    .unwrap_or_else(|e| panic!("packet fixture: {e}"));
    ModelRequest {
        packet,
        response_schema,
        system_prompt,
        user_prompt: "USER".into(),
        attempt: 0,
        feedback: None,
        max_output_tokens: None,
    }
}

/// The events `decoder` makes of `input` fed in two pieces, split at `split`.
pub fn decode_split(
    mut decoder: impl Decoder,
    input: &[u8],
    split: usize,
) -> Result<Vec<StreamEvent>> {
    let mut events = Vec::new();
    let (a, b) = input.split_at(split);
    decoder.feed(a, &mut events)?;
    decoder.feed(b, &mut events)?;
    decoder.finish(&mut events)?;
    Ok(events)
}

/// `decode(input, split)` gives `want` wherever `input` is split.
pub fn assert_same_at_every_split(
    decode: impl Fn(&[u8], usize) -> Result<Vec<StreamEvent>>,
    input: &[u8],
    want: &[StreamEvent],
) {
    for split in 0..=input.len() {
        assert_eq!(decode(input, split).unwrap(), want, "split at {split}");
    }
}

//! `anthropic`: the Anthropic Messages API (`POST {base_url}/messages`),
//! streamed as server-sent events.
//!
//! The answer is asked for as a forced tool call: one tool,
//! `laika_answer`, whose `input_schema` is the answer schema, and
//! `tool_choice` naming it, so the model writes exactly one JSON object of
//! that shape. The stream decoder keeps the tool input's
//! `input_json_delta` pieces as the answer text; text and thinking deltas
//! never reach the answer (they only show the model is alive), a
//! `max_tokens` stop is reported as `length`, and an `error` event fails
//! the call. The key goes in `x-api-key`, with `anthropic-version`.
//!
//! Hosted only: there is no default URL, so page content leaves the machine
//! only when `runtime.base_url` says where to.

use super::http::{
    error_value_message, runtime_error, Decoder, HttpClient, HttpConfig, KeyHeader, SseDecoder,
    SseEvents, StreamEvent,
};
use super::{config_error, CancelToken, Decoding, ModelReply, ModelRequest, RuntimeInfo};
use laika_core::decoding::DEFAULT_MAX_TOKENS;
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";
/// The one tool the model is made to call: its input is the answer.
pub const ANSWER_TOOL: &str = "laika_answer";

/// `[runtime]` with `kind = "anthropic"`: the shared HTTP keys (`base_url`,
/// `model` and `api_key` required) and `max_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnthropicConfig {
    #[serde(flatten)]
    pub http: HttpConfig,
    /// The Messages API requires a cap; [`DEFAULT_MAX_TOKENS`] when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl AnthropicConfig {
    /// The field names above besides [`HttpConfig::KEYS`].
    pub const KEYS: &'static [&'static str] = &["max_tokens"];

    pub fn validate(&self) -> Result<()> {
        self.http.validate()?;
        if self.max_tokens == Some(0) {
            return Err(config_error("runtime.max_tokens must be > 0"));
        }
        if self.endpoints().is_empty() {
            return Err(config_error(
                "runtime.kind = \"anthropic\" needs runtime.base_url, e.g. \"https://api.anthropic.com/v1\"",
            ));
        }
        if self.http.model().is_none() {
            return Err(config_error(
                "runtime.kind = \"anthropic\" needs runtime.model (or LAIKA_MODEL)",
            ));
        }
        Ok(())
    }

    /// The configured endpoints; none by default (a hosted API).
    pub fn endpoints(&self) -> Vec<String> {
        self.http.endpoints(None)
    }
}

pub struct AnthropicRuntime {
    http: HttpClient,
    model: String,
    max_tokens: u32,
}

impl AnthropicRuntime {
    pub fn from_config(config: &AnthropicConfig) -> Result<AnthropicRuntime> {
        config.validate()?;
        Ok(AnthropicRuntime {
            http: HttpClient::with_headers(
                &config.endpoints(),
                "messages",
                config.http.timeouts(),
                config.http.api_key.as_ref().map(|k| k.expose()),
                KeyHeader::XApiKey,
                &[("anthropic-version", API_VERSION)],
            )?,
            model: config.http.model().unwrap_or_default().to_string(),
            max_tokens: config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        })
    }

    /// The Messages request body for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        json!({
            "model": self.model,
            "max_tokens": request.max_output_tokens.unwrap_or(self.max_tokens),
            "stream": true,
            "system": request.system_prompt,
            "messages": [{"role": "user", "content": request.user_prompt}],
            "tools": [{
                "name": ANSWER_TOOL,
                "description": "Give the answer. Its input is the whole answer, in the shape the system prompt describes.",
                "input_schema": request.response_schema,
            }],
            "tool_choice": {"type": "tool", "name": ANSWER_TOOL},
        })
    }
}

impl Runtime for AnthropicRuntime {
    /// A forced tool call follows `input_schema` closely, but nothing
    /// guarantees it: the prompt asks for the shape, and the host validates.
    fn decoding(&self) -> Decoding {
        Decoding {
            enforced: false,
            max_tokens: Some(self.max_tokens),
            ..Decoding::default()
        }
    }

    fn info(&self) -> RuntimeInfo {
        self.http.runtime_info(
            "anthropic",
            self.model.clone(),
            "the Anthropic Messages API",
        )
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        self.http.complete(
            &self.request_body(request),
            cancel,
            &|_| -> Box<dyn Decoder> { Box::new(MessagesSse::default()) },
            on_text,
            || self.model.clone(),
        )
    }
}

/// Decodes a streamed Messages response (`message_start` … `message_stop`).
pub type MessagesSse = SseDecoder<MessagesEvents>;

/// The events of a Messages stream.
#[derive(Debug, Default)]
pub struct MessagesEvents {
    stopped: bool,
}

impl SseEvents for MessagesEvents {
    fn data(&mut self, data: &str, events: &mut Vec<StreamEvent>) -> Result<()> {
        let event = super::http::stream_json(data, "event")?;
        self.event(&event, events)
    }
}

impl MessagesEvents {
    fn event(&mut self, event: &Value, events: &mut Vec<StreamEvent>) -> Result<()> {
        match event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message_start" => {
                if let Some(model) = event.pointer("/message/model").and_then(Value::as_str) {
                    events.push(StreamEvent::Model(model.to_string()));
                }
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta.get("type").and_then(Value::as_str) {
                    Some("input_json_delta") => {
                        if let Some(piece) = delta.get("partial_json").and_then(Value::as_str) {
                            if !piece.is_empty() {
                                events.push(StreamEvent::Text(piece.to_string()));
                            }
                        }
                    }
                    _ => events.push(StreamEvent::Reasoning),
                }
            }
            "message_delta" => {
                if let Some(stop) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    let reason = if stop == "max_tokens" {
                        "length"
                    } else {
                        "stop"
                    };
                    events.push(StreamEvent::Finish(reason.into()));
                }
            }
            "message_stop" => {
                self.stopped = true;
                events.push(StreamEvent::End);
            }
            "error" => {
                return Err(runtime_error(format!(
                    "the API reported an error: {}",
                    error_value_message(&event["error"])
                        .unwrap_or_else(|| super::http::clip(&event["error"].to_string(), 200))
                )))
            }
            // ping, content_block_start/stop: nothing to keep.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AnthropicConfig {
        AnthropicConfig {
            http: HttpConfig {
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: Some("claude-sonnet-4-5".into()),
                ..HttpConfig::default()
            },
            max_tokens: Some(900),
        }
    }

    fn request() -> ModelRequest {
        crate::test_support::request(
            json!({"type": "object", "required": ["assistant"]}),
            "SYS".into(),
        )
    }

    #[test]
    fn the_answer_is_a_forced_tool_call_with_the_answer_schema() {
        let rt = AnthropicRuntime::from_config(&config()).unwrap();
        assert_eq!(
            rt.request_body(&request()),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 900,
                "stream": true,
                "system": "SYS",
                "messages": [{"role": "user", "content": "USER"}],
                "tools": [{
                    "name": "laika_answer",
                    "description": "Give the answer. Its input is the whole answer, in the shape the system prompt describes.",
                    "input_schema": {"type": "object", "required": ["assistant"]},
                }],
                "tool_choice": {"type": "tool", "name": "laika_answer"},
            })
        );
        assert_eq!(
            rt.decoding(),
            Decoding {
                enforced: false,
                max_tokens: Some(900),
                ..Decoding::default()
            }
        );
        assert_eq!(rt.info().kind, "anthropic");
    }

    #[test]
    fn config_needs_a_url_and_a_model() {
        let mut c = config();
        c.http.base_url = None;
        assert!(c
            .validate()
            .unwrap_err()
            .message
            .contains("runtime.base_url"));
        let mut c = config();
        c.http.model = None;
        assert!(c.validate().unwrap_err().message.contains("runtime.model"));
        let mut c = config();
        c.max_tokens = Some(0);
        assert!(c.validate().is_err());
    }

    fn decode(chunks: &[&str]) -> Result<Vec<StreamEvent>> {
        let mut d = MessagesSse::default();
        let mut events = Vec::new();
        for c in chunks {
            d.feed(c.as_bytes(), &mut events)?;
        }
        d.finish(&mut events)?;
        Ok(events)
    }

    /// The event sequence the Messages API streams for a tool call.
    const STREAM: &[&str] = &[
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":812,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"laika_answer\",\"input\":{}}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"assistant\\\": {\\\"ti\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"tle\\\": \\\"Nacht\\\"}}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ];

    #[test]
    fn the_tool_input_streams_as_the_answer_text() {
        let events = decode(STREAM).unwrap();
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, r#"{"assistant": {"title": "Nacht"}}"#);
        assert!(events.contains(&StreamEvent::Model("claude-sonnet-4-5-20250929".into())));
        assert!(events.contains(&StreamEvent::Finish("stop".into())));
        assert_eq!(events.last(), Some(&StreamEvent::End));
    }

    #[test]
    fn a_cap_is_length_and_an_error_event_fails() {
        let cut = decode(&[
            "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\n",
        ])
        .unwrap();
        assert_eq!(
            cut,
            vec![StreamEvent::Reasoning, StreamEvent::Finish("length".into())]
        );
        let e = decode(&["event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"])
            .unwrap_err();
        assert!(e.message.contains("Overloaded"), "{}", e.message);
        assert!(decode(&["data: {not json\n\n"]).is_err());
    }
}

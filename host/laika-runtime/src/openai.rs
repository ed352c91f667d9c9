//! `openai`: any server with an OpenAI-compatible `POST {base_url}/chat/completions`
//! (llama.cpp `llama-server`, vLLM, SGLang, `mlx_lm.server`, LM Studio,
//! hosted APIs), streamed as server-sent events.
//!
//! The request is the system and user prompts plus what the [`Profile`]
//! adds (schema placement, thinking off, `stream_options`). The stream
//! decoder keeps only `choices[0].delta.content`: reasoning fields never
//! reach the answer, and an `error` object mid-stream fails the call.
//! A server that ignores `stream: true` and answers with one JSON body is
//! read as well.

use super::http::{
    chat_messages, chunk_head, runtime_error, Decoder, HttpClient, HttpConfig, SseDecoder,
    SseEvents, StreamEvent, MAX_ANSWER_BYTES,
};
use super::profile::{
    Capability, Profile, SchemaMode, ThinkingOff, PROFILE_NAMES, SCHEMA_MODES, THINKING_MODES,
};
use super::{
    config_error, unknown_value, CancelToken, Decoding, ModelReply, ModelRequest, RuntimeInfo,
};
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// `[runtime]` with `kind = "openai"`: the shared HTTP keys, the profile
/// and its overrides (see docs/runtimes.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiConfig {
    #[serde(flatten)]
    pub http: HttpConfig,
    /// One of [`PROFILE_NAMES`]; `generic` when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_strict: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_off: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_usage: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl OpenAiConfig {
    /// The field names above besides [`HttpConfig::KEYS`], for the config
    /// loader's key check.
    pub const KEYS: &'static [&'static str] = &[
        "profile",
        "schema_mode",
        "schema_strict",
        "thinking_off",
        "reasoning_effort",
        "stream_usage",
        "max_tokens",
    ];

    pub fn validate(&self) -> Result<()> {
        self.http.validate()?;
        if self.max_tokens == Some(0) {
            return Err(config_error("runtime.max_tokens must be > 0"));
        }
        self.endpoints(&self.profile()?).map(drop)
    }

    /// The profile this config names (`generic` when none), with its
    /// overrides applied.
    pub fn profile(&self) -> Result<Profile> {
        let name = self.profile.as_deref().unwrap_or("generic");
        let mut profile = Profile::builtin(name)
            .ok_or_else(|| unknown_value("runtime.profile", name, PROFILE_NAMES))?;
        if let Some(mode) = self.schema_mode.as_deref() {
            profile.schema = SchemaMode::parse(mode, self.schema_strict.unwrap_or(true))
                .ok_or_else(|| unknown_value("runtime.schema_mode", mode, SCHEMA_MODES))?;
        } else if let (SchemaMode::JsonSchema { .. }, Some(strict)) =
            (profile.schema, self.schema_strict)
        {
            profile.schema = SchemaMode::JsonSchema { strict };
        }
        if let Some(mode) = self.thinking_off.as_deref() {
            profile.thinking_off = ThinkingOff::parse(mode)
                .ok_or_else(|| unknown_value("runtime.thinking_off", mode, THINKING_MODES))?;
        }
        if let Some(on) = self.stream_usage {
            profile.stream_usage = on;
        }
        Ok(profile)
    }

    /// The configured endpoints, else the profile's default. Hosted profiles
    /// have none: page content leaves the machine only when a URL says so.
    pub fn endpoints(&self, profile: &Profile) -> Result<Vec<String>> {
        let urls = self.http.endpoints(profile.default_base_url);
        if urls.is_empty() {
            return Err(config_error(format!(
                "runtime.kind = \"openai\" with profile {:?} needs runtime.base_url (or LAIKA_BASE_URL)",
                profile.name
            )));
        }
        Ok(urls)
    }
}

pub struct OpenAiRuntime {
    http: HttpClient,
    profile: Profile,
    model: Option<String>,
    max_tokens: Option<u32>,
    reasoning_effort: String,
}

impl OpenAiRuntime {
    pub fn from_config(config: &OpenAiConfig) -> Result<OpenAiRuntime> {
        let profile = config.profile()?;
        Ok(OpenAiRuntime {
            http: HttpClient::new(
                &config.endpoints(&profile)?,
                "chat/completions",
                config.http.timeouts(),
                config.http.api_key.as_ref().map(|k| k.expose()),
            )?,
            profile,
            model: config.http.model().map(str::to_string),
            max_tokens: config.max_tokens,
            reasoning_effort: config
                .reasoning_effort
                .clone()
                .unwrap_or_else(|| "low".into()),
        })
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The chat request body for `request`.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        if let Some(model) = &self.model {
            body.insert("model".into(), json!(model));
        }
        body.insert("messages".into(), chat_messages(request));
        body.insert("stream".into(), json!(true));
        // The engine's limit keeps prompt + answer inside the server's
        // context window; it already respects a configured one.
        if let Some(n) = request.max_output_tokens.or(self.max_tokens) {
            body.insert("max_tokens".into(), json!(n));
        }
        // llama-server reuses the KV cache of the longest common prefix: the
        // prompt is laid out stable-first (see `prompt::user_prompt`).
        if self.profile.name == "llama.cpp" {
            body.insert("cache_prompt".into(), json!(true));
        }
        self.profile
            .apply(&mut body, &request.response_schema, &self.reasoning_effort);
        Value::Object(body)
    }
}

impl Runtime for OpenAiRuntime {
    fn decoding(&self) -> Decoding {
        Decoding {
            enforced: self.profile.capability() == Capability::NativeSchema,
            max_tokens: self.max_tokens,
            ..Decoding::default()
        }
    }

    fn info(&self) -> RuntimeInfo {
        let model = self.model.clone().unwrap_or_else(|| "default".into());
        self.http.runtime_info("openai", model, self.profile.name)
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        let reasoning = self.profile.reasoning_field;
        self.http.complete(
            &self.request_body(request),
            cancel,
            &|content_type| -> Box<dyn Decoder> {
                if content_type.starts_with("application/json") {
                    Box::new(WholeJson::default())
                } else {
                    Box::new(ChatSse::new(ChatChunks::new(reasoning)))
                }
            },
            on_text,
            || self.model.clone().unwrap_or_else(|| "default".into()),
        )
    }
}

/// Decodes a streamed chat completion (`data: {chunk}` … `data: [DONE]`).
pub type ChatSse = SseDecoder<ChatChunks>;

/// The chunks of a chat completion, streamed or whole.
#[derive(Debug, Default)]
pub struct ChatChunks {
    reasoning_field: Option<&'static str>,
    finished: bool,
    saw_model: bool,
}

impl SseEvents for ChatChunks {
    fn data(&mut self, data: &str, events: &mut Vec<StreamEvent>) -> Result<()> {
        if data.trim() == "[DONE]" {
            events.push(StreamEvent::End);
            return Ok(());
        }
        let chunk = super::http::stream_json(data, "event")?;
        self.chunk(&chunk, events)
    }

    /// Some servers close without `[DONE]` after the last chunk; a finish
    /// reason says the answer was complete.
    fn end(&mut self, events: &mut Vec<StreamEvent>) {
        if self.finished && !events.contains(&StreamEvent::End) {
            events.push(StreamEvent::End);
        }
    }
}

impl ChatChunks {
    pub fn new(reasoning_field: Option<&'static str>) -> ChatChunks {
        ChatChunks {
            reasoning_field,
            ..ChatChunks::default()
        }
    }

    fn chunk(&mut self, chunk: &Value, events: &mut Vec<StreamEvent>) -> Result<()> {
        chunk_head(
            chunk,
            "event",
            "the runtime failed mid-answer",
            &mut self.saw_model,
            events,
        )?;
        // `choices` is missing, null or empty in usage-only chunks.
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    events.push(StreamEvent::Text(text.to_string()));
                }
            }
            let reasoning = self
                .reasoning_field
                .and_then(|f| delta.get(f))
                .and_then(Value::as_str);
            if reasoning.is_some_and(|r| !r.is_empty()) {
                events.push(StreamEvent::Reasoning);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finished = true;
            events.push(StreamEvent::Finish(reason.to_string()));
        }
        Ok(())
    }
}

/// A non-streamed chat completion: one JSON body, read whole.
#[derive(Debug, Default)]
pub struct WholeJson {
    body: Vec<u8>,
}

impl Decoder for WholeJson {
    fn feed(&mut self, bytes: &[u8], _events: &mut Vec<StreamEvent>) -> Result<()> {
        if self.body.len().saturating_add(bytes.len()) > MAX_ANSWER_BYTES {
            return Err(runtime_error("the answer is too large"));
        }
        self.body.extend_from_slice(bytes);
        Ok(())
    }

    fn finish(&mut self, events: &mut Vec<StreamEvent>) -> Result<()> {
        let value: Value = serde_json::from_slice(&self.body)
            .map_err(|e| runtime_error(format!("the answer is not JSON: {e}")))?;
        let mut chat = ChatChunks::default();
        chat.chunk(&value, events)?;
        if !chat.finished && !events.iter().any(|e| matches!(e, StreamEvent::Text(_))) {
            return Err(runtime_error(
                "the answer has no choices[0].message.content",
            ));
        }
        events.push(StreamEvent::End);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::error::ErrorCode;
    use laika_protocol::llmcp::TaskName;

    fn decode_split(input: &[u8], split: usize) -> Result<Vec<StreamEvent>> {
        let decoder = ChatSse::new(ChatChunks::new(Some("reasoning_content")));
        crate::test_support::decode_split(decoder, input, split)
    }

    #[test]
    fn stream_decodes_the_same_at_every_split() {
        let input = concat!(
            ": keep-alive\n\n",
            "data: {\"model\":\"qwen3\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"{\\\"a\\\":\"}}]}\r\n\r\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"\\\"ü\\\"}\"},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\n",
            "data: {\"choices\":null}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes();
        let want = vec![
            StreamEvent::Model("qwen3".into()),
            StreamEvent::Reasoning,
            StreamEvent::Text("{\"a\":".into()),
            StreamEvent::Text("\"ü\"}".into()),
            StreamEvent::Finish("length".into()),
            StreamEvent::End,
        ];
        crate::test_support::assert_same_at_every_split(decode_split, input, &want);
    }

    #[test]
    fn errors_mid_stream_and_garbage_are_runtime_errors() {
        let e = decode_split(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"error\":{\"message\":\"out of memory\"}}\n\n",
            5,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::RuntimeError);
        assert!(e.message.contains("out of memory"), "{}", e.message);
        let e = decode_split(b"data: {\"error\":\"boom\"}\n\n", 0).unwrap_err();
        assert!(e.message.contains("boom"), "{}", e.message);
        let e = decode_split(b"data: not json\n\n", 0).unwrap_err();
        assert!(e.message.contains("not JSON"), "{}", e.message);
        let e = decode_split(b"data: [1,2]\n\n", 0).unwrap_err();
        assert!(e.message.contains("not a JSON object"), "{}", e.message);
    }

    #[test]
    fn eof_after_a_finish_reason_ends_without_done() {
        let ev = decode_split(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
            7,
        )
        .unwrap();
        assert_eq!(ev.last(), Some(&StreamEvent::End));
        let ev = decode_split(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n",
            7,
        )
        .unwrap();
        assert!(!ev.contains(&StreamEvent::End));
    }

    #[test]
    fn whole_json_answer_is_read() {
        let mut d = WholeJson::default();
        let mut ev = Vec::new();
        d.feed(
            br#"{"model":"m","choices":[{"message":{"content":"{}"},"finish_reason":"stop"}]}"#,
            &mut ev,
        )
        .unwrap();
        d.finish(&mut ev).unwrap();
        assert_eq!(
            ev,
            [
                StreamEvent::Model("m".into()),
                StreamEvent::Text("{}".into()),
                StreamEvent::Finish("stop".into()),
                StreamEvent::End
            ]
        );
        let mut d = WholeJson::default();
        d.feed(br#"{"error":{"message":"nope"}}"#, &mut ev).unwrap();
        assert!(d.finish(&mut ev).unwrap_err().message.contains("nope"));
    }

    fn request() -> ModelRequest {
        let system_prompt = laika_core::prompt::system_prompt(
            &laika_core::prompt::base_rules(),
            TaskName::Summarize,
            &laika_core::prompt::AnswerShape {
                sketch: "{}".into(),
                enforced: true,
            },
        );
        crate::test_support::request(json!({"type": "object"}), system_prompt)
    }

    fn body_for(profile: &str, extra: impl FnOnce(&mut OpenAiConfig)) -> Value {
        let mut c = OpenAiConfig {
            http: HttpConfig {
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: Some("qwen3-4b".into()),
                ..HttpConfig::default()
            },
            profile: Some(profile.into()),
            ..OpenAiConfig::default()
        };
        extra(&mut c);
        let mut body = OpenAiRuntime::from_config(&c)
            .unwrap()
            .request_body(&request());
        // The prompts are checked once below; compare the rest exactly.
        body.as_object_mut().unwrap().remove("messages");
        body
    }

    #[test]
    fn request_bodies_per_profile_are_exact() {
        let schema = json!({"type": "object"});
        let rf = |strict: bool| json!({"type": "json_schema", "json_schema": {"name": "laika_llmcp_response", "schema": schema, "strict": strict}});
        let off = json!({"enable_thinking": false});
        let usage = json!({"include_usage": true});
        let cases = [
            (
                "llama.cpp",
                json!({"model": "qwen3-4b", "stream": true, "json_schema": schema, "chat_template_kwargs": off, "cache_prompt": true}),
            ),
            (
                "vllm",
                json!({"model": "qwen3-4b", "stream": true, "response_format": rf(true), "chat_template_kwargs": off, "stream_options": usage}),
            ),
            (
                "sglang",
                json!({"model": "qwen3-4b", "stream": true, "response_format": rf(true), "chat_template_kwargs": off, "stream_options": usage}),
            ),
            (
                "mlx",
                json!({"model": "qwen3-4b", "stream": true, "chat_template_kwargs": off}),
            ),
            (
                "lmstudio",
                json!({"model": "qwen3-4b", "stream": true, "response_format": rf(true)}),
            ),
            (
                "openai",
                json!({"model": "qwen3-4b", "stream": true, "response_format": rf(false), "stream_options": usage}),
            ),
            (
                "generic",
                json!({"model": "qwen3-4b", "stream": true, "response_format": {"type": "json_object"}}),
            ),
        ];
        for (profile, want) in cases {
            assert_eq!(body_for(profile, |_| {}), want, "profile {profile}");
        }
        let hosted = body_for("openai", |c| {
            c.thinking_off = Some("reasoning_effort".into());
            c.reasoning_effort = Some("minimal".into());
            c.max_tokens = Some(4096);
            c.http.model = None;
        });
        assert_eq!(
            hosted,
            json!({"stream": true, "max_tokens": 4096, "response_format": rf(false), "reasoning_effort": "minimal", "stream_options": usage})
        );
    }

    /// The turn sizes the answer schema and words the prompt from this: a
    /// profile that sends the schema where its server enforces it says so.
    #[test]
    fn decoding_says_which_profiles_enforce_the_schema() {
        for (profile, enforced) in [
            ("llama.cpp", true),
            ("vllm", true),
            ("sglang", true),
            ("lmstudio", true),
            ("openai", true),
            ("mlx", false),
            ("generic", false),
        ] {
            let c = OpenAiConfig {
                http: HttpConfig {
                    base_url: Some("http://127.0.0.1:9/v1".into()),
                    ..HttpConfig::default()
                },
                profile: Some(profile.into()),
                max_tokens: Some(640),
                ..OpenAiConfig::default()
            };
            let d = OpenAiRuntime::from_config(&c).unwrap().decoding();
            assert_eq!(
                d,
                Decoding {
                    enforced,
                    max_tokens: Some(640),
                    ..Decoding::default()
                },
                "{profile}"
            );
        }
        let prompt_only = OpenAiConfig {
            profile: Some("llama.cpp".into()),
            schema_mode: Some("json_object".into()),
            ..OpenAiConfig::default()
        };
        let d = OpenAiRuntime::from_config(&prompt_only).unwrap().decoding();
        assert_eq!(
            d,
            Decoding {
                enforced: false,
                max_tokens: None,
                ..Decoding::default()
            }
        );
    }

    #[test]
    fn messages_are_system_then_user_and_info_is_local() {
        let c = OpenAiConfig {
            profile: Some("llama.cpp".into()),
            ..OpenAiConfig::default()
        };
        let rt = OpenAiRuntime::from_config(&c).unwrap();
        let req = request();
        let body = rt.request_body(&req);
        assert_eq!(
            body["messages"],
            json!([{"role": "system", "content": req.system_prompt}, {"role": "user", "content": "USER"}])
        );
        let info = rt.info();
        assert_eq!(info.kind, "openai");
        assert!(info.offline);
        assert!(info.label.contains("127.0.0.1:8080"), "{}", info.label);
        let hosted = OpenAiConfig {
            profile: Some("openai".into()),
            ..OpenAiConfig::default()
        };
        let e = OpenAiRuntime::from_config(&hosted).err().unwrap();
        assert!(e.message.contains("runtime.base_url"), "{}", e.message);
        assert_eq!(hosted.validate(), Err(e));
    }

    #[test]
    fn overrides_replace_single_entries_and_bad_values_name_the_key() {
        let mut c = OpenAiConfig {
            profile: Some("llama.cpp".into()),
            schema_mode: Some("json_object".into()),
            thinking_off: Some("none".into()),
            stream_usage: Some(true),
            ..OpenAiConfig::default()
        };
        let p = c.profile().unwrap();
        assert_eq!(p.schema, SchemaMode::JsonObject);
        assert_eq!(p.thinking_off, ThinkingOff::None);
        assert!(p.stream_usage);
        assert_eq!(p.reasoning_field, Some("reasoning_content"));

        c.schema_mode = None;
        c.profile = Some("vllm".into());
        c.schema_strict = Some(false);
        let p = c.profile().unwrap();
        assert_eq!(p.schema, SchemaMode::JsonSchema { strict: false });

        c.schema_mode = Some("grammar".into());
        let e = c.profile().unwrap_err();
        assert!(e.message.contains("runtime.schema_mode"), "{}", e.message);
        c.schema_mode = None;
        c.thinking_off = Some("off".into());
        let e = c.profile().unwrap_err();
        assert!(e.message.contains("runtime.thinking_off"), "{}", e.message);
        c.profile = Some("ollama".into());
        let e = c.profile().unwrap_err();
        assert!(e.message.contains("runtime.profile"), "{}", e.message);
        assert_eq!(e.code, ErrorCode::ConfigInvalid);
    }
}

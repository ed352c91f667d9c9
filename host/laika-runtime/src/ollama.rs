//! `ollama`: Ollama's native `POST {base_url}/api/chat`, streamed as
//! newline-delimited JSON.
//!
//! The response JSON Schema goes in `format` (Ollama constrains decoding to
//! it), thinking is off (`think: false`), and `options.num_ctx` /
//! `keep_alive` come from the config. The stream ends with `done: true`;
//! `done_reason: "length"` is reported as the finish reason, and an
//! `{"error": "..."}` line fails the call. `message.thinking` never reaches
//! the answer.

use super::http::{
    chat_messages, chunk_head, runtime_error, Decoder, HttpClient, HttpConfig, LineSplitter,
    StreamEvent,
};
use super::profile::{ThinkingOff, THINKING_MODES};
use super::{
    config_error, unknown_value, CancelToken, Decoding, ModelReply, ModelRequest, RuntimeInfo,
};
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Where Ollama listens unless `runtime.base_url` says otherwise.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434";

/// The base URL Ollama's own `OLLAMA_HOST` names, read as Ollama reads it:
/// a bare host or `host:port` gets `http://` and the port 11434, and the
/// listen-everywhere addresses (`0.0.0.0`, `::`) are reached on loopback.
/// `None` for an empty value.
pub fn base_url_from_ollama_host(value: &str) -> Option<String> {
    let value = value.trim().trim_end_matches('/');
    if value.is_empty() {
        return None;
    }
    let (scheme, rest) = value.split_once("://").unwrap_or(("http", value));
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let bracketed = authority.starts_with('[');
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p))
            if (!bracketed || h.ends_with(']')) && p.chars().all(|c| c.is_ascii_digit()) =>
        {
            (h, p)
        }
        _ => (authority, "11434"),
    };
    let host = match host {
        "" | "0.0.0.0" | "[::]" => "127.0.0.1",
        other => other,
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    Some(format!("{scheme}://{host}:{port}{path}"))
}

/// `[runtime]` with `kind = "ollama"`: the shared HTTP keys (`model`
/// required) and Ollama's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OllamaConfig {
    #[serde(flatten)]
    pub http: HttpConfig,
    /// `options.num_ctx`: the context window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u32>,
    /// How long the model stays loaded after the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<String>,
    /// `"none"` leaves `think` out, for models without a thinking mode
    /// (they may refuse it); any other of [`THINKING_MODES`] sends `think: false`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_off: Option<String>,
}

impl OllamaConfig {
    /// The field names above besides [`HttpConfig::KEYS`], for the config
    /// loader's key check.
    pub const KEYS: &'static [&'static str] = &["num_ctx", "keep_alive", "thinking_off"];

    pub fn validate(&self) -> Result<()> {
        self.http.validate()?;
        if self.num_ctx == Some(0) {
            return Err(config_error("runtime.num_ctx must be > 0"));
        }
        self.think_off()?;
        self.model().map(drop)
    }

    pub fn model(&self) -> Result<&str> {
        self.http.model().ok_or_else(|| {
            config_error(
                "runtime.kind = \"ollama\" needs runtime.model (or LAIKA_MODEL), e.g. \"qwen3:4b\"",
            )
        })
    }

    /// The configured endpoints, else [`DEFAULT_BASE_URL`].
    pub fn endpoints(&self) -> Vec<String> {
        self.http.endpoints(Some(DEFAULT_BASE_URL))
    }

    /// Whether requests say `think: false`.
    fn think_off(&self) -> Result<bool> {
        match self.thinking_off.as_deref() {
            None => Ok(true),
            Some(mode) => ThinkingOff::parse(mode)
                .map(|t| t != ThinkingOff::None)
                .ok_or_else(|| unknown_value("runtime.thinking_off", mode, THINKING_MODES)),
        }
    }
}

pub struct OllamaRuntime {
    http: HttpClient,
    model: String,
    num_ctx: Option<u32>,
    keep_alive: Option<String>,
    think_off: bool,
}

impl OllamaRuntime {
    pub fn from_config(config: &OllamaConfig) -> Result<OllamaRuntime> {
        Ok(OllamaRuntime {
            http: HttpClient::new(
                &config.endpoints(),
                "api/chat",
                config.http.timeouts(),
                config.http.api_key.as_ref().map(|k| k.expose()),
            )?,
            model: config.model()?.to_string(),
            num_ctx: config.num_ctx,
            keep_alive: config.keep_alive.clone(),
            think_off: config.think_off()?,
        })
    }

    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), chat_messages(request));
        body.insert("stream".into(), json!(true));
        body.insert("format".into(), request.response_schema.clone());
        if self.think_off {
            body.insert("think".into(), json!(false));
        }
        let mut options = serde_json::Map::new();
        if let Some(n) = self.num_ctx {
            options.insert("num_ctx".into(), json!(n));
        }
        if let Some(n) = request.max_output_tokens {
            options.insert("num_predict".into(), json!(n));
        }
        if !options.is_empty() {
            body.insert("options".into(), Value::Object(options));
        }
        if let Some(k) = &self.keep_alive {
            body.insert("keep_alive".into(), json!(k));
        }
        Value::Object(body)
    }
}

impl Runtime for OllamaRuntime {
    /// `format` constrains decoding to the schema.
    fn decoding(&self) -> Decoding {
        Decoding {
            enforced: true,
            max_tokens: None,
            ..Decoding::default()
        }
    }

    fn info(&self) -> RuntimeInfo {
        self.http
            .runtime_info("ollama", self.model.clone(), "Ollama")
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
            &|_| -> Box<dyn Decoder> { Box::new(ChatNdjson::default()) },
            on_text,
            || self.model.clone(),
        )
    }
}

/// Decodes Ollama's NDJSON chat stream. A body that is one JSON object
/// (`stream` ignored) is the same thing with a single line.
#[derive(Debug, Default)]
pub struct ChatNdjson {
    lines: LineSplitter,
    done: bool,
    saw_model: bool,
}

impl ChatNdjson {
    fn line(&mut self, line: &str, events: &mut Vec<StreamEvent>) -> Result<()> {
        if line.trim().is_empty() {
            return Ok(());
        }
        if self.done {
            return Err(runtime_error("the runtime sent more after done: true"));
        }
        let v = super::http::stream_json(line, "line")?;
        chunk_head(
            &v,
            "line",
            "the runtime failed",
            &mut self.saw_model,
            events,
        )?;
        let message = v.get("message");
        if let Some(text) = message
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
        {
            if !text.is_empty() {
                events.push(StreamEvent::Text(text.to_string()));
            }
        }
        let thinking = message
            .and_then(|m| m.get("thinking"))
            .and_then(Value::as_str);
        if thinking.is_some_and(|t| !t.is_empty()) {
            events.push(StreamEvent::Reasoning);
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            let reason = v
                .get("done_reason")
                .and_then(Value::as_str)
                .unwrap_or("stop");
            events.push(StreamEvent::Finish(reason.to_string()));
            events.push(StreamEvent::End);
        }
        Ok(())
    }
}

impl Decoder for ChatNdjson {
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<StreamEvent>) -> Result<()> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.push(bytes, &mut |line| self.line(line, events));
        self.lines = lines;
        result
    }

    fn finish(&mut self, events: &mut Vec<StreamEvent>) -> Result<()> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.finish(&mut |line| self.line(line, events));
        self.lines = lines;
        result
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ollama_host_is_read_as_ollama_reads_it() {
        use super::base_url_from_ollama_host as url;
        assert_eq!(url("127.0.0.1").as_deref(), Some("http://127.0.0.1:11434"));
        assert_eq!(
            url("0.0.0.0:11500").as_deref(),
            Some("http://127.0.0.1:11500")
        );
        assert_eq!(
            url("https://gpu.lan:8443/").as_deref(),
            Some("https://gpu.lan:8443")
        );
        assert_eq!(url("[::1]:9000").as_deref(), Some("http://[::1]:9000"));
        assert_eq!(url("[::]").as_deref(), Some("http://127.0.0.1:11434"));
        assert_eq!(url("  "), None);
    }

    use super::*;
    use laika_protocol::error::ErrorCode;

    fn decode_split(input: &[u8], split: usize) -> Result<Vec<StreamEvent>> {
        crate::test_support::decode_split(ChatNdjson::default(), input, split)
    }

    #[test]
    fn ndjson_decodes_the_same_at_every_split() {
        let input = concat!(
            "{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"hm\"},\"done\":false}\n",
            "{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\"{\\\"é\\\"\"},\"done\":false}\r\n",
            "\n",
            "{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\":1}\"},\"done\":false}\n",
            "{\"model\":\"qwen3:4b\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\",\"eval_count\":9}",
        )
        .as_bytes();
        let want = vec![
            StreamEvent::Model("qwen3:4b".into()),
            StreamEvent::Reasoning,
            StreamEvent::Text("{\"é\"".into()),
            StreamEvent::Text(":1}".into()),
            StreamEvent::Finish("length".into()),
            StreamEvent::End,
        ];
        crate::test_support::assert_same_at_every_split(decode_split, input, &want);
    }

    #[test]
    fn error_lines_garbage_and_trailing_data_fail() {
        let e = decode_split(
            b"{\"message\":{\"content\":\"x\"}}\n{\"error\":\"model crashed\"}\n",
            3,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::RuntimeError);
        assert!(e.message.contains("model crashed"), "{}", e.message);
        let e = decode_split(b"<html>\n", 0).unwrap_err();
        assert!(e.message.contains("not JSON"), "{}", e.message);
        let e = decode_split(b"{\"done\":true}\n{\"done\":true}\n", 0).unwrap_err();
        assert!(e.message.contains("after done"), "{}", e.message);
        let ev = decode_split(b"{\"message\":{\"content\":\"x\"},\"done\":false}\n", 4).unwrap();
        assert!(!ev.contains(&StreamEvent::End));
    }

    #[test]
    fn request_body_has_schema_think_and_options() {
        let mut c = OllamaConfig {
            http: HttpConfig {
                model: Some("qwen3:4b".into()),
                ..HttpConfig::default()
            },
            num_ctx: Some(16384),
            keep_alive: Some("10m".into()),
            ..OllamaConfig::default()
        };
        let rt = OllamaRuntime::from_config(&c).unwrap();
        let req = crate::test_support::request(
            json!({"type": "object", "required": ["id"]}),
            "SYS".into(),
        );
        assert_eq!(
            rt.request_body(&req),
            json!({
                "model": "qwen3:4b",
                "messages": [{"role": "system", "content": "SYS"}, {"role": "user", "content": "USER"}],
                "stream": true,
                "format": {"type": "object", "required": ["id"]},
                "think": false,
                "options": {"num_ctx": 16384},
                "keep_alive": "10m",
            })
        );
        let info = rt.info();
        assert_eq!(
            (info.kind.as_str(), info.model.as_str(), info.offline),
            ("ollama", "qwen3:4b", true)
        );
        // `format` is enforced: the turn sends the sketch, not the schema.
        assert!(rt.decoding().enforced);
        c.thinking_off = Some("none".into());
        let body = OllamaRuntime::from_config(&c).unwrap().request_body(&req);
        assert!(body.get("think").is_none(), "{body}");
        c.thinking_off = Some("off".into());
        let e = c.validate().unwrap_err();
        assert!(e.message.contains("runtime.thinking_off"), "{}", e.message);
        let no_model = OllamaConfig::default();
        let e = OllamaRuntime::from_config(&no_model).err().unwrap();
        assert!(e.message.contains("runtime.model"), "{}", e.message);
        assert_eq!(no_model.validate(), Err(e));
    }
}

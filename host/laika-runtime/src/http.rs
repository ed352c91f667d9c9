//! Shared HTTP plumbing of the network runtimes (`openai`, `ollama`): their
//! common config keys, and one streamed POST with endpoint failover,
//! timeouts, cancellation, a size cap and line decoding (SSE and NDJSON),
//! mapped to coded errors.
//!
//! Invariants:
//! - every failure is `RUNTIME_UNAVAILABLE` (cannot connect),
//!   `RUNTIME_TIMEOUT` (names the timeout key), `RUNTIME_ERROR` (the runtime
//!   said no, or sent something we cannot read) or `CANCELLED`; the
//!   underlying reqwest or I/O error stays attached as the source, for logs;
//! - the API key is only ever in the `Authorization` header: errors are
//!   scrubbed of it and endpoint names are shown without URL credentials;
//! - a cancel wakes the request at once, even when the stream is stalled,
//!   and drops the connection;
//! - the next endpoint is tried only when one produced no response at all
//!   (refused, unreachable, or silent until the first-token timeout), so a
//!   model never answers twice;
//! - no proxy is used: the host talks only to the configured runtime, and a
//!   system proxy must not see page content bound for a local model.
//!
//! Every call runs on the process-wide runtime of [`crate::executor`], from
//! whatever thread calls it.

use super::{config_error, CancelToken, ModelRequest};
use laika_core::runtime::TextSink;
use laika_protocol::error::{Error, ErrorCode, Result};
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::time::{sleep_until, Instant};

/// The most a runtime may send for one answer (stream included).
pub const MAX_ANSWER_BYTES: usize = 16 << 20;
/// The most of an HTTP error body that is read, and shown.
const MAX_ERROR_BODY: usize = 64 << 10;
const MAX_MESSAGE_CHARS: usize = 300;
/// Upper bound of the HTTP timeouts (one hour).
const MAX_HTTP_TIMEOUT_MS: u64 = 3_600_000;

pub use laika_protocol::wire::MAX_API_KEY_LEN;

/// An API key: sent in the `Authorization` header and nowhere else, so its
/// `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A key goes into a header: at most [`MAX_API_KEY_LEN`] bytes of
    /// visible ASCII. The error never quotes the key.
    pub fn validate(&self) -> Result<()> {
        let len = self.0.len();
        if len == 0 || len > MAX_API_KEY_LEN {
            return Err(config_error(format!(
                "runtime.api_key must be 1..={MAX_API_KEY_LEN} bytes (this one has {len})"
            )));
        }
        if !self.0.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(config_error(
                "runtime.api_key may hold only visible ASCII characters (no spaces or line breaks)",
            ));
        }
        Ok(())
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// The keys `openai` and `ollama` share (`[runtime]` in the config file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Endpoints tried in order (instead of `base_url`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Never logged, never sent to the extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<ApiKey>,
    pub connect_timeout_ms: u64,
    pub first_token_timeout_ms: u64,
    pub total_timeout_ms: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            base_url: None,
            base_urls: Vec::new(),
            model: None,
            api_key: None,
            connect_timeout_ms: 3_000,
            first_token_timeout_ms: 60_000,
            total_timeout_ms: 300_000,
        }
    }
}

impl HttpConfig {
    /// The field names above, for the config loader's key check.
    pub const KEYS: &'static [&'static str] = &[
        "base_url",
        "base_urls",
        "model",
        "api_key",
        "connect_timeout_ms",
        "first_token_timeout_ms",
        "total_timeout_ms",
    ];

    /// Endpoints and timeouts. URLs are shown credential-free in errors.
    pub fn validate(&self) -> Result<()> {
        if self.base_url.is_some() && !self.base_urls.is_empty() {
            return Err(config_error(
                "set runtime.base_url or runtime.base_urls, not both",
            ));
        }
        let one = self.base_url.iter().map(|u| ("runtime.base_url", u));
        for (key, url) in one.chain(self.base_urls.iter().map(|u| ("runtime.base_urls", u))) {
            let shown = laika_core::redact::strip_url_credentials(url);
            let parsed = url::Url::parse(url)
                .map_err(|e| config_error(format!("{key} = {shown:?} is not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(config_error(format!(
                    "{key} = {shown:?} must be an http or https URL"
                )));
            }
        }
        if let Some(key) = &self.api_key {
            key.validate()?;
        }
        for (key, ms) in [
            ("runtime.connect_timeout_ms", self.connect_timeout_ms),
            (
                "runtime.first_token_timeout_ms",
                self.first_token_timeout_ms,
            ),
            ("runtime.total_timeout_ms", self.total_timeout_ms),
        ] {
            if !(1..=MAX_HTTP_TIMEOUT_MS).contains(&ms) {
                return Err(config_error(format!(
                    "{key} must be 1..={MAX_HTTP_TIMEOUT_MS} (ms)"
                )));
            }
        }
        Ok(())
    }

    /// The configured endpoints, else `default` (none when that is `None`).
    pub fn endpoints(&self, default: Option<&str>) -> Vec<String> {
        let mut urls: Vec<String> = self
            .base_url
            .iter()
            .chain(&self.base_urls)
            .cloned()
            .collect();
        if urls.is_empty() {
            urls.extend(default.map(str::to_string));
        }
        urls
    }

    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: Duration::from_millis(self.connect_timeout_ms),
            first_token: Duration::from_millis(self.first_token_timeout_ms),
            total: Duration::from_millis(self.total_timeout_ms),
        }
    }

    /// The model id, when one is set.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().filter(|m| !m.is_empty())
    }
}

/// What a decoder found in the bytes so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// The next piece of the answer.
    Text(String),
    /// Reasoning text was dropped: the model is alive but not answering yet.
    Reasoning,
    /// The runtime's finish reason (`stop`, `length`, …).
    Finish(String),
    /// The model id the runtime reports.
    Model(String),
    /// The answer is complete (`[DONE]`, `done: true`, a whole JSON body).
    End,
}

/// Turns response bytes into [`StreamEvent`]s. Errors are `RUNTIME_ERROR`.
pub trait Decoder {
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<StreamEvent>) -> Result<()>;
    /// Called once at end of body.
    fn finish(&mut self, events: &mut Vec<StreamEvent>) -> Result<()>;
}

/// Picks the decoder for a response's content type. `Sync`: the call may run
/// on another thread than its caller's (see [`crate::executor::run`]).
pub type DecoderFor<'a> = dyn Fn(&str) -> Box<dyn Decoder> + Sync + 'a;

/// The `messages` of a chat request (OpenAI-compatible and Ollama's native
/// API share the shape): the system prompt, then the user prompt.
pub fn chat_messages(request: &ModelRequest) -> serde_json::Value {
    serde_json::json!([
        {"role": "system", "content": request.system_prompt},
        {"role": "user", "content": request.user_prompt},
    ])
}

pub fn runtime_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::RuntimeError, message)
}

/// At most `max` characters of `text`, control characters turned to spaces,
/// with `…` when cut: runtime text shown in an error stays one short line.
pub fn clip(text: &str, max: usize) -> String {
    laika_core::text::clip(text.trim(), max)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Splits bytes into lines at `\n` (a trailing `\r` is dropped), across
/// chunk boundaries. `\n` never occurs inside a UTF-8 sequence, so a line is
/// whole UTF-8 or the stream is not text.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, bytes: &[u8], each: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            let (line, tail) = rest.split_at(pos);
            self.partial.extend_from_slice(line);
            rest = tail.get(1..).unwrap_or_default();
            let whole = std::mem::take(&mut self.partial);
            each(line_str(&whole)?)?;
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// The last line when the body did not end with `\n`.
    pub fn finish(&mut self, each: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if self.partial.is_empty() {
            return Ok(());
        }
        let whole = std::mem::take(&mut self.partial);
        each(line_str(&whole)?)
    }
}

fn line_str(bytes: &[u8]) -> Result<&str> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    std::str::from_utf8(bytes)
        .map_err(|_| runtime_error("the runtime sent a line that is not UTF-8"))
}

/// Server-sent events: collects each event's `data` (several `data:` lines
/// join with `\n`) and ignores comments (`:` pings), `event`, `id`, `retry`.
/// Any other line means this is not an event stream.
#[derive(Debug, Default)]
pub struct SseParser {
    lines: LineSplitter,
    data: Option<String>,
}

impl SseParser {
    /// Pushes the data of every event completed by `bytes` onto `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) -> Result<()> {
        let data = &mut self.data;
        self.lines
            .push(bytes, &mut |line| sse_line(line, data, out))
    }

    /// End of body: an event not closed by a blank line still counts.
    pub fn finish(&mut self, out: &mut Vec<String>) -> Result<()> {
        let data = &mut self.data;
        self.lines.finish(&mut |line| sse_line(line, data, out))?;
        out.extend(self.data.take());
        Ok(())
    }
}

/// What a runtime makes of each event's `data` in a server-sent event stream.
pub trait SseEvents {
    fn data(&mut self, data: &str, events: &mut Vec<StreamEvent>) -> Result<()>;
    /// End of body, after the last event.
    fn end(&mut self, _events: &mut Vec<StreamEvent>) {}
}

/// A [`Decoder`] for an event stream whose events `E` reads.
#[derive(Debug, Default)]
pub struct SseDecoder<E> {
    sse: SseParser,
    payloads: Vec<String>,
    events: E,
}

impl<E: SseEvents> SseDecoder<E> {
    pub fn new(events: E) -> SseDecoder<E> {
        SseDecoder {
            sse: SseParser::default(),
            payloads: Vec::new(),
            events,
        }
    }

    fn drain(&mut self, out: &mut Vec<StreamEvent>) -> Result<()> {
        for data in std::mem::take(&mut self.payloads) {
            self.events.data(&data, out)?;
        }
        Ok(())
    }
}

impl<E: SseEvents> Decoder for SseDecoder<E> {
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<StreamEvent>) -> Result<()> {
        self.sse.push(bytes, &mut self.payloads)?;
        self.drain(events)
    }

    fn finish(&mut self, events: &mut Vec<StreamEvent>) -> Result<()> {
        self.sse.finish(&mut self.payloads)?;
        self.drain(events)?;
        self.events.end(events);
        Ok(())
    }
}

fn sse_line(line: &str, data: &mut Option<String>, out: &mut Vec<String>) -> Result<()> {
    if line.is_empty() {
        out.extend(data.take());
        return Ok(());
    }
    if line.starts_with(':') {
        return Ok(());
    }
    let (field, value) = line.split_once(':').unwrap_or((line, ""));
    let value = value.strip_prefix(' ').unwrap_or(value);
    match field {
        "data" => {
            match data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => *data = Some(value.to_string()),
            }
            Ok(())
        }
        "event" | "id" | "retry" => Ok(()),
        _ => Err(runtime_error(format!(
            "the runtime sent something that is not an event stream: {:?}",
            clip(line, 80)
        ))),
    }
}

/// What a web page (not a model server) is called in errors: people read
/// these, and the page's own HTML means nothing to them.
const HTML_PAGE: &str =
    "a web page, not a model server's answer (is runtime.base_url the model server's API address?)";

/// True when `text` is an HTML document rather than a model server's answer.
fn looks_like_html(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(64).collect();
    let head = head.to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<head")
}

/// The runtime's own message from an error body: `{"error": {"message"}}`,
/// `{"error": "..."}`, `{"message"}`, `{"detail"}`, a note for an HTML page,
/// else the text itself.
pub fn error_body_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if looks_like_html(&text) {
        return HTML_PAGE.to_string();
    }
    let from_json = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| error_value_message(&v));
    clip(from_json.as_deref().unwrap_or(&text), MAX_MESSAGE_CHARS)
}

/// The message of an `error` member (object or string) or of a bare
/// `message`/`detail` member, when `v` has one.
pub fn error_value_message(v: &serde_json::Value) -> Option<String> {
    let error = v.get("error");
    let message = match error {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(e @ serde_json::Value::Object(_)) => Some(
            e.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string()),
        ),
        Some(other) if !other.is_null() => Some(other.to_string()),
        _ => ["message", "detail"]
            .iter()
            .find_map(|k| v.get(*k).and_then(|m| m.as_str()).map(str::to_string)),
    };
    message.map(|m| clip(&m, MAX_MESSAGE_CHARS))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub first_token: Duration,
    pub total: Duration,
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The full request URL.
    url: reqwest::Url,
    /// The base URL as configured, without credentials: what errors and
    /// `ModelReply.endpoint` show.
    pub name: String,
}

/// The whole answer of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    pub text: String,
    pub finish_reason: Option<String>,
    pub model: Option<String>,
    pub endpoint: String,
}

impl Streamed {
    /// The reply, naming `configured` when the server did not say which
    /// model answered.
    pub fn into_reply(self, configured: impl FnOnce() -> String) -> laika_core::model::ModelReply {
        laika_core::model::ModelReply {
            text: self.text,
            model: self.model.unwrap_or_else(configured),
            finish_reason: self.finish_reason,
            endpoint: Some(self.endpoint),
        }
    }
}

/// One event of a stream as JSON; what is not JSON fails the call with a
/// clip of it.
pub fn stream_json(data: &str, what: &str) -> Result<serde_json::Value> {
    serde_json::from_str(data).map_err(|e| {
        runtime_error(format!(
            "a stream {what} is not JSON ({e}): {:?}",
            clip(data, 80)
        ))
    })
}

/// What every JSON chunk of a chat stream is checked for first: it must be an
/// object, an `error` member fails the call (its message after `failed: `),
/// and the first `model` any chunk names is reported, once.
pub fn chunk_head(
    chunk: &serde_json::Value,
    what: &str,
    failed: &str,
    saw_model: &mut bool,
    events: &mut Vec<StreamEvent>,
) -> Result<()> {
    if !chunk.is_object() {
        return Err(runtime_error(format!(
            "a stream {what} is not a JSON object"
        )));
    }
    if chunk.get("error").is_some_and(|e| !e.is_null()) {
        let message = error_value_message(chunk).unwrap_or_default();
        return Err(runtime_error(format!("{failed}: {message}")));
    }
    if !*saw_model {
        if let Some(m) = chunk.get("model").and_then(serde_json::Value::as_str) {
            *saw_model = true;
            events.push(StreamEvent::Model(m.to_string()));
        }
    }
    Ok(())
}

pub struct HttpClient {
    client: reqwest::Client,
    endpoints: Vec<Endpoint>,
    timeouts: Timeouts,
    /// The header carrying the API key, and its value.
    auth: Option<(HeaderName, HeaderValue)>,
    /// Headers every request carries (an API version).
    extra: Vec<(HeaderName, HeaderValue)>,
    api_key: Option<String>,
}

/// How a server wants the API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI-compatible servers, Ollama).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
}

/// How one endpoint failed: whether the next one may be tried.
enum Failure {
    /// Nothing came back: try the next endpoint.
    NoResponse(Error),
    Final(Error),
}

impl HttpClient {
    /// A client for `path` (e.g. `chat/completions`) under each base URL.
    pub fn new(
        base_urls: &[String],
        path: &str,
        timeouts: Timeouts,
        api_key: Option<&str>,
    ) -> Result<HttpClient> {
        HttpClient::with_headers(base_urls, path, timeouts, api_key, KeyHeader::Bearer, &[])
    }

    /// [`HttpClient::new`] with the key sent as `key_header` says, and
    /// `extra` headers on every request.
    pub fn with_headers(
        base_urls: &[String],
        path: &str,
        timeouts: Timeouts,
        api_key: Option<&str>,
        key_header: KeyHeader,
        extra: &[(&'static str, &'static str)],
    ) -> Result<HttpClient> {
        if base_urls.is_empty() {
            return Err(config_error("runtime.base_url is required"));
        }
        let mut endpoints = Vec::new();
        for base in base_urls {
            let name = laika_core::redact::strip_url_credentials(base);
            let mut url = reqwest::Url::parse(base).map_err(|e| {
                config_error(format!("runtime.base_url = {name:?} is not a URL: {e}"))
            })?;
            // `join` replaces the last segment unless the base ends in `/`.
            if !url.path().ends_with('/') {
                url.set_path(&format!("{}/", url.path()));
            }
            let url = url
                .join(path)
                .map_err(|e| config_error(format!("runtime.base_url = {name:?}: {e}")))?;
            endpoints.push(Endpoint { url, name });
        }
        let auth = match api_key.filter(|k| !k.is_empty()) {
            Some(key) => {
                let (name, text) = match key_header {
                    KeyHeader::Bearer => (AUTHORIZATION, format!("Bearer {key}")),
                    KeyHeader::XApiKey => (HeaderName::from_static("x-api-key"), key.to_string()),
                };
                let mut value = HeaderValue::from_str(&text).map_err(|_| {
                    config_error("runtime.api_key has characters an HTTP header cannot carry")
                })?;
                value.set_sensitive(true);
                Some((name, value))
            }
            None => None,
        };
        let extra = extra
            .iter()
            .map(|(k, v)| (HeaderName::from_static(k), HeaderValue::from_static(v)))
            .collect();
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(timeouts.connect)
            // A turn is long enough that a fresh connection costs nothing,
            // and an idle pooled one could be half closed by the server when
            // the next turn picks it up.
            .pool_max_idle_per_host(0)
            .user_agent(concat!("laika-host/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::internal(format!("HTTP client: {e}")).with_source(e))?;
        Ok(HttpClient {
            client,
            endpoints,
            timeouts,
            auth,
            extra,
            api_key: api_key.filter(|k| !k.is_empty()).map(str::to_string),
        })
    }

    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// What a runtime on this client says of itself: `label` reads
    /// "{model} via {via} at {first endpoint}".
    pub fn runtime_info(&self, kind: &str, model: String, via: &str) -> crate::RuntimeInfo {
        let at = self
            .endpoints
            .first()
            .map(|e| e.name.as_str())
            .unwrap_or_default();
        crate::RuntimeInfo {
            kind: kind.into(),
            label: format!("{model} via {via} at {at}"),
            model,
            offline: self.is_local(),
        }
    }

    /// True when every endpoint is on this machine.
    pub fn is_local(&self) -> bool {
        self.endpoints.iter().all(|e| match e.url.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        })
    }

    /// POSTs `body` (JSON) to each endpoint in turn until one answers, and
    /// streams the answer through the decoder `decoder` picks for the
    /// response's content type, calling `on_text` with each piece. Safe to
    /// call from any thread, inside a tokio runtime or not.
    pub fn stream(
        &self,
        body: &serde_json::Value,
        cancel: &CancelToken,
        decoder: &DecoderFor<'_>,
        on_text: &mut TextSink<'_>,
    ) -> Result<Streamed> {
        cancel.check()?;
        let body =
            serde_json::to_vec(body).map_err(|e| Error::internal(format!("request body: {e}")))?;
        crate::executor::run(
            |runtime, sink| runtime.block_on(self.run(&body, cancel, decoder, sink)),
            on_text,
        )
        .and_then(|result| result)
        .map_err(|e| self.scrub(e))
    }

    /// [`stream`](Self::stream) as a model reply, naming `configured` when
    /// the server did not say which model answered.
    pub fn complete(
        &self,
        body: &serde_json::Value,
        cancel: &CancelToken,
        decoder: &DecoderFor<'_>,
        on_text: &mut TextSink<'_>,
        configured: impl FnOnce() -> String,
    ) -> Result<laika_core::model::ModelReply> {
        Ok(self
            .stream(body, cancel, decoder, on_text)?
            .into_reply(configured))
    }

    /// Removes the API key from a message, should a runtime echo it back.
    fn scrub(&self, mut e: Error) -> Error {
        if let Some(key) = &self.api_key {
            if e.message.contains(key.as_str()) {
                e.message = e.message.replace(key.as_str(), "[redacted]");
            }
        }
        e
    }

    async fn run(
        &self,
        body: &[u8],
        cancel: &CancelToken,
        decoder: &DecoderFor<'_>,
        on_text: &mut TextSink<'_>,
    ) -> Result<Streamed> {
        let total_deadline = Instant::now() + self.timeouts.total;
        let mut failures: Vec<Error> = Vec::new();
        for endpoint in &self.endpoints {
            match self
                .attempt(endpoint, body, total_deadline, cancel, decoder, on_text)
                .await
            {
                Ok(streamed) => return Ok(streamed),
                Err(Failure::Final(e)) => return Err(e),
                Err(Failure::NoResponse(e)) => failures.push(e),
            }
        }
        // The last failure keeps its code and source; the message lists all.
        let all: Vec<&str> = failures.iter().map(|e| e.message.as_str()).collect();
        let all = (all.len() > 1).then(|| format!("no endpoint answered: {}", all.join("; ")));
        match failures.pop() {
            Some(mut last) => {
                if let Some(all) = all {
                    last.message = all;
                }
                Err(last)
            }
            None => Err(Error::new(
                ErrorCode::RuntimeUnavailable,
                "no endpoint is configured",
            )),
        }
    }

    async fn attempt(
        &self,
        endpoint: &Endpoint,
        body: &[u8],
        total_deadline: Instant,
        cancel: &CancelToken,
        decoder: &DecoderFor<'_>,
        on_text: &mut TextSink<'_>,
    ) -> std::result::Result<Streamed, Failure> {
        let name = &endpoint.name;
        let first_deadline = (Instant::now() + self.timeouts.first_token).min(total_deadline);
        let first_key = if first_deadline == total_deadline {
            "runtime.total_timeout_ms"
        } else {
            "runtime.first_token_timeout_ms"
        };
        let timeout = |key: &str| {
            let ms = match key {
                "runtime.total_timeout_ms" => self.timeouts.total,
                _ => self.timeouts.first_token,
            }
            .as_millis();
            Error::new(
                ErrorCode::RuntimeTimeout,
                format!("{name} did not answer in time ({key} = {ms})"),
            )
        };

        let mut request = self
            .client
            .post(endpoint.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(
                ACCEPT,
                "text/event-stream, application/x-ndjson, application/json",
            )
            .body(body.to_vec());
        if let Some((name, value)) = &self.auth {
            request = request.header(name.clone(), value.clone());
        }
        for (name, value) in &self.extra {
            request = request.header(name.clone(), value.clone());
        }
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Failure::Final(cancel_error())),
            _ = sleep_until(first_deadline) => {
                let e = timeout(first_key);
                return Err(if first_deadline == total_deadline {
                    Failure::Final(e)
                } else {
                    Failure::NoResponse(e)
                });
            }
            sent = request.send() => sent,
        };
        let mut response = sent.map_err(|e| Failure::NoResponse(self.send_error(e, name)))?;

        let status = response.status();
        if !status.is_success() {
            let mut body = Vec::new();
            loop {
                let chunk = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(Failure::Final(cancel_error())),
                    _ = sleep_until(total_deadline) => break,
                    chunk = response.chunk() => chunk,
                };
                match chunk {
                    Ok(Some(bytes)) if body.len() < MAX_ERROR_BODY => {
                        body.extend_from_slice(&bytes)
                    }
                    _ => break,
                }
            }
            body.truncate(MAX_ERROR_BODY);
            let hint = match status.as_u16() {
                401 | 403 => " (check runtime.api_key / LAIKA_API_KEY)",
                404 => " (check runtime.base_url and runtime.model)",
                _ => "",
            };
            return Err(Failure::Final(runtime_error(format!(
                "{name} answered HTTP {}{hint}: {}",
                status.as_u16(),
                error_body_message(&body)
            ))));
        }

        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/html") {
            return Err(Failure::Final(runtime_error(format!(
                "{name} answered with {HTML_PAGE}"
            ))));
        }
        let mut decoder = decoder(&content_type);
        let mut out = Streamed {
            text: String::new(),
            finish_reason: None,
            model: None,
            endpoint: name.clone(),
        };
        let mut received = 0usize;
        let mut started = false;
        let mut ended = false;
        let mut events = Vec::new();
        let in_context = |mut e: Error| {
            e.message = format!("{name}: {}", e.message);
            Failure::Final(e)
        };
        while !ended {
            let (deadline, key) = if started {
                (total_deadline, "runtime.total_timeout_ms")
            } else {
                (first_deadline, first_key)
            };
            let chunk = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Failure::Final(cancel_error())),
                _ = sleep_until(deadline) => return Err(Failure::Final(timeout(key))),
                chunk = response.chunk() => chunk,
            };
            let chunk = chunk.map_err(|e| {
                Failure::Final(
                    runtime_error(format!(
                        "the connection to {name} broke mid-answer: {}",
                        root_cause(&e)
                    ))
                    .with_source(e.without_url()),
                )
            })?;
            match chunk {
                Some(bytes) => {
                    received = received.saturating_add(bytes.len());
                    if received > MAX_ANSWER_BYTES {
                        return Err(Failure::Final(runtime_error(format!(
                            "{name} sent more than {} MiB for one answer",
                            MAX_ANSWER_BYTES >> 20
                        ))));
                    }
                    decoder.feed(&bytes, &mut events).map_err(in_context)?;
                }
                None => {
                    decoder.finish(&mut events).map_err(in_context)?;
                    if !events.contains(&StreamEvent::End) {
                        return Err(in_context(runtime_error(
                            "the stream ended before the answer was complete",
                        )));
                    }
                }
            }
            for event in events.drain(..) {
                match event {
                    StreamEvent::Text(piece) => {
                        started = true;
                        on_text(&piece);
                        out.text.push_str(&piece);
                    }
                    StreamEvent::Reasoning => started = true,
                    StreamEvent::Finish(reason) => out.finish_reason = Some(reason),
                    StreamEvent::Model(model) => {
                        out.model.get_or_insert(model);
                    }
                    StreamEvent::End => ended = true,
                }
            }
        }
        Ok(out)
    }

    fn send_error(&self, e: reqwest::Error, name: &str) -> Error {
        let cause = root_cause(&e);
        let coded = if e.is_timeout() {
            Error::new(
                ErrorCode::RuntimeTimeout,
                format!(
                    "connecting to {name} timed out (runtime.connect_timeout_ms = {})",
                    self.timeouts.connect.as_millis()
                ),
            )
        } else if e.is_connect() {
            Error::new(
                ErrorCode::RuntimeUnavailable,
                format!("cannot connect to {name}: {cause}"),
            )
        } else {
            Error::new(
                ErrorCode::RuntimeUnavailable,
                format!("no response from {name}: {cause}"),
            )
        };
        // Without the URL, which may hold credentials.
        coded.with_source(e.without_url())
    }
}

/// The innermost cause: reqwest's own message repeats the URL.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    clip(&cause.to_string(), MAX_MESSAGE_CHARS)
}

fn cancel_error() -> Error {
    Error::cancelled()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_all(input: &[u8], split: usize) -> Result<Vec<String>> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        let (a, b) = input.split_at(split);
        p.push(a, &mut out)?;
        p.push(b, &mut out)?;
        p.finish(&mut out)?;
        Ok(out)
    }

    #[test]
    fn sse_events_survive_a_split_at_every_byte() {
        let input = ": ping\r\n\r\ndata: {\"a\":\"é\"}\r\n\r\nevent: x\nid: 3\ndata:one\ndata: two\n\ndata: [DONE]\n\n".as_bytes();
        for split in 0..=input.len() {
            let out = sse_all(input, split).unwrap();
            assert_eq!(
                out,
                ["{\"a\":\"é\"}", "one\ntwo", "[DONE]"],
                "split at {split}"
            );
        }
    }

    #[test]
    fn sse_last_event_without_blank_line_counts_and_garbage_is_an_error() {
        assert_eq!(sse_all(b"data: x", 3).unwrap(), ["x"]);
        let e = sse_all(b"<html>oops</html>\n", 2).unwrap_err();
        assert_eq!(e.code, ErrorCode::RuntimeError);
        assert!(e.message.contains("not an event stream"), "{}", e.message);
        let e = sse_all(b"data: \xff\xfe\n\n", 1).unwrap_err();
        assert!(e.message.contains("UTF-8"), "{}", e.message);
    }

    #[test]
    fn error_bodies_give_the_runtimes_message_clipped() {
        assert_eq!(
            error_body_message(br#"{"error":{"message":"model not loaded","type":"x"}}"#),
            "model not loaded"
        );
        assert_eq!(
            error_body_message(br#"{"error":"no such model"}"#),
            "no such model"
        );
        assert_eq!(error_body_message(br#"{"detail":"bad"}"#), "bad");
        assert_eq!(error_body_message(b"Bad Gateway\n"), "Bad Gateway");
        let page =
            error_body_message(b"\n<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>");
        assert!(
            page.starts_with("a web page") && !page.contains('<'),
            "{page}"
        );
        let long = "x\n".repeat(1000);
        let m = error_body_message(long.as_bytes());
        assert_eq!(m.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(!m.contains('\n') && m.ends_with('…'));
    }

    #[test]
    fn endpoints_join_the_path_and_hide_credentials() {
        let t = Timeouts {
            connect: Duration::from_millis(10),
            first_token: Duration::from_millis(10),
            total: Duration::from_millis(10),
        };
        let c = HttpClient::new(
            &[
                "http://127.0.0.1:8080/v1".into(),
                "https://u:secret@example.com/api/v1/".into(),
            ],
            "chat/completions",
            t,
            Some("sk-1"),
        )
        .unwrap();
        let urls: Vec<&str> = c.endpoints().iter().map(|e| e.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8080/v1/chat/completions",
                "https://u:secret@example.com/api/v1/chat/completions"
            ]
        );
        assert!(!c.endpoints()[1].name.contains("secret"));
        assert!(!c.is_local());
        let e = HttpClient::new(&["http://x".into()], "a", t, Some("k\ney"))
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::ConfigInvalid);
        assert!(!e.message.contains("k\ney"));
    }
}

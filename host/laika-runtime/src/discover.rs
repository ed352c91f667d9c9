//! Finding model servers on this machine by asking them what they are.
//!
//! Each well-known port on loopback is asked, in order, the question only
//! one kind of server answers: Ollama `GET /api/version` (then `/api/tags`
//! for its models), llama.cpp `GET /props` (its context window), then
//! `GET /v1/models`, whose `owned_by` names vLLM and SGLang (with
//! `max_model_len`); LM Studio answers `GET /api/v0/models` with each
//! model's `max_context_length`; `mlx_lm.server` is Python's `http.server`
//! (its `Server: BaseHTTP` header), so MLX is a guess and said to be one.
//! Anything else that lists models is an OpenAI-compatible server whose
//! profile the user picks.
//!
//! Invariants: only 127.0.0.1 is probed, every request has a short timeout
//! and is a bodiless `GET`, and nothing here runs on a turn's path (doctor
//! and the settings screen call it). Parsing is separate from the socket
//! ([`identify`] takes a [`Fetch`]), so the recorded answers of each server
//! kind are tested without one.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The ports the servers listen on by default: Ollama, llama.cpp and MLX,
/// vLLM, SGLang, LM Studio.
pub const DEFAULT_PORTS: &[u16] = &[11434, 8080, 8000, 30000, 1234];
/// Connect timeout per port: a closed loopback port refuses at once, so
/// this only bounds a port that accepts and then hangs.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// Read timeout per request.
pub const READ_TIMEOUT: Duration = Duration::from_millis(1500);
/// Largest answer read (a long model list).
const MAX_RESPONSE: u64 = 2 << 20;
/// Most models listed per server.
const MAX_MODELS: usize = 200;

pub use laika_protocol::model::{ModelServer, ServerKind};

/// One HTTP answer: status, the `Server` header, the body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    pub status: u16,
    pub server: String,
    pub body: String,
}

/// How [`identify`] asks a server a question (`GET path`).
pub trait Fetch {
    fn get(&self, path: &str) -> Option<Answer>;
}

fn json_ok(answer: Option<Answer>) -> Option<(Value, String)> {
    let a = answer?;
    if !(200..300).contains(&a.status) {
        return None;
    }
    let v: Value = serde_json::from_str(&a.body).ok()?;
    v.is_object().then_some((v, a.server))
}

fn strings(items: Option<&Value>, key: &str) -> Vec<String> {
    items
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get(key).and_then(Value::as_str))
        .map(str::to_string)
        .take(MAX_MODELS)
        .collect()
}

/// Asks the server behind `fetch` (at `root`, e.g. `http://127.0.0.1:8080`)
/// what it is; `None` when it is not a model server we know how to use.
pub fn identify(root: &str, fetch: &dyn Fetch) -> Option<ModelServer> {
    let openai = |kind, profile, guessed, models, context_window, version| ModelServer {
        kind,
        base_url: format!("{root}/v1"),
        runtime: "openai",
        profile,
        guessed,
        models,
        context_window,
        version,
    };
    if let Some((v, _)) = json_ok(fetch.get("/api/version")) {
        if let Some(version) = v.get("version").and_then(Value::as_str) {
            let tags = json_ok(fetch.get("/api/tags")).map(|(t, _)| t);
            return Some(ModelServer {
                kind: ServerKind::Ollama,
                base_url: root.to_string(),
                runtime: "ollama",
                profile: None,
                guessed: false,
                models: strings(tags.as_ref().and_then(|t| t.get("models")), "name"),
                context_window: None,
                version: Some(version.to_string()),
            });
        }
    }
    let listed = json_ok(fetch.get("/v1/models")).map(|(v, server)| {
        let data = v.get("data").cloned().unwrap_or(Value::Null);
        (data, server)
    });
    let models = listed
        .as_ref()
        .map(|(d, _)| strings(Some(d), "id"))
        .unwrap_or_default();
    if let Some((props, _)) = json_ok(fetch.get("/props")) {
        let n_ctx = props
            .pointer("/default_generation_settings/n_ctx")
            .and_then(Value::as_u64);
        if n_ctx.is_some() || props.get("model_path").is_some() {
            let version = props
                .get("build_info")
                .and_then(Value::as_str)
                .map(str::to_string);
            return Some(openai(
                ServerKind::LlamaCpp,
                Some("llama.cpp"),
                false,
                models,
                n_ctx,
                version,
            ));
        }
    }
    let (data, server) = listed?;
    let first = data.get(0);
    let owner = first
        .and_then(|m| m.get("owned_by"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let max_model_len = first
        .and_then(|m| m.get("max_model_len"))
        .and_then(Value::as_u64);
    match owner.as_str() {
        "vllm" => {
            return Some(openai(
                ServerKind::Vllm,
                Some("vllm"),
                false,
                models,
                max_model_len,
                None,
            ))
        }
        "sglang" => {
            return Some(openai(
                ServerKind::Sglang,
                Some("sglang"),
                false,
                models,
                max_model_len,
                None,
            ))
        }
        _ => {}
    }
    if let Some((lms, _)) = json_ok(fetch.get("/api/v0/models")) {
        let llms: Vec<&Value> = lms
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| m.get("type").and_then(Value::as_str) != Some("embeddings"))
            .collect();
        if !llms.is_empty() && llms.iter().any(|m| m.get("max_context_length").is_some()) {
            let context = llms
                .iter()
                .find(|m| m.get("state").and_then(Value::as_str) == Some("loaded"))
                .or(llms.first())
                .and_then(|m| m.get("max_context_length"))
                .and_then(Value::as_u64);
            return Some(openai(
                ServerKind::LmStudio,
                Some("lmstudio"),
                false,
                models,
                context,
                None,
            ));
        }
    }
    if server.starts_with("BaseHTTP") {
        return Some(openai(
            ServerKind::Mlx,
            Some("mlx"),
            true,
            models,
            None,
            None,
        ));
    }
    data.is_array().then(|| {
        openai(
            ServerKind::OpenAiCompatible,
            None,
            false,
            models,
            None,
            None,
        )
    })
}

/// Probes each of `ports` on 127.0.0.1, all at once (one hung port costs
/// its timeouts once, not once per port), and returns what answered, in
/// `ports` order.
pub fn scan(ports: &[u16]) -> Vec<ModelServer> {
    std::thread::scope(|scope| {
        let probes: Vec<_> = ports
            .iter()
            .map(|&port| scope.spawn(move || probe(port)))
            .collect();
        probes
            .into_iter()
            .filter_map(|p| p.join().ok().flatten())
            .collect()
    })
}

/// What listens on 127.0.0.1:`port`, if it is a model server.
pub fn probe(port: u16) -> Option<ModelServer> {
    let fetch = Loopback { port };
    // A closed port: skip the remaining questions at once.
    TcpStream::connect_timeout(&fetch.addr(), CONNECT_TIMEOUT).ok()?;
    identify(&format!("http://127.0.0.1:{port}"), &fetch)
}

/// Plain HTTP/1.1 to one loopback port.
struct Loopback {
    port: u16,
}

impl Loopback {
    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Fetch for Loopback {
    fn get(&self, path: &str) -> Option<Answer> {
        let mut stream = TcpStream::connect_timeout(&self.addr(), CONNECT_TIMEOUT).ok()?;
        stream.set_read_timeout(Some(READ_TIMEOUT)).ok()?;
        stream.set_write_timeout(Some(READ_TIMEOUT)).ok()?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json\r\nConnection: close\r\n\r\n",
            self.port
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut raw = Vec::new();
        stream.take(MAX_RESPONSE).read_to_end(&mut raw).ok()?;
        parse_response(&raw)
    }
}

/// Status, `Server` header and body (de-chunked) of a raw HTTP/1.1 answer.
pub fn parse_response(raw: &[u8]) -> Option<Answer> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(raw.get(..split)?).ok()?;
    let body = raw.get(split + 4..)?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut server = String::new();
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("server") {
            server = value.to_string();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Some(Answer {
        status,
        server,
        body: String::from_utf8(body).ok()?,
    })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(rest.get(..end)?).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = rest.get(end + 2..)?;
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests;

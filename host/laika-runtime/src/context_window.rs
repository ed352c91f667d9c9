//! The configured runtime's real context window, asked of its server, so a
//! prompt is packed to fit it (a llama-server started with `-c 8192` must
//! not get a 24k-token prompt).
//!
//! Each server says it its own way; the first endpoint that answers one of
//! these wins, in this order:
//! - llama.cpp `GET /props`: `default_generation_settings.n_ctx` (or `n_ctx`);
//! - vLLM and SGLang `GET /v1/models`: `data[].max_model_len` (the
//!   configured model's entry, else the first);
//! - LM Studio `GET /api/v0/models`: `loaded_context_length`, else
//!   `max_context_length`;
//! - Ollama `POST /api/show {model}`: `num_ctx` in `parameters`, else
//!   `model_info["<arch>.context_length"]` (a configured `runtime.num_ctx`
//!   is what Ollama is told to use, so it wins without asking).
//!
//! Invariants: only the configured endpoints are asked (no discovery), each
//! probe is bounded by a short timeout, and any failure just means
//! "unknown" (the turn then uses its fixed budget); nothing here fails a turn.

use crate::config::RuntimeConfig;
use crate::http::HttpConfig;
use laika_core::model::ContextWindow;
use serde_json::{json, Value};
use std::time::Duration;

/// How long one probe request may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Windows outside this range are not believed.
const MIN_TOKENS: usize = 256;
const MAX_TOKENS: usize = 16 << 20;

/// The window the configuration itself fixes, without asking anyone.
pub fn configured(config: &RuntimeConfig) -> Option<ContextWindow> {
    match config {
        RuntimeConfig::Ollama(c) => c.num_ctx.map(|n| ContextWindow {
            tokens: n as usize,
            source: "runtime.num_ctx".into(),
        }),
        _ => None,
    }
}

/// The window of the configured runtime: configured, else asked of its
/// server; `None` when neither says (or for runtimes without a server).
pub fn probe(config: &RuntimeConfig) -> Option<ContextWindow> {
    if let Some(window) = configured(config) {
        return Some(window);
    }
    let http = config.http()?;
    let bases = match config {
        RuntimeConfig::OpenAi(c) => c.endpoints(&c.profile().ok()?).ok()?,
        RuntimeConfig::Ollama(c) => c.endpoints(),
        _ => return None,
    };
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .user_agent(concat!("laika-host/", env!("CARGO_PKG_VERSION")))
        .build()
        .ok()?;
    let ollama = matches!(config, RuntimeConfig::Ollama(_));
    let work = |runtime: &tokio::runtime::Runtime, _: &mut laika_core::runtime::TextSink<'_>| {
        runtime.block_on(async {
            for base in &bases {
                let found = if ollama {
                    ask_ollama(&client, http, base).await
                } else {
                    ask_openai(&client, http, base).await
                };
                if found.is_some() {
                    return found;
                }
            }
            None
        })
    };
    crate::executor::run(work, &mut |_| {}).ok().flatten()
}

async fn ask_openai(
    client: &reqwest::Client,
    http: &HttpConfig,
    base: &str,
) -> Option<ContextWindow> {
    let root = server_root(base);
    let model = http.model();
    if let Some(props) = get_json(client, http, &format!("{root}/props")).await {
        if let Some(tokens) = llama_cpp_n_ctx(&props) {
            return window(tokens, "llama.cpp /props");
        }
    }
    if let Some(models) = get_json(
        client,
        http,
        &format!("{}/models", base.trim_end_matches('/')),
    )
    .await
    {
        if let Some(tokens) = max_model_len(&models, model) {
            return window(tokens, "/v1/models max_model_len");
        }
    }
    let models = get_json(client, http, &format!("{root}/api/v0/models")).await?;
    window(
        lm_studio_context(&models, model)?,
        "LM Studio /api/v0/models",
    )
}

async fn ask_ollama(
    client: &reqwest::Client,
    http: &HttpConfig,
    base: &str,
) -> Option<ContextWindow> {
    let url = format!("{}/api/show", server_root(base));
    let body = serde_json::to_vec(&json!({"model": http.model()?})).ok()?;
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    if let Some(key) = &http.api_key {
        request = request.bearer_auth(key.expose());
    }
    let body = read_json(request).await?;
    window(ollama_context(&body)?, "Ollama /api/show")
}

async fn get_json(client: &reqwest::Client, http: &HttpConfig, url: &str) -> Option<Value> {
    let mut request = client.get(url);
    if let Some(key) = &http.api_key {
        request = request.bearer_auth(key.expose());
    }
    read_json(request).await
}

async fn read_json(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    // A window is a small document; anything large is not what was asked.
    let bytes = response.bytes().await.ok()?;
    if bytes.len() > 4 << 20 {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

fn window(tokens: usize, source: &str) -> Option<ContextWindow> {
    (MIN_TOKENS..=MAX_TOKENS)
        .contains(&tokens)
        .then(|| ContextWindow {
            tokens,
            source: source.into(),
        })
}

/// The server's root: the base URL without a trailing `/v1`.
fn server_root(base: &str) -> &str {
    let base = base.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

fn as_tokens(v: &Value) -> Option<usize> {
    v.as_u64().and_then(|n| usize::try_from(n).ok())
}

/// llama.cpp `/props`.
pub fn llama_cpp_n_ctx(props: &Value) -> Option<usize> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(as_tokens)
}

/// vLLM / SGLang `/v1/models`: the entry of `model` (else the first).
pub fn max_model_len(models: &Value, model: Option<&str>) -> Option<usize> {
    let data = models.get("data")?.as_array()?;
    let entry = model
        .and_then(|m| {
            data.iter()
                .find(|e| e.get("id").and_then(Value::as_str) == Some(m))
        })
        .or_else(|| data.first())?;
    entry.get("max_model_len").and_then(as_tokens)
}

/// LM Studio `/api/v0/models`: the loaded context length of `model` (else
/// of the first loaded model), else its maximum.
pub fn lm_studio_context(models: &Value, model: Option<&str>) -> Option<usize> {
    let data = models.get("data")?.as_array()?;
    let entry = model
        .and_then(|m| {
            data.iter()
                .find(|e| e.get("id").and_then(Value::as_str) == Some(m))
        })
        .or_else(|| {
            data.iter()
                .find(|e| e.get("state").and_then(Value::as_str) == Some("loaded"))
        })
        .or_else(|| data.first())?;
    entry
        .get("loaded_context_length")
        .and_then(as_tokens)
        .or_else(|| entry.get("max_context_length").and_then(as_tokens))
}

/// Ollama `/api/show`: `num_ctx` in the model's parameters (what it runs
/// with), else the architecture's `context_length`.
pub fn ollama_context(show: &Value) -> Option<usize> {
    let from_parameters = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|p| {
            p.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse().ok())
                    .flatten()
            })
        });
    from_parameters.or_else(|| {
        show.get("model_info")?
            .as_object()?
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| as_tokens(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_servers_answer() {
        assert_eq!(
            llama_cpp_n_ctx(&json!({"default_generation_settings": {"n_ctx": 8192}})),
            Some(8192)
        );
        assert_eq!(llama_cpp_n_ctx(&json!({"n_ctx": 4096})), Some(4096));
        assert_eq!(llama_cpp_n_ctx(&json!({"n_ctx": "big"})), None);
        let models = json!({"data": [
            {"id": "a", "max_model_len": 32768},
            {"id": "b", "max_model_len": 4096}
        ]});
        assert_eq!(max_model_len(&models, Some("b")), Some(4096));
        assert_eq!(max_model_len(&models, Some("zzz")), Some(32768));
        assert_eq!(max_model_len(&json!({"data": []}), None), None);
        let lms = json!({"data": [
            {"id": "x", "state": "not-loaded", "max_context_length": 131072},
            {"id": "y", "state": "loaded", "loaded_context_length": 8192, "max_context_length": 131072}
        ]});
        assert_eq!(lm_studio_context(&lms, None), Some(8192));
        assert_eq!(lm_studio_context(&lms, Some("x")), Some(131072));
        assert_eq!(
            ollama_context(
                &json!({"parameters": "stop \"<eos>\"\nnum_ctx 16384", "model_info": {"gemma3.context_length": 131072}})
            ),
            Some(16384)
        );
        assert_eq!(
            ollama_context(&json!({"model_info": {"gemma3.context_length": 131072}})),
            Some(131072)
        );
        assert_eq!(ollama_context(&json!({})), None);
    }

    #[test]
    fn finds_the_server_root_and_refuses_absurd_windows() {
        assert_eq!(server_root("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(server_root("http://h:8080"), "http://h:8080");
        assert!(window(10, "x").is_none());
        assert!(window(usize::MAX, "x").is_none());
        assert_eq!(window(4096, "x").unwrap().tokens, 4096);
    }

    #[test]
    fn configured_ollama_num_ctx_wins_and_builtin_has_none() {
        let c = crate::ollama::OllamaConfig {
            num_ctx: Some(2048),
            ..Default::default()
        };
        assert_eq!(
            probe(&RuntimeConfig::Ollama(c)).map(|w| w.tokens),
            Some(2048)
        );
        assert_eq!(probe(&RuntimeConfig::Builtin), None);
    }
}

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
    probe_model(config).window
}

/// What the configured runtime's server says of its model: its context
/// window and its size. The size picks the answer's caps
/// (`laika_core::decoding::Regime`): llama.cpp `/v1/models`
/// `meta.n_params`, Ollama `/api/show` `general.parameter_count` (or
/// `details.parameter_size`), else the size the model's name states
/// (`gemma-3-270m`, `qwen3:4b`), the configured name or the one the server
/// reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFacts {
    pub window: Option<ContextWindow>,
    pub size: Option<ModelSize>,
}

/// A model's number of parameters, and where the figure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSize {
    pub params: u64,
    pub source: String,
}

/// [`ModelFacts`] of the configured runtime (see [`probe`] for the window).
pub fn probe_model(config: &RuntimeConfig) -> ModelFacts {
    let named = || {
        config.model().and_then(|m| {
            laika_core::decoding::caps::params_from_name(m).map(|params| ModelSize {
                params,
                source: "runtime.model name".into(),
            })
        })
    };
    let configured_window = configured(config);
    let Some(http) = config.http() else {
        return ModelFacts {
            window: configured_window,
            size: named(),
        };
    };
    let bases = match config {
        RuntimeConfig::OpenAi(c) => c
            .profile()
            .ok()
            .and_then(|p| c.endpoints(&p).ok())
            .unwrap_or_default(),
        RuntimeConfig::Ollama(c) => c.endpoints(),
        _ => Vec::new(),
    };
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .user_agent(concat!("laika-host/", env!("CARGO_PKG_VERSION")))
        .build();
    let Ok(client) = client else {
        return ModelFacts {
            window: configured_window,
            size: named(),
        };
    };
    let ollama = matches!(config, RuntimeConfig::Ollama(_));
    let work = |runtime: &tokio::runtime::Runtime, _: &mut laika_core::runtime::TextSink<'_>| {
        runtime.block_on(async {
            for base in &bases {
                let found = if ollama {
                    ask_ollama(&client, http, base).await
                } else {
                    ask_openai(&client, http, base).await
                };
                if found.window.is_some() || found.size.is_some() {
                    return found;
                }
            }
            ModelFacts::default()
        })
    };
    let mut facts = crate::executor::run(work, &mut |_| {}).unwrap_or_default();
    if configured_window.is_some() {
        facts.window = configured_window;
    }
    if facts.size.is_none() {
        facts.size = named();
    }
    facts
}

async fn ask_openai(client: &reqwest::Client, http: &HttpConfig, base: &str) -> ModelFacts {
    let root = server_root(base);
    let model = http.model();
    let mut facts = ModelFacts::default();
    let mut served_name = None;
    if let Some(props) = get_json(client, http, &format!("{root}/props")).await {
        facts.window = llama_cpp_n_ctx(&props).and_then(|t| window(t, "llama.cpp /props"));
        served_name = ["model_alias", "model_path"]
            .iter()
            .find_map(|k| props.get(*k).and_then(Value::as_str).map(str::to_string));
    }
    let models = get_json(
        client,
        http,
        &format!("{}/models", base.trim_end_matches('/')),
    )
    .await;
    if let Some(models) = &models {
        if facts.window.is_none() {
            facts.window =
                max_model_len(models, model).and_then(|t| window(t, "/v1/models max_model_len"));
        }
        facts.size = n_params(models, model).map(|params| ModelSize {
            params,
            source: "llama.cpp /v1/models".into(),
        });
        served_name = served_name.or_else(|| model_id(models, model));
    }
    if facts.window.is_none() {
        if let Some(models) = get_json(client, http, &format!("{root}/api/v0/models")).await {
            facts.window = lm_studio_context(&models, model)
                .and_then(|t| window(t, "LM Studio /api/v0/models"));
        }
    }
    if facts.size.is_none() {
        facts.size = served_name
            .as_deref()
            .and_then(laika_core::decoding::caps::params_from_name)
            .map(|params| ModelSize {
                params,
                source: "the model name the server reports".into(),
            });
    }
    facts
}

async fn ask_ollama(client: &reqwest::Client, http: &HttpConfig, base: &str) -> ModelFacts {
    let url = format!("{}/api/show", server_root(base));
    let Some(model) = http.model() else {
        return ModelFacts::default();
    };
    let Ok(body) = serde_json::to_vec(&json!({ "model": model })) else {
        return ModelFacts::default();
    };
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    if let Some(key) = &http.api_key {
        request = request.bearer_auth(key.expose());
    }
    let Some(body) = read_json(request).await else {
        return ModelFacts::default();
    };
    ModelFacts {
        window: ollama_context(&body).and_then(|t| window(t, "Ollama /api/show")),
        size: ollama_params(&body).map(|params| ModelSize {
            params,
            source: "Ollama /api/show".into(),
        }),
    }
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

/// The `/v1/models` entry of `model`, else the first.
fn model_entry<'a>(models: &'a Value, model: Option<&str>) -> Option<&'a Value> {
    let data = models.get("data")?.as_array()?;
    model
        .and_then(|m| {
            data.iter()
                .find(|e| e.get("id").and_then(Value::as_str) == Some(m))
        })
        .or_else(|| data.first())
}

/// llama.cpp `/v1/models`: `meta.n_params` of the model.
pub fn n_params(models: &Value, model: Option<&str>) -> Option<u64> {
    model_entry(models, model)?
        .pointer("/meta/n_params")
        .and_then(Value::as_u64)
}

fn model_id(models: &Value, model: Option<&str>) -> Option<String> {
    model_entry(models, model)?
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Ollama `/api/show`: `general.parameter_count` in `model_info`, else
/// `details.parameter_size` (`"270.0M"`, `"4B"`).
pub fn ollama_params(show: &Value) -> Option<u64> {
    show.pointer("/model_info/general.parameter_count")
        .and_then(Value::as_u64)
        .or_else(|| {
            let size = show.pointer("/details/parameter_size")?.as_str()?;
            laika_core::decoding::caps::params_from_name(size)
        })
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
    fn reads_the_model_size_each_server_gives() {
        let llama = json!({"object": "list", "data": [{"id": "gemma-3-270m-it-Q4_K_M.gguf", "meta": {"n_params": 268_098_176u64, "n_ctx_train": 32768}}]});
        assert_eq!(n_params(&llama, None), Some(268_098_176));
        assert_eq!(
            model_id(&llama, Some("other")).as_deref(),
            Some("gemma-3-270m-it-Q4_K_M.gguf")
        );
        assert_eq!(
            n_params(
                &json!({"data": [{"id": "Qwen/Qwen3-4B", "max_model_len": 32768}]}),
                None
            ),
            None
        );
        assert_eq!(
            ollama_params(&json!({"model_info": {"general.parameter_count": 4_022_468_096u64}})),
            Some(4_022_468_096)
        );
        assert_eq!(
            ollama_params(&json!({"details": {"parameter_size": "270.0M"}})),
            Some(270_000_000)
        );
        assert_eq!(ollama_params(&json!({})), None);
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

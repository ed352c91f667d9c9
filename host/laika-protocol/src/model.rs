//! What the host says about the model runtimes: the one in use, and the
//! model servers found on loopback. The runtimes themselves are
//! `laika-runtime`'s; one call to a model is `laika_core::model`.

use serde::Serialize;

/// What the host tells the extension about the runtime in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RuntimeInfo {
    /// `builtin`, `scripted`, `openai`, `ollama`, `anthropic`, `command`.
    pub kind: String,
    /// The model id, as stored with each response.
    pub model: String,
    /// True when no network is involved.
    pub offline: bool,
    /// A short label for the UI ("Offline extractive (no AI model)").
    pub label: String,
}

/// What kind of model server answered on loopback (`laika_runtime::discover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Ollama,
    LlamaCpp,
    Vllm,
    Sglang,
    LmStudio,
    Mlx,
    /// Lists models at `/v1/models` but says nothing more.
    OpenAiCompatible,
}

/// A model server found on loopback, described as the `[runtime]` settings
/// that use it (`config.discover.result`, `laika-host doctor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ModelServer {
    pub kind: ServerKind,
    /// `runtime.base_url` for it.
    pub base_url: String,
    /// `runtime.kind`: `ollama` or `openai`.
    pub runtime: &'static str,
    /// `runtime.profile` for `openai` servers; `null` when discovery cannot
    /// tell (the user picks one).
    pub profile: Option<&'static str>,
    /// True when `kind` is inferred from a hint, not stated by the server.
    pub guessed: bool,
    pub models: Vec<String>,
    /// Tokens of context, when the server says.
    pub context_window: Option<u64>,
    pub version: Option<String>,
}

//! The `[runtime]` table of the config file: which runtime answers and how
//! to reach it. Loading (file, environment, `config.set`) is the host's.

use laika_core::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Runtime kinds this build can run.
pub const RUNTIME_KINDS: &[&str] = &["builtin", "scripted", "openai", "ollama", "command"];

/// Default for `runtime.timeout_ms`: local models on a laptop can be slow.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Upper bound for `runtime.timeout_ms` (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeConfig {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Never logged, never sent to the extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// For `scripted`: a JSON file with the outputs to replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<PathBuf>,
    /// For `command`: the plugin program, an absolute path or a bare name
    /// looked up in PATH. Only from the file or `LAIKA_COMMAND`, never from
    /// `config.set` (the extension must not choose what the host runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<PathBuf>,
    /// For `command`: the program's arguments, passed as is (no shell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// How long one model call may take; default [`DEFAULT_TIMEOUT_MS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// For `command`: extra environment variables for the plugin, which
    /// otherwise inherits only a fixed few (see `runtime::command`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    // HTTP runtimes (`openai`, `ollama`); see docs/runtimes.md.
    /// Endpoints tried in order (instead of `base_url`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    /// `openai` only: one of `runtime::profile::PROFILE_NAMES`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub connect_timeout_ms: u64,
    pub first_token_timeout_ms: u64,
    pub total_timeout_ms: u64,
    /// Profile overrides (`openai`).
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
    /// `ollama` only: context window and how long the model stays loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<String>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            kind: "builtin".into(),
            base_url: None,
            model: None,
            api_key: None,
            script: None,
            command: None,
            args: Vec::new(),
            timeout_ms: None,
            env: BTreeMap::new(),
            base_urls: Vec::new(),
            profile: None,
            connect_timeout_ms: 3_000,
            first_token_timeout_ms: 60_000,
            total_timeout_ms: 300_000,
            schema_mode: None,
            schema_strict: None,
            thinking_off: None,
            reasoning_effort: None,
            stream_usage: None,
            max_tokens: None,
            num_ctx: None,
            keep_alive: None,
        }
    }
}

impl RuntimeConfig {
    /// Every check of the runtime keys, in one place: the config file, the
    /// environment and `config.set` all come through here.
    pub fn validate(&self) -> Result<()> {
        if !RUNTIME_KINDS.contains(&self.kind.as_str()) {
            return Err(config_error(format!(
                "runtime.kind = {:?} is not available in this build; use one of: {}",
                self.kind,
                RUNTIME_KINDS.join(", ")
            )));
        }
        if self.kind == "scripted" && self.script.is_none() {
            return Err(config_error(
                "runtime.kind = \"scripted\" needs runtime.script (or LAIKA_SCRIPT): a JSON file of outputs",
            ));
        }
        self.validate_command()?;
        self.validate_http_runtime()
    }

    /// Endpoints, timeouts and profile of the HTTP runtimes. URLs are shown
    /// credential-free in errors.
    fn validate_http_runtime(&self) -> Result<()> {
        let r = self;
        if r.base_url.is_some() && !r.base_urls.is_empty() {
            return Err(config_error(
                "set runtime.base_url or runtime.base_urls, not both",
            ));
        }
        let urls = r.base_url.iter().map(|u| ("runtime.base_url", u));
        for (key, url) in urls.chain(r.base_urls.iter().map(|u| ("runtime.base_urls", u))) {
            let shown = laika_core::redact::strip_url_credentials(url);
            let parsed = url::Url::parse(url)
                .map_err(|e| config_error(format!("{key} = {shown:?} is not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(config_error(format!(
                    "{key} = {shown:?} must be an http or https URL"
                )));
            }
        }
        for (key, ms) in [
            ("runtime.connect_timeout_ms", r.connect_timeout_ms),
            ("runtime.first_token_timeout_ms", r.first_token_timeout_ms),
            ("runtime.total_timeout_ms", r.total_timeout_ms),
        ] {
            if !(1..=3_600_000).contains(&ms) {
                return Err(config_error(format!("{key} must be 1..=3600000 (ms)")));
            }
        }
        if r.max_tokens == Some(0) || r.num_ctx == Some(0) {
            return Err(config_error(
                "runtime.max_tokens/runtime.num_ctx must be > 0",
            ));
        }
        if r.kind == "openai" {
            let profile = crate::profile::Profile::from_config(r)?;
            if r.base_url.is_none() && r.base_urls.is_empty() && profile.default_base_url.is_none()
            {
                return Err(config_error(format!(
                    "runtime.kind = \"openai\" with profile {:?} needs runtime.base_url (or LAIKA_BASE_URL)",
                    profile.name
                )));
            }
        }
        if r.kind == "ollama" && r.model.as_deref().is_none_or(str::is_empty) {
            return Err(config_error(
                "runtime.kind = \"ollama\" needs runtime.model (or LAIKA_MODEL), e.g. \"qwen3:4b\"",
            ));
        }
        Ok(())
    }

    /// The `command` runtime's keys: the program must resolve the same way
    /// whatever the host's working directory (the browser picks it).
    fn validate_command(&self) -> Result<()> {
        if self.kind == "command" && self.command.is_none() {
            return Err(config_error(
                "runtime.kind = \"command\" needs runtime.command (or LAIKA_COMMAND): the plugin program",
            ));
        }
        if let Some(program) = &self.command {
            let text = program.to_string_lossy();
            let mut parts = program.components();
            let bare = matches!(parts.next(), Some(std::path::Component::Normal(_)))
                && parts.next().is_none();
            if text.is_empty() || text.contains('\0') || !(program.is_absolute() || bare) {
                return Err(config_error(format!(
                    "runtime.command = {text:?} must be an absolute path or a program name found in PATH"
                )));
            }
        }
        if let Some(i) = self.args.iter().position(|a| a.contains('\0')) {
            return Err(config_error(format!(
                "runtime.args[{i}] contains a NUL byte"
            )));
        }
        if let Some(ms) = self.timeout_ms {
            if !(1..=MAX_TIMEOUT_MS).contains(&ms) {
                return Err(config_error(format!(
                    "runtime.timeout_ms must be 1..={MAX_TIMEOUT_MS}"
                )));
            }
        }
        for (key, value) in &self.env {
            let mut chars = key.chars();
            let valid_name = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid_name {
                return Err(config_error(format!(
                    "runtime.env.{key:?} is not a valid variable name (letters, digits, _)"
                )));
            }
            if value.contains('\0') {
                return Err(config_error(format!(
                    "runtime.env.{key} contains a NUL byte"
                )));
            }
        }
        Ok(())
    }
}

fn config_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::ConfigInvalid, message)
}

//! Configuration: a TOML file in the platform config dir, then environment
//! overrides. Every error names the key (or variable) that is wrong.
//!
//! Precedence, lowest first: built-in defaults, the file (`LAIKA_CONFIG` or
//! `<config dir>/laika/config.toml`), environment variables. A runtime
//! variable applies to the runtime kinds that have its key and is ignored by
//! the others (`LAIKA_MODEL` means nothing to `builtin`).

use crate::integration::IntegrationConfig;
use crate::mcp_client::McpConfig;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::event::{ConfigView, RuntimeView};
pub use laika_protocol::limits::Limits;
pub use laika_runtime::config::{RuntimeConfig, Setting, RUNTIME_KINDS};
use laika_runtime::http::ApiKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub runtime: RuntimeConfig,
    /// `[runtimes.<kind>]`: the settings of runtimes used before, kept while
    /// another kind is in use, so switching back (to an offline answer and
    /// back, say) restores the server, model, profile and key. Left out of
    /// a saved file while empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub runtimes: BTreeMap<String, RuntimeConfig>,
    /// Where the database and logs live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Store full packets (page content included). Off by default.
    pub log_full_llm: bool,
    /// Extension origins (`chrome-extension://<id>/`) and Firefox add-on ids
    /// allowed to launch the host.
    pub allowed_origins: Vec<String>,
    pub limits: Limits,
    /// `[summarizer]`: the runtime that writes the rolling summary, in the
    /// shape of `[runtime]`; absent, the turn's own runtime does (`builtin`
    /// summarizes extractively, without a model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<RuntimeConfig>,
    /// `laika-host serve`: the NLWeb HTTP surface. Left out of a saved file
    /// while it is the default.
    #[serde(skip_serializing_if = "ServeConfig::is_default")]
    pub serve: ServeConfig,
    /// Where Settings and `doctor` look for model servers. Left out of a
    /// saved file while it is the default.
    #[serde(skip_serializing_if = "DiscoverConfig::is_default")]
    pub discover: DiscoverConfig,
    /// `[integrations.<name>]`: the plugin programs `integration.invoke`
    /// may run (docs/plugin-protocol.md, "Integrations"); none by default.
    /// Only from the file: the extension's `config.set` cannot add one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub integrations: BTreeMap<String, IntegrationConfig>,
    /// `[mcp.servers.<name>]`: the MCP servers whose tools are offered as
    /// `mcp.<server>.<tool>`; none by default. Only from the file: the
    /// extension's `config.set` can only change a server's `trusted`.
    #[serde(skip_serializing_if = "McpConfig::is_empty")]
    pub mcp: McpConfig,
    /// The runtime settings the environment gave (but the kind), applied
    /// again when `config.set` switches the kind: the switch keeps only
    /// what the new kind shares with the old one.
    #[serde(skip)]
    runtime_env: Vec<Setting>,
    /// The kind `LAIKA_RUNTIME` gave: a saved change reads the file as the
    /// load did, so a `[runtime]` table without `kind` is of this kind.
    #[serde(skip)]
    runtime_env_kind: Option<String>,
}

/// The runtime kinds Settings offers: `scripted` replays test scripts and
/// `command` runs a program, which only the config file may name.
pub const OFFERED_KINDS: &[&str] = &["builtin", "openai", "ollama", "anthropic"];

/// The extension ids Laika ships with (pinned by the manifest `key` for
/// Chromium, by `browser_specific_settings.gecko.id` for Firefox).
pub const DEFAULT_ALLOWED_ORIGINS: &[&str] = &[
    "chrome-extension://dkfmchejjpecjdaphalpgmmhifdjhomi/",
    "laika@laika.dev",
];

impl Default for Config {
    fn default() -> Self {
        Config {
            runtime: RuntimeConfig::default(),
            runtimes: BTreeMap::new(),
            data_dir: None,
            log_full_llm: false,
            allowed_origins: DEFAULT_ALLOWED_ORIGINS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            limits: Limits::default(),
            summarizer: None,
            serve: ServeConfig::default(),
            discover: DiscoverConfig::default(),
            integrations: BTreeMap::new(),
            mcp: McpConfig::default(),
            runtime_env: Vec::new(),
            runtime_env_kind: None,
        }
    }
}

/// The `[serve]` table: where `laika-host serve` listens and how it protects
/// itself. Everything has a safe default: loopback only, small bodies, short
/// read timeouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// `IP:PORT` to listen on (`--listen` overrides it).
    pub listen: String,
    /// Listening on an address other than loopback must be asked for: the
    /// server answers from the user's history.
    pub allow_remote: bool,
    /// Extra `Host` header values accepted besides the listen address (and
    /// `localhost:PORT` on loopback), e.g. a name the machine is reached by.
    pub allowed_hosts: Vec<String>,
    /// An ask still running after this many ms is answered with a Promise
    /// (`/await` gets the result); 0 makes every ask a Promise.
    pub promise_after_ms: u64,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// A client must send its request headers, and then its body, within
    /// this many ms each, or the connection is closed (slow-loris).
    pub read_timeout_ms: u64,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
}

pub const DEFAULT_SERVE_LISTEN: &str = "127.0.0.1:8744";

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: DEFAULT_SERVE_LISTEN.into(),
            allow_remote: false,
            allowed_hosts: Vec::new(),
            promise_after_ms: 10_000,
            max_body_bytes: 1 << 20,
            read_timeout_ms: 10_000,
            max_connections: 512,
        }
    }
}

impl ServeConfig {
    fn is_default(&self) -> bool {
        *self == ServeConfig::default()
    }

    /// The listen address, checked: a socket address, loopback unless
    /// `allow_remote`.
    pub fn listen_addr(&self) -> Result<std::net::SocketAddr> {
        let addr: std::net::SocketAddr = self.listen.trim().parse().map_err(|_| {
            config_error(format!(
                "serve.listen {:?} is not IP:PORT (e.g. {DEFAULT_SERVE_LISTEN})",
                self.listen
            ))
        })?;
        if !addr.ip().is_loopback() && !self.allow_remote {
            return Err(config_error(format!(
                "serve.listen {addr} is not a loopback address; set serve.allow_remote = true to listen there"
            )));
        }
        Ok(addr)
    }

    fn validate(&self) -> Result<()> {
        self.listen_addr()?;
        for (key, value, range) in [
            ("promise_after_ms", self.promise_after_ms, 0..=3_600_000u64),
            ("read_timeout_ms", self.read_timeout_ms, 100..=600_000),
            (
                "max_body_bytes",
                self.max_body_bytes as u64,
                1024..=64 << 20,
            ),
            ("max_connections", self.max_connections as u64, 1..=65_536),
        ] {
            if !range.contains(&value) {
                return Err(config_error(format!(
                    "serve.{key} must be {}..={}",
                    range.start(),
                    range.end()
                )));
            }
        }
        for host in &self.allowed_hosts {
            if host.trim().is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
                return Err(config_error(format!(
                    "serve.allowed_hosts: {host:?} is not a HOST[:PORT]"
                )));
            }
        }
        Ok(())
    }
}

/// The `[discover]` table: the loopback ports asked for model servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoverConfig {
    /// Ports on 127.0.0.1, asked at once; empty turns discovery off.
    /// `LAIKA_DISCOVER_PORTS` (comma-separated) replaces them.
    pub ports: Vec<u16>,
}

/// More ports would be a port scan, not a look at the usual places.
pub const MAX_DISCOVER_PORTS: usize = 32;

impl Default for DiscoverConfig {
    fn default() -> Self {
        DiscoverConfig {
            ports: laika_runtime::discover::DEFAULT_PORTS.to_vec(),
        }
    }
}

impl DiscoverConfig {
    fn is_default(&self) -> bool {
        *self == DiscoverConfig::default()
    }

    fn validate(&self) -> Result<()> {
        if self.ports.len() > MAX_DISCOVER_PORTS || self.ports.contains(&0) {
            return Err(config_error(format!(
                "discover.ports must be at most {MAX_DISCOVER_PORTS} ports, each 1..=65535"
            )));
        }
        Ok(())
    }

    /// `LAIKA_DISCOVER_PORTS`: `11434,8080`; empty turns discovery off.
    fn parse_env(value: &str) -> Result<Vec<u16>> {
        value
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse().map_err(|_| {
                    config_error(format!(
                        "LAIKA_DISCOVER_PORTS: {:?} is not a port",
                        laika_core::text::prefix_chars(p, 16)
                    ))
                })
            })
            .collect()
    }
}

fn config_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::ConfigInvalid, message)
}

/// The config file path: `LAIKA_CONFIG`, else the platform config dir.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(p) = env("LAIKA_CONFIG").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    dirs::config_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("laika")
        .join("config.toml")
}

fn parse_bool(var: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        other => Err(config_error(format!(
            "{var}={other:?} is not a boolean: use 1 or 0"
        ))),
    }
}

impl Config {
    /// The context window `limits.context_window_tokens` sets, if it does.
    pub fn configured_window(&self) -> Option<laika_core::model::ContextWindow> {
        self.limits
            .context_window_tokens
            .map(|tokens| laika_core::model::ContextWindow {
                tokens,
                source: "limits.context_window_tokens".into(),
            })
    }

    /// The file alone (defaults when it does not exist), without environment
    /// overrides. Checked for shape only: the environment may complete it
    /// (a `base_url` from `LAIKA_BASE_URL`, say), so [`Config::load`]
    /// validates the whole.
    pub fn from_file(path: &Path) -> Result<Config> {
        Config::from_file_for(path, None)
    }

    /// The file, its `[runtime]` table read as of `kind` when the file
    /// names none (the kind `LAIKA_RUNTIME` gives): the file and the
    /// environment are one config, so a file without `kind` holding
    /// `max_tokens` is an `openai` table when the environment says
    /// `openai`, not a `builtin` one with a stray key.
    fn from_file_for(path: &Path, kind: Option<&str>) -> Result<Config> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse_for(&text, kind)
                .map_err(|e| config_error(format!("{}: {}", path.display(), e.message))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(config_error(format!(
                "cannot read config file {}: {e}",
                path.display()
            ))),
        }
    }

    /// Loads the file (if present) and applies environment overrides.
    pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Result<(Config, PathBuf)> {
        let path = config_path(env);
        let kind = env("LAIKA_RUNTIME").filter(|v| !v.is_empty());
        let mut config = Config::from_file_for(&path, kind.as_deref())?;
        config.apply_env(env)?;
        config.validate()?;
        Ok((config, path))
    }

    /// Loads from the process environment.
    pub fn from_process_env() -> Result<(Config, PathBuf)> {
        Config::load(&|k| std::env::var(k).ok())
    }

    /// A complete config from TOML text: parsed and validated.
    pub fn from_toml(text: &str) -> Result<Config> {
        let config = Config::parse(text)?;
        config.validate()?;
        Ok(config)
    }

    fn parse(text: &str) -> Result<Config> {
        // toml's messages name the offending key and line.
        toml::from_str(text).map_err(|e| config_error(e.to_string()))
    }

    /// [`Config::parse`], with `kind` for a `[runtime]` table without one.
    fn parse_for(text: &str, kind: Option<&str>) -> Result<Config> {
        let Some(kind) = kind else {
            return Config::parse(text);
        };
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| config_error(e.to_string()))?;
        match table.get_mut("runtime") {
            Some(toml::Value::Table(runtime)) if !runtime.contains_key("kind") => {
                runtime.insert("kind".into(), toml::Value::String(kind.into()));
            }
            _ => return Config::parse(text),
        }
        table
            .try_into()
            .map_err(|e: toml::de::Error| config_error(e.to_string()))
    }

    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self).map_err(|e| Error::internal(format!("config to TOML: {e}")))
    }

    fn apply_env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<()> {
        let set = |k: &str| env(k).filter(|v| !v.is_empty());
        if let Some(v) = set("LAIKA_DATA_DIR") {
            self.data_dir = Some(PathBuf::from(v));
        }
        // The kind first: the other settings apply to the kind it selects.
        if let Some(v) = set("LAIKA_RUNTIME") {
            self.runtime.apply(&Setting::Kind(v.clone()))?;
            self.runtime_env_kind = Some(v);
        }
        let mut settings = Vec::new();
        if let Some(v) = set("LAIKA_BASE_URL") {
            // A comma-separated list is several endpoints, tried in order.
            let urls: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
            if let [one] = urls.as_slice() {
                settings.push(Setting::BaseUrl(Some(one.clone())));
                settings.push(Setting::BaseUrls(Vec::new()));
            } else {
                settings.push(Setting::BaseUrl(None));
                settings.push(Setting::BaseUrls(urls));
            }
        }
        if let Some(v) = set("LAIKA_PROFILE") {
            settings.push(Setting::Profile(Some(v)));
        }
        if let Some(v) = set("LAIKA_MODEL") {
            settings.push(Setting::Model(Some(v)));
        }
        if let Some(v) = set("LAIKA_API_KEY") {
            settings.push(Setting::ApiKey(Some(ApiKey::new(v))));
        }
        if let Some(v) = set("LAIKA_SCRIPT") {
            settings.push(Setting::Script(PathBuf::from(v)));
        }
        if let Some(v) = set("LAIKA_COMMAND") {
            settings.push(Setting::Command(PathBuf::from(v)));
        }
        for setting in &settings {
            self.runtime.apply(setting)?;
        }
        // Ollama's own variable names its server when nothing more specific
        // (the config file, `LAIKA_BASE_URL`) does.
        let unset = self
            .runtime
            .http()
            .is_some_and(|h| h.base_url.is_none() && h.base_urls.is_empty());
        if self.runtime.kind() == "ollama" && unset {
            if let Some(url) = set("OLLAMA_HOST")
                .as_deref()
                .and_then(laika_runtime::ollama::base_url_from_ollama_host)
            {
                let setting = Setting::BaseUrl(Some(url));
                self.runtime.apply(&setting)?;
                settings.push(setting);
            }
        }
        self.runtime_env = settings;
        if let Some(v) = env("LAIKA_LOG_FULL_LLM") {
            self.log_full_llm = parse_bool("LAIKA_LOG_FULL_LLM", &v)?;
        }
        if let Some(v) = set("LAIKA_PROMISE_AFTER_MS") {
            self.serve.promise_after_ms = v.trim().parse().map_err(|_| {
                config_error(format!(
                    "LAIKA_PROMISE_AFTER_MS={v:?} is not a number of milliseconds"
                ))
            })?;
        }
        if let Some(v) = env("LAIKA_DISCOVER_PORTS") {
            self.discover.ports = DiscoverConfig::parse_env(&v)?;
        }
        if let Some(v) = set("LAIKA_ALLOWED_ORIGINS") {
            self.allowed_origins = v.split(',').map(|s| s.trim().to_string()).collect();
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<()> {
        self.runtime.validate()?;
        for (kind, saved) in &self.runtimes {
            if saved.kind() != kind {
                return Err(config_error(format!(
                    "[runtimes.{kind}] has kind = {:?}: it must be {kind:?}",
                    saved.kind()
                )));
            }
            saved
                .validate()
                .map_err(|e| config_error(format!("[runtimes.{kind}]: {}", e.message)))?;
        }
        if let Some(summarizer) = &self.summarizer {
            summarizer
                .validate()
                .map_err(|e| config_error(format!("[summarizer]: {}", e.message)))?;
        }
        self.serve.validate()?;
        self.discover.validate()?;
        for (name, integration) in &self.integrations {
            integration.validate(name)?;
        }
        self.mcp.validate()?;
        let l = &self.limits;
        if l.max_inbound_frame == 0
            || l.max_inbound_frame > laika_protocol::limits::DEFAULT_MAX_INBOUND_FRAME
        {
            return Err(config_error(format!(
                "limits.max_inbound_frame must be 1..={} bytes",
                laika_protocol::limits::DEFAULT_MAX_INBOUND_FRAME
            )));
        }
        use laika_protocol::limits::{MAX_JSON_DEPTH, MAX_RETRIES, MIN_JSON_DEPTH};
        if !(MIN_JSON_DEPTH..=MAX_JSON_DEPTH).contains(&l.max_json_depth) {
            return Err(config_error(format!(
                "limits.max_json_depth must be {MIN_JSON_DEPTH}..={MAX_JSON_DEPTH}"
            )));
        }
        if l.max_retries > MAX_RETRIES {
            return Err(config_error(format!(
                "limits.max_retries must be 0..={MAX_RETRIES}"
            )));
        }
        if l.max_tool_calls > laika_protocol::limits::MAX_CALLS_PER_ANSWER {
            return Err(config_error(format!(
                "limits.max_tool_calls must be 0..={}",
                laika_protocol::limits::MAX_CALLS_PER_ANSWER
            )));
        }
        if !(1..=laika_protocol::agent::MAX_STEPS).contains(&l.max_steps) {
            return Err(config_error(format!(
                "limits.max_steps must be 1..={}",
                laika_protocol::agent::MAX_STEPS
            )));
        }
        for (key, secs, max) in [
            ("approval_timeout_secs", l.approval_timeout_secs, 3600),
            ("tool_timeout_secs", l.tool_timeout_secs, 3600),
            ("turn_budget_secs", l.turn_budget_secs, 86_400),
        ] {
            if !(1..=max).contains(&secs) {
                return Err(config_error(format!(
                    "limits.{key} must be 1..={max} seconds"
                )));
            }
        }
        let max = laika_protocol::limits::MAX_TRANSFORM_CONCURRENCY;
        if !(1..=max).contains(&l.transform_concurrency) {
            return Err(config_error(format!(
                "limits.transform_concurrency must be 1..={max}"
            )));
        }
        let max = laika_protocol::limits::MAX_CONFIRM_CALLS;
        if !(1..=max).contains(&l.confirm_calls) {
            return Err(config_error(format!(
                "limits.confirm_calls must be 1..={max}"
            )));
        }
        if l.context_max_chars == Some(0) || l.context_max_tokens == Some(0) {
            return Err(config_error(
                "limits.context_max_chars/context_max_tokens must be > 0",
            ));
        }
        if l.context_window_tokens.is_some_and(|t| t < 256) {
            return Err(config_error(
                "limits.context_window_tokens must be at least 256",
            ));
        }
        if l.recent_turns > 64 {
            return Err(config_error("limits.recent_turns must be 0..=64"));
        }
        if l.summary_after_turns == 0 || l.summary_after_chars == 0 {
            return Err(config_error(
                "limits.summary_after_turns/summary_after_chars must be > 0",
            ));
        }
        Ok(())
    }

    /// The data dir: configured, else the platform data dir.
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(|| {
            dirs::data_dir()
                .unwrap_or_else(|| PathBuf::from("."))
                .join("laika")
        })
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir().join("history.sqlite3")
    }

    /// What `config.get` shows: everything but secrets.
    pub fn public_view(&self) -> ConfigView {
        ConfigView {
            runtime: runtime_view(&self.runtime),
            saved_runtimes: self.runtimes.values().map(runtime_view).collect(),
            data_dir: self.data_dir().display().to_string(),
            log_full_llm: self.log_full_llm,
            allowed_origins: self.allowed_origins.clone(),
            limits: self.limits.clone(),
            runtime_kinds: RUNTIME_KINDS.to_vec(),
            offered_kinds: OFFERED_KINDS.to_vec(),
            profiles: laika_runtime::profile::PROFILE_NAMES.to_vec(),
            discover_ports: self.discover.ports.clone(),
        }
    }

    /// Applies `config.set` values (`"runtime.kind"`, `"runtime.base_url"`,
    /// `"runtime.model"`, `"runtime.profile"`, `"runtime.api_key"`,
    /// `"log_full_llm"`). Returns the
    /// new config without touching `self`, so a bad value changes nothing.
    /// Like the environment's, a runtime value applies only to a kind that
    /// has the key (the sidebar sends `base_url` and `model` with every
    /// kind).
    pub fn with_values(&self, values: &serde_json::Map<String, Value>) -> Result<Config> {
        let next = self.apply_values(values)?;
        next.validate()?;
        Ok(next)
    }

    /// Writes `values` onto the config file at `path`, so environment
    /// overrides (an API key from `LAIKA_API_KEY`, say) never end up on disk.
    /// The file alone is not validated: the caller validated the whole with
    /// [`Config::with_values`], and the environment completes the file.
    pub fn save_values(&self, path: &Path, values: &serde_json::Map<String, Value>) -> Result<()> {
        Config::from_file_for(path, self.runtime_env_kind.as_deref())?
            .apply_values(values)?
            .save(path)
    }

    fn apply_values(&self, values: &serde_json::Map<String, Value>) -> Result<Config> {
        let text = |key: &str, value: &Value| match value {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            _ => Err(config_error(format!("{key} must be a string or null"))),
        };
        let mut next = self.clone();
        // The kind first: the other values apply to the kind it selects.
        if let Some(value) = values.get("runtime.kind") {
            let kind = text("runtime.kind", value)?.unwrap_or_else(|| "builtin".into());
            if kind != next.runtime.kind() {
                // The kind left keeps its settings; the kind chosen gets back its own, if it had any.
                let left = next.runtime.clone();
                match next.runtimes.remove(&kind) {
                    Some(saved) => next.runtime = saved,
                    None => next.runtime.apply(&Setting::Kind(kind))?,
                }
                if left != RuntimeConfig::Builtin {
                    next.runtimes.insert(left.kind().to_owned(), left);
                }
                for setting in &self.runtime_env {
                    next.runtime.apply(setting)?;
                }
            }
        }
        for (key, value) in values {
            let setting = match key.as_str() {
                "runtime.kind" => continue,
                "runtime.base_url" => Setting::BaseUrl(text(key, value)?),
                "runtime.model" => Setting::Model(text(key, value)?),
                "runtime.profile" => Setting::Profile(text(key, value)?),
                "runtime.api_key" => Setting::ApiKey(text(key, value)?.map(ApiKey::new)),
                mcp if mcp.starts_with("mcp.servers.") => {
                    next.set_mcp_trust(mcp, value)?;
                    continue;
                }
                "log_full_llm" => {
                    next.log_full_llm = value
                        .as_bool()
                        .ok_or_else(|| config_error("log_full_llm must be true or false"))?;
                    continue;
                }
                other => {
                    return Err(config_error(format!(
                        "unknown config key {other:?}; settable keys: runtime.kind, runtime.base_url, runtime.model, runtime.profile, runtime.api_key, log_full_llm, mcp.servers.<name>.trusted"
                    )))
                }
            };
            next.runtime.apply(&setting)?;
        }
        Ok(next)
    }

    /// `mcp.servers.<name>.trusted`: the one MCP key Settings may set, and
    /// only for a server the file configures.
    fn set_mcp_trust(&mut self, key: &str, value: &Value) -> Result<()> {
        let name = key
            .strip_prefix("mcp.servers.")
            .and_then(|rest| rest.strip_suffix(".trusted"))
            .ok_or_else(|| {
                config_error(format!(
                    "{key:?}: the only MCP key that can be set is mcp.servers.<name>.trusted"
                ))
            })?;
        let trusted = value
            .as_bool()
            .ok_or_else(|| config_error(format!("{key} must be true or false")))?;
        let server = self.mcp.servers.get_mut(name).ok_or_else(|| {
            config_error(format!(
                "no MCP server named {name:?} is configured; servers are added under [mcp.servers.<name>] in config.toml"
            ))
        })?;
        server.trusted = trusted;
        Ok(())
    }

    /// Writes the file atomically (temp file + rename) so a crash never
    /// leaves half a config behind, readable by its owner only: it may hold
    /// the API key.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = self.to_toml()?;
        let fail =
            |e: std::io::Error| config_error(format!("cannot write {}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let tmp = path.with_extension("toml.tmp");
        write_private(&tmp, text.as_bytes()).map_err(fail)?;
        std::fs::rename(&tmp, path).map_err(fail)
    }
}

/// A runtime's settings without its key (only whether one is set).
fn runtime_view(runtime: &RuntimeConfig) -> RuntimeView {
    let http = runtime.http();
    RuntimeView {
        kind: runtime.kind().to_owned(),
        base_url: http.and_then(|h| h.base_url.clone()),
        model: runtime.model().map(str::to_owned),
        profile: match runtime {
            RuntimeConfig::OpenAi(c) => c.profile.clone(),
            _ => None,
        },
        api_key_set: http.is_some_and(|h| h.api_key.is_some()),
    }
}

/// Writes `bytes` to a new `path` with mode 0600 (on Unix) from the first
/// byte on; a leftover file there is replaced, not reused with its mode.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_runtime::command::CommandConfig;
    use laika_runtime::http::HttpConfig;
    use laika_runtime::openai::OpenAiConfig;
    use serde_json::json;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_are_builtin_and_valid() {
        let c = Config::default();
        assert_eq!(c.runtime.kind(), "builtin");
        assert!(c.validate().is_ok());
        assert!(!c.log_full_llm);
    }

    #[test]
    fn bad_key_is_named() {
        let e = Config::from_toml("[runtime]\nkind = \"builtin\"\nmodle = \"x\"\n").err();
        let msg = e.map(|e| e.message).unwrap_or_default();
        assert!(msg.contains("modle"), "{msg}");
        let e = Config::from_toml("[limits]\nmax_tool_calls = 65\n").err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("limits.max_tool_calls must be 0..=64"));
        let e = Config::from_toml("[limits]\nmax_steps = 33\n").err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("limits.max_steps must be 1..=32"));
        let c = Config::from_toml("[limits]\nmax_steps = 32\nturn_budget_secs = 30\n");
        assert_eq!(
            c.map(|c| (c.limits.max_steps, c.limits.turn_budget_secs))
                .ok(),
            Some((32, 30))
        );
        let e = Config::from_toml("[limits]\napproval_timeout_secs = 0\n").err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("approval_timeout_secs"));
        let e = Config::from_toml("[limits]\nmax_retries = 9\n").err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("limits.max_retries"));
        let e = Config::from_toml("[runtime]\nkind = \"gpt\"\n").err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("runtime.kind"));
    }

    #[test]
    fn serve_is_loopback_unless_asked_and_checked() {
        let c = Config::default();
        assert_eq!(
            c.serve.listen_addr().map(|a| a.ip().is_loopback()).ok(),
            Some(true)
        );
        let msg = |toml: &str| {
            Config::from_toml(toml)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        assert!(msg("[serve]\nlisten = \"0.0.0.0:80\"\n").contains("serve.allow_remote"));
        assert!(msg("[serve]\nlisten = \"localhost\"\n").contains("serve.listen"));
        assert!(msg("[serve]\nread_timeout_ms = 0\n").contains("serve.read_timeout_ms"));
        assert!(msg("[serve]\nmax_body_bytes = 1\n").contains("serve.max_body_bytes"));
        assert!(msg("[serve]\nallowed_hosts = [\"a b\"]\n").contains("serve.allowed_hosts"));
        assert!(msg("[serve]\nport = 1\n").contains("port"));
        let remote = Config::from_toml("[serve]\nlisten = \"0.0.0.0:8080\"\nallow_remote = true\n");
        assert!(remote.is_ok());
        let pairs: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_PROMISE_AFTER_MS", "0"),
        ];
        assert_eq!(
            Config::load(&env_of(pairs))
                .map(|c| c.0.serve.promise_after_ms)
                .ok(),
            Some(0)
        );
        let pairs: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_PROMISE_AFTER_MS", "soon"),
        ];
        assert!(Config::load(&env_of(pairs))
            .err()
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("LAIKA_PROMISE_AFTER_MS"));
    }

    #[test]
    fn env_overrides_file_and_bad_env_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "log_full_llm = false\n[runtime]\nkind = \"ollama\"\nmodel = \"file-model\"\n",
        )
        .unwrap();
        let path_s: &'static str = Box::leak(path.display().to_string().into_boxed_str());
        let pairs: &'static [(&str, &str)] = Box::leak(Box::new([
            ("LAIKA_CONFIG", path_s),
            ("LAIKA_MODEL", "env-model"),
            ("LAIKA_LOG_FULL_LLM", "1"),
        ]));
        let (c, p) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(p, path);
        assert_eq!(c.runtime.model(), Some("env-model"));
        assert!(c.log_full_llm);

        let e = Config::load(&env_of(&[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_LOG_FULL_LLM", "maybe"),
        ]));
        assert!(e
            .err()
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("LAIKA_LOG_FULL_LLM"));
    }

    /// The wire schema's `config.set` keys are exactly the ones applied here.
    #[test]
    fn every_key_the_schema_offers_is_settable() {
        let schema = laika_protocol::wire::schema_document();
        let keys = schema["$defs"]["ConfigValues"]["properties"]
            .as_object()
            .unwrap();
        assert_eq!(keys.len(), 6);
        for (key, shape) in keys {
            let value = if shape["type"] == "boolean" {
                json!(true)
            } else {
                json!(null)
            };
            let mut v = serde_json::Map::new();
            v.insert(key.clone(), value);
            assert!(Config::default().with_values(&v).is_ok(), "{key}");
        }
        let mut v = serde_json::Map::new();
        v.insert("runtime.shell".into(), json!("sh"));
        assert!(Config::default().with_values(&v).is_err());
    }

    #[test]
    fn the_environment_completes_the_file_before_it_is_validated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        // The file names the kind; the endpoint comes from the environment.
        std::fs::write(&path, "[runtime]\nkind = \"openai\"\nmax_tokens = 384\n").unwrap();
        let path_s: &'static str = Box::leak(path.display().to_string().into_boxed_str());
        let pairs: &'static [(&str, &str)] = Box::leak(Box::new([
            ("LAIKA_CONFIG", path_s),
            ("LAIKA_BASE_URL", "http://127.0.0.1:8080"),
        ]));
        let (c, _) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(c.runtime.kind(), "openai");
        // Without the environment the same file is incomplete.
        let alone = Config::load(&env_of(Box::leak(Box::new([("LAIKA_CONFIG", path_s)]))));
        assert_eq!(alone.err().map(|e| e.code), Some(ErrorCode::ConfigInvalid));
        // config.set validates the whole, and saves onto the file without the
        // environment's values.
        let mut v = serde_json::Map::new();
        v.insert("log_full_llm".into(), json!(true));
        assert!(c.with_values(&v).is_ok());
        c.save_values(&path, &v).unwrap();
        let saved = std::fs::read_to_string(&path).unwrap();
        assert!(saved.contains("log_full_llm = true"), "{saved}");
        assert!(!saved.contains("127.0.0.1"), "{saved}");
    }

    #[test]
    fn a_file_without_kind_takes_the_kind_of_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[runtime]\nmax_tokens = 900\nprofile = \"llama.cpp\"\n[limits]\nmax_retries = 2\n",
        )
        .unwrap();
        let path_s: &'static str = Box::leak(path.display().to_string().into_boxed_str());
        let pairs: &'static [(&str, &str)] = Box::leak(Box::new([
            ("LAIKA_CONFIG", path_s),
            ("LAIKA_RUNTIME", "openai"),
        ]));
        let (c, _) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(c.runtime.kind(), "openai");
        let RuntimeConfig::OpenAi(openai) = &c.runtime else {
            panic!("{:?}", c.runtime)
        };
        assert_eq!(openai.max_tokens, Some(900));
        assert_eq!(openai.profile.as_deref(), Some("llama.cpp"));
        assert_eq!(c.limits.max_retries, 2);
        // Settings saves onto such a file read the same way: the file's own
        // keys are kept, the new model added, the kind in use written down.
        let mut v = serde_json::Map::new();
        v.insert("runtime.model".into(), json!("qwen3-8b"));
        let next = c.with_values(&v).unwrap();
        assert_eq!(next.runtime.model(), Some("qwen3-8b"));
        let copy = dir.path().join("saved.toml");
        std::fs::copy(&path, &copy).unwrap();
        c.save_values(&copy, &v).unwrap();
        let saved = std::fs::read_to_string(&copy).unwrap();
        for kept in [
            "kind = \"openai\"",
            "max_tokens = 900",
            "qwen3-8b",
            "llama.cpp",
            "max_retries = 2",
        ] {
            assert!(saved.contains(kept), "{kept} missing from {saved}");
        }
        // Without the environment the same file is a builtin table with a
        // key builtin does not take, and says so.
        let alone = Config::load(&env_of(Box::leak(Box::new([("LAIKA_CONFIG", path_s)]))));
        let e = alone.err().unwrap();
        assert_eq!(e.code, ErrorCode::ConfigInvalid);
        assert!(
            e.message.contains("runtime.max_tokens does not apply"),
            "{}",
            e.message
        );
        // The environment's kind must still take every key of the file.
        let ollama: &'static [(&str, &str)] = Box::leak(Box::new([
            ("LAIKA_CONFIG", path_s),
            ("LAIKA_RUNTIME", "ollama"),
        ]));
        let e = Config::load(&env_of(ollama)).err().unwrap();
        assert!(
            e.message
                .contains("does not apply to runtime.kind = \"ollama\""),
            "{}",
            e.message
        );
        // A file that names its kind keeps it; the environment switches it
        // as before.
        std::fs::write(
            &path,
            "[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\nmax_tokens = 900\n",
        )
        .unwrap();
        let (c, _) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(c.runtime.kind(), "openai");
    }

    #[test]
    fn ollama_host_names_the_server_unless_laika_config_does() {
        let from_env: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/laika-config.toml"),
            ("LAIKA_RUNTIME", "ollama"),
            ("LAIKA_MODEL", "m"),
            ("OLLAMA_HOST", "0.0.0.0:11500"),
        ];
        let (c, _) = Config::load(&env_of(from_env)).unwrap();
        assert_eq!(
            c.runtime.http().and_then(|h| h.base_url.as_deref()),
            Some("http://127.0.0.1:11500")
        );
        let laika_wins: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/laika-config.toml"),
            ("LAIKA_RUNTIME", "ollama"),
            ("LAIKA_MODEL", "m"),
            ("LAIKA_BASE_URL", "http://127.0.0.1:9999"),
            ("OLLAMA_HOST", "0.0.0.0:11500"),
        ];
        let (c, _) = Config::load(&env_of(laika_wins)).unwrap();
        assert_eq!(
            c.runtime.http().and_then(|h| h.base_url.as_deref()),
            Some("http://127.0.0.1:9999")
        );
        // Another kind does not read it.
        let openai: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/laika-config.toml"),
            ("LAIKA_RUNTIME", "openai"),
            ("LAIKA_BASE_URL", "http://127.0.0.1:8080"),
            ("OLLAMA_HOST", "0.0.0.0:11500"),
        ];
        let (c, _) = Config::load(&env_of(openai)).unwrap();
        assert_eq!(
            c.runtime.http().and_then(|h| h.base_url.as_deref()),
            Some("http://127.0.0.1:8080")
        );
    }

    #[test]
    fn switching_runtime_keeps_each_kinds_settings_and_restores_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let values = |pairs: &[(&str, Value)]| -> serde_json::Map<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect()
        };
        let server = values(&[
            ("runtime.kind", json!("openai")),
            ("runtime.base_url", json!("http://127.0.0.1:8080/v1")),
            ("runtime.model", json!("gemma-3-270m")),
            ("runtime.profile", json!("llama.cpp")),
            ("runtime.api_key", json!("sk-kept")),
        ]);
        let c = Config::default().with_values(&server).unwrap();
        Config::default().save_values(&path, &server).unwrap();
        // Offline, as Settings sends it: the server's fields come along and mean nothing to builtin.
        let offline = values(&[
            ("runtime.kind", json!("builtin")),
            ("runtime.base_url", json!("http://127.0.0.1:8080/v1")),
            ("runtime.model", json!("gemma-3-270m")),
        ]);
        let c = c.with_values(&offline).unwrap();
        Config::default().save_values(&path, &offline).unwrap();
        assert_eq!(c.runtime, RuntimeConfig::Builtin);
        let view = c.public_view();
        assert_eq!(view.saved_runtimes.len(), 1);
        let saved = &view.saved_runtimes[0];
        assert_eq!(
            (
                saved.kind.as_str(),
                saved.model.as_deref(),
                saved.profile.as_deref(),
                saved.api_key_set
            ),
            ("openai", Some("gemma-3-270m"), Some("llama.cpp"), true)
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("[runtimes.openai]") && text.contains("sk-kept"),
            "{text}"
        );
        // Back to the server: everything is restored, in memory and from the file.
        let back = values(&[("runtime.kind", json!("openai"))]);
        let c = c.with_values(&back).unwrap();
        Config::default().save_values(&path, &back).unwrap();
        for restored in [c, Config::from_file(&path).unwrap()] {
            let RuntimeConfig::OpenAi(o) = &restored.runtime else {
                panic!("{:?}", restored.runtime)
            };
            assert_eq!(o.http.base_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
            assert_eq!(o.http.api_key, Some(ApiKey::new("sk-kept")));
            assert_eq!(o.profile.as_deref(), Some("llama.cpp"));
            assert_eq!(restored.runtime.model(), Some("gemma-3-270m"));
            assert!(restored.runtimes.is_empty(), "{:?}", restored.runtimes);
        }
        // A saved table of the wrong kind is named.
        let bad = Config::from_toml(
            "[runtimes.ollama]\nkind = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\n",
        );
        assert!(bad.unwrap_err().message.contains("[runtimes.ollama]"));
    }

    #[test]
    fn config_set_is_validated_and_saved() {
        let c = Config::default();
        let mut v = serde_json::Map::new();
        v.insert("runtime.kind".into(), json!("ollama"));
        v.insert("runtime.model".into(), json!("m"));
        let next = c.with_values(&v).unwrap();
        assert_eq!(next.runtime.model(), Some("m"));
        v.insert("runtime.base_url".into(), json!("ftp://x"));
        assert!(c.with_values(&v).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config.toml");
        next.save(&path).unwrap();
        let back = Config::from_toml(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back, next);
    }

    #[test]
    fn http_runtime_keys_are_validated_and_env_lists_endpoints() {
        let c = Config::load(&env_of(&[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_RUNTIME", "openai"),
            (
                "LAIKA_BASE_URL",
                "http://127.0.0.1:1/v1, http://127.0.0.1:2/v1",
            ),
            ("LAIKA_PROFILE", "vllm"),
        ]))
        .unwrap()
        .0;
        let RuntimeConfig::OpenAi(openai) = &c.runtime else {
            panic!("{:?}", c.runtime)
        };
        assert_eq!(openai.http.base_url, None);
        assert_eq!(
            openai.http.base_urls,
            ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]
        );
        assert_eq!(openai.profile.as_deref(), Some("vllm"));
        let bad = |toml: &str, key: &str| {
            let msg = Config::from_toml(toml)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert!(msg.contains(key), "{toml}: {msg}");
            assert!(!msg.contains("s3cret"), "{msg}");
        };
        bad(
            "[runtime]\nkind = \"openai\"\nconnect_timeout_ms = 0\n",
            "runtime.connect_timeout_ms",
        );
        bad(
            "[runtime]\nkind = \"ollama\"\nbase_urls = [\"ftp://u:s3cret@x\"]\n",
            "runtime.base_urls",
        );
        bad(
            "[runtime]\nkind = \"openai\"\nbase_url = \"http://a\"\nbase_urls = [\"http://b\"]\n",
            "runtime.base_urls",
        );
        bad(
            "[runtime]\nkind = \"openai\"\nprofile = \"gpt\"\n",
            "runtime.profile",
        );
        bad(
            "[runtime]\nkind = \"openai\"\nprofile = \"openai\"\n",
            "runtime.base_url",
        );
        bad("[runtime]\nkind = \"ollama\"\n", "runtime.model");
        bad(
            "[runtime]\nkind = \"openai\"\nmax_tokens = 0\n",
            "runtime.max_tokens",
        );
        bad(
            "[runtime]\nkind = \"ollama\"\nmodel = \"m\"\nnum_ctx = 0\n",
            "runtime.num_ctx",
        );
        assert!(
            Config::from_toml("[runtime]\nkind = \"openai\"\nprofile = \"llama.cpp\"\n").is_ok()
        );
    }

    #[test]
    fn command_runtime_keys_are_validated_and_named() {
        let ok = Config::from_toml(
            "[runtime]\nkind = \"command\"\ncommand = \"python3\"\nargs = [\"/p/mock.py\", \"--mode\", \"ok\"]\ntimeout_ms = 5000\n[runtime.env]\nOLLAMA_HOST = \"http://127.0.0.1:11434\"\n",
        )
        .unwrap();
        let RuntimeConfig::Command(command) = &ok.runtime else {
            panic!("{:?}", ok.runtime)
        };
        assert_eq!(command.args, ["/p/mock.py", "--mode", "ok"]);
        assert_eq!(command.timeout_ms, Some(5000));
        assert_eq!(
            command.env.get("OLLAMA_HOST").map(String::as_str),
            Some("http://127.0.0.1:11434")
        );
        let back = Config::from_toml(&ok.to_toml().unwrap()).unwrap();
        assert_eq!(back, ok);

        let cases = [
            ("[runtime]\nkind = \"command\"\n", "runtime.command"),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"scripts/p.py\"\n",
                "runtime.command",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"./p\"\n",
                "runtime.command",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"\"\n",
                "runtime.command",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"p\"\ntimeout_ms = 0\n",
                "runtime.timeout_ms",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"p\"\nargs = [\"a\\u0000b\"]\n",
                "runtime.args[0]",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"p\"\n[runtime.env]\n\"A=B\" = \"x\"\n",
                "runtime.env",
            ),
            (
                "[runtime]\nkind = \"command\"\ncommand = \"p\"\n[runtime.env]\n\"1X\" = \"x\"\n",
                "runtime.env",
            ),
        ];
        for (toml, key) in cases {
            let msg = Config::from_toml(toml)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert!(msg.contains(key), "{toml:?} → {msg:?}");
        }
        let pairs: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_RUNTIME", "command"),
            ("LAIKA_COMMAND", "/usr/bin/plugin"),
        ];
        let (c, _) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(
            c.runtime,
            RuntimeConfig::Command(CommandConfig {
                command: Some(PathBuf::from("/usr/bin/plugin")),
                ..CommandConfig::default()
            })
        );
    }

    #[test]
    fn keys_of_another_kind_are_refused_by_name() {
        let cases = [
            (
                "[runtime]\nkind = \"openai\"\nnum_ctx = 8192\n",
                "runtime.num_ctx does not apply to runtime.kind = \"openai\"; it is a key of: ollama",
            ),
            (
                "[runtime]\nprofile = \"vllm\"\n",
                "runtime.profile does not apply to runtime.kind = \"builtin\" (the default: set runtime.kind)",
            ),
            (
                "[runtime]\nkind = \"ollama\"\nmodel = \"m\"\ncommand = \"p\"\n",
                "runtime.command does not apply",
            ),
        ];
        for (toml, want) in cases {
            let e = Config::from_toml(toml).unwrap_err();
            assert_eq!(e.code, ErrorCode::ConfigInvalid);
            assert!(e.message.contains(want), "{toml:?} → {:?}", e.message);
        }
    }

    #[test]
    fn environment_settings_apply_to_the_kinds_that_have_them() {
        let pairs: &'static [(&str, &str)] = &[
            ("LAIKA_CONFIG", "/nonexistent/x.toml"),
            ("LAIKA_MODEL", "m"),
            ("LAIKA_API_KEY", "sk-env"),
            ("LAIKA_PROFILE", "llama.cpp"),
        ];
        let (c, _) = Config::load(&env_of(pairs)).unwrap();
        assert_eq!(c.runtime, RuntimeConfig::Builtin);
        // Switching kind through `config.set` picks up what the environment
        // gave for the new kind; the sidebar's values win over it.
        let mut v = serde_json::Map::new();
        v.insert("runtime.kind".into(), json!("openai"));
        v.insert("runtime.base_url".into(), json!(null));
        v.insert("runtime.model".into(), json!("ui-model"));
        let next = c.with_values(&v).unwrap();
        let RuntimeConfig::OpenAi(openai) = &next.runtime else {
            panic!("{:?}", next.runtime)
        };
        assert_eq!(openai.profile.as_deref(), Some("llama.cpp"));
        assert_eq!(openai.http.model.as_deref(), Some("ui-model"));
        assert_eq!(
            openai.http.api_key.as_ref().map(|k| k.expose()),
            Some("sk-env")
        );
        // Values for keys the new kind lacks are dropped, as the sidebar
        // sends `base_url` and `model` whatever the kind.
        v.insert("runtime.kind".into(), json!("builtin"));
        v.insert("runtime.base_url".into(), json!("http://127.0.0.1:1/v1"));
        let back = next.with_values(&v).unwrap();
        assert_eq!(back.runtime, RuntimeConfig::Builtin);
        assert_eq!(back.public_view().runtime.base_url, None);
    }

    #[test]
    fn public_view_hides_api_key() {
        let c = Config {
            runtime: RuntimeConfig::OpenAi(OpenAiConfig {
                http: HttpConfig {
                    api_key: Some(ApiKey::new("sk-secret")),
                    ..HttpConfig::default()
                },
                profile: Some("llama.cpp".into()),
                ..OpenAiConfig::default()
            }),
            ..Config::default()
        };
        let v = serde_json::to_string(&c.public_view()).unwrap();
        assert!(!v.contains("sk-secret"));
        assert!(v.contains("\"api_key_set\":true"));
        let saved = c.to_toml().unwrap();
        assert!(
            saved.contains("sk-secret"),
            "the file is where the key lives"
        );
        assert_eq!(Config::from_toml(&saved).unwrap(), c);
        assert!(!format!("{c:?}").contains("sk-secret"));
    }
}

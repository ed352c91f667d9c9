//! The `[runtime]` table of the config file: which runtime answers and how
//! to reach it, one variant per kind. Loading (file, environment,
//! `config.set`) is the host's; every check of these keys is here or in the
//! adapter the key belongs to.
//!
//! The file keeps one flat table tagged by `kind` (`builtin` when absent).
//! A key of another kind is refused, naming the key and the kinds it belongs
//! to; so is a key no kind has. Settings from outside the file
//! ([`Setting`]) are different: one environment serves any kind, so each
//! applies to the kinds that have it and the others ignore it.

use crate::anthropic::AnthropicConfig;
use crate::command::CommandConfig;
use crate::http::{ApiKey, HttpConfig};
use crate::ollama::OllamaConfig;
use crate::openai::OpenAiConfig;
use crate::scripted::ScriptedConfig;
use crate::{config_error, unknown_value};
use laika_protocol::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// Runtime kinds this build can run, in [`RuntimeConfig`] order.
pub const RUNTIME_KINDS: &[&str] = &[
    "builtin",
    "scripted",
    "openai",
    "ollama",
    "anthropic",
    "command",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RuntimeConfig {
    /// The offline extractive answerer: no keys.
    #[default]
    Builtin,
    Scripted(ScriptedConfig),
    OpenAi(OpenAiConfig),
    Ollama(OllamaConfig),
    Anthropic(AnthropicConfig),
    Command(CommandConfig),
}

/// One runtime setting from outside the file (environment, `config.set`).
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// Switches to this kind, carrying over what applies to it.
    Kind(String),
    BaseUrl(Option<String>),
    BaseUrls(Vec<String>),
    Model(Option<String>),
    ApiKey(Option<ApiKey>),
    /// `None`: the default (`generic`).
    Profile(Option<String>),
    Script(PathBuf),
    Command(PathBuf),
}

impl RuntimeConfig {
    /// The config of `kind` with nothing set.
    pub fn of_kind(kind: &str) -> Result<RuntimeConfig> {
        Ok(match kind {
            "builtin" => RuntimeConfig::Builtin,
            "scripted" => RuntimeConfig::Scripted(ScriptedConfig::default()),
            "openai" => RuntimeConfig::OpenAi(OpenAiConfig::default()),
            "ollama" => RuntimeConfig::Ollama(OllamaConfig::default()),
            "anthropic" => RuntimeConfig::Anthropic(AnthropicConfig::default()),
            "command" => RuntimeConfig::Command(CommandConfig::default()),
            other => {
                return Err(config_error(format!(
                    "runtime.kind = {other:?} is not available in this build; use one of: {}",
                    RUNTIME_KINDS.join(", ")
                )))
            }
        })
    }

    /// The `kind` value, one of [`RUNTIME_KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeConfig::Builtin => "builtin",
            RuntimeConfig::Scripted(_) => "scripted",
            RuntimeConfig::OpenAi(_) => "openai",
            RuntimeConfig::Ollama(_) => "ollama",
            RuntimeConfig::Anthropic(_) => "anthropic",
            RuntimeConfig::Command(_) => "command",
        }
    }

    /// Every check of the runtime keys: the config file, the environment
    /// and `config.set` all come through here.
    pub fn validate(&self) -> Result<()> {
        match self {
            RuntimeConfig::Builtin => Ok(()),
            RuntimeConfig::Scripted(c) => c.script().map(drop),
            RuntimeConfig::OpenAi(c) => c.validate(),
            RuntimeConfig::Ollama(c) => c.validate(),
            RuntimeConfig::Anthropic(c) => c.validate(),
            RuntimeConfig::Command(c) => c.validate(),
        }
    }

    /// The keys of this kind besides `kind`.
    fn keys(&self) -> impl Iterator<Item = &'static str> {
        let (shared, own): (&[&str], &[&str]) = match self {
            RuntimeConfig::Builtin => (&[], &[]),
            RuntimeConfig::Scripted(_) => (&[], ScriptedConfig::KEYS),
            RuntimeConfig::OpenAi(_) => (HttpConfig::KEYS, OpenAiConfig::KEYS),
            RuntimeConfig::Ollama(_) => (HttpConfig::KEYS, OllamaConfig::KEYS),
            RuntimeConfig::Anthropic(_) => (HttpConfig::KEYS, AnthropicConfig::KEYS),
            RuntimeConfig::Command(_) => (&[], CommandConfig::KEYS),
        };
        shared.iter().chain(own).copied()
    }

    /// The HTTP settings, for the kinds that have them.
    pub fn http(&self) -> Option<&HttpConfig> {
        match self {
            RuntimeConfig::OpenAi(c) => Some(&c.http),
            RuntimeConfig::Ollama(c) => Some(&c.http),
            RuntimeConfig::Anthropic(c) => Some(&c.http),
            _ => None,
        }
    }

    fn http_mut(&mut self) -> Option<&mut HttpConfig> {
        match self {
            RuntimeConfig::OpenAi(c) => Some(&mut c.http),
            RuntimeConfig::Ollama(c) => Some(&mut c.http),
            RuntimeConfig::Anthropic(c) => Some(&mut c.http),
            _ => None,
        }
    }

    fn model_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            RuntimeConfig::Command(c) => Some(&mut c.model),
            other => other.http_mut().map(|h| &mut h.model),
        }
    }

    /// The base URLs an HTTP runtime tries, in order (defaults included);
    /// none for the other kinds.
    pub fn endpoints(&self) -> Result<Vec<String>> {
        match self {
            RuntimeConfig::OpenAi(c) => c.endpoints(&c.profile()?),
            RuntimeConfig::Ollama(c) => Ok(c.endpoints()),
            RuntimeConfig::Anthropic(c) => Ok(c.endpoints()),
            _ => Ok(Vec::new()),
        }
    }

    /// `runtime.model`, for the kinds that have one.
    pub fn model(&self) -> Option<&str> {
        match self {
            RuntimeConfig::Command(c) => c.model.as_deref(),
            other => other.http().and_then(|h| h.model.as_deref()),
        }
    }

    /// Applies `setting` if this kind has its key; a [`Setting::Kind`]
    /// switches kind, keeping the HTTP settings (or the model) when both
    /// kinds have them.
    pub fn apply(&mut self, setting: &Setting) -> Result<()> {
        match setting {
            Setting::Kind(kind) if kind == self.kind() => {}
            Setting::Kind(kind) => {
                let mut next = RuntimeConfig::of_kind(kind)?;
                if let (Some(from), Some(to)) = (self.http(), next.http_mut()) {
                    to.clone_from(from);
                } else if let Some(to) = next.model_mut() {
                    *to = self.model().map(str::to_string);
                }
                *self = next;
            }
            Setting::BaseUrl(url) => {
                if let Some(h) = self.http_mut() {
                    h.base_url.clone_from(url);
                }
            }
            Setting::BaseUrls(urls) => {
                if let Some(h) = self.http_mut() {
                    h.base_urls.clone_from(urls);
                }
            }
            Setting::Model(model) => {
                if let Some(m) = self.model_mut() {
                    m.clone_from(model);
                }
            }
            Setting::ApiKey(key) => {
                if let Some(h) = self.http_mut() {
                    h.api_key.clone_from(key);
                }
            }
            Setting::Profile(name) => {
                if let RuntimeConfig::OpenAi(c) = self {
                    c.profile.clone_from(name);
                }
            }
            Setting::Script(path) => {
                if let RuntimeConfig::Scripted(c) = self {
                    c.script = Some(path.clone());
                }
            }
            Setting::Command(path) => {
                if let RuntimeConfig::Command(c) = self {
                    c.command = Some(path.clone());
                }
            }
        }
        Ok(())
    }

    /// The config a `[runtime]` table holds: `kind` (default `builtin`),
    /// then only that kind's keys.
    fn from_table(mut table: Map<String, Value>) -> Result<RuntimeConfig> {
        let kind = match table.remove("kind") {
            None => "builtin".to_string(),
            Some(Value::String(kind)) => kind,
            Some(other) => {
                return Err(unknown_value(
                    "runtime.kind",
                    &other.to_string(),
                    RUNTIME_KINDS,
                ))
            }
        };
        let empty = RuntimeConfig::of_kind(&kind)?;
        if let Some(key) = table.keys().find(|k| !empty.keys().any(|own| own == *k)) {
            return Err(misplaced_key(key, &empty));
        }
        Ok(match empty {
            RuntimeConfig::Builtin => RuntimeConfig::Builtin,
            RuntimeConfig::Scripted(_) => RuntimeConfig::Scripted(parse(table)?),
            RuntimeConfig::OpenAi(_) => RuntimeConfig::OpenAi(parse(table)?),
            RuntimeConfig::Ollama(_) => RuntimeConfig::Ollama(parse(table)?),
            RuntimeConfig::Anthropic(_) => RuntimeConfig::Anthropic(parse(table)?),
            RuntimeConfig::Command(_) => RuntimeConfig::Command(parse(table)?),
        })
    }
}

/// The error for a key `config` does not take: which kinds take it, if any.
fn misplaced_key(key: &str, config: &RuntimeConfig) -> Error {
    let owners: Vec<&str> = RUNTIME_KINDS
        .iter()
        .copied()
        .filter(|k| RuntimeConfig::of_kind(k).is_ok_and(|c| c.keys().any(|own| own == key)))
        .collect();
    if owners.is_empty() {
        return config_error(format!("runtime.{key} is not a config key"));
    }
    config_error(format!(
        "runtime.{key} does not apply to runtime.kind = {:?}{}; it is a key of: {}",
        config.kind(),
        if config.kind() == "builtin" {
            " (the default: set runtime.kind)"
        } else {
            ""
        },
        owners.join(", ")
    ))
}

/// One kind's keys into its struct. serde's messages do not say which key
/// is wrong, so the first key that fails on its own is named.
fn parse<T: DeserializeOwned>(table: Map<String, Value>) -> Result<T> {
    let table = Value::Object(table);
    T::deserialize(&table).map_err(|e| {
        let culprit = table
            .as_object()
            .into_iter()
            .flatten()
            .find(|(key, value)| {
                let alone = Map::from_iter([((*key).clone(), (*value).clone())]);
                T::deserialize(Value::Object(alone)).is_err()
            });
        match culprit {
            Some((key, _)) => config_error(format!("runtime.{key}: {e}")),
            None => config_error(format!("runtime: {e}")),
        }
    })
}

impl<'de> Deserialize<'de> for RuntimeConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = Map::<String, Value>::deserialize(deserializer)?;
        RuntimeConfig::from_table(table).map_err(|e| serde::de::Error::custom(e.message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn table(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not a table: {other}"),
        }
    }

    fn error(v: Value) -> String {
        match RuntimeConfig::from_table(table(v.clone())) {
            Err(e) => e.message,
            Ok(c) => panic!("accepted {v}: {c:?}"),
        }
    }

    fn http_all() -> HttpConfig {
        HttpConfig {
            base_url: Some("http://a".into()),
            base_urls: vec!["http://b".into()],
            model: Some("m".into()),
            api_key: Some(ApiKey::new("k")),
            connect_timeout_ms: 1,
            first_token_timeout_ms: 2,
            total_timeout_ms: 3,
        }
    }

    /// Every kind with every field set: no `..Default::default()`, so a new
    /// field must be added here, and then to its `KEYS`.
    fn every_field_set() -> Vec<RuntimeConfig> {
        vec![
            RuntimeConfig::Builtin,
            RuntimeConfig::Scripted(ScriptedConfig {
                script: Some("/s.json".into()),
            }),
            RuntimeConfig::OpenAi(OpenAiConfig {
                http: http_all(),
                profile: Some("vllm".into()),
                schema_mode: Some("none".into()),
                schema_strict: Some(true),
                thinking_off: Some("none".into()),
                reasoning_effort: Some("low".into()),
                stream_usage: Some(true),
                max_tokens: Some(9),
            }),
            RuntimeConfig::Ollama(OllamaConfig {
                http: http_all(),
                num_ctx: Some(9),
                keep_alive: Some("5m".into()),
                thinking_off: Some("none".into()),
            }),
            RuntimeConfig::Anthropic(AnthropicConfig {
                http: http_all(),
                max_tokens: Some(9),
            }),
            RuntimeConfig::Command(CommandConfig {
                command: Some("/bin/p".into()),
                args: vec!["a".into()],
                timeout_ms: Some(9),
                env: BTreeMap::from([("A".to_string(), "b".to_string())]),
                model: Some("m".into()),
                tool_loop: true,
            }),
        ]
    }

    #[test]
    fn keys_are_exactly_the_serialized_fields_and_round_trip() {
        let kinds: Vec<&str> = every_field_set().iter().map(|c| c.kind()).collect();
        assert_eq!(kinds, RUNTIME_KINDS);
        for config in every_field_set() {
            let Value::Object(mut serialized) = serde_json::to_value(&config).unwrap() else {
                panic!("not a table")
            };
            assert_eq!(serialized.remove("kind"), Some(json!(config.kind())));
            let mut fields: Vec<&str> = serialized.keys().map(String::as_str).collect();
            let mut keys: Vec<&str> = config.keys().collect();
            fields.sort_unstable();
            keys.sort_unstable();
            assert_eq!(fields, keys, "{}", config.kind());
            serialized.insert("kind".into(), json!(config.kind()));
            assert_eq!(RuntimeConfig::from_table(serialized).unwrap(), config);
        }
    }

    #[test]
    fn kind_defaults_to_builtin_and_unknown_kinds_are_named() {
        assert_eq!(
            RuntimeConfig::from_table(Map::new()).unwrap(),
            RuntimeConfig::Builtin
        );
        let m = error(json!({"kind": "gpt"}));
        assert!(
            m.contains("runtime.kind = \"gpt\"") && m.contains("ollama"),
            "{m}"
        );
        let m = error(json!({"kind": 3}));
        assert!(m.contains("runtime.kind"), "{m}");
    }

    #[test]
    fn keys_of_other_kinds_and_unknown_keys_are_refused_by_name() {
        let m = error(json!({"kind": "openai", "num_ctx": 4}));
        assert!(
            m.contains("runtime.num_ctx") && m.contains("\"openai\"") && m.ends_with("ollama"),
            "{m}"
        );
        let m = error(json!({"model": "m"}));
        assert!(
            m.contains("runtime.model")
                && m.contains("set runtime.kind")
                && m.contains("openai, ollama, anthropic, command"),
            "{m}"
        );
        let m = error(json!({"kind": "command", "command": "p", "api_key": "k"}));
        assert!(m.contains("runtime.api_key") && !m.contains("\"k\""), "{m}");
        let m = error(json!({"kind": "ollama", "modle": "m"}));
        assert!(m.contains("runtime.modle is not a config key"), "{m}");
    }

    #[test]
    fn bad_value_types_name_their_key() {
        let m = error(json!({"kind": "openai", "model": "m", "total_timeout_ms": "soon"}));
        assert!(m.starts_with("runtime.total_timeout_ms: "), "{m}");
        let m = error(json!({"kind": "command", "env": {"A": 1}}));
        assert!(m.starts_with("runtime.env: "), "{m}");
    }

    #[test]
    fn settings_apply_where_the_key_exists_and_switching_keeps_what_applies() {
        let mut c = RuntimeConfig::Builtin;
        for s in [
            Setting::BaseUrl(Some("http://x".into())),
            Setting::Model(Some("m".into())),
            Setting::Profile(Some("vllm".into())),
        ] {
            c.apply(&s).unwrap();
        }
        assert_eq!(c, RuntimeConfig::Builtin, "builtin has none of them");

        c.apply(&Setting::Kind("openai".into())).unwrap();
        c.apply(&Setting::BaseUrl(Some("http://x".into()))).unwrap();
        c.apply(&Setting::Model(Some("m".into()))).unwrap();
        c.apply(&Setting::ApiKey(Some(ApiKey::new("k")))).unwrap();
        c.apply(&Setting::Profile(Some("vllm".into()))).unwrap();
        c.apply(&Setting::Kind("ollama".into())).unwrap();
        let RuntimeConfig::Ollama(o) = &c else {
            panic!("{c:?}")
        };
        assert_eq!(o.http.base_url.as_deref(), Some("http://x"));
        assert_eq!(o.http.api_key, Some(ApiKey::new("k")));
        assert_eq!(c.model(), Some("m"));
        c.apply(&Setting::Kind("command".into())).unwrap();
        assert_eq!(c.model(), Some("m"));
        assert!(c.http().is_none());
        c.apply(&Setting::Command("/bin/p".into())).unwrap();
        assert!(c.validate().is_ok());
        c.apply(&Setting::Kind("command".into())).unwrap();
        assert_eq!(c.kind(), "command", "same kind: nothing changes");
        assert!(c.validate().is_ok());
        let e = c.apply(&Setting::Kind("skynet".into())).unwrap_err();
        assert!(e.message.contains("runtime.kind"), "{}", e.message);
        assert_eq!(c.kind(), "command");
    }

    #[test]
    fn the_api_key_never_shows_in_debug() {
        let c = RuntimeConfig::OpenAi(OpenAiConfig {
            http: http_all(),
            ..OpenAiConfig::default()
        });
        let key = c.http().and_then(|h| h.api_key.clone()).unwrap();
        assert_eq!(key.expose(), "k");
        let shown = format!("{c:?} {:?}", Setting::ApiKey(Some(ApiKey::new("sk-9"))));
        assert!(
            !shown.contains("\"k\"") && !shown.contains("sk-9"),
            "{shown}"
        );
    }
}

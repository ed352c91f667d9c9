//! Runtime profiles: what one OpenAI-compatible server family needs in a chat
//! request, as data.
//!
//! Servers that all speak `POST /chat/completions` still differ in where a
//! JSON Schema goes, how Qwen3-style thinking is switched off and whether
//! `stream_options` is accepted. A [`Profile`] records those choices; the
//! built-in table covers the servers we document, and `runtime.schema_mode`,
//! `runtime.thinking_off` and `runtime.stream_usage` override single entries
//! (the `openai` adapter applies its config to the profile it names).
//!
//! Invariant: whatever the profile, the system prompt sketches the answer's
//! shape (see `prompt.rs`), so a server that ignores the schema field still
//! gets it; the profile only adds the strongest native enforcement the server
//! has, and its capability tells the turn whether the server enforces it.

use serde_json::{json, Map, Value};

/// Profile names accepted by `runtime.profile` / `LAIKA_PROFILE`.
pub const PROFILE_NAMES: &[&str] = &[
    "llama.cpp",
    "vllm",
    "sglang",
    "mlx",
    "lmstudio",
    "openai",
    "generic",
];

/// The name `runtime.schema_mode` values and [`SchemaMode::as_str`] use.
pub const SCHEMA_MODES: &[&str] = &[
    "json_schema",
    "top_level_json_schema",
    "json_object",
    "none",
];

/// The values `runtime.thinking_off` accepts.
pub const THINKING_MODES: &[&str] = &["chat_template_kwargs", "reasoning_effort", "none"];

/// The name the schema travels under in `response_format.json_schema.name`.
pub const SCHEMA_NAME: &str = "laika_llmcp_response";

/// Where the response JSON Schema goes in the request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaMode {
    /// `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`.
    JsonSchema { strict: bool },
    /// llama.cpp's own top-level `json_schema` (converted to a grammar).
    TopLevelJsonSchema,
    /// `response_format: {type: "json_object"}`: valid JSON, shape from the prompt.
    JsonObject,
    /// Nothing: the prompt alone carries the schema.
    None,
}

impl SchemaMode {
    /// The mode [`SCHEMA_MODES`] names; `strict` applies to `json_schema`.
    pub fn parse(name: &str, strict: bool) -> Option<SchemaMode> {
        match name {
            "json_schema" => Some(SchemaMode::JsonSchema { strict }),
            "top_level_json_schema" => Some(SchemaMode::TopLevelJsonSchema),
            "json_object" => Some(SchemaMode::JsonObject),
            "none" => Some(SchemaMode::None),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SchemaMode::JsonSchema { .. } => "json_schema",
            SchemaMode::TopLevelJsonSchema => "top_level_json_schema",
            SchemaMode::JsonObject => "json_object",
            SchemaMode::None => "none",
        }
    }
}

/// How the request asks the model not to think aloud (a `<think>` block or a
/// reasoning stream costs time and can break strict JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingOff {
    /// `chat_template_kwargs: {enable_thinking: false}` (Qwen3 chat templates).
    ChatTemplateKwargs,
    /// `reasoning_effort: <runtime.reasoning_effort or "low">` (hosted reasoning models).
    ReasoningEffort,
    /// Nothing is sent.
    None,
}

impl ThinkingOff {
    /// The mode [`THINKING_MODES`] names.
    pub fn parse(name: &str) -> Option<ThinkingOff> {
        match name {
            "chat_template_kwargs" => Some(ThinkingOff::ChatTemplateKwargs),
            "reasoning_effort" => Some(ThinkingOff::ReasoningEffort),
            "none" => Some(ThinkingOff::None),
            _ => None,
        }
    }
}

/// The structured-output strength a profile gives; the strongest one the
/// server has is used (docs/runtimes.md#profiles-openai).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// The server constrains decoding to the schema.
    NativeSchema,
    /// The server guarantees JSON, not the shape.
    JsonMode,
    /// Only the prompt asks for the shape.
    PromptOnly,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    pub schema: SchemaMode,
    pub thinking_off: ThinkingOff,
    /// The streamed delta field that holds reasoning text: dropped from the
    /// answer, but it shows the model is alive (ends the first-token wait).
    pub reasoning_field: Option<&'static str>,
    /// Whether `stream_options: {include_usage: true}` is accepted.
    pub stream_usage: bool,
    /// Used when no `runtime.base_url` is set. Hosted APIs have none on
    /// purpose: page content leaves the machine only when a URL says so.
    pub default_base_url: Option<&'static str>,
}

const fn entry(
    name: &'static str,
    schema: SchemaMode,
    thinking_off: ThinkingOff,
    reasoning_field: Option<&'static str>,
    stream_usage: bool,
    default_base_url: Option<&'static str>,
) -> Profile {
    Profile {
        name,
        schema,
        thinking_off,
        reasoning_field,
        stream_usage,
        default_base_url,
    }
}

/// The built-in table, in [`PROFILE_NAMES`] order.
fn table() -> [Profile; 7] {
    use SchemaMode as S;
    use ThinkingOff as T;
    let rc = Some("reasoning_content");
    [
        entry(
            "llama.cpp",
            S::TopLevelJsonSchema,
            T::ChatTemplateKwargs,
            rc,
            false,
            Some("http://127.0.0.1:8080/v1"),
        ),
        entry(
            "vllm",
            S::JsonSchema { strict: true },
            T::ChatTemplateKwargs,
            rc,
            true,
            Some("http://127.0.0.1:8000/v1"),
        ),
        entry(
            "sglang",
            S::JsonSchema { strict: true },
            T::ChatTemplateKwargs,
            rc,
            true,
            Some("http://127.0.0.1:30000/v1"),
        ),
        entry(
            "mlx",
            S::None,
            T::ChatTemplateKwargs,
            Some("reasoning"),
            false,
            Some("http://127.0.0.1:8080/v1"),
        ),
        entry(
            "lmstudio",
            S::JsonSchema { strict: true },
            T::None,
            rc,
            false,
            Some("http://127.0.0.1:1234/v1"),
        ),
        // Our schema is not in OpenAI's strict subset (optional fields), so
        // strict mode would be refused; the host validates anyway.
        entry(
            "openai",
            S::JsonSchema { strict: false },
            T::None,
            Some("reasoning"),
            true,
            None,
        ),
        entry("generic", S::JsonObject, T::None, None, false, None),
    ]
}

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Profile> {
        table().into_iter().find(|p| p.name == name)
    }

    pub fn capability(&self) -> Capability {
        match self.schema {
            SchemaMode::JsonSchema { .. } | SchemaMode::TopLevelJsonSchema => {
                Capability::NativeSchema
            }
            SchemaMode::JsonObject => Capability::JsonMode,
            SchemaMode::None => Capability::PromptOnly,
        }
    }

    /// Adds this profile's schema, thinking and streaming fields to a chat
    /// request body.
    pub fn apply(&self, body: &mut Map<String, Value>, schema: &Value, reasoning_effort: &str) {
        match self.schema {
            SchemaMode::JsonSchema { strict } => {
                body.insert(
                    "response_format".into(),
                    json!({
                        "type": "json_schema",
                        "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": strict},
                    }),
                );
            }
            SchemaMode::TopLevelJsonSchema => {
                body.insert("json_schema".into(), schema.clone());
            }
            SchemaMode::JsonObject => {
                body.insert("response_format".into(), json!({"type": "json_object"}));
            }
            SchemaMode::None => {}
        }
        match self.thinking_off {
            ThinkingOff::ChatTemplateKwargs => {
                body.insert(
                    "chat_template_kwargs".into(),
                    json!({"enable_thinking": false}),
                );
            }
            ThinkingOff::ReasoningEffort => {
                body.insert("reasoning_effort".into(), json!(reasoning_effort));
            }
            ThinkingOff::None => {}
        }
        if self.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_table_entry_in_order() {
        let names: Vec<&str> = table().iter().map(|p| p.name).collect();
        assert_eq!(names, PROFILE_NAMES);
    }

    #[test]
    fn capability_follows_schema_placement() {
        let cap = |n: &str| Profile::builtin(n).unwrap().capability();
        assert_eq!(cap("llama.cpp"), Capability::NativeSchema);
        assert_eq!(cap("vllm"), Capability::NativeSchema);
        assert_eq!(cap("openai"), Capability::NativeSchema);
        assert_eq!(cap("generic"), Capability::JsonMode);
        assert_eq!(cap("mlx"), Capability::PromptOnly);
    }

    #[test]
    fn names_parse_back_to_their_modes() {
        for name in SCHEMA_MODES {
            let mode = SchemaMode::parse(name, true);
            assert_eq!(mode.map(SchemaMode::as_str), Some(*name));
        }
        assert!(THINKING_MODES
            .iter()
            .all(|name| ThinkingOff::parse(name).is_some()));
        assert_eq!(SchemaMode::parse("grammar", true), None);
        assert_eq!(ThinkingOff::parse("off"), None);
    }
}

//! The model runtimes that reach out: HTTP servers (openai, ollama,
//! anthropic), plugins (`command`) and scripts (`scripted`), each behind
//! `laika_core::runtime::Runtime`, and `from_config`, which builds the one the
//! config names (the offline `builtin` one included, from `laika-builtin`).

pub mod anthropic;
pub mod command;
pub mod config;
pub mod context_window;
pub mod discover;
pub mod executor;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod profile;
pub mod scripted;
#[cfg(test)]
mod test_support;

pub use laika_core::cancel::CancelToken;
pub use laika_core::decoding::Decoding;
pub use laika_core::model::{ModelReply, ModelRequest, RetryFeedback};
use laika_core::runtime::Runtime;
use laika_protocol::error::{Error, ErrorCode, Result};
pub use laika_protocol::model::RuntimeInfo;
use std::sync::Arc;

/// Builds the runtime the config names, checking it first.
pub fn from_config(config: &config::RuntimeConfig) -> Result<Arc<dyn Runtime>> {
    use config::RuntimeConfig as C;
    config.validate()?;
    Ok(match config {
        C::Builtin => Arc::new(laika_builtin::BuiltinRuntime::new(SystemAmbient)),
        C::Scripted(c) => Arc::new(scripted::Scripted::from_file(c.script()?)?),
        C::OpenAi(c) => Arc::new(openai::OpenAiRuntime::from_config(c)?),
        C::Ollama(c) => Arc::new(ollama::OllamaRuntime::from_config(c)?),
        C::Anthropic(c) => Arc::new(anthropic::AnthropicRuntime::from_config(c)?),
        C::Command(c) => Arc::new(command::CommandRuntime::from_config(c)?),
    })
}

fn config_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::ConfigInvalid, message)
}

/// `key = value` is not one of `allowed`.
fn unknown_value(key: &str, value: &str, allowed: &[&str]) -> Error {
    config_error(format!(
        "{key} = {value:?} is unknown; use one of: {}",
        allowed.join(", ")
    ))
}

/// The real clock and random ids, for the edges that need an
/// [`Ambient`](laika_core::ambient::Ambient).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemAmbient;

impl laika_core::ambient::Ambient for SystemAmbient {
    fn now_iso8601(&self) -> String {
        humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
    }

    fn new_id(&self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    fn monotonic(&self) -> std::time::Duration {
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        ORIGIN.get_or_init(std::time::Instant::now).elapsed()
    }
}

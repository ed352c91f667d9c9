//! LLM runtimes behind one trait.
//!
//! A runtime turns a model request (prompts plus the `laika.llmcp` request
//! packet) into raw model text. It never parses or trusts that text: the turn
//! does (see `model_output` and `schema`). So the offline `builtin` runtime
//! goes through exactly the same validation as a real model.

pub mod builtin;
pub mod command;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod profile;
pub mod scripted;

use crate::error::{Error, ErrorCode, Result};
use crate::llmcp::RequestPacket;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the host tells the extension about the runtime in use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeInfo {
    /// `builtin`, `scripted`, `openai`, `ollama`, `command`.
    pub kind: String,
    /// The model id, as stored with each response.
    pub model: String,
    /// True when no network is involved.
    pub offline: bool,
    /// A short label for the UI ("Offline extractive (no AI model)").
    pub label: String,
}

/// Why the previous attempt was rejected, fed back on a retry (CLAIJ seed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryFeedback {
    /// The invalid output, as the model wrote it.
    pub previous_output: String,
    /// One line per problem: `"<json path>: <message>"`.
    pub errors: Vec<String>,
}

/// One call to the model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub packet: RequestPacket,
    /// The JSON Schema the answer must match: adapters with native
    /// constrained output pass it to the runtime.
    pub response_schema: serde_json::Value,
    /// Fixed instructions; never contains page content.
    pub system_prompt: String,
    /// The serialized request packet (and, on retries, the feedback).
    pub user_prompt: String,
    /// 0 for the first try, 1..=3 for retries.
    pub attempt: u32,
    pub feedback: Option<RetryFeedback>,
}

/// The model's raw answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelReply {
    pub text: String,
    pub model: String,
    /// The runtime's own reason (`stop`, `length`, …) when it gives one;
    /// `length` means the output was cut and must not be retried as if invalid.
    pub finish_reason: Option<String>,
    /// Which endpoint answered, when the runtime has several.
    pub endpoint: Option<String>,
}

/// A cancellation flag shared between the session and a running turn.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// `Err(CANCELLED)` once cancelled; call between steps of long work.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::new(ErrorCode::Cancelled, "the turn was cancelled"))
        } else {
            Ok(())
        }
    }
}

/// Receives the model's text as it streams: each call is the next piece.
pub type TextSink<'a> = dyn FnMut(&str) + 'a;

pub trait Runtime: Send + Sync {
    fn info(&self) -> RuntimeInfo;
    /// Asks the model. Streaming runtimes call `on_text` with each piece as it
    /// arrives; the returned reply always holds the whole text.
    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply>;
}

/// Builds the runtime the config names.
pub fn from_config(config: &crate::config::Config) -> Result<Arc<dyn Runtime>> {
    match config.runtime.kind.as_str() {
        "builtin" => Ok(Arc::new(builtin::BuiltinRuntime)),
        "scripted" => {
            let path = config.runtime.script.as_deref().ok_or_else(|| {
                Error::new(
                    ErrorCode::ConfigInvalid,
                    "runtime.script is required for the scripted runtime",
                )
            })?;
            Ok(Arc::new(scripted::Scripted::from_file(path)?))
        }
        "command" => Ok(Arc::new(command::CommandRuntime::from_config(
            &config.runtime,
        )?)),
        "openai" => Ok(Arc::new(openai::OpenAiRuntime::from_config(
            &config.runtime,
        )?)),
        "ollama" => Ok(Arc::new(ollama::OllamaRuntime::from_config(
            &config.runtime,
        )?)),
        other => Err(Error::new(
            ErrorCode::ConfigInvalid,
            format!("runtime.kind = {other:?} is not available in this build"),
        )),
    }
}

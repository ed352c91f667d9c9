//! The `Runtime` trait: how a turn asks a model. The engine never calls it
//! (it returns `Action::Ask`); its drivers do, with whichever runtime the
//! host built. The adapters live in `laika-runtime` (HTTP, plugins, a
//! script) and `laika-builtin` (the offline extractive runtime).
//!
//! A runtime turns a model request (prompts plus the `laika.llmcp` request
//! packet) into raw model text. It never parses or trusts that text: the turn
//! does (see `model_output` and `schema`). So the offline `builtin` runtime
//! goes through exactly the same validation as a real model.

use crate::cancel::CancelToken;
use crate::decoding::Decoding;
use crate::model::{ModelReply, ModelRequest};
use laika_protocol::error::Result;
use laika_protocol::model::RuntimeInfo;

/// Receives the model's text as it streams: each call is the next piece.
pub type TextSink<'a> = dyn FnMut(&str) + 'a;

pub trait Runtime: Send + Sync {
    fn info(&self) -> RuntimeInfo;
    /// Whether the runtime enforces the answer schema natively, and its
    /// output token cap: the turn sizes the answer schema and chooses the
    /// prompt's shape text from it. Prompt-only, no cap, unless overridden.
    fn decoding(&self) -> Decoding {
        Decoding::default()
    }
    /// Asks the model. Streaming runtimes call `on_text` with each piece as it
    /// arrives; the returned reply always holds the whole text.
    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply>;
}

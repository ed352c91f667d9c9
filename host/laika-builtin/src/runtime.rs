//! The builtin runtime behind the `Runtime` trait: the answers are
//! [`respond`]'s; this adapter gives them the `Runtime` shape, with the clock
//! and ids of the `Ambient` it was built with (the system's in the host).

use crate::{respond, LABEL, MODEL_ID};
use laika_core::ambient::Ambient;
use laika_core::cancel::CancelToken;
use laika_core::model::{ModelReply, ModelRequest};
use laika_core::runtime::{Runtime, TextSink};
use laika_protocol::error::{Error, Result};
use laika_protocol::model::RuntimeInfo;

/// The offline extractive runtime.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinRuntime<A> {
    ambient: A,
}

impl<A: Ambient> BuiltinRuntime<A> {
    /// The runtime, stamping its answers with `ambient`'s clock and ids.
    pub const fn new(ambient: A) -> BuiltinRuntime<A> {
        BuiltinRuntime { ambient }
    }
}

impl<A: Ambient> Runtime for BuiltinRuntime<A> {
    fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            kind: "builtin".into(),
            model: MODEL_ID.into(),
            offline: true,
            label: LABEL.into(),
        }
    }

    fn complete(
        &self,
        request: &ModelRequest,
        cancel: &CancelToken,
        on_text: &mut TextSink<'_>,
    ) -> Result<ModelReply> {
        let packet = respond(&request.packet, &self.ambient, cancel)?;
        let text = serde_json::to_string(&packet).map_err(|e| {
            Error::internal(format!(
                "builtin runtime: cannot serialize its response: {e}"
            ))
        })?;
        on_text(&text);
        Ok(ModelReply {
            text,
            model: MODEL_ID.into(),
            finish_reason: Some("stop".into()),
            endpoint: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_core::ambient::Fixed;
    use laika_protocol::error::ErrorCode;

    #[test]
    fn info_describes_an_offline_builtin() {
        let info = BuiltinRuntime::new(Fixed::new()).info();
        assert_eq!(info.kind, "builtin");
        assert_eq!(info.model, "laika-builtin-extractive-v1");
        assert!(info.offline);
        assert_eq!(
            info.label,
            "Offline extractive (no AI model): quotes the page"
        );
    }

    #[test]
    fn a_cancelled_request_is_not_answered() {
        let packet = serde_json::from_value(serde_json::json!({
            "protocol": {"name": "laika.llmcp", "version": 1},
            "id": "req-1", "type": "request", "created_at": "2026-01-24T12:34:56.789Z",
            "conversation": {"id": "c-1", "turn": 1}, "sender": {"role": "agent"},
            "input": {"user_message": {"id": "u-1", "text": "summarize"}, "task": {"name": "web.summarize", "args": {}}},
            "context": {"documents": []}, "output": {"format": "json"}
        }))
        .unwrap();
        let request = ModelRequest {
            packet,
            response_schema: serde_json::Value::Null,
            system_prompt: String::new(),
            user_prompt: String::new(),
            attempt: 0,
            feedback: None,
            max_output_tokens: None,
        };
        let cancel = CancelToken::default();
        cancel.cancel();
        let err = BuiltinRuntime::new(Fixed::new()).complete(&request, &cancel, &mut |_| {});
        assert_eq!(err.err().map(|e| e.code), Some(ErrorCode::Cancelled));
    }
}

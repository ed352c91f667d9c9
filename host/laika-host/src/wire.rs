//! The wire protocol's outbound envelope with a fresh id per message; the
//! protocol itself is `laika_core::wire`.

use laika_core::ambient::Ambient;
use laika_core::error::Error;
pub use laika_core::wire::*;
use laika_runtime::SystemAmbient;
use serde_json::Value;

/// An outbound message: `{type, id, reply_to, ...body}`.
pub fn message(kind: &str, reply_to: Option<&str>, body: Value) -> Value {
    laika_core::wire::message(SystemAmbient.new_id(), kind, reply_to, body)
}

/// An `error` message.
pub fn error_message(reply_to: Option<&str>, error: &Error) -> Value {
    laika_core::wire::error_message(SystemAmbient.new_id(), reply_to, error)
}

//! The edge where typed events become JSON: each gets its envelope
//! (`type`, a fresh `id`, `reply_to`) here and nowhere else.

use crate::transport::Outbox;
use laika_core::ambient::Ambient;
use laika_protocol::event::{Event, Message, Sink};
use laika_protocol::ids::RequestId;
use laika_runtime::SystemAmbient;
use serde_json::Value;
use std::sync::Mutex;

/// `event` in its envelope, as JSON.
pub fn to_json(reply_to: Option<&RequestId>, event: &Event) -> Value {
    let message = Message {
        id: SystemAmbient.new_id(),
        reply_to,
        event,
    };
    // Events are plain data (strings, numbers, maps with string keys): their
    // serialization cannot fail. Should it ever, the peer still gets a coded error.
    serde_json::to_value(&message).unwrap_or_else(|e| {
        let internal = Event::error(&laika_protocol::error::Error::internal(format!(
            "an event could not be serialized: {e}"
        )));
        serde_json::to_value(Message {
            id: SystemAmbient.new_id(),
            reply_to,
            event: &internal,
        })
        .unwrap_or(Value::Null)
    })
}

/// Sends events to the stdio writer.
pub struct OutboxSink(pub Outbox);

impl Sink for OutboxSink {
    fn emit(&self, reply_to: Option<&RequestId>, event: Event) {
        let json = to_json(reply_to, &event);
        if crate::stage_times::on() {
            let stage = format!("queued {}", json["type"].as_str().unwrap_or("?"));
            crate::stage_times::mark(&stage);
        }
        self.0.send(json);
    }
}

/// Keeps events in order, as JSON: for replay and tests.
#[derive(Default)]
pub struct Collector(Mutex<Vec<Value>>);

impl Collector {
    /// Everything emitted so far, leaving the collector empty.
    pub fn take(&self) -> Vec<Value> {
        match self.0.lock() {
            Ok(mut events) => std::mem::take(&mut *events),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

impl Sink for Collector {
    fn emit(&self, reply_to: Option<&RequestId>, event: Event) {
        let json = to_json(reply_to, &event);
        match self.0.lock() {
            Ok(mut events) => events.push(json),
            Err(poisoned) => poisoned.into_inner().push(json),
        }
    }
}

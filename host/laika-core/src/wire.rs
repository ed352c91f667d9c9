//! Wire protocol v1 between the extension and the host (`docs/wire-protocol.md`,
//! schema in `docs/wire-protocol.schema.json`).
//!
//! Every message is a JSON object with `type` and `id`; every host message that
//! answers something names it in `reply_to`. Inbound messages are parsed into
//! [`Request`]; outbound ones are [`crate::event::Event`]s.

use crate::error::{Error, ErrorCode, Result};
use crate::llmcp::Task;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const WIRE_PROTOCOL_NAME: &str = "laika.wire";
pub const WIRE_PROTOCOL_VERSION: u32 = 1;

/// Ids are echoed back and stored: keep them short and printable.
const MAX_ID_LEN: usize = 128;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WireProtocol {
    pub name: String,
    pub version: u32,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserText {
    pub text: String,
}

/// The tab the observation came from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Tab {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub tab_id: Option<Value>,
    #[serde(default)]
    pub browser: Option<String>,
}

/// A `turn` request: one user message about one observed page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TurnRequest {
    pub id: String,
    #[serde(default)]
    pub conversation_id: Option<String>,
    pub message: UserText,
    pub task: Task,
    #[serde(default)]
    pub tab: Tab,
    /// Validated separately so a bad observation gets `INVALID_OBSERVATION`.
    pub observation: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    #[default]
    Json,
    Html,
}

/// Every message the extension may send.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum Request {
    #[serde(rename = "hello")]
    Hello {
        id: String,
        #[serde(default)]
        protocol: Option<WireProtocol>,
        #[serde(default)]
        client: Option<Value>,
    },
    #[serde(rename = "turn")]
    Turn(Box<TurnRequest>),
    #[serde(rename = "cancel")]
    Cancel { id: String, target: String },
    #[serde(rename = "history.list")]
    HistoryList {
        id: String,
        #[serde(default)]
        limit: Option<usize>,
        #[serde(default)]
        offset: Option<usize>,
    },
    #[serde(rename = "history.get")]
    HistoryGet { id: String, conversation_id: String },
    #[serde(rename = "history.search")]
    HistorySearch {
        id: String,
        query: String,
        #[serde(default)]
        limit: Option<usize>,
    },
    #[serde(rename = "history.delete")]
    HistoryDelete { id: String, conversation_id: String },
    #[serde(rename = "history.export")]
    HistoryExport {
        id: String,
        conversation_id: String,
        #[serde(default)]
        format: ExportFormat,
    },
    #[serde(rename = "config.get")]
    ConfigGet { id: String },
    #[serde(rename = "config.set")]
    ConfigSet {
        id: String,
        values: Map<String, Value>,
    },
    #[serde(rename = "ping")]
    Ping { id: String },
}

pub const REQUEST_TYPES: &[&str] = &[
    "hello",
    "turn",
    "cancel",
    "history.list",
    "history.get",
    "history.search",
    "history.delete",
    "history.export",
    "config.get",
    "config.set",
    "ping",
];

impl Request {
    /// The wire `type` of this request.
    pub fn kind(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Turn(_) => "turn",
            Request::Cancel { .. } => "cancel",
            Request::HistoryList { .. } => "history.list",
            Request::HistoryGet { .. } => "history.get",
            Request::HistorySearch { .. } => "history.search",
            Request::HistoryDelete { .. } => "history.delete",
            Request::HistoryExport { .. } => "history.export",
            Request::ConfigGet { .. } => "config.get",
            Request::ConfigSet { .. } => "config.set",
            Request::Ping { .. } => "ping",
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Request::Turn(t) => &t.id,
            Request::Hello { id, .. }
            | Request::Cancel { id, .. }
            | Request::HistoryList { id, .. }
            | Request::HistoryGet { id, .. }
            | Request::HistorySearch { id, .. }
            | Request::HistoryDelete { id, .. }
            | Request::HistoryExport { id, .. }
            | Request::ConfigGet { id }
            | Request::ConfigSet { id, .. }
            | Request::Ping { id } => id,
        }
    }
}

/// The `id` of an inbound message, if it has a usable one, so even a
/// rejected message gets an error that names it.
pub fn message_id(msg: &Map<String, Value>) -> Option<String> {
    match msg.get("id") {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_ID_LEN => Some(s.clone()),
        _ => None,
    }
}

/// Parses an inbound message, with errors that say which field is wrong.
pub fn parse_request(msg: Map<String, Value>) -> Result<Request> {
    if message_id(&msg).is_none() {
        return Err(Error::invalid_request(format!(
            "every message needs an \"id\": a non-empty string of at most {MAX_ID_LEN} bytes"
        )));
    }
    let kind = match msg.get("type") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(Error::invalid_request(
                "every message needs a string \"type\"",
            ))
        }
    };
    if !REQUEST_TYPES.contains(&kind.as_str()) {
        return Err(Error::invalid_request(format!(
            "unknown message type \"{}\"; expected one of: {}",
            crate::text::prefix_chars(&kind, 64),
            REQUEST_TYPES.join(", ")
        )));
    }
    let request: Request = serde_json::from_value(Value::Object(msg))
        .map_err(|e| Error::invalid_request(format!("invalid \"{kind}\" message: {e}")))?;
    if let Request::Hello {
        protocol: Some(p), ..
    } = &request
    {
        if p.name != WIRE_PROTOCOL_NAME || p.version != WIRE_PROTOCOL_VERSION {
            return Err(Error::new(
                ErrorCode::UnsupportedVersion,
                format!(
                    "this host speaks {WIRE_PROTOCOL_NAME} v{WIRE_PROTOCOL_VERSION}, not {} v{}: update the extension and the host together",
                    p.name, p.version
                ),
            ));
        }
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn parses_every_request_type() {
        let cases = [
            json!({"type": "hello", "id": "1", "protocol": {"name": "laika.wire", "version": 1}}),
            json!({"type": "ping", "id": "2"}),
            json!({"type": "cancel", "id": "3", "target": "t"}),
            json!({"type": "history.list", "id": "4", "limit": 5}),
            json!({"type": "history.get", "id": "5", "conversation_id": "c"}),
            json!({"type": "history.search", "id": "6", "query": "q"}),
            json!({"type": "history.delete", "id": "7", "conversation_id": "c"}),
            json!({"type": "history.export", "id": "8", "conversation_id": "c", "format": "html"}),
            json!({"type": "config.get", "id": "9"}),
            json!({"type": "config.set", "id": "10", "values": {"runtime.kind": "builtin"}}),
            json!({"type": "turn", "id": "11", "message": {"text": "hi"},
                   "task": {"name": "web.answer", "args": {}}, "observation": {}}),
        ];
        for (i, c) in cases.into_iter().enumerate() {
            let r = parse_request(obj(c));
            assert!(r.is_ok(), "case {i}: {r:?}");
            assert_eq!(
                r.map(|r| r.id().to_string()).ok(),
                Some((i + 1).to_string())
            );
        }
    }

    #[test]
    fn rejects_with_codes() {
        let e = parse_request(obj(json!({"type": "ping"}))).err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::InvalidRequest));
        let e = parse_request(obj(json!({"type": "launch", "id": "x"}))).err();
        assert!(e
            .map(|e| e.message)
            .unwrap_or_default()
            .contains("unknown message type"));
        let e = parse_request(obj(
            json!({"type": "turn", "id": "x", "task": {"name": "web.hack"}}),
        ));
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::InvalidRequest));
        let e = parse_request(obj(
            json!({"type": "hello", "id": "x", "protocol": {"name": "laika.wire", "version": 9}}),
        ));
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::UnsupportedVersion));
    }
}

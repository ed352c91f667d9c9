//! `laika-host replay`: feeds recorded extension messages (NDJSON, one message
//! per line) through a full host session and returns the events it emits — a
//! headless harness for recorded sessions and golden tests.
//!
//! Goldens compare *normalized* events: UUIDs become `<id:N>` in order of first
//! appearance, timestamps `<time>`, durations (`*_ms`) 0 and local paths
//! `<path>`, so a golden stays stable across runs and machines.

use crate::frame;
use crate::session::Session;
use crate::sink::Collector;
use laika_protocol::event::{Event, Sink};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Runs every line of `input` through `session`, in order, and returns the
/// events. Turns run inline, so the order is deterministic.
pub fn run(input: &str, session: &mut Session, max_json_depth: usize) -> Vec<Value> {
    let events = Arc::new(Collector::default());
    for line in input.lines() {
        if line.trim().is_empty() {
            continue;
        }
        match frame::parse_message(line.as_bytes(), max_json_depth) {
            Ok(msg) => session.handle_message(msg, events.clone()),
            Err(e) => events.emit(None, Event::error(&e)),
        }
    }
    session.finish();
    events.take()
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::parse_str(s).is_ok()
}

struct Normalizer {
    ids: HashMap<String, usize>,
}

impl Normalizer {
    fn value(&mut self, key: Option<&str>, v: &mut Value) {
        match v {
            Value::Object(m) => self.object(m),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(key, x)),
            Value::String(s) => {
                // The agent state's times have camelCase names (docs/conversation.md#shapes).
                if matches!(
                    key,
                    Some(
                        "created_at"
                            | "updated_at"
                            | "createdAt"
                            | "updatedAt"
                            | "lastSummarizedAt"
                    )
                ) {
                    *s = "<time>".into();
                } else if matches!(key, Some("data_dir" | "saved_to")) {
                    *s = "<path>".into();
                } else {
                    *s = self.ids_in(s);
                }
            }
            Value::Number(_) if key.is_some_and(|k| k.ends_with("_ms")) => *v = Value::from(0),
            _ => {}
        }
    }

    fn object(&mut self, m: &mut Map<String, Value>) {
        // A JSON Patch operation's `value` is named by its path's last token.
        let patched = m
            .get("op")
            .and(m.get("path"))
            .and_then(Value::as_str)
            .and_then(|p| p.rsplit('/').next())
            .map(str::to_owned);
        for (k, v) in m.iter_mut() {
            let key = match (&patched, k.as_str()) {
                (Some(name), "value") => name.as_str(),
                _ => k.as_str(),
            };
            self.value(Some(key), v);
        }
    }

    /// Replaces every UUID inside a string (ids also appear inside call ids
    /// like `<uuid>:0`).
    fn ids_in(&mut self, s: &str) -> String {
        if s.len() < 36 {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        let bytes = s.as_bytes();
        while i < bytes.len() {
            if let Some(candidate) = s.get(i..i + 36) {
                if is_uuid(candidate) {
                    let n = self.ids.len() + 1;
                    let n = *self.ids.entry(candidate.to_string()).or_insert(n);
                    out.push_str(&format!("<id:{n}>"));
                    i += 36;
                    continue;
                }
            }
            let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&s[i..i + ch_len]);
            i += ch_len;
        }
        out
    }
}

/// Normalizes events for golden comparison.
pub fn normalize(events: &[Value]) -> Vec<Value> {
    let mut n = Normalizer {
        ids: HashMap::new(),
    };
    events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            n.value(None, &mut e);
            e
        })
        .collect()
}

/// Compares normalized events with an expected NDJSON golden. The error names
/// the first differing line and shows both sides.
pub fn compare(actual: &[Value], expected_ndjson: &str) -> Result<(), String> {
    let expected: Vec<Value> = expected_ndjson
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("expected file line {}: {e}", i + 1))
        })
        .collect::<Result<_, _>>()?;
    let actual = normalize(actual);
    let expected = normalize(&expected);
    for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
        if a != e {
            return Err(format!(
                "event {} differs\n  expected: {e}\n  actual:   {a}",
                i + 1
            ));
        }
    }
    if actual.len() != expected.len() {
        return Err(format!(
            "expected {} events, got {}",
            expected.len(),
            actual.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalizes_ids_times_and_durations_consistently() {
        let a = "0b6f2c1e-1b7c-4a51-9a8e-9a4c1f0e2d3b";
        let b = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f";
        let events = vec![
            json!({"id": a, "created_at": "2026-01-01T00:00:00.000Z", "timings": {"total_ms": 3.2}}),
            json!({"reply_to": a, "call_id": format!("{b}:0"), "data_dir": "/tmp/x"}),
        ];
        let n = normalize(&events);
        assert_eq!(
            n[0],
            json!({"id": "<id:1>", "created_at": "<time>", "timings": {"total_ms": 0}})
        );
        assert_eq!(
            n[1],
            json!({"reply_to": "<id:1>", "call_id": "<id:2>:0", "data_dir": "<path>"})
        );
    }

    #[test]
    fn compare_reports_first_difference_and_length() {
        let actual = vec![json!({"type": "pong"})];
        assert!(compare(&actual, "{\"type\":\"pong\"}\n").is_ok());
        let e = compare(&actual, "{\"type\":\"ping\"}\n")
            .err()
            .unwrap_or_default();
        assert!(e.contains("event 1 differs"), "{e}");
        let e = compare(&actual, "{\"type\":\"pong\"}\n{\"type\":\"pong\"}\n")
            .err()
            .unwrap_or_default();
        assert!(e.contains("expected 2 events, got 1"), "{e}");
    }
}

//! `entity_patch` events (docs/wire-protocol.md#entity_patch): a change to
//! state the sidebar keeps, written as the RFC 6902 operations that turn
//! the state it has into the host's. The sidebar applies them as they come
//! and never works out a change from the answer's text.
//!
//! Invariant: applying `diff(old, new)` to `old` gives `new` (objects member
//! by member, arrays element by element over their common length, then
//! appended or removed from the end, so a removal never shifts an index a
//! later operation names).

use laika_protocol::agent_state::{AgentState, DeltaSource};
use laika_protocol::event::{EntityPatch, Event, PatchOp, PatchedEntity};
use laika_protocol::ids::ConversationId;
use serde_json::Value;

/// The operations that turn `old` into `new`; empty when they are equal.
pub fn diff(old: &Value, new: &Value) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    diff_at(String::new(), old, new, &mut ops);
    ops
}

fn diff_at(path: String, old: &Value, new: &Value, ops: &mut Vec<PatchOp>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, before) in a {
                let at = format!("{path}/{}", escape(key));
                match b.get(key) {
                    Some(after) => diff_at(at, before, after, ops),
                    None => ops.push(PatchOp::Remove { path: at }),
                }
            }
            for (key, after) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                ops.push(PatchOp::Add {
                    path: format!("{path}/{}", escape(key)),
                    value: after.clone(),
                });
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (before, after)) in a.iter().zip(b).enumerate() {
                diff_at(format!("{path}/{i}"), before, after, ops);
            }
            for after in b.iter().skip(a.len()) {
                ops.push(PatchOp::Add {
                    path: format!("{path}/-"),
                    value: after.clone(),
                });
            }
            for i in (b.len()..a.len()).rev() {
                ops.push(PatchOp::Remove {
                    path: format!("{path}/{i}"),
                });
            }
        }
        _ if old != new => ops.push(PatchOp::Replace {
            path,
            value: new.clone(),
        }),
        _ => {}
    }
}

/// A JSON Pointer reference token (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The `entity_patch` from the agent state the sidebar has (`before`,
/// `None` when the conversation had none: the patch replaces the whole
/// entity) to `after`; `None` when nothing changed.
pub fn agent_state_patch(
    conversation_id: &ConversationId,
    turn: u32,
    source: DeltaSource,
    before: Option<&AgentState>,
    after: &AgentState,
) -> Option<Event> {
    let after_json = serde_json::to_value(after).ok()?;
    let patch = match before.and_then(|b| serde_json::to_value(b).ok()) {
        Some(before_json) => diff(&before_json, &after_json),
        None => vec![PatchOp::Replace {
            path: String::new(),
            value: after_json,
        }],
    };
    (!patch.is_empty()).then(|| {
        Event::EntityPatch(EntityPatch {
            conversation_id: conversation_id.clone(),
            turn,
            source,
            entity: PatchedEntity::AgentState,
            entity_id: conversation_id.as_str().to_owned(),
            patch,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// RFC 6902 `apply` for the operations `diff` writes, as the sidebar
    /// does it.
    fn apply(doc: &mut Value, ops: &[PatchOp]) {
        for op in ops {
            let (path, value) = match op {
                PatchOp::Add { path, value } | PatchOp::Replace { path, value } => {
                    (path, Some(value.clone()))
                }
                PatchOp::Remove { path } => (path, None),
            };
            if path.is_empty() {
                *doc = value.unwrap();
                continue;
            }
            let (parent, last) = path.rsplit_once('/').unwrap();
            let last = last.replace("~1", "/").replace("~0", "~");
            let target = doc.pointer_mut(parent).unwrap();
            match (target, value) {
                (Value::Object(m), Some(v)) => {
                    m.insert(last, v);
                }
                (Value::Object(m), None) => {
                    m.remove(&last).unwrap();
                }
                (Value::Array(a), Some(v)) if last == "-" => a.push(v),
                (Value::Array(a), Some(v)) => a[last.parse::<usize>().unwrap()] = v,
                (Value::Array(a), None) => {
                    a.remove(last.parse::<usize>().unwrap());
                }
                (other, _) => panic!("cannot apply {op:?} to {other}"),
            }
        }
    }

    #[test]
    fn names_only_what_changed() {
        let old = json!({"items": [{"id": "a", "status": "active"}], "a/b": 1, "gone": true});
        let new =
            json!({"items": [{"id": "a", "status": "resolved"}, {"id": "b"}], "a/b": 2, "new": []});
        let ops = diff(&old, &new);
        assert_eq!(
            serde_json::to_value(&ops).unwrap(),
            json!([
                {"op": "replace", "path": "/a~1b", "value": 2},
                {"op": "remove", "path": "/gone"},
                {"op": "replace", "path": "/items/0/status", "value": "resolved"},
                {"op": "add", "path": "/items/-", "value": {"id": "b"}},
                {"op": "add", "path": "/new", "value": []}
            ])
        );
        assert!(diff(&new, &new).is_empty());
    }

    #[test]
    fn a_first_state_replaces_the_whole_entity() {
        let id = ConversationId::from("c-1");
        let state = AgentState::new(&id);
        let Some(Event::EntityPatch(p)) =
            agent_state_patch(&id, 2, DeltaSource::Tool, None, &state)
        else {
            panic!("no patch")
        };
        assert_eq!(p.entity_id, "c-1");
        assert!(matches!(&p.patch[..], [PatchOp::Replace { path, .. }] if path.is_empty()));
        assert!(agent_state_patch(&id, 2, DeltaSource::Tool, Some(&state), &state).is_none());
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0i64..5).prop_map(Value::from),
            "[a-c~/]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-c~/]{1,2}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn applying_the_diff_gives_the_new_value(old in json_value(), new in json_value()) {
            let mut patched = old.clone();
            apply(&mut patched, &diff(&old, &new));
            prop_assert_eq!(patched, new);
        }
    }
}

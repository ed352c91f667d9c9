//! The wire protocol's JSON Schema, rendered from the Rust types: inbound
//! [`Request`]s, outbound [`Event`]s in their [`Message`] envelope, and
//! [`Part`]s. `docs/wire-protocol.schema.json` is this document, written by
//! a `laika-host` test (`LAIKA_BLESS=1 cargo test -p laika-host --test
//! wire_schema`); the extension compiles its validator and its TypeScript
//! types from that file.
//!
//! schemars describes each enum as a `oneOf` of its variants. Here every
//! variant becomes its own definition named by its wire `type` (`turn`,
//! `hello.result`, …), flat and closed: payload structs are inlined, the
//! envelope's `id` and `reply_to` are added to host messages, and an object
//! lists every field it may have (`additionalProperties: false`), so a typo
//! or a stray field is caught. `host_message` and `extension_message` pick
//! one of those definitions by `type`.

use super::{Part, Request};
use crate::error::Error;
use crate::event::{Event, Message};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

pub const SCHEMA_ID: &str = "urn:laika:wire-protocol:v1";
const DEFS: &str = "#/$defs/";

/// The whole schema document (JSON Schema 2020-12).
pub fn schema_document() -> Value {
    let Generated {
        message,
        part,
        request,
        host_definitions,
        extension_definitions,
    } = generate();
    let mut defs = host_definitions;
    for (name, schema) in extension_definitions {
        defs.entry(name).or_insert(schema);
    }
    let mut envelope = message.clone();
    envelope.remove("oneOf");
    envelope.remove("description");
    let mut host = message_definitions(&message, Some(&envelope), &defs);
    answers_a_usable_id(&mut host);
    host.push(("part".into(), part));
    let mut extension = message_definitions(&request, None, &defs);
    // A type both sides send (`tool_result`) is two messages: name the
    // extension's by its direction.
    for (name, _) in extension.iter_mut() {
        if host.iter().any(|(h, _)| h == name) {
            name.push_str("_request");
        }
    }

    let root = one_of_refs(
        "Generated from laika-protocol's types (laika_protocol::wire::schema_document); do not edit. \
         Validate a message with #/$defs/host_message or #/$defs/extension_message to also \
         check its direction.",
        &[host.as_slice(), extension.as_slice()].concat(),
    );
    defs.insert(
        "host_message".into(),
        one_of_refs("Any message the host may send to the extension.", &host),
    );
    defs.insert(
        "extension_message".into(),
        one_of_refs(
            "Any message the extension may send to the host.",
            &extension,
        ),
    );
    defs.extend(
        host.into_iter()
            .chain(extension)
            .map(|(name, schema)| (name, Value::Object(schema))),
    );
    let mut defs = reachable(defs, &["host_message", "extension_message"]);
    defs.values_mut().for_each(tidy);
    let dispatches: Vec<(String, Value)> = defs
        .iter()
        .filter_map(|(name, schema)| Some((name.clone(), dispatch_on_type(schema, &defs)?)))
        .collect();
    let root = dispatch_on_type(&root, &defs).unwrap_or(root);
    defs.extend(dispatches);

    let mut document = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "laika.wire v1: messages between the Laika extension and laika-host",
    });
    if let (Value::Object(document), Value::Object(root)) = (&mut document, root) {
        document.extend(root);
        document.insert("$defs".into(), Value::Object(defs));
    }
    document
}

/// What schemars derives, before it is reshaped into messages: host
/// messages follow the serializer's contract (a field skipped when empty is
/// optional), requests the deserializer's (a defaulted field is optional).
struct Generated {
    message: Map<String, Value>,
    part: Map<String, Value>,
    request: Map<String, Value>,
    host_definitions: Map<String, Value>,
    extension_definitions: Map<String, Value>,
}

fn generate() -> Generated {
    let mut host = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut extension = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    Generated {
        message: definition_of::<Message<'static>>(&mut host),
        part: definition_of::<Part<'static>>(&mut host),
        request: definition_of::<Request>(&mut extension),
        host_definitions: host.take_definitions(true),
        extension_definitions: extension.take_definitions(true),
    }
}

/// `T`'s own schema, its dependencies left in the generator's definitions.
fn definition_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Map<String, Value> {
    let schema = T::json_schema(generator).to_value();
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// One flat definition per variant of a `type`-tagged enum, named by its tag.
fn message_definitions(
    tagged: &Map<String, Value>,
    envelope: Option<&Map<String, Value>>,
    defs: &Map<String, Value>,
) -> Vec<(String, Map<String, Value>)> {
    let variants = tagged.get("oneOf").and_then(Value::as_array);
    let mut out = Vec::new();
    for variant in variants.into_iter().flatten().filter_map(Value::as_object) {
        let Some(name) = variant
            .get("properties")
            .and_then(|p| p.get("type"))
            .and_then(|t| t.get("const"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let shapes: Vec<Map<String, Value>> = inline(variant, defs)
            .into_iter()
            .map(|shape| envelope.map_or(shape.clone(), |e| merge(e.clone(), &shape)))
            .collect();
        let schema = match <[_; 1]>::try_from(shapes) {
            Ok([one]) => one,
            Err(many) => {
                let mut alternatives = Map::new();
                alternatives.insert(
                    "oneOf".into(),
                    many.into_iter().map(Value::Object).collect(),
                );
                alternatives
            }
        };
        out.push((name.to_owned(), schema));
    }
    out
}

/// Only an `error` can answer a message whose `id` was unusable (it could
/// not be parsed): every other host message has a `reply_to`.
fn answers_a_usable_id(host: &mut [(String, Map<String, Value>)]) {
    let error = serde_json::to_value(Event::error(&Error::internal("")));
    let error_type = error
        .ok()
        .and_then(|e| e.get("type")?.as_str().map(str::to_owned));
    for (name, schema) in host.iter_mut() {
        if Some(name.as_str()) == error_type.as_deref() {
            continue;
        }
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert(
                "reply_to".into(),
                json!({ "$ref": format!("{DEFS}RequestId") }),
            );
        }
    }
}

/// `schema` with its `$ref` replaced by the referenced object's fields; a
/// referenced `oneOf` (an enum payload) gives one shape per alternative.
fn inline(schema: &Map<String, Value>, defs: &Map<String, Value>) -> Vec<Map<String, Value>> {
    let mut base = schema.clone();
    let Some(target) = base
        .remove("$ref")
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(DEFS))
        .and_then(|name| defs.get(name))
        .and_then(Value::as_object)
    else {
        return vec![base];
    };
    match target.get("oneOf").and_then(Value::as_array) {
        Some(alternatives) => alternatives
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|alt| inline(alt, defs))
            .map(|alt| merge(base.clone(), &alt))
            .collect(),
        None => inline(target, defs)
            .into_iter()
            .map(|t| merge(base.clone(), &t))
            .collect(),
    }
}

/// The fields of both object schemas: `properties` and `required` united,
/// any other keyword kept from `into` when both have it.
fn merge(mut into: Map<String, Value>, from: &Map<String, Value>) -> Map<String, Value> {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                mine.extend(theirs.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for field in theirs {
                    if !mine.contains(field) {
                        mine.push(field.clone());
                    }
                }
            }
            (_, None, _) => {
                into.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    into
}

fn one_of_refs(description: &str, messages: &[(String, Map<String, Value>)]) -> Value {
    let refs: Vec<Value> = messages
        .iter()
        .map(|(name, _)| json!({ "$ref": format!("{DEFS}{name}") }))
        .collect();
    json!({ "description": description, "oneOf": refs })
}

/// A choice (`oneOf`, or the `anyOf` of an untagged enum) of `type`-tagged
/// shapes, each a definition or written in place (the variants of an
/// internally tagged enum), as a dispatch on `type` (`if` the type is this,
/// `then` that shape), so that validators report the errors of the one
/// message or node `type` names rather than of every alternative. `None` for
/// any other schema.
fn dispatch_on_type(schema: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let cases = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()?;
    let tagged: Vec<(&str, &Value)> = cases
        .iter()
        .map(|case| {
            let shape = match case.get("$ref") {
                Some(reference) => defs.get(reference.as_str()?.strip_prefix(DEFS)?)?,
                None => case,
            };
            Some((type_tag(shape)?, case))
        })
        .collect::<Option<_>>()?;
    let names: Vec<&str> = tagged.iter().map(|(tag, _)| *tag).collect();
    // Shapes that share a `type` (one message, several forms) stay a `oneOf`.
    if names.iter().collect::<BTreeSet<_>>().len() != names.len() {
        return None;
    }
    let branches: Vec<Value> = tagged
        .iter()
        .map(|(tag, case)| {
            json!({
                "if": { "properties": { "type": { "const": tag } }, "required": ["type"] },
                "then": case,
            })
        })
        .collect();
    let mut dispatch = json!({
        "type": "object",
        "required": ["type"],
        "properties": { "type": { "enum": names } },
        "allOf": branches,
    });
    if let (Some(description), Some(map)) = (schema.get("description"), dispatch.as_object_mut()) {
        map.insert("description".into(), description.clone());
    }
    Some(dispatch)
}

/// The `type` constant every shape of `schema` has.
fn type_tag(schema: &Value) -> Option<&str> {
    if let Some(tag) = schema.pointer("/properties/type/const") {
        return tag.as_str();
    }
    let shapes = schema.get("oneOf")?.as_array()?;
    let tags: BTreeSet<&str> = shapes.iter().map(type_tag).collect::<Option<_>>()?;
    match <[&str; 1]>::try_from(tags.into_iter().collect::<Vec<_>>()) {
        Ok([tag]) => Some(tag),
        Err(_) => None,
    }
}

/// The definitions `roots` reach through `$ref`s; payload structs that were
/// inlined into their messages drop out.
fn reachable(defs: Map<String, Value>, roots: &[&str]) -> Map<String, Value> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = defs.get(&name) {
            collect_refs(schema, &mut todo);
        }
    }
    defs.into_iter()
        .filter(|(name, _)| seen.contains(name))
        .collect()
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(DEFS))
            {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// Keywords whose values are schemas of the message's own values. Not
/// `if`/`then`/`else`: a condition on some fields must stay open to the rest.
const SUBSCHEMA_KEYWORDS: &[&str] = &["items", "anyOf", "oneOf", "allOf"];

/// Closes every object that lists its properties, and drops schemars' integer
/// `format`s (annotations that validators do not know), keeping a `u32`'s
/// upper bound as `maximum`.
fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
            if let Some(format) = format {
                if format == "uint32" && !map.contains_key("maximum") {
                    map.insert("maximum".into(), json!(u32::MAX));
                }
                if matches!(
                    format.as_str(),
                    "uint" | "uint8" | "uint16" | "uint32" | "uint64" | "double"
                ) {
                    map.remove("format");
                }
            }
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                properties.values_mut().for_each(tidy);
            }
            for keyword in SUBSCHEMA_KEYWORDS {
                match map.get_mut(*keyword) {
                    Some(Value::Array(schemas)) => schemas.iter_mut().for_each(tidy),
                    Some(one @ Value::Object(_)) => tidy(one),
                    _ => {}
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::REQUEST_TYPES;

    #[test]
    fn a_type_used_in_both_directions_has_one_schema() {
        let generated = generate();
        for (name, schema) in &generated.extension_definitions {
            if let Some(host) = generated.host_definitions.get(name) {
                assert_eq!(host, schema, "{name} differs between the directions");
            }
        }
    }

    #[test]
    fn every_request_type_is_an_extension_message() {
        let document = schema_document();
        let types = &document["$defs"]["extension_message"]["properties"]["type"]["enum"];
        assert_eq!(types, &json!(REQUEST_TYPES));
    }

    #[test]
    fn the_document_is_deterministic_and_compiles() {
        let document = schema_document();
        assert_eq!(document, schema_document());
        assert!(jsonschema::validator_for(&document).is_ok());
    }

    #[test]
    fn every_definition_is_used_and_every_reference_resolves() {
        let document = schema_document();
        let defs = document["$defs"].as_object().cloned().unwrap_or_default();
        let mut refs = Vec::new();
        collect_refs(&document, &mut refs);
        let entry_points = ["host_message", "extension_message"].map(String::from);
        let used: BTreeSet<String> = refs.into_iter().chain(entry_points).collect();
        let defined: BTreeSet<String> = defs.keys().cloned().collect();
        assert_eq!(used, defined);
    }
}

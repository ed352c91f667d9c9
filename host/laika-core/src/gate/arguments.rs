//! Reading a proposed call: its name among the registry's tools, its
//! `arguments` against that tool's schema (one short sentence naming the
//! offending key), then as the typed [`ToolCall`]. [`parse`] is the one
//! place the model's raw call becomes typed.
//!
//! The schemas are compiled once (`tools::all`); this module only picks the
//! error to report and words it, since a validator's own messages quote the
//! (untrusted, possibly huge) value and speak JSON Schema.

use super::clip;
use crate::tools::{self, McpTools, Tool};
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::ValidationError;
use laika_protocol::llmcp;
use laika_protocol::tool_call::{McpCall, ToolCall, ToolName, MAX_BYTES};
use serde_json::{Map, Value};

pub(super) type Args<'a> = Option<&'a Map<String, Value>>;

/// Why a proposed call is not a valid call of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// No tool has that name.
    UnknownTool,
    /// The arguments do not match the tool's schema: the problem, worded.
    InvalidArguments(ToolName, String),
}

/// The model's raw call as a typed [`ToolCall`]: a tool of the registry,
/// or one of `mcp`'s (its arguments checked against the schema its server
/// listed).
pub fn parse(call: &llmcp::ToolCall, mcp: &McpTools) -> Result<ToolCall, Rejection> {
    let tool = tools::find(&call.name)
        .or_else(|| mcp.find(&call.name))
        .ok_or(Rejection::UnknownTool)?;
    let args = check(tool, &call.arguments)
        .map_err(|problem| Rejection::InvalidArguments(tool.id, problem))?;
    if let Some(origin) = &tool.mcp {
        return Ok(ToolCall::Mcp(McpCall {
            server: origin.server.clone(),
            tool: origin.tool.clone(),
            arguments: args.cloned().unwrap_or_default(),
        }));
    }
    // The schema admits exactly what the types do; a mismatch is a registry
    // bug, reported like a bad argument rather than trusted.
    ToolCall::from_arguments(tool.id, call.arguments.clone())
        .map_err(|e| Rejection::InvalidArguments(tool.id, e.to_string()))
}

/// `arguments` as an object, if they match the tool's schema; omitted
/// (`null`) counts as `{}`.
pub(super) fn check<'a>(tool: &Tool, arguments: &'a Value) -> Result<Args<'a>, String> {
    let empty = Value::Object(Map::new());
    let (instance, args) = match arguments {
        Value::Null => (&empty, None),
        Value::Object(map) => (arguments, Some(map)),
        _ => return Err("arguments must be a JSON object".into()),
    };
    let Some(validator) = tool.validator() else {
        return Err("its arguments cannot be checked".into());
    };
    // One problem is enough for the UI: the shallowest, and at one level
    // unexpected keys before missing ones before bad values.
    let first = validator.iter_errors(instance).min_by_key(|e| {
        let rank = match e.kind() {
            ValidationErrorKind::AdditionalProperties { .. } => 0,
            ValidationErrorKind::Required { .. } => 1,
            _ => 2,
        };
        (e.instance_path().segments().count(), rank)
    });
    match first {
        Some(error) => Err(describe(&error, &tool.arguments, instance)),
        None => Ok(args),
    }
}

fn describe(error: &ValidationError, schema: &Value, instance: &Value) -> String {
    let path = display_path(error.instance_path(), instance);
    let keyword_at = error.schema_path().as_str();
    let rule = keyword_at
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent))
        .unwrap_or(&Value::Null);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let key = unexpected.first().map_or("", String::as_str);
            format!("unexpected argument {}", clip(&child(&path, key)))
        }
        ValidationErrorKind::Required { property } => format!(
            "missing required argument \"{}\"",
            child(&path, property.as_str().unwrap_or(""))
        ),
        ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => exactly_one(&rule["oneOf"]),
        kind => value_rule(rule, &path, kind),
    }
}

/// What a value must be, from the schema it failed: every failure of an
/// integer says the whole rule, so the model can fix it in one go.
fn value_rule(rule: &Value, path: &str, kind: &ValidationErrorKind) -> String {
    if let Some(options) = rule["enum"].as_array() {
        let options: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
        return format!("argument \"{path}\" must be one of {}", options.join(", "));
    }
    match rule["type"].as_str() {
        Some("integer") => format!(
            "argument \"{path}\" must be an integer from {} to {}",
            rule["minimum"], rule["maximum"]
        ),
        Some("number") => format!(
            "argument \"{path}\" must be a finite number from {} to {}",
            rule["minimum"].as_f64().unwrap_or(f64::MIN),
            rule["maximum"].as_f64().unwrap_or(f64::MAX)
        ),
        Some("string") => match kind {
            ValidationErrorKind::Custom { keyword, .. } if keyword == MAX_BYTES => format!(
                "argument \"{path}\" is longer than {} bytes",
                rule[MAX_BYTES]
            ),
            _ => format!("argument \"{path}\" must be a string"),
        },
        Some("boolean") => format!("argument \"{path}\" must be a boolean"),
        Some("object") => format!("argument \"{path}\" must be an object"),
        Some("array") if rule["items"]["type"] == "string" => {
            format!("argument \"{path}\" must be an array of strings")
        }
        Some("array") => format!("argument \"{path}\" must be an array"),
        _ => format!("argument \"{path}\" is not valid"),
    }
}

/// `oneOf` over single `required` keys: exactly one of them must be given.
fn exactly_one(branches: &Value) -> String {
    let keys: Vec<String> = branches
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["required"][0].as_str())
        .map(|k| format!("\"{k}\""))
        .collect();
    format!("exactly one of {} must be given", keys.join(" or "))
}

/// `/sources/0/type` as `sources[0].type`: array indexes in brackets, keys
/// joined by dots (the instance tells which is which).
fn display_path(pointer: &Location, instance: &Value) -> String {
    let mut out = String::new();
    let mut at = Some(instance);
    for segment in pointer.segments() {
        let key = match segment {
            LocationSegment::Property(p) => p.into_owned(),
            LocationSegment::Index(i) => i.to_string(),
        };
        match at {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{key}]"));
                at = key.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            _ => {
                out = child(&out, &key);
                at = at.and_then(|v| v.get(&key));
            }
        }
    }
    out
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;
    use serde_json::json;

    fn problem(tool: &str, args: Value) -> String {
        check(tools::find(tool).unwrap(), &args).err().unwrap()
    }

    #[test]
    fn problems_are_worded_as_before() {
        let cases = [
            ("browser.click", json!({"handleId": "a", "force": true}), "unexpected argument \"force\""),
            ("browser.click", json!({}), "missing required argument \"handleId\""),
            ("browser.click", json!({"handleId": 5}), "argument \"handleId\" must be a string"),
            ("browser.click", json!([]), "arguments must be a JSON object"),
            (
                "browser.click",
                json!({"handleId": "x".repeat(129)}),
                "argument \"handleId\" is longer than 128 bytes",
            ),
            (
                "browser.observe_dom",
                json!({"maxChars": 5.5}),
                "argument \"maxChars\" must be an integer from 0 to 1000000",
            ),
            (
                "browser.observe_dom",
                json!({"maxChars": u64::MAX}),
                "argument \"maxChars\" must be an integer from 0 to 1000000",
            ),
            (
                "browser.scroll",
                json!({"deltaY": "100"}),
                "argument \"deltaY\" must be a finite number from -1000000 to 1000000",
            ),
            ("search", json!({"query": "x", "newTab": "yes"}), "argument \"newTab\" must be a boolean"),
            (
                "artifact.share",
                json!({"artifactId": "a", "format": "exe"}),
                "argument \"format\" must be one of markdown, text, json, csv, pdf",
            ),
            (
                "artifact.save",
                json!({"title": "t", "text": "x", "doc": {}}),
                "exactly one of \"text\" or \"doc\" must be given",
            ),
            ("artifact.save", json!({"title": "t"}), "exactly one of \"text\" or \"doc\" must be given"),
            (
                "integration.invoke",
                json!({"integration": "i", "operation": "o", "payload": []}),
                "argument \"payload\" must be an object",
            ),
            (
                "collection.create",
                json!({"title": "t", "tags": "a"}),
                "argument \"tags\" must be an array of strings",
            ),
            (
                "collection.create",
                json!({"title": "t", "tags": ["a", 1]}),
                "argument \"tags[1]\" must be a string",
            ),
            (
                "collection.add_sources",
                json!({"collectionId": "c", "sources": {}}),
                "argument \"sources\" must be an array",
            ),
            (
                "collection.add_sources",
                json!({"collectionId": "c", "sources": [{"type": "url", "url": "u"}, {"type": "file"}]}),
                "argument \"sources[1].type\" must be one of url, note",
            ),
            (
                "collection.add_sources",
                json!({"collectionId": "c", "sources": [{"url": "u"}]}),
                "missing required argument \"sources[0].type\"",
            ),
            (
                "collection.add_sources",
                json!({"collectionId": "c", "sources": [{"type": "note", "url": "x"}]}),
                "unexpected argument \"sources[0].url\"",
            ),
            (
                "commerce.estimate_tax",
                json!({"amountMinor": 1, "currency": "USD", "destination": {"zip": "1"}}),
                "missing required argument \"destination.state\"",
            ),
            (
                "commerce.estimate_tax",
                json!({"amountMinor": 1.5, "currency": "USD", "destination": {"state": "CA"}}),
                "argument \"amountMinor\" must be an integer from -9223372036854775808 to 9223372036854775807",
            ),
        ];
        for (tool, args, want) in cases {
            assert_eq!(problem(tool, args.clone()), want, "{tool} {args}");
        }
    }

    #[test]
    fn integer_valued_floats_count_as_integers() {
        let tool = tools::find("app.calculate").unwrap();
        assert!(check(tool, &json!({"expression": "1", "precision": 2.0})).is_ok());
        assert!(check(tool, &json!({"expression": "1", "precision": 7.0})).is_err());
        let tool = tools::find("commerce.estimate_tax").unwrap();
        let tax = |amount: Value| json!({"amountMinor": amount, "currency": "USD", "destination": {"state": "CA"}});
        assert!(check(tool, &tax(json!(i64::MIN))).is_ok());
        assert!(check(tool, &tax(json!(i64::MAX))).is_ok());
        assert!(check(tool, &tax(json!(u64::MAX))).is_err());
        assert!(check(tool, &tax(json!(9.3e18))).is_err());
    }

    #[test]
    fn omitted_arguments_are_an_empty_object() {
        assert_eq!(
            check(tools::find("browser.back").unwrap(), &Value::Null),
            Ok(None)
        );
        assert_eq!(
            problem("browser.navigate", Value::Null),
            "missing required argument \"url\""
        );
    }

    #[test]
    fn hostile_keys_are_clipped_and_escaped() {
        let key = format!("\"{}", "k".repeat(500));
        let got = problem("browser.back", json!({ key: 1 }));
        assert!(got.len() < 120, "{got}");
        assert!(got.starts_with("unexpected argument \"\\\"kkk"), "{got}");
    }
}

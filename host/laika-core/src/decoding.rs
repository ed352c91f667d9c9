//! The answer schema: what the model itself writes, shaped so that a
//! constrained decoder must finish it within the runtime's token budget
//! ("valid by construction").
//!
//! The composed response schema (`interceptor`) is the contract the host
//! checks; it is loose where a loose check is kind (any string length, a
//! recursive render tree) and it includes the envelope (ids, protocol,
//! conversation). Handed to a grammar-constrained decoder as is, a small
//! model can loop inside it until `max_tokens` cuts the answer: nothing in
//! the grammar ever forces the end. The answer schema derived here is a
//! subset of that contract, with:
//! - no envelope: the host fills `protocol`, `id`, `type`, `created_at`,
//!   `conversation`, `sender` and `in_reply_to` ([`fill_envelope`]), so a
//!   270M model never has to copy a UUID; the filled packet is then checked
//!   against the full composed schema as before;
//! - a render tree of bounded depth, unrolled into one definition per
//!   level, each node a closed object whose `type` is a constant;
//! - `maxLength` on every string and `maxItems` on every array, sized so
//!   the longest answer the grammar allows fits the token budget
//!   ([`answer_schema`]);
//! - per-request constants: citation `doc_id`s are an `enum` of the
//!   request's documents, extraction fields are the requested names, tool
//!   calls are a union of the offered tools with their own argument schemas.
//!
//! Invariant: every value valid against the answer schema, once the
//! envelope is filled, is valid against the composed schema (tested).

pub mod caps;
pub mod fields;

use crate::tools;
pub use caps::{Caps, CutRecord, Regime, DEFAULT_MAX_TOKENS};
use caps::{MAX_TEXT, MIN_TEXT};
use laika_protocol::llmcp::{RequestPacket, TaskName, PROTOCOL_NAME, PROTOCOL_VERSION};
use serde_json::{json, Map, Value};

/// What the runtime does with the answer schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decoding {
    /// The server constrains decoding to the schema (a grammar, guided
    /// decoding, Ollama `format`): the prompt then leaves the shape to it.
    pub enforced: bool,
    /// The runtime's cap on output tokens, when it has one.
    pub max_tokens: Option<u32>,
    /// Which caps the answer gets ([`caps`]).
    pub regime: Regime,
}

/// The envelope fields the host fills; the answer schema leaves them out.
pub const HOST_FILLED: &[&str] = &[
    "protocol",
    "id",
    "type",
    "created_at",
    "conversation",
    "sender",
    "in_reply_to",
];

/// Fields the answer schema requires though the composed contract does
/// not: the contract also reads answers of runtimes that left them out,
/// while a decoder held to the grammar must state them.
const STATED: &[&str] = &["mode"];

/// Characters of compact JSON per token assumed when sizing: JSON syntax
/// (`{"type":"text","text":"`) tokenizes at about 2 characters a token,
/// prose at about 4. A bound on the answer's characters divided by this is
/// the token figure the caps are chosen against.
pub const CHARS_PER_TOKEN: u32 = 3;
/// A text long enough for one point of a summary: a small answer's
/// structure grows only while its texts can still be this long.
const GOOD_TEXT: usize = 120;

/// The answer schema for `packet`, derived from the composed response
/// schema and the caps of `decoding.regime`: [`Caps::FULL`], or for a small
/// model the caps sized for `max_tokens` (see [`small_caps`]).
pub fn answer_schema(composed: &Value, packet: &RequestPacket, decoding: Decoding) -> Value {
    answer_schema_for(composed, packet, decoding, tools::McpTools::none())
}

/// [`answer_schema`], its tool calls also offering the tools of `mcp`.
pub fn answer_schema_for(
    composed: &Value,
    packet: &RequestPacket,
    decoding: Decoding,
    mcp: &tools::McpTools,
) -> Value {
    let ctx = Request::of(packet, mcp);
    let caps = match decoding.regime {
        Regime::Full => Caps::FULL,
        Regime::Small => small_caps(composed, &ctx, decoding.max_tokens),
    };
    build(composed, &ctx, caps, decoding.regime)
}

/// The small regime's caps: the structure grows from [`Caps::MIN`] while
/// texts of [`GOOD_TEXT`] characters still fit `max_tokens`, then texts
/// take what is left. Below the smallest answer the floors hold (the
/// runtime's cap then cuts, as it would without this schema).
fn small_caps(composed: &Value, ctx: &Request, max_tokens: Option<u32>) -> Caps {
    let tokens = max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let budget = usize::try_from(tokens.saturating_mul(CHARS_PER_TOKEN)).unwrap_or(usize::MAX);
    let fits = |caps: Caps| max_chars(&build(composed, ctx, caps, Regime::Small)) <= budget;
    let mut caps = Caps::MIN;
    while let Some(next) = caps.bigger() {
        if !fits(next.with_text(GOOD_TEXT)) {
            break;
        }
        caps = next;
    }
    // The longest text that still fits (the bound grows with it).
    let (mut lo, mut hi) = (MIN_TEXT, MAX_TEXT);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(caps.with_text(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    caps.with_text(lo)
}

/// What of the request the answer schema pins.
struct Request<'t> {
    task: TaskName,
    doc_ids: Vec<String>,
    fields: Vec<String>,
    /// The documents hold code (`Code:` lines): only then may a small
    /// model's answer be a code block, which it otherwise fills with a
    /// fragment of prose.
    has_code: bool,
    /// The tools the request offers (`tools::for_request`).
    tools: Vec<&'t tools::Tool>,
    /// The answer may suggest follow-up questions (`follow_ups::offered`).
    follow_ups: bool,
}

impl<'t> Request<'t> {
    fn of(packet: &RequestPacket, mcp: &'t tools::McpTools) -> Request<'t> {
        let mut doc_ids: Vec<String> = Vec::new();
        for d in &packet.context.documents {
            if !doc_ids.contains(&d.doc_id) {
                doc_ids.push(d.doc_id.clone());
            }
        }
        Request {
            task: packet.input.task.name,
            doc_ids,
            fields: fields::requested_fields(packet),
            has_code: packet
                .context
                .documents
                .iter()
                .any(|d| has_code(&d.content)),
            tools: tools::for_request(packet, mcp),
            follow_ups: crate::follow_ups::offered(packet),
        }
    }
}

/// Whether a document's text holds a `Code:` line.
fn has_code(content: &Value) -> bool {
    let code = |text: &Value| {
        text.as_str()
            .is_some_and(|t| t.starts_with("Code:") || t.contains("\nCode:"))
    };
    code(&content["text"]) || code(&content["primary"]["text"])
}

fn build(composed: &Value, req: &Request, caps: Caps, regime: Regime) -> Value {
    let mut defs = Map::new();
    let code = regime == Regime::Full || req.has_code;
    render_defs(&mut defs, caps, code);
    let mut walker = Walker {
        root: composed,
        caps,
        req,
        defs: &mut defs,
        stack: Vec::new(),
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let composed_required = composed["required"].as_array();
    for (name, sub) in composed["properties"].as_object().into_iter().flatten() {
        if HOST_FILLED.contains(&name.as_str()) {
            continue;
        }
        let pointer = format!("/properties/{name}");
        if let Some(bounded) = walker.bound(sub, &pointer) {
            if composed_required.is_some_and(|r| r.contains(&json!(name)))
                || STATED.contains(&name.as_str())
            {
                required.push(json!(name));
            }
            properties.insert(name.clone(), bounded);
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "laika.llmcp answer (v1)",
        "description": "The answer part of a laika.llmcp v1 response packet; the host adds the envelope.",
        "type": "object",
        "required": required,
        "additionalProperties": false,
        "properties": properties,
        "$defs": defs,
    })
}

/// Walks the composed schema, producing its bounded counterpart.
struct Walker<'a> {
    root: &'a Value,
    caps: Caps,
    req: &'a Request<'a>,
    defs: &'a mut Map<String, Value>,
    /// The `$ref`s being inlined, to cut recursion.
    stack: Vec<String>,
}

impl Walker<'_> {
    /// The bounded schema for `schema` found at `pointer` in the composed
    /// schema; `None` leaves an optional property out of the answer.
    fn bound(&mut self, schema: &Value, pointer: &str) -> Option<Value> {
        match pointer {
            "/properties/assistant/properties/data" => return self.data(schema),
            "/properties/assistant/properties/title" => {
                return Some(with_max_length(schema, self.caps.title))
            }
            "/properties/assistant/properties/citations" => {
                let item = self.bound(&json!({"$ref": "#/$defs/citation"}), "")?;
                return Some(array_of(schema, item, self.caps.citations));
            }
            "/properties/tool_calls" => return Some(self.tool_calls(schema)),
            "/properties/plan" if !self.caps.plans => return None,
            "/properties/assistant/properties/follow_ups" => {
                if !self.req.follow_ups || self.caps.follow_ups == 0 {
                    return None;
                }
                let item = with_max_length(&schema["items"], self.caps.follow_up);
                return Some(array_of(schema, item, self.caps.follow_ups));
            }
            "/properties/assistant/properties/choices" => {
                let item = with_max_length(&schema["items"], self.caps.choice);
                return Some(array_of(schema, item, self.caps.choices));
            }
            "/$defs/citation/properties/doc_id" if !self.req.doc_ids.is_empty() => {
                return Some(described(schema, json!({"enum": self.req.doc_ids})));
            }
            "/properties/memory/properties/summary" => {
                return Some(with_max_length(schema, self.caps.memory))
            }
            // Ids the verifier can find from the quote: not the model's to copy.
            "/$defs/citation/properties/node_id" | "/$defs/citation/properties/handle_id" => {
                return None
            }
            "/$defs/citation/properties/quote" => {
                return Some(with_max_length(schema, self.caps.quote))
            }
            _ => {}
        }
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            if target == "#/$defs/doc" {
                return Some(json!({"$ref": "#/$defs/doc"}));
            }
            let inner = target.strip_prefix('#')?;
            if self.stack.iter().any(|s| s == target) {
                return None;
            }
            let resolved = self.root.pointer(inner)?;
            self.stack.push(target.to_string());
            let out = self.bound(resolved, inner);
            self.stack.pop();
            return out;
        }
        if let Some(union) = union_of_branches(schema) {
            return self.bound(&union, pointer);
        }
        let mut out = Map::new();
        for (key, value) in schema.as_object()? {
            match key.as_str() {
                "anyOf" => {
                    let branches = value.as_array()?;
                    let bounded: Vec<Value> = branches
                        .iter()
                        .filter_map(|b| self.bound(b, &format!("{pointer}/anyOf")))
                        .collect();
                    out.insert(key.clone(), Value::Array(bounded));
                }
                "properties" => {
                    let mut props = Map::new();
                    let required = schema["required"].as_array();
                    for (name, sub) in value.as_object().into_iter().flatten() {
                        let at = format!("{pointer}/properties/{name}");
                        match self.bound(sub, &at) {
                            Some(b) => {
                                props.insert(name.clone(), b);
                            }
                            None if required.is_some_and(|r| r.contains(&json!(name))) => {
                                return None
                            }
                            None => {}
                        }
                    }
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" => {
                    out.insert(key.clone(), self.bound(value, &format!("{pointer}/items"))?);
                }
                // Hints for humans and validators that a grammar cannot use.
                "examples" | laika_protocol::tool_call::MAX_BYTES => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        if out.contains_key("properties") && !out.contains_key("additionalProperties") {
            out.insert("additionalProperties".into(), json!(false));
        }
        let mut out = Value::Object(out);
        if is_type(&out, "string") && out.get("enum").is_none() && out.get("const").is_none() {
            out = with_max_length(&out, self.caps.text);
        }
        if is_type(&out, "array") {
            let cap = out["maxItems"]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(usize::MAX)
                .min(self.caps.list_items);
            out["maxItems"] = json!(cap);
        }
        Some(out)
    }

    /// `assistant.data`: the requested fields, each a string or null; left
    /// out for other tasks, and when the request names no field.
    fn data(&mut self, schema: &Value) -> Option<Value> {
        if self.req.task != TaskName::Extract || self.req.fields.is_empty() {
            return None;
        }
        let value = json!({"type": ["string", "null"], "maxLength": self.caps.arg_string});
        let properties: Map<String, Value> = self
            .req
            .fields
            .iter()
            .map(|f| (f.clone(), value.clone()))
            .collect();
        Some(described(
            schema,
            json!({
                "type": "object",
                "required": self.req.fields,
                "additionalProperties": false,
                "properties": properties,
            }),
        ))
    }

    /// `tool_calls`: one closed object per offered tool, its name a constant
    /// and its arguments that tool's own schema, bounded.
    fn tool_calls(&mut self, schema: &Value) -> Value {
        if self.req.tools.is_empty() {
            return described(schema, json!({"type": "array", "maxItems": 0}));
        }
        let saved = self.caps;
        self.caps.text = self.caps.arg_string;
        let tools = self.req.tools.clone();
        let variants: Vec<Value> = tools
            .into_iter()
            .filter_map(|tool| {
                let mut needed = tool.arguments.clone();
                first_alternative(&mut needed);
                let needed = only_required(needed);
                let arguments = self.bound(&needed, "/tool/arguments")?;
                let needs_arguments = tool.arguments["required"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty());
                let required = if needs_arguments {
                    json!(["name", "arguments"])
                } else {
                    json!(["name"])
                };
                Some(json!({
                    "type": "object",
                    "required": required,
                    "additionalProperties": false,
                    "properties": {
                        "name": {"const": tool.name},
                        "arguments": arguments,
                    }
                }))
            })
            .collect();
        self.caps = saved;
        self.defs
            .insert("tool_call".into(), json!({"anyOf": variants}));
        array_of(
            schema,
            json!({"$ref": "#/$defs/tool_call"}),
            self.caps.tool_calls,
        )
    }
}

/// Narrows `exactly one of` alternatives made only of `required` lists
/// (`oneOf: [{required: [text]}, {required: [doc]}]`) to the first one: a
/// call the decoder writes then needs those names and no others, which
/// satisfies the alternatives, where offering both could not.
fn first_alternative(arguments: &mut Value) {
    let Some(map) = arguments.as_object_mut() else {
        return;
    };
    let Some(Value::Array(branches)) = map.remove("oneOf") else {
        return;
    };
    let mut required: Vec<Value> = map
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in branches
        .first()
        .and_then(|b| b["required"].as_array())
        .into_iter()
        .flatten()
    {
        if !required.contains(name) {
            required.push(name.clone());
        }
    }
    map.insert("required".into(), Value::Array(required));
}

/// A discriminated union written as `allOf: [{if: {type: a}, then: A}, …]`
/// (so validators name the field at fault) as a decoder can follow it: one
/// of the `then` shapes.
fn union_of_branches(schema: &Value) -> Option<Value> {
    let branches = schema.get("allOf")?.as_array()?;
    let shapes: Option<Vec<Value>> = branches
        .iter()
        .map(|b| b.get("if").and(b.get("then")).cloned().map(only_required))
        .collect();
    Some(json!({ "anyOf": shapes? }))
}

/// Optional knobs (titles, limits, engines, precision) have defaults: the
/// decoder offers only what a call needs.
fn only_required(mut schema: Value) -> Value {
    let required = schema["required"].clone();
    if let Some(props) = schema["properties"].as_object_mut() {
        props.retain(|k, _| required.as_array().is_some_and(|r| r.contains(&json!(k))));
    }
    schema
}

fn is_type(schema: &Value, name: &str) -> bool {
    match &schema["type"] {
        Value::String(t) => t == name,
        Value::Array(ts) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

fn with_max_length(schema: &Value, cap: usize) -> Value {
    let mut out = schema.clone();
    let existing = out["maxLength"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX);
    out["maxLength"] = json!(existing.min(cap));
    if let Some(o) = out.as_object_mut() {
        o.remove("examples");
    }
    out
}

fn array_of(schema: &Value, items: Value, max_items: usize) -> Value {
    described(
        schema,
        json!({"type": "array", "items": items, "maxItems": max_items}),
    )
}

/// `out` with the `description` of `schema`, when it has one.
fn described(schema: &Value, mut out: Value) -> Value {
    if let (Some(d), Some(o)) = (schema.get("description"), out.as_object_mut()) {
        o.insert("description".into(), d.clone());
    }
    out
}

/// A closed node: `type` is the constant `name`, then `fields`, all required.
fn node(name: &str, fields: &[(&str, Value)]) -> Value {
    let mut properties = Map::new();
    properties.insert("type".into(), json!({"const": name}));
    let mut required = vec![json!("type")];
    for (k, v) in fields {
        properties.insert((*k).into(), v.clone());
        required.push(json!(k));
    }
    json!({
        "type": "object",
        "required": required,
        "additionalProperties": false,
        "properties": properties,
    })
}

fn list_of(def: &str, max: usize) -> Value {
    json!({"type": "array", "minItems": 1, "maxItems": max, "items": {"$ref": format!("#/$defs/{def}")}})
}

/// The render tree, unrolled: `doc` → top-level blocks → (inside a list
/// item, quote or table cell) leaf blocks or inline nodes, and no deeper.
fn render_defs(defs: &mut Map<String, Value>, caps: Caps, code: bool) {
    let text = json!({"type": "string", "minLength": 1, "maxLength": caps.text});
    defs.insert("text".into(), node("text", &[("text", text.clone())]));
    let label = json!({"type": "string", "minLength": 1, "maxLength": caps.label});
    defs.insert("label".into(), node("text", &[("text", label)]));
    defs.insert(
        "link".into(),
        node(
            "link",
            &[
                (
                    "href",
                    json!({"type": "string", "minLength": 1, "maxLength": caps.href}),
                ),
                ("children", list_of("label", 1)),
            ],
        ),
    );
    // A paragraph of one inline that is a link holds no sentence: links
    // come with room for text beside them.
    let inline = if caps.inlines > 1 {
        json!({"anyOf": [{"$ref": "#/$defs/text"}, {"$ref": "#/$defs/link"}]})
    } else {
        json!({"anyOf": [{"$ref": "#/$defs/text"}]})
    };
    defs.insert("inline".into(), inline);
    let inlines = list_of("inline", caps.inlines);
    defs.insert(
        "heading".into(),
        node(
            "heading",
            &[
                (
                    "level",
                    json!({"type": "integer", "minimum": 1, "maximum": 6}),
                ),
                ("children", list_of("text", 1)),
            ],
        ),
    );
    defs.insert(
        "paragraph".into(),
        node("paragraph", &[("children", inlines.clone())]),
    );
    defs.insert("code_block".into(), node("code_block", &[("text", text)]));
    defs.insert(
        "list_item".into(),
        node("list_item", &[("children", list_of("paragraph", 1))]),
    );
    defs.insert(
        "list".into(),
        node(
            "list",
            &[
                ("ordered", json!({"type": "boolean"})),
                ("items", list_of("list_item", caps.list_items)),
            ],
        ),
    );
    defs.insert(
        "blockquote".into(),
        node("blockquote", &[("children", list_of("paragraph", 1))]),
    );
    defs.insert(
        "table_cell".into(),
        node(
            "table_cell",
            &[
                ("header", json!({"type": "boolean"})),
                ("children", list_of("label", 1)),
            ],
        ),
    );
    defs.insert(
        "table_row".into(),
        node("table_row", &[("cells", list_of("table_cell", caps.cells))]),
    );
    defs.insert(
        "table".into(),
        node("table", &[("rows", list_of("table_row", caps.rows))]),
    );
    let blocks: Vec<Value> = [
        "heading",
        "paragraph",
        "list",
        "blockquote",
        "code_block",
        "table",
    ]
    .iter()
    .filter(|b| code || **b != "code_block")
    .map(|b| json!({"$ref": format!("#/$defs/{b}")}))
    .collect();
    defs.insert("block".into(), json!({"anyOf": blocks}));
    defs.insert(
        "doc".into(),
        json!({
            "description": "The answer as a safe document tree (never HTML or Markdown).",
            "type": "object",
            "required": ["type", "children"],
            "additionalProperties": false,
            "properties": {
                "type": {"const": "doc"},
                "children": list_of("block", caps.blocks),
            }
        }),
    );
}

/// The most characters of compact JSON a value valid against `schema` (an
/// answer schema: its own `$defs`, no recursion) can have, without escapes.
pub fn max_chars(schema: &Value) -> usize {
    chars_of(schema, schema, 0)
}

/// Deeper than any answer schema nests; a guard against a cycle.
const MAX_SIZE_DEPTH: usize = 64;

fn chars_of(schema: &Value, root: &Value, depth: usize) -> usize {
    if depth > MAX_SIZE_DEPTH {
        return usize::MAX / 4;
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        return target
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .map_or(0, |s| chars_of(s, root, depth + 1));
    }
    let alternatives = schema.get("anyOf").or_else(|| schema.get("oneOf"));
    if let Some(alts) = alternatives.and_then(Value::as_array) {
        return alts
            .iter()
            .map(|a| chars_of(a, root, depth + 1))
            .max()
            .unwrap_or(0);
    }
    if let Some(c) = schema.get("const") {
        return c.to_string().len();
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return options
            .iter()
            .map(|o| o.to_string().len())
            .max()
            .unwrap_or(0);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec!["object"],
    };
    let cap = |key: &str, default: usize| {
        schema[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(default)
    };
    types
        .iter()
        .map(|t| match *t {
            "string" => cap("maxLength", MAX_TEXT).saturating_add(2),
            "integer" => ["minimum", "maximum"]
                .iter()
                .filter_map(|k| schema[*k].as_i64())
                .map(|n| n.to_string().len())
                .max()
                .unwrap_or(11),
            "number" => 24,
            "boolean" => 5,
            "null" => 4,
            "array" => {
                let n = cap("maxItems", 16);
                let item = schema
                    .get("items")
                    .map_or(0, |i| chars_of(i, root, depth + 1));
                n.saturating_mul(item.saturating_add(1)).saturating_add(2)
            }
            _ => schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.len() + 4).saturating_add(chars_of(v, root, depth + 1)))
                .fold(2, usize::saturating_add),
        })
        .max()
        .unwrap_or(0)
}

/// Adds the envelope fields the model left out, from the request and the
/// host (`new_id`, `now` are asked only when needed). Fields the model did
/// write stay, and are checked against the request as before.
pub fn fill_envelope(
    value: &mut Value,
    packet: &RequestPacket,
    new_id: &dyn Fn() -> String,
    now: &dyn Fn() -> String,
) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    let mut put = |key: &str, make: &dyn Fn() -> Value| {
        if !object.contains_key(key) {
            object.insert(key.to_string(), make());
        }
    };
    put(
        "protocol",
        &|| json!({"name": PROTOCOL_NAME, "version": PROTOCOL_VERSION}),
    );
    put("id", &|| json!(new_id()));
    put("type", &|| json!("response"));
    put("created_at", &|| json!(now()));
    put(
        "conversation",
        &|| json!({"id": packet.conversation.id, "turn": packet.conversation.turn}),
    );
    put("sender", &|| json!({"role": "assistant"}));
    put("in_reply_to", &|| json!({"request_id": packet.id}));
}

/// A short sketch of the answer's shape for the system prompt, when the
/// runtime enforces the schema itself: the top level, then one line per
/// definition (`paragraph: {"type":"paragraph","children":[inline]}`).
pub fn sketch(answer: &Value) -> String {
    let mut out = shape(answer, 0);
    for (name, def) in answer["$defs"].as_object().into_iter().flatten() {
        out.push('\n');
        out.push_str(name);
        out.push_str(": ");
        out.push_str(&shape(def, 0));
    }
    out
}

/// Enum options the sketch lists before `…`.
const SKETCH_OPTIONS: usize = 3;

/// Object depth the top-level sketch shows before `{…}`.
const SKETCH_DEPTH: usize = 4;

/// Objects told apart by one constant field (tool calls by `name`):
/// `{"name": "a"|"b", "arguments": …}`, the choices listed once.
fn tagged_union(alts: &[Value]) -> Option<String> {
    let first = alts.first()?["properties"].as_object()?;
    let (tag, _) = first.iter().find(|(_, v)| v.get("const").is_some())?;
    let values: Option<Vec<String>> = alts
        .iter()
        .map(|a| {
            a["properties"][tag.as_str()]["const"]
                .as_str()
                .map(|c| json!(c).to_string())
        })
        .collect();
    let others: Vec<String> = first
        .keys()
        .filter(|k| *k != tag)
        .map(|k| format!("\"{k}\": {{…}}"))
        .collect();
    let mut fields = vec![format!("\"{tag}\": {}", values?.join("|"))];
    fields.extend(others);
    Some(format!("{{{}}}", fields.join(", ")))
}

fn shape(schema: &Value, depth: usize) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        return target.rsplit('/').next().unwrap_or(target).to_string();
    }
    if let Some(alts) = schema.get("anyOf").and_then(Value::as_array) {
        if let Some(sketch) = tagged_union(alts) {
            return sketch;
        }
        let names: Vec<String> = alts.iter().map(|a| shape(a, depth)).collect();
        return names.join(" | ");
    }
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        // A few options show the kind; the decoder (or the documents the
        // ids come from) has the rest, and the prompt stays the same size
        // whatever the request packs, so the budget computed before packing
        // holds.
        let mut names: Vec<String> = options
            .iter()
            .take(SKETCH_OPTIONS)
            .map(Value::to_string)
            .collect();
        if options.len() > SKETCH_OPTIONS {
            names.push("…".into());
        }
        return names.join("|");
    }
    if is_type(schema, "array") {
        let item = schema
            .get("items")
            .map_or_else(String::new, |i| shape(i, depth));
        return match schema["maxItems"].as_u64() {
            Some(n) => format!("[{item}, at most {n}]"),
            None => format!("[{item}]"),
        };
    }
    if let Some(props) = schema["properties"].as_object() {
        if depth >= SKETCH_DEPTH {
            return "{…}".into();
        }
        let required = schema["required"].as_array();
        let fields: Vec<String> = props
            .iter()
            .map(|(k, v)| {
                let optional = !required.is_some_and(|r| r.contains(&json!(k)));
                format!(
                    "\"{k}\"{}: {}",
                    if optional { "?" } else { "" },
                    shape(v, depth + 1)
                )
            })
            .collect();
        return format!("{{{}}}", fields.join(", "));
    }
    let mut t = match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".into(),
    };
    if let Some(n) = schema["maxLength"].as_u64() {
        t.push_str(&format!("(≤{n})"));
    }
    t
}

#[cfg(test)]
mod tests;

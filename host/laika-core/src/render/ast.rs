//! The render AST's node types (laika.llmcp "Allowed node types") and
//! read access to a sanitized render.

use serde_json::Value;

/// Level given to a heading whose level is missing or not a number (the
/// seed's example answers use `h2` for their top heading).
pub(crate) const DEFAULT_HEADING_LEVEL: u8 = 2;

/// Every node type of the seed's render AST (laika.llmcp "Allowed node types").
pub const NODE_TYPES: &[&str] = &[
    "doc",
    "heading",
    "paragraph",
    "list",
    "list_item",
    "blockquote",
    "code_block",
    "table",
    "table_row",
    "table_cell",
    "text",
    "link",
];

/// Known node types: anything else is dropped as unknown.
pub fn is_known_type(t: &str) -> bool {
    NODE_TYPES.contains(&t)
}

pub(crate) fn node_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

pub(crate) fn items<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(crate) fn str_field<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

//! The render AST (docs/llmcp.md#render-document), typed.
//!
//! A [`Doc`] only comes out of the sanitizer (or is built by trusted code
//! such as the builtin runtime), so its shape is the grammar's placement rules:
//! doc / list_item / blockquote hold blocks, heading / paragraph / table_cell
//! hold inline nodes, a link holds text only. Serialized, every node is an
//! object with its `"type"` and exactly the fields the sanitizer keeps, so
//! `to_value()` equals the JSON the sidebar and the store have always seen.
//!
//! [`Block`] is an internally tagged enum; the other node structs write their
//! own `"type"`, and [`Inline`] is an untagged choice of [`Text`] or [`Link`]
//! because a link's children are `Text` nodes too.
//!
//! The same types give the wire schema of a render (`assistant.render`,
//! `render_delta.blocks`): every node is closed to exactly its fields, placed
//! where the sanitizer places it, with the sanitizer's bounds (heading level,
//! language length, href scheme). Only the depth limit has no schema form. A
//! property test holds the sanitizer to that schema.

use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::Value;

/// Longest `code_block.language` kept.
pub const MAX_LANGUAGE_CHARS: usize = 32;
/// Heading levels are 1..=this, as in HTML.
pub const MAX_HEADING_LEVEL: u8 = 6;

/// Every node type of the render AST (docs/wire-protocol.md#assistant).
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

/// The root: `{"type":"doc","children":[block…]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "doc")]
#[schemars(rename = "RenderDoc", deny_unknown_fields, transform = type_tag("doc"))]
pub struct Doc {
    pub children: Vec<Block>,
}

/// A node of block content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schemars(rename = "RenderBlock", deny_unknown_fields)]
pub enum Block {
    /// `level` is 1 to 6.
    Heading {
        #[schemars(range(min = 1, max = MAX_HEADING_LEVEL))]
        level: u8,
        children: Vec<Inline>,
    },
    Paragraph {
        children: Vec<Inline>,
    },
    List {
        ordered: bool,
        items: Vec<ListItem>,
    },
    Blockquote {
        children: Vec<Block>,
    },
    /// `language` is a plain language name, absent rather than null.
    CodeBlock {
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "String", length(min = 1, max = MAX_LANGUAGE_CHARS))]
        language: Option<String>,
        text: String,
    },
    Table {
        rows: Vec<TableRow>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "list_item")]
#[schemars(rename = "RenderListItem", deny_unknown_fields, transform = type_tag("list_item"))]
pub struct ListItem {
    pub children: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "table_row")]
#[schemars(rename = "RenderTableRow", deny_unknown_fields, transform = type_tag("table_row"))]
pub struct TableRow {
    pub cells: Vec<TableCell>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "table_cell")]
#[schemars(rename = "RenderTableCell", deny_unknown_fields, transform = type_tag("table_cell"))]
pub struct TableCell {
    pub header: bool,
    pub children: Vec<Inline>,
}

/// A node of inline content: text or a link.
// Untagged: each node struct writes its own `"type"`, because a link's
// children are `Text` nodes too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "RenderInline")]
pub enum Inline {
    Text(Text),
    Link(Link),
}

/// Never empty; no control or bidi override characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "text")]
#[schemars(rename = "RenderText", deny_unknown_fields, transform = type_tag("text"))]
pub struct Text {
    pub text: String,
}

/// `href` is an absolute http, https or mailto URL without credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "type", rename = "link")]
#[schemars(rename = "RenderLink", deny_unknown_fields, transform = type_tag("link"))]
pub struct Link {
    #[schemars(regex(pattern = r"^(https?://|mailto:)"))]
    pub href: String,
    pub children: Vec<Text>,
}

/// Adds the `"type"` a tagged node struct writes to its derived schema:
/// serde writes the tag of `#[serde(tag = "type", rename = …)]` on a struct,
/// but schemars describes only the fields.
fn type_tag(tag: &'static str) -> impl FnMut(&mut Schema) {
    move |schema: &mut Schema| {
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert(
                "type".into(),
                serde_json::json!({ "type": "string", "const": tag }),
            );
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.insert(0, "type".into());
        }
    }
}

impl Text {
    pub fn new(text: impl Into<String>) -> Self {
        Text { text: text.into() }
    }
}

impl Doc {
    /// The doc as JSON, exactly as the sanitizer's output has always read.
    pub fn to_value(&self) -> Value {
        // Only strings, bools, small integers and sequences: serializing
        // cannot fail, and an empty doc is the safe answer if it ever did.
        serde_json::to_value(self)
            .unwrap_or_else(|_| serde_json::json!({"type": "doc", "children": []}))
    }
}

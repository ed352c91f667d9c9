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

use super::sanitize::{sanitize, RenderLimits, MAX_HEADING_LEVEL, MAX_LANGUAGE_CHARS};
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

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

/// A doc reads back only from JSON the sanitizer leaves exactly as it is, so
/// a deserialized `Doc` keeps every guarantee of a sanitized one.
impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let sanitized = sanitize(&value, &RenderLimits::default());
        match sanitized.dropped.first() {
            None => Ok(sanitized.render),
            Some(first) => Err(serde::de::Error::custom(format!(
                "not a sanitized render: {first}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures::{doc, full_doc, text};
    use serde_json::{json, Map};

    #[test]
    fn serializes_to_the_seed_json_and_reads_back() {
        let doc = Doc {
            children: vec![
                Block::Heading {
                    level: 2,
                    children: vec![Inline::Text(Text::new("T"))],
                },
                Block::CodeBlock {
                    language: None,
                    text: "x".into(),
                },
                Block::Table {
                    rows: vec![TableRow {
                        cells: vec![TableCell {
                            header: true,
                            children: vec![Inline::Link(Link {
                                href: "https://a.example/".into(),
                                children: vec![Text::new("a")],
                            })],
                        }],
                    }],
                },
            ],
        };
        let want = json!({"type": "doc", "children": [
            {"type": "heading", "level": 2, "children": [{"type": "text", "text": "T"}]},
            {"type": "code_block", "text": "x"},
            {"type": "table", "rows": [{"type": "table_row", "cells": [
                {"type": "table_cell", "header": true, "children": [
                    {"type": "link", "href": "https://a.example/", "children": [{"type": "text", "text": "a"}]}
                ]}
            ]}]}
        ]});
        assert_eq!(doc.to_value(), want);
        assert_eq!(serde_json::from_value::<Doc>(want).unwrap(), doc);
        let full = full_doc();
        let typed: Doc = serde_json::from_value(full.clone()).unwrap();
        assert_eq!(typed.to_value(), full);
    }

    #[test]
    fn only_sanitized_json_reads_back() {
        for bad in [
            json!({"type": "doc", "children": [{"type": "script"}]}),
            json!({"type": "paragraph", "children": []}),
            json!({"type": "doc", "children": [{"type": "heading", "level": "2", "children": [{"type": "text", "text": "a"}]}]}),
            json!(null),
        ] {
            assert!(serde_json::from_value::<Doc>(bad.clone()).is_err(), "{bad}");
        }
    }

    /// The wire schema of a render (as the host renders it, for the
    /// serializer), as a validator.
    fn wire_validator() -> jsonschema::Validator {
        let schema = schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<Doc>();
        let text = schema.as_value().to_string();
        for kind in NODE_TYPES {
            assert!(text.contains(&format!(r#""const":"{kind}""#)), "{kind}");
        }
        jsonschema::validator_for(schema.as_value()).unwrap()
    }

    #[test]
    fn the_wire_schema_has_every_node_and_nothing_else() {
        let validator = wire_validator();
        assert!(validator.is_valid(&full_doc()));
        let unknown = doc(vec![json!({ "type": "html", "html": "<b>x</b>" })]);
        assert!(!validator.is_valid(&unknown));
        let extra_field = doc(vec![
            json!({ "type": "paragraph", "style": "x", "children": [] }),
        ]);
        assert!(!validator.is_valid(&extra_field));
        let inline_in_blocks = doc(vec![text("x")]);
        assert!(!validator.is_valid(&inline_in_blocks));
        let level_7 = doc(vec![
            json!({ "type": "heading", "level": 7, "children": [] }),
        ]);
        assert!(!validator.is_valid(&level_7));
        let long_language = doc(vec![
            json!({ "type": "code_block", "language": "x".repeat(33), "text": "" }),
        ]);
        assert!(!validator.is_valid(&long_language));
        let untagged_text = doc(vec![
            json!({ "type": "paragraph", "children": [{ "text": "x" }] }),
        ]);
        assert!(!validator.is_valid(&untagged_text));
        let script = doc(vec![json!({ "type": "paragraph", "children": [
            { "type": "link", "href": "javascript:alert(1)", "children": [] }
        ] })]);
        assert!(!validator.is_valid(&script));
    }

    fn run(input: &Value) -> Value {
        sanitize(input, &RenderLimits::default()).render.to_value()
    }

    /// Render-like trees: known and unknown node types, any of the fields,
    /// values of every JSON type.
    fn render_like() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let kinds: Vec<&str> = NODE_TYPES.iter().copied().chain(["html", ""]).collect();
        let kind = prop::sample::select(kinds);
        let fields = [
            "children", "items", "rows", "cells", "text", "href", "level", "ordered", "header",
            "language",
        ];
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..9).prop_map(Value::from),
            "[a-z :/.@#+\u{202e}\n]{0,12}".prop_map(Value::from),
            prop::sample::select(vec![
                "https://a.example/x",
                "mailto:a@example.com",
                "javascript:alert(1)",
                "https://u:p@a.example/",
                "rust",
            ])
            .prop_map(Value::from),
        ];
        scalar.prop_recursive(4, 64, 6, move |inner| {
            let value = prop_oneof![
                inner.clone(),
                prop::collection::vec(inner, 0..4).prop_map(Value::from),
            ];
            let fields =
                prop::collection::btree_map(prop::sample::select(fields.to_vec()), value, 0..5);
            (kind.clone(), fields).prop_map(|(kind, fields)| {
                let mut node: Map<String, Value> =
                    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                node.insert("type".into(), kind.into());
                Value::Object(node)
            })
        })
    }

    proptest::proptest! {
        /// Whatever goes in, what `sanitize` returns obeys the wire schema.
        #[test]
        fn sanitized_renders_obey_the_wire_schema(input in render_like()) {
            let out = run(&input);
            let validator = wire_validator();
            let errors: Vec<String> = validator.iter_errors(&out).map(|e| format!("{e} at {}", e.instance_path())).collect();
            proptest::prop_assert!(errors.is_empty(), "{errors:?}\n{out}");
        }
    }
}

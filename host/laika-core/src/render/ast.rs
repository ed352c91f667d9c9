//! The render AST (laika.llmcp "Allowed node types"), typed.
//!
//! A [`Doc`] only comes out of the sanitizer (or is built by trusted code
//! such as the builtin runtime), so its shape is the seed's placement rules:
//! doc / list_item / blockquote hold blocks, heading / paragraph / table_cell
//! hold inline nodes, a link holds text only. Serialized, every node is an
//! object with its `"type"` and exactly the fields the sanitizer keeps, so
//! `to_value()` equals the JSON the sidebar and the store have always seen.
//!
//! [`Block`] is an internally tagged enum; the other node structs write their
//! own `"type"`, and [`Inline`] is an untagged choice of [`Text`] or [`Link`]
//! because a link's children are `Text` nodes too.

use super::sanitize::{sanitize, RenderLimits};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

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

/// The root: `{"type":"doc","children":[block…]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "doc")]
pub struct Doc {
    pub children: Vec<Block>,
}

/// A node of block content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// `level` is 1..=6.
    Heading {
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
        language: Option<String>,
        text: String,
    },
    Table {
        rows: Vec<TableRow>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "list_item")]
pub struct ListItem {
    pub children: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "table_row")]
pub struct TableRow {
    pub cells: Vec<TableCell>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "table_cell")]
pub struct TableCell {
    pub header: bool,
    pub children: Vec<Inline>,
}

/// A node of inline content. Each variant's struct writes its own `"type"`
/// (a link's children are [`Text`] too), hence untagged here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Inline {
    Text(Text),
    Link(Link),
}

/// Never empty; no control or bidi override characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "text")]
pub struct Text {
    pub text: String,
}

/// `href` is an absolute http, https or mailto URL (see `sanitize_href`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "link")]
pub struct Link {
    pub href: String,
    pub children: Vec<Text>,
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
    use crate::render::fixtures::full_doc;
    use serde_json::json;

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
}

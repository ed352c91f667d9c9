//! The wire schema of a sanitized render: one definition per node type,
//! closed to exactly the fields and placement the sanitizer emits (see
//! `sanitize`'s module docs). The event types point at it with
//! `#[schemars(schema_with = …)]`; a property test holds the sanitizer to it.

use super::sanitize::{MAX_HEADING_LEVEL, MAX_LANGUAGE_CHARS};
use schemars::{json_schema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

/// Node types that may stand in block content (doc, list_item, blockquote).
const BLOCK_TYPES: [&str; 6] = [
    "heading",
    "paragraph",
    "list",
    "blockquote",
    "code_block",
    "table",
];
/// Node types that may stand in inline content (heading, paragraph, table_cell).
const INLINE_TYPES: [&str; 2] = ["text", "link"];

/// The wire schema of what [`sanitize`] returns (`assistant.render`), for
/// `#[schemars(schema_with)]`: one definition per node type (`RenderDoc`,
/// `RenderCodeBlock`, …) plus `RenderBlock` and `RenderInline`, each closed
/// to exactly the fields and placement the module docs promise.
pub fn json_schema(generator: &mut SchemaGenerator) -> Schema {
    define_node_schemas(generator);
    node_ref(generator, "doc")
}

/// The wire schema of a run of top-level blocks (`render_delta.blocks`).
pub fn blocks_json_schema(generator: &mut SchemaGenerator) -> Schema {
    define_node_schemas(generator);
    let block = node_ref(generator, "block");
    json_schema!({ "type": "array", "items": block })
}

/// `RenderCodeBlock` for `code_block`.
fn node_definition_name(kind: &str) -> String {
    let words = kind.split('_').map(|w| {
        let mut chars = w.chars();
        chars.next().map_or(String::new(), |c| {
            c.to_ascii_uppercase().to_string() + chars.as_str()
        })
    });
    std::iter::once("Render".to_owned()).chain(words).collect()
}

fn node_ref(generator: &SchemaGenerator, kind: &str) -> Schema {
    let defs = generator.settings().definitions_path.trim_end_matches('/');
    Schema::new_ref(format!("#{defs}/{}", node_definition_name(kind)))
}

fn define_node_schemas(generator: &mut SchemaGenerator) {
    let key = node_definition_name;
    if generator.definitions().contains_key(&key("doc")) {
        return;
    }
    let node = |name: &str| node_ref(generator, name).to_value();
    let list_of = |name: &str| json!({ "type": "array", "items": node(name) });
    let (blocks, inline) = (list_of("block"), list_of("inline"));
    let text = json!({ "type": "string" });
    let boolean = json!({ "type": "boolean" });
    let shapes: [(&str, Value, &[&str]); 12] = [
        ("doc", json!({ "children": blocks }), &["children"]),
        (
            "heading",
            json!({
                "level": { "type": "integer", "minimum": 1, "maximum": MAX_HEADING_LEVEL },
                "children": inline,
            }),
            &["level", "children"],
        ),
        ("paragraph", json!({ "children": inline }), &["children"]),
        (
            "list",
            json!({ "ordered": boolean, "items": list_of("list_item") }),
            &["ordered", "items"],
        ),
        ("list_item", json!({ "children": blocks }), &["children"]),
        ("blockquote", json!({ "children": blocks }), &["children"]),
        (
            "code_block",
            json!({
                "language": { "type": "string", "minLength": 1, "maxLength": MAX_LANGUAGE_CHARS },
                "text": text,
            }),
            &["text"],
        ),
        ("table", json!({ "rows": list_of("table_row") }), &["rows"]),
        (
            "table_row",
            json!({ "cells": list_of("table_cell") }),
            &["cells"],
        ),
        (
            "table_cell",
            json!({ "header": boolean, "children": inline }),
            &["header", "children"],
        ),
        ("text", json!({ "text": text }), &["text"]),
        (
            "link",
            json!({
                "href": {
                    "description": "An absolute http(s) URL without credentials, or mailto: (sanitize_href).",
                    "type": "string",
                    "pattern": "^(https?://|mailto:)",
                },
                "children": list_of("text"),
            }),
            &["href", "children"],
        ),
    ];
    let mut definitions = Map::new();
    for (kind, mut properties, fields) in shapes {
        properties["type"] = json!({ "const": kind });
        let required: Vec<&str> = std::iter::once("type")
            .chain(fields.iter().copied())
            .collect();
        definitions.insert(
            key(kind),
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }),
        );
    }
    let one_of =
        |kinds: &[&str]| json!({ "oneOf": kinds.iter().map(|k| node(k)).collect::<Vec<_>>() });
    definitions.insert(key("block"), one_of(&BLOCK_TYPES));
    definitions.insert(key("inline"), one_of(&INLINE_TYPES));
    generator.definitions_mut().extend(definitions);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures::{doc, full_doc, text};
    use crate::render::{sanitize, RenderLimits, NODE_TYPES};

    fn run(input: &Value) -> Value {
        sanitize(input, &RenderLimits::default()).render.to_value()
    }

    /// The wire schema of a render, as a validator.
    fn wire_validator() -> jsonschema::Validator {
        let mut generator = SchemaGenerator::default();
        let doc = json_schema(&mut generator).to_value();
        let defs = generator.definitions();
        assert_eq!(defs.len(), NODE_TYPES.len() + 2, "{:?}", defs.keys());
        for kind in NODE_TYPES {
            assert!(defs.contains_key(&node_definition_name(kind)), "{kind}");
        }
        let schema = json!({ "$ref": doc["$ref"], "$defs": defs });
        jsonschema::validator_for(&schema).unwrap()
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

//! The render tree's wire shape against the sanitizer: what it serializes
//! to, what reads back, and that every sanitized render obeys the schema.

use super::fixtures::{doc, full_doc, text};
use super::sanitize::{sanitize, RenderLimits};
use laika_protocol::render::ast::{
    Block, Doc, Inline, Link, TableCell, TableRow, Text, NODE_TYPES,
};
use serde_json::{json, Map, Value};

/// A render as stored JSON reads back: only what the sanitizer leaves
/// exactly as it is.
fn read_back(value: &Value) -> Option<Doc> {
    let sanitized = sanitize(value, &RenderLimits::default());
    sanitized.dropped.is_empty().then_some(sanitized.render)
}

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
    assert_eq!(read_back(&want), Some(doc));
    let full = full_doc();
    let typed = read_back(&full).unwrap();
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
        assert!(read_back(&bad).is_none(), "{bad}");
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

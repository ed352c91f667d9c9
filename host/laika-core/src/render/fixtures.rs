//! Renders shared by the render tests.

use serde_json::{json, Value};

pub fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

pub fn para(children: Vec<Value>) -> Value {
    json!({ "type": "paragraph", "children": children })
}

pub fn doc(children: Vec<Value>) -> Value {
    json!({ "type": "doc", "children": children })
}

pub fn full_doc() -> Value {
    json!({
        "type": "doc",
        "children": [
            { "type": "heading", "level": 3, "children": [text("Title")] },
            { "type": "paragraph", "children": [
                text("See "),
                { "type": "link", "href": "https://example.com/a?b=c#d", "children": [text("this")] },
                text(".")
            ] },
            { "type": "list", "ordered": true, "items": [
                { "type": "list_item", "children": [para(vec![text("one")])] },
                { "type": "list_item", "children": [
                    para(vec![text("two")]),
                    { "type": "list", "ordered": false, "items": [
                        { "type": "list_item", "children": [para(vec![text("inner")])] }
                    ] }
                ] }
            ] },
            { "type": "blockquote", "children": [para(vec![text("quoted")])] },
            { "type": "code_block", "language": "rust", "text": "fn main() {\n\tx < y\n}" },
            { "type": "code_block", "text": "plain" },
            { "type": "table", "rows": [
                { "type": "table_row", "cells": [
                    { "type": "table_cell", "header": true, "children": [text("K")] },
                    { "type": "table_cell", "header": true, "children": [text("V")] }
                ] },
                { "type": "table_row", "cells": [
                    { "type": "table_cell", "header": false, "children": [text("a")] },
                    { "type": "table_cell", "header": false, "children": [
                        { "type": "link", "href": "mailto:x@example.com", "children": [text("mail")] }
                    ] }
                ] }
            ] }
        ]
    })
}

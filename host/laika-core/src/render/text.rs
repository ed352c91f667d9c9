//! A render as plain text, for search indexing and previews.

use super::ast::{items, node_type, str_field};
use super::sanitize::{sanitize, RenderLimits};
use serde_json::Value;

/// The readable text of a render, for search indexing and previews: blocks
/// separated by newlines, list items prefixed with "- " (continuation lines
/// indented), table cells separated by " | ", links reduced to their words.
/// The input is re-sanitized first.
pub fn plain_text(render: &Value) -> String {
    let doc = sanitize(render, &RenderLimits::default()).render;
    blocks_text(items(&doc, "children"))
}

pub(crate) fn blocks_text(blocks: &[Value]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(block_text)
        .filter(|s| !s.is_empty())
        .collect();
    parts.join("\n")
}

fn block_text(block: &Value) -> String {
    match node_type(block) {
        Some("heading" | "paragraph") => inline_text(items(block, "children")),
        Some("list") => {
            let lines: Vec<String> = items(block, "items")
                .iter()
                .map(|item| {
                    let body = blocks_text(items(item, "children"));
                    format!("- {}", body.replace('\n', "\n  "))
                })
                .collect();
            lines.join("\n")
        }
        Some("blockquote") => blocks_text(items(block, "children")),
        Some("code_block") => str_field(block, "text").to_string(),
        Some("table") => {
            let rows: Vec<String> = items(block, "rows")
                .iter()
                .map(|row| {
                    let cells: Vec<String> = items(row, "cells")
                        .iter()
                        .map(|cell| inline_text(items(cell, "children")))
                        .collect();
                    cells.join(" | ")
                })
                .collect();
            rows.join("\n")
        }
        _ => String::new(),
    }
}

fn inline_text(nodes: &[Value]) -> String {
    let mut out = String::new();
    for node in nodes {
        match node_type(node) {
            Some("text") => out.push_str(str_field(node, "text")),
            Some("link") => out.push_str(&inline_text(items(node, "children"))),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures::full_doc;
    use serde_json::json;

    #[test]
    fn plain_text_reads_like_text() {
        let want = "Title\nSee this.\n- one\n- two\n  - inner\nquoted\nfn main() {\n\tx < y\n}\nplain\nK | V\na | mail";
        assert_eq!(plain_text(&full_doc()), want);
        assert_eq!(plain_text(&json!(null)), "");
    }
}

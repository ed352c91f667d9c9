//! A render as plain text, for search indexing and previews.

use super::ast::{Block, Doc, Inline};
use super::sanitize::{sanitize, RenderLimits};
use serde_json::Value;

/// The readable text of an untrusted or stored render (see [`Doc::plain_text`]).
/// The input is re-sanitized first.
pub fn plain_text(render: &Value) -> String {
    sanitize(render, &RenderLimits::default())
        .render
        .plain_text()
}

impl Doc {
    /// The readable text: blocks separated by newlines, list items prefixed
    /// with "- " (continuation lines indented), table cells separated by
    /// " | ", links reduced to their words.
    pub fn plain_text(&self) -> String {
        blocks_text(&self.children)
    }
}

pub(crate) fn blocks_text(blocks: &[Block]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(block_text)
        .filter(|s| !s.is_empty())
        .collect();
    parts.join("\n")
}

fn block_text(block: &Block) -> String {
    match block {
        Block::Heading { children, .. } | Block::Paragraph { children } => inline_text(children),
        Block::List { items, .. } => {
            let lines: Vec<String> = items
                .iter()
                .map(|item| {
                    let body = blocks_text(&item.children);
                    format!("- {}", body.replace('\n', "\n  "))
                })
                .collect();
            lines.join("\n")
        }
        Block::Blockquote { children } => blocks_text(children),
        Block::CodeBlock { text, .. } => text.clone(),
        Block::Table { rows } => {
            let rows: Vec<String> = rows
                .iter()
                .map(|row| {
                    let cells: Vec<String> = row
                        .cells
                        .iter()
                        .map(|cell| inline_text(&cell.children))
                        .collect();
                    cells.join(" | ")
                })
                .collect();
            rows.join("\n")
        }
    }
}

fn inline_text(nodes: &[Inline]) -> String {
    let mut out = String::new();
    for node in nodes {
        match node {
            Inline::Text(t) => out.push_str(&t.text),
            Inline::Link(link) => link.children.iter().for_each(|t| out.push_str(&t.text)),
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

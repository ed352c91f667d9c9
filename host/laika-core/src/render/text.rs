//! A render as plain text, for search indexing and previews.

use laika_protocol::render::ast::{Block, Doc, Inline};

/// The readable text: blocks separated by newlines, list items prefixed
/// with "- " (continuation lines indented), table cells separated by
/// " | ", links reduced to their words.
pub fn doc_text(doc: &Doc) -> String {
    blocks_text(&doc.children)
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

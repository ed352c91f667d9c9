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
            Inline::Text(t) => push_node(&mut out, &t.text),
            Inline::Link(link) => link
                .children
                .iter()
                .for_each(|t| push_node(&mut out, &t.text)),
        }
    }
    out
}

/// Appends a node's text, keeping the boundary between two nodes a word
/// boundary: a key that ends one node and a link's word that starts the
/// next stay two words for search and for the secret detectors.
fn push_node(out: &mut String, text: &str) {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if out.chars().next_back().is_some_and(word) && text.chars().next().is_some_and(word) {
        out.push(' ');
    }
    out.push_str(text);
}

#[cfg(test)]
mod tests {
    use crate::render::fixtures::{doc, para, text};
    use crate::render::plain_text;
    use serde_json::json;

    #[test]
    fn a_node_boundary_between_words_stays_a_word_boundary() {
        let link =
            json!({"type": "link", "href": "https://docs.example/", "children": [text("docs")]});
        let render = doc(vec![para(vec![
            text("key AKIAIOSFODNN7EXAMPLE"),
            link.clone(),
        ])]);
        assert_eq!(plain_text(&render), "key AKIAIOSFODNN7EXAMPLE docs");
        // Spacing the model wrote is kept as it is.
        let render = doc(vec![para(vec![text("see the "), link, text(".")])]);
        assert_eq!(plain_text(&render), "see the docs.");
    }
}

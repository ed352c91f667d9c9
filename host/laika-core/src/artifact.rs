//! An artifact exported for `artifact.share`: Markdown, plain text, JSON or
//! CSV. The extension writes the result to a file or the clipboard.
//!
//! A render document is re-sanitized before it is written, so an export
//! holds only what the sidebar could show. Markdown escapes the characters
//! that would turn source text into markup (a quote cannot become a link or
//! a heading); CSV quotes every field and neutralizes leading `= + - @` so a
//! spreadsheet does not run a cell as a formula.

use crate::render::{self, RenderLimits};
use laika_protocol::collection::{Artifact, ShareFormat};
use laika_protocol::render::ast::{Block, Doc, Inline};
use serde_json::json;

/// The MIME type of an artifact holding a render document.
pub const RENDER_MIME: &str = "application/vnd.laika.render+json";

/// The artifact's document: its render, or its text as paragraphs.
fn document(artifact: &Artifact) -> Doc {
    match (&artifact.doc, &artifact.text) {
        (Some(doc), _) => render::sanitize(doc, &RenderLimits::default()).render,
        (None, Some(text)) => {
            let value = json!({"type": "doc", "children": text
                .split("\n\n")
                .filter(|p| !p.trim().is_empty())
                .map(|p| json!({"type": "paragraph", "children": [{"type": "text", "text": p.trim()}]}))
                .collect::<Vec<_>>()});
            render::sanitize(&value, &RenderLimits::default()).render
        }
        (None, None) => Doc::default(),
    }
}

/// A file name from the title: letters, digits and dashes.
pub fn filename(artifact: &Artifact, format: ShareFormat) -> String {
    named(&artifact.title, format)
}

/// A file name from a requested one (a model's or a user's): its stem in
/// letters, digits and dashes (no directories, no hidden file), with the
/// format's extension.
pub fn named(requested: &str, format: ShareFormat) -> String {
    let requested = requested.trim();
    let stem = match requested.rsplit_once('.') {
        Some((stem, ext)) if ext.eq_ignore_ascii_case(format.extension()) => stem,
        _ => requested,
    };
    let mut stem: String = stem
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    while stem.contains("--") {
        stem = stem.replace("--", "-");
    }
    let stem = crate::text::prefix_chars(stem.trim_matches('-'), 80).to_owned();
    let stem = if stem.is_empty() {
        "artifact".into()
    } else {
        stem
    };
    format!("{stem}.{}", format.extension())
}

/// The artifact in `format`.
pub fn export(artifact: &Artifact, format: ShareFormat) -> String {
    let doc = document(artifact);
    match format {
        ShareFormat::Markdown => to_markdown(&doc),
        ShareFormat::Text => crate::render::text::doc_text(&doc),
        ShareFormat::Json => serde_json::to_string_pretty(&json!({
            "id": artifact.id,
            "title": artifact.title,
            "mime": artifact.mime,
            "created_at": artifact.created_at,
            "collection_id": artifact.collection_id,
            "tags": artifact.tags,
            "text": artifact.text,
            "doc": artifact.doc.as_ref().map(|_| doc.to_value()),
        }))
        .unwrap_or_default(),
        ShareFormat::Csv => to_csv(&doc),
    }
}

fn escape_md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!'
        ) {
            out.push('\\');
        }
        out.push(if c == '\n' { ' ' } else { c });
    }
    out
}

fn inlines_md(children: &[Inline]) -> String {
    children
        .iter()
        .map(|i| match i {
            Inline::Text(t) => escape_md(&t.text),
            Inline::Link(l) => {
                let words: String = l.children.iter().map(|t| t.text.as_str()).collect();
                format!(
                    "[{}](<{}>)",
                    escape_md(&words),
                    l.href.replace(['<', '>', ' '], "")
                )
            }
        })
        .collect()
}

fn inlines_plain(children: &[Inline]) -> String {
    children
        .iter()
        .map(|i| match i {
            Inline::Text(t) => t.text.clone(),
            Inline::Link(l) => l.children.iter().map(|t| t.text.as_str()).collect(),
        })
        .collect()
}

pub fn to_markdown(doc: &Doc) -> String {
    let mut out = String::new();
    blocks_md(&doc.children, "", &mut out);
    out.trim_end().to_owned() + "\n"
}

fn blocks_md(blocks: &[Block], indent: &str, out: &mut String) {
    for block in blocks {
        match block {
            Block::Heading { level, children } => {
                out.push_str(&format!(
                    "{indent}{} {}\n\n",
                    "#".repeat(usize::from(*level).clamp(1, 6)),
                    inlines_md(children)
                ));
            }
            Block::Paragraph { children } => {
                out.push_str(&format!("{indent}{}\n\n", inlines_md(children)));
            }
            Block::List { ordered, items } => {
                for (n, item) in items.iter().enumerate() {
                    let marker = if *ordered {
                        format!("{}. ", n + 1)
                    } else {
                        "- ".into()
                    };
                    let mut inner = String::new();
                    let deeper = format!("{indent}{}", " ".repeat(marker.len()));
                    blocks_md(&item.children, &deeper, &mut inner);
                    let inner = inner.trim().to_owned();
                    out.push_str(&format!("{indent}{marker}{inner}\n"));
                }
                out.push('\n');
            }
            Block::Blockquote { children } => {
                let mut inner = String::new();
                blocks_md(children, "", &mut inner);
                for line in inner.trim_end().lines() {
                    out.push_str(&format!("{indent}> {line}\n"));
                }
                out.push('\n');
            }
            Block::CodeBlock { language, text } => {
                let fence = if text.contains("```") { "~~~~" } else { "```" };
                out.push_str(&format!(
                    "{indent}{fence}{}\n{text}\n{indent}{fence}\n\n",
                    language.as_deref().unwrap_or("")
                ));
            }
            Block::Table { rows } => {
                for (r, row) in rows.iter().enumerate() {
                    let cells: Vec<String> =
                        row.cells.iter().map(|c| inlines_md(&c.children)).collect();
                    out.push_str(&format!("{indent}| {} |\n", cells.join(" | ")));
                    if r == 0 {
                        let rule = vec!["---"; cells.len()].join(" | ");
                        out.push_str(&format!("{indent}| {rule} |\n"));
                    }
                }
                out.push('\n');
            }
        }
    }
}

fn csv_field(s: &str) -> String {
    let guarded = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    format!("\"{}\"", guarded.replace('"', "\"\""))
}

/// The document's tables as CSV (one after the other, a blank line
/// between); a document without a table gives one `text` column, a row per
/// block.
pub fn to_csv(doc: &Doc) -> String {
    let mut out = String::new();
    for block in &doc.children {
        if let Block::Table { rows } = block {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            for row in rows {
                let cells: Vec<String> = row
                    .cells
                    .iter()
                    .map(|c| csv_field(&inlines_plain(&c.children)))
                    .collect();
                out.push_str(&cells.join(","));
                out.push_str("\r\n");
            }
        }
    }
    if out.is_empty() {
        out.push_str("\"text\"\r\n");
        for block in &doc.children {
            let text = crate::render::text::blocks_text(std::slice::from_ref(block));
            if !text.trim().is_empty() {
                out.push_str(&csv_field(&text));
                out.push_str("\r\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(doc: serde_json::Value) -> Artifact {
        Artifact {
            id: "a-1".into(),
            title: "Comparison: Night trains / 2026".into(),
            mime: "application/vnd.laika.render+json".into(),
            text: None,
            doc: Some(doc),
            tags: vec![],
            collection_id: None,
            created_at: "t".into(),
        }
    }

    fn table() -> serde_json::Value {
        json!({"type": "doc", "children": [
            {"type": "heading", "level": 1, "children": [{"type": "text", "text": "Comparison"}]},
            {"type": "table", "rows": [
                {"type": "table_row", "cells": [
                    {"type": "table_cell", "header": true, "children": [{"type": "text", "text": "Source"}]},
                    {"type": "table_cell", "header": true, "children": [{"type": "text", "text": "Main point"}]}
                ]},
                {"type": "table_row", "cells": [
                    {"type": "table_cell", "header": false, "children": [{"type": "link", "href": "https://a.example/", "children": [{"type": "text", "text": "A"}]}]},
                    {"type": "table_cell", "header": false, "children": [{"type": "text", "text": "=HYPERLINK(\"x\") costs *49* | \"euros\""}]}
                ]}
            ]},
            {"type": "list", "ordered": false, "items": [
                {"type": "list_item", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "[not a link](javascript:x)"}]}]}
            ]}
        ]})
    }

    #[test]
    fn markdown_keeps_structure_and_escapes_source_text() {
        let md = export(&artifact(table()), ShareFormat::Markdown);
        assert!(
            md.starts_with("# Comparison\n\n| Source | Main point |\n| --- | --- |\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| [A](<https://a.example/>) | =HYPERLINK(\"x\") costs \\*49\\* \\| \"euros\" |"
            ),
            "{md}"
        );
        assert!(md.contains("- \\[not a link\\](javascript:x)"), "{md}");
    }

    #[test]
    fn csv_quotes_fields_and_disarms_formulas() {
        let csv = export(&artifact(table()), ShareFormat::Csv);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], "\"Source\",\"Main point\"");
        assert_eq!(
            lines[1],
            "\"A\",\"'=HYPERLINK(\"\"x\"\") costs *49* | \"\"euros\"\"\""
        );
        let prose = Artifact {
            doc: None,
            text: Some("First.\n\nSecond.".into()),
            ..artifact(json!(null))
        };
        assert_eq!(
            export(&prose, ShareFormat::Csv),
            "\"text\"\r\n\"First.\"\r\n\"Second.\"\r\n"
        );
    }

    #[test]
    fn text_json_and_file_names() {
        let a = artifact(table());
        assert!(export(&a, ShareFormat::Text).contains("Source | Main point"));
        let j: serde_json::Value = serde_json::from_str(&export(&a, ShareFormat::Json)).unwrap();
        assert_eq!(j["title"], "Comparison: Night trains / 2026");
        assert_eq!(
            filename(&a, ShareFormat::Markdown),
            "Comparison-Night-trains-2026.md"
        );
        let blank = Artifact {
            title: "///".into(),
            ..a
        };
        assert_eq!(filename(&blank, ShareFormat::Csv), "artifact.csv");
    }
}

//! A render as a fixed HTML subset, for history export (docs/llmcp.md#render-document).

use super::sanitize::{sanitize, RenderLimits};
use laika_protocol::render::ast::{Block, Doc, Inline, TableRow};
use serde_json::Value;
use std::fmt::{self, Write};
use std::sync::OnceLock;

const LINK_REL: &str = "noopener noreferrer nofollow";

/// An untrusted or stored render as the export HTML subset, for history
/// export (see [`doc_html`]). The input is re-sanitized first.
pub fn to_html(render: &Value) -> String {
    doc_html(&sanitize(render, &RenderLimits::default()).render)
}

/// The export HTML subset: every text is HTML-escaped, and the result
/// goes through a strict `ammonia` policy as a second, independent line
/// of defence.
pub fn doc_html(doc: &Doc) -> String {
    let mut html = String::new();
    blocks_html(&doc.children, &mut html);
    html_policy().clean(&html).to_string()
}

/// Text with the five HTML-special characters as entities, safe in element
/// content and in quoted attribute values alike.
pub(crate) struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&#39;")?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

fn escape_html(s: &str, out: &mut String) {
    // Writing into a String cannot fail.
    let _ = write!(out, "{}", Escaped(s));
}

fn blocks_html(blocks: &[Block], out: &mut String) {
    for block in blocks {
        block_html(block, out);
    }
}

fn block_html(block: &Block, out: &mut String) {
    match block {
        Block::Heading { level, children } => {
            let level = (*level).clamp(1, 6);
            out.push_str(&format!("<h{level}>"));
            inline_html(children, out);
            out.push_str(&format!("</h{level}>\n"));
        }
        Block::Paragraph { children } => {
            out.push_str("<p>");
            inline_html(children, out);
            out.push_str("</p>\n");
        }
        Block::List { ordered, items } => {
            let tag = if *ordered { "ol" } else { "ul" };
            out.push_str(&format!("<{tag}>\n"));
            for item in items {
                out.push_str("<li>");
                blocks_html(&item.children, out);
                out.push_str("</li>\n");
            }
            out.push_str(&format!("</{tag}>\n"));
        }
        Block::Blockquote { children } => {
            out.push_str("<blockquote>\n");
            blocks_html(children, out);
            out.push_str("</blockquote>\n");
        }
        Block::CodeBlock { text, .. } => {
            out.push_str("<pre><code>");
            escape_html(text, out);
            out.push_str("</code></pre>\n");
        }
        Block::Table { rows } => table_html(rows, out),
    }
}

/// Leading rows made only of header cells form `<thead>`, the rest `<tbody>`.
fn table_html(rows: &[TableRow], out: &mut String) {
    let is_header_row =
        |row: &TableRow| !row.cells.is_empty() && row.cells.iter().all(|c| c.header);
    let head = rows.iter().take_while(|r| is_header_row(r)).count();
    let head_rows = rows.get(..head).unwrap_or(&[]);
    let body_rows = rows.get(head..).unwrap_or(&[]);
    out.push_str("<table>\n");
    for (tag, section) in [("thead", head_rows), ("tbody", body_rows)] {
        if section.is_empty() {
            continue;
        }
        out.push_str(&format!("<{tag}>\n"));
        for row in section {
            out.push_str("<tr>");
            for cell in &row.cells {
                let cell_tag = if cell.header { "th" } else { "td" };
                out.push_str(&format!("<{cell_tag}>"));
                inline_html(&cell.children, out);
                out.push_str(&format!("</{cell_tag}>"));
            }
            out.push_str("</tr>\n");
        }
        out.push_str(&format!("</{tag}>\n"));
    }
    out.push_str("</table>\n");
}

fn inline_html(nodes: &[Inline], out: &mut String) {
    for node in nodes {
        match node {
            Inline::Text(t) => escape_html(&t.text, out),
            Inline::Link(link) => {
                out.push_str("<a href=\"");
                escape_html(&link.href, out);
                out.push_str("\">");
                for t in &link.children {
                    escape_html(&t.text, out);
                }
                out.push_str("</a>");
            }
        }
    }
}

/// The tags export HTML may hold: the render grammar's block and inline
/// nodes, nothing else.
pub const EXPORT_TAGS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "blockquote",
    "pre",
    "code",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
];

/// The export policy: exactly the subset's tags, `href` on `a` only, absolute
/// http/https/mailto URLs, and a fixed `rel` on every link.
fn html_policy() -> &'static ammonia::Builder<'static> {
    static POLICY: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    POLICY.get_or_init(|| {
        let mut builder = ammonia::Builder::empty();
        builder
            .tags(EXPORT_TAGS.iter().copied().collect())
            .generic_attributes(Default::default())
            .tag_attributes(
                [("a", ["href"].into_iter().collect())]
                    .into_iter()
                    .collect(),
            )
            .url_schemes(["http", "https", "mailto"].into_iter().collect())
            .url_relative(ammonia::UrlRelative::Deny)
            .link_rel(Some(LINK_REL))
            .strip_comments(true);
        builder
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures::{doc, full_doc, para, text};
    use serde_json::json;

    #[test]
    fn to_html_renders_the_subset() {
        let html = to_html(&full_doc());
        let expected = concat!(
            "<h3>Title</h3>\n",
            "<p>See <a href=\"https://example.com/a?b=c#d\" rel=\"noopener noreferrer nofollow\">this</a>.</p>\n",
            "<ol>\n<li><p>one</p>\n</li>\n<li><p>two</p>\n<ul>\n<li><p>inner</p>\n</li>\n</ul>\n</li>\n</ol>\n",
            "<blockquote>\n<p>quoted</p>\n</blockquote>\n",
            "<pre><code>fn main() {\n\tx &lt; y\n}</code></pre>\n",
            "<pre><code>plain</code></pre>\n",
            "<table>\n<thead>\n<tr><th>K</th><th>V</th></tr>\n</thead>\n",
            "<tbody>\n<tr><td>a</td><td><a href=\"mailto:x@example.com\" rel=\"noopener noreferrer nofollow\">mail</a></td></tr>\n</tbody>\n</table>\n",
        );
        assert_eq!(html, expected);
    }

    #[test]
    fn to_html_escapes_and_resanitizes() {
        let input = doc(vec![
            para(vec![
                text("<script>alert('x')</script> & \"q\""),
                json!({ "type": "link", "href": "javascript:alert(1)", "children": [text("bad")] }),
            ]),
            json!({ "type": "code_block", "language": "html", "text": "<img src=x onerror=alert(1)>" }),
            json!({ "type": "raw_html", "html": "<iframe src=x>" }),
        ]);
        let html = to_html(&input);
        assert_eq!(
            html,
            "<p>&lt;script&gt;alert('x')&lt;/script&gt; &amp; \"q\"bad</p>\n<pre><code>&lt;img src=x onerror=alert(1)&gt;</code></pre>\n"
        );
    }
}

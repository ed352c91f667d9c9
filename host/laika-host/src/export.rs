//! History export as a standalone HTML page. Every piece of stored text is
//! escaped here, and every render goes through `render::to_html` (ammonia), so
//! an exported chat is as inert as the sidebar: no script, no handlers, only
//! http(s)/mailto links.

use crate::store::ConversationDetail;
use laika_core::render;
use std::fmt::Write;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}\
.user{background:#eef2ff;border-radius:.5rem;padding:.5rem .75rem}\
.meta{color:#6b7280;font-size:.8rem}.failed{color:#b91c1c}\
blockquote{border-left:3px solid #d1d5db;margin-left:0;padding-left:.75rem}\
table{border-collapse:collapse}td,th{border:1px solid #d1d5db;padding:.25rem .5rem}";

/// A complete HTML document for one conversation.
pub fn to_html(conversation: &ConversationDetail) -> String {
    let title = conversation
        .title
        .as_deref()
        .unwrap_or("Laika conversation");
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    if let Some(url) = &conversation.page_url {
        let _ = writeln!(out, "<p class=\"meta\">Page: {}</p>", escape(url));
    }
    for turn in &conversation.turns {
        let _ = write!(
            out,
            "<section>\n<p class=\"meta\">Turn {} · {} · {}</p>\n<p class=\"user\">{}</p>\n",
            turn.turn,
            escape(&turn.created_at),
            escape(&turn.task),
            escape(&turn.user_text)
        );
        if let Some(render) = &turn.render {
            if let Some(t) = turn.answer_title.as_deref().filter(|t| !t.is_empty()) {
                let _ = writeln!(out, "<h2>{}</h2>", escape(t));
            }
            out.push_str(&render::to_html(render));
            out.push('\n');
        }
        if !turn.citations.is_empty() {
            out.push_str("<details><summary>Sources</summary><ul>\n");
            for c in &turn.citations {
                let quote = c.get("quote").and_then(|q| q.as_str()).unwrap_or_default();
                let mark = if c.get("verified").and_then(|v| v.as_bool()) == Some(false) {
                    " (not found on the page)"
                } else {
                    ""
                };
                let _ = writeln!(out, "<li>“{}”{mark}</li>", escape(quote));
            }
            out.push_str("</ul></details>\n");
        }
        if let Some(e) = &turn.error {
            let _ = writeln!(
                out,
                "<p class=\"failed\">This turn failed: {} ({})</p>",
                escape(&e.message),
                escape(&e.code)
            );
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

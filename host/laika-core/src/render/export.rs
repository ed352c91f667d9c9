//! History export as a standalone HTML page. Every piece of stored text is
//! escaped here, and every render goes through [`html::to_html`] (ammonia),
//! so an exported chat is as inert as the sidebar: no script, no handlers,
//! only http(s)/mailto links.

use super::html::{self, Escaped};
use laika_protocol::history::ConversationDetail;
use laika_protocol::saved_prompt::SavedPrompt;
use std::fmt::Write;

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}\
.user{background:#eef2ff;border-radius:.5rem;padding:.5rem .75rem}\
.meta{color:#6b7280;font-size:.8rem}.failed{color:#b91c1c}\
blockquote{border-left:3px solid #d1d5db;margin-left:0;padding-left:.75rem}\
table{border-collapse:collapse}td,th{border:1px solid #d1d5db;padding:.25rem .5rem}";

/// A complete HTML document for one conversation, and the saved prompts
/// (exported with the history, as in the JSON export).
pub fn to_html(conversation: &ConversationDetail, prompts: &[SavedPrompt]) -> String {
    let title = conversation
        .title
        .as_deref()
        .unwrap_or("Laika conversation");
    let mut out = String::new();
    // Writing into a String cannot fail, hence the ignored results.
    let _ = write!(
        out,
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        Escaped(title),
        Escaped(title)
    );
    if let Some(url) = &conversation.page_url {
        let _ = writeln!(out, "<p class=\"meta\">Page: {}</p>", Escaped(url));
    }
    for turn in &conversation.turns {
        let _ = write!(
            out,
            "<section>\n<p class=\"meta\">{} {} · {}</p>\n<p class=\"user\">{}</p>\n",
            task_word(&turn.task),
            turn.turn,
            Escaped(&readable_time(&turn.created_at)),
            Escaped(&turn.user_text)
        );
        if !turn.steps.is_empty() {
            out.push_str("<details><summary>Steps</summary><ol>\n");
            for call in turn.steps.iter().flat_map(|s| &s.calls) {
                let _ = writeln!(
                    out,
                    "<li>{} · {}: {}</li>",
                    Escaped(&call.name),
                    Escaped(&call.status),
                    Escaped(&call.summary)
                );
            }
            out.push_str("</ol></details>\n");
        }
        if let Some(render) = &turn.render {
            if let Some(t) = turn.answer_title.as_deref().filter(|t| !t.is_empty()) {
                let _ = writeln!(out, "<h2>{}</h2>", Escaped(t));
            }
            out.push_str(&html::to_html(render));
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
                let _ = writeln!(out, "<li>“{}”{mark}</li>", Escaped(quote));
            }
            out.push_str("</ul></details>\n");
        }
        if let Some(e) = &turn.error {
            let _ = writeln!(
                out,
                "<p class=\"failed\">This turn failed: {} ({})</p>",
                Escaped(&e.message),
                Escaped(&e.code)
            );
        }
        out.push_str("</section>\n");
    }
    if !prompts.is_empty() {
        out.push_str("<section class=\"prompts\">\n<h2>Saved prompts</h2>\n<ul>\n");
        for p in prompts {
            let key = p
                .key
                .map(|k| format!(" · shortcut {k}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<li><strong>{}</strong> <span class=\"meta\">{}{key}</span><br>{}</li>",
                Escaped(&p.name),
                task_word(p.task.as_str()),
                Escaped(&p.text)
            );
        }
        out.push_str("</ul>\n</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// What a turn asked, in words ("Summary 2"), not its task id.
fn task_word(task: &str) -> &'static str {
    match task {
        "web.summarize" => "Summary",
        "web.extract" => "Extraction",
        _ => "Question",
    }
}

/// An RFC 3339 time as people read it ("2026-01-24 12:34 UTC"); anything
/// else as it is.
fn readable_time(stamp: &str) -> String {
    match (stamp.get(..10), stamp.get(11..16), stamp.ends_with('Z')) {
        (Some(day), Some(time), true) if stamp.as_bytes().get(10) == Some(&b'T') => {
            format!("{day} {time} UTC")
        }
        _ => stamp.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::history::{StoredError, TurnDetail, TurnStatus};
    use serde_json::{json, Value};

    fn turn(render: Option<Value>, error: Option<StoredError>) -> TurnDetail {
        TurnDetail {
            turn: 1,
            created_at: "2026-01-24T12:34:56.789Z".into(),
            task: "web.answer".into(),
            status: if error.is_some() {
                TurnStatus::Failed
            } else {
                TurnStatus::Ok
            },
            error,
            user_message_id: "u-1".into(),
            user_text: "<img src=x onerror=alert(1)>?".into(),
            answer_text: String::new(),
            answer_title: Some("Title & <b>".into()),
            render,
            citations: vec![
                json!({"quote": "\"q\" <s>", "verified": true}),
                json!({"quote": "made up", "verified": false}),
            ],
            citations_total: 2,
            citations_verified: 1,
            verified_ratio: Some(0.5),
            model_id: None,
            attempts: 1,
            timings: json!({}),
            redacted: true,
            request_packet: json!({}),
            response_packet: None,
            steps: vec![laika_protocol::history::StepDetail {
                step: 1,
                calls: vec![laika_protocol::history::StepCall {
                    call_id: "c".into(),
                    name: "browser.click".into(),
                    arguments: json!({"handleId": "laika-1"}),
                    status: "ok".into(),
                    summary: "Clicked “<script>x</script>”".into(),
                    error: None,
                }],
            }],
            plan: None,
        }
    }

    #[test]
    fn every_stored_text_is_escaped_and_renders_are_sanitized() {
        let render = json!({"type": "doc", "children": [
            {"type": "paragraph", "children": [
                {"type": "link", "href": "javascript:alert(1)", "children": [{"type": "text", "text": "x"}]}
            ]},
            {"type": "raw_html", "html": "<script>alert(1)</script>"}
        ]});
        let conversation = ConversationDetail {
            id: "c-1".into(),
            title: Some("</title><script>alert(1)</script>".into()),
            created_at: String::new(),
            updated_at: String::new(),
            page_url: Some("https://x.example/?a=1&b=\"2\"".into()),
            page_origin: None,
            turns: vec![
                turn(Some(render), None),
                turn(
                    None,
                    Some(StoredError {
                        code: "RUNTIME_TIMEOUT".into(),
                        message: "<b>slow</b>".into(),
                    }),
                ),
            ],
        };
        let prompts = [SavedPrompt {
            id: "p1".into(),
            name: "<b>Catch</b>".into(),
            text: "What's the catch? <script>".into(),
            task: laika_protocol::llmcp::TaskName::Answer,
            key: Some(2),
            updated_at: "2026-01-24T12:34:56Z".into(),
        }];
        let html = to_html(&conversation, &prompts);
        assert!(
            html.contains("<h2>Saved prompts</h2>\n<ul>\n<li><strong>&lt;b&gt;Catch&lt;/b&gt;</strong> <span class=\"meta\">Question · shortcut 2</span><br>What&#39;s the catch? &lt;script&gt;</li>"),
            "{html}"
        );
        assert!(!to_html(&conversation, &[]).contains("Saved prompts"));
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(
            html.contains("<title>&lt;/title&gt;&lt;script&gt;"),
            "{html}"
        );
        assert!(html.contains("Page: https://x.example/?a=1&amp;b=&quot;2&quot;"));
        assert!(
            html.contains("<li>browser.click · ok: Clicked “&lt;script&gt;x&lt;/script&gt;”</li>"),
            "{html}"
        );
        assert!(html.contains("<h2>Title &amp; &lt;b&gt;</h2>\n<p>x</p>\n"));
        assert!(html.contains("<li>“&quot;q&quot; &lt;s&gt;”</li>"));
        assert!(html.contains("<li>“made up” (not found on the page)</li>"));
        assert!(html.contains("This turn failed: &lt;b&gt;slow&lt;/b&gt; (RUNTIME_TIMEOUT)"));
        assert!(html.ends_with("</section>\n</body></html>\n"));
        // People's words: no raw timestamp, no task id.
        assert!(
            html.contains("<p class=\"meta\">Question 1 · 2026-01-24 12:34 UTC</p>"),
            "{html}"
        );
        assert!(
            !html.contains("web.answer") && !html.contains("56.789Z"),
            "{html}"
        );
    }
}

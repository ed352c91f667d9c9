//! `web.summarize`: the page's lead sentence and its most salient,
//! mutually distinct sentences, in page order, each quoted.

use super::rank::{self, Index, Page, Scope};
use super::{
    cite, gate_notice, gate_reasons, heading, list, paragraph, visible_bytes, Reply, MAX_JACCARD,
};
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::llmcp::RequestPacket;
use crate::text::prefix_chars;
use serde_json::{Map, Value};

fn point_count(args: &Map<String, Value>) -> usize {
    let max_points = args.get("max_points").and_then(|v| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    if let Some(n) = max_points {
        return usize::try_from(n.clamp(1, 10)).unwrap_or(10);
    }
    match args
        .get("style")
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        .as_deref()
    {
        Some("concise" | "brief" | "short") => 3,
        Some("detailed" | "long" | "thorough") => 7,
        _ => 5,
    }
}

/// Marks of text beside the article rather than in it: photo credits,
/// teasers for other articles, embedded posts.
const ASIDE_MARKS: &[&str] = &[
    "getty images",
    "photo:",
    "photograph:",
    "(photo",
    "image:",
    "image credit",
    "read more",
    "related:",
    "also read",
    "click here",
    "watch:",
    "listen:",
    "pic.twitter.com",
    "(@",
    "recommended:",
    "more from",
    "you may also like",
];

/// A caption, a byline, or text of the page's margins (see
/// [`ASIDE_MARKS`]): never a summary point.
fn is_aside(page: &Page, unit: usize) -> bool {
    let Some(u) = page.units.get(unit) else {
        return true;
    };
    if u.kind == rank::Kind::Caption {
        return true;
    }
    let text = page.unit_text(unit);
    let lower = text.to_lowercase();
    let words = text.split_whitespace().count();
    let byline =
        (lower.starts_with("by ") || lower.starts_with("von ") || lower.starts_with("par "))
            && words <= 8;
    byline || ASIDE_MARKS.iter().any(|m| lower.contains(m))
}

pub(super) fn summarize(packet: &RequestPacket, cancel: &CancelToken) -> Result<Reply> {
    let page = Page::from_documents(&packet.context.documents, Scope::Main);
    cancel.check()?;
    let title = match page.title.trim() {
        "" => "Summary".to_string(),
        t => prefix_chars(t, 200).to_string(),
    };
    let mut blocks = vec![heading("Summary")];
    let reasons = gate_reasons(packet);
    if page.is_empty() {
        if let Some(n) = gate_notice(&reasons, 0, "this summary") {
            blocks.push(paragraph(&n));
        }
        blocks.push(paragraph("This page has no readable text."));
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: None,
        });
    }
    if let Some(n) = gate_notice(&reasons, visible_bytes(&page), "this summary") {
        blocks.push(paragraph(&n));
    }

    let index = Index::build(&page);
    cancel.check()?;
    let ranked = rank::salience(&page, &index);
    cancel.check()?;
    let k = point_count(&packet.input.task.args);

    // The lead: the earliest clean sentence among the strongest ones.
    let lead = ranked
        .iter()
        .take(2 * k)
        .filter(|s| !is_aside(&page, s.unit) && rank::quality(&page, &index, s.unit) >= 0.9)
        .map(|s| s.unit)
        .min();
    let lead_first = lead.into_iter();
    let (page_ref, index_ref) = (&page, &index);
    let good = |min: f64| {
        ranked
            .iter()
            .filter(move |s| {
                Some(s.unit) != lead
                    && !is_aside(page_ref, s.unit)
                    && rank::quality(page_ref, index_ref, s.unit) >= min
            })
            .map(|s| s.unit)
    };
    let mut points = rank::pick_diverse(
        &index,
        lead_first.chain(good(0.25)),
        k + usize::from(lead.is_some()),
        MAX_JACCARD,
    );
    points.retain(|&u| Some(u) != lead);
    if points.is_empty() && lead.is_none() {
        // No sentence looks like content: fall back to anything with words,
        // then to the first lines in page order (headings, code).
        points = rank::pick_diverse(&index, good(0.03), k, MAX_JACCARD);
        if points.is_empty() {
            points = (0..page.units.len().min(k)).collect();
        }
    }
    points.sort_unstable();

    let mut citations = Vec::new();
    if let Some(l) = lead {
        blocks.push(paragraph(page.unit_text(l)));
        citations.extend(cite(&page, l));
    }
    if !points.is_empty() {
        blocks.push(list(
            points
                .iter()
                .map(|&u| vec![page.unit_text(u).to_string()])
                .collect(),
        ));
        citations.extend(points.iter().filter_map(|&u| cite(&page, u)));
    }
    Ok(Reply {
        title,
        blocks,
        citations,
        data: None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use serde_json::{json, Value};

    #[test]
    fn summarize_quotes_content_not_chrome() {
        let p = packet(
            "web.summarize",
            json!({}),
            "summarize this page",
            summary("Cooling streets", ARTICLE),
            &[],
        );
        let v = run(&p);
        assert_eq!(v["assistant"]["title"], "Cooling streets");
        let q = quotes(&v);
        assert!((4..=6).contains(&q.len()), "{q:?}");
        for quote in &q {
            let lower = quote.to_lowercase();
            for chrome in [
                "cookie",
                "sign in",
                "subscribe",
                "rights reserved",
                "share this",
                "skip to",
            ] {
                assert!(!lower.contains(chrome), "{quote}");
            }
            assert!(quote.split_whitespace().count() >= 6, "{quote}");
        }
        let children = v["assistant"]["render"]["children"].as_array().unwrap();
        assert_eq!(children[0]["type"], "heading");
        assert_eq!(children[1]["type"], "paragraph");
        assert_eq!(
            children[1]["children"][0]["text"].as_str(),
            Some(q[0].as_str())
        );
        let items = children[2]["items"].as_array().unwrap();
        assert_eq!(items.len(), q.len() - 1);
        // Points are in page order.
        let positions: Vec<usize> = q
            .iter()
            .skip(1)
            .map(|s| ARTICLE.find(s.as_str()).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        assert!(!render_text(&v).contains("visible"));
    }

    #[test]
    fn summarize_honours_style_and_max_points() {
        let count = |args: Value| {
            let p = packet(
                "web.summarize",
                args,
                "summarize",
                summary("T", ARTICLE),
                &[],
            );
            let v = run(&p);
            v["assistant"]["render"]["children"][2]["items"]
                .as_array()
                .map_or(0, Vec::len)
        };
        let concise = count(json!({"style": "concise"}));
        let detailed = count(json!({"style": "detailed"}));
        assert_eq!(concise, 3);
        assert!(detailed > concise + 2, "{detailed}");
        assert_eq!(count(json!({"max_points": 2})), 2);
        assert_eq!(count(json!({"max_points": "4"})), 4);
    }

    #[test]
    fn summarize_says_when_the_page_is_gated_sparse_or_empty() {
        let mut s = summary(
            "News",
            "H1: News\nThe first paragraph of a paywalled story is visible here.",
        );
        s["signals"] = json!(["paywall", "overlay_or_dialog"]);
        let v = run(&packet("web.summarize", json!({}), "summarize", s, &[]));
        let text = render_text(&v);
        assert!(text.contains("Only part of this page is visible (a paywall, an overlay or dialog, very little readable text)"), "{text}");
        assert_eq!(
            quotes(&v),
            vec!["The first paragraph of a paywalled story is visible here."]
        );

        let mut s = summary("", "  \n ");
        s["signals"] = json!(["captcha"]);
        let v = run(&packet("web.summarize", json!({}), "summarize", s, &[]));
        assert_eq!(v["assistant"]["title"], "Summary");
        let text = render_text(&v);
        assert!(
            text.contains("This page has no readable text.") && text.contains("a CAPTCHA"),
            "{text}"
        );
        assert!(quotes(&v).is_empty());

        // Only headings: still summarized from what is there, quoted.
        let v = run(&packet(
            "web.summarize",
            json!({}),
            "summarize",
            summary("T", "H1: Menu\nH2: Contact"),
            &[],
        ));
        assert_eq!(quotes(&v), vec!["Menu", "Contact"]);
    }

    #[test]
    fn summarize_prefers_primary_and_reads_chunks() {
        let body =
            "The committee approved the new harbour bridge design after two years of debate. \
                    Construction of the bridge will start next spring and take three years. \
                    The bridge will carry trams, bicycles and pedestrians but no private cars.";
        let mut s = summary("Bridge", "Home | News | Sport\nCookie settings\nThe committee approved the new harbour bridge design after two years of debate.");
        s["primary"] = json!({"text": body, "tag": "article", "handle_id": "laika-7"});
        let p = packet(
            "web.summarize",
            json!({}),
            "summarize",
            s,
            &["Officials expect the bridge to cost 400 million euros in total."],
        );
        let v = run(&p);
        let cites = v["assistant"]["citations"].as_array().unwrap();
        assert!(cites.iter().any(|c| c["handle_id"] == "laika-7"));
        assert!(cites.iter().any(|c| c["doc_id"] == "doc:web:chunk:1"));
        assert!(!quotes(&v)
            .iter()
            .any(|q| q.contains("Cookie") || q.contains("Home |")));
    }

    #[test]
    fn summary_skips_asides_and_a_paywall_signal_on_a_whole_article() {
        let mut body = String::new();
        for i in 0..30 {
            body.push_str(&format!(
                "The harbour council debated bridge option {i} for the eastern district at length. "
            ));
        }
        body.push_str("\nCaption: The old bridge at dawn, seen from the harbour.\nBy Jane Doe\nRead more: Council votes on parking fees next week.\n");
        let mut s = summary("Bridge", &body);
        s["signals"] = json!(["paywall"]);
        let v = run(&packet("web.summarize", json!({}), "summarize", s, &[]));
        let text = render_text(&v);
        assert!(!text.contains("Only part of this page"), "{text}");
        for q in quotes(&v) {
            assert!(
                !q.contains("dawn") && !q.contains("Jane") && !q.contains("Read more"),
                "{q}"
            );
        }
    }
}

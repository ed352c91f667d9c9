//! `web.summarize`: a short lead sentence and the page's key points, chosen
//! by TextRank for centrality and MMR for coverage (one point per idea), in
//! page order, each an exact sentence of the page with an inline citation
//! marker.

use super::margins::Margins;
use super::salience;
use super::{cite, gate_notice, gate_reasons, heading, list, paragraph, visible_bytes, Reply};
use laika_core::cancel::CancelToken;
use laika_core::retrieval::{self, Index, Page, Scope};
use laika_core::text::prefix_chars;
use laika_protocol::error::Result;
use laika_protocol::llmcp::RequestPacket;
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

/// The lead sentence is short: a longer one goes among the points.
const LEAD_MAX_WORDS: usize = 30;
/// A lede is a sentence of at least this many words and at most
/// [`LEDE_MAX_WORDS`] …
const LEDE_MIN_WORDS: usize = 8;
const LEDE_MAX_WORDS: usize = 60;
/// … among the first units of the main content (a headline, a dateline,
/// a standfirst may stand before it).
const LEDE_REACH: usize = 4;

/// The lede of an article: the opening sentence of the page's marked main
/// content (`primary.text`), when it reads as one (`clean`, a full
/// sentence). None for a page without a marked main content.
fn lede(page: &Page, clean: impl Fn(usize) -> bool) -> Option<usize> {
    let in_primary = |u: usize| {
        page.unit_source(u)
            .is_some_and(|s| s.field == "primary.text")
    };
    (0..page.units.len())
        .take_while(|&u| in_primary(u))
        .filter(|&u| page.units[u].kind == retrieval::Kind::Sentence)
        .take(LEDE_REACH)
        .find(|&u| {
            let words = retrieval::word_count(page.unit_text(u));
            (LEDE_MIN_WORDS..=LEDE_MAX_WORDS).contains(&words) && clean(u)
        })
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
    if u.kind == retrieval::Kind::Caption {
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
    if let Some(n) = super::truncation_note(packet, &page, "this summary") {
        blocks.push(paragraph(&n));
    }

    let index = Index::build(&page);
    cancel.check()?;
    let k = point_count(&packet.input.task.args);
    let margins = Margins::of(&page);
    let clean = |u: usize, min: f64| {
        !is_aside(&page, u) && !margins.is_margin(u) && salience::quality(&page, &index, u) >= min
    };

    // An article leads with its point: the lede (the opening sentence of
    // its main content) first. Then the key points by TextRank + MMR; without
    // a lede, the lead is the earliest short, clean one among them.
    let lede = lede(&page, |u| clean(u, 0.9));
    let mut points = salience::key_sentences(&page, &index, |u| clean(u, 0.25), k + 1);
    cancel.check()?;
    let lead = lede.or_else(|| {
        points
            .iter()
            .copied()
            .filter(|&u| {
                clean(u, 0.9) && page.unit_text(u).split_whitespace().count() <= LEAD_MAX_WORDS
            })
            .min()
    });
    points.retain(|&u| lead.is_none_or(|l| u != l && index.jaccard(u, l) <= super::MAX_JACCARD));
    points.truncate(k);
    if points.is_empty() && lead.is_none() {
        // No sentence looks like content: fall back to anything with words,
        // then to the first lines in page order (headings, code).
        points = salience::key_sentences(&page, &index, |u| clean(u, 0.03), k);
        if points.is_empty() {
            points = (0..page.units.len().min(k)).collect();
        }
    }
    points.sort_unstable();

    // Each sentence is shown once, with an inline marker ("[2]") for its
    // citation; the sidebar links the marker to the quote on the page.
    let mut citations = Vec::new();
    let mut marked = |u: usize| {
        let text = page.unit_text(u).to_string();
        match cite(&page, u) {
            Some(c) => {
                citations.push(c);
                format!("{text} [{}]", citations.len())
            }
            None => text,
        }
    };
    if let Some(l) = lead {
        blocks.push(paragraph(&marked(l)));
    }
    if !points.is_empty() {
        let items = points.iter().map(|&u| vec![marked(u)]).collect();
        blocks.push(list(items));
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
            Some(format!("{} [1]", q[0]).as_str())
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
    fn an_article_summary_leads_with_its_lede_then_central_points_in_page_order() {
        let article = "WeWork's valuation has fallen from $47 billion to $8 billion after its failed stock market listing.\n\
            The company was founded in 2010 by Adam Neumann and Miguel McKelvey in New York.\n\
            Investors questioned the company's losses, which reached $1.25 billion in the last quarter.\n\
            SoftBank, its largest investor, agreed to take control of the company in a rescue deal.\n\
            The rescue deal values the company at $8 billion and gives SoftBank an 80 percent stake.\n\
            Neumann will leave the board and receive a payout of about $1.7 billion from SoftBank.\n\
            Employees fear layoffs as the company cuts costs after the failed listing.\n\
            The office in the photo is in Manhattan.";
        let mut s = summary("WeWork valuation falls", &format!("Home\nNews\n{article}\nH2: Most read\n- Ten gadgets to buy\n- The best phones\n- Our top stories"));
        s["primary"] = json!({"text": article, "handle_id": "laika-9"});
        let v = run(&packet(
            "web.summarize",
            json!({"max_points": 3}),
            "summarize",
            s,
            &[],
        ));
        let children = v["assistant"]["render"]["children"].as_array().unwrap();
        assert_eq!(
            children[1]["children"][0]["text"].as_str().unwrap_or(""),
            "WeWork's valuation has fallen from $47 billion to $8 billion after its failed stock market listing. [1]"
        );
        let q = quotes(&v);
        assert!(q.len() >= 3, "{q:?}");
        let order: Vec<usize> = q
            .iter()
            .map(|x| article.find(x.as_str()).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "page order: {q:?}");
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

    /// Markers "[n]" in the render, each right after the sentence it cites.
    fn marked(v: &Value) -> Vec<(String, usize)> {
        let text = render_text(v);
        let mut out = Vec::new();
        for line in text.lines() {
            if let Some((sentence, rest)) = line.rsplit_once(" [") {
                if let Some(n) = rest.strip_suffix(']').and_then(|n| n.parse().ok()) {
                    out.push((sentence.to_string(), n));
                }
            }
        }
        out
    }

    #[test]
    fn summary_points_are_central_distinct_and_cited_once_by_marker() {
        // An off-topic opening, then the article: near-duplicate sentences
        // about the main subject, a caption and a teaser.
        let body = "Welcome back to our weekly notebook of odds and ends from around town.\n\
            The city council voted on Tuesday to build a new tram line across the river.\n\
            The tram line will link the river district with the main station in four years.\n\
            Council members said the new tram line across the river was voted on Tuesday.\n\
            Construction of the tram line will cost the city 300 million euros, paid partly by the state.\n\
            Residents of the river district have asked for a tram link for more than twenty years.\n\
            Photo: The old tram depot at night. (Getty Images)\n\
            Read more: Parking fees rise again next month across the city centre.\n\
            Opponents say buses would serve the river district more cheaply than a tram line.";
        let v = run(&packet(
            "web.summarize",
            json!({"max_points": 4}),
            "summarize",
            summary("City votes for tram line across the river", body),
            &[],
        ));
        let marks = marked(&v);
        let cites = v["assistant"]["citations"].as_array().unwrap();
        // Every citation is shown once, as a marker after its sentence, and
        // every marker resolves to a quote of the page.
        assert_eq!(marks.len(), cites.len(), "{}", render_text(&v));
        for (i, (sentence, n)) in marks.iter().enumerate() {
            assert_eq!(*n, i + 1);
            let quote = cites[i]["quote"].as_str().unwrap();
            assert_eq!(sentence, quote);
            assert!(body.contains(quote), "{quote}");
        }
        let texts: Vec<&str> = marks.iter().map(|(s, _)| s.as_str()).collect();
        for t in &texts {
            assert!(
                !t.contains("Getty") && !t.contains("Read more") && !t.contains("Welcome back"),
                "{t}"
            );
        }
        // One point per idea: the restated vote is not a second point.
        let vote = texts.iter().filter(|t| t.contains("voted")).count();
        assert_eq!(vote, 1, "{texts:?}");
        // The lead is short and the cost, a distinct idea, is covered.
        assert!(texts[0].split_whitespace().count() <= 30);
        assert!(texts.iter().any(|t| t.contains("300 million")), "{texts:?}");
    }
}

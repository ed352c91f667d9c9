//! `web.answer`: the passages that hold most of the question, quoted, or
//! "the page does not say".

use super::rank::{self, Index, Kind, Page, Scope};
use super::{
    cite, gate_notice, gate_reasons, list, paragraph, quoted, Reply, MAX_JACCARD, SPARSE_BYTES,
};
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::llmcp::RequestPacket;
use crate::pack::SELECTION_DOC_ID;
use crate::text::prefix_chars;
use serde_json::Value;

/// A question is answered only by a unit holding at least this share of the
/// question's idf mass; below it the page "does not say".
const MIN_COVERAGE: f64 = 0.5;
const MAX_PASSAGES: usize = 3;
/// How many of the best BM25 units are checked for coverage.
const MAX_CANDIDATES: usize = 100;
/// A passage must score at least this share of the best one.
const MIN_RELATIVE_SCORE: f64 = 0.4;

/// Openers that lean on the sentence before them.
const REFERRING: &[&str] = &[
    "it", "its", "this", "that", "these", "those", "they", "their", "he", "she", "his", "her",
    "however", "but", "such", "there",
];

/// The units to quote for one chosen unit: a heading takes the sentence after
/// it; a short or referring sentence takes its neighbour in the same line.
fn passage(page: &Page, unit: usize) -> Vec<usize> {
    let Some(u) = page.units.get(unit) else {
        return Vec::new();
    };
    let same_block = |other: usize| page.units.get(other).is_some_and(|o| o.block == u.block);
    let same_source = |other: usize| {
        page.units.get(other).is_some_and(|o| {
            o.kind.is_prose() && page.block_source(o.block) == page.block_source(u.block)
        })
    };
    if matches!(u.kind, Kind::Heading(_)) {
        return if same_source(unit + 1) {
            vec![unit, unit + 1]
        } else {
            vec![unit]
        };
    }
    let t = page.unit_text(unit);
    let first = t
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase();
    let short = t.split_whitespace().count() < 8;
    if unit > 0 && (short || REFERRING.contains(&first.as_str())) && same_block(unit - 1) {
        vec![unit - 1, unit]
    } else if short && same_block(unit + 1) {
        vec![unit, unit + 1]
    } else {
        vec![unit]
    }
}

pub(super) fn answer(packet: &RequestPacket, cancel: &CancelToken) -> Result<Reply> {
    let args = &packet.input.task.args;
    let question = args
        .get("question")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
        .unwrap_or(&packet.input.user_message.text);
    let question = prefix_chars(question.trim(), 300);
    let title = "Answer".to_string();
    let page = Page::from_documents(&packet.context.documents, Scope::All);
    cancel.check()?;
    let mut blocks = Vec::new();
    let visible: usize = (0..page.units.len()).map(|i| page.unit_text(i).len()).sum();
    let sparse = !page.is_empty() && visible < SPARSE_BYTES;
    if let Some(n) = gate_notice(&gate_reasons(packet), sparse, "this answer") {
        blocks.push(paragraph(&n));
    }
    if question.is_empty() {
        blocks.push(paragraph(
            "There is no question to answer. Ask something about this page.",
        ));
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: None,
        });
    }

    let index = Index::build(&page);
    cancel.check()?;
    let query = index.query(question);
    let ranked = rank::bm25(&index, &query);
    cancel.check()?;
    // Only units that hold most of the question count; BM25 order among them.
    let candidates: Vec<rank::Scored> = ranked
        .iter()
        .take(MAX_CANDIDATES)
        .filter(|s| index.coverage(&query, s.unit) >= MIN_COVERAGE)
        .copied()
        .collect();
    let floor = candidates
        .first()
        .map_or(0.0, |s| MIN_RELATIVE_SCORE * s.score);
    let strong: Vec<rank::Scored> = candidates
        .into_iter()
        .filter(|s| s.score >= floor)
        .collect();

    let mut used: Vec<usize> = Vec::new();
    let mut passages: Vec<Vec<usize>> = Vec::new();
    for s in &strong {
        if passages.len() >= MAX_PASSAGES {
            break;
        }
        if used.contains(&s.unit) || used.iter().any(|&u| index.jaccard(u, s.unit) > MAX_JACCARD) {
            continue;
        }
        let p = passage(&page, s.unit);
        used.extend(&p);
        passages.push(p);
    }

    // A question about the user's selection that matches no passage
    // ("explain this"): the selection itself is what it asks about.
    let from_selection = passages.is_empty() && {
        let selected: Vec<usize> = (0..page.units.len())
            .filter(|&u| {
                page.units[u].kind.is_prose()
                    && page
                        .block_source(page.units[u].block)
                        .is_some_and(|s| s.doc_id == SELECTION_DOC_ID)
            })
            .take(MAX_PASSAGES)
            .collect();
        passages.extend(selected.into_iter().map(|u| vec![u]));
        !passages.is_empty()
    };
    if passages.is_empty() {
        blocks.push(paragraph(&format!(
            "The page does not say anything that answers “{question}”."
        )));
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: None,
        });
    }
    blocks.push(paragraph(if from_selection {
        "The selected text says:"
    } else {
        "The page says:"
    }));
    let items = passages
        .iter()
        .map(|p| p.iter().map(|&u| quoted(page.unit_text(u))).collect())
        .collect();
    blocks.push(list(items));
    let citations = passages
        .iter()
        .flatten()
        .filter_map(|&u| cite(&page, u))
        .collect();
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
    use serde_json::json;

    #[test]
    fn a_question_about_the_selection_quotes_the_selection() {
        let page = "H1: Trains\nNight trains are back.\nThe sleeper to Vienna leaves at nine every evening from the main station.";
        let mut p = packet(
            "web.answer",
            json!({}),
            "Explain the selected text.",
            summary("Trains", page),
            &[],
        );
        let before = render_text(&run(&p));
        assert!(before.contains("does not say"), "{before}");
        let selection = serde_json::from_value(json!({
            "doc_id": "doc:web:selection", "kind": "web.selection.v1", "trust": "untrusted",
            "source": {"browser": "chrome"},
            "content": {"doc_type": "web.selection.v1", "url": "https://x.example", "text": "The sleeper to Vienna leaves at nine every evening from the main station."}
        }))
        .unwrap();
        p.context.documents.insert(0, selection);
        let v = run(&p);
        assert!(
            render_text(&v).contains("The selected text says:"),
            "{}",
            render_text(&v)
        );
        assert_eq!(
            quotes(&v).first().map(String::as_str),
            Some("The sleeper to Vienna leaves at nine every evening from the main station.")
        );
    }

    #[test]
    fn answer_finds_the_passage_or_says_the_page_does_not_say() {
        let page = "H1: Store help\nH2: Shipping\nOrders ship within two business days from our Ohio warehouse.\n\
                    H2: Returns\nYou can return unworn items within 30 days for a full refund.\n\
                    H2: Warranty\nEvery jacket comes with a two-year warranty against manufacturing defects.\n\
                    H2: Contact\nOur support team answers email every weekday.";
        let p = packet(
            "web.answer",
            json!({}),
            "How long is the warranty on a jacket?",
            summary("Help", page),
            &[],
        );
        let v = run(&p);
        let q = quotes(&v);
        assert_eq!(
            q.first().map(String::as_str),
            Some("Every jacket comes with a two-year warranty against manufacturing defects.")
        );
        assert!(render_text(&v).starts_with("The page says:"));

        let p = packet(
            "web.answer",
            json!({"question": "Can I return items for a refund?"}),
            "ignored",
            summary("Help", page),
            &[],
        );
        assert_eq!(
            quotes(&run(&p)).first().map(String::as_str),
            Some("You can return unworn items within 30 days for a full refund.")
        );

        let p = packet(
            "web.answer",
            json!({}),
            "What is the capital of France?",
            summary("Help", page),
            &[],
        );
        let v = run(&p);
        assert!(quotes(&v).is_empty());
        assert_eq!(
            render_text(&v),
            "The page does not say anything that answers “What is the capital of France?”."
        );

        for q in ["", "what is this?"] {
            let v = run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Help", page),
                &[],
            ));
            assert!(quotes(&v).is_empty(), "{q}");
        }
    }

    #[test]
    fn answer_adds_context_for_referring_sentences_and_searches_comments() {
        let mut s = summary(
            "Thread",
            "H1: Thread\nThe new phone has a titanium frame. It weighs only 187 grams.",
        );
        s["comments"] = json!([{"text": "Battery life lasted two full days in my testing.", "handle_id": "laika-44"}]);
        let v = run(&packet(
            "web.answer",
            json!({}),
            "How many grams does it weigh?",
            s.clone(),
            &[],
        ));
        assert_eq!(
            quotes(&v),
            vec![
                "The new phone has a titanium frame.",
                "It weighs only 187 grams."
            ]
        );
        let v = run(&packet(
            "web.answer",
            json!({}),
            "How was the battery life?",
            s,
            &[],
        ));
        let c = &v["assistant"]["citations"][0];
        assert_eq!(c["handle_id"], "laika-44");
        assert_eq!(
            c["quote"],
            "Battery life lasted two full days in my testing."
        );
    }
}

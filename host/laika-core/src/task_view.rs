//! What of the observed page each task is sent: the page's text once, and
//! the other parts of the observation only as far as the task uses them.
//!
//! The extension observes more than any one task needs: the page as text
//! lines, its main region again (`primary.text`, usually the same lines),
//! the outline (headings the text already has as `H2:` lines), listed
//! items, comments, and every control and link (`elements`, on a news page
//! often twice the size of its text). On a local model reading the prompt
//! is most of the wait, so:
//! - `doc_type` is dropped (the document's `kind` names it), and `primary`
//!   when the text already holds its text;
//! - outline entries the text already holds are dropped, and repeated
//!   ones; a heading's tag its level gives and empty fields go too;
//! - items and comments go without handles; an item whose title the text
//!   already has is dropped unless it says more (a snippet the text lacks, a
//!   comment count);
//! - a summary or an extraction never acts: no elements;
//! - the page's structured data (schema.org facts) goes to an extraction
//!   only, for every runtime: a summary or a question reads the text;
//! - a question may act, but on what it names: the elements whose words or
//!   link the question shares, at most [`MAX_ELEMENTS_FOR_QUESTION`], in a
//!   document of their own after the page's (`web.observation.elements.v1`).
//!
//! The gate still reviews a call against the whole observation, so
//! leaving a handle out of the prompt never makes a call pass or fail.

use laika_protocol::llmcp::{Document, TaskName};
use laika_protocol::observation::{Observation, SUMMARY_DOC_TYPE};
use serde_json::Value;
use std::collections::HashSet;

/// The most elements a question is sent.
pub const MAX_ELEMENTS_FOR_QUESTION: usize = 12;
/// The share of `primary.text` (in characters) the text must hold, line by
/// line, for the primary text to count as already sent.
const COVERED: f64 = 0.9;
/// Question words shorter than this do not pick elements.
const MIN_WORD: usize = 3;

/// Whether a task may propose tool calls: a question may ask for an
/// action or a calculation; a summary or an extraction only reads.
pub fn task_may_act(task: TaskName) -> bool {
    task == TaskName::Answer
}

/// Drops the page's structured data from a summary content unless `task`
/// is an extraction, the one task that reads fields from it.
pub fn keep_structured_for(content: &mut Value, task: TaskName) {
    if task != TaskName::Extract {
        if let Some(summary) = content.as_object_mut() {
            summary.remove("structured");
        }
    }
}

/// Trims a `web.observation.summary.v1` content for `task` (see the module
/// docs); `question` is the user's message. Returns the elements a
/// question gets, which travel in their own document after the page's:
/// the summary stays the same for every question on a page, so a server
/// that caches the prompt's prefix keeps the page read for a follow-up.
pub fn fit(content: &mut Value, task: TaskName, question: &str) -> Vec<Value> {
    let Some(summary) = content.as_object_mut() else {
        return Vec::new();
    };
    let text = summary
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let held = summary
        .get("primary")
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .is_some_and(|p| !p.is_empty() && held_by(&text, p));
    if held {
        // The main region's tag and handle are no help without its text:
        // the model acts on named elements, and a citation is placed on
        // the region from the observation (`with_handles`).
        summary.remove("primary");
    }
    if let Some(Value::Array(outline)) = summary.get_mut("outline") {
        outline.retain(|e| !e["text"].as_str().is_some_and(|t| text.contains(t.trim())));
        let mut seen = HashSet::new();
        outline.retain(|e| seen.insert(e.to_string()));
        for entry in outline.iter_mut() {
            if let Some(o) = entry.as_object_mut() {
                // `h2` at level 2 says nothing the level does not.
                let implied = o
                    .get("level")
                    .and_then(Value::as_u64)
                    .map(|l| format!("h{l}"));
                if implied.is_some() && o.get("tag").and_then(Value::as_str) == implied.as_deref() {
                    o.remove("tag");
                }
            }
        }
        if outline.is_empty() {
            summary.remove("outline");
        }
    }
    // What says nothing the model lacks: the document's `kind` already
    // names its type, and an empty field is no information.
    summary.remove("doc_type");
    for key in ["outline", "items", "comments"] {
        if let Some(value) = summary.get_mut(key) {
            drop_empty_strings(value);
        }
    }
    // Handles are for acting, and a question acts on what it names: those
    // come with the named elements.
    for list in ["items", "comments"] {
        if let Some(Value::Array(entries)) = summary.get_mut(list) {
            for entry in entries.iter_mut() {
                if let Some(o) = entry.as_object_mut() {
                    o.remove("handle_id");
                }
            }
        }
    }
    let acts = task_may_act(task);
    if let Some(Value::Array(items)) = summary.get_mut("items") {
        items.retain(|item| says_more(item, &text));
        if items.is_empty() {
            summary.remove("items");
        }
    }
    let mut elements = match summary.remove("elements") {
        Some(Value::Array(elements)) if acts => elements,
        _ => Vec::new(),
    };
    keep_named(&mut elements, question);
    elements
}

/// `documents` (a packed request's) with the page's summary document given
/// back what [`fit`] left out of it for the model, redacted as packing
/// redacts: the main region's text and the handles of its items, comments
/// and elements, so a citation's quote is placed on the page's element.
pub fn with_handles(documents: &[Document], page: &Observation) -> Vec<Document> {
    documents
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if d.kind == SUMMARY_DOC_TYPE {
                if let (Some(content), Ok(Value::Object(mut whole))) = (
                    d.content.as_object_mut(),
                    serde_json::to_value(&page.summary),
                ) {
                    for key in ["primary", "items", "comments", "elements"] {
                        if let Some(mut value) = whole.remove(key) {
                            crate::redact::redact_value(&mut value);
                            content.insert(key.into(), value);
                        }
                    }
                }
            }
            d
        })
        .collect()
}

/// Whether `text` holds at least [`COVERED`] of `primary`'s characters,
/// counting its non-empty lines found in `text` whole.
///
/// Linear in the two texts: a line that is one of `text`'s own lines
/// (trimmed) is found by a set lookup, and the rest are looked for in one
/// Aho-Corasick pass over `text`. (A `contains` per line was quadratic: on
/// a 512 KiB page whose main region is the page, ~0.6 s.)
fn held_by(text: &str, primary: &str) -> bool {
    let own: HashSet<&str> = text.lines().map(str::trim).collect();
    let (mut total, mut found) = (0usize, 0usize);
    let mut rest: Vec<(&str, usize)> = Vec::new();
    for line in primary.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let n = line.chars().count();
        total += n;
        if own.contains(line) {
            found += n;
        } else {
            rest.push((line, n));
        }
    }
    if !rest.is_empty() {
        if let Ok(ac) = aho_corasick::AhoCorasick::new(rest.iter().map(|(l, _)| l)) {
            let mut seen = vec![false; rest.len()];
            for m in ac.find_overlapping_iter(text) {
                seen[m.pattern().as_usize()] = true;
            }
            found += rest
                .iter()
                .zip(&seen)
                .filter(|(_, &s)| s)
                .map(|((_, n), _)| n)
                .sum::<usize>();
        } else {
            found += rest
                .iter()
                .filter(|(l, _)| text.contains(l))
                .map(|(_, n)| n)
                .sum::<usize>();
        }
    }
    total > 0 && found as f64 >= COVERED * total as f64
}

/// Removes the empty-string fields of `value`'s objects (a heading's
/// `role: ""`), in it and in the arrays it holds, one level down.
fn drop_empty_strings(value: &mut Value) {
    let strip = |v: &mut Value| {
        if let Some(o) = v.as_object_mut() {
            o.retain(|_, f| f.as_str() != Some(""));
        }
    };
    match value {
        Value::Array(entries) => entries.iter_mut().for_each(strip),
        other => strip(other),
    }
}

/// An item the text does not already give whole: a title it lacks, a
/// snippet it lacks, or a comment count.
fn says_more(item: &Value, text: &str) -> bool {
    let missing = |key: &str| {
        item[key]
            .as_str()
            .is_some_and(|s| !s.trim().is_empty() && !text.contains(s.trim()))
    };
    missing("title") || missing("snippet") || item.get("comment_count").is_some()
}

/// Keeps, in page order, the elements that share a word with `question`
/// (in their text or label), at most [`MAX_ELEMENTS_FOR_QUESTION`].
fn keep_named(elements: &mut Vec<Value>, question: &str) {
    let wanted: HashSet<String> = words(question)
        .filter(|w| {
            w.chars().count() >= MIN_WORD
                && !crate::retrieval::is_stopword(w)
                && !crate::retrieval::QUESTION_FILLER.contains(&w.as_str())
        })
        .collect();
    let mut kept = 0;
    elements.retain(|e| {
        if kept >= MAX_ELEMENTS_FOR_QUESTION || wanted.is_empty() {
            return false;
        }
        // Its words, not its link: a URL's path words name everything.
        let named = ["text", "label", "placeholder", "name"]
            .iter()
            .filter_map(|k| e[*k].as_str())
            .flat_map(words)
            .any(|w| wanted.contains(&w));
        kept += usize::from(named);
        named
    });
}

fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page() -> Value {
        json!({
            "doc_type": "web.observation.summary.v1",
            "url": "https://news.example/trains",
            "title": "Night trains",
            "text": "H1: Night trains\nThe night train network grew again.\nH2: New routes\nVienna to Paris returns.\n- Sign in\n- Newsletter",
            "primary": {"text": "The night train network grew again.\nVienna to Paris returns.", "tag": "article", "handle_id": "laika-1"},
            "outline": [{"level": 1, "tag": "h1", "role": "", "text": "Night trains"}, {"level": 2, "tag": "h2", "role": "", "text": "Hidden heading"}],
            "items": [
                {"title": "Sign in", "url": "https://news.example/login", "handle_id": "laika-2"},
                {"title": "Ask HN: trains?", "url": "https://news.example/item", "comment_count": 136, "handle_id": "laika-3"}
            ],
            "comments": [{"text": "Great news", "handle_id": "laika-4"}],
            "elements": [
                {"handle_id": "laika-5", "role": "link", "text": "Sign in", "href": "https://news.example/login"},
                {"handle_id": "laika-6", "role": "button", "text": "Subscribe to the newsletter"},
                {"handle_id": "laika-7", "role": "link", "text": "Weather"}
            ],
            "signals": ["paywall"]
        })
    }

    #[test]
    fn the_page_text_goes_once_and_a_summary_gets_no_handles() {
        let mut c = page();
        assert!(fit(&mut c, TaskName::Summarize, "Summarize the newsletter").is_empty());
        assert!(c.get("primary").is_none(), "the text holds it: {c}");
        // A heading's tag its level gives and an empty role say nothing.
        assert_eq!(
            c["outline"],
            json!([{"level": 2, "text": "Hidden heading"}])
        );
        assert!(c.get("doc_type").is_none(), "the document's kind says it");
        assert!(c.get("elements").is_none());
        assert_eq!(
            c["items"],
            json!([{"title": "Ask HN: trains?", "url": "https://news.example/item", "comment_count": 136}])
        );
        assert_eq!(c["comments"], json!([{"text": "Great news"}]));
        assert_eq!(c["signals"], json!(["paywall"]));
        assert!(c["text"].as_str().unwrap().contains("Vienna to Paris"));
    }

    #[test]
    fn held_by_counts_lines_found_whole_or_inside_a_line() {
        let text = "Intro.\nThe night train network grew again. Vienna to Paris returns.\nEnd";
        // One line of the text, one inside a line: all held.
        assert!(held_by(text, "Intro.\n  Vienna to Paris returns.  \n\n"));
        assert!(held_by(text, "grew again"));
        // Under 90 % of the characters found: not held.
        assert!(!held_by(
            text,
            "Intro.\nA line the page does not have at all"
        ));
        assert!(!held_by(text, "\n  \n"));
    }

    #[test]
    fn a_primary_text_the_text_lacks_stays() {
        let mut c = page();
        c["primary"]["text"] = json!("A different article body.\nNot in the text.");
        fit(&mut c, TaskName::Summarize, "");
        assert_eq!(
            c["primary"]["text"],
            "A different article body.\nNot in the text."
        );
    }

    #[test]
    fn a_question_gets_the_elements_it_names() {
        let mut c = page();
        let named = fit(&mut c, TaskName::Answer, "Subscribe me to the newsletter");
        let kept: Vec<&str> = named
            .iter()
            .map(|e| e["handle_id"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["laika-6"]);
        assert!(
            c.get("elements").is_none(),
            "the page's document is the same for every question"
        );
        assert!(
            c["items"][0].get("handle_id").is_none(),
            "handles come with named elements"
        );
        let mut other = page();
        assert!(fit(&mut other, TaskName::Answer, "What is new?").is_empty());
        assert_eq!(other, c);
        let mut many = page();
        many["elements"] = Value::Array(
            (0..40)
                .map(|i| json!({"handle_id": format!("laika-{i}"), "role": "link", "text": format!("Route {i}")}))
                .collect(),
        );
        let named = fit(&mut many, TaskName::Answer, "open the route");
        assert_eq!(named.len(), MAX_ELEMENTS_FOR_QUESTION);
        assert_eq!(named[0]["handle_id"], "laika-0", "page order");
    }
}

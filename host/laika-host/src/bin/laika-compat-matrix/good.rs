//! Whether a valid answer is also a good one. A schema-valid answer can
//! still be useless: a tiny model's "summary" that is one fragment cut
//! mid-sentence inside a code block passes every check. An answer is good
//! when it holds at least one whole sentence of prose (a code block counts
//! only where the page has code); an extraction is good when at least one
//! asked field has a value the page itself holds.

use serde_json::Value;

/// What the page offers to judge an answer against.
pub struct Page<'a> {
    pub text: &'a str,
    pub has_code: bool,
}

/// Which kind of answer was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask<'a> {
    Prose,
    Fields(&'a [String]),
}

/// A host answer: the `assistant` event (render tree, and `data` for an
/// extraction).
pub fn good_answer(assistant: &Value, ask: Ask, page: &Page) -> bool {
    match ask {
        Ask::Prose => prose_runs(&assistant["render"], page.has_code)
            .iter()
            .any(|run| has_whole_sentence(run)),
        Ask::Fields(fields) => fields.iter().any(|f| {
            assistant["data"][f.as_str()]
                .as_str()
                .is_some_and(|v| on_page(v, page.text))
        }),
    }
}

/// A plain-text answer (the bare model, asked without the host's contract):
/// prose outside code fences; for an extraction, a `field: value` line.
pub fn good_plain(text: &str, ask: Ask, page: &Page) -> bool {
    match ask {
        Ask::Prose => outside_fences(text, page.has_code)
            .iter()
            .any(|run| has_whole_sentence(run)),
        Ask::Fields(fields) => text.lines().any(|line| {
            let line = line.trim_matches(|c: char| c.is_whitespace() || "-*#>|`".contains(c));
            let Some((key, value)) = line.split_once(':') else {
                return false;
            };
            let key = key.trim_matches(|c: char| c.is_whitespace() || "*_`".contains(c));
            let value = value.trim_matches(|c: char| c.is_whitespace() || "*_`\"".contains(c));
            fields.iter().any(|f| f.eq_ignore_ascii_case(key)) && on_page(value, page.text)
        }),
    }
}

/// The prose of a render tree, one string per paragraph, table cell and
/// (where the page has code) code block; headings are labels, not prose.
fn prose_runs(node: &Value, code_counts: bool) -> Vec<String> {
    let mut runs = Vec::new();
    collect(node, code_counts, &mut runs);
    runs
}

fn collect(node: &Value, code_counts: bool, runs: &mut Vec<String>) {
    match node["type"].as_str() {
        Some("paragraph" | "table_cell") => runs.push(inline_text(&node["children"])),
        Some("code_block") if code_counts => {
            runs.push(node["text"].as_str().unwrap_or_default().to_string());
        }
        Some("heading" | "code_block") => {}
        _ => {
            for key in ["children", "items", "rows", "cells"] {
                for child in node[key].as_array().into_iter().flatten() {
                    collect(child, code_counts, runs);
                }
            }
        }
    }
}

fn inline_text(children: &Value) -> String {
    let mut out = String::new();
    for child in children.as_array().into_iter().flatten() {
        match child["text"].as_str() {
            Some(t) => out.push_str(t),
            None => out.push_str(&inline_text(&child["children"])),
        }
    }
    out
}

/// The parts of a Markdown-ish text outside ``` fences (all of it where
/// the page has code).
fn outside_fences(text: &str, code_counts: bool) -> Vec<String> {
    if code_counts {
        return vec![text.to_string()];
    }
    text.split("```")
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part.to_string())
        .collect()
}

const TERMINATORS: &[char] = &['.', '!', '?', '。', '！', '？', '…'];
/// Fewest words of a sentence in a script that spaces its words.
const MIN_WORDS: usize = 4;
/// Fewest distinct words: "the the the the." is a loop, not a sentence.
const MIN_DISTINCT_WORDS: usize = 3;
/// Fewest letters of a sentence in a script that does not space its words.
const MIN_UNSPACED_LETTERS: usize = 8;

/// At least one whole sentence: a run of words from a start (the text's
/// own, or the end of the sentence before) to a terminator followed by a
/// space or the end, that does not begin in lower case (a fragment cut at
/// its front), of several distinct words.
pub fn has_whole_sentence(text: &str) -> bool {
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !TERMINATORS.contains(&c) {
            continue;
        }
        let closes = match chars.peek() {
            None => true,
            Some((_, next)) => {
                next.is_whitespace() || matches!(next, '"' | '\'' | '”' | '’' | '»' | ')')
            }
        };
        let unspaced = !c.is_ascii();
        if !closes && !unspaced {
            continue;
        }
        let end = i + c.len_utf8();
        if is_sentence(text.get(start..end).unwrap_or_default()) {
            return true;
        }
        start = end;
    }
    false
}

fn is_sentence(candidate: &str) -> bool {
    let candidate = candidate.trim();
    let Some(first) = candidate.chars().find(|c| c.is_alphanumeric()) else {
        return false;
    };
    if first.is_lowercase() {
        return false;
    }
    let words: Vec<&str> = candidate
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    if words.len() >= MIN_WORDS {
        let mut distinct: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        distinct.sort();
        distinct.dedup();
        return distinct.len() >= MIN_DISTINCT_WORDS;
    }
    let letters = candidate.chars().filter(|c| c.is_alphabetic()).count();
    words.len() == 1 && letters >= MIN_UNSPACED_LETTERS && !first.is_ascii()
}

/// The value, as the page has it (case and spacing aside).
fn on_page(value: &str, page: &str) -> bool {
    let value = normalize(value);
    value.chars().any(char::is_alphanumeric) && normalize(page).contains(&value)
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAGE: Page = Page {
        text: "The night train to Prague left on Tuesday. Tickets start at 49 euros.",
        has_code: false,
    };

    fn doc(blocks: Value) -> Value {
        json!({"render": {"type": "doc", "children": blocks}, "data": null})
    }

    fn para(t: &str) -> Value {
        json!({"type": "paragraph", "children": [{"type": "text", "text": t}]})
    }

    #[test]
    fn a_whole_sentence_of_prose_is_good() {
        let a = doc(json!([para("The night train to Prague left on Tuesday.")]));
        assert!(good_answer(&a, Ask::Prose, &PAGE));
        // Split across inline nodes and a link, inside a list item.
        let a = doc(
            json!([{"type": "list", "ordered": false, "items": [{"type": "list_item", "children": [
                {"type": "paragraph", "children": [
                    {"type": "text", "text": "Tickets for the "},
                    {"type": "link", "href": "https://x.example", "children": [{"type": "text", "text": "sleeper"}]},
                    {"type": "text", "text": " start at 49 euros."}
                ]}
            ]}]}]),
        );
        assert!(good_answer(&a, Ask::Prose, &PAGE));
    }

    #[test]
    fn a_fragment_cut_mid_sentence_is_not_good() {
        let a = doc(json!([para(
            "The night train to Prague left on Tuesday evening with 312 passengers on board and the"
        )]));
        assert!(!good_answer(&a, Ask::Prose, &PAGE));
        // Cut at its front: it begins in lower case.
        let a = doc(json!([para("passengers on board, the operator said.")]));
        assert!(!good_answer(&a, Ask::Prose, &PAGE));
        // Too short, or a loop.
        assert!(!has_whole_sentence("Trains."));
        assert!(!has_whole_sentence("The the the the the."));
        // A decimal point is not an end.
        assert!(!has_whole_sentence("Prices rose 3.5 percent over the"));
    }

    #[test]
    fn a_code_block_counts_only_where_the_page_has_code() {
        let code =
            json!([{"type": "code_block", "text": "The night train to Prague left on Tuesday."}]);
        assert!(!good_answer(&doc(code.clone()), Ask::Prose, &PAGE));
        let with_code = Page {
            has_code: true,
            ..PAGE
        };
        assert!(good_answer(&doc(code), Ask::Prose, &with_code));
        // Headings are labels, not prose.
        let heading = json!([{"type": "heading", "level": 2, "children": [{"type": "text", "text": "The night train to Prague left on Tuesday."}]}]);
        assert!(!good_answer(&doc(heading), Ask::Prose, &PAGE));
    }

    #[test]
    fn unspaced_scripts_have_sentences_too() {
        assert!(has_whole_sentence("夜行列車は火曜日にプラハへ出発した。"));
        assert!(!has_whole_sentence("夜行列車は"));
    }

    #[test]
    fn an_extraction_is_good_when_a_field_holds_a_value_from_the_page() {
        let fields = ["price".to_string(), "date".to_string()];
        let found = json!({"render": {"type": "doc", "children": []}, "data": {"price": "49  Euros", "date": null}});
        assert!(good_answer(&found, Ask::Fields(&fields), &PAGE));
        let invented = json!({"render": {"type": "doc", "children": []}, "data": {"price": "99 euros", "date": "unknown"}});
        assert!(!good_answer(&invented, Ask::Fields(&fields), &PAGE));
        let none =
            json!({"render": {"type": "doc", "children": []}, "data": {"price": null, "date": ""}});
        assert!(!good_answer(&none, Ask::Fields(&fields), &PAGE));
    }

    #[test]
    fn plain_answers_are_judged_alike() {
        let fields = ["price".to_string()];
        assert!(good_plain(
            "- **Price**: 49 euros\n- Date: soon",
            Ask::Fields(&fields),
            &PAGE
        ));
        assert!(!good_plain(
            "Price: 12 dollars",
            Ask::Fields(&fields),
            &PAGE
        ));
        assert!(good_plain(
            "Here it is.\nThe train left on Tuesday, the page says.",
            Ask::Prose,
            &PAGE
        ));
        assert!(!good_plain(
            "```\nThe train left on Tuesday, the page says.\n```",
            Ask::Prose,
            &PAGE
        ));
    }
}

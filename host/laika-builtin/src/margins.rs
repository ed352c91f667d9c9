//! The page's margins: text beside the main content (related-stories lists,
//! navigation, widgets) that an answer or a summary must not quote unless
//! the question is about it.
//!
//! The extension marks the main content (`primary.text`); everything else
//! of the page (`text`, chunks) holds both the rest of a long article and
//! the page's furniture. A unit there is a margin when it sits under a
//! heading that opens page furniture ("Related stories", "Read more") or
//! in a run of short, unpunctuated lines (a list of headlines or links).

use laika_core::retrieval::{self, Kind, Page};

/// Headings that open a list of other pages, lower case, in the languages
/// the question lexicon covers (a prefix of the heading's text).
const FURNITURE_HEADINGS: &[&str] = &[
    // en
    "related",
    "more stories",
    "more from",
    "more news",
    "more on",
    "read more",
    "read next",
    "recommended",
    "you may also like",
    "you might also like",
    "most popular",
    "most read",
    "popular",
    "trending",
    "top stories",
    "latest news",
    "latest stories",
    "see also",
    "further reading",
    "what to read next",
    "editor's picks",
    "sponsored",
    "advertisement",
    // de
    "mehr zum thema",
    "weitere artikel",
    "das könnte sie auch interessieren",
    "meistgelesen",
    "auch interessant",
    // fr
    "à lire aussi",
    "lire aussi",
    "sur le même sujet",
    "les plus lus",
    // es
    "te puede interesar",
    "lee también",
    "más noticias",
    "lo más leído",
    "relacionad",
    // it
    "leggi anche",
    "potrebbe interessarti",
    "i più letti",
    // pt
    "leia também",
    "veja também",
    "mais lidas",
    // nl
    "lees ook",
    "meer nieuws",
    "meest gelezen",
];

/// Words a question uses when it is about the page's furniture.
const FURNITURE_WORDS: &[&str] = &[
    "related",
    "menu",
    "navigation",
    "link",
    "links",
    "headline",
    "headlines",
    "stories",
    "trending",
    "popular",
    "recommended",
    "sidebar",
    "widget",
];

/// A run of this many headline-like lines or more is a list of links.
const MIN_LINK_RUN: usize = 3;
/// A headline is at most this many words.
const HEADLINE_WORDS: usize = 16;
/// Below this much text the page's main content is not marked.
const MIN_PRIMARY_BYTES: usize = 200;

/// Which units of a page lie in its margins.
pub(super) struct Margins {
    margin: Vec<bool>,
    /// Units of the main content: with a substantial `primary.text`, its
    /// units and those of other documents (a long page's chunks), not the
    /// rest of the document that marked it (site chrome, widgets).
    main: Vec<bool>,
}

impl Margins {
    pub(super) fn of(page: &Page) -> Margins {
        let in_primary = |u: usize| {
            page.units
                .get(u)
                .and_then(|x| page.block_source(x.block))
                .is_some_and(|s| s.field == "primary.text")
        };
        let primary_bytes: usize = (0..page.units.len())
            .filter(|&u| in_primary(u))
            .map(|u| page.unit_text(u).len())
            .sum();
        let mut margin = vec![false; page.units.len()];
        if primary_bytes < MIN_PRIMARY_BYTES {
            let main = vec![true; page.units.len()];
            return Margins { margin, main };
        }
        // Under a furniture heading, until the next heading.
        let mut furniture = false;
        for (u, m) in margin.iter_mut().enumerate() {
            if in_primary(u) {
                furniture = false;
                continue;
            }
            let kind = page.units[u].kind;
            if matches!(kind, Kind::Heading(_)) {
                furniture = opens_furniture(page.unit_text(u));
            }
            *m = furniture || is_furniture_line(page.unit_text(u));
        }
        // Runs of headline-like lines outside the main content.
        let headline = |u: usize| !in_primary(u) && is_headline(page, u);
        let mut u = 0;
        while u < page.units.len() {
            let start = u;
            while u < page.units.len() && headline(u) {
                u += 1;
            }
            if u - start >= MIN_LINK_RUN {
                margin[start..u].iter_mut().for_each(|m| *m = true);
            }
            u = u.max(start + 1);
        }
        let marked: std::collections::BTreeSet<&str> = (0..page.units.len())
            .filter(|&u| in_primary(u))
            .filter_map(|u| page.unit_source(u).map(|s| s.doc_id.as_str()))
            .collect();
        let main = (0..page.units.len())
            .map(|u| {
                in_primary(u)
                    || page
                        .unit_source(u)
                        .is_some_and(|s| !marked.contains(s.doc_id.as_str()))
            })
            .collect();
        Margins { margin, main }
    }

    /// Whether a unit is part of the page's main content.
    pub(super) fn is_main(&self, unit: usize) -> bool {
        self.main.get(unit).copied().unwrap_or(false)
    }

    pub(super) fn is_margin(&self, unit: usize) -> bool {
        self.margin.get(unit).copied().unwrap_or(false)
    }
}

/// Whether a question asks about the page's furniture ("What are the
/// related stories?"), which then may be quoted.
pub(super) fn asks_about_margins(question: &str) -> bool {
    retrieval::tokenize(question).is_empty()
        || question
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| FURNITURE_WORDS.contains(&w))
}

fn opens_furniture(heading: &str) -> bool {
    let lower = heading.trim().to_lowercase();
    FURNITURE_HEADINGS.iter().any(|h| lower.starts_with(h))
}

/// A line that is itself a furniture heading, written as plain text
/// ("Related: …", "Read more").
fn is_furniture_line(text: &str) -> bool {
    opens_furniture(text) && retrieval::word_count(text) <= HEADLINE_WORDS
}

/// A short line without a sentence's end: a headline, a link, a menu entry.
fn is_headline(page: &Page, unit: usize) -> bool {
    let Some(u) = page.units.get(unit) else {
        return false;
    };
    let text = page
        .unit_text(unit)
        .trim_end_matches(['"', '”', '’', ')', ' ']);
    let sentence_end = text.ends_with(['.', '!', '?', '…', '。', '！', '？']);
    !matches!(u.kind, Kind::Code | Kind::Term | Kind::Definition)
        && !sentence_end
        && retrieval::word_count(text) <= HEADLINE_WORDS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::*;
    use laika_core::retrieval::Scope;
    use serde_json::json;

    const ARTICLE: &str =
        "The city council approved the new bridge on Tuesday after a long debate.\n\
        Construction will start in March and is expected to take two years.\n\
        The bridge will carry trams, bicycles and pedestrians but no cars.\n\
        Council members said the cost of 45 million euros is covered by a regional grant.\n\
        Residents of the east bank have asked for a crossing for more than a decade.\n\
        The mayor called the vote a turning point for the neighbourhood.";

    fn page_of(text: &str) -> Page {
        let mut s = summary("Bridge", text);
        s["primary"] = json!({"text": ARTICLE, "handle_id": "laika-3"});
        let p = packet("web.answer", json!({}), "q", s, &[]);
        Page::from_documents(&p.context.documents, Scope::All)
    }

    fn margin_texts(page: &Page) -> Vec<String> {
        let m = Margins::of(page);
        (0..page.units.len())
            .filter(|&u| m.is_margin(u))
            .map(|u| page.unit_text(u).to_string())
            .collect()
    }

    #[test]
    fn related_lists_and_link_runs_are_margins_and_the_article_is_not() {
        let text = format!(
            "- Home\n- News\n- Sport\n- Weather\n{ARTICLE}\nThe rest of a long article goes on here, with a full sentence.\n\
             H2: Related stories\nTram line to the airport delayed again\nCouncil budget: what changes in 2025\n\
             H2: About the author\nAnna Berg has covered the city for The Daily since 2012."
        );
        let page = page_of(&text);
        let margins = margin_texts(&page);
        for m in [
            "Home",
            "Weather",
            "Tram line to the airport delayed again",
            "Council budget: what changes in 2025",
        ] {
            assert!(margins.iter().any(|t| t == m), "{m} in {margins:?}");
        }
        for prose in [
            "The rest of a long article goes on here, with a full sentence.",
            "Anna Berg has covered the city for The Daily since 2012.",
            "The mayor called the vote a turning point for the neighbourhood.",
        ] {
            assert!(
                !margins.iter().any(|t| t == prose),
                "{prose} in {margins:?}"
            );
        }
    }

    #[test]
    fn without_a_marked_main_content_nothing_is_a_margin() {
        let p = packet(
            "web.answer",
            json!({}),
            "q",
            summary("T", "Home\nNews\nSport\nA sentence."),
            &[],
        );
        let page = Page::from_documents(&p.context.documents, Scope::All);
        assert!(margin_texts(&page).is_empty());
    }

    #[test]
    fn a_question_about_the_furniture_may_quote_it() {
        assert!(asks_about_margins("What are the related stories?"));
        assert!(asks_about_margins("Which links are in the menu?"));
        assert!(!asks_about_margins("How much does the bridge cost?"));
    }
}

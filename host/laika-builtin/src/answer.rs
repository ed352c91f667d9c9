//! `web.answer`: the passages that hold most of the question, quoted, or
//! "I could not find this on the page" (a reader of words cannot know that
//! the page does not say it). The typed answer leads only when it is surely
//! the value the first quote states, of the type the question asks for.

use super::entity;
use super::fields;
use super::margins::{self, Margins};
use super::salience;
use super::statement;
use super::{
    cite, gate_notice, gate_reasons, list, paragraph, quoted, visible_bytes, Reply, MAX_JACCARD,
};
use laika_core::cancel::CancelToken;
use laika_core::pack::SELECTION_DOC_ID;
use laika_core::retrieval::questions::{self, Want};
use laika_core::retrieval::{self, Index, Kind, Page, Query, Scope};
use laika_core::text::prefix_chars;
use laika_protocol::error::Result;
use laika_protocol::llmcp::RequestPacket;
use laika_protocol::render::ast::Block;
use serde_json::Value;
use std::ops::Range;

/// A question is answered only by a unit holding at least this share of the
/// question's idf mass; below it the answer is not found.
const MIN_COVERAGE: f64 = 0.5;
/// With a span of the wanted type (a number for "how many"), a unit needs
/// less of the question's words: the type itself is evidence.
const MIN_TYPED_COVERAGE: f64 = 0.45;
/// Without one, more: it may tell about the subject without the answer.
const MIN_UNTYPED_COVERAGE: f64 = 0.67;
const MAX_PASSAGES: usize = 3;
/// How far (bytes) a role word may stand from the name it describes:
/// "Matt Harris, Columbus Police Department spokesman".
const ROLE_REACH: usize = 48;
/// How many of the best BM25 units are checked for coverage.
const MAX_CANDIDATES: usize = 100;
/// A passage is at most this many units (sentences).
const MAX_WINDOW: usize = 3;
/// Coverage found only with the sentences before the answer counts less.
const WINDOW_DISCOUNT: f64 = 0.9;
/// A passage must score at least this share of the best one.
const MIN_RELATIVE_SCORE: f64 = 0.4;
/// The least fit of an answer span that may lead the answer, chosen for
/// precision on the dev sets (docs/PERFORMANCE.md): with
/// [`MIN_LEAD_MARGIN`], 57 of 59 leads there were right (at 0.3 and no
/// margin, 74 of 84).
const MIN_LEAD_FIT: f64 = 0.4;
/// How far the best passage's score must stand above the next one's for
/// its value to lead, unless the next one states the same value: a close
/// runner-up is another reading of the question, and the lead would guess.
const MIN_LEAD_MARGIN: f64 = 0.3;

/// How far below the best passage's score a passage may stand and still
/// come first for saying the question beside its value, chosen on the
/// dev sets (docs/PERFORMANCE.md).
const CLOSE_SCORE: f64 = 0.2;

/// Openers that lean on the sentence before them.
const REFERRING: &[&str] = &[
    "and", "so", "also", "it", "its", "this", "that", "these", "those", "they", "their", "he",
    "she", "his", "her", "however", "but", "such", "there",
];

/// How far back (sentences) a pronoun may reach for whom it means.
const MAX_ANTECEDENT: usize = 3;

/// The first word of a unit, lower case.
fn first_word(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase()
}

/// For a unit that leans on what came before (it opens with a pronoun),
/// the sentence of its paragraph that names whom it is about: back over
/// quotes and other leaning sentences, at most [`MAX_ANTECEDENT`] back.
fn antecedent(page: &Page, unit: usize) -> Option<usize> {
    let leans = |u: usize| {
        let t = page.unit_text(u);
        REFERRING.contains(&first_word(t).as_str()) || t.starts_with(['“', '"', '‘', '„', '«'])
    };
    let block = page.units.get(unit)?.block;
    if !REFERRING.contains(&first_word(page.unit_text(unit)).as_str()) {
        return None;
    }
    let mut u = unit;
    for _ in 0..MAX_ANTECEDENT {
        u = u.checked_sub(1)?;
        if page.units.get(u)?.block != block {
            return None;
        }
        if !leans(u) {
            return Some(u);
        }
    }
    None
}

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
        let next_line = page
            .units
            .get(unit + 1)
            .is_some_and(|n| n.block == u.block + 1);
        return if next_line && same_source(unit + 1) {
            vec![unit, unit + 1]
        } else {
            vec![unit]
        };
    }
    let t = page.unit_text(unit);
    let first = first_word(t);
    let short = retrieval::word_count(t) < 8;
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
    if let Some(n) = gate_notice(&gate_reasons(packet), visible_bytes(&page), "this answer") {
        blocks.push(paragraph(&n));
    }
    if let Some(n) = super::truncation_note(packet, &page, "this answer") {
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
    let mut query = index.query(question);
    expand_acronyms(&page, &index, &mut query, question);
    query.mark_topic(&index, &page.title);
    let mut want = entity::want_of_question(question, index.lang());
    // "What prison term …": the head noun that named a value's type is
    // not what the page must say ("up to 10 years in prison").
    if let Some((head, typed)) = entity::typed_head(question, index.lang()) {
        if typed == want && want.needs_value() {
            query.forget(|w| w == head);
        }
    }
    let (asked, asked_required) = entity::asked_nouns(question);
    // "What is the name of the firm …": a firm's name, not a person's.
    if want == Want::Person && asked.iter().any(|w| entity::is_organization_word(w)) {
        want = Want::Name;
    }
    let asked = Asked::new(&query, want, &asked, asked_required);
    let ranked = retrieval::bm25(&index, &query);
    cancel.check()?;
    let question_lower = question.to_lowercase();
    // "What does VIPER stand for?" is answered by the page's expansion.
    let mut scored: Vec<Candidate> = asks_expansion(question, index.lang().code())
        .then(|| expansion_answer(&page, question))
        .flatten()
        .into_iter()
        .collect();
    scored.extend(candidates(
        &page,
        &index,
        &query,
        &ranked,
        &asked,
        &question_lower,
    ));
    prefer_the_value_sentence(&index, &query, asked.want, &mut scored);
    prefer_a_stated_value(&page, &index, question, asked.want, &mut scored);
    if want == Want::Person && asks_identity(question) {
        prefer_a_description(&page, question, &mut scored);
    }
    let leads = |c: &Candidate| may_lead(&page, &index, &query, &asked, question, c);
    respond(packet, &page, &index, question, scored, blocks, &leads)
}

/// Whether a candidate's answer span may lead the answer as the value its
/// quote states: it fits the question well ([`MIN_LEAD_FIT`]) and is of the
/// type asked for, read strictly. "Who is Caroline Hawley?" asks who she is,
/// which no name answers; "Which telescope …" is not answered by a place;
/// "How many pears …" not by a count of feet.
fn may_lead(
    page: &Page,
    index: &Index,
    query: &Query,
    asked: &Asked,
    question: &str,
    c: &Candidate,
) -> bool {
    let Some(range) = &c.span else {
        return false;
    };
    if c.expansion {
        return true;
    }
    if c.fit < MIN_LEAD_FIT {
        return false;
    }
    let want = asked.want;
    if want == Want::Person && asks_identity(question) {
        return false;
    }
    let unit = c.extra.unwrap_or(c.unit);
    let text = page.unit_text(unit);
    let spans = entity::spans(text, index.lang());
    let Some(span) = spans.iter().find(|s| s.range == *range) else {
        return false;
    };
    let question_lower = question.to_lowercase();
    // The value its sentence states, not an expectation of it, one of
    // several listed, or a total for a rate the question asks.
    if !statement::states(index.lang(), &question_lower, want, text, range) {
        return false;
    }
    let of_type = |span: &entity::Span| {
        if !span.answers(want) {
            return false;
        }
        match want {
            Want::Name => {
                let placed = span.kind == entity::Kind::Place
                    || text
                        .get(..span.range.start)
                        .and_then(|b| b.split_whitespace().last())
                        .is_some_and(|w| fields::is_place_only_preposition(&w.to_lowercase()));
                !placed || asked.asks_place()
            }
            Want::Amount if !asked.counted.is_empty() => {
                let unit_id = span.unit.as_ref().and_then(|u| {
                    index
                        .terms_at(text)
                        .into_iter()
                        .find(|(r, _)| r.start == u.start)
                        .and_then(|(_, id)| id)
                });
                let unit_word = span
                    .unit
                    .as_ref()
                    .and_then(|u| text.get(u.clone()))
                    .unwrap_or("")
                    .to_lowercase();
                unit_id.is_none_or(|id| asked.counted.contains(&id) || query.has_id(id))
                    || entity::unit_fits(&question_lower, &unit_word)
            }
            _ => true,
        }
    };
    // Another value of the asked type in the same sentence could be the
    // answer as well: the quote says it, the lead would guess.
    of_type(span) && spans.iter().filter(|s| of_type(s)).count() == 1
}

/// Of the passages close to the best ([`CLOSE_SCORE`]), the one whose
/// value's own sentence says most of the question comes first: a typed
/// question is answered where the value and what is asked stand together
/// ("The Paperwhite will now cost you $99"), not in the sentence after
/// one that says the question's words ("You save $40 …"). Only the order changes: nothing is
/// dropped, and the lead still needs a clear margin over the runner-up.
fn prefer_the_value_sentence(index: &Index, query: &Query, want: Want, scored: &mut [Candidate]) {
    if want == Want::Any {
        return;
    }
    let Some(top) = scored.first().map(|c| c.score) else {
        return;
    };
    let said = |c: &Candidate| index.coverage(query, c.extra.unwrap_or(c.unit));
    let mut best = 0;
    let mut best_said = scored.first().map_or(0.0, said);
    for (i, c) in scored.iter().enumerate().skip(1) {
        if c.score < top - CLOSE_SCORE {
            break;
        }
        let s = said(c);
        if s > best_said + f64::EPSILON {
            best = i;
            best_said = s;
        }
    }
    scored[..=best].rotate_right(1);
}

/// For a typed question, a close passage whose value its sentence states
/// comes before a best one that holds no value of the asked type or only
/// an expectation of it ("4,000 people are expected to …").
fn prefer_a_stated_value(
    page: &Page,
    index: &Index,
    question: &str,
    want: Want,
    scored: &mut [Candidate],
) {
    if want == Want::Any {
        return;
    }
    let Some(top) = scored.first().map(|c| c.score) else {
        return;
    };
    let question = question.to_lowercase();
    let stated = |c: &Candidate| {
        c.span.as_ref().is_some_and(|r| {
            let text = page.unit_text(c.extra.unwrap_or(c.unit));
            statement::states(index.lang(), &question, want, text, r)
        })
    };
    if scored.first().is_none_or(stated) {
        return;
    }
    let close = scored
        .iter()
        .skip(1)
        .take_while(|c| c.score >= top - CLOSE_SCORE)
        .position(stated);
    if let Some(at) = close {
        scored[..=at + 1].rotate_right(1);
    }
}

/// "Who is Dana Whitfield?": the passage that describes the person named
/// ("Dana Whitfield, the harbour's chief engineer, …") comes first,
/// before the ones that only quote them.
fn prefer_a_description(page: &Page, question: &str, scored: &mut [Candidate]) {
    let name: Vec<&str> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| w.starts_with(char::is_uppercase))
        .skip(1)
        .collect();
    if name.is_empty() {
        return;
    }
    let name = name.join(" ");
    let floor = scored.first().map_or(0.0, |c| MIN_RELATIVE_SCORE * c.score);
    let describes = |c: &Candidate| {
        c.context
            .iter()
            .any(|&u| describes(page.unit_text(u), &name))
    };
    if let Some(at) = scored
        .iter()
        .take_while(|c| c.score >= floor)
        .position(describes)
    {
        scored[..=at].rotate_right(1);
    }
}

/// Whether `text` describes `name`: the name followed by an apposition
/// ("Ann Price, a city planner", "Ann Price, portfolio manager") or by
/// "is a / is the …".
fn describes(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let rest = text.get(at + name.len()..).unwrap_or("");
        let apposition = rest
            .strip_prefix(", ")
            .is_some_and(|r| r.starts_with(char::is_lowercase));
        let copula = [
            "is a ", "is an ", "is the ", "was a ", "was an ", "was the ",
        ]
        .iter()
        .any(|p| rest.trim_start().starts_with(p));
        apposition || copula
    })
}

/// "Who is Caroline Hawley?": a question whose only content words name
/// someone asks who they are, a description, not a name.
fn asks_identity(question: &str) -> bool {
    let words: Vec<&str> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-' || c == '.'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .skip(1)
        .filter(|w| !retrieval::tokenize(w).is_empty())
        .collect();
    !words.is_empty() && words.iter().all(|w| w.starts_with(char::is_uppercase))
}

/// What a question (or a field name, for `web.extract`) asks: the answer
/// type, the nouns it asks about as page terms, whether the answer must
/// mention one ("which …"), and what is counted ("how many …").
pub(super) struct Asked {
    want: Want,
    ids: Vec<u32>,
    required: bool,
    counted: Vec<u32>,
    /// It asks about a kind of place ("Which city …").
    place: bool,
}

impl Asked {
    /// Whether what a "which …" question asks about is a kind of place
    /// ("Which city …").
    fn asks_place(&self) -> bool {
        self.place
    }

    pub(super) fn new(query: &Query, want: Want, nouns: &[String], required: bool) -> Asked {
        let ids: Vec<u32> = nouns.iter().flat_map(|w| query.ids_for(w)).collect();
        // "How many helicopters …": what is counted.
        let counted = if required { Vec::new() } else { ids.clone() };
        let place = nouns.iter().any(|w| entity::is_place_word(w));
        Asked {
            want,
            ids,
            required,
            counted,
            place,
        }
    }
}

/// The units that may answer, best first, each passing the calibrated gate
/// (coverage of the question, a value of the wanted type tied to it).
fn candidates(
    page: &Page,
    index: &Index,
    query: &Query,
    ranked: &[retrieval::Scored],
    asked: &Asked,
    question_lower: &str,
) -> Vec<Candidate> {
    let want = asked.want;
    let asked_ids = &asked.ids;
    let asked_required = asked.required;
    let counted = &asked.counted;
    // Each candidate: its coverage of the question, and the best span of the
    // wanted type in it (or in the sentence after it).
    let top = ranked.first().map_or(0.0, |s| s.score);
    let question_ids: Vec<u32> = retrieval::tokenize(question_lower)
        .iter()
        .filter_map(|w| index.term(w))
        .collect();
    // Quotes come from the main content, unless the question is about the
    // page's furniture.
    let margins = Margins::of(page);
    let about_margins = margins::asks_about_margins(question_lower);
    let mut scored: Vec<Candidate> = Vec::new();
    for s in ranked.iter().take(MAX_CANDIDATES) {
        if !about_margins && margins.is_margin(s.unit) {
            continue;
        }
        // Site chrome ("Share this article") never answers; a short unit
        // may, when it holds the value asked for ("Price: $89.00.").
        let weak = salience::quality(page, index, s.unit) < 0.2;
        let words = retrieval::word_count(page.unit_text(s.unit));
        if index.is_chrome_unless(s.unit, words, &question_ids) {
            continue;
        }
        if weak && want == Want::Any {
            continue;
        }
        // A sentence that leans on the one before it is read with it.
        let context = passage(page, s.unit);
        // A heading alone says too little to answer.
        if context.len() == 1
            && matches!(
                page.units.get(s.unit).map(|u| u.kind),
                Some(Kind::Heading(_))
            )
        {
            continue;
        }
        let mentions_asked = asked_ids
            .iter()
            .any(|&id| context.iter().any(|&u| index.has_term(u, id)));
        if asked_required && !asked_ids.is_empty() && !mentions_asked {
            continue;
        }
        // An untyped question's answer is the passage itself.
        let mut span = (want != Want::Any)
            .then(|| best_span(page, index, query, want, s.unit, question_lower, counted))
            .flatten();
        let mut extra = None;
        if span.is_none() && want != Want::Any {
            let next = s.unit + 1;
            let follows = page.units.get(next).is_some_and(|n| {
                page.units.get(s.unit).is_some_and(|u| {
                    n.block <= u.block + 1
                        && page.block_source(n.block) == page.block_source(u.block)
                })
            });
            if follows {
                span = best_span(page, index, query, want, next, question_lower, counted)
                    .map(|(r, q)| (r, q * 0.6));
                extra = span.as_ref().map(|_| next);
            }
        }
        // "Which firm …": the name stands beside the word for what is asked
        // ("Chapter & Verse, a Spokane agency"), not anywhere in the sentence.
        if want == Want::Name && asked_required {
            let at = page.unit_text(extra.unwrap_or(s.unit));
            span = span.filter(|(r, _)| {
                index.terms_at(at).iter().any(|(w, id)| {
                    id.is_some_and(|id| asked_ids.contains(&id))
                        && w.start.abs_diff(r.end).min(r.start.abs_diff(w.end)) <= ROLE_REACH
                })
            });
        }
        let typed = span.as_ref().map_or(0.0, |(_, q)| *q);
        let named_before = antecedent(page, s.unit);
        if weak && typed == 0.0 {
            continue;
        }
        // A typed answer is tied to the question: what it asks beyond the
        // page's topic is said in the answer's sentence or one beside it.
        if want != Want::Any {
            let at = extra.unwrap_or(s.unit);
            let mut near = vec![at.wrapping_sub(1), at, at + 1];
            near.extend(&context);
            near.extend(named_before);
            let strict = matches!(want, Want::Person | Want::Name | Want::Place);
            if !query.is_tied(index, &near, strict) {
                continue;
            }
        }
        let min = if want == Want::Any {
            MIN_COVERAGE
        } else if typed > 0.0 {
            MIN_TYPED_COVERAGE
        } else {
            MIN_UNTYPED_COVERAGE
        };
        if want.needs_value() && typed == 0.0 {
            continue;
        }
        let mut context = context;
        let mut coverage = index.coverage_of(query, &context);
        // The question's subject is often named a sentence earlier ("Blair
        // … A search of the vehicle yielded nearly 30 grams"): a typed
        // answer may take the sentences before it in its paragraph, up to
        // a passage of three, at a small discount.
        if coverage < min && typed > 0.0 {
            let mut window = context.clone();
            while window.len() < MAX_WINDOW {
                let Some(&first) = window.first() else { break };
                let prev = first.wrapping_sub(1);
                let same = first > 0
                    && page.units.get(prev).is_some_and(|p| {
                        p.kind.is_prose()
                            && page.units.get(first).is_some_and(|f| f.block == p.block)
                    });
                if !same {
                    break;
                }
                window.insert(0, prev);
                let widened = WINDOW_DISCOUNT * index.coverage_of(query, &window);
                if widened >= min {
                    context = window;
                    coverage = widened;
                    break;
                }
            }
        }
        // "He said his company's lander …": with the sentence that names
        // whom it is about, a few quotes back in its paragraph.
        if coverage < min && typed > 0.0 {
            if let Some(a) = named_before.filter(|a| !context.contains(a)) {
                let mut window = context.clone();
                window.insert(0, a);
                let widened = WINDOW_DISCOUNT * index.coverage_of(query, &window);
                if widened >= min {
                    context = window;
                    coverage = widened;
                }
            }
        }
        if coverage < min {
            continue;
        }
        let mut score = (s.score / top.max(f64::MIN_POSITIVE)) * (0.5 + coverage) + typed;
        if want != Want::Any && typed == 0.0 {
            score *= 0.5;
        }
        if mentions_asked {
            score += 0.3;
        }
        scored.push(Candidate {
            unit: s.unit,
            context,
            score,
            fit: typed,
            expansion: false,
            span: span.map(|(r, _)| r),
            extra,
        });
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.unit.cmp(&b.unit)));
    scored
}

/// The best answer span to what `asked` asks, by the answer's own gate:
/// the unit it is in and its range there; none when no passage answers.
pub(super) fn answer_span(
    page: &Page,
    index: &Index,
    query: &Query,
    asked: &Asked,
    question_lower: &str,
) -> Option<(usize, Range<usize>)> {
    let ranked = retrieval::bm25(index, query);
    let best = candidates(page, index, query, &ranked, asked, question_lower)
        .into_iter()
        .next()?;
    Some((best.extra.unwrap_or(best.unit), best.span?))
}

/// The reply: the answer span when it may lead, then the passages that
/// say it, or "I could not find this on the page".
fn respond(
    packet: &RequestPacket,
    page: &Page,
    index: &Index,
    question: &str,
    scored: Vec<Candidate>,
    mut blocks: Vec<Block>,
    leads: &dyn Fn(&Candidate) -> bool,
) -> Result<Reply> {
    let title = "Answer".to_string();
    let floor = scored.first().map_or(0.0, |c| MIN_RELATIVE_SCORE * c.score);

    let mut used: Vec<usize> = Vec::new();
    let mut passages: Vec<Vec<usize>> = Vec::new();
    let mut lead: Option<String> = None;
    for c in scored.iter().filter(|c| c.score >= floor) {
        if passages.len() >= MAX_PASSAGES {
            break;
        }
        if used.contains(&c.unit) || used.iter().any(|&u| index.jaccard(u, c.unit) > MAX_JACCARD) {
            continue;
        }
        let mut p = c.context.clone();
        if let Some(next) = c.extra {
            if !p.contains(&next) {
                p.push(next);
            }
        }
        if p.iter().any(|u| used.contains(u)) {
            continue;
        }
        if passages.is_empty() && clear_of_runner_up(page, c, scored.get(1)) && leads(c) {
            lead = c.span.as_ref().and_then(|r| {
                page.unit_text(c.extra.unwrap_or(c.unit))
                    .get(r.clone())
                    .map(str::to_string)
            });
        }
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
            "I could not find this on the page: “{question}”. The offline reader matches the question's words, so an answer in other words may still be there."
        )));
        if let Some(note) = super::unread_frames_note(packet) {
            blocks.push(paragraph(&note));
        }
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: None,
        });
    }
    // The answer first, then the passages that say it, quoted.
    let pages: std::collections::BTreeSet<&str> = passages
        .iter()
        .flatten()
        .filter_map(|&u| page.unit_source(u))
        .map(|s| page_of(&s.doc_id))
        .collect();
    blocks.push(paragraph(&match lead {
        Some(span) => span,
        None if from_selection => "The selected text says:".to_string(),
        // Each quote names its own page (its citation's source).
        None if pages.len() > 1 => "These pages say:".to_string(),
        None => "The page says:".to_string(),
    }));
    let items = passages
        .iter()
        .map(|p| p.iter().map(|&u| quoted(page.unit_text(u))).collect())
        .collect();
    blocks.push(list(items));
    let citations = passages
        .iter()
        .flatten()
        .filter_map(|&u| cite(page, u))
        .collect();
    Ok(Reply {
        title,
        blocks,
        citations,
        data: None,
    })
}

/// Whether the best passage's value stands clear of the next passage: no
/// runner-up, a score [`MIN_LEAD_MARGIN`] above it, or the runner-up's
/// value is the same ("$39.99" twice agrees; "$150" against "$199" is a
/// guess).
fn clear_of_runner_up(page: &Page, best: &Candidate, next: Option<&Candidate>) -> bool {
    let Some(next) = next else {
        return true;
    };
    if best.score - next.score >= MIN_LEAD_MARGIN {
        return true;
    }
    let value = |c: &Candidate| {
        c.span.as_ref().and_then(|r| {
            page.unit_text(c.extra.unwrap_or(c.unit))
                .get(r.clone())
                .map(str::to_lowercase)
        })
    };
    value(best).is_some() && value(best) == value(next)
}

/// Which page a document is part of: a collection's source
/// (`doc:src:<id>#<n>`), another tab (`doc:web:tab:<id>`), else the page.
fn page_of(doc_id: &str) -> &str {
    if let Some(source) = doc_id.strip_prefix("doc:src:") {
        return source.split('#').next().unwrap_or(source);
    }
    if doc_id.starts_with("doc:web:tab:") {
        return doc_id;
    }
    "page"
}

/// A unit that may answer, with its score, answer span and the sentence
/// after it when the span is there.
struct Candidate {
    unit: usize,
    /// The units quoted for it: the unit with the sentences it leans on.
    context: Vec<usize>,
    score: f64,
    /// How well the answer span fits the question (0 without one).
    fit: f64,
    /// The span is the page's expansion of the acronym asked about.
    expansion: bool,
    /// The answer span's range in the unit's text (or in `extra`'s).
    span: Option<Range<usize>>,
    extra: Option<usize>,
}

/// The span of `unit` of the wanted type (any named or numeric span for
/// [`Want::Any`]) closest to the question's words
/// there, with a bonus (0..=1) for how well it fits. Spans made only of the
/// question's own words do not answer it.
pub(super) fn best_span(
    page: &Page,
    index: &Index,
    query: &Query,
    want: Want,
    unit: usize,
    question_lower: &str,
    counted: &[u32],
) -> Option<(Range<usize>, f64)> {
    let text = page.unit_text(unit);
    let words = index.terms_at(text);
    // Where the question's words are, each weighted by its rarity.
    let hits: Vec<(usize, f64)> = words
        .iter()
        .filter_map(|(r, id)| Some((r.start, query.weight_of((*id)?))))
        .filter(|&(_, w)| w > 0.0)
        .collect();
    let spans = entity::spans(text, index.lang());
    // A sentence that names someone but not whom the question names is
    // about that someone: its values are theirs ("Ogunjobi received a
    // one-game suspension" does not say how long Pouncey's is).
    let named: Vec<u32> = query.named_ids().collect();
    let names_asked = named.is_empty()
        || words
            .iter()
            .any(|(_, id)| id.is_some_and(|id| named.contains(&id)));
    let roles: Vec<u32> = if want == Want::Person {
        retrieval::tokenize(question_lower)
            .iter()
            .filter(|w| entity::is_role(w))
            .flat_map(|w| query.ids_for(w))
            .collect()
    } else {
        Vec::new()
    };
    let mut best: Option<(Range<usize>, f64)> = None;
    for span in &spans {
        if !span.answers(want) {
            continue;
        }
        // "Who is X's lawyer?": the person is named with that role
        // ("Sonya A. Zoghlin, Carlineo's attorney"), not just near it.
        if want == Want::Person
            && !roles.is_empty()
            && !words.iter().any(|(r, id)| {
                id.is_some_and(|id| roles.contains(&id))
                    && r.start
                        .abs_diff(span.range.start)
                        .min(r.end.abs_diff(span.range.end))
                        <= ROLE_REACH
            })
        {
            continue;
        }
        // "Who scored the Penguins' goals?": a person-like name holding a
        // name the question gives is whom it asks about, not the answer.
        if want == Want::Person
            && words.iter().any(|(r, id)| {
                r.start >= span.range.start
                    && r.end <= span.range.end
                    && id.is_some_and(|id| named.contains(&id))
            })
        {
            continue;
        }
        let someone_else = !names_asked
            && spans.iter().any(|o| {
                o.kind == entity::Kind::Name
                    && (o.person || entity::says(text, o))
                    && (o.range.end <= span.range.start || o.range.start >= span.range.end)
            });
        if someone_else {
            continue;
        }
        // Its own words all in the question: it is what was asked about.
        let own = words
            .iter()
            .filter(|(r, _)| r.start >= span.range.start && r.end <= span.range.end)
            .filter(|(r, _)| Some(r.start) != span.unit.as_ref().map(|u| u.start));
        let mut any = false;
        let mut all_asked = true;
        for (r, id) in own {
            any = true;
            let w = text.get(r.clone()).unwrap_or("").to_lowercase();
            // By stem too: "Davis Cup Finals" is what "the Davis Cup final" asks about.
            all_asked &= question_lower.contains(&w) || id.is_some_and(|id| query.has_id(id));
        }
        if any && all_asked {
            continue;
        }
        let near = hits
            .iter()
            .map(|&(h, w)| {
                let d = h.abs_diff(span.range.start).min(h.abs_diff(span.range.end));
                w / (1.0 + d as f64 / 40.0)
            })
            .fold(0.0, f64::max);
        let mut fit = 0.6 * near;
        // "How many nights" → "17 nights".
        let unit_id = span.unit.as_ref().and_then(|u| {
            words
                .iter()
                .find(|(r, _)| r.start == u.start)
                .and_then(|(_, id)| *id)
        });
        // A count of something else beside what is counted ("Two service
        // members … in a helicopter crash" counts no helicopters).
        let counts_other = unit_id.is_some_and(|u| {
            !counted.is_empty()
                && !counted.contains(&u)
                && words.iter().any(|(r, id)| {
                    id.is_some_and(|id| counted.contains(&id))
                        && (r.end <= span.range.start || r.start >= span.range.end)
                })
        });
        if counts_other {
            continue;
        }
        let unit_asked = unit_id.is_some_and(|id| query.has_id(id));
        // "How far …" → "1,200 miles"; "wind speed" → "55 mph".
        let unit_text = span
            .unit
            .as_ref()
            .and_then(|u| text.get(u.clone()))
            .unwrap_or_else(|| text.get(span.range.clone()).unwrap_or(""))
            .to_lowercase();
        if unit_asked || entity::unit_fits(question_lower, &unit_text) {
            fit += 0.4;
        }
        // The question's own word beats its synonym ("US troops" over
        // "service members" for "How many troops …").
        if unit_id.is_some_and(|id| query.is_own(index, id)) {
            fit += 0.05;
        }
        if best.as_ref().is_none_or(|(_, f)| fit > *f) {
            best = Some((span.range.clone(), fit));
        }
    }
    best
}

/// The acronyms a question writes: words of two to six capital letters.
fn acronyms(question: &str) -> impl Iterator<Item = &str> {
    question.split(|c: char| !c.is_alphanumeric()).filter(|w| {
        (2..=6).contains(&w.chars().count()) && w.chars().all(|c| c.is_ascii_uppercase())
    })
}

/// Lets an acronym in the question match its expansion on the page and the
/// reverse ("IPO" ↔ "initial public offering"): the expansion is any run of
/// words on the page whose initials spell it.
fn expand_acronyms(page: &Page, index: &Index, query: &mut Query, question: &str) {
    let qwords: Vec<&str> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for w in acronyms(question) {
        let lower = w.to_lowercase();
        if let Some(expansion) = find_expansion(page, &lower) {
            query.add_alternative(index, &lower, &expansion);
        }
    }
    // A name in the question: the page often gives only part of it
    // ("Michael Webb" … "Webb, 51,").
    // (The first word is capitalized as the sentence's first.)
    let capital = |w: &&str| w.chars().next().is_some_and(char::is_uppercase);
    for run in qwords.get(1..).unwrap_or(&[]).split(|w| !capital(w)) {
        for a in run.iter().filter(|_| run.len() >= 2) {
            for b in run.iter().filter(|b| *b != a) {
                query.add_alternative(index, &a.to_lowercase(), &b.to_lowercase());
            }
        }
    }
    // The question spells out what the page abbreviates.
    for len in 2..=5usize {
        for run in qwords.windows(len) {
            let initials: String = run
                .iter()
                .filter_map(|w| w.chars().next())
                .flat_map(char::to_lowercase)
                .collect();
            if index.term(&initials).is_some() {
                if let Some(last) = run.last() {
                    query.add_alternative(index, &last.to_lowercase(), &initials);
                }
            }
        }
    }
}

/// The first run of words on the page whose initials spell `acronym`.
fn find_expansion(page: &Page, acronym: &str) -> Option<String> {
    expansion_at(page, acronym).map(|(_, e)| e)
}

/// "What does VIPER stand for?": the page's expansion of an acronym the
/// question writes is the answer, quoted with the sentence that spells it
/// out. Ranked above every other passage: nothing else answers it.
fn expansion_answer(page: &Page, question: &str) -> Option<Candidate> {
    let (unit, expansion) =
        acronyms(question).find_map(|a| expansion_at(page, &a.to_lowercase()))?;
    // The words are joined by spaces: the span is the page's own text only
    // when it is written so.
    let span = page
        .unit_text(unit)
        .find(&expansion)
        .map(|at| at..at + expansion.len());
    Some(Candidate {
        unit,
        context: passage(page, unit),
        score: f64::MAX,
        fit: 1.0,
        expansion: true,
        span,
        extra: None,
    })
}

/// The unit holding the first run of words on the page whose initials
/// spell `acronym`, and that run.
fn expansion_at(page: &Page, acronym: &str) -> Option<(usize, String)> {
    let n = acronym.chars().count();
    for i in 0..page.units.len() {
        let text = page.unit_text(i);
        let ws: Vec<&str> = text
            .split(|c: char| !c.is_alphanumeric() && c != '-')
            .filter(|w| !w.is_empty())
            .collect();
        for run in ws.windows(n) {
            let initials: String = run
                .iter()
                .filter_map(|w| w.chars().next())
                .flat_map(char::to_lowercase)
                .collect();
            if initials == acronym && run.iter().all(|w| w.chars().count() > 1) {
                return Some((i, run.join(" ")));
            }
        }
    }
    None
}

/// Whether `question` asks what an abbreviation stands for ("What does
/// VIPER stand for?", "Wofür steht DLR?"), in any language.
fn asks_expansion(question: &str, code: &str) -> bool {
    let ws = questions::question_words(question);
    questions::page_first(code).any(|l| {
        l.stands_for
            .iter()
            .any(|p| !p.is_empty() && ws.windows(p.len()).any(|run| run == p.as_slice()))
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use laika_core::retrieval::questions::Want;
    use serde_json::json;

    #[test]
    fn a_page_is_its_source_or_tab_whatever_part_of_it_is_quoted() {
        use super::page_of;
        assert_eq!(page_of("doc:src:s-1#3"), page_of("doc:src:s-1"));
        assert_ne!(page_of("doc:src:s-1#3"), page_of("doc:src:s-2#3"));
        assert_eq!(page_of("doc:web:chunk:4"), page_of("doc:web:summary"));
        assert_ne!(page_of("doc:web:tab:7"), page_of("doc:web:summary"));
    }

    #[test]
    fn an_expansion_question_is_told_apart() {
        use super::asks_expansion;
        assert!(asks_expansion("What does VIPER stand for?", "en"));
        assert!(asks_expansion("Wofür steht DLR?", "de"));
        assert!(!asks_expansion("Where does VIPER stand?", "en"));
    }

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
        assert!(
            before.contains("I could not find this on the page"),
            "{before}"
        );
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
    fn a_short_labelled_value_answers_its_question() {
        // Product pages state facts as labels, not sentences.
        let text = "Trail backpack 28L\nA light 28-litre pack for day hikes with a padded laptop sleeve.\n\
                    Price: $89.00. SKU: TB-28-GRN. In stock.";
        let p = packet(
            "web.answer",
            json!({}),
            "What is the price?",
            summary("Trail backpack 28L", text),
            &[],
        );
        let v = run(&p);
        assert!(render_text(&v).contains("$89.00"), "{}", render_text(&v));
        assert!(quotes(&v).iter().any(|q| q.contains("$89.00")));
    }

    #[test]
    fn a_lead_is_shown_only_when_it_is_surely_the_value_asked_for() {
        let page = "H1: Orchard notes\n\
            Caroline Hawley interviewed Julian Assange at the embassy in London last spring.\n\
            The orchard stretches for more than 1000 feet along the river, with pear trees on both banks.\n\
            The new telescope was built in Hawaii by a team of forty engineers.\n\
            The harvest brought in 300 pears on Monday and 120 pears on Tuesday.\n\
            The cider press in the barn can hold 250 pears at a time.";
        let ask = |q: &str| {
            render_text(&run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Orchard notes", page),
                &[],
            )))
        };
        // Each question is answered by quotes, but no value leads: a name
        // does not say who someone is, a place is not a telescope, and two
        // counts of pears in one sentence are a guess.
        for q in [
            "Who is Caroline Hawley?",
            "Which telescope was built by forty engineers?",
            "How many pears did the harvest bring in?",
        ] {
            let text = ask(q);
            assert!(text.starts_with("The page says:\n“"), "{q}: {text}");
        }
        // One count of what is asked, beside the question's words: it leads.
        let text = ask("How many pears can the cider press hold?");
        assert!(text.starts_with("250 pears\n"), "{text}");
    }

    #[test]
    fn a_value_its_sentence_does_not_state_does_not_lead() {
        let page = "H1: Mill news\n\
            About 300 mill workers are expected to lose their jobs when the line closes.\n\
            The mill earned $4 million last year, or $2.10 per share, its owners said.\n\
            The mill sits on the river north of the old bridge.";
        let ask = |q: &str| {
            render_text(&run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Mill news", page),
                &[],
            )))
        };
        // An expectation is quoted, not led with as the figure.
        let text = ask("How many mill workers will lose their jobs?");
        assert!(text.starts_with("The page says:\n“About 300"), "{text}");
        // A rate leads with the value written per its unit, not the total.
        let text = ask("How much did the mill earn per share?");
        assert!(!text.starts_with("$4 million"), "{text}");
        assert!(text.contains("$2.10 per share"), "{text}");
    }

    #[test]
    fn a_passage_that_states_its_value_comes_before_an_expectation() {
        let page = "H1: Ferry news\n\
            Some 2,000 ferry passengers a day are expected to use the new harbour line.\n\
            By its owners' count, 1,400 ferry passengers a day used the old harbour line this spring.\n\
            Tickets are sold at the quay.";
        let text = render_text(&run(&packet(
            "web.answer",
            json!({}),
            "How many ferry passengers a day use the harbour line?",
            summary("Ferry news", page),
            &[],
        )));
        let first = text.find("1,400").expect("the stated figure is quoted");
        let expected = text.find("2,000").unwrap_or(usize::MAX);
        assert!(first < expected, "{text}");
    }

    #[test]
    fn the_sentence_that_says_the_value_beside_what_is_asked_comes_first() {
        use super::{prefer_the_value_sentence, Candidate, CLOSE_SCORE};
        use laika_core::retrieval::{Index, Page, Scope};
        let text = "Grab the Kindle Paperwhite now at the lowest cost we have seen.\n\
            You save $40 against a Kindle Oasis with the same screen.\n\
            The Kindle Paperwhite will now cost you $99 at most shops.";
        let p = packet(
            "web.answer",
            json!({}),
            "What does the Kindle Paperwhite cost now?",
            summary("Weekend deals", text),
            &[],
        );
        let page = Page::from_documents(&p.context.documents, Scope::All);
        let index = Index::build(&page);
        let query = index.query("What does the Kindle Paperwhite cost now?");
        let unit = |needle: &str| {
            (0..page.units.len())
                .find(|&u| page.unit_text(u).contains(needle))
                .unwrap()
        };
        // The best passage's value is in the sentence after it, which says
        // little of the question; the next one says its value beside it.
        let candidate = |u: usize, extra: Option<usize>, score: f64| Candidate {
            unit: u,
            context: vec![u],
            score,
            fit: 0.5,
            expansion: false,
            span: Some(0..3),
            extra,
        };
        let ranked = |gap: f64| {
            let mut scored = vec![
                candidate(unit("Grab"), Some(unit("$40")), 1.5),
                candidate(unit("$99"), None, 1.5 - gap),
            ];
            prefer_the_value_sentence(&index, &query, Want::Money, &mut scored);
            page.unit_text(scored[0].extra.unwrap_or(scored[0].unit))
                .to_string()
        };
        assert!(ranked(CLOSE_SCORE / 2.0).contains("$99"));
        // Far below the best, it stays where it is.
        assert!(ranked(CLOSE_SCORE * 2.0).contains("$40"));
    }

    #[test]
    fn who_someone_is_is_answered_by_the_sentence_that_describes_them() {
        let page = "H1: Harbour works\n\
            \"We hold the line,\" Dana Whitfield told Mayor Ann Price.\n\
            \"The tides are hard,\" Dana Whitfield told Mayor Ann Price.\n\
            The council met on Tuesday to approve the budget for the new pier and the repairs to the old sea wall.\n\
            Dana Whitfield, the harbour's chief engineer, walked the new pier on Tuesday with Mayor Ann Price.";
        let v = run(&packet(
            "web.answer",
            json!({}),
            "Who is Dana Whitfield?",
            summary("Harbour works", page),
            &[],
        ));
        let first = quotes(&v).first().cloned().unwrap_or_default();
        assert!(first.contains("chief engineer"), "{}", render_text(&v));
        // A name does not say who someone is: no lead above the quotes.
        assert!(
            render_text(&v).starts_with("The page says:"),
            "{}",
            render_text(&v)
        );
    }

    #[test]
    fn a_lead_needs_its_passage_clear_of_a_runner_up_with_another_value() {
        let ask = |page: &str, q: &str| {
            render_text(&run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Lamp shop", page),
                &[],
            )))
            .lines()
            .filter(|l| !l.starts_with("Only part of this page"))
            .collect::<Vec<_>>()
            .join("\n")
        };
        // Two passages as good as each other, each with its own price: the
        // quotes show both, no price leads.
        let two = "H1: Lamp shop\n\
            The brass desk lamp costs $40 at the shop.\n\
            The brass desk lamp costs $90 at the market.\n\
            Opening hours are nine to five.";
        let text = ask(two, "How much does the brass desk lamp cost?");
        assert!(text.starts_with("The page says:\n“"), "{text}");
        assert!(text.contains("$40") && text.contains("$90"), "{text}");
        // The same price said twice agrees: it leads.
        let same = "H1: Lamp shop\n\
            The brass desk lamp costs $40 at the shop.\n\
            The brass desk lamp costs $40 at the market.\n\
            Opening hours are nine to five.";
        let text = ask(same, "How much does the brass desk lamp cost?");
        assert!(text.starts_with("$40\n"), "{text}");
        // One passage that answers: it leads.
        let one = "H1: Lamp shop\n\
            The brass desk lamp costs $40 at the shop.\n\
            Opening hours are nine to five.";
        let text = ask(one, "How much does the brass desk lamp cost?");
        assert!(text.starts_with("$40\n"), "{text}");
    }

    #[test]
    fn a_page_read_in_part_says_how_much_was_read() {
        let mut s = summary(
            "Long page",
            "The bridge opened in 1932 after four years of work.",
        );
        s["signals"] = json!(["text_truncated"]);
        let text = render_text(&run(&packet(
            "web.answer",
            json!({}),
            "When did the bridge open?",
            s,
            &[],
        )));
        assert!(
            text.contains("\nThis page is longer than Laika reads at once: this answer covers its first 51 characters, not the rest.\n"),
            "{text}"
        );
    }

    #[test]
    fn related_stories_are_not_quoted_as_answers() {
        let article =
            "The council approved the tram line to the airport on Tuesday after a long debate.\n\
            Construction starts in March and takes two years, the mayor said.\n\
            The line will have twelve stops and run every ten minutes at peak hours.\n\
            Residents asked for a direct link to the airport for more than a decade.";
        let text = format!("{article}\nH2: Related stories\n- Airport tram delayed again by strike\n- Why the airport tram costs so much\n- Tram fares rise in January");
        let mut s = summary("Tram line approved", &text);
        s["primary"] = json!({"text": article, "handle_id": "laika-2"});
        let ask = |q: &str| quotes(&run(&packet("web.answer", json!({}), q, s.clone(), &[])));
        let q = ask("Why does the airport tram cost so much?");
        assert!(q.iter().all(|x| !x.contains("costs so much")), "{q:?}");
    }

    #[test]
    fn answer_finds_the_passage_or_says_it_could_not_find_it() {
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
        // The answer span leads, then the quote.
        assert!(
            render_text(&v).starts_with("two-year warranty\n"),
            "{}",
            render_text(&v)
        );

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
            "I could not find this on the page: “What is the capital of France?”. The offline reader matches the question's words, so an answer in other words may still be there."
        );
        // A frame of another site that was not read is named with the abstain.
        let mut framed = summary("Help", page);
        framed["frames"] = json!([
            {"origin": "https://maps.example", "title": "Store map", "read": false},
            {"origin": "", "title": "Read frame", "read": true}
        ]);
        let v = run(&packet(
            "web.answer",
            json!({}),
            "Where is the nearest store?",
            framed,
            &[],
        ));
        assert!(
            render_text(&v).ends_with(
                "\nEmbedded content from another site was not read: “Store map” (https://maps.example)."
            ),
            "{}",
            render_text(&v)
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

    #[test]
    fn answer_leads_with_the_typed_span_and_abstains_without_one() {
        let page = "H1: Storm cuts power\n\
            The utility is shutting off power to some 375,000 people across 20 counties.\n\
            Winds gusting at times to 55 mph were forecast for the hills.\n\
            Crews will begin restoring power on Thursday, said spokesman Paul Doherty.\n\
            The company announced on Sept. 30 that it was withdrawing its filing for an initial public offering.\n\
            “We are ready,” the mayor said.";
        let ask = |q: &str| {
            run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Storm", page),
                &[],
            ))
        };
        for (q, span, quote) in [
            (
                "How many people will lose power?",
                "some 375,000 people",
                "375,000",
            ),
            ("How strong are the wind gusts?", "55 mph", "55 mph"),
            (
                "When will power be restored?",
                "Thursday",
                "restoring power",
            ),
            ("Who speaks for the utility?", "Paul Doherty", "spokesman"),
            (
                "When did it withdraw its IPO filing?",
                "Sept. 30",
                "initial public offering",
            ),
        ] {
            let v = ask(q);
            let text = render_text(&v);
            assert!(shows(&text, span), "{q}: {text}");
            assert!(
                quotes(&v).first().is_some_and(|c| c.contains(quote)),
                "{q}: {text}"
            );
        }
        // The page talks about power but gives no price: no quote.
        let v = ask("How much does the power cost?");
        assert!(quotes(&v).is_empty(), "{}", render_text(&v));
        // A sentence that opens with a quotation mark is not quoted twice.
        let v = ask("What did the mayor say?");
        assert!(!render_text(&v).contains("““"), "{}", render_text(&v));
    }

    #[test]
    fn a_typed_answer_is_tied_to_what_the_question_asks() {
        let page = "H1: Team fined after brawl\n\
            The league suspended Garrett and Pouncey for several games after the fight.\n\
            Guard Larry Ogunjobi also received a one-game suspension for shoving the quarterback.\n\
            Two service members were hurt in a helicopter crash near the stadium.\n\
            The show drew judges Len Goodman and Bruno Tonioli to the stadium.\n\
            The team now travels to Cup-style finals, said coach Mike Tomlin.\n\
            The project has cost eine Milliarde Euro so far.";
        let ask = |q: &str| {
            run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Team fined after brawl", page),
                &[],
            ))
        };
        // Another person's value, a count of something else, a "who" whose
        // deed the page never states: the page does not say.
        for q in [
            "How many games was Pouncey suspended for?",
            "How many helicopters crashed?",
            "Who won the show?",
        ] {
            let v = ask(q);
            assert!(quotes(&v).is_empty(), "{q}: {}", render_text(&v));
        }
        for (q, span) in [
            (
                "How many games was Ogunjobi suspended for?",
                "one-game suspension",
            ),
            ("Who coaches the team?", "Mike Tomlin"),
            ("How much has the project cost?", "eine Milliarde Euro"),
        ] {
            let text = render_text(&ask(q));
            assert!(shows(&text, span), "{q}: {text}");
        }
    }

    #[test]
    fn a_name_answers_only_as_what_is_asked() {
        let ask = |page: &str, q: &str| {
            run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Sports and ads", page),
                &[],
            ))
        };
        // The name the question gives is not its answer; a person is not a
        // firm; a name far from the firm the question names is another's.
        for (page, q) in [
            (
                "The Islanders beat the Pittsburgh Penguins 5-4 after two late goals on Tuesday night.",
                "Who scored the Penguins' goals?",
            ),
            (
                "Jeff Sanborn, president of Chapter & Verse, a Spokane and Seattle design agency, said the campaign – run by a Minneapolis-based firm with a budget of $449,000 – was provocative.",
                "What is the name of the Minneapolis firm behind the campaign?",
            ),
        ] {
            let v = ask(page, q);
            assert!(quotes(&v).is_empty(), "{q}: {}", render_text(&v));
        }
        // A long sentence that mentions advertising is prose, not chrome.
        let page = "The campaign was written by an advertising agency over several long months of work on its message, its design and the many tests it needed, at a cost of $90,000.";
        let text = render_text(&ask(page, "How much did the advertising campaign cost?"));
        assert!(text.contains("$90,000\n"), "{text}");
    }

    #[test]
    fn a_pronouns_sentence_is_tied_through_whom_its_paragraph_names() {
        let page = "H1: Five companies join the lunar lander program\n\
            Marco Villa, the company's chief operating officer, said Tyvak would build small landers. He declined to say when they would fly.\n\
            Michael Sims, chief executive of Ceres Robotics, said his company's award was a sign of things to come. “Space exploration needs an entire ecosystem,” he said. He said his company's lander should be available for missions starting in 2023.";
        let ask = |q: &str| {
            render_text(&run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Five companies join the lunar lander program", page),
                &[],
            )))
        };
        let text = ask("When could Ceres Robotics fly its lander?");
        assert!(shows(&text, "2023"), "{text}");
        assert!(text.contains("Michael Sims"), "{text}");
    }

    #[test]
    fn a_what_questions_head_noun_types_its_answer() {
        let page = "H1: Bus driver pleads guilty\n\
            The bus driver, 34, could face up to 10 years in prison after pleading guilty on Monday.\n\
            Doctors could not find the cause of the crash for months.\n\
            Then the lung doctor Maria Keller found the cause, a rare sleeping disorder.\n\
            The show about the crash is a 75-minute play staged in the old depot.";
        let ask = |q: &str| {
            run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Bus driver pleads guilty", page),
                &[],
            ))
        };
        for (q, span) in [
            ("What prison term does the driver face?", "10 years"),
            ("Which doctor found the cause?", "Maria Keller"),
            ("How long is the show?", "75-minute play"),
        ] {
            let text = render_text(&ask(q));
            assert!(shows(&text, span), "{q}: {text}");
        }
        // A fine is money: the page names none.
        let v = ask("What fine does the driver face?");
        assert!(quotes(&v).is_empty(), "{}", render_text(&v));
    }

    #[test]
    fn an_acronym_question_is_answered_by_its_expansion() {
        // A short page gets a "very little readable text" notice first.
        let ask = |page: &str, q: &str| {
            render_text(&run(&packet(
                "web.answer",
                json!({}),
                q,
                summary("Moon mission", page),
                &[],
            )))
            .lines()
            .filter(|l| !l.starts_with("Only part of this page"))
            .collect::<Vec<_>>()
            .join("\n")
        };
        let page = "H1: Moon mission\n\
            The agency will fly the Lunar Ice Mapping Explorer (LIME) to the south pole in 2024.\n\
            The rover stands for a new kind of cheap mission, its chief engineer said.";
        let text = ask(page, "What does LIME stand for?");
        assert!(text.starts_with("Lunar Ice Mapping Explorer\n"), "{text}");
        assert!(text.contains("(LIME) to the south pole"), "{text}");
        // No expansion of the acronym on the page: it does not say.
        let text = ask(page, "What does ESA stand for?");
        assert!(
            text.starts_with("I could not find this on the page"),
            "{text}"
        );
        let page = "Die Agentur schickt den Lunar Ice Mapping Explorer (LIME) im Jahr 2024 zum Südpol des Mondes, sagte der Chefingenieur.";
        let text = ask(page, "Wofür steht LIME?");
        assert!(text.contains("Lunar Ice Mapping Explorer\n"), "{text}");
    }

    #[test]
    fn answer_stems_the_pages_language() {
        let page = "Die Stadtwerke haben die Stromversorgung in allen Häusern der Stadt wiederhergestellt.\n\
            Der Bürgermeister dankte den Helfern für ihre schnelle Arbeit in der Nacht.";
        let v = run(&packet(
            "web.answer",
            json!({}),
            "Was ist mit dem Haus?",
            summary("Strom", page),
            &[],
        ));
        assert!(quotes(&v)
            .first()
            .is_some_and(|q| q.starts_with("Die Stadtwerke")));
    }
}

#[cfg(test)]
mod language_tests {
    use super::super::fixtures::*;
    use serde_json::json;

    /// "Wann findet … statt?": the verbs that only frame
    /// when or where something takes place are not searched for.
    #[test]
    fn a_framing_verb_is_not_asked_for() {
        let page = "Am 12. bis 13. September startet wieder die DMEXCO 2018 in Köln, und wir sind mit einem eigenen Stand dabei.";
        let q = "Wann findet die DMEXCO 2018 statt?";
        let text = render_text(&run(&packet(
            "web.answer",
            json!({}),
            q,
            summary("", page),
            &[],
        )));
        assert!(shows(&text, "13. September"), "{q} → {text}");
    }

    /// A language Snowball has no stemmer for (Indonesian, Polish) is detected and
    /// asked in its own question words: who and when lead with the exact
    /// span, and a price the page never gives is not quoted.
    #[test]
    fn answers_in_a_language_without_a_stemmer() {
        let page = "Jembatan baru di atas Sungai Musi akhirnya selesai dibangun setelah empat tahun. \
            Jembatan itu diresmikan oleh wali kota Budi Santoso pada 12 Maret 2019 di depan ribuan warga. \
            Menurut pejabat dinas pekerjaan umum, jembatan ini akan mengurangi kemacetan di pusat kota.";
        let ask =
            |page: &str, q: &str| run(&packet("web.answer", json!({}), q, summary("", page), &[]));
        let cases = [
            ("Siapa yang meresmikan jembatan itu?", "Budi Santoso"),
            ("Kapan jembatan itu diresmikan?", "12 Maret 2019"),
            ("Berapa lama jembatan itu dibangun?", "empat tahun"),
        ];
        let pl = "Nowy most na Wiśle jest gotowy. Budowa trwała cztery lata i była bardzo trudna. \
            Most otworzyła prezydent miasta Anna Nowak w piątek, a mieszkańcy przeszli przez most jako pierwsi.";
        let cases = cases.iter().map(|&(q, span)| (page, q, span)).chain([
            (pl, "Kto otworzył most?", "Anna Nowak"),
            (pl, "Ile lat trwała budowa?", "cztery lata"),
        ]);
        for (page, q, span) in cases {
            let v = ask(page, q);
            let text = render_text(&v);
            // The typed span itself, not the sentence around it, when it
            // leads.
            assert!(shows(&text, span), "{q} → {text}");
        }
        for (page, q) in [
            (page, "Berapa harga tiket untuk menyeberangi jembatan?"),
            (pl, "Ile kosztował bilet na most?"),
        ] {
            let v = ask(page, q);
            assert!(quotes(&v).is_empty(), "{q} → {}", render_text(&v));
        }
    }

    /// A question in each language of the question-word data, on a short
    /// page in that language: the answer leads with the right span.
    #[test]
    fn answers_questions_in_many_languages() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "en",
                "The new bridge over the river was opened by the city. It cost the city $40 million and took four years to build. The mayor, Anna Clarke, cut the ribbon on Friday.",
                "How much did the bridge cost?",
                "$40 million",
            ),
            (
                "de",
                "Die neue Brücke über den Fluss ist fertig. Der Bau hat vier Jahre gedauert und die Stadt 40 Millionen Euro gekostet. Die Brücke wird am 12. März eröffnet, sagte die Bürgermeisterin Anna Keller.",
                "Wann wird die Brücke eröffnet?",
                "12. März",
            ),
            (
                "fr",
                "Le nouveau pont sur le fleuve est terminé. Les travaux ont duré quatre ans et la ville a payé les travaux. Le pont sera inauguré le 12 mars par la maire Anne Dupont, qui a salué les ouvriers.",
                "Quand le pont sera-t-il inauguré ?",
                "12 mars",
            ),
            (
                "es",
                "El nuevo puente sobre el río está terminado. Las obras duraron cuatro años y costaron a la ciudad 40 millones de euros. La alcaldesa Ana García inaugurará el puente con los vecinos.",
                "¿Quién inaugurará el puente?",
                "Ana García",
            ),
            (
                "it",
                "Il nuovo ponte sul fiume è finito. I lavori sono durati quattro anni e sono costati alla città 40 milioni di euro. Il ponte sarà inaugurato dal sindaco con i cittadini della zona.",
                "Quanti anni sono durati i lavori?",
                "quattro anni",
            ),
            (
                "pt",
                "A nova ponte sobre o rio está pronta. As obras duraram quatro anos e custaram à cidade 40 milhões de euros. A ponte será inaugurada em Lisboa pela presidente da câmara com os moradores.",
                "Onde será inaugurada a ponte?",
                "Lisboa",
            ),
            (
                "nl",
                "De nieuwe brug over de rivier is klaar. De bouw heeft vier jaar geduurd en de stad 40 miljoen euro gekost. De burgemeester Anna de Vries opent de brug op vrijdag met de bewoners.",
                "Wanneer opent de burgemeester de brug?",
                "vrijdag",
            ),
            (
                "ru",
                "Новый мост через реку построен. Строительство длилось четыре года и стоило городу 40 миллионов рублей. Мост откроет мэр Анна Иванова, это было объявлено для жителей.",
                "Кто откроет мост?",
                "Анна Иванова",
            ),
            (
                "tr",
                "Nehir üzerindeki yeni köprü tamamlandı. İnşaat dört yıl sürdü ve şehre 40 milyon lira mal oldu. Köprü 12 mart tarihinde açılacak ve bu köprü için çok sayıda kişi bekleniyor.",
                "Köprü ne zaman açılacak?",
                "12 mart",
            ),
            (
                "ar",
                "تم الانتهاء من الجسر الجديد على النهر. استغرق البناء أربع سنوات وبلغت التكلفة 40 مليون دولار. افتتح الجسر في 12 مايو 2019 مع سكان المدينة في حفل كبير.",
                "متى افتتح الجسر؟",
                "12 مايو 2019",
            ),
            (
                "sv",
                "Den nya bron över floden är klar. Bygget tog fyra år och kostade staden 40 miljoner kronor. Bron öppnas av borgmästaren Anna Berg som har arbetat för bron i många år.",
                "Vem öppnar bron?",
                "Anna Berg",
            ),
            (
                "fi",
                "Uusi silta joen yli on valmis. Rakentaminen kesti neljä vuotta, ja se maksoi kaupungille paljon. Sillan avasi pormestari Anna Virtanen 12. maaliskuuta 2019 ja kiitti työntekijöitä.",
                "Kuka avasi sillan?",
                "Anna Virtanen",
            ),
            (
                "fi",
                "Uusi silta joen yli on valmis. Rakentaminen kesti neljä vuotta, ja se maksoi kaupungille paljon. Sillan avasi pormestari Anna Virtanen 12. maaliskuuta 2019 ja kiitti työntekijöitä.",
                "Kuinka kauan rakentaminen kesti?",
                "neljä vuotta",
            ),
        ];
        for (lang, page, question, span) in cases {
            let v = run(&packet(
                "web.answer",
                json!({}),
                question,
                summary("", page),
                &[],
            ));
            let text = render_text(&v);
            // A short page gets a "very little readable text" notice first.
            assert!(shows(&text, span), "{lang}: {question} → {text}");
            assert!(
                quotes(&v).iter().any(|q| q.contains(span)),
                "{lang}: {question} → {text}"
            );
        }
    }
}

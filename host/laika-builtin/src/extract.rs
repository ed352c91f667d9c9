//! `web.extract`: each requested field looked up in the page's lines, by
//! label first and by its typed shape last; a table of what was found, with
//! the quoted source line as citation.

use super::answer;
use super::entity;
use super::fields::{
    self, char_at, find_date, find_phrase, find_price, find_rating, skip_spaces, tidy, validate,
    value_end, word_hits, Field, AVAILABILITY_PHRASES, MAX_VALUE_BYTES,
};
use super::margins::Margins;
use super::shape;
use super::statement;
use super::structured;
use super::{gate_notice, gate_reasons, paragraph, table, visible_bytes, Reply, SPARSE_BYTES};
use laika_core::cancel::CancelToken;
use laika_core::decoding::fields::{normalize_name, requested_fields, FieldType};
use laika_core::retrieval::questions::{self, Want};
use laika_core::retrieval::{self, Index, Kind, Page, Scope};
use laika_protocol::error::Result;
use laika_protocol::llmcp::{Citation, RequestPacket};
use serde_json::{Map, Value};
use std::ops::Range;

/// How many of the best-matching sentences are searched for a field's value.
const PROSE_CANDIDATES: usize = 30;
/// A sentence must hold this share of the field name's words.
const MIN_PROSE_COVERAGE: f64 = 0.5;

/// A found value: the block it is in, the quoted source span and the value
/// span (byte ranges into the block text).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    block: usize,
    quote: Range<usize>,
    value: Range<usize>,
}

/// The page's lines, with ASCII-lowercased copies for matching.
struct Lines<'a> {
    page: &'a Page,
    lower: Vec<String>,
}

impl Lines<'_> {
    fn text(&self, b: usize) -> &str {
        self.page.blocks.get(b).map_or("", |x| x.text.as_str())
    }

    fn lower(&self, b: usize) -> &str {
        self.lower.get(b).map_or("", String::as_str)
    }

    /// Block `b + 1` when it is in the same field as `b`.
    fn next_in_source(&self, b: usize) -> Option<usize> {
        let blocks = &self.page.blocks;
        (blocks.get(b + 1)?.source == blocks.get(b)?.source).then_some(b + 1)
    }

    fn whole(&self, field: &Field, b: usize, strict: bool) -> Option<Found> {
        let text = self.text(b);
        let value = validate(field.kind, text, self.lower(b), 0..text.len(), strict)?;
        Some(Found {
            block: b,
            quote: value.clone(),
            value,
        })
    }
}

/// `| a | b |` cells of a line: byte ranges of each cell's content.
fn cells(s: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in s.match_indices('|').chain(std::iter::once((s.len(), ""))) {
        let r = tidy(s, start..i);
        start = i + 1;
        out.push(r);
    }
    if out.first().is_some_and(|r| r.is_empty()) {
        out.remove(0);
    }
    if out.last().is_some_and(|r| r.is_empty()) {
        out.pop();
    }
    out
}

/// "Label: value", "Label — value", "Label | value", "Label = value".
fn labelled(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    for label in &field.labels {
        for at in word_hits(lower, label) {
            let after = skip_spaces(text, at + label.len());
            let Some(sep) = char_at(text, after) else {
                continue;
            };
            let spaced = char_at(text, after + sep.len_utf8()).is_some_and(char::is_whitespace);
            // A dash after words inside a sentence is punctuation, not a
            // label's ("a 21 day recuperation period—although …"): a dashed
            // label opens its line or follows a sentence end or a cell.
            let opens = text
                .get(..at)
                .map(str::trim_end)
                .is_some_and(|b| b.is_empty() || b.ends_with(['.', '!', '?', '|', ';', '•', '·']));
            let dash = matches!(sep, '—' | '–') || (sep == '-' && spaced);
            let ok = matches!(sep, ':' | '：' | '|' | '=') || (dash && opens);
            // A row of three or more cells is a column table, read by
            // `label_then_value`; only "label | value" rows pair up here.
            if !ok || (sep == '|' && cells(text).len() >= 3) {
                continue;
            }
            let start = skip_spaces(text, after + sep.len_utf8());
            let end = value_end(text, start);
            if let Some(value) = validate(field.kind, text, lower, start..end, false) {
                return Some(Found {
                    block: b,
                    quote: at..value.end,
                    value,
                });
            }
        }
    }
    None
}

/// A label alone on its line (or a `Term:`, or a table header cell) with the
/// value on the next line.
fn label_then_value(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let lower = lines.lower(b);
    let bare = lower.trim_end_matches([':', ' ', '?']);
    let next = lines.next_in_source(b)?;
    if field.labels.iter().any(|l| l == bare) && lines.text(next).len() <= 120 {
        let kind = lines.page.blocks.get(b).map(|x| x.kind);
        let next_kind = lines.page.blocks.get(next).map(|x| x.kind);
        if kind != Some(Kind::Term) || next_kind == Some(Kind::Definition) {
            return lines.whole(field, next, false);
        }
    }
    // Header row "Price | SKU" over a row "$5 | A1".
    let head = cells(lines.text(b));
    let row = cells(lines.text(next));
    if head.len() >= 2 && head.len() == row.len() {
        for (h, v) in head.iter().zip(&row) {
            let name = lower.get(h.clone()).unwrap_or("");
            if field.labels.iter().any(|l| l == name) {
                let text = lines.text(next);
                let value = validate(field.kind, text, lines.lower(next), v.clone(), false)?;
                return Some(Found {
                    block: next,
                    quote: value.clone(),
                    value,
                });
            }
        }
    }
    None
}

/// "Availability In stock" on a short line.
fn label_space_value(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    if text.len() > 80 {
        return None;
    }
    let label = field.labels.iter().find(|l| {
        lower.starts_with(l.as_str()) && char_at(text, l.len()).is_some_and(char::is_whitespace)
    })?;
    let start = skip_spaces(text, label.len());
    let value = validate(field.kind, text, lower, start..text.len(), true)?;
    Some(Found {
        block: b,
        quote: 0..value.end,
        value,
    })
}

/// A typed value anywhere, without a label: a price, a stock phrase, a
/// rating, a date, a "By Name" byline.
fn unlabelled(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    let value = match field.kind {
        FieldType::Price => find_price(text)?,
        FieldType::Availability => find_phrase(lower, AVAILABILITY_PHRASES)?,
        FieldType::Rating => find_rating(text)?,
        FieldType::Date => find_date(text)?,
        FieldType::Author => {
            let rest = text
                .strip_prefix("By ")
                .or_else(|| text.strip_prefix("by "))?;
            let name: Vec<&str> = rest
                .split_whitespace()
                .take_while(|w| w.starts_with(char::is_uppercase))
                .take(4)
                .collect();
            let last = name.last()?;
            let end = 3 + rest.find(last)? + last.len();
            tidy(text, 3..end)
        }
        FieldType::Sku | FieldType::Other => return None,
    };
    let quote = if text.len() <= MAX_VALUE_BYTES {
        0..text.len()
    } else {
        value.clone()
    };
    Some(Found {
        block: b,
        quote,
        value,
    })
}

/// A bare price field on a page without structured data: the first price
/// in the main content whose sentence names a price ("costs", "priced") or
/// the page's subject (a word of its title); a price in other running text
/// is another thing's ("a $129 case", a shop widget's), so none is shown.
fn named_price(lines: &Lines, index: &Index, field: &Field, margins: &Margins) -> Option<Found> {
    let page = lines.page;
    let lang = index.lang();
    let content =
        |w: &&str| w.len() >= 3 && !retrieval::is_stopword(w) && !lang.is_function_word(w);
    let key = normalize_name(&field.key);
    let title = page.title.to_lowercase();
    let words = structured::property_words("price")
        .into_iter()
        .chain(std::iter::once(key.as_str()))
        .chain(title.split(|c: char| !c.is_alphanumeric()).filter(content));
    let ids: Vec<u32> = words
        .filter_map(|w| index.term(&page_form(index, w)))
        .collect();
    // Every price of the main content, in page order.
    let mut prices: Vec<(usize, Range<usize>)> = Vec::new();
    for u in (0..page.units.len()).filter(|&u| margins.is_main(u)) {
        let text = page.unit_text(u);
        let mut at = 0;
        while let Some(r) = text.get(at..).and_then(find_price) {
            let r = at + r.start..at + r.end;
            at = r.end.max(at + 1);
            prices.push((u, r));
        }
    }
    let named = prices
        .iter()
        .find(|(u, _)| ids.iter().any(|&id| index.has_term(*u, id)));
    // The main content's only price, said once or more, is the page's.
    let only = prices.first().filter(|(u0, r0)| {
        let first = page.unit_text(*u0).get(r0.clone());
        prices
            .iter()
            .all(|(u, r)| page.unit_text(*u).get(r.clone()) == first)
    });
    let (u, r) = named.or(only)?;
    found_in(page, *u, r.clone())
}

/// A field's normalized name, the type it asks for, and its words without
/// the words that only name that type ("release date" → a date, ["release"]).
fn typed_words(index: &Index, field: &Field) -> (String, Want, Vec<String>) {
    let name = normalize_name(&field.key);
    let (want, type_words) = field_want(&name, index.lang().code());
    let words = name
        .split(' ')
        .filter(|w| !entity::FIELD_TYPE_WORDS.contains(w) && !type_words.iter().any(|t| t == w))
        .map(str::to_string)
        .collect();
    (name, want, words)
}

/// A value of the field's type in running text, in the sentence that best
/// matches the field's name ("listing date" → the date beside "listed",
/// not the first date on the page; "share price" → the money beside
/// "share price", not the sum raised).
fn in_prose(lines: &Lines, index: &Index, field: &Field) -> Option<Found> {
    let page = lines.page;
    let (name, want, words) = typed_words(index, field);
    let query = field_query(index, &words);
    let ranked = retrieval::bm25(index, &query);
    // Only a field that is a bare type ("age", "distance", a place head
    // such as "Ort") takes the best value anywhere: "number of trucks" on
    // a page without trucks is absent.
    let bare = match words.as_slice() {
        [w] => {
            entity::want_of_field(w) != Want::Any
                || fields::head_want(w, index.lang().code())
                    .is_some_and(|(want, bare)| bare && want == Want::Place)
        }
        _ => words.is_empty(),
    };
    let place_head = matches!(words.as_slice(), [w] if entity::want_of_field(w) == Want::Any)
        && want == Want::Place;
    if ranked.is_empty() && bare && place_head {
        // A bare place head ("Ort", "venue"): the page's first place named
        // after a preposition ("in Köln"), not a capitalized word that
        // opens a sentence.
        return (0..page.units.len()).find_map(|u| {
            let text = page.unit_text(u);
            // Not a day ("on Monday"): a place is no date.
            let span = entity::spans(text, index.lang()).into_iter().find(|s| {
                s.kind == entity::Kind::Place
                    && text
                        .get(s.range.clone())
                        .is_some_and(|v| v.starts_with(char::is_uppercase) && !is_dated(v, index))
            })?;
            // The name itself, not the clause after it ("Köln – und …").
            found_in(page, u, name_at(text, span.range.start)?)
        });
    }
    if ranked.is_empty() && want != Want::Any && bare {
        // A bare type ("age", "distance"): the best fitting value on the
        // page, the first among equals.
        let mut best: Option<(f64, usize, Range<usize>)> = None;
        for unit in 0..page.units.len() {
            if let Some((range, fit)) =
                answer::best_span(page, index, &query, want, unit, &name, &[])
            {
                if best.as_ref().is_none_or(|(f, _, _)| fit > *f) {
                    best = Some((fit, unit, range));
                }
            }
        }
        let (_, unit, range) = best?;
        return found_in(page, unit, with_unit(page.unit_text(unit), index, range));
    }
    let top = ranked.first().map_or(0.0, |s| s.score);
    let own = own_ids(index, &words);
    let mut best: Option<(f64, usize, Range<usize>)> = None;
    for s in ranked.iter().take(PROSE_CANDIDATES) {
        if index.coverage(&query, s.unit) < MIN_PROSE_COVERAGE {
            continue;
        }
        // A quantity beside the field's words is surer than the nearest.
        let beside = beside_in(page, index, &own, s.unit, want).map(|r| (r, BESIDE_FIT));
        let Some((range, fit)) =
            beside.or_else(|| answer::best_span(page, index, &query, want, s.unit, &name, &[]))
        else {
            continue;
        };
        let score = s.score / top.max(f64::MIN_POSITIVE) + fit;
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, s.unit, range));
        }
    }
    let Some((_, unit, range)) = best else {
        return beside_field_word(page, index, &words, &ranked, want);
    };
    found_in(page, unit, with_unit(page.unit_text(unit), index, range))
}

/// Most tokens between a value and a field word that stands beside it.
const BESIDE_TOKENS: usize = 2;
/// The fit of a value beside the field's words: [`answer::best_span`]'s
/// best.
const BESIDE_FIT: f64 = 1.0;

/// The field's own words and their derived bases as page terms, not their
/// synonyms: "pay $25" is no "parking price".
fn own_ids(index: &Index, words: &[String]) -> Vec<u32> {
    let code = index.lang().code();
    words
        .iter()
        .flat_map(|w| std::iter::once(w.clone()).chain(fields::derived_forms(w, code)))
        .filter_map(|w| index.term(&w))
        .collect()
}

/// A quantity of `want` in `unit` right beside one of the field's words
/// (`own`; stopwords between them not counted): "a $9.99 monthly rate",
/// "$44.2 million per week", "streak to 15 games". Not dates: a year stands beside many words ("the 2014
/// campaign"). The range, in the unit's text, keeps a number's unit.
fn beside_in(
    page: &Page,
    index: &Index,
    own: &[u32],
    unit: usize,
    want: Want,
) -> Option<Range<usize>> {
    if !matches!(
        want,
        Want::Money | Want::Percent | Want::Amount | Want::Duration
    ) {
        return None;
    }
    let text = page.unit_text(unit);
    let terms = index.terms_at(text);
    let field_at: Vec<usize> = terms
        .iter()
        .enumerate()
        .filter(|(_, (_, id))| id.is_some_and(|id| own.contains(&id)))
        .map(|(i, _)| i)
        .collect();
    if field_at.is_empty() {
        return None;
    }
    // The nearest such value, the first among equals.
    let mut best: Option<(usize, Range<usize>)> = None;
    for span in entity::spans(text, index.lang()) {
        if !span.answers(want) {
            continue;
        }
        let inside: Vec<usize> = terms
            .iter()
            .enumerate()
            .filter(|(_, (r, _))| r.start < span.range.end && r.end > span.range.start)
            .map(|(i, _)| i)
            .collect();
        let (Some(&first), Some(&last)) = (inside.first(), inside.last()) else {
            continue;
        };
        let gap = field_at
            .iter()
            .filter_map(|&i| {
                if i < first {
                    Some(first - i)
                } else {
                    (i > last).then(|| i - last)
                }
            })
            .min();
        let Some(gap) = gap.filter(|&g| g <= BESIDE_TOKENS) else {
            continue;
        };
        // A quantity keeps its unit.
        let end = span
            .unit
            .map_or(span.range.end, |u| u.end.max(span.range.end));
        if best.as_ref().is_none_or(|(g, _)| gap < *g) {
            best = Some((gap, span.range.start..end));
        }
    }
    best.map(|(_, r)| r)
}

/// A quantity beside one of the field's words in a sentence that holds too
/// few of them to pass the coverage bar: "monthly price" in "a $9.99
/// monthly rate". The best-ranked such sentence's first.
fn beside_field_word(
    page: &Page,
    index: &Index,
    words: &[String],
    ranked: &[retrieval::Scored],
    want: Want,
) -> Option<Found> {
    let own = own_ids(index, words);
    ranked.iter().take(PROSE_CANDIDATES).find_map(|s| {
        let r = beside_in(page, index, &own, s.unit, want)?;
        found_in(page, s.unit, r)
    })
}

/// A field word as the page writes it: "monthly" is "month" on a page that
/// says "$12 per month" and never "monthly", "reduction" is "reduce",
/// "scorer" is "score" (the language's derivational suffixes).
fn page_form(index: &Index, word: &str) -> String {
    if index.term(word).is_some() {
        return word.to_string();
    }
    fields::derived_forms(word, index.lang().code())
        .into_iter()
        .find(|base| index.term(base).is_some())
        .unwrap_or_else(|| word.to_string())
}

/// The query for a field's words, each also standing for its derived
/// bases on the page: "metabolic rate reduction" finds "reduce … metabolic
/// rate" even on a page that also says "reduction" elsewhere.
fn field_query(index: &Index, words: &[String]) -> retrieval::Query {
    let mut query = index.query(&words.join(" "));
    for word in words {
        for base in fields::derived_forms(word, index.lang().code()) {
            query.add_alternative(index, word, &base);
        }
    }
    query
}

/// "N-M" (a match result): two numbers of one to three digits joined by a
/// hyphen or dash, not part of a date or a longer number.
fn find_result(s: &str) -> Option<Range<usize>> {
    let b = s.as_bytes();
    let digits_at = |i: usize| {
        let n = b
            .get(i..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (1..=3).contains(&n).then_some(i + n)
    };
    for (i, _) in s.char_indices() {
        if i > 0
            && b.get(i - 1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b','))
        {
            continue;
        }
        let Some(end) = digits_at(i) else { continue };
        let dash = s
            .get(end..)
            .and_then(|r| r.chars().next())
            .filter(|c| matches!(c, '-' | '–'));
        let Some(dash) = dash else { continue };
        let Some(e) = digits_at(end + dash.len_utf8()) else {
            continue;
        };
        let next = b.get(e);
        if !next.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'/')) {
            return Some(i..e);
        }
    }
    None
}

/// A result field ("final score", "halftime score"): the first N-M result
/// in the sentences that best match its other words, else, when the page
/// does not use them, the page's first result.
fn result_of(page: &Page, index: &Index, field: &Field) -> Option<Found> {
    let name = normalize_name(&field.key);
    let (head, rest) = name.rsplit_once(' ').unwrap_or(("", name.as_str()));
    if !is_result_word(rest) {
        return None;
    }
    let query = index.query(head);
    let tied: Vec<usize> = retrieval::bm25(index, &query)
        .iter()
        .take(PROSE_CANDIDATES)
        .filter(|s| index.coverage(&query, s.unit) >= MIN_PROSE_COVERAGE)
        .map(|s| s.unit)
        .collect();
    // The tied sentences' first result, else the page's first: "final"
    // is rarely written beside the result.
    let first_in = |units: Vec<usize>| {
        units.into_iter().find_map(|u| {
            let r = find_result(page.unit_text(u))?;
            found_in(page, u, r)
        })
    };
    first_in(tied).or_else(|| first_in((0..page.units.len()).collect()))
}

/// Lower-case words that may sit inside a name ("Monthly Notices of the
/// Royal Astronomical Society", "Dancing with the Stars").
const NAME_JOINERS: &[&str] = &[
    "of", "the", "and", "&", "for", "de", "la", "del", "der", "von", "with",
];
/// Longest name taken, in words.
const MAX_NAME_WORDS: usize = 8;
/// Words allowed between a name and "as"/"," and the field's words
/// ("Ivan Braiker as the company's first Chief Strategy Officer").
const MAX_APPOSITION_GAP: usize = 5;

/// The answer type of a field name: by its English cue words, else by the
/// page language's lexicon, where a word that ends a typed "which …"
/// question phrase types the field ("in welchem Jahr" makes "Jahr" a date).
/// Returns the type and the words that only say it.
fn field_want(name: &str, lang: &str) -> (Want, Vec<String>) {
    // "running time" is how long, though "time" alone asks when.
    if fields::is_time_span(name, lang) {
        return (Want::Duration, Vec::new());
    }
    // A head word the language data types ("discount", "Ort") says more
    // than a cue word before it ("metabolic rate reduction").
    if let Some((want, _)) = fields::head_want(name, lang) {
        return (want, Vec::new());
    }
    let want = entity::want_of_field(name);
    if want != Want::Any {
        return (want, Vec::new());
    }
    let words: Vec<&str> = name.split(' ').collect();
    // "número de etapas", "Anzahl der Etappen": a count head first says
    // the value is a count of what follows.
    if let [first, _, ..] = words.as_slice() {
        if fields::head_want(first, lang) == Some((Want::Amount, true)) {
            return (Want::Amount, vec![(*first).to_string()]);
        }
    }
    for l in laika_core::retrieval::questions::with_english(lang) {
        for (phrase, w) in &l.phrases {
            let Some(last) = phrase.last() else { continue };
            let typed = phrase.len() >= 2
                && phrase.iter().any(|p| l.which.contains(p))
                && !l.which.contains(last)
                && words.contains(&last.as_str());
            if typed && *w != Want::Any {
                return (*w, vec![last.clone()]);
            }
        }
    }
    (want, Vec::new())
}

/// A word of `text` from byte `at`: its range, skipping spaces.
fn next_word(text: &str, at: usize) -> Option<Range<usize>> {
    let start = at + text.get(at..)?.find(|c: char| !c.is_whitespace())?;
    let len = text
        .get(start..)?
        .find(char::is_whitespace)
        .unwrap_or(text.len() - start);
    Some(start..start + len)
}

/// A run of capitalized words from byte `at` (with joiners inside it), or a
/// quoted phrase: the name a field's words introduce. Ends before trailing
/// punctuation but keeps an abbreviation's dot ("Broadhead Co.").
fn name_at(text: &str, at: usize) -> Option<Range<usize>> {
    let first = next_word(text, at)?;
    let word = text.get(first.clone())?;
    if let Some(open) = word.chars().next().filter(|c| "“\"„«‘".contains(*c)) {
        let close = match open {
            '“' => '”',
            '„' => '“',
            '«' => '»',
            '‘' => '’',
            _ => '"',
        };
        let inner = first.start + open.len_utf8();
        let end = inner + text.get(inner..)?.find(close)?;
        let r = tidy(text, inner..end);
        return (!r.is_empty() && r.len() <= MAX_VALUE_BYTES).then_some(r);
    }
    let mut end = None;
    let mut at = first.start;
    let mut n = 0;
    while let Some(w) = next_word(text, at).filter(|_| n < MAX_NAME_WORDS) {
        let word = text.get(w.clone())?;
        let core = word.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '”', '"']);
        let capital = core.starts_with(char::is_uppercase)
            || (core.chars().any(|c| c.is_ascii_digit()) && core.chars().any(char::is_alphabetic));
        if capital && !core.is_empty() {
            end = Some(w.start + core.len());
            // "Co." keeps its dot; a comma or sentence end closes the name.
            if core.len() < word.len() {
                let abbrev = core.len() <= 3 && word.get(core.len()..) == Some(".");
                if abbrev {
                    end = Some(w.end);
                }
                break;
            }
        } else if !(end.is_some() && NAME_JOINERS.contains(&core)) || core.len() < word.len() {
            break;
        }
        at = w.end;
        n += 1;
    }
    let r = first.start..end?;
    (!r.is_empty()).then_some(r)
}

/// The capitalized run that ends right before byte `end` ("Ivan Braiker"
/// in "Ivan Braiker, the new …").
fn name_before(text: &str, end: usize) -> Option<Range<usize>> {
    let head = text.get(..end)?.trim_end();
    let mut start = head.len();
    for (n, w) in head.rsplit(' ').enumerate() {
        if n >= MAX_NAME_WORDS || !w.starts_with(char::is_uppercase) {
            break;
        }
        start -= w.len() + usize::from(n > 0);
    }
    // A sentence's capitalized first word is not part of the name ("The
    // …"), but a name may begin with one inside a sentence ("… Will Moy").
    while let Some(w) = next_word(head, start).filter(|w| w.start < head.len()) {
        let word = head.get(w.clone())?.to_lowercase();
        let opens = head
            .get(..w.start)?
            .trim_end()
            .chars()
            .next_back()
            .is_none_or(|c| ".!?:\"“„«(".contains(c));
        if !retrieval::is_stopword(&word) || !opens {
            break;
        }
        start = skip_spaces(head, w.end);
    }
    let r = start..head.len();
    (!r.is_empty()).then_some(r)
}

/// A name tied to the field's words in one sentence: after them ("ad agency
/// Broadhead Co.", "a solution called Digistat", "the journal Monthly
/// Notices …", a quoted title), or before them as an apposition
/// ("Ivan Braiker, my6sense's new Chief Strategy Officer", "X as the
/// company's first Y"). Only for fields whose value is a name or a thing.
fn tied_name(page: &Page, index: &Index, field: &Field, want: Want) -> Option<Found> {
    if !matches!(want, Want::Any | Want::Person | Want::Name | Want::Place) {
        return None;
    }
    let name = normalize_name(&field.key);
    let lang = index.lang();
    // A word the page writes only in a derived form counts as said there:
    // "publisher" in "published by …".
    let ids: Vec<u32> = name
        .split(' ')
        .filter(|w| !retrieval::is_stopword(w) && !lang.is_function_word(w))
        .map(|w| index.term(&page_form(index, w)))
        .collect::<Option<Vec<u32>>>()?;
    if ids.is_empty() {
        return None;
    }
    let field_words: Vec<&str> = name.split(' ').collect();
    let own = |text: &str, r: &Range<usize>| {
        let v = text.get(r.clone()).unwrap_or("").to_lowercase();
        // Not the field's own words back ("Chief Strategy Officer").
        v.split(' ').all(|w| field_words.contains(&w))
    };
    // Appositions first, on every sentence: "Zoghlin, Carlineo's attorney"
    // says whose attorney better than "U.S. Attorney James Kennedy Jr.".
    let mut phrases = Vec::new();
    // Only sentences holding every field word are read word by word: on a
    // 1 MiB page that is a few of thousands.
    let holding = (0..page.units.len()).filter(|&u| ids.iter().all(|&id| index.has_term(u, id)));
    for unit in holding {
        let text = page.unit_text(unit);
        for phrase in phrase_hits(index, text, &ids) {
            if let Some(r) = before_phrase(text, phrase.start).filter(|r| !own(text, r)) {
                let v = text.get(r.clone()).unwrap_or("").to_lowercase();
                if want == Want::Person && !person_like(&v) {
                    // A surname alone ("Hege is the CEO of DH"): the
                    // page's fuller mention of it, else the typed finder
                    // knows the full name.
                    return full_name(page, index, text.get(r)?);
                }
                return found_in(page, unit, r);
            }
            phrases.push((unit, phrase));
        }
    }
    let after = phrases.into_iter().find_map(|(unit, phrase)| {
        let text = page.unit_text(unit);
        after_phrase(text, phrase.end)
            .filter(|r| !own(text, r))
            .filter(|r| {
                let v = text.get(r.clone()).unwrap_or("").to_lowercase();
                want != Want::Person || person_like(&v)
            })
            .and_then(|r| found_in(page, unit, r))
    });
    after
        .or_else(|| role_apposition(page, index, &name, &ids, want, &own))
        .or_else(|| headed_name(page, index, &name, &ids, want, &own))
}

/// A person field whose qualifier stands apart from its role ("Full Fact
/// chief executive" in "Will Moy, chief executive of … Full Fact"; "DH CEO"
/// in "Hege is the CEO of DH"): the name in apposition to the role words
/// alone, in a sentence holding every field word.
fn role_apposition(
    page: &Page,
    index: &Index,
    name: &str,
    ids: &[u32],
    want: Want,
    own: &dyn Fn(&str, &Range<usize>) -> bool,
) -> Option<Found> {
    if want != Want::Person {
        return None;
    }
    let code = index.lang().code();
    let roles: Vec<u32> = name
        .split(' ')
        .filter(|w| {
            entity::is_role(w) || fields::head_want(w, code).is_some_and(|(w, _)| w == Want::Person)
        })
        .filter_map(|w| index.term(w))
        .collect();
    if roles.is_empty() || roles.len() >= ids.len() {
        return None;
    }
    let holding = (0..page.units.len()).filter(|&u| ids.iter().all(|&id| index.has_term(u, id)));
    for unit in holding {
        let text = page.unit_text(unit);
        for phrase in phrase_hits(index, text, &roles) {
            let before = before_phrase(text, phrase.start).filter(|r| !own(text, r));
            if let Some(r) = before {
                let v = text.get(r.clone()).unwrap_or("").to_lowercase();
                return if person_like(&v) {
                    found_in(page, unit, r)
                } else {
                    full_name(page, index, text.get(r)?)
                };
            }
            let after = after_phrase(text, phrase.end).filter(|r| {
                !own(text, r) && person_like(&text.get(r.clone()).unwrap_or("").to_lowercase())
            });
            if let Some(r) = after {
                return found_in(page, unit, r);
            }
        }
    }
    None
}

/// A one-word name ("Hege") as the page names the person in full
/// elsewhere ("Michelle Hege"): the first two-to-four-word name ending in
/// it.
fn full_name(page: &Page, index: &Index, surname: &str) -> Option<Found> {
    let id = index.term(&surname.to_lowercase())?;
    for unit in (0..page.units.len()).filter(|&u| index.has_term(u, id)) {
        let text = page.unit_text(unit);
        for (at, _) in text.match_indices(surname) {
            let end = at + surname.len();
            if text
                .get(end..)
                .and_then(|r| r.chars().next())
                .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let Some(r) = name_before(text, end) else {
                continue;
            };
            if person_like(&text.get(r.clone()).unwrap_or("").to_lowercase()) {
                return found_in(page, unit, r);
            }
        }
    }
    None
}

/// A name whose last word is the field's head, capitalized ("hospital" →
/// "Chaoyang Hospital", "party" → "Labour Party"), in a sentence holding
/// every field word; not the field's own words back.
fn headed_name(
    page: &Page,
    index: &Index,
    name: &str,
    ids: &[u32],
    want: Want,
    own: &dyn Fn(&str, &Range<usize>) -> bool,
) -> Option<Found> {
    if !matches!(want, Want::Any | Want::Name | Want::Place) {
        return None;
    }
    let head = name.rsplit(' ').next()?;
    let head_id = index.term(head)?;
    let holding = (0..page.units.len()).filter(|&u| ids.iter().all(|&id| index.has_term(u, id)));
    for unit in holding {
        let text = page.unit_text(unit);
        for (r, id) in index.terms_at(text) {
            let capital = text
                .get(r.clone())
                .is_some_and(|w| w.starts_with(char::is_uppercase));
            if id != Some(head_id) || !capital {
                continue;
            }
            let Some(n) = name_before(text, r.end) else {
                continue;
            };
            let two_words = text.get(n.clone()).is_some_and(|v| v.contains(' '));
            if two_words && !own(text, &n) {
                return found_in(page, unit, n);
            }
        }
    }
    None
}

/// A value range in a unit's text as a [`Found`] quoting the unit.
fn found_in(page: &Page, unit: usize, r: Range<usize>) -> Option<Found> {
    let u = page.units.get(unit)?;
    Some(Found {
        block: u.block,
        quote: u.range.clone(),
        value: u.range.start + r.start..u.range.start + r.end,
    })
}

/// Where the field's words (term `ids`) stand in `text` in order, each
/// within two words of the one before: byte ranges of the phrases.
fn phrase_hits(index: &Index, text: &str, ids: &[u32]) -> Vec<Range<usize>> {
    let terms = index.terms_at(text);
    let mut out = Vec::new();
    for start in 0..terms.len() {
        let mut k = 0;
        let mut last = start;
        let mut i = start;
        while i < terms.len() && k < ids.len() && i <= last + 2 {
            if terms.get(i).and_then(|t| t.1) == ids.get(k).copied() {
                k += 1;
                last = i;
            } else if k == 0 {
                break;
            }
            i += 1;
        }
        if let (true, Some(first), Some(end)) = (k == ids.len(), terms.get(start), terms.get(last))
        {
            out.push(first.0.start..end.0.end);
        }
    }
    out
}

/// Two to four words, none a joiner: a person's name, not an office's.
fn person_like(lower: &str) -> bool {
    let n = lower.split(' ').count();
    (2..=4).contains(&n) && !lower.split(' ').any(|w| NAME_JOINERS.contains(&w))
}

/// The name right after the field's words, or after a naming word up to two
/// words later ("they call TNG50").
fn after_phrase(text: &str, end: usize) -> Option<Range<usize>> {
    let rest = text.get(end..)?;
    // "the Attorney's Office": the field's words own what follows.
    if text.get(..end)?.ends_with(['s', 'S']) && text.get(..end)?.contains(['\'', '’']) {
        let word_start = text.get(..end)?.rfind(' ').map_or(0, |i| i + 1);
        if text.get(word_start..end)?.contains(['\'', '’']) {
            return None;
        }
    }
    let lead = rest.len() - rest.trim_start_matches([' ', ',', ':']).len();
    let at = end + lead;
    if lead > 0 && rest.get(..lead)?.contains(',') {
        return None;
    }
    if let Some(r) = name_at(text, at) {
        return Some(r);
    }
    let mut k = at;
    for _ in 0..3 {
        let w = next_word(text, k)?;
        let word = text.get(w.clone())?.to_lowercase();
        if is_naming_word(&word) {
            return name_at(text, w.end);
        }
        if word.starts_with(char::is_uppercase) || word.ends_with([',', '.']) {
            return None;
        }
        k = w.end;
    }
    None
}

/// Prepositions that open a complement of the noun before them ("vice
/// president of …", "head at …"), in the languages the question lexicon
/// covers.
const COMPLEMENT_WORDS: &[&str] = &[
    "of", "at", "for", "von", "bei", "für", "de", "du", "des", "di", "del", "della", "van", "voor",
];

/// "<Name>, the new <field>" or "<Name> as the company's first <field>".
fn before_phrase(text: &str, start: usize) -> Option<Range<usize>> {
    let head = text.get(..start)?;
    // (where the name ends, where the gap to the field's words starts)
    let punct = head.rfind([',', '(']).map(|i| (i, i + 1));
    // The nearest linking word ("as", "is", "ist") among the gap's words:
    // "Hege is the CEO of DH".
    let mut link = None;
    let mut end = head.len();
    for (n, w) in head.rsplit(' ').enumerate() {
        let w_start = end - w.len();
        if n > MAX_APPOSITION_GAP + 1 || w_start == 0 {
            break;
        }
        // After a link word a determiner comes first ("is the CEO"): "Live
        // Nation is producing" does not name a producer.
        if fields::is_link_word(&w.to_lowercase()) {
            link = Some((w_start - 1, end)).filter(|_| n > 1);
            break;
        }
        end = w_start - 1;
    }
    let (cut, gap_start) = punct.into_iter().chain(link).max_by_key(|(i, _)| *i)?;
    let gap = head.get(gap_start..)?;
    let words: Vec<&str> = gap.split_whitespace().collect();
    // The field's words are the apposition's head, not inside a phrase
    // that completes another head ("Sherwood, vice president of advanced
    // development programs" is no program).
    let plain = words.len() <= MAX_APPOSITION_GAP
        && words
            .iter()
            .all(|w| !w.starts_with(char::is_uppercase) || w.contains('’') || w.contains('\''))
        && !words
            .iter()
            .any(|w| COMPLEMENT_WORDS.contains(&w.to_lowercase().as_str()));
    if !plain {
        return None;
    }
    name_before(text, cut)
}

/// "Sentra engine horsepower" → "149 horsepower", "number of processor
/// cores" → "16,000 processor cores", "number of dates" → "30" in "the
/// 30-date run": a number whose unit is one of the field's words (its head
/// first), in the sentences that best match the field (those holding more
/// of its words first), not any number there. `passes` says which to try:
/// `true` is the head as unit, `false` any field word.
fn counted(
    page: &Page,
    index: &Index,
    field: &Field,
    want: Want,
    passes: &[bool],
) -> Option<Found> {
    if !matches!(want, Want::Any | Want::Amount) {
        return None;
    }
    let name = normalize_name(&field.key);
    let words: Vec<String> = name
        .split(' ')
        .filter(|w| !entity::FIELD_TYPE_WORDS.contains(w) && !retrieval::is_stopword(w))
        .map(str::to_string)
        .collect();
    let ids: Vec<u32> = words
        .iter()
        .filter_map(|w| index.term(&page_form(index, w)))
        .collect();
    let head = words
        .last()
        .and_then(|w| index.term(&page_form(index, w)))?;
    let query = field_query(index, &words);
    let ranked = retrieval::bm25(index, &query);
    let mut candidates: Vec<(f64, usize)> = ranked
        .iter()
        .take(PROSE_CANDIDATES)
        .map(|s| (index.coverage(&query, s.unit), s.unit))
        .filter(|(c, _)| *c >= MIN_PROSE_COVERAGE)
        .collect();
    // Stable: among equal coverage, the better ranked first.
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    for &heads_only in passes {
        // A number counting another of the field's words than its head is
        // tied only in a sentence that holds every field word: "a chain of
        // 30 newspapers" is no count for "newspapers in the merged chain".
        let whole = |c: f64| heads_only || c >= 1.0;
        for &(_, unit) in candidates.iter().filter(|(c, _)| whole(*c)) {
            let text = page.unit_text(unit);
            let terms = index.terms_at(text);
            let term_at = |start: usize| terms.iter().find(|(r, _)| r.start == start);
            let id_at = |start: usize| term_at(start).and_then(|t| t.1);
            let fits = |id: u32| {
                if heads_only {
                    id == head
                } else {
                    ids.contains(&id)
                }
            };
            let found = entity::spans(text, index.lang())
                .into_iter()
                .filter(|s| s.kind == entity::Kind::Number)
                .find_map(|s| {
                    // "30-date": the unit is joined to the number.
                    let first = text.get(s.range.clone())?.split_whitespace().next()?;
                    let joined = first
                        .find('-')
                        .filter(|_| first.starts_with(|c: char| c.is_ascii_digit()))
                        .and_then(|d| term_at(s.range.start + d + 1))
                        .filter(|(_, id)| id.is_some_and(fits));
                    // The value keeps its unit: "355 horsepower", "30-date".
                    if let Some((unit, _)) = joined {
                        return Some(s.range.start..unit.end);
                    }
                    let un = s.unit.as_ref()?;
                    id_at(un.start)
                        .is_some_and(fits)
                        .then_some(s.range.start..un.end.max(s.range.end))
                });
            if let Some(value) = found {
                return found_in(page, unit, tidy(text, value));
            }
        }
    }
    None
}

/// A value the page shows under the field's label (or beside it in a table).
fn by_label(lines: &Lines, field: &Field) -> Option<Found> {
    type Pass = fn(&Lines, &Field, usize) -> Option<Found>;
    let passes: [Pass; 3] = [labelled, label_then_value, label_space_value];
    let n = lines.page.blocks.len();
    passes
        .iter()
        .find_map(|pass| (0..n).find_map(|b| pass(lines, field, b)))
}

fn find_field(lines: &Lines, index: &Index, field: &Field, margins: &Margins) -> Option<Found> {
    let n = lines.page.blocks.len();
    let name = normalize_name(&field.key);
    let (want, _) = field_want(&name, index.lang().code());
    // A value found by its place in the text, not by a label, must be of
    // the field's kind, in the shape it asks for when its sentence has that
    // ("runs 95 minutes" over a date for "running time"); else the next
    // finder tries.
    let shape = |f: Found| preferred_shape(lines, index, want, f);
    let fits = |f: Found| {
        let f = shape(f);
        of_kind(lines.page, lines.text(f.block), &f, index, &name, want).then_some(f)
    };
    let page = lines.page;
    // A value next to its label stands anywhere but in the margins; one
    // found by its type or read from running text only in the main content
    // (a price in a shop widget beside a review is not its price).
    let unit = |f: &Found| {
        page.units
            .iter()
            .position(|u| u.block == f.block && u.range.contains(&f.value.start))
    };
    let outside_margins = |f: &Found| unit(f).is_none_or(|u| !margins.is_margin(u));
    let in_main = |f: &Found| unit(f).is_none_or(|u| margins.is_main(u));
    // In order, surest first.
    let labelled = || by_label(lines, field).map(shape);
    let unlabelled_or_running_text: [&dyn Fn() -> Option<Found>; 7] = [
        // Only a bare type name ("price", "date") takes the first value
        // of its type: "listing date" is not the publish date.
        &|| {
            if name.contains(' ') {
                return None;
            }
            if field.kind == FieldType::Price {
                return named_price(lines, index, field, margins).map(shape);
            }
            (0..n).find_map(|b| unlabelled(lines, field, b)).map(shape)
        },
        &|| result_of(page, index, field).map(shape),
        // A count of the field's own head noun ("cases" → "Three cases") is
        // surer than a name near it.
        &|| counted(page, index, field, want, &[true]).and_then(fits),
        // A price, a rating, a date or a stock phrase is no name.
        &|| {
            matches!(field.kind, FieldType::Other | FieldType::Author)
                .then(|| tied_name(page, index, field, want).and_then(fits))
                .flatten()
        },
        &|| counted(page, index, field, want, &[false]).and_then(fits),
        // A value read from running text by the field's words alone is
        // shown only when nothing else in its sentence could be it.
        &|| {
            in_prose(lines, index, field)
                .and_then(fits)
                .filter(|f| sole_value(lines, index, field, want, f))
        },
        &|| {
            asked_field(page, index, field)
                .and_then(fits)
                .filter(|f| sole_value(lines, index, field, want, f))
        },
    ];
    // Every value but a labelled one must have its field's shape.
    let shaped = |f: Found| {
        let u = unit(&f)?;
        let range = page.units.get(u)?.range.clone();
        let sentence = page.unit_text(u);
        let value =
            f.value.start.checked_sub(range.start)?..f.value.end.checked_sub(range.start)?;
        let value = shape::widened(sentence, shape::changed_to(index.lang(), sentence, value));
        let stated = statement::states(index.lang(), &name, want, sentence, &value);
        (stated
            && shape::fits(
                page,
                index.lang(),
                field.kind,
                want,
                sentence,
                value.clone(),
            ))
        .then(|| Found {
            value: range.start + value.start..range.start + value.end,
            ..f
        })
    };
    labelled().filter(outside_margins).or_else(|| {
        unlabelled_or_running_text
            .iter()
            .find_map(|find| find().filter(in_main).and_then(shaped))
    })
}

/// How far (bytes) a name read from running text for a field of no known
/// type may stand from the field's words: right beside them ("the
/// supercomputer Hazel Hen"), as any other name of the sentence could be it.
const MAX_NAME_TIE_BYTES: usize = 3;

/// Whether a value found in running text is surely the field's: a person
/// field's value is a person's name; a typed value is the one of its type
/// nearest the field's words ("revenue of $27.2 billion, against $27.53
/// billion expected" ties neither surely), or the sentence's only one for
/// a field that is a bare type ("age", "distance"); a name for a field of
/// no known type stands right beside the field's words.
fn sole_value(lines: &Lines, index: &Index, field: &Field, want: Want, f: &Found) -> bool {
    let text = lines.text(f.block);
    let Some(sentence) = text.get(f.quote.clone()) else {
        return false;
    };
    let value =
        f.value.start.saturating_sub(f.quote.start)..f.value.end.saturating_sub(f.quote.start);
    let name = normalize_name(&field.key);
    let words: Vec<String> = name
        .split(' ')
        .filter(|w| !retrieval::is_stopword(w))
        .map(str::to_string)
        .collect();
    let ids = own_ids(index, &words);
    let at: Vec<Range<usize>> = index
        .terms_at(sentence)
        .into_iter()
        .filter(|(_, id)| id.is_some_and(|id| ids.contains(&id)))
        .map(|(r, _)| r)
        .collect();
    let gap = |r: &Range<usize>| {
        at.iter()
            .filter(|w| w.end <= r.start || w.start >= r.end)
            .map(|w| {
                w.start
                    .saturating_sub(r.end)
                    .max(r.start.saturating_sub(w.end))
            })
            .min()
            .unwrap_or(usize::MAX)
    };
    let overlaps = |r: &Range<usize>| r.start < value.end && value.start < r.end;
    let spans = entity::spans(sentence, index.lang());
    let mine = gap(&value);
    let kind = match want {
        Want::Any => Want::Name,
        w => w,
    };
    // A place is a name after a preposition that opens only places ("in
    // Köln"), not any phrase after one ("in diesem Jahr").
    let placed = |r: &Range<usize>| {
        sentence
            .get(..r.start)
            .and_then(|b| b.split_whitespace().last())
            .is_some_and(|w| fields::is_place_only_preposition(&w.to_lowercase()))
    };
    let others = || {
        spans.iter().filter(|s| {
            s.answers(kind)
                && !overlaps(&s.range)
                && (kind != Want::Place || (s.kind == entity::Kind::Name && placed(&s.range)))
        })
    };
    match want {
        Want::Person => {
            spans
                .iter()
                .any(|s| overlaps(&s.range) && s.answers(Want::Person))
                && !at.is_empty()
                && others().all(|s| gap(&s.range) > mine)
        }
        Want::Any | Want::Name => {
            mine <= MAX_NAME_TIE_BYTES && others().all(|s| gap(&s.range) > mine)
        }
        // With none of the field's words beside it, a place is one the
        // page writes as a place somewhere, not any capitalized noun
        // ("regionale Praxen").
        _ if at.is_empty() => {
            others().next().is_none()
                && (want != Want::Place
                    || sentence
                        .get(value.clone())
                        .is_some_and(|v| self::placed(lines.page, v)))
        }
        _ => others().all(|s| gap(&s.range) > mine),
    }
}

/// Whether the page writes `value` as a place somewhere: right after a
/// preposition that opens only places ("in Maple Ridge").
fn placed(page: &Page, value: &str) -> bool {
    (0..page.units.len()).any(|u| {
        let text = page.unit_text(u);
        text.match_indices(value).any(|(at, _)| {
            text.get(..at)
                .and_then(|head| head.strip_suffix(' '))
                .and_then(|head| head.rsplit(' ').next())
                .is_some_and(|w| fields::is_place_only_preposition(&w.to_lowercase()))
        })
    })
}

/// Whether the whole of `value` is a date, a day or a clock time ("Monday",
/// "March 14", "6 p.m.").
fn is_dated(value: &str, index: &Index) -> bool {
    entity::spans(value, index.lang())
        .iter()
        .any(|s| s.kind == entity::Kind::Date && s.range == (0..value.len()))
}

/// Whether a value found in running text is of the kind its field (`name`,
/// typed `want`) asks for: no pronoun or function word for a name, no
/// organization ("Larkspur Books"), day or place ("in Maple Ridge") for a
/// person, no day or time for a place nor a name the sentence has speak
/// ("Reyes said"), no day or clock time for a duration, and no sum of money
/// for a field that counts a unit of measure ("total pounds seized").
fn of_kind(page: &Page, text: &str, f: &Found, index: &Index, name: &str, want: Want) -> bool {
    let Some(value) = text.get(f.value.clone()) else {
        return false;
    };
    let lower = value.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let named = matches!(want, Want::Any | Want::Person | Want::Name | Want::Place);
    if named
        && matches!(words.as_slice(), [w] if retrieval::is_stopword(w) || index.lang().is_function_word(w))
    {
        return false;
    }
    let money = value.contains(['$', '€', '£', '¥']);
    let units: Vec<&str> = name
        .split(' ')
        .filter(|w| entity::is_measure_unit(w))
        .collect();
    if want != Want::Money && money && !units.is_empty() && !units.iter().any(|u| words.contains(u))
    {
        return false;
    }
    match want {
        Want::Person => {
            !is_dated(value, index)
                && !words.iter().any(|w| entity::is_organization_word(w))
                && !placed(page, value)
        }
        Want::Place => {
            let quote = text.get(f.quote.clone()).unwrap_or("");
            let at = f.value.start.saturating_sub(f.quote.start);
            let speaks = entity::spans(quote, index.lang()).iter().any(|s| {
                s.kind == entity::Kind::Name
                    && s.person
                    && s.range.start == at
                    && entity::says(quote, s)
            });
            !is_dated(value, index) && !speaks
        }
        // A year or a span of years may still say how long ("2019–2023"),
        // a day or a clock time does not.
        Want::Duration => {
            let years = !value.contains(char::is_alphabetic)
                && value
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|g| !g.is_empty())
                    .all(|g| g.len() == 4);
            years || !is_dated(value, index)
        }
        _ => true,
    }
}

/// A field no finder filled, asked as a question: its words are the
/// question's (stemmed, derived forms and synonyms as the answer side
/// matches them), its head types the answer (an untyped head asks for a
/// name: "brand", "venue"), and the answer's own gate decides, so a field
/// the page does not hold stays empty.
fn asked_field(page: &Page, index: &Index, field: &Field) -> Option<Found> {
    let (name, want, words) = typed_words(index, field);
    let head = words.last()?.clone();
    let want = match want {
        Want::Any => Want::Name,
        w => w,
    };
    let mut query = field_query(index, &words);
    // Every field word on the page (itself, a derived form or a synonym):
    // "total pounds seized" is not asked of a page that never says pounds.
    if words
        .iter()
        .any(|w| !retrieval::is_stopword(w) && query.ids_for(w).is_empty())
    {
        return None;
    }
    query.mark_topic(index, &page.title);
    // A name must stand beside its head noun, as for "which …"; a count is
    // of the head ("number of shows").
    let required = want == Want::Name;
    let asked = answer::Asked::new(&query, want, &[head], required);
    let (unit, range) = answer::answer_span(page, index, &query, &asked, &name)?;
    let text = page.unit_text(unit);
    found_in(page, unit, with_unit(text, index, range))
}

/// A quantity's range widened to its unit or noun ("355" → "355
/// horsepower", "75" → "75-minute"): a number alone does not say what it
/// counts.
fn with_unit(text: &str, index: &Index, range: Range<usize>) -> Range<usize> {
    entity::spans(text, index.lang())
        .into_iter()
        .find(|s| s.range == range && matches!(s.kind, entity::Kind::Number))
        .and_then(|s| s.unit)
        .map_or(range.clone(), |u| range.start..u.end.max(range.end))
}

/// The value in the shape its field asks for, when its sentence has one
/// and the value found is not: a date field's calendar date ("Dec. 6")
/// over a bare weekday or year ("Friday", "2020"), a duration field's
/// number of time units ("95 minutes") over a date. The nearest such span.
fn preferred_shape(lines: &Lines, index: &Index, want: Want, found: Found) -> Found {
    use entity::{Kind, Span};
    let text = lines.text(found.block);
    let value = text.get(found.value.clone()).unwrap_or("");
    let Some(quote) = text.get(found.quote.clone()) else {
        return found;
    };
    let shaped = |s: &Span| match want {
        Want::Date => s.kind == Kind::Date && quote.get(s.range.clone()).is_some_and(is_calendar),
        Want::Duration => s.kind == Kind::Number && s.time,
        _ => false,
    };
    let spans = entity::spans(quote, index.lang());
    let at = found.value.start.saturating_sub(found.quote.start);
    let is_shaped = match want {
        Want::Date => is_calendar(value),
        Want::Duration => spans.iter().any(|s| s.range.start == at && shaped(s)),
        _ => true,
    };
    if is_shaped {
        return found;
    }
    let nearest = spans
        .into_iter()
        .filter(|s| shaped(s))
        .min_by_key(|s| s.range.start.abs_diff(at));
    match nearest {
        Some(s) => {
            // A quantity keeps its unit.
            let end = s.unit.map_or(s.range.end, |u| u.end.max(s.range.end));
            Found {
                value: found.quote.start + s.range.start..found.quote.start + end,
                ..found
            }
        }
        None => found,
    }
}

/// A day of a month ("Dec. 6", "6 March", "2024-03-05") or a month of a
/// year ("June 2019"), not a bare weekday or year.
fn is_calendar(value: &str) -> bool {
    let lower = value.to_lowercase();
    let month = lower
        .split(|c: char| !c.is_alphabetic())
        .any(|w| !w.is_empty() && questions::is_month(w));
    let groups = value
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .count();
    let numeric = groups >= 2 && !value.contains(':');
    (month && groups >= 1) || numeric
}

pub(super) fn extract(packet: &RequestPacket, cancel: &CancelToken) -> Result<Reply> {
    let title = "Extracted fields".to_string();
    let fields = requested_fields(packet);
    let mut blocks = Vec::new();
    let page = Page::from_documents(&packet.context.documents, Scope::All);
    if let Some(n) = gate_notice(
        &gate_reasons(packet),
        // A few fields fit on a short page: no "very little text" note.
        visible_bytes(&page).max(SPARSE_BYTES),
        "this extraction",
    ) {
        blocks.push(paragraph(&n));
    }
    if let Some(n) = super::truncation_note(packet, &page, "this extraction") {
        blocks.push(paragraph(&n));
    }
    if fields.is_empty() {
        blocks.push(paragraph(
            "No fields were named. Ask for the fields to extract, for example: price, SKU, availability.",
        ));
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: Some(Map::new()),
        });
    }
    if page.blocks.is_empty() {
        blocks.push(paragraph("This page has no readable text."));
    }
    let index = Index::build(&page);
    let lines = Lines {
        page: &page,
        lower: page
            .blocks
            .iter()
            .map(|b| b.text.to_ascii_lowercase())
            .collect(),
    };
    let margins = Margins::of(&page);
    let mut rows = Vec::new();
    let mut citations = Vec::new();
    let mut data = Map::new();
    let facts = structured::Facts::of(packet);
    let mut disagreements = Vec::new();
    for key in &fields {
        cancel.check()?;
        let field = Field::new(key);
        // The page's structured data is surer than a value guessed from
        // running text, not than one the page shows under the field's label.
        let fact = facts.find(&field);
        let found = match fact {
            // A line-opening byline ("By Ann Lee") is an author's label.
            Some(_) => by_label(&lines, &field).or_else(|| {
                let blocks = 0..page.blocks.len();
                (field.kind == FieldType::Author)
                    .then(|| {
                        blocks
                            .into_iter()
                            .find_map(|b| unlabelled(&lines, &field, b))
                    })
                    .flatten()
            }),
            None => find_field(&lines, &index, &field, &margins),
        };
        let value = found
            .as_ref()
            .and_then(|f| lines.text(f.block).get(f.value.clone()));
        match (found.as_ref(), value) {
            (Some(f), Some(v)) if !v.is_empty() => {
                if let Some(fact) = fact.as_ref().filter(|d| !structured::agrees(v, &d.text)) {
                    disagreements.push((field.key.clone(), fact.text.clone()));
                }
                rows.push((field.key.clone(), v.to_string()));
                data.insert(field.key.clone(), Value::String(v.to_string()));
                if let (Some(source), Some(quote)) = (
                    page.block_source(f.block),
                    lines.text(f.block).get(f.quote.clone()),
                ) {
                    citations.push(Citation {
                        doc_id: source.doc_id.clone(),
                        node_id: None,
                        handle_id: source.handle_id.clone(),
                        quote: quote.to_string(),
                        verified: None,
                    });
                }
            }
            _ => match fact {
                Some(d) => {
                    rows.push((field.key.clone(), d.text.clone()));
                    data.insert(field.key.clone(), Value::String(d.text));
                    citations.push(Citation {
                        doc_id: d.doc_id,
                        node_id: None,
                        handle_id: None,
                        quote: d.quote,
                        verified: None,
                    });
                }
                None => {
                    rows.push((field.key.clone(), "not on the page".to_string()));
                    data.insert(field.key.clone(), Value::Null);
                }
            },
        }
    }
    blocks.push(table(["Field", "Value"], &rows));
    blocks.extend(structured::disagreement_note(&disagreements).map(|n| paragraph(&n)));
    Ok(Reply {
        title,
        blocks,
        citations,
        data: Some(data),
    })
}

/// A word (lower case) that introduces a name in any language.
fn is_naming_word(word: &str) -> bool {
    questions::all()
        .iter()
        .any(|l| l.naming_words.iter().any(|w| w == word))
}

/// A field head word (lower case) of any language that asks for a match result.
fn is_result_word(word: &str) -> bool {
    questions::all()
        .iter()
        .any(|l| l.result_words.iter().any(|w| w == word))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use serde_json::{json, Value};

    #[test]
    fn naming_and_result_words_are_read_in_any_language() {
        use super::{is_naming_word, is_result_word};
        assert!(is_naming_word("genannt") && is_result_word("endstand") && !is_result_word("time"));
    }

    fn extract_data(text: &str, fields: Value) -> (Value, Vec<String>) {
        let v = run(&packet(
            "web.extract",
            json!({"fields": fields}),
            "extract",
            summary("Shop", text),
            &[],
        ));
        (v["assistant"]["data"].clone(), quotes(&v))
    }

    #[test]
    fn extract_finds_fields_in_several_layouts() {
        let fields = json!(["price", "sku", "availability", "color"]);
        let (d, q) = extract_data("H1: Trail Jacket\nPrice: $19.99\nSKU — AB-123\nAvailability: In stock.\nShips in 2 days.", fields.clone());
        assert_eq!(
            d,
            json!({"price": "$19.99", "sku": "AB-123", "availability": "In stock", "color": null})
        );
        assert_eq!(
            q,
            vec!["Price: $19.99", "SKU — AB-123", "Availability: In stock"]
        );

        let (d, _) = extract_data(
            "| Price | $24.00 |\n| SKU | ZX-9 |\n| Availability | Out of stock |",
            fields.clone(),
        );
        assert_eq!(
            d,
            json!({"price": "$24.00", "sku": "ZX-9", "availability": "Out of stock", "color": null})
        );

        let (d, _) = extract_data(
            "Price | SKU | Availability | Color\n€ 12,50 | 4411-B | Pre-order | Red",
            fields.clone(),
        );
        assert_eq!(
            d,
            json!({"price": "€ 12,50", "sku": "4411-B", "availability": "Pre-order", "color": "Red"})
        );

        let (d, q) = extract_data("Term: Model number\nDefinition: QX-2000\nTerm: Colour\nDefinition: Blue\nPrice\n19.99 USD\nAvailability In stock", fields.clone());
        assert_eq!(
            d,
            json!({"price": "19.99 USD", "sku": "QX-2000", "availability": "In stock", "color": null})
        );
        assert_eq!(q, vec!["19.99 USD", "QX-2000", "Availability In stock"]);

        let (d, _) = extract_data("Great jacket for hiking. Now only £49 while it is in stock. Item #: 77-A. Color: Forest green", fields);
        assert_eq!(
            d,
            json!({"price": "£49", "sku": "77-A", "availability": "in stock", "color": "Forest green"})
        );
    }

    #[test]
    fn extract_reads_typed_fields_and_accepts_field_shapes() {
        let page = "By Jane Doe\nPublished March 5, 2024\nRated 4.5 out of 5 stars by readers.\nPrice increases are coming.";
        let (d, _) = extract_data(page, json!("author, date and rating; price"));
        assert_eq!(
            d,
            json!({"author": "Jane Doe", "date": "March 5, 2024", "rating": "4.5 out of 5 stars", "price": null})
        );
        let (d, _) = extract_data(
            "Updated: 2024-01-02\nWeight: 1.2 kg",
            json!({"date": "string", "weight": "string"}),
        );
        assert_eq!(d, json!({"date": "2024-01-02", "weight": "1.2 kg"}));

        // No fields in args: taken from the user's words.
        let p = packet(
            "web.extract",
            json!({}),
            "pull out the SKU and price please",
            summary("S", "Price: $5\nSKU: K-1"),
            &[],
        );
        let v = run(&p);
        assert_eq!(v["assistant"]["data"], json!({"sku": "K-1", "price": "$5"}));
        let p = packet(
            "web.extract",
            json!({}),
            "do it",
            summary("S", "Price: $5"),
            &[],
        );
        let v = run(&p);
        assert_eq!(v["assistant"]["data"], json!({}));
        assert!(render_text(&v).contains("No fields were named"));
    }

    #[test]
    fn untyped_fields_take_the_name_tied_to_their_words() {
        let page = "The city council hired the design studio Pelham & Rowe to plan the square. \
            Residents will vote on a park plan called Green Loop next spring. \
            The museum published its findings in the journal Annals of Urban History. \
            Mara Lindqvist, the council's new treasurer, presented the budget. \
            The council also named Tomas Berg as its first climate officer.";
        let (d, q) = extract_data(
            page,
            json!([
                "design studio",
                "park plan",
                "journal",
                "treasurer",
                "climate officer",
                "mayor",
                "bridge architect"
            ]),
        );
        assert_eq!(
            d,
            json!({
                "design studio": "Pelham & Rowe",
                "park plan": "Green Loop",
                "journal": "Annals of Urban History",
                "treasurer": "Mara Lindqvist",
                "climate officer": "Tomas Berg",
                "mayor": null,
                "bridge architect": null,
            })
        );
        // Each value quotes the sentence that ties it to the field.
        assert!(q[1].contains("park plan called Green Loop"), "{q:?}");
    }

    #[test]
    fn counts_take_the_number_of_the_fields_own_unit() {
        let page = "The plant opened in 1998 and employs 420 workers and 35 engineers. \
            It runs 12 furnaces around the clock, at 1,400 degrees.";
        let (d, _) = extract_data(
            page,
            json!([
                "number of furnaces",
                "number of engineers",
                "number of trucks"
            ]),
        );
        assert_eq!(
            d,
            json!({"number of furnaces": "12 furnaces", "number of engineers": "35 engineers", "number of trucks": null})
        );
    }

    #[test]
    fn other_language_field_names_are_typed_by_the_lexicon() {
        let page = "Die Stadt Freiburg eröffnete das neue Hallenbad im Jahr 2019. \
            Das Bad kostete nach Angaben der Stadt zwölf Millionen Euro. \
            Im Jahr 2021 folgte die Sanierung der alten Eishalle. \
            Die Eishalle liegt im Stadtteil Haslach und ist bei den Familien sehr beliebt.";
        let (d, _) = extract_data(
            page,
            json!([
                "Jahr der Sanierung",
                "Stadtteil",
                "Preis der Eintrittskarte"
            ]),
        );
        assert_eq!(
            d,
            json!({"Jahr der Sanierung": "2021", "Stadtteil": "Haslach", "Preis der Eintrittskarte": null})
        );
    }

    #[test]
    fn results_and_monthly_prices_are_tied_to_their_words() {
        let page = "Kickoff was at 7:30 p.m. on 2019-11-02. \
            The Rams beat the Owls 31-24 in front of a home crowd. \
            The Owls had led 17-10 at halftime. \
            Fans who join the club pay $25 per month.";
        let (d, _) = extract_data(
            page,
            json!([
                "final score",
                "halftime score",
                "monthly price",
                "parking price"
            ]),
        );
        assert_eq!(
            d,
            json!({"final score": "31-24", "halftime score": "17-10", "monthly price": "$25", "parking price": null})
        );
        // No result on the page: a result field stays empty.
        let (d, _) = extract_data(
            "The match starts at 19:30 on Saturday.",
            json!(["final score"]),
        );
        assert_eq!(d, json!({"final score": null}));
    }

    #[test]
    fn field_heads_and_derived_words_find_the_typed_value() {
        let page = "Engineers hope to reduce the crew's metabolic rate by 75% in flight. \
            The pods would cost $2 million each, a third of the old design. \
            The cruise would end with a 21 day recuperation period—although the crew would rest. \
            The band's 30-date run, its first in years, opens next June.";
        let (d, q) = extract_data(
            page,
            json!([
                "metabolic rate reduction",
                "recuperation period",
                "number of dates",
                "crew discount",
                "number of buses"
            ]),
        );
        assert_eq!(
            d,
            json!({
                "metabolic rate reduction": "75%",
                "recuperation period": "21 day",
                "number of dates": "30-date",
                "crew discount": null,
                "number of buses": null,
            })
        );
        assert!(q[0].contains("reduce the crew's metabolic rate"), "{q:?}");
    }

    #[test]
    fn roles_apart_from_their_qualifier_and_headed_names() {
        let page = "“It was a stunt,” Will Moy, chief executive of the charity Full Fact, told reporters. \
            Hege is the CEO of DH, a branding firm in Spokane. \
            Michelle Hege said the campaign was bold. \
            Three cases were confirmed on Tuesday. \
            The couple was treated at Chaoyang Hospital in Beijing.";
        let (d, _) = extract_data(
            page,
            json!([
                "Full Fact chief executive",
                "DH CEO",
                "hospital",
                "cases",
                "DH founder"
            ]),
        );
        assert_eq!(
            d,
            json!({
                "Full Fact chief executive": "Will Moy",
                "DH CEO": "Michelle Hege",
                "hospital": "Chaoyang Hospital",
                "cases": "Three cases",
                "DH founder": null,
            })
        );
    }

    #[test]
    fn values_from_running_text_are_shown_only_when_tied_to_the_field() {
        let page = "Black Friday deals on the Motorola Razr start on Friday. \
            Revenue rose to $27.2 billion in the quarter.";
        let (d, _) = extract_data(page, json!(["author", "revenue"]));
        // No byline and no word of authorship: no author (a capitalized run
        // is no person); the sum beside "revenue" is its value.
        assert_eq!(d["author"], Value::Null, "{d}");
        assert_eq!(d["revenue"], "$27.2 billion", "{d}");
    }

    #[test]
    fn other_language_field_heads_type_the_value() {
        let page = "Bis Freitag öffnet die Messe ihre Tore in Köln – und wir sind dabei. \
            Frühbucher erhalten in diesem Jahr einen Rabatt von 20% auf alle Tickets. \
            Die Veranstalter rechnen mit mehr als 40.000 Besuchern.";
        let (d, _) = extract_data(page, json!(["Rabatt", "Eintrittspreis", "Ort"]));
        assert_eq!(
            d,
            json!({"Rabatt": "20%", "Eintrittspreis": null, "Ort": "Köln"})
        );
        // English does not write compounds as one word: "capacity" is not
        // a "city".
        let (d, _) = extract_data(
            "The lander has a large payload capacity. It launches from Houston.",
            json!(["capacity"]),
        );
        assert_eq!(d, json!({"capacity": null}));
    }

    #[test]
    fn quantities_beside_a_field_word_and_results_away_from_final() {
        let page = "The service is offered at a $9.99 monthly rate for its Pro tier, \
            with a $129.99 bundle for new players. \
            Once you divide the total by 52 weeks in a year, the value is about $44.2 million per week. \
            Voters first saw the 2014 campaign on television. \
            Nelson scored in overtime to lift the Islanders over the Penguins 5-4 on Tuesday. \
            The final horn sounded at 4:29 of overtime.";
        let (d, q) = extract_data(
            page,
            json!([
                "monthly price",
                "weekly value",
                "final score",
                "campaign end date",
                "parking fee"
            ]),
        );
        assert_eq!(
            d,
            json!({
                "monthly price": "$9.99",
                "weekly value": "about $44.2 million",
                "final score": "5-4",
                "campaign end date": null,
                "parking fee": null,
            })
        );
        assert!(q[0].contains("$9.99 monthly rate"), "{q:?}");
    }

    #[test]
    fn fields_no_finder_fills_are_asked_as_questions() {
        // The name is in the sentence after the field's word: the answer
        // side reads a typed span there; a field word with no value beside
        // it and a field the page never names stay empty.
        let page = "The rowing club agreed on a new annual membership scheme this spring. \
            The fee, settled after a long debate among the rowers, comes to $40. \
            The club sponsor list grows every year. \
            Organizers expect large crowds every evening.";
        let (d, _) = extract_data(page, json!(["annual membership fee", "sponsor", "brand"]));
        assert_eq!(
            d,
            json!({"annual membership fee": "$40", "sponsor": null, "brand": null})
        );
    }

    #[test]
    fn quantities_keep_their_unit_and_dates_prefer_the_calendar_day() {
        let page = "The roadster's engine makes 412 horsepower in its sport trim. \
            Tickets for the roadster launch go on sale Friday, March 14 at noon.";
        let (d, _) = extract_data(
            page,
            json!(["engine horsepower", "ticket sale date", "warranty length"]),
        );
        assert_eq!(
            d,
            json!({
                "engine horsepower": "412 horsepower",
                "ticket sale date": "Friday, March 14",
                "warranty length": null,
            })
        );
    }

    #[test]
    fn count_heads_first_and_derived_field_words_in_other_languages() {
        let page = "A volta ciclística de Portugal terá 11 etapas este ano, disse a organização. \
            O pelotão parte de Viseu no domingo e o campeão, Rui Prates, volta a correr.";
        let (d, _) = extract_data(
            page,
            json!(["número de etapas", "campeão", "número de equipas"]),
        );
        assert_eq!(
            d,
            json!({"número de etapas": "11 etapas", "campeão": "Rui Prates", "número de equipas": null})
        );
        let (d, _) = extract_data(
            "The short film, directed by Ana Lopes, premieres at the harbour cinema.",
            json!(["director", "producer"]),
        );
        assert_eq!(d, json!({"director": "Ana Lopes", "producer": null}));
    }

    #[test]
    fn values_of_the_wrong_kind_are_not_taken() {
        // A person is no publisher, a place no weekday, a name no pronoun.
        let (d, _) = extract_data(
            "Larkspur Books is the director of the reading festival. \
            I liked the pacing of the novel, though the ending drags.",
            json!(["director", "reviewer"]),
        );
        assert_eq!(d, json!({"director": null, "reviewer": null}));
        // Nor a place the page has people live in.
        let (d, _) = extract_data(
            "Most of the dancers live in Maple Ridge. \
            Maple Ridge is the director of the region's arts push.",
            json!(["director"]),
        );
        assert_eq!(d, json!({"director": null}));
        let (d, _) = extract_data("The city council will meet on Monday.", json!(["venue"]));
        assert_eq!(d, json!({"venue": null}));
        // Nor someone who speaks.
        let (d, _) = extract_data(
            "The venue Ana Reyes said was full by noon.",
            json!(["venue"]),
        );
        assert_eq!(d, json!({"venue": null}));
        // "running time" is how long; "pounds" seized are a weight.
        let (d, _) = extract_data(
            "The film premieres on Friday, March 14, and runs 95 minutes. \
            Agents seized 2,000 pounds of cocaine worth about $44 million in the raid.",
            json!(["running time", "total pounds seized"]),
        );
        assert_eq!(
            d,
            json!({"running time": "95 minutes", "total pounds seized": "2,000 pounds"})
        );
    }

    #[test]
    fn a_value_from_running_text_outside_the_main_content_is_not_shown() {
        let review =
            "The new laptop is light and quiet, and its screen is bright enough outdoors.\n\
            Its battery lasted eleven hours in our video test, longer than last year's model.\n\
            The keyboard is shallow but accurate, and the trackpad is large.";
        // The page's own text holds a shop widget beside the review.
        let text = format!(
            "{review}\nDeals this week\nThe iMac is now priced at $1,349.00 with free delivery."
        );
        let ask = |s: Value| {
            run(&packet(
                "web.extract",
                json!({"fields": ["price"]}),
                "extract",
                s,
                &[],
            ))["assistant"]["data"]
                .clone()
        };
        let mut s = summary("Laptop review", &text);
        s["primary"] = json!({"text": review, "handle_id": "laika-3"});
        let data = ask(s);
        assert_eq!(data["price"], Value::Null, "{data}");
        // Without a marked main content the whole page is read.
        let data = ask(summary("Laptop review", &text));
        assert_eq!(data["price"], json!("$1,349.00"), "{data}");
    }

    #[test]
    fn a_price_is_the_one_beside_the_product_or_a_price_word() {
        let text = "Orbit Kettle review\n\
            We boiled water in it every morning for a month and it never leaked.\n\
            Our old $25 thermos now feels slow beside it.\n\
            The Orbit Kettle sells for $89 at most shops.";
        let (d, _) = extract_data(text, json!(["price"]));
        assert_eq!(d["price"], json!("$89"), "{d}");
        // Two different prices, neither beside the product nor a price
        // word: the page does not say which is its price.
        let text = "Orbit Kettle review\n\
            We boiled water in it every morning for a month and it never leaked.\n\
            Our old $25 thermos now feels slow beside it, and a $12 filter helps.";
        let (d, _) = extract_data(text, json!(["price"]));
        assert_eq!(d["price"], Value::Null, "{d}");
        // The main content's only price is its price.
        let text = "Orbit Kettle review\n\
            We boiled water in it every morning for a month and it never leaked.\n\
            At $89 it is a fair buy.";
        let (d, _) = extract_data(text, json!(["price"]));
        assert_eq!(d["price"], json!("$89"), "{d}");
    }

    #[test]
    fn running_text_that_is_not_a_name_is_not_shown_as_one() {
        // A dateline, an opening adverb and a unit read beside a field's
        // words: none is the value.
        let text = "Water bills\n\
            LISBON — The city utility raised water rates again this year.\n\
            Meanwhile, the utility said its reservoir stood at 40 percent.\n\
            Its new processor plant cools water to 12 degrees Celsius.";
        let (d, _) = extract_data(text, json!(["utility", "country", "processor"]));
        assert_eq!(d["utility"], Value::Null, "{d}");
        assert_eq!(d["country"], Value::Null, "{d}");
        assert_eq!(d["processor"], Value::Null, "{d}");
    }

    #[test]
    fn values_the_sentence_does_not_state_as_the_fields_are_not_shown() {
        // An expectation, one of two listed names, a total beside a rate,
        // and a name whose role the field's word only completes.
        let text = "Harbour ferries\n\
            Brokers had been expecting revenue of $3.4 million for the harbour ferries.\n\
            The late tries came from Mirela Costa and Paul Ortega in the rain.\n\
            The ferry line took in $3.1 million in June, or $14.20 per carried passenger.\n\
            Dana Whit, head of regional transport programs at the port, spoke on Monday.";
        let (d, _) = extract_data(
            text,
            json!(["revenue", "try scorer", "revenue per passenger", "program"]),
        );
        assert_eq!(d["revenue"], Value::Null, "{d}");
        assert_eq!(d["try scorer"], Value::Null, "{d}");
        assert_eq!(d["revenue per passenger"], json!("$14.20"), "{d}");
        assert_eq!(d["program"], Value::Null, "{d}");
    }

    #[test]
    fn a_capitalized_noun_is_no_place_the_page_never_writes_as_one() {
        // German capitalizes every noun: "Bäckereien" is no region, and
        // the page names no place after "in".
        for line in [
            "Die Genossenschaft beliefert seit Jahren regionale Bäckereien mit Mehl.",
            "Die Genossenschaft beliefert regionale Bäckereien und Hotels mit Mehl.",
        ] {
            let text = format!(
                "Brot vom Land\n{line}\nDer Vorstand will im nächsten Jahr mehr Getreide kaufen."
            );
            let (d, _) = extract_data(&text, json!(["Region"]));
            assert_eq!(d["Region"], Value::Null, "{d}");
        }
    }

    #[test]
    fn a_count_of_a_word_that_is_not_the_fields_head_needs_every_field_word() {
        let text = "Bakery deal\n\
            Hofmann, a chain of 14 bakeries in the north, is buying its rival.\n\
            The merged company will be run from Kassel.";
        let (d, _) = extract_data(text, json!(["bakeries in the merged chain"]));
        assert_eq!(d["bakeries in the merged chain"], Value::Null, "{d}");
        let text = "Bakery deal\n\
            The merged chain will run 31 bakeries across the north.\n\
            The merged company will be run from Kassel.";
        let (d, _) = extract_data(text, json!(["bakeries in the merged chain"]));
        assert_eq!(
            d["bakeries in the merged chain"],
            json!("31 bakeries"),
            "{d}"
        );
    }

    #[test]
    fn extract_renders_a_table_with_not_found_rows() {
        let v = run(&packet(
            "web.extract",
            json!({"fields": ["price", "warranty"]}),
            "x",
            summary("S", "Price: $5"),
            &[],
        ));
        let table = &v["assistant"]["render"]["children"][0];
        assert_eq!(table["type"], "table");
        let rows = table["rows"].as_array().unwrap();
        let cell = |r: usize, c: usize| {
            rows[r]["cells"][c]["children"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(rows[0]["cells"][0]["header"], true);
        assert_eq!((cell(0, 0), cell(0, 1)), ("Field".into(), "Value".into()));
        assert_eq!((cell(1, 0), cell(1, 1)), ("price".into(), "$5".into()));
        assert_eq!(
            (cell(2, 0), cell(2, 1)),
            ("warranty".into(), "not on the page".into())
        );
        assert_eq!(v["assistant"]["data"]["warranty"], Value::Null);
    }
}

//! Field parsers for `web.extract`: the labels a page prints before each
//! field type's value (the types and the names a user asks for them by are
//! `laika_core::decoding::fields`), and finding and checking a typed value
//! (price, SKU, availability, author, date, rating) in a line of page text.
//! Ranges are byte ranges into it.

use laika_core::decoding::fields::{normalize_name, FieldType, FIELD_NAMES};
use laika_core::retrieval;
use laika_core::retrieval::questions::{self, Want, MONTHS};
use laika_core::text::floor_char_boundary;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;

/// Longest value read after a label.
pub(super) const MAX_VALUE_BYTES: usize = 200;

/// The labels a page may print before a value of `kind`.
fn labels_of(kind: FieldType) -> &'static [&'static str] {
    match kind {
        FieldType::Price => &["price", "cost", "amount"],
        FieldType::Sku => &[
            "sku",
            "item number",
            "item no",
            "item #",
            "model number",
            "model no",
            "model",
            "part number",
            "part no",
            "product code",
            "product id",
            "mpn",
            "upc",
            "asin",
            "style number",
        ],
        FieldType::Availability => &["availability", "stock status", "in stock?", "stock"],
        FieldType::Author => &["author", "written by", "byline", "posted by", "by"],
        FieldType::Date => &[
            "publication date",
            "date published",
            "published on",
            "published",
            "last updated",
            "updated",
            "posted on",
            "posted",
            "release date",
            "date",
        ],
        FieldType::Rating => &[
            "average rating",
            "customer rating",
            "rating",
            "rated",
            "stars",
            "score",
        ],
        FieldType::Other => &[],
    }
}

pub(super) const AVAILABILITY_PHRASES: &[&str] = &[
    "currently unavailable",
    "temporarily out of stock",
    "out of stock",
    "in stock",
    "in-stock",
    "sold out",
    "pre-order",
    "preorder",
    "pre order",
    "backorder",
    "back-order",
    "back order",
    "available now",
    "limited stock",
    "discontinued",
    "unavailable",
];

const CURRENCY_SYMBOLS: &[char] = &['$', '€', '£', '¥', '₹', '₩', '₽', '₺', '₪', '₫', '฿'];
const CURRENCY_CODES: &[&str] = &[
    "USD", "EUR", "GBP", "CAD", "AUD", "JPY", "CHF", "CNY", "INR", "SEK", "NOK", "DKK", "NZD",
    "MXN", "BRL", "PLN",
];

/// A requested field: its key as given, its type, and the labels to look for
/// (longest first, so "model number" wins over "model").
pub(super) struct Field {
    pub(super) key: String,
    pub(super) kind: FieldType,
    pub(super) labels: Vec<String>,
}

impl Field {
    pub(super) fn new(key: &str) -> Field {
        let norm = normalize_name(key);
        let words: Vec<&str> = norm.split(' ').collect();
        let kind = FIELD_NAMES
            .iter()
            .find(|(_, names)| names.contains(&norm.as_str()))
            .or_else(|| {
                FIELD_NAMES
                    .iter()
                    .find(|(_, names)| names.first().is_some_and(|n| words.contains(n)))
            })
            .map_or(FieldType::Other, |(k, _)| *k);
        let mut labels: Vec<String> = labels_of(kind).iter().map(|l| l.to_string()).collect();
        if !labels.contains(&norm) && !norm.is_empty() {
            labels.push(norm);
        }
        labels.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        Field {
            key: key.to_string(),
            kind,
            labels,
        }
    }
}

fn char_before(s: &str, i: usize) -> Option<char> {
    s.get(..i).and_then(|p| p.chars().next_back())
}

pub(super) fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|p| p.chars().next())
}

fn is_word_edge(c: Option<char>) -> bool {
    !c.is_some_and(char::is_alphanumeric)
}

/// Every occurrence of `needle` (already ASCII lower case) in `lower` that
/// stands as a whole word. `lower` is the ASCII-lowercased block text, so
/// offsets are the same as in the original.
pub(super) fn word_hits<'a>(lower: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    lower
        .match_indices(needle)
        .map(|(i, _)| i)
        .filter(move |&i| {
            let first_is_word = needle.starts_with(char::is_alphanumeric);
            let last_is_word = needle.ends_with(char::is_alphanumeric);
            (!first_is_word || is_word_edge(char_before(lower, i)))
                && (!last_is_word || is_word_edge(char_at(lower, i + needle.len())))
        })
}

pub(super) fn skip_spaces(s: &str, mut i: usize) -> usize {
    while let Some(c) = char_at(s, i) {
        if c == ' ' || c == '\t' || c == '\u{a0}' {
            i += c.len_utf8();
        } else {
            break;
        }
    }
    i
}

/// Where a label's value ends: at a cell or list separator, at the next
/// "Label:" pair, at a sentence end, or after [`MAX_VALUE_BYTES`].
pub(super) fn value_end(s: &str, start: usize) -> usize {
    let rest = s.get(start..).unwrap_or("");
    let mut end = rest.len();
    for stop in ["|", ";", "\t", " · ", " • ", "  ", ". "] {
        if let Some(i) = rest.find(stop) {
            end = end.min(i);
        }
    }
    // "Price: $5 SKU: A1": cut before the word that opens the next pair.
    if let Some(colon) = rest.get(..end).and_then(|r| r.find(": ")) {
        if let Some(space) = rest.get(..colon).and_then(|r| r.rfind(' ')) {
            end = end.min(space);
        }
    }
    start + floor_char_boundary(rest, end.min(MAX_VALUE_BYTES))
}

/// `range` without surrounding whitespace and trailing `.,;:` punctuation.
pub(super) fn tidy(s: &str, range: Range<usize>) -> Range<usize> {
    let Some(v) = s.get(range.clone()) else {
        return range.start..range.start;
    };
    let start = range.start + (v.len() - v.trim_start().len());
    let trimmed = v
        .trim()
        .trim_end_matches([',', ';', ':', '.', '。'])
        .trim_end();
    start..start + trimmed.len()
}

fn number_end(s: &str, i: usize) -> Option<usize> {
    let mut end = i;
    let mut digits = false;
    while let Some(c) = char_at(s, end) {
        if c.is_ascii_digit() {
            digits = true;
            end += 1;
        } else if matches!(c, '.' | ',')
            && char_at(s, end + 1).is_some_and(|n| n.is_ascii_digit())
            && digits
        {
            end += 1;
        } else {
            break;
        }
    }
    digits.then_some(end)
}

fn code_at(s: &str, i: usize) -> Option<usize> {
    let word = s.get(i..i + 3)?;
    (CURRENCY_CODES.contains(&word)
        && is_word_edge(char_before(s, i))
        && is_word_edge(char_at(s, i + 3)))
    .then_some(i + 3)
}

fn number_starts(s: &str) -> impl Iterator<Item = usize> + '_ {
    s.char_indices().filter_map(move |(i, c)| {
        let prev = char_before(s, i);
        (c.is_ascii_digit() && !prev.is_some_and(|p| p.is_ascii_digit() || p == '.' || p == ','))
            .then_some(i)
    })
}

/// The first money amount in `s`: "$19.99", "US$5", "19,99 €", "EUR 10".
pub(super) fn find_price(s: &str) -> Option<Range<usize>> {
    for (i, c) in s.char_indices() {
        let after = if CURRENCY_SYMBOLS.contains(&c) {
            Some(i + c.len_utf8())
        } else {
            code_at(s, i)
        };
        if let Some(a) = after {
            if let Some(end) = number_end(s, skip_spaces(s, a)) {
                return Some(i..end);
            }
        }
        if c.is_ascii_digit()
            && !char_before(s, i).is_some_and(|p| p.is_ascii_digit() || p == '.' || p == ',')
        {
            if let Some(end) = number_end(s, i) {
                let k = skip_spaces(s, end);
                if let Some(sym) = char_at(s, k).filter(|c| CURRENCY_SYMBOLS.contains(c)) {
                    return Some(i..k + sym.len_utf8());
                }
                if let Some(e) = code_at(s, k) {
                    return Some(i..e);
                }
            }
        }
    }
    None
}

/// "4.5 out of 5 stars", "4/5", "4 stars", "★★★★☆".
pub(super) fn find_rating(s: &str) -> Option<Range<usize>> {
    let lower = s.to_ascii_lowercase();
    for i in number_starts(s) {
        let Some(end) = number_end(s, i) else {
            continue;
        };
        let rest = lower.get(end..).unwrap_or("");
        if rest.starts_with(" out of ") {
            if let Some(e) = number_end(s, end + 8) {
                let tail = lower.get(e..).unwrap_or("");
                let stars = [" stars", " star"]
                    .iter()
                    .find(|t| tail.starts_with(*t))
                    .map_or(0, |t| t.len());
                return Some(i..e + stars);
            }
        }
        if let Some(slash) = rest.strip_prefix('/') {
            if slash.starts_with(|c: char| c.is_ascii_digit()) {
                return number_end(s, end + 1).map(|e| i..e);
            }
        }
        for t in [" stars", " star", "-star"] {
            if rest.starts_with(t) {
                return Some(i..end + t.len());
            }
        }
    }
    let first = s.find(['★', '☆'])?;
    let run: usize = s
        .get(first..)?
        .chars()
        .take_while(|c| matches!(c, '★' | '☆'))
        .map(char::len_utf8)
        .sum();
    (run >= 9).then_some(first..first + run)
}

/// "2024-03-05", "March 5, 2024", "5 March 2024", "Mar. 5 2024".
pub(super) fn find_date(s: &str) -> Option<Range<usize>> {
    let b = s.as_bytes();
    let digits =
        |from: usize, n: usize| (from..from + n).all(|k| b.get(k).is_some_and(u8::is_ascii_digit));
    let lower = s.to_ascii_lowercase();
    for i in number_starts(s) {
        if digits(i, 4)
            && b.get(i + 4) == Some(&b'-')
            && digits(i + 5, 2)
            && b.get(i + 7) == Some(&b'-')
            && digits(i + 8, 2)
        {
            return Some(i..i + 10);
        }
        // Day first: "5 March 2024".
        let Some(day_end) = number_end(s, i).filter(|e| e - i <= 2) else {
            continue;
        };
        let m = skip_spaces(s, day_end);
        if let Some(month_end) = month_at(&lower, m) {
            let y = skip_spaces(s, month_end);
            if digits(y, 4) && y > month_end {
                return Some(i..y + 4);
            }
        }
    }
    for month in MONTHS {
        for m in word_hits(&lower, month) {
            let mut k = m + month.len();
            if b.get(k) == Some(&b'.') {
                k += 1;
            }
            let d = skip_spaces(s, k);
            let Some(day_end) = number_end(s, d).filter(|&e| d > k && e - d <= 2) else {
                continue;
            };
            let mut e = day_end;
            if b.get(e) == Some(&b',') {
                e += 1;
            }
            let y = skip_spaces(s, e);
            if digits(y, 4) && y > day_end {
                return Some(m..y + 4);
            }
        }
    }
    None
}

fn month_at(lower: &str, i: usize) -> Option<usize> {
    MONTHS
        .iter()
        .filter(|m| {
            lower.get(i..).is_some_and(|r| r.starts_with(*m))
                && is_word_edge(char_at(lower, i + m.len()))
        })
        .map(|m| i + m.len())
        .max()
}

pub(super) fn find_phrase(lower: &str, phrases: &[&str]) -> Option<Range<usize>> {
    phrases
        .iter()
        .find_map(|p| word_hits(lower, p).next().map(|i| i..i + p.len()))
}

/// Checks and narrows a candidate value for a field type. `strict` is for
/// label-without-separator matches, which need stronger evidence.
pub(super) fn validate(
    kind: FieldType,
    s: &str,
    lower: &str,
    range: Range<usize>,
    strict: bool,
) -> Option<Range<usize>> {
    let range = tidy(s, range);
    let v = s.get(range.clone())?;
    if v.is_empty() {
        return None;
    }
    let sub = |r: Range<usize>| range.start + r.start..range.start + r.end;
    let has_digit = v.chars().any(|c| c.is_ascii_digit());
    match kind {
        FieldType::Price => find_price(v)
            .map(sub)
            .or_else(|| (!strict && has_digit && v.len() <= 20).then_some(range.clone()))
            .or_else(|| (v.eq_ignore_ascii_case("free")).then_some(range.clone())),
        FieldType::Sku => {
            if v.len() <= 40 && has_digit && v.split_whitespace().count() <= 3 {
                return Some(range);
            }
            let mut at = 0;
            for word in v.split_whitespace() {
                let start = v.get(at..)?.find(word)? + at;
                at = start + word.len();
                if word.chars().any(|c| c.is_ascii_digit()) {
                    return Some(tidy(s, sub(start..at)));
                }
            }
            let plain = v.len() <= 30
                && !v.contains(' ')
                && v.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
            (plain && !strict).then_some(range)
        }
        FieldType::Availability => {
            let vl = lower.get(range.clone())?;
            match find_phrase(vl, AVAILABILITY_PHRASES) {
                Some(_) if v.len() <= 60 => Some(range),
                Some(p) => Some(sub(p)),
                None => (!strict && v.len() <= 40 && v.chars().any(char::is_alphabetic))
                    .then_some(range),
            }
        }
        FieldType::Author => {
            let words = v.split_whitespace().count();
            let capital = v.chars().next().is_some_and(char::is_uppercase);
            (v.len() <= 80 && capital && (!strict || words <= 4)).then_some(range)
        }
        FieldType::Date => find_date(v)
            .map(sub)
            .or_else(|| (has_digit && v.len() <= 60 && !strict).then_some(range.clone())),
        FieldType::Rating => find_rating(v)
            .map(sub)
            .or_else(|| (has_digit && v.len() <= 30 && !strict).then_some(range.clone())),
        FieldType::Other => {
            let first = v.split_whitespace().next().unwrap_or("").to_lowercase();
            (!strict || (!retrieval::is_stopword(&first) && v.len() <= 60)).then_some(range)
        }
    }
}

/// Extraction's own per-language words in `questions.json` (`field_heads`,
/// `derivation_suffixes`); the question words there are read by
/// `retrieval::questions`.
#[derive(Deserialize, Default)]
struct RawFieldWords {
    #[serde(default)]
    field_heads: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    derivation_suffixes: Vec<String>,
    #[serde(default)]
    link_words: Vec<String>,
    #[serde(default)]
    organization_words: Vec<String>,
    #[serde(default)]
    place_only_prepositions: Vec<String>,
    #[serde(default)]
    span_heads: Vec<String>,
    #[serde(default)]
    span_modifiers: Vec<String>,
    #[serde(default)]
    compounds: bool,
}

#[derive(Deserialize)]
struct RawFieldFile {
    languages: BTreeMap<String, RawFieldWords>,
}

fn field_words() -> &'static BTreeMap<String, RawFieldWords> {
    static WORDS: OnceLock<BTreeMap<String, RawFieldWords>> = OnceLock::new();
    WORDS.get_or_init(|| {
        serde_json::from_str::<RawFieldFile>(questions::QUESTIONS_JSON)
            .map(|f| f.languages)
            .unwrap_or_default()
    })
}

/// The page language's words, then English's.
fn field_words_for(code: &str) -> impl Iterator<Item = &'static RawFieldWords> {
    let all = field_words();
    let first = all.get(code);
    first
        .into_iter()
        .chain(all.get("en").filter(|_| code != "en"))
}

/// Shortest head word matched as the end of a compound ("Eintrittspreis").
const MIN_COMPOUND_HEAD: usize = 4;

/// The type a field's last word asks for by the language data
/// ("discount" → a percentage, "Gründungsjahr" → a date in a language
/// that writes compounds as one word), and whether the
/// word is only that type (a bare head: not searched for on the page).
pub(super) fn head_want(name: &str, code: &str) -> Option<(Want, bool)> {
    let last = name.rsplit(' ').next().unwrap_or("");
    if last.is_empty() {
        return None;
    }
    let want_of = |kind: &str| match kind {
        "money" => Some(Want::Money),
        "percent" => Some(Want::Percent),
        "date" => Some(Want::Date),
        "duration" => Some(Want::Duration),
        "person" => Some(Want::Person),
        "place" => Some(Want::Place),
        "amount" => Some(Want::Amount),
        _ => None,
    };
    for words in field_words_for(code) {
        for (kind, heads) in &words.field_heads {
            for head in heads {
                let exact = head == last;
                let compound = words.compounds
                    && head.chars().count() >= MIN_COMPOUND_HEAD
                    && last.chars().count() >= head.chars().count() + 3
                    && last.ends_with(head.as_str());
                if exact || compound {
                    if let Some(want) = want_of(kind) {
                        return Some((want, exact));
                    }
                }
            }
        }
    }
    None
}

/// Base forms of a word by the language's derivational suffixes, longest
/// suffix first, each also with a final "e" ("reduction" → "reduc",
/// "reduce"; "monthly" → "month"). Bases shorter than four letters are
/// left out: they match too much.
pub(super) fn derived_forms(word: &str, code: &str) -> Vec<String> {
    let mut suffixes: Vec<&str> = field_words_for(code)
        .flat_map(|w| w.derivation_suffixes.iter().map(String::as_str))
        .collect();
    suffixes.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = Vec::new();
    for suffix in suffixes {
        let Some(base) = word.strip_suffix(suffix) else {
            continue;
        };
        if base.chars().count() < 4 {
            continue;
        }
        for form in [base.to_string(), format!("{base}e")] {
            if !out.contains(&form) {
                out.push(form);
            }
        }
    }
    out
}

/// A word (lower case) of any language that links a name to the role after
/// it ("Hege is the CEO", "Braiker as the company's first officer").
pub(super) fn is_link_word(word: &str) -> bool {
    field_words()
        .values()
        .any(|l| l.link_words.iter().any(|w| w == word))
}

/// A word (lower case) of any language that marks a name as an
/// organization's ("Larkspur Books", "Müller Verlag").
pub(super) fn is_organization_word(word: &str) -> bool {
    field_words()
        .values()
        .any(|l| l.organization_words.iter().any(|w| w == word))
}

/// A preposition (lower case) of any language that opens only a place
/// ("in Maple Ridge"), unlike "to" or "from", which open a person too.
pub(super) fn is_place_only_preposition(word: &str) -> bool {
    field_words()
        .values()
        .any(|l| l.place_only_prepositions.iter().any(|w| w == word))
}

/// Whether a field name asks for a span of time by a head such as "time"
/// after a modifier that makes it one ("running time", "travel time"): a
/// duration, not a date or a clock time.
pub(super) fn is_time_span(name: &str, code: &str) -> bool {
    let ws: Vec<&str> = name.split(' ').collect();
    let [.., modifier, head] = ws.as_slice() else {
        return false;
    };
    field_words_for(code).any(|l| {
        l.span_heads.iter().any(|h| h == head) && l.span_modifiers.iter().any(|m| m == modifier)
    })
}

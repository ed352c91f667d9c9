//! Whether a value read from running text is one its sentence states as
//! the field's, by the sentence's structure: not someone's expectation of
//! it ("analysts were expecting $27.5 billion"), not one of several values
//! listed together ("goals by A and B") for a field that asks for one,
//! and, for a rate ("earnings per share"), the value written per that unit
//! ("$2.53 per diluted share", not the $2.8 billion total). A value only
//! its place in the text ties to its field is shown only when its sentence
//! states it so; an answer's value leads only then (its quotes stay).

use super::entity;
use laika_core::retrieval::lang::Lang;
use laika_core::retrieval::questions::Want;
use std::ops::Range;

/// Word beginnings of expecting and forecasting: what follows is someone's
/// expectation, not the figure itself ("were expecting", "forecast",
/// "erwartet", "prévu").
const EXPECTATIONS: &[&str] = &[
    "expect",
    "forecast",
    "predict",
    "anticipat",
    "erwart",
    "prognos",
    "prévu",
    "prévis",
    "attendu",
    "previst",
    "esperab",
    "verwacht",
];

/// Forms of "to be" that make an expectation after the value a passive
/// said of it ("4,000 people are expected to …"), not an adjective of
/// another noun ("every expecting parent").
const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "ist", "sind", "war", "waren", "wird", "werden",
    "wurde", "wurden", "est", "sont", "était", "étaient", "es", "son", "fue", "fueron", "è",
    "sono", "é", "são", "zijn", "wordt", "worden",
];

/// Words that join values listed together ("A and B", "A or B").
const JOINERS: &[&str] = &["and", "or", "und", "oder", "et", "ou", "y", "o", "e", "&"];

/// Per language: the word a field name says "for each" with, and the words
/// the text may write before a rate's unit ("per share", "a share", "je
/// Aktie", "par action").
const PER: &[(&str, &str, &[&str])] = &[
    ("en", "per", &["per", "a", "an", "each"]),
    ("de", "pro", &["pro", "je"]),
    ("de", "je", &["pro", "je"]),
    ("fr", "par", &["par", "la", "le", "l"]),
    ("es", "por", &["por", "al", "la", "el", "cada"]),
    ("it", "per", &["per", "al", "alla", "ogni"]),
    ("nl", "per", &["per", "een"]),
];

/// The field name's rate unit and the words that may stand before it:
/// "share" of "earnings per share".
fn rate_unit<'a>(lang: &Lang, field_name: &'a str) -> Option<(&'a str, &'static [&'static str])> {
    let words: Vec<&str> = field_name.split(' ').collect();
    PER.iter()
        .filter(|(code, _, _)| *code == lang.code())
        .find_map(|(_, per, before)| {
            let at = words.iter().position(|w| w == per)?;
            let unit = words.get(at + 1).filter(|w| !w.is_empty())?;
            Some((*unit, *before))
        })
}

/// The start of the clause that holds byte `at`: after the last comma,
/// semicolon, colon, bracket or dash before it.
fn clause_start(sentence: &str, at: usize) -> usize {
    sentence
        .get(..at)
        .and_then(|head| head.rfind([',', ';', ':', '(', ')', '—', '–']))
        .map_or(0, |i| i + 1)
}

/// The lower-case words of `s`, without the punctuation around them.
fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
}

/// The end of the clause that holds byte `at`: the next comma, semicolon,
/// colon, bracket or dash after it.
fn clause_end(sentence: &str, at: usize) -> usize {
    sentence
        .get(at..)
        .and_then(|tail| tail.find([',', ';', ':', '(', ')', '—', '–']))
        .map_or(sentence.len(), |i| at + i)
}

/// An expectation stands in the value's clause ("were expecting $27.5
/// billion", "4,000 people are expected to …"), unless the field or the
/// question asks for one ("expected revenue").
fn expected(sentence: &str, value: &Range<usize>, field_name: &str) -> bool {
    let is_expectation = |w: &str| EXPECTATIONS.iter().any(|e| w.starts_with(e));
    let asks_expected = words(field_name).any(|w| is_expectation(&w));
    let before = sentence
        .get(clause_start(sentence, value.start)..value.start)
        .unwrap_or("");
    let after = sentence
        .get(value.end..clause_end(sentence, value.end))
        .unwrap_or("");
    let after: Vec<String> = words(after).collect();
    let passive = after
        .windows(2)
        .any(|p| AUXILIARIES.contains(&p[0].as_str()) && is_expectation(&p[1]));
    !asks_expected && (passive || words(before).any(|w| is_expectation(&w)))
}

/// Another value of the value's kind joined to it by a listing word:
/// "goals by Josh Bailey and Ryan Pulock" (a comma alone may open an
/// apposition: "Zoghlin, Carlineo's attorney").
fn listed(lang: &Lang, sentence: &str, value: &Range<usize>, want: Want) -> bool {
    let kind = match want {
        Want::Any => Want::Name,
        w => w,
    };
    let joined = |gap: &str| {
        let gap = gap.trim().trim_start_matches(',').trim();
        JOINERS.contains(&gap.to_lowercase().as_str())
    };
    entity::spans(sentence, lang)
        .iter()
        .filter(|s| s.answers(kind) && (s.range.end <= value.start || s.range.start >= value.end))
        .any(|s| {
            let gap = if s.range.end <= value.start {
                sentence.get(s.range.end..value.start)
            } else {
                sentence.get(value.end..s.range.start)
            };
            gap.is_some_and(joined)
        })
}

/// For a rate field, the value is followed by "per <unit>" (one word may
/// stand between: "per diluted share").
fn per_unit(sentence: &str, value: &Range<usize>, unit: &str, per: &[&str]) -> bool {
    let rest: Vec<String> = words(sentence.get(value.end..).unwrap_or(""))
        .take(3)
        .collect();
    let stem = unit.trim_end_matches('s');
    let is_unit = |w: &String| w.starts_with(stem);
    match rest.as_slice() {
        [p, u, ..] if per.contains(&p.as_str()) && is_unit(u) => true,
        [p, _, u, ..] if per.contains(&p.as_str()) && is_unit(u) => true,
        _ => false,
    }
}

/// Whether `sentence` states `value` (a byte range in it) as the value of
/// the field named `field_name` (normalized, lower case; or the question)
/// asking for `want`.
pub(super) fn states(
    lang: &Lang,
    field_name: &str,
    want: Want,
    sentence: &str,
    value: &Range<usize>,
) -> bool {
    if expected(sentence, value, field_name) {
        return false;
    }
    if matches!(want, Want::Person | Want::Name | Want::Any) && listed(lang, sentence, value, want)
    {
        return false;
    }
    rate_unit(lang, field_name).is_none_or(|(unit, per)| per_unit(sentence, value, unit, per))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `sentence` states `value` as the field's (`field` normalized:
    /// lower case).
    fn stated(field: &str, want: Want, sentence: &str, value: &str) -> bool {
        let at = sentence.find(value).expect("the value is in the sentence");
        let lang = Lang::detect([sentence]);
        states(&lang, field, want, sentence, &(at..at + value.len()))
    }

    #[test]
    fn an_expected_figure_is_not_the_figure() {
        let s = "Brokers had been expecting profit of €410 million for the bakery chain.";
        assert!(!stated("profit", Want::Money, s, "€410 million"));
        let s = "About 300 staff are expected to leave the plant by May.";
        assert!(!stated("staff", Want::Amount, s, "About 300 staff"));
        // An adjective after the value says nothing of it.
        let s = "My sister Ana and I met every expecting family in the ward.";
        assert!(stated("sister", Want::Any, s, "Ana and I"));
        // The clause after a comma is the statement itself.
        let s = "Brokers had predicted a loss, but the chain made €380 million in profit.";
        assert!(stated("profit", Want::Money, s, "€380 million"));
        // A field that asks for the expectation takes it.
        let s = "Brokers had been expecting profit of €410 million for the bakery chain.";
        assert!(stated("expected profit", Want::Money, s, "€410 million"));
        let s = "Die Bank erwartet für das Jahr einen Gewinn von 2,4 Milliarden Euro.";
        assert!(!stated("gewinn", Want::Money, s, "2,4 Milliarden Euro"));
    }

    #[test]
    fn one_of_several_listed_names_is_not_the_one() {
        let s = "The late tries came from Mirela Costa and Paul Ortega in the rain.";
        assert!(!stated(
            "winning try scorer",
            Want::Person,
            s,
            "Paul Ortega"
        ));
        let s = "Die Tore schossen Lena Vogt und Mia Brandt nach der Pause.";
        assert!(!stated("torschützin", Want::Person, s, "Mia Brandt"));
        // An apposition after a comma is no list.
        let s = "Mirela Costa, the club's captain, scored the late try.";
        assert!(stated("captain", Want::Person, s, "Mirela Costa"));
    }

    #[test]
    fn a_rate_is_the_value_written_per_its_unit() {
        let s = "The ferry line took in $3.1 million, or $14.20 per carried passenger, in June.";
        assert!(!stated(
            "revenue per passenger",
            Want::Money,
            s,
            "$3.1 million"
        ));
        assert!(stated("revenue per passenger", Want::Money, s, "$14.20"));
        let s = "Rooms cost $95 a night in the low season.";
        assert!(stated("price per night", Want::Money, s, "$95"));
        let s = "Der Verein nahm 12.000 Euro ein, also 8 Euro pro Mitglied.";
        assert!(!stated(
            "einnahmen pro mitglied",
            Want::Money,
            s,
            "12.000 Euro"
        ));
        assert!(stated("einnahmen pro mitglied", Want::Money, s, "8 Euro"));
        // A product's name is no rate: "iPad Pro price" asks no unit.
        let s = "The tablet now sells for $649 at most stores.";
        assert!(stated("ipad pro price", Want::Money, s, "$649"));
    }
}

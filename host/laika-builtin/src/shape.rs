//! The shape a field's value must have when only its place in the text
//! ties it to the field (its type, a count, a name beside the field's
//! words, running text): not a visible label, which the page chose. A
//! name is a name, not a cut phrase ("General (NYAG"), a dateline
//! ("VIENNA — The"), a sentence's opening adverb ("Meanwhile"), a unit
//! ("Celsius") or a common word ("life"); a quantity holds a number, not a
//! fraction ("a third") nor a number whose unit was cut off ("406" of
//! "406 lb-ft"); a rating holds a figure.

use super::entity;
use laika_core::decoding::fields::FieldType;
use laika_core::retrieval::lang::Lang;
use laika_core::retrieval::questions::Want;
use laika_core::retrieval::{self, Page};
use std::ops::Range;

/// Articles of the languages the question lexicon covers: a number word
/// after one is a fraction or a rank ("reduced by a third", "the first"),
/// not a count.
const ARTICLES: &[&str] = &[
    "a", "an", "the", "ein", "eine", "einen", "einem", "der", "die", "das", "un", "une", "le",
    "la", "les", "el", "los", "las", "una", "uno", "il", "lo", "gli", "um", "uma", "een", "het",
];

/// Whether a value of this field asks for a name.
fn is_named(lang: &Lang, kind: FieldType, want: Want, value: &str) -> bool {
    match want {
        Want::Person | Want::Name | Want::Place => true,
        // An untyped field holds a name unless its value is a figure
        // ("three cases").
        Want::Any => {
            let figure = value.chars().any(|c| c.is_ascii_digit())
                || entity::spans(value, lang).iter().any(|s| {
                    s.range.start == 0
                        && matches!(
                            s.kind,
                            entity::Kind::Number | entity::Kind::Money | entity::Kind::Percent
                        )
                });
            matches!(kind, FieldType::Other | FieldType::Author) && !figure
        }
        _ => false,
    }
}

/// Whether a value of this field asks for a figure.
fn is_quantity(kind: FieldType, want: Want) -> bool {
    matches!(kind, FieldType::Price | FieldType::Rating)
        || matches!(
            want,
            Want::Money | Want::Percent | Want::Amount | Want::Duration | Want::Age
        )
}

/// Whether `value` (the range in `sentence`, the unit of the page it was
/// read from) has the shape its field (`kind`, typed `want`) asks for.
pub(super) fn fits(
    page: &Page,
    lang: &Lang,
    kind: FieldType,
    want: Want,
    sentence: &str,
    value: Range<usize>,
) -> bool {
    let Some(v) = sentence.get(value.clone()) else {
        return false;
    };
    if kind == FieldType::Rating && !v.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    if is_quantity(kind, want) && !quantity(lang, sentence, &value) {
        return false;
    }
    if is_named(lang, kind, want, v) && !name(page, sentence, &value) {
        return false;
    }
    !(want == Want::Date && model_year(sentence, &value))
}

/// A year that names a thing's edition, not a date of it: "the 2020
/// Sentra", "the 2024 Games" (after an article, before a name).
fn model_year(sentence: &str, value: &Range<usize>) -> bool {
    let v = sentence.get(value.clone()).unwrap_or("");
    let year = v.len() == 4 && v.chars().all(|c| c.is_ascii_digit());
    let after_article =
        word_before(sentence, value.start).is_some_and(|w| ARTICLES.contains(&w.as_str()));
    let before_name = word_after(sentence, value.end)
        .is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase));
    year && after_article && before_name
}

/// The word before byte `at` of `s`, lower case.
fn word_before(s: &str, at: usize) -> Option<String> {
    s.get(..at)?
        .split_whitespace()
        .next_back()
        .map(str::to_lowercase)
}

/// The word from byte `at` of `s`, after one space at most, with its
/// trailing punctuation.
fn word_after(s: &str, at: usize) -> Option<&str> {
    let rest = s.get(at..)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    rest.split_whitespace()
        .next()
        .filter(|_| !rest.starts_with(' '))
}

/// A figure: digits, or a number word that is not a fraction or a rank,
/// and with its unit when the text gives one.
fn quantity(lang: &Lang, sentence: &str, value: &Range<usize>) -> bool {
    let v = sentence.get(value.clone()).unwrap_or("");
    if !v.chars().any(|c| c.is_ascii_digit()) {
        let counted = entity::spans(v, lang)
            .iter()
            .any(|s| matches!(s.kind, entity::Kind::Number | entity::Kind::Money));
        let after_article =
            word_before(sentence, value.start).is_some_and(|w| ARTICLES.contains(&w.as_str()));
        return counted && !after_article;
    }
    // A bare number followed by a unit the span reader does not know
    // ("406 lb-ft", "300 Wh/kg") is not the quantity without it.
    let bare = !v.chars().any(char::is_alphabetic);
    let unknown_unit = word_after(sentence, value.end).is_some_and(|w| {
        let w = w.trim_end_matches(|c: char| !c.is_alphanumeric());
        let joined = w.contains(['-', '/']);
        joined
            && w.chars().next().is_some_and(char::is_alphabetic)
            && w.split(['-', '/'])
                .all(|p| !p.is_empty() && p.chars().all(char::is_alphabetic))
    });
    !(bare && unknown_unit)
}

/// A name: brackets and quotes closed, no dash between words, no closing
/// function word, a capital first letter (in a script that has one), not a
/// unit of measure, and not a sentence's first word that the page never
/// writes capitalized inside a sentence.
fn name(page: &Page, sentence: &str, value: &Range<usize>) -> bool {
    let v = sentence.get(value.clone()).unwrap_or("");
    let closed = |open: char, close: char| v.matches(open).count() == v.matches(close).count();
    if !closed('(', ')')
        || !closed('[', ']')
        || !closed('“', '”')
        || v.matches('"').count() % 2 == 1
    {
        return false;
    }
    if [" — ", " – ", " - "].iter().any(|d| v.contains(d)) {
        return false;
    }
    let words: Vec<&str> = v.split_whitespace().collect();
    let last = words.last().map(|w| w.to_lowercase()).unwrap_or_default();
    if last.chars().count() >= 2 && retrieval::is_stopword(&last) {
        return false;
    }
    let quoted = sentence
        .get(..value.start)
        .and_then(|b| b.chars().next_back())
        .is_some_and(|c| "“\"„«‘'".contains(c));
    if v.chars().next().is_some_and(char::is_lowercase) && !quoted {
        return false;
    }
    if let [one] = words.as_slice() {
        let bare = one.trim_end_matches(|c: char| !c.is_alphanumeric());
        if entity::is_measure_unit(&bare.to_lowercase()) {
            return false;
        }
        if opens(sentence, value.start) && !named_inside_a_sentence(page, bare) {
            return false;
        }
    }
    // A dateline: the sentence's first word in capitals before a dash.
    let dateline = opens(sentence, value.start)
        && v.chars()
            .filter(|c| c.is_alphabetic())
            .all(char::is_uppercase)
        && sentence
            .get(value.end..)
            .is_some_and(|r| r.trim_start().starts_with(['—', '–', '-']));
    !dateline
}

/// Whether byte `at` of `sentence` is its first word (after quotes and
/// spaces).
fn opens(sentence: &str, at: usize) -> bool {
    sentence.get(..at).is_some_and(|b| {
        b.chars()
            .all(|c| c.is_whitespace() || "“\"„«‘'(".contains(c))
    })
}

/// Whether the page writes `word` capitalized after another word of a
/// sentence (as a name is), not only at sentences' starts (as "Meanwhile").
fn named_inside_a_sentence(page: &Page, word: &str) -> bool {
    (0..page.units.len()).any(|u| {
        let text = page.unit_text(u);
        text.match_indices(word).any(|(at, _)| {
            let end = at + word.len();
            let whole = text
                .get(end..)
                .and_then(|r| r.chars().next())
                .is_none_or(|c| !c.is_alphanumeric());
            let before = text.get(..at).unwrap_or("");
            let inside = before.ends_with(' ')
                && before
                    .trim_end()
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || ",;".contains(c));
            whole && inside
        })
    })
}

/// A quantity's range widened over a unit its reader cut off after a
/// modifier ("100 metric" → "100 metric tons", "40 square" → "40 square
/// feet").
pub(super) fn widened(sentence: &str, value: Range<usize>) -> Range<usize> {
    let v = sentence.get(value.clone()).unwrap_or("");
    let ends_in_word = v
        .split_whitespace()
        .next_back()
        .is_some_and(|w| w.chars().all(char::is_alphabetic) && !entity::is_measure_unit(w));
    let has_number = v.chars().any(|c| c.is_ascii_digit());
    let Some(next) = word_after(sentence, value.end).filter(|_| ends_in_word && has_number) else {
        return value;
    };
    let unit = next.trim_end_matches(|c: char| !c.is_alphanumeric());
    if !entity::is_measure_unit(&unit.to_lowercase()) {
        return value;
    }
    let start = value.end
        + sentence
            .get(value.end..)
            .map_or(0, |r| r.len() - r.trim_start().len());
    value.start..start + unit.len()
}

/// "from X to Y" in the languages the question lexicon covers: the value
/// a change starts from and the word before the value it ends at.
const CHANGES: &[(&str, &str)] = &[
    ("from", "to"),
    ("von", "auf"),
    ("von", "zu"),
    ("de", "à"),
    ("de", "a"),
    ("da", "a"),
    ("van", "naar"),
];

/// A value a change starts from ("valuation slashed from $47 billion to
/// $8 billion") stands for the value it ends at, of the same kind: what
/// the field is now.
pub(super) fn changed_to(lang: &Lang, sentence: &str, value: Range<usize>) -> Range<usize> {
    let Some(before) = word_before(sentence, value.start) else {
        return value;
    };
    let spans = entity::spans(sentence, lang);
    let Some(kind) = spans
        .iter()
        .find(|s| s.range.start == value.start && s.kind != entity::Kind::Place)
        .map(|s| s.kind)
    else {
        return value;
    };
    let rest = sentence.get(value.end..).unwrap_or("");
    let after = rest.trim_start();
    let Some(to) = CHANGES
        .iter()
        .filter(|(from, _)| *from == before)
        .find_map(|(_, to)| after.strip_prefix(to).filter(|r| r.starts_with(' ')))
    else {
        return value;
    };
    let at = sentence.len() - to.trim_start().len();
    spans
        .iter()
        .find(|s| s.range.start == at && s.kind == kind)
        .map_or(value, |s| {
            // A count keeps its unit ("to 12 stores"), money its own words.
            let unit = s.unit.as_ref().filter(|_| kind == entity::Kind::Number);
            s.range.start..unit.map_or(s.range.end, |u| u.end.max(s.range.end))
        })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{packet, summary};
    use super::*;
    use laika_core::retrieval::Scope;
    use serde_json::json;

    fn page(text: &str) -> Page {
        let p = packet(
            "web.extract",
            json!({}),
            "extract",
            summary("Page", text),
            &[],
        );
        Page::from_documents(&p.context.documents, Scope::All)
    }

    /// Whether `value`, found in `sentence` of a page holding `text`, fits.
    fn fits_in(text: &str, sentence: &str, value: &str, kind: FieldType, want: Want) -> bool {
        let p = page(text);
        let at = sentence.find(value).expect("the value is in the sentence");
        let lang = Lang::detect([text]);
        fits(&p, &lang, kind, want, sentence, at..at + value.len())
    }

    #[test]
    fn a_name_cut_inside_a_parenthesis_is_no_name() {
        let s = "The Attorney General (NYAG) filed the suit on Monday.";
        assert!(!fits_in(
            s,
            s,
            "General (NYAG",
            FieldType::Author,
            Want::Person
        ));
        assert!(fits_in(
            s,
            s,
            "Attorney General (NYAG)",
            FieldType::Other,
            Want::Name
        ));
    }

    #[test]
    fn a_dateline_is_no_place() {
        let s = "BERLIN — The talks ended late on Friday in a hotel.";
        assert!(!fits_in(
            s,
            s,
            "BERLIN — The",
            FieldType::Other,
            Want::Place
        ));
        assert!(!fits_in(s, s, "BERLIN", FieldType::Other, Want::Place));
        let t = "The talks ended in Berlin on Friday.";
        assert!(fits_in(t, t, "Berlin", FieldType::Other, Want::Place));
    }

    #[test]
    fn an_opening_adverb_is_no_name_but_an_opening_name_is() {
        let text = "Meanwhile, the water board raised its rates. Thames Water said so.\n\
                    Ofwat, the regulator, agreed. The board met Ofwat twice.";
        assert!(!fits_in(
            text,
            "Meanwhile, the water board raised its rates.",
            "Meanwhile",
            FieldType::Other,
            Want::Any
        ));
        // Written capitalized inside a sentence too: a name.
        assert!(fits_in(
            text,
            "Ofwat, the regulator, agreed.",
            "Ofwat",
            FieldType::Other,
            Want::Any
        ));
    }

    #[test]
    fn a_unit_or_a_common_word_is_no_name() {
        let s = "The chip runs at 90 degrees Celsius and the battery life is long.";
        assert!(!fits_in(s, s, "Celsius", FieldType::Other, Want::Any));
        assert!(!fits_in(s, s, "life", FieldType::Other, Want::Any));
        // A count is no name.
        assert!(fits_in(s, s, "90 degrees", FieldType::Other, Want::Any));
        let t = "three cases were confirmed.";
        assert!(fits_in(t, t, "three cases", FieldType::Other, Want::Any));
    }

    #[test]
    fn a_quantity_holds_a_figure_not_a_fraction() {
        let s = "The mass could be cut by a third, a crew of six said.";
        assert!(!fits_in(s, s, "third", FieldType::Other, Want::Amount));
        assert!(fits_in(s, s, "six", FieldType::Other, Want::Amount));
        let r = "We rated Dashlane highly.";
        assert!(!fits_in(r, r, "Dashlane", FieldType::Rating, Want::Any));
    }

    #[test]
    fn a_number_whose_unit_was_cut_off_is_no_quantity() {
        let s = "The motor makes 310 lb-ft of torque from a 75 kWh pack.";
        assert!(!fits_in(s, s, "310", FieldType::Other, Want::Amount));
        assert!(fits_in(s, s, "75 kWh", FieldType::Other, Want::Amount));
    }

    #[test]
    fn a_model_year_is_no_date() {
        let s = "The 2021 Corolla goes on sale in March.";
        assert!(!fits_in(s, s, "2021", FieldType::Date, Want::Date));
        let t = "The plant opened in 2021 near Lyon.";
        assert!(fits_in(t, t, "2021", FieldType::Date, Want::Date));
    }

    #[test]
    fn a_changed_value_is_the_one_it_changed_to() {
        let s = "Its value was cut from $12 billion to $3 billion last week.";
        let lang = Lang::detect([s]);
        let at = s.find("$12 billion").expect("in the sentence");
        let r = changed_to(&lang, s, at..at + "$12 billion".len());
        assert_eq!(s.get(r), Some("$3 billion"));
        let t = "It raised $12 billion to build plants.";
        let at = t.find("$12 billion").expect("in the sentence");
        assert_eq!(changed_to(&lang, t, at..at + 11), at..at + 11);
    }

    #[test]
    fn a_unit_after_its_modifier_is_kept() {
        let s = "It can carry 40 metric tons of cargo.";
        let at = s.find("40 metric").expect("in the sentence");
        let r = widened(s, at..at + "40 metric".len());
        assert_eq!(s.get(r), Some("40 metric tons"));
        let t = "It costs $40 today.";
        assert_eq!(widened(t, 9..12), 9..12);
    }
}

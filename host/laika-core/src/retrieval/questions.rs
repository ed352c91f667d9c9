//! What a question asks for, per language, as data (`questions.json`):
//! the answer types (`Want`), the question words of each, money and name
//! cues, the months (English's are [`MONTHS`], shared with the field parsers),
//! weekdays and place prepositions that make typed spans, and everyday
//! synonyms. Looked up by the page language's code; English is the fallback
//! and is also consulted on every page (many readers ask in English).
//!
//! A query (`Index::query`) drops the question phrase and filler and widens
//! its words by the synonyms; the builtin runtime reads the rest to type
//! answers and fields.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The data file itself: it also holds the builtin runtime's field words
/// (`field_heads`, `derivation_suffixes`, …), which the builtin reads from it.
pub const QUESTIONS_JSON: &str = include_str!("questions.json");

/// The type of answer asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// No particular type: the passage is the answer.
    Any,
    /// How many / how much / how far …: a number, money or a percentage.
    Amount,
    Money,
    Percent,
    /// How old: an age.
    Age,
    /// How long (time): a number of time units, or a date.
    Duration,
    /// When: a date or time.
    Date,
    /// Who: a person's name.
    Person,
    /// Which …: a name of any kind ("Which journal …" → "Nature Astronomy").
    Name,
    /// Where: a place name or phrase.
    Place,
}

impl Want {
    /// Types whose answer is a value: a passage without one does not answer.
    pub fn needs_value(self) -> bool {
        !matches!(self, Want::Any | Want::Person | Want::Place)
    }
}

/// Month names and their abbreviations, lower case.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

#[derive(Deserialize, Default)]
struct RawLanguage {
    number_words: Vec<String>,
    time_units: Vec<String>,
    filler: Vec<String>,
    what: Vec<String>,
    amount: Vec<String>,
    percent: Vec<String>,
    age: Vec<String>,
    duration: Vec<String>,
    date: Vec<String>,
    person: Vec<String>,
    place: Vec<String>,
    which: Vec<String>,
    name_cues: Vec<String>,
    naming_words: Vec<String>,
    result_words: Vec<String>,
    money_cues: Vec<String>,
    months: Vec<String>,
    weekdays: Vec<String>,
    relative_days: Vec<String>,
    place_prepositions: Vec<String>,
    synonyms: Vec<Vec<String>>,
    #[serde(default)]
    stands_for: Vec<String>,
}

#[derive(Deserialize)]
struct RawFile {
    languages: BTreeMap<String, RawLanguage>,
}

/// One language's question words, ready to match.
#[derive(Debug, Default)]
pub struct Words {
    pub code: String,
    /// Question phrases as lower-case word lists, longest first, with the
    /// answer type each asks for.
    pub phrases: Vec<(Vec<String>, Want)>,
    /// Numbers written as words ("quattro") and units of time ("anni").
    pub number_words: Vec<String>,
    pub time_units: Vec<String>,
    /// Pronouns and auxiliaries of questions ("il", "wird"): not searched for.
    pub filler: Vec<String>,
    /// The plain "what": with a money cue, it asks for money.
    pub what: Vec<String>,
    /// "which": a name, when nothing more specific is asked.
    pub which: Vec<String>,
    /// The question asks for someone's name.
    pub name_cues: Vec<String>,
    /// Words that introduce a name ("a wagon called X").
    pub naming_words: Vec<String>,
    /// Head words of a field that asks for a match result ("final score").
    pub result_words: Vec<String>,
    /// An amount question with one of these asks for money.
    pub money_cues: Vec<String>,
    pub months: Vec<String>,
    pub weekdays: Vec<String>,
    pub relative_days: Vec<String>,
    pub place_prepositions: Vec<String>,
    pub synonyms: Vec<Vec<String>>,
    /// Phrases asking what an abbreviation stands for, as word lists.
    pub stands_for: Vec<Vec<String>>,
}

impl Words {
    /// Whether `word` (lower case) is a "which" word or filler of this
    /// language: it says nothing about what is asked.
    pub fn is_filler(&self, word: &str) -> bool {
        self.which.iter().any(|w| w == word) || self.filler.iter().any(|w| w == word)
    }

    /// The first question phrase in `ws` (lower-case words), trying the
    /// longest phrase at each position: where it is and the type it asks.
    pub fn phrase_in(&self, ws: &[&str]) -> Option<(std::ops::Range<usize>, Want)> {
        (0..ws.len()).find_map(|i| {
            self.phrases.iter().find_map(|(p, want)| {
                let n = p.len();
                ws.get(i..i + n)
                    .is_some_and(|run| run.iter().zip(p).all(|(a, b)| *a == b))
                    .then_some((i..i + n, *want))
            })
        })
    }
}

fn lower_words(phrase: &str) -> Vec<String> {
    phrase
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

fn load() -> Vec<Words> {
    // Compiled in and parsed by a test; without it the runtime still
    // answers, untyped.
    let file: RawFile = serde_json::from_str(QUESTIONS_JSON).unwrap_or(RawFile {
        languages: BTreeMap::new(),
    });
    file.languages
        .into_iter()
        .map(|(code, raw)| {
            let mut phrases: Vec<(Vec<String>, Want)> = Vec::new();
            for (list, want) in [
                (&raw.amount, Want::Amount),
                (&raw.percent, Want::Percent),
                (&raw.age, Want::Age),
                (&raw.duration, Want::Duration),
                (&raw.date, Want::Date),
                (&raw.person, Want::Person),
                (&raw.place, Want::Place),
            ] {
                phrases.extend(list.iter().map(|p| (lower_words(p), want)));
            }
            phrases.retain(|(p, _)| !p.is_empty());
            // Longest first: "combien de temps" before "combien".
            phrases.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
            let lower = |l: &[String]| l.iter().map(|w| w.to_lowercase()).collect::<Vec<_>>();
            Words {
                code,
                phrases,
                number_words: lower(&raw.number_words),
                time_units: lower(&raw.time_units),
                filler: lower(&raw.filler),
                what: lower(&raw.what),
                which: lower(&raw.which),
                name_cues: lower(&raw.name_cues),
                naming_words: lower(&raw.naming_words),
                result_words: lower(&raw.result_words),
                money_cues: lower(&raw.money_cues),
                months: lower(&raw.months),
                weekdays: lower(&raw.weekdays),
                relative_days: lower(&raw.relative_days),
                place_prepositions: lower(&raw.place_prepositions),
                synonyms: raw.synonyms.iter().map(|g| lower(g)).collect(),
                stands_for: raw.stands_for.iter().map(|p| lower_words(p)).collect(),
            }
        })
        .collect()
}

/// Every language's words.
pub fn all() -> &'static [Words] {
    static WORDS: OnceLock<Vec<Words>> = OnceLock::new();
    WORDS.get_or_init(load)
}

/// The words of the language `code` ("de"), or English's.
pub fn for_code(code: &str) -> &'static Words {
    static EMPTY: OnceLock<Words> = OnceLock::new();
    all()
        .iter()
        .find(|w| w.code == code)
        .or_else(|| all().iter().find(|w| w.code == "en"))
        .unwrap_or_else(|| EMPTY.get_or_init(Words::default))
}

/// The page's language's words, then English's (when they differ).
pub fn with_english(code: &str) -> impl Iterator<Item = &'static Words> {
    let first = for_code(code);
    let en = for_code("en");
    std::iter::once(first).chain((!std::ptr::eq(first, en)).then_some(en))
}

/// The lower-case words of a question, split as question phrases are.
pub fn question_words(question: &str) -> Vec<String> {
    lower_words(question)
}

/// The question phrase of `question` (the page language's first, then any
/// language's): its words and the answer type it asks for.
pub fn asked(question: &str, code: &str) -> Option<(Vec<String>, Want)> {
    let ws = question_words(question);
    let refs: Vec<&str> = ws.iter().map(String::as_str).collect();
    page_first(code).find_map(|l| {
        l.phrase_in(&refs)
            .map(|(r, want)| (ws.get(r).map(<[String]>::to_vec).unwrap_or_default(), want))
    })
}

/// A month name (lower case) of any language.
pub fn is_month(word: &str) -> bool {
    MONTHS.contains(&word) || all().iter().any(|l| l.months.iter().any(|m| m == word))
}

/// Every language's words, the page's first.
pub fn page_first(code: &str) -> impl Iterator<Item = &'static Words> {
    let first = for_code(code);
    std::iter::once(first).chain(all().iter().filter(move |w| !std::ptr::eq(*w, first)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_every_language_has_each_kind() {
        let file: RawFile = serde_json::from_str(QUESTIONS_JSON).unwrap();
        assert!(file.languages.len() >= 10);
        for (code, l) in &file.languages {
            for (what, list) in [
                ("amount", &l.amount),
                ("date", &l.date),
                ("person", &l.person),
                ("place", &l.place),
                ("duration", &l.duration),
                ("weekdays", &l.weekdays),
                ("result_words", &l.result_words),
            ] {
                assert!(!list.is_empty(), "{code}: no {what}");
            }
        }
        assert_eq!(for_code("xx").code, "en");
        assert_eq!(with_english("de").count(), 2);
        assert_eq!(with_english("en").count(), 1);
    }
}

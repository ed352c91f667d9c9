//! Typed spans in a sentence (numbers with their units, money, percentages,
//! dates and times, names, places) and the type of answer a question or a
//! field name asks for. Shared by `web.answer` (the answer span) and
//! `web.extract` (typed field finders).
//!
//! Spans are byte ranges into the text they were found in, so a value is
//! always an exact slice of the page.

use laika_core::retrieval::lang::Lang;
use laika_core::retrieval::questions::{self, Want, Words, MONTHS};
use std::ops::Range;

/// What a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A count or quantity: "17 nights", "2,300 tons", "five years".
    Number,
    Money,
    Percent,
    /// A date, a day, a time of day: "Dec. 9", "Friday", "6:38 p.m.", "2009".
    Date,
    /// A run of capitalized words: "Lucas Paganini", "Dubai Air Show".
    Name,
    /// A place phrase after a preposition: "in a small laundry basket".
    Place,
}

/// A typed span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub range: Range<usize>,
    pub kind: Kind,
    /// For numbers: the word after the number ("tons" in "2,300 tons").
    pub unit: Option<Range<usize>>,
    /// A number of time units ("five years", "180-day"): a duration.
    pub time: bool,
    /// A name that reads like a person's (not an organization's or a
    /// place's).
    pub person: bool,
    /// A number that reads as someone's age ("57-year-old", "Webb, 51,").
    pub age: bool,
}

impl Span {
    /// Whether this span answers a question of type `want`.
    pub fn answers(&self, want: Want) -> bool {
        match want {
            Want::Any => self.kind != Kind::Place,
            Want::Amount => matches!(self.kind, Kind::Number | Kind::Money | Kind::Percent),
            Want::Money => self.kind == Kind::Money,
            Want::Percent => matches!(self.kind, Kind::Percent),
            Want::Age => self.age,
            Want::Duration => (self.kind == Kind::Number && self.time) || self.kind == Kind::Date,
            Want::Date => self.kind == Kind::Date,
            Want::Person => self.kind == Kind::Name && self.person,
            Want::Name => self.kind == Kind::Name,
            Want::Place => matches!(self.kind, Kind::Name | Kind::Place) && !self.person,
        }
    }
}

const SCALES: &[&str] = &[
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
    "bn",
    "mn",
    "m",
    "k",
    "crore",
    "lakh",
    "millions",
    "billions",
    "millionen",
    "milliarde",
    "milliarden",
    "mio",
    "mrd",
    "milliard",
    "milliards",
    "miljoen",
    "miljard",
    "miljarden",
    "milione",
    "milioni",
    "miliardo",
    "miliardi",
    "millón",
    "millones",
    "milhão",
    "milhões",
    "bilhão",
    "bilhões",
    "miljon",
    "miljoner",
];
/// Words for "a"/"one" that open a scale's number ("eine Milliarde Euro",
/// "a million people", "un milliard").
const ONE_WORDS: &[&str] = &[
    "a", "an", "one", "ein", "eine", "einer", "un", "une", "uno", "una", "um", "uma", "een", "en",
    "ett",
];
/// Scales that are a number with a word for "one" before them.
fn is_large_scale(word: &str) -> bool {
    SCALES.contains(&word) && word.chars().count() > 4 && !matches!(word, "hundred" | "thousand")
}
const NUMBER_WORDS: &[&str] = &[
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "fifteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "hundred",
    "dozen",
    "dozens",
    "hundreds",
    "thousands",
    "millions",
    "half",
    "third",
];
const TIME_UNITS: &[&str] = &[
    "second",
    "seconds",
    "minute",
    "minutes",
    "hour",
    "hours",
    "day",
    "days",
    "night",
    "nights",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "decade",
    "decades",
    "century",
    "centuries",
];
const CURRENCY_WORDS: &[&str] = &[
    "dollar", "dollars", "euro", "euros", "pound", "pounds", "yen", "yuan", "rupees", "usd", "eur",
    "gbp", "francs",
];
const PERCENT_WORDS: &[&str] = &["percent", "pct", "per"];
/// Words before a number that belong to it ("more than 4,000").
const APPROX: &[&str] = &[
    "more", "less", "fewer", "about", "around", "roughly", "some", "nearly", "almost", "over",
    "under", "than", "up",
];
/// Words in a name that make it an organization, a place or an event.
const NOT_PERSON: &[&str] = &[
    "academy",
    "agency",
    "channel",
    "firm",
    "network",
    "team",
    "airline",
    "airlines",
    "association",
    "bank",
    "center",
    "centre",
    "city",
    "club",
    "co",
    "college",
    "committee",
    "company",
    "corp",
    "council",
    "county",
    "court",
    "department",
    "district",
    "group",
    "hospital",
    "hotel",
    "inc",
    "institute",
    "league",
    "ltd",
    "ministry",
    "museum",
    "news",
    "observatory",
    "office",
    "party",
    "police",
    "province",
    "school",
    "show",
    "society",
    "state",
    "states",
    "street",
    "suites",
    "telescope",
    "times",
    "union",
    "university",
    "post",
    "journal",
    "index",
    "house",
    "hall",
    "street",
    "avenue",
    "road",
    "market",
    "station",
    "church",
    "airport",
    "park",
];
/// Capitalized words that open sentences, not names.
const SENTENCE_OPENERS: &[&str] = &[
    "after",
    "before",
    "meanwhile",
    "following",
    "according",
    "although",
    "though",
    "despite",
    "during",
    "since",
    "until",
    "later",
    "earlier",
    "still",
    "yet",
    "now",
    "today",
    "last",
    "next",
    "new",
    "former",
    "while",
    "because",
    "unless",
    "without",
    "within",
    "among",
    "many",
    "several",
    "plus",
    "even",
    "instead",
    "like",
    "unlike",
    "historically",
    "nowadays",
    "however",
    "initially",
    "finally",
    "first",
    "second",
    "third",
];
/// Lower-case words that may join a name ("Academy of Vietnam").
const NAME_JOINERS: &[&str] = &[
    "of", "de", "von", "van", "der", "da", "del", "al", "bin", "la",
];
/// Titles that mark the next name as a person's.
const PERSON_TITLES: &[&str] = &[
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sen",
    "rep",
    "gov",
    "gen",
    "president",
    "minister",
    "secretary",
    "spokesman",
    "spokeswoman",
    "spokesperson",
    "chairman",
    "ceo",
    "director",
    "judge",
    "attorney",
    "officer",
    "author",
    "strategist",
    "analyst",
    "manager",
    "founder",
    "leader",
    "head",
    "chief",
    "professor",
    "coach",
    "governor",
    "senator",
    "owner",
    "scientist",
    "lawyer",
];

/// One whitespace-separated word: its range and its core (trimmed of
/// punctuation around it).
#[derive(Debug, Clone)]
struct Word {
    range: Range<usize>,
    core: Range<usize>,
    /// The word ends a clause (a comma, period, colon … after it).
    stops: bool,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        // A dash between words ("Facility—a multimedia facility") parts
        // them like a comma.
        let dash = matches!(c, '—' | '–');
        match (c.is_whitespace() || dash, start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                let w = text.get(s..i).unwrap_or("");
                let lead = w.len()
                    - w.trim_start_matches(|c: char| !c.is_alphanumeric() && !"$€£¥".contains(c))
                        .len();
                let body = w.get(lead..).unwrap_or("");
                let mut core_end = body
                    .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '%')
                    .len();
                // "p.m." and "U.S." keep their last period.
                if body.get(..core_end + 1).is_some_and(|b| b.ends_with('.'))
                    && body.get(..core_end).is_some_and(|b| b.contains('.'))
                {
                    core_end += 1;
                }
                let tail = body.get(core_end..).unwrap_or("");
                // "Sonya A. Zoghlin": an initial's period ends nothing.
                let initial = core_end == 1
                    && tail == "."
                    && body.chars().next().is_some_and(char::is_uppercase);
                let tail = if initial { "" } else { tail };
                out.push(Word {
                    range: s..i,
                    core: s + lead..s + lead + core_end,
                    stops: dash || tail.contains([',', '.', ';', ':', '!', '?', ')', '”', '"']),
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn lower_at(text: &str, w: &Word) -> String {
    text.get(w.core.clone())
        .unwrap_or("")
        .trim_end_matches('.')
        .to_lowercase()
}

fn is_numeric(core: &str) -> bool {
    core.trim_start_matches(['$', '€', '£', '¥'])
        .chars()
        .next()
        .is_some_and(is_digit)
}

/// A decimal digit: ASCII, Arabic-Indic or Eastern Arabic-Indic.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
        || ('\u{660}'..='\u{669}').contains(&c)
        || ('\u{6f0}'..='\u{6f9}').contains(&c)
}

/// A word of any language that asks for money ("price", "Preis", "prix").
fn is_money_cue(word: &str) -> bool {
    questions::page_first("en").any(|l| l.money_cues.iter().any(|c| c == word))
}

fn is_capitalized(core: &str) -> bool {
    core.chars().next().is_some_and(char::is_uppercase)
}

/// A capitalized word that can be part of a name: not a compound whose
/// last part is lower case ("Cup-style", "US-based" describe, they do not
/// name).
fn is_name_word(core: &str) -> bool {
    is_capitalized(core)
        && core.chars().any(char::is_alphabetic)
        && !core
            .rsplit('-')
            .next()
            .is_some_and(|tail| tail.len() < core.len() && tail.starts_with(char::is_lowercase))
}

/// Every typed span of `text`, in order. Spans of different kinds may
/// overlap (a year is a date and may sit inside a name's sentence).
pub fn spans(text: &str, lang: &Lang) -> Vec<Span> {
    let langs: Vec<&Words> = questions::with_english(lang.code()).collect();
    let listed = |l: &str, pick: fn(&Words) -> &Vec<String>| {
        langs.iter().any(|w| pick(w).iter().any(|x| x == l))
    };
    let is_weekday = |l: &str| listed(l, |w| &w.weekdays);
    let is_time_unit = |l: &str| TIME_UNITS.contains(&l) || listed(l, |w| &w.time_units);
    let ws = words(text);
    let low: Vec<String> = ws.iter().map(|w| lower_at(text, w)).collect();
    let core = |i: usize| {
        ws.get(i)
            .and_then(|w| text.get(w.core.clone()))
            .unwrap_or("")
    };
    let lw = |i: usize| low.get(i).map_or("", String::as_str);
    let stops = |i: usize| ws.get(i).is_none_or(|w| w.stops);
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let c = core(i);
        let l = lw(i);
        // Dates: [weekday,] month [day][, year] | day month [year] | weekday | time.
        // English "may" and "march" are months only when capitalized.
        let english_month =
            MONTHS.contains(&l) && (l != "may" || is_capitalized(c)) && l != "march"
                || (l == "march" && is_capitalized(c));
        if english_month || listed(l, |w| &w.months) {
            let mut start = i;
            if i > 0 && (is_weekday(lw(i - 1)) || is_numeric(core(i - 1)) && core(i - 1).len() <= 2)
            {
                start = i - 1;
            }
            let mut end = i;
            // "Dec. 9": the abbreviation's period does not end the date.
            let abbreviated = ws
                .get(i)
                .is_some_and(|w| text.get(w.core.end..w.range.end) == Some("."));
            let stops = |k: usize| {
                if k == i && abbreviated {
                    false
                } else {
                    stops(k)
                }
            };
            if !stops(i) && is_numeric(core(i + 1)) && core(i + 1).len() <= 5 {
                end = i + 1;
                if is_numeric(core(i + 2)) && core(i + 2).len() == 4 {
                    end = i + 2;
                }
            } else if !stops(i) && is_numeric(core(i + 1)) && core(i + 1).len() == 4 {
                end = i + 1;
            }
            // A bare "May" or "March" is usually not a date.
            if end > i
                || start < i
                || l.len() > 5
                || ws.get(i).is_some_and(|w| w.core.end < w.range.end)
            {
                push(&mut out, &ws, start, end, Kind::Date);
            }
            i = end + 1;
            continue;
        }
        if is_weekday(l) || listed(l, |w| &w.relative_days) {
            push(&mut out, &ws, i, i, Kind::Date);
            i += 1;
            continue;
        }
        // "12 mars", "12. März": the day belongs to the month's date.
        if is_numeric(c) && c.chars().count() <= 2 && questions::is_month(lw(i + 1)) {
            i += 1;
            continue;
        }
        if is_numeric(c) {
            // A clock time: "6:38 p.m.", "10 a.m.".
            if matches!(lw(i + 1), "a.m." | "p.m." | "am" | "pm" | "a.m" | "p.m") {
                push(&mut out, &ws, i, i + 1, Kind::Date);
                i += 2;
                continue;
            }
            let digits: String = c.chars().filter(char::is_ascii_digit).collect();
            let year = digits.len() == 4
                && c.chars().all(|c| c.is_ascii_digit())
                && (1800..2100).contains(&digits.parse::<u32>().unwrap_or(0));
            if year && !SCALES.contains(&lw(i + 1)) && !CURRENCY_WORDS.contains(&lw(i + 1)) {
                push(&mut out, &ws, i, i, Kind::Date);
                i += 1;
                continue;
            }
        }
        // "two", "two-year" (but not "one" alone: "one of them").
        let head = l.split('-').next().unwrap_or("");
        let is_number_word = |w: &str| NUMBER_WORDS.contains(&w) || listed(w, |l| &l.number_words);
        let number_word =
            (is_number_word(l) && l != "one") || (l.contains('-') && is_number_word(head));
        let one_scale =
            is_large_scale(l) && i > 0 && ONE_WORDS.contains(&lw(i - 1)) && !stops(i - 1);
        if is_numeric(c) || number_word || one_scale {
            let mut start = if one_scale { i - 1 } else { i };
            while start > 0 && start + 3 > i && APPROX.contains(&lw(start - 1)) && !stops(start - 1)
            {
                start -= 1;
            }
            let mut end = i;
            let mut kind = if c.starts_with(['$', '€', '£', '¥']) {
                Kind::Money
            } else if c.ends_with('%') {
                Kind::Percent
            } else {
                Kind::Number
            };
            while !stops(end) && SCALES.contains(&lw(end + 1)) {
                end += 1;
            }
            let mut unit: Option<Range<usize>> = None;
            // "75-minute", "two-hour-long", "75-minütige": a compound with a
            // time unit of any language the data covers is a duration.
            let mut time = l.split('-').skip(1).any(is_time_unit);
            // "13,000 US troops", "Two United States service members": the
            // unit after up to three capitalized words (and a lower-case
            // modifier).
            let mut caps = 0;
            while kind == Kind::Number
                && caps < 3
                && !stops(end + caps)
                && is_name_word(core(end + 1 + caps))
            {
                caps += 1;
            }
            let noun = |k: usize| {
                core(k).chars().next().is_some_and(char::is_lowercase)
                    && !laika_core::retrieval::is_stopword(lw(k))
                    && lw(k).chars().all(char::is_alphabetic)
            };
            if caps > 0 && !stops(end + caps) && noun(end + caps + 1) {
                end += caps + 1;
                if !stops(end) && noun(end + 1) && caps > 1 {
                    end += 1;
                }
                time |= is_time_unit(lw(end));
                unit = ws.get(end).map(|w| w.core.clone());
            } else if caps == 1 && stops(end + 1) {
                // "three million Palestinians.": the capitalized word that
                // ends the clause is what is counted.
                end += 1;
                unit = ws.get(end).map(|w| w.core.clone());
            }
            if !stops(end) && kind == Kind::Number && unit.is_none() {
                let next = lw(end + 1);
                if PERCENT_WORDS.contains(&next) {
                    kind = Kind::Percent;
                    end += if next == "per" { 2 } else { 1 };
                } else if CURRENCY_WORDS.contains(&next) {
                    kind = Kind::Money;
                    end += 1;
                } else if next.chars().all(char::is_alphabetic)
                    && !next.is_empty()
                    && !laika_core::retrieval::is_stopword(next)
                    && !is_capitalized(core(end + 1))
                {
                    time |= is_time_unit(next);
                    end += 1;
                    unit = ws.get(end).map(|w| w.core.clone());
                }
            }
            if let (Some(a), Some(b)) = (ws.get(start), ws.get(end)) {
                out.push(Span {
                    range: a.core.start..b.core.end,
                    kind,
                    unit,
                    time,
                    person: false,
                    age: is_age(text, &ws, &low, i, end),
                });
            }
            i = end + 1;
            continue;
        }
        if is_name_word(c) {
            let mut end = i;
            while !stops(end) && !possessive(core(end)) {
                let n = core(end + 1);
                let joined = NAME_JOINERS.contains(&lw(end + 1))
                    && !stops(end + 1)
                    && is_capitalized(core(end + 2));
                if is_name_word(n) {
                    end += 1;
                } else if joined {
                    end += 2;
                } else {
                    break;
                }
            }
            // A lone capitalized function word opening a sentence is no name.
            let first = lw(i);
            // "the New York Islanders": an opener only opens a sentence.
            let opens = i == 0 || stops(i - 1);
            let skip_first = laika_core::retrieval::is_stopword(first)
                || (opens && SENTENCE_OPENERS.contains(&first))
                || lang.is_function_word(first)
                || MONTHS.contains(&first)
                || listed(first, |w| &w.months)
                || is_weekday(first);
            let mut start = if skip_first { i + 1 } else { i };
            // "South Dakota Gov. Kristi Noem": a title ends the run before.
            let mut before_title = false;
            while end > start && PERSON_TITLES.contains(&lw(end)) {
                end -= 1;
                before_title = true;
            }
            // "CEO Adam Neumann": the title marks a person and is not part
            // of the name.
            let mut titled = start > 0 && PERSON_TITLES.contains(&lw(start - 1));
            while start < end && PERSON_TITLES.contains(&lw(start)) {
                start += 1;
                titled = true;
            }
            if start <= end {
                let names: Vec<&str> = (start..=end).map(lw).collect();
                let organization = names.iter().any(|n| is_organization_word(n))
                    || (start..=end).any(|k| {
                        let w = core(k);
                        w.chars().count() > 1
                            && w.chars().all(|c| c.is_uppercase() || !c.is_alphabetic())
                    });
                let caps = (start..=end).all(|k| {
                    let w = core(k);
                    w.chars()
                        .filter(|c| c.is_alphabetic())
                        .all(char::is_uppercase)
                });
                let person = !organization
                    && !before_title
                    && !caps
                    && (titled
                        || (end > start
                            && end - start < 4
                            && !names.iter().any(|n| NAME_JOINERS.contains(n))));
                let name_start =
                    if names.first().is_some_and(|n| PERSON_TITLES.contains(n)) && end > start {
                        start + 1
                    } else {
                        start
                    };
                push_name(&mut out, text, &ws, name_start, end, person);
                // "SciSpacE Team Leader Jennifer Ngo-Anh", "Emirates
                // President Tim Clark": the words after a title inside the
                // run are a person's name too.
                if let Some(t) = (name_start + 1..end)
                    .rev()
                    .find(|&k| PERSON_TITLES.contains(&lw(k)))
                {
                    if end - t <= 3 {
                        push_name(&mut out, text, &ws, t + 1, end, true);
                    }
                }
            }
            i = end + 1;
            continue;
        }
        if listed(l, |w| &w.place_prepositions) && !stops(i) {
            let mut end = i + 1;
            while end < ws.len() && end < i + 5 && !stops(end) {
                end += 1;
            }
            if end > i && end < ws.len() + 1 {
                let last = lw(end);
                if !last.is_empty() && !laika_core::retrieval::is_stopword(last) {
                    push(&mut out, &ws, i + 1, end, Kind::Place);
                }
            }
        }
        i += 1;
    }
    out
}

/// An age: "57-year-old", "51 years old", "aged 51", or a small bare number
/// set off by commas after a name ("Webb, 51, of …").
fn is_age(text: &str, ws: &[Word], low: &[String], start: usize, end: usize) -> bool {
    let l = |k: usize| low.get(k).map_or("", String::as_str);
    if l(start).contains("-year-old") || l(start).contains("-years-old") {
        return true;
    }
    if l(end) == "years" && l(end + 1) == "old" || start > 0 && l(start - 1) == "aged" {
        return true;
    }
    let bare = start == end && l(start).len() <= 3 && l(start).chars().all(|c| c.is_ascii_digit());
    let comma_before = start > 0
        && ws.get(start - 1).is_some_and(|w| {
            text.get(w.core.end..w.range.end)
                .is_some_and(|t| t.ends_with(','))
        });
    let comma_after = ws
        .get(start)
        .is_some_and(|w| text.get(w.core.end..w.range.end) == Some(","));
    bare && comma_before && comma_after
}

fn possessive(word: &str) -> bool {
    word.ends_with("'s") || word.ends_with("’s")
}

fn push(out: &mut Vec<Span>, ws: &[Word], start: usize, end: usize, kind: Kind) {
    if let (Some(a), Some(b)) = (ws.get(start), ws.get(end)) {
        out.push(Span {
            range: a.core.start..b.core.end,
            kind,
            unit: None,
            time: false,
            person: false,
            age: false,
        });
    }
}

fn push_name(out: &mut Vec<Span>, text: &str, ws: &[Word], start: usize, end: usize, person: bool) {
    if let (Some(a), Some(b)) = (ws.get(start), ws.get(end)) {
        let mut end = b.core.end;
        // "Omar's office": the name without its possessive.
        if let Some(t) = text.get(a.core.start..end) {
            for suffix in ["'s", "’s"] {
                if t.ends_with(suffix) {
                    end -= suffix.len();
                }
            }
        }
        out.push(Span {
            range: a.core.start..end,
            kind: Kind::Name,
            unit: None,
            time: false,
            person,
            age: false,
        });
    }
}

const PERCENT_CUES: &[&str] = &["percent", "percentage", "rate", "growth", "stake"];
const DATE_CUES: &[&str] = &["date", "when", "day", "year", "time", "deadline"];
const PERSON_CUES: &[&str] = &[
    "name",
    "who",
    "author",
    "person",
    "owner",
    "spokesman",
    "spokeswoman",
    "spokesperson",
    "president",
    "ceo",
    "chairman",
    "founder",
    "lawyer",
    "attorney",
    "defendant",
    "strategist",
    "analyst",
    "director",
    "governor",
    "manager",
    "leader",
    "head",
    "chief",
];
const PLACE_CUES: &[&str] = &[
    "where", "place", "location", "city", "country", "province", "state", "county", "venue",
    "address", "region",
];
const AMOUNT_CUES: &[&str] = &[
    "number",
    "count",
    "size",
    "amount",
    "age",
    "distance",
    "employees",
    "people",
    "troops",
    "total",
    "many",
    "much",
    "quantity",
    "nights",
    "jets",
];

/// Verbs of saying: a name that says something is someone's ("Heyward
/// said") even when one word long.
const SAYING: &[&str] = &[
    "said",
    "says",
    "told",
    "added",
    "wrote",
    "noted",
    "explained",
    "stated",
    "argued",
];

/// Whether the name `span` of `text` says something: a verb of saying right
/// after it or right before it ("said Harris").
pub fn says(text: &str, span: &Span) -> bool {
    let is_saying = |w: Option<&str>| {
        w.map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .is_some_and(|w| SAYING.contains(&w.as_str()))
    };
    let after = text.get(span.range.end..).unwrap_or("");
    let before = text.get(..span.range.start).unwrap_or("");
    // Not across a clause: "…, said Harris" yes; "Harris. Said" no.
    let after_word = after
        .strip_prefix(' ')
        .and_then(|a| a.split_whitespace().next());
    is_saying(after_word)
        || is_saying(
            before
                .strip_suffix(' ')
                .and_then(|b| b.split_whitespace().last()),
        )
}

/// Whether `word` (lower case) names a role a person holds ("lawyer",
/// "spokesman", "chief").
pub fn is_role(word: &str) -> bool {
    !matches!(word, "who" | "name" | "person")
        && (PERSON_TITLES.contains(&word) || PERSON_CUES.contains(&word))
}

/// The answer type a question asks for, from its question words first
/// (the page language's, then any language's) and its cue words second
/// ("the cost of …" asks for money).
pub fn want_of_question(question: &str, lang: &Lang) -> Want {
    let lower = questions::question_words(question);
    let ws: Vec<&str> = lower.iter().map(String::as_str).collect();
    let want = questions::asked(question, lang.code()).map_or(Want::Any, |(_, w)| w);
    let langs: Vec<&Words> = questions::with_english(lang.code()).collect();
    let has = |pick: fn(&Words) -> &Vec<String>| {
        ws.iter()
            .any(|w| langs.iter().any(|l| pick(l).iter().any(|c| c == w)))
    };
    match want {
        Want::Amount if has(|l| &l.money_cues) => Want::Money,
        Want::Any if has(|l| &l.money_cues) && (has(|l| &l.what) || has(|l| &l.which)) => {
            Want::Money
        }
        // "What prison term …", "Which doctor …": the head noun names the
        // answer's type, as it does a field's (`field_heads`).
        Want::Any => match typed_head(question, lang) {
            Some((_, head)) => head,
            // "Which drive did he lend his name to?": "which" says what is asked.
            None if has(|l| &l.which) => Want::Name,
            None if has(|l| &l.name_cues) => Want::Person,
            None => Want::Any,
        },
        w => w,
    }
}

/// The head noun of a what/which question and the answer type it names
/// by the `field_heads` data, as a field's head does ("What prison term
/// …" → "term", a duration; "Which doctor …" → a person).
pub fn typed_head(question: &str, lang: &Lang) -> Option<(String, Want)> {
    let head = what_head(question, lang.code(), |w| {
        lang.is_function_word(w) || laika_core::retrieval::is_stopword(w)
    })?;
    let (want, _) = super::fields::head_want(&head, lang.code())?;
    Some((head, want))
}

/// Units by what they measure, and the words that ask for each.
const UNIT_CLASSES: &[(&[&str], &[&str])] = &[
    (
        &[
            "distance", "far", "length", "long", "wide", "width", "tall", "height", "high", "deep",
            "depth",
        ],
        &[
            "mile",
            "miles",
            "km",
            "kilometers",
            "kilometres",
            "meters",
            "metres",
            "m",
            "feet",
            "ft",
            "foot",
            "inches",
            "yards",
        ],
    ),
    (
        &["weight", "heavy", "mass"],
        &[
            "tons",
            "tonnes",
            "kg",
            "kilograms",
            "pounds",
            "lbs",
            "grams",
            "g",
            "ounces",
        ],
    ),
    (
        &["speed", "fast", "strong", "wind", "gusts", "gust"],
        &["mph", "km/h", "kph", "knots", "kmh"],
    ),
    (
        &["temperature", "hot", "cold", "warm"],
        &["degrees", "°c", "°f", "celsius", "fahrenheit"],
    ),
];

/// Whether `word` (lower case) is a unit of measure ("pounds", "miles"):
/// a field that counts one asks for that unit, not a sum of money.
pub fn is_measure_unit(word: &str) -> bool {
    UNIT_CLASSES.iter().any(|(_, units)| units.contains(&word))
}

/// Whether a number's unit (`unit`, lower case) measures what `asking`
/// (a question or a field name, lower case) asks about: "How far …" and
/// "1,200 miles", "wind speed" and "55 mph".
pub fn unit_fits(asking: &str, unit: &str) -> bool {
    let words: Vec<&str> = asking
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    UNIT_CLASSES.iter().any(|(cues, units)| {
        words.iter().any(|w| cues.contains(w))
            && units
                .iter()
                .any(|u| unit == *u || unit.ends_with(&format!("-{u}")) || unit.ends_with(u))
    })
}

/// The words a "which …" or "how many …" question asks about ("Which
/// hospital …" → ["hospital"], "How many American soldiers died" →
/// ["american", "soldiers", "died"]), lower case, and whether the answer
/// must mention one of them ("which": yes; "how many": it helps).
pub fn asked_nouns(question: &str) -> (Vec<String>, bool) {
    let lower = question.to_lowercase();
    let ws: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // "the name of the firm …" asks for a name as "which firm" does.
    let which = ws
        .iter()
        .position(|w| *w == "which")
        .or_else(|| ws.windows(2).position(|p| p == ["name", "of"]))
        .map(|i| i + 1);
    let many = ws
        .windows(2)
        .position(|p| p == ["how", "many"])
        .map(|i| i + 2);
    let Some(at) = which.or(many) else {
        return (Vec::new(), false);
    };
    let run = ws
        .get(at..)
        .unwrap_or(&[])
        .iter()
        .skip_while(|w| laika_core::retrieval::is_stopword(w))
        .take_while(|w| !laika_core::retrieval::is_stopword(w))
        .map(|w| (*w).to_string())
        .collect();
    (run, which.is_some())
}

/// Whether `word` (lower case) names a kind of place ("city", "venue").
pub fn is_place_word(word: &str) -> bool {
    PLACE_CUES.contains(&word)
}

/// Whether `word` (lower case) names a kind of organization, place or
/// event ("firm", "hospital"): a name of that kind is not a person's.
pub fn is_organization_word(word: &str) -> bool {
    NOT_PERSON.contains(&word) || super::fields::is_organization_word(word)
}

/// The type of value a field name asks for ("share price" → money,
/// "spokesperson" → a person).
pub fn want_of_field(name: &str) -> Want {
    let lower = name.to_lowercase();
    let ws: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |cues: &[&str]| ws.iter().any(|w| cues.contains(w));
    let last = ws.last().copied().unwrap_or("");
    if DATE_CUES.contains(&last) || has(&["date", "when"]) {
        Want::Date
    } else if PERCENT_CUES.contains(&last) || has(&["percent", "percentage"]) {
        Want::Percent
    } else if ws.iter().any(|w| is_money_cue(w)) {
        Want::Money
    } else if last == "share" {
        Want::Percent
    } else if last == "age" {
        Want::Age
    } else if has(PERSON_CUES) {
        Want::Person
    } else if has(PLACE_CUES) {
        Want::Place
    } else if has(TIME_UNITS) || has(&["duration", "long", "for"]) {
        Want::Duration
    } else if has(AMOUNT_CUES) || has(&["killed", "dead", "affected", "quarantined", "injured"]) {
        Want::Amount
    } else {
        Want::Any
    }
}

/// Words of a field name that only say its type ("listing date" is found
/// by "listing"): left out of the words searched for.
pub const FIELD_TYPE_WORDS: &[&str] = &[
    "date", "time", "day", "number", "amount", "count", "size", "name", "total", "value", "rate",
    "of", "the", "a",
];

/// The head noun of a what/which question: the last word of the first
/// run of content words after its "what" or "which" ("What prison term
/// does he face?" → "term"), lower case. `skip` tells the words that are
/// not content (the page language's function words).
fn what_head(question: &str, code: &str, skip: impl Fn(&str) -> bool) -> Option<String> {
    let ws = questions::question_words(question);
    let is_what = |w: &String| {
        questions::with_english(code).any(|l| l.what.contains(w) || l.which.contains(w))
    };
    let at = ws.iter().position(is_what)?;
    let filler = |w: &str| {
        skip(w)
            || questions::with_english(code)
                .any(|l| l.is_filler(w) || l.what.iter().any(|x| x == w))
    };
    ws.get(at + 1..)?
        .iter()
        .skip_while(|w| filler(w))
        .take_while(|w| !filler(w))
        .last()
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_what_question_names_its_head_noun() {
        let none = |_: &str| false;
        assert_eq!(
            what_head("What prison term does he face?", "en", |w| w == "does").as_deref(),
            Some("term")
        );
        assert_eq!(what_head("How old is he?", "en", none), None);
    }

    fn found(text: &str, kind: Kind) -> Vec<&str> {
        spans(text, &Lang::default())
            .into_iter()
            .filter(|s| s.kind == kind)
            .filter_map(|s| text.get(s.range))
            .collect()
    }

    #[test]
    fn a_compound_with_a_time_unit_is_a_duration() {
        let durations = |text: &str, lang: &Lang| -> Vec<String> {
            spans(text, lang)
                .into_iter()
                .filter(|s| s.answers(Want::Duration) && s.kind == Kind::Number)
                .filter_map(|s| text.get(s.range).map(str::to_string))
                .collect()
        };
        let en = "The 75-minute show runs after a two-hour-long dinner for 40 guests.";
        assert_eq!(
            durations(en, &Lang::default()),
            vec!["75-minute show", "two-hour-long dinner"]
        );
        let de = "Die Gäste sitzen an 40 Tischen in der Halle, und jeden Abend läuft die 75-minütige Show.";
        let lang = Lang::detect([de]);
        assert_eq!(lang.code(), "de");
        assert_eq!(durations(de, &lang), vec!["75-minütige Show"]);
    }

    #[test]
    fn finds_numbers_money_percentages_dates_and_names() {
        let t = "Emirates President Tim Clark said on Wednesday, Dec. 9, that the $8.8 billion order for 30 jets, about 2,300 tons, rose 3.5 percent in 2019 at 6:38 p.m. in a small laundry basket.";
        assert_eq!(found(t, Kind::Money), vec!["$8.8 billion"]);
        assert_eq!(found(t, Kind::Percent), vec!["3.5 percent"]);
        assert_eq!(found(t, Kind::Number), vec!["30 jets", "about 2,300 tons"]);
        let p = "Settlers live alongside more than three million Palestinians.";
        let counted = spans(p, &Lang::default())
            .into_iter()
            .find(|s| s.kind == Kind::Number)
            .and_then(|s| p.get(s.unit?));
        assert_eq!(counted, Some("Palestinians"));
        assert_eq!(
            found(t, Kind::Date),
            vec!["Wednesday", "Wednesday, Dec. 9", "2019", "6:38 p.m."]
        );
        let names: Vec<Span> = spans(t, &Lang::default())
            .into_iter()
            .filter(|s| s.kind == Kind::Name)
            .collect();
        assert_eq!(
            t.get(names[0].range.clone()),
            Some("Emirates President Tim Clark")
        );
        assert!(found(t, Kind::Place).contains(&"a small laundry basket"));
        let t = "The Doobie Brothers played the Diplomatic Academy of Vietnam for five years and a 180-day cruise.";
        let spans = spans(t, &Lang::default());
        let academy = spans
            .iter()
            .find(|s| t.get(s.range.clone()) == Some("Diplomatic Academy of Vietnam"));
        assert!(academy.is_some_and(|s| !s.person));
        assert!(spans
            .iter()
            .any(|s| t.get(s.range.clone()) == Some("five years") && s.time));
        assert!(spans
            .iter()
            .any(|s| t.get(s.range.clone()) == Some("180-day cruise") && s.time));
    }

    #[test]
    fn a_title_inside_a_name_run_opens_a_persons_name() {
        let t = "Now the Agency's team called in ESA's Concurrent Design Facility—a multimedia facility, explains SciSpacE Team Leader Jennifer Ngo-Anh, to lift the New York Islanders.";
        let spans = spans(t, &Lang::default());
        let named = |n: &str| spans.iter().find(|s| t.get(s.range.clone()) == Some(n));
        assert!(named("Jennifer Ngo-Anh").is_some_and(|s| s.person));
        assert!(named("Concurrent Design Facility").is_some());
        assert!(named("New York Islanders").is_some());
        assert!(!spans
            .iter()
            .any(|s| t.get(s.range.clone()).is_some_and(|x| x.contains('—'))));
    }

    #[test]
    fn question_and_field_types() {
        assert_eq!(
            want_of_question("How many people lost power?", &Lang::default()),
            Want::Amount
        );
        assert_eq!(
            want_of_question("How much did the order cost?", &Lang::default()),
            Want::Money
        );
        assert_eq!(
            want_of_question("When will power be restored?", &Lang::default()),
            Want::Date
        );
        assert_eq!(
            want_of_question("Who leads the team?", &Lang::default()),
            Want::Person
        );
        assert_eq!(
            want_of_question("Wann beginnt das Konzert?", &Lang::default()),
            Want::Date
        );
        assert_eq!(
            want_of_question("¿Dónde está el museo?", &Lang::default()),
            Want::Place
        );
        assert_eq!(
            want_of_question("Why did shares fall?", &Lang::default()),
            Want::Any
        );
        assert_eq!(
            want_of_question(
                "Which child-welfare drive did Andrew lend his name to?",
                &Lang::default()
            ),
            Want::Name
        );
        assert_eq!(
            want_of_question("What is the name of the mayor?", &Lang::default()),
            Want::Person
        );
        assert_eq!(
            want_of_question(
                "How quickly must a patient get antibiotics?",
                &Lang::default()
            ),
            Want::Duration
        );
        assert_eq!(want_of_field("share price"), Want::Money);
        assert_eq!(want_of_field("listing date"), Want::Date);
        assert_eq!(want_of_field("spokesperson"), Want::Person);
        assert_eq!(want_of_field("people affected"), Want::Amount);
        assert_eq!(want_of_field("counties"), Want::Any);
        assert!(unit_fits("how far did it go", "miles"));
        assert!(unit_fits("wind speed", "mph"));
        assert!(unit_fits("distance", "1,900-mile"));
        assert!(!unit_fits("distance", "years"));
    }
}

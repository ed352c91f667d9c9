//! Words as data: what "buy", "password" or "is" look like in many
//! languages, for the Policy Gate and the secret scrubber.
//!
//! The words live in `lexicon/words.json` (with their source noted there).
//! Both the words and the text they are looked for in go through [`fold`]:
//! NFKC, lower case, look-alike Latin/Cyrillic/Greek letters folded to one,
//! invisible characters dropped, separators and camelCase humps split into
//! words. The whole text is folded, never a prefix, so padding cannot push a
//! word out of sight.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;
use unicode_script::{Script, UnicodeScript};

mod fold;

pub(crate) use fold::is_invisible;
pub use fold::{ascii_digits, fold, fold_str, Word};

const WORDS_JSON: &str = include_str!("lexicon/words.json");

/// The kinds of words the lexicon holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Clicks that buy, pay, order, delete, send, transfer, subscribe,
    /// confirm or authorize.
    Commit,
    /// Fields for passwords, PINs, codes, cards, accounts, identity papers.
    SecretField,
    /// The bare word for "code" (secret when the field is short or numeric).
    Code,
    /// Words joining a name to its value ("my password *is* …").
    Copula,
    /// Words naming a street or flat, next to a house number.
    Street,
    /// "at" and "dot" spelled out in an obfuscated email address.
    EmailAt,
    EmailDot,
    /// Labels of controls that only show, open or pick something ("Show
    /// more", "Next page", "Add to cart").
    Safe,
    /// Names of filter and sort groups ("Filter by", "Brand", "Price").
    Filter,
}

impl Category {
    const ALL: [Category; 9] = [
        Category::Commit,
        Category::SecretField,
        Category::Code,
        Category::Copula,
        Category::Street,
        Category::EmailAt,
        Category::EmailDot,
        Category::Safe,
        Category::Filter,
    ];

    fn slot(self) -> usize {
        self as usize
    }
}

#[derive(Deserialize)]
struct Language {
    /// The language's English name.
    name: String,
    commit: Vec<String>,
    secret_field: Vec<String>,
    code: Vec<String>,
    copula: Vec<String>,
    street: Vec<String>,
    #[serde(default)]
    email_at: Vec<String>,
    #[serde(default)]
    email_dot: Vec<String>,
    safe: Vec<String>,
    filter: Vec<String>,
}

#[derive(Deserialize)]
struct WordsFile {
    languages: BTreeMap<String, Language>,
    /// English names of languages the file has no words for.
    #[serde(default)]
    names: BTreeMap<String, String>,
}

/// One entry, folded.
#[derive(Debug)]
pub struct Entry {
    pub lang: String,
    /// The entry as written in the data file.
    pub text: String,
    words: Vec<String>,
    /// The first word may be the end of a longer word (`*passwort`).
    suffix: bool,
    /// The last word may be the start of a longer word (`kauf*`).
    prefix: bool,
    /// Scripts written without spaces match anywhere.
    substring: bool,
    /// The words run together, for matching glued identifiers (`cardno`).
    glued: String,
}

struct Lexicon {
    commit: Vec<Entry>,
    secret_field: Vec<Entry>,
    code: Vec<Entry>,
    copula: Vec<Entry>,
    street: Vec<Entry>,
    email_at: Vec<Entry>,
    email_dot: Vec<Entry>,
    safe: Vec<Entry>,
    filter: Vec<Entry>,
    /// Language code → English name, covered languages and others.
    names: BTreeMap<String, String>,
    /// The scripts the entries are written in.
    scripts: Vec<unicode_script::Script>,
    /// One per category, in [`Category::ALL`] order.
    indexes: Vec<Index>,
}

/// A category's automaton: every entry's first word (or, for an unspaced
/// script, its whole glued phrase) as a pattern.
struct Index {
    automaton: Option<aho_corasick::AhoCorasick>,
    /// Each pattern's entry, and whether it is a glued phrase.
    patterns: Vec<(usize, bool)>,
}

fn index_of(list: &[Entry]) -> Index {
    let mut patterns = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for (e, entry) in list.iter().enumerate() {
        let text = if entry.substring {
            Some(entry.glued.as_str())
        } else {
            entry.words.first().map(String::as_str)
        };
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            patterns.push((e, entry.substring));
            texts.push(text);
        }
    }
    Index {
        // Built from the compiled-in words; if it ever failed, `candidates`
        // falls back to trying every entry at every word.
        automaton: aho_corasick::AhoCorasick::new(texts).ok(),
        patterns,
    }
}

fn lexicon() -> &'static Lexicon {
    static LEXICON: OnceLock<Lexicon> = OnceLock::new();
    LEXICON.get_or_init(|| {
        // The file is compiled in and parsed by a test; an empty lexicon
        // only makes the gate ask more, never allow more.
        let file: WordsFile = serde_json::from_str(WORDS_JSON).unwrap_or(WordsFile {
            languages: BTreeMap::new(),
            names: BTreeMap::new(),
        });
        let mut lex = Lexicon {
            commit: Vec::new(),
            secret_field: Vec::new(),
            code: Vec::new(),
            copula: Vec::new(),
            street: Vec::new(),
            email_at: Vec::new(),
            email_dot: Vec::new(),
            safe: Vec::new(),
            filter: Vec::new(),
            names: file.names.clone(),
            scripts: Vec::new(),
            indexes: Vec::new(),
        };
        for (lang, words) in &file.languages {
            let add = |into: &mut Vec<Entry>, list: &[String]| {
                into.extend(list.iter().filter_map(|w| entry(lang, w)));
            };
            add(&mut lex.commit, &words.commit);
            add(&mut lex.secret_field, &words.secret_field);
            add(&mut lex.code, &words.code);
            add(&mut lex.copula, &words.copula);
            add(&mut lex.street, &words.street);
            add(&mut lex.email_at, &words.email_at);
            add(&mut lex.email_dot, &words.email_dot);
            add(&mut lex.safe, &words.safe);
            add(&mut lex.filter, &words.filter);
            lex.names.insert(lang.clone(), words.name.clone());
            for w in words.commit.iter().chain(&words.safe) {
                for script in w.chars().map(|c| c.script()).filter(|s| is_real_script(*s)) {
                    if !lex.scripts.contains(&script) {
                        lex.scripts.push(script);
                    }
                }
            }
        }
        lex.indexes = Category::ALL
            .iter()
            .map(|&c| index_of(category_entries(&lex, c)))
            .collect();
        lex
    })
}

fn entry(lang: &str, raw: &str) -> Option<Entry> {
    let suffix = raw.starts_with('*');
    let prefix = raw.ends_with('*');
    let words: Vec<String> = fold(raw.trim_matches('*'))
        .into_iter()
        .map(|w| w.text)
        .filter(|w| w != ":" && w != "=")
        .collect();
    if words.is_empty() {
        return None;
    }
    let substring = raw.chars().any(is_unspaced_script);
    Some(Entry {
        lang: lang.to_string(),
        text: raw.to_string(),
        glued: words.concat(),
        words,
        suffix,
        prefix,
        substring,
    })
}

fn entries(category: Category) -> &'static [Entry] {
    category_entries(lexicon(), category)
}

fn category_entries(lex: &Lexicon, category: Category) -> &[Entry] {
    match category {
        Category::Commit => &lex.commit,
        Category::SecretField => &lex.secret_field,
        Category::Code => &lex.code,
        Category::Copula => &lex.copula,
        Category::Street => &lex.street,
        Category::EmailAt => &lex.email_at,
        Category::EmailDot => &lex.email_dot,
        Category::Safe => &lex.safe,
        Category::Filter => &lex.filter,
    }
}

/// Languages the lexicon has words for.
pub fn languages() -> Vec<String> {
    serde_json::from_str::<WordsFile>(WORDS_JSON)
        .map(|f| f.languages.into_keys().collect())
        .unwrap_or_default()
}

fn is_real_script(script: Script) -> bool {
    !matches!(script, Script::Common | Script::Inherited | Script::Unknown)
}

/// Whether the lexicon has words for the language of the BCP 47 tag `tag`
/// (`pt-BR`, `zh-Hant`; `nb` and `nn` are not `no`).
pub fn covers_language(tag: &str) -> bool {
    let primary = primary_subtag(tag);
    lexicon()
        .commit
        .iter()
        .any(|e| e.lang.eq_ignore_ascii_case(&primary))
}

fn primary_subtag(tag: &str) -> String {
    tag.trim()
        .split(['-', '_'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// The English name of the language of `tag` ("Amharic"), or the tag
/// itself when the lexicon does not know it.
pub fn language_name(tag: &str) -> String {
    let primary = primary_subtag(tag);
    lexicon()
        .names
        .get(&primary)
        .cloned()
        .unwrap_or_else(|| crate::text::clip_quoted(tag, 16))
}

/// The first letter of `text` in a script none of the lexicon's languages
/// is written in, and that script's name ("Ethiopic").
pub fn unread_script(text: &str) -> Option<&'static str> {
    let scripts = &lexicon().scripts;
    text.chars()
        .filter(|c| c.is_alphabetic())
        .map(|c| c.script())
        .find(|s| is_real_script(*s) && !scripts.contains(s))
        .map(Script::full_name)
}

/// The entry of `category` the folded `text` begins with, when the label
/// is at most `max_words` words long: a short label that *is* a known
/// phrase, not one that merely mentions it.
pub fn leading(category: Category, text: &str, max_words: usize) -> Option<&'static Entry> {
    let words = fold(text);
    if words.is_empty() || words.len() > max_words {
        return None;
    }
    let glued: String = words.iter().map(|w| w.text.as_str()).collect();
    entries(category).iter().find(|e| {
        if e.substring {
            glued.starts_with(&e.glued)
        } else {
            hit_at(e, &words, 0).is_some()
        }
    })
}

/// Han, kana, Hangul and Thai: written without spaces between words (or, in
/// Korean, with particles glued to them).
fn is_unspaced_script(c: char) -> bool {
    matches!(u32::from(c),
        0x0E00..=0x0E7F | 0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// Where an entry was found: its index range among the words.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'e> {
    pub entry: &'e Entry,
    /// The word where the entry ends.
    pub last_word: usize,
    /// For entries of unspaced scripts: the byte offset just past the match
    /// inside that word.
    pub end_in_word: Option<usize>,
}

fn word_matches(entry: &Entry, k: usize, word: &str) -> bool {
    let Some(want) = entry.words.get(k) else {
        return false;
    };
    let first = k == 0 && entry.suffix;
    let last = k + 1 == entry.words.len() && entry.prefix;
    match (first, last) {
        (true, true) => word.contains(want.as_str()),
        (true, false) => word.ends_with(want.as_str()),
        (false, true) => word.starts_with(want.as_str()),
        (false, false) => word == want,
    }
}

/// Whether `entry` occurs at word `i` of the folded `words`.
fn hit_at<'e>(entry: &'e Entry, words: &[Word], i: usize) -> Option<Hit<'e>> {
    let n = entry.words.len();
    if entry.substring {
        // A phrase of an unspaced script may still be written with
        // spaces ("바로 구매"): look in the word glued to the next.
        let word = words.get(i)?;
        if let Some(at) = word.text.find(&entry.glued) {
            return Some(Hit {
                entry,
                last_word: i,
                end_in_word: Some(at + entry.glued.len()),
            });
        }
        let next = words.get(i + 1)?;
        let joined = format!("{}{}", word.text, next.text);
        let at = joined.find(&entry.glued)?;
        let end = at + entry.glued.len();
        return (end > word.text.len()).then(|| Hit {
            entry,
            last_word: i + 1,
            end_in_word: Some(end - word.text.len()),
        });
    }
    let all = (0..n).all(|k| {
        words
            .get(i + k)
            .is_some_and(|w| word_matches(entry, k, &w.text))
    });
    all.then_some(Hit {
        entry,
        last_word: i + n - 1,
        end_in_word: None,
    })
}

/// Every place an entry of `category` occurs in the folded `words`, entry
/// by entry, in word order.
fn hits(category: Category, words: &[Word]) -> impl Iterator<Item = Hit<'static>> + '_ {
    let list = entries(category);
    candidates(category, words)
        .into_iter()
        .filter_map(move |(e, i)| hit_at(list.get(e)?, words, i))
}

/// The (entry, word) pairs where an entry of `category` may occur: every
/// word that holds an entry's first word, found by one pass of the
/// category's automaton over the words, so the cost grows with the text,
/// not with text × entries. Every real hit is among them; [`hit_at`]
/// decides.
fn candidates(category: Category, words: &[Word]) -> Vec<(usize, usize)> {
    let index = &lexicon().indexes[category.slot()];
    let Some(automaton) = &index.automaton else {
        let n = entries(category).len();
        return (0..n)
            .flat_map(|e| (0..words.len()).map(move |i| (e, i)))
            .collect();
    };
    let mut glued = String::new();
    let mut starts = Vec::with_capacity(words.len());
    for w in words {
        starts.push(glued.len());
        glued.push_str(&w.text);
    }
    let word_of = |at: usize| starts.partition_point(|&s| s <= at).saturating_sub(1);
    let mut out = Vec::new();
    for m in automaton.find_overlapping_iter(&glued) {
        let Some(&(entry, substring)) = index.patterns.get(m.pattern().as_usize()) else {
            continue;
        };
        let (first, last) = (word_of(m.start()), word_of(m.end().saturating_sub(1)));
        if last == first {
            out.push((entry, first));
            // A glued phrase inside a word is found from the word before too.
            if substring && first > 0 {
                out.push((entry, first - 1));
            }
        } else if substring && last == first + 1 {
            out.push((entry, first));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Spaced-out letters ("B U Y  N O W") glued back into words.
fn glue_single_letters(words: &[Word], original: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut run: Option<Word> = None;
    for w in words {
        if w.is_one_letter() {
            match &mut run {
                Some(r) => r.glue(w, original),
                None => run = Some(w.clone()),
            }
            continue;
        }
        out.extend(run.take());
        out.push(w.clone());
    }
    out.extend(run);
    out
}

/// The first entry of `category` found in `text` (visible text: whole
/// words only).
pub fn find(category: Category, text: &str) -> Option<&'static Entry> {
    let words = fold(text);
    if let Some(hit) = hits(category, &words).next() {
        return Some(hit.entry);
    }
    let glued = glue_single_letters(&words, text);
    let hit = hits(category, &glued).next();
    hit.map(|h| h.entry)
}

/// [`find`] in `text` and in its readings with look-alike capitals as
/// Latin letters ([`fold::capitals_as_latin`]) and digits inside words as
/// letters ([`fold::digits_as_letters`]): for labels, where a missed word
/// lets a click through.
pub fn find_label(category: Category, text: &str) -> Option<&'static Entry> {
    find(category, text)
        // Mixed case ("dElEtE") would be split at its humps.
        .or_else(|| find(category, &text.to_lowercase()))
        .or_else(|| find(category, &fold::capitals_as_latin(text)?))
        .or_else(|| {
            fold::digits_as_letters(text)
                .iter()
                .find_map(|t| find(category, t).or_else(|| find(category, &t.to_lowercase())))
        })
}

/// Like [`find`], for identifiers (`name`, `id`): also finds longer
/// entries run together (`cardno`, `placeorder`).
pub fn find_in_identifier(category: Category, text: &str) -> Option<&'static Entry> {
    if let Some(entry) = find(category, text) {
        return Some(entry);
    }
    let glued: String = fold(text).into_iter().map(|w| w.text).collect();
    entries(category)
        .iter()
        .find(|e| e.glued.chars().count() >= 6 && glued.contains(&e.glued))
}

/// Is the folded `word` a one-word entry of `category`?
pub fn is_word(category: Category, word: &str) -> bool {
    entries(category).iter().any(|e| match e.words.as_slice() {
        [only] => word_matches(e, 0, word) || (e.substring && word.contains(only.as_str())),
        _ => false,
    })
}

/// Is `word` a copula of any language?
fn is_copula(word: &str) -> bool {
    word == ":"
        || word == "="
        || entries(Category::Copula)
            .iter()
            .any(|e| e.words.len() == 1 && e.words.first().is_some_and(|c| c == word))
}

/// Strips a glued copula (`是`, `는`, `は`) from the front of `rest`.
fn strip_copula(rest: &str) -> (&str, bool) {
    for e in entries(Category::Copula) {
        if let Some(after) = rest.strip_prefix(e.glued.as_str()) {
            if e.substring || after.is_empty() {
                return (after, true);
            }
        }
    }
    (rest, false)
}

/// A value that looks like a password rather than a word: long enough, and
/// with a digit or a symbol in it (or anything at all after `:`/`=`).
fn secret_like(raw: &str, strong_link: bool) -> bool {
    let n = raw.chars().count();
    if !(4..=128).contains(&n) {
        return false;
    }
    let digit = raw.chars().any(|c| c.is_numeric());
    let symbol = raw
        .chars()
        .any(|c| !c.is_alphanumeric() && !c.is_whitespace());
    let mixed = raw.chars().any(char::is_uppercase) && raw.chars().skip(1).any(char::is_lowercase);
    strong_link || digit || symbol || (mixed && n >= 8)
}

/// The raw token of `text` starting at byte `from`: up to the next
/// whitespace, without trailing sentence punctuation.
fn token_at(text: &str, from: usize) -> Option<Range<usize>> {
    let rest = text.get(from..)?;
    let skipped = rest.len() - rest.trim_start().len();
    let start = from + skipped;
    let tail = text.get(start..)?;
    let len = tail.find(char::is_whitespace).unwrap_or(tail.len());
    let token = tail.get(..len)?;
    let trimmed = token.trim_end_matches(['"', '\'', ')', '。', '，']);
    let trimmed = trimmed.trim_start_matches(['"', '\'', '(', '「', '“']);
    let lead = token.len() - token.trim_start_matches(['"', '\'', '(', '「', '“']).len();
    (!trimmed.is_empty()).then(|| start + lead..start + lead + trimmed.len())
}

/// "my password is hunter2", "PIN: 4711", "我的密码是abc123": the byte
/// ranges of the disclosed values in `text`.
pub fn disclosures(text: &str) -> Vec<Range<usize>> {
    let words = fold(text);
    let mut out = Vec::new();
    for hit in hits(Category::SecretField, &words) {
        let Some(word) = words.get(hit.last_word) else {
            continue;
        };
        // The rest of an unspaced word after the entry: "是abc123".
        if let Some(end) = hit.end_in_word {
            let rest = word.text.get(end..).unwrap_or("");
            let (value, linked) = strip_copula(rest);
            if !value.is_empty() {
                if let Some(range) = locate(text, word, value) {
                    if secret_like(text.get(range.clone()).unwrap_or(""), linked) {
                        out.push(range);
                    }
                }
                continue;
            }
            if linked {
                push_next(text, &words, hit.last_word + 1, true, &mut out);
                continue;
            }
        }
        let mut next = hit.last_word + 1;
        let mut linked = false;
        while words.get(next).is_some_and(|w| is_copula(&w.text)) && next <= hit.last_word + 2 {
            linked = true;
            next += 1;
        }
        push_next(text, &words, next, linked, &mut out);
    }
    out.sort_by_key(|r| r.start);
    out.dedup();
    out
}

fn push_next(text: &str, words: &[Word], index: usize, linked: bool, out: &mut Vec<Range<usize>>) {
    let Some(range) = words.get(index).and_then(|w| token_at(text, w.span.start)) else {
        return;
    };
    let raw = text.get(range.clone()).unwrap_or("");
    let assigned = index
        .checked_sub(1)
        .and_then(|i| words.get(i))
        .is_some_and(|p| p.text == ":" || p.text == "=");
    // Without a linking word only a value with a digit counts ("PIN 4711"),
    // so "password manager" stays a topic.
    let disclosed = if linked {
        secret_like(raw, assigned)
    } else {
        raw.chars().any(char::is_numeric) && secret_like(raw, false)
    };
    if disclosed {
        out.push(range);
    }
}

/// Where the folded `value` (the tail of the folded `word`) starts in the
/// original text: the origin of its first folded character.
fn locate(text: &str, word: &Word, value: &str) -> Option<Range<usize>> {
    let n = value.chars().count();
    let at = word.text.chars().count().checked_sub(n)?;
    token_at(text, word.origin(text, at)?)
}

#[cfg(test)]
mod tests;

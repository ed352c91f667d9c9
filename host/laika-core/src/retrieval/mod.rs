//! Retrieval over page text: segmentation into units (headings, list items,
//! quotes, sentences, code), tokenization, stemming per page language
//! (`lang`), the question words a query drops or widens (`questions`), and
//! BM25 for questions; the index also tells chrome lines ("Subscribe …")
//! apart. Shared by the offline `builtin` runtime (whose summaries rank
//! sentences over this index), the packer's passage selection (`select`),
//! collections and transforms.
//!
//! Invariants:
//! - Every unit's text is an exact slice of the field it came from (after the
//!   line's structure prefix is stripped), so a unit can be quoted as a
//!   citation and will match the document verbatim.
//! - Everything is deterministic: term ids are assigned in order of first
//!   appearance, no hash-map iteration order reaches a result, and ties are
//!   broken by unit position.
//! - Work is linear in the input: one pass to segment, one to index, one to
//!   score. Near-duplicate checks only run among the few units already chosen.
//!   Input beyond [`MAX_TEXT_BYTES`] is ignored so hostile pages stay cheap.

pub mod lang;
pub mod questions;

use laika_protocol::llmcp::Document;
use laika_protocol::observation::{CHUNK_DOC_TYPE, MAX_HANDLE_LEN, SUMMARY_DOC_TYPE};
use lang::Lang;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::Range;

/// Total text (over all fields) a [`Page`] takes in; the rest is ignored.
pub const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;
/// A sentence longer than this is cut into pieces of at most [`PIECE_BYTES`],
/// so one run-on line cannot become a giant quote.
const MAX_UNIT_BYTES: usize = 600;
const PIECE_BYTES: usize = 400;
/// `primary.text` shorter than this is not trusted to be the main content.
const MIN_PRIMARY_BYTES: usize = 200;

const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// What a line or unit is, from the observation's structure prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `H1:`..`H6:`, with its level.
    Heading(u8),
    /// `- ` (or `• `), with its nesting depth (two spaces of indent per level).
    ListItem(u8),
    /// `> `.
    Quote,
    /// Plain paragraph text.
    Sentence,
    /// `Code:`.
    Code,
    /// `Summary:`.
    Summary,
    /// `Caption:`.
    Caption,
    /// `Term:`.
    Term,
    /// `Definition:`.
    Definition,
}

impl Kind {
    /// Running text that can stand as a summary point.
    pub fn is_prose(self) -> bool {
        matches!(
            self,
            Kind::Sentence
                | Kind::ListItem(_)
                | Kind::Quote
                | Kind::Summary
                | Kind::Caption
                | Kind::Definition
        )
    }

    /// Kinds whose line is kept whole instead of split into sentences.
    fn is_atomic(self) -> bool {
        matches!(self, Kind::Heading(_) | Kind::Code | Kind::Term)
    }
}

/// Decodes one line's structure prefix. Returns the kind and the rest of the
/// line, trimmed; the rest is a slice of `line`.
pub fn parse_line(line: &str) -> (Kind, &str) {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    let b = t.as_bytes();
    if let (Some(b'H'), Some(d @ b'1'..=b'6'), Some(b':')) = (b.first(), b.get(1), b.get(2)) {
        return (Kind::Heading(d - b'0'), t.get(3..).unwrap_or("").trim());
    }
    let depth = u8::try_from((indent / 2).min(8)).unwrap_or(8);
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("• ")) {
        return (Kind::ListItem(depth), rest.trim());
    }
    if let Some(rest) = t.strip_prefix('>') {
        return (Kind::Quote, rest.trim());
    }
    const PREFIXES: [(&str, Kind); 5] = [
        ("Code:", Kind::Code),
        ("Summary:", Kind::Summary),
        ("Caption:", Kind::Caption),
        ("Term:", Kind::Term),
        ("Definition:", Kind::Definition),
    ];
    for (prefix, kind) in PREFIXES {
        if let Some(rest) = t.strip_prefix(prefix) {
            return (kind, rest.trim());
        }
    }
    (Kind::Sentence, t.trim())
}

/// Words after which a period does not end a sentence (lower case, without
/// the final period).
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "inc", "ltd", "co", "corp", "jan",
    "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "no", "fig",
    "approx", "dept", "est", "gen", "gov", "sen", "rep", "mt", "ft", "vol", "al", "cf", "e.g",
    "i.e", "a.m", "p.m", "u.s", "u.k", "ph.d",
];

/// Closing quotes and brackets that may follow a sentence's final mark.
pub const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»'];

/// Whether a period at the end of `word` is part of the word rather than the
/// end of a sentence.
fn period_is_abbreviation(word: &str, sentence_so_far: &str) -> bool {
    let w = word.trim_start_matches(['(', '[', '"', '\'', '“', '‘', '«']);
    let lower = w.to_lowercase();
    if ABBREVIATIONS.contains(&lower.as_str()) {
        return true;
    }
    let mut chars = w.chars();
    // An initial: "J. R. R. Tolkien".
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true;
        }
    }
    // Dotted short segments: "U.S", "e.g", "Ph.D".
    if w.contains('.')
        && w.split('.').all(|s| {
            let n = s.chars().count();
            (1..=2).contains(&n) && s.chars().all(char::is_alphabetic)
        })
    {
        return true;
    }
    // "1." opening a numbered line is a list marker, not a sentence.
    !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) && sentence_so_far.trim() == w
}

/// Splits a line of prose into sentences. Returns byte ranges into `text`,
/// trimmed, non-empty, in order. Does not break on abbreviations ("e.g.",
/// "Dr.", "U.S."), initials, decimals, URLs, or an ellipsis followed by lower
/// case; CJK full stops always end a sentence.
pub fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let mut cuts: Vec<usize> = Vec::new();
    let mut start = 0usize;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let cjk_stop = matches!(c, '。' | '！' | '？');
        if !cjk_stop && !matches!(c, '.' | '!' | '?' | '…') {
            continue;
        }
        // Take the whole run of terminators and closing quotes.
        let mut end = i + c.len_utf8();
        let mut run_is_single_period = c == '.';
        while let Some(&(j, n)) = iter.peek() {
            if matches!(n, '.' | '!' | '?' | '…') || CLOSERS.contains(&n) {
                if matches!(n, '.' | '!' | '?' | '…') {
                    run_is_single_period = false;
                }
                end = j + n.len_utf8();
                iter.next();
            } else {
                break;
            }
        }
        if !cjk_stop {
            let rest = text.get(end..).unwrap_or("");
            if !rest.starts_with(char::is_whitespace) {
                continue;
            }
            match rest.trim_start().chars().next() {
                None => continue,
                Some(n) if n.is_lowercase() || matches!(n, ',' | ';' | ':') => continue,
                Some(_) => {}
            }
            if run_is_single_period {
                let before = text.get(start..i).unwrap_or("");
                let word = before.rsplit(char::is_whitespace).next().unwrap_or("");
                if period_is_abbreviation(word, before) || ordinal_date(word, rest) {
                    continue;
                }
            }
        }
        cuts.push(end);
        start = end;
    }
    cuts.push(text.len());

    let mut out: Vec<Range<usize>> = Vec::new();
    let mut from = 0usize;
    for cut in cuts {
        let piece = text.get(from..cut).unwrap_or("");
        let lead = piece.len() - piece.trim_start().len();
        let range = (from + lead)..(from + piece.trim_end().len());
        from = cut;
        if range.is_empty() {
            continue;
        }
        let has_word = text
            .get(range.clone())
            .is_some_and(|s| s.chars().any(char::is_alphanumeric));
        match out.last_mut() {
            // A stray "..." or "!!" belongs to the sentence before it.
            Some(prev) if !has_word => prev.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

/// "12. März", "1. Mai", "12. bis 13. September": a day number's period
/// before a month name (in any language), or before a range of days that
/// ends in one, ends no sentence.
fn ordinal_date(word: &str, rest: &str) -> bool {
    if word.is_empty() || word.len() > 2 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let word_at = |w: &str| {
        w.trim_end_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let next: Vec<String> = rest.split_whitespace().take(3).map(word_at).collect();
    let day = |w: &String| (1..=2).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_digit());
    match next.as_slice() {
        [m, ..] if questions::is_month(m) => true,
        // "12. bis 13. September", "12. – 13. März": a short joiner, the
        // range's last day, its month.
        [joiner, d, m] => joiner.chars().count() <= 5 && day(d) && questions::is_month(m),
        _ => false,
    }
}

/// Cuts ranges longer than [`MAX_UNIT_BYTES`] into pieces of at most
/// [`PIECE_BYTES`], at whitespace when there is any, else at a char boundary.
fn cap_ranges(text: &str, ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        if r.len() <= MAX_UNIT_BYTES {
            out.push(r);
            continue;
        }
        let mut s = r.start;
        while s < r.end {
            let mut e = (s + PIECE_BYTES).min(r.end);
            while e < r.end && !text.is_char_boundary(e) {
                e -= 1;
            }
            if e < r.end {
                if let Some(ws) = text.get(s..e).and_then(|p| p.rfind(char::is_whitespace)) {
                    if ws > 0 {
                        e = s + ws;
                    }
                }
            }
            if e <= s {
                // Only reachable if a single char is wider than a piece.
                break;
            }
            let piece = text.get(s..e).unwrap_or("");
            let lead = piece.len() - piece.trim_start().len();
            let trimmed = (s + lead)..(s + piece.trim_end().len());
            if !trimmed.is_empty() {
                out.push(trimmed);
            }
            s = e;
        }
    }
    out
}

const STOPWORDS: &[&str] = &[
    "a", "about", "again", "all", "also", "am", "an", "and", "any", "are", "arent", "as", "at",
    "be", "been", "being", "both", "but", "by", "can", "cant", "could", "did", "didnt", "do",
    "does", "doesnt", "doing", "done", "dont", "each", "else", "few", "for", "from", "further",
    "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "im",
    "in", "into", "is", "isnt", "it", "its", "ive", "just", "may", "me", "might", "more", "most",
    "must", "my", "no", "nor", "not", "of", "off", "on", "once", "only", "onto", "or", "other",
    "our", "out", "over", "own", "per", "same", "shall", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "theyre", "this",
    "those", "to", "too", "under", "up", "us", "very", "via", "was", "wasnt", "we", "were", "what",
    "when", "where", "which", "who", "whom", "whose", "why", "will", "with", "wont", "would",
    "yes", "you", "your", "youre",
    // Japanese and Chinese "what" and "who", single characters.
    "何", "誰", "谁",
];

/// Words that only frame a question ("what does the page say about …").
pub(crate) const QUESTION_FILLER: &[&str] = &[
    "page",
    "article",
    "site",
    "website",
    "say",
    "says",
    "said",
    "tell",
    "mention",
    "mentions",
    "mentioned",
    "explain",
    "describe",
    "please",
    "know",
    "anything",
    "something",
    "thing",
    // The answer type's own words ("how many", "how old").
    "many",
    "much",
    "old",
    "far",
    "long",
    "big",
];

pub fn is_stopword(word: &str) -> bool {
    // Asked once per token of the page: a hash set beats a binary search.
    static SET: std::sync::OnceLock<FxHashSet<&'static str>> = std::sync::OnceLock::new();
    SET.get_or_init(|| STOPWORDS.iter().copied().collect())
        .contains(word)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK Extension A
        | 0x4E00..=0x9FFF // CJK Unified Ideographs
        | 0xF900..=0xFAFF // CJK Compatibility Ideographs
        | 0x20000..=0x2FFFF)
}

/// The number of words in `text`: whitespace-separated words, with a run of
/// CJK characters (written without spaces) counted as one word per two
/// characters, about the length of a Japanese or Chinese word.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| {
            // Most words are ASCII: no CJK to count.
            if w.is_ascii() {
                return 1;
            }
            let cjk = w.chars().filter(|&c| is_cjk(c)).count();
            if cjk == 0 {
                1
            } else {
                (cjk / 2).max(1) + usize::from(w.chars().any(|c| c.is_ascii_alphanumeric()))
            }
        })
        .sum()
}

/// Which CJK script a character is in: runs of one script are one word or
/// compound (a katakana loanword, a kanji compound); hiragana runs are
/// mostly particles and endings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Hiragana,
    Katakana,
    Han,
}

fn script(c: char) -> Script {
    match c as u32 {
        0x3040..=0x309F => Script::Hiragana,
        0x30A0..=0x30FF => Script::Katakana,
        _ => Script::Han,
    }
}

/// Hands `f` the tokens of a run of CJK characters of one script: a
/// katakana run whole, a kanji run as overlapping character pairs (one
/// character alone), hiragana not at all. Pairs match compounds across
/// word boundaries the text does not mark.
fn cjk_tokens(run: &str, s: Script, f: &mut impl FnMut(&str)) {
    match s {
        Script::Hiragana => {}
        Script::Katakana => f(run),
        Script::Han => {
            let idx: Vec<usize> = run.char_indices().map(|(i, _)| i).collect();
            if idx.len() == 1 {
                if !is_stopword(run) {
                    f(run);
                }
                return;
            }
            for w in idx.windows(3) {
                if let (Some(&a), Some(&b)) = (w.first(), w.get(2)) {
                    f(run.get(a..b).unwrap_or(""));
                }
            }
            if let Some(&a) = idx.get(idx.len().saturating_sub(2)) {
                f(run.get(a..).unwrap_or(""));
            }
        }
    }
}

/// Ends the current word: drops stopwords and one-letter words and hands
/// the rest to `f` (unstemmed: the [`Index`] stems for the page's language).
fn finish_token(word: &mut String, f: &mut impl FnMut(&str)) {
    if word.is_empty() {
        return;
    }
    let numeric = word.bytes().any(|b| b.is_ascii_digit());
    if (numeric || word.chars().nth(1).is_some()) && !is_stopword(word) {
        f(word);
    }
    word.clear();
}

/// Calls `f` with each lower-cased content word of `text`, in
/// order, reusing one buffer (no allocation per token). Splits on anything
/// that is not alphanumeric, except a `.` or `,` between digits ("3.5") and
/// an apostrophe inside a word ("page's" → "pages" → "page"). CJK text,
/// which does not separate words with spaces, is cut into runs of one
/// script (see [`cjk_tokens`]).
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut cjk = String::new();
    let mut cjk_script = Script::Han;
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_cjk(c) {
            finish_token(&mut word, &mut f);
            let s = script(c);
            if s != cjk_script && !cjk.is_empty() {
                cjk_tokens(&cjk, cjk_script, &mut f);
                cjk.clear();
            }
            cjk_script = s;
            cjk.push(c);
            prev = Some(c);
            continue;
        }
        if !cjk.is_empty() {
            cjk_tokens(&cjk, cjk_script, &mut f);
            cjk.clear();
        }
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            let next = chars.peek().copied();
            let joins_number = matches!(c, '.' | ',')
                && prev.is_some_and(|p| p.is_ascii_digit())
                && next.is_some_and(|n| n.is_ascii_digit())
                && !word.is_empty();
            let joins_word = matches!(c, '\'' | '’')
                && prev.is_some_and(char::is_alphabetic)
                && next.is_some_and(char::is_alphabetic);
            if joins_number {
                word.push(c);
            } else if !joins_word {
                // A joining apostrophe is dropped: "don't" → "dont", a stopword.
                finish_token(&mut word, &mut f);
            }
        }
        prev = Some(c);
    }
    if !cjk.is_empty() {
        cjk_tokens(&cjk, cjk_script, &mut f);
    }
    finish_token(&mut word, &mut f);
}

/// [`for_each_token`], collected.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// Where a unit came from: the document, the field inside its content, and
/// the element handle for primary, item and comment text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub doc_id: String,
    /// `text`, `primary.text`, `items[3].snippet`, `comments[0].text`, …
    pub field: String,
    pub handle_id: Option<String>,
}

/// One line of a field, with its structure prefix stripped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Index into [`Page::sources`].
    pub source: usize,
    pub kind: Kind,
    /// The exact line text after the prefix, trimmed.
    pub text: String,
}

/// A rankable piece of a block: a heading, a list item's sentence, a code
/// line, a paragraph sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Index into [`Page::blocks`].
    pub block: usize,
    /// Byte range of the unit inside its block's text.
    pub range: Range<usize>,
    pub kind: Kind,
}

/// Which fields of the observation to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The main content, for summaries: `primary.text` when it is substantial,
    /// else `text`; then the chunks.
    Main,
    /// Everything readable, for answers and extraction: primary, text, items,
    /// comments, chunks.
    All,
}

/// The segmented text of a page. Units repeated verbatim (after whitespace and
/// case folding) are kept once, at their first position.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The page title from the first summary document (not itself a unit).
    pub title: String,
    pub sources: Vec<Source>,
    pub blocks: Vec<Block>,
    pub units: Vec<Unit>,
    /// Keys are already FNV hashes: no need to hash them again with SipHash.
    seen: FxHashSet<u64>,
    bytes: usize,
}

/// A 64-bit FNV-1a hash of `text` with whitespace runs collapsed and case
/// folded: the key for dropping repeated units without keeping copies.
fn dedupe_key(text: &str) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |c: char| {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(PRIME);
        }
    };
    let text = text.trim();
    let mut gap = false;
    if text.is_ascii() {
        // Most web text: hash bytes directly, no char decoding.
        for b in text.bytes() {
            if char::from(b).is_whitespace() {
                gap = true;
                continue;
            }
            if gap {
                hash = (hash ^ u64::from(b' ')).wrapping_mul(PRIME);
                gap = false;
            }
            hash = (hash ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(PRIME);
        }
        return hash;
    }
    for c in text.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap {
            eat(' ');
            gap = false;
        }
        if c.is_ascii() {
            eat(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut eat);
        }
    }
    hash
}

fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn handle_at(value: &Value) -> Option<String> {
    value
        .get("handle_id")
        .and_then(Value::as_str)
        .filter(|h| !h.is_empty() && h.len() <= MAX_HANDLE_LEN)
        .map(str::to_string)
}

impl Page {
    /// Segments `text` and appends its blocks and (new) units.
    pub fn add_text(&mut self, source: Source, text: &str) {
        let room = MAX_TEXT_BYTES.saturating_sub(self.bytes);
        let text = crate::text::prefix_bytes(text, room);
        if text.trim().is_empty() {
            return;
        }
        self.bytes += text.len();
        let src = self.sources.len();
        self.sources.push(source);
        for line in text.split(['\n', '\r']) {
            let (kind, body) = parse_line(line);
            if body.is_empty() {
                continue;
            }
            let ranges = if kind.is_atomic() {
                std::iter::once(0..body.len()).collect()
            } else {
                split_sentences(body)
            };
            let block = self.blocks.len();
            for range in cap_ranges(body, ranges) {
                let Some(unit_text) = body.get(range.clone()) else {
                    continue;
                };
                if self.seen.insert(dedupe_key(unit_text)) {
                    self.units.push(Unit { block, range, kind });
                }
            }
            self.blocks.push(Block {
                source: src,
                kind,
                text: body.to_string(),
            });
        }
    }

    /// Builds a page from the request's context documents. Summary documents
    /// are read per `scope`; chunk documents (and any other document with a
    /// `text` string) always contribute their text.
    pub fn from_documents(documents: &[Document], scope: Scope) -> Page {
        let mut page = Page::default();
        for doc in documents {
            let c = &doc.content;
            let doc_type = c
                .get("doc_type")
                .and_then(Value::as_str)
                .unwrap_or(doc.kind.as_str());
            let src = |field: &str, handle_id: Option<String>| Source {
                doc_id: doc.doc_id.clone(),
                field: field.to_string(),
                handle_id,
            };
            if doc_type == SUMMARY_DOC_TYPE {
                if page.title.is_empty() {
                    page.title = str_at(c, "title").trim().to_string();
                }
                let primary = c.get("primary").unwrap_or(&Value::Null);
                let primary_text = str_at(primary, "text");
                let text = str_at(c, "text");
                let primary_src = || src("primary.text", handle_at(primary));
                match scope {
                    Scope::Main => {
                        let substantial = primary_text.trim().len() >= MIN_PRIMARY_BYTES;
                        if substantial || text.trim().is_empty() {
                            page.add_text(primary_src(), primary_text);
                        } else {
                            page.add_text(src("text", None), text);
                        }
                    }
                    Scope::All => {
                        page.add_text(primary_src(), primary_text);
                        page.add_text(src("text", None), text);
                        page.add_list(doc, c, "items", &["title", "snippet"]);
                        page.add_list(doc, c, "comments", &["text"]);
                    }
                }
            } else if doc_type == CHUNK_DOC_TYPE || c.get("text").is_some_and(Value::is_string) {
                page.add_text(src("text", None), str_at(c, "text"));
            }
        }
        page
    }

    fn add_list(&mut self, doc: &Document, content: &Value, list: &str, fields: &[&str]) {
        let Some(entries) = content.get(list).and_then(Value::as_array) else {
            return;
        };
        for (i, entry) in entries.iter().enumerate() {
            for field in fields {
                let source = Source {
                    doc_id: doc.doc_id.clone(),
                    field: format!("{list}[{i}].{field}"),
                    handle_id: handle_at(entry),
                };
                self.add_text(source, str_at(entry, field));
            }
        }
    }

    /// The exact text of unit `i` ("" if out of range).
    pub fn unit_text(&self, i: usize) -> &str {
        self.units
            .get(i)
            .and_then(|u| self.blocks.get(u.block)?.text.get(u.range.clone()))
            .unwrap_or("")
    }

    pub fn unit_source(&self, i: usize) -> Option<&Source> {
        let unit = self.units.get(i)?;
        self.block_source(unit.block)
    }

    pub fn block_source(&self, block: usize) -> Option<&Source> {
        self.sources.get(self.blocks.get(block)?.source)
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}

/// A unit and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub unit: usize,
    pub score: f64,
}

/// Sorts by score, best first; ties by unit position.
pub fn best_first(scored: &mut [Scored]) {
    scored.sort_by(|a, b| match b.score.total_cmp(&a.score) {
        Ordering::Equal => a.unit.cmp(&b.unit),
        other => other,
    });
}

/// An inverted index over a page's units, with terms stemmed for the page's
/// language.
#[derive(Debug, Default)]
pub struct Index {
    /// Fx hashing: the vocabulary is looked up once per token of the page,
    /// and SipHash's DoS resistance buys nothing for one page's own words.
    vocab: FxHashMap<String, u32>,
    /// Raw (lower-case, unstemmed) word → term id: each distinct word is
    /// stemmed once, not once per occurrence.
    raw: FxHashMap<String, u32>,
    lang: Lang,
    /// Per unit: (term id, term frequency), sorted by term id.
    unit_terms: Vec<Vec<(u32, u32)>>,
    unit_len: Vec<u32>,
    /// Per term: (unit, term frequency), by unit.
    postings: Vec<Vec<(u32, u32)>>,
    avg_len: f64,
    chrome: Chrome,
}

/// One slot of a question: the page terms that stand for it (the word's
/// stem, its synonyms, an acronym's expansion), and its idf.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    ids: Vec<u32>,
    idf: f64,
    /// The question's word, lower case.
    word: String,
    /// The page's title has it: the page is about it, so a sentence need
    /// not repeat it.
    topic: bool,
    /// Capitalized inside the question ("… was Pouncey suspended"): it
    /// names who or what the question is about.
    named: bool,
}

/// A query prepared against an [`Index`]: each distinct question word with
/// the page terms that match it and its BM25 idf.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    terms: Vec<Slot>,
}

impl Query {
    /// True when the question has no content words at all.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Marks the question words that `title` (the page's) has.
    pub fn mark_topic(&mut self, index: &Index, title: &str) {
        let ids: Vec<u32> = tokenize(title)
            .iter()
            .filter_map(|t| index.term(t))
            .collect();
        for slot in &mut self.terms {
            slot.topic = slot.ids.iter().any(|id| ids.contains(id));
        }
    }

    /// Whether `units` hold one of the question's words that the page's
    /// title does not (what it asks beyond the page's topic), or the
    /// question has no such word. With `strict`, a word the page never
    /// uses counts too, as absent: "Who won …" is not tied to a page that
    /// says no one won; an amount's question may carry words ("still")
    /// the page has no need of.
    pub fn is_tied(&self, index: &Index, units: &[usize], strict: bool) -> bool {
        let here = |s: &&Slot| {
            s.ids
                .iter()
                .any(|&id| units.iter().any(|&u| index.has_term(u, id)))
        };
        // "Who won the Davis Cup final?": a person is the answer only where
        // what the question names is said (unless the page is about it).
        let mut named = self
            .terms
            .iter()
            .filter(|s| s.named && !s.topic && !s.ids.is_empty())
            .peekable();
        if strict && named.peek().is_some() && !named.any(|s| here(&s)) {
            return false;
        }
        let mut anchors = self
            .terms
            .iter()
            .filter(|s| !s.topic && (strict || !s.ids.is_empty()))
            .peekable();
        anchors.peek().is_none() || anchors.any(|s| here(&s))
    }

    /// The page terms of the names the question is about (its capitalized
    /// words after the first).
    pub fn named_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.terms
            .iter()
            .filter(|s| s.named)
            .flat_map(|s| s.ids.iter().copied())
    }

    /// Leaves out the question words `drop` tells: they are not searched
    /// for nor counted in coverage.
    pub fn forget(&mut self, drop: impl Fn(&str) -> bool) {
        self.terms.retain(|s| !drop(&s.word));
    }

    /// The page terms that stand for the question word `word`.
    pub fn ids_for(&self, word: &str) -> Vec<u32> {
        self.terms
            .iter()
            .filter(|s| s.word == word)
            .flat_map(|s| s.ids.iter().copied())
            .collect()
    }

    /// The idf of the question word `id` stands for, as a share of the
    /// rarest word's (0 when it stands for none).
    pub fn weight_of(&self, id: u32) -> f64 {
        let max = self.terms.iter().map(|s| s.idf).fold(0.0, f64::max);
        self.terms
            .iter()
            .filter(|s| s.ids.contains(&id))
            .map(|s| s.idf)
            .fold(0.0, f64::max)
            / max.max(f64::MIN_POSITIVE)
    }

    /// Whether `id` is one of the question's own words (by stem), not a
    /// synonym or expansion of one.
    pub fn is_own(&self, index: &Index, id: u32) -> bool {
        self.terms.iter().any(|s| index.term(&s.word) == Some(id))
    }

    /// Whether `id` stands for one of the question's words.
    pub fn has_id(&self, id: u32) -> bool {
        self.terms.iter().any(|s| s.ids.contains(&id))
    }

    /// Lets the page terms of `alternative` (a word or phrase) also stand for
    /// the question word `word`: a synonym or an acronym's expansion. A
    /// phrase counts by its last content word (its head noun, in English).
    pub fn add_alternative(&mut self, index: &Index, word: &str, alternative: &str) {
        if let Some(id) = tokenize(alternative).last().and_then(|t| index.term(t)) {
            self.add_id(index, word, id);
        }
    }

    fn add_id(&mut self, index: &Index, word: &str, id: u32) {
        if let Some(slot) = self.terms.iter_mut().find(|s| s.word == word) {
            if !slot.ids.contains(&id) {
                slot.ids.push(id);
                // The rarer spelling should not make the slot count more.
                slot.idf = slot.idf.min(index.idf(index.df(id)));
            }
        }
    }
}

impl Index {
    pub fn build(page: &Page) -> Index {
        let texts = || (0..page.units.len()).map(|i| page.unit_text(i));
        Index::from_texts_in(Lang::detect(texts()), texts())
    }

    /// An index over `texts` in English.
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Index {
        Index::from_texts_in(Lang::default(), texts)
    }

    fn from_texts_in<'a>(lang: Lang, texts: impl IntoIterator<Item = &'a str>) -> Index {
        let mut index = Index {
            lang,
            ..Index::default()
        };
        let mut total: u64 = 0;
        for (unit, text) in texts.into_iter().enumerate() {
            let unit = u32::try_from(unit).unwrap_or(u32::MAX);
            let mut ids: Vec<u32> = Vec::new();
            for_each_token(text, |token| {
                if let Some(&id) = index.raw.get(token) {
                    ids.push(id);
                    return;
                }
                if index.lang.is_function_word(token) {
                    return;
                }
                let stem = index.lang.stem(token);
                let id = match index.vocab.get(&stem) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(index.vocab.len()).unwrap_or(u32::MAX);
                        index.vocab.insert(stem, id);
                        index.postings.push(Vec::new());
                        id
                    }
                };
                index.raw.insert(token.to_string(), id);
                ids.push(id);
            });
            let len = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            total += u64::from(len);
            ids.sort_unstable();
            let mut terms: Vec<(u32, u32)> = Vec::new();
            for id in ids {
                match terms.last_mut() {
                    Some((last, tf)) if *last == id => *tf += 1,
                    _ => terms.push((id, 1)),
                }
            }
            for &(id, tf) in &terms {
                if let Some(p) = index.postings.get_mut(id as usize) {
                    p.push((unit, tf));
                }
            }
            index.unit_terms.push(terms);
            index.unit_len.push(len);
        }
        let n = index.unit_terms.len().max(1);
        index.avg_len = (total as f64 / n as f64).max(1.0);
        let ids = |list: &[&str]| list.iter().filter_map(|t| index.term(t)).collect();
        index.chrome = Chrome {
            terms: ids(CHROME_TERMS),
            pairs: CHROME_PAIRS
                .iter()
                .filter_map(|(a, b)| Some((index.term(a)?, index.term(b)?)))
                .collect(),
            short: ids(CHROME_SHORT),
        };
        index
    }

    /// The term id of a lower-case word, if the page has it (after stemming).
    pub fn term(&self, word: &str) -> Option<u32> {
        if let Some(&id) = self.raw.get(word) {
            return Some(id);
        }
        self.vocab.get(&self.lang.stem(word)).copied()
    }

    /// The term ids of `text`'s content words, in order (`None` for words
    /// the page does not have), with each word's byte range in `text`.
    pub fn terms_at(&self, text: &str) -> Vec<(std::ops::Range<usize>, Option<u32>)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            let part =
                c.is_alphanumeric() || (matches!(c, '.' | ',' | '\'' | '’') && start.is_some());
            match (part, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let word = text
                        .get(s..i)
                        .unwrap_or("")
                        .trim_end_matches(['.', ',', '\'', '’']);
                    for_each_token(word, |t| out.push((s..s + word.len(), self.term(t))));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    pub fn is_chrome(&self, unit: usize, words: usize) -> bool {
        self.is_chrome_unless(unit, words, &[])
    }

    /// [`Index::is_chrome`], except that a chrome word the reader asked
    /// about (`asked`: term ids) is content to them ("How much is the
    /// subscription?"). A chrome word alone marks only a short unit: a long
    /// sentence that mentions advertising or a subscription is prose.
    pub fn is_chrome_unless(&self, unit: usize, words: usize, asked: &[u32]) -> bool {
        let c = &self.chrome;
        let has = |id: &u32| !asked.contains(id) && self.has_term(unit, *id);
        (words <= CHROME_TERM_WORDS && c.terms.iter().any(has))
            || c.pairs.iter().any(|(a, b)| has(a) && has(b))
            || (words <= CHROME_SHORT_WORDS && c.short.iter().any(has))
    }

    pub fn len(&self) -> usize {
        self.unit_terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.unit_terms.is_empty()
    }

    /// The page's language.
    pub fn lang(&self) -> &Lang {
        &self.lang
    }

    /// Content-word count of a unit.
    pub fn unit_len(&self, unit: usize) -> usize {
        self.unit_len.get(unit).map_or(0, |&n| n as usize)
    }

    fn df(&self, id: u32) -> usize {
        self.postings.get(id as usize).map_or(0, Vec::len)
    }

    /// BM25's idf (always positive); a term absent from the page gets the
    /// highest value, so it weighs heavily against coverage.
    fn idf(&self, df: usize) -> f64 {
        let n = self.len() as f64;
        (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln()
    }

    /// Prepares a question: content words minus question filler,
    /// deduplicated in order of appearance, each with its synonyms the page
    /// has.
    pub fn query(&self, question: &str) -> Query {
        // The question phrase ("wie viele", "how long") says what is asked,
        // not what about; but the noun after a "which" ("which province")
        // names what the answer is, so the page says it too.
        let mut phrase = questions::asked(question, self.lang.code())
            .map(|(p, _)| p)
            .unwrap_or_default();
        let which = questions::with_english(self.lang.code())
            .flat_map(|l| &l.which)
            .collect::<Vec<_>>();
        if let Some(at) = phrase.iter().position(|w| which.contains(&w)) {
            phrase.truncate(at + 1);
        }
        // Capitalized words after the question's first name what it is
        // about; a script without case has none.
        let named: HashSet<String> = question
            .split_whitespace()
            .skip(1)
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .flat_map(tokenize)
            .collect();
        let mut seen = HashSet::new();
        let mut terms = Vec::new();
        for token in tokenize(question) {
            if QUESTION_FILLER.contains(&token.as_str())
                || self.lang.is_function_word(&token)
                || phrase.contains(&token)
                || questions::with_english(self.lang.code()).any(|l| l.is_filler(&token))
                || !seen.insert(token.clone())
            {
                continue;
            }
            let id = self.term(&token);
            let idf = self.idf(id.map_or(0, |id| self.df(id)));
            terms.push(Slot {
                ids: id.into_iter().collect(),
                idf,
                named: named.contains(&token),
                word: token,
                topic: false,
            });
        }
        let mut query = Query { terms };
        let words: Vec<String> = query.terms.iter().map(|s| s.word.clone()).collect();
        for word in &words {
            // Latin plurals no stemmer joins: "bacterium" and "bacteria",
            // "nucleus" and "nuclei".
            for (one, many) in LATIN_PLURALS {
                if let Some(root) = word.strip_suffix(one) {
                    query.add_alternative(self, word, &format!("{root}{many}"));
                }
                if let Some(root) = word.strip_suffix(many) {
                    query.add_alternative(self, word, &format!("{root}{one}"));
                }
            }
            let stem = self.lang.stem(word);
            // Derived forms the stemmer leaves apart ("analysed" and
            // "analysts", "Europe" and "European"), in any language.
            let mut derived: Vec<u32> = self
                .vocab
                .iter()
                .filter(|(v, _)| is_derived(&stem, v))
                .map(|(_, &id)| id)
                .collect();
            // Ids in order, whatever the map's.
            derived.sort_unstable();
            for id in derived {
                query.add_id(self, word, id);
            }
            // Everyday synonyms, as data: a question rarely uses the page's word.
            for group in questions::with_english(self.lang.code()).flat_map(|l| &l.synonyms) {
                if group.iter().any(|g| g == word || self.lang.stem(g) == stem) {
                    for alt in group {
                        query.add_alternative(self, word, alt);
                    }
                }
            }
        }
        query
    }

    /// Per unit: (term id, term frequency), sorted by term id.
    #[inline]
    pub fn unit_terms(&self) -> &[Vec<(u32, u32)>] {
        &self.unit_terms
    }

    /// Per term id: how many units hold it.
    #[inline]
    pub fn dfs(&self) -> impl Iterator<Item = usize> + '_ {
        self.postings.iter().map(Vec::len)
    }

    /// Whether `unit` has the term `id`.
    pub fn has_term(&self, unit: usize, id: u32) -> bool {
        self.unit_terms
            .get(unit)
            .is_some_and(|t| t.binary_search_by_key(&id, |&(i, _)| i).is_ok())
    }

    /// Share of the query's idf mass that occurs in `unit` (0..=1).
    pub fn coverage(&self, query: &Query, unit: usize) -> f64 {
        self.coverage_of(query, &[unit])
    }

    /// Share of the query's idf mass that occurs in any of `units`.
    pub fn coverage_of(&self, query: &Query, units: &[usize]) -> f64 {
        let total: f64 = query.terms.iter().map(|s| s.idf).sum();
        if total <= 0.0 {
            return 0.0;
        }
        let hit: f64 = query
            .terms
            .iter()
            .map(|s| {
                let here = s
                    .ids
                    .iter()
                    .any(|&id| units.iter().any(|&u| self.has_term(u, id)));
                match (here, s.topic) {
                    (true, _) => s.idf,
                    (false, true) => s.idf / 2.0,
                    (false, false) => 0.0,
                }
            })
            .sum();
        hit / total
    }

    /// Jaccard similarity of two units' term sets.
    pub fn jaccard(&self, a: usize, b: usize) -> f64 {
        let (Some(x), Some(y)) = (self.unit_terms.get(a), self.unit_terms.get(b)) else {
            return 0.0;
        };
        let (mut i, mut j, mut both) = (0, 0, 0usize);
        while let (Some(&(p, _)), Some(&(q, _))) = (x.get(i), y.get(j)) {
            match p.cmp(&q) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = x.len() + y.len() - both;
        if union == 0 {
            0.0
        } else {
            both as f64 / union as f64
        }
    }
}

/// Okapi BM25 (k1 = 1.2, b = 0.75) of every unit that shares a term with the
/// query, best first; equal scores keep document order.
pub fn bm25(index: &Index, query: &Query) -> Vec<Scored> {
    let mut scores = vec![0.0f64; index.len()];
    // A slot's score in a unit is its best alternative's, not their sum.
    let mut slot = vec![0.0f64; index.len()];
    let mut touched: Vec<usize> = Vec::new();
    for s in &query.terms {
        for &id in &s.ids {
            let Some(postings) = index.postings.get(id as usize) else {
                continue;
            };
            for &(unit, tf) in postings {
                let len = index.unit_len.get(unit as usize).copied().unwrap_or(0);
                let tf = f64::from(tf);
                let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * f64::from(len) / index.avg_len);
                let v = s.idf * tf * (BM25_K1 + 1.0) / (tf + norm);
                if let Some(best) = slot.get_mut(unit as usize) {
                    if *best == 0.0 {
                        touched.push(unit as usize);
                    }
                    *best = best.max(v);
                }
            }
        }
        for u in touched.drain(..) {
            if let (Some(total), Some(best)) = (scores.get_mut(u), slot.get_mut(u)) {
                *total += *best;
                *best = 0.0;
            }
        }
    }
    let mut out: Vec<Scored> = scores
        .into_iter()
        .enumerate()
        .filter(|&(_, s)| s > 0.0)
        .map(|(unit, score)| Scored { unit, score })
        .collect();
    best_first(&mut out);
    out
}

/// Whether two stems are forms of one word the stemmer left apart: the
/// shorter (at least [`MIN_DERIVED_STEM`] characters) opens the longer, which
/// adds at most [`MAX_DERIVED_SUFFIX`] characters ("analys" → "analyst",
/// "europ" → "european", "рекоменд" → "рекомендац"; not "state" →
/// "statement").
fn is_derived(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    // The byte-prefix test first: it runs against the page's whole
    // vocabulary for every question word, and rejects almost all of it.
    if short == long || !long.starts_with(short) {
        return false;
    }
    let (n, m) = (short.chars().count(), long.chars().count());
    n >= MIN_DERIVED_STEM
        && m.saturating_sub(n) <= MAX_DERIVED_SUFFIX
        && !short.chars().any(|c| c.is_ascii_digit())
}
const MIN_DERIVED_STEM: usize = 5;
const MAX_DERIVED_SUFFIX: usize = 3;

/// Latin singular and plural endings of English (and other European)
/// loanwords, which Snowball leaves apart.
const LATIN_PLURALS: &[(&str, &str)] = &[("um", "a"), ("us", "i"), ("is", "es"), ("on", "a")];

/// Site chrome, as words (stemmed like the page when looked up): a unit is
/// chrome if it has any of `CHROME_TERMS`, both terms of a `CHROME_PAIRS`
/// entry, or, when it is at most `CHROME_SHORT_WORDS` words long, any of
/// `CHROME_SHORT` (terms only up to `CHROME_TERM_WORDS`). Matching terms (not substrings) keeps this a few lookups
/// per unit.
const CHROME_TERMS: &[&str] = &[
    "advertisement",
    "cookie",
    "cookies",
    "copyright",
    "javascript",
    "login",
    "newsletter",
    "signin",
    "signup",
    "subscribe",
    "subscribed",
    "subscriber",
    "subscription",
    "unsubscribe",
];
const CHROME_PAIRS: &[(&str, &str)] = &[
    ("right", "reserved"),
    ("privacy", "policy"),
    ("terms", "service"),
    ("terms", "use"),
];
const CHROME_SHORT: &[&str] = &[
    "accept", "click", "follow", "log", "menu", "share", "sign", "skip",
];
const CHROME_SHORT_WORDS: usize = 6;
/// Chrome lines ("Subscribe to our newsletter", "Advertisement") are short;
/// `CHROME_TERMS` mark units up to this many words.
const CHROME_TERM_WORDS: usize = 25;

/// The chrome terms that occur on a page, as term ids.
#[derive(Debug, Clone, Default)]
struct Chrome {
    terms: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    short: Vec<u32>,
}

#[cfg(test)]
mod tests {

    #[test]
    fn dedupe_key_ascii_fast_path_matches_the_general_path() {
        // "é" forces the char path for the second text of each pair.
        assert_eq!(
            dedupe_key(" Night  Trains\tare BACK "),
            dedupe_key("night trains are back")
        );
        assert_eq!(
            dedupe_key("a\u{b}b"),
            dedupe_key("A B"),
            "vertical tab is whitespace on both paths"
        );
        assert_eq!(dedupe_key("Café  Crème"), dedupe_key("café crème"));
        assert_ne!(dedupe_key("night trains"), dedupe_key("night train"));
    }

    #[test]
    fn stopwords_are_found_by_the_set() {
        assert!(is_stopword("the") && is_stopword("which"));
        assert!(!is_stopword("sleeper"));
    }

    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        split_sentences(text)
            .into_iter()
            .map(|r| text.get(r).unwrap())
            .collect()
    }

    #[test]
    fn prefixes_are_decoded_and_stripped() {
        assert_eq!(parse_line("H1: Title"), (Kind::Heading(1), "Title"));
        assert_eq!(parse_line("H6:Deep"), (Kind::Heading(6), "Deep"));
        assert_eq!(parse_line("H7: not a heading").0, Kind::Sentence);
        assert_eq!(parse_line("- item"), (Kind::ListItem(0), "item"));
        assert_eq!(parse_line("    - nested"), (Kind::ListItem(2), "nested"));
        assert_eq!(parse_line("> quoted"), (Kind::Quote, "quoted"));
        assert_eq!(parse_line("Code: let x = 1;"), (Kind::Code, "let x = 1;"));
        assert_eq!(parse_line("Summary: short"), (Kind::Summary, "short"));
        assert_eq!(parse_line("Caption: a photo"), (Kind::Caption, "a photo"));
        assert_eq!(parse_line("Term: SKU"), (Kind::Term, "SKU"));
        assert_eq!(parse_line("Definition: an id"), (Kind::Definition, "an id"));
        assert_eq!(parse_line("  plain text  "), (Kind::Sentence, "plain text"));
        assert_eq!(parse_line("-not a list").0, Kind::Sentence);
    }

    #[test]
    fn cjk_text_is_cut_into_script_runs_and_kanji_pairs() {
        assert_eq!(
            tokenize("Kindle for PCの起動ホットキーは何ですか"),
            vec!["kindle", "pc", "起動", "ホットキー"]
        );
        assert_eq!(tokenize("操作方法"), vec!["操作", "作方", "方法"]);
        // A question shares the page's compound, not its particles.
        let index = Index::from_texts([
            "Windows10での操作方法です。",
            "パスワード管理ソフトの話です。",
        ]);
        let q = index.query("この手順はどのOSでの操作方法ですか？");
        let ranked = bm25(&index, &q);
        assert_eq!(ranked.first().map(|s| s.unit), Some(0));
        assert_eq!(word_count("Windows10での操作方法です。"), 5);
        assert_eq!(word_count("two plain words"), 3);
    }

    #[test]
    fn derived_forms_match_what_the_stemmer_leaves_apart() {
        let index = Index::from_texts([
            "Posted by the performance analysts at Digital Foundry.",
            "Already in use at European hospitals.",
            "The statement was read aloud.",
        ]);
        let hit = |q: &str| bm25(&index, &index.query(q)).first().map(|s| s.unit);
        assert_eq!(hit("Who analysed the port?"), Some(0));
        assert_eq!(hit("Where in Europe is it used?"), Some(1));
        assert_eq!(hit("Which state?"), None);
        assert!(is_derived("рекоменд", "рекомендац"));
        assert!(!is_derived("general", "generat") && !is_derived("2019", "20190"));
    }

    #[test]
    fn a_day_range_before_its_month_ends_no_sentence() {
        assert_eq!(
            sentences("Am 12. Bis 13. September startet die DMEXCO in Köln. Wir sind dabei."),
            vec![
                "Am 12. Bis 13. September startet die DMEXCO in Köln.",
                "Wir sind dabei."
            ]
        );
        assert_eq!(
            sentences("Wir kamen am 12. Danach gingen wir."),
            vec!["Wir kamen am 12.", "Danach gingen wir."]
        );
    }

    #[test]
    fn sentence_split_respects_abbreviations_decimals_urls_and_ellipses() {
        let text = "Dr. Smith met Mr. J. R. Jones in the U.S. capital, e.g. at 3.5 p.m. today. \
                    See https://example.com/a.b?c=d. It costs $3.50 now! Really? Wait... what \
                    happened next… Nobody knows.";
        assert_eq!(
            sentences(text),
            vec![
                "Dr. Smith met Mr. J. R. Jones in the U.S. capital, e.g. at 3.5 p.m. today.",
                "See https://example.com/a.b?c=d.",
                "It costs $3.50 now!",
                "Really?",
                "Wait... what happened next…",
                "Nobody knows.",
            ]
        );
        assert_eq!(
            sentences("1. First step. Then more."),
            vec!["1. First step.", "Then more."]
        );
        assert_eq!(
            sentences("He said \"Stop.\" Then left."),
            vec!["He said \"Stop.\"", "Then left."]
        );
        assert_eq!(
            sentences("这是第一句。这是第二句。"),
            vec!["这是第一句。", "这是第二句。"]
        );
        assert_eq!(sentences("Done. ..."), vec!["Done. ..."]);
        assert!(sentences("   ").is_empty());
    }

    #[test]
    fn page_units_keep_kind_source_and_exact_text() {
        let mut page = Page::default();
        let text = "H1: Guide\n\nIntro one. Intro two.\n- Point A.\n  - Nested B.\n> Quote C.\n\
                    Code: fn main() {}\nSummary: Sum.\nCaption: Cap.\nTerm: SKU\nDefinition: An id. Short.";
        page.add_text(
            Source {
                doc_id: "d".into(),
                field: "text".into(),
                handle_id: None,
            },
            text,
        );
        let got: Vec<(Kind, &str)> = (0..page.units.len())
            .map(|i| (page.units[i].kind, page.unit_text(i)))
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Heading(1), "Guide"),
                (Kind::Sentence, "Intro one."),
                (Kind::Sentence, "Intro two."),
                (Kind::ListItem(0), "Point A."),
                (Kind::ListItem(1), "Nested B."),
                (Kind::Quote, "Quote C."),
                (Kind::Code, "fn main() {}"),
                (Kind::Summary, "Sum."),
                (Kind::Caption, "Cap."),
                (Kind::Term, "SKU"),
                (Kind::Definition, "An id."),
                (Kind::Definition, "Short."),
            ]
        );
        for i in 0..page.units.len() {
            assert!(text.contains(page.unit_text(i)));
            assert_eq!(page.unit_source(i).map(|s| s.field.as_str()), Some("text"));
        }
    }

    #[test]
    fn repeated_units_are_kept_once_and_long_lines_are_capped() {
        let mut page = Page::default();
        let src = || Source {
            doc_id: "d".into(),
            field: "text".into(),
            handle_id: None,
        };
        page.add_text(src(), "Same sentence here.\nsame   SENTENCE here.");
        assert_eq!(page.units.len(), 1);
        let long: String = (0..1000).map(|i| format!("w{i} ")).collect();
        page.add_text(src(), &long);
        assert!(page.units.len() > 5);
        for i in 1..page.units.len() {
            let t = page.unit_text(i);
            assert!(t.len() <= PIECE_BYTES && !t.is_empty());
            assert!(long.contains(t));
        }
        // No whitespace at all and multi-byte chars: still cut at char boundaries.
        let mut page = Page::default();
        let wide: String = (0..1000u32)
            .filter_map(|i| char::from_u32(0x4E00 + i))
            .collect();
        page.add_text(src(), &wide);
        assert!(page.units.len() >= 7);
        assert!((0..page.units.len()).all(|i| {
            let t = page.unit_text(i);
            !t.is_empty() && t.len() <= PIECE_BYTES && wide.contains(t)
        }));
    }

    #[test]
    fn tokenizer_lowercases_and_keeps_numbers_and_the_index_stems() {
        assert_eq!(
            tokenize("The Stories of boxes, watches and classes: 3.5 GHz, 1,299 items; page's"),
            vec!["stories", "boxes", "watches", "classes", "3.5", "ghz", "1,299", "items", "pages"]
        );
        assert_eq!(
            tokenize("Don't stop — Ünïcode Straße"),
            vec!["stop", "ünïcode", "straße"]
        );
        assert_eq!(tokenize("東京タワー"), vec!["東京", "タワー"]);
        let index = Index::from_texts(["Stories of pages and a page's story"]);
        assert_eq!(index.term("pages"), index.term("page"));
        assert_eq!(index.term("story"), index.term("stories"));
    }

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn bm25_orders_by_relevance_then_position() {
        let docs = [
            "The cat sat on the mat.",
            "Dogs and cats are pets; a cat purrs.",
            "Stock markets fell sharply today.",
            "The cat sat on the mat.",
            "Rainfall in Paris was low.",
        ];
        let index = Index::from_texts(docs);
        let q = index.query("What does the page say about cats?");
        let ranked = bm25(&index, &q);
        let order: Vec<usize> = ranked.iter().map(|s| s.unit).collect();
        assert_eq!(order, vec![1, 0, 3]);
        assert_eq!(ranked[1].score, ranked[2].score);
        assert!(bm25(&index, &index.query("quantum chromodynamics")).is_empty());
        assert!(index.query("what is this?").is_empty());
        let paris = index.query("rainfall in Paris");
        assert_eq!(bm25(&index, &paris).first().map(|s| s.unit), Some(4));
        assert!((index.coverage(&paris, 4) - 1.0).abs() < 1e-9);
        assert_eq!(index.coverage(&paris, 0), 0.0);
        assert!(index.coverage(&index.query("cat flights"), 0) < 0.5);
    }

    #[test]
    fn a_chrome_word_marks_short_lines_not_prose_or_what_is_asked() {
        let index = Index::from_texts([
            "Subscribe to our newsletter for more news.",
            "Google's gaming service is offered at a $9.99 monthly rate for its Pro subscription, which gives players access to 4K streaming and a discount on games bought in its store.",
            "The Pro subscription costs $9.99 a month.",
        ]);
        assert!(index.is_chrome(0, 7));
        assert!(!index.is_chrome(1, 31));
        assert!(index.is_chrome(2, 7));
        let asked: Vec<u32> = index.term("subscription").into_iter().collect();
        assert!(!index.is_chrome_unless(2, 7, &asked));
        assert!(index.is_chrome_unless(0, 7, &asked));
    }

    #[test]
    fn documents_are_read_per_scope_with_handles() {
        let doc = |id: &str, content: Value| Document {
            doc_id: id.into(),
            kind: content["doc_type"].as_str().unwrap_or("").into(),
            trust: "untrusted".into(),
            source: laika_protocol::llmcp::DocumentSource {
                browser: "chrome".into(),
                tab_id: None,
            },
            content,
        };
        let body =
            "The article body is long enough to count as the main content of the page. ".repeat(4);
        let docs = vec![
            doc(
                "doc:web:summary",
                serde_json::json!({
                    "doc_type": SUMMARY_DOC_TYPE, "url": "https://e.x", "title": "T",
                    "text": "H1: T\nMenu item one. Nav bar text.",
                    "primary": {"text": body, "handle_id": "laika-7"},
                    "items": [{"title": "Item title", "snippet": "Item snippet.", "handle_id": "laika-22"}],
                    "comments": [{"text": "A comment.", "handle_id": "laika-44"}]
                }),
            ),
            doc(
                "doc:web:chunk:1",
                serde_json::json!({"doc_type": CHUNK_DOC_TYPE, "url": "https://e.x", "chunk_index": 1, "chunk_count": 1, "text": "Chunk text."}),
            ),
        ];
        let main = Page::from_documents(&docs, Scope::Main);
        assert_eq!(main.title, "T");
        let fields: Vec<&str> = main.sources.iter().map(|s| s.field.as_str()).collect();
        assert_eq!(fields, vec!["primary.text", "text"]);
        assert_eq!(
            main.unit_source(0).and_then(|s| s.handle_id.as_deref()),
            Some("laika-7")
        );
        assert_eq!(
            main.units.len(),
            2,
            "repeated body sentence kept once, plus the chunk"
        );

        let all = Page::from_documents(&docs, Scope::All);
        let find = |t: &str| (0..all.units.len()).find(|&i| all.unit_text(i) == t);
        let comment = find("A comment.").and_then(|i| all.unit_source(i));
        assert_eq!(comment.map(|s| s.field.as_str()), Some("comments[0].text"));
        assert_eq!(
            comment.and_then(|s| s.handle_id.as_deref()),
            Some("laika-44")
        );
        let snippet = find("Item snippet.").and_then(|i| all.unit_source(i));
        assert_eq!(
            snippet.and_then(|s| s.handle_id.as_deref()),
            Some("laika-22")
        );
        assert!(find("Chunk text.").is_some() && find("Nav bar text.").is_some());
        assert_eq!(
            find("Chunk text.")
                .and_then(|i| all.unit_source(i))
                .map(|s| s.doc_id.as_str()),
            Some("doc:web:chunk:1")
        );
    }

    #[test]
    fn hostile_input_is_bounded_and_never_panics() {
        let mut page = Page::default();
        let src = || Source {
            doc_id: "d".into(),
            field: "text".into(),
            handle_id: None,
        };
        for s in [
            "H",
            "H1",
            "H1:",
            "-",
            ">",
            "Code:",
            "....",
            "?!?!",
            "\u{0}\u{202e}.",
            "a.\u{301}B",
            "1.",
            "Ⅷ. İİ. ß.",
        ] {
            page.add_text(src(), s);
            let _ = split_sentences(s);
            let _ = tokenize(s);
        }
        let index = Index::build(&page);
        let _ = bm25(&index, &index.query("İ ß"));
        let mut big = Page {
            bytes: MAX_TEXT_BYTES - 3,
            ..Page::default()
        };
        big.add_text(src(), "ééé");
        assert_eq!(big.unit_text(0), "é");
    }

    proptest::proptest! {
        #[test]
        fn sentences_are_ordered_trimmed_slices(s in "\\PC{0,200}") {
            let ranges = split_sentences(&s);
            let mut last = 0;
            for r in ranges {
                proptest::prop_assert!(r.start >= last && r.start < r.end);
                let t = s.get(r.clone());
                proptest::prop_assert!(t.is_some());
                let t = t.unwrap_or("");
                proptest::prop_assert_eq!(t, t.trim());
                last = r.end;
            }
        }
    }
}

//! Provenance: what came from outside the user, for a whole conversation.
//!
//! Every string the assistant saw that the user did not write (every page
//! of the turn, also one left by a redirect; the tabs the user attached;
//! collection sources; tool results; earlier answers) is added here as
//! hashed shingles, and the gate asks before outgoing text that carries
//! it. Hashes only: the set keeps no text, and its memory is bounded
//! ([`MAX_ENTRIES`]). Building it and looking text up are linear in the
//! text and stop when the turn is cancelled.
//!
//! Three kinds of evidence are kept:
//! - runs: every [`RUN_WORDS`] consecutive words (case-folded);
//! - names: two adjacent capitalised words ("Ada Lovelace");
//! - data: tokens that are data rather than words (an order or account
//!   number, an email, an id), also inside a longer token ("Order#A-123456").

use crate::cancel::CancelToken;
use laika_protocol::conversation::History;
use laika_protocol::observation::Observation;
use rustc_hash::{FxHashSet, FxHasher};
use serde_json::Value;
use std::hash::Hasher;

/// Words per shingle.
pub const RUN_WORDS: usize = 3;
/// Consecutive words copied from outside the user that make a passage worth
/// a question when typed into a page (a search engine gets asked for one
/// shingle).
pub const PASSAGE_WORDS: usize = 8;
/// Hashes kept at most (about 40 MB at worst); past it the set is
/// saturated and the gate asks about any text it cannot vouch for.
pub const MAX_ENTRIES: usize = 2_000_000;
/// Words between two looks at the cancel token.
const CANCEL_EVERY: usize = 1 << 15;

/// The turn was cancelled while text was being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// Where outgoing text goes, which decides how little of outside data is
/// too much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// Typed into the page: a passage or a data token is asked.
    Page,
    /// Sent to someone else (a search engine, a URL, an integration): one
    /// shingle, a name or a short data token is asked.
    ThirdParty,
}

/// What outgoing text carries from outside the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Carried {
    Data(String),
    Name(String),
    Run(String),
    /// The set is full: the text's words cannot be vouched for.
    Unknown,
}

/// The hashed shingles of everything outside the user, in one conversation.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    runs: FxHashSet<u64>,
    names: FxHashSet<u64>,
    data: FxHashSet<u64>,
    saturated: bool,
}

/// A word as the shingles see it: its fold's hash, whether it starts with
/// a capital letter, and where it is in the text.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    hash: u64,
    capital: bool,
    text: &'a str,
}

impl Provenance {
    pub fn new() -> Provenance {
        Provenance::default()
    }

    /// How many hashes it holds.
    pub fn len(&self) -> usize {
        self.runs.len() + self.names.len() + self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_saturated(&self) -> bool {
        self.saturated
    }

    /// Adds a text that came from outside the user.
    pub fn add(&mut self, text: &str, cancel: Option<&CancelToken>) -> Result<(), Cancelled> {
        let mut prev: Option<Word> = None;
        let mut window: [u64; RUN_WORDS] = [0; RUN_WORDS];
        let mut seen = 0usize;
        for (n, raw) in text.split_whitespace().enumerate() {
            if n % CANCEL_EVERY == CANCEL_EVERY - 1 && cancel.is_some_and(CancelToken::is_cancelled)
            {
                return Err(Cancelled);
            }
            for piece in data_pieces(raw) {
                if is_data(piece, Sink::ThirdParty) {
                    self.insert(Kind::Data, fold_hash(piece));
                }
            }
            let Some(word) = word(raw) else { continue };
            window.rotate_left(1);
            window[RUN_WORDS - 1] = word.hash;
            seen += 1;
            if seen >= RUN_WORDS {
                self.insert(Kind::Run, combine(&window));
            }
            if let Some(p) = prev.filter(|p| p.capital && word.capital) {
                self.insert(Kind::Name, combine(&[p.hash, word.hash]));
            }
            prev = Some(word);
        }
        Ok(())
    }

    /// Adds every text a page showed: its summary, elements, chunks, the
    /// selection and the tabs the user attached.
    pub fn add_observation(
        &mut self,
        obs: &Observation,
        cancel: Option<&CancelToken>,
    ) -> Result<(), Cancelled> {
        for text in page_texts(obs) {
            self.add(text, cancel)?;
        }
        Ok(())
    }

    /// Adds every string of a JSON value (a tool's result).
    pub fn add_value(
        &mut self,
        value: &Value,
        cancel: Option<&CancelToken>,
    ) -> Result<(), Cancelled> {
        match value {
            Value::String(s) => self.add(s, cancel),
            Value::Array(items) => items.iter().try_for_each(|v| self.add_value(v, cancel)),
            Value::Object(map) => map.values().try_for_each(|v| self.add_value(v, cancel)),
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }

    /// What a conversation's stored history holds from outside the user:
    /// earlier answers (which retell the pages they read: page text itself
    /// is not stored), tool summaries, page titles, the rolling summary and
    /// memory. Rebuilt so on each later turn.
    pub fn add_history(
        &mut self,
        history: &History,
        cancel: Option<&CancelToken>,
    ) -> Result<(), Cancelled> {
        for turn in &history.turns {
            self.add(&turn.answer_text, cancel)?;
            for tool in &turn.tools {
                self.add(tool, cancel)?;
            }
            if let Some(page) = &turn.page {
                self.add(&page.title, cancel)?;
            }
        }
        for page in &history.pages {
            self.add(&page.title, cancel)?;
        }
        if let Some(summary) = &history.summary {
            self.add(&summary.text, cancel)?;
        }
        if let Some(memory) = &history.memory {
            self.add(memory, cancel)?;
        }
        Ok(())
    }

    /// The first thing `text` carries from outside the user, for `sink`;
    /// what one of `own` also has (the user's own words, [`Provenance::of_user`];
    /// or the page the text is typed into, when only data from elsewhere
    /// counts) is not.
    pub fn carried(
        &self,
        text: &str,
        own: &[&Provenance],
        sink: Sink,
        cancel: Option<&CancelToken>,
    ) -> Result<Option<Carried>, Cancelled> {
        let mut words: Vec<Word> = Vec::new();
        for (n, raw) in text.split_whitespace().enumerate() {
            if n % CANCEL_EVERY == CANCEL_EVERY - 1 && cancel.is_some_and(CancelToken::is_cancelled)
            {
                return Err(Cancelled);
            }
            for piece in data_pieces(raw).filter(|p| is_data(p, sink)) {
                let h = fold_hash(piece);
                if self.data.contains(&h) && !own.iter().any(|o| o.data.contains(&h)) {
                    return Ok(Some(Carried::Data(piece.to_owned())));
                }
            }
            if let Some(w) = word(raw) {
                words.push(w);
            }
        }
        if sink == Sink::ThirdParty {
            for pair in words.windows(2) {
                let h = combine(&[pair[0].hash, pair[1].hash]);
                if self.names.contains(&h) && !own.iter().any(|o| o.names.contains(&h)) {
                    return Ok(Some(Carried::Name(span(text, pair))));
                }
            }
        }
        let needed = match sink {
            Sink::ThirdParty => 1,
            Sink::Page => PASSAGE_WORDS + 1 - RUN_WORDS,
        };
        let mut streak = 0usize;
        for (i, run) in words.windows(RUN_WORDS).enumerate() {
            if i % CANCEL_EVERY == CANCEL_EVERY - 1 && cancel.is_some_and(CancelToken::is_cancelled)
            {
                return Err(Cancelled);
            }
            let h = combine(&run.iter().map(|w| w.hash).collect::<Vec<_>>());
            if self.runs.contains(&h) && !own.iter().any(|o| o.runs.contains(&h)) {
                streak += 1;
                if streak >= needed {
                    let start = i + 1 - needed;
                    return Ok(Some(Carried::Run(span(text, &words[start..i + RUN_WORDS]))));
                }
            } else {
                streak = 0;
            }
        }
        if self.saturated {
            let unknown = words.windows(RUN_WORDS).any(|run| {
                let h = combine(&run.iter().map(|w| w.hash).collect::<Vec<_>>());
                !own.iter().any(|o| o.runs.contains(&h))
            });
            if unknown {
                return Ok(Some(Carried::Unknown));
            }
        }
        Ok(None)
    }

    /// The user's own words, for [`Provenance::carried`]: every pair of
    /// words counts as a name (the user may write one in lower case) and
    /// every piece of a token as data.
    pub fn of_user(message: &str) -> Provenance {
        let mut own = Provenance::new();
        let mut prev: Option<Word> = None;
        let mut window: [u64; RUN_WORDS] = [0; RUN_WORDS];
        let mut seen = 0usize;
        for raw in message.split_whitespace() {
            for piece in data_pieces(raw) {
                own.insert(Kind::Data, fold_hash(piece));
            }
            let Some(word) = word(raw) else { continue };
            window.rotate_left(1);
            window[RUN_WORDS - 1] = word.hash;
            seen += 1;
            if seen >= RUN_WORDS {
                own.insert(Kind::Run, combine(&window));
            }
            if let Some(p) = prev {
                own.insert(Kind::Name, combine(&[p.hash, word.hash]));
            }
            prev = Some(word);
        }
        own
    }

    /// Adds everything `other` holds.
    pub fn extend(&mut self, other: &Provenance) {
        self.saturated |= other.saturated;
        for (kind, set) in [
            (Kind::Run, &other.runs),
            (Kind::Name, &other.names),
            (Kind::Data, &other.data),
        ] {
            for hash in set {
                self.insert(kind, *hash);
            }
        }
    }

    fn insert(&mut self, kind: Kind, hash: u64) {
        if self.len() >= MAX_ENTRIES {
            self.saturated = true;
            return;
        }
        match kind {
            Kind::Run => self.runs.insert(hash),
            Kind::Name => self.names.insert(hash),
            Kind::Data => self.data.insert(hash),
        };
    }
}

/// What a conversation saw from outside the user, and of it the page the
/// assistant is on now: text typed into that page may repeat the page's own
/// words, not what came from elsewhere.
#[derive(Debug, Clone, Default)]
pub struct Outside {
    all: Provenance,
    page: Provenance,
}

impl Outside {
    pub fn new() -> Outside {
        Outside::default()
    }

    /// Everything seen, the current page included.
    pub fn all(&self) -> &Provenance {
        &self.all
    }

    /// The page the assistant is on now.
    pub fn page(&self) -> &Provenance {
        &self.page
    }

    /// A new page (the first, or the one a call led to): it becomes the
    /// current page and stays in everything seen.
    pub fn note_page(
        &mut self,
        obs: &Observation,
        cancel: Option<&CancelToken>,
    ) -> Result<(), Cancelled> {
        let mut page = Provenance::new();
        page.add_observation(obs, cancel)?;
        self.all.extend(&page);
        self.page = page;
        Ok(())
    }

    /// Text seen elsewhere (a result, a source, an earlier answer).
    pub fn elsewhere(&mut self) -> &mut Provenance {
        &mut self.all
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Run,
    Name,
    Data,
}

/// Every piece of text a page showed, its attached tabs included.
pub fn page_texts(obs: &Observation) -> impl Iterator<Item = &str> {
    let s = &obs.summary;
    [s.title.as_str(), s.text.as_str(), s.url.as_str()]
        .into_iter()
        // The main text is most often a run of the page text's own words
        // (or all of it): its shingles are already there.
        .chain(
            s.primary
                .iter()
                .map(|p| p.text.as_str())
                .filter(|p| !holds_words_of(&s.text, p)),
        )
        .chain(
            s.items
                .iter()
                .flat_map(|i| [Some(i.title.as_str()), i.snippet.as_deref()])
                .flatten(),
        )
        .chain(s.comments.iter().map(|c| c.text.as_str()))
        .chain(s.outline.iter().map(|o| o.text.as_str()))
        .chain(
            s.elements
                .iter()
                .flat_map(|e| [Some(e.text.as_str()), e.label.as_deref()])
                .flatten(),
        )
        .chain(obs.chunks.iter().map(|c| c.text.as_str()))
        .chain(obs.selection.iter().map(|s| s.text.as_str()))
        .chain(
            obs.tabs
                .iter()
                .flat_map(|t| [t.title.as_str(), t.text.as_str(), t.url.as_str()]),
        )
}

/// Whether `part`'s words are a run of `text`'s words: `part` occurs in
/// `text` between whitespace (or the ends), so every shingle it makes
/// `text` makes too.
fn holds_words_of(text: &str, part: &str) -> bool {
    let part = part.trim();
    let at_break = |s: Option<&str>, last: bool| {
        s.is_none_or(|s| {
            let c = if last {
                s.chars().next_back()
            } else {
                s.chars().next()
            };
            c.is_none_or(char::is_whitespace)
        })
    };
    !part.is_empty()
        && text.match_indices(part).any(|(at, m)| {
            at_break(text.get(..at), true) && at_break(text.get(at + m.len()..), false)
        })
}

/// The text from the first to the last of `words` (they borrow `text`).
fn span(text: &str, words: &[Word]) -> String {
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return String::new();
    };
    let start = first.text.as_ptr() as usize - text.as_ptr() as usize;
    let end = last.text.as_ptr() as usize - text.as_ptr() as usize + last.text.len();
    text.get(start..end).unwrap_or("").to_owned()
}

/// A whitespace token as a word: punctuation around it trimmed; `None`
/// when nothing is left.
fn word(raw: &str) -> Option<Word<'_>> {
    let text = raw.trim_matches(|c: char| !c.is_alphanumeric());
    let first = text.chars().next()?;
    Some(Word {
        hash: fold_hash(text),
        capital: first.is_uppercase() && text.chars().filter(|c| c.is_alphabetic()).count() >= 2,
        text,
    })
}

/// The parts of a token that may be data: the token itself and its pieces
/// between separators other than those ids and emails use inside.
fn data_pieces(raw: &str) -> impl Iterator<Item = &str> {
    let whole = raw.trim_matches(|c: char| !c.is_alphanumeric());
    let inner = raw
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '@' | '.' | '_' | '-' | '+')))
        .map(|p| p.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(move |p| *p != whole);
    std::iter::once(whole)
        .chain(inner)
        .filter(|p| !p.is_empty())
}

/// A token that is data rather than a word. Typed into a page: an email,
/// six digits, or a long mixed or plain-ASCII id; sent to someone else,
/// shorter ones too (five digits, or three with a letter).
fn is_data(token: &str, sink: Sink) -> bool {
    let (mut n, mut digits, mut letters) = (0usize, 0usize, 0usize);
    for c in token.chars() {
        n += 1;
        digits += usize::from(c.is_ascii_digit());
        letters += usize::from(c.is_alphabetic());
    }
    let common = token.contains('@')
        || digits >= 6
        || (n >= 12 && digits >= 3)
        || (n >= 24 && token.is_ascii());
    common || (sink == Sink::ThirdParty && (digits >= 5 || (digits >= 3 && letters >= 1 && n >= 5)))
}

/// The hash of a token's case fold.
fn fold_hash(s: &str) -> u64 {
    let mut h = FxHasher::default();
    if s.is_ascii() {
        for b in s.bytes() {
            h.write_u32(u32::from(b.to_ascii_lowercase()));
        }
    } else {
        for c in s.chars().flat_map(char::to_lowercase) {
            h.write_u32(c as u32);
        }
    }
    h.finish()
}

/// One hash for a sequence of word hashes (order matters).
fn combine(hashes: &[u64]) -> u64 {
    let mut h = FxHasher::default();
    for x in hashes {
        h.write_u64(*x);
    }
    h.write_usize(hashes.len());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(texts: &[&str]) -> Provenance {
        let mut p = Provenance::new();
        for t in texts {
            p.add(t, None).unwrap();
        }
        p
    }

    fn carried(p: &Provenance, text: &str, user: &str, sink: Sink) -> Option<Carried> {
        p.carried(text, &[&Provenance::of_user(user)], sink, None)
            .unwrap()
    }

    #[test]
    fn passages_data_and_names_from_outside_are_found_and_the_users_own_are_not() {
        let page = set(&[
            "Your order A-7731 ships soon. Contact Ada Lovelace at the front desk of the \
             north building near the old station for any question.",
        ]);
        let passage = "contact ada lovelace at the front desk of the north building";
        assert!(matches!(
            carried(&page, passage, "", Sink::Page),
            Some(Carried::Run(_))
        ));
        assert_eq!(carried(&page, passage, passage, Sink::Page), None);
        // Seven words typed are not a passage; sent out, three are enough.
        assert_eq!(
            carried(
                &page,
                "the front desk of the north building",
                "",
                Sink::Page
            ),
            None
        );
        assert_eq!(
            carried(
                &page,
                "front desk north building opening",
                "",
                Sink::ThirdParty
            ),
            None
        );
        assert!(matches!(
            carried(&page, "the north building hours", "", Sink::ThirdParty),
            Some(Carried::Run(r)) if r == "the north building"
        ));
        assert_eq!(
            carried(&page, "who is ada lovelace", "", Sink::ThirdParty),
            Some(Carried::Name("ada lovelace".into()))
        );
        assert_eq!(
            carried(
                &page,
                "who is ada lovelace",
                "tell me about Ada Lovelace",
                Sink::ThirdParty
            ),
            None
        );
        assert_eq!(
            carried(&page, "status of A-7731", "", Sink::ThirdParty),
            Some(Carried::Data("A-7731".into()))
        );
        assert_eq!(
            carried(
                &page,
                "status of A-7731",
                "where is my order a-7731?",
                Sink::ThirdParty
            ),
            None
        );
        assert_eq!(
            carried(&page, "best trains in europe", "", Sink::ThirdParty),
            None
        );
    }

    #[test]
    fn a_main_text_within_the_page_text_adds_what_adding_it_again_would() {
        let text =
            "Night trains: Order A-7731 ships soon.\nContact Ada Lovelace at the north building.";
        for primary in [
            text,
            "Contact Ada Lovelace at the north building.",
            "Order A-7731 ships",
            // Not between whitespace: its first and last words are new.
            "ains: Order A-7731 ships soon.\nContact Ada Love",
            "Grace Hopper wrote the first compiler, order B-1200.",
        ] {
            let obs = Observation::from_value(serde_json::json!({"summary": {
                "doc_type": "web.observation.summary.v1", "url": "https://e.example/t",
                "title": "Trains", "text": text, "primary": {"text": primary}}}))
            .unwrap();
            let mut got = Provenance::new();
            got.add_observation(&obs, None).unwrap();
            let every = set(&["Trains", text, "https://e.example/t", primary]);
            assert_eq!(
                (&got.runs, &got.names, &got.data),
                (&every.runs, &every.names, &every.data),
                "{primary}"
            );
        }
        assert!(holds_words_of("a b c", "b c"));
        assert!(!holds_words_of("a bc", "b"));
        assert!(!holds_words_of("a b", ""));
    }

    #[test]
    fn data_inside_longer_tokens_and_in_tabs_and_results_is_kept() {
        let mut p = set(&["Ref:INV#2024-99831 (paid)"]);
        p.add_value(
            &serde_json::json!({"rows": [{"email": "ceo@corp.example"}]}),
            None,
        )
        .unwrap();
        assert_eq!(
            carried(&p, "2024-99831", "", Sink::Page),
            Some(Carried::Data("2024-99831".into()))
        );
        assert_eq!(
            carried(&p, "mail ceo@corp.example now", "", Sink::Page),
            Some(Carried::Data("ceo@corp.example".into()))
        );
    }

    #[test]
    fn a_full_set_asks_about_text_it_cannot_vouch_for() {
        let mut p = Provenance::new();
        p.saturated = true;
        assert_eq!(
            carried(&p, "night trains in europe", "", Sink::ThirdParty),
            Some(Carried::Unknown)
        );
        assert_eq!(
            carried(
                &p,
                "night trains in europe",
                "night trains in europe",
                Sink::ThirdParty
            ),
            None
        );
    }

    #[test]
    fn a_cancelled_turn_stops_reading() {
        let token = CancelToken::default();
        token.cancel();
        let long = "word ".repeat(CANCEL_EVERY * 2);
        assert_eq!(Provenance::new().add(&long, Some(&token)), Err(Cancelled));
        assert_eq!(
            set(&["a b c"]).carried(&long, &[], Sink::Page, Some(&token)),
            Err(Cancelled)
        );
    }
}

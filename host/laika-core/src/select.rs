//! Passage selection for pages over budget: when the whole page cannot be
//! sent, `web.answer` and `web.extract` send the passages most relevant to
//! the question (BM25 over passages of the page's chunks, `retrieval`),
//! in page order, each under its chunk's number — instead of the page's
//! first N characters, which lose whatever sits past them.
//!
//! Invariants:
//! - the chars of the passages chosen never exceed the budget given;
//! - passages keep page order and their chunk numbers; passages of one
//!   chunk that are not adjacent are joined with [`GAP`] so a model sees
//!   text was left out between them;
//! - a question with no word the page has falls back to the page's order
//!   (the first passages), never to nothing.

use crate::retrieval::{self, Index};

/// Passages are cut at line ends near this many chars.
const PASSAGE_CHARS: usize = 800;
/// A line longer than this is cut on white space.
const MAX_PASSAGE_CHARS: usize = 1_600;
/// Marks left-out text between two passages of one chunk.
pub const GAP: &str = "\n[…]\n";
/// JSON and envelope chars each chunk document costs besides its text.
const DOC_OVERHEAD_CHARS: usize = 260;
/// Words of the question named in `about` at most.
const MAX_ABOUT: usize = 6;

/// The chosen text of one chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkText {
    /// The chunk's 1-based number on the page.
    pub chunk: usize,
    pub text: String,
}

/// What [`select`] chose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub chunks: Vec<ChunkText>,
    pub passages_sent: usize,
    pub passages_total: usize,
    /// Chars of page text sent (passages only).
    pub sent_chars: usize,
    /// Chars of page text there were.
    pub total_chars: usize,
    /// Words of the question the chosen passages contain, as the user
    /// wrote them: "the parts about …".
    pub about: Vec<String>,
}

#[derive(Debug)]
struct Passage {
    chunk: usize,
    /// Position on the page, for page order.
    order: usize,
    text: String,
    /// Chars of the text as a JSON string.
    json_chars: usize,
}

/// What ranking needs of a page's chunks, whatever the question: its
/// passages and their BM25 index. Building it tokenizes and stems the whole
/// page, so the host keeps it between the steps and follow-ups on one page
/// ([`PageIndexes`]).
#[derive(Debug)]
pub struct PageIndex {
    passages: Vec<Passage>,
    index: Index,
    total_chars: usize,
    /// The chunks it was built from, to confirm a cached index is this
    /// page's (compared, not hashed: a page cannot pass for another).
    source: Vec<(usize, String)>,
}

impl PageIndex {
    /// The characters of the page it indexes (what keeping it costs, about
    /// three times over: the page, its passages, the index).
    pub fn page_chars(&self) -> usize {
        self.total_chars
    }

    /// Splits `chunks` (1-based number, text) into passages and indexes them.
    pub fn build(chunks: &[(usize, &str)]) -> PageIndex {
        let mut passages = Vec::new();
        for &(chunk, text) in chunks {
            for piece in split(text) {
                passages.push(Passage {
                    chunk,
                    order: passages.len(),
                    json_chars: json_len(&piece),
                    text: piece,
                });
            }
        }
        let total_chars = chunks.iter().map(|(_, t)| t.chars().count()).sum();
        let index = Index::from_texts(passages.iter().map(|p| p.text.as_str()));
        PageIndex {
            passages,
            index,
            total_chars,
            source: chunks.iter().map(|&(c, t)| (c, t.to_owned())).collect(),
        }
    }

    /// Whether this index was built from exactly `chunks`.
    pub fn is_of(&self, chunks: &[(usize, &str)]) -> bool {
        self.source.len() == chunks.len()
            && self
                .source
                .iter()
                .zip(chunks)
                .all(|((c, t), (c2, t2))| c == c2 && t.len() == t2.len())
            && self
                .source
                .iter()
                .zip(chunks)
                .all(|((_, t), (_, t2))| t == t2)
    }

    /// The passages most relevant to `question` that fit in `budget` chars
    /// of JSON documents.
    pub fn select(&self, question: &str, budget: usize) -> Selection {
        let passages = &self.passages;
        let index = &self.index;
        let query = index.query(question);
        let ranked: Vec<usize> = {
            let scored = retrieval::bm25(index, &query);
            let mut scored_at = vec![false; passages.len()];
            let mut order: Vec<usize> = Vec::with_capacity(passages.len());
            for s in &scored {
                if let Some(seen) = scored_at.get_mut(s.unit) {
                    *seen = true;
                    order.push(s.unit);
                }
            }
            // Unscored passages follow in page order, so spare room is used.
            order.extend((0..passages.len()).filter(|&i| !scored_at[i]));
            order
        };
        let mut picked: Vec<usize> = Vec::new();
        let mut used = 0usize;
        let mut chunks_used: Vec<usize> = Vec::new();
        for i in ranked {
            // Nothing smaller than the cheapest passage fits any more.
            if used + GAP.len() >= budget {
                break;
            }
            let Some(p) = passages.get(i) else { continue };
            let new_chunk = !chunks_used.contains(&p.chunk);
            let cost = p.json_chars + GAP.len() + if new_chunk { DOC_OVERHEAD_CHARS } else { 0 };
            if used + cost > budget {
                continue;
            }
            used += cost;
            if new_chunk {
                chunks_used.push(p.chunk);
            }
            picked.push(i);
        }
        picked.sort_unstable();
        let mut out: Vec<ChunkText> = Vec::new();
        let mut last: Option<usize> = None;
        let mut sent_chars = 0;
        for &i in &picked {
            let Some(p) = passages.get(i) else { continue };
            sent_chars += p.text.chars().count();
            match out.last_mut() {
                Some(c) if c.chunk == p.chunk => {
                    c.text.push_str(if last == Some(p.order.saturating_sub(1)) {
                        "\n"
                    } else {
                        GAP
                    });
                    c.text.push_str(&p.text);
                }
                _ => out.push(ChunkText {
                    chunk: p.chunk,
                    text: p.text.clone(),
                }),
            }
            last = Some(p.order);
        }
        let about = about(index, question, &picked);
        Selection {
            chunks: out,
            passages_sent: picked.len(),
            passages_total: passages.len(),
            sent_chars,
            total_chars: self.total_chars,
            about,
        }
    }
}

/// Page indexes kept between requests, by the host (a bounded cache in the
/// session): the core only asks for one and hands back what it built.
pub trait PageIndexes: Send + Sync + std::fmt::Debug {
    /// The index built from exactly `chunks`, if one is kept.
    fn find(&self, chunks: &[(usize, &str)]) -> Option<std::sync::Arc<PageIndex>>;
    /// Keeps a new index (the least recently used one may go).
    fn keep(&self, index: std::sync::Arc<PageIndex>);
}

/// The passages of `chunks` (1-based number, text) most relevant to
/// `question` that fit in `budget` chars of JSON documents; the index comes
/// from `indexes` when it has this page's, and is left there when built.
pub fn select_with(
    chunks: &[(usize, &str)],
    question: &str,
    budget: usize,
    indexes: Option<&dyn PageIndexes>,
) -> Selection {
    let Some(indexes) = indexes else {
        return PageIndex::build(chunks).select(question, budget);
    };
    let index = indexes.find(chunks).unwrap_or_else(|| {
        let built = std::sync::Arc::new(PageIndex::build(chunks));
        indexes.keep(built.clone());
        built
    });
    index.select(question, budget)
}

/// [`select_with`] without a cache.
pub fn select(chunks: &[(usize, &str)], question: &str, budget: usize) -> Selection {
    select_with(chunks, question, budget, None)
}

/// Chars the text takes as a JSON string (quotes and escapes counted).
fn json_len(text: &str) -> usize {
    crate::json_size::json_str_chars(text)
}

/// `text` in passages of about [`PASSAGE_CHARS`], cut at line ends (a
/// very long line on white space).
fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let mut line = line;
        while line.chars().count() > MAX_PASSAGE_CHARS {
            let head = crate::text::prefix_chars(line, PASSAGE_CHARS);
            let cut = head
                .rfind(char::is_whitespace)
                .filter(|&c| c > 0)
                .unwrap_or(head.len());
            flush(&mut current, &mut out);
            out.push(line[..cut].trim().to_owned());
            line = &line[cut..];
        }
        if !current.is_empty() && current.chars().count() + line.chars().count() > PASSAGE_CHARS {
            flush(&mut current, &mut out);
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(line);
    }
    flush(&mut current, &mut out);
    out.retain(|p| !p.trim().is_empty());
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.trim().is_empty() {
        out.push(std::mem::take(current));
    }
    current.clear();
}

/// The question's words (as written, lower-cased) that the chosen passages
/// (`picked`, by unit) contain, in question order.
fn about(index: &Index, question: &str, picked: &[usize]) -> Vec<String> {
    // Compared as the index's terms, so "last" finds "lasts" in the page's
    // language; read from the index (each passage is a unit of it) instead
    // of tokenizing the chosen passages again.
    let in_passages = |id: u32| picked.iter().any(|&unit| index.has_term(unit, id));
    let mut out: Vec<String> = Vec::new();
    for word in question.split(|c: char| !c.is_alphanumeric()) {
        let tokens = retrieval::tokenize(word);
        let Some(token) = tokens.first() else {
            continue;
        };
        let word = word.to_lowercase();
        let in_passages = index.term(token).is_some_and(in_passages);
        if retrieval::is_stopword(token) || !in_passages || out.contains(&word) {
            continue;
        }
        out.push(word);
        if out.len() == MAX_ABOUT {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(chunks: usize) -> Vec<(usize, String)> {
        (1..=chunks)
            .map(|c| {
                let text = (0..40)
                    .map(|l| format!("Paragraph {l} of part {c} talks about trains, stations and timetables at length."))
                    .collect::<Vec<_>>()
                    .join("\n");
                (c, text)
            })
            .collect()
    }

    #[test]
    fn the_relevant_passage_is_chosen_wherever_it_is() {
        let mut chunks = page(100);
        chunks[89]
            .1
            .push_str("\nThe warranty on the sleeper cabins lasts seven years.");
        let refs: Vec<(usize, &str)> = chunks.iter().map(|(c, t)| (*c, t.as_str())).collect();
        let s = select(&refs, "How long does the warranty last?", 6_000);
        assert!(s
            .chunks
            .iter()
            .any(|c| c.chunk == 90 && c.text.contains("seven years")));
        assert!(s.sent_chars < s.total_chars / 10);
        assert_eq!(s.about, vec!["warranty".to_string(), "last".to_string()]);
        let numbers: Vec<usize> = s.chunks.iter().map(|c| c.chunk).collect();
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        assert_eq!(numbers, sorted, "page order");
        let docs: usize = s
            .chunks
            .iter()
            .map(|c| json_len(&c.text) + DOC_OVERHEAD_CHARS)
            .sum();
        assert!(docs <= 6_000, "{docs}");
    }

    /// A cache that keeps one index and counts how often one was built.
    #[derive(Debug, Default)]
    struct One(std::sync::Mutex<(Option<std::sync::Arc<PageIndex>>, usize)>);

    impl PageIndexes for One {
        fn find(&self, chunks: &[(usize, &str)]) -> Option<std::sync::Arc<PageIndex>> {
            let kept = self.0.lock().unwrap();
            kept.0.clone().filter(|i| i.is_of(chunks))
        }
        fn keep(&self, index: std::sync::Arc<PageIndex>) {
            let mut kept = self.0.lock().unwrap();
            *kept = (Some(index), kept.1 + 1);
        }
    }

    #[test]
    fn a_kept_index_selects_as_a_new_one_and_only_for_its_page() {
        let mut chunks = page(30);
        chunks[20]
            .1
            .push_str("\nThe ferry to the island leaves at 6:40.");
        let refs: Vec<(usize, &str)> = chunks.iter().map(|(c, t)| (*c, t.as_str())).collect();
        let cache = One::default();
        for q in ["When does the ferry leave?", "Which stations are there?"] {
            let fresh = select(&refs, q, 4_000);
            assert_eq!(select_with(&refs, q, 4_000, Some(&cache)), fresh);
        }
        assert_eq!(cache.0.lock().unwrap().1, 1, "built once for two questions");
        // The same page with one word changed is another page.
        let mut changed = chunks.clone();
        changed[20].1 = changed[20].1.replace("6:40", "6:45");
        let refs2: Vec<(usize, &str)> = changed.iter().map(|(c, t)| (*c, t.as_str())).collect();
        let s = select_with(&refs2, "When does the ferry leave?", 4_000, Some(&cache));
        assert!(s.chunks.iter().any(|c| c.text.contains("6:45")));
        assert_eq!(cache.0.lock().unwrap().1, 2);
    }

    #[test]
    fn a_question_the_page_has_no_word_of_falls_back_to_page_order() {
        let chunks = page(10);
        let refs: Vec<(usize, &str)> = chunks.iter().map(|(c, t)| (*c, t.as_str())).collect();
        let s = select(&refs, "zzz qqq?", 3_000);
        assert_eq!(s.chunks[0].chunk, 1);
        assert!(s.passages_sent > 0);
        assert!(s.about.is_empty());
    }

    #[test]
    fn gaps_between_passages_of_one_chunk_are_marked() {
        let text = format!(
            "{}\nalpha fact here.\n{}\nbeta fact here.",
            "filler words ".repeat(100),
            "more filler ".repeat(100)
        );
        let s = select(&[(1, &text)], "alpha beta", 1_000);
        assert_eq!(s.chunks.len(), 1);
        assert!(s.chunks[0].text.contains("alpha"), "{:?}", s.chunks[0].text);
        assert!(s.chunks[0].text.contains("beta"));
        assert!(s.chunks[0].text.contains(GAP));
    }
}

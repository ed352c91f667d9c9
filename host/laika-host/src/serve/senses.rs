//! Decontextualizing an ask and telling when the question itself is
//! ambiguous, over the documents retrieved for it.
//!
//! The criterion is about the documents, never about particular words: the
//! documents scoring close to the best are grouped by the words they share
//! (a document's words are its title and page text, the question's own
//! words left out); when they fall into
//! several groups that share almost nothing, the question reads several
//! ways ("jaguar": the car, the cat). The ask's context (`context.text`,
//! `context.memory`) settles it when it favours one group; else the client
//! is asked which.

use crate::store::documents::HistoryDocument;
use std::collections::HashSet;

/// A document scoring at least this share of the best is a close reading.
const CLOSE: f64 = 0.75;
/// At most this many close documents are compared.
const MAX_CLOSE: usize = 4;
/// Shorter words are mostly grammar in the languages the pages are in;
/// they say nothing about what a page is about.
const MIN_WORD_CHARS: usize = 4;
/// Two documents are about the same thing when at least this share of the
/// smaller one's words is in the other.
const SAME_SENSE: f64 = 0.2;

/// The lowercased words of `text` of at least [`MIN_WORD_CHARS`] characters.
pub fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= MIN_WORD_CHARS)
        .map(str::to_lowercase)
        .collect()
}

/// What a document is about: the words of its title and page, the
/// question's left out. The stored answer stands in for a turn without a
/// page; otherwise it is left out, as answers share the assistant's own
/// phrasing whatever the page is about.
fn content_words(doc: &HistoryDocument, question: &HashSet<String>) -> HashSet<String> {
    let body = if doc.page_text.trim().is_empty() {
        &doc.answer_text
    } else {
        &doc.page_text
    };
    let mut w = words(&format!("{}\n{}", doc.title, body));
    w.retain(|x| !question.contains(x));
    w
}

fn overlap(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let smaller = a.len().min(b.len());
    if smaller == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / smaller as f64
}

/// How many of `context`'s words `doc` mentions.
fn context_hits(doc: &HistoryDocument, context: &HashSet<String>) -> usize {
    if context.is_empty() {
        return 0;
    }
    let all = words(&format!(
        "{}\n{}\n{}\n{}",
        doc.title, doc.user_text, doc.answer_text, doc.page_text
    ));
    all.intersection(context).count()
}

/// The documents close to the best one (indexes, best first).
fn close(docs: &[HistoryDocument]) -> Vec<usize> {
    let Some(best) = docs.iter().map(|d| d.score).reduce(f64::max) else {
        return Vec::new();
    };
    docs.iter()
        .enumerate()
        .filter(|(_, d)| best <= 0.0 || d.score >= best * CLOSE)
        .map(|(i, _)| i)
        .take(MAX_CLOSE)
        .collect()
}

/// Puts the close documents that mention more of the context first; the
/// order is otherwise the retrieval's. Context never lifts a weak match
/// over a strong one: it breaks near-ties.
pub fn order_by_context(docs: &mut [HistoryDocument], context: &HashSet<String>) {
    let n = close(docs).len();
    docs[..n].sort_by_key(|d| std::cmp::Reverse(context_hits(d, context)));
}

/// The readings the question has over `docs` when it has several the
/// context does not settle: groups of indexes into `docs`, each group's
/// best first. Empty when the question reads one way.
pub fn ambiguous(
    question: &str,
    docs: &[HistoryDocument],
    context: &HashSet<String>,
) -> Vec<Vec<usize>> {
    let question = words(question);
    let close = close(docs);
    let about: Vec<HashSet<String>> = close
        .iter()
        .map(|&i| content_words(&docs[i], &question))
        .collect();
    // Single-link grouping, over positions in `close`: a document joins
    // the first group it shares enough words with any member of.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for k in 0..close.len() {
        match groups.iter_mut().find(|g| {
            g.iter()
                .any(|&j| overlap(&about[k], &about[j]) >= SAME_SENSE)
        }) {
            Some(g) => g.push(k),
            None => groups.push(vec![k]),
        }
    }
    let groups: Vec<Vec<usize>> = groups
        .into_iter()
        .map(|g| g.into_iter().map(|k| close[k]).collect())
        .collect();
    if groups.len() < 2 {
        return Vec::new();
    }
    let hits: Vec<usize> = groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|&i| context_hits(&docs[i], context))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let most = hits.iter().copied().max().unwrap_or(0);
    if most > 0 && hits.iter().filter(|&&h| h == most).count() == 1 {
        return Vec::new();
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(title: &str, text: &str, score: f64) -> HistoryDocument {
        HistoryDocument {
            conversation_id: "c".into(),
            turn: 1,
            created_at: "t".into(),
            url: Some(format!("https://example.com/{}", title.len())),
            origin: None,
            title: title.into(),
            user_text: format!("Summarize {title}"),
            answer_text: String::new(),
            page_text: text.into(),
            score,
        }
    }

    fn cars_and_cats() -> Vec<HistoryDocument> {
        vec![
            doc("Jaguar XK review", "The jaguar coupe has a supercharged engine, leather seats and a gearbox that shifts smoothly.", 5.0),
            doc("Jaguars of the rainforest", "The jaguar hunts caiman and deer at night; the rainforest canopy hides the spotted predator.", 4.6),
            doc("Jaguar F-Type engine", "A supercharged engine and an eight-speed gearbox: this jaguar coupe is fast.", 4.2),
        ]
    }

    #[test]
    fn documents_about_different_things_with_close_scores_are_two_readings() {
        let docs = cars_and_cats();
        let senses = ambiguous("jaguar", &docs, &HashSet::new());
        assert_eq!(senses, vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn one_reading_far_ahead_or_settled_by_context_is_not_ambiguous() {
        let mut docs = cars_and_cats();
        docs[1].score = 1.0;
        assert!(ambiguous("jaguar", &docs, &HashSet::new()).is_empty());
        let docs = cars_and_cats();
        assert!(ambiguous("jaguar", &docs, &words("tropical rainforest animals")).is_empty());
        // Context both readings mention settles nothing.
        assert_eq!(ambiguous("jaguar", &docs, &words("jaguar")).len(), 2);
    }

    #[test]
    fn documents_about_the_same_thing_are_one_reading() {
        let docs = vec![cars_and_cats().remove(0), cars_and_cats().remove(2)];
        assert!(ambiguous("jaguar", &docs, &HashSet::new()).is_empty());
    }

    #[test]
    fn context_breaks_near_ties_only() {
        let mut docs = cars_and_cats();
        docs.push(doc(
            "Rainforest birds",
            "Toucans of the rainforest canopy.",
            1.0,
        ));
        order_by_context(&mut docs, &words("rainforest"));
        assert_eq!(docs[0].title, "Jaguars of the rainforest");
        assert_eq!(docs[3].title, "Rainforest birds");
    }
}

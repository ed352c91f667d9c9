//! Which sentences of a page matter for a summary without a question:
//! salience against the page's centroid, TextRank among the most salient,
//! maximal marginal relevance for one point per idea, and a unit's form
//! (`quality`: length, boilerplate, final punctuation). Over the retrieval
//! index of `laika_core::retrieval`.

use laika_core::retrieval::{best_first, tokenize, word_count, Index, Page, Scored, CLOSERS};
use std::cmp::Ordering;

/// How much a unit looks like a content sentence, from its form alone
/// (0..=1): length, boilerplate phrases, terminal punctuation.
pub fn quality(page: &Page, index: &Index, unit: usize) -> f64 {
    let text = page.unit_text(unit);
    let words = word_count(text);
    let length = match words {
        0..=3 => 0.1,
        4..=5 => 0.4,
        6..=7 => 0.75,
        8..=40 => 1.0,
        41..=60 => 0.8,
        _ => 0.5,
    };
    let boiler = if index.is_chrome(unit, words) || text.contains('©') {
        0.1
    } else {
        1.0
    };
    let ends = text.trim_end_matches(CLOSERS);
    let punct = if ends.ends_with(['.', '!', '…', '。', '！']) {
        1.0
    } else if ends.ends_with(['?', '？']) {
        0.7
    } else {
        0.6
    };
    let content = if index.unit_len(unit) == 0 { 0.0 } else { 1.0 };
    length * boiler * punct * content
}

/// Each term's idf for summaries (smoothed, always positive).
fn summary_idf(index: &Index) -> Vec<f64> {
    let n = index.len() as f64;
    index
        .dfs()
        .map(|df| (1.0 + n / (df.max(1) as f64)).ln())
        .collect()
}

/// Salience of every prose unit for a summary without a question, best first:
/// cosine of the unit's TF-IDF vector with the page's (title terms boosted),
/// times a lead-position prior and [`quality`].
pub fn salience(page: &Page, index: &Index) -> Vec<Scored> {
    let idf = summary_idf(index);
    let weight = |id: u32| idf.get(id as usize).copied().unwrap_or(0.0);

    let mut tf_page = vec![0.0f64; idf.len()];
    for terms in index.unit_terms() {
        for &(id, tf) in terms {
            if let Some(t) = tf_page.get_mut(id as usize) {
                *t += f64::from(tf);
            }
        }
    }
    let mut centroid: Vec<f64> = tf_page
        .iter()
        .enumerate()
        .map(|(id, &tf)| (1.0 + tf).ln() * idf.get(id).copied().unwrap_or(0.0))
        .collect();
    for token in tokenize(&page.title) {
        if let Some(id) = index.term(&token) {
            if let Some(c) = centroid.get_mut(id as usize) {
                *c += 2.0 * weight(id);
            }
        }
    }
    let centroid_norm = centroid.iter().map(|c| c * c).sum::<f64>().sqrt();
    if centroid_norm <= 0.0 {
        return Vec::new();
    }

    let mut out = Vec::new();
    let mut position = 0usize;
    for (unit, terms) in index.unit_terms().iter().enumerate() {
        let Some(u) = page.units.get(unit) else {
            continue;
        };
        if !u.kind.is_prose() {
            continue;
        }
        let (mut dot, mut norm) = (0.0f64, 0.0f64);
        for &(id, tf) in terms {
            let w = (1.0 + f64::from(tf).ln()) * weight(id);
            dot += w * centroid.get(id as usize).copied().unwrap_or(0.0);
            norm += w * w;
        }
        let lead = 1.0 + 0.3 / (1.0 + position as f64 / 4.0);
        position += 1;
        if norm <= 0.0 {
            continue;
        }
        let score = dot / (norm.sqrt() * centroid_norm) * lead * quality(page, index, unit);
        if score > 0.0 {
            out.push(Scored { unit, score });
        }
    }
    best_first(&mut out);
    out
}

/// How many of the most salient units TextRank links: enough for any
/// article's key sentences, and bounded so a 1 MiB page stays fast.
const TEXTRANK_POOL: usize = 150;
const TEXTRANK_DAMPING: f64 = 0.85;
const TEXTRANK_ROUNDS: usize = 30;

/// A unit's TF-IDF vector, sorted by term id, unit length.
fn tfidf(index: &Index, unit: usize, idf: &[f64]) -> Vec<(u32, f64)> {
    let mut v: Vec<(u32, f64)> = index
        .unit_terms()
        .get(unit)
        .map(|terms| {
            terms
                .iter()
                .map(|&(id, tf)| {
                    let w = idf.get(id as usize).copied().unwrap_or(0.0);
                    (id, (1.0 + f64::from(tf).ln()) * w)
                })
                .collect()
        })
        .unwrap_or_default();
    let norm = v.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
    if norm > 0.0 {
        for (_, w) in &mut v {
            *w /= norm;
        }
    }
    v
}

fn cosine(a: &[(u32, f64)], b: &[(u32, f64)]) -> f64 {
    let (mut i, mut j, mut dot) = (0, 0, 0.0);
    while let (Some(&(p, x)), Some(&(q, y))) = (a.get(i), b.get(j)) {
        match p.cmp(&q) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                dot += x * y;
                i += 1;
                j += 1;
            }
        }
    }
    dot
}

/// Key sentences for a summary: TextRank (PageRank over the sentences,
/// linked by the cosine of their TF-IDF vectors) among the
/// [`TEXTRANK_POOL`] most salient units that pass `keep`, weighted by
/// [`quality`]; then picked by maximal marginal relevance, so each point is
/// central and says something the others do not. Returns up to `k` units,
/// best first.
pub fn key_sentences(
    page: &Page,
    index: &Index,
    keep: impl Fn(usize) -> bool,
    k: usize,
) -> Vec<usize> {
    let pool: Vec<usize> = salience(page, index)
        .into_iter()
        .map(|s| s.unit)
        .filter(|&u| keep(u))
        .take(TEXTRANK_POOL)
        .collect();
    let idf = summary_idf(index);
    let vectors: Vec<Vec<(u32, f64)>> = pool.iter().map(|&u| tfidf(index, u, &idf)).collect();
    let n = pool.len();
    let mut sim = vec![0.0f64; n * n];
    for a in 0..n {
        for b in a + 1..n {
            let c = cosine(&vectors[a], &vectors[b]);
            sim[a * n + b] = c;
            sim[b * n + a] = c;
        }
    }
    let out_weight: Vec<f64> = (0..n)
        .map(|a| sim[a * n..(a + 1) * n].iter().sum())
        .collect();
    let mut rank = vec![1.0f64; n];
    for _ in 0..TEXTRANK_ROUNDS {
        let next: Vec<f64> = (0..n)
            .map(|b| {
                let flow: f64 = (0..n)
                    .filter(|&a| out_weight[a] > 0.0)
                    .map(|a| sim[a * n + b] / out_weight[a] * rank[a])
                    .sum();
                (1.0 - TEXTRANK_DAMPING) + TEXTRANK_DAMPING * flow
            })
            .collect();
        rank = next;
    }
    let score: Vec<f64> = pool
        .iter()
        .zip(&rank)
        .map(|(&u, r)| r * quality(page, index, u))
        .collect();
    let top = score
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    // Maximal marginal relevance: centrality minus likeness to what is
    // already chosen; a near-duplicate of a chosen point is never taken.
    let mut chosen: Vec<usize> = Vec::new();
    while chosen.len() < k.min(n) {
        let best = (0..n)
            .filter(|a| !chosen.contains(a))
            .filter(|&a| {
                chosen.iter().all(|&c| {
                    sim[a * n + c] <= MMR_DUPLICATE && index.jaccard(pool[a], pool[c]) <= 0.6
                })
            })
            .map(|a| {
                let like = chosen.iter().map(|&c| sim[a * n + c]).fold(0.0, f64::max);
                (a, MMR_LAMBDA * score[a] / top - (1.0 - MMR_LAMBDA) * like)
            })
            .max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)));
        match best {
            Some((a, _)) => chosen.push(a),
            None => break,
        }
    }
    chosen
        .into_iter()
        .filter_map(|a| pool.get(a).copied())
        .collect()
}

/// MMR's balance of centrality against novelty.
const MMR_LAMBDA: f64 = 0.7;
/// Above this cosine two sentences say the same thing.
const MMR_DUPLICATE: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;
    use laika_core::retrieval::Source;

    /// Takes up to `k` units from `ranked` (best first), skipping any whose term
    /// set overlaps an already chosen one by more than `max_jaccard`. Reads
    /// `ranked` lazily, so a costly filter upstream only runs until `k` are found.
    fn pick_diverse(
        index: &Index,
        ranked: impl IntoIterator<Item = usize>,
        k: usize,
        max_jaccard: f64,
    ) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::with_capacity(k);
        for unit in ranked {
            if chosen.len() >= k {
                break;
            }
            if chosen
                .iter()
                .all(|&c| index.jaccard(c, unit) <= max_jaccard)
            {
                chosen.push(unit);
            }
        }
        chosen
    }

    #[test]
    fn salience_prefers_content_over_chrome_and_dedupes() {
        let mut page = Page::default();
        page.title = "Solar panels on city roofs".into();
        let text = "We use cookies to improve your experience. Accept all cookies.\n\
                    Sign in\nSubscribe to our newsletter for more solar news.\n\
                    H1: Solar panels on city roofs\n\
                    Cities are installing solar panels on public roofs to cut energy costs.\n\
                    The new solar panels on roofs produce enough power for many schools.\n\
                    Installing solar panels on public roofs helps cities cut their energy costs.\n\
                    Engineers say roof panels last about twenty five years with little upkeep.\n\
                    All rights reserved. Copyright 2024 Solar News.";
        page.add_text(
            Source {
                doc_id: "d".into(),
                field: "text".into(),
                handle_id: None,
            },
            text,
        );
        let index = Index::build(&page);
        let ranked = salience(&page, &index);
        let top = pick_diverse(&index, ranked.iter().map(|s| s.unit), 3, 0.5);
        let texts: Vec<&str> = top.iter().map(|&u| page.unit_text(u)).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        for t in &texts {
            let lower = t.to_lowercase();
            assert!(
                !lower.contains("cookie")
                    && !lower.contains("subscribe")
                    && !lower.contains("rights"),
                "{t}"
            );
        }
        // The two near-identical "cut energy costs" sentences are not both picked.
        let both = texts.iter().filter(|t| t.contains("energy costs")).count();
        assert_eq!(both, 1, "{texts:?}");
    }

    #[test]
    fn salience_on_hostile_units_never_panics() {
        let mut page = Page::default();
        for s in [
            "H",
            "H1:",
            "-",
            ">",
            "Code:",
            "....",
            "?!?!",
            "\u{0}\u{202e}.",
            "a.\u{301}B",
            "Ⅷ. İİ. ß.",
        ] {
            page.add_text(
                Source {
                    doc_id: "d".into(),
                    field: "text".into(),
                    handle_id: None,
                },
                s,
            );
        }
        let index = Index::build(&page);
        let _ = salience(&page, &index);
    }
}

//! The session's page indexes: the passages and BM25 index of the pages its
//! turns were over budget on (`laika_core::select::PageIndex`), kept so the
//! next step of an agent loop and a follow-up question on the same page rank
//! its passages without tokenizing and stemming the whole page again.
//!
//! Bounded: at most [`CAPACITY`] pages and [`MAX_PAGE_CHARS`] characters of
//! them, the least recently used going first; a page larger than that alone
//! is not kept (a 60 MiB page's index would otherwise outlive its turn).
//! A page is found by comparing its chunks with those an index was built
//! from, so a changed page never gets an old index.

use laika_core::select::{PageIndex, PageIndexes};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Pages kept: as many as turns may run at once, each on its own tab.
pub const CAPACITY: usize = 4;
/// Characters of page text kept indexed in all (each costs about three
/// times over: the page, its passages, the index).
pub const MAX_PAGE_CHARS: usize = 8 << 20;

#[derive(Debug)]
pub struct PageIndexCache {
    /// Most recently used first.
    entries: Mutex<VecDeque<Arc<PageIndex>>>,
    max_chars: usize,
}

impl Default for PageIndexCache {
    fn default() -> Self {
        PageIndexCache::with_max_chars(MAX_PAGE_CHARS)
    }
}

impl PageIndexCache {
    /// A cache keeping at most `max_chars` characters of pages indexed.
    pub fn with_max_chars(max_chars: usize) -> PageIndexCache {
        PageIndexCache {
            entries: Mutex::new(VecDeque::new()),
            max_chars,
        }
    }
}

impl PageIndexes for PageIndexCache {
    fn find(&self, chunks: &[(usize, &str)]) -> Option<Arc<PageIndex>> {
        let mut entries = self.entries.lock().ok()?;
        let at = entries.iter().position(|e| e.is_of(chunks))?;
        let found = entries.remove(at)?;
        entries.push_front(found.clone());
        Some(found)
    }

    fn keep(&self, index: Arc<PageIndex>) {
        if index.page_chars() > self.max_chars {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            entries.push_front(index);
            entries.truncate(CAPACITY);
            let mut kept = 0usize;
            let fits = entries
                .iter()
                .take_while(|e| {
                    kept = kept.saturating_add(e.page_chars());
                    kept <= self.max_chars
                })
                .count();
            entries.truncate(fits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_the_same_page_and_forgets_the_oldest() {
        let cache = PageIndexCache::default();
        let page = |n: usize| format!("Page {n} talks about bridges and their costs.");
        let texts: Vec<String> = (0..=CAPACITY).map(page).collect();
        for t in &texts {
            cache.keep(Arc::new(PageIndex::build(&[(1, t)])));
        }
        assert!(cache.find(&[(1, &texts[0])]).is_none(), "the oldest went");
        let newest = cache.find(&[(1, &texts[CAPACITY])]).unwrap();
        assert!(newest.is_of(&[(1, &texts[CAPACITY])]));
        assert!(cache
            .find(&[(1, "Page 9 talks about bridges and their costs!")])
            .is_none());
        assert!(
            cache.find(&[(2, &texts[1])]).is_none(),
            "chunk numbers count"
        );
        // A hit is used again: it outlives pages kept after it.
        cache.find(&[(1, &texts[1])]).unwrap();
        for extra in ["x1", "x2", "x3"] {
            cache.keep(Arc::new(PageIndex::build(&[(1, extra)])));
        }
        assert!(cache.find(&[(1, &texts[1])]).is_some());
        assert!(cache.find(&[(1, &texts[2])]).is_none());
    }

    #[test]
    fn keeps_no_more_page_text_than_the_bound() {
        let cache = PageIndexCache::with_max_chars(100);
        let page = |tag: &str, chars: usize| format!("{tag} {}", "w".repeat(chars - 2));
        let (a, b) = (page("a", 35), page("b", 35));
        cache.keep(Arc::new(PageIndex::build(&[(1, &a)])));
        cache.keep(Arc::new(PageIndex::build(&[(1, &b)])));
        assert!(cache.find(&[(1, &a)]).is_some(), "two fit");
        let big = page("c", 60);
        cache.keep(Arc::new(PageIndex::build(&[(1, &big)])));
        assert!(cache.find(&[(1, &big)]).is_some(), "the newest is kept");
        assert!(
            cache.find(&[(1, &a)]).is_some(),
            "the next most recent still fits"
        );
        assert!(
            cache.find(&[(1, &b)]).is_none(),
            "the oldest went to make room"
        );
        let huge = page("d", 101);
        cache.keep(Arc::new(PageIndex::build(&[(1, &huge)])));
        assert!(cache.find(&[(1, &huge)]).is_none(), "too large alone");
        assert!(
            cache.find(&[(1, &big)]).is_some(),
            "and nothing dropped for it"
        );
    }
}

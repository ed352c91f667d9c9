//! The session's page indexes: the passages and BM25 index of the pages its
//! turns were over budget on (`laika_core::select::PageIndex`), kept so the
//! next step of an agent loop and a follow-up question on the same page rank
//! its passages without tokenizing and stemming the whole page again.
//!
//! Bounded: at most [`CAPACITY`] pages, the least recently used goes first.
//! A page is found by comparing its chunks with those an index was built
//! from, so a changed page never gets an old index.

use laika_core::select::{PageIndex, PageIndexes};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Pages kept: as many as turns may run at once, each on its own tab.
pub const CAPACITY: usize = 4;

#[derive(Debug, Default)]
pub struct PageIndexCache {
    /// Most recently used first.
    entries: Mutex<VecDeque<Arc<PageIndex>>>,
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
        if let Ok(mut entries) = self.entries.lock() {
            entries.push_front(index);
            entries.truncate(CAPACITY);
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
}

//! Commit detection: whether a control's label says it buys, pays, deletes,
//! sends or confirms something, so a click on it is asked, never done
//! silently.

use super::fold::fold_words;

const COMMIT_WORDS: &[&str] = &[
    "buy",
    "purchase",
    "pay",
    "checkout",
    "order",
    "delete",
    "remove",
    "send",
    "transfer",
    "subscribe",
    "unsubscribe",
    "confirm",
    "donate",
    "withdraw",
    "deactivate",
    "erase",
    "bid",
    "sell",
    "reserve",
    "buynow",
    "paynow",
    "ordernow",
    "booknow",
    "placeorder",
    "sendmoney",
];
const COMMIT_PHRASES: &[&str] = &[
    "book now",
    "book it",
    "book this",
    "check out",
    "submit payment",
    "submit order",
    "make payment",
    "make a payment",
    "cancel subscription",
    "cancel membership",
    "close account",
    "cancel account",
];

/// The commit word or phrase a label contains, if any.
pub(super) fn commit_word(label: &str) -> Option<&'static str> {
    let folded = fold_words(label, true);
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    if let Some(w) = COMMIT_WORDS.iter().find(|w| words.contains(w)) {
        return Some(*w);
    }
    if let Some(p) = COMMIT_PHRASES.iter().find(|p| contains_phrase(&folded, p)) {
        return Some(*p);
    }
    // Spaced-out letters ("B U Y  N O W") glued back together.
    let mut glued = String::new();
    for w in words.iter().copied().chain([""]) {
        if w.chars().count() == 1 {
            glued.push_str(w);
            continue;
        }
        if glued.len() > 1 {
            if let Some(c) = COMMIT_WORDS.iter().find(|c| glued.contains(**c)) {
                return Some(*c);
            }
        }
        glued.clear();
    }
    None
}

/// Whether `folded` contains `phrase` as whole words.
fn contains_phrase(folded: &str, phrase: &str) -> bool {
    folded.match_indices(phrase).any(|(i, _)| {
        let before = i == 0 || folded.as_bytes().get(i - 1) == Some(&b' ');
        let end = i + phrase.len();
        let after = end == folded.len() || folded.as_bytes().get(end) == Some(&b' ');
        before && after
    })
}

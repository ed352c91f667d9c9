//! Personal-data detectors for what a call sends out: email addresses
//! (also spelled out, "john [at] example [dot] com"), phone numbers, long
//! card, account or ID numbers and street addresses would leave the
//! browser, so such calls are asked first.

use crate::lexicon::{self, Category, Word};
use unicode_normalization::UnicodeNormalization;

/// What personal data `text` carries, if any.
pub(super) fn sensitive_query(text: &str) -> Option<&'static str> {
    let chars: Vec<char> = text.nfkc().collect();
    if has_email(&chars) {
        return Some("an email address");
    }
    let words = lexicon::fold(text);
    if spelled_out_email(text, &words) {
        return Some("an email address");
    }
    if let Some(what) = digit_runs(&chars) {
        return Some(what);
    }
    has_address(&words).then_some("a street address")
}

/// The raw text between word `i - 1` and word `i`.
fn gap<'a>(text: &'a str, words: &[Word], i: usize) -> &'a str {
    let start = i
        .checked_sub(1)
        .and_then(|p| words.get(p))
        .map_or(0, |w| w.span.end);
    let end = words.get(i).map_or(text.len(), |w| w.span.start);
    text.get(start..end.max(start)).unwrap_or("")
}

/// `local AT domain DOT tld`, where AT is `@`, a bracketed "at" in any
/// language, or a plain "at" followed by a spelled-out "dot".
fn spelled_out_email(text: &str, words: &[Word]) -> bool {
    let tld = |w: &Word| {
        let n = w.text.chars().count();
        (2..=24).contains(&n) && w.text.chars().all(char::is_alphabetic)
    };
    let is_dot = |i: usize| {
        words
            .get(i)
            .is_some_and(|w| lexicon::is_word(Category::EmailDot, &w.text))
    };
    for i in 1..words.len() {
        let Some(w) = words.get(i) else { continue };
        let raw_at = gap(text, words, i).contains('@');
        let word_at = lexicon::is_word(Category::EmailAt, &w.text);
        if !raw_at && !word_at {
            continue;
        }
        let bracketed = word_at
            && gap(text, words, i)
                .trim_end()
                .ends_with(['[', '(', '{', '<'])
            && gap(text, words, i + 1)
                .trim_start()
                .starts_with([']', ')', '}', '>']);
        // The domain starts right after the "at" (or after the `@`).
        let domain = if raw_at { i } else { i + 1 };
        for d in domain..(domain + 3).min(words.len()) {
            let dot_word = is_dot(d + 1) && words.get(d + 2).is_some_and(tld);
            let raw_dot =
                gap(text, words, d + 1).contains('.') && words.get(d + 1).is_some_and(tld);
            if dot_word || ((raw_at || bracketed) && raw_dot) {
                return true;
            }
        }
    }
    false
}

/// A street word next to a house number ("Hauptstraße 5", "12 rue de
/// Rivoli", "中关村大街27号").
fn has_address(words: &[Word]) -> bool {
    let number = |w: &Word| {
        let digits = w.text.chars().take_while(char::is_ascii_digit).count();
        (1..=5).contains(&digits) && w.text.chars().count() <= digits + 1
    };
    words.iter().enumerate().any(|(i, w)| {
        if !lexicon::is_word(Category::Street, &w.text) {
            return false;
        }
        let glued_number = w.text.chars().any(|c| c.is_ascii_digit());
        let near = i.saturating_sub(2)..(i + 3).min(words.len());
        glued_number || words.get(near).is_some_and(|ws| ws.iter().any(number))
    })
}

fn has_email(chars: &[char]) -> bool {
    let local = |c: &char| c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-');
    chars
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == '@')
        .any(|(at, _)| {
            let has_local = at > 0 && chars.get(at - 1).is_some_and(local);
            let domain: String = chars
                .iter()
                .skip(at + 1)
                .take_while(|c| c.is_alphanumeric() || matches!(c, '.' | '-'))
                .collect();
            let domain = domain.trim_end_matches('.');
            let tld_ok = domain.rsplit_once('.').is_some_and(|(name, tld)| {
                !name.is_empty() && tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic)
            });
            has_local && tld_ok
        })
}

/// Runs of digits joined by single spaces, dashes, dots or brackets: nine
/// or more digits (card, account, SSN numbers) or a phone number.
fn digit_runs(chars: &[char]) -> Option<&'static str> {
    let is_sep = |c: char| matches!(c, ' ' | '-' | '.' | '(' | ')' | '/');
    let mut i = 0;
    while i < chars.len() {
        if !chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
            continue;
        }
        let before = chars.get(..i).unwrap_or(&[]);
        let plus = before.iter().rev().find(|&&c| c != '(' && c != ' ') == Some(&'+');
        let mut groups: Vec<usize> = vec![0];
        let mut seps = 0;
        while let Some(&c) = chars.get(i) {
            if c.is_ascii_digit() {
                if seps > 0 {
                    groups.push(0);
                    seps = 0;
                }
                if let Some(last) = groups.last_mut() {
                    *last += 1;
                }
            } else if is_sep(c) && seps < 2 {
                seps += 1;
            } else {
                break;
            }
            i += 1;
        }
        let digits: usize = groups.iter().sum();
        if digits >= 9 {
            return Some("a long number (like a card, account or ID number)");
        }
        let local_phone = digits >= 7 && matches!(groups.as_slice(), [.., 3, 4]);
        if (plus && digits >= 7) || local_phone {
            return Some("a phone number");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_phones_numbers_and_addresses_are_personal() {
        let email = Some("an email address");
        assert_eq!(sensitive_query("mail a.b@example.org"), email);
        assert_eq!(sensitive_query("john [at] example [dot] com"), email);
        assert_eq!(sensitive_query("john(at)example.com"), email);
        assert_eq!(sensitive_query("john at example dot com"), email);
        assert_eq!(sensitive_query("juan arroba ejemplo punto es"), email);
        assert_eq!(sensitive_query("ivan собака mail точка ru"), email);
        assert_eq!(sensitive_query("john @ example . com"), email);
        assert_eq!(sensitive_query("@rustlang"), None);
        assert_eq!(sensitive_query("reviews at amazon.com"), None);
        assert_eq!(sensitive_query("call +1 555 1234"), Some("a phone number"));
        assert_eq!(sensitive_query("call 555-1234"), Some("a phone number"));
        assert!(sensitive_query("4111 1111 1111 1111").is_some_and(|w| w.contains("long number")));
        let address = Some("a street address");
        assert_eq!(sensitive_query("221B Baker Street London"), address);
        assert_eq!(sensitive_query("Hauptstraße 5 Berlin"), address);
        assert_eq!(sensitive_query("12 rue de Rivoli"), address);
        assert_eq!(sensitive_query("北京市海淀区中关村大街27号"), address);
        assert_eq!(sensitive_query("best street food"), None);
        assert_eq!(sensitive_query("world cup 1990-2000"), None);
        assert_eq!(sensitive_query("rust 1.85"), None);
    }
}

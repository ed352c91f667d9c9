//! Personal-data detectors for search queries: email addresses, phone
//! numbers and long card, account or ID numbers would leave the browser in
//! the query, so such searches are asked first.

use super::fold::fold_char;

/// What personal data a search query carries, if any.
pub(super) fn sensitive_query(query: &str) -> Option<&'static str> {
    let chars: Vec<char> = query.chars().map(fold_char).collect();
    if has_email(&chars) {
        return Some("an email address");
    }
    digit_runs(&chars)
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
    fn emails_phones_and_long_numbers_are_personal() {
        assert_eq!(
            sensitive_query("mail a.b@example.org"),
            Some("an email address")
        );
        assert_eq!(sensitive_query("@rustlang"), None);
        assert_eq!(sensitive_query("call +1 555 1234"), Some("a phone number"));
        assert_eq!(sensitive_query("call 555-1234"), Some("a phone number"));
        assert!(sensitive_query("4111 1111 1111 1111").is_some_and(|w| w.contains("long number")));
        assert_eq!(sensitive_query("world cup 1990-2000"), None);
        assert_eq!(sensitive_query("rust 1.85"), None);
    }
}

//! Secret detectors: API keys, cloud keys, tokens, JWTs, private keys,
//! session ids, payment card numbers and "my password is …" disclosures.
//!
//! One set of detectors serves two places: the Policy Gate refuses tool
//! calls that would send a secret out (a search query, a URL, typed text),
//! and the store scrubs secrets from titles, previews, messages and answers
//! before they are written. The token patterns are data
//! (`secrets/rules.json`, gitleaks-style, source noted there); cards are
//! found by the Luhn checksum with any separators; disclosures by the
//! multilingual [`crate::lexicon`].

use serde::Deserialize;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

const RULES_JSON: &str = include_str!("secrets/rules.json");

/// What replaces a secret in stored text.
pub const REDACTED: &str = "[redacted]";

#[derive(Deserialize)]
struct RuleSpec {
    id: String,
    kind: String,
    regex: String,
}

#[derive(Deserialize)]
struct RulesFile {
    rules: Vec<RuleSpec>,
}

struct Rule {
    kind: String,
    regex: regex::Regex,
}

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Byte range in the text.
    pub range: Range<usize>,
    /// What it is, for a sentence ("an AWS access key").
    pub kind: &'static str,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        // Compiled in and checked by a test; a rule that fails to compile
        // is skipped rather than taking the detectors down.
        let file: RulesFile =
            serde_json::from_str(RULES_JSON).unwrap_or(RulesFile { rules: Vec::new() });
        file.rules
            .into_iter()
            .filter(|r| !r.id.is_empty())
            .filter_map(|r| {
                regex::Regex::new(&r.regex).ok().map(|regex| Rule {
                    kind: r.kind,
                    regex,
                })
            })
            .collect()
    })
}

/// The longest text searched for "my password is …" disclosures.
pub const MAX_DISCLOSURE_SCAN: usize = 64 * 1024;

const CARD: &str = "a payment card number";
const TOKEN: &str = "a token-like string";
const DISCLOSED: &str = "a disclosed password or code";

/// Every secret in `text`, by position (overlaps merged, the first kind
/// kept).
pub fn find(text: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    for rule in rules() {
        found.extend(rule.regex.find_iter(text).map(|m| Finding {
            range: m.range(),
            kind: rule.kind.as_str(),
        }));
    }
    found.extend(
        cards(text)
            .into_iter()
            .map(|range| Finding { range, kind: CARD }),
    );
    found.extend(
        tokens(text)
            .into_iter()
            .map(|range| Finding { range, kind: TOKEN }),
    );
    // Disclosures are looked for word by word against every language's
    // words: kept to texts of message size, so a multi-MiB answer costs
    // only the linear scans above.
    let disclosures = if text.len() <= MAX_DISCLOSURE_SCAN {
        crate::lexicon::disclosures(text)
    } else {
        Vec::new()
    };
    found.extend(
        disclosures
            .into_iter()
            // "my password is [redacted]" is already scrubbed.
            .filter(|r| {
                let from = r.start.saturating_sub(1);
                !text.get(from..r.end).is_some_and(|v| v.contains(REDACTED))
            })
            .map(|range| Finding {
                range,
                kind: DISCLOSED,
            }),
    );
    found.sort_by_key(|f| (f.range.start, std::cmp::Reverse(f.range.end)));
    let mut merged: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(last) if f.range.start < last.range.end => {
                last.range.end = last.range.end.max(f.range.end);
            }
            _ => merged.push(f),
        }
    }
    merged
}

/// `text` with every secret replaced by [`REDACTED`]; unchanged text comes
/// back borrowed.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let found = find(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(text.get(at..f.range.start).unwrap_or(""));
        out.push_str(REDACTED);
        at = f.range.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    Cow::Owned(out)
}

/// ASCII and fullwidth digits.
fn digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => c.to_digit(10),
        '\u{FF10}'..='\u{FF19}' => Some(u32::from(c) - 0xFF10),
        _ => None,
    }
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

/// A card number: 13–19 digits starting with 2–6 (the card networks'
/// ranges), Luhn-valid, with any separators (up to three non-alphanumeric
/// characters) between digit groups.
fn is_card(digits: &[u32]) -> bool {
    (13..=19).contains(&digits.len())
        && digits.first().is_some_and(|d| (2..=6).contains(d))
        && luhn(digits)
}

fn cards(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // Digits of the current run with their byte ranges, and where groups start.
    let mut run: Vec<(u32, Range<usize>)> = Vec::new();
    let mut group_starts: Vec<usize> = Vec::new();
    let mut seps = 0;
    let mut flush = |run: &mut Vec<(u32, Range<usize>)>, starts: &mut Vec<usize>| {
        let digits: Vec<u32> = run.iter().map(|(d, _)| *d).collect();
        let span = |from: usize, to: usize| -> Option<Range<usize>> {
            Some(run.get(from)?.1.start..run.get(to - 1)?.1.end)
        };
        if is_card(&digits) {
            out.extend(span(0, digits.len()));
        } else if digits.len() > 19 {
            for &s in starts.iter() {
                for len in [16, 15, 19, 13, 14, 17, 18] {
                    if digits.get(s..s + len).is_some_and(is_card) {
                        out.extend(span(s, s + len));
                        break;
                    }
                }
            }
        }
        run.clear();
        starts.clear();
    };
    for (i, c) in text.char_indices() {
        if let Some(d) = digit(c) {
            if seps > 0 || run.is_empty() {
                group_starts.push(run.len());
            }
            run.push((d, i..i + c.len_utf8()));
            seps = 0;
        } else if !run.is_empty() && !c.is_alphanumeric() && c != '\n' && seps < 3 {
            seps += 1;
        } else {
            flush(&mut run, &mut group_starts);
            seps = 0;
        }
    }
    flush(&mut run, &mut group_starts);
    out
}

/// Random-looking tokens (session ids, unlabelled API keys): 24+ characters
/// of `[A-Za-z0-9_-]` mixing upper case, lower case and digits, switching
/// between them as random text does (camelCase words switch far less).
fn tokens(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (is_token_char(c) && i < text.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if text.get(s..i).is_some_and(looks_random) {
                    out.push(s..i);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn looks_random(token: &str) -> bool {
    let n = token.len();
    if n < 24 {
        return false;
    }
    let count = |f: fn(&char) -> bool| token.chars().filter(f).count();
    let (upper, lower, digits) = (
        count(char::is_ascii_uppercase),
        count(char::is_ascii_lowercase),
        count(char::is_ascii_digit),
    );
    if upper < 3 || lower < 3 || digits < 3 {
        return false;
    }
    let class = |c: char| {
        if c.is_ascii_uppercase() {
            0
        } else if c.is_ascii_lowercase() {
            1
        } else if c.is_ascii_digit() {
            2
        } else {
            3
        }
    };
    let bytes: Vec<u8> = token.bytes().collect();
    let switches = bytes
        .windows(2)
        .filter(|w| class(char::from(w[0])) != class(char::from(w[1])))
        .count();
    // Digits scattered in several runs, not one year or version number.
    let digit_runs = bytes
        .iter()
        .enumerate()
        .filter(|&(i, b)| {
            b.is_ascii_digit() && (i == 0 || bytes.get(i - 1).is_some_and(|p| !p.is_ascii_digit()))
        })
        .count();
    digit_runs >= 2 && switches * 20 >= n * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<&'static str> {
        find(text).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn every_rule_compiles() {
        let file: RulesFile = serde_json::from_str(RULES_JSON).unwrap();
        assert_eq!(rules().len(), file.rules.len());
        for r in &file.rules {
            regex::Regex::new(&r.regex).unwrap();
        }
    }

    #[test]
    fn token_formats_are_found() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE here", "an AWS access key"),
            ("ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "a GitHub token"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "a GitHub token"),
            ("glpat-abcdefghij0123456789", "a GitLab token"),
            ("xoxb-123456789012-abcdefghijkl", "a Slack token"),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe key"),
            ("sk-proj-abcdefghijklmnopqrstuvwxyz123456", "an OpenAI API key"),
            ("sk-ant-api03-abcdefghijklmnopqrstuv", "an Anthropic API key"),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "a Google API key"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "a JSON Web Token",
            ),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "a private key"),
            ("session_id=9f8e7d6c5b4a3210", "a secret value"),
            ("PHPSESSID: 2c7f1ad4e9b03", "a secret value"),
            ("Authorization: Bearer abcdefghijklmnop12345", "a bearer token"),
            ("https://bob:hunter2@example.com/", "a password in a URL"),
            ("id Xk9fQ2mZ7pL4vR8tW1yB6nC3", "a token-like string"),
        ];
        for (text, kind) in cases {
            assert_eq!(kinds(text).first().copied(), Some(kind), "{text}");
        }
    }

    #[test]
    fn cards_with_any_separators() {
        for text in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "4111.1111.1111.1111",
            "4111 / 1111 / 1111 / 1111",
            "4111_1111_1111_1111",
            "card: 4111\u{b7}1111\u{b7}1111\u{b7}1111",
            "\u{ff14}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}",
            "3782 822463 10005",
            "5555555555554444",
        ] {
            assert_eq!(kinds(text), vec![CARD], "{text}");
        }
        for text in [
            "4111 1111 1111 1112",
            "978-3-16-148410-0",
            "call 555 1234",
            "order 1234567890123",
        ] {
            assert!(!kinds(text).contains(&CARD), "{text}");
        }
    }

    #[test]
    fn ordinary_text_has_no_secrets() {
        for text in [
            "best running shoes 2024",
            "https://example.com/articles/HowToWriteRustCode2024Edition",
            "rust commit 3f9a2c1b7e5d4a6f8b0c2d4e6f8a0b1c2d3e4f5a",
            "ThisIsAVeryLongCamelCaseIdentifierName",
            "token economics explained",
            "my password is incorrect",
            "id 123e4567-e89b-12d3-a456-426614174000",
        ] {
            assert!(find(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn scrub_replaces_only_the_secret() {
        assert_eq!(scrub("use AKIAIOSFODNN7EXAMPLE now"), "use [redacted] now");
        assert_eq!(
            scrub("my password is hunter2, ok"),
            "my password is [redacted] ok"
        );
        assert!(matches!(scrub("nothing here"), Cow::Borrowed(_)));
        let twice = scrub("4111 1111 1111 1111 and sk_live_4eC39HqLyjWDarjtT1zdp7dc").into_owned();
        assert_eq!(twice, "[redacted] and [redacted]");
        assert_eq!(scrub(&twice), twice);
        let disclosed = scrub("my password is Hunter22").into_owned();
        assert!(find(&disclosed).is_empty(), "{disclosed}");
    }
}

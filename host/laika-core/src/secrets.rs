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
    /// Digits and letters the secret must hold: what tells a key from a
    /// word or a plain number where the pattern alone cannot.
    #[serde(default)]
    min_digits: usize,
    #[serde(default)]
    min_letters: usize,
}

#[derive(Deserialize)]
struct RulesFile {
    rules: Vec<RuleSpec>,
}

struct Rule {
    kind: String,
    regex: regex::Regex,
    min_digits: usize,
    min_letters: usize,
    /// The pattern names its secret (`(?P<secret>…)`).
    grouped: bool,
}

impl Rule {
    /// Where the rule finds secrets in `text`: the `secret` group when the
    /// pattern has one (the context word around it stays), else the match.
    fn ranges(&self, text: &str) -> Vec<Range<usize>> {
        let keeps = |value: &str| {
            let digits = value.chars().filter(char::is_ascii_digit).count();
            let letters = value.chars().filter(char::is_ascii_alphabetic).count();
            digits >= self.min_digits && letters >= self.min_letters
        };
        if self.grouped {
            self.regex
                .captures_iter(text)
                .filter_map(|caps| caps.name("secret"))
                .filter(|m| keeps(m.as_str()))
                .map(|m| m.range())
                .collect()
        } else {
            // No group asked for: the faster search that reports matches only.
            self.regex
                .find_iter(text)
                .filter(|m| keeps(m.as_str()))
                .map(|m| m.range())
                .collect()
        }
    }
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
                    min_digits: r.min_digits,
                    min_letters: r.min_letters,
                    grouped: regex.capture_names().any(|n| n == Some("secret")),
                    regex,
                })
            })
            .collect()
    })
}

const CARD: &str = "a payment card number";
const TOKEN: &str = "a token-like string";
const DISCLOSED: &str = "a disclosed password or code";

/// Every secret in `text`, by position (overlaps merged, the first kind
/// kept).
pub fn find(text: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    for rule in rules() {
        found.extend(rule.ranges(text).into_iter().map(|range| Finding {
            range,
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
    // Whatever the text's length: the lexicon's scan is linear too, so a
    // disclosure at the end of a long message is found.
    found.extend(
        crate::lexicon::disclosures(text)
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
    let found: Vec<Range<usize>> = find(text).into_iter().map(|f| f.range).collect();
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(redacted(text, &found))
}

/// `parts` (the text nodes of a paragraph, a link's words, the items of a
/// list) with every secret replaced, found in the parts read together with
/// their boundaries kept: context in one part counts for a secret in the
/// next ("my password is " then a link "hunter2"), and the end of a part
/// stays the end of a word (a key followed by a link is still a key). A
/// secret across a boundary, or split by one (`ghp_abc` then `def…`), is
/// cut from every part it touches. `None` for a part left unchanged.
pub fn scrub_parts(parts: &[&str]) -> Vec<Option<String>> {
    let mut cuts: Vec<Vec<Range<usize>>> = vec![Vec::new(); parts.len()];
    // Read with a space at each boundary, then glued: a key a page split
    // across two nodes (`<b>ghp_abc</b>def…`) is one key again glued, and
    // only what crosses a boundary is taken from that reading.
    for separator in [" ", ""] {
        let mut joined = String::new();
        let mut starts = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                joined.push_str(separator);
            }
            starts.push(joined.len());
            joined.push_str(part);
        }
        for f in find(&joined) {
            let first = starts
                .partition_point(|&s| s <= f.range.start)
                .saturating_sub(1);
            let crosses = starts
                .get(first + 1)
                .is_some_and(|&next| next < f.range.end);
            if separator.is_empty() && !crosses {
                continue;
            }
            for (i, (&start, part)) in starts.iter().zip(parts).enumerate().skip(first) {
                if start >= f.range.end {
                    break;
                }
                let (from, to) = (
                    f.range.start.max(start),
                    f.range.end.min(start + part.len()),
                );
                if let Some(cut) = cuts.get_mut(i).filter(|_| from < to) {
                    cut.push(from - start..to - start);
                }
            }
        }
    }
    parts
        .iter()
        .zip(cuts)
        .map(|(part, cut)| (!cut.is_empty()).then(|| redacted(part, &merged(cut))))
        .collect()
}

/// `ranges` sorted, overlapping ones made one.
fn merged(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `text` with the sorted, disjoint `ranges` replaced by [`REDACTED`].
fn redacted(text: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in ranges {
        out.push_str(text.get(at..range.start).unwrap_or(""));
        out.push_str(REDACTED);
        at = range.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// ASCII and fullwidth digits.
fn digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => c.to_digit(10),
        '\u{FF10}'..='\u{FF19}' => Some(u32::from(c) - 0xFF10),
        _ => None,
    }
}

/// The Luhn check digit of a card number holds.
pub(crate) fn luhn(digits: &[u32]) -> bool {
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
            // The same prefixes in any case.
            ("key akiaiosfodnn7example here", "an AWS access key"),
            ("ASIAY34FZKBOKMUTVV7A", "an AWS access key"),
            ("GHP_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "a GitHub token"),
            ("ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "a GitHub token"),
            ("gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "a GitHub token"),
            ("GLPAT-abcdefghij0123456789", "a GitLab token"),
            ("XOXP-123456789012-abcdefghijkl", "a Slack token"),
            ("xoxs-123456789012-abcdefghijkl", "a Slack token"),
            ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe key"),
            ("SK_LIVE_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe key"),
            ("aizaSyA1234567890abcdefghijklmnopqrstuv", "a Google API key"),
            ("SK-abcdefghij0123456789klmnopqrstuvwxyzAB", "an OpenAI API key"),
            ("SK-ANT-api03-abcdefghijklmnopqrstuv", "an Anthropic API key"),
            ("SK0123456789abcdef0123456789abcdef", "a Twilio key"),
            (
                "SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFg",
                "a SendGrid key",
            ),
            ("NPM_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "an npm token"),
            (
                "pypi-AgEIcHlwaS5vcmcCJDU3OTM5NjY2LTQ1NzItNDUwNi05NzU5LWQ1ZWY0ZGZlNjI0NQ",
                "a PyPI token",
            ),
            ("HF_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "a Hugging Face token"),
            ("key-0123456789abcdef0123456789abcdef", "a Mailgun key"),
            ("shpat_0123456789abcdef0123456789abcdef", "a Shopify token"),
            (
                "-----begin openssh private key-----\nb3Blb",
                "a private key",
            ),
            ("Authorization: Basic dXNlcjpodW50ZXIy", "a password in an Authorization header"),
            ("postgres://app:hunter2@db:5432/main", "a password in a URL"),
            // Keyed: a context word, then hex or base64 of 16+ characters.
            ("api_key: 3f9a2c1b7e5d4a6f8b0c", "a secret value"),
            ("the deploy TOKEN 3f9a2c1b7e5d4a6f8b0c2d4e", "a secret value"),
            ("Password => 'dGhpcyBpcyBhIHNlY3JldDE5'", "a secret value"),
            ("my key is 123e4567-e89b-12d3-a456-426614174000", "a secret value"),
            ("x-auth-header = Zm9vYmFyYmF6cXV4MTIzNDU2", "a secret value"),
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
            // Hashes and ids without a context word, long words, versions.
            "Merge 3f9a2c1b7e5d4a6f8b0c2d4e6f8a0b1c2d3e4f5a into main",
            "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "Pneumonoultramicroscopicsilicovolcanoconiosis is a long word",
            "Donaudampfschifffahrtsgesellschaftskapitän",
            "the key to version 2.10.3 is patience",
            "token economics 2024 and the keynote schedule",
            "the asian markets in 2024",
            "read the secret report at example.com/2024/05/annual",
            "skiing sk-learn-tutorial-for-beginners",
            "order 1234567890123456 key 2024-01-15T10:00:00Z",
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
        // A keyed secret loses its value, not its context word.
        assert_eq!(
            scrub("the deploy token 3f9a2c1b7e5d4a6f8b0c works"),
            "the deploy token [redacted] works"
        );
    }

    #[test]
    fn a_disclosure_at_the_end_of_a_long_message_is_found() {
        let long = format!(
            "{} my password is Sunset#4711",
            "lorem ipsum ".repeat(200_000)
        );
        let out = scrub(&long);
        assert!(
            out.ends_with("my password is [redacted]"),
            "{}",
            &out[out.len() - 60..]
        );
    }

    #[test]
    fn parts_are_read_together_with_their_boundaries_kept() {
        // The context in one node, the secret in the next (a link).
        assert_eq!(
            scrub_parts(&["my password is ", "Sunset#4711", " ok"]),
            vec![None, Some(REDACTED.to_owned()), None]
        );
        // A key that ends a node is still a key when a word follows.
        let parts = scrub_parts(&["use AKIAIOSFODNN7EXAMPLE", "docs"]);
        assert_eq!(parts, vec![Some("use [redacted]".to_owned()), None]);
        // One secret across a boundary is cut from both parts.
        let parts = scrub_parts(&["card 4111 1111", "1111 1111 thanks"]);
        assert_eq!(
            parts,
            vec![
                Some("card [redacted]".to_owned()),
                Some("[redacted] thanks".to_owned())
            ]
        );
        assert_eq!(scrub_parts(&["plain", "words"]), vec![None, None]);
    }

    #[test]
    fn a_key_split_across_two_nodes_is_cut_from_both() {
        let parts = scrub_parts(&[
            "token ghp_16C7e42F292c69",
            "12rtyuio67890poiuyTREWQ0a1 for CI",
        ]);
        assert_eq!(
            parts,
            vec![
                Some("token [redacted]".to_owned()),
                Some("[redacted] for CI".to_owned())
            ]
        );
        let parts = scrub_parts(&["AKIAIOSF", "ODNN7EXAMPLE"]);
        assert_eq!(
            parts,
            vec![Some(REDACTED.to_owned()), Some(REDACTED.to_owned())]
        );
        // Glued words that are no secret stay as they are.
        assert_eq!(scrub_parts(&["Read", "More"]), vec![None, None]);
    }
}

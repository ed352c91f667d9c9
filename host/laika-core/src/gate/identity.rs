//! Identity, bank and card numbers in text a call would type, recognised
//! by shape and checksum (`identity.json`), in any digit script: the text
//! is read with every digit as an ASCII digit first, so `٤١١١ ١١١١ …` is
//! the card number it spells.

use crate::lexicon;
use regex::Regex;
use serde::Deserialize;
use std::sync::OnceLock;

const SHAPES_JSON: &str = include_str!("identity.json");

#[derive(Deserialize)]
struct ShapesFile {
    shapes: Vec<RawShape>,
}

#[derive(Deserialize)]
struct RawShape {
    what: String,
    pattern: String,
    check: Check,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Check {
    None,
    Iban,
    Mrz,
    Mod11_2,
    Dni,
    Cpf,
    Tckn,
    Luhn,
}

struct Shape {
    what: String,
    pattern: Regex,
    check: Check,
}

fn shapes() -> &'static [Shape] {
    static SHAPES: OnceLock<Vec<Shape>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        // Compiled in and checked by a test; a shape that failed to parse
        // would only make the gate ask less about that one shape.
        serde_json::from_str::<ShapesFile>(SHAPES_JSON)
            .map(|f| f.shapes)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|s| {
                Some(Shape {
                    pattern: Regex::new(&s.pattern).ok()?,
                    what: s.what,
                    check: s.check,
                })
            })
            .collect()
    })
}

/// What identity, bank or card number `text` carries, if any.
pub(super) fn identity_number(text: &str) -> Option<&'static str> {
    let text = lexicon::ascii_digits(text).to_uppercase();
    shapes().iter().find_map(|shape| {
        shape
            .pattern
            .find_iter(&text)
            .any(|m| passes(shape.check, m.as_str()))
            .then_some(shape.what.as_str())
    })
}

fn digits(s: &str) -> Vec<u32> {
    s.chars().filter_map(|c| c.to_digit(10)).collect()
}

fn passes(check: Check, s: &str) -> bool {
    match check {
        Check::None => true,
        Check::Iban => iban(s),
        Check::Mrz => s.contains("<<") || s.ends_with('<'),
        Check::Mod11_2 => mod11_2(s),
        Check::Dni => dni(s),
        Check::Cpf => cpf(s),
        Check::Tckn => tckn(&digits(s)),
        Check::Luhn => luhn(&digits(s)),
    }
}

/// ISO 13616: the country and check digits moved to the end, letters as
/// 10–35, the number mod 97 is 1.
fn iban(s: &str) -> bool {
    let compact: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.len() < 15 {
        return false;
    }
    let (head, tail) = compact.split_at(4);
    let mut rem: u32 = 0;
    for c in tail.iter().chain(head) {
        let Some(v) = c.to_digit(36) else {
            return false;
        };
        for d in if v >= 10 {
            vec![v / 10, v % 10]
        } else {
            vec![v]
        } {
            rem = (rem * 10 + d) % 97;
        }
    }
    rem == 1
}

/// GB 11643: weights 2^(17-i) mod 11 over the first 17 digits.
fn mod11_2(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let Some((last, body)) = chars.split_last() else {
        return false;
    };
    let sum: u32 = body
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some(c.to_digit(10)? * ((1u32 << (17 - i)) % 11)))
        .sum();
    let want = (12 - sum % 11) % 11;
    let got = if last.eq_ignore_ascii_case(&'X') {
        10
    } else {
        last.to_digit(10).unwrap_or(99)
    };
    body.len() == 17 && want == got
}

fn dni(s: &str) -> bool {
    const LETTERS: &[u8] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    let s: String = s.chars().filter(|c| *c != '-').collect();
    let Some(letter) = s.chars().last() else {
        return false;
    };
    let number: String = s
        .chars()
        .take(8)
        .map(|c| match c {
            'X' => '0',
            'Y' => '1',
            'Z' => '2',
            other => other,
        })
        .collect();
    number
        .parse::<usize>()
        .ok()
        .and_then(|n| LETTERS.get(n % 23))
        .is_some_and(|&l| char::from(l) == letter)
}

fn cpf(s: &str) -> bool {
    let d = digits(s);
    if d.len() != 11 || d.iter().all(|&x| Some(&x) == d.first()) {
        return false;
    }
    let check = |n: usize| {
        let sum: u32 = (0..n).map(|i| d[i] * (n as u32 + 1 - i as u32)).sum();
        (sum * 10 % 11) % 10
    };
    check(9) == d[9] && check(10) == d[10]
}

fn tckn(d: &[u32]) -> bool {
    if d.len() != 11 {
        return false;
    }
    let odd: u32 = [0, 2, 4, 6, 8].iter().map(|&i| d[i]).sum();
    let even: u32 = [1, 3, 5, 7].iter().map(|&i| d[i]).sum();
    let tenth = (odd * 7 + 70 - even) % 10;
    let eleventh = d[..10].iter().sum::<u32>() % 10;
    tenth == d[9] && eleventh == d[10]
}

/// A card number: the length cards have, and the Luhn check digit.
fn luhn(d: &[u32]) -> bool {
    (13..=19).contains(&d.len()) && crate::secrets::luhn(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_compiles() {
        let file: ShapesFile = serde_json::from_str(SHAPES_JSON).unwrap();
        assert_eq!(shapes().len(), file.shapes.len());
    }

    #[test]
    fn shapes_with_their_checksums() {
        let found = |t: &str| identity_number(t);
        assert_eq!(
            found("GB82 WEST 1234 5698 7654 32"),
            Some("a bank account number (IBAN)")
        );
        assert_eq!(
            found("DE89370400440532013000"),
            Some("a bank account number (IBAN)")
        );
        assert!(found("GB83 WEST 1234 5698 7654 32").is_none_or(|w| !w.contains("IBAN")));
        assert!(found("P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<").is_some());
        assert!(found("L898902C36UTO7408122F1204159ZE184226B<<<<<10").is_some());
        assert_eq!(
            found("11010519491231002X"),
            Some("a resident identity number")
        );
        assert!(found("11010519491231002Y").is_none());
        assert_eq!(found("078-05-1120"), Some("a social security number"));
        assert_eq!(
            found("12345678Z"),
            Some("a national identity number (DNI/NIE)")
        );
        assert!(found("12345678A").is_none());
        assert_eq!(found("529.982.247-25"), Some("a taxpayer number (CPF)"));
        assert_eq!(
            found("10000000146"),
            Some("a national identity number (T.C. Kimlik No)")
        );
        // Card numbers in any digit script.
        assert_eq!(found("٤١١١ ١١١١ ١١١١ ١١١١"), Some("a payment card number"));
        assert_eq!(found("४१११११११११११११११"), Some("a payment card number"));
        assert_eq!(
            found("４１１１ １１１１ １１１１ １１１１"),
            Some("a payment card number")
        );
        assert!(found("4111 1111 1111 1112").is_none());
        // Ordinary text.
        for t in [
            "Order 12 pairs before Friday",
            "winter boots size 45",
            "ISBN 978-3-16-148410-0",
            "call 2024-11-27",
            "MARKETING<<TEAM",
        ] {
            assert!(found(t).is_none(), "{t}");
        }
    }
}

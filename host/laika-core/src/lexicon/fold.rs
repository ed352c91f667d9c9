//! The one normalisation every label, name, link and lexicon entry goes
//! through before they are compared, so that what renders alike compares
//! alike: NFKC, case folding, diacritics removed, invisible and bidi
//! controls dropped, look-alike letters mapped to their skeleton (Unicode
//! TS #39, the `unicode-security` crate), digits of every script read as
//! ASCII digits, and the text split into words at separators and camelCase
//! humps.

use std::ops::Range;
use unicode_normalization::UnicodeNormalization;

/// A folded word and where it came from in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub span: Range<usize>,
    /// For each character of `text`, the byte offset of the original
    /// character it was folded from (folding may change the count: `m`
    /// has the skeleton `rn`). Empty when each character of the span
    /// folded to exactly one character (most words: no allocation).
    origins: Vec<usize>,
}

impl Word {
    /// The byte offset in `original` (the folded text) of the character
    /// the `k`-th folded character came from.
    pub fn origin(&self, original: &str, k: usize) -> Option<usize> {
        if self.origins.is_empty() {
            let span = original.get(self.span.clone())?;
            return span.char_indices().nth(k).map(|(o, _)| self.span.start + o);
        }
        self.origins.get(k).copied()
    }

    /// Every origin, spelled out.
    pub(super) fn all_origins(&self, original: &str) -> Vec<usize> {
        let n = self.text.chars().count();
        (0..n).filter_map(|k| self.origin(original, k)).collect()
    }

    /// Folded from a single letter of the original (spaced-out words).
    pub(super) fn is_one_letter(&self) -> bool {
        if self.text == ":" || self.text == "=" || self.text.is_empty() {
            return false;
        }
        match self.origins.first() {
            None => self.text.chars().nth(1).is_none(),
            Some(first) => self.origins.iter().all(|o| o == first),
        }
    }

    /// Glues `next` onto this word (spaced-out letters).
    pub(super) fn glue(&mut self, next: &Word, original: &str) {
        if self.origins.is_empty() {
            self.origins = self.all_origins(original);
        }
        self.origins.extend(next.all_origins(original));
        self.text.push_str(&next.text);
        self.span.end = next.span.end;
    }
}

/// Characters that render as nothing and would split or hide a word:
/// invisible format characters, bidi controls, variation selectors, tags,
/// Hangul fillers.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// Combining marks that only decorate a letter: accents, Arabic harakat,
/// Hebrew points. Indic vowel signs and kana voicing marks are letters'
/// parts and stay.
fn is_diacritic(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}' | '\u{0483}'..='\u{0489}' | '\u{0591}'..='\u{05C7}'
        | '\u{064B}'..='\u{065F}' | '\u{0670}' | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// Word separators. Combining marks (Devanagari vowel signs, Arabic
/// harakat) are not: they belong to their word.
fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || c.is_ascii_punctuation()
        || matches!(c,
            '\u{00A1}'..='\u{00BF}' | '\u{00D7}' | '\u{00F7}' | '\u{2010}'..='\u{2027}'
            | '\u{2030}'..='\u{205E}' | '\u{2190}'..='\u{2BFF}' | '\u{3000}'..='\u{3003}'
            | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301F}' | '\u{30FB}' | '\u{FE10}'..='\u{FE6F}'
            | '\u{060C}' | '\u{061B}' | '\u{061F}' | '\u{066A}'..='\u{066D}' | '\u{06D4}'
            | '\u{0964}' | '\u{0965}')
}

/// TS #39 maps lower-case Cyrillic and Greek letters to Latin small
/// capitals (`в` → `ʙ`), whose upper-case forms pass for Latin capitals
/// (`В` for `B`): read the small capitals as the Latin letters.
fn small_capital(c: char) -> Option<char> {
    Some(match c {
        'ᴀ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'ᴅ' => 'd',
        'ᴇ' => 'e',
        'ꜰ' => 'f',
        'ɢ' => 'g',
        'ʜ' => 'h',
        'ɪ' => 'i',
        'ᴊ' => 'j',
        'ᴋ' | 'ĸ' => 'k',
        'ʟ' => 'l',
        'ᴍ' => 'm',
        'ɴ' => 'n',
        'ᴏ' => 'o',
        'ᴘ' => 'p',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' => 'u',
        'ᴠ' => 'v',
        'ᴡ' => 'w',
        'ʏ' => 'y',
        'ᴢ' => 'z',
        _ => return None,
    })
}

/// The value of a decimal digit of any script (`٣`, `३`, `３`), if `c` is one.
pub fn digit_value(c: char) -> Option<u32> {
    if let Some(d) = c.to_digit(10) {
        return Some(d);
    }
    // Unicode puts every script's decimal digits (general category Nd) in
    // runs of ten starting at a code point ending in 0 (hex) or 6.
    if !c.is_numeric() {
        return None;
    }
    let cp = u32::from(c);
    DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&cp))
        .map(|zero| cp - zero)
}

/// The zeros of the decimal digit runs of the scripts of the web (Nd).
const DIGIT_ZEROS: &[u32] = &[
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
];

/// `s` with every digit of any script written as an ASCII digit.
pub fn ascii_digits(s: &str) -> String {
    s.chars()
        .map(|c| {
            digit_value(c)
                .and_then(|d| char::from_digit(d, 10))
                .unwrap_or(c)
        })
        .collect()
}

/// Folds one (NFKC-normalised, visible, non-separator) character into
/// `out`: case-folded, its TS #39 skeleton, diacritics dropped. Returns how
/// many characters it added.
fn fold_char(c: char, out: &mut String) -> usize {
    // ASCII, most of any text, the fast way: of its letters and digits
    // only `m` (`rn`) and `I` (`l`, but read as lower-case `i`) have other
    // skeletons.
    if c.is_ascii() {
        return match c.to_ascii_lowercase() {
            'm' => {
                out.push_str("rn");
                2
            }
            lower => {
                out.push(lower);
                1
            }
        };
    }
    // A text repeats few distinct letters: each one's fold is worked out
    // once per thread (bounded, so a hostile text cannot grow it forever).
    thread_local! {
        static FOLDED: std::cell::RefCell<rustc_hash::FxHashMap<char, (String, usize)>> =
            std::cell::RefCell::new(rustc_hash::FxHashMap::default());
    }
    FOLDED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((folded, n)) = cache.get(&c) {
            out.push_str(folded);
            return *n;
        }
        let mut folded = String::new();
        fold_other(c, &mut folded);
        let n = folded.chars().count();
        out.push_str(&folded);
        if cache.len() < 16_384 {
            cache.insert(c, (folded, n));
        }
        n
    })
}

fn fold_other(c: char, out: &mut String) {
    if let Some(d) = digit_value(c).and_then(|d| char::from_digit(d, 10)) {
        out.push(d);
        return;
    }
    for lower in c.to_lowercase() {
        let lower = match lower {
            'ß' | 'ẞ' => {
                out.push_str("ss");
                continue;
            }
            'ς' => 'σ',
            other => other,
        };
        let mut buf = [0u8; 4];
        for proto in unicode_security::skeleton(lower.encode_utf8(&mut buf)) {
            if is_diacritic(proto) || is_invisible(proto) {
                continue;
            }
            match small_capital(proto) {
                // `ᴍ` reads as `m`, whose skeleton is `rn`.
                Some(latin) => {
                    let mut again = [0u8; 4];
                    out.extend(unicode_security::skeleton(latin.encode_utf8(&mut again)));
                }
                None => out.extend(proto.to_lowercase()),
            }
        }
    }
}

/// Folds `s` into words (see the module comment). `:` and `=` are kept as
/// words of their own, since they join a name to its value. The whole text
/// is folded, never a prefix, so padding cannot push a word out of sight.
pub fn fold(s: &str) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut cur = Word {
        text: String::new(),
        span: 0..0,
        origins: Vec::new(),
    };
    let mut prev_lower = false;
    // Whether every character of the current word so far folded to one.
    let mut plain = true;
    let flush = |words: &mut Vec<Word>, cur: &mut Word, end: usize| {
        if !cur.text.is_empty() {
            cur.span.end = end;
            words.push(std::mem::replace(
                cur,
                Word {
                    text: String::new(),
                    span: 0..0,
                    origins: Vec::new(),
                },
            ));
        }
    };
    for (i, c) in s.char_indices() {
        if is_invisible(c) {
            if !cur.text.is_empty() && plain {
                cur.origins = cur.all_origins(s);
                plain = false;
            }
            continue;
        }
        // ASCII is its own NFKC.
        let ascii = c.is_ascii().then_some(c);
        let other = (!c.is_ascii()).then(|| std::iter::once(c).nfkc());
        for d in ascii.into_iter().chain(other.into_iter().flatten()) {
            if is_invisible(d) {
                continue;
            }
            if is_separator(d) {
                flush(&mut words, &mut cur, i);
                prev_lower = false;
                if d == ':' || d == '=' {
                    words.push(Word {
                        text: d.to_string(),
                        span: i..i + c.len_utf8(),
                        origins: vec![i],
                    });
                }
                continue;
            }
            if prev_lower && d.is_uppercase() {
                flush(&mut words, &mut cur, i);
            }
            if cur.text.is_empty() {
                cur.span.start = i;
                plain = true;
            }
            prev_lower = d.is_lowercase();
            // The span ends here for now, so the origins so far can be
            // spelled out from it.
            cur.span.end = i;
            let before = cur.text.len();
            let added = fold_char(d, &mut cur.text);
            if plain && !(added == 1 && d == c) {
                // Spell out the origins of what came before this character.
                let kept = cur.text.split_off(before);
                cur.origins = cur.all_origins(s);
                cur.text.push_str(&kept);
                plain = false;
            }
            if !plain {
                cur.origins.extend(std::iter::repeat_n(i, added));
            }
        }
    }
    flush(&mut words, &mut cur, s.len());
    words
}

/// [`fold`] as one string of words separated by single spaces.
pub fn fold_str(s: &str) -> String {
    fold(s)
        .into_iter()
        .map(|w| w.text)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Readings of `s` with the digits of words that also hold letters read as
/// the letters they stand in for ("De1ete", "P4Y N0W"): for labels, where
/// [`fold`] keeps digits as digits so that "Page 2" stays a page number.
/// `1` is read both as `l` and as `i`. Empty when no word mixes the two.
pub fn digits_as_letters(s: &str) -> Vec<String> {
    let mixed = s
        .split_whitespace()
        .any(|w| w.chars().any(char::is_alphabetic) && w.chars().any(|c| digit_value(c).is_some()));
    if !mixed {
        return Vec::new();
    }
    ['l', 'i']
        .into_iter()
        .map(|one| {
            s.split_inclusive(char::is_whitespace)
                .map(|w| {
                    if !w.chars().any(char::is_alphabetic) {
                        return w.to_owned();
                    }
                    w.chars()
                        .map(|c| match digit_value(c) {
                            Some(0) => 'o',
                            Some(1) => one,
                            Some(2) => 'z',
                            Some(3) => 'e',
                            Some(4) => 'a',
                            Some(5) => 's',
                            Some(6) => 'b',
                            Some(7) => 't',
                            Some(8) => 'b',
                            Some(9) => 'g',
                            _ => c,
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// A second reading of `s` for labels written in capitals: each non-Latin
/// capital whose skeleton is a Latin capital (Greek `Β`, Cyrillic `Т`) read
/// as that Latin letter, since [`fold`] case-folds first (`Β` → `β`, whose
/// skeleton is `ß`). `None` when `s` has no such letter.
pub fn capitals_as_latin(s: &str) -> Option<String> {
    let mut changed = false;
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii() || !c.is_uppercase() {
                return c;
            }
            let mut buf = [0u8; 4];
            let mut proto = unicode_security::skeleton(c.encode_utf8(&mut buf));
            match (proto.next(), proto.next()) {
                (Some(latin), None) if latin.is_ascii_uppercase() => {
                    changed = true;
                    latin
                }
                _ => c,
            }
        })
        .collect();
    changed.then_some(out)
}

//! Text folding for the gate's keyword tests: labels and field hints are
//! reduced to plain lower-case words, so invisible characters, fullwidth or
//! mathematical letters, camelCase and look-alike Cyrillic or Greek letters
//! cannot hide a word like "buy" or "password".

/// At most this much of a label is examined: control labels are short, and
/// a content region's whole text is not a label.
const MAX_LABEL_CHARS: usize = 256;

/// Characters that render as nothing and would split or hide a word.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{E0000}'..='\u{E007F}')
}

/// Maps fullwidth, circled and mathematical letters and digits to ASCII.
pub(super) fn fold_char(c: char) -> char {
    let cp = u32::from(c);
    let mapped = match cp {
        0xFF01..=0xFF5E => cp - 0xFEE0,
        0x24B6..=0x24CF => u32::from('A') + (cp - 0x24B6),
        0x24D0..=0x24E9 => u32::from('a') + (cp - 0x24D0),
        0x1D400..=0x1D6A3 => {
            let i = (cp - 0x1D400) % 52;
            if i < 26 {
                u32::from('A') + i
            } else {
                u32::from('a') + i - 26
            }
        }
        0x1D7CE..=0x1D7FF => u32::from('0') + (cp - 0x1D7CE) % 10,
        _ => cp,
    };
    char::from_u32(mapped).unwrap_or(c)
}

/// Cyrillic and Greek letters that look like Latin ones (after lower-casing).
fn unconfuse(c: char) -> char {
    match c {
        'а' | 'α' | 'ɑ' => 'a',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ι' | 'ı' => 'i',
        'ј' => 'j',
        'ո' => 'n',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        // Lower-case forms of Cyrillic capitals that look like Latin ones.
        'в' => 'b',
        'н' => 'h',
        'м' => 'm',
        'т' => 't',
        'к' | 'κ' => 'k',
        'ѕ' => 's',
        'υ' => 'u',
        'ν' => 'v',
        'ԝ' => 'w',
        'х' | 'χ' => 'x',
        'у' => 'y',
        _ => c,
    }
}

/// Lower-case words separated by single spaces: separators, punctuation and
/// camelCase humps split words, invisible characters vanish, and fullwidth
/// or mathematical letters fold to ASCII. With `latin`, look-alike Cyrillic
/// and Greek letters fold too (for English keyword lists only).
pub(super) fn fold_words(s: &str, latin: bool) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_LABEL_CHARS * 4));
    let mut prev_lower = false;
    let mut gap = false;
    for c in s
        .chars()
        .filter(|&c| !is_invisible(c))
        .take(MAX_LABEL_CHARS)
    {
        let c = fold_char(c);
        if !c.is_alphanumeric() {
            gap = true;
            prev_lower = false;
            continue;
        }
        if (gap || (prev_lower && c.is_uppercase())) && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        prev_lower = c.is_lowercase();
        for l in c.to_lowercase() {
            out.push(if latin { unconfuse(l) } else { l });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_fold_to_plain_lower_case() {
        assert_eq!(fold_words("Place-Order now!", true), "place order now");
        assert_eq!(fold_words("BuyNow", true), "buy now");
        assert_eq!(fold_words("Bu\u{200b}y", true), "buy");
        assert_eq!(fold_words("\u{ff22}\u{ff35}\u{ff39}", true), "buy");
        assert_eq!(fold_words("\u{412}u\u{443}", true), "buy");
        assert_eq!(
            fold_words("\u{412}u\u{443}", false),
            "вuу",
            "Cyrillic stays without latin"
        );
        assert_eq!(fold_words(&"a ".repeat(1000), false).len(), 2 * 128 - 1);
    }
}

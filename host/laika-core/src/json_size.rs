//! How many chars a value takes as the JSON a model reads: the measure every
//! context budget (packing, passage selection, staged reading) is kept in.

use serde_json::Value;

/// Chars `text` takes as a JSON string, quotes and escapes counted, without
/// writing it out (as `serde_json` escapes: `"`, `\\` and the five short
/// control escapes take 2 chars, other control chars 6).
///
/// One pass in blocks of 255 bytes with byte-wide counters and no branches,
/// so the compiler vectorizes it: every chunk of a page is measured on every
/// request, a megabyte for a large page.
pub(crate) fn json_str_chars(text: &str) -> usize {
    let mut chars = 2;
    for block in text.as_bytes().chunks(255) {
        // Per byte: starts a char (not a UTF-8 continuation byte), is
        // escaped, is escaped as `\u00XX` (4 more).
        let (mut starts, mut escaped, mut long) = (0u8, 0u8, 0u8);
        for &b in block {
            let control = b < 0x20;
            let short_control = (0x08..=0x0D).contains(&b) & (b != 0x0B);
            starts += u8::from(b & 0xC0 != 0x80);
            escaped += u8::from(control | (b == b'"') | (b == b'\\'));
            long += u8::from(control & !short_control);
        }
        chars += usize::from(starts) + usize::from(escaped) + 4 * usize::from(long);
    }
    chars
}

pub(crate) fn json_chars(value: &Value) -> usize {
    // Measured on the serialization the model will actually read.
    serde_json::to_string(value).map_or(0, |s| s.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_str_chars_counts_as_serde_json_writes() {
        for s in [
            "",
            "plain",
            "quote \" back \\ slash",
            "lines\nand\ttabs\r\u{8}\u{c}",
            "control \u{1} \u{1f} del \u{7f}",
            "ünïcødé 日本語 😀",
            "\u{b} vertical tab and \u{7f}",
        ] {
            let expected = serde_json::to_string(s).unwrap().chars().count();
            assert_eq!(json_str_chars(s), expected, "{s:?}");
        }
    }

    proptest::proptest! {
        /// Any text, over many of the counting blocks.
        #[test]
        fn json_str_chars_counts_any_text_as_serde_json_writes(s in "(?s).{0,1200}") {
            let expected = serde_json::to_string(&s).map(|j| j.chars().count());
            proptest::prop_assert_eq!(Ok(json_str_chars(&s)), expected.map_err(|e| e.to_string()));
        }
    }
}

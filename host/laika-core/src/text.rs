//! Cutting text to a bound. Every "at most N chars/bytes" in Laika goes
//! through here, so all of them cut on a char boundary, count the same way
//! and mark a cut with the same [`ELLIPSIS`].

/// Appended (or, with [`clip_within`], counted in) where text was cut.
pub const ELLIPSIS: char = '…';

/// The longest prefix of `s` with at most `max` chars.
pub fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => s.get(..end).unwrap_or(s),
        None => s,
    }
}

/// The longest prefix of `s` with at most `max` bytes that ends on a char
/// boundary.
pub fn prefix_bytes(s: &str, max: usize) -> &str {
    s.get(..floor_char_boundary(s, max)).unwrap_or_default()
}

/// The largest char boundary of `s` at or below byte `i` (`s.len()` when `i`
/// is beyond the end). `str::floor_char_boundary` is newer than our MSRV.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    // Byte 0 is always a boundary, so this stops.
    (0..=i).rev().find(|&b| s.is_char_boundary(b)).unwrap_or(0)
}

/// `s` cut to `max` chars, with [`ELLIPSIS`] appended when anything was cut
/// (so at most `max + 1` chars).
pub fn clip(s: &str, max: usize) -> String {
    let kept = prefix_chars(s, max);
    if kept.len() == s.len() {
        return s.to_owned();
    }
    let mut out = String::with_capacity(kept.len() + ELLIPSIS.len_utf8());
    out.push_str(kept);
    out.push(ELLIPSIS);
    out
}

/// `s` in at most `max` chars: when it is longer, its first `max - 1` chars
/// and [`ELLIPSIS`]. For limits that bound the marked text itself.
pub fn clip_within(s: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    if prefix_chars(s, max).len() == s.len() {
        return s.to_owned();
    }
    clip(s, max - 1)
}

/// `s` clipped to `max` chars and quoted with Rust string escapes, the
/// ellipsis outside the quotes: `"abc"…`. For untrusted text quoted in a
/// message, where control and quote characters must show, not act.
pub fn clip_quoted(s: &str, max: usize) -> String {
    // `max` bounds what is shown, escapes included: a string of invisible
    // characters, each escaped as `\u{…}`, stays as short as any other.
    let mut out = String::from("\"");
    let mut shown = 0;
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let quoted = format!("{:?}", &*c.encode_utf8(&mut buf));
        let escaped = &quoted[1..quoted.len() - 1];
        let width = escaped.chars().count();
        if shown > 0 && shown + width > max {
            out.push('"');
            out.push(ELLIPSIS);
            return out;
        }
        shown += width;
        out.push_str(escaped);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_quoted_bounds_what_it_shows_escapes_included() {
        assert_eq!(clip_quoted("Buy now", 80), "\"Buy now\"");
        assert_eq!(clip_quoted("a\"b", 80), "\"a\\\"b\"");
        assert_eq!(clip_quoted("abcdef", 3), format!("\"abc\"{ELLIPSIS}"));
        let invisible = "\u{e0001}".repeat(100);
        let clipped = clip_quoted(&invisible, 80);
        assert!(clipped.chars().count() <= 80 + 3, "{clipped}");
        assert!(clipped.starts_with("\"\\u{e0001}"));
    }

    #[test]
    fn prefix_chars_counts_chars_not_bytes() {
        assert_eq!(prefix_chars("héllo", 2), "hé");
        assert_eq!(prefix_chars("hé", 5), "hé");
        assert_eq!(prefix_chars("hé", 2), "hé");
        assert_eq!(prefix_chars("", 0), "");
        assert_eq!(prefix_chars("abc", 0), "");
        assert_eq!(prefix_chars("👩‍👩‍👧", 1), "👩");
    }

    #[test]
    fn prefix_bytes_never_splits_a_char() {
        assert_eq!(prefix_bytes("héllo", 2), "h");
        assert_eq!(prefix_bytes("héllo", 3), "hé");
        assert_eq!(prefix_bytes("héllo", 99), "héllo");
        assert_eq!(prefix_bytes("😀", 3), "");
        assert_eq!(prefix_bytes("", 0), "");
        assert_eq!(floor_char_boundary("a😀", 4), 1);
        assert_eq!(floor_char_boundary("a😀", 5), 5);
        assert_eq!(floor_char_boundary("a😀", 50), 5);
        assert_eq!(floor_char_boundary("😀", 0), 0);
    }

    #[test]
    fn clip_appends_the_ellipsis_only_when_it_cut() {
        assert_eq!(clip("hello", 5), "hello");
        assert_eq!(clip("hello", 4), "hell…");
        assert_eq!(clip("😀😀😀", 2), "😀😀…");
        assert_eq!(clip("abc", 0), "…");
        assert_eq!(clip("", 0), "");
    }

    #[test]
    fn clip_within_counts_the_ellipsis() {
        assert_eq!(clip_within("hello", 5), "hello");
        assert_eq!(clip_within("hello", 4), "hel…");
        assert_eq!(clip_within("😀😀😀😀😀", 5), "😀😀😀😀😀");
        assert_eq!(clip_within("😀😀😀😀😀", 4), "😀😀😀…");
        assert_eq!(clip_within("ab", 1), "…");
        assert_eq!(clip_within("ab", 0), "");
        assert_eq!(clip_within("", 0), "");
    }

    #[test]
    fn clip_quoted_escapes_and_marks_the_cut_outside_the_quotes() {
        assert_eq!(clip_quoted("a\"b\n", 10), "\"a\\\"b\\n\"");
        assert_eq!(clip_quoted("abcdef", 3), "\"abc\"…");
        assert_eq!(clip_quoted("\u{202e}x", 1), "\"\\u{202e}\"…");
    }

    proptest::proptest! {
        #[test]
        fn cuts_are_prefixes_within_bounds(s in "\\PC{0,40}", max in 0usize..50) {
            let chars = prefix_chars(&s, max);
            proptest::prop_assert!(s.starts_with(chars) && chars.chars().count() <= max);
            let bytes = prefix_bytes(&s, max);
            proptest::prop_assert!(s.starts_with(bytes) && bytes.len() <= max);
            proptest::prop_assert!(clip_within(&s, max).chars().count() <= max);
            proptest::prop_assert!(clip(&s, max).chars().count() <= max + 1);
        }
    }
}

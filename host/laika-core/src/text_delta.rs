//! The text of the block being written, as the model writes it
//! (docs/wire-protocol.md#text_delta): while `stream` waits for a top-level
//! render block to complete before sending it as a `render_delta`, this taps
//! the block in progress and hands out the plain text of its `text` strings as
//! they grow, so words show as they come.
//!
//! Invariants:
//! - only string values under a `"text"` key inside the block in progress
//!   are read: no keys, types, URLs or other fields;
//! - the text is plain: JSON escapes decoded, control characters (other
//!   than line breaks and tabs) dropped; an escape split across pieces waits
//!   for its end;
//! - each byte of a block is scanned once (a string is re-decoded as it
//!   grows, and strings are a block's paragraphs, not the whole answer).

/// Scans the raw JSON of one block in progress for its text.
#[derive(Debug, Default)]
pub struct TextTap {
    /// Which block is being read (`RenderStream::partial`'s serial).
    serial: Option<usize>,
    /// Bytes of the block scanned so far.
    offset: usize,
    /// Open containers inside the block: true for an object.
    stack: Vec<bool>,
    expect_key: bool,
    in_string: bool,
    escaped: bool,
    string_is_key: bool,
    key: Vec<u8>,
    /// The last key read was `text`.
    text_key: bool,
    /// Where the text string being read starts (after its quote).
    raw_start: Option<usize>,
    /// Chars of the current string already handed out.
    emitted: usize,
    /// Containers closed since the last text string: two or more means the
    /// next text starts a new item (a list item, a table cell).
    closed: usize,
    any_text: bool,
}

impl TextTap {
    /// Reads `block` (the raw JSON of block `serial` from its start, as far
    /// as the model wrote it) and returns the text added since the last call.
    pub fn feed(&mut self, serial: usize, block: &str) -> String {
        if self.serial != Some(serial) {
            *self = TextTap {
                serial: Some(serial),
                ..TextTap::default()
            };
        }
        let mut out = String::new();
        let bytes = block.as_bytes();
        while let Some(&b) = bytes.get(self.offset) {
            self.offset += 1;
            if self.in_string {
                self.string_byte(b, block, &mut out);
                continue;
            }
            match b {
                b'{' => {
                    self.stack.push(true);
                    self.expect_key = true;
                }
                b'[' => {
                    self.stack.push(false);
                    self.expect_key = false;
                }
                b'}' | b']' => {
                    self.stack.pop();
                    self.closed += 1;
                    self.expect_key = false;
                }
                b',' => self.expect_key = self.stack.last() == Some(&true),
                b':' => self.expect_key = false,
                b'"' => {
                    self.in_string = true;
                    self.escaped = false;
                    self.string_is_key = self.expect_key;
                    if self.string_is_key {
                        self.key.clear();
                    } else if self.text_key {
                        self.raw_start = Some(self.offset);
                        self.emitted = 0;
                        if self.any_text && self.closed >= 2 {
                            out.push('\n');
                        }
                    }
                }
                _ => {}
            }
        }
        // Hand out what the string being read holds so far.
        if let Some(start) = self.raw_start {
            self.drain(
                block.get(start..self.offset).unwrap_or_default(),
                false,
                &mut out,
            );
        }
        out
    }

    fn string_byte(&mut self, b: u8, block: &str, out: &mut String) {
        if !self.escaped && b == b'"' {
            self.in_string = false;
            if self.string_is_key {
                self.text_key = self.key == b"text";
                self.expect_key = false;
            } else {
                if let Some(start) = self.raw_start.take() {
                    let body = block.get(start..self.offset - 1).unwrap_or_default();
                    self.drain(body, true, out);
                }
                self.text_key = false;
            }
            return;
        }
        self.escaped = !self.escaped && b == b'\\';
        if self.string_is_key && self.key.len() <= 8 {
            self.key.push(b);
        }
    }

    /// Decodes the complete part of a text string's raw body and appends
    /// what was not handed out yet.
    fn drain(&mut self, raw: &str, whole: bool, out: &mut String) {
        let complete = if whole { raw } else { complete_prefix(raw) };
        let Ok(decoded) = serde_json::from_str::<String>(&format!("\"{complete}\"")) else {
            return;
        };
        let mut added = false;
        for c in decoded.chars().skip(self.emitted) {
            self.emitted += 1;
            if !c.is_control() || c == '\n' || c == '\t' {
                out.push(c);
                added = true;
            }
        }
        if added {
            self.any_text = true;
            self.closed = 0;
        }
    }
}

/// The longest prefix of a raw JSON string body that does not end inside
/// an escape (`\`, `\u12`, or a lone high surrogate awaiting its pair).
fn complete_prefix(raw: &str) -> &str {
    let bytes = raw.as_bytes();
    let mut i = 0;
    let mut safe = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let len = match bytes.get(i + 1) {
                None => return &raw[..safe],
                Some(b'u') => {
                    if bytes.len() < i + 6 {
                        return &raw[..safe];
                    }
                    let high = raw
                        .get(i + 2..i + 6)
                        .and_then(|h| u16::from_str_radix(h, 16).ok())
                        .is_some_and(|u| (0xD800..0xDC00).contains(&u));
                    if high {
                        if bytes.len() < i + 12 {
                            return &raw[..safe];
                        }
                        12
                    } else {
                        6
                    }
                }
                Some(_) => 2,
            };
            i += len;
        } else {
            i += raw[i..].chars().next().map_or(1, char::len_utf8);
        }
        safe = i.min(bytes.len());
    }
    raw.get(..safe).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `block` cut after each of `cuts` bytes; returns the pieces.
    fn pieces(block: &str, step: usize) -> Vec<String> {
        let mut tap = TextTap::default();
        let mut out = Vec::new();
        let mut end = 0;
        while end < block.len() {
            end = crate::text::floor_char_boundary(block, (end + step).min(block.len()));
            if end == 0 {
                end = block.len();
            }
            out.push(tap.feed(0, &block[..end]));
        }
        out
    }

    #[test]
    fn streams_only_text_values_decoded() {
        let block = r#"{"type":"paragraph","children":[{"type":"text","text":"Night \"trains\" are back\u00e9 \ud83d\ude80!"},{"type":"link","href":"https://x.example/text","children":[{"type":"text","text":" More"}]}]}"#;
        for step in [1, 2, 3, 7, 1000] {
            let got: String = pieces(block, step).concat();
            assert_eq!(got, "Night \"trains\" are backé 🚀! More", "step {step}");
        }
        // Words come before the block is complete.
        let early = pieces(block, 60);
        assert!(!early[1].is_empty(), "{early:?}");
    }

    #[test]
    fn items_are_on_their_own_lines_and_controls_dropped() {
        let block = r#"{"type":"list","ordered":false,"items":[{"type":"list_item","children":[{"type":"paragraph","children":[{"type":"text","text":"one\u0007"}]}]},{"type":"list_item","children":[{"type":"paragraph","children":[{"type":"text","text":"two"}]}]}]}"#;
        assert_eq!(pieces(block, 5).concat(), "one\ntwo");
    }

    #[test]
    fn a_new_block_starts_afresh() {
        let mut tap = TextTap::default();
        assert_eq!(
            tap.feed(
                0,
                r#"{"type":"paragraph","children":[{"type":"text","text":"ab"#
            ),
            "ab"
        );
        assert_eq!(
            tap.feed(
                1,
                r#"{"type":"heading","level":2,"children":[{"type":"text","text":"cd"#
            ),
            "cd"
        );
        assert_eq!(complete_prefix(r"ab\u00"), "ab");
        assert_eq!(complete_prefix(r"ab\ud83d\ude"), "ab");
        assert_eq!(complete_prefix(r#"ab\"c\"d\"#), r#"ab\"c\"d"#);
    }
}

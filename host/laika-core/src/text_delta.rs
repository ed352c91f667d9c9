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
//!   than line breaks and tabs) dropped; an escape (or a UTF-8 sequence)
//!   split across pieces waits for its end;
//! - a string JSON would refuse (a bad escape, a lone surrogate, a raw
//!   control character) shows nothing from the piece that made it invalid
//!   on: what was handed out is what decoding the string's longest
//!   complete prefix gives;
//! - incremental: each byte of a block is scanned and decoded once, and a
//!   piece costs what it adds, never what came before it.

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
    /// The text string being read, decoded as far as it is complete.
    text: Option<Decoder>,
    /// Containers closed since the last text string: two or more means the
    /// next text starts a new item (a list item, a table cell).
    closed: usize,
    any_text: bool,
}

impl TextTap {
    /// Reads `block` (the raw JSON of block `serial` from its start, as far
    /// as the model wrote it) and returns the text added since the last call.
    pub fn feed(&mut self, serial: usize, block: &str) -> String {
        self.feed_bytes(serial, block.as_bytes())
    }

    /// [`TextTap::feed`] on raw bytes, which may end inside a UTF-8
    /// sequence.
    fn feed_bytes(&mut self, serial: usize, block: &[u8]) -> String {
        if self.serial != Some(serial) {
            *self = TextTap {
                serial: Some(serial),
                ..TextTap::default()
            };
        }
        let mut out = String::new();
        while let Some(&b) = block.get(self.offset) {
            self.offset += 1;
            if self.in_string {
                self.string_byte(b, &mut out);
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
                        self.text = Some(Decoder::default());
                        if self.any_text && self.closed >= 2 {
                            out.push('\n');
                        }
                    }
                }
                _ => {}
            }
        }
        // Hand out what the string being read holds so far.
        self.hand_out(&mut out);
        out
    }

    fn string_byte(&mut self, b: u8, out: &mut String) {
        if !self.escaped && b == b'"' {
            self.in_string = false;
            if self.string_is_key {
                self.text_key = self.key == b"text";
                self.expect_key = false;
            } else {
                if let Some(text) = &mut self.text {
                    text.close();
                }
                self.hand_out(out);
                self.text = None;
                self.text_key = false;
            }
            return;
        }
        self.escaped = !self.escaped && b == b'\\';
        if self.string_is_key {
            if self.key.len() <= 8 {
                self.key.push(b);
            }
        } else if let Some(text) = &mut self.text {
            text.byte(b);
        }
    }

    /// Appends the text decoded since the last hand-out.
    fn hand_out(&mut self, out: &mut String) {
        let Some(text) = &mut self.text else {
            return;
        };
        if text.broken {
            text.decoded.clear();
            return;
        }
        if !text.decoded.is_empty() {
            out.push_str(&text.decoded);
            text.decoded.clear();
            self.any_text = true;
            self.closed = 0;
        }
    }
}

/// Where the decoder is inside a JSON string body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Plain,
    /// After a `\`.
    Escape,
    /// Inside `\uXXXX`: the value of the hex digits read so far, how many
    /// bytes of them were read, and whether one was not a hex digit.
    Hex { value: u32, read: u8, bad: bool },
    /// After a high surrogate: the escape that must follow it (`\uDC00` to
    /// `\uDFFF`), read as raw bytes until all six are there.
    Low { high: u32, raw: [u8; 6], read: u8 },
    /// Inside a UTF-8 sequence: its bytes so far and its length.
    Utf8 { bytes: [u8; 4], read: u8, len: u8 },
}

/// Decodes one JSON string body byte by byte, as `serde_json` would.
#[derive(Debug, Default)]
struct Decoder {
    state: State,
    /// Decoded and not handed out yet; control characters (other than line
    /// breaks and tabs) are left out.
    decoded: String,
    /// The body is not a valid JSON string: nothing more is handed out.
    broken: bool,
}

impl Decoder {
    fn byte(&mut self, b: u8) {
        if self.broken {
            return;
        }
        self.state = match self.state {
            State::Plain => match b {
                b'\\' => State::Escape,
                // JSON has no raw control characters in strings.
                0x00..=0x1f => return self.fail(),
                0x20..=0x7f => {
                    self.push(char::from(b));
                    State::Plain
                }
                _ => match utf8_len(b) {
                    Some(len) => {
                        let mut bytes = [0; 4];
                        bytes[0] = b;
                        State::Utf8 {
                            bytes,
                            read: 1,
                            len,
                        }
                    }
                    None => return self.fail(),
                },
            },
            State::Escape => {
                let c = match b {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        self.state = State::Hex {
                            value: 0,
                            read: 0,
                            bad: false,
                        };
                        return;
                    }
                    _ => return self.fail(),
                };
                self.push(c);
                State::Plain
            }
            // A bad digit fails the escape once its four bytes are read,
            // as decoding the longest complete prefix would.
            State::Hex { value, read, bad } => {
                let digit = char::from(b).to_digit(16);
                let (value, read, bad) = (
                    value * 16 + digit.unwrap_or(0),
                    read + 1,
                    bad || digit.is_none(),
                );
                if read < 4 {
                    State::Hex { value, read, bad }
                } else if bad {
                    return self.fail();
                } else if (0xD800..0xDC00).contains(&value) {
                    State::Low {
                        high: value,
                        raw: [0; 6],
                        read: 0,
                    }
                } else {
                    match char::from_u32(value) {
                        Some(c) => self.push(c),
                        // A lone low surrogate.
                        None => return self.fail(),
                    }
                    State::Plain
                }
            }
            State::Low {
                high,
                mut raw,
                read,
            } => {
                raw[usize::from(read)] = b;
                if read + 1 < 6 {
                    State::Low {
                        high,
                        raw,
                        read: read + 1,
                    }
                } else {
                    match low_surrogate(&raw).and_then(|low| {
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    }) {
                        Some(c) => self.push(c),
                        None => return self.fail(),
                    }
                    State::Plain
                }
            }
            State::Utf8 {
                mut bytes,
                read,
                len,
            } => {
                bytes[usize::from(read)] = b;
                let read = read + 1;
                if read < len {
                    State::Utf8 { bytes, read, len }
                } else {
                    match std::str::from_utf8(&bytes[..usize::from(len)]) {
                        Ok(s) => s.chars().for_each(|c| self.push(c)),
                        Err(_) => return self.fail(),
                    }
                    State::Plain
                }
            }
        };
    }

    /// The closing quote: a string that ends inside an escape is invalid.
    fn close(&mut self) {
        if self.state != State::Plain {
            self.fail();
        }
    }

    fn push(&mut self, c: char) {
        if !c.is_control() || c == '\n' || c == '\t' {
            self.decoded.push(c);
        }
    }

    fn fail(&mut self) {
        self.broken = true;
        self.decoded.clear();
    }
}

/// The length of the UTF-8 sequence `lead` starts; `None` for a byte that
/// cannot start one.
fn utf8_len(lead: u8) -> Option<u8> {
    match lead {
        0xC2..=0xDF => Some(2),
        0xE0..=0xEF => Some(3),
        0xF0..=0xF4 => Some(4),
        _ => None,
    }
}

/// The value of `\uDC00` … `\uDFFF` written as its six raw bytes.
fn low_surrogate(raw: &[u8; 6]) -> Option<u32> {
    let (escape, hex) = raw.split_at(2);
    if escape != b"\\u" {
        return None;
    }
    let value = hex
        .iter()
        .try_fold(0, |v, &b| Some(v * 16 + char::from(b).to_digit(16)?))?;
    (0xDC00..0xE000).contains(&value).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `block` cut after every `step` bytes (inside UTF-8 sequences
    /// too); returns the pieces.
    fn pieces(block: &str, step: usize) -> Vec<String> {
        let mut tap = TextTap::default();
        let bytes = block.as_bytes();
        (1..=bytes.len().div_ceil(step))
            .map(|n| tap.feed_bytes(0, &bytes[..(n * step).min(bytes.len())]))
            .collect()
    }

    /// Feeds `block` cut at `cuts` (byte offsets, in order).
    fn split(block: &str, cuts: &[usize]) -> Vec<String> {
        let mut tap = TextTap::default();
        let bytes = block.as_bytes();
        cuts.iter()
            .chain(std::iter::once(&bytes.len()))
            .map(|&c| tap.feed_bytes(0, &bytes[..c]))
            .collect()
    }

    fn whole(block: &str) -> String {
        TextTap::default().feed(0, block)
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
    }

    #[test]
    fn a_split_escape_or_character_waits_for_its_end() {
        let block = r#"{"type":"text","text":"ab\u00e9\ud83d\ude80é\n"}"#;
        let at = |s: &str| block.find(s).unwrap();
        // Inside `\u00e9`, inside the surrogate pair, inside `é`.
        let got = split(
            block,
            &[at(r"\u00e9") + 4, at(r"\ude80") + 1, at(r"\ude80") + 6 + 1],
        );
        assert_eq!(got, ["ab", "é", "🚀", "é\n"]);
        // A piece that adds only part of an escape adds no text.
        let got = split(
            block,
            &[at(r"\u00e9"), at(r"\u00e9") + 1, at(r"\u00e9") + 3],
        );
        assert_eq!(got, ["ab", "", "", "é🚀é\n"]);
    }

    #[test]
    fn a_string_json_would_refuse_shows_nothing_from_there_on() {
        let block = |body: &str| {
            format!(r#"{{"type":"text","text":"{body}"}},{{"type":"text","text":"ok"}}"#)
        };
        for body in [
            r"ab\x",
            r"ab\u12g4",
            r"ab\ud83dxxxxxx",
            r"ab\ud83d\u0041",
            r"ab\ude80",
            "ab\u{1}",
            r"ab\ud83d",
        ] {
            let block = block(body);
            assert_eq!(whole(&block), "ok", "{body}");
            // Fed a byte at a time, the text before the fault shows, and
            // nothing of the string after it.
            let text: String = pieces(&block, 1).concat();
            assert_eq!(text, "abok", "{body}");
        }
    }

    /// A JSON string body from pieces that exercise the decoder.
    fn body() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z ]{1,4}",
            Just("é".to_owned()),
            Just("🚀".to_owned()),
            Just("\u{85}".to_owned()),
            Just(r#"\""#.to_owned()),
            Just(r"\\".to_owned()),
            Just(r"\/".to_owned()),
            Just(r"\n".to_owned()),
            Just(r"\t".to_owned()),
            Just(r"\b".to_owned()),
            Just(r"\u0007".to_owned()),
            Just(r"\u00E9".to_owned()),
            Just(r"\ud83d\ude80".to_owned()),
            Just(r"\uD83D\uDE80".to_owned()),
            // Not a surrogate: those come in pairs above.
            "\\\\u[0-9a-cA-CeEfF][0-9a-fA-F]{3}",
        ];
        prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
    }

    /// Bodies that may also be invalid JSON.
    fn any_body() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            body(),
            Just(r"\x".to_owned()),
            Just(r"\ud83d".to_owned()),
            Just(r"\ude80".to_owned()),
            Just("\u{1}".to_owned()),
            "\\\\u[0-9a-gx]{0,4}",
        ];
        prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
    }

    /// The text the tap should give for `bodies` as the text strings of
    /// one paragraph each in a list: what `serde_json` decodes, without
    /// control characters; nothing for a string it refuses.
    fn expected(bodies: &[String]) -> String {
        let mut out = String::new();
        let mut any_text = false;
        for body in bodies {
            // Each item after one with text starts on a new line.
            if any_text {
                out.push('\n');
            }
            let Ok(text) = serde_json::from_str::<String>(&format!("\"{body}\"")) else {
                continue;
            };
            let text: String = text
                .chars()
                .filter(|&c| !c.is_control() || c == '\n' || c == '\t')
                .collect();
            any_text |= !text.is_empty();
            out.push_str(&text);
        }
        out
    }

    fn list(bodies: &[String]) -> String {
        let items: Vec<String> = bodies
            .iter()
            .map(|b| {
                format!(
                    r#"{{"type":"list_item","children":[{{"type":"paragraph","children":[{{"type":"text","text":"{b}"}}]}}]}}"#
                )
            })
            .collect();
        format!(r#"{{"type":"list","items":[{}]}}"#, items.join(","))
    }

    proptest! {
        #[test]
        fn any_split_gives_the_text_of_the_whole(
            bodies in prop::collection::vec(body(), 1..4),
            cuts in prop::collection::vec(0usize..2000, 0..24),
        ) {
            let block = list(&bodies);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (block.len() + 1)).collect();
            cuts.sort_unstable();
            prop_assert_eq!(whole(&block), expected(&bodies));
            prop_assert_eq!(split(&block, &cuts).concat(), expected(&bodies));
            prop_assert_eq!(pieces(&block, 1).concat(), expected(&bodies));
        }

        #[test]
        fn decodes_as_json_does_or_shows_nothing(
            bodies in prop::collection::vec(any_body(), 1..4),
            step in 1usize..9,
        ) {
            let block = list(&bodies);
            let whole = whole(&block);
            prop_assert_eq!(&whole, &expected(&bodies));
            // In pieces, a string JSON refuses may show its start, never
            // more than its valid prefix: the whole's text is kept in order.
            let split = pieces(&block, step).concat();
            let mut rest = split.as_str();
            for c in whole.chars() {
                let at = rest.find(c);
                prop_assert!(at.is_some(), "{:?} lost from {:?}", c, split);
                rest = &rest[at.unwrap_or(0) + c.len_utf8()..];
            }
        }
    }
}

//! Native-messaging frames, without I/O.
//!
//! Chrome and Firefox talk to a native host over stdio with frames made of a
//! `u32` length in the machine's native byte order followed by that many
//! bytes of UTF-8 JSON. This module turns bytes into frames and frames into
//! messages (and back) as plain functions over plain data, so the stdio loop
//! in [`crate::transport`] stays a thin adapter.
//!
//! Invariants kept here:
//! - An inbound frame whose declared length is above the limit is refused
//!   before its body is allocated, and the decoder then yields nothing more
//!   (the stream is out of sync and cannot be trusted).
//! - Decoding is linear in the input however it is split across reads.
//! - Nesting depth is checked by a byte scanner before serde parses, so a
//!   hostile document is refused with `JSON_TOO_DEEP` and never reaches serde's
//!   recursion.
//! - No outbound frame body exceeds the caller's `max_frame` (at most
//!   [`MAX_OUTBOUND_FRAME`] in production): larger messages become `part`
//!   messages, each valid JSON on its own, that [`PartAssembler`] reassembles.

use byteorder::{ByteOrder, NativeEndian};
use laika_core::json_bounded::ParseError;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::wire::Part;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Largest host → browser frame body. Browsers close the port above 1 MiB.
pub const MAX_OUTBOUND_FRAME: usize = 1 << 20;
pub use laika_protocol::limits::DEFAULT_MAX_INBOUND_FRAME;
pub use laika_protocol::limits::DEFAULT_MAX_JSON_DEPTH;

/// serde_json refuses the 128th nested level itself; depth limits are capped
/// below that so our scanner, with its coded error, always answers first.
const SERDE_DEPTH_CEILING: usize = 127;
const HEADER_LEN: usize = 4;
/// Cap on the up-front reservation for a body: a header alone must not make
/// us allocate a large buffer the sender never fills.
const BODY_PREALLOC: usize = 64 << 10;
/// A message id longer than this (escaped) is not copied into `part_of`, so
/// the part envelope stays small; the id still travels inside the data.
const MAX_PART_OF_LEN: usize = 256;

/// Incremental decoder of inbound frames.
///
/// Bytes are copied once, straight into the header or the current body, so
/// any split of the input costs the same. Complete frames and errors wait in
/// a queue in stream order.
#[derive(Debug)]
pub struct FrameDecoder {
    max_len: usize,
    header: [u8; HEADER_LEN],
    header_filled: usize,
    /// `Some((declared, body_so_far))` while inside a frame body.
    body: Option<(usize, Vec<u8>)>,
    ready: VecDeque<Result<Vec<u8>>>,
    poisoned: bool,
}

impl FrameDecoder {
    /// A decoder refusing frames whose declared length is above `max_len`.
    pub fn new(max_len: usize) -> Self {
        FrameDecoder {
            max_len,
            header: [0; HEADER_LEN],
            header_filled: 0,
            body: None,
            ready: VecDeque::new(),
            poisoned: false,
        }
    }

    /// Feeds bytes read from the stream. Ignored once the decoder is poisoned.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.poisoned {
            if let Some((declared, body)) = self.body.as_mut() {
                let take = declared.saturating_sub(body.len()).min(bytes.len());
                let (now, rest) = bytes.split_at(take);
                body.extend_from_slice(now);
                bytes = rest;
                if body.len() == *declared {
                    if let Some((_, done)) = self.body.take() {
                        self.ready.push_back(Ok(done));
                    }
                }
                continue;
            }
            let free = self
                .header
                .get_mut(self.header_filled..)
                .unwrap_or_default();
            let take = free.len().min(bytes.len());
            let (now, rest) = bytes.split_at(take);
            if let Some(dst) = free.get_mut(..take) {
                dst.copy_from_slice(now);
            }
            bytes = rest;
            self.header_filled += take;
            if self.header_filled == HEADER_LEN {
                self.header_filled = 0;
                self.start_body();
            }
        }
    }

    /// Acts on a complete header: refuse, emit an empty frame, or open a body.
    fn start_body(&mut self) {
        let declared = NativeEndian::read_u32(&self.header);
        // On targets where usize is narrower than u32 the frame cannot fit.
        let len = usize::try_from(declared).unwrap_or(usize::MAX);
        if len > self.max_len {
            self.poisoned = true;
            self.ready.push_back(Err(Error::new(
                ErrorCode::FrameTooLarge,
                format!(
                    "frame declares {declared} bytes but at most {} are allowed; \
                     the stream is out of sync and will not be read further",
                    self.max_len
                ),
            )));
        } else if len == 0 {
            self.ready.push_back(Ok(Vec::new()));
        } else {
            self.body = Some((len, Vec::with_capacity(len.min(BODY_PREALLOC))));
        }
    }

    /// The next complete frame body or framing error, in stream order.
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, Error>> {
        self.ready.pop_front()
    }

    /// At end of stream: the error for a frame cut short, if any.
    ///
    /// After `FRAME_TOO_LARGE` the remaining bytes are meaningless, so a
    /// poisoned decoder reports nothing more.
    pub fn finish(&self) -> Option<Error> {
        if self.poisoned {
            return None;
        }
        if let Some((declared, body)) = &self.body {
            return Some(Error::new(
                ErrorCode::FrameTruncated,
                format!(
                    "stream ended inside a frame body: expected {declared} bytes, received {}",
                    body.len()
                ),
            ));
        }
        if self.header_filled > 0 {
            return Some(Error::new(
                ErrorCode::FrameTruncated,
                format!(
                    "stream ended inside a frame header: expected {HEADER_LEN} bytes, received {}",
                    self.header_filled
                ),
            ));
        }
        None
    }
}

/// Frames one body: native-endian `u32` length, then the bytes.
///
/// Bodies must be at most `u32::MAX` bytes ([`encode_message`] keeps them far
/// below). A longer body cannot be described by the header, so it is cut to
/// `u32::MAX` bytes to keep the stream in sync rather than corrupt it.
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let body = body.get(..len as usize).unwrap_or(body);
    let mut out = vec![0u8; HEADER_LEN];
    NativeEndian::write_u32(&mut out, len);
    out.extend_from_slice(body);
    out
}

/// Parses a frame body into a message object.
///
/// Checks run cheapest first: UTF-8, nesting depth (capped at 127, the most
/// serde_json accepts), JSON syntax, then that the top level is an object.
pub fn parse_message(body: &[u8], max_depth: usize) -> Result<Map<String, Value>> {
    let text = std::str::from_utf8(body).map_err(|e| {
        Error::new(
            ErrorCode::InvalidUtf8,
            format!(
                "frame body is not valid UTF-8 (first bad byte at offset {})",
                e.valid_up_to()
            ),
        )
    })?;
    check_depth(text.as_bytes(), max_depth.min(SERDE_DEPTH_CEILING))?;
    let value = parse_bounded(text, "frame body")?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(Error::invalid_request(format!(
            "a message must be a JSON object, got {}",
            json_kind(&other)
        ))),
    }
}

/// JSON text as a value, with the size limits enforced while parsing
/// ([`laika_core::json_bounded`]): a syntax error is `INVALID_JSON`, a
/// limit `INVALID_REQUEST`.
fn parse_bounded(text: &str, what: &str) -> Result<Value> {
    laika_core::json_bounded::parse(text).map_err(|e| match e {
        ParseError::Syntax(e) => Error::new(
            ErrorCode::InvalidJson,
            format!("{what} is not valid JSON: {e}"),
        ),
        ParseError::Limit(why) => Error::invalid_request(format!("{what} refused: {why}")),
    })
}

/// Refuses text whose `[`/`{` nesting exceeds `limit`, skipping string
/// contents. Runs on any bytes, valid JSON or not, in one pass.
fn check_depth(bytes: &[u8], limit: usize) -> Result<()> {
    let mut depth = 0usize;
    for (offset, b) in laika_core::json_scan::structural_bytes(bytes) {
        match b {
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(Error::new(
                        ErrorCode::JsonTooDeep,
                        format!(
                            "message nests deeper than {limit} levels (at byte offset {offset})"
                        ),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Serializes a message into frames whose bodies are at most `max_frame`
/// bytes (also capped at `u32::MAX`).
///
/// A message that fits is one frame. A larger one is split into `part`
/// messages, each valid JSON:
/// `{"type":"part","id":<uuid>,"part_of":<message id or uuid>,"index":i,"count":n,"data":<slice>}`.
/// `data` slices of the serialized text, concatenated in `index` order, give
/// the text back exactly. `part_of` is the message's string `id` when that is
/// at most 256 bytes escaped, otherwise a fresh uuid.
///
/// Fails with `INTERNAL` when `max_frame` is too small to hold a part
/// envelope plus one character (a few hundred bytes). Every part is measured
/// after serialization, so a budgeting mistake is also `INTERNAL`, never an
/// oversized frame.
pub fn encode_message(message: &Value, max_frame: usize) -> Result<Vec<Vec<u8>>> {
    let max_frame = max_frame.min(usize::try_from(u32::MAX).unwrap_or(usize::MAX));
    let text = serde_json::to_string(message)
        .map_err(|e| Error::internal(format!("cannot serialize an outbound message: {e}")))?;
    if text.len() <= max_frame {
        return Ok(vec![encode_frame(text.as_bytes())]);
    }

    let part_of = message
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| escaped_str_len(id) <= MAX_PART_OF_LEN)
        .map_or_else(new_id, str::to_owned);
    // There can never be more parts than bytes of text, so an envelope built
    // with that number in `index` and `count` bounds every real envelope.
    let widest = text.len();
    let envelope = part_envelope(&new_id(), &part_of, widest, widest, "")?;
    // Worst single char: a control char escaped as \u00XX.
    const WIDEST_ESCAPED_CHAR: usize = 6;
    let budget = max_frame
        .checked_sub(envelope.len())
        .filter(|b| *b >= WIDEST_ESCAPED_CHAR)
        .ok_or_else(|| {
            Error::internal(format!(
                "outbound frame limit of {max_frame} bytes cannot hold a part envelope \
                 of {} bytes plus data",
                envelope.len()
            ))
        })?;

    let slices = slice_escaped(&text, budget)?;
    let count = slices.len();
    let mut frames = Vec::with_capacity(count);
    for (index, data) in slices.into_iter().enumerate() {
        let body = part_envelope(&new_id(), &part_of, index, count, data)?;
        if body.len() > max_frame {
            return Err(Error::internal(format!(
                "part {index} of {count} is {} bytes, above the {max_frame}-byte limit",
                body.len()
            )));
        }
        frames.push(encode_frame(&body));
    }
    Ok(frames)
}

fn part_envelope(
    id: &str,
    part_of: &str,
    index: usize,
    count: usize,
    data: &str,
) -> Result<Vec<u8>> {
    let part = Part {
        id,
        part_of,
        index,
        count,
        data,
    };
    serde_json::to_vec(&part)
        .map_err(|e| Error::internal(format!("cannot serialize a part message: {e}")))
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Bytes a char takes inside a JSON string as serde_json writes it.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{08}' | '\u{09}' | '\u{0A}' | '\u{0C}' | '\u{0D}' => 2,
        '\u{00}'..='\u{1F}' => 6,
        _ => c.len_utf8(),
    }
}

fn escaped_str_len(s: &str) -> usize {
    s.chars().map(escaped_char_len).sum()
}

/// Cuts `text` on char boundaries into slices whose escaped length is at most
/// `budget` (which must hold the widest escaped char).
fn slice_escaped(text: &str, budget: usize) -> Result<Vec<&str>> {
    let mut slices = Vec::new();
    let mut start = 0;
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let width = escaped_char_len(c);
        if used + width > budget {
            slices.push(slice(text, start, at)?);
            start = at;
            used = 0;
        }
        used += width;
    }
    slices.push(slice(text, start, text.len())?);
    Ok(slices)
}

fn slice(text: &str, start: usize, end: usize) -> Result<&str> {
    text.get(start..end)
        .ok_or_else(|| Error::internal(format!("bad part boundary {start}..{end}")))
}

/// Reassembles `part` messages produced by [`encode_message`].
///
/// Parts of several messages may interleave; each `part_of` is buffered on
/// its own. Received parts are kept in a map keyed by index, so a hostile
/// `count` costs nothing until parts actually arrive.
#[derive(Debug, Default)]
pub struct PartAssembler {
    pending: HashMap<String, PendingParts>,
}

#[derive(Debug)]
struct PendingParts {
    count: u64,
    parts: BTreeMap<u64, String>,
}

impl PartAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Passes non-part messages through; buffers parts and returns the parsed
    /// original once its last part arrives.
    ///
    /// A part with missing or ill-typed fields, `count` 0, `index` not below
    /// `count`, a `count` different from earlier parts of the same message, or
    /// a repeated `index` is refused with `INVALID_REQUEST`; parts received
    /// before it stay buffered. Reassembled text that is not JSON is
    /// `INVALID_JSON`.
    pub fn push(&mut self, msg: Value) -> Result<Option<Value>> {
        if msg.get("type").and_then(Value::as_str) != Some("part") {
            return Ok(Some(msg));
        }
        let part_of = str_field(&msg, "part_of")?;
        let index = u64_field(&msg, "index")?;
        let count = u64_field(&msg, "count")?;
        let data = str_field(&msg, "data")?;
        str_field(&msg, "id")?;
        if index >= count {
            return Err(Error::invalid_request(format!(
                "part index {index} is not below its count {count} (part_of {part_of:?})"
            )));
        }

        let pending = self
            .pending
            .entry(part_of.to_owned())
            .or_insert_with(|| PendingParts {
                count,
                parts: BTreeMap::new(),
            });
        if pending.count != count {
            return Err(Error::invalid_request(format!(
                "part {index} of {part_of:?} says count {count}, earlier parts said {}",
                pending.count
            )));
        }
        if pending.parts.contains_key(&index) {
            return Err(Error::invalid_request(format!(
                "part {index} of {part_of:?} arrived twice"
            )));
        }
        pending.parts.insert(index, data.to_owned());
        if u64::try_from(pending.parts.len()).unwrap_or(u64::MAX) < count {
            return Ok(None);
        }

        let Some(done) = self.pending.remove(part_of) else {
            return Err(Error::internal("completed parts vanished"));
        };
        let text: String = done.parts.into_values().collect();
        parse_bounded(&text, &format!("reassembled message {part_of:?}")).map(Some)
    }

    /// How many messages have some but not all of their parts.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

fn str_field<'a>(msg: &'a Value, key: &str) -> Result<&'a str> {
    msg.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_request(format!("part message needs a string {key:?}")))
}

fn u64_field(msg: &Value, key: &str) -> Result<u64> {
    msg.get(key).and_then(Value::as_u64).ok_or_else(|| {
        Error::invalid_request(format!("part message needs a non-negative integer {key:?}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame_of(text: &str) -> Vec<u8> {
        encode_frame(text.as_bytes())
    }

    fn drain(dec: &mut FrameDecoder) -> Vec<Result<Vec<u8>>> {
        std::iter::from_fn(|| dec.next_frame()).collect()
    }

    #[test]
    fn header_is_native_endian_length() {
        let f = encode_frame(b"{}");
        assert_eq!(f.len(), 6);
        assert_eq!(u32::from_ne_bytes([f[0], f[1], f[2], f[3]]), 2);
        assert_eq!(&f[4..], b"{}");
    }

    #[test]
    fn decodes_several_frames_from_one_push() {
        let mut bytes = frame_of(r#"{"a":1}"#);
        bytes.extend(frame_of(""));
        bytes.extend(frame_of(r#"{"b":2}"#));
        let mut dec = FrameDecoder::new(100);
        dec.push(&bytes);
        let frames = drain(&mut dec);
        assert_eq!(
            frames,
            vec![
                Ok(br#"{"a":1}"#.to_vec()),
                Ok(Vec::new()),
                Ok(br#"{"b":2}"#.to_vec())
            ]
        );
        assert_eq!(dec.finish(), None);
    }

    #[test]
    fn decodes_byte_by_byte() {
        let mut bytes = frame_of(r#"{"a":"x"}"#);
        bytes.extend(frame_of(r#"[1,2]"#));
        let mut dec = FrameDecoder::new(100);
        let mut out = Vec::new();
        for b in &bytes {
            dec.push(std::slice::from_ref(b));
            out.extend(drain(&mut dec));
        }
        assert_eq!(
            out,
            vec![Ok(br#"{"a":"x"}"#.to_vec()), Ok(b"[1,2]".to_vec())]
        );
    }

    #[test]
    fn oversize_is_refused_and_poisons() {
        let mut bytes = frame_of(r#"{"ok":1}"#);
        bytes.extend(frame_of(&"x".repeat(11)));
        bytes.extend(frame_of("{}"));
        let mut dec = FrameDecoder::new(10);
        dec.push(&bytes);
        dec.push(&frame_of("{}"));
        let frames = drain(&mut dec);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[0], Ok(br#"{"ok":1}"#.to_vec()));
        let err = frames[1].clone().unwrap_err();
        assert_eq!(err.code, ErrorCode::FrameTooLarge);
        assert!(
            err.message.contains("11") && err.message.contains("10"),
            "{err}"
        );
        assert_eq!(dec.finish(), None);
    }

    #[test]
    fn huge_declared_length_does_not_allocate() {
        let mut dec = FrameDecoder::new(DEFAULT_MAX_INBOUND_FRAME);
        dec.push(&u32::MAX.to_ne_bytes());
        let err = dec.next_frame().unwrap().unwrap_err();
        assert_eq!(err.code, ErrorCode::FrameTooLarge);
        assert!(err.message.contains(&u32::MAX.to_string()));
        assert!(err.message.contains(&DEFAULT_MAX_INBOUND_FRAME.to_string()));
    }

    #[test]
    fn truncation_is_reported_at_finish() {
        let mut dec = FrameDecoder::new(100);
        dec.push(&[5, 0]);
        let err = dec.finish().unwrap();
        assert_eq!(err.code, ErrorCode::FrameTruncated);
        assert!(
            err.message.contains("expected 4 bytes, received 2"),
            "{err}"
        );

        let mut dec = FrameDecoder::new(100);
        let f = frame_of(r#"{"a":1}"#);
        dec.push(&f[..6]);
        assert!(dec.next_frame().is_none());
        let err = dec.finish().unwrap();
        assert_eq!(err.code, ErrorCode::FrameTruncated);
        assert!(
            err.message.contains("expected 7 bytes, received 2"),
            "{err}"
        );
    }

    #[test]
    fn largest_frame_in_small_reads() {
        // The browser's 64 MiB maximum arriving in 64 KiB reads, as over a pipe.
        let len = DEFAULT_MAX_INBOUND_FRAME;
        let mut bytes = encode_frame(&vec![b'7'; len]);
        bytes.extend(encode_frame(b"{}"));
        let mut dec = FrameDecoder::new(len);
        for chunk in bytes.chunks(64 << 10) {
            dec.push(chunk);
        }
        let got = dec.next_frame().unwrap().unwrap();
        assert_eq!(got.len(), len);
        assert!(got.iter().all(|b| *b == b'7'));
        assert_eq!(dec.next_frame(), Some(Ok(b"{}".to_vec())));
        assert_eq!(dec.finish(), None);
    }

    #[test]
    fn parse_classifies_errors() {
        let code = |b: &[u8]| parse_message(b, 64).unwrap_err().code;
        assert_eq!(code(b"{\"a\":\"\xff\"}"), ErrorCode::InvalidUtf8);
        assert_eq!(code(b"{\"a\":"), ErrorCode::InvalidJson);
        assert_eq!(code(b""), ErrorCode::InvalidJson);
        assert_eq!(code(b"[1]"), ErrorCode::InvalidRequest);
        assert_eq!(code(b"\"s\""), ErrorCode::InvalidRequest);
        assert_eq!(code(b"null"), ErrorCode::InvalidRequest);
        let e = parse_message(b"{\n \"a\": tru }", 64).unwrap_err();
        assert!(e.message.contains("line 2 column"), "{e}");
        let m = parse_message(br#"{"type":"ask","n":[1,{"x":null}]}"#, 64).unwrap();
        assert_eq!(m["type"], "ask");
        assert_eq!(m["n"][1]["x"], Value::Null);
    }

    #[test]
    fn depth_limit_is_exact_and_ignores_strings() {
        let nested =
            |n: usize| format!("{}{}", "{\"a\":".repeat(n), "1".to_owned() + &"}".repeat(n));
        assert!(parse_message(nested(3).as_bytes(), 3).is_ok());
        let e = parse_message(nested(4).as_bytes(), 3).unwrap_err();
        assert_eq!(e.code, ErrorCode::JsonTooDeep);
        assert!(e.message.contains("3 levels"), "{e}");
        // Brackets and escaped quotes inside strings do not count.
        let s = format!(r#"{{"s":"{}\"[[[[","t":[1]}}"#, "[".repeat(100));
        assert!(parse_message(s.as_bytes(), 2).is_ok());
        // Unclosed or mismatched brackets still count as depth.
        assert_eq!(
            parse_message("[".repeat(100_000).as_bytes(), 64)
                .unwrap_err()
                .code,
            ErrorCode::JsonTooDeep
        );
    }

    #[test]
    fn depth_limit_above_serde_ceiling_is_still_ours() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let e = parse_message(format!("{{\"a\":{deep}}}").as_bytes(), usize::MAX).unwrap_err();
        assert_eq!(e.code, ErrorCode::JsonTooDeep);
        // The ceiling itself parses: serde accepts 127 levels.
        let ok = format!("{{\"a\":{}{}}}", "[".repeat(126), "]".repeat(126));
        assert!(parse_message(ok.as_bytes(), usize::MAX).is_ok());
    }

    #[test]
    fn small_message_is_one_frame() {
        let msg = json!({"type": "done", "id": "m1"});
        let frames = encode_message(&msg, MAX_OUTBOUND_FRAME).unwrap();
        assert_eq!(frames.len(), 1);
        let body = &frames[0][4..];
        assert_eq!(serde_json::from_slice::<Value>(body).unwrap(), msg);
    }

    fn reassemble(frames: &[Vec<u8>], max_frame: usize) -> (Vec<Value>, Value) {
        let mut asm = PartAssembler::new();
        let mut parts = Vec::new();
        let mut out = None;
        for f in frames {
            let mut dec = FrameDecoder::new(max_frame);
            dec.push(f);
            let body = dec.next_frame().unwrap().unwrap();
            assert!(body.len() <= max_frame, "{} > {max_frame}", body.len());
            let v = Value::Object(parse_message(&body, 64).unwrap());
            parts.push(v.clone());
            if let Some(done) = asm.push(v).unwrap() {
                assert!(out.is_none());
                out = Some(done);
            }
        }
        assert_eq!(asm.pending(), 0);
        (parts, out.unwrap())
    }

    #[test]
    fn large_message_splits_into_valid_parts() {
        let msg = json!({"id": "msg-7", "type": "render", "text": "é\"\\\n\u{1}".repeat(3000)});
        let text = serde_json::to_string(&msg).unwrap();
        let frames = encode_message(&msg, 4096).unwrap();
        assert!(frames.len() > 10);
        let (parts, back) = reassemble(&frames, 4096);
        assert_eq!(back, msg);
        let mut joined = String::new();
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(p["type"], "part");
            assert_eq!(p["part_of"], "msg-7");
            assert_eq!(p["index"], i);
            assert_eq!(p["count"], frames.len());
            assert!(uuid::Uuid::parse_str(p["id"].as_str().unwrap()).is_ok());
            joined.push_str(p["data"].as_str().unwrap());
        }
        assert_eq!(joined, text);
    }

    #[test]
    fn escape_heavy_text_fits() {
        // Serialized JSON holds no raw control chars, so its worst case is a
        // text made only of quotes and backslashes: every char escapes to two.
        let msg = Value::String("\\\"".repeat(5_000));
        let frames = encode_message(&msg, 1024).unwrap();
        let (_, back) = reassemble(&frames, 1024);
        assert_eq!(back, msg);
    }

    #[test]
    fn escaped_lengths_match_serde() {
        for c in [
            '"',
            '\\',
            '\n',
            '\u{1}',
            '\u{1f}',
            '\u{7f}',
            'é',
            '\u{1F600}',
            'a',
        ] {
            let json = serde_json::to_string(&c.to_string()).unwrap();
            assert_eq!(escaped_char_len(c), json.len() - 2, "{c:?}");
        }
    }

    #[test]
    fn part_of_falls_back_to_uuid() {
        let msg = json!({"id": 5, "pad": "x".repeat(5000)});
        let frames = encode_message(&msg, 1024).unwrap();
        let (parts, back) = reassemble(&frames, 1024);
        assert_eq!(back, msg);
        let part_of = parts[0]["part_of"].as_str().unwrap();
        assert!(uuid::Uuid::parse_str(part_of).is_ok());
        assert!(parts.iter().all(|p| p["part_of"] == part_of));

        let long_id = "i".repeat(MAX_PART_OF_LEN + 1);
        let msg = json!({"id": long_id, "pad": "x".repeat(5000)});
        let frames = encode_message(&msg, 1024).unwrap();
        let (parts, back) = reassemble(&frames, 1024);
        assert_eq!(back, msg);
        assert!(uuid::Uuid::parse_str(parts[0]["part_of"].as_str().unwrap()).is_ok());
    }

    #[test]
    fn tiny_frame_limit_is_an_error_not_a_panic() {
        let e = encode_message(&json!({"x": "y".repeat(500)}), 50).unwrap_err();
        assert_eq!(e.code, ErrorCode::Internal);
        assert!(e.message.contains("50 bytes"), "{e}");
    }

    fn part(part_of: &str, index: u64, count: u64, data: &str) -> Value {
        json!({"type":"part","id":"p","part_of":part_of,"index":index,"count":count,"data":data})
    }

    #[test]
    fn assembler_passes_through_and_interleaves() {
        let mut asm = PartAssembler::new();
        let plain = json!({"type": "done"});
        assert_eq!(asm.push(plain.clone()).unwrap(), Some(plain));
        assert_eq!(asm.push(part("a", 1, 2, "1]")).unwrap(), None);
        assert_eq!(asm.push(part("b", 0, 2, "{\"k\":")).unwrap(), None);
        assert_eq!(asm.pending(), 2);
        assert_eq!(asm.push(part("a", 0, 2, "[")).unwrap(), Some(json!([1])));
        assert_eq!(
            asm.push(part("b", 1, 2, "true}")).unwrap(),
            Some(json!({"k": true}))
        );
        assert_eq!(asm.pending(), 0);
    }

    #[test]
    fn assembler_rejects_inconsistent_parts() {
        let mut asm = PartAssembler::new();
        let code = |asm: &mut PartAssembler, v: Value| asm.push(v).unwrap_err().code;
        assert_eq!(asm.push(part("a", 0, 3, "[")).unwrap(), None);
        assert_eq!(
            code(&mut asm, part("a", 0, 3, "[")),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            code(&mut asm, part("a", 1, 4, "1")),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            code(&mut asm, part("a", 3, 3, "]")),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            code(&mut asm, part("z", 0, 0, "")),
            ErrorCode::InvalidRequest
        );
        let mut missing = part("a", 1, 3, "1");
        missing.as_object_mut().unwrap().remove("data");
        assert_eq!(code(&mut asm, missing), ErrorCode::InvalidRequest);
        assert_eq!(
            code(
                &mut asm,
                json!({"type":"part","id":"p","part_of":"a","index":-1,"count":3,"data":""})
            ),
            ErrorCode::InvalidRequest
        );
        // Earlier parts survive the refusals: the message still completes.
        assert_eq!(asm.push(part("a", 1, 3, "1")).unwrap(), None);
        assert_eq!(asm.push(part("a", 2, 3, "]")).unwrap(), Some(json!([1])));
        // A hostile count allocates nothing up front.
        assert_eq!(asm.push(part("h", 0, u64::MAX, "[")).unwrap(), None);
        // Complete but not JSON.
        assert_eq!(code(&mut asm, part("j", 0, 1, "{")), ErrorCode::InvalidJson);
    }
}

//! Incremental render extraction: while the model streams its JSON answer,
//! find each top-level block of `assistant.render.children` as soon as it is
//! complete, sanitize it, and hand it out for a `render_delta` event.
//!
//! Three parts, each testable alone:
//! - [`RenderStream`] scans the accumulating text once, byte by byte (an own
//!   scanner rather than a partial JSON parser: re-parsing the prefix on
//!   every piece would be quadratic, and it would not say where a block
//!   ends). It tracks strings, escapes and nesting with counters, never
//!   recursion, and parses each finished block with `serde_json`.
//! - [`Coalescer`] batches blocks so at most one event goes out per
//!   [`COALESCE_INTERVAL`]; the clock is passed in.
//! - [`Preview`] joins both for one attempt and remembers what it sent, so
//!   the turn can withdraw it (`render_reset`) when it is not confirmed.
//!
//! Invariants:
//! - A block is sanitized with `render::sanitize` before it leaves this
//!   module, inside a doc and with the limits left over from earlier blocks,
//!   so the blocks handed out for one attempt are, in order, the children of
//!   the sanitized whole render (a run of inline nodes, which the sanitizer
//!   merges into one paragraph, is held until the run ends). The turn still
//!   compares them with the final render and resets when they differ.
//! - The candidate object is located as `model_output` does: after leading
//!   whitespace, a byte order mark and `<think>` blocks, the first `{`.
//!   Anything unexpected (a syntax error, a non-object block, a second
//!   `children` array) ends the preview for this attempt: it is best effort,
//!   and the validated `assistant` event is what counts.
//! - Linear in the text: every byte is scanned once; the buffer keeps only
//!   the block being read.

use crate::model_output;
use crate::render::{self, RenderLimits};
use crate::text::floor_char_boundary;
use laika_protocol::render::ast::{Block, Inline};
use serde_json::{json, Value};
use std::time::Duration;

/// At most one `render_delta` per this interval; blocks that complete
/// faster are batched.
pub const COALESCE_INTERVAL: Duration = Duration::from_millis(30);

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
/// The path of the block array, one key per object level from the root.
const PATH: [&str; 3] = ["assistant", "render", "children"];
/// Keys longer than this (raw) cannot be one of [`PATH`]; not kept.
const MAX_KEY_BYTES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the candidate object's `{`.
    Preamble,
    /// Inside the candidate object.
    Object,
    /// The block array closed, or the preview gave up.
    Finished,
}

/// Finds and sanitizes the top-level render blocks of a streamed answer.
pub struct RenderStream {
    phase: Phase,
    /// Unscanned text in the preamble; from the current block's start (or
    /// empty) in the object.
    buf: String,
    /// Scan position in `buf`.
    pos: usize,
    /// Where in `buf` the search for `</think>` resumes.
    think_from: Option<usize>,
    /// Nesting depth inside the candidate object (root object = 1).
    depth: usize,
    /// How many levels of [`PATH`] are open: root = 1 … the block array = 4.
    on_path: usize,
    in_string: bool,
    escaped: bool,
    /// In an object on the path, at its own depth: the next string is a key.
    expect_key: bool,
    key: Option<String>,
    /// Raw bytes of the key being read (`None` when not capturing).
    key_raw: Option<Vec<u8>>,
    /// Start of the block being read, in `buf`.
    block_start: Option<usize>,
    /// Blocks begun so far: names the block being read for the text tap.
    blocks_started: usize,
    /// Raw blocks of an open inline run, held until the run ends.
    held: Vec<Value>,
    limits: RenderLimits,
    nodes_used: usize,
    chars_used: usize,
}

impl RenderStream {
    pub fn new(limits: RenderLimits) -> Self {
        RenderStream {
            phase: Phase::Preamble,
            buf: String::new(),
            pos: 0,
            think_from: None,
            depth: 0,
            on_path: 0,
            in_string: false,
            escaped: false,
            expect_key: false,
            key: None,
            key_raw: None,
            block_start: None,
            blocks_started: 0,
            held: Vec::new(),
            limits,
            nodes_used: 0,
            chars_used: 0,
        }
    }

    /// Feeds the next piece of model text; returns the sanitized blocks it
    /// completed, in order (often none).
    pub fn push(&mut self, piece: &str) -> Vec<Block> {
        let mut out = Vec::new();
        if self.phase == Phase::Finished {
            return out;
        }
        self.buf.push_str(piece);
        if self.phase == Phase::Preamble && !self.find_object() {
            return out;
        }
        self.scan(&mut out);
        // Keep only the block being read: everything before it is scanned.
        // Draining only when at least half the buffer goes keeps the cost of
        // moving the rest linear overall.
        let keep_from = self.block_start.unwrap_or(self.pos);
        if keep_from > 0 && keep_from * 2 >= self.buf.len() {
            self.buf.drain(..keep_from);
            self.pos -= keep_from;
            self.block_start = self.block_start.map(|s| s - keep_from);
        }
        if self.phase == Phase::Finished {
            self.buf = String::new();
            self.pos = 0;
        }
        out
    }

    /// Skips what `model_output` skips before the object. True once the
    /// scan position is at the candidate's `{`.
    fn find_object(&mut self) -> bool {
        loop {
            if let Some(from) = self.think_from {
                let hay = self.buf.get(from..).unwrap_or_default();
                match hay.find(THINK_CLOSE) {
                    Some(at) => {
                        self.pos = from + at + THINK_CLOSE.len();
                        self.think_from = None;
                    }
                    None => {
                        // Drop the reasoning read so far, keeping where a
                        // split `</think>` could still start.
                        let back = THINK_CLOSE.len() - 1;
                        let resume = self.buf.len().saturating_sub(back).max(from);
                        let resume = floor_char_boundary(&self.buf, resume);
                        self.buf.drain(..resume);
                        self.pos = 0;
                        self.think_from = Some(0);
                        return false;
                    }
                }
            }
            let rest = self.buf.get(self.pos..).unwrap_or_default();
            let brace = rest.find('{');
            let think = rest.find(THINK_OPEN);
            match (brace, think) {
                (Some(b), Some(t)) if t < b => {
                    self.think_from = Some(self.pos + t + THINK_OPEN.len());
                }
                (None, Some(t)) => {
                    self.think_from = Some(self.pos + t + THINK_OPEN.len());
                }
                (Some(b), _) => {
                    self.pos += b;
                    self.phase = Phase::Object;
                    return true;
                }
                (None, None) => {
                    // Nothing yet; keep the tail in case it opens `<think>`.
                    let back = THINK_OPEN.len() - 1;
                    let tail = self.buf.len().saturating_sub(back).max(self.pos);
                    let keep = floor_char_boundary(&self.buf, tail);
                    self.buf.drain(..keep);
                    self.pos = 0;
                    return false;
                }
            }
        }
    }

    /// The block being read, as far as it was written: its serial number
    /// and its raw JSON from its `{`.
    pub fn partial(&self) -> Option<(usize, &str)> {
        let start = self.block_start?;
        Some((self.blocks_started, self.buf.get(start..self.pos)?))
    }

    fn give_up(&mut self) {
        self.phase = Phase::Finished;
        self.block_start = None;
        self.held.clear();
    }

    fn scan(&mut self, out: &mut Vec<Block>) {
        while self.phase == Phase::Object {
            let Some(&b) = self.buf.as_bytes().get(self.pos) else {
                return;
            };
            self.pos += 1;
            if self.in_string {
                self.string_byte(b);
                continue;
            }
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b'"' => {
                    self.in_string = true;
                    let own_level = self.on_path == self.depth && self.on_path < 4;
                    if own_level && self.expect_key {
                        self.key_raw = Some(Vec::new());
                        self.expect_key = false;
                    } else {
                        self.value_start(b);
                    }
                }
                b'{' | b'[' => {
                    self.value_start(b);
                    self.depth += 1;
                    if self.depth == 1 {
                        self.on_path = 1;
                        self.expect_key = true;
                    } else if self.depth == self.on_path + 1 && self.opens_next_level(b) {
                        self.on_path += 1;
                        self.expect_key = b == b'{';
                    }
                }
                b'}' | b']' => {
                    if self.depth == 0 {
                        self.give_up();
                        return;
                    }
                    self.depth -= 1;
                    if self.depth == 4 {
                        self.block_end(out);
                    } else if self.depth < self.on_path {
                        // A path level closed: after the block array, done.
                        if self.on_path == 4 {
                            self.flush_held(out);
                        }
                        self.give_up();
                        return;
                    }
                }
                b',' => {
                    if self.depth == self.on_path && self.on_path < 4 {
                        self.expect_key = true;
                        self.key = None;
                    }
                }
                b':' => {}
                _ => self.value_start(b),
            }
        }
    }

    fn string_byte(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            if let Some(raw) = self.key_raw.take() {
                self.key = if raw.len() > MAX_KEY_BYTES {
                    None
                } else {
                    decode_key(&raw)
                };
            }
            return;
        }
        if let Some(raw) = self.key_raw.as_mut() {
            // One byte past the cap marks the key as too long to match.
            if raw.len() <= MAX_KEY_BYTES {
                raw.push(b);
            }
        }
    }

    /// Whether the container opening now is the next level of [`PATH`].
    fn opens_next_level(&self, b: u8) -> bool {
        let want = self
            .on_path
            .checked_sub(1)
            .and_then(|i| PATH.get(i))
            .copied();
        let is_array_level = self.on_path == 3;
        self.key.as_deref().is_some_and(|k| Some(k) == want)
            && (b == if is_array_level { b'[' } else { b'{' })
    }

    /// A value starts at `self.pos - 1`; inside the block array, at its own
    /// depth, that is a block.
    fn value_start(&mut self, b: u8) {
        if self.on_path == 4 && self.depth == 4 {
            if b == b'{' {
                self.block_start = Some(self.pos.saturating_sub(1));
                self.blocks_started += 1;
            } else {
                // Not a node object: the answer is invalid, stop previewing.
                self.give_up();
            }
        }
    }

    fn block_end(&mut self, out: &mut Vec<Block>) {
        let Some(start) = self.block_start.take() else {
            return;
        };
        let text = self.buf.get(start..self.pos).unwrap_or_default();
        let Ok((block, _)) = model_output::parse_object(text) else {
            self.give_up();
            return;
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text" | "link") => self.held.push(block),
            Some(t) if render::is_known_type(t) => {
                self.held.push(block);
                self.flush_held(out);
            }
            // Dropped by the sanitizer without ending an inline run.
            _ if !self.held.is_empty() => self.held.push(block),
            _ => {}
        }
    }

    /// Sanitizes the held blocks as one doc and hands out the result.
    fn flush_held(&mut self, out: &mut Vec<Block>) {
        if self.held.is_empty() {
            return;
        }
        let raw = std::mem::take(&mut self.held);
        let limits = RenderLimits {
            max_nodes: self.limits.max_nodes.saturating_sub(self.nodes_used),
            max_total_chars: self.limits.max_total_chars.saturating_sub(self.chars_used),
            ..self.limits
        };
        let sanitized = render::sanitize(&json!({"type": "doc", "children": raw}), &limits);
        for block in sanitized.render.children {
            let (nodes, chars) = charge(&block);
            self.nodes_used += nodes;
            self.chars_used += chars;
            out.push(block);
        }
    }
}

/// Nodes and text characters a sanitized block used of the render limits,
/// counted as the sanitizer counts them (every node but the doc). Recursive:
/// a sanitized block is at most `render::HARD_MAX_DEPTH` deep.
fn charge(block: &Block) -> (usize, usize) {
    let mut used = (0, 0);
    charge_block(block, &mut used);
    used
}

fn charge_block(block: &Block, used: &mut (usize, usize)) {
    used.0 += 1;
    match block {
        Block::Heading { children, .. } | Block::Paragraph { children } => {
            charge_inline(children, used)
        }
        Block::Blockquote { children } => children.iter().for_each(|b| charge_block(b, used)),
        Block::CodeBlock { text, .. } => used.1 += text.chars().count(),
        Block::List { items, .. } => {
            for item in items {
                used.0 += 1;
                item.children.iter().for_each(|b| charge_block(b, used));
            }
        }
        Block::Table { rows } => {
            for row in rows {
                used.0 += 1;
                for cell in &row.cells {
                    used.0 += 1;
                    charge_inline(&cell.children, used);
                }
            }
        }
    }
}

fn charge_inline(nodes: &[Inline], used: &mut (usize, usize)) {
    for node in nodes {
        used.0 += 1;
        match node {
            Inline::Text(t) => used.1 += t.text.chars().count(),
            Inline::Link(link) => {
                for t in &link.children {
                    used.0 += 1;
                    used.1 += t.text.chars().count();
                }
            }
        }
    }
}

/// A key as JSON would read it (escapes decoded), or `None`.
fn decode_key(raw: &[u8]) -> Option<String> {
    if !raw.contains(&b'\\') {
        return String::from_utf8(raw.to_vec()).ok();
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

/// Blocks ready to send as one `render_delta`.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Position of the first block among the render's top-level blocks.
    pub start_index: usize,
    pub blocks: Vec<Block>,
}

/// Holds blocks back so that events are at least `interval` apart: the
/// first block goes out at once, later ones with the first piece of text
/// after the interval (or at the end of the stream).
pub struct Coalescer {
    interval: Duration,
    last_sent: Option<Duration>,
    next_index: usize,
    pending: Vec<Block>,
}

impl Coalescer {
    pub fn new(interval: Duration) -> Self {
        Coalescer {
            interval,
            last_sent: None,
            next_index: 0,
            pending: Vec::new(),
        }
    }

    /// Adds completed blocks (possibly none) at time `now`; returns a batch
    /// when one is due.
    pub fn push(&mut self, now: Duration, blocks: Vec<Block>) -> Option<Batch> {
        self.pending.extend(blocks);
        let due = self
            .last_sent
            .is_none_or(|last| now.saturating_sub(last) >= self.interval);
        if due {
            self.take(now)
        } else {
            None
        }
    }

    /// Everything still held, e.g. when the stream ended.
    pub fn flush(&mut self, now: Duration) -> Option<Batch> {
        self.take(now)
    }

    fn take(&mut self, now: Duration) -> Option<Batch> {
        if self.pending.is_empty() {
            return None;
        }
        let blocks = std::mem::take(&mut self.pending);
        let start_index = self.next_index;
        self.next_index += blocks.len();
        self.last_sent = Some(now);
        Some(Batch {
            start_index,
            blocks,
        })
    }
}

/// The preview of one attempt: scanner, coalescer, the text of the block
/// in progress, and what was sent.
pub struct Preview {
    stream: RenderStream,
    coalescer: Coalescer,
    tap: crate::text_delta::TextTap,
    sent: Vec<Block>,
    /// Whether any `text_delta` went out (a failed attempt withdraws it).
    sent_text: bool,
    /// Text of the block in progress not sent yet: pieces that come within
    /// the interval of the last `text_delta` are joined.
    pending_text: Option<TextPiece>,
    text_sent_at: Option<Duration>,
    interval: Duration,
}

/// Text of the block in progress, for a `text_delta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPiece {
    /// Where the block will most likely stand among the render's top-level
    /// blocks (its `render_delta` replaces the text).
    pub index: usize,
    pub text: String,
}

impl Preview {
    pub fn new(limits: RenderLimits, interval: Duration) -> Self {
        Preview {
            stream: RenderStream::new(limits),
            coalescer: Coalescer::new(interval),
            tap: crate::text_delta::TextTap::default(),
            sent: Vec::new(),
            sent_text: false,
            pending_text: None,
            text_sent_at: None,
            interval,
        }
    }

    /// The text added to the block in progress by the last [`Preview::push`],
    /// coalesced: what is due at `now` (the first piece at once, then at most
    /// one per interval; text of an earlier block goes out as soon as a
    /// later block's text starts). Nothing is dropped: what is held goes out
    /// with [`Preview::flush_text`].
    pub fn take_text(&mut self, now: Duration) -> Vec<TextPiece> {
        let Some((serial, raw)) = self.stream.partial() else {
            return Vec::new();
        };
        let text = self.tap.feed(serial, raw);
        if text.is_empty() {
            return Vec::new();
        }
        let index = self.sent.len() + self.coalescer.pending.len();
        let mut out = Vec::new();
        match &mut self.pending_text {
            Some(held) if held.index == index => held.text.push_str(&text),
            held => out.extend(held.replace(TextPiece { index, text })),
        }
        let due = self
            .text_sent_at
            .is_none_or(|last| now.saturating_sub(last) >= self.interval);
        if due {
            out.extend(self.pending_text.take());
        }
        if !out.is_empty() {
            self.sent_text = true;
            self.text_sent_at = Some(now);
        }
        out
    }

    /// The text held back, if any: sent before the blocks that replace it
    /// and when the stream ends.
    pub fn flush_text(&mut self, now: Duration) -> Option<TextPiece> {
        let held = self.pending_text.take()?;
        self.sent_text = true;
        self.text_sent_at = Some(now);
        Some(held)
    }

    /// Feeds a piece of model text at time `now`; returns a batch to send.
    pub fn push(&mut self, piece: &str, now: Duration) -> Option<Batch> {
        let blocks = self.stream.push(piece);
        let batch = self.coalescer.push(now, blocks);
        self.record(batch)
    }

    /// The stream ended: whatever is held goes out now.
    pub fn finish(&mut self, now: Duration) -> Option<Batch> {
        let batch = self.coalescer.flush(now);
        self.record(batch)
    }

    fn record(&mut self, batch: Option<Batch>) -> Option<Batch> {
        if let Some(b) = &batch {
            self.sent.extend(b.blocks.iter().cloned());
        }
        batch
    }

    /// Whether any block was sent (and so must be confirmed or withdrawn).
    pub fn sent_any(&self) -> bool {
        !self.sent.is_empty()
    }

    /// Whether anything was shown: blocks, or text of a block in progress.
    pub fn shown_any(&self) -> bool {
        self.sent_any() || self.sent_text
    }

    /// Whether the sent blocks are exactly the first blocks of `render`
    /// (a sanitized doc, as JSON): then the final answer confirms the preview.
    pub fn is_prefix_of(&self, render: &Value) -> bool {
        let final_blocks = render
            .get("children")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        final_blocks.len() >= self.sent.len()
            && self
                .sent
                .iter()
                .zip(final_blocks)
                .all(|(sent, last)| serde_json::to_value(sent).is_ok_and(|v| v == *last))
    }
}

#[cfg(test)]
// Tests read the shared corpora and take a base instant; the library does not.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sanitized_children(render: &Value, limits: &RenderLimits) -> Vec<Value> {
        render::sanitize(render, limits).render.to_value()["children"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// Blocks as the `render_delta` event carries them.
    fn json_blocks(blocks: Vec<Block>) -> Vec<Value> {
        blocks
            .iter()
            .map(|b| serde_json::to_value(b).unwrap())
            .collect()
    }

    /// Feeds `text` cut at the given byte offsets (char boundaries).
    fn feed(text: &str, cuts: &[usize], limits: RenderLimits) -> Vec<Value> {
        let mut s = RenderStream::new(limits);
        let mut out = Vec::new();
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&text.len())) {
            out.extend(json_blocks(s.push(&text[from..c])));
            from = c;
        }
        out
    }

    fn answer(render: &Value) -> String {
        json!({
            "assistant": {"title": "T", "render": render, "citations": [{"doc_id": "d", "quote": "}]"}]},
            "id": "x", "tool_calls": [{"name": "browser.back", "arguments": {"children": [{"type": "paragraph"}]}}]
        })
        .to_string()
    }

    fn small_render() -> Value {
        json!({"type": "doc", "children": [
            {"type": "heading", "level": 2, "children": [{"type": "text", "text": "Tit\"le }]"}]},
            {"type": "paragraph", "children": [{"type": "text", "text": "é ✓ \\ {"}]},
            {"type": "list", "ordered": false, "items": [{"type": "list_item", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "a"}]}]}]}
        ]})
    }

    #[test]
    fn every_split_point_gives_the_final_blocks_in_order() {
        let render = small_render();
        let text = format!(
            "<think>{{ \"assistant\": 1 }}</think>\n```json\n{}\n```",
            answer(&render)
        );
        let expected = sanitized_children(&render, &RenderLimits::default());
        assert_eq!(expected.len(), 3);
        let boundaries: Vec<usize> = (1..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &cut in &boundaries {
            assert_eq!(
                feed(&text, &[cut], RenderLimits::default()),
                expected,
                "one cut at {cut}"
            );
        }
        // Every piece one char long: all split points at once.
        assert_eq!(feed(&text, &boundaries, RenderLimits::default()), expected);
    }

    #[test]
    fn a_block_is_handed_out_as_soon_as_it_closes() {
        let render = small_render();
        let text = answer(&render);
        let first_end = text.find("\"heading\"}").unwrap() + "\"heading\"}".len();
        let mut s = RenderStream::new(RenderLimits::default());
        assert!(s.push(&text[..first_end - 1]).is_empty());
        let got = json_blocks(s.push(&text[first_end - 1..first_end]));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["type"], "heading");
    }

    #[test]
    fn blocks_are_sanitized() {
        let render = json!({"type": "doc", "children": [
            {"type": "paragraph", "onclick": "x()", "children": [
                {"type": "link", "href": "javascript:alert(1)", "children": [{"type": "text", "text": "hi"}]}]},
            {"type": "script", "text": "alert(1)"},
            {"type": "html", "html": "<img src=x onerror=alert(1)>"},
            {"type": "code_block", "text": "ok\u{202E}"}
        ]});
        let got = feed(&answer(&render), &[], RenderLimits::default());
        assert_eq!(got, sanitized_children(&render, &RenderLimits::default()));
        let s = Value::Array(got).to_string();
        assert!(!s.contains("javascript") && !s.contains("onclick") && !s.contains("onerror"));
        assert!(!s.contains('\u{202E}'));
    }

    #[test]
    fn inline_runs_are_held_and_merged_like_the_sanitizer_does() {
        let render = json!({"type": "doc", "children": [
            {"type": "text", "text": "a"}, {"type": "strong", "text": "x"}, {"type": "link", "href": "https://e.org", "children": [{"type": "text", "text": "b"}]},
            {"type": "paragraph", "children": [{"type": "text", "text": "c"}]},
            {"type": "text", "text": "tail"}
        ]});
        let text = answer(&render);
        let expected = sanitized_children(&render, &RenderLimits::default());
        assert_eq!(expected.len(), 3);
        let mut s = RenderStream::new(RenderLimits::default());
        let para = text.find("{\"children\":[{\"text\":\"c\"").unwrap();
        assert!(s.push(&text[..para]).is_empty(), "the run is held");
        let tail = text.find("{\"text\":\"tail\"").unwrap();
        assert_eq!(
            json_blocks(s.push(&text[para..tail])),
            expected[..2].to_vec()
        );
        assert_eq!(
            json_blocks(s.push(&text[tail..])),
            expected[2..].to_vec(),
            "flushed when the array closes"
        );
    }

    #[test]
    fn limits_carry_over_from_block_to_block() {
        let render = json!({"type": "doc", "children": [
            {"type": "paragraph", "children": [{"type": "text", "text": "abcdef"}]},
            {"type": "paragraph", "children": [{"type": "text", "text": "ghijkl"}]},
            {"type": "paragraph", "children": [{"type": "text", "text": "mnopqr"}]}
        ]});
        let limits = RenderLimits {
            max_total_chars: 9,
            max_nodes: 5,
            ..RenderLimits::default()
        };
        let expected = sanitized_children(&render, &limits);
        assert_eq!(expected.len(), 2, "{expected:?}");
        assert_eq!(feed(&answer(&render), &[], limits), expected);
    }

    #[test]
    fn escaped_keys_and_other_paths_are_read_as_json_would() {
        let text = r#"{"x": {"assistant": {"render": {"children": [{"type": "paragraph", "children": [{"type": "text", "text": "decoy"}]}]}}},
            "assist\u0061nt": {"render": {"type": "doc", "children": [{"type": "code_block", "text": "real"}]}}}"#;
        let got = feed(text, &[], RenderLimits::default());
        assert_eq!(got, vec![json!({"type": "code_block", "text": "real"})]);
    }

    #[test]
    fn hostile_or_broken_input_ends_the_preview_quietly() {
        for text in [
            "{\"assistant\": {\"render\": {\"children\": [\"text\", {\"type\": \"paragraph\"}]}}}",
            "{\"assistant\": {\"render\": {\"children\": [{\"type\": \"code_block\", \"text\": \"a\" \"b\"}]}}}",
            "]]]]}}}}",
            "<think>never closed {\"assistant\": {\"render\": {\"children\": [{\"type\": \"code_block\", \"text\": \"a\"}]}}}",
            "{\"assistant\": {\"render\": {\"children\": {\"type\": \"code_block\", \"text\": \"a\"}}}}",
        ] {
            assert_eq!(feed(text, &[], RenderLimits::default()), Vec::<Value>::new(), "{text}");
        }
        // A second children array (duplicate key) is not previewed.
        let dup = r#"{"assistant": {"render": {"children": [{"type": "code_block", "text": "1"}], "children": [{"type": "code_block", "text": "2"}]}}}"#;
        assert_eq!(feed(dup, &[], RenderLimits::default()).len(), 1);
        let deep = format!(
            "{{\"assistant\": {{\"render\": {{\"children\": [{}",
            "[".repeat(1 << 20)
        );
        assert!(feed(&deep, &[7, 100, 5000], RenderLimits::default()).is_empty());
    }

    #[test]
    fn the_buffer_keeps_only_the_block_being_read() {
        let mut s = RenderStream::new(RenderLimits::default());
        s.push("{\"id\": \"");
        s.push(&"x".repeat(100_000));
        assert!(s.buf.len() < 16, "{}", s.buf.len());
        s.push("\", \"assistant\": {\"render\": {\"children\": [{\"type\": \"code_block\", \"text\": \"");
        s.push(&"y".repeat(1000));
        assert!(s.buf.len() > 1000 && s.buf.len() < 1100);
        assert_eq!(s.push("\"}").len(), 1);
        assert!(s.buf.is_empty());
    }

    #[test]
    fn coalescer_batches_within_the_interval() {
        let t0 = Duration::ZERO;
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let b = |i: u64| Block::CodeBlock {
            language: None,
            text: i.to_string(),
        };
        let mut c = Coalescer::new(COALESCE_INTERVAL);
        assert_eq!(c.push(ms(0), vec![]), None);
        assert_eq!(
            c.push(ms(1), vec![b(0)]),
            Some(Batch {
                start_index: 0,
                blocks: vec![b(0)]
            }),
            "the first block goes out at once"
        );
        assert_eq!(c.push(ms(5), vec![b(1)]), None);
        assert_eq!(c.push(ms(20), vec![b(2), b(3)]), None);
        assert_eq!(c.push(ms(30), vec![]), None, "29 ms after the last event");
        assert_eq!(
            c.push(ms(31), vec![]),
            Some(Batch {
                start_index: 1,
                blocks: vec![b(1), b(2), b(3)]
            })
        );
        assert_eq!(
            c.push(ms(100), vec![b(4)]),
            Some(Batch {
                start_index: 4,
                blocks: vec![b(4)]
            })
        );
        assert_eq!(c.push(ms(101), vec![b(5)]), None);
        assert_eq!(
            c.flush(ms(102)),
            Some(Batch {
                start_index: 5,
                blocks: vec![b(5)]
            })
        );
        assert_eq!(c.flush(ms(103)), None);
    }

    #[test]
    fn coalescer_never_sends_two_events_within_the_interval() {
        let t0 = Duration::ZERO;
        let mut c = Coalescer::new(COALESCE_INTERVAL);
        let mut sent_at: Vec<u64> = Vec::new();
        let mut blocks = 0;
        for step in 0..1000u64 {
            let now = t0 + Duration::from_millis(step * 3);
            let block = Block::CodeBlock {
                language: None,
                text: step.to_string(),
            };
            if let Some(batch) = c.push(now, vec![block]) {
                assert_eq!(batch.start_index, blocks);
                blocks += batch.blocks.len();
                sent_at.push(step * 3);
            }
        }
        assert!(sent_at.windows(2).all(|w| w[1] - w[0] >= 30), "{sent_at:?}");
        assert!(sent_at.len() >= 90, "{}", sent_at.len());
    }

    #[test]
    fn preview_knows_whether_the_final_render_confirms_it() {
        let render = small_render();
        let final_render = render::sanitize(&render, &RenderLimits::default())
            .render
            .to_value();
        let t0 = Duration::ZERO;
        let mut p = Preview::new(RenderLimits::default(), COALESCE_INTERVAL);
        assert!(!p.sent_any());
        let text = answer(&render);
        let first = p.push(&text, t0).unwrap();
        assert_eq!(first.blocks.len(), 3, "one piece: everything in one event");
        assert_eq!(p.finish(t0), None);
        assert!(p.sent_any());
        assert!(p.is_prefix_of(&final_render));
        let mut other = final_render.clone();
        other["children"][1] = json!({"type": "code_block", "text": "changed"});
        assert!(!p.is_prefix_of(&other));
        other["children"] = json!([]);
        assert!(!p.is_prefix_of(&other));
    }

    fn node() -> impl Strategy<Value = Value> {
        let text = "[a-z\"\\\\{}\\[\\],é ]{0,6}".prop_map(|t| json!({"type": "text", "text": t}));
        let leaf = prop_oneof![
            text.clone(),
            "[a-z]{0,4}".prop_map(|t| json!({"type": "code_block", "text": t})),
            Just(json!({"type": "strong", "text": "s"})),
            Just(
                json!({"type": "link", "href": "https://e.org/", "children": [{"type": "text", "text": "l"}]})
            ),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|c| json!({"type": "paragraph", "children": c})),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|c| json!({"type": "blockquote", "children": c})),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|c| json!({"type": "list_item", "children": c})),
                prop::collection::vec(inner, 0..3)
                    .prop_map(|c| json!({"type": "list", "items": c})),
            ]
        })
    }

    proptest! {
        #[test]
        fn streamed_blocks_equal_the_sanitized_render(
            children in prop::collection::vec(node(), 0..8),
            cuts in prop::collection::vec(0usize..2000, 0..12),
            max_total_chars in 1usize..40,
        ) {
            let render = json!({"type": "doc", "children": children});
            let text = answer(&render);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1))
                .filter(|&c| text.is_char_boundary(c)).collect();
            cuts.sort_unstable();
            // The node cap is left at its default: the sanitizer may hold a
            // node for content it then drops, which the output cannot show,
            // so near the cap a preview can differ (the turn then resets).
            let limits = RenderLimits { max_total_chars, ..RenderLimits::default() };
            prop_assert_eq!(feed(&text, &cuts, limits), sanitized_children(&render, &limits));
        }

        #[test]
        fn arbitrary_text_never_panics(raw in r#"[{}\[\]"\\:,a1 \n<>/thinkd]{0,300}"#, cut in 0usize..300) {
            let cut = cut.min(raw.len());
            let _ = feed(&raw, &[cut], RenderLimits::default());
        }
    }
}

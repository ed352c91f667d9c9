//! Staged summarize: a `web.summarize` turn on a page that does not fit the
//! model's context is read in parts (docs/ARCHITECTURE.md#staged-summarize):
//!
//! 1. [`plan`] splits the page's text (the summary's text, then the chunks,
//!    a passage longer than a part cut into pieces) into parts that each fit
//!    the window with the part call's prompt and its `max_tokens`;
//! 2. one model call per part ([`part_request`], the transforms' points
//!    request) yields that part's key points ([`read_points`]);
//! 3. the turn's own, streamed `web.summarize` call gets the part summaries,
//!    in page order, as its documents ([`reduce_into`]), each naming the
//!    chunks it read.
//!
//! Citations: a part's points are the model's text, so a quote from them
//! proves nothing about the page. The answer's citations are verified
//! against the page itself ([`page_documents`]): a quote counts as verified
//! only where the page has it, and its `doc_id` then names the page's chunk.
//!
//! Everything here is pure: the engine asks the runtime, one part after
//! another (see `engine::staging`).

use crate::ambient::Ambient;
use crate::decoding::Decoding;
use crate::json_size;
use crate::model::ModelRequest;
use crate::pack::{self, Budget, Packed};
use crate::text::prefix_chars;
use laika_protocol::error::{ErrorCode, Result};
use laika_protocol::ids::ConversationId;
use laika_protocol::limits::Limits;
use laika_protocol::llmcp::{ConversationRef, Document, RequestPacket};
use laika_protocol::observation::{Observation, CHUNK_DOC_TYPE, SUMMARY_DOC_TYPE};
use laika_protocol::usage::{ContextUsage, Cut, DocumentUsage, PageSelection, Used};
use serde_json::{json, Value};
use std::ops::Range;

/// A part summary in the reduce call.
pub const PART_DOC_TYPE: &str = "web.observation.part.v1";
/// The answer's tokens of one part call: its few key points (at most an
/// eighth of the window). A turn with a smaller answer cap keeps that.
pub const PART_OUTPUT_TOKENS: u32 = 1_024;
/// Chars a part leaves free besides what its documents were measured at:
/// the answer sketch in the system prompt names up to three document ids.
const PART_SLACK_CHARS: usize = 256;
/// The share of the reduce call's documents the page's summary (title,
/// address, outline, opening) keeps: the parts already read its text.
const SUMMARY_SHARE: usize = 8;
/// A point is not shortened below this many chars to fit the reduce call.
const MIN_POINT_CHARS: usize = 80;
/// The least room for points a part summary gets: when the parts'
/// summaries at this size do not fit the reduce call, they are combined in
/// rounds first ([`merge_groups`]).
const MIN_POINTS_CHARS: usize = 600;

/// The document id of part `n` (1-based) in the reduce call.
pub fn part_doc_id(n: usize) -> String {
    format!("doc:web:part:{n}")
}

/// A stretch of one passage: `chunk` 0 is the summary's text, `n` the
/// page's chunk `n`; `range` is in bytes of that passage's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub chunk: usize,
    pub range: Range<usize>,
}

/// One part of the page, read by one model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// 1-based.
    pub number: usize,
    pub pieces: Vec<Piece>,
    /// Chars of the page's text it reads.
    pub chars: usize,
}

impl Part {
    /// The first and last chunk it reads (0: the page's opening text).
    pub fn chunks(&self) -> (usize, usize) {
        let first = self.pieces.first().map_or(0, |p| p.chunk);
        let last = self.pieces.last().map_or(0, |p| p.chunk);
        (first, last)
    }

    /// "chunks 3–7", "chunk 3", "the opening and chunks 1–2".
    pub fn label(&self) -> String {
        match self.chunks() {
            (0, 0) => "the page's opening".into(),
            (0, 1) => "the page's opening and chunk 1".into(),
            (0, l) => format!("the page's opening and chunks 1–{l}"),
            (f, l) if f == l => format!("chunk {f}"),
            (f, l) => format!("chunks {f}–{l}"),
        }
    }
}

/// How one part's call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PartNotes {
    Points(Vec<String>),
    Failed { code: ErrorCode, message: String },
}

/// The page in parts, and what the reduce call may give each part.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub parts: Vec<Part>,
    /// Points asked of each part call.
    pub max_points: usize,
    /// Chars of points each part summary may hold.
    pub points_chars: usize,
    /// Chars of documents one part (or combining) call may hold.
    pub part_chars: usize,
    /// Chars of documents the reduce call has for the part summaries.
    pub reduce_room: usize,
    /// The answer's tokens of a part call.
    pub output_tokens: Option<u32>,
    /// The turn's answer caps, which part calls keep.
    pub regime: crate::decoding::Regime,
    /// Chars of the page's text (summary text and chunks).
    pub page_chars: usize,
    /// The page's chunk count.
    pub chunk_count: usize,
}

impl Plan {
    /// A part (or combining) call's decoding: the part answer's tokens, the
    /// turn's caps.
    fn decoding(&self, enforced: bool) -> Decoding {
        Decoding {
            enforced,
            max_tokens: self.output_tokens,
            regime: self.regime,
        }
    }
}

/// Whether a document of a packed request holds the page's text (its
/// summary or a chunk), which a staged turn sends in parts instead.
pub fn is_page_text(doc_id: &str) -> bool {
    doc_id == pack::SUMMARY_DOC_ID || doc_id.starts_with("doc:web:chunk:")
}

/// Whether a packed page lost any of its text to the budget (not just
/// comments, items or outline entries): then a summary needs stages.
pub fn over_budget(usage: &ContextUsage) -> bool {
    usage.cut.iter().any(|c| {
        c.doc_id.starts_with("doc:web:chunk:")
            || (c.doc_id == pack::SUMMARY_DOC_ID
                && matches!(c.field.as_deref(), Some("text" | "primary.text")))
    })
}

/// The page's opening text: the summary's text, else its main content.
fn opening(obs: &Observation) -> &str {
    if obs.summary.text.trim().is_empty() {
        obs.summary.primary.as_ref().map_or("", |p| p.text.as_str())
    } else {
        &obs.summary.text
    }
}

fn passage(obs: &Observation, chunk: usize) -> &str {
    match chunk {
        0 => opening(obs),
        n => obs.chunks.get(n - 1).map_or("", |c| c.text.as_str()),
    }
}

/// The document a piece is sent as (URL credentials stripped).
fn piece_document(obs: &Observation, piece: &Piece) -> Document {
    let text = passage(obs, piece.chunk)
        .get(piece.range.clone())
        .unwrap_or_default();
    let text = crate::redact::redact_urls_in_text(text);
    let (doc_id, kind, mut content) = match piece.chunk {
        0 => (
            pack::SUMMARY_DOC_ID.to_owned(),
            SUMMARY_DOC_TYPE,
            json!({"doc_type": SUMMARY_DOC_TYPE, "url": obs.summary.url, "title": obs.summary.title}),
        ),
        n => (
            format!("doc:web:chunk:{n}"),
            CHUNK_DOC_TYPE,
            json!({
                "doc_type": CHUNK_DOC_TYPE, "url": obs.summary.url, "title": obs.summary.title,
                "chunk_index": n, "chunk_count": obs.chunks.len(),
            }),
        ),
    };
    crate::redact::redact_value(&mut content);
    if let Value::Object(fields) = &mut content {
        fields.insert("text".into(), Value::from(text.into_owned()));
    }
    document(doc_id, kind, content)
}

/// A document the host made of the page (a part, the page to verify
/// against): its source is Laika, not a tab.
fn document(doc_id: String, kind: &str, content: Value) -> Document {
    pack::document(doc_id, kind, "laika", None, content)
}

/// Chars a document adds to a request's prompt (and its comma).
fn document_chars(doc: &Document) -> usize {
    serde_json::to_string(doc).map_or(0, |s| s.chars().count()) + 1
}

/// The byte ranges of `text` in pieces of at most `max_chars` chars of JSON
/// string (escapes counted), cut on char boundaries.
fn split(text: &str, max_chars: usize) -> Vec<Range<usize>> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, c) in text.char_indices() {
        let cost = json_size::json_str_chars(c.encode_utf8(&mut [0; 4])) - 2;
        if size + cost > max_chars && i > start {
            out.push(start..i);
            start = i;
            size = 0;
        }
        size += cost;
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// What a part call's prompt has besides its documents, in chars.
fn part_fixed_chars(decoding: Decoding, ambient: &dyn Ambient) -> Result<usize> {
    let bare = crate::transform::points_request(
        Vec::new(),
        ConversationRef {
            id: ConversationId::default(),
            turn: 1,
        },
        &instruction(1, 1, "chunks 1–1"),
        crate::transform::MAX_POINTS,
        decoding,
        ambient,
    )?;
    Ok(bare.system_prompt.chars().count() + bare.user_prompt.chars().count())
}

fn instruction(number: usize, of: usize, label: &str) -> String {
    format!(
        "This is part {number} of {of} of a page too long to read at once ({label}). List its key points, quoting the page's own words where you can."
    )
}

/// Splits the page into parts for a model whose context window is
/// `window` tokens (`None`: the runtime's fixed budget, `fixed`), each
/// part call's prompt and answer fitting it, and works out what the
/// reduce call can give each part: `reduce_room` chars of documents.
pub fn plan(
    obs: &Observation,
    window: Option<usize>,
    fixed: Budget,
    decoding: Decoding,
    limits: &Limits,
    reduce_room: usize,
    ambient: &dyn Ambient,
) -> Result<Plan> {
    // A part's few points need little room; a small window keeps more of
    // itself for the page.
    let cap = window.map_or(PART_OUTPUT_TOKENS, |w| PART_OUTPUT_TOKENS.min(w as u32 / 8));
    let output_tokens = decoding.max_tokens.map(|t| t.min(cap));
    let part_decoding = Decoding {
        max_tokens: output_tokens,
        ..decoding
    };
    let limit = match window {
        Some(window) => Budget::for_window(
            window,
            output_tokens.unwrap_or(cap) as usize,
            part_fixed_chars(part_decoding, ambient)?,
            limits,
        )
        .char_limit(),
        None => fixed.char_limit(),
    }
    .saturating_sub(PART_SLACK_CHARS)
    .max(PART_SLACK_CHARS);
    let mut parts: Vec<Part> = Vec::new();
    let mut current: Vec<Piece> = Vec::new();
    let (mut used, mut chars) = (0usize, 0usize);
    let mut page_chars = 0;
    for chunk in 0..=obs.chunks.len() {
        let text = passage(obs, chunk);
        if text.trim().is_empty() {
            continue;
        }
        page_chars += text.chars().count();
        let whole = Piece {
            chunk,
            range: 0..text.len(),
        };
        let size = document_chars(&piece_document(obs, &whole));
        let pieces = if size <= limit {
            vec![(whole, size)]
        } else {
            // The passage alone overflows a part: its text is cut into
            // pieces that each fit beside the document's other fields.
            let overhead = size.saturating_sub(json_size::json_str_chars(text));
            split(text, limit.saturating_sub(overhead))
                .into_iter()
                .map(|range| {
                    let piece = Piece { chunk, range };
                    let size = document_chars(&piece_document(obs, &piece));
                    (piece, size)
                })
                .collect()
        };
        for (piece, size) in pieces {
            if used + size > limit && !current.is_empty() {
                parts.push(Part {
                    number: parts.len() + 1,
                    pieces: std::mem::take(&mut current),
                    chars,
                });
                (used, chars) = (0, 0);
            }
            used += size;
            chars += text
                .get(piece.range.clone())
                .map_or(0, |t| t.chars().count());
            current.push(piece);
        }
    }
    if !current.is_empty() {
        parts.push(Part {
            number: parts.len() + 1,
            pieces: current,
            chars,
        });
    }
    let points_chars = points_share(reduce_room, parts.len()).max(MIN_POINTS_CHARS);
    Ok(Plan {
        max_points: (points_chars / 120).clamp(1, crate::transform::MAX_POINTS),
        points_chars,
        part_chars: limit,
        reduce_room,
        parts,
        output_tokens,
        regime: decoding.regime,
        page_chars,
        chunk_count: obs.chunks.len(),
    })
}

/// The model call that reads `part` of `plan`.
pub fn part_request(
    obs: &Observation,
    plan: &Plan,
    part: &Part,
    conversation: ConversationRef,
    enforced: bool,
    ambient: &dyn Ambient,
) -> Result<ModelRequest> {
    let documents = part.pieces.iter().map(|p| piece_document(obs, p)).collect();
    crate::transform::points_request(
        documents,
        conversation,
        &instruction(part.number, plan.parts.len(), &part.label()),
        plan.max_points,
        plan.decoding(enforced),
        ambient,
    )
}

/// A part call's key points, kept within a part summary's room.
pub fn read_points(text: &str, plan: &Plan) -> Result<Vec<String>> {
    let points = crate::transform::read_map_reply(text)?;
    Ok(fit_points(points, plan.points_chars))
}

/// Chars of points each of `n` part summaries may hold in `room`.
fn points_share(room: usize, n: usize) -> usize {
    (room / n.max(1)).saturating_sub(part_envelope_chars(n))
}

/// The model calls `plan` needs, about: one per part, the combining rounds
/// [`merge_groups`] would make if every part summary filled its share, and
/// the answer's own call. Known before any part is read, so it can be
/// shown to the user first.
pub fn estimate_calls(plan: &Plan) -> usize {
    let mut calls = plan.parts.len() + 1;
    let mut n = plan.parts.len();
    let each = plan.points_chars + part_envelope_chars(n);
    while n > 1 && n * each > plan.reduce_room {
        let total = n * each;
        let held = plan.reduce_room / each.max(1);
        let groups = held.max(total.div_ceil(plan.part_chars.max(1))).max(1);
        if groups >= n {
            break;
        }
        calls += groups;
        n = groups;
    }
    calls
}

/// When the part summaries do not fit the reduce call: consecutive ones
/// grouped so each group fits one combining call, which condenses them
/// into one summary of the stretch they cover. `None` when they fit, or
/// when grouping would not make fewer of them.
pub fn merge_groups(plan: &Plan, read: &[(Part, PartNotes)]) -> Option<Vec<Range<usize>>> {
    let n = read.len();
    let sizes: Vec<usize> = read
        .iter()
        .map(|(part, notes)| document_chars(&part_document(part, n, notes)))
        .collect();
    let total: usize = sizes.iter().sum();
    if total <= plan.reduce_room {
        return None;
    }
    // As many groups as the reduce call holds summaries of (each combined
    // one is at most `points_chars`), so no more is condensed than needed;
    // fewer only when a group would overflow its call. Balanced by size.
    let held = plan.reduce_room / (plan.points_chars + part_envelope_chars(n)).max(1);
    let wanted = held.max(total.div_ceil(plan.part_chars.max(1))).max(1);
    let target = total.div_ceil(wanted).min(plan.part_chars);
    let mut groups = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, size) in sizes.iter().enumerate() {
        if used + size > target && i > start {
            groups.push(start..i);
            (start, used) = (i, 0);
        }
        used += size;
    }
    groups.push(start..n);
    (groups.len() < n).then_some(groups)
}

/// The stretch a group of part summaries covers, as one part numbered `number`.
pub fn merged_part(members: &[(Part, PartNotes)], number: usize) -> Part {
    let first = members.first().and_then(|(p, _)| p.pieces.first().cloned());
    let last = members.last().and_then(|(p, _)| p.pieces.last().cloned());
    Part {
        number,
        pieces: first.into_iter().chain(last).collect(),
        chars: members.iter().map(|(p, _)| p.chars).sum(),
    }
}

/// The combining call of `members` (summaries of consecutive parts).
pub fn merge_request(
    plan: &Plan,
    members: &[(Part, PartNotes)],
    merged: &Part,
    conversation: ConversationRef,
    enforced: bool,
    ambient: &dyn Ambient,
) -> Result<ModelRequest> {
    let documents = members
        .iter()
        .map(|(part, notes)| part_document(part, members.len(), notes))
        .collect();
    crate::transform::points_request(
        documents,
        conversation,
        &format!(
            "These are the key points of consecutive parts of a page too long to read at once ({}). Combine them into the key points of this stretch, keeping the page's own words.",
            merged.label()
        ),
        plan.max_points,
        plan.decoding(enforced),
        ambient,
    )
}

/// A combining call that failed keeps its members' points, shortened to fit.
pub fn merge_fallback(plan: &Plan, members: &[(Part, PartNotes)], error: PartNotes) -> PartNotes {
    let points: Vec<String> = members
        .iter()
        .flat_map(|(_, n)| match n {
            PartNotes::Points(p) => p.clone(),
            PartNotes::Failed { .. } => Vec::new(),
        })
        .collect();
    if points.is_empty() {
        return error;
    }
    let each = plan.points_chars / points.len().max(1);
    PartNotes::Points(fit_points(
        points
            .into_iter()
            .map(|p| prefix_chars(&p, each.max(MIN_POINT_CHARS)).to_owned())
            .collect(),
        plan.points_chars,
    ))
}

/// The points, in order, while they fit `room` chars as JSON strings; the
/// first is shortened when even it does not.
fn fit_points(points: Vec<String>, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for point in points {
        let size = json_size::json_str_chars(&point) + 1;
        if used + size <= room {
            used += size;
            out.push(point);
        } else if out.is_empty() {
            let keep = room.max(MIN_POINT_CHARS).saturating_sub(8);
            out.push(format!("{} […]", prefix_chars(&point, keep)));
            break;
        } else {
            break;
        }
    }
    out
}

/// Chars a part summary's fields take besides its points.
fn part_envelope_chars(parts: usize) -> usize {
    let sample = Part {
        number: parts,
        pieces: vec![Piece {
            chunk: 1000,
            range: 0..0,
        }],
        chars: 0,
    };
    document_chars(&part_document(
        &sample,
        parts,
        &PartNotes::Points(Vec::new()),
    ))
}

fn part_document(part: &Part, of: usize, notes: &PartNotes) -> Document {
    let (first, last) = part.chunks();
    let mut content = json!({
        "doc_type": PART_DOC_TYPE, "part": part.number, "part_count": of,
        "chunk_first": first, "chunk_last": last,
    });
    if let Value::Object(fields) = &mut content {
        match notes {
            PartNotes::Points(points) => {
                fields.insert("points".into(), json!(points));
            }
            PartNotes::Failed { code, .. } => {
                fields.insert("not_read".into(), json!(code));
            }
        }
    }
    document(part_doc_id(part.number), PART_DOC_TYPE, content)
}

/// The reduce call's share for the part summaries: the budget less the
/// conversation, the documents that are not the page's text (selection,
/// tabs) and the summary's share.
pub fn reduce_room(packed: &Packed, budget: &Budget) -> usize {
    let limit = budget.char_limit();
    let others: usize = kept_documents(packed)
        .map(|d| json_size::json_chars(&d.content))
        .sum();
    let conversation = packed
        .usage
        .documents
        .iter()
        .filter(|d| d.doc_id == pack::CONVERSATION_DOC_ID)
        .map(|d| d.chars)
        .sum::<usize>();
    limit
        .saturating_sub(others + conversation)
        .saturating_mul(SUMMARY_SHARE - 1)
        / SUMMARY_SHARE
}

/// Documents of a packed page that are not its text: kept as they are.
fn kept_documents(packed: &Packed) -> impl Iterator<Item = &Document> {
    packed
        .packet
        .context
        .documents
        .iter()
        .filter(|d| !is_page_text(&d.doc_id))
}

/// What `context_usage` says of a staged turn: the whole page read, in
/// `plan.parts` parts, each listed as a document with the chars it read.
pub fn usage(packed: &Packed, plan: &Plan) -> ContextUsage {
    let mut documents: Vec<DocumentUsage> = packed
        .usage
        .documents
        .iter()
        .filter(|d| !is_page_text(&d.doc_id))
        .cloned()
        .collect();
    for part in &plan.parts {
        documents.push(pack::document_usage(
            part_doc_id(part.number),
            PART_DOC_TYPE,
            part.chars,
            true,
            false,
        ));
    }
    let read: usize = plan.parts.iter().map(|p| p.chars).sum();
    let used = packed.usage.used.chars;
    ContextUsage {
        budget: packed.usage.budget,
        used: Used {
            chars: used,
            tokens: pack::estimate_tokens(used),
        },
        documents,
        cut: packed
            .usage
            .cut
            .iter()
            .filter(|c| !is_page_text(&c.doc_id))
            .cloned()
            .collect::<Vec<Cut>>(),
        redacted_strings: packed.usage.redacted_strings,
        selection: Some(PageSelection {
            strategy: laika_protocol::usage::SelectionStrategy::Staged,
            page_chars: plan.page_chars,
            sent_chars: read,
            passages_sent: plan.parts.len(),
            passages_total: plan.parts.len(),
            chunks: (1..=plan.chunk_count).collect(),
            about: Vec::new(),
        }),
    }
}

/// Turns the turn's packed request packet into the reduce call's: the page's
/// summary cut to its share, then one document per part in page order
/// (its points, or what kept it from being read).
pub fn reduce_into(
    packet: &mut RequestPacket,
    plan: &Plan,
    read: &[(Part, PartNotes)],
    budget: &Budget,
) {
    let of = read.len();
    // Whatever combining left, the reduce call fits: when the summaries do
    // not fit as they are, each gets its share.
    let whole: usize = read
        .iter()
        .map(|(part, notes)| document_chars(&part_document(part, of, notes)))
        .sum();
    let share = if whole <= plan.reduce_room {
        usize::MAX
    } else {
        points_share(plan.reduce_room, of)
    };
    let mut summary = None;
    let mut others = Vec::new();
    for doc in std::mem::take(&mut packet.context.documents) {
        if doc.doc_id == pack::SUMMARY_DOC_ID {
            summary = Some(doc);
        } else if !is_page_text(&doc.doc_id) {
            others.push(doc);
        }
    }
    let mut documents = others;
    if let Some(mut summary) = summary {
        let room = budget.char_limit() / SUMMARY_SHARE;
        pack::reduce_summary(&mut summary.content, room, &mut Vec::new());
        documents.push(summary);
    }
    for (part, notes) in read {
        let notes = match notes {
            PartNotes::Points(p) => PartNotes::Points(fit_points(p.clone(), share)),
            failed => failed.clone(),
        };
        documents.push(part_document(part, of, &notes));
    }
    packet.context.documents = documents;
}

/// The page as the answer's citations are verified against: its whole
/// summary and every chunk, as the page numbers them.
pub fn page_documents(obs: &Observation) -> Vec<Document> {
    let mut docs = Vec::with_capacity(obs.chunks.len() + 1);
    docs.push(document(
        pack::SUMMARY_DOC_ID.into(),
        SUMMARY_DOC_TYPE,
        serde_json::to_value(&obs.summary).unwrap_or(Value::Null),
    ));
    for chunk in &obs.chunks {
        docs.push(document(
            format!("doc:web:chunk:{}", chunk.chunk_index),
            CHUNK_DOC_TYPE,
            serde_json::to_value(chunk).unwrap_or(Value::Null),
        ));
    }
    docs
}

/// The sentence an answer ends with when parts of the page could not be
/// read, or `None` when every part was.
pub fn unread_notice(read: &[(Part, PartNotes)]) -> Option<String> {
    let of = read.len();
    let unread: Vec<String> = read
        .iter()
        .filter_map(|(part, n)| match n {
            PartNotes::Failed { code, .. } => Some(format!(
                "part {} of {of} ({}, {})",
                part.number,
                part.label(),
                code.as_str()
            )),
            PartNotes::Points(_) => None,
        })
        .collect();
    (!unread.is_empty()).then(|| {
        format!(
            "This summary leaves out what could not be read: {}.",
            unread.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ambient::Fixed as FixedAmbient;

    fn page(chars: usize, chunk_chars: usize) -> Observation {
        let text: String = (0..)
            .map(|i| format!("Sentence {i} of the long page. "))
            .take_while({
                let mut n = 0;
                move |s: &String| {
                    n += s.len();
                    n <= chars
                }
            })
            .collect();
        let (head, rest) = text.split_at(text.len().min(6_000));
        let chunks: Vec<&str> = rest
            .as_bytes()
            .chunks(chunk_chars)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        Observation::from_value(json!({
            "summary": {"doc_type": SUMMARY_DOC_TYPE, "url": "https://example.com/p", "title": "P", "text": head},
            "chunks": chunks.iter().enumerate().map(|(i, c)| json!({
                "doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/p", "title": "P",
                "chunk_index": i + 1, "chunk_count": chunks.len(), "text": c
            })).collect::<Vec<_>>()
        }))
        .unwrap()
    }

    /// `obs` in parts for a 4,096-token window, 6,000 chars for the reduce.
    fn plan_4k(obs: &Observation) -> Plan {
        plan(
            obs,
            Some(4_096),
            fixed(),
            Decoding::default(),
            &Limits::default(),
            6_000,
            &FixedAmbient::default(),
        )
        .unwrap()
    }

    fn fixed() -> Budget {
        Budget {
            max_chars: 96_000,
            max_tokens: 24_000,
        }
    }

    #[test]
    fn every_part_fits_the_window_and_together_they_read_the_whole_page() {
        let obs = page(200_000, 4_000);
        let ambient = FixedAmbient::default();
        let decoding = Decoding {
            enforced: false,
            max_tokens: Some(2_048),
            ..Decoding::default()
        };
        let plan = plan(
            &obs,
            Some(4_096),
            fixed(),
            decoding,
            &Limits::default(),
            6_000,
            &ambient,
        )
        .unwrap();
        assert!(plan.parts.len() > 10, "{}", plan.parts.len());
        assert_eq!(plan.output_tokens, Some(512));
        let read: usize = plan.parts.iter().map(|p| p.chars).sum();
        assert_eq!(read, plan.page_chars);
        let mut seen = Vec::new();
        for part in &plan.parts {
            let conv = ConversationRef {
                id: "c".into(),
                turn: 1,
            };
            let r = part_request(&obs, &plan, part, conv, false, &ambient).unwrap();
            let prompt = r.system_prompt.chars().count() + r.user_prompt.chars().count();
            let tokens = prompt.div_ceil(pack::WINDOW_CHARS_PER_TOKEN)
                + r.max_output_tokens.unwrap() as usize;
            assert!(tokens <= 4_096, "part {}: {tokens} tokens", part.number);
            seen.extend(part.pieces.iter().map(|p| p.chunk));
        }
        seen.dedup();
        assert_eq!(seen, (0..=obs.chunks.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_passage_longer_than_a_part_is_cut_into_pieces_on_char_boundaries() {
        let obs = page(60_000, 50_000);
        let plan = plan_4k(&obs);
        let long: Vec<&Part> = plan
            .parts
            .iter()
            .filter(|p| p.pieces.iter().any(|x| x.chunk == 1))
            .collect();
        assert!(long.len() >= 3, "{plan:#?}");
        let read: usize = plan.parts.iter().map(|p| p.chars).sum();
        assert_eq!(read, plan.page_chars);
    }

    #[test]
    fn summaries_too_long_for_the_reduce_are_grouped_into_fewer_calls_that_fit() {
        let obs = page(200_000, 4_000);
        let plan = plan_4k(&obs);
        let points = PartNotes::Points(fit_points(vec!["word ".repeat(40); 6], plan.points_chars));
        let read: Vec<(Part, PartNotes)> = plan
            .parts
            .iter()
            .map(|p| (p.clone(), points.clone()))
            .collect();
        let groups = merge_groups(&plan, &read).unwrap_or_else(|| {
            panic!(
                "{} parts, {} / {}",
                read.len(),
                plan.part_chars,
                plan.points_chars
            )
        });
        assert!(groups.len() > 1 && groups.len() < read.len(), "{groups:?}");
        // Consecutive, covering every summary once, each fitting one call.
        assert_eq!(groups.first().unwrap().start, 0);
        assert_eq!(groups.last().unwrap().end, read.len());
        for pair in groups.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        for g in &groups {
            let size: usize = read[g.clone()]
                .iter()
                .map(|(p, n)| document_chars(&part_document(p, read.len(), n)))
                .sum();
            assert!(size <= plan.part_chars || g.len() == 1, "{size}");
        }
        // Rounds of combining (each summary at most `points_chars`) make
        // fewer summaries each time until they fit the reduce call.
        let combine = |read: &[(Part, PartNotes)], groups: &[Range<usize>]| {
            let full = fit_points(vec!["word ".repeat(400)], plan.points_chars);
            groups
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let notes = PartNotes::Points(full.clone());
                    (merged_part(&read[g.clone()], i + 1), notes)
                })
                .collect::<Vec<(Part, PartNotes)>>()
        };
        let mut merged = combine(&read, &groups);
        let mut rounds = 1;
        while let Some(groups) = merge_groups(&plan, &merged) {
            assert!(groups.len() < merged.len());
            merged = combine(&merged, &groups);
            rounds += 1;
            assert!(rounds < 6, "{rounds} rounds");
        }
        assert_eq!(merged.first().unwrap().0.chunks().0, 0);
        assert_eq!(merged.last().unwrap().0.chunks().1, obs.chunks.len());
        // Summaries that fit are not combined.
        let short = PartNotes::Points(vec!["a point".into()]);
        let few: Vec<(Part, PartNotes)> = plan
            .parts
            .iter()
            .take(3)
            .map(|p| (p.clone(), short.clone()))
            .collect();
        assert_eq!(merge_groups(&plan, &few), None);
    }

    #[test]
    fn points_are_kept_in_order_while_they_fit_their_share() {
        let points = vec!["a".repeat(50), "b".repeat(50), "c".repeat(50)];
        assert_eq!(fit_points(points.clone(), 110), points[..2].to_vec());
        let one = fit_points(vec!["x".repeat(1_000)], 200);
        assert_eq!(one.len(), 1);
        assert!(one[0].chars().count() <= 200 && one[0].ends_with("[…]"));
    }

    #[test]
    fn the_notice_names_each_part_not_read() {
        let obs = page(60_000, 4_000);
        let plan = plan_4k(&obs);
        let mut read: Vec<(Part, PartNotes)> = plan
            .parts
            .iter()
            .map(|p| (p.clone(), PartNotes::Points(vec!["p".into()])))
            .collect();
        assert_eq!(unread_notice(&read), None);
        read[1].1 = PartNotes::Failed {
            code: ErrorCode::RuntimeError,
            message: "500".into(),
        };
        let notice = unread_notice(&read).unwrap();
        assert!(
            notice.contains(&format!("part 2 of {}", plan.parts.len())),
            "{notice}"
        );
        assert!(notice.contains("RUNTIME_ERROR"), "{notice}");
    }
}

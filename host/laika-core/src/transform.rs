//! Transforms: a collection becomes an artifact through a staged plan
//! (docs/wire-protocol.md#collections-and-transforms). Every transform has
//! the same two stages:
//!
//! 1. `read` (parallel): one step per source, each a `web.summarize` model
//!    call over that source alone ([`map_request`]), read back into the
//!    source's key points ([`read_map_reply`]). The host runs these steps
//!    concurrently up to `[transforms] concurrency` model calls in flight;
//!    with the builtin runtime the points are extractive quotes.
//! 2. `compose` (sequence): one reduce step, pure code here ([`reduce`]),
//!    that builds the artifact's render document from the sources and their
//!    points: key points per source, a comparison table, a timeline, an FAQ
//!    or an annotated bibliography.
//!
//! A source whose step failed is listed as failed in the artifact (and in
//! the result); the others are kept. Everything the reduce step writes is
//! either a label of Laika's own or text taken verbatim from the sources or
//! their points, so the builtin runtime's artifacts stay extractive.

use crate::ambient::Ambient;
use crate::collection::{self, CollectionPack, CHUNK_CHARS, SOURCE_DOC_TYPE};
use crate::decoding::Decoding;
use crate::interceptor::Pipeline;
use crate::model::ModelRequest;
use crate::model_output;
use crate::render::{self, RenderLimits};
use crate::text::prefix_chars;
use laika_protocol::collection::Source;
use laika_protocol::error::{Error, ErrorCode, Result};
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::{
    Context, ConversationRef, Input, RequestPacket, Task, TaskName, UserMessage,
};
use laika_protocol::render::ast::{Block, Doc, Inline, Link, ListItem, TableCell, TableRow, Text};
use serde::Serialize;
use serde_json::{json, Value};

/// Points kept per source.
pub const MAX_POINTS: usize = 6;
const MAX_POINT_CHARS: usize = 500;
/// Characters of one source a map step reads (models get a bounded prompt).
const MAP_SOURCE_CHARS: usize = 24_000;
const MAX_TIMELINE: usize = 60;
const MAX_FAQ: usize = 30;

/// One transform the host can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TransformType {
    pub id: &'static str,
    pub title: &'static str,
    pub description: &'static str,
}

pub const TYPES: [TransformType; 5] = [
    TransformType {
        id: "key_points",
        title: "Key points",
        description: "the key points of each source, quoted",
    },
    TransformType {
        id: "comparison",
        title: "Comparison table",
        description: "one row per source: its main point, other points and the figures it gives",
    },
    TransformType {
        id: "timeline",
        title: "Timeline",
        description: "dated sentences from every source, in date order",
    },
    TransformType {
        id: "faq",
        title: "FAQ",
        description: "the questions the sources ask or head sections with, and what follows them",
    },
    TransformType {
        id: "bibliography",
        title: "Annotated bibliography",
        description: "each source with its outlet, address, capture date and main point",
    },
];

/// Looks a type up by id; a few spellings models use are accepted.
pub fn find_type(id: &str) -> Option<&'static TransformType> {
    let id = id.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    let id = match id.as_str() {
        "table" | "comparison_table" | "compare" => "comparison",
        "keypoints" | "summary" => "key_points",
        "annotated_bibliography" | "references" => "bibliography",
        other => other,
    }
    .to_owned();
    TYPES.iter().find(|t| t.id == id)
}

/// `transform.list_types`.
pub fn list_types() -> Value {
    json!({
        "types": TYPES,
        "message": format!(
            "{} transforms: {}.",
            TYPES.len(),
            TYPES.iter().map(|t| t.id).collect::<Vec<_>>().join(", ")
        ),
    })
}

// ---- the plan (docs/wire-protocol.md#collections-and-transforms) ----

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanStep {
    pub id: String,
    pub title: String,
    pub intent: &'static str,
    pub executor: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanStage {
    pub id: &'static str,
    pub name: &'static str,
    pub mode: &'static str,
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentPlan {
    pub id: String,
    pub goal: String,
    pub stages: Vec<PlanStage>,
}

/// The plan of `kind` over the collection's sources that have text.
pub fn plan(kind: &TransformType, pack: &CollectionPack, id: String) -> AgentPlan {
    let readable = readable(pack);
    let reads: Vec<PlanStep> = readable
        .iter()
        .map(|s| PlanStep {
            id: format!("read:{}", s.id),
            title: format!("Key points of {}", prefix_chars(s.label(), 80)),
            intent: "research",
            executor: "research",
            inputs: Vec::new(),
            outputs: vec![format!("points:{}", s.id)],
        })
        .collect();
    let inputs = reads.iter().map(|s| s.id.clone()).collect();
    AgentPlan {
        id,
        goal: format!("{} of “{}”", kind.title, pack.collection.title),
        stages: vec![
            PlanStage {
                id: "read",
                name: "Read each source",
                mode: "parallel",
                steps: reads,
            },
            PlanStage {
                id: "compose",
                name: "Compose the artifact",
                mode: "sequence",
                steps: vec![PlanStep {
                    id: "compose".into(),
                    title: kind.title.into(),
                    intent: "draft",
                    executor: "writer",
                    inputs,
                    outputs: vec!["artifact".into()],
                }],
            },
        ],
    }
}

/// The sources a transform reads: those with text.
pub fn readable(pack: &CollectionPack) -> Vec<&Source> {
    pack.sources
        .iter()
        .filter(|s| !s.text.trim().is_empty())
        .collect()
}

// ---- the map step ----

/// The model call of one `read` step: `web.summarize` over this source alone.
pub fn map_request(
    source: &Source,
    decoding: Decoding,
    ambient: &dyn Ambient,
) -> Result<ModelRequest> {
    let mut bounded = source.clone();
    bounded.text = prefix_chars(&source.text, MAP_SOURCE_CHARS).to_owned();
    let documents = collection::chunks(std::slice::from_ref(&bounded), CHUNK_CHARS)
        .iter()
        .map(|c| crate::pack::document(c.doc_id(), SOURCE_DOC_TYPE, "laika", None, c.content()))
        .collect();
    points_request(
        documents,
        ConversationRef {
            id: ConversationId::from(format!("transform:{}", source.collection_id)),
            turn: 1,
        },
        "List the key points of this source.",
        MAX_POINTS,
        decoding,
        ambient,
    )
}

/// A `web.summarize` call over `documents` alone that asks for at most
/// `max_points` key points (read back with [`read_map_reply`]): a
/// transform's map step, and a part of a page summarized in stages
/// (`staged`).
pub fn points_request(
    documents: Vec<laika_protocol::llmcp::Document>,
    conversation: ConversationRef,
    instruction: &str,
    max_points: usize,
    decoding: Decoding,
    ambient: &dyn Ambient,
) -> Result<ModelRequest> {
    let mut args = serde_json::Map::new();
    args.insert("max_points".into(), json!(max_points));
    let packet = RequestPacket::from_agent(
        ambient.new_id(),
        ambient.now_iso8601(),
        conversation,
        Input {
            user_message: UserMessage {
                id: ambient.new_id(),
                text: instruction.into(),
            },
            task: Task {
                name: TaskName::Summarize,
                args,
            },
        },
        Context {
            documents,
            transcript: Vec::new(),
            conversation: None,
            plan: None,
        },
    );
    let pipeline = Pipeline::standard();
    let composed = pipeline.schema(TaskName::Summarize, ambient)?;
    Ok(pipeline.model_request(packet, &composed, decoding, crate::tools::McpTools::none()))
}

/// The key points in a map step's model output: the text of its list items
/// (or its paragraphs when it has no list), with the
/// quotation marks the extractive runtime puts around quotes removed.
pub fn read_map_reply(text: &str) -> Result<Vec<String>> {
    let extracted = model_output::extract_json_object(text)?;
    let render = extracted
        .value
        .get("assistant")
        .and_then(|a| a.get("render"))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidModelOutput,
                "the answer has no assistant.render",
            )
        })?;
    let doc = render::sanitize(render, &RenderLimits::default()).render;
    // The points are the list items; an answer without a list gives its
    // paragraphs, quoted ones too (a notice before a list is not a point;
    // a small model often quotes the page in a blockquote instead of
    // listing it).
    let mut points = Vec::new();
    for block in &doc.children {
        if let Block::List { items, .. } = block {
            for item in items {
                points.push(crate::render::text::blocks_text(&item.children));
            }
        }
    }
    if points.is_empty() {
        for block in &doc.children {
            match block {
                Block::Paragraph { children } => points.push(inline_text(children)),
                Block::Blockquote { children } => {
                    points.push(crate::render::text::blocks_text(children));
                }
                _ => {}
            }
        }
    }
    let points: Vec<String> = points
        .into_iter()
        .map(|p| unquote(p.trim()).to_owned())
        .filter(|p| !p.is_empty())
        .map(|p| prefix_chars(&p, MAX_POINT_CHARS).to_owned())
        .take(MAX_POINTS)
        .collect();
    if points.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidModelOutput,
            "the answer lists no points for this source",
        ));
    }
    Ok(points)
}

fn inline_text(children: &[Inline]) -> String {
    children
        .iter()
        .map(|i| match i {
            Inline::Text(t) => t.text.as_str(),
            Inline::Link(l) => l.children.first().map_or("", |t| t.text.as_str()),
        })
        .collect()
}

fn unquote(s: &str) -> &str {
    let s = without_markers(s);
    s.strip_prefix('“')
        .and_then(|r| r.strip_suffix('”'))
        .unwrap_or(s)
}

/// `s` without the inline citation markers ("… heat. [1]") at its end: the
/// point is the sentence, its source is cited again by the artifact.
fn without_markers(mut s: &str) -> &str {
    while let Some(open) = s.strip_suffix(']').and_then(|r| r.rfind('[')) {
        let inner = s.get(open + 1..s.len() - 1).unwrap_or("");
        if inner.is_empty() || inner.len() > 3 || !inner.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        s = s.get(..open).unwrap_or(s).trim_end();
    }
    s
}

// ---- the reduce step ----

/// How one source's `read` step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceNotes {
    Points(Vec<String>),
    Failed { code: String, message: String },
}

/// The artifact's title and render document.
pub fn reduce(
    kind: &TransformType,
    pack: &CollectionPack,
    notes: &[(&Source, SourceNotes)],
) -> (String, Doc) {
    let title = prefix_chars(&format!("{}: {}", kind.title, pack.collection.title), 200).to_owned();
    let mut blocks = vec![heading(1, &title)];
    let body = match kind.id {
        "comparison" => comparison(notes),
        "timeline" => timeline(notes),
        "faq" => faq(notes),
        "bibliography" => bibliography(notes),
        _ => key_points(notes),
    };
    blocks.extend(body);
    let failed: Vec<&(&Source, SourceNotes)> = notes
        .iter()
        .filter(|(_, n)| matches!(n, SourceNotes::Failed { .. }))
        .collect();
    if !failed.is_empty() {
        blocks.push(heading(2, "Sources not read"));
        blocks.push(list(
            failed
                .iter()
                .map(|(s, n)| {
                    let why = match n {
                        SourceNotes::Failed { code, message } => format!("{code}: {message}"),
                        SourceNotes::Points(_) => String::new(),
                    };
                    vec![paragraph_inlines(vec![
                        source_link(s),
                        text(&format!(" — {}", prefix_chars(&why, 300))),
                    ])]
                })
                .collect(),
        ));
    }
    (title, Doc { children: blocks })
}

fn points(notes: &SourceNotes) -> &[String] {
    match notes {
        SourceNotes::Points(p) => p,
        SourceNotes::Failed { .. } => &[],
    }
}

fn key_points(notes: &[(&Source, SourceNotes)]) -> Vec<Block> {
    let mut blocks = Vec::new();
    for (source, n) in notes.iter().filter(|(_, n)| !points(n).is_empty()) {
        blocks.push(Block::Heading {
            level: 2,
            children: vec![source_link(source)],
        });
        blocks.push(list(points(n).iter().map(|p| vec![paragraph(p)]).collect()));
    }
    blocks
}

/// Digit runs with their separators (`49`, `1,200`, `7.25%`, `2026-01-27`).
fn figures(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let joins = matches!(c, ',' | '.' | '-' | '/' | ':')
            && !current.is_empty()
            && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_ascii_digit() || joins {
            current.push(c);
        } else if !current.is_empty() {
            if c == '%' {
                current.push(c);
            }
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.dedup();
    out
}

fn comparison(notes: &[(&Source, SourceNotes)]) -> Vec<Block> {
    let header = ["Source", "Main point", "Other points", "Figures"];
    let mut rows = vec![TableRow {
        cells: header
            .iter()
            .map(|h| TableCell {
                header: true,
                children: vec![text(h)],
            })
            .collect(),
    }];
    for (source, n) in notes.iter().filter(|(_, n)| !points(n).is_empty()) {
        let p = points(n);
        let main = p.first().cloned().unwrap_or_default();
        let others = p.get(1..).unwrap_or_default().join(" · ");
        let mut figs: Vec<String> = p.iter().flat_map(|x| figures(x)).collect();
        figs.dedup();
        figs.truncate(8);
        let cell = |children: Vec<Inline>| TableCell {
            header: false,
            children,
        };
        rows.push(TableRow {
            cells: vec![
                cell(vec![source_link(source)]),
                cell(texts(&main)),
                cell(texts(&others)),
                cell(texts(&figs.join(", "))),
            ],
        });
    }
    vec![Block::Table { rows }]
}

/// A date found in a sentence: (year, month, day) with 0 for unknown parts,
/// and the text it was read from.
fn find_date(sentence: &str) -> Option<((u32, u32, u32), String)> {
    for fig in figures(sentence) {
        let parts: Vec<&str> = fig.trim_end_matches('%').split(['-', '/', '.']).collect();
        let num = |s: &&str| s.parse::<u32>().ok();
        let nums: Vec<u32> = parts.iter().filter_map(num).collect();
        if nums.len() != parts.len() {
            continue;
        }
        let year_ok = |y: u32| (1000..=2999).contains(&y);
        let date = match nums.as_slice() {
            [y] if year_ok(*y) && parts[0].len() == 4 => (*y, 0, 0),
            [y, m, d] if year_ok(*y) && (1..=12).contains(m) && (1..=31).contains(d) => {
                (*y, *m, *d)
            }
            [d, m, y] if year_ok(*y) && (1..=12).contains(m) && (1..=31).contains(d) => {
                (*y, *m, *d)
            }
            _ => continue,
        };
        return Some((date, fig));
    }
    None
}

/// A dated sentence of the timeline: (year, month, day) with 0 for an
/// unknown part, the date as written, the sentence and its source.
struct Dated<'a> {
    date: (u32, u32, u32),
    shown: String,
    sentence: String,
    source: &'a Source,
}

fn timeline(notes: &[(&Source, SourceNotes)]) -> Vec<Block> {
    let mut entries: Vec<Dated<'_>> = Vec::new();
    for (source, n) in notes {
        if matches!(n, SourceNotes::Failed { .. }) {
            continue;
        }
        for range in crate::retrieval::split_sentences(&source.text) {
            let Some(sentence) = source.text.get(range) else {
                continue;
            };
            let sentence = sentence.trim();
            if let Some((date, shown)) = find_date(sentence) {
                entries.push(Dated {
                    date,
                    shown,
                    sentence: prefix_chars(sentence, MAX_POINT_CHARS).to_owned(),
                    source,
                });
            }
        }
    }
    entries.sort_by_key(|e| e.date);
    entries.dedup_by(|a, b| a.sentence == b.sentence);
    entries.truncate(MAX_TIMELINE);
    if entries.is_empty() {
        return vec![paragraph("No source gives a date Laika can read.")];
    }
    vec![list(
        entries
            .into_iter()
            .map(|e| {
                vec![paragraph_inlines(vec![
                    text(&format!("{} — {} (", e.shown, e.sentence)),
                    source_link(e.source),
                    text(")"),
                ])]
            })
            .collect(),
    )]
}

fn is_question(s: &str) -> bool {
    let s = s.trim_end();
    s.ends_with('?') || s.ends_with('？') || s.ends_with('؟')
}

fn faq(notes: &[(&Source, SourceNotes)]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut count = 0;
    for (source, n) in notes {
        if matches!(n, SourceNotes::Failed { .. }) {
            continue;
        }
        let sentences: Vec<&str> = crate::retrieval::split_sentences(&source.text)
            .into_iter()
            .filter_map(|r| source.text.get(r))
            .map(|s| s.trim_start_matches(|c: char| c == '#' || c.is_whitespace()))
            .map(|s| {
                s.strip_prefix("H2:")
                    .or(s.strip_prefix("H3:"))
                    .unwrap_or(s)
                    .trim()
            })
            .collect();
        for (i, s) in sentences.iter().enumerate() {
            if count >= MAX_FAQ || !is_question(s) {
                continue;
            }
            let Some(answer) = sentences
                .get(i + 1)
                .filter(|a| !is_question(a) && !a.is_empty())
            else {
                continue;
            };
            blocks.push(heading(2, prefix_chars(s, 300)));
            blocks.push(paragraph_inlines(vec![
                text(&format!("{} (", prefix_chars(answer, MAX_POINT_CHARS))),
                source_link(source),
                text(")"),
            ]));
            count += 1;
        }
    }
    if blocks.is_empty() {
        // No source asks anything: each source's points answer "what does
        // it say?".
        for (source, n) in notes.iter().filter(|(_, n)| !points(n).is_empty()) {
            blocks.push(Block::Heading {
                level: 2,
                children: vec![text("What does "), source_link(source), text(" say?")],
            });
            blocks.push(list(points(n).iter().map(|p| vec![paragraph(p)]).collect()));
        }
    }
    blocks
}

fn bibliography(notes: &[(&Source, SourceNotes)]) -> Vec<Block> {
    let items = notes
        .iter()
        .filter(|(_, n)| !points(n).is_empty())
        .map(|(source, n)| {
            let mut line = vec![source_link(source)];
            let meta: Vec<&str> = [source.outlet.as_deref(), source.captured_at.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            if !meta.is_empty() {
                line.push(text(&format!(". {}", meta.join(", captured "))));
            }
            let mut item = vec![paragraph_inlines(line)];
            if let Some(first) = points(n).first() {
                item.push(paragraph(first));
            }
            item
        })
        .collect();
    vec![list(items)]
}

// ---- render helpers ----

fn text(s: &str) -> Inline {
    Inline::Text(Text::new(s))
}

/// A text run, or nothing for an empty string (render text is never empty).
fn texts(s: &str) -> Vec<Inline> {
    if s.is_empty() {
        Vec::new()
    } else {
        vec![text(s)]
    }
}

fn heading(level: u8, s: &str) -> Block {
    Block::Heading {
        level,
        children: vec![text(s)],
    }
}

fn paragraph(s: &str) -> Block {
    Block::Paragraph { children: texts(s) }
}

fn paragraph_inlines(children: Vec<Inline>) -> Block {
    Block::Paragraph { children }
}

fn list(items: Vec<Vec<Block>>) -> Block {
    Block::List {
        ordered: false,
        items: items
            .into_iter()
            .map(|children| ListItem { children })
            .collect(),
    }
}

/// The source's label, linked to its page when it has a safe web address.
fn source_link(source: &Source) -> Inline {
    let label = prefix_chars(source.label(), 200).to_owned();
    match source
        .url
        .as_deref()
        .and_then(render::sanitize::sanitize_href)
    {
        Some(href) => Inline::Link(Link {
            href,
            children: vec![Text::new(label)],
        }),
        None => text(&label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collection::test_source as source;
    use laika_protocol::collection::Collection;

    fn pack(sources: Vec<Source>) -> CollectionPack {
        CollectionPack {
            collection: Collection {
                id: "c-1".into(),
                title: "Trains".into(),
                tags: vec![],
                created_at: "t".into(),
                source_count: sources.len() as u32,
            },
            sources,
        }
    }

    #[test]
    fn types_are_found_by_id_and_common_names() {
        assert_eq!(find_type("comparison").unwrap().id, "comparison");
        assert_eq!(find_type("Comparison-Table").unwrap().id, "comparison");
        assert_eq!(find_type("table").unwrap().id, "comparison");
        assert!(find_type("poem").is_none());
        assert_eq!(list_types()["types"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn the_plan_reads_every_source_in_parallel_then_composes() {
        let p = pack(vec![
            source("a", "A", "x."),
            source("b", "B", ""),
            source("c", "C", "y."),
        ]);
        let plan = plan(find_type("faq").unwrap(), &p, "plan-1".into());
        assert_eq!(plan.stages.len(), 2);
        assert_eq!(plan.stages[0].mode, "parallel");
        let reads: Vec<&str> = plan.stages[0].steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            reads,
            ["read:a", "read:c"],
            "a source without text is not read"
        );
        assert_eq!(plan.stages[1].steps[0].inputs, ["read:a", "read:c"]);
    }

    #[test]
    fn a_point_loses_its_citation_markers() {
        assert_eq!(
            without_markers("Tickets start at 49 euros. [2]"),
            "Tickets start at 49 euros."
        );
        assert_eq!(without_markers("Seats [A] [12] [3]"), "Seats [A]");
    }

    #[test]
    fn map_replies_without_points_are_errors() {
        assert!(read_map_reply("no json here").is_err());
        let empty = json!({"assistant": {"render": {"type": "doc", "children": [
            {"type": "heading", "level": 2, "children": [{"type": "text", "text": "Summary"}]}
        ]}}});
        assert!(read_map_reply(&empty.to_string()).is_err());
        let ok = json!({"assistant": {"render": {"type": "doc", "children": [
            {"type": "list", "ordered": false, "items": [
                {"type": "list_item", "children": [{"type": "paragraph", "children": [{"type": "text", "text": "“One.”"}]}]}
            ]}
        ]}}});
        assert_eq!(read_map_reply(&ok.to_string()).unwrap(), ["One."]);
    }

    #[test]
    fn a_quoted_paragraph_is_a_point_when_there_is_no_list() {
        let quoted = json!({"assistant": {"render": {"type": "doc", "children": [
            {"type": "heading", "level": 2, "children": [{"type": "text", "text": "Summary"}]},
            {"type": "blockquote", "children": [{"type": "paragraph", "children": [
                {"type": "link", "href": "https://news.example.org/a", "children": [{"type": "text", "text": "The RAV4 Prime goes on sale in the summer."}]}
            ]}]}
        ]}}});
        assert_eq!(
            read_map_reply(&quoted.to_string()).unwrap(),
            ["The RAV4 Prime goes on sale in the summer."]
        );
    }

    #[test]
    fn comparison_has_a_row_per_read_source_and_lists_failures() {
        let a = source("a", "A", "");
        let b = source("b", "B", "");
        let c = source("c", "C", "");
        let notes = vec![
            (
                &a,
                SourceNotes::Points(vec!["Costs 49 euros.".into(), "Runs daily.".into()]),
            ),
            (
                &b,
                SourceNotes::Failed {
                    code: "RUNTIME_TIMEOUT".into(),
                    message: "slow".into(),
                },
            ),
            (&c, SourceNotes::Points(vec!["Opened in 2024.".into()])),
        ];
        let (title, doc) = reduce(find_type("comparison").unwrap(), &pack(vec![]), &notes);
        assert_eq!(title, "Comparison table: Trains");
        let Block::Table { rows } = &doc.children[1] else {
            panic!("a table")
        };
        assert_eq!(rows.len(), 3, "header + two read sources");
        let text = crate::render::text::doc_text(&doc);
        assert!(
            text.contains("Costs 49 euros. | Runs daily. | 49"),
            "{text}"
        );
        assert!(text.contains("Sources not read"));
        assert!(text.contains("B — RUNTIME_TIMEOUT: slow"));
        // The document passes the sanitizer unchanged.
        let again = render::sanitize(&doc.to_value(), &RenderLimits::default());
        assert!(again.dropped.is_empty());
    }

    #[test]
    fn timeline_orders_dated_sentences_across_sources() {
        let a = source("a", "A", "The line closed in 2003. Nothing else happened.");
        let b = source(
            "b",
            "B",
            "Service resumed on 2024-12-15. Plans began in 1998.",
        );
        let notes = vec![
            (&a, SourceNotes::Points(vec!["x".into()])),
            (&b, SourceNotes::Points(vec!["y".into()])),
        ];
        let (_, doc) = reduce(find_type("timeline").unwrap(), &pack(vec![]), &notes);
        let text = crate::render::text::doc_text(&doc);
        let i98 = text.find("1998").unwrap();
        let i03 = text.find("2003").unwrap();
        let i24 = text.find("2024-12-15").unwrap();
        assert!(i98 < i03 && i03 < i24, "{text}");
        assert!(!text.contains("Nothing else"));
    }

    #[test]
    fn faq_takes_questions_and_the_sentence_after_them() {
        let a = source(
            "a",
            "A",
            "Can I bring a bike? Yes, bikes travel free. Trains are green.",
        );
        let b = source("b", "B", "¿Hay literas? Sí, en cada tren.");
        let notes = vec![
            (&a, SourceNotes::Points(vec!["x".into()])),
            (&b, SourceNotes::Points(vec!["y".into()])),
        ];
        let (_, doc) = reduce(find_type("faq").unwrap(), &pack(vec![]), &notes);
        let text = crate::render::text::doc_text(&doc);
        assert!(
            text.contains("Can I bring a bike?\nYes, bikes travel free. (A)"),
            "{text}"
        );
        assert!(
            text.contains("¿Hay literas?\nSí, en cada tren. (B)"),
            "{text}"
        );
    }

    #[test]
    fn bibliography_annotates_each_source() {
        let a = source("a", "A", "");
        let notes = vec![(&a, SourceNotes::Points(vec!["Main claim.".into()]))];
        let (_, doc) = reduce(find_type("bibliography").unwrap(), &pack(vec![]), &notes);
        let text = crate::render::text::doc_text(&doc);
        assert!(
            text.contains("A. a.example, captured 2026-01-01T00:00:00.000Z"),
            "{text}"
        );
        assert!(text.contains("Main claim."));
    }
}

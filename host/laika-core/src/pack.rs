//! Packing: an observation and a user message become a `laika.llmcp` v1
//! request packet within a context budget.
//!
//! Invariants kept here:
//! - every document is `trust: "untrusted"`; page text never reaches the
//!   system prompt (see `prompt`);
//! - chunk documents are 1-based, ordered, and `chunk_count` is the number of
//!   chunk documents actually in the packet (cut chunks are renumbered away);
//! - URL credentials are stripped from every string packed (`redact`);
//! - the budget is enforced on the serialized documents, and every cut is
//!   reported in [`ContextUsage`];
//! - the user's selection comes first and is never cut (its size is capped
//!   by validation); other tabs the user included come after the page's
//!   summary, each its own document with its own `source.tab_id`, and may
//!   use at most half of what the selection leaves.

use crate::json_size::{json_chars, json_str_chars};
use laika_protocol::conversation::History;
use laika_protocol::ids::ConversationId;
use laika_protocol::llmcp::{
    Context, ConversationRef, Document, DocumentSource, Input, RequestPacket, Task, UserMessage,
};
use laika_protocol::observation::{
    Observation, CHUNK_DOC_TYPE, SELECTION_DOC_TYPE, SUMMARY_DOC_TYPE, TAB_DOC_TYPE,
};
use laika_protocol::usage::{
    ContextBudget, ContextUsage, Cut, DocumentUsage, PageSelection, SelectionStrategy, Used,
};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

pub const SUMMARY_DOC_ID: &str = "doc:web:summary";
/// How `context_usage` names the conversation block.
pub const CONVERSATION_DOC_ID: &str = "conversation";
pub const SELECTION_DOC_ID: &str = "doc:web:selection";
/// The page's elements a question names (`task_view`), after the page's
/// other documents.
pub const ELEMENTS_DOC_ID: &str = "doc:web:elements";
pub const ELEMENTS_DOC_TYPE: &str = "web.observation.elements.v1";

/// The document id of another tab the user included.
pub fn tab_doc_id(tab_id: &str) -> String {
    format!("doc:web:tab:{tab_id}")
}

/// Rough tokens-per-char ratio for budgeting: 4 chars per token is the usual
/// estimate for English BPE vocabularies and errs on the safe side for code.
const CHARS_PER_TOKEN: usize = 4;

/// A context budget. The effective char limit is the lower of `max_chars` and
/// `max_tokens * 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Budget {
    pub max_chars: usize,
    pub max_tokens: usize,
}

impl Budget {
    /// The extractive runtime reads everything; models get a budget that fits a
    /// 32k-token context with room for the prompt and the answer.
    pub fn for_runtime(kind: &str, limits: &laika_protocol::limits::Limits) -> Budget {
        let (chars, tokens) = match kind {
            "builtin" => (8 << 20, 2 << 20),
            _ => (96_000, 24_000),
        };
        Budget {
            max_chars: limits.context_max_chars.unwrap_or(chars),
            max_tokens: limits.context_max_tokens.unwrap_or(tokens),
        }
    }

    /// The budget for the context of a request to a model whose context
    /// window is `window` tokens: what is left after the answer's
    /// `output_tokens` and `fixed_chars` of prompt that are there whatever
    /// is packed (system prompt, packet envelope, question). Counted with
    /// [`WINDOW_CHARS_PER_TOKEN`], so the prompt fits even where the page
    /// tokenizes worse than English prose. Configured limits still cap it.
    pub fn for_window(
        window: usize,
        output_tokens: usize,
        fixed_chars: usize,
        limits: &laika_protocol::limits::Limits,
    ) -> Budget {
        let free_tokens = window
            .saturating_sub(output_tokens)
            .saturating_sub(fixed_chars.div_ceil(WINDOW_CHARS_PER_TOKEN))
            .saturating_sub(WINDOW_MARGIN_TOKENS);
        let chars = free_tokens * WINDOW_CHARS_PER_TOKEN;
        Budget {
            max_chars: limits.context_max_chars.map_or(chars, |c| c.min(chars)),
            max_tokens: limits
                .context_max_tokens
                .map_or(free_tokens, |t| t.min(free_tokens)),
        }
    }

    pub fn char_limit(&self) -> usize {
        self.max_chars
            .min(self.max_tokens.saturating_mul(CHARS_PER_TOKEN))
    }

    /// This budget less `chars` already spent elsewhere in the request.
    pub fn less(&self, chars: usize) -> Budget {
        Budget {
            max_chars: self.max_chars.saturating_sub(chars).max(MIN_CHARS),
            max_tokens: self
                .max_tokens
                .saturating_sub(estimate_tokens(chars))
                .max(MIN_CHARS / CHARS_PER_TOKEN),
        }
    }
}

/// Chars per token when fitting a runtime's real context window: JSON
/// punctuation, numbers and non-English text cost more tokens than prose.
pub const WINDOW_CHARS_PER_TOKEN: usize = 3;
/// Tokens kept free in a window for the chat template's own tokens.
const WINDOW_MARGIN_TOKENS: usize = 64;
/// The least budget a request is packed with, whatever else took room.
const MIN_CHARS: usize = 2_000;

/// The chars of a budget the conversation block may take: a third, so the
/// page's documents keep the rest however long the conversation grows
/// (older turns are left out, then summarized, first).
pub fn conversation_share(budget: &Budget) -> usize {
    budget.char_limit() / 3
}

pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The budget as `context_usage` reports it.
impl From<Budget> for ContextBudget {
    fn from(budget: Budget) -> ContextBudget {
        ContextBudget {
            max_chars: budget.max_chars,
            max_tokens: budget.max_tokens,
        }
    }
}

/// A document of `chars` characters; its tokens are estimated from them.
pub fn document_usage(
    doc_id: impl Into<String>,
    kind: impl Into<String>,
    chars: usize,
    included: bool,
    truncated: bool,
) -> DocumentUsage {
    DocumentUsage {
        doc_id: doc_id.into(),
        kind: kind.into(),
        chars,
        tokens: estimate_tokens(chars),
        included,
        truncated,
    }
}

pub struct PackInput<'a> {
    pub conversation_id: &'a ConversationId,
    pub turn: u32,
    pub user_message_id: &'a str,
    pub user_text: &'a str,
    pub task: &'a Task,
    /// `None` when the observation was rejected: the packet then has no documents.
    pub observation: Option<&'a Observation>,
    pub browser: &'a str,
    pub tab_id: Option<String>,
    /// The conversation so far (see `conversation`): packed first, at most a
    /// third of the budget, the documents get the rest.
    pub history: Option<&'a History>,
    /// Earlier turns sent verbatim at most.
    pub recent_turns: usize,
    /// The packet's id and `created_at` come from here.
    pub ambient: &'a dyn crate::ambient::Ambient,
    /// A model reads the packet: the page goes as its task uses it
    /// (`task_view`). The offline builtin reads the page whole.
    pub for_model: bool,
}

pub struct Packed {
    pub packet: RequestPacket,
    pub usage: ContextUsage,
}

/// `,"text":` — what a chunk's text field adds to its content besides the
/// string itself.
const TEXT_FIELD_CHARS: usize = 8;

/// A chunk's content but its text, in the chunk's field order (the text is
/// added last, where the chunk has it).
#[derive(Serialize)]
struct ChunkMeta<'a> {
    doc_type: &'a str,
    url: &'a str,
    title: &'a str,
    chunk_index: u32,
    chunk_count: u32,
}

/// A chunk's content but its text and numbers, redacted and measured once
/// for all the chunks that share their type, URL and title (a page's
/// chunks all do), not once per chunk.
struct SharedMeta {
    /// With both numbers 0.
    content: Value,
    /// Chars of `content` (one digit per number).
    chars: usize,
    /// Strings redaction changed in it.
    redacted: usize,
}

impl SharedMeta {
    fn of(chunk: &laika_protocol::observation::Chunk) -> SharedMeta {
        let meta = ChunkMeta {
            doc_type: &chunk.doc_type,
            url: &chunk.url,
            title: &chunk.title,
            chunk_index: 0,
            chunk_count: 0,
        };
        let mut content = serde_json::to_value(meta).unwrap_or(Value::Null);
        let redacted = crate::redact::redact_value(&mut content);
        SharedMeta {
            chars: json_chars(&content),
            content,
            redacted,
        }
    }

    /// Chars of the content with these numbers.
    fn chars_with(&self, index: usize, count: usize) -> usize {
        self.chars + digits(index) + digits(count) - 2
    }

    /// Chars of a chunk document with these numbers and `text`.
    fn doc_chars(&self, index: usize, count: usize, text: &str) -> usize {
        self.chars_with(index, count) + TEXT_FIELD_CHARS + json_str_chars(text)
    }

    /// The content of a chunk document sent.
    fn content(&self, index: usize, count: usize, text: String) -> Value {
        let mut content = self.content.clone();
        content["chunk_index"] = Value::from(index);
        content["chunk_count"] = Value::from(count);
        content["text"] = Value::from(text);
        content
    }
}

/// Decimal digits of `n`, as JSON writes it.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A context document for the request packet: untrusted, whatever it holds.
pub fn document(
    doc_id: String,
    kind: &str,
    browser: &str,
    tab_id: Option<String>,
    content: Value,
) -> Document {
    Document {
        doc_id,
        kind: kind.into(),
        trust: "untrusted".into(),
        source: DocumentSource {
            browser: browser.into(),
            tab_id,
        },
        content,
    }
}

/// Fields of the summary that may be shortened, least valuable first:
/// `text` often repeats `primary.text`, which is the page's main content.
const REDUCIBLE: &[&str] = &[
    "comments",
    "items",
    "top_discussions",
    "outline",
    "structured",
    "elements",
    "text",
    "primary",
];

/// Shortens `field` of a summary content by about `excess` chars. Returns the
/// chars removed.
fn reduce_field(content: &mut Value, field: &str, excess: usize) -> usize {
    let Some(slot) = content.get_mut(field) else {
        return 0;
    };
    match slot {
        Value::String(s) => truncate_string(s, excess),
        Value::Object(o) => match o.get_mut("text") {
            Some(Value::String(s)) => truncate_string(s, excess),
            _ => 0,
        },
        Value::Array(items) => {
            let mut removed = 0;
            while removed < excess {
                match items.pop() {
                    Some(item) => removed += json_chars(&item) + 1,
                    None => break,
                }
            }
            removed
        }
        _ => 0,
    }
}

/// Cuts `excess` chars (plus a marker) off the end of `s`, on a char boundary.
fn truncate_string(s: &mut String, excess: usize) -> usize {
    const MARKER: &str = " […]";
    let total = s.chars().count();
    if total == 0 {
        return 0;
    }
    let keep = total.saturating_sub(excess + MARKER.chars().count());
    s.truncate(crate::text::prefix_chars(s, keep).len());
    if keep > 0 {
        s.push_str(MARKER);
    }
    total - s.chars().count()
}

/// The text passages are ranked by when a page is over budget: the
/// question, plus the fields asked for by `web.extract`; `None` for
/// `web.summarize` (a summary needs the whole page, not the parts a
/// question names).
fn ranking_question(input: &PackInput<'_>) -> Option<String> {
    match input.task.name {
        laika_protocol::llmcp::TaskName::Summarize => None,
        laika_protocol::llmcp::TaskName::Answer => Some(input.user_text.to_owned()),
        laika_protocol::llmcp::TaskName::Extract => {
            let mut q = input.user_text.to_owned();
            for field in input
                .task
                .args
                .get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = field
                    .as_str()
                    .or_else(|| field.get("name").and_then(Value::as_str))
                    .unwrap_or_default();
                q.push(' ');
                q.push_str(&name.replace(['_', '-'], " "));
            }
            Some(q)
        }
    }
}

/// Shortens the summary content to `limit` chars, least valuable fields
/// first (see [`REDUCIBLE`]), recording each cut. Returns its size.
pub(crate) fn reduce_summary(content: &mut Value, limit: usize, cut: &mut Vec<Cut>) -> usize {
    let mut size = json_chars(content);
    for field in REDUCIBLE {
        if size <= limit {
            break;
        }
        let removed = reduce_field(content, field, size - limit);
        if removed > 0 {
            size = json_chars(content);
            cut.push(Cut {
                doc_id: SUMMARY_DOC_ID.into(),
                field: Some(if *field == "primary" {
                    "primary.text".into()
                } else {
                    (*field).into()
                }),
                chars_removed: removed,
            });
        }
    }
    size
}

/// Builds the request packet for one turn.
pub fn pack(input: &PackInput<'_>, budget: Budget) -> Packed {
    pack_with(input, budget, None)
}

/// [`pack`], ranking passages with the page's index from `indexes` when it
/// is kept there (see `select::PageIndexes`).
///
/// The budget holds the whole of each document sent: its contents are
/// measured as they are packed, its own fields (id, kind, trust, source)
/// once they are known. When those fields push the documents past the
/// budget, the request is packed again with that much less room (fewer or
/// shorter documents, whose fields take no more), so a request over a full
/// window keeps the margin every other request has.
pub fn pack_with(
    input: &PackInput<'_>,
    budget: Budget,
    indexes: Option<&dyn crate::select::PageIndexes>,
) -> Packed {
    let mut packed = pack_contents(input, budget, indexes);
    let mut room = budget;
    for repack in 0..MAX_REPACKS {
        let fields = document_fields_chars(&packed);
        let over = (packed.usage.used.chars + fields).saturating_sub(budget.char_limit());
        if over == 0 {
            break;
        }
        // First by what is over (the same documents, a little shorter);
        // should other documents come with other fields, by all the fields.
        room = room.less(if repack == 0 { over } else { fields });
        packed = pack_contents(input, room, indexes);
        // The usage keeps the budget the request was given.
        packed.usage.budget = budget.into();
    }
    packed
}

/// Packs again at most this often.
const MAX_REPACKS: usize = 2;

/// Chars the packed documents take beyond their contents (which the usage
/// counts): each document's own fields and the commas between them,
/// measured without writing the contents out again.
fn document_fields_chars(packed: &Packed) -> usize {
    let documents = &packed.packet.context.documents;
    let fields: usize = documents
        .iter()
        .map(|d| {
            let bare = serde_json::json!({
                "doc_id": d.doc_id, "kind": d.kind, "trust": d.trust, "source": d.source, "content": null,
            });
            json_chars(&bare).saturating_sub("null".len())
        })
        .sum();
    fields + documents.len().saturating_sub(1)
}

/// Packs the documents' contents within `budget`.
fn pack_contents(
    input: &PackInput<'_>,
    budget: Budget,
    indexes: Option<&dyn crate::select::PageIndexes>,
) -> Packed {
    let mut redacted = 0;
    let mut usage_docs = Vec::new();
    let (conversation, conversation_chars) = match input.history {
        Some(history) => {
            let (block, assembled) = crate::conversation::assemble(
                history,
                input.recent_turns,
                conversation_share(&budget),
            );
            let block = block.map(|b| {
                let mut value = serde_json::to_value(&b).unwrap_or(Value::Null);
                redacted += crate::redact::redact_value(&mut value);
                serde_json::from_value(value).unwrap_or(b)
            });
            if block.is_some() {
                usage_docs.push(document_usage(
                    CONVERSATION_DOC_ID,
                    "conversation",
                    assembled.chars,
                    true,
                    assembled.turns_left_out > 0,
                ));
            }
            (block, assembled.chars)
        }
        None => (None, 0),
    };
    let limit = budget.char_limit().saturating_sub(conversation_chars);
    let tab_id = input.tab_id.clone();
    let mut documents = Vec::new();
    let mut cut = Vec::new();
    let mut used = 0usize;

    let mut selection = None;
    let mut named_elements = None;
    if let Some(obs) = input.observation {
        if let Some(sel) = &obs.selection {
            let mut content = serde_json::to_value(sel).unwrap_or(Value::Null);
            redacted += crate::redact::redact_value(&mut content);
            let size = json_chars(&content);
            used += size;
            usage_docs.push(document_usage(
                SELECTION_DOC_ID,
                SELECTION_DOC_TYPE,
                size,
                true,
                false,
            ));
            documents.push(document(
                SELECTION_DOC_ID.into(),
                SELECTION_DOC_TYPE,
                input.browser,
                tab_id.clone(),
                content,
            ));
        }
        let mut tabs = Vec::new();
        for t in &obs.tabs {
            let mut content = serde_json::to_value(t).unwrap_or(Value::Null);
            redacted += crate::redact::redact_value(&mut content);
            tabs.push((t.tab_id.clone(), content));
        }
        let tabs_wanted: usize = tabs.iter().map(|(_, c)| json_chars(c)).sum();
        let tabs_room = tabs_wanted.min(limit.saturating_sub(used) / 2);
        let limit_summary = limit.saturating_sub(used + tabs_room);
        let mut content = serde_json::to_value(&obs.summary).unwrap_or(Value::Null);
        crate::task_view::keep_structured_for(&mut content, input.task.name);
        let named = if input.for_model {
            crate::task_view::fit(&mut content, input.task.name, input.user_text)
        } else {
            Vec::new()
        };
        if !named.is_empty() {
            let mut elements = serde_json::json!({
                "doc_type": ELEMENTS_DOC_TYPE,
                "url": obs.summary.url,
                "elements": named,
            });
            redacted += crate::redact::redact_value(&mut elements);
            named_elements = Some(elements);
        }
        redacted += crate::redact::redact_value(&mut content);
        let original = json_chars(&content);
        // A chunk's text is redacted and measured where it lies: only the
        // chunks sent are copied into documents (a 1 MiB page over budget
        // sends a few passages of it). Each chunk: its meta's slot in
        // `metas`, its text, its size as a document.
        let mut metas: Vec<((&str, &str, &str), SharedMeta)> = Vec::new();
        let chunks: Vec<(usize, Cow<'_, str>, usize)> = obs
            .chunks
            .iter()
            .map(|chunk| {
                let key = (
                    chunk.doc_type.as_str(),
                    chunk.url.as_str(),
                    chunk.title.as_str(),
                );
                if metas.last().is_none_or(|(k, _)| *k != key) {
                    metas.push((key, SharedMeta::of(chunk)));
                }
                let slot = metas.len() - 1;
                let text = crate::redact::redact_urls_in_text(&chunk.text);
                if matches!(text, Cow::Owned(_)) {
                    redacted += 1;
                }
                let size = metas.get(slot).map_or(0, |(_, meta)| {
                    redacted += meta.redacted;
                    meta.doc_chars(
                        chunk.chunk_index as usize,
                        chunk.chunk_count as usize,
                        &text,
                    )
                });
                (slot, text, size)
            })
            .collect();
        let meta = |slot: usize| metas.get(slot).map(|(_, meta)| meta);
        let page_chars = original + chunks.iter().map(|(_, _, size)| size).sum::<usize>();
        // Over budget with a question to rank by: the summary keeps a
        // quarter, the most relevant passages of the chunks get the rest.
        let question =
            ranking_question(input).filter(|_| page_chars > limit_summary && !chunks.is_empty());
        let summary_limit = if question.is_some() {
            limit_summary / 4
        } else {
            limit_summary
        };
        let size = reduce_summary(&mut content, summary_limit, &mut cut);
        let text_chars = |c: &Value| c["text"].as_str().map_or(0, |t| t.chars().count());
        let summary_text = (obs.summary.text.chars().count(), text_chars(&content));
        used += size;
        usage_docs.push(document_usage(
            SUMMARY_DOC_ID,
            SUMMARY_DOC_TYPE,
            size,
            true,
            size < original,
        ));
        documents.push(document(
            SUMMARY_DOC_ID.into(),
            SUMMARY_DOC_TYPE,
            input.browser,
            tab_id.clone(),
            content,
        ));

        for (id, mut content) in tabs {
            let doc_id = tab_doc_id(&id);
            let original = json_chars(&content);
            let room = limit.saturating_sub(used);
            let mut size = original;
            if size > room {
                let removed = reduce_field(&mut content, "text", size - room);
                size = json_chars(&content);
                cut.push(Cut {
                    doc_id: doc_id.clone(),
                    field: Some("text".into()),
                    chars_removed: removed,
                });
            }
            let fits = size <= room;
            usage_docs.push(document_usage(
                doc_id.clone(),
                TAB_DOC_TYPE,
                size,
                fits,
                fits && size < original,
            ));
            if !fits {
                cut.push(Cut {
                    doc_id,
                    field: None,
                    chars_removed: size,
                });
                continue;
            }
            used += size;
            documents.push(document(
                doc_id,
                TAB_DOC_TYPE,
                input.browser,
                Some(id),
                content,
            ));
        }

        let count = chunks.len();
        let mut kept = Vec::new();
        match question {
            Some(question) => {
                let texts: Vec<(usize, &str)> = chunks
                    .iter()
                    .enumerate()
                    .map(|(i, (_, text, _))| (i + 1, text.as_ref()))
                    .collect();
                let chosen = crate::select::select_with(
                    &texts,
                    &question,
                    limit.saturating_sub(used),
                    indexes,
                );
                let sent_chunks: Vec<usize> = chosen.chunks.iter().map(|c| c.chunk).collect();
                // In page order, as the chunks: each is taken where it belongs.
                let mut chosen_texts = chosen.chunks.into_iter().peekable();
                for (i, (slot, page_text, size)) in chunks.iter().enumerate() {
                    let doc_id = format!("doc:web:chunk:{}", i + 1);
                    let text = chosen_texts.next_if(|c| c.chunk == i + 1);
                    let (Some(t), Some(meta)) = (text, meta(*slot)) else {
                        usage_docs.push(document_usage(
                            doc_id.clone(),
                            CHUNK_DOC_TYPE,
                            0,
                            false,
                            false,
                        ));
                        cut.push(Cut {
                            doc_id,
                            field: None,
                            chars_removed: *size,
                        });
                        continue;
                    };
                    // Numbers stay the page's: the model is told where each passage is.
                    let sent = meta.doc_chars(i + 1, count, &t.text);
                    usage_docs.push(document_usage(
                        doc_id.clone(),
                        CHUNK_DOC_TYPE,
                        sent,
                        true,
                        t.text != *page_text,
                    ));
                    used += sent;
                    kept.push((doc_id, meta.content(i + 1, count, t.text)));
                }
                selection = Some(PageSelection {
                    strategy: SelectionStrategy::Ranked,
                    page_chars: chosen.total_chars + summary_text.0,
                    sent_chars: chosen.sent_chars + summary_text.1,
                    passages_sent: chosen.passages_sent,
                    passages_total: chosen.passages_total,
                    chunks: sent_chunks,
                    about: chosen.about,
                });
            }
            None => {
                let mut fitting = Vec::new();
                for (i, (slot, text, size)) in chunks.into_iter().enumerate() {
                    let doc_id = format!("doc:web:chunk:{}", i + 1);
                    // Chunks are additive and ordered: once one does not fit,
                    // later ones are left out too so the model never sees a gap.
                    let fits = used + size <= limit && fitting.len() == i;
                    usage_docs.push(document_usage(
                        doc_id.clone(),
                        CHUNK_DOC_TYPE,
                        size,
                        fits,
                        false,
                    ));
                    if fits {
                        used += size;
                        fitting.push((doc_id, slot, text));
                    } else {
                        cut.push(Cut {
                            doc_id,
                            field: None,
                            chars_removed: size,
                        });
                    }
                }
                let count = fitting.len();
                for (i, (doc_id, slot, text)) in fitting.into_iter().enumerate() {
                    if let Some(meta) = meta(slot) {
                        kept.push((doc_id, meta.content(i + 1, count, text.into_owned())));
                    }
                }
            }
        }
        for (doc_id, content) in kept {
            documents.push(document(
                doc_id,
                CHUNK_DOC_TYPE,
                input.browser,
                tab_id.clone(),
                content,
            ));
        }
        // Bounded by `task_view::MAX_ELEMENTS_FOR_QUESTION`; dropped only
        // when nothing is left of the budget.
        if let Some(content) = named_elements {
            let size = json_chars(&content);
            let fits = used + size <= limit;
            usage_docs.push(document_usage(
                ELEMENTS_DOC_ID,
                ELEMENTS_DOC_TYPE,
                size,
                fits,
                false,
            ));
            if fits {
                used += size;
                documents.push(document(
                    ELEMENTS_DOC_ID.into(),
                    ELEMENTS_DOC_TYPE,
                    input.browser,
                    tab_id.clone(),
                    content,
                ));
            } else {
                cut.push(Cut {
                    doc_id: ELEMENTS_DOC_ID.into(),
                    field: None,
                    chars_removed: size,
                });
            }
        }
    }

    let user_text = crate::redact::redact_urls_in_text(input.user_text);
    if matches!(user_text, std::borrow::Cow::Owned(_)) {
        redacted += 1;
    }
    let mut task = input.task.clone();
    let mut args = Value::Object(std::mem::take(&mut task.args));
    redacted += crate::redact::redact_value(&mut args);
    if let Value::Object(a) = args {
        task.args = a;
    }

    let packet = RequestPacket::from_agent(
        input.ambient.new_id(),
        input.ambient.now_iso8601(),
        ConversationRef {
            id: input.conversation_id.clone(),
            turn: input.turn,
        },
        Input {
            user_message: UserMessage {
                id: input.user_message_id.into(),
                text: user_text.into_owned(),
            },
            task,
        },
        Context {
            documents,
            transcript: Vec::new(),
            conversation,
            plan: None,
        },
    );
    Packed {
        packet,
        usage: ContextUsage {
            budget: budget.into(),
            used: Used {
                chars: used + conversation_chars,
                tokens: estimate_tokens(used + conversation_chars),
            },
            documents: usage_docs,
            cut,
            redacted_strings: redacted,
            selection,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::llmcp::TaskName;
    use serde_json::json;

    fn observation(text: &str, chunks: usize) -> Observation {
        Observation::from_value(json!({
            "summary": {
                "doc_type": SUMMARY_DOC_TYPE,
                "url": "https://user:pw@example.com/a?token=s3cret&q=1",
                "title": "A",
                "text": text,
                "primary": {"text": text, "handle_id": "laika-1"},
                "elements": [{"handle_id": "laika-2", "role": "link", "text": "Example", "href": "https://example.com/b?api_key=zzz"}]
            },
            "chunks": (1..=chunks).map(|i| json!({
                "doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "title": "A",
                "chunk_index": i, "chunk_count": chunks, "text": "c".repeat(1000)
            })).collect::<Vec<_>>()
        }))
        .unwrap()
    }

    fn input<'a>(obs: &'a Observation, task: &'a Task) -> PackInput<'a> {
        PackInput {
            conversation_id: &CONVERSATION,
            turn: 3,
            user_message_id: "u-1",
            user_text: "summarize https://example.com/x?session=abc",
            task,
            observation: Some(obs),
            browser: "chrome",
            tab_id: Some("7".into()),
            history: None,
            recent_turns: 8,
            ambient: &FIXED,
            for_model: true,
        }
    }

    static FIXED: crate::ambient::Fixed = crate::ambient::Fixed::new();
    static CONVERSATION: std::sync::LazyLock<ConversationId> =
        std::sync::LazyLock::new(|| ConversationId::from("c-1"));

    fn task() -> Task {
        Task {
            name: TaskName::Summarize,
            args: Default::default(),
        }
    }

    #[test]
    fn selection_first_and_other_tabs_as_their_own_documents() {
        let mut obs = observation("Main page text.", 1);
        obs.selection = Some(laika_protocol::observation::Selection {
            doc_type: SELECTION_DOC_TYPE.into(),
            url: "https://example.com/a".into(),
            title: "A".into(),
            text: "the selected sentence".into(),
        });
        obs.tabs = vec![laika_protocol::observation::TabDoc {
            doc_type: TAB_DOC_TYPE.into(),
            tab_id: "42".into(),
            url: "https://other.example/b".into(),
            title: "B".into(),
            text: "x".repeat(5000),
        }];
        obs.validate().unwrap();
        let t = task();
        let roomy = Budget {
            max_chars: 1 << 20,
            max_tokens: 1 << 20,
        };
        let p = pack(&input(&obs, &t), roomy);
        let v = serde_json::to_value(&p.packet).unwrap();
        let docs = v["context"]["documents"].as_array().unwrap();
        let ids: Vec<_> = docs.iter().map(|d| d["doc_id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [
                SELECTION_DOC_ID,
                SUMMARY_DOC_ID,
                "doc:web:tab:42",
                "doc:web:chunk:1"
            ]
        );
        assert_eq!(docs[0]["content"]["text"], "the selected sentence");
        assert_eq!(docs[2]["source"]["tab_id"], "42");
        assert_eq!(docs[1]["source"]["tab_id"], "7");

        // A tight budget trims the other tab, never the selection.
        let tight = Budget {
            max_chars: 3000,
            max_tokens: 1 << 20,
        };
        let p = pack(&input(&obs, &t), tight);
        let tab = p
            .usage
            .documents
            .iter()
            .find(|d| d.doc_id == "doc:web:tab:42")
            .unwrap();
        assert!(tab.included && tab.truncated, "{tab:?}");
        assert!(p.usage.used.chars <= 3000 + 200, "{:?}", p.usage.used);
        let sel = p
            .usage
            .documents
            .iter()
            .find(|d| d.doc_id == SELECTION_DOC_ID)
            .unwrap();
        assert!(sel.included && !sel.truncated);
        assert!(p.usage.cut.iter().any(|c| c.doc_id == "doc:web:tab:42"));
    }

    #[test]
    fn bad_selections_and_tabs_are_refused() {
        let mut obs = observation("x", 0);
        obs.selection = Some(laika_protocol::observation::Selection {
            doc_type: SELECTION_DOC_TYPE.into(),
            url: "https://example.com".into(),
            title: String::new(),
            text: "  ".into(),
        });
        assert!(obs.validate().is_err());
        obs.selection = None;
        let tab = laika_protocol::observation::TabDoc {
            doc_type: TAB_DOC_TYPE.into(),
            tab_id: "1".into(),
            url: "https://example.com".into(),
            ..Default::default()
        };
        obs.tabs = vec![tab.clone(), tab];
        let e = obs.validate().unwrap_err();
        assert!(e.message.contains("unique"), "{}", e.message);
    }

    #[test]
    fn packs_the_seed_shape_untrusted_and_redacted() {
        let obs = observation("H1: A\nHello world.", 2);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 1 << 20,
                max_tokens: 1 << 20,
            },
        );
        let v = serde_json::to_value(&p.packet).unwrap();
        assert_eq!(v["protocol"], json!({"name": "laika.llmcp", "version": 1}));
        assert_eq!(v["type"], "request");
        assert_eq!(v["sender"]["role"], "agent");
        assert_eq!(v["conversation"], json!({"id": "c-1", "turn": 3}));
        assert_eq!(v["input"]["task"]["name"], "web.summarize");
        assert_eq!(v["output"]["format"], "json");
        let docs = v["context"]["documents"].as_array().unwrap();
        assert_eq!(docs.len(), 3);
        assert!(docs.iter().all(|d| d["trust"] == "untrusted"));
        assert_eq!(docs[0]["doc_id"], SUMMARY_DOC_ID);
        assert_eq!(docs[2]["content"]["chunk_index"], 2);
        assert_eq!(docs[2]["content"]["chunk_count"], 2);
        let text = v.to_string();
        assert!(
            !text.contains("s3cret")
                && !text.contains("pw@")
                && !text.contains("zzz")
                && !text.contains("session=abc"),
            "{text}"
        );
        assert!(text.contains("q=1"));
        assert!(p.usage.redacted_strings >= 2);
        assert!(p.usage.cut.is_empty());
        // A summary never acts: no element goes. A question naming one gets
        // it in its own document, after the page's, redacted too.
        assert!(!text.contains("laika-2"), "{text}");
        assert!(
            docs[0]["content"]["primary"].get("text").is_none(),
            "the text goes once"
        );
        let question = Task {
            name: TaskName::Answer,
            args: Default::default(),
        };
        let mut asked = input(&obs, &question);
        asked.user_text = "open the example link";
        let p = pack(
            &asked,
            Budget {
                max_chars: 1 << 20,
                max_tokens: 1 << 20,
            },
        );
        let last = p.packet.context.documents.last().unwrap();
        assert_eq!(last.doc_id, ELEMENTS_DOC_ID);
        assert_eq!(last.kind, ELEMENTS_DOC_TYPE);
        assert_eq!(last.trust, "untrusted");
        assert_eq!(last.content["elements"][0]["handle_id"], "laika-2");
        assert!(!last.content.to_string().contains("zzz"));
        assert!(p
            .usage
            .documents
            .iter()
            .any(|d| d.doc_id == ELEMENTS_DOC_ID && d.included));
    }

    #[test]
    fn budget_cuts_chunks_and_renumbers() {
        let obs = observation("short", 5);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 3_000,
                max_tokens: 1 << 20,
            },
        );
        let docs = &p.packet.context.documents;
        let chunks: Vec<_> = docs.iter().filter(|d| d.kind == CHUNK_DOC_TYPE).collect();
        assert!(!chunks.is_empty() && chunks.len() < 5, "{}", chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.content["chunk_index"], i + 1);
            assert_eq!(c.content["chunk_count"], chunks.len());
        }
        assert_eq!(p.usage.cut.len(), 5 - chunks.len());
        assert!(p.usage.used.chars <= 3_000);
        assert_eq!(
            p.usage.documents.iter().filter(|d| !d.included).count(),
            5 - chunks.len()
        );
    }

    #[test]
    fn the_documents_whole_fit_the_budget_their_fields_counted() {
        // Many small chunks: each document's own fields weigh as much as a
        // margin, and are counted for every task.
        let chunks: Vec<Value> = (1..=60)
            .map(|c| {
                json!({"doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "title": "A",
                "chunk_index": c, "chunk_count": 60, "text": format!("Section {c} on roads and schools. ").repeat(8)})
            })
            .collect();
        let obs = Observation::from_value(json!({
            "summary": {"doc_type": SUMMARY_DOC_TYPE, "url": "https://example.com/a", "title": "Minutes", "text": "Minutes of the council."},
            "chunks": chunks,
        }))
        .unwrap();
        let budget = Budget {
            max_chars: 6_000,
            max_tokens: 1 << 20,
        };
        for (name, text) in [
            (TaskName::Summarize, "Summarize this page"),
            (TaskName::Answer, "What about the schools in section 40?"),
        ] {
            let t = Task {
                name,
                args: Default::default(),
            };
            let mut i = input(&obs, &t);
            i.user_text = text;
            let p = pack(&i, budget);
            let docs = &p.packet.context.documents;
            let whole = json_chars(&serde_json::to_value(docs).unwrap()) - 2;
            assert!(
                whole <= budget.char_limit(),
                "{name:?}: {whole} chars of documents for {}",
                budget.char_limit()
            );
            assert!(docs.len() > 3, "{name:?}: the page is still sent");
            assert_eq!(p.usage.budget.max_chars, 6_000, "the budget given");
        }
    }

    #[test]
    fn a_fact_at_90_percent_of_a_400k_page_is_sent_for_a_question() {
        let filler = |c: usize| {
            (0..56)
                .map(|l| format!("Line {l} of section {c}: the committee discussed budgets, roads and schools."))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let mut chunks: Vec<Value> = (1..=100)
            .map(|c| {
                json!({"doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "title": "A",
                "chunk_index": c, "chunk_count": 100, "text": filler(c)})
            })
            .collect();
        chunks[89]["text"] = json!(format!(
            "{}\nThe new bridge over the Elbe will cost 48 million euros.",
            filler(90)
        ));
        let obs = Observation::from_value(json!({
            "summary": {"doc_type": SUMMARY_DOC_TYPE, "url": "https://example.com/a", "title": "Minutes", "text": filler(0)},
            "chunks": chunks,
        }))
        .unwrap();
        let page: usize = obs.chunks.iter().map(|c| c.text.len()).sum();
        assert!(page > 400_000, "{page}");
        let t = Task {
            name: TaskName::Answer,
            args: Default::default(),
        };
        let mut i = input(&obs, &t);
        i.user_text = "How much will the bridge cost?";
        let budget = Budget {
            max_chars: 24_000,
            max_tokens: 8_000,
        };
        let p = pack(&i, budget);
        let text = serde_json::to_string(&p.packet.context.documents).unwrap();
        assert!(text.contains("48 million euros"));
        assert!(p.usage.used.chars <= 24_000, "{}", p.usage.used.chars);
        let sel = p.usage.selection.as_ref().unwrap();
        assert_eq!(sel.strategy, SelectionStrategy::Ranked);
        assert!(sel.chunks.contains(&90));
        assert!(sel.sent_chars * 10 < sel.page_chars);
        assert_eq!(sel.about, vec!["bridge".to_string(), "cost".to_string()]);
        let fact = p
            .packet
            .context
            .documents
            .iter()
            .find(|d| {
                d.content["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("48 million")
            })
            .unwrap();
        assert_eq!(fact.doc_id, "doc:web:chunk:90");
        assert_eq!(fact.content["chunk_index"], 90);
        assert_eq!(fact.content["chunk_count"], 100);

        // A summary has no question to rank by: the page is read in order.
        let s = Task {
            name: TaskName::Summarize,
            args: Default::default(),
        };
        let p = pack(&input(&obs, &s), budget);
        assert!(p.usage.selection.is_none());
        assert!(!serde_json::to_string(&p.packet)
            .unwrap()
            .contains("48 million"));
    }

    /// The page the conversation is about keeps its room: a long history is
    /// cut to its share (oldest turns out, long answers clipped) while a page
    /// that fits the rest is sent whole.
    #[test]
    fn a_large_page_stays_whole_while_a_long_history_is_compressed() {
        use laika_protocol::conversation::PastTurn;
        let history = History {
            turns: (1..=8)
                .map(|i| PastTurn {
                    turn: i,
                    task: "web.answer".into(),
                    user_text: format!("question {i}"),
                    answer_text: "An answer of some length. ".repeat(150),
                    status: "ok".into(),
                    ..PastTurn::default()
                })
                .collect(),
            ..History::default()
        };
        let budget = Budget {
            max_chars: 40_000,
            max_tokens: 1 << 20,
        };
        let page = "A paragraph of the report the user asks about. ".repeat(240);
        let obs = observation(&page, 0);
        let t = Task {
            name: TaskName::Answer,
            args: Default::default(),
        };
        let mut i = input(&obs, &t);
        i.history = Some(&history);
        let p = pack(&i, budget);
        let page_doc = &p
            .usage
            .documents
            .iter()
            .find(|d| d.doc_id == SUMMARY_DOC_ID)
            .unwrap();
        assert!(page_doc.included && !page_doc.truncated, "{page_doc:?}");
        assert!(page_doc.chars > page.len(), "{}", page_doc.chars);
        let conv = p
            .usage
            .documents
            .iter()
            .find(|d| d.doc_id == CONVERSATION_DOC_ID)
            .unwrap();
        assert!(conv.truncated, "older turns were left out: {conv:?}");
        assert!(conv.chars <= conversation_share(&budget), "{conv:?}");
        let block = p.packet.context.conversation.as_ref().unwrap();
        assert_eq!(block.turns.last().unwrap().turn, 8, "the newest turn stays");
        assert!(
            p.usage.used.chars <= budget.char_limit(),
            "{:?}",
            p.usage.used
        );
    }

    #[test]
    fn budget_truncates_summary_text_and_reports_it() {
        let long = "word ".repeat(10_000);
        let obs = observation(&long, 0);
        let t = task();
        let p = pack(
            &input(&obs, &t),
            Budget {
                max_chars: 100_000,
                max_tokens: 5_000,
            },
        );
        assert!(p.usage.used.chars <= 20_000, "{}", p.usage.used.chars);
        assert!(p.usage.documents[0].truncated);
        assert!(p
            .usage
            .cut
            .iter()
            .any(|c| c.field.as_deref() == Some("text")));
        let content = &p.packet.context.documents[0].content;
        assert!(content["text"].as_str().unwrap().chars().count() < 20_000);
        assert!(
            content["primary"].get("text").is_none(),
            "the primary text the text holds is not sent again"
        );
    }
}

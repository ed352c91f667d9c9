//! Collections, sources and artifacts: the records of multi-source work
//! (`collection.index.v1` and `collection.source.v1`: docs/llmcp.md#context-documents;
//! the `collection.*` / `source.*` / `artifact.*` tools:
//! docs/wire-protocol.md#collections-and-transforms).
//!
//! The host's store keeps them; this module defines their shapes, reads the
//! tools' arguments into typed values, and builds the context documents a
//! turn over a collection is packed with: one `collection.index.v1` and the
//! sources as `collection.source.v1` chunks, the relevant ones first.
//!
//! Invariants:
//! - every string that came from the web (a source's text, title, outline,
//!   links) has URL credentials stripped before it is stored ([`redacted`]);
//! - a stored source text is at most [`MAX_SOURCE_CHARS`], an outline
//!   [`MAX_OUTLINE`] entries and the links [`MAX_LINKS`];
//! - every chunk document names its source (`source_id`, `url`, `title`), so
//!   a citation of a chunk resolves to the source.

use crate::json_size::json_chars;
use crate::pack::{self, estimate_tokens, Budget, Packed};
use crate::redact;
use crate::retrieval::{self, Index};
use crate::text::prefix_chars;
use laika_protocol::collection::{
    CitedSource, Collection, ExtractedLink, OutlineEntry, Source, SourceStatus,
};
use laika_protocol::error::{Error, Result};
use laika_protocol::ids::CollectionId;
use laika_protocol::llmcp::Document;
use laika_protocol::tool_call::{CollectionAddSources, SourceItem};
use laika_protocol::usage::{Cut, Used};
use serde_json::{json, Value};

pub const INDEX_DOC_TYPE: &str = "collection.index.v1";
pub const SOURCE_DOC_TYPE: &str = "collection.source.v1";
pub const INDEX_DOC_ID: &str = "doc:collection:index";

/// A stored source's text is cut to this many characters.
pub const MAX_SOURCE_CHARS: usize = 200_000;
pub const MAX_OUTLINE: usize = 64;
pub const MAX_LINKS: usize = 64;
/// Sources one `collection.add_sources` call may add, and a collection holds.
pub const MAX_SOURCES: usize = 200;
/// A chunk document's text is at most this many characters.
pub const CHUNK_CHARS: usize = 4_000;
const MAX_TITLE_CHARS: usize = 300;
const MAX_TAGS: usize = 16;
const MAX_TAG_CHARS: usize = 64;
const MAX_LINK_TEXT_CHARS: usize = 200;

/// The source as it may be stored: bounded, and URL credentials stripped
/// from every string (the source text is web content).
pub fn redacted(mut source: Source) -> Source {
    source.url = source.url.as_deref().map(redact::strip_url_credentials);
    source.outlet = source.url.as_deref().and_then(outlet_of);
    source.title = redact::redact_urls_in_text(prefix_chars(source.title.trim(), MAX_TITLE_CHARS))
        .into_owned();
    source.text =
        redact::redact_urls_in_text(prefix_chars(&source.text, MAX_SOURCE_CHARS)).into_owned();
    source.outline.truncate(MAX_OUTLINE);
    for entry in &mut source.outline {
        entry.text =
            redact::redact_urls_in_text(prefix_chars(&entry.text, MAX_TITLE_CHARS)).into_owned();
    }
    source.extracted_links.truncate(MAX_LINKS);
    for link in &mut source.extracted_links {
        link.url = redact::strip_url_credentials(&link.url);
        link.text =
            redact::redact_urls_in_text(prefix_chars(&link.text, MAX_LINK_TEXT_CHARS)).into_owned();
        link.context =
            redact::redact_urls_in_text(prefix_chars(&link.context, MAX_LINK_TEXT_CHARS))
                .into_owned();
    }
    source
}

/// The host of an http(s) URL.
pub fn outlet_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    parsed
        .host_str()
        .map(|h| h.trim_start_matches("www.").to_owned())
}

/// A collection with its sources, as a turn over it is packed.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionPack {
    pub collection: Collection,
    pub sources: Vec<Source>,
}

// ---- tool arguments ----

/// A required text argument `key`, trimmed: an id, a title, a note.
pub fn non_empty<'a>(value: &'a str, key: &str) -> Result<&'a str> {
    Some(value.trim())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::invalid_request(format!("`{key}` must be a non-empty string")))
}

/// `collection.create`: `(title, tags)`, bounded.
pub fn create_args(title: &str, tags: &[String]) -> Result<(String, Vec<String>)> {
    let title = prefix_chars(non_empty(title, "title")?, MAX_TITLE_CHARS).to_owned();
    let tags = tags
        .iter()
        .map(|t| prefix_chars(t.trim(), MAX_TAG_CHARS).to_owned())
        .filter(|t| !t.is_empty())
        .take(MAX_TAGS)
        .collect();
    Ok((title, tags))
}

/// A source to add, before it has an id.
#[derive(Debug, Clone, PartialEq)]
pub enum NewSource {
    Url { url: String, title: Option<String> },
    Note { title: Option<String>, text: String },
}

/// `collection.add_sources`: `(collectionId, sources)`. URLs must be http(s)
/// without credentials (they will be opened in the browser).
pub fn add_sources_args(args: &CollectionAddSources) -> Result<(CollectionId, Vec<NewSource>)> {
    let collection_id = CollectionId::from(non_empty(&args.collection_id, "collectionId")?);
    let items = &args.sources;
    if items.is_empty() || items.len() > MAX_SOURCES {
        return Err(Error::invalid_request(format!(
            "`sources` must hold 1 to {MAX_SOURCES} sources"
        )));
    }
    let title = |t: &Option<String>| {
        t.as_deref()
            .map(|t| prefix_chars(t.trim(), MAX_TITLE_CHARS).to_owned())
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = |e: Error| Error::invalid_request(format!("sources[{i}]: {}", e.message));
        out.push(match item {
            SourceItem::Url { url, title: t } => NewSource::Url {
                url: non_empty(url, "url").and_then(web_url).map_err(at)?,
                title: title(t),
            },
            SourceItem::Note { text, title: t } => NewSource::Note {
                title: title(t),
                text: prefix_chars(non_empty(text, "text").map_err(at)?, MAX_SOURCE_CHARS)
                    .to_owned(),
            },
        });
    }
    Ok((collection_id, out))
}

/// An http(s) URL without credentials, as the browser may open it.
pub fn web_url(raw: &str) -> Result<String> {
    let parsed = url::Url::parse(raw.trim())
        .map_err(|e| Error::invalid_request(format!("`url` is not an absolute URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_request(format!(
            "only http and https pages can be sources, not {}:",
            parsed.scheme()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::invalid_request(
            "the URL carries a user name or password; add it without them",
        ));
    }
    Ok(parsed.to_string())
}

/// A captured page as a source: its text (the summary's `text`, which holds
/// the whole visible page with structure prefixes, then the chunks; the main
/// content alone when that is all there is), outline and links, bounded by
/// `max_chars` and redacted.
pub fn source_from_observation(
    observation: &laika_protocol::observation::Observation,
    base: Source,
    max_chars: usize,
) -> Source {
    let summary = &observation.summary;
    let mut text = summary.text.trim().to_owned();
    if text.is_empty() {
        text = summary
            .primary
            .as_ref()
            .map(|p| p.text.trim().to_owned())
            .unwrap_or_default();
    }
    for chunk in &observation.chunks {
        text.push('\n');
        text.push_str(&chunk.text);
    }
    let text = prefix_chars(&text, max_chars.min(MAX_SOURCE_CHARS)).to_owned();
    let outline = summary
        .outline
        .iter()
        .map(|o| OutlineEntry {
            level: o.level,
            text: o.text.clone(),
        })
        .collect();
    let mut links: Vec<ExtractedLink> = Vec::new();
    let elements = summary
        .elements
        .iter()
        .filter_map(|e| Some((e.href.as_deref()?, e.text.as_str(), e.label.as_deref())));
    let items = summary
        .items
        .iter()
        .filter_map(|i| Some((i.url.as_deref()?, i.title.as_str(), i.snippet.as_deref())));
    for (url, text, context) in items.chain(elements) {
        let Ok(url) = web_url(url) else { continue };
        if links.len() >= MAX_LINKS || links.iter().any(|l| l.url == url) {
            continue;
        }
        links.push(ExtractedLink {
            url,
            text: text.trim().to_owned(),
            context: context.unwrap_or("").trim().to_owned(),
        });
    }
    let title = if summary.title.trim().is_empty() {
        base.title.clone()
    } else {
        summary.title.clone()
    };
    redacted(Source {
        url: Some(summary.url.clone())
            .filter(|u| !u.is_empty())
            .or(base.url.clone()),
        title,
        status: SourceStatus::Ready,
        error: None,
        text,
        outline,
        extracted_links: links,
        ..base
    })
}

// ---- context documents ----

/// The `collection.index.v1` document's content.
pub fn index_content(pack: &CollectionPack) -> Value {
    let sources: Vec<Value> = pack
        .sources
        .iter()
        .map(|s| {
            let mut entry = json!({
                "source_id": s.id,
                "type": s.kind.as_str(),
                "title": s.title,
                "status": s.status.as_str(),
            });
            put_page_fields(&mut entry, s);
            entry
        })
        .collect();
    json!({
        "doc_type": INDEX_DOC_TYPE,
        "collection_id": pack.collection.id,
        "title": pack.collection.title,
        "sources": sources,
    })
}

/// Adds the source's `url`, `outlet` and `captured_at` that it has.
fn put_page_fields(target: &mut Value, s: &Source) {
    let Some(map) = target.as_object_mut() else {
        return;
    };
    for (key, value) in [
        ("url", &s.url),
        ("outlet", &s.outlet),
        ("captured_at", &s.captured_at),
    ] {
        if let Some(v) = value {
            map.insert(key.into(), Value::String(v.clone()));
        }
    }
}

/// One chunk of a source's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk<'a> {
    pub source: &'a Source,
    /// 1-based.
    pub index: usize,
    pub count: usize,
    pub text: &'a str,
}

impl Chunk<'_> {
    /// `doc:src:<source id>` for a source's first chunk, `…#<n>` after.
    pub fn doc_id(&self) -> String {
        if self.index == 1 {
            format!("doc:src:{}", self.source.id)
        } else {
            format!("doc:src:{}#{}", self.source.id, self.index)
        }
    }

    /// The `collection.source.v1` content of this chunk. The outline and
    /// links ride with the first chunk only.
    pub fn content(&self) -> Value {
        let s = self.source;
        let mut content = json!({
            "doc_type": SOURCE_DOC_TYPE,
            "collection_id": s.collection_id,
            "source_id": s.id,
            "title": s.title,
            "text": self.text,
            "chunk_index": self.index,
            "chunk_count": self.count,
        });
        put_page_fields(&mut content, s);
        if let Some(map) = content.as_object_mut() {
            if self.index == 1 {
                map.insert("outline".into(), json!(s.outline));
                map.insert("extracted_links".into(), json!(s.extracted_links));
            }
        }
        content
    }
}

/// Splits `text` into pieces of at most `max` chars, at line breaks where
/// possible (a line longer than `max` is cut at a char boundary).
pub fn split_chunks(text: &str, max: usize) -> Vec<&str> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let head = prefix_chars(rest, max);
        if head.len() == rest.len() {
            out.push(rest);
            break;
        }
        let cut = head.rfind('\n').filter(|&i| i > 0).unwrap_or(head.len());
        let (piece, tail) = rest.split_at(cut);
        if !piece.trim().is_empty() {
            out.push(piece.trim());
        }
        rest = tail.trim_start();
    }
    out
}

/// Every chunk of the sources that have text, in source order.
pub fn chunks(sources: &[Source], max_chars: usize) -> Vec<Chunk<'_>> {
    let mut out = Vec::new();
    for source in sources.iter().filter(|s| !s.text.trim().is_empty()) {
        let pieces = split_chunks(&source.text, max_chars);
        let count = pieces.len();
        out.extend(pieces.into_iter().enumerate().map(|(i, text)| Chunk {
            source,
            index: i + 1,
            count,
            text,
        }));
    }
    out
}

/// The order chunks go into a packet: with a question, the chunks that hold
/// most of it first (BM25), then the rest; without one (a summary), each
/// source's first chunk, then each source's second, and so on, so every
/// source is seen before any source is read to the end.
pub fn packing_order(chunks: &[Chunk<'_>], question: Option<&str>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    match question.filter(|q| !q.trim().is_empty()) {
        Some(q) => {
            let index = Index::from_texts(chunks.iter().map(|c| c.text));
            let query = index.query(q);
            let mut score = vec![0.0_f64; chunks.len()];
            for s in retrieval::bm25(&index, &query) {
                if let Some(slot) = score.get_mut(s.unit) {
                    *slot = s.score;
                }
            }
            order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
        }
        None => order.sort_by_key(|&i| (chunks[i].index, i)),
    }
    order
}

/// Replaces a packed request's page documents with the collection: its
/// index first, then source chunks in [`packing_order`] while they fit the
/// budget (a chunk that does not fit is left out and the next tried, so one
/// long chunk does not crowd out the rest). The usage report is redone to
/// match.
pub fn pack_into(
    packed: &mut Packed,
    pack: &CollectionPack,
    budget: Budget,
    question: Option<&str>,
) {
    let limit = budget.max_chars.min(budget.max_tokens.saturating_mul(4));
    let browser = packed
        .packet
        .context
        .documents
        .first()
        .map_or_else(|| "unknown".to_owned(), |d| d.source.browser.clone());
    let mut redacted = packed.usage.redacted_strings;
    let mut documents = Vec::new();
    let mut usage = Vec::new();
    let mut cut = Vec::new();
    let mut used = 0usize;
    let mut index = index_content(pack);
    redacted += redact::redact_value(&mut index);
    let size = json_chars(&index);
    used += size;
    usage.push(pack::document_usage(
        INDEX_DOC_ID,
        INDEX_DOC_TYPE,
        size,
        true,
        false,
    ));
    documents.push(pack::document(
        INDEX_DOC_ID.into(),
        INDEX_DOC_TYPE,
        &browser,
        None,
        index,
    ));
    let all = chunks(&pack.sources, CHUNK_CHARS);
    for i in packing_order(&all, question) {
        let chunk = &all[i];
        let mut content = chunk.content();
        redacted += redact::redact_value(&mut content);
        let size = json_chars(&content);
        let fits = used + size <= limit;
        usage.push(pack::document_usage(
            chunk.doc_id(),
            SOURCE_DOC_TYPE,
            size,
            fits,
            false,
        ));
        if fits {
            used += size;
            documents.push(pack::document(
                chunk.doc_id(),
                SOURCE_DOC_TYPE,
                &browser,
                None,
                content,
            ));
        } else {
            cut.push(Cut {
                doc_id: chunk.doc_id(),
                field: None,
                chars_removed: size,
            });
        }
    }
    packed.packet.context.documents = documents;
    packed.usage.used = Used {
        chars: used,
        tokens: estimate_tokens(used),
    };
    packed.usage.documents = usage;
    packed.usage.cut = cut;
    packed.usage.redacted_strings = redacted;
}

/// The source a context document was made from, if it is a source chunk.
pub fn cited_source(doc: &Document) -> Option<CitedSource> {
    let c = &doc.content;
    if c.get("doc_type").and_then(Value::as_str) != Some(SOURCE_DOC_TYPE) {
        return None;
    }
    let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(CitedSource {
        source_id: text("source_id")?.into(),
        title: text("title").unwrap_or_default(),
        url: text("url"),
    })
}

/// A ready page source of collection `c-1` at `https://<id>.example/`.
#[cfg(test)]
pub(crate) fn test_source(id: &str, title: &str, text: &str) -> Source {
    Source {
        id: id.into(),
        collection_id: "c-1".into(),
        kind: laika_protocol::collection::SourceKind::Url,
        url: Some(format!("https://{id}.example/")),
        title: title.into(),
        outlet: Some(format!("{id}.example")),
        captured_at: Some("2026-01-01T00:00:00.000Z".into()),
        refreshed_at: None,
        status: SourceStatus::Ready,
        error: None,
        text: text.into(),
        outline: Vec::new(),
        extracted_links: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_source as source;

    fn add_sources_args(args: &Value) -> Result<(CollectionId, Vec<NewSource>)> {
        super::add_sources_args(&serde_json::from_value(args.clone()).unwrap())
    }

    #[test]
    fn add_sources_reads_urls_and_notes_and_refuses_unsafe_urls() {
        let (id, sources) = add_sources_args(&json!({
            "collectionId": "c-9",
            "sources": [
                {"type": "url", "url": "https://a.example/x", "title": " A "},
                {"type": "note", "text": "remember the cabins"}
            ]
        }))
        .unwrap();
        assert_eq!(id, "c-9");
        assert_eq!(
            sources,
            vec![
                NewSource::Url {
                    url: "https://a.example/x".into(),
                    title: Some("A".into())
                },
                NewSource::Note {
                    title: None,
                    text: "remember the cabins".into()
                }
            ]
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "https://u:p@a.example/",
            "not a url",
        ] {
            let e = add_sources_args(&json!({
                "collectionId": "c",
                "sources": [{"type": "url", "url": bad}]
            }))
            .unwrap_err();
            assert!(e.message.starts_with("sources[0]:"), "{bad}: {}", e.message);
        }
        assert!(add_sources_args(&json!({"collectionId": "c", "sources": []})).is_err());
        assert!(add_sources_args(
            &json!({"collectionId": " ", "sources": [{"type": "note", "text": "x"}]})
        )
        .is_err());
    }

    #[test]
    fn redaction_strips_credentials_and_bounds_the_source() {
        let mut s = source("a", "T", "");
        s.url = Some("https://a.example/p?token=secret".into());
        s.text = format!(
            "see https://bob:pw@b.example/ {}",
            "x".repeat(MAX_SOURCE_CHARS)
        );
        s.extracted_links = (0..100)
            .map(|i| ExtractedLink {
                url: format!("https://u:p@l{i}.example/"),
                text: "l".into(),
                context: String::new(),
            })
            .collect();
        let r = redacted(s);
        assert!(!r.url.as_deref().unwrap().contains("secret"));
        assert!(!r.text.contains("bob:pw"));
        assert!(r.text.chars().count() <= MAX_SOURCE_CHARS);
        assert_eq!(r.extracted_links.len(), MAX_LINKS);
        assert!(r.extracted_links.iter().all(|l| !l.url.contains("u:p")));
        assert_eq!(r.outlet.as_deref(), Some("a.example"));
    }

    #[test]
    fn chunks_split_at_lines_and_name_their_source() {
        let text = "line one\nline two\nline three";
        assert_eq!(
            split_chunks(text, 18),
            vec!["line one\nline two", "line three"]
        );
        assert_eq!(split_chunks("abcdef", 4), vec!["abcd", "ef"]);
        assert!(split_chunks("  ", 4).is_empty());
        let sources = [source("a", "A", "alpha\nbeta"), source("b", "B", "")];
        let all = chunks(&sources, 6);
        assert_eq!(all.len(), 2, "the empty source has no chunk");
        assert_eq!(all[0].doc_id(), "doc:src:a");
        assert_eq!(all[1].doc_id(), "doc:src:a#2");
        let c = all[1].content();
        assert_eq!(c["source_id"], "a");
        assert_eq!(c["url"], "https://a.example/");
        assert_eq!(c["chunk_count"], 2);
        assert!(c.get("outline").is_none(), "the outline rides with chunk 1");
    }

    #[test]
    fn a_question_puts_the_chunks_that_answer_it_first() {
        let sources = [
            source("a", "A", "Trains leave from the north station."),
            source("b", "B", "The sleeper cabin costs forty euros per night."),
            source("c", "C", "Bicycles travel free."),
        ];
        let all = chunks(&sources, 1000);
        assert_eq!(
            packing_order(&all, Some("how much is a sleeper cabin?"))[0],
            1
        );
        assert_eq!(packing_order(&all, None), vec![0, 1, 2]);
        let long = [source("a", "A", "a1\na2"), source("b", "B", "b1\nb2")];
        let all = chunks(&long, 2);
        let order: Vec<String> = packing_order(&all, None)
            .into_iter()
            .map(|i| all[i].doc_id())
            .collect();
        assert_eq!(
            order,
            ["doc:src:a", "doc:src:b", "doc:src:a#2", "doc:src:b#2"]
        );
    }

    #[test]
    fn a_captured_page_keeps_text_outline_and_links() {
        let obs = laika_protocol::observation::Observation::from_value(json!({
            "summary": {
                "doc_type": "web.observation.summary.v1",
                "url": "https://user:pw@a.example/story",
                "title": "Story",
                "text": "H1: Story\nThe line reopens in May.",
                "outline": [{"level": 1, "tag": "h1", "role": "", "text": "Story"}],
                "elements": [
                    {"handle_id": "h1", "role": "link", "text": "Timetable", "href": "https://a.example/tt"},
                    {"handle_id": "h2", "role": "link", "text": "Evil", "href": "javascript:alert(1)"},
                    {"handle_id": "h3", "role": "link", "text": "Again", "href": "https://a.example/tt"}
                ]
            },
            "chunks": [{"doc_type": "web.observation.chunk.v1", "url": "https://a.example/story", "title": "Story", "chunk_index": 1, "chunk_count": 1, "text": "More text."}]
        }))
        .unwrap();
        let mut base = source("s", "", "");
        base.status = SourceStatus::Pending;
        let s = source_from_observation(&obs, base, 1000);
        assert_eq!(s.status, SourceStatus::Ready);
        assert_eq!(s.title, "Story");
        assert_eq!(
            s.url.as_deref(),
            Some("https://a.example/story"),
            "credentials stripped"
        );
        assert_eq!(s.text, "H1: Story\nThe line reopens in May.\nMore text.");
        assert_eq!(
            s.outline,
            [OutlineEntry {
                level: 1,
                text: "Story".into()
            }]
        );
        let urls: Vec<&str> = s.extracted_links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, ["https://a.example/tt"]);
        let short = source_from_observation(&obs, source("s", "", ""), 9);
        assert_eq!(short.text, "H1: Story");
    }

    #[test]
    fn the_index_lists_every_source() {
        let pack = CollectionPack {
            collection: Collection {
                id: "c-1".into(),
                title: "Trains".into(),
                tags: vec![],
                created_at: "t".into(),
                source_count: 2,
            },
            sources: vec![source("a", "A", "x"), source("b", "B", "y")],
        };
        let index = index_content(&pack);
        assert_eq!(index["doc_type"], INDEX_DOC_TYPE);
        assert_eq!(index["sources"][1]["source_id"], "b");
        assert_eq!(index["sources"][1]["outlet"], "b.example");
    }
}

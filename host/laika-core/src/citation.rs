//! Verification of the model's citations against the request's documents.
//!
//! A citation is verified when its quote, normalized, occurs verbatim in the
//! normalized text of a context document. Normalization forgives what a
//! model cannot be expected to reproduce: letter case, whitespace and line
//! breaks, curly quotes and dash variants, invisible characters, and the
//! observation's structure prefixes (`H2:`, `- `, `> `, `Code:` …) at line
//! starts. It does not forgive changed words: paraphrases stay unverified.
//!
//! Invariants:
//! - A citation's `doc_id` is corrected to the document that actually holds
//!   the quote (the named document is tried first, then all in order).
//! - A `handle_id` in the report always exists in the document it names:
//!   the handle of the element whose text holds the quote, or the model's
//!   own handle if it exists there; a forged handle is removed so it can
//!   never reach the extension.
//! - Each document is normalized at most once per [`verify`] call, lazily,
//!   and at most [`MAX_CHECKED_CITATIONS`] citations are searched, so a
//!   hostile output with thousands of citations costs bounded work.
//! - `ratio` is `verified / total`, and `1.0` when there are no citations
//!   (nothing failed verification); check `total` to tell "no citations".

use laika_protocol::citation::VerifiedCitation;
use laika_protocol::llmcp::{Citation, Document};
use laika_protocol::observation::StructuredFact;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashSet;

/// Citations beyond this many are reported unverified without a search.
pub const MAX_CHECKED_CITATIONS: usize = 256;
/// Quotes shorter than this (after normalization) match almost anything.
const MIN_QUOTE_CHARS: usize = 3;

/// Structure prefixes the observation writes at line starts
/// (docs/llmcp.md#context-documents).
const LINE_PREFIXES: [&str; 11] = [
    "H1:",
    "H2:",
    "H3:",
    "H4:",
    "H5:",
    "H6:",
    "Code:",
    "Summary:",
    "Caption:",
    "Term:",
    "Definition:",
];

/// All citations of one response, in the model's order, with counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CitationReport {
    pub citations: Vec<VerifiedCitation>,
    pub total: usize,
    pub verified: usize,
    /// `verified / total`; `1.0` when `total` is 0.
    pub ratio: f64,
}

/// Checks every citation against `documents`; see the module docs for the
/// rules.
pub fn verify(citations: &[Citation], documents: &[Document]) -> CitationReport {
    let indexed: Vec<OnceCell<IndexedDoc<'_>>> =
        documents.iter().map(|_| OnceCell::new()).collect();
    let doc = |i: usize| -> Option<&IndexedDoc<'_>> {
        let cell = indexed.get(i)?;
        let source = documents.get(i)?;
        Some(cell.get_or_init(|| IndexedDoc::new(source)))
    };

    let mut out = Vec::with_capacity(citations.len());
    for (n, c) in citations.iter().enumerate() {
        let named = documents.iter().position(|d| d.doc_id == c.doc_id);
        let quote = normalize_quote(&c.quote);
        let searchable = n < MAX_CHECKED_CITATIONS && quote.chars().count() >= MIN_QUOTE_CHARS;

        let mut found = None;
        if searchable {
            let order = named
                .into_iter()
                .chain((0..documents.len()).filter(|&i| Some(i) != named));
            for i in order {
                let Some(d) = doc(i) else { continue };
                if let Some(handle) = d.locate(&quote, c.handle_id.as_deref()) {
                    found = Some((d.doc_id.to_string(), handle));
                    break;
                }
            }
        }

        let (doc_id, handle_id, verified) = match found {
            Some((doc_id, handle)) => (doc_id, handle, true),
            None => {
                // Unverified: keep the model's handle only if the named
                // document really has it.
                let handle = c
                    .handle_id
                    .as_deref()
                    .filter(|h| named.and_then(doc).is_some_and(|d| d.handles.contains(h)))
                    .map(str::to_string);
                (c.doc_id.clone(), handle, false)
            }
        };
        let source = documents
            .iter()
            .find(|d| d.doc_id == doc_id)
            .and_then(crate::collection::cited_source);
        out.push(VerifiedCitation {
            source,
            doc_id,
            node_id: c.node_id.clone(),
            handle_id,
            quote: c.quote.clone(),
            verified,
        });
    }

    let total = out.len();
    let verified = out.iter().filter(|c| c.verified).count();
    let ratio = if total == 0 {
        1.0
    } else {
        verified as f64 / total as f64
    };
    CitationReport {
        citations: out,
        total,
        verified,
        ratio,
    }
}

/// One searchable piece of a document: normalized text and the handle of
/// the element it came from, if any.
struct Segment<'a> {
    text: String,
    handle: Option<&'a str>,
}

struct IndexedDoc<'a> {
    doc_id: &'a str,
    /// Element-backed segments come first, in the order primary, items,
    /// comments, elements, so the first hit names the most specific handle.
    segments: Vec<Segment<'a>>,
    handles: HashSet<&'a str>,
}

impl<'a> IndexedDoc<'a> {
    fn new(doc: &'a Document) -> Self {
        let c = &doc.content;
        let mut segments = Vec::new();
        let mut handles = HashSet::new();
        let mut add = |text: Option<&Value>, handle: Option<&'a str>| {
            if let Some(t) = text.and_then(Value::as_str) {
                segments.push(Segment {
                    text: normalize(t),
                    handle,
                });
            }
        };

        if let Some(p) = c.get("primary") {
            let h = handle_of(p);
            handles.extend(h);
            add(p.get("text"), h);
        }
        for item in array(c, "items") {
            let h = handle_of(item);
            handles.extend(h);
            add(item.get("title"), h);
            add(item.get("snippet"), h);
        }
        for comment in array(c, "comments") {
            let h = handle_of(comment);
            handles.extend(h);
            add(comment.get("text"), h);
        }
        for element in array(c, "elements") {
            let h = handle_of(element);
            handles.extend(h);
            add(element.get("text"), h);
        }
        add(c.get("text"), None);
        add(c.get("title"), None);
        for entry in array(c, "outline") {
            add(entry.get("text"), None);
        }
        for discussion in array(c, "top_discussions") {
            add(discussion.get("title"), None);
        }
        // A fact of the page's structured data is quoted in the form that
        // says so ("Structured data (Product): offers.price: 19.99").
        for fact in array(c, "structured") {
            if let Ok(fact) = StructuredFact::deserialize(fact) {
                segments.push(Segment {
                    text: normalize(&fact.quote()),
                    handle: None,
                });
            }
        }
        IndexedDoc {
            doc_id: &doc.doc_id,
            segments,
            handles,
        }
    }

    /// `None` if the quote is not in this document; otherwise the handle to
    /// report: the claimed one if its element holds the quote, else the
    /// first element that does, else the claimed one if it exists here.
    fn locate(&self, quote: &str, claimed: Option<&str>) -> Option<Option<String>> {
        let mut found = false;
        let mut first_handle = None;
        for seg in &self.segments {
            if !seg.text.contains(quote) {
                continue;
            }
            found = true;
            if let Some(h) = seg.handle {
                if claimed == Some(h) {
                    return Some(Some(h.to_string()));
                }
                first_handle = first_handle.or(Some(h));
            }
        }
        if !found {
            return None;
        }
        let existing_claim = claimed.filter(|h| self.handles.contains(h));
        Some(first_handle.or(existing_claim).map(str::to_string))
    }
}

fn handle_of(v: &Value) -> Option<&str> {
    v.get("handle_id").and_then(Value::as_str)
}

fn array<'v>(content: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    content
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The quote as searched: normalized like document text, then without the
/// quotation marks and edge punctuation models like to wrap quotes in
/// (removing them only shortens the needle, never loosens a match).
fn normalize_quote(quote: &str) -> String {
    let n = normalize(quote);
    n.trim_matches(|c: char| matches!(c, '"' | '\'' | '.' | ',' | ';' | ':' | ' '))
        .to_string()
}

/// Case-folded text with structure prefixes dropped, typography mapped to
/// ASCII and every whitespace run (line breaks included) collapsed to one
/// space. Linear in the input.
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for line in s.split(['\n', '\r', '\u{2028}', '\u{2029}']) {
        for ch in strip_line_prefixes(line).chars() {
            if ch.is_whitespace() {
                space = true;
                continue;
            }
            let mapped: &str = match ch {
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => "'",
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
                | '\u{00BB}' => "\"",
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
                | '\u{2212}' => "-",
                '\u{2026}' => "...",
                // Invisible characters pages are full of and models drop.
                '\u{00AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {
                    continue
                }
                _ => "",
            };
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            if mapped.is_empty() {
                out.extend(ch.to_lowercase());
            } else {
                out.push_str(mapped);
            }
        }
        space = true;
    }
    out
}

/// Drops leading whitespace and any stack of structure prefixes (`> - `,
/// `H2:`) from one line.
fn strip_line_prefixes(line: &str) -> &str {
    let mut rest = line.trim_start();
    loop {
        let marker = ["-", ">"].iter().find_map(|m| {
            rest.strip_prefix(m)
                .filter(|r| r.is_empty() || r.starts_with(char::is_whitespace))
        });
        let next = marker.or_else(|| LINE_PREFIXES.iter().find_map(|p| rest.strip_prefix(p)));
        match next {
            Some(r) => rest = r.trim_start(),
            None => return rest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use laika_protocol::llmcp::DocumentSource;
    use serde_json::json;

    fn document(doc_id: &str, content: Value) -> Document {
        Document {
            doc_id: doc_id.into(),
            kind: "web.observation.summary.v1".into(),
            trust: "untrusted".into(),
            source: DocumentSource {
                browser: "chrome".into(),
                tab_id: None,
            },
            content,
        }
    }

    fn summary() -> Document {
        document(
            "doc:web:summary",
            json!({
                "doc_type": "web.observation.summary.v1",
                "url": "https://example.com",
                "title": "Example Domain",
                "text": "H1: Example Domain\n\n- This domain is for use in\n  illustrative examples.\n> Quoted “smart” text — with dashes\nCode: let x = 1;",
                "primary": { "text": "The primary article body says hello.", "handle_id": "laika-7" },
                "items": [
                    { "title": "First item title", "snippet": "A snippet about cats", "handle_id": "laika-22" },
                    { "title": "Second item", "handle_id": "laika-23" }
                ],
                "comments": [{ "text": "I disagree with the author", "handle_id": "laika-44" }],
                "outline": [{ "level": 2, "tag": "h2", "role": "", "text": "Section about llamas" }],
                "elements": [{ "handle_id": "laika-99", "role": "link", "text": "Read more here" }]
            }),
        )
    }

    fn chunk() -> Document {
        document(
            "doc:web:chunk:1",
            json!({
                "doc_type": "web.observation.chunk.v1",
                "url": "https://example.com",
                "title": "Example Domain",
                "chunk_index": 1,
                "chunk_count": 1,
                "text": "Chunked text mentions the hidden treasure."
            }),
        )
    }

    fn cite(doc_id: &str, quote: &str, handle: Option<&str>) -> Citation {
        Citation {
            doc_id: doc_id.into(),
            node_id: None,
            handle_id: handle.map(str::to_string),
            quote: quote.into(),
            verified: None,
        }
    }

    fn one(c: Citation) -> VerifiedCitation {
        verify(&[c], &[summary(), chunk()]).citations.remove(0)
    }

    #[test]
    fn exact_quote() {
        let v = one(cite("doc:web:summary", "illustrative examples", None));
        assert!(v.verified);
        assert_eq!(v.doc_id, "doc:web:summary");
        assert_eq!(v.handle_id, None);
    }

    #[test]
    fn case_and_whitespace_differences() {
        let v = one(cite(
            "doc:web:summary",
            "  THIS   domain\tis for USE ",
            None,
        ));
        assert!(v.verified);
        assert_eq!(
            v.quote, "  THIS   domain\tis for USE ",
            "quote kept as given"
        );
    }

    #[test]
    fn curly_quotes_and_dashes() {
        let v = one(cite(
            "doc:web:summary",
            "quoted \"smart\" text - with dashes",
            None,
        ));
        assert!(v.verified);
        let v = one(cite(
            "doc:web:summary",
            "‘Quoted “smart” text – with dashes’",
            None,
        ));
        assert!(v.verified, "wrapping quotes and typographic marks");
    }

    #[test]
    fn structure_prefixes_are_ignored() {
        for q in [
            "Example Domain This domain",
            "with dashes let x = 1;",
            "H1: Example Domain",
            "- This domain",
        ] {
            assert!(one(cite("doc:web:summary", q, None)).verified, "{q}");
        }
        // Prefixes are only dropped at line starts, not mid-line.
        assert!(!one(cite("doc:web:summary", "example domain h1:", None)).verified);
    }

    #[test]
    fn quote_spanning_two_lines() {
        let v = one(cite(
            "doc:web:summary",
            "is for use in illustrative examples",
            None,
        ));
        assert!(v.verified);
    }

    #[test]
    fn wrong_or_unknown_doc_id_is_corrected() {
        let v = one(cite("doc:web:summary", "the hidden treasure", None));
        assert!(v.verified);
        assert_eq!(v.doc_id, "doc:web:chunk:1");
        let v = one(cite("doc:web:9", "illustrative examples", None));
        assert!(v.verified);
        assert_eq!(v.doc_id, "doc:web:summary");
    }

    #[test]
    fn fabricated_quotes_are_not_verified() {
        for q in [
            "This domain is for use in commercial examples",
            "",
            "   ",
            "ex",
            "\"..\"",
        ] {
            let v = one(cite("doc:web:summary", q, None));
            assert!(!v.verified, "{q:?}");
            assert_eq!(v.doc_id, "doc:web:summary");
        }
    }

    #[test]
    fn handle_mapping() {
        let cases = [
            ("primary article body", "laika-7"),
            ("first item title", "laika-22"),
            ("a snippet about cats", "laika-22"),
            ("disagree with the author", "laika-44"),
            ("read more here", "laika-99"),
        ];
        for (q, handle) in cases {
            let v = one(cite("doc:web:summary", q, None));
            assert!(v.verified, "{q}");
            assert_eq!(v.handle_id.as_deref(), Some(handle), "{q}");
        }
        // The element's own handle beats a real but unrelated claim.
        let v = one(cite("doc:web:summary", "disagree", Some("laika-22")));
        assert_eq!(v.handle_id.as_deref(), Some("laika-44"));
        // Text only in the page text keeps an existing claimed handle.
        let v = one(cite(
            "doc:web:summary",
            "section about llamas",
            Some("laika-23"),
        ));
        assert_eq!(v.handle_id.as_deref(), Some("laika-23"));
    }

    #[test]
    fn claimed_handle_kept_when_its_element_holds_the_quote() {
        let doc = document(
            "d",
            json!({
                "text": "",
                "items": [
                    { "title": "Same words", "handle_id": "laika-1" },
                    { "title": "Same words", "handle_id": "laika-2" }
                ]
            }),
        );
        let r = verify(&[cite("d", "same words", Some("laika-2"))], &[doc]);
        assert_eq!(r.citations[0].handle_id.as_deref(), Some("laika-2"));
    }

    #[test]
    fn forged_handles_are_removed() {
        // Verified quote, handle from nowhere.
        let v = one(cite(
            "doc:web:summary",
            "section about llamas",
            Some("laika-666"),
        ));
        assert!(v.verified);
        assert_eq!(v.handle_id, None);
        // Unverified quote: a forged handle goes, a real one stays.
        let v = one(cite("doc:web:summary", "made up text", Some("laika-666")));
        assert_eq!(v.handle_id, None);
        let v = one(cite("doc:web:summary", "made up text", Some("laika-7")));
        assert_eq!(v.handle_id.as_deref(), Some("laika-7"));
        // A handle from another document does not exist in this one.
        let v = one(cite("doc:web:chunk:1", "made up text", Some("laika-7")));
        assert_eq!(v.handle_id, None);
        let v = one(cite("doc:nope", "made up text", Some("laika-7")));
        assert_eq!(v.handle_id, None);
    }

    #[test]
    fn hostile_content_shapes_do_not_break_indexing() {
        let doc = document(
            "d",
            json!({
                "text": 42,
                "primary": "not an object",
                "items": {"not": "an array"},
                "comments": [null, 1, {"text": ["x"], "handle_id": 5}],
                "elements": [{"text": "Click the button", "handle_id": {"x": 1}}]
            }),
        );
        let r = verify(&[cite("d", "click the button", Some("laika-1"))], &[doc]);
        assert!(r.citations[0].verified);
        assert_eq!(r.citations[0].handle_id, None);
    }

    #[test]
    fn ratio_and_counts() {
        let r = verify(
            &[
                cite("doc:web:summary", "illustrative examples", None),
                cite("doc:web:summary", "nothing like this", None),
                cite("doc:web:summary", "hidden treasure", None),
                cite("doc:web:summary", "", None),
            ],
            &[summary(), chunk()],
        );
        assert_eq!((r.total, r.verified), (4, 2));
        assert!((r.ratio - 0.5).abs() < f64::EPSILON);
        let empty = verify(&[], &[summary()]);
        assert_eq!((empty.total, empty.verified), (0, 0));
        assert!((empty.ratio - 1.0).abs() < f64::EPSILON);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["citations"][2]["doc_id"], "doc:web:chunk:1");
        assert_eq!(json["verified"], 2);
    }

    #[test]
    fn normalization_details() {
        assert_eq!(normalize("  A\u{00A0}B\r\n\r\n  c\u{200B}d  "), "a b cd");
        assert_eq!(
            normalize("> - H2: Title\n  - nested item"),
            "title nested item"
        );
        assert_eq!(normalize("-5 degrees\n>=3"), "-5 degrees >=3");
        assert_eq!(normalize("ÉCOLE…"), "école...");
        assert_eq!(normalize_quote("  “Hello, world.”  "), "hello, world");
    }

    #[test]
    fn citation_cap_bounds_work() {
        let citations: Vec<Citation> = (0..MAX_CHECKED_CITATIONS + 5)
            .map(|_| cite("doc:web:summary", "illustrative examples", None))
            .collect();
        let r = verify(&citations, &[summary()]);
        assert_eq!(r.total, MAX_CHECKED_CITATIONS + 5);
        assert_eq!(r.verified, MAX_CHECKED_CITATIONS);
        assert!(!r.citations[MAX_CHECKED_CITATIONS].verified);
    }

    #[test]
    fn large_documents_are_indexed_once() {
        let sentence = "The quick brown fox jumps over the lazy dog. ";
        let big = sentence.repeat(1024 * 1024 / sentence.len());
        let mut text = big.clone();
        text.push_str("A unique closing sentence.");
        let docs = vec![
            document("a", json!({ "text": big })),
            document("b", json!({ "text": text })),
        ];
        let citations: Vec<Citation> = (0..MAX_CHECKED_CITATIONS)
            .map(|i| {
                cite(
                    "a",
                    if i % 2 == 0 {
                        "unique closing sentence"
                    } else {
                        "lazy dog. the quick"
                    },
                    None,
                )
            })
            .collect();
        let r = verify(&citations, &docs);
        assert_eq!(r.verified, MAX_CHECKED_CITATIONS);
        assert_eq!(r.citations[0].doc_id, "b");
        assert_eq!(r.citations[1].doc_id, "a");
    }
}

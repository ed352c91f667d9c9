//! Observation documents the extension sends: `web.observation.summary.v1`
//! and `web.observation.chunk.v1` (docs/llmcp.md#context-documents).
//!
//! Everything in here is web content and therefore untrusted data. This module
//! only checks shape and bounds; it never interprets the text.

use crate::deferred::Deferred;
use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

pub const SUMMARY_DOC_TYPE: &str = "web.observation.summary.v1";
pub const CHUNK_DOC_TYPE: &str = "web.observation.chunk.v1";
/// The text the user selected: the focus of the question.
pub const SELECTION_DOC_TYPE: &str = "web.selection.v1";
/// Another open tab the user chose to include.
pub const TAB_DOC_TYPE: &str = "web.tab.v1";

/// Hard caps on what one observation may carry. They are far above what the
/// extension's `browser.observe_dom` defaults produce, and exist so a hostile
/// page cannot make the host do unbounded work.
pub const MAX_ELEMENTS: usize = 5_000;
pub const MAX_ITEMS: usize = 2_000;
pub const MAX_COMMENTS: usize = 5_000;
pub const MAX_OUTLINE: usize = 2_000;
pub const MAX_CHUNKS: usize = 1_000;
pub const MAX_SIGNALS: usize = 64;
pub const MAX_FRAMES: usize = 256;
/// Facts of the page's structured data, and the size of each part of one.
pub const MAX_STRUCTURED: usize = 1_000;
pub const MAX_STRUCTURED_VALUE_CHARS: usize = 1_000;
pub const MAX_STRUCTURED_NAME_BYTES: usize = 200;
/// A selection longer than this is refused (the extension clips it first).
pub const MAX_SELECTION_CHARS: usize = 20_000;
/// Other tabs one turn may include, and the text each may bring.
pub const MAX_TABS: usize = 8;
pub const MAX_TAB_CHARS: usize = 200_000;
pub const MAX_HANDLE_LEN: usize = 128;
/// Outline levels are heading levels; 0 is a landmark that is not a heading.
pub const MAX_OUTLINE_LEVEL: u8 = 6;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Primary {
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Item {
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_count: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlineEntry {
    #[serde(default)]
    #[schemars(range(max = MAX_OUTLINE_LEVEL))]
    pub level: u8,
    #[serde(default)]
    pub tag: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub text: String,
}

/// An interactive element the page exposes, addressed by an opaque handle
/// that only the extension's content script can resolve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ObservedElement")]
pub struct Element {
    #[schemars(length(min = 1, max = MAX_HANDLE_LEN))]
    pub handle_id: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// The tag name, lower case (`input`, `button`, `a`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// For inputs and buttons: the `type` attribute (`password`, `submit`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// For inputs: the `autocomplete` attribute (`cc-number`, `one-time-code`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autocomplete: Option<String>,
    /// For inputs: the `name` attribute, used by the gate to spot sensitive fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For inputs: the placeholder or accessible label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// For inputs: the `inputmode` attribute (`numeric`, `email`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_mode: Option<String>,
    /// For inputs: the `maxlength` attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// The `id` attribute, used by the gate like `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The form the control belongs to, as a key shared by the controls of
    /// one form in this observation (`form-1`), so the gate can tell a
    /// field or button in a sign-in or payment form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
    /// The `method` of that form (`get`, `post`, `dialog`), lower case: a
    /// GET form only asks the site for a page (a filter, a search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form_method: Option<String>,
    /// The `aria-expanded` state, when the control has one: it shows or
    /// hides something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded: Option<bool>,
    /// Whether the control's `aria-controls` names an element that is on
    /// the page (absent when it has no `aria-controls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controls: Option<bool>,
    /// The label of the group the control sits in: a `<fieldset>` legend,
    /// or the name of an enclosing `group`, `radiogroup`, `tablist`,
    /// `toolbar` or `navigation` (`Filter by brand`, `Pagination`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The text of the dialog the control sits in (`<dialog>`, `dialog`,
    /// `alertdialog`), clipped: "Delete this repository?" makes its "OK"
    /// a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Discussion {
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_count: Option<u64>,
}

/// An embedded frame (`<iframe>`, `<frame>`) of the observed page. A
/// same-origin frame's text is part of the summary's text (`read: true`); a
/// frame of another origin cannot be read by the extension and is named
/// with `read: false`, so an answer can say what it did not see.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    /// The frame's origin (`https://example.com`); "" when its address is
    /// not a web origin (`about:blank`, `srcdoc`).
    #[serde(default)]
    pub origin: String,
    /// The frame's `title` (or `name`) attribute, or its document's title when read.
    #[serde(default)]
    pub title: String,
    /// Whether the frame's text is in the observation.
    pub read: bool,
}

/// One fact of the page's structured data (schema.org JSON-LD or
/// microdata), flattened by the extension: the item it belongs to, the
/// property path within that item and the value, as text. The page wrote
/// it for machines and nobody sees it: it can say what the visible text
/// does not, or contradict it. It is data, never instructions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructuredFact {
    /// The item's number on the page (0-based, in page order): the facts
    /// of one item share it.
    #[serde(default)]
    pub item: u32,
    /// The item's schema.org type (`Product`, `Recipe`, `NewsArticle`),
    /// without its vocabulary's address; "" when it names none.
    #[serde(default)]
    #[schemars(length(max = MAX_STRUCTURED_NAME_BYTES))]
    pub item_type: String,
    /// The property's path within the item, dotted (`name`,
    /// `offers.price`, `aggregateRating.ratingValue`).
    #[schemars(length(min = 1, max = MAX_STRUCTURED_NAME_BYTES))]
    pub property: String,
    #[schemars(length(max = MAX_STRUCTURED_VALUE_CHARS))]
    pub value: String,
}

impl StructuredFact {
    /// How a citation quotes this fact: saying that it is the page's
    /// structured data, not its visible text. Citation checks look for
    /// the quote in this form.
    pub fn quote(&self) -> String {
        let item = self.item_type.trim();
        if item.is_empty() {
            format!("Structured data: {}: {}", self.property, self.value)
        } else {
            format!(
                "Structured data ({item}): {}: {}",
                self.property, self.value
            )
        }
    }

    fn check(&self, i: usize) -> Result<()> {
        let name_ok =
            |s: &str| s.len() <= MAX_STRUCTURED_NAME_BYTES && !s.contains(char::is_control);
        if self.property.trim().is_empty() || !name_ok(&self.property) || !name_ok(&self.item_type)
        {
            return Err(invalid(format!(
                "summary.structured[{i}]: property must be 1..={MAX_STRUCTURED_NAME_BYTES} bytes and item_type at most that, without control characters"
            )));
        }
        if self.value.chars().count() > MAX_STRUCTURED_VALUE_CHARS {
            return Err(invalid(format!(
                "summary.structured[{i}].value has more than {MAX_STRUCTURED_VALUE_CHARS} characters"
            )));
        }
        Ok(())
    }
}

/// `web.observation.summary.v1`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ObservationSummary")]
pub struct Summary {
    #[schemars(extend("const" = SUMMARY_DOC_TYPE))]
    pub doc_type: String,
    #[schemars(regex(pattern = r"\S"))]
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// The page's language as it declares it (`<html lang>`, a BCP 47
    /// tag such as `de-CH`); absent when it declares none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<Primary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ITEMS))]
    pub items: Vec<Item>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_COMMENTS))]
    pub comments: Vec<Comment>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_OUTLINE))]
    pub outline: Vec<OutlineEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_SIGNALS))]
    pub signals: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ELEMENTS))]
    pub elements: Vec<Element>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_discussions: Vec<Discussion>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FRAMES))]
    pub frames: Vec<Frame>,
    /// The page's structured data (schema.org), as facts: see [`StructuredFact`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_STRUCTURED))]
    pub structured: Vec<StructuredFact>,
}

/// `web.observation.chunk.v1`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ObservationChunk")]
pub struct Chunk {
    #[schemars(extend("const" = CHUNK_DOC_TYPE))]
    pub doc_type: String,
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// 1-based position among the chunks.
    #[schemars(range(min = 1))]
    pub chunk_index: u32,
    /// How many chunks the observation has.
    #[schemars(range(min = 1))]
    pub chunk_count: u32,
    #[serde(default)]
    pub text: String,
}

/// `web.selection.v1`: the text the user selected on the observed page,
/// sent as its own document so the question can be about it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    #[schemars(extend("const" = SELECTION_DOC_TYPE))]
    pub doc_type: String,
    pub url: String,
    #[serde(default)]
    pub title: String,
    pub text: String,
}

/// `web.tab.v1`: another open tab the user picked as context: its address,
/// title and main text. Its citations name it by `tab_id`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabDoc {
    #[schemars(extend("const" = TAB_DOC_TYPE))]
    pub doc_type: String,
    /// The browser's id of the tab, as text.
    pub tab_id: String,
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub text: String,
}

/// A summary document plus its optional, ordered chunk documents, the
/// user's selection and other tabs the user included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    pub summary: Summary,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_CHUNKS))]
    pub chunks: Vec<Chunk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TABS))]
    pub tabs: Vec<TabDoc>,
}

/// Names (title and origin) of the frames documents list as not read, as
/// packed into a request (`summary.frames` entries with `read: false`).
pub fn unread_frame_names<'a>(
    contents: impl Iterator<Item = &'a serde_json::Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    for frames in contents.filter_map(|c| c.get("frames").and_then(serde_json::Value::as_array)) {
        for f in frames {
            if f.get("read") != Some(&serde_json::Value::Bool(false)) {
                continue;
            }
            let field = |k: &str| {
                f.get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .trim()
            };
            let name = match (field("title"), field("origin")) {
                ("", "") => "an untitled frame".to_owned(),
                ("", origin) => origin.to_owned(),
                (title, "") => format!("“{title}”"),
                (title, origin) => format!("“{title}” ({origin})"),
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidObservation, message)
}

impl Deferred<Observation> {
    /// Parses and validates the observation, as [`Observation::from_value`].
    pub fn parse(self) -> Result<Observation> {
        Observation::from_value(self.into_raw())
    }
}

impl Observation {
    /// Parses and validates an observation from the wire.
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        let obs: Observation = serde_json::from_value(value)
            .map_err(|e| invalid(format!("observation does not match its schema: {e}")))?;
        obs.validate()?;
        Ok(obs)
    }

    /// Checks the documented rules that serde cannot express (docs/wire-protocol.md#turn).
    pub fn validate(&self) -> Result<()> {
        let s = &self.summary;
        if s.doc_type != SUMMARY_DOC_TYPE {
            return Err(invalid(format!(
                "summary.doc_type must be \"{SUMMARY_DOC_TYPE}\", got \"{}\"",
                s.doc_type
            )));
        }
        if s.url.trim().is_empty() {
            return Err(invalid("summary.url must not be empty"));
        }
        let caps = [
            ("summary.elements", s.elements.len(), MAX_ELEMENTS),
            ("summary.items", s.items.len(), MAX_ITEMS),
            ("summary.comments", s.comments.len(), MAX_COMMENTS),
            ("summary.outline", s.outline.len(), MAX_OUTLINE),
            ("summary.signals", s.signals.len(), MAX_SIGNALS),
            ("summary.frames", s.frames.len(), MAX_FRAMES),
            ("summary.structured", s.structured.len(), MAX_STRUCTURED),
            ("chunks", self.chunks.len(), MAX_CHUNKS),
            ("tabs", self.tabs.len(), MAX_TABS),
        ];
        for (field, len, cap) in caps {
            if len > cap {
                return Err(invalid(format!(
                    "{field} has {len} entries; at most {cap} are accepted"
                )));
            }
        }
        let mut seen = HashSet::new();
        for (i, el) in s.elements.iter().enumerate() {
            if el.handle_id.is_empty() || el.handle_id.len() > MAX_HANDLE_LEN {
                return Err(invalid(format!(
                    "summary.elements[{i}].handle_id must be 1..={MAX_HANDLE_LEN} bytes"
                )));
            }
            if !seen.insert(el.handle_id.as_str()) {
                return Err(invalid(format!(
                    "summary.elements[{i}].handle_id \"{}\" is not unique",
                    el.handle_id
                )));
            }
        }
        for (i, fact) in s.structured.iter().enumerate() {
            fact.check(i)?;
        }
        for (i, o) in s.outline.iter().enumerate() {
            if o.level > MAX_OUTLINE_LEVEL {
                return Err(invalid(format!(
                    "summary.outline[{i}].level must be 0..={MAX_OUTLINE_LEVEL}"
                )));
            }
        }
        if let Some(sel) = &self.selection {
            if sel.doc_type != SELECTION_DOC_TYPE {
                return Err(invalid(format!(
                    "selection.doc_type must be \"{SELECTION_DOC_TYPE}\""
                )));
            }
            if sel.text.trim().is_empty() || sel.text.chars().count() > MAX_SELECTION_CHARS {
                return Err(invalid(format!(
                    "selection.text must be 1..={MAX_SELECTION_CHARS} characters"
                )));
            }
        }
        let mut tab_ids = HashSet::new();
        for (i, t) in self.tabs.iter().enumerate() {
            if t.doc_type != TAB_DOC_TYPE {
                return Err(invalid(format!(
                    "tabs[{i}].doc_type must be \"{TAB_DOC_TYPE}\""
                )));
            }
            if t.tab_id.is_empty() || t.tab_id.len() > MAX_HANDLE_LEN || !tab_ids.insert(&t.tab_id)
            {
                return Err(invalid(format!(
                    "tabs[{i}].tab_id must be 1..={MAX_HANDLE_LEN} bytes and unique"
                )));
            }
            if t.text.chars().count() > MAX_TAB_CHARS {
                return Err(invalid(format!(
                    "tabs[{i}].text has more than {MAX_TAB_CHARS} characters"
                )));
            }
        }
        let count = self.chunks.len();
        for (i, c) in self.chunks.iter().enumerate() {
            if c.doc_type != CHUNK_DOC_TYPE {
                return Err(invalid(format!(
                    "chunks[{i}].doc_type must be \"{CHUNK_DOC_TYPE}\""
                )));
            }
            if c.chunk_index as usize != i + 1 {
                return Err(invalid(format!(
                    "chunks[{i}].chunk_index must be {} (chunks are 1-based and ordered)",
                    i + 1
                )));
            }
            if c.chunk_count as usize != count {
                return Err(invalid(format!(
                    "chunks[{i}].chunk_count must be {count}, the number of chunk documents"
                )));
            }
        }
        Ok(())
    }

    /// The frames of the page whose text the extension could not read.
    pub fn unread_frames(&self) -> impl Iterator<Item = &Frame> {
        self.summary.frames.iter().filter(|f| !f.read)
    }

    /// Looks up an element by its handle.
    pub fn element(&self, handle_id: &str) -> Option<&Element> {
        self.summary
            .elements
            .iter()
            .find(|e| e.handle_id == handle_id)
    }

    /// Every handle the page exposed (elements, primary, items, comments).
    pub fn handles(&self) -> HashSet<&str> {
        let s = &self.summary;
        let mut out: HashSet<&str> = s.elements.iter().map(|e| e.handle_id.as_str()).collect();
        out.extend(s.primary.iter().filter_map(|p| p.handle_id.as_deref()));
        out.extend(s.items.iter().filter_map(|i| i.handle_id.as_deref()));
        out.extend(s.comments.iter().filter_map(|c| c.handle_id.as_deref()));
        out
    }

    /// Every URL the page offered as a link target (elements, items,
    /// discussions, plus the page itself).
    pub fn link_urls(&self) -> Vec<&str> {
        let s = &self.summary;
        let mut out = vec![s.url.as_str()];
        out.extend(s.elements.iter().filter_map(|e| e.href.as_deref()));
        out.extend(s.items.iter().filter_map(|i| i.url.as_deref()));
        out.extend(s.top_discussions.iter().filter_map(|d| d.url.as_deref()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn summary() -> serde_json::Value {
        json!({
            "doc_type": SUMMARY_DOC_TYPE,
            "url": "https://example.com/a",
            "title": "A",
            "text": "H1: A\nBody.",
            "elements": [{"handle_id": "laika-1", "role": "link", "text": "More", "href": "https://example.com/b"}]
        })
    }

    #[test]
    fn accepts_seed_shape_with_chunks() {
        let obs = Observation::from_value(json!({
            "summary": summary(),
            "chunks": [
                {"doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "chunk_index": 1, "chunk_count": 2, "text": "one"},
                {"doc_type": CHUNK_DOC_TYPE, "url": "https://example.com/a", "chunk_index": 2, "chunk_count": 2, "text": "two"}
            ]
        }));
        let obs = obs.map_err(|e| e.to_string());
        assert_eq!(obs.as_ref().map(|o| o.chunks.len()), Ok(2));
        let obs = obs.unwrap_or_default();
        assert!(obs.handles().contains("laika-1"));
        assert_eq!(
            obs.link_urls(),
            vec!["https://example.com/a", "https://example.com/b"]
        );
    }

    #[test]
    fn rejects_wrong_doc_type_unknown_fields_and_bad_chunk_order() {
        let mut bad = summary();
        bad["doc_type"] = json!("web.observation.summary.v2");
        let e = Observation::from_value(json!({"summary": bad})).err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::InvalidObservation));

        let mut extra = summary();
        extra["html"] = json!("<script>");
        assert!(Observation::from_value(json!({"summary": extra})).is_err());

        let e = Observation::from_value(json!({
            "summary": summary(),
            "chunks": [{"doc_type": CHUNK_DOC_TYPE, "url": "u", "chunk_index": 2, "chunk_count": 1, "text": "x"}]
        }))
        .err()
        .map(|e| e.message)
        .unwrap_or_default();
        assert!(e.contains("1-based"), "{e}");
    }

    #[test]
    fn structured_facts_are_optional_bounded_and_quoted_as_structured_data() {
        // Without the field (an older extension) the observation stands.
        let obs = Observation::from_value(json!({"summary": summary()}));
        assert_eq!(obs.map(|o| o.summary.structured.len()).ok(), Some(0));

        let mut s = summary();
        s["structured"] = json!([{"item": 0, "item_type": "Product", "property": "offers.price", "value": "19.99"}]);
        let obs = Observation::from_value(json!({"summary": s})).unwrap_or_default();
        let fact = &obs.summary.structured[0];
        assert_eq!(
            fact.quote(),
            "Structured data (Product): offers.price: 19.99"
        );

        let bad = [
            json!([{"property": "", "value": "x"}]),
            json!([{"property": "name\u{7}", "value": "x"}]),
            json!([{"property": "p".repeat(MAX_STRUCTURED_NAME_BYTES + 1), "value": "x"}]),
            json!([{"property": "name", "value": "v".repeat(MAX_STRUCTURED_VALUE_CHARS + 1)}]),
            json!([{"property": "name", "value": "x", "script": "alert(1)"}]),
            Value::Array(vec![
                json!({"property": "name", "value": "x"});
                MAX_STRUCTURED + 1
            ]),
        ];
        for facts in bad {
            let mut s = summary();
            s["structured"] = facts;
            let e = Observation::from_value(json!({"summary": s})).err();
            assert_eq!(e.map(|e| e.code), Some(ErrorCode::InvalidObservation));
        }
    }

    #[test]
    fn rejects_duplicate_handles() {
        let mut s = summary();
        s["elements"] = json!([{"handle_id": "h"}, {"handle_id": "h"}]);
        let e = Observation::from_value(json!({"summary": s}))
            .err()
            .map(|e| e.message);
        assert!(e.unwrap_or_default().contains("not unique"));
    }
}

//! What every stored kind looks like once secrets are scrubbed (saved
//! prompts take [`text`] for their name and text): the one
//! place the store's writes take their values from, so no table is written
//! from a value that has not passed through the same detectors
//! (`laika_core::redact::scrub_text` for free text, `scrub_value` for JSON,
//! `strip_url_secrets` for the URLs a row is known by).
//!
//! Whatever the caller asked for (full packets, an artifact saved with
//! `redaction: "none"`), secrets are never written: those options keep page
//! content, never keys, tokens or disclosed passwords.

use laika_core::redact::{scrub_text, scrub_value, strip_url_secrets};
use laika_protocol::collection::{Artifact, Collection, Source};
use serde::Serialize;
use serde_json::Value;

/// Free text as stored.
pub(super) fn text(text: &str) -> String {
    scrub_text(text).into_owned()
}

/// `value` as stored JSON: every string scrubbed (text nodes of one run
/// together, see `scrub_value`).
pub(super) fn json<T: Serialize>(value: &T) -> serde_json::Result<String> {
    let mut json = serde_json::to_value(value)?;
    scrub_value(&mut json);
    serde_json::to_string(&json)
}

/// A JSON value as stored.
pub(super) fn value(value: &Value) -> Value {
    let mut out = value.clone();
    scrub_value(&mut out);
    out
}

/// A page URL as stored: no credentials and no secret-shaped parameter.
/// Public so that a caller looking a stored URL up spells it the same way.
pub fn url(url: &str) -> String {
    strip_url_secrets(url)
}

pub(super) fn collection(c: &Collection) -> Collection {
    Collection {
        title: text(&c.title),
        tags: c.tags.iter().map(|t| text(t)).collect(),
        ..c.clone()
    }
}

pub(super) fn source(s: &Source) -> Source {
    let mut out = s.clone();
    out.url = s.url.as_deref().map(url);
    out.title = text(&s.title);
    out.outlet = s.outlet.as_deref().map(text);
    out.error = s.error.as_deref().map(text);
    out.text = text(&s.text);
    for entry in &mut out.outline {
        entry.text = text(&entry.text);
    }
    for link in &mut out.extracted_links {
        link.url = url(&link.url);
        link.text = text(&link.text);
        link.context = text(&link.context);
    }
    out
}

pub(super) fn artifact(a: &Artifact) -> Artifact {
    Artifact {
        title: text(&a.title),
        text: a.text.as_deref().map(text),
        doc: a.doc.as_ref().map(value),
        tags: a.tags.iter().map(|t| text(t)).collect(),
        ..a.clone()
    }
}

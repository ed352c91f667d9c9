//! Runs attack corpora through the render sanitizer and the export HTML.
//!
//! Every payload of `<corpora>/xss/dompurify-fixtures.json` (and of any extra
//! file listed in `LAIKA_XSS_PAYLOADS`, colon-separated, same `[{"payload":
//! …}]` format) is put into every string field of a render, as node types,
//! field names and field values. The sanitized render must hold only the render
//! grammar's nodes and fields with http/https/mailto hrefs, and `to_html` must
//! hold only the export subset's tags, `href`/`rel` on links, and no
//! script-bearing URL. Every blns string must survive as text, minus the
//! control and bidi characters, and be recoverable from the HTML.
//!
//! Corpora are found at `$LAIKA_CORPORA`, else
//! `<CARGO_MANIFEST_DIR>/../../../shared/corpora`; when missing the test skips
//! unless `LAIKA_REQUIRE_CORPORA=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test or a bench may panic: a failed check is a panic

use laika_core::render::html::EXPORT_TAGS;
use laika_core::render::{plain_text, sanitize, to_html, RenderLimits};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

const BANNED_TAGS: &[&str] = &[
    "script", "iframe", "object", "embed", "svg", "math", "style", "img", "form", "input", "base",
    "meta", "link",
];

fn corpora_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("LAIKA_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora"));
    if dir.join("xss").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("LAIKA_REQUIRE_CORPORA").as_deref() != Ok("1"),
        "corpora not found at {} and LAIKA_REQUIRE_CORPORA=1",
        dir.display()
    );
    eprintln!("skipped: corpora not found at {}", dir.display());
    None
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// The `payload` values of a `[{"payload": …}]` file.
fn payloads_in(path: &Path) -> Vec<Value> {
    let Value::Array(entries) = read_json(path) else {
        panic!("{} is not a JSON array", path.display());
    };
    entries
        .into_iter()
        .map(|e| {
            e.get("payload")
                .cloned()
                .unwrap_or_else(|| panic!("{}: entry without payload: {e}", path.display()))
        })
        .collect()
}

fn extra_payload_files() -> Vec<PathBuf> {
    std::env::var("LAIKA_XSS_PAYLOADS")
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .collect()
}

/// What sanitizing must leave of a text, computed without the library.
fn expected_clean(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            let cp = u32::from(c);
            let c0 = cp < 0x20 && c != '\n' && c != '\t';
            let del_c1 = (0x7F..=0x9F).contains(&cp);
            let bidi = (0x202A..=0x202E).contains(&cp) || (0x2066..=0x2069).contains(&cp);
            !c0 && !del_c1 && !bidi
        })
        .collect()
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

fn para(children: Vec<Value>) -> Value {
    json!({ "type": "paragraph", "children": children })
}

fn doc(children: Vec<Value>) -> Value {
    json!({ "type": "doc", "children": children })
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// Renders carrying the payload `p` (and the raw JSON value `raw`) in every
/// position. The flag says whether `p` must survive as one text of the result.
fn placements(p: &str, raw: &Value) -> Vec<(&'static str, bool, Value)> {
    let ok = "https://example.com/";
    let cell =
        |header: bool| json!({ "type": "table_cell", "header": header, "children": [text(p)] });
    vec![
        ("text.text", true, doc(vec![para(vec![text(p)])])),
        (
            "text.text raw",
            false,
            doc(vec![para(vec![json!({ "type": "text", "text": raw })])]),
        ),
        (
            "link.href",
            false,
            doc(vec![para(vec![
                json!({ "type": "link", "href": p, "children": [text("x")] }),
            ])]),
        ),
        (
            "link.href raw",
            false,
            doc(vec![para(vec![
                json!({ "type": "link", "href": raw, "children": [text("x")] }),
            ])]),
        ),
        (
            "link.href prefixed",
            false,
            doc(vec![para(vec![
                json!({ "type": "link", "href": format!("javascript:{p}"), "children": [text("x")] }),
            ])]),
        ),
        (
            "link.text",
            true,
            doc(vec![para(vec![
                json!({ "type": "link", "href": ok, "children": [text(p)] }),
            ])]),
        ),
        (
            "heading.text",
            true,
            doc(vec![
                json!({ "type": "heading", "level": 2, "children": [text(p)] }),
            ]),
        ),
        (
            "heading.level",
            false,
            doc(vec![
                json!({ "type": "heading", "level": p, "children": [text("h")] }),
            ]),
        ),
        (
            "code_block.text",
            true,
            doc(vec![json!({ "type": "code_block", "text": p })]),
        ),
        (
            "code_block.language",
            false,
            doc(vec![
                json!({ "type": "code_block", "language": p, "text": "x" }),
            ]),
        ),
        (
            "table_cell.text",
            true,
            doc(vec![json!({ "type": "table", "rows": [
            { "type": "table_row", "cells": [cell(true)] },
            { "type": "table_row", "cells": [cell(false)] }
        ] })]),
        ),
        (
            "table_cell.header",
            false,
            doc(vec![json!({ "type": "table", "rows": [
            { "type": "table_row", "cells": [{ "type": "table_cell", "header": p, "children": [text("c")] }] }
        ] })]),
        ),
        (
            "list_item.text",
            true,
            doc(vec![json!({ "type": "list", "ordered": false, "items": [
            { "type": "list_item", "children": [para(vec![text(p)])] },
            { "type": "list_item", "children": [text(p)] }
        ] })]),
        ),
        (
            "list.ordered",
            false,
            doc(vec![json!({ "type": "list", "ordered": p, "items": [
            { "type": "list_item", "children": [para(vec![text("i")])] }
        ] })]),
        ),
        (
            "blockquote.text",
            true,
            doc(vec![json!({ "type": "blockquote", "children": [text(p)] })]),
        ),
        (
            "node.type block",
            false,
            doc(vec![
                json!({ "type": p, "text": p, "href": p, "children": [text("c")] }),
            ]),
        ),
        (
            "node.type inline",
            false,
            doc(vec![para(vec![json!({ "type": p, "text": p, "href": p })])]),
        ),
        (
            "field.name",
            false,
            doc(vec![obj(vec![
                ("type", json!("paragraph")),
                (p, json!(p)),
                (
                    "children",
                    json!([obj(vec![
                        ("type", json!("text")),
                        ("text", json!("x")),
                        (p, raw.clone())
                    ])]),
                ),
            ])]),
        ),
        (
            "field.name link",
            false,
            doc(vec![para(vec![obj(vec![
                ("type", json!("link")),
                ("href", json!(ok)),
                (p, json!(p)),
                ("children", json!([text("x")])),
            ])])]),
        ),
        (
            "field.value",
            false,
            doc(vec![
                json!({ "type": "paragraph", "onclick": p, "style": raw, "children": [text("x")] }),
            ]),
        ),
        (
            "doc.children",
            false,
            json!({ "type": "doc", "children": raw }),
        ),
        ("root string", false, Value::String(p.to_string())),
        ("root raw", false, raw.clone()),
        (
            "root type",
            false,
            json!({ "type": p, "children": [para(vec![text("x")])] }),
        ),
    ]
}

fn keys_ok(node: &Map<String, Value>, required: &[&str], optional: &[&str], ctx: &str) {
    for k in required {
        assert!(node.contains_key(*k), "{ctx}: missing {k} in {node:?}");
    }
    for k in node.keys() {
        assert!(
            required.contains(&k.as_str()) || optional.contains(&k.as_str()),
            "{ctx}: field {k:?} outside the allowlist in {node:?}"
        );
    }
}

fn href_ok(href: &str) -> Result<(), String> {
    let lower = href.to_ascii_lowercase();
    if !["http://", "https://", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        return Err(format!("href {href:?} has a forbidden scheme"));
    }
    let url = url::Url::parse(href).map_err(|e| format!("href {href:?}: {e}"))?;
    if !["http", "https", "mailto"].contains(&url.scheme()) {
        return Err(format!("href {href:?} parses to scheme {}", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("credentials in href {href:?}"));
    }
    Ok(())
}

fn text_ok(t: &Value, ctx: &str) -> String {
    let s = t
        .as_str()
        .unwrap_or_else(|| panic!("{ctx}: text not a string: {t}"));
    assert!(!s.is_empty(), "{ctx}: empty text");
    assert_eq!(
        expected_clean(s),
        s,
        "{ctx}: control or bidi character left"
    );
    s.to_string()
}

fn array<'v>(node: &'v Map<String, Value>, key: &str, ctx: &str) -> &'v Vec<Value> {
    node.get(key)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{ctx}: {key} not an array"))
}

/// Checks the sanitized render against docs/llmcp.md#render-document; returns its texts.
fn check_doc(v: &Value, ctx: &str) -> Vec<String> {
    let node = v
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: root not an object"));
    assert_eq!(node.get("type"), Some(&json!("doc")), "{ctx}");
    keys_ok(node, &["type", "children"], &[], ctx);
    let mut texts = Vec::new();
    for child in array(node, "children", ctx) {
        check_block(child, ctx, &mut texts);
    }
    texts
}

fn check_block(v: &Value, ctx: &str, texts: &mut Vec<String>) {
    let node = v
        .as_object()
        .unwrap_or_else(|| panic!("{ctx}: block not an object"));
    let t = node.get("type").and_then(Value::as_str).unwrap_or_default();
    match t {
        "heading" => {
            keys_ok(node, &["type", "level", "children"], &[], ctx);
            let level = node.get("level").and_then(Value::as_u64);
            assert!(matches!(level, Some(1..=6)), "{ctx}: level {level:?}");
            check_inlines(array(node, "children", ctx), false, ctx, texts);
        }
        "paragraph" => {
            keys_ok(node, &["type", "children"], &[], ctx);
            check_inlines(array(node, "children", ctx), false, ctx, texts);
        }
        "list" => {
            keys_ok(node, &["type", "ordered", "items"], &[], ctx);
            assert!(node.get("ordered").is_some_and(Value::is_boolean), "{ctx}");
            for item in array(node, "items", ctx) {
                let item = item
                    .as_object()
                    .unwrap_or_else(|| panic!("{ctx}: item not an object"));
                assert_eq!(item.get("type"), Some(&json!("list_item")), "{ctx}");
                keys_ok(item, &["type", "children"], &[], ctx);
                for child in array(item, "children", ctx) {
                    check_block(child, ctx, texts);
                }
            }
        }
        "blockquote" => {
            keys_ok(node, &["type", "children"], &[], ctx);
            for child in array(node, "children", ctx) {
                check_block(child, ctx, texts);
            }
        }
        "code_block" => {
            keys_ok(node, &["type", "text"], &["language"], ctx);
            texts.push(text_ok(&node["text"], ctx));
            if let Some(lang) = node.get("language") {
                let lang = lang
                    .as_str()
                    .unwrap_or_else(|| panic!("{ctx}: language {lang}"));
                assert!(
                    !lang.is_empty()
                        && lang
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "+-#._".contains(c)),
                    "{ctx}: language {lang:?}"
                );
            }
        }
        "table" => {
            keys_ok(node, &["type", "rows"], &[], ctx);
            for row in array(node, "rows", ctx) {
                let row = row
                    .as_object()
                    .unwrap_or_else(|| panic!("{ctx}: row not an object"));
                assert_eq!(row.get("type"), Some(&json!("table_row")), "{ctx}");
                keys_ok(row, &["type", "cells"], &[], ctx);
                for cell in array(row, "cells", ctx) {
                    let cell = cell
                        .as_object()
                        .unwrap_or_else(|| panic!("{ctx}: cell not an object"));
                    assert_eq!(cell.get("type"), Some(&json!("table_cell")), "{ctx}");
                    keys_ok(cell, &["type", "header", "children"], &[], ctx);
                    assert!(cell.get("header").is_some_and(Value::is_boolean), "{ctx}");
                    check_inlines(array(cell, "children", ctx), true, ctx, texts);
                }
            }
        }
        other => panic!("{ctx}: block type {other:?} not allowed"),
    }
}

fn check_inlines(nodes: &[Value], allow_empty: bool, ctx: &str, texts: &mut Vec<String>) {
    assert!(
        allow_empty || !nodes.is_empty(),
        "{ctx}: empty inline container"
    );
    for v in nodes {
        let node = v
            .as_object()
            .unwrap_or_else(|| panic!("{ctx}: inline not an object"));
        match node.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                keys_ok(node, &["type", "text"], &[], ctx);
                texts.push(text_ok(&node["text"], ctx));
            }
            "link" => {
                keys_ok(node, &["type", "href", "children"], &[], ctx);
                href_ok(node["href"].as_str().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                let children = array(node, "children", ctx);
                assert!(!children.is_empty(), "{ctx}: empty link");
                for child in children {
                    let child = child
                        .as_object()
                        .unwrap_or_else(|| panic!("{ctx}: link child"));
                    assert_eq!(
                        child.get("type"),
                        Some(&json!("text")),
                        "{ctx}: link child {child:?}"
                    );
                    keys_ok(child, &["type", "text"], &[], ctx);
                    texts.push(text_ok(&child["text"], ctx));
                }
            }
            other => panic!("{ctx}: inline type {other:?} not allowed"),
        }
    }
}

/// Decodes the entities an HTML serializer emits; anything else is a bug.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        let semi = tail.find(';').unwrap_or_else(|| panic!("bare & in {s:?}"));
        let entity = &tail[1..semi];
        let decoded = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => '\u{a0}',
            _ => {
                let code = if let Some(hex) = entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                {
                    u32::from_str_radix(hex, 16).ok()
                } else {
                    entity.strip_prefix('#').and_then(|d| d.parse().ok())
                };
                code.and_then(char::from_u32)
                    .unwrap_or_else(|| panic!("unknown entity &{entity}; in {s:?}"))
            }
        };
        out.push(decoded);
        rest = &tail[semi + 1..];
    }
    out.push_str(rest);
    out
}

struct Tag {
    name: String,
    closing: bool,
    attrs: Vec<(String, String)>,
}

/// Splits serialized HTML into its tags. Text never holds a raw `<` (the
/// serializer escapes it), so every `<` must open a well-formed tag.
fn scan_tags(html: &str) -> Result<Vec<Tag>, String> {
    let b = html.as_bytes();
    let mut i = 0;
    let mut tags = Vec::new();
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        i += 1;
        let closing = b.get(i) == Some(&b'/');
        if closing {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let name = html[start..i].to_ascii_lowercase();
        if name.is_empty() {
            return Err(format!(
                "raw '<' not opening a tag at byte {start} in {html:?}"
            ));
        }
        let mut attrs = Vec::new();
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            match b.get(i) {
                None => return Err(format!("unterminated tag in {html:?}")),
                Some(b'>') => {
                    i += 1;
                    break;
                }
                Some(b'/') => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let s = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/')
            {
                i += 1;
            }
            let attr = html[s..i].to_ascii_lowercase();
            let mut value = String::new();
            if b.get(i) == Some(&b'=') {
                i += 1;
                if let Some(&q) = b.get(i).filter(|q| matches!(q, b'"' | b'\'')) {
                    i += 1;
                    let s = i;
                    while i < b.len() && b[i] != q {
                        i += 1;
                    }
                    value = unescape(&html[s..i]);
                    i += 1;
                } else {
                    let s = i;
                    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                        i += 1;
                    }
                    value = unescape(&html[s..i]);
                }
            }
            attrs.push((attr, value));
        }
        tags.push(Tag {
            name,
            closing,
            attrs,
        });
    }
    Ok(tags)
}

/// Checks export HTML; `Err` says what is unsafe in it.
fn check_html(html: &str) -> Result<(), String> {
    let lower = html.to_ascii_lowercase();
    for banned in BANNED_TAGS {
        if lower.contains(&format!("<{banned}")) {
            return Err(format!("<{banned} in {html:?}"));
        }
    }
    if lower.contains("<!") {
        return Err(format!("comment or doctype in {html:?}"));
    }
    for tag in scan_tags(html)? {
        if !EXPORT_TAGS.contains(&tag.name.as_str()) {
            return Err(format!("tag <{}> in {html:?}", tag.name));
        }
        if tag.closing && !tag.attrs.is_empty() {
            return Err(format!("attributes on a closing tag in {html:?}"));
        }
        for (name, value) in &tag.attrs {
            if name.starts_with("on") {
                return Err(format!("event handler {name} in {html:?}"));
            }
            if name == "style" {
                return Err(format!("style attribute in {html:?}"));
            }
            let squashed: String = value
                .chars()
                .filter(|c| !c.is_whitespace() && !c.is_control())
                .collect::<String>()
                .to_ascii_lowercase();
            for scheme in ["javascript:", "vbscript:", "data:"] {
                if squashed.starts_with(scheme) {
                    return Err(format!("{scheme} URL in {name}={value:?}"));
                }
            }
            match (tag.name.as_str(), name.as_str()) {
                ("a", "href") => href_ok(value)?,
                ("a", "rel") if value == "noopener noreferrer nofollow" => {}
                _ => {
                    return Err(format!(
                        "attribute {name}={value:?} on <{}> in {html:?}",
                        tag.name
                    ))
                }
            }
        }
    }
    Ok(())
}

fn run_payloads(payloads: &[Value], source: &str) {
    let limits = RenderLimits::default();
    for (n, raw) in payloads.iter().enumerate() {
        let p = match raw {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let want = expected_clean(&p);
        for (place, survives, render) in placements(&p, raw) {
            let ctx = format!("{source} #{n} in {place}");
            let clean = sanitize(&render, &limits).render.to_value();
            let texts = check_doc(&clean, &ctx);
            if survives && !want.is_empty() && want.chars().count() <= limits.max_text_chars {
                assert!(texts.contains(&want), "{ctx}: payload text lost: {texts:?}");
            }
            for html in [to_html(&render), to_html(&clean)] {
                check_html(&html).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            }
            let _ = plain_text(&render);
        }
    }
}

#[test]
fn xss_payloads_in_every_field() {
    let mut sources: Vec<PathBuf> = Vec::new();
    if let Some(dir) = corpora_dir() {
        sources.push(dir.join("xss/dompurify-fixtures.json"));
    }
    sources.extend(extra_payload_files());
    for path in sources {
        let payloads = payloads_in(&path);
        assert!(!payloads.is_empty(), "{} has no payloads", path.display());
        run_payloads(&payloads, &path.display().to_string());
        eprintln!("{}: {} payloads checked", path.display(), payloads.len());
    }
}

#[test]
fn blns_strings_survive_as_text() {
    let Some(dir) = corpora_dir() else {
        return;
    };
    let path = dir.join("xss/blns.json");
    let Value::Array(strings) = read_json(&path) else {
        panic!("{} is not an array", path.display());
    };
    assert!(strings.len() > 100, "blns too small");
    for (n, s) in strings.iter().enumerate() {
        let s = s
            .as_str()
            .unwrap_or_else(|| panic!("blns #{n} not a string"));
        let want = expected_clean(s);
        let out = sanitize(&doc(vec![para(vec![text(s)])]), &RenderLimits::default());
        let clean = out.render.to_value();
        if want.is_empty() {
            assert_eq!(clean, doc(vec![]), "blns #{n}");
            continue;
        }
        assert_eq!(clean, doc(vec![para(vec![text(&want)])]), "blns #{n}");
        assert_eq!(
            out.dropped.is_empty(),
            want == s,
            "blns #{n}: {:?}",
            out.dropped
        );
        let html = to_html(&clean);
        let inner = html
            .strip_prefix("<p>")
            .and_then(|h| h.strip_suffix("</p>\n"))
            .unwrap_or_else(|| panic!("blns #{n}: unexpected html {html:?}"));
        assert!(!inner.contains('<'), "blns #{n}: unescaped < in {html:?}");
        assert_eq!(unescape(inner), want, "blns #{n}");
        assert_eq!(plain_text(&clean), want, "blns #{n}");
    }
}

#[test]
fn checker_catches_unsafe_html() {
    // The HTML checks above must be able to fail.
    for bad in [
        "<p onclick=\"x\">a</p>",
        "<a href=\"javascript:alert(1)\">a</a>",
        "<a href=\" java script:x\">a</a>",
        "<p style=\"x\">a</p>",
        "<img src=x>",
        "<p>a < b</p>",
        "<a href=\"https://e.example/\" title=\"t\">a</a>",
    ] {
        assert!(check_html(bad).is_err(), "{bad}");
    }
    let good = "<p>a &lt; b</p>\n<a href=\"https://e.example/\" rel=\"noopener noreferrer nofollow\">x</a>";
    assert_eq!(check_html(good), Ok(()));
}

//! The fields a `web.extract` request asks for: the names in its
//! `task.args.fields` or, without any, the known field types the user's
//! message names. The answer schema pins them (`decoding`) for every
//! runtime; the offline builtin runtime looks for the same fields.

use crate::text::prefix_chars;
use laika_protocol::llmcp::RequestPacket;
use serde_json::Value;

const MAX_FIELDS: usize = 32;
const MAX_FIELD_CHARS: usize = 80;

/// What a field's value is, by the name it is asked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Price,
    Sku,
    Availability,
    Author,
    Date,
    Rating,
    Other,
}

/// Field types with the names a user may ask for them by.
pub const FIELD_NAMES: &[(FieldType, &[&str])] = &[
    (
        FieldType::Price,
        &["price", "prices", "pricing", "cost", "amount"],
    ),
    (
        FieldType::Sku,
        &[
            "sku",
            "item number",
            "model number",
            "part number",
            "product code",
            "product id",
            "mpn",
            "upc",
            "model",
        ],
    ),
    (
        FieldType::Availability,
        &[
            "availability",
            "stock",
            "in stock",
            "stock status",
            "available",
        ],
    ),
    (
        FieldType::Author,
        &["author", "authors", "byline", "writer", "by"],
    ),
    (
        FieldType::Date,
        &[
            "date",
            "published",
            "publication date",
            "published date",
            "posted",
            "date published",
        ],
    ),
    (
        FieldType::Rating,
        &[
            "rating",
            "ratings",
            "stars",
            "rated",
            "score",
            "review score",
        ],
    ),
];

/// A field name as matched: lower case, `_` and `-` as spaces, single-spaced.
pub fn normalize_name(name: &str) -> String {
    name.to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The field names from `task.args.fields` (array, object keys, or a
/// comma-separated string); else the known field names the user mentioned.
pub fn requested_fields(packet: &RequestPacket) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    match packet.input.task.args.get("fields") {
        Some(Value::Array(a)) => {
            for v in a {
                match v {
                    Value::String(s) => names.push(s.clone()),
                    Value::Object(o) => {
                        names.extend(o.get("name").and_then(Value::as_str).map(str::to_string))
                    }
                    _ => {}
                }
            }
        }
        Some(Value::Object(o)) => names.extend(o.keys().cloned()),
        Some(Value::String(s)) => {
            names.extend(
                s.replace(" and ", ",")
                    .split([',', ';', '\n'])
                    .map(str::to_string),
            );
        }
        _ => {}
    }
    if names.iter().all(|n| n.trim().is_empty()) {
        let tokens = normalize_name(&packet.input.user_message.text);
        let words: Vec<&str> = tokens
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut found: Vec<(usize, &str)> = Vec::new();
        for (_, aliases) in FIELD_NAMES {
            let canonical = aliases.first().copied().unwrap_or("");
            if let Some(pos) = words.iter().position(|w| aliases.contains(w) && *w != "by") {
                found.push((pos, canonical));
            }
        }
        found.sort_unstable();
        names = found.into_iter().map(|(_, n)| n.to_string()).collect();
    }
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let n = prefix_chars(n.trim(), MAX_FIELD_CHARS).to_string();
        if !n.is_empty()
            && !out.iter().any(|o| o.eq_ignore_ascii_case(&n))
            && out.len() < MAX_FIELDS
        {
            out.push(n);
        }
    }
    out
}

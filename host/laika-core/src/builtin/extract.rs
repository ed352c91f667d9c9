//! `web.extract`: each requested field looked up in the page's lines, by
//! label first and by its typed shape last; a table of what was found, with
//! the quoted source line as citation.

use super::answer;
use super::entity;
use super::fields::{
    char_at, find_date, find_phrase, find_price, find_rating, normalize_name, skip_spaces, tidy,
    validate, value_end, word_hits, Field, FieldType, AVAILABILITY_PHRASES, FIELD_TYPES,
    MAX_VALUE_BYTES,
};
use super::rank::{self, Index, Kind, Page, Scope};
use super::{gate_notice, gate_reasons, paragraph, table, visible_bytes, Reply, SPARSE_BYTES};
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::llmcp::{Citation, RequestPacket};
use crate::text::prefix_chars;
use serde_json::{Map, Value};
use std::ops::Range;

const MAX_FIELDS: usize = 32;
const MAX_FIELD_CHARS: usize = 80;
/// How many of the best-matching sentences are searched for a field's value.
const PROSE_CANDIDATES: usize = 30;
/// A sentence must hold this share of the field name's words.
const MIN_PROSE_COVERAGE: f64 = 0.5;

/// The field names from `task.args.fields` (array, object keys, or a
/// comma-separated string); else the known field names the user mentioned.
pub(crate) fn requested_fields(packet: &RequestPacket) -> Vec<String> {
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
        for (_, aliases, _) in FIELD_TYPES {
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

/// A found value: the block it is in, the quoted source span and the value
/// span (byte ranges into the block text).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    block: usize,
    quote: Range<usize>,
    value: Range<usize>,
}

/// The page's lines, with ASCII-lowercased copies for matching.
struct Lines<'a> {
    page: &'a Page,
    lower: Vec<String>,
}

impl Lines<'_> {
    fn text(&self, b: usize) -> &str {
        self.page.blocks.get(b).map_or("", |x| x.text.as_str())
    }

    fn lower(&self, b: usize) -> &str {
        self.lower.get(b).map_or("", String::as_str)
    }

    /// Block `b + 1` when it is in the same field as `b`.
    fn next_in_source(&self, b: usize) -> Option<usize> {
        let blocks = &self.page.blocks;
        (blocks.get(b + 1)?.source == blocks.get(b)?.source).then_some(b + 1)
    }

    fn whole(&self, field: &Field, b: usize, strict: bool) -> Option<Found> {
        let text = self.text(b);
        let value = validate(field.kind, text, self.lower(b), 0..text.len(), strict)?;
        Some(Found {
            block: b,
            quote: value.clone(),
            value,
        })
    }
}

/// `| a | b |` cells of a line: byte ranges of each cell's content.
fn cells(s: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in s.match_indices('|').chain(std::iter::once((s.len(), ""))) {
        let r = tidy(s, start..i);
        start = i + 1;
        out.push(r);
    }
    if out.first().is_some_and(|r| r.is_empty()) {
        out.remove(0);
    }
    if out.last().is_some_and(|r| r.is_empty()) {
        out.pop();
    }
    out
}

/// "Label: value", "Label — value", "Label | value", "Label = value".
fn labelled(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    for label in &field.labels {
        for at in word_hits(lower, label) {
            let after = skip_spaces(text, at + label.len());
            let Some(sep) = char_at(text, after) else {
                continue;
            };
            let spaced = char_at(text, after + sep.len_utf8()).is_some_and(char::is_whitespace);
            let ok = matches!(sep, ':' | '：' | '|' | '—' | '–' | '=') || (sep == '-' && spaced);
            // A row of three or more cells is a column table, read by
            // `label_then_value`; only "label | value" rows pair up here.
            if !ok || (sep == '|' && cells(text).len() >= 3) {
                continue;
            }
            let start = skip_spaces(text, after + sep.len_utf8());
            let end = value_end(text, start);
            if let Some(value) = validate(field.kind, text, lower, start..end, false) {
                return Some(Found {
                    block: b,
                    quote: at..value.end,
                    value,
                });
            }
        }
    }
    None
}

/// A label alone on its line (or a `Term:`, or a table header cell) with the
/// value on the next line.
fn label_then_value(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let lower = lines.lower(b);
    let bare = lower.trim_end_matches([':', ' ', '?']);
    let next = lines.next_in_source(b)?;
    if field.labels.iter().any(|l| l == bare) && lines.text(next).len() <= 120 {
        let kind = lines.page.blocks.get(b).map(|x| x.kind);
        let next_kind = lines.page.blocks.get(next).map(|x| x.kind);
        if kind != Some(Kind::Term) || next_kind == Some(Kind::Definition) {
            return lines.whole(field, next, false);
        }
    }
    // Header row "Price | SKU" over a row "$5 | A1".
    let head = cells(lines.text(b));
    let row = cells(lines.text(next));
    if head.len() >= 2 && head.len() == row.len() {
        for (h, v) in head.iter().zip(&row) {
            let name = lower.get(h.clone()).unwrap_or("");
            if field.labels.iter().any(|l| l == name) {
                let text = lines.text(next);
                let value = validate(field.kind, text, lines.lower(next), v.clone(), false)?;
                return Some(Found {
                    block: next,
                    quote: value.clone(),
                    value,
                });
            }
        }
    }
    None
}

/// "Availability In stock" on a short line.
fn label_space_value(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    if text.len() > 80 {
        return None;
    }
    let label = field.labels.iter().find(|l| {
        lower.starts_with(l.as_str()) && char_at(text, l.len()).is_some_and(char::is_whitespace)
    })?;
    let start = skip_spaces(text, label.len());
    let value = validate(field.kind, text, lower, start..text.len(), true)?;
    Some(Found {
        block: b,
        quote: 0..value.end,
        value,
    })
}

/// A typed value anywhere, without a label: a price, a stock phrase, a
/// rating, a date, a "By Name" byline.
fn unlabelled(lines: &Lines, field: &Field, b: usize) -> Option<Found> {
    let (text, lower) = (lines.text(b), lines.lower(b));
    let value = match field.kind {
        FieldType::Price => find_price(text)?,
        FieldType::Availability => find_phrase(lower, AVAILABILITY_PHRASES)?,
        FieldType::Rating => find_rating(text)?,
        FieldType::Date => find_date(text)?,
        FieldType::Author => {
            let rest = text
                .strip_prefix("By ")
                .or_else(|| text.strip_prefix("by "))?;
            let name: Vec<&str> = rest
                .split_whitespace()
                .take_while(|w| w.starts_with(char::is_uppercase))
                .take(4)
                .collect();
            let last = name.last()?;
            let end = 3 + rest.find(last)? + last.len();
            tidy(text, 3..end)
        }
        FieldType::Sku | FieldType::Other => return None,
    };
    let quote = if text.len() <= MAX_VALUE_BYTES {
        0..text.len()
    } else {
        value.clone()
    };
    Some(Found {
        block: b,
        quote,
        value,
    })
}

/// A value of the field's type in running text, in the sentence that best
/// matches the field's name ("listing date" → the date beside "listed",
/// not the first date on the page; "share price" → the money beside
/// "share price", not the sum raised).
fn in_prose(lines: &Lines, index: &Index, field: &Field) -> Option<Found> {
    let page = lines.page;
    let want = entity::want_of_field(&field.key);
    let name = normalize_name(&field.key);
    let words: Vec<&str> = name
        .split(' ')
        .filter(|w| !entity::FIELD_TYPE_WORDS.contains(w))
        .collect();
    let query = index.query(&words.join(" "));
    let ranked = rank::bm25(index, &query);
    if ranked.is_empty() && want != entity::Want::Any && words.len() <= 1 {
        // A bare type ("age", "distance"): the best fitting value on the
        // page, the first among equals.
        let mut best: Option<(f64, usize, Range<usize>)> = None;
        for unit in 0..page.units.len() {
            if let Some((range, fit)) =
                answer::best_span(page, index, &query, want, unit, &name, &[])
            {
                if best.as_ref().is_none_or(|(f, _, _)| fit > *f) {
                    best = Some((fit, unit, range));
                }
            }
        }
        let (_, unit, range) = best?;
        let u = page.units.get(unit)?;
        return Some(Found {
            block: u.block,
            quote: u.range.clone(),
            value: u.range.start + range.start..u.range.start + range.end,
        });
    }
    let top = ranked.first().map_or(0.0, |s| s.score);
    let mut best: Option<(f64, usize, Range<usize>)> = None;
    for s in ranked.iter().take(PROSE_CANDIDATES) {
        if index.coverage(&query, s.unit) < MIN_PROSE_COVERAGE {
            continue;
        }
        let Some((range, fit)) = answer::best_span(page, index, &query, want, s.unit, &name, &[])
        else {
            continue;
        };
        let score = s.score / top.max(f64::MIN_POSITIVE) + fit;
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, s.unit, range));
        }
    }
    let (_, unit, range) = best?;
    let u = page.units.get(unit)?;
    Some(Found {
        block: u.block,
        quote: u.range.clone(),
        value: u.range.start + range.start..u.range.start + range.end,
    })
}

fn find_field(lines: &Lines, index: &Index, field: &Field) -> Option<Found> {
    type Pass = fn(&Lines, &Field, usize) -> Option<Found>;
    let passes: [Pass; 3] = [labelled, label_then_value, label_space_value];
    let n = lines.page.blocks.len();
    passes
        .iter()
        .find_map(|pass| (0..n).find_map(|b| pass(lines, field, b)))
        .or_else(|| {
            // Only a bare type name ("price", "date") takes the first value
            // of its type: "listing date" is not the publish date.
            let bare = !normalize_name(&field.key).contains(' ');
            (0..n).find_map(|b| unlabelled(lines, field, b).filter(|_| bare))
        })
        .or_else(|| in_prose(lines, index, field))
}

pub(super) fn extract(packet: &RequestPacket, cancel: &CancelToken) -> Result<Reply> {
    let title = "Extracted fields".to_string();
    let fields = requested_fields(packet);
    let mut blocks = Vec::new();
    let page = Page::from_documents(&packet.context.documents, Scope::All);
    if let Some(n) = gate_notice(
        &gate_reasons(packet),
        // A few fields fit on a short page: no "very little text" note.
        visible_bytes(&page).max(SPARSE_BYTES),
        "this extraction",
    ) {
        blocks.push(paragraph(&n));
    }
    if fields.is_empty() {
        blocks.push(paragraph(
            "No fields were named. Ask for the fields to extract, for example: price, SKU, availability.",
        ));
        return Ok(Reply {
            title,
            blocks,
            citations: Vec::new(),
            data: Some(Map::new()),
        });
    }
    if page.blocks.is_empty() {
        blocks.push(paragraph("This page has no readable text."));
    }
    let index = Index::build(&page);
    let lines = Lines {
        page: &page,
        lower: page
            .blocks
            .iter()
            .map(|b| b.text.to_ascii_lowercase())
            .collect(),
    };
    let mut rows = Vec::new();
    let mut citations = Vec::new();
    let mut data = Map::new();
    for key in &fields {
        cancel.check()?;
        let field = Field::new(key);
        let found = find_field(&lines, &index, &field);
        let value = found
            .as_ref()
            .and_then(|f| lines.text(f.block).get(f.value.clone()));
        match (found.as_ref(), value) {
            (Some(f), Some(v)) if !v.is_empty() => {
                rows.push((field.key.clone(), v.to_string()));
                data.insert(field.key.clone(), Value::String(v.to_string()));
                if let (Some(source), Some(quote)) = (
                    page.block_source(f.block),
                    lines.text(f.block).get(f.quote.clone()),
                ) {
                    citations.push(Citation {
                        doc_id: source.doc_id.clone(),
                        node_id: None,
                        handle_id: source.handle_id.clone(),
                        quote: quote.to_string(),
                        verified: None,
                    });
                }
            }
            _ => {
                rows.push((field.key.clone(), "not on the page".to_string()));
                data.insert(field.key.clone(), Value::Null);
            }
        }
    }
    blocks.push(table(["Field", "Value"], &rows));
    Ok(Reply {
        title,
        blocks,
        citations,
        data: Some(data),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use serde_json::{json, Value};

    fn extract_data(text: &str, fields: Value) -> (Value, Vec<String>) {
        let v = run(&packet(
            "web.extract",
            json!({"fields": fields}),
            "extract",
            summary("Shop", text),
            &[],
        ));
        (v["assistant"]["data"].clone(), quotes(&v))
    }

    #[test]
    fn extract_finds_fields_in_several_layouts() {
        let fields = json!(["price", "sku", "availability", "color"]);
        let (d, q) = extract_data("H1: Trail Jacket\nPrice: $19.99\nSKU — AB-123\nAvailability: In stock.\nShips in 2 days.", fields.clone());
        assert_eq!(
            d,
            json!({"price": "$19.99", "sku": "AB-123", "availability": "In stock", "color": null})
        );
        assert_eq!(
            q,
            vec!["Price: $19.99", "SKU — AB-123", "Availability: In stock"]
        );

        let (d, _) = extract_data(
            "| Price | $24.00 |\n| SKU | ZX-9 |\n| Availability | Out of stock |",
            fields.clone(),
        );
        assert_eq!(
            d,
            json!({"price": "$24.00", "sku": "ZX-9", "availability": "Out of stock", "color": null})
        );

        let (d, _) = extract_data(
            "Price | SKU | Availability | Color\n€ 12,50 | 4411-B | Pre-order | Red",
            fields.clone(),
        );
        assert_eq!(
            d,
            json!({"price": "€ 12,50", "sku": "4411-B", "availability": "Pre-order", "color": "Red"})
        );

        let (d, q) = extract_data("Term: Model number\nDefinition: QX-2000\nTerm: Colour\nDefinition: Blue\nPrice\n19.99 USD\nAvailability In stock", fields.clone());
        assert_eq!(
            d,
            json!({"price": "19.99 USD", "sku": "QX-2000", "availability": "In stock", "color": null})
        );
        assert_eq!(q, vec!["19.99 USD", "QX-2000", "Availability In stock"]);

        let (d, _) = extract_data("Great jacket for hiking. Now only £49 while it is in stock. Item #: 77-A. Color: Forest green", fields);
        assert_eq!(
            d,
            json!({"price": "£49", "sku": "77-A", "availability": "in stock", "color": "Forest green"})
        );
    }

    #[test]
    fn extract_reads_typed_fields_and_accepts_field_shapes() {
        let page = "By Jane Doe\nPublished March 5, 2024\nRated 4.5 out of 5 stars by readers.\nPrice increases are coming.";
        let (d, _) = extract_data(page, json!("author, date and rating; price"));
        assert_eq!(
            d,
            json!({"author": "Jane Doe", "date": "March 5, 2024", "rating": "4.5 out of 5 stars", "price": null})
        );
        let (d, _) = extract_data(
            "Updated: 2024-01-02\nWeight: 1.2 kg",
            json!({"date": "string", "weight": "string"}),
        );
        assert_eq!(d, json!({"date": "2024-01-02", "weight": "1.2 kg"}));

        // No fields in args: taken from the user's words.
        let p = packet(
            "web.extract",
            json!({}),
            "pull out the SKU and price please",
            summary("S", "Price: $5\nSKU: K-1"),
            &[],
        );
        let v = run(&p);
        assert_eq!(v["assistant"]["data"], json!({"sku": "K-1", "price": "$5"}));
        let p = packet(
            "web.extract",
            json!({}),
            "do it",
            summary("S", "Price: $5"),
            &[],
        );
        let v = run(&p);
        assert_eq!(v["assistant"]["data"], json!({}));
        assert!(render_text(&v).contains("No fields were named"));
    }

    #[test]
    fn extract_renders_a_table_with_not_found_rows() {
        let v = run(&packet(
            "web.extract",
            json!({"fields": ["price", "warranty"]}),
            "x",
            summary("S", "Price: $5"),
            &[],
        ));
        let table = &v["assistant"]["render"]["children"][0];
        assert_eq!(table["type"], "table");
        let rows = table["rows"].as_array().unwrap();
        let cell = |r: usize, c: usize| {
            rows[r]["cells"][c]["children"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(rows[0]["cells"][0]["header"], true);
        assert_eq!((cell(0, 0), cell(0, 1)), ("Field".into(), "Value".into()));
        assert_eq!((cell(1, 0), cell(1, 1)), ("price".into(), "$5".into()));
        assert_eq!(
            (cell(2, 0), cell(2, 1)),
            ("warranty".into(), "not on the page".into())
        );
        assert_eq!(v["assistant"]["data"]["warranty"], Value::Null);
    }
}
